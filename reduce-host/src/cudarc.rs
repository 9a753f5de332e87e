//! The operations over [cudarc](https://docs.rs/cudarc/0.19)'s buffers and streams (the
//! `cudarc` feature): [`CudaSlice`], [`CudaView`](::cudarc::driver::CudaView)
//! and [`CudaViewMut`](::cudarc::driver::CudaViewMut) on a [`CudaStream`],
//! as candle and burn hold them.
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use cudarc::driver::CudaContext;
//! use reduce::Op;
//! let ctx = CudaContext::new(0)?;
//! let stream = ctx.default_stream();
//! let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
//! let buf = stream.clone_htod(&data)?;
//!
//! // Blocking: the result on the host.
//! assert_eq!(reduce::cudarc::sum(&buf)?, 499_500.0);
//! assert_eq!(reduce::cudarc::argmax(&buf.slice(10..20))?, (9, 19.0)); // any view
//!
//! // Async: the result into a cudarc buffer, on a stream, without waiting.
//! let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
//! let mut out = stream.alloc_zeros::<f32>(1)?;
//! reducer.reduce_into(&buf, Op::Max, &mut out, &stream)?;
//! assert_eq!(stream.clone_dtoh(&out)?, [999.0]);
//! # Ok(()) }
//! ```
//!
//! # The blocking calls
//! [`Reducer::reduce`] and the other methods without `_into`, and the free
//! functions of this module, wait for the work recorded on each input's
//! stream, then run on the reducer's own stream and wait for their result.
//! The free functions use a [`Reducer`] cached per thread for the input's
//! context (the [`CudaContext`] of its stream).
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
//! A launch needs a small workspace (per-block partials and a ticket that
//! every launch leaves at zero), which must not be shared by launches that
//! can run at once: a [`Reducer`] keeps one per stream it has launched on,
//! holding the stream (so that it is not destroyed, and its handle not
//! reused, while its workspace may be in use), for up to eight streams; past
//! that, it waits for the stream it used least recently before giving that
//! stream's workspace to the new one. Streams being captured into a CUDA
//! graph are refused ([`Error::UnsupportedStream`]): a replay would share the
//! workspace with later launches. For graphs, and for buffers and streams of
//! other runtimes, see [`Reducer::scope_unsynchronized`](crate::Reducer::scope_unsynchronized)
//! and [`ScopeStream::from_raw`](crate::ScopeStream::from_raw).
//!
//! # Contexts
//! cudarc works in each device's primary context; a [`Reducer`] loads the
//! kernels there (and makes that context current on the calling thread for
//! each call). Buffers of another context or device are refused
//! ([`Error::ForeignBuffer`]), as streams of another context are
//! ([`Error::UnsupportedStream`]).
//!
//! # Half precision
//! cudarc's `f16`/`bf16` are half 2's ([`CudarcElement`]): the widening calls
//! ([`Reducer::reduce_as`], [`mean`]) and argmax/argmin take them, as the same
//! kernels take half 1.8's. This module re-exports half 2 as [`half`].

use crate::backend::launcher::StreamHandle;
use crate::backend::Cuda;
use crate::element::{sealed::Sealed, ArgInput, Element, FloatElement, MeanInput, WidensTo};
use crate::error::{Error, Result};
use crate::reducer::checked_parts;
use crate::segmented::{check_rows, segment_count};
use ::cudarc::driver::sys::CUstreamCaptureStatus;
use ::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, SyncOnDrop};
use cust::memory::{DeviceCopy, DevicePointer, DeviceSlice};
use kernels_gpu::abi::Op;
use std::cell::RefCell;
use std::sync::Arc;

/// The `half` crate in the version cudarc's buffers hold (2), as distinct
/// from [`crate::half`] (1.8, cust's).
pub use half2 as half;

