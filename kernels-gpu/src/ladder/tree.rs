//! How a ladder rung's block combines one value per thread into one value,
//! valid in thread 0. The three shared-memory trees need a power-of-two
//! block size; every step ends with a barrier, as in the seeds.

use crate::block;
use crate::device::{self, block_dim_x, sync_threads, thread_idx_x};
use crate::element::Element;
use crate::op::Operator;
use core::marker::PhantomData;

/// A block-wide combine.
pub trait TreeShape {
    /// Combines every thread's `value`; the result is valid in thread 0.
    ///
    /// # Safety
    /// Every thread of the block calls it together; the dynamic shared array
    /// holds at least `block_dim` `T`s; the block size is a power of two (and
    /// for [`Shuffle`], a multiple of 32).
    unsafe fn combine<T: Element, O: Operator<T>>(value: T) -> T;
}

/// Runs `step(stride)` for each stride of a shared-memory tree over `shared`
/// (which holds one value per thread), with a barrier after every step.
#[inline(always)]
unsafe fn shared_tree<T: Element>(value: T, strides: impl Iterator<Item = u32>, step: impl Fn(*mut T, u32, u32)) -> T {
    let shared = device::dynamic_shared() as *mut T;
    device::store_shared(shared.add(thread_idx_x() as usize), value);
    sync_threads();
    for stride in strides {
        step(shared, thread_idx_x(), stride);
        sync_threads();
    }
    device::load_shared(shared)
}

/// `shared[to] = combine(shared[to], shared[to + stride])` in a thread that
/// combines at this stride: each rung names the slot `to` it combines into,
/// `None` in the threads that do not.
#[inline(always)]
unsafe fn combine_into<T: Element, O: Operator<T>>(shared: *mut T, slot: Option<u32>, stride: u32) {
    let Some(to) = slot else {
        return;
    };
    let a = device::load_shared(shared.add(to as usize));
    let b = device::load_shared(shared.add((to + stride) as usize));
    device::store_shared(shared.add(to as usize), O::combine(a, b));
}

/// Doubling strides 1, 2, 4, … below the block size.
fn doubling(block: u32) -> impl Iterator<Item = u32> {
    core::iter::successors(Some(1u32), |s| Some(s * 2)).take_while(move |&s| s < block)
}

/// Rung 1, interleaved addressing with divergent warps: at stride `s`, the
/// threads whose index is a multiple of `2s` combine. The active threads are
/// scattered over every warp, so every warp diverges at every step, and `%` is
/// slow.
pub struct InterleavedDivergent;

impl TreeShape for InterleavedDivergent {
    #[inline(always)]
    unsafe fn combine<T: Element, O: Operator<T>>(value: T) -> T {
        shared_tree(value, doubling(block_dim_x()), |shared, tid, stride| {
            // `checked_rem` keeps a panic path out of the PTX; the `%` stays.
            combine_into::<T, O>(shared, (tid.checked_rem(2 * stride) == Some(0)).then_some(tid), stride);
        })
    }
}

/// Rung 2, interleaved addressing with a strided index: thread `t` combines
/// at `2·s·t`, so the active threads are contiguous (whole warps idle instead
/// of diverging), but a warp's accesses hit the same bank 2-, 4-, 8-, …-way:
/// shared-memory bank conflicts.
pub struct InterleavedStrided;

impl TreeShape for InterleavedStrided {
    #[inline(always)]
    unsafe fn combine<T: Element, O: Operator<T>>(value: T) -> T {
        let block = block_dim_x();
        shared_tree(value, doubling(block), |shared, tid, stride| {
            let index = 2 * stride * tid;
            combine_into::<T, O>(shared, (index < block).then_some(index), stride);
        })
    }
}

/// Rungs 3–6, sequential addressing: strides halve from `block/2`, thread
/// `t < s` combines `t` and `t + s`. Active threads are contiguous and a
/// warp's 32 accesses fall in 32 different banks: no divergence within busy
/// warps, no bank conflicts.
pub struct Sequential;

impl TreeShape for Sequential {
    #[inline(always)]
    unsafe fn combine<T: Element, O: Operator<T>>(value: T) -> T {
        let strides = core::iter::successors(Some(block_dim_x() / 2), |s| Some(s / 2)).take_while(|&s| s > 0);
        shared_tree(value, strides, |shared, tid, stride| {
            combine_into::<T, O>(shared, (tid < stride).then_some(tid), stride)
        })
    }
}

/// Rung 7, warp shuffles: every warp reduces its 32 values in registers
/// (`shfl.sync`), lane 0 of each warp leaves one value in shared memory, one
/// barrier, warp 0 reduces those. The production kernel's block reduction,
/// held to shuffles: production reduces a warp of 32-bit integers with one
/// `redux.sync` where it can, which is beyond the seeds.
pub struct Shuffle;

impl TreeShape for Shuffle {
    #[inline(always)]
    unsafe fn combine<T: Element, O: Operator<T>>(value: T) -> T {
        block::reduce::<T, ShufflesOnly<O>>(value)
    }
}

/// `O` without its one-instruction warp reduction
/// ([`Operator::warp_reduce_native`] stays `None`), so warps shuffle.
struct ShufflesOnly<O>(PhantomData<O>);

impl<T: Element, O: Operator<T>> Operator<T> for ShufflesOnly<O> {
    #[inline(always)]
    fn identity() -> T {
        O::identity()
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        O::combine(a, b)
    }
}
