//! The one driver call `cust` does not let us make cheaply: launching a kernel
//! through a cached `CUfunction` handle.
//!
//! `cust::function::Function` borrows its `Module`, so a `Reducer` that owns
//! the module cannot also keep the functions; looking them up on every call
//! (`cuModuleGetFunction`) costs host time that device-event timings of small
//! reductions see. The handles are valid as long as the module is loaded,
//! which `Kernels` guarantees by owning both.

use cust::error::CudaError;
use cust::stream::Stream;
use cust::sys::{cuLaunchKernel, cudaError_enum, CUfunction};
use std::ffi::c_void;

/// A kernel handle, valid while the module it came from is loaded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelHandle(pub(crate) CUfunction);

// SAFETY: a CUfunction is an opaque driver handle usable from any thread that
// has its context current (the same reasoning as cust's `Function`).
unsafe impl Send for KernelHandle {}
unsafe impl Sync for KernelHandle {}

/// Most parameters any entry point has (the segmented ones have ten).
const MAX_PARAMS: usize = 10;

/// Launches `kernel` on `stream` with a 1-D grid, `shared_bytes` of dynamic
/// shared memory, and `params` as its parameters in order. Every parameter
/// of every entry point is a `.u64` (an address or a length; see
/// kernels-gpu/src/abi.rs).
///
/// # Safety
/// `kernel` belongs to a loaded module of the current context, and `params`
/// are the values its parameters expect (valid addresses of the right sizes).
pub(crate) unsafe fn launch(
    kernel: KernelHandle,
    grid: u32,
    block: u32,
    shared_bytes: u32,
    stream: &Stream,
    params: &mut [u64],
) -> Result<(), CudaError> {
    if params.len() > MAX_PARAMS {
        return Err(CudaError::InvalidValue);
    }
    let mut pointers = [std::ptr::null_mut::<c_void>(); MAX_PARAMS];
    for (pointer, param) in pointers.iter_mut().zip(params.iter_mut()) {
        *pointer = param as *mut u64 as *mut c_void;
    }
    let code = cuLaunchKernel(
        kernel.0,
        grid,
        1,
        1,
        block,
        1,
        1,
        shared_bytes,
        stream.as_inner(),
        pointers.as_mut_ptr(),
        std::ptr::null_mut(),
    );
    launch_result(code)
}

/// Sets the `count` 4-byte words at `address` to zero, on `stream`.
///
/// # Safety
/// `address` is a 4-byte-aligned device address of `count` writable words.
pub(crate) unsafe fn zero_words_async(address: u64, count: usize, stream: &Stream) -> Result<(), CudaError> {
    launch_result(cust::sys::cuMemsetD32Async(address, 0, count, stream.as_inner()))
}

/// The `CudaError` for a driver status (cust's own conversion is private).
fn launch_result(code: cudaError_enum) -> Result<(), CudaError> {
    use cudaError_enum::*;
    Err(match code {
        CUDA_SUCCESS => return Ok(()),
        CUDA_ERROR_INVALID_VALUE => CudaError::InvalidValue,
        CUDA_ERROR_OUT_OF_MEMORY => CudaError::OutOfMemory,
        CUDA_ERROR_NOT_INITIALIZED => CudaError::NotInitialized,
        CUDA_ERROR_DEINITIALIZED => CudaError::Deinitialized,
        CUDA_ERROR_INVALID_CONTEXT => CudaError::InvalidContext,
        CUDA_ERROR_CONTEXT_IS_DESTROYED => CudaError::ContextIsDestroyed,
        CUDA_ERROR_INVALID_HANDLE => CudaError::InvalidHandle,
        CUDA_ERROR_ILLEGAL_ADDRESS => CudaError::IllegalAddress,
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES => CudaError::LaunchOutOfResources,
        CUDA_ERROR_LAUNCH_TIMEOUT => CudaError::LaunchTimeout,
        CUDA_ERROR_LAUNCH_FAILED => CudaError::LaunchFailed,
        CUDA_ERROR_ILLEGAL_INSTRUCTION => CudaError::IllegalInstruction,
        CUDA_ERROR_MISALIGNED_ADDRESS => CudaError::MisalignedAddress,
        CUDA_ERROR_HARDWARE_STACK_ERROR => CudaError::HardwareStackError,
        CUDA_ERROR_NOT_PERMITTED => CudaError::NotPermitted,
        CUDA_ERROR_NOT_SUPPORTED => CudaError::NotSupported,
        _ => CudaError::UnknownError,
    })
}
