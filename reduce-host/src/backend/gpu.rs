//! The GPU backend: the kernels' modules loaded into the current context
//! as they are first used, a stream, and a workspace per stream launched on,
//! over the driver calls of [`super::driver`]. Its buffers are raw views
//! ([`RawSlice`]), which the cudarc interop makes from cudarc's buffers; the
//! cust backend ([`super::Cuda`]) is this one with cust's buffer types.

use super::driver::{
    self, current_context, device_attribute, pointer_attribute, synchronize, CUfunction, CUpointer_attribute, CUstream,
    DeviceAttribute, DeviceMemory, LoadedModule, PinnedWords, RawSlice,
};
use super::images::Image;
use super::launcher::{partial_words, Access, Launch, Launcher, StreamHandle, Workspace};
use super::lending::{Lending, StreamKey};
use crate::error::{CudaError, Error, Result};
use crate::policy::Policy;
use crate::tuning::Tuning;
use crate::user::program::{splice, Program};
use cust_core::DeviceCopy;
use kernels_gpu::abi::{AxisArgs, Kernel, KernelArgs, KernelMap, Module, PARTIAL_SLOT_BYTES};
use kernels_gpu::dispatch::EntryArgs;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_void, CStr, CString};
use std::sync::Arc;

/// Kernels run on the GPU of the context that was current when the backend
/// was created, on buffers given as raw views.
#[derive(Debug)]
pub(crate) struct Gpu {
    /// Each kernel launched so far: its handle (valid while its module is
    /// loaded) and its largest useful grid (SMs × resident blocks per SM).
    loaded: KernelMap<(KernelHandle, u32)>,
    /// The axis launches' blocks and grid caps, by kernel ([`Launcher::axis_block`]).
    axis_blocks: KernelMap<(u32, u32)>,
    tuning: Tuning,
    /// Streaming multiprocessors of the device.
    sms: u32,
    /// Bytes of the device's L2 cache.
    l2_bytes: u64,
    /// An upper bound of every kernel's grid cap: the workspace's size.
    max_grid: u32,
    /// The blocking calls' stream, which the backend's owner keeps alive
    /// ([`Gpu::new`]).
    stream: CUstream,
    /// The own stream's workspace.
    own: StreamWorkspace,
    /// The workspaces of the caller's streams, each lent to one stream
    /// (`lending.rs`): in a [`Scope`](crate::Scope), to each stream launched
    /// on in it, until the scope ends (the scope borrows those streams, so
    /// no handle is reused while it lasts; the idle ones are for the next
    /// scopes, bounded by the most streams one scope used); for the cudarc
    /// interop, to each stream until an event recorded after its launches
    /// has completed (holding the stream meanwhile), then to the next.
    lending: Lending<StreamWorkspace>,
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
    result: DeviceMemory<u64>,
    /// The driver's process-wide unique id of the `result` allocation, never
    /// reused: while it still names that allocation, the context is alive.
    #[cfg_attr(not(feature = "cust"), allow(dead_code))]
    result_id: u64,
    result_host: PinnedWords,
    /// Where modules are loaded from: the device's machine code or PTX, and
    /// the PTX to fall back on if the machine code does not load (a driver
    /// older than the assembler that made it).
    image: Image,
    fallback: Option<Image>,
    /// [`Launcher::set_user`]'s operator, which the `Op::User` kernels
    /// launched now call.
    user: Option<Program>,
    /// The user operators' kernels loaded so far, by kernel and operator
    /// fingerprint, with the operator's PTX (compared, not only hashed).
    user_loaded: HashMap<(Kernel, u64), (Arc<str>, KernelHandle, u32)>,
    /// The modules loaded so far, and the user modules with the operator
    /// spliced in whose PTX they hold. Declared last, so dropped after
    /// everything that points into them.
    modules: Vec<(Module, LoadedModule)>,
    user_modules: Vec<(Module, Arc<str>, LoadedModule)>,
}

