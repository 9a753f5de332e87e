//! Segmented reductions: one result per segment of the input, in one launch.
//!
//! Segments are given by offsets (segment `s` is `[offsets[s],
//! offsets[s+1])`) or are the rows of a row-major matrix. The work is cut
//! into *units*: unit `u` is part `u % blocks_per_segment` of segment
//! `u / blocks_per_segment`, and each unit is reduced by a *team* of
//! threads ([`SegmentPlan`]):
//! - short segments: a group of 2 to 32 lanes of a warp, reduced with
//!   shuffles inside the group, many segments per warp; or a single thread,
//!   which takes its segments four at a time and loads every element of
//!   those that are very short before it combines any
//!   ([`reduce_per_thread`]), and reads longer ones of 4-byte elements as
//!   the whole vectors that hold them ([`fold_windows`]); rows that pack
//!   whole into 16-byte vectors (a row of 1, 2 or 4 `f32`s) are read a
//!   vector at a time instead ([`reduce_packed_rows`]);
//! - longer segments: several warps or a whole block, reduced through the
//!   block's scratch slots;
//! - few long segments: several blocks each, whose partials the last of them
//!   to finish combines in index order, with a ticket per segment, as
//!   [`crate::grid`] does for a whole input.
//!
//! Teams take units in rounds, grid-stride; segments given by offsets
//! reduced by teams of at least 2 threads, one part each, can instead be
//! handed out to warps (or, for teams of several warps, to blocks) from a
//! counter ([`reduce_balanced`]), through entry points of their own. Within
//! a unit the threads of the team read as [`thread::accumulate`] reads a
//! whole input (16-byte vectors, head and tail peeled, since a segment may
//! start anywhere). The host picks the plan from the average segment length;
//! everything here is correct for any plan, and the result of each segment
//! depends only on its elements, its alignment and the plan, so it is the
//! same on every run.
//!
//! The fixed-order paths are one kernel per op and type, so they share one
//! register allocation: the build caps every segmented kernel at 64
//! (`reduce-host/build.rs`), so that two 512-thread blocks fit an SM, and a
//! path that needs more registers makes ptxas spill in all of them (the H200
//! measurements in `BENCHMARKS.md` show both effects). That is why each
//! balanced schedule has entry points of its own.

use crate::abi::{SegmentPlan, PARTIAL_SLOT_BYTES, SEGMENTS_INVALID, VECTORS_PER_THREAD, VECTOR_BYTES};
use crate::block;
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::element::Element;
use crate::grid;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
use crate::thread::{self, Source, Team};
use crate::warp;
use core::mem::size_of;

/// Where the segments of a launch are.
#[derive(Clone, Copy)]
pub struct Segments {
    /// Global address of `count + 1` `u64` offsets, or 0 for rows.
    pub offsets: u64,
    /// Elements per row, when `offsets` is 0.
    pub row_len: u64,
    /// Number of segments.
    pub count: u64,
    /// Elements in the input: no offset may exceed it.
    pub len: u64,
    /// Global address of the status word, or 0 for none.
    pub status: u64,
}

impl Segments {
    /// Segment `segment`'s elements `[begin, end)`. Offsets that are out of
    /// order or past the input's end are clamped into `[0, len]` (so nothing
    /// outside the input is read) and reported in the status word.
    ///
    /// # Safety
    /// `segment < count`; the offsets (if any) are readable and not written
    /// during the launch; the status word (if any) is writable.
    #[inline(always)]
    unsafe fn bounds(&self, segment: u64) -> (u64, u64) {
        self.checked(self.stored_bounds(segment))
    }

