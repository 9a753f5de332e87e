//! The operations over [cudarc](https://docs.rs/cudarc/0.19)'s buffers and streams (the
//! `cudarc` feature): [`CudaSlice`], [`CudaView`]
//! and [`CudaViewMut`] on a [`CudaStream`],
//! as candle and burn hold them.
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use cudarc::driver::CudaContext;
//! use reduce::{Op, Over};
//! let ctx = CudaContext::new(0)?;
//! let stream = ctx.default_stream();
//! let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
//! let buf = stream.clone_htod(&data)?;
//!
//! // Blocking: the result on the host.
//! assert_eq!(reduce::sum(&buf)?, 499_500.0); // the free functions take cudarc buffers too
//! assert_eq!(reduce::argmax(&buf.slice(10..20))?, (9, 19.0)); // any view
//! let offsets = stream.clone_htod(&[7u64, 0, 10, 1000])?;
//! let sums = reduce::reduce_over(&buf, Op::Sum, Over::Segments(&offsets.slice(1..)))?; // offsets in any view too
//! assert_eq!(stream.clone_dtoh(&sums.values)?, [45.0, 499_455.0]);
//!
//! // Async: the result into a cudarc buffer, on a stream, without waiting.
//! let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
//! let mut out = stream.alloc_zeros::<f32>(1)?;
//! reducer.reduce_into(&buf, Op::Max, Over::Whole, &mut out, &stream)?;
//! assert_eq!(stream.clone_dtoh(&out)?, [999.0]);
//! # Ok(()) }
//! ```
//!
//! # The blocking calls
//! [`Reducer::reduce`], [`Reducer::reduce_over`] and [`Reducer::dot`], and
//! the crate's free functions ([`crate::reduce()`], [`crate::sum`], …) given
//! cudarc buffers, wait for the work recorded on each input's stream, then
//! run on the reducer's own stream and wait for their result. The free
//! functions use a [`Reducer`] cached per thread for the input's context
//! (the [`CudaContext`] of its stream).
//!
//! # The `_into` calls: async, and safe
//! [`Reducer::reduce_into`] and the other `_into` methods enqueue one kernel
//! on the stream they are given, writing into cudarc buffers, and return
//! without waiting. They are safe because cudarc tracks every use of its
//! buffers with events (its default): the stream first waits for the earlier
//! writes of the inputs and for the earlier reads and writes of the outputs,
//! then the kernel's reads and writes are recorded, so that what cudarc does
//! next with those buffers (a copy, freeing one that is dropped: cudarc
//! frees in stream order, after the recorded uses) waits for the kernel. An
//! input can be dropped right after the call. With event tracking switched
//! off (`CudaContext::disable_event_tracking`, an `unsafe` call), that
//! ordering is yours, as for every cudarc call.
//!
//! # Streams, and the workspaces their launches use
//! Any stream of the reducer's context: one made for the purpose
//! (`new_stream`, `fork`, a wrapped stream of another runtime), the legacy
//! default stream (`default_stream()`, the null handle, or
//! `CU_STREAM_LEGACY`), or the per-thread default stream
//! (`per_thread_stream()`, as candle's default device uses), which is the
//! calling thread's own: each host thread that launches on it launches on a
//! stream of its own, and the buffers' guards wait and record there too.
//!
//! A launch needs a small workspace (per-block partials and tickets that
//! every launch leaves at zero, 36 bytes per block of a grid that fills
//! the GPU: some tens of KiB; and the scratch of the axis and statistics
//! calls), which two launches that can run at once must never share. The
//! rule:
//! - a workspace is *lent* to one stream: the legacy default stream, one
//!   host thread's per-thread default stream, or a stream by its handle,
//!   which the reducer holds (an `Arc` of it) so that it is not destroyed,
//!   nor its handle given to a new stream, while the workspace is lent.
//!   Every call on that stream uses it: they run in order. After each
//!   call's launches the reducer records an event on the stream;
//! - a stream without a workspace gets one whose event has completed
//!   (asked with `cuEventQuery`, which does not wait: all the launches that
//!   used it are done), which is then taken back from its stream (and that
//!   stream let go of); if every workspace's stream may still be running
//!   one, a new workspace is allocated. So an `_into` call never waits on
//!   the host for a stream, however many streams a program uses (but where
//!   the context fails, and a use could not be recorded: then it waits for
//!   its stream before returning the error), and never frees memory (a
//!   free may wait for the device); there are never more
//!   workspaces than the most streams with launches of this reducer in
//!   flight at once, and the idle ones are reused;
//! - the default streams' workspaces (the legacy stream's, and one per host
//!   thread that launched on its per-thread stream) are not taken back by
//!   their events: on an H100 (2026-11-27) such a workspace was seen taken
//!   back while its stream was still held, which is not understood yet. They
//!   stay lent until the context is known idle: a blocking call waits for
//!   the whole context (`cuCtxSynchronize`) and takes them back once more
//!   than 16 are lent (threads that come and go), and dropping a reducer
//!   that ever launched on a default stream waits for the whole context,
//!   other libraries' work in it included;
//! - the blocking calls take back the workspaces of streams found done
//!   and free the scratch they outgrew; dropping the reducer waits for
//!   every lent workspace's event before it frees the workspaces and the
//!   kernels.
//!
//! A stream is thus held until a later call finds its work done (a call on
//! another stream, a blocking call) or the reducer is dropped. Streams
//! being captured into a CUDA graph are refused
//! ([`Error::UnsupportedStream`]): a replay would share the workspace with
//! later launches. For graphs, and for buffers and streams of other
//! runtimes, see [`Reducer::scope_unsynchronized`](crate::Reducer::scope_unsynchronized)
//! and [`ScopeStream::from_raw`](crate::ScopeStream::from_raw).
//!
//! cudarc records its buffers' uses once the context is in its multi-stream
//! mode (a stream made by `new_stream` or `fork`); before that it leaves
//! the order of work to the streams. The per-thread default streams of two
//! host threads are not ordered with each other, so a buffer used on one
//! thread's and dropped or written on another's needs that mode (or your
//! own synchronization), as for cudarc's own copies.
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::{Op, Over};
//! let ctx = cudarc::driver::CudaContext::new(0)?;
//! let per_thread = ctx.per_thread_stream(); // this thread's default stream
//! let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
//! let input = per_thread.clone_htod(&[3.0f32, 1.0, 2.0])?;
//! let mut max = per_thread.alloc_zeros::<f32>(1)?;
//! reducer.reduce_into(&input, Op::Max, Over::Whole, &mut max, &per_thread)?;
//! let legacy = ctx.default_stream(); // the context's legacy default stream
//! let mut sum = legacy.alloc_zeros::<f32>(1)?;
//! reducer.reduce_into(&input, Op::Sum, Over::Whole, &mut sum, &legacy)?;
//! assert_eq!((per_thread.clone_dtoh(&max)?, legacy.clone_dtoh(&sum)?), (vec![3.0], vec![6.0]));
//! # Ok(()) }
//! ```
//!
//! # Contexts
//! cudarc works in each device's primary context; a [`Reducer`] loads the
//! kernels there (and makes that context current on the calling thread for
//! each call). Buffers of another context or device are refused
//! ([`Error::ForeignBuffer`]), as streams of another context are
//! ([`Error::UnsupportedStream`]).
//!
//! # Half precision
//! cudarc's `f16`/`bf16` are half 2's ([`CudarcElement`]): the widened
//! reductions ([`Widened`](crate::Widened), [`crate::mean`]) and argmax/argmin take
//! them, as the same kernels take half 1.8's. This module re-exports half 2
//! as [`half`]. Results in a half type ([`Cast`](crate::Cast), named by
//! half 1.8's type, the kernels') come back in buffers of half 2's:
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::cudarc::half::f16; // half 2, as cudarc's
//! use reduce::{Mean, Over};
//! let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
//! let x = stream.clone_htod(&[1.0f32, 2.0, 4.0, 8.0].map(f16::from_f32))?;
//! let rows = Over::Rows { rows: 2, len: 2 };
//! let means = reduce::reduce_over(&x, Mean.cast::<reduce::half::f16>(), rows)?; // summed in f32
//! let means: Vec<f16> = stream.clone_dtoh(&means.values)?; // half 2's f16, as the input
//! assert_eq!(means, [1.5, 6.0].map(f16::from_f32));
//! # Ok(()) }
//! ```

