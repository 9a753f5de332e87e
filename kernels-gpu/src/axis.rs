//! Reductions along axes of a strided tensor: one result per position of
//! the kept axes, each the fold of the elements along one reduced axis.
//!
//! The host hands a launch one reduced axis (`reduced` elements,
//! `reduced_stride` apart; several reduced axes take one launch each) and
//! the kept axes as [`Kept`]: result `o` (row-major over the kept axes) is
//! the fold over `r` of element `kept.offset(o) + r · reduced_stride`. A
//! block is a tile of `2^output_lanes_log2` consecutive results by
//! `2^reduce_lanes_log2` lanes along the reduced axis ([`AxisPlan`]), with
//! the results' index fastest: when the kept axes' innermost stride is 1
//! (the reduced axis outermost, a column-wise sum), a warp reads 32
//! consecutive elements of one row; when the reduced axis is the contiguous
//! one, the host gives one result many lanes, and they read consecutive
//! elements. Each thread folds its elements in order, several loads in
//! flight; the block's lanes of one result combine through shared memory
//! in a fixed tree.
//!
//! When the tiles are too few to fill the GPU, each result's reduced axis is
//! split into `splits` parts, one block each; a part's results go to the
//! `partials` slots, and the last of a tile's blocks to finish (a ticket per
//! tile, as [`crate::grid`] does for a whole input) combines them in part
//! order. Every result thus depends only on its elements and the plan, so
//! it is the same on every run.

use crate::abi::{AxisPlan, PARTIAL_SLOT_BYTES};
use crate::block;
use crate::device::{self, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::grid;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
use crate::thread;
use core::mem::size_of;

/// Loads each thread issues along the reduced axis before it combines any.
const LOADS_IN_FLIGHT: u64 = 8;

/// The kept axes of a launch, innermost first: result `o` is at element
/// offset `Σ (o's index along axis d) · strides[d]`, its indices taken
/// row-major over `extents` (extent 1 past `dims`).
#[derive(Clone, Copy)]
pub struct Kept {
    /// Axes in use, 1 to 8.
    pub dims: u64,
    /// Each axis's length (innermost first).
    pub extents: [u64; 8],
    /// Each axis's stride, in elements.
    pub strides: [u64; 8],
}

impl Kept {
    /// The element offset of result `o`'s first element.
    #[inline(always)]
    // The last axis's quotient is left unread.
    #[allow(unused_assignments)]
    fn offset(&self, o: u64) -> u64 {
        if self.dims == 1 {
            return o * self.strides[0];
        }
        let (mut rest, mut offset) = (o, 0);
        // Written out axis by axis: constant indices keep the arrays in
        // registers (a loop over them put them in local memory).
        macro_rules! axes {
            ($($axis:literal)*) => {$(
                if self.dims > $axis {
                    // Extents are at least 1 (the host launches no axis of
                    // none); the checked forms keep a panic path out of the PTX.
                    let extent = self.extents[$axis];
                    offset += rest.checked_rem(extent).unwrap_or(0) * self.strides[$axis];
                    rest = rest.checked_div(extent).unwrap_or(0);
                }
            )*};
        }
        axes!(0 1 2 3 4 5 6 7);
        offset
    }
}

/// The body of the axis entry points: `outputs` results of `M` then `O`
/// along the reduced axis, written to `out` in order (see the module docs).
///
/// # Safety
/// - every element `kept.offset(o) + r · reduced_stride` for `o < outputs`
///   and `r < reduced` is a readable `T` at `input`, not written during the
///   launch; `out` has `outputs` writable `T`s;
/// - the block has `2^(output_lanes_log2 + reduce_lanes_log2)` threads, a
///   multiple of 32, and `PARTIAL_SLOT_BYTES` of dynamic shared memory per
///   thread;
/// - with `splits > 1`: `partials` has a writable slot per thread of every
///   tile's parts (`tiles · splits · 2^output_lanes_log2`), and `tickets`
///   a zero `u32` per tile, which no other launch uses concurrently.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    kept: Kept,
    outputs: u64,
    reduced: u64,
    reduced_stride: u64,
    plan: AxisPlan,
    partials: u64,
    tickets: u64,
    out: u64,
) {
    let output_lanes = 1u64 << plan.output_lanes_log2;
    let reduce_lanes = 1u64 << plan.reduce_lanes_log2;
    let splits = plan.splits as u64;
    let thread = thread_idx_x() as u64;
    let (lane_o, lane_r) = (thread & (output_lanes - 1), thread >> plan.output_lanes_log2);
    // Lane counts are powers of two, `splits` at least 1 (the checked forms
    // keep a panic path out of the PTX).
    let tiles = (outputs + output_lanes - 1) >> plan.output_lanes_log2;
    let rounds = (reduced + reduce_lanes - 1) >> plan.reduce_lanes_log2;
    // Each part a whole number of rounds of the lanes.
    let part = (rounds + splits - 1).checked_div(splits).unwrap_or(0) << plan.reduce_lanes_log2;
    let step = reduced_stride * size_of::<T>() as u64;

    let mut unit = block_idx_x() as u64;
    while unit < tiles * splits {
        let (tile, split) = if splits == 1 {
            (unit, 0)
        } else {
            (
                unit.checked_div(splits).unwrap_or(0),
                unit.checked_rem(splits).unwrap_or(0),
            )
        };
        let o = tile * output_lanes + lane_o;
        let begin = split * part + lane_r;
        let end = core::cmp::min((split + 1) * part, reduced);
        let mut acc = O::identity();
        if o < outputs && begin < end {
            let first = input + (kept.offset(o) + begin * reduced_stride) * size_of::<T>() as u64;
            let count = (end - begin + reduce_lanes - 1) >> plan.reduce_lanes_log2;
            acc = fold::<T, M, O>(first, count, step << plan.reduce_lanes_log2);
        }
        let total = combine_lanes::<T, O>(acc, plan);
        let result = if splits == 1 {
            Some(total)
        } else {
            combine_parts::<T, O>(total, tile, split, plan, partials, tickets)
        };
        if let Some(result) = result {
            if lane_r == 0 && o < outputs {
                thread::store_element(device::to_global(out) + o * size_of::<T>() as u64, result);
            }
        }
        unit += grid_dim_x() as u64;
    }
}

