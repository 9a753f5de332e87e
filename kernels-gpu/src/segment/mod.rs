//! Segmented reductions: one result per segment of the input, in one launch.
//!
//! Segments are given by offsets (segment `s` is `[offsets[s],
//! offsets[s+1])`) or are the rows of a row-major matrix. The work is cut
//! into *units*: unit `u` is part `u % blocks_per_segment` of segment
//! `u / blocks_per_segment`, and each unit is reduced by a *team* of
//! threads ([`SegmentPlan`]):
//! - short segments: a group of 2 to 32 lanes of a warp, reduced with
//!   shuffles inside the group, many segments per warp; or a single thread,
//!   which takes its segments four at a time and loads every element of
//!   those that are very short before it combines any
//!   ([`reduce_per_thread`]), and reads longer ones of 4-byte elements as
//!   the whole vectors that hold them ([`fold_windows`]); rows that pack
//!   whole into 16-byte vectors (a row of 1, 2 or 4 `f32`s) are read a
//!   vector at a time instead ([`reduce_packed_rows`]);
//! - longer segments: several warps or a whole block, reduced through the
//!   block's scratch slots;
//! - few long segments: several blocks each, whose partials the last of them
//!   to finish combines in index order, with a ticket per segment, as
//!   [`crate::grid`] does for a whole input.
//!
//! Teams take units in rounds, grid-stride; segments given by offsets
//! reduced by teams of at least 2 threads, one part each, can instead be
//! handed out to warps (or, for teams of several warps, to blocks) from a
//! counter ([`reduce_balanced`]), through entry points of their own. Within
//! a unit the threads of the team read as [`thread::accumulate`] reads a
//! whole input (16-byte vectors, head and tail peeled, since a segment may
//! start anywhere). The host picks the plan from the average segment length;
//! everything here is correct for any plan, and the result of each segment
//! depends only on its elements, its alignment and the plan, so it is the
//! same on every run.
//!
//! The fixed-order paths are one kernel per op and type, so they share one
//! register allocation: the build caps every segmented kernel at 64
//! (`reduce-host/src/tuning.rs`, written into the PTX by
//! `reduce-host/build.rs`), so that two 512-thread blocks fit an SM, and a
//! path that needs more registers makes ptxas spill in all of them (the H200
//! measurements in `git show 4cb2489:BENCHMARKS.md` show both effects). That is why each
//! balanced schedule has entry points of its own.
//!
//! One file per schedule or path:
//! - `mod.rs`: [`Segments`] (where the segments are, and the check of their
//!   offsets) and [`accumulate_share`], a team thread's share of a segment;
//! - `fixed_order.rs`: [`reduce`], the units in rounds, grid-stride;
//! - `balanced.rs`: [`reduce_balanced`] and its counter (`SegmentQueue`);
//! - `per_thread.rs`: [`reduce_per_thread`], teams of one thread, a batch of
//!   segments at a time;
//! - `windows.rs`: [`fold_windows`], a single thread's longer segment read
//!   as whole vectors, and [`reads_windows`], whether a launch uses it;
//! - `packed_rows.rs`: [`reduce_packed_rows`], rows that pack whole into
//!   vectors ([`packs_rows`]);
//! - `exact.rs`: [`reduce_exact`], the exact sum of each segment
//!   (`crate::expansion`) in the fixed-order schedule.
//!
//! [`SegmentPlan`]: crate::abi::SegmentPlan
//! [`reduce_per_thread`]: per_thread::reduce_per_thread
//! [`fold_windows`]: windows::fold_windows
//! [`reads_windows`]: windows::reads_windows
//! [`reduce_packed_rows`]: packed_rows::reduce_packed_rows
//! [`packs_rows`]: packed_rows::packs_rows

mod balanced;
mod exact;
mod fixed_order;
mod packed_rows;
mod per_thread;
mod windows;

pub use balanced::reduce_balanced;
pub use exact::{reduce_exact, reduce_exact_balanced, reduce_exact_per_thread};
pub use fixed_order::reduce;

use crate::abi::SEGMENTS_INVALID;
use crate::device;
use crate::element::Element;
use crate::map::ElementMap;
use crate::op::{AnyElement, Operator};
use crate::thread::{self, Team};
use core::mem::size_of;