use crate::axes::Reduced;
use crate::backend::driver::{OwnedStream, RawSlice};
use crate::backend::gpu::Gpu;
use crate::backend::launcher::StreamHandle;
use crate::blocking::{check_into, results_of};
use crate::element::{sealed::Sealed, DeviceValue, Element};
use crate::error::{Error, Result};
use crate::input::DeviceInput;
use crate::over::{Over, Target};
use crate::reduction::Reduction;
use ::cudarc::driver::sys::CUstreamCaptureStatus;
use ::cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, SyncOnDrop,
};
use cust_core::DeviceCopy;
use std::cell::RefCell;
use std::sync::Arc;

/// The `half` crate in the version cudarc's buffers hold (2), as distinct
/// from [`crate::half`] (1.8, cust's).
pub use half2 as half;

/// The most contexts the free functions keep a reducer for, per thread.
const CONTEXTS: usize = 4;

/// The type of a cudarc buffer's elements as the kernels read them: each
/// [`Element`] and narrow integer itself, and half 2's `f16`/`bf16` (cudarc's)
/// as half 1.8's (the same bits).
///
/// Sealed: the kernels are compiled ahead of time for these types.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::cudarc::{half::bf16, CudarcElement};
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[bf16::from_f32(0.5), bf16::from_f32(-4.0)])?; // half 2's bf16
/// assert_eq!(reduce::argmin(&buf)?, (1, bf16::from_f32(-4.0))); // of half 2's bf16
/// fn read_as_half_1_8<T: CudarcElement<Kernel = reduce::half::bf16>>() {}
/// read_as_half_1_8::<bf16>();
/// # Ok(()) }
/// ```
pub trait CudarcElement: Copy + Send + Sync + 'static + Sealed {
    /// The type the kernels take.
    type Kernel: DeviceCopy;
    /// `value` as this type (the same bits).
    fn from_kernel(value: Self::Kernel) -> Self;
}