/// The fold of `M` then `O` over `count` elements, the first at `first`,
/// each `step` bytes after the last, [`LOADS_IN_FLIGHT`] loads at a time.
///
/// # Safety
/// Every element read is a readable `T`, not written during the launch.
#[inline(always)]
unsafe fn fold<T: Element, M: ElementMap<T>, O: Operator<T>>(first: u64, count: u64, step: u64) -> T {
    let mut acc = O::identity();
    let mut address = device::to_global(first);
    let mut left = count;
    // Every load of a batch is issued before its first combine. Named
    // values, not an array: an array went to local memory.
    macro_rules! batch {
        ($load:expr; $($v:ident $k:literal)*) => {
            let load = $load;
            $(let $v = load($k);)*
            $(if let Some(value) = $v {
                acc = O::combine(acc, M::map(value));
            })*
        };
    }
    while left >= LOADS_IN_FLIGHT {
        batch!(|k: u64| Some(thread::load_element::<T>(address + k * step));
            v0 0 v1 1 v2 2 v3 3 v4 4 v5 5 v6 6 v7 7);
        address += LOADS_IN_FLIGHT * step;
        left -= LOADS_IN_FLIGHT;
    }
    if left > 0 {
        // The short last batch: only the loads in range.
        batch!(|k: u64| (k < left).then(|| thread::load_element::<T>(address + k * step));
            v0 0 v1 1 v2 2 v3 3 v4 4 v5 5 v6 6 v7 7);
    }
    acc
}

