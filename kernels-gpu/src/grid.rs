//! Grid-level reduction in one launch: every block reduces its share, and the
//! last block to finish combines the per-block partials in block order.
//!
//! "Last" is decided by a ticket: each block's thread 0 publishes its partial,
//! then takes a ticket with one `atom.acq_rel.gpu` add. The block that draws
//! ticket `grid_dim - 1` knows every other partial is visible, combines them in
//! index order (so the result does not depend on which block finished last)
//! and resets the ticket to zero for the next launch; the entry point writes
//! the result. No memset, no second kernel, and no float atomics deciding the
//! combine order.

use crate::abi::PARTIAL_SLOT_BYTES;
use crate::block;
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::element::Accumulator;
use crate::op::{AnyElement, Operator};
use crate::thread::{self, Source, Team};

/// The body of every reduction entry point (parameters: see [`crate::abi`]):
/// `Some(total)` in thread 0 of the block that combines the partials (the
/// last to finish, or the only block), `None` in every other thread. The
/// entry point stores it.
///
/// # Safety
/// - `source` reads `len` readable, element-aligned elements per array, not written during the launch;
/// - `partials` has one writable [`PARTIAL_SLOT_BYTES`] slot per block of the grid;
/// - `ticket` is a writable `u32` that is zero, and no other launch uses
///   `partials` or `ticket` concurrently;
/// - the block size is a multiple of 32, at most 1024; the grid is 1-D.
#[inline(always)]
pub unsafe fn reduce<A: Accumulator, O: Operator<A> + AnyElement, S: Source<A>>(
    source: S,
    len: u64,
    partials: *mut u64,
    ticket: *mut u32,
) -> Option<A> {
    let block_total = block::reduce::<A, O>(thread::accumulate::<A, O, S>(source, len, Team::grid()));

    if grid_dim_x() == 1 {
        return (thread_idx_x() == 0).then_some(block_total);
    }

    let partials = device::to_global(partials as u64);
    let ticket = device::to_global(ticket as u64);
    let slot = partials + block_idx_x() as u64 * PARTIAL_SLOT_BYTES;
    if finished_last(slot, ticket, grid_dim_x(), block_total) {
        let total = combine_partials::<A, O>(partials, grid_dim_x(), ticket);
        return (thread_idx_x() == 0).then_some(total);
    }
    None
}

/// Publishes this block's partial (valid in thread 0) in the slot at `slot`
/// and tells every thread of the block whether it was the last of the
/// `arrivals` blocks sharing `ticket` to do so.
///
/// Why the last block's loads see every partial: each block's thread 0 writes
/// its partial, then releases it with the `acq_rel` ticket add; the last
/// block's thread 0 acquires all of them with its own add (the ticket's
/// modification order chains the releases); the barrier in the broadcast then
/// orders that acquire before every other thread's loads (as in CUDA's
/// threadFenceReduction sample). The loads are `ld.relaxed.gpu`, so no stale
/// L1 line can answer them.
///
/// # Safety
/// `slot` is this block's writable partial slot and `ticket` a
/// writable `u32` that exactly `arrivals` blocks of the launch add to,
/// starting from zero; every thread of the block must call it together, and
/// pass a barrier after it before it calls it again.
#[inline(always)]
pub(crate) unsafe fn finished_last<A: Accumulator>(slot: u64, ticket: u64, arrivals: u32, block_total: A) -> bool {
    let mut last = false;
    if thread_idx_x() == 0 {
        store_partial(slot, block_total);
        last = device::atomic_add_acq_rel_gpu_u32(ticket, 1) == arrivals - 1;
    }
    block::broadcast_from_thread_0(last)
}

/// The last block's part: combines the `count` partials at `partials` in
/// index order (so the result does not depend on which block finished
/// last) and resets `ticket` to zero for the next launch. The result is
/// valid in thread 0.
///
/// # Safety
/// Called by every thread of the block for which [`finished_last`] returned
/// true, with the slots and ticket it was given.
#[inline(always)]
pub(crate) unsafe fn combine_partials<A: Accumulator, O: Operator<A>>(partials: u64, count: u32, ticket: u64) -> A {
    let mut acc = O::identity();
    let mut index = thread_idx_x();
    while index < count {
        acc = O::combine(acc, load_partial(partials + index as u64 * PARTIAL_SLOT_BYTES));
        index += block_dim_x();
    }
    let total = block::reduce::<A, O>(acc);
    if thread_idx_x() == 0 {
        device::store_relaxed_gpu_u32(ticket, 0);
    }
    total
}

/// Writes `value` to the global slot at `slot` (one 8-byte store per half
/// it uses), for another block to read with [`load_partial`].
///
/// # Safety
/// `slot` is the global address of writable, 8-byte aligned room for
/// `A::HALVES` 8-byte words (a slot of [`PARTIAL_SLOT_BYTES`] holds any).
#[inline(always)]
pub(crate) unsafe fn store_partial<A: Accumulator>(slot: u64, value: A) {
    let halves = value.to_halves();
    device::store_global_u64(slot, halves[0]);
    if A::HALVES > 1 {
        device::store_global_u64(slot + 8, halves[1]);
    }
    if A::HALVES > 2 {
        device::store_global_u64(slot + 16, halves[2]);
    }
}

/// The value another block wrote with [`store_partial`], read `relaxed`
/// at GPU scope (never from a stale L1 line).
///
/// # Safety
/// As [`store_partial`], and the write is ordered before this read (a
/// ticket, see [`finished_last`]).
#[inline(always)]
pub(crate) unsafe fn load_partial<A: Accumulator>(slot: u64) -> A {
    let half = |k: u64| {
        if (k as u32) < A::HALVES {
            device::load_relaxed_gpu_u64(slot + 8 * k)
        } else {
            0
        }
    };
    A::from_halves([half(0), half(1), half(2)])
}
