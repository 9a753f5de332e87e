//! The exact sum of each segment ([`crate::expansion`]): the fixed-order
//! schedule's rounds with the map's fast accumulator ([`ExactMap::Fast`])
//! for each team's partial sum;
//! each segment's total is checked and rounded once, and where it cannot
//! be exact a warp sums it again with [`Exact`] accumulators (one warp's
//! speed: for values over a very wide range only). Teams of one thread
//! have a loop of their own, with none of the teams' collective steps, in
//! a kernel of its own or called from the teams' kernel.
//! Each result is the segment's exact sum rounded once (for `ExactMean`,
//! then divided by the segment's length), so it does not depend on the
//! plan, the launch, the other segments or their number.

use super::balanced::SegmentQueue;
use super::{element_at, Segments};
use crate::abi::{SegmentPlan, PARTIAL_SLOT_BYTES};
use crate::block;
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::exact::Exact;
use crate::expansion::{
    Contiguous, ElementLayout, ExactElement, ExactFinish, ExactInput, ExactMap, FastAcc, FastAccumulator, FastExact,
    Runs,
};
use crate::grid;
use crate::op::{Max, Sum};
use crate::place::Results;
use crate::thread::{self, Team};
use crate::warp;
use core::mem::size_of;

/// The exact sum of each segment (each element mapped by `M`: NaN as zero
/// for the NaN-ignoring sum; its segment's map, [`ExactMap::of_part`] of
/// `shifts`) into `out`, as `finish` asks ([`ExactFinish::of`]: the sum,
/// or for [`crate::abi::Finish::Mean`] the sum divided by the segment's length), as [`super::reduce`] reduces
/// them (its parameters, rules and plans), with teams of any size: teams
/// of one thread (where the host does not send them to
/// [`reduce_exact_per_thread`]'s own kernel) by a call to it. With `RUNS`,
/// each row is [`Segments::runs`] runs of its length, read as one row
/// ([`Runs`]): a kernel of its own, so that the others keep their code.
///
/// # Safety
/// As [`super::reduce`] (with `RUNS`, every run of each row readable), and
/// `shifts` as [`ExactMap::of_part`] asks for each segment.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce_exact<T: ExactElement, M: ExactMap<T>, const PLACED: bool, const RUNS: bool>(
    input: u64,
    segments: Segments,
    plan: SegmentPlan,
    partials: u64,
    tickets: u64,
    out: Results<PLACED>,
    shifts: u64,
    finish: ExactFinish,
) {
    if plan.team_threads == 1 && plan.blocks_per_segment == 1 {
        return reduce_exact_per_thread_called::<T, M, PLACED, RUNS>(input, segments, out, shifts, finish);
    }
    let team_threads = plan.team_threads as u64;
    let parts = plan.blocks_per_segment as u64;
    let units = segments.count * parts;
    let team_shift = team_threads.trailing_zeros();
    let teams_per_block = block_dim_x() as u64 >> team_shift;
    let teams_in_grid = teams_per_block * grid_dim_x() as u64;
    let team_in_block = thread_idx_x() as u64 >> team_shift;
    let thread_in_team = thread_idx_x() as u64 & (team_threads - 1);

    // The loop condition is the same for every thread of the block, so the
    // collective steps below are reached by all.
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
        let (begin, end) = if unit < units { segments.bounds(segment) } else { (0, 0) };
        let mut acc = FastAcc::<T, M>::ZERO;
        // A team past the last segment sums nothing; segment 0's map (there
        // is one: `first_unit < units`) stands in for its own.
        let map = M::of_part(shifts, if unit < units { segment } else { 0 });
        if unit < units {
            let team = Team {
                worker: part,
                workers: parts,
                threads: team_threads,
                thread: thread_in_team,
            };
            acc = accumulate_segment::<T, M, RUNS>(input, &segments, (begin, end), map, team);
        }
        let team_total = block::reduce_groups::<FastAcc<T, M>, M::Fast>(acc, plan.team_threads);
        // The thread that holds its segment's total: the team's first, or,
        // for a segment in parts, thread 0 of the last block to finish one.
        let (holder, total) = if parts == 1 {
            (thread_in_team == 0 && unit < units, team_total)
        } else {
            // The team is the whole block and `unit < units` (one block per part).
            let first_slot = partials + segment * parts * PARTIAL_SLOT_BYTES;
            let ticket = tickets + segment * size_of::<u32>() as u64;
            if grid::finished_last(first_slot + part * PARTIAL_SLOT_BYTES, ticket, parts as u32, team_total) {
                let total = grid::combine_partials::<FastAcc<T, M>, M::Fast>(first_slot, parts as u32, ticket);
                (thread_idx_x() == 0, total)
            } else {
                (false, team_total)
            }
        };
        let inexact = holder && !total.is_exact();
        // Where a lane of the warp holds a total that is not exact, the
        // warp sums its segments again exactly, with warp reductions only
        // (no barrier: other warps go on): each team of up to 32 lanes its
        // own segment (an exact total rounds the same either way), a larger
        // team's first warp its whole segment.
        let again = warp::broadcast_from_lane_0(warp::reduce::<u32, Max>(inexact as u32)) != 0;
        let result = if again {
            let lanes = Ord::min(team_threads, 32);
            let (begin, end) = if thread_in_team < 32 { (begin, end) } else { (0, 0) };
            let lane = thread_in_team & (lanes - 1);
            sum_segment_exactly::<T, M, RUNS>(input, &segments, map, (begin, end), lanes, lane)
        } else {
            M::Fast::round(total)
        };
        if holder {
            let count = segment_len::<RUNS>(&segments, (begin, end));
            thread::store_result(out.at::<T>(segment), finish.of::<T, M>(map, result, count));
        }
        if team_threads > 32 {
            // The next round's block reduction reuses the scratch slots.
            sync_threads();
        }
        first_unit += teams_in_grid;
    }
}

