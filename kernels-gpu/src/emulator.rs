//! The SIMT emulator: runs a kernel launch on the CPU, as the GPU defines it,
//! so the kernels of this crate are tested exactly as written on machines
//! without a GPU. (Host targets only; the device primitives it serves are in
//! `device/emulated.rs`.)
//!
//! # What a launch is here
//! - Every thread of a block is a real OS thread, so a barrier really waits
//!   for all of them and shared memory is really shared. The same
//!   `block_threads` OS threads run every block of the grid.
//! - Blocks run one at a time, in an order shuffled by a seed (the GPU
//!   promises no order, so a kernel that depends on one fails here).
//! - Warps are lanes `32w .. 32w + 31`; `shfl.sync` exchanges values once
//!   every lane of the member mask has arrived, with PTX's rules for source
//!   lanes out of range (the lane keeps its own value).
//! - Shared memory is per block and filled with a poison pattern before each
//!   block. Every access goes through [`check_shared`], a race detector in
//!   the manner of `compute-sanitizer --tool racecheck`: it must fall inside
//!   a shared array, must not read what no thread has written yet, and must
//!   not read what another thread wrote, or write what another thread read
//!   or wrote, without a barrier in between.
//! - Global memory is host memory. Every load, store and atomic goes through
//!   [`check_access`]: it must fall inside one of the launch's [`Buffer`]s,
//!   be aligned to its size, and respect the buffer's access (stores need a
//!   writable buffer; non-coherent loads need one that nothing writes).
//!
//! # Faults instead of hangs
//! Misuse that a GPU turns into a hang or garbage becomes a [`Fault`] naming
//! the kernel, block and thread: a barrier that some threads of the block
//! cannot reach (they returned, or wait at another barrier or shuffle),
//! a shuffle whose member mask leaves out the calling lane or names lanes
//! that never arrive, a lane reading from a lane outside the mask, an access
//! outside every buffer or shared array, a misaligned access, a shared-memory
//! race or read of unwritten shared memory, and any panic in kernel code.
//!
//! # What it cannot show
//! Speed, and races between blocks: blocks run one after another, so the
//! memory-model questions between concurrently running blocks (fences,
//! acquire/release of the grid combine) are only exercised through the
//! orders that sequential execution produces.

use core::fmt;
use std::alloc::{self, Layout};
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A range of host memory that stands for a device buffer of the launch.
#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    /// The name faults use (`"input"`, `"partials"`, ...).
    pub name: &'static str,
    /// Address of the first byte.
    pub address: u64,
    /// Length in bytes.
    pub bytes: u64,
    /// Whether the kernel may write it.
    pub writable: bool,
}

/// How a global access touches memory; decides which buffers allow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A coherent load (`ld.relaxed`): any buffer.
    Load,
    /// A load through the non-coherent path (`ld.global.nc`): only buffers the
    /// launch does not write, or the load could see stale data.
    NonCoherentLoad,
    /// A store: writable buffers.
    Store,
    /// A read-modify-write: writable buffers.
    Atomic,
}

/// One launch: the grid, the block, the memory it may touch.
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'a> {
    /// The kernel's name, for faults.
    pub kernel: &'a str,
    /// Blocks in the 1-D grid (at least 1).
    pub grid_blocks: u32,
    /// Threads per block (1 to 1024).
    pub block_threads: u32,
    /// Bytes of dynamic shared memory per block.
    pub dynamic_shared_bytes: u32,
    /// Seeds the shuffled block order.
    pub block_order_seed: u64,
    /// Every buffer the kernel may touch.
    pub buffers: &'a [Buffer],
}

/// Why an emulated launch failed: a misuse the GPU would turn into a hang or
/// garbage, or a panic in kernel code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The kernel's name.
    pub kernel: String,
    /// The block that faulted.
    pub block: u32,
    /// The thread (within the block) that found the fault.
    pub thread: u32,
    /// What went wrong, and where.
    pub message: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel {}, block {}, thread {}: {}",
            self.kernel, self.block, self.thread, self.message
        )
    }
}

impl std::error::Error for Fault {}

