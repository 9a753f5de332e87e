//! Warp-wide reduction in registers with `shfl.sync.bfly`, or with one
//! `redux.sync` where the hardware reduces the operator and type itself
//! (32-bit integer sum, max and min, sm_80+).

use crate::device;
use crate::element::Accumulator;
use crate::op::Operator;

/// Lane `lane ^ lane_mask`'s `value`, moved one 32-bit word at a time.
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn shuffle_xor<A: Accumulator>(value: A, lane_mask: u32) -> A {
    let mut words = value.to_words();
    let mut word = 0;
    while word < A::WORDS as usize {
        words[word] = device::shfl_xor_u32(words[word], lane_mask);
        word += 1;
    }
    A::from_words(words)
}

/// Reduces one value per lane over the 32 lanes of a warp.
///
/// The result is valid in lane 0. (Every lane ends with a combination of all
/// 32 values, but the operand order differs between lanes, which can change a
/// NaN's payload.) The combine tree is fixed, so the result is deterministic.
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn reduce<A: Accumulator, O: Operator<A>>(value: A) -> A {
    reduce_groups::<A, O>(value, 32)
}

/// Reduces one value per lane over each aligned group of `lanes` lanes (lanes
/// `[k·lanes, (k+1)·lanes)`), `lanes` a power of two from 1 to 32.
///
/// The result is valid in the first lane of each group. The combine tree is
/// fixed, so the result is deterministic.
///
/// # Safety
/// All 32 lanes of the warp must call it together, with the same `lanes`.
#[inline(always)]
pub unsafe fn reduce_groups<A: Accumulator, O: Operator<A>>(value: A, lanes: u32) -> A {
    if lanes == 32 {
        if let Some(total) = O::warp_reduce_native(value) {
            return total;
        }
    }
    let mut value = value;
    let mut lane_mask = lanes / 2;
    while lane_mask > 0 {
        value = O::combine(value, shuffle_xor(value, lane_mask));
        lane_mask >>= 1;
    }
    value
}

/// Lane 0's `value`, in every lane: a butterfly shuffle whose lane mask is
/// the reading lane's own index reads lane `lane ^ lane = 0`.
///
/// # Safety
/// All 32 lanes of the warp must call it together.
#[inline(always)]
pub unsafe fn broadcast_from_lane_0<A: Accumulator>(value: A) -> A {
    shuffle_xor(value, device::thread_idx_x() % 32)
}