macro_rules! cudarc_element {
    ($($t:ty),*) => {$(
        impl CudarcElement for $t {
            type Kernel = $t;
            fn from_kernel(value: $t) -> Self {
                value
            }
        }
    )*};
}
cudarc_element!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! half_element {
    ($($t:ident),*) => {$(
        impl Sealed for half2::$t {}
        impl CudarcElement for half2::$t {
            type Kernel = crate::half::$t;
            fn from_kernel(value: crate::half::$t) -> Self {
                half2::$t::from_bits(value.to_bits())
            }
        }
        const _: () = assert!(std::mem::size_of::<half2::$t>() == std::mem::size_of::<crate::half::$t>());
    )*};
}
half_element!(f16, bf16);

/// Reduces cudarc buffers with the kernels loaded once into a
/// [`CudaContext`]: the blocking calls return the result to the host, the
/// `_into` calls enqueue it into a cudarc buffer on a stream (see the
/// [module](self) docs).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cudarc::driver::CudaContext;
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.new_stream()?;
/// let values = stream.clone_htod(&[4u32, 1, 7, 3, 9])?;
/// let offsets = stream.clone_htod(&[0u64, 3, 5])?;
/// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
/// let minima = reducer.reduce_over(&values, reduce::Op::Min, reduce::Over::Segments(&offsets))?;
/// assert_eq!(stream.clone_dtoh(&minima.values)?, [1, 3]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Reducer {
    /// Declared first, so dropped first, with its stream and the context
    /// still held.
    inner: crate::Reducer<Gpu>,
    /// The blocking calls' stream.
    own_stream: OwnedStream,
    context: Arc<CudaContext>,
}

