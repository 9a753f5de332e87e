//! Rows that pack whole into 16-byte vectors, read a vector at a time.

use super::Segments;
#[cfg(doc)]
use super::{per_thread::reduce_per_thread, reduce};
use crate::abi::{VECTORS_PER_THREAD, VECTOR_BYTES};
use crate::device;
use crate::element::Element;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
use crate::place::Results;
use crate::thread::{self, Source};
use core::mem::size_of;

/// Whether every 16-byte vector of the input holds whole rows: rows (not
/// offsets) of a power-of-two length of at most one vector (1, 2 or 4 `f32`,
/// 1 or 2 `f64`) that follow each other with no gap, in a 16-byte-aligned input. Then [`reduce_packed_rows`]
/// reads them.
#[inline(always)]
pub(super) fn packs_rows<T: Element>(input: u64, segments: &Segments) -> bool {
    let lanes = VECTOR_BYTES / size_of::<T>() as u64;
    segments.dense_rows()
        && segments.row_len.is_power_of_two()
        && segments.row_len <= lanes
        && input.is_multiple_of(VECTOR_BYTES)
}

/// The rows when [`packs_rows`] holds. A row of one element per thread
/// (or a few, [`reduce_per_thread`]) reads 4 or 8 bytes per load, and its
/// loads across a warp are spread over several vectors; here the threads read
/// the input as the whole-input kernel does (tiles of [`VECTORS_PER_THREAD`]
/// vectors, adjacent threads on adjacent vectors, every load of a tile issued
/// before the first use) and reduce each vector's rows in registers. Each row
/// is combined from the identity in element order, as
/// [`reduce_per_thread`] would. Rows of one element are written a vector at
/// a time where `out` is 16-byte aligned and in order. The rows after the last whole
/// vector (fewer than a vector's worth) take a thread each.
///
/// # Safety
/// As [`reduce`], with teams of one thread and [`packs_rows`] true;
/// `threads` is the grid's thread count.
#[inline(always)]
pub(super) unsafe fn reduce_packed_rows<
    T: Element,
    M: ElementMap<T>,
    O: Operator<T> + AnyElement,
    const PLACED: bool,
>(
    input: u64,
    segments: Segments,
    out: Results<PLACED>,
    threads: u64,
) {
    let element = size_of::<T>() as u64;
    let lanes = VECTOR_BYTES / element;
    let row_len = segments.row_len;
    let row_shift = row_len.trailing_zeros();
    let elements = segments.count << row_shift;
    let vectors = elements / lanes;
    let store_vectors = row_len == 1 && !PLACED && out.base().is_multiple_of(VECTOR_BYTES);
    let source = thread::Mapped::<M>::new(input);
    let reduce_rows_of = |words: [u32; 4], first_element: u64| {
        let lane = |k: usize| T::vector_lane(words, k);
        if store_vectors {
            // Four results in one store, each canonical as `store_result` makes them.
            let results = thread::pack_lanes(|k| O::combine(O::identity(), lane(k)).canonical());
            device::store_global_v4(out.at::<T>(first_element), results);
            return;
        }
        let mut acc = O::identity();
        let mut k = 0;
        while k < lanes as usize {
            acc = O::combine(acc, lane(k));
            let index = first_element + k as u64;
            if (index + 1) & (row_len - 1) == 0 {
                thread::store_result(out.at::<T>(index >> row_shift), acc);
                acc = O::identity();
            }
            k += 1;
        }
    };

    let grid_thread = device::index_1d();
    let tile = VECTORS_PER_THREAD * threads;
    let mut first = grid_thread;
    while first < vectors {
        let mut count = 0;
        while count < VECTORS_PER_THREAD && first + count * threads < vectors {
            count += 1;
        }
        thread::for_each_strided::<T, _>(&source, 0, first, threads, count, reduce_rows_of);
        first += tile;
    }

    let row = ((vectors * lanes) >> row_shift) + grid_thread;
    if row < segments.count {
        let mut acc = O::identity();
        let mut k = 0;
        while k < row_len {
            acc = O::combine(acc, source.element((row << row_shift) + k));
            k += 1;
        }
        thread::store_result(out.at::<T>(row), acc);
    }
}