// SAFETY: the driver handles (stream, kernels, modules) are usable from any
// thread that has their context current (the cudarc interop binds it for
// each call; a `Reducer<Cuda>` is used where its context is current, as
// cust's objects are).
unsafe impl Send for Gpu {}
// SAFETY: nothing of a shared `Gpu` is written (every change takes `&mut`),
// and its handles may be read from several threads at once.
unsafe impl Sync for Gpu {}

/// What one stream's launches write besides their results.
#[derive(Debug)]
struct StreamWorkspace {
    partials: DeviceMemory<u64>,
    /// Zero between launches (every launch leaves it at zero).
    ticket: DeviceMemory<u32>,
    /// Zero between launches.
    segment_tickets: DeviceMemory<u32>,
    /// The axis and ladder launches' scratch; grown on demand, never shrunk.
    scratch: Option<DeviceMemory<u64>>,
    /// Where cast reductions' results wait for their conversion; grown on
    /// demand, never shrunk.
    cast_scratch: Option<DeviceMemory<u64>>,
    /// Scratch outgrown on a caller's stream: launches enqueued there may
    /// still use it, so it is freed when the stream is known idle (the
    /// scope ended; for the cudarc interop, a blocking call found the
    /// workspace's event completed).
    retired: Vec<DeviceMemory<u64>>,
    /// Written, never read ([`Workspace::sink`]).
    sink: DeviceMemory<u64>,
    /// The cudarc interop's: recorded on the stream after each call's
    /// launches, so that it completes once no launch may use the workspace.
    #[cfg(feature = "cudarc")]
    done: Option<driver::Event>,
    /// Whether work may have been enqueued with this workspace since `done`
    /// was last recorded (set when it is lent for a call, cleared when the
    /// call's event is recorded): then `done` does not cover it, and the
    /// workspace is not known idle.
    #[cfg(feature = "cudarc")]
    unrecorded: bool,
    /// Whether `done` decides when the workspace is idle: only for a made
    /// stream. On an H100 (2026-11-27) a default stream's workspace was
    /// seen taken back while its stream was still held (tests/cudarc.rs's
    /// ignored tests); until that is understood, a workspace lent to the
    /// legacy or a per-thread default stream stays lent until the context
    /// is waited for ([`Gpu::tidy`] past [`DEFAULT_STREAM_WORKSPACES`], or
    /// the drop).
    #[cfg(feature = "cudarc")]
    event_decides: bool,
}