/// [`reduce_exact`] with the segments (given by offsets) handed out to
/// warps from a counter as they finish ([`SegmentQueue`], as
/// [`super::reduce_balanced`] hands them out), each reduced by one team of
/// 2 to 32 lanes of the warp that takes it: segments of random lengths then
/// keep every warp busy to the end of the launch, where a fixed share
/// leaves the launch waiting for the warps that drew the longest. Which
/// warp sums a segment changes nothing in its result (the sum is exact).
///
/// # Safety
/// As [`reduce_exact`], with `segments.offsets` not 0, `plan.team_threads`
/// from 2 to 32, `plan.blocks_per_segment` 1, `plan.segments_per_take` a
/// power of two and a multiple of a warp's teams, and `counter` as
/// [`super::reduce_balanced`]'s.
#[inline(always)]
pub unsafe fn reduce_exact_balanced<T: ExactElement, M: ExactMap<T>>(
    input: u64,
    segments: Segments,
    plan: SegmentPlan,
    counter: u64,
    out: Results<false>,
    shifts: u64,
    finish: ExactFinish,
) {
    let team_threads = plan.team_threads as u64;
    let team_shift = team_threads.trailing_zeros();
    let warps_per_block = block_dim_x() as u64 / 32;
    let takers = grid_dim_x() as u64 * warps_per_block;
    let taker = block_idx_x() as u64 * warps_per_block + thread_idx_x() as u64 / 32;
    let lane = thread_idx_x() as u64 % 32;
    let teams_per_taker = 32 >> team_shift;
    let thread_in_team = lane & (team_threads - 1);
    let team = Team {
        worker: 0,
        workers: 1,
        threads: team_threads,
        thread: thread_in_team,
    };
    let queue = SegmentQueue::<false>::new(counter, plan, takers);
    // Every lane of a warp sees the same `first`, so the warp's shuffles
    // below are reached by all; each warp's first take is fixed (its index).
    let mut first = taker * queue.take;
    while first < segments.count {
        // The next take is requested at the start of a take's last round.
        let last_round = (first + teams_per_taker) & (queue.take - 1) == 0;
        let requested = if last_round { queue.request() } else { 0 };
        let segment = first + (lane >> team_shift);
        let in_range = segment < segments.count;
        let (begin, end) = if in_range { segments.bounds(segment) } else { (0, 0) };
        // A team past the last segment sums nothing; segment 0's map (there
        // is one: `first < segments.count`) stands in for its own.
        let map = M::of_part(shifts, if in_range { segment } else { 0 });
        let mut acc = FastAcc::<T, M>::ZERO;
        if in_range {
            acc = accumulate_segment::<T, M, false>(input, &segments, (begin, end), map, team);
        }
        let total = block::reduce_groups::<FastAcc<T, M>, M::Fast>(acc, plan.team_threads);
        first = if last_round {
            queue.receive(requested)
        } else {
            first + teams_per_taker
        };
        // As `reduce_exact` finishes a team's segment (not shared as a
        // function: that changed the fixed-order kernels' code, and their
        // rows took 2.5–4.5% longer, H200, 2026-11-30).
        let holder = thread_in_team == 0 && in_range;
        let inexact = holder && !total.is_exact();
        let again = warp::broadcast_from_lane_0(warp::reduce::<u32, Max>(inexact as u32)) != 0;
        let result = if again {
            sum_segment_exactly::<T, M, false>(input, &segments, map, (begin, end), team_threads, thread_in_team)
        } else {
            M::Fast::round(total)
        };
        if holder {
            thread::store_result(out.at::<T>(segment), finish.of::<T, M>(map, result, end - begin));
        }
    }
    queue.finish();
}

