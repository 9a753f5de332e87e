//! The bodies of the entry points, as generic functions. The PTX module
//! exports one instance per operator × element type (and per rung) under the
//! names [`crate::abi`] lists; the SIMT emulator calls the same functions, so
//! both run exactly this code.

use crate::abi::{SegmentPlan, SegmentSchedule};
use crate::device;
use crate::element::Element;
use crate::grid;
use crate::indexed::Indexed;
use crate::ladder::{self, dot::AtomicAdd, load::LoadShape, tree::TreeShape};
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator, Sum};
#[cfg(doc)]
use crate::op::{Max, Min};
use crate::segment;
use crate::thread;
use crate::widen::Widen;

/// A reduction entry point: the map `M` applied to each element, combined
/// with `O`; see [`grid::reduce`] for the contract.
///
/// # Safety
/// The parameters are those [`crate::abi`] documents, as [`grid::reduce`] requires.
#[inline(always)]
pub unsafe fn reduce<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: *const T,
    len: u64,
    partials: *mut u64,
    ticket: *mut u32,
    out: *mut T,
) {
    let source = thread::Mapped::<M>::new(device::to_global(input as u64));
    store(grid::reduce::<T, O, _>(source, len, partials, ticket), out)
}

/// Writes a whole-input reduction's result, where [`grid::reduce`] gave it.
///
/// # Safety
/// `out` is a writable `T`.
#[inline(always)]
unsafe fn store<T: Element>(total: Option<T>, out: *mut T) {
    if let Some(total) = total {
        thread::store_element(device::to_global(out as u64), total);
    }
}

/// A segmented entry point: one result of `M` then `O` per segment of
/// `input`, the segments given by `offsets` or, if `offsets` is null, rows of
/// `row_len` elements, handed out as `SCHEDULE` (a [`SegmentSchedule`])
/// says: in a fixed order ([`segment::reduce`]), or to warps or blocks as
/// they finish ([`segment::reduce_balanced`], whose counter and ticket are
/// the first 12 bytes of `tickets`; `partials` is not used). See
/// [`crate::abi::SegmentPlan`].
///
/// # Safety
/// The parameters are those [`crate::abi::SegmentPlan`] documents, as
/// [`segment::reduce`] or [`segment::reduce_balanced`] requires for
/// `SCHEDULE`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn segmented<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement, const SCHEDULE: u8>(
    input: *const T,
    len: u64,
    offsets: *const u64,
    segments: u64,
    row_len: u64,
    plan: u64,
    partials: *mut u64,
    tickets: *mut u32,
    status: *mut u32,
    out: *mut T,
) {
    // A null pointer means "none"; it must not go through `to_global`.
    let global_or_zero = |address: u64| if address == 0 { 0 } else { device::to_global(address) };
    let segments = segment::Segments {
        offsets: global_or_zero(offsets as u64),
        row_len,
        count: segments,
        len,
        status: global_or_zero(status as u64),
    };
    let (input, plan) = (device::to_global(input as u64), SegmentPlan::from_bits(plan));
    let (tickets, out) = (device::to_global(tickets as u64), device::to_global(out as u64));
    const WARPS_TAKE: u8 = SegmentSchedule::WarpsTake as u8;
    const BLOCKS_TAKE: u8 = SegmentSchedule::BlocksTake as u8;
    match SCHEDULE {
        WARPS_TAKE => segment::reduce_balanced::<T, M, O, false>(input, segments, plan, tickets, out),
        BLOCKS_TAKE => segment::reduce_balanced::<T, M, O, true>(input, segments, plan, tickets, out),
        _ => segment::reduce::<T, M, O>(input, segments, plan, device::to_global(partials as u64), tickets, out),
    }
}

/// A widening entry point: `In` elements, each converted to `A` as it is
/// read, combined with `O` in `A`; see [`grid::reduce`].
///
/// # Safety
/// As [`reduce`], with `len` elements of `In` at `input` and an `A` at `out`.
#[inline(always)]
pub unsafe fn reduce_widened<In: Widen<A>, A: Element, O: Operator<A> + AnyElement>(
    input: *const In,
    len: u64,
    partials: *mut u64,
    ticket: *mut u32,
    out: *mut A,
) {
    let source = thread::Widened::<In>::new(device::to_global(input as u64));
    store(grid::reduce::<A, O, _>(source, len, partials, ticket), out)
}

/// An argmax (`O` = [`Max`]) or argmin (`O` = [`Min`]) entry point: the
/// preferred element of `len` elements of `In` (converted to `A` as they
/// are read, exactly) and the lowest index holding it, in one pass; see
/// [`crate::indexed`] for the rules and [`grid::reduce`] for the contract.
/// `len` must not be zero (the host rejects empty inputs).
///
/// # Safety
/// As [`reduce`], with `len` elements of `In` at `input`, and a writable
/// `A` at `value_out` and `u64` at `index_out` in place of `out`.
#[inline(always)]
pub unsafe fn arg<In: Widen<A>, A: Element, O: Operator<Indexed<A>> + AnyElement>(
    input: *const In,
    len: u64,
    partials: *mut u64,
    ticket: *mut u32,
    value_out: *mut A,
    index_out: *mut u64,
) {
    let source = thread::Widened::<In>::new(device::to_global(input as u64));
    if let Some(best) = grid::reduce::<Indexed<A>, O, _>(source, len, partials, ticket) {
        thread::store_element(device::to_global(value_out as u64), best.value);
        thread::store_element(device::to_global(index_out as u64), best.index);
    }
}

/// A dot-product entry point: the sum of `a[i] * b[i]`; see [`grid::reduce`].
///
/// # Safety
/// As [`reduce`], with two inputs of `len` elements each.
#[inline(always)]
pub unsafe fn dot<T: Element>(a: *const T, b: *const T, len: u64, partials: *mut u64, ticket: *mut u32, out: *mut T) {
    let source = thread::Product {
        a: device::to_global(a as u64),
        b: device::to_global(b as u64),
    };
    store(grid::reduce::<T, Sum, _>(source, len, partials, ticket), out)
}

/// A ladder rung's entry point; see [`ladder::rung`].
///
/// # Safety
/// As [`ladder::rung`].
#[inline(always)]
pub unsafe fn ladder<T: Element, O: Operator<T>, L: LoadShape, R: TreeShape>(input: *const T, len: u64, out: *mut T) {
    ladder::rung::<T, O, L, R>(input, len, out)
}

/// Seed 004's naive dot product; see [`ladder::dot::atomic_per_element`].
///
/// # Safety
/// As [`ladder::dot::atomic_per_element`].
#[inline(always)]
pub unsafe fn dot_atomic_per_element<T: AtomicAdd>(a: *const T, b: *const T, len: u64, out: *mut T) {
    ladder::dot::atomic_per_element::<T>(a, b, len, out)
}

/// Seed 004's block-tree dot product; see [`ladder::dot::block_tree`].
///
/// # Safety
/// As [`ladder::dot::block_tree`].
#[inline(always)]
pub unsafe fn dot_block_tree<T: AtomicAdd>(a: *const T, b: *const T, len: u64, out: *mut T) {
    ladder::dot::block_tree::<T>(a, b, len, out)
}
