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
//! use reduce::{Op, Over, Reducer};
//! let _ctx = cust::quick_init()?;
//! let (a, b) = (DeviceBuffer::from_slice(&[1.0f32; 1000])?, DeviceBuffer::from_slice(&[2i64; 10])?);
//! let (mut sum_a, mut max_b) = (DeviceBox::new(&0.0f32)?, DeviceBox::new(&0i64)?);
//! let (s1, s2) = (Stream::new(StreamFlags::NON_BLOCKING, None)?, Stream::new(StreamFlags::NON_BLOCKING, None)?);
//! let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&a, Op::Sum, Over::Whole, &mut sum_a, &s1)?; // returns at once
//!     scope.reduce_into(&b, Op::Max, Over::Whole, &mut max_b, &s2)?; // may overlap the first on the GPU
//!     Ok(())
//! })?; // waits for s1 and s2: `a`, `b` and the outputs are free again
//! assert_eq!((sum_a.as_host_value()?, max_b.as_host_value()?), (1000.0, 2));
//! # Ok(()) }
//! ```
//!
//! One call, [`Scope::reduce_into`], enqueues every reduction: *what* (a
//! [`Reduction`]: [`Op`](crate::Op),
//! [`Widened`](crate::Widened), [`ArgMax`](crate::ArgMax),
//! [`Var`](crate::Var), …) *over where* (an [`Over`]: the whole
//! input, segments, rows or axes), into an output of one element per
//! result; [`Scope::dot_into`] enqueues a dot product.
//!
//! Everything a scope's calls borrow stays borrowed until
//! [`Reducer::scope`] returns, after waiting for every stream the scope
//! launched on (also when the closure returns an error or panics). Inputs
//! are [`Input`]s: `&buffer` of a [`DeviceBuffer`], or part of one
//! (`Input::from(&buffer).get(3..)`), borrowed shared (other calls may read
//! them too); so are the offsets of segments
//! (`Over::Segments(Input::from(&offsets))`). Outputs are [`Output`]s:
//! `&mut` a [`DeviceBox`] or [`DeviceBuffer`], or part of one, borrowed
//! uniquely (for [`MeanVar`](crate::MeanVar), a pair of the same kind:
//! `(&mut means, &mut variances)`); to enqueue
//! several calls into one output (on one stream, where they run in order),
//! make the `Output` once and pass it each time.
//!
//! The compiler holds those borrows. Each of these fails to build:
//! freeing an input while the GPU may read it,
//! ```compile_fail,E0505
//! # fn main() -> Result<(), reduce::Error> {
//! # use cust::prelude::*;
//! # use cust::memory::DeviceBox;
//! # use reduce::{Op, Over, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&input, Op::Sum, Over::Whole, &mut out, &stream)?;
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
//! # use reduce::{Op, Over, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&input, Op::Sum, Over::Whole, &mut out, &stream)?;
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
//! # use reduce::{Op, Over, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| {
//!     scope.reduce_into(&input, Op::Sum, Over::Whole, &mut out, &stream)?;
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
//! # use reduce::{Op, Over, Reducer};
//! # let _ctx = cust::quick_init()?;
//! # let input = DeviceBuffer::from_slice(&[1.0f32; 1000])?;
//! # let mut out = DeviceBox::new(&0.0f32)?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let mut reducer = Reducer::new()?;
//! reducer.scope(|scope| scope.reduce_into(&input.index(1..), Op::Sum, Over::Whole, &mut out, &stream))?;
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

mod views;

pub use views::{Input, Output, ScopeStream};

use crate::backend::Cuda;
use crate::blocking::check_into;
use crate::element::Element;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::over::{Over, Target};
use crate::reducer::Reducer;
use crate::reduction::{PairReduction, Reduction};
#[cfg(doc)]
use cust::memory::{DeviceBox, DeviceBuffer};
use cust_core::DeviceCopy;
use std::marker::PhantomData;

