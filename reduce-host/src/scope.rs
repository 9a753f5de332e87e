//! Work on your own streams, without waiting for it: [`Scope`].
//!
//! A blocking call ([`Reducer::reduce`], [`crate::sum`], ...) waits for its
//! kernel before it returns, so the buffers it borrowed are free again when
//! it does. Work *enqueued* on a stream runs later, while the host goes on: the
//! buffers it reads and writes must stay allocated and untouched until the
//! GPU gets there. A [`Scope`] makes the borrow checker hold them that long,
//! as [`std::thread::scope`] does for threads:
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use cust::memory::DeviceBox;
//! use cust::prelude::*;
//! use reduce::{Op, Reducer};
//! let _ctx = cust::quick_init()?;
//! let (a, b) = (DeviceBuffer::from_slice(&[1.0f32; 1000])?, DeviceBuffer::from_slice(&[2i64; 10])?);
//! let (mut sum_a, mut max_b) = (DeviceBox::new(&0.0f32)?, DeviceBox::new(&0i64)?);
//! let (s1, s2) = (Stream::new(StreamFlags::NON_BLOCKING, None)?, Stream::new(StreamFlags::NON_BLOCKING, None)?);
//! let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&a, Op::Sum, &mut sum_a, &s1)?; // returns at once
//!     scope.reduce_into(&b, Op::Max, &mut max_b, &s2)?; // may overlap the first on the GPU
//!     Ok(())
//! })?; // waits for s1 and s2: `a`, `b` and the outputs are free again
//! assert_eq!((sum_a.as_host_value()?, max_b.as_host_value()?), (1000.0, 2));
//! # Ok(()) }
//! ```
//!
//! Everything a scope's calls borrow stays borrowed until
//! [`Reducer::scope`] returns, after waiting for every stream the scope
//! launched on (also when the closure returns an error or panics). Inputs
//! are [`Input`]s: `&buffer` of a [`DeviceBuffer`], or part of one
//! (`Input::from(&buffer).get(3..)`), borrowed shared (other calls may read
//! them too). Outputs are [`Output`]s: `&mut` a [`DeviceBox`] or
//! [`DeviceBuffer`], or part of one, borrowed uniquely; to enqueue several
//! calls into one output (on one stream, where they run in order), make the
//! `Output` once and pass it each time.
//!
//! The compiler holds those borrows. Each of these fails to build:
//! freeing an input while the GPU may read it,
//! ```compile_fail,E0505
//! # fn main() -> Result<(), reduce::Error> {
//! # use cust::prelude::*;
//! # use cust::memory::DeviceBox;
//! # use reduce::{Op, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&input, Op::Sum, &mut out, &stream)?;
//!     drop(input); // cannot move out of `input` because it is borrowed
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
//! reading an output before the GPU has written it,
//! ```compile_fail,E0502
//! # fn main() -> Result<(), reduce::Error> {
//! # use cust::prelude::*;
//! # use cust::memory::DeviceBox;
//! # use reduce::{Op, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&input, Op::Sum, &mut out, &stream)?;
//!     let mut early = 0.0f32;
//!     out.copy_to(&mut early)?; // cannot borrow `out` as immutable: it is borrowed as mutable
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
//! destroying a stream with the work still on it,
//! ```compile_fail,E0505
//! # fn main() -> Result<(), reduce::Error> {
//! # use cust::prelude::*;
//! # use cust::memory::DeviceBox;
//! # use reduce::{Op, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&input, Op::Sum, &mut out, &stream)?;
//!     drop(stream); // cannot move out of `stream` because it is borrowed
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
//! and passing a `DeviceSlice` view, which cust does not tie to its buffer
//! (use `Input::from(&input).get(1..)`):
//! ```compile_fail,E0277
//! # fn main() -> Result<(), reduce::Error> {
//! # use cust::prelude::*;
//! # use cust::memory::DeviceBox;
//! # use reduce::{Op, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| scope.reduce_into(&input.index(1..), Op::Sum, &mut out, &stream))?;
//! # Ok(()) }
//! ```
//!
//! # Without waiting: `unsafe`
//! Code that cannot wait at the end of a scope (capturing a CUDA graph,
//! whose replays run long after; or overlapping host work with the GPU across
//! a larger structure) uses [`Reducer::scope_unsynchronized`], whose `unsafe`
//! contract is that the scope outlives its work. `examples/graph_replay.rs`
//! captures and replays a scope's call.
//!
//! # Workspaces
//! The kernels need a workspace per stream (per-block partials and tickets
//! that each launch leaves at zero). A scope gives each stream it launches
//! on its own, taken from the workspaces of ended scopes or allocated (a few
//! KiB) on the stream's first call; [`Scope::prepare`] does that ahead of
//! time, so that the calls allocate nothing (before capturing a graph). When
//! the scope ends, its workspaces go back for the next scopes.

