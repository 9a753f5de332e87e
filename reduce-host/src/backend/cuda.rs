//! The CUDA backend: the kernels' modules loaded into the current context
//! as they are first used, a stream, and a workspace per stream launched on.

use super::images::Image;
use super::launcher::{partial_words, Access, Launch, Launcher, StreamHandle, Workspace};
use crate::error::{Error, Result};
use crate::policy::Policy;
use crate::tuning::Tuning;
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::function::{BlockSize, Function};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice, LockedBuffer};
use cust::module::Module as LoadedModule;
use cust::stream::{Stream, StreamFlags};
use cust::sys::{cuLaunchKernel, cudaError_enum, CUcontext, CUfunction, CUpointer_attribute, CUstream};
use kernels_gpu::abi::{AxisArgs, Kernel, KernelArgs, KernelMap, Module, PARTIAL_SLOT_BYTES};
use kernels_gpu::dispatch::EntryArgs;
use std::collections::HashSet;
use std::ffi::{c_void, CStr};

/// Kernels run on the GPU of the context that was current when the backend
/// was created (see [`Reducer::new`](crate::Reducer::new)). The default
/// backend: `Reducer` is `Reducer<Cuda>`, over `cust`'s `DeviceSlice`s, and
/// its calls over segments, rows or axes return `DeviceBuffer`s.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::memory::DeviceBuffer;
/// let _ctx = cust::quick_init()?;
/// let mut reducer: reduce::Reducer<reduce::Cuda> = reduce::Reducer::new()?;
/// let (values, offsets) = (DeviceBuffer::from_slice(&[4.0f32, 1.0, 7.0])?, DeviceBuffer::from_slice(&[0u64, 2, 3])?);
/// let maxima = reducer.reduce_over(&values, reduce::Op::Max, reduce::Over::Segments(&offsets))?;
/// let maxima: DeviceBuffer<f32> = maxima.values;
/// assert_eq!(maxima.as_host_vec()?, [4.0, 7.0]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Cuda {
    /// Each kernel launched so far: its handle (valid while its module is
    /// loaded) and its largest useful grid (SMs × resident blocks per SM).
    loaded: KernelMap<(KernelHandle, u32)>,
    /// The axis launches' blocks and grid caps, by kernel ([`Launcher::axis_block`]).
    axis_blocks: KernelMap<(u32, u32)>,
    tuning: Tuning,
    /// Streaming multiprocessors of the device.
    sms: u32,
    /// An upper bound of every kernel's grid cap: the workspace's size.
    max_grid: u32,
    pub(crate) stream: Stream,
    /// The own stream's workspace.
    own: StreamWorkspace,
    /// The workspaces of the caller's streams launched on in the current
    /// [`Scope`](crate::Scope), by stream handle: the scope borrows those
    /// streams, so no handle is reused while it lasts.
    scoped: Vec<(usize, StreamWorkspace)>,
    /// The workspaces of ended scopes, for the next scopes' streams. Bounded
    /// by the most streams one scope used.
    idle: Vec<StreamWorkspace>,
    /// Buffers of the current scope found to be this context's memory: the
    /// scope borrows them until it ends, so they stay so, and each is asked
    /// of the driver once per scope rather than once per launch (about
    /// 0.3 µs a query on an H100, which a 2^10-element reduction would feel).
    owned_in_scope: HashSet<u64>,
    /// The context the module is loaded in, and its device's ordinal: the
    /// buffers a launch touches must be its memory.
    context: u64,
    ordinal: u64,
    /// The blocking calls' result slot (16 bytes), and its pinned host copy.
    result: DeviceBuffer<u64>,
    /// The driver's process-wide unique id of the `result` allocation, never
    /// reused: while it still names that allocation, the context is alive.
    result_id: u64,
    result_host: LockedBuffer<u64>,
    /// Where modules are loaded from: the device's machine code or PTX, and
    /// the PTX to fall back on if the machine code does not load (a driver
    /// older than the assembler that made it).
    image: Image,
    fallback: Option<Image>,
    /// The modules loaded so far. Declared last, so dropped after everything
    /// that points into them.
    modules: Vec<(Module, LoadedModule)>,
}