impl Reducer {
    /// A reducer for `context`, with the tuned launch policy of its device:
    /// its kernels load there as they are first used (see
    /// [Which kernels run](crate#which-kernels-run)).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let buf = ctx.default_stream().clone_htod(&[2i64, -3, 5])?;
    /// assert_eq!(reducer.reduce(&buf, reduce::Op::Min)?, -3);
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`Error::UnsupportedDevice`] before compute capability 7.0,
    /// CUDA errors.
    pub fn new(context: &Arc<CudaContext>) -> Result<Self> {
        context.bind_to_thread()?;
        let own_stream = OwnedStream::new()?;
        // SAFETY: the stream is of the context just made current, and the
        // reducer drops it after the backend (field order).
        let backend = unsafe { Gpu::new(None, own_stream.handle())? };
        Ok(Reducer {
            inner: crate::Reducer { backend },
            own_stream,
            context: Arc::clone(context),
        })
    }

    /// The context the kernels are loaded in.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// assert_eq!(reduce::cudarc::Reducer::new(&ctx)?.context().ordinal(), 0);
    /// # Ok(()) }
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// Reduces the whole of a cudarc buffer with `what` and returns the
    /// result to the host ([`crate::Reducer::reduce`]; see [`Reduction`]).
    /// `T` may be half 2's `f16`/`bf16` ([`CudarcElement`]), which the
    /// reductions take as the kernels' type, half 1.8's (an argmax's value
    /// of them is a [`crate::half`] value; [`crate::argmax`] converts it back).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::cudarc::half::f16; // half 2, as cudarc's
    /// use reduce::{ArgMax, Op, Widened};
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.default_stream();
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let buf = stream.clone_htod(&[1.5f64, 2.5, 4.0])?;
    /// assert_eq!(reducer.reduce(&buf, Op::Product)?, 15.0);
    /// assert_eq!(reducer.reduce(&buf.slice(1..), ArgMax)?, (1, 4.0)); // any view
    /// let ones = stream.clone_htod(&[f16::ONE; 70_000])?;
    /// assert_eq!(reducer.reduce(&ones, Widened::<f32>::new(Op::Sum))?, 70_000.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce<T: CudarcElement, R: Reduction<T::Kernel>>(
        &mut self,
        input: &impl DevicePtr<T>,
        what: R,
    ) -> Result<R::Value> {
        let (input, _read) = settled::<T, T::Kernel, _>(input)?;
        self.blocking(|inner| inner.reduce(&input, what))
    }

    /// Reduces a cudarc buffer with `what` over `over` (each segment, row,
    /// or along axes: [`Over`]) into new buffers on the input's stream,
    /// with the results' shape ([`crate::Reducer::reduce_over`]). Offsets
    /// are any cudarc buffer or view of `u64`s: `Over::Segments(&offsets)`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, Op, Over, Var};
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let values = stream.clone_htod(&[4.0f32, 1.0, 7.0, 3.0, 9.0, 2.0])?;
    /// let offsets = stream.clone_htod(&[0u64, 3, 3, 6])?; // the middle segment is empty
    /// let minima = reducer.reduce_over(&values, Op::Min, Over::Segments(&offsets))?;
    /// assert_eq!(stream.clone_dtoh(&minima.values)?, [1.0, f32::INFINITY, 2.0]);
    /// let layout = Strided::contiguous(&[2, 3])?;
    /// let var = reducer.reduce_over(&values, Var::<f32>::new(0.0)?, Over::Axes(&layout, &[0]))?;
    /// assert_eq!(stream.clone_dtoh(&var.values)?, [0.25, 16.0, 6.25]);
    /// # Ok(()) }
    /// ```
    ///
    /// The results' buffers hold cudarc's type of [`Reduction::Output`]
    /// ([`DeviceValue::Cudarc`]: the type itself; half 2's `f16`/`bf16`
    /// for the half floats of a [`Cast`](crate::Cast), such as
    /// `Mean.cast::<f16>()`).
    #[allow(clippy::type_complexity)]
    pub fn reduce_over<T: CudarcElement, R: Reduction<T::Kernel>>(
        &mut self,
        input: &impl DevicePtr<T>,
        what: R,
        over: Over<'_, &dyn DevicePtr<u64>>,
    ) -> Result<Reduced<R::Results<CudaSlice<<R::Output as DeviceValue>::Cudarc>>>> {
        what.check_over(&over)?;
        let offsets_len = over.offsets_len(|offsets| offsets.len());
        let (results, layout, axes) = results_of(&over, input.len(), offsets_len)?;
        let stream = input.stream();
        // SAFETY: the call writes every result before the buffers are
        // returned; on an error they are dropped unread.
        let mut values = unsafe { stream.alloc::<<R::Output as DeviceValue>::Cudarc>(results)? };
        let mut means = match R::MEANS {
            // SAFETY: as `values`.
            true => Some(unsafe { stream.alloc::<<R::Output as DeviceValue>::Cudarc>(results)? }),
            false => None,
        };
        {
            // After the allocations, which are ordered on `stream` (settled waits for it).
            let (out, _write) = write(&mut values, stream);
            let (means_address, _means_write) = match means.as_mut() {
                Some(means) => {
                    let (means, guard) = write(means, stream);
                    (Some(means.0), Some(guard))
                }
                None => (None, None),
            };
            let (input, _read) = settled::<T, T::Kernel, _>(input)?;
            let offsets = over.try_map(settled::<u64, u64, _>)?;
            let over = offsets.as_ref().map(|(offsets, _)| offsets);
            self.blocking(|inner| inner.blocking_over(&input, what, over, out, means_address))?;
        }
        let results = R::results(values, means).ok_or(Error::internal("a mean-and-variance call without its means"))?;
        Reduced::new(results, &layout, &axes)
    }

    /// Enqueues the reduction of a cudarc buffer with `what` over `over` on
    /// `stream`, its results to `out` (one element for [`Over::Whole`],
    /// else one per segment, row or position of the kept axes; for
    /// [`MeanVar`](crate::MeanVar) a pair, the means and the variances),
    /// and returns without waiting (see the [module](self) docs): the rules
    /// of [`Scope::reduce_into`](crate::Scope::reduce_into), offsets clamped
    /// rather than validated.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{Op, Over};
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let input = stream.clone_htod(&[1u64, 2, 3, 4])?;
    /// let mut total = stream.alloc_zeros::<u64>(1)?;
    /// reducer.reduce_into(&input, Op::Sum, Over::Whole, &mut total, &stream)?;
    /// let mut rows = stream.alloc_zeros::<u64>(2)?;
    /// reducer.reduce_into(&input, Op::Max, Over::Rows { rows: 2, len: 2 }, &mut rows, &stream)?;
    /// drop(input); // freed after the kernels have read it
    /// assert_eq!((stream.clone_dtoh(&total)?, stream.clone_dtoh(&rows)?), (vec![10], vec![2, 4]));
    /// # Ok(()) }
    /// ```
    ///
    /// Offsets are any cudarc buffer or view of `u64`s, as for
    /// [`Reducer::reduce_over`]: `Over::Segments(&offsets.slice(1..))`.
    /// `out` holds cudarc's type of [`Reduction::Output`]
    /// ([`DeviceValue::Cudarc`]): half 2's `f16`/`bf16` for the half floats.
    ///
    /// Errors: those of [`crate::Scope::reduce_into`], [`Error::UnsupportedStream`]
    /// (a stream of another context, or one being captured into a graph).
    pub fn reduce_into<
        T: CudarcElement,
        R: Reduction<T::Kernel>,
        O: DevicePtrMut<<R::Output as DeviceValue>::Cudarc>,
    >(
        &mut self,
        input: &impl DevicePtr<T>,
        what: R,
        over: Over<'_, &dyn DevicePtr<u64>>,
        out: R::Results<&mut O>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let (values, means) = R::outputs(out);
        let offsets_len = over.offsets_len(|offsets| offsets.len());
        let means_len = means.as_ref().map(|means| means.len());
        check_into(what, &over, (input.len(), offsets_len), values.len(), means_len)?;
        let on = self.lend(stream)?;
        let offsets = over.map(|offsets| read::<u64, u64, _>(offsets, stream));
        let (input, read_input) = read::<T, T::Kernel, _>(input, stream);
        let ((out, len), write_values) = write(values, stream);
        let (means, write_means) = match means.map(|means| write(means, stream)) {
            Some(((address, _), guard)) => (Some(address), Some(guard)),
            None => (None, None),
        };
        let (over, read_offsets) = match offsets {
            Over::Segments((offsets, guard)) => (Over::Segments(offsets), Some(guard)),
            Over::Whole => (Over::Whole, None),
            Over::Rows { rows, len } => (Over::Rows { rows, len }, None),
            Over::Axes(layout, axes) => (Over::Axes(layout, axes), None),
        };
        let over = over.as_ref();
        let guards = (read_input, read_offsets, write_values, write_means);
        self.enqueue(stream, on, guards, |inner, on| {
            let target = Target {
                out,
                len,
                means,
                status: None,
            };
            what.enqueue(inner, &input, over, target, on)
        })
    }

    /// The dot product `Σ a[i]·b[i]` of two cudarc buffers
    /// ([`crate::Reducer::dot`]).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.default_stream();
    /// let (a, b) = (stream.clone_htod(&[1.0f64, 2.0, 3.0])?, stream.clone_htod(&[4.0f64, 5.0, 6.0])?);
    /// assert_eq!(reduce::cudarc::Reducer::new(&ctx)?.dot(&a, &b)?, 32.0);
    /// # Ok(()) }
    /// ```
    pub fn dot<T: CudarcElement>(&mut self, a: &impl DevicePtr<T>, b: &impl DevicePtr<T>) -> Result<T::Kernel>
    where
        T::Kernel: Element,
    {
        let (a, _a_read) = settled::<T, T::Kernel, _>(a)?;
        let (b, _b_read) = settled::<T, T::Kernel, _>(b)?;
        self.blocking(|inner| inner.dot(&a, &b))
    }

    /// [`crate::Reducer::reduce_pair`] of cudarc buffers: [`crate::ExactDot`],
    /// or a user operator over two inputs.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.default_stream();
    /// let (a, b) = (stream.clone_htod(&[1e30f64, 1.0, 1e30])?, stream.clone_htod(&[1.0f64, 3.0, -1.0])?);
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// assert_eq!(reducer.reduce_pair(&a, &b, reduce::ExactDot)?, 3.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce_pair<T: CudarcElement, W: crate::PairReduction<T::Kernel>>(
        &mut self,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        what: W,
    ) -> Result<T::Kernel> {
        let (a, _a_read) = settled::<T, T::Kernel, _>(a)?;
        let (b, _b_read) = settled::<T, T::Kernel, _>(b)?;
        self.blocking(|inner| inner.reduce_pair(&a, &b, what))
    }

    /// Enqueues [`Reducer::dot`] on `stream`, its result to `out`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let (a, b) = (stream.clone_htod(&[1i64, 2, 3])?, stream.clone_htod(&[4i64, -5, 6])?);
    /// let mut out = stream.alloc_zeros::<i64>(2)?;
    /// reducer.dot_into(&a, &b, &mut out.slice_mut(1..), &stream)?; // into any one-element view
    /// assert_eq!(stream.clone_dtoh(&out)?, [0, 12]);
    /// # Ok(()) }
    /// ```
    pub fn dot_into<T: Element>(
        &mut self,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        out: &mut impl DevicePtrMut<T>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.enqueue_two_to_one(a, b, out, stream, |inner, a, b, out, on| {
            inner.enqueue_dot(a, b, single("out", out)?, on)
        })
    }

    /// Enqueues [`Reducer::reduce_pair`] on `stream`, its result to `out`:
    /// a [`PairReduction`](crate::PairReduction) ([`crate::ExactDot`], a user
    /// operator's pairs) of `a` and `b`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let (a, b) = (stream.clone_htod(&[1e30f64, 1.0, 1e30])?, stream.clone_htod(&[1.0f64, 3.0, -1.0])?);
    /// let mut out = stream.alloc_zeros::<f64>(1)?;
    /// reducer.reduce_pair_into(&a, &b, reduce::ExactDot, &mut out, &stream)?;
    /// assert_eq!(stream.clone_dtoh(&out)?, [3.0]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_pair_into<T: DeviceCopy, W: crate::PairReduction<T>>(
        &mut self,
        a: &impl DevicePtr<T>,
        b: &impl DevicePtr<T>,
        what: W,
        out: &mut impl DevicePtrMut<T>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.enqueue_two_to_one(a, b, out, stream, |inner, a, b, out, on| {
            what.enqueue(inner, a, b, single("out", out)?, on)
        })
    }

    /// Runs a blocking call of the inner reducer, with this context current
    /// (after the inputs were settled, which makes their context current),
    /// after taking back the workspaces of streams whose launches have
    /// completed and freeing the scratch they outgrew (a blocking call may
    /// free: an `_into` call never does).
    fn blocking<R>(&mut self, call: impl FnOnce(&mut crate::Reducer<Gpu>) -> Result<R>) -> Result<R> {
        self.context.bind_to_thread()?;
        self.inner.backend.tidy()?;
        call(&mut self.inner)
    }

    /// How many workspaces are lent to streams whose launches may still
    /// run (or have not been asked since), and how many are idle, for the
    /// tests of the lending rule (see the [module](self) docs).
    #[doc(hidden)]
    pub fn workspace_counts(&self) -> (usize, usize) {
        self.inner.backend.workspace_counts()
    }

    /// Enqueues `call` on `stream`, reading `a` and `b` and writing `out`
    /// (its address and length): the calls of two inputs and one output.
    fn enqueue_two_to_one<A: DeviceCopy, B: DeviceCopy, O>(
        &mut self,
        a: &impl DevicePtr<A>,
        b: &impl DevicePtr<B>,
        out: &mut impl DevicePtrMut<O>,
        stream: &Arc<CudaStream>,
        call: impl FnOnce(
            &mut crate::Reducer<Gpu>,
            &RawSlice<A>,
            &RawSlice<B>,
            (u64, usize),
            Option<StreamHandle>,
        ) -> Result<()>,
    ) -> Result<()> {
        let on = self.lend(stream)?;
        let (a, a_read) = read::<A, A, _>(a, stream);
        let (b, b_read) = read::<B, B, _>(b, stream);
        let (out, write) = write(out, stream);
        self.enqueue(stream, on, (a_read, b_read, write), |inner, on| {
            call(inner, &a, &b, out, on)
        })
    }

    /// Runs `enqueue` on `stream` (`on`, from [`Reducer::lend`]), then lets
    /// go of the buffers' `guards`, which record the launch's reads and writes.
    fn enqueue<G>(
        &mut self,
        stream: &CudaStream,
        on: StreamHandle,
        guards: G,
        enqueue: impl FnOnce(&mut crate::Reducer<Gpu>, Option<StreamHandle>) -> Result<()>,
    ) -> Result<()> {
        // A wait that `device_ptr` could not enqueue (it records the error
        // in the context) would leave the kernel unordered after a write.
        self.context.check_err()?;
        let launched = enqueue(&mut self.inner, Some(on));
        // After whatever was enqueued, failed calls too: until this event
        // completes, the workspace is the stream's alone.
        let recorded = self.inner.backend.record_launched(on);
        // The buffers are borrowed for this call only.
        self.inner.backend.forget_owned();
        drop(guards);
        let tracked = self.context.check_err();
        if recorded.is_err() || tracked.is_err() {
            // A use that could not be recorded: nothing would keep cudarc
            // from freeing or writing a buffer, or this reducer from lending
            // the workspace to another stream, before the kernels ran, so
            // wait for them here (an error path: the context is failing).
            if let Err(error) = stream.synchronize() {
                // Neither recorded nor waited for: never free or lend the
                // workspace again.
                self.inner.backend.abandon(on);
                return Err(error.into());
            }
            recorded?;
            tracked?;
        }
        launched
    }

    /// Gives `stream` a workspace (see the [module](self) docs: its own, or
    /// one of a stream whose launches are known complete, or a new one,
    /// without waiting) and returns its handle, with this context current.
    /// Called before the buffers' pointers are taken, so that a refused
    /// stream is given no waits.
    fn lend(&mut self, stream: &Arc<CudaStream>) -> Result<StreamHandle> {
        if stream.context().cu_ctx() != self.context.cu_ctx() {
            return Err(Error::UnsupportedStream(format!(
                "the stream belongs to a context of device {}, the reducer to one of device {}",
                stream.context().ordinal(),
                self.context.ordinal()
            )));
        }
        self.context.bind_to_thread()?;
        if stream.capture_status()? != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Err(Error::UnsupportedStream(
                "it is being captured into a CUDA graph, whose replays would share the stream's workspace \
                 with later launches; capture through Reducer::scope_unsynchronized (feature cust) instead"
                    .to_string(),
            ));
        }
        let handle = handle_of(stream);
        // Held while lent: the stream is not destroyed, nor its handle
        // given to a new stream, while launches on it may use the workspace.
        self.inner.backend.lend_to(handle, Arc::clone(stream) as _)?;
        Ok(handle)
    }
}