/// The most streams a [`Reducer`] keeps a workspace for.
const STREAMS: usize = 8;
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
/// assert_eq!(reduce::cudarc::argmin(&buf)?, (1, bf16::from_f32(-4.0)));
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
/// let minima = reducer.segmented_reduce(&values, &offsets, reduce::Op::Min)?;
/// assert_eq!(stream.clone_dtoh(&minima)?, [1, 3]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Reducer {
    /// Declared first, so dropped first, with the context still held.
    inner: crate::Reducer<Cuda>,
    /// The streams lent a workspace, least recently used first.
    streams: Vec<Arc<CudaStream>>,
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
        Ok(Reducer {
            inner: crate::Reducer::new()?,
            streams: Vec::new(),
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

    /// [`crate::Reducer::reduce`] of a cudarc buffer.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let buf = ctx.default_stream().clone_htod(&[1.5f64, 2.5, 4.0])?;
    /// assert_eq!(reduce::cudarc::Reducer::new(&ctx)?.reduce(&buf, reduce::Op::Product)?, 15.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce<T: Element>(&mut self, input: &impl DevicePtr<T>, op: Op) -> Result<T> {
        let (input, _read) = settled::<T, T>(input)?;
        self.blocking(|inner| inner.reduce(&input, op))
    }

    /// [`crate::Reducer::reduce_as`] of a cudarc buffer: `In` may be half 2's
    /// `f16`/`bf16` ([`CudarcElement`]).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::cudarc::half::f16; // half 2, as cudarc's
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let ones = ctx.default_stream().clone_htod(&[f16::ONE; 70_000])?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// assert_eq!(reducer.reduce_as::<f32, _>(&ones, reduce::Op::Sum)?, 70_000.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce_as<A: Element, In: CudarcElement>(&mut self, input: &impl DevicePtr<In>, op: Op) -> Result<A>
    where
        In::Kernel: WidensTo<A>,
    {
        let (input, _read) = settled::<In, In::Kernel>(input)?;
        self.blocking(|inner| inner.reduce_as::<A, In::Kernel>(&input, op))
    }

    /// [`crate::Reducer::argmax`] of a cudarc buffer (of any
    /// [`CudarcElement`] whose kernel type is an [`ArgInput`]).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let buf = ctx.default_stream().clone_htod(&[3.0f32, 9.5, -1.0, 9.5])?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// assert_eq!(reducer.argmax(&buf)?, (1, 9.5));
    /// assert_eq!(reducer.argmin(&buf)?, (2, -1.0));
    /// # Ok(()) }
    /// ```
    pub fn argmax<T: CudarcElement>(&mut self, input: &impl DevicePtr<T>) -> Result<(u64, T)>
    where
        T::Kernel: ArgInput,
    {
        self.arg(input, Op::Max)
    }

    /// [`crate::Reducer::argmin`] of a cudarc buffer (as [`Reducer::argmax`]).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let buf = stream.clone_htod(&[4i32, 0, 9, 0])?;
    /// assert_eq!(reducer.argmin(&buf)?, (1, 0)); // the first of equal minima
    /// # Ok(()) }
    /// ```
    pub fn argmin<T: CudarcElement>(&mut self, input: &impl DevicePtr<T>) -> Result<(u64, T)>
    where
        T::Kernel: ArgInput,
    {
        self.arg(input, Op::Min)
    }

    fn arg<T: CudarcElement>(&mut self, input: &impl DevicePtr<T>, op: Op) -> Result<(u64, T)>
    where
        T::Kernel: ArgInput,
    {
        let (input, _read) = settled::<T, T::Kernel>(input)?;
        let (index, value) = self.blocking(|inner| inner.arg_to_host(&input, op))?;
        Ok((index, T::from_kernel(value)))
    }

    /// [`crate::Reducer::dot`] of two cudarc buffers.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.default_stream();
    /// let (a, b) = (stream.clone_htod(&[1.0f64, 2.0, 3.0])?, stream.clone_htod(&[4.0f64, 5.0, 6.0])?);
    /// assert_eq!(reduce::cudarc::Reducer::new(&ctx)?.dot(&a, &b)?, 32.0);
    /// # Ok(()) }
    /// ```
    pub fn dot<T: Element>(&mut self, a: &impl DevicePtr<T>, b: &impl DevicePtr<T>) -> Result<T> {
        let ((a, _a_read), (b, _b_read)) = (settled::<T, T>(a)?, settled::<T, T>(b)?);
        self.blocking(|inner| inner.dot(&a, &b))
    }

    /// [`crate::Reducer::segmented_reduce`] of cudarc buffers, into a new
    /// buffer on the stream of `values` (see [`Reducer`] for an example).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let values = stream.clone_htod(&[1.0f64, 2.0, 3.0, 4.0])?;
    /// let offsets = stream.clone_htod(&[0u64, 1, 1, 4])?; // the middle segment is empty
    /// let sums = reducer.segmented_reduce(&values, &offsets, reduce::Op::Sum)?; // on `stream`
    /// assert_eq!(stream.clone_dtoh(&sums)?, [1.0, 0.0, 9.0]);
    /// # Ok(()) }
    /// ```
    pub fn segmented_reduce<T: Element + DeviceRepr>(
        &mut self,
        values: &impl DevicePtr<T>,
        offsets: &impl DevicePtr<u64>,
        op: Op,
    ) -> Result<CudaSlice<T>> {
        let segments = segment_count(offsets.len())?;
        let (offsets, _read) = settled::<u64, u64>(offsets)?;
        self.blocking_into(values, segments, |inner, values, out| {
            inner.segmented_reduce_to(values, &offsets, op, out)
        })
    }

    /// [`crate::Reducer::reduce_rows`] of a cudarc buffer, into a new buffer
    /// on its stream.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.default_stream();
    /// let matrix = stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let sums = reducer.reduce_rows(&matrix, 3, 2, reduce::Op::Sum)?;
    /// assert_eq!(stream.clone_dtoh(&sums)?, [3.0, 7.0, 11.0]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_rows<T: Element + DeviceRepr>(
        &mut self,
        matrix: &impl DevicePtr<T>,
        rows: usize,
        row_len: usize,
        op: Op,
    ) -> Result<CudaSlice<T>> {
        // Before the allocation, whose size it bounds.
        check_rows(matrix.len(), rows, row_len)?;
        self.blocking_into(matrix, rows, |inner, matrix, out| {
            inner.reduce_rows_to(matrix, rows, row_len, op, out)
        })
    }

    /// Enqueues [`Reducer::reduce`] on `stream`, its result to `out` (one
    /// element), and returns without waiting (see the [module](self) docs).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let input = stream.clone_htod(&[1u64, 2, 3])?;
    /// let mut out = stream.alloc_zeros::<u64>(1)?;
    /// reduce::cudarc::Reducer::new(&ctx)?.reduce_into(&input, reduce::Op::Sum, &mut out, &stream)?;
    /// drop(input); // freed after the kernel has read it
    /// assert_eq!(stream.clone_dtoh(&out)?, [6]);
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: those of [`Reducer::reduce`], [`Error::OutputLength`] unless
    /// `out` has one element, [`Error::UnsupportedStream`].
    pub fn reduce_into<T: Element>(
        &mut self,
        input: &impl DevicePtr<T>,
        op: Op,
        out: &mut impl DevicePtrMut<T>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.enqueue_one_to_one::<T, T, T>(input, out, stream, |inner, input, out, on| {
            inner.enqueue_reduce(input, op, single("out", out)?, on, false)
        })
    }

    /// Enqueues [`Reducer::reduce_as`] on `stream`, its result to `out`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let bytes = stream.clone_htod(&[200u8; 1000])?;
    /// let mut total = stream.alloc_zeros::<u64>(1)?;
    /// reducer.reduce_as_into(&bytes, reduce::Op::Sum, &mut total, &stream)?; // summed in u64
    /// assert_eq!(stream.clone_dtoh(&total)?, [200_000]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_as_into<A: Element, In: CudarcElement>(
        &mut self,
        input: &impl DevicePtr<In>,
        op: Op,
        out: &mut impl DevicePtrMut<A>,
        stream: &Arc<CudaStream>,
    ) -> Result<()>
    where
        In::Kernel: WidensTo<A>,
    {
        self.enqueue_one_to_one::<In, In::Kernel, A>(input, out, stream, |inner, input, out, on| {
            inner.enqueue_widened::<A, In::Kernel>(input, op, single("out", out)?, on)
        })
    }

    /// Enqueues [`Reducer::argmax`] (`op` = [`Op::Max`]) or
    /// [`Reducer::argmin`] ([`Op::Min`]) on `stream`: the index to `index`,
    /// the value (in [`ArgInput::Value`]: the element type, or `f32` for the
    /// half types) to `value`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let input = stream.clone_htod(&[3.0f32, 9.5, -1.0])?;
    /// let (mut index, mut value) = (stream.alloc_zeros::<u64>(1)?, stream.alloc_zeros::<f32>(1)?);
    /// reducer.arg_into(&input, reduce::Op::Max, &mut index, &mut value, &stream)?;
    /// assert_eq!((stream.clone_dtoh(&index)?, stream.clone_dtoh(&value)?), (vec![1], vec![9.5]));
    /// # Ok(()) }
    /// ```
    pub fn arg_into<T: CudarcElement>(
        &mut self,
        input: &impl DevicePtr<T>,
        op: Op,
        index: &mut impl DevicePtrMut<u64>,
        value: &mut impl DevicePtrMut<<T::Kernel as ArgInput>::Value>,
        stream: &Arc<CudaStream>,
    ) -> Result<()>
    where
        T::Kernel: ArgInput,
    {
        let on = self.lend(stream)?;
        let (input, read) = read::<T, T::Kernel>(input, stream);
        let (index, index_write) = write(index, stream);
        let (value, value_write) = write(value, stream);
        self.enqueue(stream, on, (read, index_write, value_write), |inner, on| {
            let outputs = (single("value", value)?, single("index", index)?);
            inner.enqueue_arg(&input, op, outputs, on)
        })
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

    /// Enqueues [`Reducer::segmented_reduce`] on `stream`, one result per
    /// segment to `out`. As [`Scope::segmented_reduce_into`](crate::Scope::segmented_reduce_into),
    /// it does not wait to validate the offsets: invalid ones are clamped
    /// into `[0, values.len()]`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let values = stream.clone_htod(&[4u32, 1, 7, 3, 9])?;
    /// let offsets = stream.clone_htod(&[0u64, 3, 5])?;
    /// let mut maxima = stream.alloc_zeros::<u32>(2)?; // one per segment
    /// reducer.segmented_reduce_into(&values, &offsets, reduce::Op::Max, &mut maxima, &stream)?;
    /// assert_eq!(stream.clone_dtoh(&maxima)?, [7, 9]);
    /// # Ok(()) }
    /// ```
    pub fn segmented_reduce_into<T: Element>(
        &mut self,
        values: &impl DevicePtr<T>,
        offsets: &impl DevicePtr<u64>,
        op: Op,
        out: &mut impl DevicePtrMut<T>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.enqueue_two_to_one(values, offsets, out, stream, |inner, values, offsets, out, on| {
            let layout = crate::segmented::Layout::of_offsets::<Cuda>(offsets)?;
            inner.enqueue_segmented::<T>(checked_parts::<Cuda, T>(values)?, layout, op, out, None, on)
        })
    }

    /// Enqueues [`Reducer::reduce_rows`] on `stream`, one result per row to
    /// `out`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let ctx = cudarc::driver::CudaContext::new(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    /// let matrix = stream.clone_htod(&[1.0f32, -5.0, 2.0, 7.0, 0.5, 3.0])?; // 2 rows of 3
    /// let mut minima = stream.alloc_zeros::<f32>(2)?;
    /// reducer.reduce_rows_into(&matrix, 2, 3, reduce::Op::Min, &mut minima, &stream)?;
    /// assert_eq!(stream.clone_dtoh(&minima)?, [-5.0, 0.5]);
    /// # Ok(()) }
    /// ```
    pub fn reduce_rows_into<T: Element>(
        &mut self,
        matrix: &impl DevicePtr<T>,
        rows: usize,
        row_len: usize,
        op: Op,
        out: &mut impl DevicePtrMut<T>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.enqueue_one_to_one::<T, T, T>(matrix, out, stream, |inner, matrix, out, on| {
            let layout = crate::segmented::Layout::of_rows(matrix.len(), rows, row_len)?;
            inner.enqueue_segmented::<T>(checked_parts::<Cuda, T>(matrix)?, layout, op, out, None, on)
        })
    }

    /// Runs a blocking call of the inner reducer, with this context current
    /// (after the inputs were settled, which makes their context current).
    fn blocking<R>(&mut self, call: impl FnOnce(&mut crate::Reducer<Cuda>) -> Result<R>) -> Result<R> {
        self.context.bind_to_thread()?;
        call(&mut self.inner)
    }

    /// Runs a blocking call of the inner reducer over `input` into a new
    /// buffer of `len` elements (no more than a buffer's length) on
    /// `input`'s stream, and returns it.
    fn blocking_into<T: Element + DeviceRepr>(
        &mut self,
        input: &impl DevicePtr<T>,
        len: usize,
        call: impl FnOnce(&mut crate::Reducer<Cuda>, &DeviceSlice<T>, (u64, usize)) -> Result<()>,
    ) -> Result<CudaSlice<T>> {
        let stream = input.stream();
        // SAFETY: `call` writes every element (one result per segment or
        // row) before the buffer is returned; on an error it is dropped unread.
        let mut out = unsafe { stream.alloc::<T>(len)? };
        {
            let (address, _write) = out.device_ptr_mut(stream);
            // After the allocation, which is ordered on `stream` (settled waits for it).
            let (input, _read) = settled::<T, T>(input)?;
            self.blocking(|inner| call(inner, &input, (address, len)))?;
        }
        Ok(out)
    }

    /// Enqueues `call` on `stream`, reading `input` (as the kernels' type
    /// `K`) and writing `out` (its address and length): the calls of one
    /// input and one output.
    fn enqueue_one_to_one<T, K: DeviceCopy, O>(
        &mut self,
        input: &impl DevicePtr<T>,
        out: &mut impl DevicePtrMut<O>,
        stream: &Arc<CudaStream>,
        call: impl FnOnce(&mut crate::Reducer<Cuda>, &DeviceSlice<K>, (u64, usize), Option<StreamHandle>) -> Result<()>,
    ) -> Result<()> {
        let on = self.lend(stream)?;
        let (input, read) = read::<T, K>(input, stream);
        let (out, write) = write(out, stream);
        self.enqueue(stream, on, (read, write), |inner, on| call(inner, &input, out, on))
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
            &mut crate::Reducer<Cuda>,
            &DeviceSlice<A>,
            &DeviceSlice<B>,
            (u64, usize),
            Option<StreamHandle>,
        ) -> Result<()>,
    ) -> Result<()> {
        let on = self.lend(stream)?;
        let (a, a_read) = read::<A, A>(a, stream);
        let (b, b_read) = read::<B, B>(b, stream);
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
        enqueue: impl FnOnce(&mut crate::Reducer<Cuda>, Option<StreamHandle>) -> Result<()>,
    ) -> Result<()> {
        // A wait that `device_ptr` could not enqueue (it records the error
        // in the context) would leave the kernel unordered after a write.
        self.context.check_err()?;
        let launched = enqueue(&mut self.inner, Some(on));
        // The buffers are borrowed for this call only.
        self.inner.backend.forget_owned();
        drop(guards);
        if let Err(error) = self.context.check_err() {
            // A use that could not be recorded: nothing would keep cudarc
            // from freeing or writing a buffer before the kernel ran, so
            // wait for it here.
            stream.synchronize()?;
            return Err(error.into());
        }
        launched
    }

    /// Gives `stream` a workspace (its own, or, past [`STREAMS`] streams,
    /// that of the stream used least recently, once that stream's work is
    /// done) and returns its handle, with this context current. Called
    /// before the buffers' pointers are taken, so that a refused stream is
    /// given no waits.
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
                 with later launches; capture through Reducer::scope_unsynchronized instead"
                    .to_string(),
            ));
        }
        let handle = stream.cu_stream();
        match self.streams.iter().position(|s| s.cu_stream() == handle) {
            Some(index) => {
                let held = self.streams.remove(index);
                self.streams.push(held);
            }
            None => {
                if self.streams.len() >= STREAMS {
                    if let Some(oldest) = self.streams.first() {
                        oldest.synchronize()?;
                        self.inner.backend.release(handle_of(oldest));
                        self.streams.remove(0);
                    }
                }
                self.streams.push(Arc::clone(stream));
            }
        }
        Ok(handle_of(stream))
    }
}

