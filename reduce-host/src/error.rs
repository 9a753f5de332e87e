//! The error type of every fallible call.

use crate::element::ElementType;
use crate::op::Op;
use kernels_gpu::abi;

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
    /// `max`/`min` (or another reduction with no value for no elements)
    /// along an empty dimension: an empty input, rows of length 0, a reduced
    /// axis of length 0 (the rule: [`Over`](crate::Over)'s docs).
    #[error("{op} of an empty input (or along rows or an axis of length 0) has no value; check for emptiness first (sum and product of no elements are 0 and 1)")]
    Empty {
        /// The operator that was asked for.
        op: Op,
    },
    /// The CUDA driver library (`libcuda.so.1`, `nvcuda.dll`) could not be
    /// loaded: no NVIDIA driver is installed. The emulator
    /// ([`crate::emulated`]) runs without one.
    #[error("the CUDA driver library (libcuda) could not be loaded: is an NVIDIA driver installed? (reduce::emulated runs without one)")]
    NoDriver,
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
    /// [`crate::reduction`]: a widened reduction, a mean or argmax/argmin
    /// over segments).
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
    /// argmax/argmin positions asked for in an index type that cannot hold
    /// them all ([`ArgMax::cast`](crate::ArgMax::cast) to `u32` along more
    /// than 2^32 elements): refused before anything runs.
    #[error("positions along {extent} elements do not all fit in {}; ask for u64 or i64 positions", .index.name())]
    IndexOverflow {
        /// The index type asked for.
        index: crate::element::ElementType,
        /// The number of elements each position counts along.
        extent: u64,
    },
    /// Segment offsets or a matrix shape that do not fit a reduction over
    /// segments or rows ([`Over::Segments`](crate::Over::Segments),
    /// [`Over::Rows`](crate::Over::Rows)).
    #[error("invalid segmented reduction: {0}")]
    InvalidSegments(String),
    /// Axes of an axis reduction that are out of range or named twice
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
    /// A broken invariant of the library itself (its kernel table and its
    /// operations disagree, a workspace it made is missing, ...): never the
    /// input's fault, and nothing was launched with wrong arguments.
    #[error("internal error in reduce: {0}; please report this")]
    Internal(String),
    /// A user operator ([`User`](crate::User)) that cannot be traced (it
    /// kept a traced value from an earlier call), or whose kernels the
    /// driver could not compile: the message holds the driver's log.
    #[error("the user operator cannot run: {0}")]
    UserOperator(String),
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
    /// A stream the call cannot launch on, and why: a stream of another
    /// context than the reducer's, or (for the safe calls of the `cudarc`
    /// module) a stream being captured into a CUDA graph. (The default
    /// streams, legacy and per-thread, are taken.)
    #[error("cannot launch on this stream: {0}")]
    UnsupportedStream(String),
    /// An output of an `_into` call (`out`; for [`MeanVar`](crate::MeanVar)
    /// `means` or `variances`) whose length is not the number of results
    /// the call writes (one for [`Over::Whole`](crate::Over::Whole) and a
    /// dot product).
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
    /// An error reported by the CUDA driver (including errors of earlier,
    /// asynchronous work on the same stream), through this crate, cust or
    /// cudarc.
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

// The errors that name an operator are made where the kernels' operator is
// known; a user operator's never reaches them (it has an identity and is
// defined for its types), so one that does is the library's bug.
impl Error {
    /// [`Error::Empty`] for the kernels' `op`.
    pub(crate) fn empty(op: abi::Op) -> Error {
        match Op::of_kernel(op) {
            Some(op) => Error::Empty { op },
            None => Error::internal(format_args!("{op} of an empty input has no value")),
        }
    }

    /// [`Error::UnsupportedOp`] for the kernels' `op` over `element`.
    pub(crate) fn unsupported_op(op: abi::Op, element: ElementType) -> Error {
        match Op::of_kernel(op) {
            Some(op) => Error::UnsupportedOp { op, element },
            None => Error::internal(format_args!("{op} is not defined for {element:?}")),
        }
    }

    /// [`Error::UnsupportedWidening`] for the kernels' `op` of `input` into `accumulator`.
    pub(crate) fn unsupported_widening(op: abi::Op, input: &'static str, accumulator: ElementType) -> Error {
        match Op::of_kernel(op) {
            Some(op) => Error::UnsupportedWidening { op, input, accumulator },
            None => Error::internal(format_args!("{op} of {input} is not widened")),
        }
    }

    /// [`Error::Internal`] saying what broke.
    pub(crate) fn internal(what: impl std::fmt::Display) -> Error {
        Error::Internal(what.to_string())
    }

    /// [`Error::Internal`] for a kernel the tables lack.
    pub(crate) fn missing_kernel(kernel: abi::Kernel) -> Error {
        Error::internal(format_args!("the kernel module has no entry point for {kernel:?}"))
    }
}