use crate::axes::Strided;
use crate::backend::launcher::{element_address, StreamHandle};
use crate::backend::Cuda;
use crate::element::{ArgInput, Element, FloatElement, WidensTo};
use crate::error::{Error, Result};
use crate::reducer::{checked_parts, Reducer};
use crate::segmented::Layout;
use crate::statistics::{Call, Destination, LogSumExpInput, MomentsInput, Predicate};
use cust::memory::{DeviceBox, DeviceBuffer, DeviceCopy, DevicePointer, DeviceSlice};
use cust::stream::Stream;
use kernels_gpu::abi::{Finish, Op};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// Enqueues reductions on the caller's streams, holding what they borrow
/// until the work is done (see the [module](crate::scope) docs). Made by
/// [`Reducer::scope`] (which waits for the work before it returns) or
/// [`Reducer::scope_unsynchronized`].
///
/// Every call enqueues its kernel and returns without waiting. It sets no
/// memory and synchronizes nothing, and allocates nothing once its stream
/// has a workspace in the scope, so it can be captured in a CUDA graph.
/// Calls on one stream run in order; calls on different streams may overlap
/// on the GPU. Errors found before anything is enqueued (an empty input of
/// `Max`/`Min`, a wrong output length, overlapping buffers, buffers of
/// another context) are returned; a call that returns an error enqueued
/// nothing.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::memory::{DeviceBox, DeviceBuffer};
/// use cust::prelude::*;
/// use reduce::{Input, Op, Output, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let input = DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?;
/// let (empty, mut max) = (DeviceBuffer::from_slice(&[0u32; 0])?, DeviceBox::new(&0u32)?);
/// Reducer::new()?.scope(|scope| {
///     let out = Output::from(&mut max); // made once, for both calls
///     let refused = scope.reduce_into(&empty, Op::Max, out, &stream); // enqueues nothing
///     assert!(matches!(refused, Err(reduce::Error::Empty { .. })));
///     scope.reduce_into(&input, Op::Max, out, &stream)
/// })?;
/// assert_eq!(max.as_host_value()?, 4);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Scope<'r, 'b> {
    reducer: &'r mut Reducer<Cuda>,
    /// Whether dropping the scope waits for its streams (for a scope of
    /// [`Reducer::scope`] left by a panic).
    wait_on_drop: bool,
    /// `'b` is invariant, as `std::thread::Scope`'s `'env`: a scope cannot be
    /// taken for one whose borrows end sooner.
    borrows: PhantomData<&'b mut &'b ()>,
}

impl Reducer<Cuda> {
    /// Runs `f` with a [`Scope`] that enqueues work on the caller's streams,
    /// then waits for every stream it launched on, and returns what `f`
    /// returned (or the first error of the waits, if `f` succeeded).
    ///
    /// The buffers and streams `f` passes to the scope are borrowed until
    /// this returns, so no safe code can free or touch them while the GPU
    /// uses them. If `f` panics, the streams are waited for before the panic
    /// goes on.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (input, mut sum) = (DeviceBuffer::from_slice(&[1.5f64, 2.5])?, DeviceBox::new(&0.0f64)?);
    /// let launched = Reducer::new()?.scope(|scope| {
    ///     scope.reduce_into(&input, Op::Sum, &mut sum, &stream)?;
    ///     Ok("enqueued") // what the closure returns, after the wait
    /// })?;
    /// assert_eq!((launched, sum.as_host_value()?), ("enqueued", 4.0));
    /// # Ok(()) }
    /// ```
    pub fn scope<'b, R>(&mut self, f: impl FnOnce(&mut Scope<'_, 'b>) -> Result<R>) -> Result<R> {
        let mut scope = Scope {
            reducer: self,
            wait_on_drop: true,
            borrows: PhantomData,
        };
        let result = f(&mut scope);
        scope.wait_on_drop = false;
        let waited = scope.reducer.backend.synchronize_scope();
        let value = result?;
        waited?;
        Ok(value)
    }

    /// A [`Scope`] that does not wait for its work when dropped, for work
    /// that must outlive a closure: a CUDA graph captured from it, or host
    /// work overlapped with the GPU.
    ///
    /// # Safety
    /// All the work enqueued through the returned scope, including every
    /// launch of a CUDA graph captured from it, must complete on the GPU
    /// before the scope is dropped, and before anything it borrowed is freed
    /// or touched (those borrows end when the scope is dropped, or when it is
    /// last used if it is forgotten). Synchronizing its streams before
    /// dropping it meets this. The GPU would otherwise read freed memory, and
    /// the stream workspaces the scope hands back when dropped would be shared
    /// by running kernels.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (input, mut sum) = (DeviceBuffer::from_slice(&[1u64, 2, 3])?, DeviceBox::new(&0u64)?);
    /// let mut reducer = Reducer::new()?;
    /// // SAFETY: the stream is synchronized before the scope is dropped, and
    /// // `input` and `sum` outlive it.
    /// let mut scope = unsafe { reducer.scope_unsynchronized() };
    /// scope.reduce_into(&input, Op::Sum, &mut sum, &stream)?;
    /// stream.synchronize()?; // the duty `Reducer::scope` would do
    /// drop(scope);
    /// assert_eq!(sum.as_host_value()?, 6);
    /// # Ok(()) }
    /// ```
    pub unsafe fn scope_unsynchronized<'b>(&mut self) -> Scope<'_, 'b> {
        Scope {
            reducer: self,
            wait_on_drop: false,
            borrows: PhantomData,
        }
    }
}

impl Drop for Scope<'_, '_> {
    fn drop(&mut self) {
        if self.wait_on_drop {
            // Only reached by a panic in `Reducer::scope`'s closure, which
            // carries its own message. A failed wait means the context is
            // broken and its work stopped: nothing is left running either way.
            let _ = self.reducer.backend.synchronize_scope();
        }
        self.reducer.backend.end_scope();
    }
}

/// An input of calls in a [`Scope`]: a shared borrow of a [`DeviceBuffer`]
/// (or of part of it: [`Input::get`]) for as long as the scope's borrows.
///
/// Not made from a `&DeviceSlice`: cust 0.3.2's `DeviceSlice::index`
/// returns a view that does not borrow its buffer, so borrowing such a view
/// would not keep the buffer alive while the GPU reads it.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::memory::{DeviceBox, DeviceBuffer};
/// use cust::prelude::*;
/// use reduce::{Input, Op, Output, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let (data, mut sum) = (DeviceBuffer::from_slice(&[1.0f32, 2.0, 4.0, 8.0])?, DeviceBox::new(&0.0f32)?);
/// Reducer::new()?.scope(|scope| {
///     let tail = Input::from(&data).get(2..).expect("in bounds"); // data[2..]
///     scope.reduce_into(tail, Op::Sum, &mut sum, &stream)
/// })?;
/// assert_eq!(sum.as_host_value()?, 12.0);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Input<'b, T> {
    address: u64,
    len: usize,
    borrow: PhantomData<&'b [T]>,
}

