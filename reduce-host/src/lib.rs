//! GPU reductions for NVIDIA GPUs with kernels written in Rust.
//!
//! `reduce` folds a [`cust`] device buffer into one value — sum, max, min,
//! product, their NaN-ignoring forms, sum of squares ([`norm_l2`]) or max-abs
//! of `i32`, `u32`, `i64`, `u64`, `f32` or `f64` (see [`Op`]) — in a single kernel
//! launch that reads the input once with 16-byte loads; [`dot`] does the same
//! for the products of two buffers; [`argmax`] and [`argmin`] return the
//! index and value of the extreme element (also of `f16`/`bf16`), in one
//! pass. [`sum_as`], [`reduce_as`] and [`mean`]
//! accumulate in a wider type (`i8`…`i32` in `i64`, `f16`/`bf16` in `f32`,
//! anything in `f64`), converting each element as it is read.
//! [`segmented_reduce`] and [`reduce_rows`] give one result per segment of an
//! input or per row of a matrix ([`segmented`]); [`reduce_axes`] reduces any
//! axes of a strided N-d view, as PyTorch's `x.sum(dim=(0, 2))` ([`axes`]),
//! also widened ([`reduce_as_axes`]), with [`argmax_axis`]/[`argmin_axis`]
//! along one axis. [`statistics`] has the variance, standard deviation,
//! logsumexp and counts (`any`, `all`) of whole inputs, along axes and per
//! segment.
//! The tutorial kernels, the
//! rungs of the classic reduction ladder, are in [`ladder`]. The kernels live in the
//! `kernels-gpu` crate, written in Rust and compiled to PTX by rustc's NVPTX
//! backend; this crate ships them prebuilt, as machine code for every major
//! GPU architecture from Volta to Blackwell and as PTX for the others
//! (compute capability 7.0 or newer), so it builds on stable Rust with no
//! CUDA toolkit and needs only the NVIDIA driver at run time (see
//! [Which kernels run](#which-kernels-run)).
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use cust::prelude::*;
//! let _ctx = cust::quick_init()?;
//! let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
//! let buf = DeviceBuffer::from_slice(&data)?;
//!
//! let s: f32 = reduce::sum(&buf)?;
//! let m: f32 = reduce::reduce(&buf, reduce::Op::Max)?;
//! assert_eq!((s, m), (499_500.0, 999.0));
//!
//! // A Reducer keeps its module, stream and workspace: repeated calls allocate nothing.
//! let mut r = reduce::Reducer::new()?;
//! let p: f32 = r.reduce(&buf.index(1..4), reduce::Op::Product)?; // any sub-slice
//! assert_eq!(p, 6.0);
//! # Ok(()) }
//! ```
//!
//! Buffers of cudarc (as candle and burn hold them) are reduced by
//! `reduce::cudarc`, with the `cudarc` feature: blocking calls, and `_into`
//! calls that enqueue into cudarc buffers on cudarc streams, safely, through
//! cudarc's event tracking.
//!
//! Data sharded over several GPUs (of one node or several) is reduced as one
//! array by [`multi`], which combines the per-GPU results through NCCL,
//! loaded at run time.
//!
//! Without a GPU, [`emulated`] runs the same kernels on the CPU under a SIMT
//! emulator that checks barriers, shuffles and every memory access: it is how
//! the kernels are tested in CI, and a way to try the library anywhere. An
//! [`Emulator`](emulated::Emulator) is a [`Reducer`] over the emulator
//! [`backend`]: every operation is written once, over either backend.
//!
//! # Layers
//! `ARCHITECTURE.md` has the map. From the top: the free functions (this
//! page) → [`Reducer`] (the operations: checks, kernel choice, launch shape;
//! `reducer.rs`, `segmented.rs`, `axes.rs`, `ladder.rs`) → [`shape`] and [`tuning`] (the
//! launch shapes and the numbers they come from) → [`backend`] (`Cuda` or
//! `Emulated`: workspace, launch by kernel identity, read-back) → the kernel
//! ABI ([`abi`], from the kernel crate: identities, names, argument structs).
//!
//! # Semantics
//! - **Empty input**: `sum` is 0, `product` is 1, `max`/`min` return
//!   [`Error::Empty`] (never a sentinel that looks like data).
//! - **Floats**: `max`/`min` return NaN if any element is NaN, wherever it is;
//!   `±inf` are ordinary values (the `min` of all `+inf` is `+inf`). `sum` and
//!   `product` follow IEEE 754 (`inf + -inf` is NaN); they are computed in the
//!   element type, in a tree order, so they differ from a sequential loop by
//!   rounding (at most about `n·ε·Σ|x|`). Signed zeros compare equal in
//!   `max`/`min`; which of `-0.0`/`+0.0` is returned is unspecified. Sums
//!   start from `+0.0`, so a sum of only `-0.0` terms is `+0.0`.
//! - **NaN-ignoring ops and norms** (`NanSum`, `NanMax`, `NanMin`,
//!   `SumOfSquares`, `MaxAbs`, [`norm_l2`]): see the table in [`Op`].
//! - **Integers**: `sum` and `product` wrap on overflow (two's complement, as
//!   `wrapping_add`/`wrapping_mul`); `max`/`min` are exact at the bounds.
//! - **Determinism**: the same input at the same address on the same device
//!   gives the bitwise same result on every run: the launch shape depends only
//!   on the length, element size and device, and partial results are combined
//!   in a fixed order (no atomics decide it). The same values at a different
//!   alignment may round differently.
//! - **Sizes**: any length, including more than 2³² elements, and any
//!   sub-slice (`buf.index(3..)`); nothing outside the slice is read.
//!
//! # Errors
//! Every fallible call returns [`Result`]; nothing panics on user input. CUDA
//! errors (including those of earlier asynchronous work) come back as
//! [`Error::Cuda`].
//!
//! # Safety: the `unsafe` calls, and why
//! Every other public function is safe: no safe call can make the GPU touch
//! memory that Rust may free or reuse meanwhile. A [`Scope`] borrows its
//! inputs, outputs and streams until [`Reducer::scope`] has waited for every
//! stream it launched on (also on error or panic), an output that overlaps
//! another buffer of the call is [`Error::Aliasing`], and a buffer of another
//! context, or freed, is [`Error::ForeignBuffer`]. These calls hand part of that
//! duty to you, each with a `# Safety` section:
//! - [`Reducer::scope_unsynchronized`]: a scope that does not wait when it
//!   ends, for work the host must not wait on (capturing a CUDA graph and
//!   replaying it, `examples/graph_replay.rs`). You keep every buffer and
//!   stream alive, and unwritten by others, until the work and every replay
//!   have completed.
//! - [`Input::from_view`] and [`Output::from_view`]: a `cust` view
//!   (`buffer.index(1..)`) does not borrow its buffer in cust 0.3, so
//!   borrowing the view proves nothing. You promise the buffer outlives the
//!   scope (and, for an output, that nothing else reads or writes it there).
//!   [`Input::get`] and [`Output::get`] give parts of a borrowed buffer safely.
//! - [`Input::from_raw`], [`Output::from_raw`] and [`ScopeStream::from_raw`]:
//!   the entry for memory and streams of any other runtime, by address and
//!   handle. You promise what a borrow would: alive and untouched by others
//!   until the scope's borrows end.
//!
//! The `_into` calls of `reduce::cudarc` (feature `cudarc`) are safe the way
//! cudarc's own asynchronous copies are: each takes cudarc's read or write
//! guard of every buffer before the launch and drops it after, so the launch
//! waits for the buffers' earlier writes and cudarc's later frees and writes
//! wait for the launch (its event tracking; turning that off is `unsafe` in
//! cudarc).
//!
//! # Which kernels run
//! The kernels come in modules, one per input type for the whole-input calls
//! (`whole_f32`: every operator, argmax/argmin, dot and widened sums of
//! `f32`s), one per schedule and type for the segmented calls, one per type
//! for the axis calls (`axis_f32`), and one per type for the ladder. A [`Reducer`] loads a module the first time it
//! launches one of its kernels, so a program that only sums `f32`s never
//! loads the other 280-odd kernels. Each module ships as machine code
//! (cubin, assembled by `ptxas` from the same PTX) for sm_70, sm_80, sm_90,
//! sm_100 and sm_120, which runs on every GPU of that major version from that
//! minor version up (sm_80 code on 8.0, 8.6 and 8.9), and as PTX for sm_70
//! and sm_90, which the driver compiles for any other GPU when the module is
//! loaded (and caches on disk); machine code that does not load (a driver
//! older than CUDA 12.9's assembler) falls back to the PTX.
//!
//! Setting `REDUCE_PTX_ARCH=sm_70` (or `sm_90`) loads that PTX even where
//! machine code exists: how the older GPUs' code path, and the driver's
//! compilation, are tested on a newer GPU. Building with the feature
//! `build-kernels` compiles the PTX from `kernels-gpu` instead of using the
//! shipped images (it needs the nightly toolchain pinned in the
//! repository's `rust-toolchain.toml`, with `rust-src`); that is for people
//! changing the kernels, who regenerate the shipped images with
//! `scripts/build_kernels.sh`.
//!
//! # Free functions and threads
//! The free functions use a [`Reducer`] cached per thread for the context that
//! is current on that thread, created on first use (loading no kernel until
//! one is launched) and made anew when another context is current, or when its context was
//! destroyed (even if a new context got the old one's handle: the reducer
//! recognises its context by the unique id the driver gives its own
//! allocation). They block until the result is on the host. For async work
//! on your own streams, use a [`Scope`] ([`Reducer::scope`]): its calls
//! enqueue one kernel and nothing else, so they can be captured in a CUDA
//! graph (`examples/graph_replay.rs`).

