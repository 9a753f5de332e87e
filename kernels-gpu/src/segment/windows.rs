//! A single thread's longer segment of 4-byte elements, read as the whole
//! 16-byte vectors that hold it.

#[cfg(doc)]
use super::per_thread::reduce_per_thread;
use super::Segments;
use crate::abi::VECTOR_BYTES;
use crate::device;
use crate::element::Element;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
#[cfg(doc)]
use crate::thread;
use core::mem::size_of;

/// Whether [`reduce_per_thread`] reads its longer segments with
/// [`fold_windows`] rather than [`thread::accumulate`]: for elements of 4
/// bytes, unless every row is whole 16-byte vectors (which
/// [`thread::accumulate`] reads without peeling, with fewer instructions:
/// rows of 16 `f32`s ran 1-3% slower through windows on the H200). The
/// choice is the launch's, not each segment's: a warp whose lanes took
/// both paths ran both, and random segments of mean 10 got 8-14% slower
/// than with either alone. For 8-byte elements, whose head and tail are at
/// most one element each, windows were 6-12% slower (random mean 10), and
/// still 0-3% slower once their checks were 32-bit.
#[inline(always)]
pub(super) fn reads_windows<T: Element>(input: u64, segments: &Segments) -> bool {
    let element = size_of::<T>() as u64;
    let whole_vector_rows = segments.offsets == 0
        && input.is_multiple_of(VECTOR_BYTES)
        && (segments.row_len * element).is_multiple_of(VECTOR_BYTES)
        && (segments.row_pitch * element).is_multiple_of(VECTOR_BYTES)
        && (segments.group_pitch * element).is_multiple_of(VECTOR_BYTES);
    T::WORDS == 1 && !whole_vector_rows
}

/// Inner vectors (all of whose lanes are in the segment) a thread loads at
/// once in [`fold_windows`], after the segment's first and last vectors: a
/// segment of up to 21 elements of 4 bytes (24 if its start is aligned) is
/// one window of 6 loads. Every lane runs every slot of a window, so a wider
/// one costs instructions for short segments, a narrower one rounds: on the
/// H200, random `f32` segments of lengths 0, 10 or 20 took 1.04-1.05x the
/// time with 2 inner vectors and 1.01-1.02x with 3
/// (`bench-results/2026-11-23-inner-vectors/`); windows of 6 vectors in all
/// had been faster than 4 or 8 before the first and last were split off.
/// At most 4: the window's vectors are named, not an array.
const WINDOW_INNER_VECTORS: u32 = 4;
const _: () = assert!(WINDOW_INNER_VECTORS >= 1 && WINDOW_INNER_VECTORS <= 4);

/// The longest segment [`fold_windows`] reads: its positions fit 32 bits.
const MAX_WINDOWED_ELEMENTS: u64 = 1 << 30;

