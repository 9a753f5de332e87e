//! The fixed-order schedule: units taken by teams in rounds, grid-stride
//! (see the [module docs](super)).

use super::packed_rows::{packs_rows, reduce_packed_rows};
use super::per_thread::reduce_per_thread;
use super::{accumulate_share, Segments};
use crate::abi::{SegmentPlan, PARTIAL_SLOT_BYTES};
use crate::block;
use crate::device::{block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::element::Element;
use crate::grid;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
use crate::place::Results;
use crate::thread::{self, Team};
use core::mem::size_of;

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
pub unsafe fn reduce<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement, const PLACED: bool>(
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
            reduce_packed_rows::<T, M, O, PLACED>(input, segments, out, teams_in_grid);
        } else {
            reduce_per_thread::<T, M, O, PLACED>(input, segments, out, teams_in_grid);
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
        let destination = out.at::<T>(segment);
        if parts == 1 {
            if thread_in_team == 0 && unit < units {
                thread::store_result(destination, total);
            }
        } else {
            // The team is the whole block and `unit < units` (one block per part).
            let first_slot = partials + segment * parts * PARTIAL_SLOT_BYTES;
            let ticket = tickets + segment * size_of::<u32>() as u64;
            if grid::finished_last(first_slot + part * PARTIAL_SLOT_BYTES, ticket, parts as u32, total) {
                let total = grid::combine_partials::<T, O>(first_slot, parts as u32, ticket);
                if thread_idx_x() == 0 {
                    thread::store_result(destination, total);
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