    /// Segment `segment`'s bounds as stored, unchecked: pass them to
    /// [`Segments::checked`]. Separate from the check so that a thread can
    /// issue the loads of several segments' offsets before it checks any:
    /// the check may store to the status word, and no load is moved above a
    /// store, so checking each segment's offsets before loading the next
    /// one's waited for memory once per segment (a quarter of the stall
    /// samples of random `f32` segments of mean 10 on the H200, Nsight
    /// Compute; loading a whole batch's offsets first made them 5% faster,
    /// `f64` 2%: `bench-results/2026-11-23-offsets-first/`).
    ///
    /// # Safety
    /// As [`Segments::bounds`].
    #[inline(always)]
    unsafe fn stored_bounds(&self, segment: u64) -> (u64, u64) {
        if self.offsets == 0 {
            let begin = segment * self.row_len;
            return (begin, begin + self.row_len);
        }
        let at = self.offsets + segment * size_of::<u64>() as u64;
        let begin = device::load_global_nc_u64(at);
        let end = device::load_global_nc_u64(at + size_of::<u64>() as u64);
        (begin, end)
    }

    /// The bounds `stored` of a segment ([`Segments::stored_bounds`]) as
    /// [`Segments::bounds`] returns them: clamped into `[0, len]`, and
    /// reported in the status word, where out of order or past the end.
    ///
    /// # Safety
    /// The status word (if any) is writable.
    #[inline(always)]
    unsafe fn checked(&self, (begin, end): (u64, u64)) -> (u64, u64) {
        if self.offsets == 0 || (begin <= end && end <= self.len) {
            return (begin, end);
        }
        if self.status != 0 {
            device::store_relaxed_gpu_u32(self.status, SEGMENTS_INVALID);
        }
        let begin = core::cmp::min(begin, self.len);
        (begin, end.clamp(begin, self.len))
    }
}

/// The body of every segmented entry point (parameters: see
/// [`SegmentPlan`]): `M` applied to each element, combined with `O`, one
/// result per segment in `out`. An empty segment's result is `O`'s identity.
///
/// # Safety
/// - `input` is the global address of `segments.len` readable `T`s, and the
///   segments are as [`Segments`] describes, none written during the launch;
/// - `plan.team_threads` is a power of two dividing the block size; if
///   `plan.blocks_per_segment > 1`, it equals the block size, the grid has
///   `segments.count · blocks_per_segment` blocks, `partials` that many
///   writable [`PARTIAL_SLOT_BYTES`] slots and `tickets` `segments.count` writable `u32`s,
///   all zero, used by no other launch at the same time;
/// - `out` is the global address of `segments.count` writable `T`s;
/// - the block size is a multiple of 32, at most 1024; the grid is 1-D.
#[inline(always)]
pub unsafe fn reduce<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    segments: Segments,
    plan: SegmentPlan,
    partials: u64,
    tickets: u64,
    out: u64,
) {
    let element = size_of::<T>() as u64;
    let team_threads = plan.team_threads as u64;
    let parts = plan.blocks_per_segment as u64;
    let units = segments.count * parts;
    // Shifts and masks, as `team_threads` is a power of two (and a division
    // would leave a divide-by-zero panic path in the PTX).
    let team_shift = team_threads.trailing_zeros();
    let teams_per_block = block_dim_x() as u64 >> team_shift;
    let teams_in_grid = teams_per_block * grid_dim_x() as u64;
    let team_in_block = thread_idx_x() as u64 >> team_shift;
    let thread_in_team = thread_idx_x() as u64 & (team_threads - 1);

    if team_threads == 1 {
        // One thread per segment (and so one part each): no team reduction.
        if packs_rows::<T>(input, &segments) {
            reduce_packed_rows::<T, M, O>(input, segments, out, teams_in_grid);
        } else {
            reduce_per_thread::<T, M, O>(input, segments, out, teams_in_grid);
        }
        return;
    }

    // The unit of this block's first team; the loop condition is the same for
    // every thread of the block, so the block reductions below are reached by all.
    let mut first_unit = block_idx_x() as u64 * teams_per_block;
    while first_unit < units {
        let unit = first_unit + team_in_block;
        let (segment, part) = if parts == 1 {
            (unit, 0)
        } else {
            // `checked_*`: no panic path in the PTX (`parts` is not zero here).
            (
                unit.checked_div(parts).unwrap_or(0),
                unit.checked_rem(parts).unwrap_or(0),
            )
        };
        let mut acc = O::identity();
        if unit < units {
            let team = Team {
                worker: part,
                workers: parts,
                threads: team_threads,
                thread: thread_in_team,
            };
            acc = accumulate_share::<T, M, O>(input, &segments, segment, team);
        }
        let total = block::reduce_groups::<T, O>(acc, plan.team_threads);
        let destination = out + segment * element;
        if parts == 1 {
            if thread_in_team == 0 && unit < units {
                thread::store_element(destination, total);
            }
        } else {
            // The team is the whole block and `unit < units` (one block per part).
            let first_slot = partials + segment * parts * PARTIAL_SLOT_BYTES;
            let ticket = tickets + segment * size_of::<u32>() as u64;
            if grid::finished_last(first_slot + part * PARTIAL_SLOT_BYTES, ticket, parts as u32, total) {
                let total = grid::combine_partials::<T, O>(first_slot, parts as u32, ticket);
                if thread_idx_x() == 0 {
                    thread::store_element(destination, total);
                }
            }
        }
        if team_threads > 32 {
            // The next round's block reduction reuses the scratch slots and flag.
            sync_threads();
        }
        first_unit += teams_in_grid;
    }
}

