//! Teams of one thread: each thread's segments, a batch at a time.

#[cfg(doc)]
use super::reduce;
use super::windows::{fold_windows, reads_windows};
use super::{element_at, Segments};
use crate::device;
use crate::element::Element;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
use crate::place::Results;
use crate::thread::{self, Team};
use core::mem::size_of;

/// Segments a thread reduces at once when teams are single threads: their
/// loads are in flight together (a segment of a few elements is otherwise a
/// load, a wait and a store per thread, bound by latency, not bandwidth).
const SEGMENTS_PER_BATCH: u64 = 4;

/// The bytes of the longest segment a single thread reads element by element
/// within a batch (4 `f32`s, 2 `f64`s: the batch's values stay in registers);
/// longer ones go through [`thread::accumulate`], one at a time.
const SHORT_SEGMENT_BYTES: u64 = 16;

/// Room for the elements of one short segment of any element type (of at
/// least 4 bytes).
const SHORT_SEGMENT_SLOTS: usize = (SHORT_SEGMENT_BYTES / 4) as usize;

/// The segmented reduction when each segment is one thread's (teams of one
/// thread): thread `t` of the `threads` of the grid takes segments `t`,
/// `t + threads`, ... in batches of [`SEGMENTS_PER_BATCH`]. It loads every
/// offset of the batch before it checks any ([`Segments::stored_bounds`]),
/// and every element of the batch's short segments (at most
/// [`SHORT_SEGMENT_BYTES`] bytes) before it combines any, then combines
/// each in element order from the identity; a longer segment is read by
/// [`fold_windows`] where [`reads_windows`] (a property of the launch), else
/// (and at the input's edges) by [`thread::accumulate`]. Which of them
/// reads a segment depends only on the launch, its length and its
/// position, so its result is the same on every run.
///
/// # Safety
/// As [`reduce`], with teams of one thread; `threads` is the grid's thread count.
#[inline(always)]
pub(super) unsafe fn reduce_per_thread<
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
    let short_segment = SHORT_SEGMENT_BYTES / size_of::<T>() as u64;
    let windows = reads_windows::<T>(input, &segments);
    let mut first = device::index_1d();
    while first < segments.count {
        let segment = |k: u64| first + k * threads;
        let stored_bounds = |k: u64| {
            if segment(k) < segments.count {
                segments.stored_bounds(segment(k))
            } else {
                (0, 0)
            }
        };
        let short_elements = |(begin, end): (u64, u64)| {
            let mut values = [O::identity(); SHORT_SEGMENT_SLOTS];
            if end - begin <= short_segment {
                let mut j = 0;
                while j < short_segment as usize {
                    if begin + (j as u64) < end {
                        values[j] = M::map(thread::load_element::<T>(element_at::<T>(input, begin + j as u64)));
                    }
                    j += 1;
                }
            }
            values
        };
        let finish_short = |k: u64, (begin, end): (u64, u64), values: [T; SHORT_SEGMENT_SLOTS]| {
            if segment(k) >= segments.count || end - begin > short_segment {
                return;
            }
            let mut acc = O::identity();
            let mut j = 0;
            while j < short_segment as usize {
                if begin + (j as u64) < end {
                    acc = O::combine(acc, values[j]);
                }
                j += 1;
            }
            thread::store_result(out.at::<T>(segment(k)), acc);
        };
        // Four named segments, not a loop over an array: constant indices
        // keep the loaded values in registers (as in `thread::accumulate`;
        // this also pins SEGMENTS_PER_BATCH at 4).
        // Every offset load of the batch before the first check.
        let stored = (stored_bounds(0), stored_bounds(1), stored_bounds(2), stored_bounds(3));
        let (b0, b1, b2, b3) = (
            segments.checked(stored.0),
            segments.checked(stored.1),
            segments.checked(stored.2),
            segments.checked(stored.3),
        );
        let (v0, v1, v2, v3) = (
            short_elements(b0),
            short_elements(b1),
            short_elements(b2),
            short_elements(b3),
        );
        finish_short(0, b0, v0);
        finish_short(1, b1, v1);
        finish_short(2, b2, v2);
        finish_short(3, b3, v3);

        // The longer segments, one at a time, after the short ones, with
        // nothing of the batch kept across them but its position (the
        // bounds are read again). With the batch's values live across them,
        // every segmented kernel needed so many registers that the H200 fit
        // one 512-thread block per SM instead of two.
        let mut k = 0;
        while k < SEGMENTS_PER_BATCH {
            if segment(k) < segments.count {
                let (begin, end) = segments.bounds(segment(k));
                if end - begin > short_segment {
                    let windowed = if windows {
                        fold_windows::<T, M, O>(input, segments.len, begin, end)
                    } else {
                        None
                    };
                    let total = match windowed {
                        Some(total) => total,
                        None => {
                            let source = thread::Mapped::<M>::new(element_at::<T>(input, begin));
                            thread::accumulate::<T, O, _>(source, end - begin, Team::single())
                        }
                    };
                    thread::store_result(out.at::<T>(segment(k)), total);
                }
            }
            k += 1;
        }
        first += SEGMENTS_PER_BATCH * threads;
    }
}