impl Drop for Reducer {
    fn drop(&mut self) {
        // Nothing may still use the workspaces and the module when they are
        // freed. A failed wait means the context is broken and its work
        // stopped: nothing is left running either way.
        let _ = self.context.bind_to_thread();
        // The events recorded after each stream's launches: they reach the
        // per-thread default streams of other threads too.
        let _ = self.inner.backend.wait_lent();
        // A blocking call that failed between launches may have left work
        // on the own stream.
        // SAFETY: the own stream, alive until after the backend.
        let _ = unsafe { crate::backend::driver::synchronize(self.own_stream.handle()) };
        // The inner reducer is dropped next, with the context current.
        let _ = self.context.bind_to_thread();
    }
}

/// `stream`'s handle, for the backend.
fn handle_of(stream: &CudaStream) -> StreamHandle {
    StreamHandle(stream.cu_stream())
}

/// `buffer` as `K`s (its own type, or the kernels' type of the same bits),
/// read on `stream` (which first waits for its recorded writes), and the
/// guard that records the read when dropped.
///
/// The view is read only while the cudarc buffer it came from is borrowed,
/// and the backend checks each launch's buffers are its context's memory.
fn read<'a, T, K: DeviceCopy, P: DevicePtr<T> + ?Sized>(
    buffer: &'a P,
    stream: &'a CudaStream,
) -> (RawSlice<K>, SyncOnDrop<'a>) {
    const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<K>()) };
    let len = buffer.len();
    let (address, guard) = buffer.device_ptr(stream);
    (RawSlice::new(address, len), guard)
}