#![warn(missing_docs)]
// Nothing reachable from the public API may panic, or let a number wrap
// silently: errors are `Result`s.
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented,
        clippy::arithmetic_side_effects
    )
)]

/// The kernel ABI: kernel identities and names, argument structs, tiling
/// constants (the kernel crate's `abi` module).
pub use kernels_gpu::abi;
pub mod axes;
pub mod backend;
#[cfg(feature = "cudarc")]
pub mod cudarc;
pub mod element;
pub mod emulated;
pub mod error;
pub mod ladder;
pub mod multi;
pub mod policy;
pub mod reducer;
pub mod scope;
pub mod segmented;
pub mod shape;
pub mod statistics;
pub mod tuning;

/// The reduction operators (the kernel ABI's [`abi::Op`]).
pub mod op {
    pub use crate::abi::Op;
}

pub use backend::{Backend, Cuda, Emulated};
pub use element::{ArgInput, Element, ElementType, FloatElement, MeanInput, WidensTo};
pub use error::{Error, Result};
/// The `half` crate, in the version whose `f16`/`bf16` `cust` can copy to the GPU.
pub use half;
pub use op::Op;
pub use policy::Policy;
pub use reducer::Reducer;
pub use scope::{Input, Output, Scope, ScopeStream};
pub use shape::{LaunchShape, SegmentedShape};