/// An output of calls in a [`Scope`]: a unique borrow of a [`DeviceBox`] or
/// [`DeviceBuffer`] (or of part of it: [`Output::get`]) for as long as the
/// scope's borrows. It is `Copy`, so several calls may write it: calls on one
/// stream run in order; calls on different streams that write one output
/// race, and it ends with one of their results in each element.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::memory::{DeviceBox, DeviceBuffer};
/// use cust::prelude::*;
/// use reduce::{Input, Op, Output, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let data = DeviceBuffer::from_slice(&[3i64, -1, 4])?;
/// let mut results = DeviceBuffer::from_slice(&[0i64; 2])?;
/// Reducer::new()?.scope(|scope| {
///     let out = Output::from(&mut results);
///     scope.reduce_into(&data, Op::Min, out.get(..1).expect("in bounds"), &stream)?;
///     scope.reduce_into(&data, Op::Max, out.get(1..).expect("in bounds"), &stream)
/// })?;
/// assert_eq!(results.as_host_vec()?, [-1, 4]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Output<'b, T> {
    address: u64,
    len: usize,
    borrow: PhantomData<&'b mut [T]>,
}

/// The stream a call of a [`Scope`] is enqueued on: a cust [`Stream`],
/// borrowed for as long as the scope's borrows (`&stream`), or the stream of
/// any other runtime, by its driver handle ([`ScopeStream::from_raw`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::memory::{DeviceBox, DeviceBuffer};
/// use cust::prelude::*;
/// use reduce::{Input, Op, Output, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let (data, mut max) = (DeviceBuffer::from_slice(&[2u32, 9, 4])?, DeviceBox::new(&0u32)?);
/// Reducer::new()?.scope(|scope| {
///     let on = reduce::ScopeStream::from(&stream); // what `&stream` converts to
///     scope.reduce_into(&data, Op::Max, &mut max, on)
/// })?;
/// assert_eq!(max.as_host_value()?, 9);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ScopeStream<'b> {
    handle: StreamHandle,
    borrow: PhantomData<&'b Stream>,
}

impl<'b> From<&'b Stream> for ScopeStream<'b> {
    fn from(stream: &'b Stream) -> Self {
        ScopeStream {
            handle: StreamHandle(stream.as_inner()),
            borrow: PhantomData,
        }
    }
}

impl ScopeStream<'_> {
    /// The stream whose driver handle is `handle` (a `CUstream`, or a
    /// `cudaStream_t` of the CUDA runtime, which is the same handle): with
    /// [`Input::from_raw`] and [`Output::from_raw`], the entry for buffers
    /// and streams of any other runtime (PyTorch, CuPy, the CUDA runtime).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Output, ScopeStream};
    /// let _ctx = cust::quick_init()?;
    /// // Stand-ins for another runtime's buffers and stream.
    /// let input = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?;
    /// let mut out = DeviceBox::new(&0.0f32)?;
    /// let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (address, len, out_address, handle) =
    ///     (input.as_device_ptr().as_raw(), input.len(), out.as_device_ptr().as_raw(), stream.as_inner());
    /// reduce::Reducer::new()?.scope(|scope| {
    ///     // SAFETY: the memory and the stream stay alive, and only this
    ///     // scope's work touches them, until `scope` has waited for the stream.
    ///     let (input, out, stream) = unsafe {
    ///         (Input::<f32>::from_raw(address, len), Output::<f32>::from_raw(out_address, 1), ScopeStream::from_raw(handle))
    ///     };
    ///     scope.reduce_into(input, reduce::Op::Sum, out, stream)
    /// })?;
    /// assert_eq!(out.as_host_value()?, 6.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    /// `handle` is a stream of the reducer's context (or `0`, the context's
    /// legacy default stream), and is not destroyed until the scope's
    /// borrows end (for [`Reducer::scope`], until it returns). The handle of
    /// the per-thread default stream (`CU_STREAM_PER_THREAD`) is refused
    /// ([`Error::UnsupportedStream`]).
    pub unsafe fn from_raw(handle: cust::sys::CUstream) -> Self {
        ScopeStream {
            handle: StreamHandle(handle),
            borrow: PhantomData,
        }
    }

    /// Its handle, for the backend.
    pub(crate) fn handle(self) -> StreamHandle {
        self.handle
    }
}