/// This thread's fold of its share of `segment` (the team's part
/// `team.worker` of `team.workers`).
///
/// # Safety
/// As [`reduce`]; `segment < segments.count`.
#[inline(always)]
unsafe fn accumulate_share<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    segments: &Segments,
    segment: u64,
    team: Team,
) -> T {
    let (begin, end) = segments.bounds(segment);
    let source = thread::Mapped::<M>::new(input + begin * size_of::<T>() as u64);
    thread::accumulate::<T, O, _>(source, end - begin, team)
}

/// The body of the balanced segmented entry points: what [`reduce`] does for
/// segments given by offsets, one part each, but with the segments handed
/// out from a counter ([`SegmentQueue`]) instead of in a fixed order: to
/// warps where a team is 2 to 32 lanes, to blocks (`BLOCK_TAKES`) where it
/// is several warps. Segments of random lengths then keep every warp (or
/// block) busy to the end of the launch; with a fixed share, the launch
/// waits for those that drew the longest. Each kind of taker has its own
/// entry points: the counter's registers made every path of [`reduce`]
/// spill, and with both takers in one kernel the warps' path got slower
/// (H200, `BENCHMARKS.md`).
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
    out: u64,
) {
    let element = size_of::<T>() as u64;
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
    let queue = SegmentQueue::<BLOCK_TAKES> {
        counter,
        take: plan.segments_per_take as u64,
        handed_out_first: takers * plan.segments_per_take as u64,
    };
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
            thread::store_element(out + segment * element, total);
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
struct SegmentQueue<const BLOCK_TAKES: bool> {
    /// Global address of the `u64` counter, followed by a `u32` ticket of
    /// blocks that have finished: both zero at launch.
    counter: u64,
    /// Segments per take: a power of two.
    take: u64,
    /// Segments in the takers' fixed first takes.
    handed_out_first: u64,
}

impl<const BLOCK_TAKES: bool> SegmentQueue<BLOCK_TAKES> {
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
    unsafe fn request(self) -> u64 {
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
    unsafe fn receive(self, requested: u64) -> u64 {
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
    unsafe fn finish(self) {
        sync_threads();
        let ticket = self.counter + size_of::<u64>() as u64;
        if thread_idx_x() == 0 && device::atomic_add_acq_rel_gpu_u32(ticket, 1) == grid_dim_x() - 1 {
            device::store_relaxed_gpu_u64(self.counter, 0);
            device::store_relaxed_gpu_u32(ticket, 0);
        }
    }
}

/// Segments a thread reduces at once when teams are single threads: their
/// loads are in flight together (a segment of a few elements is otherwise a
/// load, a wait and a store per thread, bound by latency, not bandwidth).
const SEGMENTS_PER_BATCH: u64 = 4;

/// The bytes of the longest segment a single thread reads element by element
/// within a batch (4 `f32`s, 2 `f64`s: the batch's values stay in registers);
/// longer ones go through [`thread::accumulate`], one at a time.
const SHORT_SEGMENT_BYTES: u64 = 16;

/// Room for the elements of one short segment of any element type (of at
/// least 4 bytes).
const SHORT_SEGMENT_SLOTS: usize = (SHORT_SEGMENT_BYTES / 4) as usize;

/// The segmented reduction when each segment is one thread's (teams of one
/// thread): thread `t` of the `threads` of the grid takes segments `t`,
/// `t + threads`, ... in batches of [`SEGMENTS_PER_BATCH`]. It loads every
/// offset of the batch before it checks any ([`Segments::stored_bounds`]),
/// and every element of the batch's short segments (at most
/// [`SHORT_SEGMENT_BYTES`] bytes) before it combines any, then combines
/// each in element order from the identity; a longer segment is read by
/// [`fold_windows`] where [`reads_windows`] (a property of the launch), else
/// (and at the input's edges) by [`thread::accumulate`]. Which of them
/// reads a segment depends only on the launch, its length and its
/// position, so its result is the same on every run.
///
/// # Safety
/// As [`reduce`], with teams of one thread; `threads` is the grid's thread count.
#[inline(always)]
unsafe fn reduce_per_thread<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    segments: Segments,
    out: u64,
    threads: u64,
) {
    let element = size_of::<T>() as u64;
    let short_segment = SHORT_SEGMENT_BYTES / element;
    let windows = reads_windows::<T>(input, &segments);
    let mut first = device::index_1d();
    while first < segments.count {
        let segment = |k: u64| first + k * threads;
        let stored_bounds = |k: u64| {
            if segment(k) < segments.count {
                segments.stored_bounds(segment(k))
            } else {
                (0, 0)
            }
        };
        let short_elements = |(begin, end): (u64, u64)| {
            let mut values = [O::identity(); SHORT_SEGMENT_SLOTS];
            if end - begin <= short_segment {
                let mut j = 0;
                while j < short_segment as usize {
                    if begin + (j as u64) < end {
                        values[j] = M::map(thread::load_element::<T>(input + (begin + j as u64) * element));
                    }
                    j += 1;
                }
            }
            values
        };
        let finish_short = |k: u64, (begin, end): (u64, u64), values: [T; SHORT_SEGMENT_SLOTS]| {
            if segment(k) >= segments.count || end - begin > short_segment {
                return;
            }
            let mut acc = O::identity();
            let mut j = 0;
            while j < short_segment as usize {
                if begin + (j as u64) < end {
                    acc = O::combine(acc, values[j]);
                }
                j += 1;
            }
            thread::store_element(out + segment(k) * element, acc);
        };
        // Four named segments, not a loop over an array: constant indices
        // keep the loaded values in registers (as in `thread::accumulate`;
        // this also pins SEGMENTS_PER_BATCH at 4).
        // Every offset load of the batch before the first check.
        let stored = (stored_bounds(0), stored_bounds(1), stored_bounds(2), stored_bounds(3));
        let (b0, b1, b2, b3) = (
            segments.checked(stored.0),
            segments.checked(stored.1),
            segments.checked(stored.2),
            segments.checked(stored.3),
        );
        let (v0, v1, v2, v3) = (
            short_elements(b0),
            short_elements(b1),
            short_elements(b2),
            short_elements(b3),
        );
        finish_short(0, b0, v0);
        finish_short(1, b1, v1);
        finish_short(2, b2, v2);
        finish_short(3, b3, v3);

        // The longer segments, one at a time, after the short ones, with
        // nothing of the batch kept across them but its position (the
        // bounds are read again). With the batch's values live across them,
        // every segmented kernel needed so many registers that the H200 fit
        // one 512-thread block per SM instead of two.
        let mut k = 0;
        while k < SEGMENTS_PER_BATCH {
            if segment(k) < segments.count {
                let (begin, end) = segments.bounds(segment(k));
                if end - begin > short_segment {
                    let windowed = if windows {
                        fold_windows::<T, M, O>(input, segments.len, begin, end)
                    } else {
                        None
                    };
                    let total = match windowed {
                        Some(total) => total,
                        None => {
                            let source = thread::Mapped::<M>::new(input + begin * element);
                            thread::accumulate::<T, O, _>(source, end - begin, Team::single())
                        }
                    };
                    thread::store_element(out + segment(k) * element, total);
                }
            }
            k += 1;
        }
        first += SEGMENTS_PER_BATCH * threads;
    }
}

/// Whether [`reduce_per_thread`] reads its longer segments with
/// [`fold_windows`] rather than [`thread::accumulate`]: for elements of 4
/// bytes, unless every row is whole 16-byte vectors (which
/// [`thread::accumulate`] reads without peeling, with fewer instructions:
/// rows of 16 `f32`s ran 1-3% slower through windows on the H200). The
/// choice is the launch's, not each segment's: a warp whose lanes took
/// both paths ran both, and random segments of mean 10 got 8-14% slower
/// than with either alone. For 8-byte elements, whose head and tail are at
/// most one element each, windows were 6-12% slower (random mean 10), and
/// still 0-3% slower once their checks were 32-bit.
#[inline(always)]
fn reads_windows<T: Element>(input: u64, segments: &Segments) -> bool {
    let whole_vector_rows = segments.offsets == 0
        && input.is_multiple_of(VECTOR_BYTES)
        && (segments.row_len * size_of::<T>() as u64).is_multiple_of(VECTOR_BYTES);
    T::WORDS == 1 && !whole_vector_rows
}

/// Inner vectors (all of whose lanes are in the segment) a thread loads at
/// once in [`fold_windows`], after the segment's first and last vectors: a
/// segment of up to 21 elements of 4 bytes (24 if its start is aligned) is
/// one window of 6 loads. Every lane runs every slot of a window, so a wider
/// one costs instructions for short segments, a narrower one rounds: on the
/// H200, random `f32` segments of lengths 0, 10 or 20 took 1.04-1.05x the
/// time with 2 inner vectors and 1.01-1.02x with 3
/// (`bench-results/2026-11-23-inner-vectors/`); windows of 6 vectors in all
/// had been faster than 4 or 8 before the first and last were split off.
/// At most 4: the window's vectors are named, not an array.
const WINDOW_INNER_VECTORS: u32 = 4;
const _: () = assert!(WINDOW_INNER_VECTORS >= 1 && WINDOW_INNER_VECTORS <= 4);

/// The longest segment [`fold_windows`] reads: its positions fit 32 bits.
const MAX_WINDOWED_ELEMENTS: u64 = 1 << 30;

/// One thread's fold of the elements `[begin, end)` of the `len` at
/// `input`, read as the whole 16-byte vectors that hold them: the first
/// and last (whose lanes outside the segment, its neighbours' elements, are
/// skipped), then the ones between, [`WINDOW_INNER_VECTORS`] at a time,
/// every load of a window issued before the first combine, and combined in
/// element order. `None`, and nothing read, where the segment lies within
/// one vector, or where the first or last vector reaches outside the input
/// (only possible for the input's first and last few elements).
///
/// Why: [`thread::accumulate`] peels a segment's unaligned head and tail
/// into single elements, a load and a loop trip each, and lanes whose
/// segments differ in length and alignment diverge through those loops
/// (Nsight Compute, random `f32` segments of mean 10 on the H200: 15.5 of
/// 32 threads active per warp instruction, the ALU the busiest pipe, DRAM
/// at 43% of peak). Here every lane runs the same predicated instructions:
/// a check per lane of the first and last vectors, one per inner vector
/// (about 85 instructions per 6-vector window on sm_90 where a check per
/// lane of every vector took 140; random `f32` segments of mean 10 got only
/// 1.3-3% faster, so the loop is not bound by issuing instructions).
/// Measured and not kept (`bench-results/2026-11-23-stage-prefetch/`): L2
/// prefetch sizes on these loads (no change), prefetching a batch's later
/// segments (slower elsewhere), copying the warp's segments into shared
/// memory with coalesced loads first (1.28-1.39x slower), and dealing a
/// warp's long segments out over its lanes (2% faster at 1 GiB, up to 6%
/// slower at 64 MiB).
///
/// # Safety
/// `input` is the global address of `len` readable `T`s (so `T`-aligned),
/// not written during the launch; `begin <= end <= len`.
#[inline(always)]
unsafe fn fold_windows<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    len: u64,
    begin: u64,
    end: u64,
) -> Option<T> {
    let element = size_of::<T>() as u64;
    let lanes = (VECTOR_BYTES / element) as u32;
    let length = end - begin;
    if length > MAX_WINDOWED_ELEMENTS {
        return None;
    }
    // Positions counted from lane 0 of the first vector; the segment's are
    // `[skipped, past_last)`. All of them fit 32 bits (checked above), and
    // so does the arithmetic below: in 64 bits each check is two
    // instructions, and every lane runs one per lane of the end vectors and
    // per inner vector (on the H200, random `f32` segments of mean 10 took
    // 0.94-0.97x the time of 64-bit checks). `input` is `T`-aligned, so
    // element `begin`'s lane is that of `input` plus `begin`.
    let skipped = ((input / element) as u32).wrapping_add(begin as u32) & (lanes - 1);
    let past_last = skipped + length as u32;
    let vectors = past_last.div_ceil(lanes);
    // The vectors cover elements `[begin - skipped, begin - skipped + vectors · lanes)`
    // of the input, which must hold them.
    if vectors < 2 || begin < skipped as u64 || begin - skipped as u64 + (vectors * lanes) as u64 > len {
        return None;
    }
    let first_address = input + (begin - skipped as u64) * element;
    let last_lanes = past_last - (vectors - 1) * lanes;
    let inner_vectors = vectors - 2;
    let vector_address = |index: u32| first_address + index as u64 * VECTOR_BYTES;
    let fold_lanes = |mut acc: T, words: [u32; 4], from: u32, past: u32| {
        let mut j = 0;
        while j < lanes {
            if from <= j && j < past {
                acc = O::combine(acc, M::map(T::vector_lane(words, j as usize)));
            }
            j += 1;
        }
        acc
    };
    // One window of inner vectors from the `window`-th, folded into `acc`
    // (after the first vector's lanes, if given: its combines then come after
    // every load of the window).
    let fold_window = |window: u32, mut acc: T, first_vector: Option<[u32; 4]>| {
        // Inner vector `k` of the window is loaded and folded if it exists.
        let exists = |k: u32| k < WINDOW_INNER_VECTORS && window + k < inner_vectors;
        let load = |k: u32| {
            if exists(k) {
                device::load_global_nc_v4(vector_address(1 + window + k))
            } else {
                [0; 4]
            }
        };
        // Named vectors, not an array: constant indices keep them in
        // registers whatever the op (as in `thread::for_each_strided`).
        let (v0, v1, v2, v3) = (load(0), load(1), load(2), load(3));
        if let Some(words) = first_vector {
            acc = fold_lanes(acc, words, skipped, lanes);
        }
        let mut fold = |words: [u32; 4], k: u32| {
            if exists(k) {
                acc = fold_lanes(acc, words, 0, lanes);
            }
        };
        fold(v0, 0);
        fold(v1, 1);
        fold(v2, 2);
        fold(v3, 3);
        acc
    };
    let first_vector = device::load_global_nc_v4(first_address);
    let last_vector = device::load_global_nc_v4(vector_address(vectors - 1));
    let mut acc = fold_window(0, O::identity(), Some(first_vector));
    let mut window = WINDOW_INNER_VECTORS;
    while window < inner_vectors {
        acc = fold_window(window, acc, None);
        window += WINDOW_INNER_VECTORS;
    }
    Some(fold_lanes(acc, last_vector, 0, last_lanes))
}

/// Whether every 16-byte vector of the input holds whole rows: rows (not
/// offsets) of a power-of-two length of at most one vector (1, 2 or 4 `f32`,
/// 1 or 2 `f64`), in a 16-byte-aligned input. Then [`reduce_packed_rows`]
/// reads them.
#[inline(always)]
fn packs_rows<T: Element>(input: u64, segments: &Segments) -> bool {
    let lanes = VECTOR_BYTES / size_of::<T>() as u64;
    segments.offsets == 0
        && segments.row_len.is_power_of_two()
        && segments.row_len <= lanes
        && input.is_multiple_of(VECTOR_BYTES)
}

/// The rows when [`packs_rows`] holds. A row of one element per thread
/// (or a few, [`reduce_per_thread`]) reads 4 or 8 bytes per load, and its
/// loads across a warp are spread over several vectors; here the threads read
/// the input as the whole-input kernel does (tiles of [`VECTORS_PER_THREAD`]
/// vectors, adjacent threads on adjacent vectors, every load of a tile issued
/// before the first use) and reduce each vector's rows in registers. Each row
/// is combined from the identity in element order, as
/// [`reduce_per_thread`] would. Rows of one element are written a vector at
/// a time where `out` is 16-byte aligned. The rows after the last whole
/// vector (fewer than a vector's worth) take a thread each.
///
/// # Safety
/// As [`reduce`], with teams of one thread and [`packs_rows`] true;
/// `threads` is the grid's thread count.
#[inline(always)]
unsafe fn reduce_packed_rows<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    segments: Segments,
    out: u64,
    threads: u64,
) {
    let element = size_of::<T>() as u64;
    let lanes = VECTOR_BYTES / element;
    let row_len = segments.row_len;
    let row_shift = row_len.trailing_zeros();
    let elements = segments.count << row_shift;
    let vectors = elements / lanes;
    let store_vectors = row_len == 1 && out.is_multiple_of(VECTOR_BYTES);
    let source = thread::Mapped::<M>::new(input);
    let reduce_rows_of = |words: [u32; 4], first_element: u64| {
        let lane = |k: usize| T::vector_lane(words, k);
        if store_vectors {
            let results = thread::pack_lanes(|k| O::combine(O::identity(), lane(k)));
            device::store_global_v4(out + first_element * element, results);
            return;
        }
        let mut acc = O::identity();
        let mut k = 0;
        while k < lanes as usize {
            acc = O::combine(acc, lane(k));
            let index = first_element + k as u64;
            if (index + 1) & (row_len - 1) == 0 {
                thread::store_element(out + (index >> row_shift) * element, acc);
                acc = O::identity();
            }
            k += 1;
        }
    };

    let grid_thread = device::index_1d();
    let tile = VECTORS_PER_THREAD * threads;
    let mut first = grid_thread;
    while first < vectors {
        let mut count = 0;
        while count < VECTORS_PER_THREAD && first + count * threads < vectors {
            count += 1;
        }
        thread::for_each_strided::<T, _>(&source, 0, first, threads, count, reduce_rows_of);
        first += tile;
    }

    let row = ((vectors * lanes) >> row_shift) + grid_thread;
    if row < segments.count {
        let mut acc = O::identity();
        let mut k = 0;
        while k < row_len {
            acc = O::combine(acc, source.element((row << row_shift) + k));
            k += 1;
        }
        thread::store_element(out + row * element, acc);
    }
}
