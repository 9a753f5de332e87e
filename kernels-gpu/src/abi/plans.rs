//! How a launch divides its work, and what a statistic launch writes: the
//! segmented schedules ([`SegmentSchedule`], each with entry points of its
//! own), and the `plan` and `finish` parameters, each packed into one `.u64`
//! ([`SegmentPlan`], [`AxisPlan`], [`Finish`]).

#[cfg(doc)]
use super::{Kernel, PARTIAL_SLOT_BYTES, SEGMENTS_INVALID};

/// How a segmented launch hands out its segments. Each schedule has its own
/// entry points, as its bookkeeping costs registers that the others' paths
/// would pay for (a kernel's registers are those of its worst path); the
/// entry function takes it as a const parameter (`as u8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SegmentSchedule {
    /// Teams take units in rounds, grid-stride: `segmented_<stem>_<type>`.
    FixedOrder,
    /// Warps take segments from a counter as they finish (teams of 2 to 32
    /// lanes, segments given by offsets): `segmented_balanced_<stem>_<type>`.
    WarpsTake,
    /// Blocks take segments from a counter as they finish (teams of several
    /// warps, segments given by offsets):
    /// `segmented_block_balanced_<stem>_<type>`.
    BlocksTake,
    /// As `FixedOrder`, over rows with any pitch (`row_pitch`), each result
    /// placed as the `placed_*` parameters say: the rows of one pass of an
    /// axis reduction (a sliced or permuted view),
    /// `segmented_strided_rows_<stem>_<type>`. The other schedules take
    /// dense rows or offsets and write in order (they ignore `placed_*`):
    /// a placement kept live made ptxas spill in every path of the
    /// fixed-order kernel, and its rows of up to 2^18 `f32`s ran 10-35%
    /// slower on the H100.
    StridedRows,
}

/// How an exact segmented kernel ([`Kernel::ExactSegments`]) hands out
/// its segments: each schedule an entry point of its own (a const
/// parameter, `as u8`), so that the others keep their code and registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ExactSchedule {
    /// Teams of any size take units in rounds, grid-stride:
    /// `segmented_exact_<stem>_<type>` (`crate::segment::reduce_exact`).
    FixedOrder,
    /// Teams of one thread, each summing its own segments, for plans of
    /// one thread and one block per segment:
    /// `segmented_exact_<stem>_per_thread_<type>`
    /// (`crate::segment::reduce_exact_per_thread`, inlined; the
    /// fixed-order kernel calls it).
    PerThread,
    /// As `FixedOrder`, each row `runs` runs of its length, `run_pitch`
    /// elements apart, summed as one row (the reduced axes of a view that
    /// lie apart in memory): `segmented_exact_<stem>_runs_<type>`.
    Runs,
    /// Warps take segments from a counter as they finish (teams of 2 to
    /// 32 lanes, one part per segment, segments given by offsets), as
    /// [`SegmentSchedule::WarpsTake`]: `segmented_exact_<stem>_balanced_<type>`
    /// (`crate::segment::reduce_exact_balanced`).
    WarpsTake,
}

/// How a segmented launch divides its work: its `plan` parameter.
///
/// Each segment is cut into `blocks_per_segment` parts, and each part is
/// reduced by a *team* of `team_threads` consecutive threads of one block:
/// a group of lanes of a warp for short segments, several warps or a whole
/// block for longer ones. With more than one part per segment the team is a
/// whole block, and the grid has exactly one block per part.
///
/// The segmented entry points (one per [`SegmentSchedule`] and row of
/// [`for_each_reduce_kernel!`](crate::for_each_reduce_kernel)) take, all as `.u64`:
///
/// | parameter  | meaning |
/// |------------|---------|
/// | `input`    | device address of element 0 (element-aligned) |
/// | `len`      | elements at `input` |
/// | `offsets`  | 0 for the rows of a matrix; else the address of `segments + 1` `u64` offsets, segment `s` being `[offsets[s], offsets[s+1])` |
/// | `segments` | number of segments (results) |
/// | `row_len`  | elements per row, when `offsets` is 0 |
/// | `row_pitch` | elements from one row's start to the next's, when `offsets` is 0: row `s` is `[s · row_pitch, s · row_pitch + row_len)`, within `len` (`row_len` but for [`SegmentSchedule::StridedRows`], whose rows may have gaps or overlap) |
/// | `row_group`, `group_pitch` | [`SegmentSchedule::StridedRows`] (the others take 0): 0, or rows in groups of `row_group`, each group `group_pitch` elements after the one before: row `s` starts at `(s / row_group) · group_pitch + (s % row_group) · row_pitch` (rows under two kept axes) |
/// | `plan`     | [`SegmentPlan::to_bits`] |
/// | `partials` | workspace: one [`PARTIAL_SLOT_BYTES`] slot per part (`segments · blocks_per_segment`), used when `blocks_per_segment > 1` |
/// | `tickets`  | workspace: one `u32` per segment (at least four, 8-byte aligned), zero before and after the launch, used when `blocks_per_segment > 1`; the balanced entry points use its first 12 bytes as a `u64` counter and a `u32` ticket |
/// | `status`   | 0, or the address of a `u32` that receives [`SEGMENTS_INVALID`] if an offset is out of order or past `len` |
/// | `out`      | `segments` results, placed as `placed_*` say |
/// | `placed_dims`, `placed_extent0`, `placed_stride0`, … `placed_extent3`, `placed_stride3` | [`SegmentSchedule::StridedRows`] (the others write in order): where each result goes ([`crate::place::Placement`]): `placed_dims` 0 for in order; else result `o`'s index along each of the first `placed_dims` axes (innermost first, row-major over the extents) times its stride, summed, is its index in `out`, a one-to-one map onto `0..results` |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentPlan {
    /// Threads per team: a power of two that divides the block size.
    pub team_threads: u32,
    /// Parts per segment, each a block's work: at least 1; above 1 only when
    /// `team_threads` is the block size.
    pub blocks_per_segment: u32,
    /// Segments a warp (or, for teams of several warps, a block) takes at a
    /// time in the balanced entry points: a power of two, a multiple of its
    /// teams, below 2^16 (the others ignore it).
    pub segments_per_take: u32,
}