/// What one stream's launches write besides their results.
#[derive(Debug)]
struct StreamWorkspace {
    partials: DeviceBuffer<u64>,
    /// Zero between launches (every launch leaves it at zero).
    ticket: DeviceBuffer<u32>,
    /// Zero between launches.
    segment_tickets: DeviceBuffer<u32>,
    /// The ladder's per-block results; grown on demand, never shrunk.
    scratch: Option<DeviceBuffer<u64>>,
    /// Written, never read ([`Workspace::sink`]).
    sink: DeviceBuffer<u64>,
}

impl Cuda {
    /// A backend for the current context's device, with `policy` or the
    /// tuned one for the device. Loads no kernel: each module is loaded when
    /// one of its kernels is first launched.
    pub(crate) fn new(policy: Option<Policy>) -> Result<Self> {
        let context = current_context()?;
        let device = cust::context::CurrentContext::get_device()?;
        let attribute =
            |a: DeviceAttribute| -> Result<u32> { Ok(u32::try_from(device.get_attribute(a)?).unwrap_or(0)) };
        let (major, minor) = compute_capability(device)?;
        let tuned = Policy::tuning_for(major, minor)?;
        let tuning = Tuning {
            block_threads: policy.map_or(tuned.block_threads, Policy::block_threads),
            ..tuned
        };
        let image = Image::for_device(major, minor)?;
        let fallback = Image::ptx_for_device(major, minor)
            .ok()
            .filter(|_| matches!(image, Image::Cubin(_)));
        let sms = attribute(DeviceAttribute::MultiprocessorCount)?;
        let threads_per_sm = attribute(DeviceAttribute::MaxThreadsPerMultiprocessor)?;
        let blocks_per_sm = threads_per_sm
            .checked_div(tuning.block_threads)
            .ok_or_else(|| Error::InvalidPolicy("a block of 0 threads cannot be launched".to_string()))?;
        let max_grid = sms.saturating_mul(blocks_per_sm.max(1)).max(1);
        let result = DeviceBuffer::zeroed(2)?;
        let result_id = pointer_attribute(
            result.as_device_ptr().as_raw(),
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_BUFFER_ID,
        )?;
        Ok(Cuda {
            loaded: KernelMap::default(),
            axis_blocks: KernelMap::default(),
            tuning,
            sms,
            max_grid,
            stream: Stream::new(StreamFlags::NON_BLOCKING, None)?,
            own: StreamWorkspace::new(max_grid)?,
            scoped: Vec::new(),
            idle: Vec::new(),
            owned_in_scope: HashSet::new(),
            context: context as u64,
            ordinal: u64::try_from(device.as_raw()).unwrap_or(u64::MAX),
            result,
            result_id,
            result_host: LockedBuffer::new(&0, 2)?,
            image,
            fallback,
            modules: Vec::new(),
        })
    }

    /// The stream the blocking calls run on.
    pub(crate) fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Whether the context this backend was made in is still alive and is
    /// `context`. A destroyed context's handle may be given to a new
    /// context, so the handle alone cannot tell; the unique id of the
    /// backend's own allocation can.
    pub(crate) fn is_alive_in(&self, context: CUcontext) -> bool {
        self.is_alive() && self.context == context as u64
    }

    /// Whether this backend's context still exists (its allocations do):
    /// only then may its driver handles be used, or freed.
    pub(crate) fn is_alive(&self) -> bool {
        let address = self.result.as_device_ptr().as_raw();
        pointer_attribute(address, CUpointer_attribute::CU_POINTER_ATTRIBUTE_BUFFER_ID) == Ok(self.result_id)
    }

    /// `stream`'s workspace (the own stream's for `None`). A caller's stream
    /// gets one on its first use in a scope (an idle one, or a new one), which
    /// also enrolls it among the streams the scope waits for: every launch
    /// and memset on a caller's stream comes through here.
    fn stream_workspace(&mut self, stream: Option<StreamHandle>) -> Result<&mut StreamWorkspace> {
        let Some(stream) = stream else {
            return Ok(&mut self.own);
        };
        let handle = stream.0 as usize;
        let entry = match self.scoped.iter().position(|(h, _)| *h == handle) {
            Some(index) => self.scoped.get_mut(index),
            None => {
                if stream.0 == PER_THREAD_STREAM {
                    return Err(Error::UnsupportedStream(
                        "the per-thread default stream (CU_STREAM_PER_THREAD) is another stream on each host thread, \
                         so the workspace of its launches cannot be tied to it; use a stream made for the purpose"
                            .to_string(),
                    ));
                }
                let workspace = match self.idle.pop() {
                    Some(idle) => idle,
                    None => StreamWorkspace::new(self.max_grid)?,
                };
                self.scoped.push((handle, workspace));
                self.scoped.last_mut()
            }
        };
        // `position` found it, or it was just pushed.
        entry.map(|(_, w)| w).ok_or(Error::Cuda(CudaError::InvalidValue))
    }

