//! GPU reductions for NVIDIA GPUs with kernels written in Rust.
//!
//! Every reduction is *what* × *where*, in one call:
//! - **what** is a [`Reduction`]: an [`Op`] of `i32`, `u32`, `i64`, `u64`,
//!   `f32` or `f64` (sum, max, min, product, their NaN-ignoring forms, sum
//!   of squares, max-abs), [`Widened`] (an op accumulated in a wider type:
//!   `i8`…`i32` in `i64`, `f16`/`bf16` in `f32`, anything in `f64`),
//!   [`ArgMax`]/[`ArgMin`] (also of `f16`/`bf16`), [`Mean`], the statistics
//!   [`Var`], [`Std`], [`MeanVar`] and [`LogSumExp`], and the counts
//!   [`Count`], [`Any`] and [`All`] of a [`Predicate`]; and any of
//!   argmax/argmin, the mean and the widened reductions with its results
//!   in the caller's type ([`Cast`]: `ArgMax.cast::<u32>()`,
//!   `Mean.cast::<f16>()`) (see [`reduction`] for the table of inputs and
//!   results);
//! - **where** is an [`Over`]: the whole input ([`Over::Whole`]), each
//!   segment given by CSR-style offsets ([`Over::Segments`]), each row of a
//!   matrix ([`Over::Rows`]), or along any axes of a strided N-d view, as
//!   PyTorch's `x.sum(dim=(0, 2))` ([`Over::Axes`], see [`axes`]).
//!
//! The calls:
//! - [`reduce()`]`(&buf, what)` and [`Reducer::reduce`]: the whole input,
//!   the value returned to the host (`T` for an op, `(index, value)` for
//!   argmax, `(mean, variance)` for [`MeanVar`], …);
//! - [`reduce_over`]`(&buf, what, over)` and [`Reducer::reduce_over`]: one
//!   result per segment, row or position of the kept axes, in a new buffer,
//!   with the results' shape ([`axes::Reduced`]);
//! - [`Scope::reduce_into`]`(&buf, what, over, &mut out, &stream)`: either,
//!   enqueued on your stream into your output, without waiting.
//!
//! The shortcuts [`sum`], [`product`], [`max`], [`min`], [`mean`],
//! [`norm_l2`], [`argmax`] and [`argmin`] are `reduce` with one reduction;
//! [`dot`] ([`Reducer::dot`], [`Scope::dot_into`]) sums the products of two
//! buffers; [`reduce_pair`] ([`Reducer::reduce_pair`],
//! [`Scope::reduce_pair_into`]) reduces the pairs of two buffers with a
//! [`PairReduction`]: [`ExactDot`] (the dot product, the same bits on
//! every GPU) or a user operator. A whole-input reduction is a single kernel launch that reads the
//! input once with 16-byte loads; one over segments or rows is one launch;
//! one over axes is one launch per reduced axis left after merging.
//! The tutorial kernels, the
//! rungs of the classic reduction ladder, are in `reduce::ladder` (feature `ladder`). The kernels live in the
//! `kernels-gpu` crate, written in Rust and compiled to PTX by rustc's NVPTX
//! backend; this crate ships them prebuilt, as machine code for every major
//! GPU architecture from Volta to Blackwell and as PTX for the others
//! (compute capability 7.0 or newer), so it builds on stable Rust with no
//! CUDA toolkit and needs only the NVIDIA driver at run time (see
//! [Which kernels run](#which-kernels-run)). The library calls the driver
//! through bindings that load `libcuda` at run time (cudarc's), so what a
//! build needs depends only on the buffers you bring
//! ([Configurations](#configurations)).
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use cust::prelude::*;
//! use reduce::{axes::Strided, ArgMax, Op, Over, Var, Widened};
//! let _ctx = cust::quick_init()?;
//! let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
//! let buf = DeviceBuffer::from_slice(&data)?;
//!
//! // What, over the whole input: the value on the host.
//! let s: f32 = reduce::sum(&buf)?;
//! let m: f32 = reduce::reduce(&buf, Op::Max)?;
//! assert_eq!((s, m), (499_500.0, 999.0));
//! assert_eq!(reduce::reduce(&buf, ArgMax)?, (999, 999.0));
//! assert_eq!(reduce::reduce(&buf, Widened::<f64>::new(Op::Sum))?, 499_500.0);
//!
//! // What, over where: one result per row, segment or kept position, in a new buffer.
//! let rows = reduce::reduce_over(&buf, Op::Sum, Over::Rows { rows: 10, len: 100 })?;
//! assert_eq!(rows.values.as_host_vec()?[0], 4950.0);
//! let offsets = DeviceBuffer::from_slice(&[0u64, 10, 1000])?;
//! let maxima = reduce::reduce_over(&buf, Op::Max, Over::Segments(&offsets))?;
//! assert_eq!(maxima.values.as_host_vec()?, [9.0, 999.0]);
//! let layout = Strided::contiguous(&[10, 100])?;
//! let columns = reduce::reduce_over(&buf, Var::<f32>::new(1.0)?, Over::Axes(&layout, &[0]))?;
//! assert_eq!(columns.shape(true), [1, 100]);
//!
//! // A Reducer keeps its module, stream and workspace: repeated calls allocate nothing.
//! let mut r = reduce::Reducer::new()?;
//! let p: f32 = r.reduce(&buf.index(1..4), Op::Product)?; // any sub-slice
//! assert_eq!(p, 6.0);
//! let best = r.reduce_over(&buf, ArgMax, Over::Rows { rows: 10, len: 100 })?;
//! assert_eq!(best.values.as_host_vec()?, [99; 10]);
//!
//! // Enqueued on your stream, into your buffer, without waiting.
//! let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! let mut row_max = DeviceBuffer::from_slice(&[0.0f32; 10])?;
//! r.scope(|scope| scope.reduce_into(&buf, Op::Max, Over::Rows { rows: 10, len: 100 }, &mut row_max, &stream))?;
//! assert_eq!(row_max.as_host_vec()?[9], 999.0);
//! # Ok(()) }
//! ```
//!
//! Buffers of cudarc (as candle and burn hold them) are reduced by
//! `reduce::cudarc`, with the `cudarc` feature, with the same reductions
//! and places: blocking calls (`reduce`, `reduce_over`), and `reduce_into`,
//! `dot_into` and `reduce_pair_into`, which enqueue into cudarc buffers on cudarc streams,
//! safely, through cudarc's event tracking.
//!
//! Data sharded over several GPUs (of one node or several) is reduced as one
//! array by [`multi`], which combines the per-GPU results through NCCL,
//! loaded at run time.
//!
//! Without a GPU, [`emulated`] runs the same kernels on the CPU under a SIMT
//! emulator that checks barriers, shuffles and every memory access: it is how
//! the kernels are tested in CI, and a way to try the library anywhere. An
//! [`Emulator`](emulated::Emulator) is a [`Reducer`] over the emulator
//! backend ([`Emulated`]): every operation is written once, over either
//! backend, and the emulator takes host slices where a GPU takes device
//! buffers.
//!
//! # Configurations
//! | features | buffers | needs at build time | at run time |
//! |---|---|---|---|
//! | `cust` (the default) | cust's `DeviceBuffer`/`DeviceSlice`: everything on this page | `libcuda.so` for cust's build script, in `$CUDA_LIBRARY_PATH/lib64` or `/usr/local/cuda/lib64` (a toolkit, or a link to the driver's library) | the NVIDIA driver |
//! | `cust`, `cudarc` | both | as above | the NVIDIA driver |
//! | `default-features = false, features = ["cudarc"]` | cudarc's `CudaSlice`/`CudaView`s: the free functions and `reduce::cudarc::Reducer` (every reduction and place) | nothing: stable Rust on any machine, no CUDA, no variables | the NVIDIA driver, loaded when a GPU is first used |
//! | `default-features = false` | none: the emulator only | nothing | nothing |
//!
//! [`Scope`], [`multi`] and `Reducer<Cuda>` are cust's (`Scope` also takes
//! other runtimes' memory by address); cudarc's buffers have
//! `reduce::cudarc::Reducer`, with the same reductions, places and forms.
//! Where the driver library is missing, the GPU calls return
//! [`Error::NoDriver`] (cudarc's own calls panic there: where cudarc opens
//! the library at run time, check `cudarc::driver::sys::is_culib_present()`
//! before making a context).
//!
//! # Buffers
//! | calls | inputs | outputs | what keeps them alive while the GPU works |
//! |---|---|---|---|
//! | the free functions | any [`DeviceInput`]: cust's `DeviceBuffer`/`DeviceSlice`, cudarc's `CudaSlice`/`CudaView`/`CudaViewMut` | new buffers of the input's kind | the call waits |
//! | [`Reducer::reduce`], [`Reducer::reduce_over`] | its backend's slices (cust's `DeviceSlice`; host slices on the emulator) | new buffers of that kind | the call waits |
//! | [`Scope::reduce_into`], [`Scope::dot_into`], [`Scope::reduce_pair_into`] | [`Input`]: `&` a `DeviceBuffer`/`DeviceBox`, part of one ([`Input::get`]), another runtime's memory ([`Input::from_raw`], `unsafe`) | [`Output`]: `&mut` the same, or parts of them | the scope's borrows, until it has waited |
//! | `reduce::cudarc::Reducer`'s (feature `cudarc`) | cudarc's `DevicePtr`: its slices and views | cudarc's `DevicePtrMut`: `&mut` its slices and mutable views | cudarc's event tracking |
//!
//! The two enqueueing forms take their own runtime's buffers because what
//! keeps an enqueued call's buffers alive belongs to that runtime: a borrow
//! held by the scope (which a cust view, not tied to its buffer, cannot
//! give), or cudarc's events (which cust buffers do not have). A trait
//! shared by both would admit buffers one of them cannot keep alive.
//!
//! # Layers
//! `ARCHITECTURE.md` has the map. From the top: the free functions (this
//! page) → [`Reducer`] and [`Scope`], whose calls take a [`Reduction`] and
//! an [`Over`] (`reduction.rs`, `over.rs`) → the operations (checks, kernel
//! choice, launch shape; `reducer.rs`, `segmented.rs`, `axes.rs`,
//! `statistics.rs`, `ladder.rs`) → the launch shapes and the numbers they
//! come from (`shape.rs`, `tuning.rs`) → the backend ([`Cuda`] or
//! [`Emulated`]: workspace, launch by kernel identity, read-back;
//! `backend/`) → the kernel ABI (`kernels_gpu::abi`, from the kernel crate:
//! identities, names, argument structs). Only the top two are public.
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
//!   start from `+0.0`, so a sum of only `-0.0` terms is `+0.0`. A NaN
//!   result's bits are unspecified: the GPU's arithmetic gives its
//!   canonical NaN, but a result that is one element passed through (a
//!   product of one element, say) may keep that element's NaN, and which
//!   happens can depend on the output's alignment.
//! - **NaN-ignoring ops and norms** (`NanSum`, `NanMax`, `NanMin`,
//!   `SumOfSquares`, `MaxAbs`, [`norm_l2`]): see the table in [`Op`].
//! - **Integers**: `sum` and `product` wrap on overflow (two's complement, as
//!   `wrapping_add`/`wrapping_mul`); `max`/`min` are exact at the bounds.
//! - **Determinism**: the same input at the same address on the same device
//!   gives the bitwise same result on every run: the launch shape depends only
//!   on the length, element size and device, and partial results are combined
//!   in a fixed order (no atomics decide it). The same values at a different
//!   alignment may round differently. The exact reductions ([`ExactSum`],
//!   [`ExactNanSum`], [`ExactMean`], [`ExactSumOfSquares`], [`ExactDot`],
//!   [`ExactVar`], [`ExactStd`], [`ExactMeanVar`], [`ExactLogSumExp`]) give
//!   the same bits on every GPU, launch, alignment, order and batch, and
//!   their `fold`s the same on the CPU (the variance family and logsumexp:
//!   two launches); sharded over several GPUs (`reduce::multi`; `ExactDot`
//!   through `reduce_pair`) too, whatever the cuts.
//! - **Sizes**: any length, including more than 2³² elements, and any
//!   sub-slice (`buf.index(3..)`); nothing outside the slice is read.
//! - Each result over segments, rows or axes follows the rules of a
//!   whole-input reduction of the same elements, but for empty parts
//!   (below). The other reductions' rules are on each one ([`ArgMax`],
//!   [`Widened`], [`Var`], …) and in [`statistics`].
//!
//! # Segments, rows and axes
//! See [`Over`] for the places and [`axes`] for axes and strided views.
//! - **Offsets** of [`Over::Segments`]: `segments + 1` offsets as `u64` (as
//!   CUB's and CSR's `offsets`): segment `s` is
//!   `input[offsets[s]..offsets[s + 1]]`. Offsets must not decrease and must
//!   not exceed the input's length; segments may be empty, and need not
//!   cover the input (elements before the first offset and after the last
//!   are not read). For `i64` offsets, the bits of non-negative `i64`s are
//!   those of the same `u64`s.
//! - **Invalid offsets**: the blocking calls ([`reduce_over`],
//!   [`Reducer::reduce_over`]) return [`Error::InvalidSegments`] naming the
//!   first bad segment. [`Scope::reduce_into`], which does not wait for the
//!   GPU, cannot report them: it clamps every offset into `[0, len]` (a
//!   segment whose end is before its begin is empty), so nothing outside
//!   the input is read, and leaves the clamped results.
//! - **Rows** ([`Over::Rows`]): `rows × len` must be the input's length
//!   ([`Error::InvalidSegments`] otherwise).
//! - **Empty parts** follow one rule ([`Over`]'s docs): along an empty
//!   *dimension* (a whole input, rows or an axis of length 0, known from
//!   the call) `Max`/`Min` and their forms, widened or not, and
//!   argmax/argmin are [`Error::Empty`], as PyTorch's `amax`; the
//!   reductions with a value for no elements give it. An empty *segment*
//!   gives the operator's identity, as in CUB: 0 for sums, 1 for products,
//!   and for `Max`/`MaxAbs` the type's lowest value (`-inf` for floats,
//!   `MIN` for integers), for `Min` its highest (`+inf`, `MAX`);
//!   `NanMax`/`NanMin` of floats give NaN, as for a segment of only NaNs
//!   (of integers, `MIN`/`MAX`); the statistics give their value for no
//!   elements. Unlike [`max`] of an empty input, this is not an error: one
//!   empty segment (data on the device) must not fail the others; check
//!   the segment's length where an empty maximum matters.
//! - **Unsupported pairs**: [`Widened`], [`Mean`] and
//!   [`ArgMax`]/[`ArgMin`] over segments are [`Error::UnsupportedOver`];
//!   [`ArgMax`]/[`ArgMin`] over axes take exactly one axis
//!   ([`Error::InvalidAxes`] otherwise).
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
//! `f32`s), one per schedule and type for the calls over segments and rows,
//! one per type for the calls over axes (`axis_f32`), and one per type for
//! the ladder. A [`Reducer`] loads a module the first time it
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
//! enqueue their kernels and nothing else, so they can be captured in a
//! CUDA graph (`examples/graph_replay.rs`; see [`Scope`] for the scratch of
//! axis and statistics calls).

