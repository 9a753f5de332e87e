//! A launch: [`launch()`] runs the blocks of the grid one at a time, in a
//! shuffled order, on one OS thread per thread of a block. [`Launch`] is
//! what those threads share (the buffers, the shared arrays, where each
//! thread of the running block is, the first fault), and [`CURRENT`] which
//! emulated thread an OS thread is running, which the device primitives ask.

use super::interface::{Buffer, Fault, LaunchConfig};
use super::shadow::{ShadowArray, WordHistory};
#[cfg(doc)]
use super::SharedArray;
use core::fmt;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

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

pub(super) struct Current {
    ids: ThreadIds,
    pub(super) launch: Arc<Launch>,
}

thread_local! {
    pub(super) static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
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

pub(super) fn current() -> (ThreadIds, Arc<Launch>) {
    CURRENT.with(|current| match &*current.borrow() {
        Some(current) => (current.ids, Arc::clone(&current.launch)),
        None => panic!("a device function was called outside an emulated kernel launch"),
    })
}

/// The unwinding payload that stops an emulated thread after a fault; the
/// fault itself is already recorded.
struct Aborted;

pub(super) fn abort_thread() -> ! {
    panic::resume_unwind(Box::new(Aborted))
}

/// Where an emulated thread of the running block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
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
pub(super) struct WarpExchange {
    pub(super) member_mask: u32,
    pub(super) site: Option<&'static Location<'static>>,
    pub(super) arrived: u32,
    pub(super) values: [u32; 32],
    pub(super) lane_masks: [u32; 32],
    pub(super) clamps: [u32; 32],
    pub(super) results: [u32; 32],
    pub(super) generation: u64,
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

pub(super) struct State {
    pub(super) phase: Vec<Phase>,
    pub(super) barrier_arrived: u32,
    pub(super) barrier_generation: u64,
    pub(super) warps: Vec<WarpExchange>,
    returned: u32,
    blocks_done: u64,
    /// Whether the launch stopped at the end of the last block to finish
    /// (a fault by then). Its threads read this, not `fault`: a thread that
    /// wakes late may find a fault of the next block, which it must still
    /// run (that block waits for every thread).
    stopped: bool,
    pub(super) fault: Option<Fault>,
    /// Set once every OS thread is started (`Some(true)`) or one failed to start.
    start: Option<bool>,
    /// Per shared array (in [`SharedArray`] order), per 4-byte word.
    pub(super) shared_history: [Vec<WordHistory>; 3],
}

impl State {
    /// If no thread of the block can move any more, a description of where
    /// each one is. Barriers and shuffles complete as soon as their last
    /// participant arrives, so "nobody is running" means "stuck for good".
    pub(super) fn stuck(&self) -> Option<String> {
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

pub(super) struct Launch {
    kernel: String,
    pub(super) block_threads: u32,
    pub(super) buffers: Vec<Buffer>,
    /// The warp slots, the block word and the dynamic array, in [`SharedArray`] order.
    pub(super) shared: [ShadowArray; 3],
    state: Mutex<State>,
    /// Barrier completions and block ends.
    pub(super) block_event: Condvar,
    /// Shuffle completions, one per warp.
    pub(super) warp_event: Vec<Condvar>,
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

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
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

    pub(super) fn fault_in(&self, mut state: MutexGuard<'_, State>, ids: ThreadIds, message: String) -> ! {
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

    pub(super) fn wait<'a>(&self, state: MutexGuard<'a, State>, event: &Condvar) -> MutexGuard<'a, State> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