/// `Clone`, `Copy`, the conversions and `get` for [`Input`] and [`Output`],
/// which differ only in the borrow they hold.
macro_rules! device_view {
    ($view:ident, $reference:ty, $boxed:ty, $view_reference:ty) => {
        impl<T> Clone for $view<'_, T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $view<'_, T> {}

        impl<'b, T: DeviceCopy> From<$reference> for $view<'b, T> {
            fn from(buffer: $reference) -> Self {
                $view {
                    address: buffer.as_device_ptr().as_raw(),
                    len: buffer.len(),
                    borrow: PhantomData,
                }
            }
        }

        impl<'b, T: DeviceCopy> From<$boxed> for $view<'b, T> {
            fn from(boxed: $boxed) -> Self {
                $view {
                    address: boxed.as_device_ptr().as_raw(),
                    len: 1,
                    borrow: PhantomData,
                }
            }
        }

        impl<'b, T: DeviceCopy> $view<'b, T> {
            /// A view of `view`'s elements, which cust's `DeviceSlice` does
            /// not tie to its buffer (for example one made by
            /// `DeviceSlice::index`).
            ///
            /// # Safety
            /// The memory of `view` stays allocated, and is accessed by
            /// nothing but the scope's work (read only, for an input), until
            /// the scope's borrows end, as if `view` borrowed its buffer.
            ///
            /// ```no_run
            /// # fn main() -> Result<(), reduce::Error> {
            /// use cust::memory::{DeviceBox, DeviceBuffer};
            /// use cust::prelude::*;
            /// use reduce::{Input, Op, Output, Reducer};
            /// let _ctx = cust::quick_init()?;
            /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
            /// let (data, mut results) = (DeviceBuffer::from_slice(&[1u32, 5, 2])?, DeviceBuffer::from_slice(&[0u32; 3])?);
            /// let (tail, mut last) = (data.index(1..), results.index(2..)); // views that borrow nothing
            /// Reducer::new()?.scope(|scope| {
            ///     // SAFETY: `data` and `results` outlive the scope; only its work uses them.
            ///     let (tail, last) = unsafe { (Input::from_view(&tail), Output::from_view(&mut last)) };
            ///     scope.reduce_into(tail, Op::Max, last, &stream)
            /// })?;
            /// assert_eq!(results.as_host_vec()?, [0, 0, 5]);
            /// # Ok(()) }
            /// ```
            pub unsafe fn from_view(view: $view_reference) -> Self {
                // SAFETY: the caller's promise, for the memory of `view`.
                unsafe { Self::from_raw(view.as_device_ptr().as_raw(), view.len()) }
            }

            /// A view of the `len` `T`s at the device address `address`:
            /// memory of any other runtime (see [`ScopeStream::from_raw`]).
            ///
            /// # Safety
            /// The `len` `T`s at `address` are device memory, which stays
            /// allocated, and is accessed by nothing but the scope's work
            /// (read only, for an input), until the scope's borrows end. A
            /// buffer of another context, or freed, is refused
            /// ([`Error::ForeignBuffer`]) rather than read.
            ///
            /// ```no_run
            /// # fn main() -> Result<(), reduce::Error> {
            /// use cust::memory::{DeviceBox, DeviceBuffer};
            /// use cust::prelude::*;
            /// use reduce::{Input, Op, Output, Reducer};
            /// let _ctx = cust::quick_init()?;
            /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
            /// let (data, mut min) = (DeviceBuffer::from_slice(&[7i32, -4, 2])?, DeviceBox::new(&0i32)?);
            /// let (address, out_address) = (data.as_device_ptr().as_raw(), min.as_device_ptr().as_raw());
            /// Reducer::new()?.scope(|scope| {
            ///     // SAFETY: both stay allocated, and only this scope's work touches them, until it returns.
            ///     let (input, out) = unsafe { (Input::<i32>::from_raw(address, 3), Output::<i32>::from_raw(out_address, 1)) };
            ///     scope.reduce_into(input, Op::Min, out, &stream)
            /// })?;
            /// assert_eq!(min.as_host_value()?, -4);
            /// # Ok(()) }
            /// ```
            pub unsafe fn from_raw(address: u64, len: usize) -> Self {
                $view {
                    address,
                    len,
                    borrow: PhantomData,
                }
            }
        }

        impl<T> $view<'_, T> {
            /// The elements `range` of it (as `slice::get`): `None` if the
            /// range is out of bounds.
            ///
            /// ```no_run
            /// # fn main() -> Result<(), reduce::Error> {
            /// use cust::memory::{DeviceBox, DeviceBuffer};
            /// use cust::prelude::*;
            /// use reduce::{Input, Op, Output, Reducer};
            /// let _ctx = cust::quick_init()?;
            /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
            /// let (data, mut results) = (DeviceBuffer::from_slice(&[1u64, 2, 3, 4])?, DeviceBuffer::from_slice(&[0u64; 2])?);
            /// let input = Input::from(&data);
            /// assert_eq!(input.get(1..=2).map(Input::len), Some(2));
            /// assert!(input.get(2..5).is_none()); // past the end: no view
            /// assert!(Output::from(&mut results).get(..3).is_none());
            /// # Ok(()) }
            /// ```
            pub fn get(self, range: impl RangeBounds<usize>) -> Option<Self> {
                let start = match range.start_bound() {
                    Bound::Included(&start) => start,
                    Bound::Excluded(&start) => start.checked_add(1)?,
                    Bound::Unbounded => 0,
                };
                let end = match range.end_bound() {
                    Bound::Included(&end) => end.checked_add(1)?,
                    Bound::Excluded(&end) => end,
                    Bound::Unbounded => self.len,
                };
                if end > self.len {
                    return None;
                }
                Some($view {
                    // `None` past `u64::MAX`: only a view of a bogus pointer
                    // (unsafe code) gets there.
                    address: element_address::<T>(self.address, start)?,
                    len: end.checked_sub(start)?,
                    borrow: PhantomData,
                })
            }

            /// Its number of elements.
            ///
            /// ```no_run
            /// # fn main() -> Result<(), reduce::Error> {
            /// use cust::memory::{DeviceBox, DeviceBuffer};
            /// use cust::prelude::*;
            /// use reduce::{Input, Op, Output, Reducer};
            /// let _ctx = cust::quick_init()?;
            /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
            /// let (data, mut one) = (DeviceBuffer::from_slice(&[1.0f32; 10])?, DeviceBox::new(&0.0f32)?);
            /// assert_eq!(Input::from(&data).len(), 10);
            /// assert_eq!(Output::from(&mut one).len(), 1); // a `DeviceBox` is one element
            /// # Ok(()) }
            /// ```
            pub fn len(self) -> usize {
                self.len
            }

            /// Whether it has no elements.
            ///
            /// ```no_run
            /// # fn main() -> Result<(), reduce::Error> {
            /// use cust::memory::{DeviceBox, DeviceBuffer};
            /// use cust::prelude::*;
            /// use reduce::{Input, Op, Output, Reducer};
            /// let _ctx = cust::quick_init()?;
            /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
            /// let data = DeviceBuffer::from_slice(&[1u32, 2, 3])?;
            /// let input = Input::from(&data);
            /// assert!(!input.is_empty());
            /// assert_eq!(input.get(3..).map(Input::is_empty), Some(true)); // an empty view at the end
            /// # Ok(()) }
            /// ```
            pub fn is_empty(self) -> bool {
                self.len == 0
            }
        }
    };
}

