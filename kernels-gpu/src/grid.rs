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
use crate::thread::{self, Source};

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
    let block_total = block::reduce::<T, O>(thread::accumulate::<T, O, S>(source, len));
    let out = device::to_global(out as u64);

    if grid_dim_x() == 1 {
        if thread_idx_x() == 0 {
            thread::store_element(out, block_total);
        }
        return;
    }

    let partials = device::to_global(partials as u64);
    let ticket = device::to_global(ticket as u64);
    if !finished_last(partials, ticket, block_total) {
        return;
    }

    let mut acc = O::identity();
    let mut index = thread_idx_x();
    while index < grid_dim_x() {
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

/// Publishes this block's partial (valid in thread 0) and tells every thread
/// of the block whether it was the last block to do so.
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
/// As [`reduce`]; every thread of the block must call it together.
#[inline(always)]
unsafe fn finished_last<T: Element>(partials: u64, ticket: u64, block_total: T) -> bool {
    let mut last = false;
    if thread_idx_x() == 0 {
        device::store_global_u64(
            partials + block_idx_x() as u64 * PARTIAL_SLOT_BYTES,
            block_total.to_bits(),
        );
        last = device::atomic_add_acq_rel_gpu_u32(ticket, 1) == grid_dim_x() - 1;
    }
    block::broadcast_from_thread_0(last)
}