use cust::memory::{DeviceBuffer, DeviceSlice};
use std::cell::RefCell;

/// The common imports: `use reduce::prelude::*;`.
pub mod prelude {
    pub use crate::{Element, Error, Op, Reducer};
}

thread_local! {
    /// This thread's reducer, for the context that was current when it was made.
    static THREAD_REDUCER: RefCell<ThreadReducer> = const { RefCell::new(ThreadReducer(None)) };
}

/// The free functions' reducer of one thread.
struct ThreadReducer(Option<Reducer>);

impl ThreadReducer {
    /// Lets go of the reducer: drops it if its context is alive; forgets it
    /// (leaking a few host allocations) if the context is gone, since its
    /// driver handles then name nothing, or another context's objects.
    fn release(&mut self) {
        if let Some(reducer) = self.0.take() {
            if !reducer.backend.is_alive() {
                std::mem::forget(reducer);
            }
        }
    }
}

impl Drop for ThreadReducer {
    fn drop(&mut self) {
        self.release();
    }
}

/// Runs `f` with this thread's reducer for the current context, made anew
/// when the context is another one, or a new one that got a destroyed
/// context's handle.
fn with_thread_reducer<R>(f: impl FnOnce(&mut Reducer) -> Result<R>) -> Result<R> {
    let context = backend::current_context()?;
    THREAD_REDUCER.with(|cell| {
        let mut cached = cell.borrow_mut();
        if !cached.0.as_ref().is_some_and(|r| r.backend.is_alive_in(context)) {
            // Let go of the old reducer (and its module) before loading a new one.
            cached.release();
            cached.0 = Some(Reducer::new()?);
        }
        match cached.0.as_mut() {
            Some(reducer) => f(reducer),
            None => Err(Error::NoContext),
        }
    })
}

/// Reduces `input` with `op` (see the crate docs for the rules).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3i64, -7, 5])?;
/// assert_eq!(reduce::reduce(&buf, reduce::Op::Min)?, -7);
/// # Ok(()) }
/// ```
pub fn reduce<T: Element>(input: &DeviceSlice<T>, op: Op) -> Result<T> {
    with_thread_reducer(|r| r.reduce(input, op))
}