device_view!(Input, &'b DeviceBuffer<T>, &'b DeviceBox<T>, &'b DeviceSlice<T>);
device_view!(
    Output,
    &'b mut DeviceBuffer<T>,
    &'b mut DeviceBox<T>,
    &'b mut DeviceSlice<T>
);

impl<T: DeviceCopy> Input<'_, T> {
    /// It as a `DeviceSlice`, for the operations.
    pub(crate) fn slice(self) -> DeviceSlice<T> {
        // SAFETY: the elements of a live buffer that `self` borrows (it was
        // made from one, or is part of one by `get`).
        unsafe { DeviceSlice::from_raw_parts(DevicePointer::from_raw(self.address), self.len) }
    }
}

impl<T> Output<'_, T> {
    /// The address of a one-element output; [`Error::OutputLength`] for other lengths.
    pub(crate) fn single(self, name: &'static str) -> Result<u64> {
        if self.len != 1 {
            return Err(Error::OutputLength {
                output: name,
                found: self.len,
            });
        }
        Ok(self.address)
    }
}

impl<'b> Scope<'_, 'b> {
    /// Gives `stream` its workspace in this scope now, so that the calls on
    /// it allocate nothing (for example before capturing it into a graph).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (data, mut sum) = (DeviceBuffer::from_slice(&[1u32; 100])?, DeviceBox::new(&0u32)?);
    /// Reducer::new()?.scope(|scope| {
    ///     scope.prepare(&stream)?; // allocates the workspace now
    ///     scope.reduce_into(&data, Op::Sum, &mut sum, &stream) // allocates nothing
    /// })?;
    /// assert_eq!(sum.as_host_value()?, 100);
    /// # Ok(()) }
    /// ```
    pub fn prepare(&mut self, stream: impl Into<ScopeStream<'b>>) -> Result<()> {
        self.reducer.backend.prepare(stream.into().handle())
    }

    /// The reducer, for the crate's other enqueueing operations.
    pub(crate) fn reducer(&mut self) -> &mut Reducer<Cuda> {
        self.reducer
    }

    /// Enqueues the reduction of `input` with `op` on `stream`, its result
    /// to `out` (one element). An empty `input` with `Max`/`Min` is
    /// [`Error::Empty`], as for [`Reducer::reduce`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (data, mut results) = (DeviceBuffer::from_slice(&[3.0f64, 0.5])?, DeviceBuffer::from_slice(&[0.0f64; 2])?);
    /// Reducer::new()?.scope(|scope| {
    ///     let wrong = scope.reduce_into(&data, Op::Sum, &mut results, &stream); // two elements
    ///     assert!(matches!(wrong, Err(reduce::Error::OutputLength { found: 2, .. })));
    ///     Ok(())
    /// })?;
    /// let mut product = DeviceBox::new(&0.0f64)?;
    /// Reducer::new()?.scope(|scope| scope.reduce_into(&data, Op::Product, &mut product, &stream))?;
    /// assert_eq!(product.as_host_value()?, 1.5);
    /// # Ok(()) }
    /// ```
    pub fn reduce_into<T: Element>(
        &mut self,
        input: impl Into<Input<'b, T>>,
        op: Op,
        out: impl Into<Output<'b, T>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let out = out.into().single("out")?;
        self.reducer
            .enqueue_reduce(&input.into().slice(), op, out, Some(stream.into().handle()), false)
    }

    /// [`Reducer::reduce_as`], enqueued on `stream`, its result to `out`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (bytes, mut total) = (DeviceBuffer::from_slice(&[255u8; 1000])?, DeviceBox::new(&0u64)?);
    /// Reducer::new()?.scope(|scope| scope.reduce_as_into(&bytes, Op::Sum, &mut total, &stream))?;
    /// assert_eq!(total.as_host_value()?, 255_000); // summed in u64, not u8
    /// # Ok(()) }
    /// ```
    pub fn reduce_as_into<A: Element, In: WidensTo<A>>(
        &mut self,
        input: impl Into<Input<'b, In>>,
        op: Op,
        out: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let out = out.into().single("out")?;
        self.reducer
            .enqueue_widened::<A, In>(&input.into().slice(), op, out, Some(stream.into().handle()))
    }

    /// [`Reducer::argmax`] (`op` = [`Op::Max`]) or [`Reducer::argmin`]
    /// ([`Op::Min`]), enqueued on `stream`: the index to `index`, the value
    /// (in [`ArgInput::Value`]: the element type, or `f32` for the half
    /// types) to `value`. An empty `input` is [`Error::Empty`]; other ops are
    /// [`Error::UnsupportedOp`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// use reduce::half::f16;
    /// let data = DeviceBuffer::from_slice(&[f16::from_f32(1.0), f16::from_f32(-2.0), f16::from_f32(-2.0)])?;
    /// let (mut index, mut value) = (DeviceBox::new(&0u64)?, DeviceBox::new(&0.0f32)?); // f32 for f16
    /// Reducer::new()?.scope(|scope| scope.arg_into(&data, Op::Min, &mut index, &mut value, &stream))?;
    /// assert_eq!((index.as_host_value()?, value.as_host_value()?), (1, -2.0));
    /// # Ok(()) }
    /// ```
    pub fn arg_into<T: ArgInput>(
        &mut self,
        input: impl Into<Input<'b, T>>,
        op: Op,
        index: impl Into<Output<'b, u64>>,
        value: impl Into<Output<'b, T::Value>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let index = index.into().single("index")?;
        let value = value.into().single("value")?;
        self.reducer
            .enqueue_arg(&input.into().slice(), op, (value, index), Some(stream.into().handle()))
    }

    /// [`Reducer::dot`], enqueued on `stream`, its result to `out`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let a = DeviceBuffer::from_slice(&[1i32, 2, 3])?;
    /// let b = DeviceBuffer::from_slice(&[4i32, -5, 6])?;
    /// let mut dot = DeviceBox::new(&0i32)?;
    /// Reducer::new()?.scope(|scope| scope.dot_into(&a, &b, &mut dot, &stream))?;
    /// assert_eq!(dot.as_host_value()?, 12);
    /// # Ok(()) }
    /// ```
    pub fn dot_into<T: Element>(
        &mut self,
        a: impl Into<Input<'b, T>>,
        b: impl Into<Input<'b, T>>,
        out: impl Into<Output<'b, T>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let out = out.into().single("out")?;
        self.reducer
            .enqueue_dot(&a.into().slice(), &b.into().slice(), out, Some(stream.into().handle()))
    }

    /// [`Reducer::segmented_reduce`], enqueued on `stream`, one result per
    /// segment to `out`. Offsets are not validated (that would need the host
    /// to wait): invalid ones are clamped into `[0, values.len()]` so nothing
    /// outside `values` is read (see the [`segmented`](crate::segmented)
    /// module).
    ///
    /// Errors: [`Error::InvalidSegments`] for empty offsets or an `out` whose
    /// length is not the number of segments, [`Error::UnsupportedOp`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let values = DeviceBuffer::from_slice(&[4u32, 1, 7, 3, 9])?;
    /// let offsets = DeviceBuffer::from_slice(&[0u64, 3, 3, 5])?; // three segments, one empty
    /// let mut sums = DeviceBuffer::from_slice(&[9u32; 3])?;
    /// Reducer::new()?.scope(|scope| scope.segmented_reduce_into(&values, &offsets, Op::Sum, &mut sums, &stream))?;
    /// assert_eq!(sums.as_host_vec()?, [12, 0, 12]);
    /// # Ok(()) }
    /// ```
    pub fn segmented_reduce_into<T: Element>(
        &mut self,
        values: impl Into<Input<'b, T>>,
        offsets: impl Into<Input<'b, u64>>,
        op: Op,
        out: impl Into<Output<'b, T>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let layout = Layout::of_offsets::<Cuda>(&offsets.into().slice())?;
        let out = out.into();
        let out = (out.address, out.len);
        self.reducer.enqueue_segmented::<T>(
            checked_parts::<Cuda, T>(&values.into().slice())?,
            layout,
            op,
            out,
            None,
            Some(stream.into().handle()),
        )
    }

    /// [`Reducer::reduce_rows`], enqueued on `stream`, one result per row
    /// to `out`.
    ///
    /// Errors: [`Error::InvalidSegments`] if `rows × row_len` is not
    /// `matrix.len()` or `out` does not have `rows` elements,
    /// [`Error::UnsupportedOp`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let matrix = DeviceBuffer::from_slice(&[1.0f32, -5.0, 2.0, 7.0, 0.5, 3.0])?; // 2 rows of 3
    /// let mut maxima = DeviceBuffer::from_slice(&[0.0f32; 2])?;
    /// Reducer::new()?.scope(|scope| scope.reduce_rows_into(&matrix, 2, 3, Op::Max, &mut maxima, &stream))?;
    /// assert_eq!(maxima.as_host_vec()?, [2.0, 7.0]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_rows_into<T: Element>(
        &mut self,
        matrix: impl Into<Input<'b, T>>,
        rows: usize,
        row_len: usize,
        op: Op,
        out: impl Into<Output<'b, T>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let matrix = matrix.into();
        let layout = Layout::of_rows(matrix.len, rows, row_len)?;
        let out = out.into();
        let out = (out.address, out.len);
        self.reducer.enqueue_segmented::<T>(
            checked_parts::<Cuda, T>(&matrix.slice())?,
            layout,
            op,
            out,
            None,
            Some(stream.into().handle()),
        )
    }

    /// [`Reducer::reduce_axes`], enqueued on `stream`, its results (row-major
    /// over the kept axes) to `out`. Between launches the results go to the
    /// stream's scratch, allocated (or grown) on the first call that needs
    /// more.
    ///
    /// Errors: those of [`Reducer::reduce_axes`], and [`Error::InvalidAxes`]
    /// unless `out` has one element per position of the kept axes.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::{axes::Strided, Op, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let x = DeviceBuffer::from_slice(&[1i64, 2, 3, 4, 5, 6])?; // 2 × 3
    /// let mut sums = DeviceBuffer::from_slice(&[0i64; 3])?;
    /// let layout = Strided::contiguous(&[2, 3])?;
    /// Reducer::new()?.scope(|scope| scope.reduce_axes_into(&x, &layout, &[0], Op::Sum, &mut sums, &stream))?;
    /// assert_eq!(sums.as_host_vec()?, [5, 7, 9]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_axes_into<T: Element>(
        &mut self,
        input: impl Into<Input<'b, T>>,
        layout: &Strided,
        axes: &[isize],
        op: Op,
        out: impl Into<Output<'b, T>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let out = out.into();
        let out = (out.address, out.len);
        let input = input.into().slice();
        self.reducer
            .enqueue_axes(&input, layout, axes, op, out, Some(stream.into().handle()))
    }

    /// [`Reducer::reduce_as_axes`] into `out` (one `A` per position of the
    /// kept axes), enqueued on `stream`. Errors as
    /// [`Scope::reduce_axes_into`], and [`Error::UnsupportedWidening`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::{axes::Strided, Op, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let x = DeviceBuffer::from_slice(&[i32::MAX, 1, i32::MAX, 2])?; // 2 × 2
    /// let mut sums = DeviceBuffer::from_slice(&[0i64; 2])?;
    /// let layout = Strided::contiguous(&[2, 2])?;
    /// Reducer::new()?.scope(|scope| scope.reduce_as_axes_into(&x, &layout, &[0], Op::Sum, &mut sums, &stream))?;
    /// assert_eq!(sums.as_host_vec()?, [2 * i64::from(i32::MAX), 3]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_as_axes_into<A: Element, In: WidensTo<A>>(
        &mut self,
        input: impl Into<Input<'b, In>>,
        layout: &Strided,
        axes: &[isize],
        op: Op,
        out: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let out = out.into();
        let input = input.into().slice();
        self.reducer.enqueue_widened_axes::<A, In>(
            &input,
            layout,
            axes,
            op,
            (out.address, out.len),
            Some(stream.into().handle()),
        )
    }

    /// [`Reducer::argmax_axis`] (`op` = `Max`) or [`Reducer::argmin_axis`]
    /// (`Min`) into `out` (a `u64` position per position of the other axes),
    /// enqueued on `stream`. Errors as [`Scope::reduce_axes_into`], and
    /// [`Error::UnsupportedOp`] for another op.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::{axes::Strided, Op, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let x = DeviceBuffer::from_slice(&[3.0f32, 9.0, 2.0, 1.0])?; // 2 × 2
    /// let mut rows = DeviceBuffer::from_slice(&[0u64; 2])?;
    /// let layout = Strided::contiguous(&[2, 2])?;
    /// Reducer::new()?.scope(|scope| scope.arg_axis_into(&x, &layout, -1, Op::Max, &mut rows, &stream))?;
    /// assert_eq!(rows.as_host_vec()?, [1, 0]);
    /// # Ok(()) }
    /// ```
    pub fn arg_axis_into<T: ArgInput>(
        &mut self,
        input: impl Into<Input<'b, T>>,
        layout: &Strided,
        axis: isize,
        op: Op,
        out: impl Into<Output<'b, u64>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::arg::<T>(op)?;
        self.statistic_axes_into(input, layout, &[axis], call, out.into(), None, stream)
    }

    /// [`Reducer::var_axes`] into `out` (one element per position of the
    /// kept axes), enqueued on `stream`. Errors as [`Scope::reduce_axes_into`],
    /// and [`Error::InvalidArgument`] for a correction that is negative or
    /// not finite. A whole input is the one axis of `Strided::contiguous(&[len])`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::{axes::Strided, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let x = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0])?; // 2 × 3
    /// let mut var = DeviceBuffer::from_slice(&[0.0f32; 3])?;
    /// let layout = Strided::contiguous(&[2, 3])?;
    /// Reducer::new()?.scope(|scope| scope.var_axes_into::<f32, _>(&x, &layout, &[0], 1.0, &mut var, &stream))?;
    /// assert_eq!(var.as_host_vec()?, [4.5, 8.0, 12.5]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn var_axes_into<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: impl Into<Input<'b, In>>,
        layout: &Strided,
        axes: &[isize],
        correction: f64,
        out: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::moments::<A, In>(Finish::Value, correction)?;
        self.statistic_axes_into(input, layout, axes, call, out.into(), None, stream)
    }

    /// [`Reducer::std_axes`] into `out`, as [`Scope::var_axes_into`].
    #[allow(clippy::too_many_arguments)]
    pub fn std_axes_into<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: impl Into<Input<'b, In>>,
        layout: &Strided,
        axes: &[isize],
        correction: f64,
        out: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::moments::<A, In>(Finish::Root, correction)?;
        self.statistic_axes_into(input, layout, axes, call, out.into(), None, stream)
    }

    /// [`Reducer::mean_var_axes`] into `means` and `variances` (each one
    /// element per position of the kept axes), as [`Scope::var_axes_into`].
    #[allow(clippy::too_many_arguments)]
    pub fn mean_var_axes_into<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: impl Into<Input<'b, In>>,
        layout: &Strided,
        axes: &[isize],
        correction: f64,
        means: impl Into<Output<'b, A>>,
        variances: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::moments::<A, In>(Finish::Value, correction)?;
        let means = means.into();
        let variances = variances.into();
        if means.len != variances.len {
            return Err(Error::InvalidAxes(format!(
                "the means output has {} elements, the variances output {}",
                means.len, variances.len
            )));
        }
        self.statistic_axes_into(input, layout, axes, call, variances, Some(means.address), stream)
    }

    /// [`Reducer::logsumexp_axes`] into `out`, as [`Scope::var_axes_into`].
    pub fn logsumexp_axes_into<F: LogSumExpInput>(
        &mut self,
        input: impl Into<Input<'b, F>>,
        layout: &Strided,
        axes: &[isize],
        out: impl Into<Output<'b, F>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        self.statistic_axes_into(input, layout, axes, Call::logsumexp::<F>(), out.into(), None, stream)
    }

    /// [`Reducer::count_axes`] into `out`, as [`Scope::var_axes_into`].
    pub fn count_axes_into<T: Element>(
        &mut self,
        input: impl Into<Input<'b, T>>,
        layout: &Strided,
        axes: &[isize],
        predicate: Predicate,
        out: impl Into<Output<'b, u64>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::count::<T>(predicate, Finish::Value);
        self.statistic_axes_into(input, layout, axes, call, out.into(), None, stream)
    }

    /// [`Reducer::any_axes`] into `out` (1 or 0 per result), as [`Scope::var_axes_into`].
    pub fn any_axes_into<T: Element>(
        &mut self,
        input: impl Into<Input<'b, T>>,
        layout: &Strided,
        axes: &[isize],
        predicate: Predicate,
        out: impl Into<Output<'b, u8>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::count::<T>(predicate, Finish::Any);
        self.statistic_axes_into(input, layout, axes, call, out.into(), None, stream)
    }

    /// [`Reducer::all_axes`] into `out` (1 or 0 per result), as [`Scope::var_axes_into`].
    pub fn all_axes_into<T: Element>(
        &mut self,
        input: impl Into<Input<'b, T>>,
        layout: &Strided,
        axes: &[isize],
        predicate: Predicate,
        out: impl Into<Output<'b, u8>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::count::<T>(predicate, Finish::All);
        self.statistic_axes_into(input, layout, axes, call, out.into(), None, stream)
    }

    /// [`Reducer::var_segments`] into `out` (one element per segment),
    /// enqueued on `stream`. As [`Scope::segmented_reduce_into`], invalid
    /// offsets are not reported: each is clamped into `values` (a segment
    /// whose end is before its begin is empty), so nothing outside it is read.
    ///
    /// Errors: [`Error::InvalidSegments`] for no offsets or an output whose
    /// length is not the segments', [`Error::InvalidArgument`] for a bad
    /// correction, [`Error::Aliasing`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::Reducer;
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let values = DeviceBuffer::from_slice(&[1.0f32, 3.0, 2.0, 4.0, 6.0])?;
    /// let offsets = DeviceBuffer::from_slice(&[0u64, 2, 5])?;
    /// let mut var = DeviceBuffer::from_slice(&[0.0f32; 2])?;
    /// Reducer::new()?.scope(|scope| scope.var_segments_into::<f32, _>(&values, &offsets, 1.0, &mut var, &stream))?;
    /// assert_eq!(var.as_host_vec()?, [2.0, 4.0]);
    /// # Ok(()) }
    /// ```
    pub fn var_segments_into<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        values: impl Into<Input<'b, In>>,
        offsets: impl Into<Input<'b, u64>>,
        correction: f64,
        out: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::moments::<A, In>(Finish::Value, correction)?;
        self.statistic_segments_into(values, offsets, call, out.into(), None, stream)
    }

    /// [`Reducer::std_segments`] into `out`, as [`Scope::var_segments_into`].
    pub fn std_segments_into<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        values: impl Into<Input<'b, In>>,
        offsets: impl Into<Input<'b, u64>>,
        correction: f64,
        out: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::moments::<A, In>(Finish::Root, correction)?;
        self.statistic_segments_into(values, offsets, call, out.into(), None, stream)
    }

    /// [`Reducer::mean_var_segments`] into `means` and `variances` (one
    /// element per segment each), as [`Scope::var_segments_into`].
    #[allow(clippy::too_many_arguments)]
    pub fn mean_var_segments_into<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        values: impl Into<Input<'b, In>>,
        offsets: impl Into<Input<'b, u64>>,
        correction: f64,
        means: impl Into<Output<'b, A>>,
        variances: impl Into<Output<'b, A>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::moments::<A, In>(Finish::Value, correction)?;
        let (means, variances) = (means.into(), variances.into());
        if means.len != variances.len {
            return Err(Error::InvalidSegments(format!(
                "the means output has {} elements, the variances output {}",
                means.len, variances.len
            )));
        }
        self.statistic_segments_into(values, offsets, call, variances, Some(means.address), stream)
    }

    /// [`Reducer::logsumexp_segments`] into `out`, as [`Scope::var_segments_into`].
    pub fn logsumexp_segments_into<F: LogSumExpInput>(
        &mut self,
        values: impl Into<Input<'b, F>>,
        offsets: impl Into<Input<'b, u64>>,
        out: impl Into<Output<'b, F>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        self.statistic_segments_into(values, offsets, Call::logsumexp::<F>(), out.into(), None, stream)
    }

    /// [`Reducer::count_segments`] into `out`, as [`Scope::var_segments_into`].
    pub fn count_segments_into<T: Element>(
        &mut self,
        values: impl Into<Input<'b, T>>,
        offsets: impl Into<Input<'b, u64>>,
        predicate: Predicate,
        out: impl Into<Output<'b, u64>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::count::<T>(predicate, Finish::Value);
        self.statistic_segments_into(values, offsets, call, out.into(), None, stream)
    }

    /// [`Reducer::any_segments`] into `out` (1 or 0 per segment), as [`Scope::var_segments_into`].
    pub fn any_segments_into<T: Element>(
        &mut self,
        values: impl Into<Input<'b, T>>,
        offsets: impl Into<Input<'b, u64>>,
        predicate: Predicate,
        out: impl Into<Output<'b, u8>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::count::<T>(predicate, Finish::Any);
        self.statistic_segments_into(values, offsets, call, out.into(), None, stream)
    }

    /// [`Reducer::all_segments`] into `out` (1 or 0 per segment), as [`Scope::var_segments_into`].
    pub fn all_segments_into<T: Element>(
        &mut self,
        values: impl Into<Input<'b, T>>,
        offsets: impl Into<Input<'b, u64>>,
        predicate: Predicate,
        out: impl Into<Output<'b, u8>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let call = Call::count::<T>(predicate, Finish::All);
        self.statistic_segments_into(values, offsets, call, out.into(), None, stream)
    }

    /// `call` over each segment into `out` (and the means into `means`, which
    /// has `out`'s length, where given), on `stream`, the offsets clamped.
    fn statistic_segments_into<In: DeviceCopy + 'static, R>(
        &mut self,
        values: impl Into<Input<'b, In>>,
        offsets: impl Into<Input<'b, u64>>,
        call: Call,
        out: Output<'b, R>,
        means: Option<u64>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        debug_assert_eq!(call.result_bytes, std::mem::size_of::<R>());
        let destination = Destination {
            out: out.address,
            len: out.len,
            means,
        };
        let (values, offsets) = (values.into().slice(), offsets.into().slice());
        let stream = Some(stream.into().handle());
        self.reducer
            .enqueue_statistic_segments(&values, &offsets, call, destination, None, stream)
    }

    /// `call` along `axes` into `out` (and the means into `means`, which has
    /// `out`'s length, where given), on `stream`.
    #[allow(clippy::too_many_arguments)]
    fn statistic_axes_into<In: DeviceCopy + 'static, R>(
        &mut self,
        input: impl Into<Input<'b, In>>,
        layout: &Strided,
        axes: &[isize],
        call: Call,
        out: Output<'b, R>,
        means: Option<u64>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        debug_assert_eq!(call.result_bytes, std::mem::size_of::<R>());
        let destination = Destination {
            out: out.address,
            len: out.len,
            means,
        };
        let input = input.into().slice();
        self.reducer
            .enqueue_statistic(&input, layout, axes, call, destination, Some(stream.into().handle()))
    }
}