#![warn(missing_docs)]
// The docs are written for the default configuration (docs.rs builds it);
// without `cust`, their links to `Scope`, `multi` and cust's types name
// items that are not built, and render as plain text.
#![cfg_attr(not(feature = "cust"), allow(rustdoc::broken_intra_doc_links))]
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

pub mod axes;
mod backend;
mod blocking;
#[cfg(feature = "cudarc")]
pub mod cudarc;
pub mod element;
pub mod emulated;
pub mod error;
mod free;
mod input;
#[cfg(feature = "ladder")]
pub mod ladder;
#[cfg(feature = "cust")]
pub mod multi;
mod op;
mod over;
mod placement;
mod policy;
mod reducer;
pub mod reduction;
#[cfg(feature = "cust")]
pub mod scope;
mod segmented;
#[doc(hidden)]
pub mod shape;
pub mod statistics;
mod tuning;
pub mod user;

#[cfg(feature = "cust")]
pub use backend::Cuda;
pub use backend::{Backend, Emulated};
pub use element::{ArgInput, CastTo, DeviceValue, Element, ElementType, FloatElement, MeanInput, WidensTo};
pub use error::{Error, Result};
pub use free::{argmax, argmin, dot, max, mean, min, norm_l2, product, reduce, reduce_over, reduce_pair, sum};
/// The `half` crate, in the version whose `f16`/`bf16` the kernels take
/// (and `cust` copies to the GPU).
pub use half;
pub use input::DeviceInput;
pub use op::Op;
pub use over::Over;
#[doc(hidden)]
pub use policy::Policy;
pub use reducer::Reducer;
pub use reduction::{
    All, Any, ArgMax, ArgMin, Cast, Count, ExactDot, ExactLogSumExp, ExactMean, ExactMeanVar, ExactNanSum, ExactStd,
    ExactSum, ExactSumOfSquares, ExactVar, LogSumExp, Mean, MeanVar, PairReduction, Reduction, Std, Var, Widened,
};
#[cfg(feature = "cust")]
pub use scope::{Input, Output, Scope, ScopeStream};
#[doc(hidden)]
pub use shape::{LaunchShape, SegmentedShape};
pub use statistics::Predicate;
pub use user::User;

/// The common imports: `use reduce::prelude::*;`.
pub mod prelude {
    pub use crate::{Element, Error, Op, Over, Reducer, Reduction};
}