/// The sum of `input`: 0 if empty; integers wrap; floats follow IEEE 754.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[1.5f32, 2.5, -4.0, 10.0])?;
/// assert_eq!(reduce::sum(&buf)?, 10.0);
/// let empty = DeviceBuffer::<u64>::from_slice(&[])?;
/// assert_eq!(reduce::sum(&empty)?, 0);
/// # Ok(()) }
/// ```
pub fn sum<T: Element>(input: &DeviceSlice<T>) -> Result<T> {
    reduce(input, Op::Sum)
}

/// The product of `input`: 1 if empty; integers wrap; floats follow IEEE 754.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let floats = DeviceBuffer::from_slice(&[1.5f32, 2.0, -4.0])?;
/// assert_eq!(reduce::product(&floats)?, -12.0);
/// let ints = DeviceBuffer::from_slice(&[i32::MAX, 2])?;
/// assert_eq!(reduce::product(&ints)?, -2); // wraps, as i32::MAX.wrapping_mul(2)
/// # Ok(()) }
/// ```
pub fn product<T: Element>(input: &DeviceSlice<T>) -> Result<T> {
    reduce(input, Op::Product)
}

/// The dot product `Σ a[i]·b[i]` (see [`Reducer::dot`]):
/// [`Error::LengthMismatch`] if the lengths differ; 0 if both are empty.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let a = DeviceBuffer::from_slice(&[1i64, 2, 3])?;
/// let b = DeviceBuffer::from_slice(&[4i64, 5, 6])?;
/// assert_eq!(reduce::dot(&a, &b)?, 32);
/// let short = DeviceBuffer::from_slice(&[1i64])?;
/// assert!(matches!(reduce::dot(&a, &short), Err(reduce::Error::LengthMismatch { left: 3, right: 1 })));
/// # Ok(()) }
/// ```
pub fn dot<T: Element>(a: &DeviceSlice<T>, b: &DeviceSlice<T>) -> Result<T> {
    with_thread_reducer(|r| r.dot(a, b))
}

/// The largest element of `input`: [`Error::Empty`] if empty; NaN if any element is NaN.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3.0f32, -8.0, 7.5])?;
/// assert_eq!(reduce::max(&buf)?, 7.5);
/// let with_nan = DeviceBuffer::from_slice(&[1.0f32, f32::NAN, 2.0])?;
/// assert!(reduce::max(&with_nan)?.is_nan());
/// let empty = DeviceBuffer::<i32>::from_slice(&[])?;
/// assert!(matches!(reduce::max(&empty), Err(reduce::Error::Empty { .. })));
/// # Ok(()) }
/// ```
pub fn max<T: Element>(input: &DeviceSlice<T>) -> Result<T> {
    reduce(input, Op::Max)
}

/// The smallest element of `input`: [`Error::Empty`] if empty; NaN if any element is NaN.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3i32, -8, 7])?;
/// assert_eq!(reduce::min(&buf)?, -8);
/// let inf = DeviceBuffer::from_slice(&[f64::INFINITY; 3])?;
/// assert_eq!(reduce::min(&inf)?, f64::INFINITY); // ±inf are ordinary values
/// # Ok(()) }
/// ```
pub fn min<T: Element>(input: &DeviceSlice<T>) -> Result<T> {
    reduce(input, Op::Min)
}

/// The sum of `input` accumulated in the wider type `A`, each element
/// converted as it is read (see [`WidensTo`] for the pairs): `i32`/`i16`/`i8`
/// into `i64`, unsigned into `u64`, integers and floats into `f64`, the
/// half-precision types into `f32`. Empty: 0. Integer sums wrap in `A`.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let big = DeviceBuffer::from_slice(&[i32::MAX; 4])?;
/// assert_eq!(reduce::sum_as::<i64>(&big)?, 4 * i32::MAX as i64); // no wrap in i64
/// let ones = DeviceBuffer::from_slice(&[reduce::half::f16::ONE; 70_000])?;
/// assert_eq!(reduce::sum_as::<f32>(&ones)?, 70_000.0); // f16 itself stops at 2048
/// # Ok(()) }
/// ```
pub fn sum_as<A: Element>(input: &DeviceSlice<impl WidensTo<A>>) -> Result<A> {
    reduce_as(input, Op::Sum)
}

