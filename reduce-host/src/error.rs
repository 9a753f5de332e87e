//! The error type of every fallible call.

use cust::error::CudaError;
use kernels_gpu::abi::Op;

/// Everything that can go wrong in a reduction.
///
/// The enum is `#[non_exhaustive]`: a `match` on it needs a wildcard arm.
///
/// ```
/// use reduce::{emulated::Emulator, Error, Op};
/// match Emulator::default().reduce::<f32, _>(&[], Op::Max) {
///     Err(Error::Empty { op }) => assert_eq!(op, Op::Max), // no element to return
///     Err(other) => panic!("another error: {other}"),
///     Ok(value) => panic!("a maximum of nothing: {value}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `max`/`min` of an empty input: there is no element to return.
    #[error("{op} of an empty input has no value; check for emptiness first (sum and product of an empty input are 0 and 1)")]
    Empty {
        /// The operator that was asked for.
        op: Op,
    },
    /// No CUDA context is current on the calling thread.
    #[error("no CUDA context is current on this thread; create one first, e.g. `let _ctx = cust::quick_init()?;`")]
    NoContext,
    /// The GPU is older than the oldest architecture the kernels are built for.
    #[error("compute capability {major}.{minor} is not supported: the kernels need 7.0 (Volta) or newer")]
    UnsupportedDevice {
        /// Major compute capability of the current device.
        major: u32,
        /// Minor compute capability of the current device.
        minor: u32,
    },
    /// The input does not start at a multiple of its element size (possible
    /// only with a slice made by `DeviceSlice::from_raw_parts`); the kernels
    /// would fault on it.
    #[error("input starts at {address:#x}, which is not a multiple of its element size {align}")]
    MisalignedInput {
        /// The input's device address.
        address: u64,
        /// The element size it must be a multiple of.
        align: usize,
    },
    /// Two inputs that must have the same length (a dot product) do not.
    #[error("the two inputs differ in length ({left} and {right} elements); a dot product needs equal lengths")]
    LengthMismatch {
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// A ladder kernel (a `reduce::ladder` rung
    /// or a ladder dot kernel) was asked for an element type other than
    /// `i32` or `f32`, or a rung for an operator other than sum, max, min
    /// and product.
    #[error(
        "there is no {kernel} for {element:?}: the ladder's kernels implement sum, max, min and product of i32 and f32 only; use the production kernels (reduce::reduce, reduce::dot)"
    )]
    UnsupportedStrategy {
        /// The kernel that was asked for.
        kernel: String,
        /// The element type that was asked for.
        element: crate::element::ElementType,
    },
    /// An operator that is not defined for the element type (`MaxAbs` of
    /// integers, whose minimum has no absolute value in the type).
    #[error("{op} is not defined for {element:?}; see the table in the docs of reduce::Op")]
    UnsupportedOp {
        /// The operator that was asked for.
        op: Op,
        /// The element type it was asked for.
        element: crate::element::ElementType,
    },
    /// A reduction over a place that no kernel computes it over (see
    /// [`crate::reduction`]: a widened reduction or argmax/argmin over
    /// segments, a mean into a device output: only its host value exists).
    #[error("{reduction} is not computed over {over}; see the table in the docs of reduce::reduction")]
    UnsupportedOver {
        /// The reduction that was asked for.
        reduction: &'static str,
        /// The place it was asked over.
        over: &'static str,
    },
    /// A reduction into a wider accumulator ([`Widened`](crate::Widened)) for an
    /// operator that the input type does not have there (the half-precision
    /// types have sum, max and min; the others sum).
    #[error("{op} of {input} into {accumulator:?} is not available: see the table in the docs of reduce::WidensTo")]
    UnsupportedWidening {
        /// The operator that was asked for.
        op: Op,
        /// The input type's name.
        input: &'static str,
        /// The accumulator type.
        accumulator: crate::element::ElementType,
    },
    /// Segment offsets, a matrix shape or an output that do not fit a
    /// reduction over segments or rows ([`Over::Segments`](crate::Over::Segments),
    /// [`Over::Rows`](crate::Over::Rows)).
    #[error("invalid segmented reduction: {0}")]
    InvalidSegments(String),
    /// Axes of an axis reduction that are out of range or named twice, or
    /// an output whose length is not the kept axes' positions
    /// ([`crate::axes`]).
    #[error("invalid axes: {0}")]
    InvalidAxes(String),
    /// A shape and strides that cannot describe a view of the buffer: a
    /// stride count other than the axes', more than
    /// [`MAX_RANK`](crate::axes::MAX_RANK) axes, or an element past the
    /// buffer's end ([`crate::axes`]).
    #[error("invalid tensor layout: {0}")]
    InvalidLayout(String),
    /// A parameter outside the values it takes: a variance's correction
    /// that is negative or not finite ([`Var::new`](crate::Var::new), and
    /// those of [`Std`](crate::Std) and [`MeanVar`](crate::MeanVar)).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The kernel module has no kernel for this identity: a bug in the
    /// library (its kernel table and its operations disagree), never the
    /// input's fault.
    #[error("the kernel module has no entry point for {0:?}; please report this")]
    MissingKernel(kernels_gpu::abi::Kernel),
    /// A kernel module the library's own images lack or hold corrupted (the
    /// library was built wrongly, never the input's fault).
    #[error("the kernel module {module} ({image}) cannot be loaded: {problem}; please report this")]
    BrokenModule {
        /// The module's file stem (`whole_f32`, ...).
        module: String,
        /// Which image: its architecture, machine code or PTX.
        image: String,
        /// What is wrong.
        problem: String,
    },
    /// An output that overlaps another buffer of the same call (an input,
    /// or the other output of a [`MeanVar`](crate::MeanVar)): the kernels read and write them at
    /// once. Parts of one buffer (`Output::get`, raw or view entries) can.
    #[error(
        "the {output} buffer overlaps the {other} buffer of the same call; outputs must not overlap any other buffer"
    )]
    Aliasing {
        /// The output.
        output: &'static str,
        /// The buffer it overlaps.
        other: &'static str,
    },
    /// A buffer that is not memory of the reducer's CUDA context (another
    /// context's or another device's, or not CUDA memory at all): a kernel
    /// reading it would fault and take the context down, so nothing was
    /// launched.
    #[error("the {buffer} buffer at {address:#x} is {found}, not memory of the reducer's CUDA context; allocate it with that context current")]
    ForeignBuffer {
        /// Which argument.
        buffer: &'static str,
        /// Its device address.
        address: u64,
        /// What CUDA says it is.
        found: String,
    },
    /// A stream the call cannot launch on, and why: the per-thread default
    /// stream, a stream of another context than the reducer's, or (for the
    /// safe calls of the `cudarc` module) a stream being captured into a
    /// CUDA graph.
    #[error("cannot launch on this stream: {0}")]
    UnsupportedStream(String),
    /// An output of a whole-input call ([`Over::Whole`](crate::Over::Whole))
    /// with room for other than one result, or the means of a
    /// [`MeanVar`](crate::MeanVar) not as long as its variances.
    #[error("the {output} output has {found} elements, but the call writes {expected}")]
    OutputLength {
        /// Which output.
        output: &'static str,
        /// Its length.
        found: usize,
        /// The elements the call writes there.
        expected: usize,
    },
    /// A launch that cannot be made: a launch policy or ladder
    /// block size the kernels do not take, or sizes too large for one launch
    /// (its grid, or the launch shape's 64-bit arithmetic).
    #[error("invalid launch configuration: {0}")]
    InvalidPolicy(String),
    /// A kernel run by the SIMT emulator ([`crate::emulated`]) did something
    /// that on a GPU would hang or give garbage: a barrier or shuffle not
    /// every thread reaches, an access outside its buffers, a misaligned
    /// access, a panic. This is a bug in the kernel, not in the input.
    #[error(
        "emulated kernel {kernel} faulted in block {block}, thread {thread}: {message} (replay with block order seed {block_order_seed})"
    )]
    EmulatedFault {
        /// The kernel's name, as in the PTX.
        kernel: String,
        /// The block that faulted.
        block: u32,
        /// The thread (within the block) that found the fault.
        thread: u32,
        /// What went wrong, and where in the kernel source.
        message: String,
        /// The seed of the launch's block order (to replay it).
        block_order_seed: u64,
    },
    /// The NCCL library that the multi-GPU calls ([`crate::multi`]) need
    /// could not be loaded; single-GPU calls do not need it.
    #[error("NCCL is not available for multi-GPU reductions: {reason}")]
    NcclUnavailable {
        /// What was looked for and what to do.
        reason: String,
    },
    /// An NCCL call failed (run with `NCCL_DEBUG=WARN` or `INFO` for NCCL's own account).
    #[error("{call} failed: {message} (ncclResult_t {code}; NCCL_DEBUG=WARN tells more)")]
    Nccl {
        /// The NCCL function.
        call: &'static str,
        /// Its `ncclResult_t`.
        code: u32,
        /// NCCL's description of the error.
        message: String,
    },
    /// A multi-GPU call with devices, ranks, shards or outputs that do not fit together.
    #[error("invalid multi-GPU call: {0}")]
    InvalidGroup(String),
    /// An error reported by the CUDA driver through cudarc (the [`cudarc`](crate::cudarc) module).
    #[cfg(feature = "cudarc")]
    #[error("CUDA driver error (through cudarc): {0}")]
    Cudarc(#[from] ::cudarc::driver::DriverError),
    /// An error reported by the CUDA driver (including errors of earlier,
    /// asynchronous work on the same stream).
    #[error("CUDA driver error: {0}")]
    Cuda(#[from] CudaError),
}

/// `Result` with this crate's [`Error`].
///
/// ```
/// fn total(values: &[i64]) -> reduce::Result<i64> {
///     reduce::emulated::Emulator::default().reduce(values, reduce::Op::Sum)
/// }
/// assert_eq!(total(&[1, 2, 3]).ok(), Some(6));
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
