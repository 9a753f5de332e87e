//! Block-wide reduction: warps reduce in registers, then warp 0 reduces the
//! per-warp results through shared memory. The same for groups of threads
//! within a block (a segmented reduction's teams).

use crate::device::{self, sync_threads, thread_idx_x};
use crate::element::Element;
use crate::op::Operator;
use crate::warp;

/// Reduces one value per thread over the whole block.
///
/// The result is valid in thread 0 only. The block size must be a multiple of
/// 32 and at most 1024 (the host checks this before launching).
///
/// Does not end with a barrier: before the block calls `reduce` (or
/// [`reduce_groups`]) again, every thread must pass a barrier after this call
/// returns (for example the one in [`broadcast_from_thread_0`]), or warp 0 may
/// still be reading the scratch slots that the next call overwrites.
///
/// # Safety
/// Every thread of the block must call it together.
#[inline(always)]
pub unsafe fn reduce<T: Element, O: Operator<T>>(value: T) -> T {
    reduce_warp_groups::<T, O>(value, device::block_dim_x() / 32)
}

/// Reduces one value per thread over each aligned group of `threads`
/// threads of the block (threads `[k·threads, (k+1)·threads)`), `threads` a
/// power of two that divides the block size (a segment's team).
///
/// The result is valid in the first thread of each group. Groups of up to 32
/// threads reduce within their warp and touch no shared memory; larger ones
/// go through the block's scratch slots, with the rule of [`reduce`] about
/// the barrier before the next call.
///
/// # Safety
/// Every thread of the block must call it together, with the same `threads`.
#[inline(always)]
pub unsafe fn reduce_groups<T: Element, O: Operator<T>>(value: T, threads: u32) -> T {
    if threads <= 32 {
        warp::reduce_groups::<T, O>(value, threads)
    } else {
        reduce_warp_groups::<T, O>(value, threads / 32)
    }
}

/// Reduces over each group of `warps` consecutive warps (all warps of the
/// block, or a segment's team); the result is valid in the first thread of
/// each group. `warps` is the block's warps, or a power of two that divides
/// them.
///
/// # Safety
/// Every thread of the block must call it together, with the same `warps`.
#[inline(always)]
unsafe fn reduce_warp_groups<T: Element, O: Operator<T>>(value: T, warps: u32) -> T {
    let lane = thread_idx_x() % 32;
    let warp_index = thread_idx_x() / 32;
    let slots = device::warp_slots();

    let warp_total = warp::reduce::<T, O>(value);
    if lane == 0 {
        device::store_shared(slots.add(warp_index as usize), warp_total.to_bits());
    }
    sync_threads();

    let mut group_total = O::identity();
    // The first warp of each group: a mask, not a remainder (cheaper, and
    // right both for power-of-two groups and for all warps of any block,
    // whose indices are all below the next power of two).
    if warp_index & (warps.next_power_of_two() - 1) == 0 {
        let mine = if lane < warps {
            T::from_bits(device::load_shared(slots.add((warp_index + lane) as usize)))
        } else {
            O::identity()
        };
        group_total = warp::reduce::<T, O>(mine);
    }
    group_total
}

/// Shares thread 0's `flag` with every thread of the block.
///
/// Also a barrier: every thread's earlier shared-memory accesses are done
/// when any thread returns. Before a second call, every thread must pass
/// another barrier (the flag slot is not guarded against being overwritten
/// while a slow thread still reads it).
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