    /// `stream`'s handle (the own stream's for `None`), with the stream
    /// enrolled in the current scope.
    fn enqueue_on(&mut self, stream: Option<StreamHandle>) -> Result<CUstream> {
        self.stream_workspace(stream)?;
        Ok(stream.map_or_else(|| self.stream.as_inner(), |s| s.0))
    }

    /// Allocates `stream`'s workspace in the current scope now, if it has
    /// none (see [`Scope::prepare`](crate::Scope::prepare)).
    pub(crate) fn prepare(&mut self, stream: StreamHandle) -> Result<()> {
        self.enqueue_on(Some(stream)).map(|_| ())
    }

    /// Waits for every stream launched on in the current scope; the first
    /// error, after waiting for all.
    pub(crate) fn synchronize_scope(&self) -> Result<()> {
        let mut first_error = Ok(());
        for &(handle, _) in &self.scoped {
            // SAFETY: the scope borrows the stream, so the handle is live.
            let status = driver_result(unsafe { cust::sys::cuStreamSynchronize(handle as CUstream) });
            first_error = first_error.and(status.map_err(Error::from));
        }
        first_error
    }

    /// Ends the current scope: its streams' workspaces become idle, for the
    /// next scope (the caller has waited for the work that used them).
    pub(crate) fn end_scope(&mut self) {
        self.idle.extend(self.scoped.drain(..).map(|(_, workspace)| workspace));
        self.forget_owned();
    }

    /// Takes back the workspace lent to `stream` (the caller has waited for
    /// the work that used it): idle again, for the next stream.
    #[cfg(feature = "cudarc")]
    pub(crate) fn release(&mut self, stream: StreamHandle) {
        if let Some(index) = self.scoped.iter().position(|(h, _)| *h == stream.0 as usize) {
            self.idle.push(self.scoped.swap_remove(index).1);
        }
    }

    /// Forgets which buffers were found to be this context's memory: for a
    /// caller whose buffers are borrowed for one call only.
    pub(crate) fn forget_owned(&mut self) {
        self.owned_in_scope.clear();
    }

