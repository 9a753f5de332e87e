//! The bodies of the entry points, as generic functions. The PTX module
//! exports one instance per operator × element type (and per rung) under the
//! names [`crate::abi`] lists; the SIMT emulator calls the same functions, so
//! both run exactly this code.

use crate::abi::SegmentPlan;
use crate::device;
use crate::element::Element;
use crate::grid;
use crate::ladder::{self, dot::AtomicAdd, load::LoadShape, tree::TreeShape};
use crate::map::ElementMap;
use crate::op::{AnyElement, Min, Operator, Sum};
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
    grid::reduce::<T, O, _>(source, len, partials, ticket, out)
}

/// A segmented entry point: one result of `M` then `O` per segment of
/// `input`, the segments given by `offsets` or, if `offsets` is null, rows of
/// `row_len` elements; see [`segment::reduce`] and [`crate::abi::SegmentPlan`].
///
/// # Safety
/// The parameters are those [`crate::abi::SegmentPlan`] documents, as
/// [`segment::reduce`] requires.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn segmented<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
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
    segment::reduce::<T, M, O>(
        device::to_global(input as u64),
        segments,
        SegmentPlan::from_bits(plan),
        device::to_global(partials as u64),
        device::to_global(tickets as u64),
        device::to_global(out as u64),
    )
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
    grid::reduce::<A, O, _>(source, len, partials, ticket, out)
}

/// An index-of entry point: the smallest index `i < len` with
/// `input[i] == *target` (NaN matches NaN), or `u64::MAX` if there is none;
/// see [`grid::reduce`]. The second pass of argmax/argmin.
///
/// # Safety
/// As [`reduce`], with a readable `T` at `target` (written before the
/// launch) and a `u64` at `out`.
#[inline(always)]
pub unsafe fn index_of<T: Element>(
    input: *const T,
    len: u64,
    target: *const T,
    partials: *mut u64,
    ticket: *mut u32,
    out: *mut u64,
) {
    let source = thread::IndexOf {
        input: device::to_global(input as u64),
        target: thread::load_element::<T>(device::to_global(target as u64)),
    };
    grid::reduce::<u64, Min, _>(source, len, partials, ticket, out)
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
    grid::reduce::<T, Sum, _>(source, len, partials, ticket, out)
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