/// One thread's fold of the elements `[begin, end)` of the `len` at
/// `input`, read as the whole 16-byte vectors that hold them: the first
/// and last (whose lanes outside the segment, its neighbours' elements, are
/// skipped), then the ones between, [`WINDOW_INNER_VECTORS`] at a time,
/// every load of a window issued before the first combine, and combined in
/// element order. `None`, and nothing read, where the segment lies within
/// one vector, or where the first or last vector reaches outside the input
/// (only possible for the input's first and last few elements).
///
/// Why: [`thread::accumulate`] peels a segment's unaligned head and tail
/// into single elements, a load and a loop trip each, and lanes whose
/// segments differ in length and alignment diverge through those loops
/// (Nsight Compute, random `f32` segments of mean 10 on the H200: 15.5 of
/// 32 threads active per warp instruction, the ALU the busiest pipe, DRAM
/// at 43% of peak). Here every lane runs the same predicated instructions:
/// a check per lane of the first and last vectors, one per inner vector
/// (about 85 instructions per 6-vector window on sm_90 where a check per
/// lane of every vector took 140; random `f32` segments of mean 10 got only
/// 1.3-3% faster, so the loop is not bound by issuing instructions).
/// Measured and not kept (`bench-results/2026-11-23-stage-prefetch/`): L2
/// prefetch sizes on these loads (no change), prefetching a batch's later
/// segments (slower elsewhere), copying the warp's segments into shared
/// memory with coalesced loads first (1.28-1.39x slower), and dealing a
/// warp's long segments out over its lanes (2% faster at 1 GiB, up to 6%
/// slower at 64 MiB).
///
/// # Safety
/// `input` is the global address of `len` readable `T`s (so `T`-aligned),
/// not written during the launch; `begin <= end <= len`.
#[inline(always)]
pub(super) unsafe fn fold_windows<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    len: u64,
    begin: u64,
    end: u64,
) -> Option<T> {
    let element = size_of::<T>() as u64;
    let lanes = (VECTOR_BYTES / element) as u32;
    let length = end - begin;
    if length > MAX_WINDOWED_ELEMENTS {
        return None;
    }
    // Positions counted from lane 0 of the first vector; the segment's are
    // `[skipped, past_last)`. All of them fit 32 bits (checked above), and
    // so does the arithmetic below: in 64 bits each check is two
    // instructions, and every lane runs one per lane of the end vectors and
    // per inner vector (on the H200, random `f32` segments of mean 10 took
    // 0.94-0.97x the time of 64-bit checks). `input` is `T`-aligned, so
    // element `begin`'s lane is that of `input` plus `begin`.
    let skipped = ((input / element) as u32).wrapping_add(begin as u32) & (lanes - 1);
    let past_last = skipped + length as u32;
    let vectors = past_last.div_ceil(lanes);
    // The vectors cover elements `[begin - skipped, begin - skipped + vectors · lanes)`
    // of the input, which must hold them.
    if vectors < 2 || begin < skipped as u64 || begin - skipped as u64 + (vectors * lanes) as u64 > len {
        return None;
    }
    let first_address = input + (begin - skipped as u64) * element;
    let last_lanes = past_last - (vectors - 1) * lanes;
    let inner_vectors = vectors - 2;
    let vector_address = |index: u32| first_address + index as u64 * VECTOR_BYTES;
    let fold_lanes = |mut acc: T, words: [u32; 4], from: u32, past: u32| {
        let mut j = 0;
        while j < lanes {
            if from <= j && j < past {
                acc = O::combine(acc, M::map(T::vector_lane(words, j as usize)));
            }
            j += 1;
        }
        acc
    };
    // One window of inner vectors from the `window`-th, folded into `acc`
    // (after the first vector's lanes, if given: its combines then come after
    // every load of the window).
    let fold_window = |window: u32, mut acc: T, first_vector: Option<[u32; 4]>| {
        // Inner vector `k` of the window is loaded and folded if it exists.
        let exists = |k: u32| k < WINDOW_INNER_VECTORS && window + k < inner_vectors;
        let load = |k: u32| {
            if exists(k) {
                device::load_global_nc_v4(vector_address(1 + window + k))
            } else {
                [0; 4]
            }
        };
        // Named vectors, not an array: constant indices keep them in
        // registers whatever the op (as in `thread::for_each_strided`).
        let (v0, v1, v2, v3) = (load(0), load(1), load(2), load(3));
        if let Some(words) = first_vector {
            acc = fold_lanes(acc, words, skipped, lanes);
        }
        let mut fold = |words: [u32; 4], k: u32| {
            if exists(k) {
                acc = fold_lanes(acc, words, 0, lanes);
            }
        };
        fold(v0, 0);
        fold(v1, 1);
        fold(v2, 2);
        fold(v3, 3);
        acc
    };
    let first_vector = device::load_global_nc_v4(first_address);
    let last_vector = device::load_global_nc_v4(vector_address(vectors - 1));
    let mut acc = fold_window(0, O::identity(), Some(first_vector));
    let mut window = WINDOW_INNER_VECTORS;
    while window < inner_vectors {
        acc = fold_window(window, acc, None);
        window += WINDOW_INNER_VECTORS;
    }
    Some(fold_lanes(acc, last_vector, 0, last_lanes))
}
