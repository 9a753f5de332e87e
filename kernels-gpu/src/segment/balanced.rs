//! The balanced schedules: segments handed out to warps or blocks from a
//! counter as they finish.

#[cfg(doc)]
use super::reduce;
use super::{accumulate_share, Segments};
use crate::abi::SegmentPlan;
use crate::block;
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::element::Element;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
use crate::place::Results;
use crate::thread::{self, Team};
use crate::warp;
use core::mem::size_of;

/// The body of the balanced segmented entry points: what [`reduce`] does for
/// segments given by offsets, one part each, but with the segments handed
/// out from a counter ([`SegmentQueue`]) instead of in a fixed order: to
/// warps where a team is 2 to 32 lanes, to blocks (`BLOCK_TAKES`) where it
/// is several warps. Segments of random lengths then keep every warp (or
/// block) busy to the end of the launch; with a fixed share, the launch
/// waits for those that drew the longest. Each kind of taker has its own
/// entry points: the counter's registers made every path of [`reduce`]
/// spill, and with both takers in one kernel the warps' path got slower
/// (H200; `git show 4cb2489:BENCHMARKS.md`).
///
/// # Safety
/// As [`reduce`], with `segments.offsets` not 0, `plan.team_threads` from 2
/// to 32 (above 32 with `BLOCK_TAKES`), `plan.blocks_per_segment` 1,
/// `plan.segments_per_take` a power of two and a multiple of the teams of a
/// taker (a warp's, or the block's with `BLOCK_TAKES`, whose block size is
/// then a power of two), and `counter` the global address of 12 writable,
/// 8-byte-aligned bytes that are zero, used by no other launch at the same
/// time (the launch leaves them at zero).
#[inline(always)]
pub unsafe fn reduce_balanced<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement, const BLOCK_TAKES: bool>(
    input: u64,
    segments: Segments,
    plan: SegmentPlan,
    counter: u64,
    out: Results<false>,
) {
    let team_threads = plan.team_threads as u64;
    let team_shift = team_threads.trailing_zeros();
    // The taker: this thread's warp, or with `BLOCK_TAKES` its block.
    let (taker_threads, takers, taker, thread_in_taker) = if BLOCK_TAKES {
        (
            block_dim_x() as u64,
            grid_dim_x() as u64,
            block_idx_x() as u64,
            thread_idx_x() as u64,
        )
    } else {
        let warps_per_block = block_dim_x() as u64 / 32;
        (
            32,
            grid_dim_x() as u64 * warps_per_block,
            block_idx_x() as u64 * warps_per_block + thread_idx_x() as u64 / 32,
            thread_idx_x() as u64 % 32,
        )
    };
    let teams_per_taker = taker_threads >> team_shift;
    let team = Team {
        worker: 0,
        workers: 1,
        threads: team_threads,
        thread: thread_in_taker & (team_threads - 1),
    };
    let queue = SegmentQueue::<BLOCK_TAKES>::new(counter, plan, takers);
    // Every thread of a taker sees the same `first`, so the taker's
    // shuffles (or the block's barriers) below are reached by all. Each
    // taker's first take is fixed (its index), so that the launch does not
    // start with every taker at the counter at once.
    let mut first = taker * queue.take;
    while first < segments.count {
        // A taker's rounds run through its take; the next take is requested
        // at the start of the last round.
        let last_round = (first + teams_per_taker) & (queue.take - 1) == 0;
        let requested = if last_round { queue.request() } else { 0 };
        let segment = first + (thread_in_taker >> team_shift);
        let mut acc = O::identity();
        if segment < segments.count {
            acc = accumulate_share::<T, M, O>(input, &segments, segment, team);
        }
        let total = block::reduce_groups::<T, O>(acc, plan.team_threads);
        first = if last_round {
            queue.receive(requested)
        } else {
            first + teams_per_taker
        };
        if team.thread == 0 && segment < segments.count {
            thread::store_result(out.at::<T>(segment), total);
        }
        if BLOCK_TAKES {
            // The next round's block reduction and take reuse the shared slots.
            sync_threads();
        }
    }
    queue.finish();
}