/// How a shared-memory access touches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedAccess {
    Read,
    Write,
}

/// The shared arrays of the device module.
#[derive(Clone, Copy, Debug)]
pub enum SharedArray {
    /// 32 slots of `abi::PARTIAL_SLOT_BYTES`, one per warp.
    WarpSlots,
    /// One 8-byte word.
    BlockWord,
    /// The dynamic shared array, sized at launch.
    Dynamic,
}

/// Runs `kernel` once per thread of every block of the grid `config`
/// describes, with the device primitives answering for the calling thread.
///
/// Returns the first [`Fault`] of the launch; blocks after a faulting one do
/// not run.
pub fn launch(config: &LaunchConfig<'_>, kernel: &(dyn Fn() + Sync)) -> Result<(), Fault> {
    let fault = |message: String| Fault {
        kernel: config.kernel.to_string(),
        block: 0,
        thread: 0,
        message,
    };
    if !(1..=1024).contains(&config.block_threads) || config.grid_blocks == 0 {
        return Err(fault(format!(
            "invalid launch of {} blocks of {} threads (need at least 1 block, 1 to 1024 threads)",
            config.grid_blocks, config.block_threads
        )));
    }
    let launch = Arc::new(Launch::new(config));
    let order = shuffled_blocks(config.grid_blocks, config.block_order_seed);
    std::thread::scope(|scope| {
        let mut all_started = true;
        for thread in 0..config.block_threads {
            let (launch, order) = (&launch, &order);
            let worker = std::thread::Builder::new()
                .name(format!("emulated thread {thread}"))
                .stack_size(256 * 1024);
            if let Err(e) = worker.spawn_scoped(scope, move || run_thread(launch, thread, order, kernel)) {
                launch.record(fault(format!("cannot start emulated thread {thread}: {e}")));
                all_started = false;
                break;
            }
        }
        // The threads wait for this, so none runs a block that lacks a thread.
        launch.lock().start = Some(all_started);
        launch.wake_everyone();
    });
    let state = launch.lock();
    match &state.fault {
        Some(fault) => Err(fault.clone()),
        None => Ok(()),
    }
}

/// The emulated thread running on this OS thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadIds {
    pub thread: u32,
    pub block: u32,
    pub block_threads: u32,
    pub grid_blocks: u32,
}

struct Current {
    ids: ThreadIds,
    launch: Arc<Launch>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// `f` of the calling emulated thread's indices.
///
/// # Panics
/// Outside an emulated launch: device functions have no thread to answer for.
pub(crate) fn with_thread<R>(f: impl FnOnce(&ThreadIds) -> R) -> R {
    CURRENT.with(|current| match &*current.borrow() {
        Some(current) => f(&current.ids),
        None => panic!("a device function was called outside an emulated kernel launch"),
    })
}

fn current() -> (ThreadIds, Arc<Launch>) {
    CURRENT.with(|current| match &*current.borrow() {
        Some(current) => (current.ids, Arc::clone(&current.launch)),
        None => panic!("a device function was called outside an emulated kernel launch"),
    })
}

/// The unwinding payload that stops an emulated thread after a fault; the
/// fault itself is already recorded.
struct Aborted;

fn abort_thread() -> ! {
    panic::resume_unwind(Box::new(Aborted))
}

/// Where an emulated thread of the running block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Running,
    AtBarrier(&'static Location<'static>),
    AtShuffle(&'static Location<'static>),
    Returned,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Running => write!(f, "are running"),
            Phase::AtBarrier(site) => write!(f, "wait at the barrier at {site}"),
            Phase::AtShuffle(site) => write!(f, "wait at the shuffle at {site}"),
            Phase::Returned => write!(f, "have returned"),
        }
    }
}

/// One warp's shuffle in progress.
#[derive(Clone, Copy)]
struct WarpExchange {
    member_mask: u32,
    site: Option<&'static Location<'static>>,
    arrived: u32,
    values: [u32; 32],
    lane_masks: [u32; 32],
    clamps: [u32; 32],
    results: [u32; 32],
    generation: u64,
}