/// [`reduce_exact`] with teams of one thread: each thread sums its own
/// segments, grid-stride, and checks and rounds each alone; a total that is
/// not exact is summed again by its thread. No shuffles, votes or barriers:
/// the general loop's collective steps, run for teams of one, cost more
/// than the sums of short rows (`f32` rows of 16: 29 instructions per
/// element, and spills; Nsight Compute on an H200, 2026-11-29).
///
/// Inlined into the teams' kernel, its registers and the teams' loop's
/// shared the kernel's cap of 64, and the loop spilled more (`f32`: 56
/// bytes → 128), which cost it up to 13% (`f32` rows of 256 1.28 → 1.44 ×
/// `Op::Sum`). So it is inlined only into a kernel of its own, and the
/// teams' kernel calls it ([`reduce_exact_per_thread_called`]); which one
/// the host launches is tuning (`ExactTeams::single_thread_kernel`).
///
/// # Safety
/// As [`reduce_exact`], with teams of one thread and one part per segment.
#[inline(always)]
pub unsafe fn reduce_exact_per_thread<T: ExactElement, M: ExactMap<T>, const PLACED: bool, const RUNS: bool>(
    input: u64,
    segments: Segments,
    out: Results<PLACED>,
    shifts: u64,
    finish: ExactFinish,
) {
    let threads = grid_dim_x() as u64 * block_dim_x() as u64;
    let mut segment = device::index_1d();
    while segment < segments.count {
        let (begin, end) = segments.bounds(segment);
        let map = M::of_part(shifts, segment);
        let total = accumulate_segment::<T, M, RUNS>(input, &segments, (begin, end), map, Team::single());
        let result = if total.is_exact() {
            M::Fast::round(total)
        } else {
            sum_segment_exactly::<T, M, RUNS>(input, &segments, map, (begin, end), 1, 0)
        };
        let count = segment_len::<RUNS>(&segments, (begin, end));
        thread::store_result(out.at::<T>(segment), finish.of::<T, M>(map, result, count));
        segment += threads;
    }
}

/// [`reduce_exact_per_thread`] as a function of its own, for the teams'
/// kernel: there, the call keeps the teams' loop's registers (`f64`:
/// 0 bytes spilled with the call, 64 without it, and `f64` rows of 128 to
/// 2^17 and segments of mean 10^4 5–6% slower; `ptxas -v` and an H200,
/// 2026-11-29).
///
/// # Safety
/// As [`reduce_exact_per_thread`].
#[inline(never)]
unsafe fn reduce_exact_per_thread_called<T: ExactElement, M: ExactMap<T>, const PLACED: bool, const RUNS: bool>(
    input: u64,
    segments: Segments,
    out: Results<PLACED>,
    shifts: u64,
    finish: ExactFinish,
) {
    reduce_exact_per_thread::<T, M, PLACED, RUNS>(input, segments, out, shifts, finish)
}