    /// [`Error::ForeignBuffer`] unless every buffer of `accesses` is memory
    /// of this backend's context (or, for allocations the driver ties to no
    /// context, such as stream-ordered pools', of its device). In a scope
    /// (`in_scope`), each buffer is asked of the driver once.
    fn check_owned(&mut self, accesses: &[Access], in_scope: bool) -> Result<()> {
        for access in accesses.iter().filter(|a| a.bytes > 0) {
            if in_scope && self.owned_in_scope.contains(&access.address) {
                continue;
            }
            let foreign = |found: String| Error::ForeignBuffer {
                buffer: access.name,
                address: access.address,
                found,
            };
            let context = pointer_attribute(access.address, CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT)
                .map_err(|status| foreign(format!("not CUDA memory ({status:?})")))?;
            if context != self.context {
                if context != 0 {
                    return Err(foreign(format!("memory of another context ({context:#x})")));
                }
                let ordinal =
                    pointer_attribute(access.address, CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
                        .map_err(|status| foreign(format!("memory of no device ({status:?})")))?;
                if ordinal != self.ordinal {
                    return Err(foreign(format!("memory of device {ordinal}")));
                }
            }
            if in_scope {
                self.owned_in_scope.insert(access.address);
            }
        }
        Ok(())
    }

    /// `kernel`'s handle and grid cap, loading it on first use, checked to
    /// run with the smallest block it is launched with: the tuning row's, or
    /// for an axis kernel a quarter of it ([`Launcher::axis_block`] then
    /// picks among those it can run).
    fn kernel(&mut self, kernel: Kernel) -> Result<(KernelHandle, u32)> {
        if let Some(&loaded) = self.loaded.get(&kernel) {
            return Ok(loaded);
        }
        let name = kernel.name().ok_or(Error::MissingKernel(kernel))?;
        let block = match AxisArgs::fits(kernel) {
            true => *axis_blocks(self.tuning.block_threads).last().unwrap_or(&32),
            false => self.tuning.block_threads,
        };
        let (sms, max_grid) = (self.sms, self.max_grid);
        let function: Function<'_> = self.module(kernel.module())?.get_function(name)?;
        let per_sm = function.max_active_blocks_per_multiprocessor(BlockSize::x(block), 0)?;
        if per_sm == 0 {
            return Err(Error::InvalidPolicy(format!(
                "{name} cannot run with {block} threads per block on this device"
            )));
        }
        let loaded = (
            KernelHandle(function.to_raw()),
            sms.saturating_mul(per_sm).min(max_grid),
        );
        self.loaded.insert(kernel, loaded);
        Ok(loaded)
    }

    /// `module`, loaded on first use: from the device's machine code, or
    /// from PTX, which the driver compiles (and caches on disk).
    fn module(&mut self, module: Module) -> Result<&LoadedModule> {
        let index = match self.modules.iter().position(|(loaded, _)| *loaded == module) {
            Some(index) => index,
            None => {
                let loaded = match load(self.image, module) {
                    Err(cubin_error) => match self.fallback {
                        Some(ptx) => load(ptx, module).map_err(|_| cubin_error)?,
                        None => return Err(cubin_error),
                    },
                    loaded => loaded?,
                };
                self.modules.push((module, loaded));
                self.modules.len().saturating_sub(1)
            }
        };
        self.modules
            .get(index)
            .map(|(_, loaded)| loaded)
            .ok_or(Error::Cuda(CudaError::InvalidValue))
    }
}

/// The blocks an axis kernel may launch with, largest first: the power of
/// two of the tuning row's `tuned` threads, half and a quarter of it (at
/// least a warp).
fn axis_blocks(tuned: u32) -> [u32; 3] {
    let largest = tuned.checked_ilog2().map_or(32, |log2| 1 << log2);
    [largest, largest / 2, largest / 4].map(|threads| threads.max(32))
}

/// Loads `module` from `image` into the current context.
fn load(image: Image, module: Module) -> Result<LoadedModule> {
    let bytes = image.module(module)?;
    Ok(match image {
        Image::Cubin(_) => LoadedModule::from_cubin(&bytes, &[])?,
        Image::Ptx(_) => {
            let text = CStr::from_bytes_with_nul(&bytes).map_err(|e| Error::BrokenModule {
                module: module.to_string(),
                image: image.describe(),
                problem: e.to_string(),
            })?;
            LoadedModule::from_ptx_cstr(text, &[])?
        }
    })
}

/// `CU_STREAM_PER_THREAD`: the handle of the calling thread's default stream.
const PER_THREAD_STREAM: CUstream = 0x2 as CUstream;

/// Most parameters any entry point has (the axis ones).
const MAX_PARAMETERS: usize = kernels_gpu::abi::MAX_KERNEL_WORDS;

impl Launcher for Cuda {
    type Slice<T: DeviceCopy> = DeviceSlice<T>;
    type Buffer<T: DeviceCopy> = DeviceBuffer<T>;

    fn parts<T: DeviceCopy>(slice: &DeviceSlice<T>) -> (u64, usize) {
        (slice.as_device_ptr().as_raw(), slice.len())
    }

    fn as_slice_mut<T: DeviceCopy>(buffer: &mut DeviceBuffer<T>) -> &mut DeviceSlice<T> {
        buffer
    }

    fn alloc<T: DeviceCopy>(&mut self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: the caller writes every element before reading it (each
        // segment's team writes its result), or drops the buffer.
        Ok(unsafe { DeviceBuffer::uninitialized(len)? })
    }

    fn to_host<T: DeviceCopy + Default>(&mut self, slice: &DeviceSlice<T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); slice.len()];
        slice.copy_to(&mut host[..])?;
        Ok(host)
    }