impl WarpExchange {
    const IDLE: WarpExchange = WarpExchange {
        member_mask: 0,
        site: None,
        arrived: 0,
        values: [0; 32],
        lane_masks: [0; 32],
        clamps: [0; 32],
        results: [0; 32],
        generation: 0,
    };
}

struct State {
    phase: Vec<Phase>,
    barrier_arrived: u32,
    barrier_generation: u64,
    warps: Vec<WarpExchange>,
    returned: u32,
    blocks_done: u64,
    /// Whether the launch stopped at the end of the last block to finish
    /// (a fault by then). Its threads read this, not `fault`: a thread that
    /// wakes late may find a fault of the next block, which it must still
    /// run (that block waits for every thread).
    stopped: bool,
    fault: Option<Fault>,
    /// Set once every OS thread is started (`Some(true)`) or one failed to start.
    start: Option<bool>,
    /// Per shared array (in [`SharedArray`] order), per 4-byte word.
    shared_history: [Vec<WordHistory>; 3],
}

impl State {
    /// If no thread of the block can move any more, a description of where
    /// each one is. Barriers and shuffles complete as soon as their last
    /// participant arrives, so "nobody is running" means "stuck for good".
    fn stuck(&self) -> Option<String> {
        if self.phase.contains(&Phase::Running) {
            return None;
        }
        let mut groups: Vec<(Phase, Vec<u32>)> = Vec::new();
        for (thread, &phase) in self.phase.iter().enumerate() {
            match groups.iter_mut().find(|(p, _)| *p == phase) {
                Some((_, threads)) => threads.push(thread as u32),
                None => groups.push((phase, vec![thread as u32])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(phase, threads)| format!("threads {} {phase}", ranges(threads)))
            .collect();
        Some(format!("deadlock: {}", parts.join("; ")))
    }
}

/// `[0, 1, 2, 5, 7, 8]` as `"0-2, 5, 7-8"`.
fn ranges(values: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            values[i].to_string()
        } else {
            format!("{}-{}", values[i], values[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// A shared-memory array, 16-byte aligned.
struct ShadowArray {
    name: &'static str,
    base: *mut u8,
    bytes: usize,
    layout: Layout,
}

/// What shared memory holds before a block writes it.
const POISON: u8 = 0xA5;

/// Who last touched a 4-byte word of shared memory, and in which barrier
/// interval (the block's barrier generation).
#[derive(Clone, Copy, Debug)]
struct WordHistory {
    writer: u32,
    written_in: u64,
    /// The one thread that read it in `read_in`, or [`SEVERAL_READERS`].
    reader: u32,
    read_in: u64,
}

const NEVER: u64 = u64::MAX;
const SEVERAL_READERS: u32 = u32::MAX;

impl WordHistory {
    const UNTOUCHED: WordHistory = WordHistory {
        writer: 0,
        written_in: NEVER,
        reader: 0,
        read_in: NEVER,
    };
}

// SAFETY: the memory is only reached through raw pointers handed to kernel
// code, whose accesses the barriers order, and by the thread that resets it
// between blocks while every other thread waits.
unsafe impl Send for ShadowArray {}
unsafe impl Sync for ShadowArray {}

impl ShadowArray {
    fn new(name: &'static str, bytes: usize) -> Self {
        let layout = Layout::from_size_align(bytes.max(16), 16).expect("shared array size fits a Layout");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc::alloc(layout) };
        if base.is_null() {
            alloc::handle_alloc_error(layout);
        }
        let array = ShadowArray {
            name,
            base,
            bytes,
            layout,
        };
        array.poison();
        array
    }

    /// The byte offset of `[address, address + bytes)` in this array, if inside it.
    fn offset_of(&self, address: u64, bytes: u64) -> Option<u64> {
        let offset = address.checked_sub(self.base as u64)?;
        (offset + bytes <= self.bytes as u64).then_some(offset)
    }

    fn poison(&self) {
        // SAFETY: writes within the allocation, while no kernel code runs.
        unsafe { self.base.write_bytes(POISON, self.layout.size()) }
    }
}

impl Drop for ShadowArray {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { alloc::dealloc(self.base, self.layout) }
    }
}

struct Launch {
    kernel: String,
    block_threads: u32,
    buffers: Vec<Buffer>,
    /// The warp slots, the block word and the dynamic array, in [`SharedArray`] order.
    shared: [ShadowArray; 3],
    state: Mutex<State>,
    /// Barrier completions and block ends.
    block_event: Condvar,
    /// Shuffle completions, one per warp.
    warp_event: Vec<Condvar>,
}

/// Bytes of the warp-slot scratch: 32 slots of `abi::PARTIAL_SLOT_BYTES`, as on the GPU.
const WARP_SLOT_BYTES: usize = 1024;

impl Launch {
    fn new(config: &LaunchConfig<'_>) -> Self {
        let warps = config.block_threads.div_ceil(32) as usize;
        Launch {
            kernel: config.kernel.to_string(),
            block_threads: config.block_threads,
            buffers: config.buffers.to_vec(),
            shared: [
                ShadowArray::new("warp-slot scratch", WARP_SLOT_BYTES),
                ShadowArray::new("block word", 8),
                ShadowArray::new("dynamic shared array", config.dynamic_shared_bytes as usize),
            ],
            state: Mutex::new(State {
                phase: vec![Phase::Running; config.block_threads as usize],
                barrier_arrived: 0,
                barrier_generation: 0,
                warps: vec![WarpExchange::IDLE; warps],
                returned: 0,
                blocks_done: 0,
                stopped: false,
                fault: None,
                start: None,
                shared_history: [WARP_SLOT_BYTES, 8, config.dynamic_shared_bytes as usize]
                    .map(|bytes| vec![WordHistory::UNTOUCHED; bytes.div_ceil(4)]),
            }),
            block_event: Condvar::new(),
            warp_event: (0..warps).map(|_| Condvar::new()).collect(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked while holding it; the
        // state is still consistent (every update is a few plain writes).
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wake_everyone(&self) {
        self.block_event.notify_all();
        self.warp_event.iter().for_each(Condvar::notify_all);
    }

    /// Keeps the first fault of the launch and wakes every waiting thread.
    fn record(&self, fault: Fault) {
        self.lock().fault.get_or_insert(fault);
        self.wake_everyone();
    }

    fn fault_in(&self, mut state: MutexGuard<'_, State>, ids: ThreadIds, message: String) -> ! {
        state.fault.get_or_insert(Fault {
            kernel: self.kernel.clone(),
            block: ids.block,
            thread: ids.thread,
            message,
        });
        drop(state);
        self.wake_everyone();
        abort_thread()
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State>, event: &Condvar) -> MutexGuard<'a, State> {
        event.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The calling thread has finished block `ids.block` (`outcome` is how its
    /// kernel code ended). Waits until every thread has; returns whether the
    /// launch stops here (a fault by the time the block ended).
    fn finish_block(&self, ids: ThreadIds, outcome: std::thread::Result<()>) -> bool {
        let mut state = self.lock();
        if let Err(payload) = outcome {
            if !payload.is::<Aborted>() {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                state.fault.get_or_insert(Fault {
                    kernel: self.kernel.clone(),
                    block: ids.block,
                    thread: ids.thread,
                    message: format!("kernel code panicked: {what}"),
                });
            }
        }
        state.phase[ids.thread as usize] = Phase::Returned;
        state.returned += 1;
        if state.returned == self.block_threads {
            self.end_block(&mut state);
            let stopped = state.stopped;
            drop(state);
            self.wake_everyone();
            return stopped;
        }
        if let Some(stuck) = state.stuck() {
            state.fault.get_or_insert(Fault {
                kernel: self.kernel.clone(),
                block: ids.block,
                thread: ids.thread,
                message: format!("a barrier or shuffle that not every thread reaches: {stuck}"),
            });
            self.wake_everyone();
        }
        let done = state.blocks_done;
        while state.blocks_done == done {
            state = self.wait(state, &self.block_event);
        }
        state.stopped
    }

    /// Every thread has returned: poison shared memory for the next block and
    /// reset the block's state.
    fn end_block(&self, state: &mut State) {
        self.shared.iter().for_each(ShadowArray::poison);
        for history in &mut state.shared_history {
            history.fill(WordHistory::UNTOUCHED);
        }
        state.phase.fill(Phase::Running);
        state.barrier_arrived = 0;
        state.warps.fill(WarpExchange::IDLE);
        state.returned = 0;
        state.blocks_done += 1;
        state.stopped = state.fault.is_some();
    }
}

fn run_thread(launch: &Arc<Launch>, thread: u32, order: &[u32], kernel: &(dyn Fn() + Sync)) {
    let mut state = launch.lock();
    while state.start.is_none() {
        state = launch.wait(state, &launch.block_event);
    }
    let all_started = state.start == Some(true);
    drop(state);
    if !all_started {
        return;
    }
    for &block in order {
        let ids = ThreadIds {
            thread,
            block,
            block_threads: launch.block_threads,
            grid_blocks: order.len() as u32,
        };
        CURRENT.with(|current| {
            *current.borrow_mut() = Some(Current {
                ids,
                launch: Arc::clone(launch),
            })
        });
        let outcome = panic::catch_unwind(AssertUnwindSafe(kernel));
        CURRENT.with(|current| *current.borrow_mut() = None);
        if launch.finish_block(ids, outcome) {
            return;
        }
    }
}

/// `0..blocks` in an order drawn from `seed` (Fisher–Yates with splitmix64).
fn shuffled_blocks(blocks: u32, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..blocks).collect();
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..order.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// The block barrier (`bar.sync 0`) at `site`.
pub(crate) fn barrier(site: &'static Location<'static>) {
    let (ids, launch) = current();
    let mut state = launch.lock();
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
    state.phase[ids.thread as usize] = Phase::AtBarrier(site);
    state.barrier_arrived += 1;
    if state.barrier_arrived == launch.block_threads {
        if let Some(other) = state.phase.iter().position(|&p| p != Phase::AtBarrier(site)) {
            let message = format!(
                "threads wait at different barriers: this one at {site}, thread {other} {}",
                state.phase[other]
            );
            launch.fault_in(state, ids, message);
        }
        state.barrier_arrived = 0;
        state.barrier_generation += 1;
        state.phase.fill(Phase::Running);
        drop(state);
        launch.block_event.notify_all();
        return;
    }
    if let Some(stuck) = state.stuck() {
        launch.fault_in(state, ids, format!("a barrier not every thread reaches: {stuck}"));
    }
    let generation = state.barrier_generation;
    while state.barrier_generation == generation && state.fault.is_none() {
        state = launch.wait(state, &launch.block_event);
    }
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
}

/// `shfl.sync.bfly.b32 d, value, lane_mask, clamp, member_mask` at `site`.
pub(crate) fn shuffle_butterfly(
    value: u32,
    lane_mask: u32,
    clamp: u32,
    member_mask: u32,
    site: &'static Location<'static>,
) -> u32 {
    let (ids, launch) = current();
    let (warp, lane) = ((ids.thread / 32) as usize, ids.thread % 32);
    let lanes_in_warp = (launch.block_threads - 32 * warp as u32).min(32);
    let existing = if lanes_in_warp == 32 {
        u32::MAX
    } else {
        (1 << lanes_in_warp) - 1
    };
    let mut state = launch.lock();
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
    if member_mask & (1 << lane) == 0 {
        let message = format!(
            "shfl.sync at {site} with member mask {member_mask:#010x}, which leaves out the calling lane {lane}"
        );
        launch.fault_in(state, ids, message);
    }
    if member_mask & !existing != 0 {
        let message = format!(
            "shfl.sync at {site} with member mask {member_mask:#010x} names lanes that do not exist: warp {warp} has {lanes_in_warp} threads"
        );
        launch.fault_in(state, ids, message);
    }
    let exchange = &mut state.warps[warp];
    if exchange.arrived != 0 && (exchange.member_mask != member_mask || exchange.site != Some(site)) {
        let message = format!(
            "lanes of warp {warp} disagree: lane {lane} runs the shuffle at {site} with mask {member_mask:#010x}, others the one at {} with mask {:#010x}",
            exchange.site.map_or("?".to_string(), |s| s.to_string()),
            exchange.member_mask
        );
        launch.fault_in(state, ids, message);
    }
    exchange.member_mask = member_mask;
    exchange.site = Some(site);
    exchange.arrived |= 1 << lane;
    exchange.values[lane as usize] = value;
    exchange.lane_masks[lane as usize] = lane_mask;
    exchange.clamps[lane as usize] = clamp;
    state.phase[ids.thread as usize] = Phase::AtShuffle(site);

    let exchange = state.warps[warp];
    if exchange.arrived == member_mask {
        let mut results = [0u32; 32];
        for reader in (0..32).filter(|l| member_mask & (1 << l) != 0) {
            let source = butterfly_source(
                reader,
                exchange.lane_masks[reader as usize],
                exchange.clamps[reader as usize],
            );
            if member_mask & (1 << source) == 0 {
                let message = format!(
                    "shfl.sync at {site}: lane {reader} reads lane {source}, which is not in the member mask {member_mask:#010x} (its value is undefined)"
                );
                launch.fault_in(state, ids, message);
            }
            results[reader as usize] = exchange.values[source as usize];
            state.phase[warp * 32 + reader as usize] = Phase::Running;
        }
        let exchange = &mut state.warps[warp];
        exchange.results = results;
        exchange.arrived = 0;
        exchange.generation += 1;
        let result = results[lane as usize];
        drop(state);
        launch.warp_event[warp].notify_all();
        return result;
    }
    if let Some(stuck) = state.stuck() {
        launch.fault_in(
            state,
            ids,
            format!("a shuffle not every lane of the mask reaches: {stuck}"),
        );
    }
    let generation = state.warps[warp].generation;
    while state.warps[warp].generation == generation && state.fault.is_none() {
        state = launch.wait(state, &launch.warp_event[warp]);
    }
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
    state.warps[warp].results[lane as usize]
}

/// The lane a butterfly shuffle reads for `lane`: PTX's `shfl.sync.bfly`
/// with `c = clamp` (segment mask in bits 8..12, clamp in bits 0..4); a
/// source past the segment's last lane means "keep your own value".
fn butterfly_source(lane: u32, lane_mask: u32, clamp: u32) -> u32 {
    let segment_mask = (clamp >> 8) & 0x1f;
    let max_lane = (lane & segment_mask) | (clamp & 0x1f & !segment_mask);
    let source = lane ^ (lane_mask & 0x1f);
    if source <= max_lane {
        source
    } else {
        lane
    }
}

/// Checks a global access of `bytes` bytes at `address` (faulting the launch
/// if it is outside every buffer, misaligned, or not allowed there).
#[track_caller]
pub(crate) fn check_access(address: u64, bytes: u64, access: Access) {
    let problem = CURRENT.with(|current| {
        let current = current.borrow();
        let Some(current) = &*current else {
            panic!("a device function was called outside an emulated kernel launch");
        };
        let buffers = &current.launch.buffers;
        if !address.is_multiple_of(bytes) {
            return Some(format!("misaligned {bytes}-byte access at {address:#x}"));
        }
        let inside = buffers
            .iter()
            .find(|b| address >= b.address && address - b.address + bytes <= b.bytes);
        match (inside, access) {
            (None, _) => {
                let list: Vec<String> = buffers
                    .iter()
                    .map(|b| format!("{} [{:#x}, {:#x})", b.name, b.address, b.address + b.bytes))
                    .collect();
                Some(format!(
                    "{bytes}-byte {access:?} at {address:#x} is outside every buffer of the launch: {}",
                    list.join(", ")
                ))
            }
            (Some(buffer), Access::Store | Access::Atomic) if !buffer.writable => Some(format!(
                "{access:?} to the read-only buffer {} at {address:#x}",
                buffer.name
            )),
            (Some(buffer), Access::NonCoherentLoad) if buffer.writable => Some(format!(
                "non-coherent load from {} at {address:#x}, a buffer this launch writes (it may read stale data)",
                buffer.name
            )),
            _ => None,
        }
    });
    if let Some(problem) = problem {
        let (ids, launch) = current();
        let state = launch.lock();
        launch.fault_in(state, ids, format!("{problem} (at {})", Location::caller()));
    }
}

/// The calling block's shared array `array`.
pub(crate) fn shared_array(array: SharedArray) -> *mut u8 {
    CURRENT.with(|current| match &*current.borrow() {
        Some(current) => current.launch.shared[array as usize].base,
        None => panic!("a device function was called outside an emulated kernel launch"),
    })
}

/// Checks a shared-memory access of `bytes` bytes at `address` (faulting the
/// launch if it is outside every shared array, misaligned, reads memory no
/// thread has written, or races with another thread's access since the last
/// barrier), and records it.
#[track_caller]
pub(crate) fn check_shared(address: u64, bytes: u64, access: SharedAccess) {
    let site = Location::caller();
    let (ids, launch) = current();
    let mut state = launch.lock();
    let found = launch
        .shared
        .iter()
        .enumerate()
        .find_map(|(index, array)| array.offset_of(address, bytes).map(|offset| (index, offset)));
    let Some((index, offset)) = found else {
        let list: Vec<String> = launch
            .shared
            .iter()
            .map(|a| {
                format!(
                    "{} [{:#x}, {:#x})",
                    a.name,
                    a.base as u64,
                    a.base as u64 + a.bytes as u64
                )
            })
            .collect();
        let message = format!(
            "{bytes}-byte shared {access:?} at {address:#x} is outside every shared array: {} (at {site})",
            list.join(", ")
        );
        launch.fault_in(state, ids, message);
    };
    if !address.is_multiple_of(bytes) {
        launch.fault_in(
            state,
            ids,
            format!("misaligned {bytes}-byte shared {access:?} at {address:#x} (at {site})"),
        );
    }
    let name = launch.shared[index].name;
    let (epoch, thread) = (state.barrier_generation, ids.thread);
    for word in offset / 4..(offset + bytes).div_ceil(4) {
        let history = state.shared_history[index][word as usize];
        let race = match access {
            SharedAccess::Read if history.written_in == NEVER => Some(format!(
                "reads byte {} of the {name}, which no thread of this block has written",
                4 * word
            )),
            SharedAccess::Read | SharedAccess::Write if history.written_in == epoch && history.writer != thread => {
                Some(format!(
                    "{access:?} of byte {} of the {name}, which thread {} wrote with no barrier in between",
                    4 * word,
                    history.writer
                ))
            }
            SharedAccess::Write if history.read_in == epoch && history.reader != thread => Some(format!(
                "writes byte {} of the {name}, which {} read with no barrier in between",
                4 * word,
                match history.reader {
                    SEVERAL_READERS => "other threads".to_string(),
                    reader => format!("thread {reader}"),
                }
            )),
            _ => None,
        };
        if let Some(race) = race {
            launch.fault_in(state, ids, format!("shared-memory race: {race} (at {site})"));
        }
        let history = &mut state.shared_history[index][word as usize];
        match access {
            SharedAccess::Read if history.read_in == epoch && history.reader != thread => {
                history.reader = SEVERAL_READERS
            }
            SharedAccess::Read if history.read_in != epoch => (history.reader, history.read_in) = (thread, epoch),
            SharedAccess::Read => {}
            SharedAccess::Write => (history.writer, history.written_in) = (thread, epoch),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn butterfly_source_follows_ptx() {
        assert_eq!(butterfly_source(5, 1, 0x1f), 4);
        assert_eq!(butterfly_source(5, 16, 0x1f), 21);
        // Width 8 (c = 0x1807): lanes stay within their 8-lane segment.
        assert_eq!(butterfly_source(5, 16, 0x1807), 5);
        assert_eq!(butterfly_source(5, 2, 0x1807), 7);
    }

    #[test]
    fn block_order_is_a_permutation() {
        let mut order = shuffled_blocks(100, 7);
        assert_ne!(order, (0..100).collect::<Vec<_>>());
        order.sort();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn ranges_are_compact() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
    }
}