/// `buffer`'s address and length, written on `stream` (which first waits
/// for its recorded reads and writes), and the guard that records the write.
fn write<'a, T>(buffer: &'a mut impl DevicePtrMut<T>, stream: &'a CudaStream) -> ((u64, usize), SyncOnDrop<'a>) {
    let len = buffer.len();
    let (address, guard) = buffer.device_ptr_mut(stream);
    ((address, len), guard)
}

/// `buffer` for a blocking call on the reducer's own stream, once the work
/// on its stream, and its recorded writes, are done.
fn settled<T, K: DeviceCopy, P: DevicePtr<T> + ?Sized>(buffer: &P) -> Result<(RawSlice<K>, SyncOnDrop<'_>)> {
    let stream = buffer.stream();
    let read = read::<T, K, P>(buffer, stream);
    stream.synchronize()?;
    Ok(read)
}

/// The address of a one-element output; [`Error::OutputLength`] for other lengths.
fn single(name: &'static str, (address, len): (u64, usize)) -> Result<u64> {
    if len != 1 {
        return Err(Error::OutputLength {
            output: name,
            found: len,
            expected: 1,
        });
    }
    Ok(address)
}

thread_local! {
    /// This thread's reducers for the free functions, least recently used first.
    static REDUCERS: RefCell<Vec<Reducer>> = const { RefCell::new(Vec::new()) };
}