    fn element_to_host<T: DeviceCopy + Default>(&mut self, slice: &DeviceSlice<T>, index: u64) -> Result<T> {
        let index = usize::try_from(index)
            .ok()
            .filter(|&index| index < slice.len())
            .ok_or(Error::Cuda(CudaError::InvalidValue))?;
        let mut element = [T::default()];
        slice.index(index).copy_to(&mut element[..])?;
        let [element] = element;
        Ok(element)
    }

    fn tuning(&self) -> Tuning {
        self.tuning
    }

    fn grid_cap(&mut self, kernel: Kernel) -> Result<u32> {
        Ok(self.kernel(kernel)?.1)
    }

    fn axis_block(&mut self, kernel: Kernel) -> Result<(u32, u32)> {
        if let Some(&chosen) = self.axis_blocks.get(&kernel) {
            return Ok(chosen);
        }
        // Loaded, and checked to run with the smallest candidate.
        let (_, smallest_cap) = self.kernel(kernel)?;
        let name = kernel.name().ok_or(Error::MissingKernel(kernel))?;
        let (tuned, sms, max_grid) = (self.tuning.block_threads, self.sms, self.max_grid);
        let function: Function<'_> = self.module(kernel.module())?.get_function(name)?;
        // Threads resident per SM with blocks of `threads`, within the
        // workspace's grid (its tickets bound an axis launch's tiles).
        let resident = |threads: u32| -> Result<u32> {
            let shared = threads.saturating_mul(PARTIAL_SLOT_BYTES as u32) as usize;
            let per_sm = function.max_active_blocks_per_multiprocessor(BlockSize::x(threads), shared)?;
            Ok(per_sm
                .min(max_grid.checked_div(sms).unwrap_or(1))
                .saturating_mul(threads))
        };
        let mut candidates = Vec::with_capacity(3);
        for threads in axis_blocks(tuned) {
            candidates.push((threads, resident(threads)?));
        }
        // A block the kernel's registers do not fit has none resident.
        let best = candidates.iter().map(|&(_, here)| here).max().unwrap_or(0);
        let mut chosen = (axis_blocks(tuned).last().copied().unwrap_or(32), smallest_cap);
        for (threads, here) in candidates {
            if u64::from(here) * 4 > u64::from(best) * 3 {
                let blocks = here
                    .checked_div(threads)
                    .unwrap_or(1)
                    .saturating_mul(sms)
                    .clamp(1, max_grid);
                chosen = (threads, blocks);
                break;
            }
        }
        self.axis_blocks.insert(kernel, chosen);
        Ok(chosen)
    }

    fn workspace(&mut self, stream: Option<StreamHandle>) -> Result<Workspace> {
        let w = self.stream_workspace(stream)?;
        Ok(Workspace {
            partials: w.partials.as_device_ptr().as_raw(),
            ticket: w.ticket.as_device_ptr().as_raw(),
            segment_tickets: w.segment_tickets.as_device_ptr().as_raw(),
            sink: w.sink.as_device_ptr().as_raw(),
        })
    }

    fn scratch(&mut self, stream: Option<StreamHandle>, words: usize) -> Result<u64> {
        let w = self.stream_workspace(stream)?;
        if w.scratch.as_ref().is_none_or(|b| b.len() < words) {
            w.scratch = Some(DeviceBuffer::zeroed(words.max(1))?);
        }
        Ok(w.scratch.as_ref().map_or(0, |b| b.as_device_ptr().as_raw()))
    }

    fn result_slot(&mut self) -> u64 {
        self.result.as_device_ptr().as_raw()
    }

    fn read_result_slot(&mut self) -> Result<[u64; 2]> {
        // SAFETY: `result_host` is pinned and not touched until the stream is synchronized.
        unsafe { self.result.async_copy_to(&mut *self.result_host, &self.stream)? };
        self.stream.synchronize()?;
        <[u64; 2]>::try_from(&*self.result_host).map_err(|_| Error::Cuda(CudaError::InvalidValue))
    }

    unsafe fn zero_words(&mut self, address: u64, count: usize, stream: Option<StreamHandle>) -> Result<()> {
        let stream = self.enqueue_on(stream)?;
        // SAFETY: `count` writable 4-byte words at `address`, as the caller promises.
        Ok(driver_result(unsafe {
            cust::sys::cuMemsetD32Async(address, 0, count, stream)
        })?)
    }

