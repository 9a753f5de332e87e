//! The CUDA driver calls the GPU backend makes, over cudarc's bindings
//! (`cudarc::driver::sys`), which load `libcuda` when first used rather than
//! link it: the crate builds on machines without CUDA, and a program that
//! never touches a GPU never needs the driver. Each call's status becomes a
//! [`CudaError`]; the owned driver objects free themselves when dropped.

use crate::error::{CudaError, Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::OnceLock;

pub(crate) use sys::{CUcontext, CUdevice_attribute as DeviceAttribute, CUfunction, CUpointer_attribute, CUstream};

/// `Ok` for success, else the status as a [`CudaError`].
pub(crate) fn check(status: sys::CUresult) -> Result<(), CudaError> {
    match status {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        error => Err(CudaError::from_code(error as u32)),
    }
}

/// [`Error::NoDriver`] unless the driver library loads. Every path into the
/// driver starts here (cudarc's bindings panic on a missing library).
///
/// cudarc's own test (`is_culib_present`) exists only when cudarc opens the
/// library at run time, so this one works in every mode: it tries the names
/// of cudarc's list that do not depend on the CUDA version (a subset, so a
/// library found here is one cudarc finds). When another crate has cudarc
/// link the library instead (candle's `dynamic-linking`), the program could
/// not have started without it, and opening `libcuda.so.1` finds the one
/// already loaded.
fn require_driver() -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    let present = PRESENT.get_or_init(|| {
        driver_library_names().iter().any(|name| {
            // SAFETY: opening the driver library runs its initialisers, as
            // cudarc's own loading does; the handle is closed again at once.
            unsafe { libloading::Library::new(name) }.is_ok()
        })
    });
    match present {
        true => Ok(()),
        false => Err(Error::NoDriver),
    }
}

/// The driver library's names that cudarc 0.19 tries whatever its CUDA
/// version (`cudarc::get_lib_name_candidates` of "cuda" and "nvcuda").
fn driver_library_names() -> Vec<String> {
    use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
    let bits = usize::BITS;
    let mut names = Vec::new();
    for name in ["cuda", "nvcuda"] {
        names.push(format!("{DLL_PREFIX}{name}{DLL_SUFFIX}"));
        names.push(format!("{DLL_PREFIX}{name}{bits}{DLL_SUFFIX}"));
        for major in ["10", "11", "12", "9"] {
            names.push(format!("{DLL_PREFIX}{name}{bits}_{major}{DLL_SUFFIX}"));
        }
        for version in ["12", "11", "10", "9", "1"] {
            names.push(format!("{DLL_PREFIX}{name}{DLL_SUFFIX}.{version}"));
        }
    }
    names
}

/// The current context's handle: [`Error::NoDriver`] without a driver,
/// [`Error::NoContext`] if none is current.
pub(crate) fn current_context() -> Result<CUcontext> {
    require_driver()?;
    let mut context: CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle to a valid location.
    let status = unsafe { sys::cuCtxGetCurrent(&mut context) };
    if status != sys::CUresult::CUDA_SUCCESS || context.is_null() {
        return Err(Error::NoContext);
    }
    Ok(context)
}

/// The current context's device (a `CUdevice` is its ordinal).
pub(crate) fn current_device() -> Result<sys::CUdevice> {
    let mut device: sys::CUdevice = 0;
    // SAFETY: writes one device handle to a valid location.
    check(unsafe { sys::cuCtxGetDevice(&mut device) })?;
    Ok(device)
}

/// `attribute` of `device` (0 where the driver reports a negative value).
pub(crate) fn device_attribute(device: sys::CUdevice, attribute: DeviceAttribute) -> Result<u32> {
    let mut value = 0i32;
    // SAFETY: writes one `int` to a valid location.
    check(unsafe { sys::cuDeviceGetAttribute(&mut value, attribute, device) })?;
    Ok(u32::try_from(value).unwrap_or(0))
}

/// What the driver says of `address`'s `attribute` (a context handle or
/// an `int` or a 64-bit id, in the low bytes of a zeroed word).
pub(crate) fn pointer_attribute(address: u64, attribute: CUpointer_attribute) -> Result<u64, CudaError> {
    let mut value = 0u64;
    // SAFETY: the driver writes one handle or id (8 bytes) or one `int` (4)
    // to the word, and does not touch the memory at `address`.
    check(unsafe { sys::cuPointerGetAttribute((&mut value as *mut u64).cast(), attribute, address) })?;
    Ok(value)
}