impl Drop for Reducer {
    fn drop(&mut self) {
        // Nothing may still use the workspaces and the module when they are
        // freed. A failed wait means the context is broken and its work
        // stopped: nothing is left running either way.
        let _ = self.context.bind_to_thread();
        for stream in &self.streams {
            let _ = stream.synchronize();
        }
        // The inner reducer is dropped next, with the context current.
        let _ = self.context.bind_to_thread();
    }
}

/// `stream`'s handle, for the backend.
fn handle_of(stream: &CudaStream) -> StreamHandle {
    StreamHandle(stream.cu_stream() as cust::sys::CUstream)
}

/// The `len` `T`s at `address` as the operations' slice.
fn view<T: DeviceCopy>(address: u64, len: usize) -> DeviceSlice<T> {
    // SAFETY: a `DeviceSlice` is an address and a length; the operations
    // read it only while the cudarc buffer it came from is borrowed, and
    // `Cuda::submit` checks it is memory of the reducer's context.
    unsafe { DeviceSlice::from_raw_parts(DevicePointer::from_raw(address), len) }
}

/// `buffer` as `K`s (its own type, or the kernels' type of the same bits),
/// read on `stream` (which first waits for its recorded writes), and the
/// guard that records the read when dropped.
fn read<'a, T, K: DeviceCopy>(
    buffer: &'a impl DevicePtr<T>,
    stream: &'a CudaStream,
) -> (DeviceSlice<K>, SyncOnDrop<'a>) {
    const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<K>()) };
    let len = buffer.len();
    let (address, guard) = buffer.device_ptr(stream);
    (view(address, len), guard)
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
fn settled<T, K: DeviceCopy>(buffer: &impl DevicePtr<T>) -> Result<(DeviceSlice<K>, SyncOnDrop<'_>)> {
    let stream = buffer.stream();
    let read = read::<T, K>(buffer, stream);
    stream.synchronize()?;
    Ok(read)
}

