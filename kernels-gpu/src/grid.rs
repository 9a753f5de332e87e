//! Grid-level reduction in one launch: every block reduces its share, and the
//! last block to finish combines the per-block partials in block order.
//!
//! "Last" is decided by a ticket: each block's thread 0 publishes its partial,
//! then takes a ticket with one `atom.acq_rel.gpu` add. The block that draws
//! ticket `grid_dim - 1` knows every other partial is visible, combines them in
//! index order (so the result does not depend on which block finished last),
//! writes the result and resets the ticket to zero for the next launch. No
//! memset, no second kernel, and no float atomics deciding the combine order.

use crate::abi::PARTIAL_SLOT_BYTES;
use crate::block;
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::element::Element;
use crate::op::{AnyElement, Operator};
use crate::thread::{self, Source, Team};

/// The body of every reduction entry point (parameters: see [`crate::abi`]).
///
/// # Safety
/// - `source` reads `len` readable, element-aligned `T`s per array, not written during the launch;
/// - `partials` has one writable 8-byte slot per block of the grid;
/// - `ticket` is a writable `u32` that is zero, and no other launch uses
///   `partials` or `ticket` concurrently;
/// - `out` is a writable `T`;
/// - the block size is a multiple of 32, at most 1024; the grid is 1-D.
#[inline(always)]
pub unsafe fn reduce<T: Element, O: Operator<T> + AnyElement, S: Source<T>>(
    source: S,
    len: u64,
    partials: *mut u64,
    ticket: *mut u32,
    out: *mut T,
) {
    let block_total = block::reduce::<T, O>(thread::accumulate::<T, O, S>(source, len, Team::grid()));
    let out = device::to_global(out as u64);

    if grid_dim_x() == 1 {
        if thread_idx_x() == 0 {
            thread::store_element(out, block_total);
        }
        return;
    }

    let partials = device::to_global(partials as u64);
    let ticket = device::to_global(ticket as u64);
    let slot = partials + block_idx_x() as u64 * PARTIAL_SLOT_BYTES;
    if finished_last(slot, ticket, grid_dim_x(), block_total) {
        combine_partials::<T, O>(partials, grid_dim_x(), ticket, out);
    }
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
/// `slot` is this block's writable 8-byte partial slot and `ticket` a
/// writable `u32` that exactly `arrivals` blocks of the launch add to,
/// starting from zero; every thread of the block must call it together, and
/// pass a barrier after it before it calls it again.
#[inline(always)]
pub(crate) unsafe fn finished_last<T: Element>(slot: u64, ticket: u64, arrivals: u32, block_total: T) -> bool {
    let mut last = false;
    if thread_idx_x() == 0 {
        device::store_global_u64(slot, block_total.to_bits());
        last = device::atomic_add_acq_rel_gpu_u32(ticket, 1) == arrivals - 1;
    }
    block::broadcast_from_thread_0(last)
}

/// The last block's part: combines the `count` partials at `partials` in
/// index order (so the result does not depend on which block finished
/// last), writes the result to `out` and resets `ticket` to zero for the
/// next launch.
///
/// # Safety
/// Called by every thread of the block for which [`finished_last`] returned
/// true, with the slots and ticket it was given; `out` is a writable `T`.
#[inline(always)]
pub(crate) unsafe fn combine_partials<T: Element, O: Operator<T>>(partials: u64, count: u32, ticket: u64, out: u64) {
    let mut acc = O::identity();
    let mut index = thread_idx_x();
    while index < count {
        let bits = device::load_relaxed_gpu_u64(partials + index as u64 * PARTIAL_SLOT_BYTES);
        acc = O::combine(acc, T::from_bits(bits));
        index += block_dim_x();
    }
    let total = block::reduce::<T, O>(acc);
    if thread_idx_x() == 0 {
        thread::store_element(out, total);
        device::store_relaxed_gpu_u32(ticket, 0);
    }
}