/// Reduces `input` with `op` in the wider type `A` (see [`WidensTo`] for the
/// pairs and their ops; [`Error::UnsupportedWidening`] for others). `Max` and
/// `Min` of the half-precision types follow the float rules of the crate
/// docs (NaN anywhere gives NaN; empty is [`Error::Empty`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// use reduce::{half::f16, Op};
/// let halves = DeviceBuffer::from_slice(&[f16::from_f32(0.5), f16::from_f32(-3.0)])?;
/// assert_eq!(reduce::reduce_as::<f32>(&halves, Op::Min)?, -3.0);
/// let ints = DeviceBuffer::from_slice(&[i32::MAX, i32::MAX])?;
/// assert_eq!(reduce::reduce_as::<i64>(&ints, Op::Sum)?, 2 * i32::MAX as i64);
/// // Widened integers only sum: their max is that of the input type itself.
/// assert!(matches!(reduce::reduce_as::<i64>(&ints, Op::Max), Err(reduce::Error::UnsupportedWidening { .. })));
/// # Ok(()) }
/// ```
pub fn reduce_as<A: Element>(input: &DeviceSlice<impl WidensTo<A>>, op: Op) -> Result<A> {
    with_thread_reducer(|r| r.reduce_as(input, op))
}

/// The arithmetic mean of `input`: its sum in [`MeanInput::Mean`] (`f64` for
/// integers, `f32` and `f64`; `f32` for `f16`/`bf16`), divided by the length.
/// NaN for an empty input (as NumPy and PyTorch), and if any element is NaN.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?;
/// assert_eq!(reduce::mean(&buf)?, 2.5);
/// # Ok(()) }
/// ```
pub fn mean<In: MeanInput>(input: &DeviceSlice<In>) -> Result<In::Mean> {
    Ok(sum_as::<In::Mean>(input)?.divide_by_count(input.len()))
}

/// The index and value of the largest element of `input`, in one pass: ties
/// give the first index, a NaN anywhere gives the first NaN's; [`Error::Empty`] if
/// empty (see [`Reducer::argmax`]). Any [`ArgInput`]: the element types and
/// the half floats.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3i32, 9, -1, 9])?;
/// assert_eq!(reduce::argmax(&buf)?, (1, 9)); // the first of the tied maxima
/// let with_nan = DeviceBuffer::from_slice(&[1.0f32, f32::NAN, 5.0])?;
/// assert!(matches!(reduce::argmax(&with_nan)?, (1, v) if v.is_nan()));
/// # Ok(()) }
/// ```
pub fn argmax<T: ArgInput>(input: &DeviceSlice<T>) -> Result<(u64, T)> {
    with_thread_reducer(|r| r.argmax(input))
}

/// The index and value of the smallest element of `input` (as [`argmax`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[4.0f64, -2.0, 7.0, -2.0])?;
/// assert_eq!(reduce::argmin(&buf)?, (1, -2.0));
/// # Ok(()) }
/// ```
pub fn argmin<T: ArgInput>(input: &DeviceSlice<T>) -> Result<(u64, T)> {
    with_thread_reducer(|r| r.argmin(input))
}

/// One result of `op` per segment of `values`, segment `s` being
/// `values[offsets[s]..offsets[s + 1]]`, in a new buffer (see
/// [`segmented`] for the rules: empty segments give the identity; offsets
/// that decrease or pass the end are [`Error::InvalidSegments`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let values = DeviceBuffer::from_slice(&[4u32, 1, 7, 3, 9])?;
/// let offsets = DeviceBuffer::from_slice(&[0u64, 3, 5])?;
/// assert_eq!(reduce::segmented_reduce(&values, &offsets, reduce::Op::Min)?.as_host_vec()?, [1, 3]);
/// # Ok(()) }
/// ```
pub fn segmented_reduce<T: Element>(
    values: &DeviceSlice<T>,
    offsets: &DeviceSlice<u64>,
    op: Op,
) -> Result<DeviceBuffer<T>> {
    with_thread_reducer(|r| r.segmented_reduce(values, offsets, op))
}

/// One result of `op` per row of the row-major `rows × row_len` matrix
/// `matrix`, in a new buffer ([`Error::InvalidSegments`] if the shape does
/// not match `matrix.len()`; see [`segmented`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let matrix = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// assert_eq!(reduce::reduce_rows(&matrix, 3, 2, reduce::Op::Sum)?.as_host_vec()?, [3.0, 7.0, 11.0]);
/// # Ok(()) }
/// ```
pub fn reduce_rows<T: Element>(
    matrix: &DeviceSlice<T>,
    rows: usize,
    row_len: usize,
    op: Op,
) -> Result<DeviceBuffer<T>> {
    with_thread_reducer(|r| r.reduce_rows(matrix, rows, row_len, op))
}

