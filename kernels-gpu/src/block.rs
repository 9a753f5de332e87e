//! Block-wide reduction: warps reduce in registers, then warp 0 reduces the
//! per-warp results through shared memory. The same for groups of threads
//! within a block (a segmented reduction's teams).

use crate::device::{self, sync_threads, thread_idx_x};
use crate::element::Accumulator;
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
pub unsafe fn reduce<A: Accumulator, O: Operator<A>>(value: A) -> A {
    reduce_warp_groups::<A, O>(value, device::block_dim_x() / 32)
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
pub unsafe fn reduce_groups<A: Accumulator, O: Operator<A>>(value: A, threads: u32) -> A {
    if threads <= 32 {
        warp::reduce_groups::<A, O>(value, threads)
    } else {
        reduce_warp_groups::<A, O>(value, threads / 32)
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
unsafe fn reduce_warp_groups<A: Accumulator, O: Operator<A>>(value: A, warps: u32) -> A {
    let lane = thread_idx_x() % 32;
    let warp_index = thread_idx_x() / 32;
    let slots = device::warp_slots();

    let warp_total = warp::reduce::<A, O>(value);
    if lane == 0 {
        store_slot(slots.add(warp_index as usize), warp_total);
    }
    sync_threads();

    let mut group_total = O::identity();
    // The first warp of each group: a mask, not a remainder (cheaper, and
    // right both for power-of-two groups and for all warps of any block,
    // whose indices are all below the next power of two).
    if warp_index & (warps.next_power_of_two() - 1) == 0 {
        let mine = if lane < warps {
            load_slot(slots.add((warp_index + lane) as usize))
        } else {
            O::identity()
        };
        group_total = warp::reduce::<A, O>(mine);
    }
    group_total
}

/// A slot of shared or global memory that holds one [`Accumulator`] as its
/// 8-byte halves: [`PARTIAL_SLOT_BYTES`](crate::abi::PARTIAL_SLOT_BYTES).
pub(crate) type Slot = [u64; 4];

/// Writes `value` to a shared-memory slot: one 8-byte store per half it uses.
///
/// # Safety
/// As [`device::store_shared`], for the slot.
#[inline(always)]
pub(crate) unsafe fn store_slot<A: Accumulator>(slot: *mut Slot, value: A) {
    let halves = value.to_halves();
    let slot = slot as *mut u64;
    device::store_shared(slot, halves[0]);
    if A::HALVES > 1 {
        device::store_shared(slot.add(1), halves[1]);
    }
    if A::HALVES > 2 {
        device::store_shared(slot.add(2), halves[2]);
    }
}

/// Reads the value [`store_slot`] wrote.
///
/// # Safety
/// As [`device::load_shared`], for the slot.
#[inline(always)]
pub(crate) unsafe fn load_slot<A: Accumulator>(slot: *const Slot) -> A {
    let slot = slot as *const u64;
    let half = |k: usize| {
        if (k as u32) < A::HALVES {
            device::load_shared(slot.add(k))
        } else {
            0
        }
    };
    A::from_halves([half(0), half(1), half(2)])
}

/// Shares thread 0's `flag` with every thread of the block.
///
/// Also a barrier: every thread's earlier shared-memory accesses are done
/// when any thread returns. Before a second call, every thread must pass
/// another barrier, as [`post_from_thread_0`] says.
///
/// # Safety
/// Every thread of the block must call it together.
#[inline(always)]
pub unsafe fn broadcast_from_thread_0(flag: bool) -> bool {
    if thread_idx_x() == 0 {
        post_from_thread_0(flag as u64);
    }
    sync_threads();
    read_posted() != 0
}

/// Thread 0's half of sharing `value` with the block, in two steps so that
/// the barrier between them can be one the block passes anyway (a block
/// reduction's): thread 0 posts the value, then every thread, past a
/// barrier, reads it with [`read_posted`]. Before thread 0 posts again,
/// every thread must pass another barrier after its read (the block has one
/// word for this, shared with [`broadcast_from_thread_0`]).
///
/// # Safety
/// Called by thread 0 only; the rules above hold.
#[inline(always)]
pub unsafe fn post_from_thread_0(value: u64) {
    device::store_shared(device::block_word(), value);
}

/// The value thread 0 last posted with [`post_from_thread_0`].
///
/// # Safety
/// A barrier separates the post from this read, as [`post_from_thread_0`] says.
#[inline(always)]
pub unsafe fn read_posted() -> u64 {
    device::load_shared(device::block_word())
}