/// Combines the values of each result's lanes along the reduced axis in a
/// fixed tree through shared memory; the result is valid in lane 0 (the
/// threads of `lane_r == 0`). Ends with a barrier when it uses shared
/// memory, so the block may call it again at once.
///
/// # Safety
/// Every thread of the block calls it together; the block has the dynamic
/// shared memory [`reduce`] requires.
#[inline(always)]
unsafe fn combine_lanes<A: Accumulator, O: Operator<A>>(value: A, plan: AxisPlan) -> A {
    if plan.reduce_lanes_log2 == 0 {
        return value;
    }
    let slots = device::dynamic_shared() as *mut [u64; 2];
    let thread = thread_idx_x() as usize;
    let lane_r = thread >> plan.output_lanes_log2;
    block::store_slot(slots.add(thread), value);
    let mut half = 1usize << (plan.reduce_lanes_log2 - 1);
    while half > 0 {
        sync_threads();
        if lane_r < half {
            let mine = block::load_slot::<A>(slots.add(thread));
            let other = block::load_slot::<A>(slots.add(thread + (half << plan.output_lanes_log2)));
            block::store_slot(slots.add(thread), O::combine(mine, other));
        }
        half >>= 1;
    }
    sync_threads();
    let total = block::load_slot::<A>(slots.add(thread));
    // Nobody writes the slots again before every thread has read its own.
    sync_threads();
    total
}

/// A split launch's part `split` of `tile`: publishes this block's results
/// (valid in lane 0) and, in the last of the tile's blocks to finish,
/// returns each result combined over the parts in part order (valid in
/// lane 0; `None` in the other blocks).
///
/// # Safety
/// As [`reduce`] with `splits > 1`; every thread of the block calls it together.
#[inline(always)]
unsafe fn combine_parts<A: Accumulator, O: Operator<A>>(
    total: A,
    tile: u64,
    split: u64,
    plan: AxisPlan,
    partials: u64,
    tickets: u64,
) -> Option<A> {
    let output_lanes = 1u64 << plan.output_lanes_log2;
    let splits = plan.splits as u64;
    let thread = thread_idx_x() as u64;
    let (lane_o, lane_r) = (thread & (output_lanes - 1), thread >> plan.output_lanes_log2);
    let partials = device::to_global(partials);
    let slot = |part: u64| partials + ((tile * splits + part) * output_lanes + lane_o) * PARTIAL_SLOT_BYTES;
    if lane_r == 0 {
        let [low, high] = total.to_halves();
        device::store_global_u64(slot(split), low);
        if A::WORDS > 2 {
            device::store_global_u64(slot(split) + 8, high);
        }
        // Thread 0 releases the ticket for the whole block: every writer's
        // stores are ordered before it at GPU scope first.
        device::thread_fence_gpu();
    }
    sync_threads();
    let ticket = device::to_global(tickets) + tile * size_of::<u32>() as u64;
    // Thread 0's partial slot is already written: `finished_last`'s own store
    // goes to a scratch word of the block's (the slot of part `split`,
    // rewritten with the same value).
    if !grid::finished_last(slot(split), ticket, plan.splits, total) {
        return None;
    }
    let mut acc = O::identity();
    let lanes = 1u64 << plan.reduce_lanes_log2;
    let mut part = lane_r;
    while part < splits {
        // Four slots' loads in flight before the first combine, in part order.
        let load = |k: u64| {
            let part = part + k * lanes;
            (part < splits).then(|| {
                let low = device::load_relaxed_gpu_u64(slot(part));
                let high = if A::WORDS > 2 {
                    device::load_relaxed_gpu_u64(slot(part) + 8)
                } else {
                    0
                };
                A::from_halves([low, high])
            })
        };
        let (p0, p1, p2, p3) = (load(0), load(1), load(2), load(3));
        macro_rules! combine {
            ($($p:ident)*) => {$(
                if let Some(value) = $p {
                    acc = O::combine(acc, value);
                }
            )*};
        }
        combine!(p0 p1 p2 p3);
        part += 4 * lanes;
    }
    let result = combine_lanes::<A, O>(acc, plan);
    if thread == 0 {
        device::store_relaxed_gpu_u32(ticket, 0);
    }
    Some(result)
}