/// Enqueues reductions on the caller's streams, holding what they borrow
/// until the work is done (see the [module](crate::scope) docs). Made by
/// [`Reducer::scope`] (which waits for the work before it returns) or
/// [`Reducer::scope_unsynchronized`].
///
/// Every call enqueues its kernels (one; one per pass left after merging
/// for axes, and for statistics, widened and arg forms over rows or axes)
/// and returns without waiting. It synchronizes nothing, and allocates
/// nothing once its stream has a workspace in the scope
/// ([`Scope::prepare`]), except the scratch that passes hand on through
/// (statistics, axes of several passes, split axes), allocated on the
/// first call that needs it or more of it (a scratch outgrown is kept until
/// the scope ends, since calls enqueued before may still use it). What it
/// allocates it zeroes on the call's stream, so a whole-input or segmented
/// call can be captured in a CUDA graph after `prepare`; capture an axis or
/// statistics call only after the same call has run once on that stream.
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
/// use reduce::{Input, Op, Output, Over, Reducer};
/// let _ctx = cust::quick_init()?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let input = DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?;
/// let (empty, mut max) = (DeviceBuffer::from_slice(&[0u32; 0])?, DeviceBox::new(&0u32)?);
/// Reducer::new()?.scope(|scope| {
///     let out = Output::from(&mut max); // made once, for both calls
///     let refused = scope.reduce_into(&empty, Op::Max, Over::Whole, out, &stream); // enqueues nothing
///     assert!(matches!(refused, Err(reduce::Error::Empty { .. })));
///     scope.reduce_into(&input, Op::Max, Over::Whole, out, &stream)
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
    /// use reduce::{Input, Op, Output, Over, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (input, mut sum) = (DeviceBuffer::from_slice(&[1.5f64, 2.5])?, DeviceBox::new(&0.0f64)?);
    /// let launched = Reducer::new()?.scope(|scope| {
    ///     scope.reduce_into(&input, Op::Sum, Over::Whole, &mut sum, &stream)?;
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
        let waited = scope.reducer.backend.gpu.synchronize_scope();
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
    /// use reduce::{Input, Op, Output, Over, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (input, mut sum) = (DeviceBuffer::from_slice(&[1u64, 2, 3])?, DeviceBox::new(&0u64)?);
    /// let mut reducer = Reducer::new()?;
    /// // SAFETY: the stream is synchronized before the scope is dropped, and
    /// // `input` and `sum` outlive it.
    /// let mut scope = unsafe { reducer.scope_unsynchronized() };
    /// scope.reduce_into(&input, Op::Sum, Over::Whole, &mut sum, &stream)?;
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
            let _ = self.reducer.backend.gpu.synchronize_scope();
        }
        self.reducer.backend.gpu.end_scope();
    }
}