impl Gpu {
    /// A backend for the current context's device, with `policy` or the
    /// tuned one for the device, whose blocking calls run on `stream`.
    /// Loads no kernel: each module is loaded when one of its kernels is
    /// first launched.
    ///
    /// # Safety
    /// `stream` is a stream of the current context that outlives the backend.
    pub(crate) unsafe fn new(policy: Option<Policy>, stream: CUstream) -> Result<Self> {
        let context = current_context()?;
        let device = driver::current_device()?;
        let attribute = |a: DeviceAttribute| device_attribute(device, a);
        let (major, minor) = (
            attribute(DeviceAttribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attribute(DeviceAttribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let tuned = Policy::tuning_for(major, minor)?;
        let tuning = Tuning {
            block_threads: policy.map_or(tuned.block_threads, Policy::block_threads),
            ..tuned
        };
        let image = Image::for_device(major, minor)?;
        let fallback = Image::ptx_for_device(major, minor)
            .ok()
            .filter(|_| matches!(image, Image::Cubin(_)));
        let sms = attribute(DeviceAttribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let threads_per_sm = attribute(DeviceAttribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
        let l2_bytes = u64::from(attribute(DeviceAttribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?);
        let blocks_per_sm = threads_per_sm
            .checked_div(tuning.block_threads)
            .ok_or_else(|| Error::InvalidPolicy("a block of 0 threads cannot be launched".to_string()))?;
        let max_grid = sms.saturating_mul(blocks_per_sm.max(1)).max(1);
        // SAFETY: the caller's stream (`new`'s promise).
        let result = unsafe { DeviceMemory::zeroed(2, stream)? };
        let result_id = pointer_attribute(result.address(), CUpointer_attribute::CU_POINTER_ATTRIBUTE_BUFFER_ID)?;
        Ok(Gpu {
            loaded: KernelMap::default(),
            axis_blocks: KernelMap::default(),
            tuning,
            sms,
            l2_bytes,
            max_grid,
            stream,
            // SAFETY: as `result`.
            own: unsafe { StreamWorkspace::new(max_grid, stream)? },
            lending: Lending::default(),
            owned_in_scope: HashSet::new(),
            context: context as u64,
            ordinal: u64::try_from(device).unwrap_or(u64::MAX),
            result,
            result_id,
            result_host: PinnedWords::new()?,
            image,
            fallback,
            user: None,
            user_loaded: HashMap::new(),
            modules: Vec::new(),
            user_modules: Vec::new(),
        })
    }

    /// Whether the context this backend was made in is still alive and is
    /// `context`. A destroyed context's handle may be given to a new
    /// context, so the handle alone cannot tell; the unique id of the
    /// backend's own allocation can.
    #[cfg(feature = "cust")]
    pub(crate) fn is_alive_in(&self, context: driver::CUcontext) -> bool {
        self.is_alive() && self.context == context as u64
    }

    /// Whether this backend's context still exists (its allocations do):
    /// only then may its driver handles be used, or freed.
    #[cfg(feature = "cust")]
    pub(crate) fn is_alive(&self) -> bool {
        let address = self.result.address();
        pointer_attribute(address, CUpointer_attribute::CU_POINTER_ATTRIBUTE_BUFFER_ID) == Ok(self.result_id)
    }

    /// `stream`'s workspace (the own stream's for `None`). A caller's stream
    /// gets one on its first use in a scope (an idle one, or a new one), which
    /// also enrolls it among the streams the scope waits for: every launch
    /// and memset on a caller's stream comes through here. The per-thread
    /// default stream is the calling thread's ([`StreamKey`]).
    fn stream_workspace(&mut self, stream: Option<StreamHandle>) -> Result<&mut StreamWorkspace> {
        let Some(stream) = stream else {
            return Ok(&mut self.own);
        };
        let handle = stream.0 as usize;
        let max_grid = self.max_grid;
        self.lending.lend(StreamKey::on_this_thread(handle), handle, None, || {
            // SAFETY: a caller's stream is live while it is lent a workspace
            // (a scope borrows it; the cudarc interop holds it).
            unsafe { StreamWorkspace::new(max_grid, stream.0) }
        })
    }

    /// `stream`'s handle (the own stream's for `None`), with the stream
    /// enrolled in the current scope.
    fn enqueue_on(&mut self, stream: Option<StreamHandle>) -> Result<CUstream> {
        self.stream_workspace(stream)?;
        Ok(stream.map_or(self.stream, |s| s.0))
    }

    /// Allocates `stream`'s workspace in the current scope now, if it has
    /// none (see [`Scope::prepare`](crate::Scope::prepare)).
    #[cfg(feature = "cust")]
    pub(crate) fn prepare(&mut self, stream: StreamHandle) -> Result<()> {
        self.enqueue_on(Some(stream)).map(|_| ())
    }

    /// Waits for every stream launched on in the current scope; the first
    /// error, after waiting for all. Another thread's per-thread default
    /// stream, which no handle reaches from here, is waited for with the
    /// whole context.
    #[cfg(feature = "cust")]
    pub(crate) fn synchronize_scope(&self) -> Result<()> {
        let mut first_error = Ok(());
        let mut context_waited = false;
        for lent in self.lending.lent() {
            let status = if lent.key.is_reachable_here() {
                // SAFETY: the scope borrows the stream, so the handle is live.
                unsafe { synchronize(lent.handle as CUstream) }
            } else if !context_waited {
                context_waited = true;
                // SAFETY: the backend's context, alive while its memory is.
                unsafe { driver::synchronize_context(self.context as driver::CUcontext) }
            } else {
                Ok(())
            };
            first_error = first_error.and(status.map_err(Error::from));
        }
        first_error
    }

    /// Ends the current scope: its streams' workspaces become idle, for the
    /// next scope (the caller has waited for the work that used them).
    #[cfg(feature = "cust")]
    pub(crate) fn end_scope(&mut self) {
        self.lending.take_back_all();
        for workspace in self.lending.idle_mut() {
            workspace.retired.clear();
        }
        self.forget_owned();
    }

    /// Lends `stream` a workspace for the cudarc interop's launches, holding
    /// `hold` (the stream) while it is lent: its own, or, for a stream that
    /// has none, one whose launches are known to have completed (asked
    /// without waiting of the event recorded after them), or a new one.
    /// Then the workspace has an event, which [`Gpu::record_launched`]
    /// records after the call's launches. With the context current.
    #[cfg(feature = "cudarc")]
    pub(crate) fn lend_to(&mut self, stream: StreamHandle, hold: super::lending::Hold) -> Result<()> {
        let handle = stream.0 as usize;
        let key = StreamKey::on_this_thread(handle);
        if self.lending.get_mut(key).is_none() {
            self.lending.take_back_done(Some(key), StreamWorkspace::is_done)?;
        }
        let max_grid = self.max_grid;
        let workspace = self.lending.lend(key, handle, Some(hold), || {
            // SAFETY: the interop's caller's stream, held while it is lent.
            unsafe { StreamWorkspace::new(max_grid, stream.0) }
        })?;
        // From here work may be enqueued with it (a new one's zeroing is
        // already): not known idle until the call's event is recorded.
        workspace.unrecorded = true;
        workspace.event_decides = matches!(key, StreamKey::Made(_));
        if workspace.done.is_none() {
            workspace.done = Some(driver::Event::new()?);
        }
        Ok(())
    }

    /// Records `stream`'s workspace's event after the launches enqueued on
    /// `stream` so far (on the calling thread, as they were).
    #[cfg(feature = "cudarc")]
    pub(crate) fn record_launched(&mut self, stream: StreamHandle) -> Result<()> {
        let key = StreamKey::on_this_thread(stream.0 as usize);
        let workspace = self
            .lending
            .get_mut(key)
            .ok_or_else(|| Error::internal("a launch on a stream with no workspace"))?;
        let event = workspace
            .done
            .as_ref()
            .ok_or_else(|| Error::internal("a workspace without its event"))?;
        // SAFETY: the held stream the launches went to, with the context
        // current (the interop binds it for each call).
        unsafe { event.record(stream.0) }?;
        // The event follows everything enqueued on the stream so far.
        workspace.unrecorded = false;
        Ok(())
    }

    /// Takes `stream`'s workspace out of use for good, without freeing it:
    /// for one whose launches can be neither recorded nor waited for (a
    /// broken context), which must not be freed or lent while they may run.
    #[cfg(feature = "cudarc")]
    pub(crate) fn abandon(&mut self, stream: StreamHandle) {
        if let Some(lent) = self.lending.remove(StreamKey::on_this_thread(stream.0 as usize)) {
            std::mem::forget(lent.workspace);
        }
    }

    /// Takes back every workspace whose launches have completed (without
    /// waiting), and frees the scratch the idle ones outgrew: for the
    /// interop's blocking calls, which may free (a free can wait for the
    /// device), unlike its `_into` calls.
    #[cfg(feature = "cudarc")]
    pub(crate) fn tidy(&mut self) -> Result<()> {
        let on_default_streams = self
            .lending
            .lent()
            .iter()
            .filter(|lent| !matches!(lent.key, StreamKey::Made(_)))
            .count();
        if on_default_streams > DEFAULT_STREAM_WORKSPACES {
            // Bounds what threads that come and go leave lent: the
            // default streams' workspaces are known idle only once the
            // whole context is (see `StreamWorkspace::event_decides`).
            // SAFETY: the backend's context, alive while its memory is.
            unsafe { driver::synchronize_context(self.context as driver::CUcontext) }?;
            self.lending.take_back_all();
        }
        self.lending.take_back_done(None, StreamWorkspace::is_done)?;
        for workspace in self.lending.idle_mut() {
            workspace.retired.clear();
        }
        Ok(())
    }

    /// Waits for the launches of every lent workspace (their events; the
    /// whole context where a workspace has none that covers them, as the
    /// stream's handle might not reach the stream from this thread): before
    /// the workspaces and modules are freed.
    #[cfg(feature = "cudarc")]
    pub(crate) fn wait_lent(&self) -> Result<()> {
        let mut first_error = Ok(());
        for lent in self.lending.lent() {
            let status = match &lent.workspace.done {
                Some(event) if !lent.workspace.unrecorded => event.synchronize(),
                // SAFETY: the backend's context, alive while its memory is.
                _ => unsafe { driver::synchronize_context(self.context as driver::CUcontext) },
            };
            first_error = first_error.and(status.map_err(Error::from));
        }
        // The default streams' events are not trusted
        // (`StreamWorkspace::event_decides`): where one of them holds a
        // workspace, the whole context is waited for.
        if self
            .lending
            .lent()
            .iter()
            .any(|lent| !matches!(lent.key, StreamKey::Made(_)))
        {
            // SAFETY: the backend's context, alive while its memory is.
            let status = unsafe { driver::synchronize_context(self.context as driver::CUcontext) };
            first_error = first_error.and(status.map_err(Error::from));
        }
        first_error
    }

    /// How many workspaces are lent to callers' streams, and how many idle.
    #[cfg(feature = "cudarc")]
    pub(crate) fn workspace_counts(&self) -> (usize, usize) {
        self.lending.counts()
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
        if kernel.module().is_user() {
            return self.user_kernel(kernel);
        }
        if let Some(&loaded) = self.loaded.get(&kernel) {
            return Ok(loaded);
        }
        let loaded = self.load_kernel(kernel)?;
        self.loaded.insert(kernel, loaded);
        Ok(loaded)
    }

    /// A user operator's `kernel` with the operator set now
    /// ([`Launcher::set_user`]), as [`Gpu::kernel`].
    fn user_kernel(&mut self, kernel: Kernel) -> Result<(KernelHandle, u32)> {
        let program = self.user.as_ref().ok_or(Error::missing_kernel(kernel))?;
        let key = (kernel, program.fingerprint);
        if let Some((ptx, handle, cap)) = self.user_loaded.get(&key) {
            if **ptx == *program.ptx {
                return Ok((*handle, *cap));
            }
        }
        let ptx = program.ptx.clone();
        let loaded = self.load_kernel(kernel)?;
        self.user_loaded.insert(key, (ptx, loaded.0, loaded.1));
        Ok(loaded)
    }

    /// `kernel` loaded, with its grid cap (see [`Gpu::kernel`]).
    fn load_kernel(&mut self, kernel: Kernel) -> Result<(KernelHandle, u32)> {
        let name = kernel.name().ok_or(Error::missing_kernel(kernel))?;
        let block = match AxisArgs::fits(kernel) {
            true => *axis_blocks(self.tuning.block_threads).last().unwrap_or(&32),
            false => self.tuning.block_threads,
        };
        let (sms, max_grid) = (self.sms, self.max_grid);
        let function = self.function(kernel, name)?;
        let per_sm = driver::max_active_blocks(function, block, 0)?;
        if per_sm == 0 {
            return Err(Error::InvalidPolicy(format!(
                "{name} cannot run with {block} threads per block on this device"
            )));
        }
        Ok((KernelHandle(function), sms.saturating_mul(per_sm).min(max_grid)))
    }

    /// `kernel`, named `name`, from its module (loaded on first use; a
    /// user module with the operator set now).
    fn function(&mut self, kernel: Kernel, name: &str) -> Result<CUfunction> {
        let name = CString::new(name).map_err(|_| Error::missing_kernel(kernel))?;
        let module = match kernel.module() {
            module if module.is_user() => self.user_module(module, kernel)?,
            module => self.module(module)?,
        };
        Ok(module.function(&name)?)
    }

    /// The user module `module` with the operator set now spliced in,
    /// loaded on first use: the driver compiles it from the PTX (a user
    /// module has no machine code), its log in the error if it cannot.
    fn user_module(&mut self, module: Module, kernel: Kernel) -> Result<&LoadedModule> {
        let program = self.user.clone().ok_or(Error::missing_kernel(kernel))?;
        let found = self
            .user_modules
            .iter()
            .position(|(loaded, ptx, _)| *loaded == module && **ptx == *program.ptx);
        let index = match found {
            Some(index) => index,
            None => {
                let image = match self.image {
                    Image::Ptx(_) => self.image,
                    Image::Cubin(_) => self.fallback.ok_or(Error::missing_kernel(kernel))?,
                };
                let mut bytes = image.module(module)?;
                bytes.pop(); // its NUL
                let broken = |problem: String| Error::BrokenModule {
                    module: module.to_string(),
                    image: image.describe(),
                    problem,
                };
                let text = String::from_utf8(bytes).map_err(|e| broken(e.to_string()))?;
                let spliced = splice(&text, &program).ok_or_else(|| broken("no .address_size line".to_string()))?;
                let mut bytes = spliced.into_bytes();
                bytes.push(0);
                let loaded = LoadedModule::load_logged(&bytes).map_err(|(error, log)| {
                    Error::UserOperator(format!(
                        "the driver could not compile the {module} kernels with it ({error:?}): {}",
                        log.trim()
                    ))
                })?;
                self.user_modules.push((module, program.ptx.clone(), loaded));
                self.user_modules.len().saturating_sub(1)
            }
        };
        self.user_modules
            .get(index)
            .map(|(_, _, loaded)| loaded)
            .ok_or_else(|| Error::internal("a user module lost from the cache"))
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
            .ok_or_else(|| Error::internal("a module lost from the cache"))
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
    if let Image::Ptx(_) = image {
        // The driver reads PTX up to its NUL.
        CStr::from_bytes_with_nul(&bytes).map_err(|e| Error::BrokenModule {
            module: module.to_string(),
            image: image.describe(),
            problem: e.to_string(),
        })?;
    }
    Ok(LoadedModule::load(&bytes)?)
}

/// Most parameters any entry point has (the axis ones).
const MAX_PARAMETERS: usize = kernels_gpu::abi::MAX_KERNEL_WORDS;

impl Launcher for Gpu {
    type Slice<T: DeviceCopy> = RawSlice<T>;
    type Buffer<T: DeviceCopy> = DeviceMemory<T>;

    fn parts<T: DeviceCopy>(slice: &RawSlice<T>) -> (u64, usize) {
        (slice.address(), slice.len())
    }

    fn as_slice_mut<T: DeviceCopy>(buffer: &mut DeviceMemory<T>) -> &mut RawSlice<T> {
        buffer.slice_mut()
    }

    fn alloc<T: DeviceCopy>(&mut self, len: usize) -> Result<DeviceMemory<T>> {
        // The caller writes every element before reading it (each segment's
        // team writes its result), or drops the buffer.
        DeviceMemory::uninitialized(len)
    }

    fn to_host<T: DeviceCopy + Default>(&mut self, slice: &RawSlice<T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); slice.len()];
        // SAFETY: the operations read back only what their kernels wrote, of
        // plain-data types (`DeviceCopy`).
        unsafe { driver::copy_to_host(slice.address(), &mut host, self.stream)? };
        Ok(host)
    }

    fn element_to_host<T: DeviceCopy + Default>(&mut self, slice: &RawSlice<T>, index: u64) -> Result<T> {
        let address = usize::try_from(index)
            .ok()
            .filter(|&index| index < slice.len())
            .and_then(|index| super::launcher::element_address::<T>(slice.address(), index))
            .ok_or_else(|| Error::internal(format_args!("element {index} of {} read back", slice.len())))?;
        let mut element = [T::default()];
        // SAFETY: an element of the caller's input, of a plain-data type.
        unsafe { driver::copy_to_host(address, &mut element, self.stream)? };
        let [element] = element;
        Ok(element)
    }

    fn tuning(&self) -> Tuning {
        self.tuning
    }

    fn l2_bytes(&self) -> u64 {
        self.l2_bytes
    }

    fn set_user(&mut self, program: Option<Program>) {
        self.user = program;
    }

    fn grid_cap(&mut self, kernel: Kernel) -> Result<u32> {
        Ok(self.kernel(kernel)?.1)
    }

    fn axis_block(&mut self, kernel: Kernel) -> Result<(u32, u32)> {
        // A user operator's kernel: its registers depend on the operator,
        // so its choice is not kept by kernel.
        let user = kernel.module().is_user();
        if let Some(&chosen) = self.axis_blocks.get(&kernel).filter(|_| !user) {
            return Ok(chosen);
        }
        // Loaded, and checked to run with the smallest candidate.
        let (_, smallest_cap) = self.kernel(kernel)?;
        let name = kernel.name().ok_or(Error::missing_kernel(kernel))?;
        let (tuned, sms, max_grid) = (self.tuning.block_threads, self.sms, self.max_grid);
        let function = self.function(kernel, name)?;
        // Threads resident per SM with blocks of `threads`, within the
        // workspace's grid (its tickets bound an axis launch's tiles).
        let resident = |threads: u32| -> Result<u32> {
            let shared = threads.saturating_mul(PARTIAL_SLOT_BYTES as u32) as usize;
            let per_sm = driver::max_active_blocks(function, threads, shared)?;
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
        if !user {
            self.axis_blocks.insert(kernel, chosen);
        }
        Ok(chosen)
    }

    fn workspace(&mut self, stream: Option<StreamHandle>) -> Result<Workspace> {
        let w = self.stream_workspace(stream)?;
        Ok(Workspace {
            partials: w.partials.address(),
            ticket: w.ticket.address(),
            segment_tickets: w.segment_tickets.address(),
            sink: w.sink.address(),
        })
    }

    fn scratch(&mut self, stream: Option<StreamHandle>, words: usize) -> Result<u64> {
        self.grown_scratch(stream, words, false)
    }

    fn cast_scratch(&mut self, stream: Option<StreamHandle>, words: usize) -> Result<u64> {
        self.grown_scratch(stream, words, true)
    }

    fn result_slot(&mut self) -> u64 {
        self.result.address()
    }

    fn read_result_slot(&mut self) -> Result<[u64; 2]> {
        // SAFETY: the 16-byte result slot, and the own stream.
        unsafe { self.result_host.read(self.result.address(), self.stream) }
    }

    unsafe fn zero_words(&mut self, address: u64, count: usize, stream: Option<StreamHandle>) -> Result<()> {
        let stream = self.enqueue_on(stream)?;
        // SAFETY: `count` writable 4-byte words at `address`, as the caller promises.
        Ok(unsafe { driver::zero_words(address, count, stream) }?)
    }

    unsafe fn submit<A: EntryArgs>(&mut self, launch: &Launch<'_, A>, stream: Option<StreamHandle>) -> Result<()> {
        if !A::fits(launch.kernel) {
            return Err(Error::missing_kernel(launch.kernel));
        }
        self.check_owned(launch.accesses, stream.is_some())?;
        let stream = self.enqueue_on(stream)?;
        let (handle, _) = self.kernel(launch.kernel)?;
        // Arrays, not vectors: no allocation per launch.
        let mut words = [0u64; MAX_PARAMETERS];
        let source = launch.args.as_words();
        let used = words
            .get_mut(..source.len())
            .ok_or(Error::missing_kernel(launch.kernel))?;
        used.copy_from_slice(source);
        let mut parameters = [std::ptr::null_mut::<c_void>(); MAX_PARAMETERS];
        for (parameter, word) in parameters.iter_mut().zip(words.iter_mut()) {
            *parameter = word as *mut u64 as *mut c_void;
        }
        // SAFETY: `handle` belongs to the module this backend keeps loaded in
        // the current context; each parameter points to one `u64` of the
        // argument struct, which `A::fits` matched to the kernel's family;
        // the caller promises the addresses, shape and shared memory.
        Ok(unsafe {
            driver::launch(
                handle.0,
                launch.shape.blocks,
                launch.shape.threads_per_block,
                launch.shared_bytes,
                stream,
                &mut parameters,
            )
        }?)
    }
}

impl Gpu {
    /// At least `words` words of `stream`'s scratch, or of its cast scratch
    /// (`cast`), grown (and the outgrown one retired) if smaller.
    fn grown_scratch(&mut self, stream: Option<StreamHandle>, words: usize, cast: bool) -> Result<u64> {
        let on = self.enqueue_on(stream)?;
        let w = self.stream_workspace(stream)?;
        let StreamWorkspace {
            scratch,
            cast_scratch,
            retired,
            ..
        } = w;
        let buffer = if cast { cast_scratch } else { scratch };
        if buffer.as_ref().is_none_or(|b| b.len() < words) {
            // On a caller's stream the outgrown scratch is kept until the
            // stream is known idle: at least doubling bounds all that is
            // kept by the scratch in use.
            let outgrown = match stream {
                Some(_) => buffer.as_ref().map_or(0, |b| b.len().saturating_mul(2)),
                None => 0,
            };
            // SAFETY: the own stream, or a caller's, live while lent a workspace.
            let grown = unsafe { DeviceMemory::zeroed(words.max(outgrown).max(1), on)? };
            if let Some(outgrown) = buffer.replace(grown) {
                retired.push(outgrown);
                if stream.is_none() {
                    // The own stream is idle once waited for.
                    // SAFETY: the own stream, which the backend's owner keeps alive.
                    unsafe { synchronize(on) }?;
                    retired.clear();
                }
            }
        }
        Ok(buffer.as_ref().map_or(0, DeviceMemory::address))
    }
}

/// How many workspaces the default streams (one per thread for the
/// per-thread stream) may hold before a blocking call waits for the
/// context to take them back.
#[cfg(feature = "cudarc")]
const DEFAULT_STREAM_WORKSPACES: usize = 16;

impl StreamWorkspace {
    /// Whether every launch that used this workspace has completed, asked
    /// without waiting of the event recorded after them (a workspace whose
    /// event does not cover all of them is not known idle).
    #[cfg(feature = "cudarc")]
    fn is_done(&mut self) -> Result<bool> {
        match &self.done {
            Some(event) if !self.unrecorded && self.event_decides => Ok(event.is_done()?),
            _ => Ok(false),
        }
    }

    /// A workspace for grids of up to `max_grid` blocks, for launches on
    /// `stream` (which zeroes it first).
    ///
    /// # Safety
    /// `stream` is a live stream of the current context.
    unsafe fn new(max_grid: u32, stream: CUstream) -> Result<Self> {
        let slots = max_grid as usize;
        let partials = partial_words(max_grid).ok_or(CudaError::OutOfMemory)?;
        let zeroed = |len: usize| -> Result<DeviceMemory<u64>> {
            // SAFETY: the caller's promise.
            unsafe { DeviceMemory::zeroed(len, stream) }
        };
        let zeroed_u32 = |len: usize| -> Result<DeviceMemory<u32>> {
            // SAFETY: the caller's promise.
            unsafe { DeviceMemory::zeroed(len, stream) }
        };
        Ok(StreamWorkspace {
            partials: zeroed(partials)?,
            // Zeroed once: every launch leaves the tickets at zero again.
            ticket: zeroed_u32(1)?,
            segment_tickets: zeroed_u32(slots.max(4))?,
            scratch: None,
            cast_scratch: None,
            retired: Vec::new(),
            sink: zeroed(2)?,
            #[cfg(feature = "cudarc")]
            done: None,
            #[cfg(feature = "cudarc")]
            unrecorded: false,
            #[cfg(feature = "cudarc")]
            event_decides: false,
        })
    }
}

/// A kernel handle, valid while the module it came from is loaded.
#[derive(Clone, Copy, Debug)]
struct KernelHandle(CUfunction);

// SAFETY: a CUfunction is an opaque driver handle usable from any thread that
// has its context current (the same reasoning as cust's `Function`).
unsafe impl Send for KernelHandle {}
unsafe impl Sync for KernelHandle {}
