//! What a [`Scope`](super::Scope)'s calls borrow: [`Input`] and [`Output`]
//! (views of cust buffers that hold a borrow for the scope's `'b`) and
//! [`ScopeStream`] (a stream, the same way), and the `unsafe` entries for
//! views and raw addresses whose borrow the caller vouches for.

use crate::backend::launcher::{element_address, StreamHandle};
use crate::error::{Error, Result};
#[cfg(doc)]
use crate::{Reducer, Scope};
use cust::memory::{DeviceBox, DeviceBuffer, DevicePointer, DeviceSlice};
use cust::stream::Stream;
use cust_core::DeviceCopy;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

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
/// use reduce::{Input, Op, Output, Over, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let (data, mut sum) = (DeviceBuffer::from_slice(&[1.0f32, 2.0, 4.0, 8.0])?, DeviceBox::new(&0.0f32)?);
/// Reducer::new()?.scope(|scope| {
///     let tail = Input::from(&data).get(2..).expect("in bounds"); // data[2..]
///     scope.reduce_into(tail, Op::Sum, Over::Whole, &mut sum, &stream)
/// })?;
/// assert_eq!(sum.as_host_value()?, 12.0);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Input<'b, T> {
    pub(super) address: u64,
    pub(super) len: usize,
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
/// use reduce::{Input, Op, Output, Over, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let data = DeviceBuffer::from_slice(&[3i64, -1, 4])?;
/// let mut results = DeviceBuffer::from_slice(&[0i64; 2])?;
/// Reducer::new()?.scope(|scope| {
///     let out = Output::from(&mut results);
///     scope.reduce_into(&data, Op::Min, Over::Whole, out.get(..1).expect("in bounds"), &stream)?;
///     scope.reduce_into(&data, Op::Max, Over::Whole, out.get(1..).expect("in bounds"), &stream)
/// })?;
/// assert_eq!(results.as_host_vec()?, [-1, 4]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Output<'b, T> {
    pub(super) address: u64,
    pub(super) len: usize,
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
/// use reduce::{Input, Op, Output, Over, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let (data, mut max) = (DeviceBuffer::from_slice(&[2u32, 9, 4])?, DeviceBox::new(&0u32)?);
/// Reducer::new()?.scope(|scope| {
///     let on = reduce::ScopeStream::from(&stream); // what `&stream` converts to
///     scope.reduce_into(&data, Op::Max, Over::Whole, &mut max, on)
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
            handle: StreamHandle(stream.as_inner().cast()),
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
    ///     scope.reduce_into(input, reduce::Op::Sum, reduce::Over::Whole, out, stream)
    /// })?;
    /// assert_eq!(out.as_host_value()?, 6.0);
    /// # Ok(()) }
    /// ```
    ///
    /// The default streams by their handles too: `0` or `CU_STREAM_LEGACY`
    /// (`0x1`), the context's legacy default stream (one stream, one
    /// workspace), and `CU_STREAM_PER_THREAD` (`0x2`), the per-thread
    /// default stream of the thread that launches: a scope used on several
    /// threads launches on each one's own stream, with a workspace for
    /// each, and [`Reducer::scope`] waits for all of them (for another
    /// thread's, which no handle reaches from the thread that ends the
    /// scope, by waiting for the whole context).
    ///
    /// # Safety
    /// `handle` is a stream of the reducer's context (or one of its default
    /// streams above), and is not destroyed until the scope's borrows end
    /// (for [`Reducer::scope`], until it returns).
    pub unsafe fn from_raw(handle: cust::sys::CUstream) -> Self {
        ScopeStream {
            handle: StreamHandle(handle.cast()),
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
            /// use reduce::{Input, Op, Output, Over, Reducer};
            /// let _ctx = cust::quick_init()?;
            /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
            /// let (data, mut results) = (DeviceBuffer::from_slice(&[1u32, 5, 2])?, DeviceBuffer::from_slice(&[0u32; 3])?);
            /// let (tail, mut last) = (data.index(1..), results.index(2..)); // views that borrow nothing
            /// Reducer::new()?.scope(|scope| {
            ///     // SAFETY: `data` and `results` outlive the scope; only its work uses them.
            ///     let (tail, last) = unsafe { (Input::from_view(&tail), Output::from_view(&mut last)) };
            ///     scope.reduce_into(tail, Op::Max, Over::Whole, last, &stream)
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
            /// use reduce::{Input, Op, Output, Over, Reducer};
            /// let _ctx = cust::quick_init()?;
            /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
            /// let (data, mut min) = (DeviceBuffer::from_slice(&[7i32, -4, 2])?, DeviceBox::new(&0i32)?);
            /// let (address, out_address) = (data.as_device_ptr().as_raw(), min.as_device_ptr().as_raw());
            /// Reducer::new()?.scope(|scope| {
            ///     // SAFETY: both stay allocated, and only this scope's work touches them, until it returns.
            ///     let (input, out) = unsafe { (Input::<i32>::from_raw(address, 3), Output::<i32>::from_raw(out_address, 1)) };
            ///     scope.reduce_into(input, Op::Min, Over::Whole, out, &stream)
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
                expected: 1,
            });
        }
        Ok(self.address)
    }
}