    unsafe fn submit<A: EntryArgs>(&mut self, launch: &Launch<'_, A>, stream: Option<StreamHandle>) -> Result<()> {
        if !A::fits(launch.kernel) {
            return Err(Error::MissingKernel(launch.kernel));
        }
        self.check_owned(launch.accesses, stream.is_some())?;
        let stream = self.enqueue_on(stream)?;
        let (handle, _) = self.kernel(launch.kernel)?;
        // Arrays, not vectors: no allocation per launch.
        let mut words = [0u64; MAX_PARAMETERS];
        let source = launch.args.as_words();
        let used = words
            .get_mut(..source.len())
            .ok_or(Error::MissingKernel(launch.kernel))?;
        used.copy_from_slice(source);
        let mut parameters = [std::ptr::null_mut::<c_void>(); MAX_PARAMETERS];
        for (parameter, word) in parameters.iter_mut().zip(words.iter_mut()) {
            *parameter = word as *mut u64 as *mut c_void;
        }
        // SAFETY: `handle` belongs to the module this backend keeps loaded in
        // the current context; each parameter points to one `u64` of the
        // argument struct, which `A::fits` matched to the kernel's family;
        // the caller promises the addresses, shape and shared memory.
        let code = unsafe {
            cuLaunchKernel(
                handle.0,
                launch.shape.blocks,
                1,
                1,
                launch.shape.threads_per_block,
                1,
                1,
                launch.shared_bytes,
                stream,
                parameters.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        Ok(driver_result(code)?)
    }
}

impl StreamWorkspace {
    /// A workspace for grids of up to `max_grid` blocks.
    fn new(max_grid: u32) -> Result<Self> {
        let slots = max_grid as usize;
        // What cust reports for an element count whose bytes overflow `usize`.
        let partials = partial_words(max_grid).ok_or(CudaError::InvalidMemoryAllocation)?;
        Ok(StreamWorkspace {
            partials: DeviceBuffer::zeroed(partials)?,
            // Zeroed once: every launch leaves the tickets at zero again.
            ticket: DeviceBuffer::zeroed(1)?,
            segment_tickets: DeviceBuffer::zeroed(slots.max(4))?,
            scratch: None,
            sink: DeviceBuffer::zeroed(2)?,
        })
    }
}

/// The current context's handle, or [`Error::NoContext`].
pub(crate) fn current_context() -> Result<CUcontext> {
    let mut context: CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle to a valid location.
    let status = unsafe { cust::sys::cuCtxGetCurrent(&mut context) };
    if status != cust::sys::cudaError_enum::CUDA_SUCCESS || context.is_null() {
        return Err(Error::NoContext);
    }
    Ok(context)
}

/// What the driver says of `address`'s `attribute` (a context handle or
/// an `int` or a 64-bit id, in the low bytes of a zeroed word).
fn pointer_attribute(address: u64, attribute: CUpointer_attribute) -> Result<u64, CudaError> {
    let mut value = 0u64;
    // SAFETY: the driver writes one handle or id (8 bytes) or one `int` (4)
    // to the word, and does not touch the memory at `address`.
    driver_result(unsafe { cust::sys::cuPointerGetAttribute((&mut value as *mut u64).cast(), attribute, address) })?;
    Ok(value)
}

/// A kernel handle, valid while the module it came from is loaded.
#[derive(Clone, Copy, Debug)]
struct KernelHandle(CUfunction);

// SAFETY: a CUfunction is an opaque driver handle usable from any thread that
// has its context current (the same reasoning as cust's `Function`).
unsafe impl Send for KernelHandle {}
unsafe impl Sync for KernelHandle {}

fn compute_capability(device: Device) -> Result<(u32, u32)> {
    let major = device.get_attribute(DeviceAttribute::ComputeCapabilityMajor)?;
    let minor = device.get_attribute(DeviceAttribute::ComputeCapabilityMinor)?;
    Ok((u32::try_from(major).unwrap_or(0), u32::try_from(minor).unwrap_or(0)))
}

/// The `CudaError` for a driver status (cust's own conversion is private).
fn driver_result(code: cudaError_enum) -> Result<(), CudaError> {
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