/// The elements of the segment `[begin, end)`: with `RUNS`, of its
/// [`Segments::runs`] runs.
#[inline(always)]
fn segment_len<const RUNS: bool>(segments: &Segments, (begin, end): (u64, u64)) -> u64 {
    if RUNS {
        (end - begin) * segments.runs
    } else {
        end - begin
    }
}

/// This thread's fast accumulator of its share (as `team` reads) of the
/// segment `[begin, end)`, or with `RUNS` of its runs, mapped by `map`.
///
/// # Safety
/// Every element read (every run's, with `RUNS`) is a readable element of
/// `input`.
#[inline(always)]
unsafe fn accumulate_segment<T: ExactElement, M: ExactMap<T>, const RUNS: bool>(
    input: u64,
    segments: &Segments,
    (begin, end): (u64, u64),
    map: M,
    team: Team,
) -> FastAcc<T, M> {
    let first = element_at::<T>(input, begin);
    let len = segment_len::<RUNS>(segments, (begin, end));
    if RUNS {
        let runs = Runs::new(end - begin, segments.run_pitch);
        let source = ExactInput::<T, M, Runs>::laid_out(first, map, runs);
        thread::accumulate::<FastAcc<T, M>, M::Fast, _>(source, len, team)
    } else {
        let source = ExactInput::<T, M>::new(first, map);
        thread::accumulate::<FastAcc<T, M>, M::Fast, _>(source, len, team)
    }
}

/// [`sum_exactly_in_warp`] of the segment `[begin, end)`, or with `RUNS`
/// of its runs.
///
/// # Safety
/// As [`sum_exactly_in_warp`], for every element read.
#[inline(always)]
unsafe fn sum_segment_exactly<T: ExactElement, M: ExactMap<T>, const RUNS: bool>(
    input: u64,
    segments: &Segments,
    map: M,
    (begin, end): (u64, u64),
    lanes: u64,
    lane: u64,
) -> T {
    if RUNS {
        let runs = Runs::new(end - begin, segments.run_pitch);
        let len = segment_len::<RUNS>(segments, (begin, end));
        sum_exactly_in_warp::<T, M, Runs>(input, map, (begin, len), runs, lanes, lane)
    } else {
        sum_exactly_in_warp::<T, M, Contiguous>(input, map, (begin, end - begin), Contiguous, lanes, lane)
    }
}

/// The exact pass of a group of `lanes` lanes of a warp (a power of two
/// up to 32): each lane adds its share of the `len` elements from `begin`
/// on, where `layout` puts them (every `lanes`-th element from its own,
/// mapped by `map`) to an [`Exact`], whose digits the group adds up
/// with shuffles; the group's first lane gets the sum rounded. A group of
/// one lane shuffles nothing: one thread alone may call it.
///
/// # Safety
/// All 32 lanes of the warp call it together with the same `lanes`, or,
/// with `lanes` 1, any thread alone; the elements are readable elements
/// of `input`.
#[inline(never)]
unsafe fn sum_exactly_in_warp<T: ExactElement, M: ExactMap<T>, L: ElementLayout>(
    input: u64,
    map: M,
    (begin, len): (u64, u64),
    layout: L,
    lanes: u64,
    lane: u64,
) -> T {
    let mut exact = Exact::<T>::new();
    let mut index = lane;
    while index < len {
        let element = element_at::<T>(input, begin + layout.offset(index));
        exact.add(map.apply(thread::load_element::<T>(element)));
        index += lanes;
    }
    let (digits, specials) = exact.parts();
    let group_sum = |value: i64| warp::reduce_groups::<i64, Sum>(value, lanes as u32);
    let mut totals = T::ZERO_WORDS;
    for (total, &digit) in totals.as_mut().iter_mut().zip(digits.as_ref()) {
        *total = group_sum(digit);
    }
    let specials = specials.map(|count| group_sum(count as i64) as u64);
    let mut sum = Exact::<T>::new();
    sum.set_parts(totals, specials, lanes as u32);
    sum.round()
}