/// Reduces the `axes` of the view `layout` of `input` with `op` (PyTorch's
/// `x.sum(dim=axes)`, `x.amax(dim=axes)`, ...): one result per position of
/// the other axes, in a new buffer, with their shape; see [`axes`] for the
/// rules.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::{axes::Strided, Op};
/// let _ctx = cust::quick_init()?;
/// let x = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?; // 2 × 3
/// let column_max = reduce::reduce_axes(&x, &Strided::contiguous(&[2, 3])?, &[0], Op::Max)?;
/// assert_eq!(column_max.values.as_host_vec()?, [4.0, 5.0, 6.0]);
/// assert_eq!(column_max.shape(true), [1, 3]);
/// # Ok(()) }
/// ```
pub fn reduce_axes<T: Element>(
    input: &DeviceSlice<T>,
    layout: &axes::Strided,
    axes: &[isize],
    op: Op,
) -> Result<axes::Reduced<DeviceBuffer<T>>> {
    with_thread_reducer(|r| r.reduce_axes(input, layout, axes, op))
}

/// Reduces the `axes` of the view `layout` of `input` with `op` in the
/// wider type `A` ([`Reducer::reduce_as_axes`]; PyTorch's `x.sum(dim=axes,
/// dtype=torch.int64)`).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::{axes::Strided, Op};
/// let _ctx = cust::quick_init()?;
/// let x = DeviceBuffer::from_slice(&[250u8, 10, 250, 20])?; // 2 × 2
/// let columns = reduce::reduce_as_axes::<u64>(&x, &Strided::contiguous(&[2, 2])?, &[0], Op::Sum)?;
/// assert_eq!(columns.values.as_host_vec()?, [500, 30]);
/// # Ok(()) }
/// ```
pub fn reduce_as_axes<A: Element>(
    input: &DeviceSlice<impl WidensTo<A>>,
    layout: &axes::Strided,
    axes: &[isize],
    op: Op,
) -> Result<axes::Reduced<DeviceBuffer<A>>> {
    with_thread_reducer(|r| r.reduce_as_axes(input, layout, axes, op))
}

/// The position along `axis` of the largest element, per position of the
/// other axes ([`Reducer::argmax_axis`]; PyTorch's `x.argmax(dim=axis)`).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::axes::Strided;
/// let _ctx = cust::quick_init()?;
/// let x = DeviceBuffer::from_slice(&[1.0f32, 5.0, 4.0, 2.0])?; // 2 × 2
/// let layout = Strided::contiguous(&[2, 2])?;
/// assert_eq!(reduce::argmax_axis(&x, &layout, 0)?.values.as_host_vec()?, [1, 0]);
/// assert_eq!(reduce::argmin_axis(&x, &layout, 1)?.values.as_host_vec()?, [0, 1]);
/// # Ok(()) }
/// ```
pub fn argmax_axis<T: ArgInput>(
    input: &DeviceSlice<T>,
    layout: &axes::Strided,
    axis: isize,
) -> Result<axes::Reduced<DeviceBuffer<u64>>> {
    with_thread_reducer(|r| r.argmax_axis(input, layout, axis))
}

/// The position along `axis` of the smallest element, per position of the
/// other axes ([`Reducer::argmin_axis`]).
pub fn argmin_axis<T: ArgInput>(
    input: &DeviceSlice<T>,
    layout: &axes::Strided,
    axis: isize,
) -> Result<axes::Reduced<DeviceBuffer<u64>>> {
    with_thread_reducer(|r| r.argmin_axis(input, layout, axis))
}

/// The Euclidean (L2) norm `√Σx²` of a float input: 0 if empty, NaN if any
/// element is NaN. The square root of [`Op::SumOfSquares`], computed without
/// scaling, so it is `inf` once `Σx²` exceeds the type's range (above about
/// `1.8e19` for `f32`).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3.0f32, -4.0])?;
/// assert_eq!(reduce::norm_l2(&buf)?, 5.0);
/// assert_eq!(reduce::reduce(&buf, reduce::Op::MaxAbs)?, 4.0);
/// # Ok(()) }
/// ```
pub fn norm_l2<T: FloatElement>(input: &DeviceSlice<T>) -> Result<T> {
    Ok(reduce(input, Op::SumOfSquares)?.sqrt())
}