/// Waits for the work on `stream`.
///
/// # Safety
/// `stream` is a live stream of the current context (or the null stream).
pub(crate) unsafe fn synchronize(stream: CUstream) -> Result<(), CudaError> {
    // SAFETY: the caller's promise.
    check(unsafe { sys::cuStreamSynchronize(stream) })
}

/// Waits for all the work of `context` (every stream of it, the per-thread
/// default streams of every host thread too), with it current for the call.
///
/// # Safety
/// `context` is a live context.
pub(crate) unsafe fn synchronize_context(context: CUcontext) -> Result<(), CudaError> {
    // SAFETY: a live context (the caller's promise), made current for this
    // call only: popped again below.
    check(unsafe { sys::cuCtxPushCurrent_v2(context) })?;
    // SAFETY: a context is current.
    let waited = check(unsafe { sys::cuCtxSynchronize() });
    let mut popped: CUcontext = std::ptr::null_mut();
    // SAFETY: pops the context pushed above; writes one handle.
    let popped = check(unsafe { sys::cuCtxPopCurrent_v2(&mut popped) });
    waited.and(popped)
}

/// An event of the current context (without timing), destroyed when
/// dropped: recorded after a stream's launches, it tells without waiting
/// whether they have completed.
#[cfg(feature = "cudarc")]
#[derive(Debug)]
pub(crate) struct Event(sys::CUevent);

#[cfg(feature = "cudarc")]
// SAFETY: an event handle is usable from any thread with its context current.
unsafe impl Send for Event {}
#[cfg(feature = "cudarc")]
// SAFETY: as `Send`; shared, only its handle is read.
unsafe impl Sync for Event {}

#[cfg(feature = "cudarc")]
impl Event {
    /// A new event of the current context, with no work recorded.
    pub(crate) fn new() -> Result<Self, CudaError> {
        let mut event: sys::CUevent = std::ptr::null_mut();
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        // SAFETY: writes one handle to a valid location.
        check(unsafe { sys::cuEventCreate(&mut event, flags) })?;
        Ok(Event(event))
    }

    /// Records the work enqueued on `stream` so far (on the calling thread's
    /// own stream for `CU_STREAM_PER_THREAD`).
    ///
    /// # Safety
    /// `stream` is a live stream of the event's context, its legacy or
    /// per-thread default stream, and that context is current.
    pub(crate) unsafe fn record(&self, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: a live event; the caller's promise for the stream.
        check(unsafe { sys::cuEventRecord(self.0, stream) })
    }

    /// Whether the work recorded last has completed (also for an event
    /// never recorded), without waiting: `CUDA_ERROR_NOT_READY` is `false`,
    /// every other error is returned.
    pub(crate) fn is_done(&self) -> Result<bool, CudaError> {
        // SAFETY: a live event.
        match unsafe { sys::cuEventQuery(self.0) } {
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            status => check(status).map(|()| true),
        }
    }

    /// Waits for the work recorded last.
    pub(crate) fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: a live event.
        check(unsafe { sys::cuEventSynchronize(self.0) })
    }
}

#[cfg(feature = "cudarc")]
impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: made by `cuEventCreate`, destroyed once; the driver does
        // not wait for recorded work (it lets go of the event once done).
        let _ = unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}

/// A non-blocking stream of the current context, destroyed when dropped:
/// the cudarc interop's own stream. Made by the driver rather than by
/// cudarc, whose first stream beside a context's default one makes the
/// context wait for all its work and turns on event tracking for every
/// later use of its buffers (cudarc's multi-stream mode).
#[cfg(feature = "cudarc")]
#[derive(Debug)]
pub(crate) struct OwnedStream(CUstream);

#[cfg(feature = "cudarc")]
// SAFETY: a stream handle is usable from any thread with its context current.
unsafe impl Send for OwnedStream {}
#[cfg(feature = "cudarc")]
// SAFETY: as `Send`; shared, only its handle is read.
unsafe impl Sync for OwnedStream {}

#[cfg(feature = "cudarc")]
impl OwnedStream {
    /// A new non-blocking stream of the current context.
    pub(crate) fn new() -> Result<Self> {
        let mut stream: CUstream = std::ptr::null_mut();
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: writes one handle to a valid location.
        check(unsafe { sys::cuStreamCreate(&mut stream, flags) })?;
        Ok(OwnedStream(stream))
    }

    pub(crate) fn handle(&self) -> CUstream {
        self.0
    }
}

#[cfg(feature = "cudarc")]
impl Drop for OwnedStream {
    fn drop(&mut self) {
        // SAFETY: made by `cuStreamCreate`, destroyed once; the driver lets
        // its pending work finish first.
        let _ = unsafe { sys::cuStreamDestroy_v2(self.0) };
    }
}