/// Segments handed out to the takers of a launch (its warps, or its blocks
/// if `BLOCK_TAKES`) `take` at a time, each taker taking until none are
/// left. Which taker reduces a segment does not change how it is reduced,
/// so results stay the same on every run.
///
/// Each taker's first take is fixed; the later ones come from a counter,
/// which counts on from the fixed takes. The last block to finish resets
/// the counter for the next launch.
#[derive(Clone, Copy)]
pub(super) struct SegmentQueue<const BLOCK_TAKES: bool> {
    /// Global address of the `u64` counter, followed by a `u32` ticket of
    /// blocks that have finished: both zero at launch.
    counter: u64,
    /// Segments per take: a power of two.
    pub(super) take: u64,
    /// Segments in the takers' fixed first takes.
    handed_out_first: u64,
}

impl<const BLOCK_TAKES: bool> SegmentQueue<BLOCK_TAKES> {
    /// The queue of `plan`'s takes for `takers` takers, its counter and
    /// ticket at `counter`.
    #[inline(always)]
    pub(super) fn new(counter: u64, plan: SegmentPlan, takers: u64) -> Self {
        SegmentQueue {
            counter,
            take: plan.segments_per_take as u64,
            handed_out_first: takers * plan.segments_per_take as u64,
        }
    }

    /// Takes the next `take` segments, the first of which (at least the
    /// segment count when none are left) [`SegmentQueue::receive`] returns.
    /// A warp's first lane takes them and shares them at once (a shuffle).
    /// A block's thread 0 takes them and posts them at once in shared
    /// memory, where the block's threads read them after the block's next
    /// barrier; meanwhile the other warps' loads overlap the counter's
    /// latency. (Posting after thread 0's own loads instead was slower on
    /// the H200: the block then waited for the counter at its barrier.)
    ///
    /// # Safety
    /// Every thread of the taker calls it together; `counter` is writable;
    /// with `BLOCK_TAKES`, as [`block::post_from_thread_0`].
    #[inline(always)]
    pub(super) unsafe fn request(self) -> u64 {
        let first_thread = if BLOCK_TAKES {
            thread_idx_x() == 0
        } else {
            thread_idx_x().is_multiple_of(32)
        };
        let mut first = 0;
        if first_thread {
            first = self.handed_out_first + device::atomic_add_relaxed_gpu_u64(self.counter, self.take);
        }
        if BLOCK_TAKES {
            if first_thread {
                block::post_from_thread_0(first);
            }
            first
        } else {
            warp::broadcast_from_lane_0(first)
        }
    }

    /// The first segment of the take that [`SegmentQueue::request`]
    /// returned as `requested`, in every thread of the taker.
    ///
    /// # Safety
    /// With `BLOCK_TAKES`, every thread of the block has passed a barrier
    /// since the request.
    #[inline(always)]
    pub(super) unsafe fn receive(self, requested: u64) -> u64 {
        if BLOCK_TAKES {
            block::read_posted()
        } else {
            requested
        }
    }

    /// Counts this block as finished; the last block resets the counter and
    /// the ticket. Its `acq_rel` ticket orders every block's takes before
    /// the reset.
    ///
    /// # Safety
    /// Every thread of the block calls it together, after its last take.
    #[inline(always)]
    pub(super) unsafe fn finish(self) {
        sync_threads();
        let ticket = self.counter + size_of::<u64>() as u64;
        if thread_idx_x() == 0 && device::atomic_add_acq_rel_gpu_u32(ticket, 1) == grid_dim_x() - 1 {
            device::store_relaxed_gpu_u64(self.counter, 0);
            device::store_relaxed_gpu_u32(ticket, 0);
        }
    }
}
