//! Block-wide reduction: warps reduce in registers, then warp 0 reduces the
//! per-warp results through shared memory.

use crate::device::{self, sync_threads, thread_idx_x};
use crate::element::Element;
use crate::op::Operator;
use crate::warp;

/// Reduces one value per thread over the whole block.
///
/// The result is valid in thread 0 only. The block size must be a multiple of
/// 32 and at most 1024 (the host checks this before launching).
///
/// Does not end with a barrier: before the block calls `reduce` again, every
/// thread must pass a barrier after this call returns (for example the one in
/// [`broadcast_from_thread_0`]), or warp 0 may still be reading the scratch
/// slots that the next call overwrites.
///
/// # Safety
/// Every thread of the block must call it together.
#[inline(always)]
pub unsafe fn reduce<T: Element, O: Operator<T>>(value: T) -> T {
    let lane = thread_idx_x() % 32;
    let warp_index = thread_idx_x() / 32;
    let warps = device::block_dim_x() / 32;
    let slots = device::warp_slots();

    let warp_total = warp::reduce::<T, O>(value);
    if lane == 0 {
        device::store_shared(slots.add(warp_index as usize), warp_total.to_bits());
    }
    sync_threads();

    let mut block_total = O::identity();
    if warp_index == 0 {
        let mine = if lane < warps {
            T::from_bits(device::load_shared(slots.add(lane as usize)))
        } else {
            O::identity()
        };
        block_total = warp::reduce::<T, O>(mine);
    }
    block_total
}

/// Shares thread 0's `flag` with every thread of the block.
///
/// Also a barrier: every thread's earlier shared-memory accesses are done
/// when any thread returns. Call it at most once per launch (the flag slot is
/// not guarded against being overwritten by a second call).
///
/// # Safety
/// Every thread of the block must call it together.
#[inline(always)]
pub unsafe fn broadcast_from_thread_0(flag: bool) -> bool {
    let slot = device::block_flag();
    if thread_idx_x() == 0 {
        device::store_shared(slot, flag as u32);
    }
    sync_threads();
    device::load_shared(slot) != 0
}