/// `len` `T`s of device memory at `address`: the operations' view of a
/// caller's buffer (of any runtime) or of a [`DeviceMemory`]. An address
/// and a length only: whoever makes one keeps the memory alive while the
/// operations use it (the GPU backend checks each launch's buffers are its
/// context's memory).
#[derive(Debug)]
pub(crate) struct RawSlice<T> {
    address: u64,
    len: usize,
    element: PhantomData<T>,
}

impl<T> RawSlice<T> {
    /// The `len` `T`s at `address`.
    pub(crate) fn new(address: u64, len: usize) -> Self {
        RawSlice {
            address,
            len,
            element: PhantomData,
        }
    }

    pub(crate) fn address(&self) -> u64 {
        self.address
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// An allocation of `len` `T`s in the current context's device memory,
/// freed when dropped (an empty one allocates nothing, at address 0).
#[derive(Debug)]
pub(crate) struct DeviceMemory<T> {
    slice: RawSlice<T>,
}

impl<T> DeviceMemory<T> {
    /// `len` `T`s, uninitialised: the caller writes each before reading it.
    pub(crate) fn uninitialized(len: usize) -> Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(Error::Cuda(CudaError::OutOfMemory))?;
        let mut address = 0u64;
        if bytes > 0 {
            // SAFETY: writes one device address to a valid location.
            check(unsafe { sys::cuMemAlloc_v2(&mut address, bytes) })?;
        }
        Ok(DeviceMemory {
            slice: RawSlice::new(address, len),
        })
    }

    /// `len` `T`s, zeroed on `stream` (so ordered before that stream's
    /// later work).
    ///
    /// # Safety
    /// `stream` is a live stream of the current context.
    pub(crate) unsafe fn zeroed(len: usize, stream: CUstream) -> Result<Self> {
        let memory = Self::uninitialized(len)?;
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        if bytes > 0 {
            // SAFETY: the allocation holds `bytes` bytes; the caller's promise.
            check(unsafe { sys::cuMemsetD8Async(memory.slice.address, 0, bytes, stream) })?;
        }
        Ok(memory)
    }

    pub(crate) fn slice_mut(&mut self) -> &mut RawSlice<T> {
        &mut self.slice
    }

    pub(crate) fn address(&self) -> u64 {
        self.slice.address
    }

    pub(crate) fn len(&self) -> usize {
        self.slice.len
    }
}

impl<T> Drop for DeviceMemory<T> {
    fn drop(&mut self) {
        if self.slice.address != 0 {
            // SAFETY: the address came from `cuMemAlloc` and is freed once,
            // while its context lives: the GPU backend's owners drop it with
            // the context alive (the cudarc reducer holds its context; the
            // cust backend leaks it once its context is gone: `cuda.rs`).
            let _ = unsafe { sys::cuMemFree_v2(self.slice.address) };
        }
    }
}

/// Copies `host.len()` `T`s from device memory at `address` to `host`,
/// waiting for the copy (and, on `stream`, the work before it).
///
/// # Safety
/// `address` holds `host.len()` initialised `T`s, `T` is plain data (every
/// bit pattern the device wrote is a valid `T`), and `stream` is a live
/// stream of the current context.
pub(crate) unsafe fn copy_to_host<T>(address: u64, host: &mut [T], stream: CUstream) -> Result<()> {
    let bytes = std::mem::size_of_val(host);
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: `host` is `bytes` writable bytes, which the copy fills before
    // the synchronization below returns; the caller promises the source.
    check(unsafe { sys::cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast::<c_void>(), address, bytes, stream) })?;
    // SAFETY: the caller's stream (`copy_to_host`'s promise).
    Ok(unsafe { synchronize(stream) }?)
}

/// Two `u64`s of pinned host memory: where a blocking call's 16-byte
/// result is copied to (a pageable destination would make the copy
/// synchronous with every stream).
#[derive(Debug)]
pub(crate) struct PinnedWords(*mut u64);

// SAFETY: plain host memory, owned by this value alone, written only
// through `&mut self`.
unsafe impl Send for PinnedWords {}
// SAFETY: as `Send`: a shared `PinnedWords` is never read or written.
unsafe impl Sync for PinnedWords {}

impl PinnedWords {
    pub(crate) fn new() -> Result<Self> {
        let mut pointer: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one host pointer to a valid location.
        check(unsafe { sys::cuMemAllocHost_v2(&mut pointer, 16) })?;
        Ok(PinnedWords(pointer.cast()))
    }

