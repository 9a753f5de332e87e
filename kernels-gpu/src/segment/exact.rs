//! The exact sum of each segment ([`crate::expansion`]): the fixed-order
//! schedule's rounds with an [`Expansion`] for each team's partial sum;
//! each segment's total is checked and rounded once, and where it cannot
//! be exact the team sums its segment again with [`Exact`] accumulators.
//! Each result is the segment's exact sum rounded once, so it does not
//! depend on the plan, the launch, the other segments or their number.

use super::{element_at, Segments};
use crate::abi::{SegmentPlan, PARTIAL_SLOT_BYTES};
use crate::block;
use crate::device::{block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::exact::Exact;
use crate::expansion::{ExactElement, ExactInput, ExactSum, Expansion};
use crate::grid;
use crate::op::{Max, Sum};
use crate::place::Results;
use crate::thread::{self, Team};
use crate::warp;
use core::mem::size_of;

/// The exact sum of each segment into `out`, as [`super::reduce`] reduces
/// them (its parameters, rules and plans), with teams of any size.
///
/// # Safety
/// As [`super::reduce`].
#[inline(always)]
pub unsafe fn reduce_exact<T: ExactElement, const PLACED: bool>(
    input: u64,
    segments: Segments,
    plan: SegmentPlan,
    partials: u64,
    tickets: u64,
    out: Results<PLACED>,
) {
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
        let mut acc = Expansion::ZERO;
        if unit < units {
            let team = Team {
                worker: part,
                workers: parts,
                threads: team_threads,
                thread: thread_in_team,
            };
            acc = thread::accumulate::<Expansion, ExactSum, _>(
                ExactInput::<T>::new(element_at::<T>(input, begin)),
                end - begin,
                team,
            );
        }
        let team_total = block::reduce_groups::<Expansion, ExactSum>(acc, plan.team_threads);
        // The thread that holds its segment's total: the team's first, or,
        // for a segment in parts, thread 0 of the last block to finish one.
        let (holder, total) = if parts == 1 {
            (thread_in_team == 0 && unit < units, team_total)
        } else {
            // The team is the whole block and `unit < units` (one block per part).
            let first_slot = partials + segment * parts * PARTIAL_SLOT_BYTES;
            let ticket = tickets + segment * size_of::<u32>() as u64;
            if grid::finished_last(first_slot + part * PARTIAL_SLOT_BYTES, ticket, parts as u32, team_total) {
                let total = grid::combine_partials::<Expansion, ExactSum>(first_slot, parts as u32, ticket);
                (thread_idx_x() == 0, total)
            } else {
                (false, team_total)
            }
        };
        if team_threads > 32 {
            // The next block reduction reuses the scratch slots.
            sync_threads();
        }
        let inexact = holder && !total.is_exact(end - begin);
        // Where any team of the warp (of the block, for teams of several
        // warps) has a total that is not exact, all of them sum their
        // segments again exactly: the exact pass's reductions need every
        // thread, and an exact total rounds the same either way.
        let again = if team_threads > 32 {
            let any = block::reduce::<u32, Max>(inexact as u32);
            block::broadcast_from_thread_0(any != 0)
        } else {
            warp::broadcast_from_lane_0(warp::reduce::<u32, Max>(inexact as u32)) != 0
        };
        let result = if again {
            // Each team sums its whole segment (one in parts: by the last
            // block); a team past the last unit has `begin == end`.
            sum_team_exactly::<T>(input, begin, end, team_threads, thread_in_team)
        } else {
            T::round(total)
        };
        if holder {
            thread::store_element(out.at::<T>(segment), result);
        }
        if team_threads > 32 {
            // The next round's block reduction reuses the scratch slots and flag.
            sync_threads();
        }
        first_unit += teams_in_grid;
    }
}

/// The team's exact pass: each thread adds its share of `[begin, end)`
/// (every `team_threads`-th element from its own) to an [`Exact`], whose
/// digits the team adds up; the team's first thread gets the sum rounded.
///
/// # Safety
/// Every thread of the block calls it together with the same
/// `team_threads` (a power of two dividing the block size); `[begin, end)`
/// are readable elements of `input`.
#[inline(never)]
unsafe fn sum_team_exactly<T: ExactElement>(
    input: u64,
    begin: u64,
    end: u64,
    team_threads: u64,
    thread_in_team: u64,
) -> T {
    let mut exact = Exact::<T>::new();
    let mut index = begin + thread_in_team;
    while index < end {
        exact.add(thread::load_element::<T>(element_at::<T>(input, index)));
        index += team_threads;
    }
    let (digits, specials) = exact.parts();
    let mut totals = T::ZERO_WORDS;
    for (total, &digit) in totals.as_mut().iter_mut().zip(digits.as_ref()) {
        *total = team_sum(digit, team_threads);
    }
    let specials = specials.map(|count| team_sum(count as i64, team_threads) as u64);
    let mut sum = Exact::<T>::new();
    sum.set_parts(totals, specials, team_threads as u32);
    sum.round()
}

/// The sum over the team of each thread's `value` (valid in its first thread).
///
/// # Safety
/// As [`sum_team_exactly`].
#[inline(always)]
unsafe fn team_sum(value: i64, team_threads: u64) -> i64 {
    let total = block::reduce_groups::<i64, Sum>(value, team_threads as u32);
    if team_threads > 32 {
        // The next reduction reuses the scratch slots.
        sync_threads();
    }
    total
}