impl SegmentPlan {
    /// The plan as the one `.u64` parameter the entry points take: the team
    /// in bits 0–15, the take in bits 16–31, the parts in bits 32–63.
    pub const fn to_bits(self) -> u64 {
        (self.blocks_per_segment as u64) << 32 | (self.segments_per_take as u64) << 16 | self.team_threads as u64
    }

    /// Inverse of [`SegmentPlan::to_bits`].
    pub const fn from_bits(bits: u64) -> Self {
        SegmentPlan {
            team_threads: bits as u32 & 0xffff,
            segments_per_take: (bits >> 16) as u32 & 0xffff,
            blocks_per_segment: (bits >> 32) as u32,
        }
    }
}

/// How an axis launch ([`Kernel::Axis`]) divides its work: its `plan`
/// parameter. A block is a tile of `2^output_lanes_log2` consecutive results
/// by `2^reduce_lanes_log2` lanes along the reduced axis (their product is
/// the block size), the results' index fastest in the thread index, or the
/// reduce lanes' with `reduce_lanes_first` (for a contiguous reduced axis:
/// a warp then reads consecutive elements, and up to 32 lanes of a result
/// combine within their warp); each result's reduced axis is cut into
/// `splits` parts, one block each, combined by the tile's last block.
///
/// The axis entry points (one per row of
/// [`for_each_reduce_kernel!`](crate::for_each_reduce_kernel)) take, all as `.u64`:
///
/// | parameter | meaning |
/// |-----------|---------|
/// | `input` | device address of element 0 of the tensor (element-aligned) |
/// | `reduced`, `reduced_stride` | the reduced axis: its length, and its stride in elements |
/// | `outputs` | results: the product of the kept axes' extents |
/// | `kept_dims` | kept axes in use, 1 to 8 |
/// | `extent0`, `stride0`, … `extent7`, `stride7` | the kept axes, innermost first: result `o`'s index along each (row-major over the extents) times its stride, summed, is the element offset of its first element; unused axes have extent 1 |
/// | `plan` | [`AxisPlan::to_bits`] |
/// | `partials` | with `splits > 1`: one [`PARTIAL_SLOT_BYTES`] slot per result lane of each part of each tile (`tiles · splits · 2^output_lanes_log2`) |
/// | `tickets` | with `splits > 1`: one zero `u32` per tile, zero again after the launch |
/// | `finish` | [`Kernel::Statistic`], [`Kernel::StatisticStates`] and [`Kernel::ExactAxis`]: what each result is, a [`Finish`] (`as u64`); the others ignore it |
/// | `finish_param` | the statistics' parameter: the variance's correction (an `f64`'s bits), `all`'s elements per result; the exact variance's correction ([`Op::SquaredDeviation`](super::Op::SquaredDeviation)) |
/// | `means` | the variance's: 0, or where the means go (`outputs` of them); [`Op::SquaredDeviation`](super::Op::SquaredDeviation)'s and [`Op::ScaledExp`](super::Op::ScaledExp)'s exact axis kernels: where they read each result's mean or maximum (`outputs` `T`s, in order) |
/// | `out` | `outputs` results (and `means`), placed as `placed_*` say |
/// | `offsets` | [`Kernel::StatisticSegments`] (the others ignore it and `status`): segments in place of the kept axes, the device address of `outputs + 1` `u64` offsets, result `o` folding the contiguous elements `offsets[o]..offsets[o + 1]` (clamped into `0..reduced`, `reduced` then being the input's length; `reduced_stride` 1, `splits` 1, the kept axes unused; `all` counts each segment's elements) |
/// | `status` | with `offsets`: 0, or a `u32` set to [`SEGMENTS_INVALID`] if an offset decreases or passes the input's end |
/// | `placed_dims`, `placed_extent0`, … `placed_stride3` | as [`SegmentPlan`]'s |
///
/// The block needs `PARTIAL_SLOT_BYTES` of dynamic shared memory per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisPlan {
    /// Consecutive results per block, as a power of two.
    pub output_lanes_log2: u32,
    /// Lanes per result along the reduced axis, as a power of two.
    pub reduce_lanes_log2: u32,
    /// Whether a result's reduce lanes are consecutive threads (else its
    /// result lanes are).
    pub reduce_lanes_first: bool,
    /// Parts each result's reduced axis is cut into, one block each: at least 1.
    pub splits: u32,
}