impl<'b> Scope<'_, 'b> {
    /// The reducer, for the ladder's enqueueing calls.
    #[cfg(feature = "ladder")]
    pub(crate) fn reducer(&mut self) -> &mut Reducer<Cuda> {
        self.reducer
    }

    /// Gives `stream` its workspace in this scope now, so that the calls on
    /// it allocate nothing (for example before capturing it into a graph).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{Input, Op, Output, Over, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let (data, mut sum) = (DeviceBuffer::from_slice(&[1u32; 100])?, DeviceBox::new(&0u32)?);
    /// Reducer::new()?.scope(|scope| {
    ///     scope.prepare(&stream)?; // allocates the workspace now
    ///     scope.reduce_into(&data, Op::Sum, Over::Whole, &mut sum, &stream) // allocates nothing
    /// })?;
    /// assert_eq!(sum.as_host_value()?, 100);
    /// # Ok(()) }
    /// ```
    pub fn prepare(&mut self, stream: impl Into<ScopeStream<'b>>) -> Result<()> {
        self.reducer.backend.gpu.prepare(stream.into().handle())
    }

    /// Enqueues the reduction of `input` with `what` over `over` on
    /// `stream`, its results to `out` (one element for [`Over::Whole`],
    /// else one per segment, row or position of the kept axes; for
    /// [`MeanVar`](crate::MeanVar) a pair of outputs, the means and the
    /// variances), and returns without waiting. The rules of
    /// [`Reducer::reduce_over`], but for offsets: they are not validated
    /// (that would need the host to wait), each is clamped into the input,
    /// so nothing outside it is read. An [`Op`](crate::Op) over the whole
    /// input writes the value; [`ArgMax`](crate::ArgMax)/[`ArgMin`](crate::ArgMin)
    /// write the index.
    ///
    /// Errors, found before anything is enqueued: [`Error::UnsupportedOver`]
    /// for a pair no kernel computes; the place's errors (no offsets, a
    /// matrix or a view that does not fit the input, bad axes); [`Error::OutputLength`] for an
    /// output (`out`, or `means`) whose length is not the number of results;
    /// then those of [`Reducer::reduce_over`]; [`Error::Aliasing`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{axes::Strided, Input, MeanVar, Op, Over, Reducer, Var};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let x = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0])?; // 2 × 3
    /// let offsets = DeviceBuffer::from_slice(&[0u64, 2, 6])?;
    /// let (mut total, mut columns, mut segments) =
    ///     (DeviceBox::new(&0.0f32)?, DeviceBuffer::from_slice(&[0.0f32; 3])?, DeviceBuffer::from_slice(&[0.0f32; 2])?);
    /// let (mut means, mut variances) = (DeviceBuffer::from_slice(&[0.0f32; 2])?, DeviceBuffer::from_slice(&[0.0f32; 2])?);
    /// let layout = Strided::contiguous(&[2, 3])?;
    /// Reducer::new()?.scope(|scope| {
    ///     scope.reduce_into(&x, Op::Sum, Over::Whole, &mut total, &stream)?;
    ///     scope.reduce_into(&x, Var::<f32>::new(1.0)?, Over::Axes(&layout, &[0]), &mut columns, &stream)?;
    ///     scope.reduce_into(&x, Op::Max, Over::Segments(Input::from(&offsets)), &mut segments, &stream)?;
    ///     let rows = Over::Rows { rows: 2, len: 3 };
    ///     scope.reduce_into(&x, MeanVar::<f32>::new(0.0)?, rows, (&mut means, &mut variances), &stream)
    /// })?;
    /// assert_eq!(total.as_host_value()?, 24.0);
    /// assert_eq!(columns.as_host_vec()?, [4.5, 8.0, 12.5]);
    /// assert_eq!(segments.as_host_vec()?, [2.0, 8.0]);
    /// assert_eq!(means.as_host_vec()?, [2.0, 6.0]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_into<In: DeviceCopy + 'static, R: Reduction<In>>(
        &mut self,
        input: impl Into<Input<'b, In>>,
        what: R,
        over: Over<'_, Input<'b, u64>>,
        out: R::Results<impl Into<Output<'b, R::Output>>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let (values, means) = R::outputs(out);
        let (values, means): (Output<'b, R::Output>, Option<Output<'b, R::Output>>) =
            (values.into(), means.map(Into::into));
        let input = input.into();
        let offsets_len = over.offsets_len(|offsets| offsets.len);
        check_into(what, &over, (input.len, offsets_len), values.len, means.map(|m| m.len))?;
        let target = Target {
            out: values.address,
            len: values.len,
            means: means.map(|means| means.address),
            status: None,
        };
        let input = input.slice();
        let offsets = over.map(Input::slice);
        let stream = Some(stream.into().handle());
        what.enqueue(self.reducer, &input, offsets.as_ref(), target, stream)
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

    /// [`Reducer::reduce_pair`], enqueued on `stream`, its result to `out`:
    /// a [`PairReduction`] ([`ExactDot`](crate::ExactDot), a user operator's
    /// pairs) of `a` and `b`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::memory::{DeviceBox, DeviceBuffer};
    /// use cust::prelude::*;
    /// use reduce::{ExactDot, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    /// let a = DeviceBuffer::from_slice(&[1e30f32, 1.0, 1e30])?;
    /// let b = DeviceBuffer::from_slice(&[1.0f32, 3.0, -1.0])?;
    /// let mut dot = DeviceBox::new(&0.0f32)?;
    /// Reducer::new()?.scope(|scope| scope.reduce_pair_into(&a, &b, ExactDot, &mut dot, &stream))?;
    /// assert_eq!(dot.as_host_value()?, 3.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce_pair_into<T: DeviceCopy + 'b, W: PairReduction<T>>(
        &mut self,
        a: impl Into<Input<'b, T>>,
        b: impl Into<Input<'b, T>>,
        what: W,
        out: impl Into<Output<'b, T>>,
        stream: impl Into<ScopeStream<'b>>,
    ) -> Result<()> {
        let out = out.into().single("out")?;
        let stream = Some(stream.into().handle());
        what.enqueue(self.reducer, &a.into().slice(), &b.into().slice(), out, stream)
    }
}