/// The address of a one-element output; [`Error::OutputLength`] for other lengths.
fn single(name: &'static str, (address, len): (u64, usize)) -> Result<u64> {
    if len != 1 {
        return Err(Error::OutputLength {
            output: name,
            found: len,
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
fn with_reducer<R>(context: &Arc<CudaContext>, call: impl FnOnce(&mut Reducer) -> Result<R>) -> Result<R> {
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

/// [`crate::reduce()`] of a cudarc buffer, with this thread's reducer for
/// its context.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[3i64, -7, 5])?;
/// assert_eq!(reduce::cudarc::reduce(&buf, reduce::Op::Min)?, -7);
/// # Ok(()) }
/// ```
pub fn reduce<T: Element>(input: &impl DevicePtr<T>, op: Op) -> Result<T> {
    with_reducer(input.stream().context(), |r| r.reduce(input, op))
}

/// [`crate::sum`] of a cudarc buffer (see the [module](self) docs for an example).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[u32::MAX, 2])?;
/// assert_eq!(reduce::cudarc::sum(&buf)?, 1); // integers wrap
/// # Ok(()) }
/// ```
pub fn sum<T: Element>(input: &impl DevicePtr<T>) -> Result<T> {
    reduce(input, Op::Sum)
}

/// [`crate::product`] of a cudarc buffer.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[1.5f32, -2.0, 4.0])?;
/// assert_eq!(reduce::cudarc::product(&buf)?, -12.0);
/// assert_eq!(reduce::cudarc::product(&buf.slice(0..0))?, 1.0); // empty: the identity
/// # Ok(()) }
/// ```
pub fn product<T: Element>(input: &impl DevicePtr<T>) -> Result<T> {
    reduce(input, Op::Product)
}

/// [`crate::max`] of a cudarc buffer.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[1.0f64, f64::NAN, 3.0])?;
/// assert!(reduce::cudarc::max(&buf)?.is_nan()); // any NaN makes the max NaN
/// assert_eq!(reduce::cudarc::max(&buf.slice(2..))?, 3.0);
/// # Ok(()) }
/// ```
pub fn max<T: Element>(input: &impl DevicePtr<T>) -> Result<T> {
    reduce(input, Op::Max)
}

/// [`crate::min`] of a cudarc buffer.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[5i32, -8, 2])?;
/// assert_eq!(reduce::cudarc::min(&buf)?, -8);
/// let empty = reduce::cudarc::min(&buf.slice(3..));
/// assert!(matches!(empty, Err(reduce::Error::Empty { .. })));
/// # Ok(()) }
/// ```
pub fn min<T: Element>(input: &impl DevicePtr<T>) -> Result<T> {
    reduce(input, Op::Min)
}

/// [`crate::dot`] of two cudarc buffers (see [`Reducer::dot`] for an example).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let (a, b) = (stream.clone_htod(&[1.0f32, 2.0, 3.0])?, stream.clone_htod(&[4.0f32, 5.0])?);
/// let mismatch = reduce::cudarc::dot(&a, &b);
/// assert!(matches!(mismatch, Err(reduce::Error::LengthMismatch { left: 3, right: 2 })));
/// assert_eq!(reduce::cudarc::dot(&a.slice(..2), &b)?, 14.0);
/// # Ok(()) }
/// ```
pub fn dot<T: Element>(a: &impl DevicePtr<T>, b: &impl DevicePtr<T>) -> Result<T> {
    with_reducer(a.stream().context(), |r| r.dot(a, b))
}

/// [`crate::reduce_as`] of a cudarc buffer (see [`Reducer::reduce_as`] for an example).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// use reduce::cudarc::half::f16;
/// let buf = stream.clone_htod(&[f16::from_f32(0.5), f16::from_f32(-3.0)])?;
/// assert_eq!(reduce::cudarc::reduce_as::<f32, _>(&buf, reduce::Op::Min)?, -3.0);
/// # Ok(()) }
/// ```
pub fn reduce_as<A: Element, In: CudarcElement>(input: &impl DevicePtr<In>, op: Op) -> Result<A>
where
    In::Kernel: WidensTo<A>,
{
    with_reducer(input.stream().context(), |r| r.reduce_as(input, op))
}

/// [`crate::sum_as`] of a cudarc buffer.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[i32::MAX; 4])?;
/// assert_eq!(reduce::cudarc::sum_as::<i64, _>(&buf)?, 4 * i64::from(i32::MAX)); // no wrap
/// # Ok(()) }
/// ```
pub fn sum_as<A: Element, In: CudarcElement>(input: &impl DevicePtr<In>) -> Result<A>
where
    In::Kernel: WidensTo<A>,
{
    reduce_as(input, Op::Sum)
}

/// [`crate::mean`] of a cudarc buffer (half 2's `f16`/`bf16` too).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[1u32, 2, 3, 4])?;
/// assert_eq!(reduce::cudarc::mean(&buf)?, 2.5);
/// # Ok(()) }
/// ```
pub fn mean<In: CudarcElement>(input: &impl DevicePtr<In>) -> Result<<In::Kernel as MeanInput>::Mean>
where
    In::Kernel: MeanInput,
{
    Ok(sum_as::<<In::Kernel as MeanInput>::Mean, In>(input)?.divide_by_count(input.len()))
}

/// [`crate::norm_l2`] of a cudarc buffer.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[3.0f32, 4.0])?;
/// assert_eq!(reduce::cudarc::norm_l2(&buf)?, 5.0); // sqrt(3² + 4²)
/// # Ok(()) }
/// ```
pub fn norm_l2<T: FloatElement>(input: &impl DevicePtr<T>) -> Result<T> {
    Ok(reduce(input, Op::SumOfSquares)?.sqrt())
}

/// [`crate::argmax`] of a cudarc buffer (see [`Reducer::argmax`] for an example).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[2u64, 7, 7, 1])?;
/// assert_eq!(reduce::cudarc::argmax(&buf)?, (1, 7)); // the first of equal maxima
/// # Ok(()) }
/// ```
pub fn argmax<T: CudarcElement>(input: &impl DevicePtr<T>) -> Result<(u64, T)>
where
    T::Kernel: ArgInput,
{
    with_reducer(input.stream().context(), |r| r.argmax(input))
}

/// [`crate::argmin`] of a cudarc buffer.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let buf = stream.clone_htod(&[2.0f32, -1.0, 5.0])?;
/// assert_eq!(reduce::cudarc::argmin(&buf.slice(1..))?, (0, -1.0)); // index within the view
/// # Ok(()) }
/// ```
pub fn argmin<T: CudarcElement>(input: &impl DevicePtr<T>) -> Result<(u64, T)>
where
    T::Kernel: ArgInput,
{
    with_reducer(input.stream().context(), |r| r.argmin(input))
}

/// [`crate::segmented_reduce`] of cudarc buffers, into a new buffer on the
/// stream of `values` (see [`Reducer`] for an example).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let values = stream.clone_htod(&[4i64, -1, 7])?;
/// let offsets = stream.clone_htod(&[0u64, 2, 3])?;
/// let maxima = reduce::cudarc::segmented_reduce(&values, &offsets, reduce::Op::Max)?;
/// assert_eq!(stream.clone_dtoh(&maxima)?, [4, 7]);
/// # Ok(()) }
/// ```
pub fn segmented_reduce<T: Element + DeviceRepr>(
    values: &impl DevicePtr<T>,
    offsets: &impl DevicePtr<u64>,
    op: Op,
) -> Result<CudaSlice<T>> {
    with_reducer(values.stream().context(), |r| r.segmented_reduce(values, offsets, op))
}

/// [`crate::reduce_rows`] of a cudarc buffer, into a new buffer on its
/// stream (see [`Reducer::reduce_rows`] for an example).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// let stream = cudarc::driver::CudaContext::new(0)?.default_stream();
/// let matrix = stream.clone_htod(&[1u32, 2, 3, 4, 5, 6])?; // 3 rows of 2
/// let sums = reduce::cudarc::reduce_rows(&matrix, 3, 2, reduce::Op::Sum)?;
/// assert_eq!(stream.clone_dtoh(&sums)?, [3, 7, 11]);
/// # Ok(()) }
/// ```
pub fn reduce_rows<T: Element + DeviceRepr>(
    matrix: &impl DevicePtr<T>,
    rows: usize,
    row_len: usize,
    op: Op,
) -> Result<CudaSlice<T>> {
    with_reducer(matrix.stream().context(), |r| r.reduce_rows(matrix, rows, row_len, op))
}