impl AxisPlan {
    /// The plan as the one `.u64` parameter: the result lanes in bits 0–7,
    /// the reduce lanes in bits 8–15, `reduce_lanes_first` in bit 16, the
    /// splits in bits 32–63.
    pub const fn to_bits(self) -> u64 {
        (self.splits as u64) << 32
            | (self.reduce_lanes_first as u64) << 16
            | (self.reduce_lanes_log2 as u64 & 0xff) << 8
            | (self.output_lanes_log2 as u64 & 0xff)
    }

    /// Inverse of [`AxisPlan::to_bits`].
    pub const fn from_bits(bits: u64) -> Self {
        AxisPlan {
            output_lanes_log2: bits as u32 & 0xff,
            reduce_lanes_log2: (bits >> 8) as u32 & 0xff,
            reduce_lanes_first: (bits >> 16) & 1 == 1,
            splits: (bits >> 32) as u32,
        }
    }

    /// Thread `thread`'s result lane and reduce lane.
    pub const fn lanes(self, thread: u64) -> (u64, u64) {
        if self.reduce_lanes_first {
            (
                thread >> self.reduce_lanes_log2,
                thread & 1u64.wrapping_shl(self.reduce_lanes_log2).wrapping_sub(1),
            )
        } else {
            (
                thread & 1u64.wrapping_shl(self.output_lanes_log2).wrapping_sub(1),
                thread >> self.output_lanes_log2,
            )
        }
    }
}

/// What a statistic launch writes per result: its `finish` parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Finish {
    /// The summary itself (its 8-byte halves), for a later launch to merge.
    State = 0,
    /// The statistic's value: the variance, logsumexp, the count (`u64`).
    Value = 1,
    /// The square root of the value: the standard deviation (in the exact
    /// kernels, of [`Finish::Variance`]'s value).
    Root = 2,
    /// Whether the count is above 0: one byte, 0 or 1.
    Any = 3,
    /// Whether the count is `finish_param`: one byte, 0 or 1.
    All = 4,
    /// An exact sum's value (rounded once) divided by the count of its
    /// elements rounded to the element type: `ExactMean` along axes (the
    /// exact axis kernel reads no other finish; the whole input's and the
    /// segments' exact kernels take it as `abi::EXACT_MEAN` and `mean`).
    Mean = 5,
    /// An exact sum of squared deviations (rounded once) divided by
    /// `max(0, count − correction)`, `correction` the `f64` whose bits are
    /// `finish_param`: `ExactVar` (and with [`Finish::Root`], its square
    /// root: `ExactStd`), in the exact kernels that read `shifts`.
    Variance = 6,
}

impl Finish {
    /// The `finish` parameter's value as a [`Finish`] (`State` for any
    /// value no variant has: the host passes none).
    pub const fn from_bits(bits: u64) -> Self {
        match bits {
            1 => Finish::Value,
            2 => Finish::Root,
            3 => Finish::Any,
            4 => Finish::All,
            5 => Finish::Mean,
            6 => Finish::Variance,
            _ => Finish::State,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_plans_round_trip_and_order_their_lanes() {
        for reduce_lanes_first in [false, true] {
            let plan = AxisPlan {
                output_lanes_log2: 3,
                reduce_lanes_log2: 6,
                reduce_lanes_first,
                splits: 70_000,
            };
            assert_eq!(AxisPlan::from_bits(plan.to_bits()), plan);
            // Thread 2·8 + 5 (results first) or 5·64 + 2 (reduce lanes first):
            // result lane 5, reduce lane 2.
            let thread = if reduce_lanes_first { 5 * 64 + 2 } else { 2 * 8 + 5 };
            assert_eq!(plan.lanes(thread), (5, 2), "{plan:?}");
        }
    }
}