/// Where the segments of a launch are.
#[derive(Clone, Copy)]
pub struct Segments {
    /// Global address of `count + 1` `u64` offsets, or 0 for rows.
    pub offsets: u64,
    /// Elements per row, when `offsets` is 0.
    pub row_len: u64,
    /// Elements from one row's start to the next's, when `offsets` is 0:
    /// `row_len` for the rows of a matrix, more for rows with gaps between
    /// them (any value: rows may overlap).
    pub row_pitch: u64,
    /// Rows per group, or 0 for one group: rows under two kept axes, row
    /// `s` starting at `(s / row_group) · group_pitch + (s % row_group) ·
    /// row_pitch`.
    pub row_group: u64,
    /// Elements from one group's first row to the next's.
    pub group_pitch: u64,
    /// Runs per segment, at least 1, for the exact kernels' rows
    /// ([`reduce_exact`]): row `s` is then `runs` runs of `row_len`
    /// elements, run `r` starting `r · run_pitch` elements after the row's
    /// start (the reduced axes of a view that lie apart in memory). Every
    /// other kernel reads one run.
    pub runs: u64,
    /// Elements from one run's start to the next's.
    pub run_pitch: u64,
    /// Number of segments.
    pub count: u64,
    /// Elements in the input: no offset may exceed it.
    pub len: u64,
    /// Global address of the status word, or 0 for none.
    pub status: u64,
}

impl Segments {
    /// Segment `segment`'s elements `[begin, end)`. Offsets that are out of
    /// order or past the input's end are clamped into `[0, len]` (so nothing
    /// outside the input is read) and reported in the status word.
    ///
    /// # Safety
    /// `segment < count`; the offsets (if any) are readable and not written
    /// during the launch; the status word (if any) is writable.
    #[inline(always)]
    pub(crate) unsafe fn bounds(&self, segment: u64) -> (u64, u64) {
        self.checked(self.stored_bounds(segment))
    }

    /// Whether the segments are rows that follow each other with no gap.
    #[inline(always)]
    pub(crate) fn dense_rows(&self) -> bool {
        self.offsets == 0 && self.row_group == 0 && self.row_pitch == self.row_len
    }

    /// Segment `segment`'s bounds as stored, unchecked: pass them to
    /// [`Segments::checked`]. Separate from the check so that a thread can
    /// issue the loads of several segments' offsets before it checks any:
    /// the check may store to the status word, and no load is moved above a
    /// store, so checking each segment's offsets before loading the next
    /// one's waited for memory once per segment (a quarter of the stall
    /// samples of random `f32` segments of mean 10 on the H200, Nsight
    /// Compute; loading a whole batch's offsets first made them 5% faster,
    /// `f64` 2%: `bench-results/2026-11-23-offsets-first/`).
    ///
    /// # Safety
    /// As [`Segments::bounds`].
    #[inline(always)]
    unsafe fn stored_bounds(&self, segment: u64) -> (u64, u64) {
        if self.offsets == 0 {
            let begin = if self.row_group == 0 {
                segment * self.row_pitch
            } else {
                // `checked_*`: no panic path in the PTX (`row_group` is not 0 here).
                let group = segment.checked_div(self.row_group).unwrap_or(0);
                let row = segment.checked_rem(self.row_group).unwrap_or(0);
                group * self.group_pitch + row * self.row_pitch
            };
            return (begin, begin + self.row_len);
        }
        let at = self.offsets + segment * size_of::<u64>() as u64;
        let begin = device::load_global_nc_u64(at);
        let end = device::load_global_nc_u64(at + size_of::<u64>() as u64);
        (begin, end)
    }

    /// The bounds `stored` of a segment ([`Segments::stored_bounds`]) as
    /// [`Segments::bounds`] returns them: clamped into `[0, len]`, and
    /// reported in the status word, where out of order or past the end.
    ///
    /// # Safety
    /// The status word (if any) is writable.
    #[inline(always)]
    unsafe fn checked(&self, (begin, end): (u64, u64)) -> (u64, u64) {
        if self.offsets == 0 || (begin <= end && end <= self.len) {
            return (begin, end);
        }
        if self.status != 0 {
            device::store_relaxed_gpu_u32(self.status, SEGMENTS_INVALID);
        }
        let begin = core::cmp::min(begin, self.len);
        (begin, end.clamp(begin, self.len))
    }
}

/// Global address of element `index` of the `T`s at `base`: an input's
/// element, or a segment's result.
#[inline(always)]
fn element_at<T>(base: u64, index: u64) -> u64 {
    base + index * size_of::<T>() as u64
}

/// This thread's fold of its share of `segment` (the team's part
/// `team.worker` of `team.workers`).
///
/// # Safety
/// As [`reduce`]; `segment < segments.count`.
#[inline(always)]
unsafe fn accumulate_share<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(
    input: u64,
    segments: &Segments,
    segment: u64,
    team: Team,
) -> T {
    let (begin, end) = segments.bounds(segment);
    let source = thread::Mapped::<M>::new(element_at::<T>(input, begin));
    thread::accumulate::<T, O, _>(source, end - begin, team)
}