macro_rules! cuda_errors {
    ($($(#[$doc:meta])* $variant:ident = $code:literal, $name:literal;)*) => {
        /// A status of the CUDA driver other than success (a `CUresult`), by
        /// the driver API's name; a status without a variant here keeps its
        /// number in [`CudaError::Other`]. The same for this crate's driver
        /// calls, cust's and cudarc's (both convert into [`Error::Cuda`]).
        ///
        /// ```
        /// use reduce::error::CudaError;
        /// assert_eq!(CudaError::OutOfMemory.to_string(), "CUDA_ERROR_OUT_OF_MEMORY (2)");
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum CudaError {
            $($(#[$doc])* $variant,)*
            /// Another status, by its number.
            Other(u32),
        }

        impl CudaError {
            /// The error of driver status `code` (not 0, which is success).
            #[cfg_attr(not(any(feature = "cust", feature = "cudarc")), allow(dead_code))]
            pub(crate) fn from_code(code: u32) -> Self {
                match code {
                    $($code => CudaError::$variant,)*
                    other => CudaError::Other(other),
                }
            }
        }

        impl std::fmt::Display for CudaError {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $(CudaError::$variant => write!(f, "{} ({})", $name, $code),)*
                    CudaError::Other(code) => write!(f, "CUresult {code}"),
                }
            }
        }
    };
}

cuda_errors! {
    /// An argument the driver refused.
    InvalidValue = 1, "CUDA_ERROR_INVALID_VALUE";
    /// The device has no memory left for an allocation.
    OutOfMemory = 2, "CUDA_ERROR_OUT_OF_MEMORY";
    /// `cuInit` was not called (no context was ever made).
    NotInitialized = 3, "CUDA_ERROR_NOT_INITIALIZED";
    /// The driver is shutting down.
    Deinitialized = 4, "CUDA_ERROR_DEINITIALIZED";
    /// No CUDA-capable device was found.
    NoDevice = 100, "CUDA_ERROR_NO_DEVICE";
    /// A device ordinal that names no device.
    InvalidDevice = 101, "CUDA_ERROR_INVALID_DEVICE";
    /// A kernel image the driver cannot load.
    InvalidImage = 200, "CUDA_ERROR_INVALID_IMAGE";
    /// No context, or a destroyed one, is current.
    InvalidContext = 201, "CUDA_ERROR_INVALID_CONTEXT";
    /// The image has no code for this GPU.
    NoBinaryForGpu = 209, "CUDA_ERROR_NO_BINARY_FOR_GPU";
    /// PTX the driver could not compile.
    InvalidPtx = 218, "CUDA_ERROR_INVALID_PTX";
    /// PTX of a newer ISA version than the driver knows.
    UnsupportedPtxVersion = 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    /// A handle that names nothing (a destroyed stream, say).
    InvalidHandle = 400, "CUDA_ERROR_INVALID_HANDLE";
    /// A named symbol (a kernel) that is not in the module.
    NotFound = 500, "CUDA_ERROR_NOT_FOUND";
    /// A kernel accessed an address outside any allocation.
    IllegalAddress = 700, "CUDA_ERROR_ILLEGAL_ADDRESS";
    /// A launch that needs more registers or threads than a block has.
    LaunchOutOfResources = 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    /// A kernel ran past the display watchdog's time.
    LaunchTimeout = 702, "CUDA_ERROR_LAUNCH_TIMEOUT";
    /// The context was destroyed.
    ContextIsDestroyed = 709, "CUDA_ERROR_CONTEXT_IS_DESTROYED";
    /// A device-side assertion failed.
    AssertError = 710, "CUDA_ERROR_ASSERT";
    /// A kernel overflowed its call stack.
    HardwareStackError = 714, "CUDA_ERROR_HARDWARE_STACK_ERROR";
    /// A kernel ran an illegal instruction.
    IllegalInstruction = 715, "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    /// A kernel accessed memory at a misaligned address.
    MisalignedAddress = 716, "CUDA_ERROR_MISALIGNED_ADDRESS";
    /// A kernel failed (the context is then unusable).
    LaunchFailed = 719, "CUDA_ERROR_LAUNCH_FAILED";
    /// An operation the driver does not permit here.
    NotPermitted = 800, "CUDA_ERROR_NOT_PERMITTED";
    /// An operation this device or driver does not support.
    NotSupported = 801, "CUDA_ERROR_NOT_SUPPORTED";
    /// An operation not allowed while a stream is being captured into a graph.
    StreamCaptureUnsupported = 900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    /// A stream capture that an earlier error invalidated.
    StreamCaptureInvalidated = 901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    /// An error the driver does not describe.
    Unknown = 999, "CUDA_ERROR_UNKNOWN";
}

impl std::error::Error for CudaError {}

/// cust's errors (its `CudaError` numbers are the driver's statuses).
#[cfg(feature = "cust")]
impl From<cust::error::CudaError> for Error {
    fn from(error: cust::error::CudaError) -> Self {
        Error::Cuda(CudaError::from_code(error as u32))
    }
}

/// cudarc's driver errors.
#[cfg(feature = "cudarc")]
impl From<::cudarc::driver::DriverError> for Error {
    fn from(error: ::cudarc::driver::DriverError) -> Self {
        Error::Cuda(CudaError::from_code(error.0 as u32))
    }
}