/// Runs `call` with this thread's reducer for `context`, made on first use
/// (dropping the least recently used one past [`CONTEXTS`]).
pub(crate) fn with_reducer<R>(context: &Arc<CudaContext>, call: impl FnOnce(&mut Reducer) -> Result<R>) -> Result<R> {
    REDUCERS.with(|cell| {
        let mut reducers = cell.borrow_mut();
        let reducer = match reducers.iter().position(|r| r.context.cu_ctx() == context.cu_ctx()) {
            Some(index) => reducers.remove(index),
            None => {
                if reducers.len() >= CONTEXTS {
                    reducers.remove(0);
                }
                Reducer::new(context)?
            }
        };
        reducers.push(reducer);
        match reducers.last_mut() {
            Some(reducer) => call(reducer),
            None => Err(Error::NoContext),
        }
    })
}

/// The cudarc buffers and views the free functions take, each reduced by
/// this thread's [`Reducer`] for the context of its stream.
macro_rules! cudarc_input {
    ($($buffer:ty),*) => {$(
        impl<T: CudarcElement> crate::input::sealed::Sealed for $buffer {}

        impl<T: CudarcElement> DeviceInput<T> for $buffer {
            type Kernel = T::Kernel;
            type Buffer<U: DeviceValue> = CudaSlice<U::Cudarc>;
            type Offsets<'o> = dyn DevicePtr<u64> + 'o;

            fn from_kernel(value: T::Kernel) -> T {
                T::from_kernel(value)
            }

            fn reduce_whole<R: Reduction<T::Kernel>>(&self, what: R) -> Result<R::Value> {
                with_reducer(::cudarc::driver::DeviceSlice::stream(self).context(), |r| r.reduce(self, what))
            }

            fn reduce_over<'o, R: Reduction<T::Kernel>>(
                &self,
                what: R,
                over: Over<'o, &'o (dyn DevicePtr<u64> + 'o)>,
            ) -> Result<Reduced<R::Results<Self::Buffer<R::Output>>>> {
                with_reducer(::cudarc::driver::DeviceSlice::stream(self).context(), |r| r.reduce_over(self, what, over))
            }

            fn dot(&self, other: &Self) -> Result<T::Kernel>
            where
                T::Kernel: Element,
            {
                with_reducer(::cudarc::driver::DeviceSlice::stream(self).context(), |r| r.dot(self, other))
            }

            fn reduce_pair<W: crate::PairReduction<T::Kernel>>(&self, other: &Self, what: W) -> Result<T::Kernel> {
                with_reducer(::cudarc::driver::DeviceSlice::stream(self).context(), |r| r.reduce_pair(self, other, what))
            }
        }
    )*};
}
cudarc_input!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);