    /// Copies 16 bytes at `address` here on `stream` and waits for them.
    ///
    /// # Safety
    /// `address` holds 16 bytes of device memory, and `stream` is a live
    /// stream of the current context.
    pub(crate) unsafe fn read(&mut self, address: u64, stream: CUstream) -> Result<[u64; 2]> {
        // SAFETY: 16 writable pinned bytes, read only after the stream is
        // synchronized; the caller's promise for the source and stream.
        check(unsafe { sys::cuMemcpyDtoHAsync_v2(self.0.cast(), address, 16, stream) })?;
        // SAFETY: the caller's promise.
        unsafe { synchronize(stream) }?;
        // SAFETY: 16 bytes the copy wrote, 8-aligned (the driver's allocation).
        Ok(unsafe { self.0.cast::<[u64; 2]>().read() })
    }
}

impl Drop for PinnedWords {
    fn drop(&mut self) {
        // SAFETY: allocated by `cuMemAllocHost`, freed once.
        let _ = unsafe { sys::cuMemFreeHost(self.0.cast()) };
    }
}

/// A module loaded into the current context, unloaded when dropped.
#[derive(Debug)]
pub(crate) struct LoadedModule(sys::CUmodule);

// SAFETY: a module handle is usable from any thread that has its context
// current.
unsafe impl Send for LoadedModule {}
// SAFETY: as `Send`; shared, only its handle is read.
unsafe impl Sync for LoadedModule {}

impl LoadedModule {
    /// Loads a cubin, or PTX ending in a NUL byte, into the current context.
    pub(crate) fn load(image: &[u8]) -> Result<Self, CudaError> {
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `image` is a complete cubin or NUL-terminated PTX (the
        // callers check), which the driver reads during the call.
        check(unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr().cast()) })?;
        Ok(LoadedModule(module))
    }

    /// Loads PTX ending in a NUL byte into the current context, with the
    /// driver's error log where it cannot (a user operator's module).
    pub(crate) fn load_logged(ptx: &[u8]) -> Result<Self, (CudaError, String)> {
        let mut log = vec![0u8; 16 << 10];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut std::ffi::c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut std::ffi::c_void];
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `ptx` is NUL-terminated (the caller's promise); the log
        // buffer outlives the call and its size is the one given.
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                ptx.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        check(status).map_err(|error| {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            (
                error,
                String::from_utf8_lossy(log.get(..end).unwrap_or(&[])).into_owned(),
            )
        })?;
        Ok(LoadedModule(module))
    }

    /// The kernel `name`, valid while the module is loaded.
    pub(crate) fn function(&self, name: &std::ffi::CStr) -> Result<CUfunction, CudaError> {
        let mut function: CUfunction = std::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name.
        check(unsafe { sys::cuModuleGetFunction(&mut function, self.0, name.as_ptr()) })?;
        Ok(function)
    }
}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        // SAFETY: loaded by `cuModuleLoadData`, unloaded once.
        let _ = unsafe { sys::cuModuleUnload(self.0) };
    }
}

/// Blocks of `threads` threads and `shared_bytes` of dynamic shared memory
/// that fit on one SM at once.
pub(crate) fn max_active_blocks(function: CUfunction, threads: u32, shared_bytes: usize) -> Result<u32> {
    let mut blocks = 0i32;
    let threads = i32::try_from(threads).map_err(|_| Error::internal(format_args!("a block of {threads} threads")))?;
    // SAFETY: a function of a loaded module; writes one `int`.
    check(unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut blocks, function, threads, shared_bytes) })?;
    Ok(u32::try_from(blocks).unwrap_or(0))
}

/// Sets `count` 4-byte words at `address` to zero on `stream`.
///
/// # Safety
/// `count` writable, 4-byte aligned words at `address`, not used by other
/// work that may run at the same time.
pub(crate) unsafe fn zero_words(address: u64, count: usize, stream: CUstream) -> Result<(), CudaError> {
    // SAFETY: the caller's promise.
    check(unsafe { sys::cuMemsetD32Async(address, 0, count, stream) })
}

/// Launches `function` with a 1-D grid.
///
/// # Safety
/// `parameters` point to the kernel's arguments, each of the size the kernel
/// takes; every address in them is valid for what the kernel does with it
/// until the launch completes; `function` belongs to a loaded module of the
/// current context.
pub(crate) unsafe fn launch(
    function: CUfunction,
    blocks: u32,
    threads: u32,
    shared_bytes: u32,
    stream: CUstream,
    parameters: &mut [*mut c_void],
) -> Result<(), CudaError> {
    // SAFETY: the caller's promise.
    check(unsafe {
        sys::cuLaunchKernel(
            function,
            blocks,
            1,
            1,
            threads,
            1,
            1,
            shared_bytes,
            stream,
            parameters.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    })
}
