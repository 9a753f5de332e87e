//! The contract between the kernels and the host crate, declared once.
//!
//! Everything both sides must agree on lives here, and nowhere else:
//! - **which kernels exist**: the lists (`for_each_*` macros) of operators,
//!   element types, widenings, argmax/argmin inputs, dot products and ladder
//!   rungs, from which the PTX exports (`lib.rs`), the emulator's dispatch
//!   ([`crate::dispatch`]), the host's kernel lookup and the build script are
//!   all generated;
//! - **their identity**: a [`Kernel`] (family, operator, element type,
//!   schedule), whose [`Kernel::name`] is the PTX entry point, spelled by
//!   [`kernel_name!`](crate::kernel_name) alone;
//! - **their parameters**: one `#[repr(C)]` struct of `u64`s per family
//!   ([`ReduceArgs`], [`SegmentedArgs`], [`AxisArgs`], [`ArgArgs`], [`DotArgs`],
//!   [`LadderArgs`], [`SeedDotArgs`]); an entry point takes the struct's
//!   fields as `.u64` parameters in declaration order, the emulator passes
//!   the struct itself, and the host passes a pointer to each field;
//! - the tiling constants the host's launch shapes are computed from.
//!
//! This file uses nothing from the rest of the crate (only `core`, and `std`
//! in the host-only parts), so the host crate's build script compiles it on
//! its own (`#[path]`) to learn the names of the entry points it
//! post-processes.
//!
//! The whole-input parameters ([`ReduceArgs`]):
//!
//! | parameter  | meaning                                                       |
//! |------------|---------------------------------------------------------------|
//! | `input`    | device address of the first element (any element-aligned address) |
//! | `len`      | number of elements                                            |
//! | `partials` | workspace: one [`PARTIAL_SLOT_BYTES`] slot per block of the grid |
//! | `ticket`   | workspace: one `u32`, zero before the launch, zero after it   |
//! | `out`      | where the result (one element) is written                     |

// The kernel table, the names and the `Display` impls are for the host (the
// PTX needs none of them, and would compile `core::fmt` calls it cannot
// link): on nvptx the macros that build them go unused.
#![cfg_attr(target_arch = "nvptx64", allow(unused_macros))]

#[cfg(not(target_arch = "nvptx64"))]
use core::fmt;

/// Bytes moved by one vector load (`ld.global.nc.v4.u32`).
pub const VECTOR_BYTES: u64 = 16;

/// Independent vector loads each thread issues before it folds any of them:
/// with 512-thread blocks this keeps 32 KiB of loads in flight per block.
pub const VECTORS_PER_THREAD: u64 = 4;

/// Bytes of workspace each block of a launch needs for its partial result
/// (an element, argmax's element and index, or a statistic's summary: up
/// to 24 bytes, a slot of 32 keeping slots 16-byte aligned).
pub const PARTIAL_SLOT_BYTES: u64 = 32;

/// The value a segmented launch stores in its `status` word when an offset
/// is out of order or past the input's end (it is never cleared by a kernel).
pub const SEGMENTS_INVALID: u32 = 1;

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
/// | `row_len`  | elements per row, when `offsets` is 0 (`segments · row_len == len`) |
/// | `plan`     | [`SegmentPlan::to_bits`] |
/// | `partials` | workspace: one [`PARTIAL_SLOT_BYTES`] slot per part (`segments · blocks_per_segment`), used when `blocks_per_segment > 1` |
/// | `tickets`  | workspace: one `u32` per segment (at least four, 8-byte aligned), zero before and after the launch, used when `blocks_per_segment > 1`; the balanced entry points use its first 12 bytes as a `u64` counter and a `u32` ticket |
/// | `status`   | 0, or the address of a `u32` that receives [`SEGMENTS_INVALID`] if an offset is out of order or past `len` |
/// | `out`      | `segments` results |
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
/// | `finish` | [`Kernel::Statistic`] and [`Kernel::StatisticStates`]: what each result is, a [`Finish`] (`as u64`); the others ignore it |
/// | `finish_param` | the statistics' parameter: the variance's correction (an `f64`'s bits), `all`'s elements per result |
/// | `means` | the variance's: 0, or where the means go (`outputs` of them) |
/// | `out` | `outputs` results, in order |
/// | `offsets` | [`Kernel::StatisticSegments`] (the others ignore it and `status`): segments in place of the kept axes, the device address of `outputs + 1` `u64` offsets, result `o` folding the contiguous elements `offsets[o]..offsets[o + 1]` (clamped into `0..reduced`, `reduced` then being the input's length; `reduced_stride` 1, `splits` 1, the kept axes unused; `all` counts each segment's elements) |
/// | `status` | with `offsets`: 0, or a `u32` set to [`SEGMENTS_INVALID`] if an offset decreases or passes the input's end |
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

/// Loads each thread of an axis launch issues along the reduced axis
/// before it combines any (the host gives each lane of a contiguous reduced
/// axis several times this many elements where the axis is that long).
pub const AXIS_LOADS_IN_FLIGHT: u64 = 8;

/// The most kept axes an axis launch takes ([`AxisPlan`]'s `extent0` … `extent7`).
pub const AXIS_KEPT_DIMS: usize = 8;

/// A statistic of the [`Kernel::Statistic`] family: its summary is more
/// than one element (see `kernels-gpu/src/statistic.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Statistic {
    /// Count, mean and sum of squared deviations: variance, standard
    /// deviation, mean.
    Moments,
    /// Largest element and the sum of exponentials scaled to it: logsumexp.
    LogSumExp,
    /// The elements that are not zero.
    CountNonzero,
    /// The elements that are NaN.
    CountNan,
    /// The elements that are `+inf` or `-inf`.
    CountInf,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Statistic {
    /// Bytes of one summary stored with [`Finish::State`] (what a
    /// [`Kernel::StatisticStates`] launch reads per element) when it
    /// accumulates in `accumulator`: whole 8-byte words of the count, mean
    /// and `M2` (moments), of the maximum and sum (logsumexp), of the count.
    pub fn state_bytes(self, accumulator: Scalar) -> u64 {
        // Two values (mean and M2, or maximum and sum) fill one word when
        // they are 4 bytes each, two when they are 8; moments add a u64 count.
        let wide = matches!(accumulator, Scalar::F64 | Scalar::I64 | Scalar::U64);
        match self {
            Statistic::Moments if wide => 24,
            Statistic::Moments => 16,
            Statistic::LogSumExp if wide => 16,
            Statistic::LogSumExp => 8,
            Statistic::CountNonzero | Statistic::CountNan | Statistic::CountInf => 8,
        }
    }

    /// The accumulator of the [`Kernel::StatisticStates`] kernel that goes
    /// on merging summaries accumulated in `accumulator`: counts are `u64`s
    /// whatever the input; the others keep their accumulator.
    pub fn states_accumulator(self, accumulator: Scalar) -> Scalar {
        match self {
            Statistic::CountNonzero | Statistic::CountNan | Statistic::CountInf => Scalar::U64,
            Statistic::Moments | Statistic::LogSumExp => accumulator,
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
    /// The square root of the value: the standard deviation.
    Root = 2,
    /// Whether the count is above 0: one byte, 0 or 1.
    Any = 3,
    /// Whether the count is `finish_param`: one byte, 0 or 1.
    All = 4,
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
            _ => Finish::State,
        }
    }
}

/// A reduction operator: what the host asks for, and the `<stem>` of the
/// entry points that implement it.
///
/// | op             | identity (empty input)    | integers           | floats |
/// |----------------|---------------------------|--------------------|--------|
/// | `Sum`          | `0`                       | wraps in the type  | IEEE 754 (`inf + -inf` is NaN) |
/// | `Product`      | `1`                       | wraps in the type  | IEEE 754 |
/// | `Max`          | none: `Err(Error::Empty)` | exact              | NaN if any element is NaN; `-inf` is a value like any other |
/// | `Min`          | none: `Err(Error::Empty)` | exact              | NaN if any element is NaN; `+inf` is a value like any other |
/// | `NanSum`       | `0`                       | as `Sum`           | NaN elements count as 0 (a NaN from `inf + -inf` still is NaN), like `numpy.nansum` |
/// | `NanMax`       | none: `Err(Error::Empty)` | as `Max`           | NaN elements are skipped; NaN only if every element is NaN, like `numpy.nanmax` / `torch.fmax` |
/// | `NanMin`       | none: `Err(Error::Empty)` | as `Min`           | as `NanMax`, for the minimum |
/// | `SumOfSquares` | `0`                       | `Σ x·x`, wraps     | `Σ x·x`, IEEE 754 (overflows to `inf` past the type's range; no scaling) |
/// | `MaxAbs`       | none: `Err(Error::Empty)` | `Err(Error::UnsupportedOp)` | `max \|x\|`, NaN if any element is NaN (the ∞-norm) |
///
/// More operators will be added, so matches on `Op` need a wildcard arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// The sum of the elements.
    Sum,
    /// The largest element.
    Max,
    /// The smallest element.
    Min,
    /// The product of the elements.
    Product,
    /// The sum of the elements that are not NaN.
    NanSum,
    /// The largest element that is not NaN.
    NanMax,
    /// The smallest element that is not NaN.
    NanMin,
    /// The sum of the squares of the elements (its square root is the L2 norm).
    SumOfSquares,
    /// The largest absolute value (floats only).
    MaxAbs,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Op {
    /// Every operator, in a fixed order.
    pub const ALL: [Op; 9] = [
        Op::Sum,
        Op::Max,
        Op::Min,
        Op::Product,
        Op::NanSum,
        Op::NanMax,
        Op::NanMin,
        Op::SumOfSquares,
        Op::MaxAbs,
    ];

    /// Whether the operator has a value for an empty input (its identity).
    pub fn defined_on_empty(self) -> bool {
        !matches!(self, Op::Max | Op::Min | Op::NanMax | Op::NanMin | Op::MaxAbs)
    }

    /// Whether the operator is defined for `element` (all are, except
    /// `MaxAbs` of integers); the others are `Error::UnsupportedOp`.
    pub fn is_defined_for(self, element: Scalar) -> bool {
        Kernel::Reduce { op: self, element }.name().is_some()
    }

    /// The operator that combines two partial results of `self` (results of
    /// `self` over two parts of an input) into the result over the whole: the
    /// operator itself, without its element map (`NanSum`, `SumOfSquares` →
    /// `Sum`; `MaxAbs` → `Max`). A NaN in a partial `NanSum` comes from
    /// `inf + -inf` and must survive, so it is not combined with `NanSum`.
    pub fn combiner(self) -> Op {
        match self {
            Op::NanSum | Op::SumOfSquares => Op::Sum,
            Op::MaxAbs => Op::Max,
            op => op,
        }
    }

    /// Lower-case name, as in the kernel names (`"sum"`, `"nan_max"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Max => "max",
            Op::Min => "min",
            Op::Product => "product",
            Op::NanSum => "nan_sum",
            Op::NanMax => "nan_max",
            Op::NanMin => "nan_min",
            Op::SumOfSquares => "sum_of_squares",
            Op::MaxAbs => "max_abs",
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The runtime name of a scalar type the kernels read or write: the six
/// element types ([`Scalar::ELEMENTS`], which every operator reduces in), and
/// the narrower inputs that the widening and argmax kernels read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scalar {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    Bf16,
    F32,
    F64,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Scalar {
    /// The element types: those the reductions accumulate in.
    pub const ELEMENTS: [Scalar; 6] = [
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F32,
        Scalar::F64,
    ];

    /// Lower-case name, as in the kernel names (`"i32"`, `"bf16"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F16 => "f16",
            Scalar::Bf16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }
}

/// A rung of the ladder the seed tutorials climb: each is a kernel that shows
/// one technique (`docs/LADDER.md` says what each costs on an H200).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rung {
    /// 1. One element per thread into shared memory; at stride `s` the threads
    ///    with `tid % 2s == 0` combine: divergent warps at every step.
    InterleavedDivergent,
    /// 2. Thread `t` combines at `2·s·t`: contiguous active threads, but
    ///    2-, 4-, 8-…-way shared-memory bank conflicts.
    InterleavedStrided,
    /// 3. Strides halve from `B/2`, thread `t < s` combines `t` and `t + s`:
    ///    no divergence in busy warps, no bank conflicts.
    SequentialAddressing,
    /// 4. Each thread adds two elements (`B` apart) while loading: half the blocks.
    FirstAddDuringLoad,
    /// 5. One 16-byte vector per thread stored into a shared array of `4·B`
    ///    values, then summed from there: 4× fewer load instructions, 4× the
    ///    shared memory.
    VectorViaShared,
    /// 6. One 16-byte vector per thread, summed in registers: shared memory
    ///    back to `B` values.
    CoarsenedVector,
    /// 7. As 6, but the block combines with warp shuffles (`shfl.sync`) and
    ///    one barrier instead of a shared-memory tree.
    WarpShuffle,
}

/// Seed 004's two dot-product kernels (the ladder's dot products).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeedDot {
    /// Every thread atomically adds its product into the result: one atomic per element.
    AtomicPerElement,
    /// Products into shared memory, a block tree, one atomic per block.
    BlockTree,
}

/// One entry point of the PTX module (and of the emulator's dispatch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// `op` over a whole input of `element`s: [`ReduceArgs`].
    Reduce { op: Op, element: Scalar },
    /// `op` per segment or row of `element`s, handed out as `schedule` says: [`SegmentedArgs`].
    Segmented {
        op: Op,
        element: Scalar,
        schedule: SegmentSchedule,
    },
    /// `op` over `input`s, each converted to `accumulator` as it is read: [`ReduceArgs`].
    Widened { op: Op, input: Scalar, accumulator: Scalar },
    /// `op` along one axis of a strided tensor of `element`s, one result per
    /// position of the other axes: [`AxisArgs`] (see [`AxisPlan`]).
    Axis { op: Op, element: Scalar },
    /// `op` along one axis of a strided tensor of `input`s, each converted
    /// to `accumulator` as it is read: [`AxisArgs`] (the first pass of a
    /// widened reduction along axes; later passes are [`Kernel::Axis`]
    /// launches over the accumulators).
    WidenedAxis { op: Op, input: Scalar, accumulator: Scalar },
    /// A [`Statistic`] along one axis of a strided tensor of `input`s, each
    /// converted to `accumulator` as it is read: [`AxisArgs`], with `finish`.
    Statistic {
        statistic: Statistic,
        input: Scalar,
        accumulator: Scalar,
    },
    /// A [`Statistic`] along one axis of a tensor of summaries in
    /// `accumulator` that an earlier launch stored ([`Finish::State`]):
    /// [`AxisArgs`], with `finish`.
    StatisticStates { statistic: Statistic, accumulator: Scalar },
    /// A [`Statistic`] per segment of a contiguous input of `input`s given
    /// by offsets, each converted to `accumulator` as it is read:
    /// [`AxisArgs`], with `finish`, `offsets` and `status`.
    StatisticSegments {
        statistic: Statistic,
        input: Scalar,
        accumulator: Scalar,
    },
    /// argmax (`op` = `Max`) or argmin (`Min`) of `input`s: [`ArgArgs`].
    Arg { op: Op, input: Scalar },
    /// argmax (`op` = `Max`) or argmin (`Min`) along one axis of a strided
    /// tensor of `input`s, one `u64` position per position of the other
    /// axes: [`AxisArgs`].
    ArgAxis { op: Op, input: Scalar },
    /// The dot product of two inputs of `element`s: [`DotArgs`].
    Dot { element: Scalar },
    /// A ladder rung's `op` over `element`s (one pass): [`LadderArgs`].
    Ladder { rung: Rung, op: Op, element: Scalar },
    /// One of seed 004's dot products: [`SeedDotArgs`].
    SeedDot { kind: SeedDot, element: Scalar },
}

#[cfg(not(target_arch = "nvptx64"))]
impl Kernel {
    /// The entry point's name in the PTX module; `None` where the module has
    /// no such kernel (`MaxAbs` of integers, an op a widening lacks, ...).
    pub fn name(self) -> Option<&'static str> {
        // A table, not a scan: the host asks on every launch.
        static NAMES: std::sync::OnceLock<KernelMap<&'static str>> = std::sync::OnceLock::new();
        NAMES.get_or_init(|| Kernel::all().collect()).get(&self).copied()
    }

    /// Every kernel of the module with its name.
    pub fn all() -> impl Iterator<Item = (Kernel, &'static str)> {
        let per_kind = [ARG_KERNELS, ARG_AXIS_KERNELS, SEED_DOT_KERNELS]
            .into_iter()
            .flatten()
            .copied()
            .flatten();
        let ladder = LADDER_KERNELS.iter().copied().flatten().copied().flatten();
        [REDUCE_KERNELS, WIDENED_KERNELS, DOT_KERNELS, STATISTIC_KERNELS]
            .into_iter()
            .flatten()
            .chain(per_kind)
            .chain(ladder)
            .copied()
    }
}

/// The image a kernel ships in: the PTX (and machine code) of each module is
/// an image of its own, which the host loads the first time it launches one
/// of the module's kernels. A program that only sums `f32`s thus loads the
/// dozen kernels of [`Module::Whole`]`(F32)`, not all 300: loading a module
/// from PTX makes the driver compile it, about 0.1 s per kernel on an H100.
///
/// The grouping follows what one call needs: a whole-input call of any
/// operator on one input type, the segmented calls of one schedule and type,
/// or the ladder of one type.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Module {
    /// Every whole-input kernel that reads `Scalar`s: [`Kernel::Reduce`],
    /// [`Kernel::Widened`] (by input), [`Kernel::Arg`] and [`Kernel::Dot`].
    Whole(Scalar),
    /// The [`Kernel::Segmented`] kernels of one schedule and element type.
    Segmented(SegmentSchedule, Scalar),
    /// The ladder's [`Kernel::Ladder`] and [`Kernel::SeedDot`] kernels of one element type.
    Ladder(Scalar),
    /// The [`Kernel::Axis`], [`Kernel::WidenedAxis`] and [`Kernel::ArgAxis`]
    /// kernels of one input type.
    Axis(Scalar),
    /// Every [`Kernel::Statistic`], [`Kernel::StatisticStates`] and
    /// [`Kernel::StatisticSegments`] kernel.
    Statistics,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Kernel {
    /// The module this kernel ships in.
    pub fn module(self) -> Module {
        match self {
            Kernel::Reduce { element, .. } | Kernel::Dot { element } => Module::Whole(element),
            Kernel::Widened { input, .. } | Kernel::Arg { input, .. } => Module::Whole(input),
            Kernel::Segmented { element, schedule, .. } => Module::Segmented(schedule, element),
            Kernel::Axis { element: input, .. } | Kernel::WidenedAxis { input, .. } | Kernel::ArgAxis { input, .. } => {
                Module::Axis(input)
            }
            Kernel::Statistic { .. } | Kernel::StatisticStates { .. } | Kernel::StatisticSegments { .. } => {
                Module::Statistics
            }
            Kernel::Ladder { element, .. } | Kernel::SeedDot { element, .. } => Module::Ladder(element),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl Module {
    /// Every module, each once, in the order of [`Kernel::all`].
    pub fn all() -> Vec<Module> {
        let mut modules: Vec<Module> = Vec::new();
        for (kernel, _) in Kernel::all() {
            if !modules.contains(&kernel.module()) {
                modules.push(kernel.module());
            }
        }
        modules
    }
}

/// The module's file stem: `whole_f32`, `segmented_balanced_u64`,
/// `ladder_i32` (the prefix its segmented kernels' names share).
#[cfg(not(target_arch = "nvptx64"))]
impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Module::Whole(input) => write!(f, "whole_{}", input.name()),
            Module::Segmented(SegmentSchedule::FixedOrder, element) => write!(f, "segmented_{}", element.name()),
            Module::Segmented(SegmentSchedule::WarpsTake, element) => {
                write!(f, "segmented_balanced_{}", element.name())
            }
            Module::Segmented(SegmentSchedule::BlocksTake, element) => {
                write!(f, "segmented_block_balanced_{}", element.name())
            }
            Module::Ladder(element) => write!(f, "ladder_{}", element.name()),
            Module::Axis(element) => write!(f, "axis_{}", element.name()),
            Module::Statistics => f.write_str("statistics"),
        }
    }
}

/// A map keyed by [`Kernel`], with a hash that costs a few nanoseconds
/// (the host looks kernels up on every launch; SipHash took ~26 ns a lookup).
#[cfg(not(target_arch = "nvptx64"))]
pub type KernelMap<V> = std::collections::HashMap<Kernel, V, core::hash::BuildHasherDefault<KernelHasher>>;

/// The hash of [`KernelMap`]: a multiply-rotate over the few small integers a
/// [`Kernel`] hashes as (not for keys an adversary chooses).
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelHasher(u64);

#[cfg(not(target_arch = "nvptx64"))]
impl core::hash::Hasher for KernelHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(byte as u64);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_isize(&mut self, value: isize) {
        self.write_u64(value as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The parameters of a family of entry points, as the host passes them: a
/// `#[repr(C)]` struct of `u64`s (addresses, lengths, plans), each field one
/// `.u64` parameter of the PTX entry point, in order.
pub trait KernelArgs: Copy + Send + Sync {
    /// Whether `kernel` takes these parameters.
    fn fits(kernel: Kernel) -> bool;
    /// The fields, in parameter order.
    fn as_words(&self) -> &[u64];
}

/// Calls `$callback! { $extra Args [field ...], ... }` with every argument
/// struct and its fields (each a `u64`, in parameter order).
#[macro_export]
macro_rules! for_each_kernel_args {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)*
            ReduceArgs [input len partials ticket out],
            SegmentedArgs [input len offsets segments row_len plan partials tickets status out],
            ArgArgs [input len partials ticket value_out index_out],
            DotArgs [a b len partials ticket out],
            AxisArgs [input reduced reduced_stride outputs kept_dims
                extent0 stride0 extent1 stride1 extent2 stride2 extent3 stride3
                extent4 stride4 extent5 stride5 extent6 stride6 extent7 stride7
                plan partials tickets finish finish_param means out offsets status],
            LadderArgs [input len out],
            SeedDotArgs [a b len out],
        }
    };
}

macro_rules! define_kernel_args {
    ($($name:ident [$($field:ident)*]),* $(,)?) => {$(
        /// The parameters of one family of entry points (see the module
        /// docs and the family's [`Kernel`] variant): one `u64` each.
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $(#[allow(missing_docs)] pub $field: u64,)*
        }

        impl $name {
            const WORDS: usize = [$(stringify!($field)),*].len();
        }

        // `as_words` views the struct as `[u64; WORDS]`.
        const _: () = assert!(core::mem::size_of::<$name>() == $name::WORDS * 8);
    )*};
}
for_each_kernel_args!(define_kernel_args);

macro_rules! most_kernel_words {
    ($($name:ident [$($field:ident)*]),* $(,)?) => {
        /// The most `.u64` parameters an entry point takes: the fields of the
        /// longest argument struct (the host sizes its parameter array by it).
        pub const MAX_KERNEL_WORDS: usize = {
            let mut most = 0;
            $(if $name::WORDS > most {
                most = $name::WORDS;
            })*
            most
        };
    };
}
for_each_kernel_args!(most_kernel_words);

macro_rules! kernel_args_words {
    ($($name:ident: $($family:ident)|*),* $(,)?) => {$(
        impl KernelArgs for $name {
            fn fits(kernel: Kernel) -> bool {
                matches!(kernel, $(Kernel::$family { .. })|*)
            }
            fn as_words(&self) -> &[u64] {
                // SAFETY: `#[repr(C)]` struct of `WORDS` `u64` fields (asserted
                // above): no padding, `u64` alignment.
                unsafe { core::slice::from_raw_parts(self as *const Self as *const u64, Self::WORDS) }
            }
        }
    )*};
}
#[cfg(not(target_arch = "nvptx64"))]
kernel_args_words!(
    ReduceArgs: Reduce | Widened,
    SegmentedArgs: Segmented,
    AxisArgs: Axis | WidenedAxis | Statistic | StatisticStates | StatisticSegments | ArgAxis,
    ArgArgs: Arg,
    DotArgs: Dot,
    LadderArgs: Ladder,
    SeedDotArgs: SeedDot,
);

/// The PTX entry-point name of a kernel, as a string literal: the one place
/// that spells kernel names. `kernel_name!(reduce, stem, type)`,
/// `(segmented, Schedule, stem, type)`, `(axis, stem, type)`, `(widened, stem, input, accumulator)`,
/// `(widened_axis, stem, input, accumulator)`, `(statistic, stem, input, accumulator)`,
/// `(statistic_segments, stem, input, accumulator)`, `(statistic_states, stem, accumulator)`,
/// `(arg, Max|Min, input)`, `(arg_axis, Max|Min, input)`, `(dot, type)`, `(ladder, rung stem, op stem, type)`,
/// `(seed_dot, Kind, type)`.
#[macro_export]
macro_rules! kernel_name {
    (reduce, $stem:ident, $t:ident) => {
        concat!("reduce_", stringify!($stem), "_", stringify!($t))
    };
    (segmented, FixedOrder, $stem:ident, $t:ident) => {
        concat!("segmented_", stringify!($stem), "_", stringify!($t))
    };
    (segmented, WarpsTake, $stem:ident, $t:ident) => {
        concat!("segmented_balanced_", stringify!($stem), "_", stringify!($t))
    };
    (segmented, BlocksTake, $stem:ident, $t:ident) => {
        concat!("segmented_block_balanced_", stringify!($stem), "_", stringify!($t))
    };
    (axis, $stem:ident, $t:ident) => {
        concat!("axis_", stringify!($stem), "_", stringify!($t))
    };
    (statistic, $stem:ident, $input:ident, $acc:ident) => {
        concat!(
            "axis_",
            stringify!($stem),
            "_",
            stringify!($input),
            "_as_",
            stringify!($acc)
        )
    };
    (statistic_segments, $stem:ident, $input:ident, $acc:ident) => {
        concat!(
            "segments_",
            stringify!($stem),
            "_",
            stringify!($input),
            "_as_",
            stringify!($acc)
        )
    };
    (statistic_states, $stem:ident, $acc:ident) => {
        concat!("axis_", stringify!($stem), "_states_", stringify!($acc))
    };
    (widened_axis, $stem:ident, $input:ident, $acc:ident) => {
        $crate::kernel_name!(statistic, $stem, $input, $acc)
    };
    (widened, $stem:ident, $input:ident, $acc:ident) => {
        concat!(
            "reduce_",
            stringify!($stem),
            "_",
            stringify!($input),
            "_as_",
            stringify!($acc)
        )
    };
    (arg, Max, $input:ident) => {
        concat!("argmax_", stringify!($input))
    };
    (arg, Min, $input:ident) => {
        concat!("argmin_", stringify!($input))
    };
    (arg_axis, Max, $input:ident) => {
        concat!("axis_argmax_", stringify!($input))
    };
    (arg_axis, Min, $input:ident) => {
        concat!("axis_argmin_", stringify!($input))
    };
    (dot, $t:ident) => {
        concat!("reduce_dot_", stringify!($t))
    };
    (ladder, $rung:ident, $op:ident, $t:ident) => {
        concat!("ladder_", stringify!($rung), "_", stringify!($op), "_", stringify!($t))
    };
    (seed_dot, AtomicPerElement, $t:ident) => {
        concat!("ladder_dot_atomic_per_element_", stringify!($t))
    };
    (seed_dot, BlockTree, $t:ident) => {
        concat!("ladder_dot_block_tree_", stringify!($t))
    };
}

/// The [`Scalar`] named by a type name of the lists (`i32`, `f16`, ...).
#[macro_export]
macro_rules! scalar {
    (i8) => {
        $crate::abi::Scalar::I8
    };
    (i16) => {
        $crate::abi::Scalar::I16
    };
    (i32) => {
        $crate::abi::Scalar::I32
    };
    (i64) => {
        $crate::abi::Scalar::I64
    };
    (u8) => {
        $crate::abi::Scalar::U8
    };
    (u16) => {
        $crate::abi::Scalar::U16
    };
    (u32) => {
        $crate::abi::Scalar::U32
    };
    (u64) => {
        $crate::abi::Scalar::U64
    };
    (f16) => {
        $crate::abi::Scalar::F16
    };
    (bf16) => {
        $crate::abi::Scalar::Bf16
    };
    (f32) => {
        $crate::abi::Scalar::F32
    };
    (f64) => {
        $crate::abi::Scalar::F64
    };
}

/// Calls `$callback! { $extra (Op, stem, Map, Operator, [element types]), ... }`
/// with every reduction the PTX module contains: the [`Op`], the kernel-name
/// stem, the map applied to each element as it is read, the combining
/// operator, and the element types it exists for. Each (row, type) is a
/// [`Kernel::Reduce`], a [`Kernel::Segmented`] per [`SegmentSchedule`] and a
/// [`Kernel::Axis`].
#[macro_export]
macro_rules! for_each_reduce_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)*
            (Sum, sum, Identity, Sum, [i32 u32 i64 u64 f32 f64]),
            (Max, max, Identity, Max, [i32 u32 i64 u64 f32 f64]),
            (Min, min, Identity, Min, [i32 u32 i64 u64 f32 f64]),
            (Product, product, Identity, Product, [i32 u32 i64 u64 f32 f64]),
            (NanSum, nan_sum, NanToZero, Sum, [i32 u32 i64 u64 f32 f64]),
            (NanMax, nan_max, Identity, NanMax, [i32 u32 i64 u64 f32 f64]),
            (NanMin, nan_min, Identity, NanMin, [i32 u32 i64 u64 f32 f64]),
            (SumOfSquares, sum_of_squares, Square, Sum, [i32 u32 i64 u64 f32 f64]),
            (MaxAbs, max_abs, Abs, Max, [f32 f64]),
        }
    };
}

/// Calls `$callback! { $extra (input type, input name, accumulator type,
/// [(Op, stem, Operator) ...]), ... }` with every widening reduction
/// ([`Kernel::Widened`]): the input is read as elements of the input type,
/// each converted to the accumulator type (`crate::widen`), and reduced in it.
/// The list is grouped by the operators a widening has (every one sums; the
/// half types also take max and min), and each row is given its group's.
#[macro_export]
macro_rules! for_each_widened_kernel {
    (@rows [$callback:ident $($extra:tt)*] $($ops:tt: $(($input:ident, $name:ident, $acc:ident))*;)*) => {
        $callback! { $($extra)* $($(($input, $name, $acc, $ops),)*)* }
    };
    ($callback:ident $($extra:tt)*) => {
        $crate::for_each_widened_kernel! { @rows [$callback $($extra)*]
            [(Sum, sum, Sum)]:
                (i8, i8, i64) (i16, i16, i64) (i32, i32, i64)
                (u8, u8, u64) (u16, u16, u64) (u32, u32, u64)
                (i32, i32, f64) (u32, u32, f64) (i64, i64, f64) (u64, u64, f64) (f32, f32, f64) (f64, f64, f64);
            [(Sum, sum, Sum) (Max, max, Max) (Min, min, Min)]:
                (F16, f16, f32) (Bf16, bf16, f32);
        }
    };
}

/// Calls `$callback! { $extra (input type, input name, accumulator type), ... }`
/// with every input type of argmax and argmin ([`Kernel::Arg`]): the
/// preferred value (converted to the accumulator type, exactly) and its
/// lowest index. `len` is not zero.
#[macro_export]
macro_rules! for_each_arg_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)*
            (i32, i32, i32),
            (u32, u32, u32),
            (i64, i64, i64),
            (u64, u64, u64),
            (f32, f32, f32),
            (f64, f64, f64),
            (F16, f16, f32),
            (Bf16, bf16, f32),
        }
    };
}

/// Calls `$callback! { $extra (Statistic, stem, statistic type,
/// [(input type, input name, accumulator) ...], [states accumulator ...]), ... }`
/// with every statistic ([`Kernel::Statistic`]: elements of each input
/// type, converted to the accumulator as they are read; and
/// [`Kernel::StatisticStates`]: summaries in each accumulator). The
/// statistic type is a `crate::statistic` type generic over the
/// accumulator (`Variance<f32>`).
#[macro_export]
macro_rules! for_each_statistic_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)*
            (Moments, moments, Variance,
                [(f32, f32, f32) (f32, f32, f64) (f64, f64, f64)], [f32 f64]),
            (LogSumExp, logsumexp, LogSumExp,
                [(f32, f32, f32) (f64, f64, f64)], [f32 f64]),
            (CountNonzero, count_nonzero, CountNonzero,
                [(i32, i32, i32) (u32, u32, u32) (i64, i64, i64) (u64, u64, u64) (f32, f32, f32) (f64, f64, f64)], [u64]),
            (CountNan, count_nan, CountNan,
                [(i32, i32, i32) (u32, u32, u32) (i64, i64, i64) (u64, u64, u64) (f32, f32, f32) (f64, f64, f64)], [u64]),
            (CountInf, count_inf, CountInf,
                [(i32, i32, i32) (u32, u32, u32) (i64, i64, i64) (u64, u64, u64) (f32, f32, f32) (f64, f64, f64)], [u64]),
        }
    };
}

/// Calls `$callback! { $extra element_type, ... }` with every production
/// dot-product kernel ([`Kernel::Dot`]).
#[macro_export]
macro_rules! for_each_dot_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)* i32, u32, i64, u64, f32, f64 }
    };
}

/// Calls `$callback! { $extra ops [(Op, stem) ...] types [type ...];
/// (rung number, Rung variant, kernel-name stem, load shape, tree shape), ... }`
/// with the seeds' operators and element types and every rung of the
/// ladder. Each rung has a [`Kernel::Ladder`] for every op and type, with
/// dynamic shared memory sized by the host; each type has both of seed 004's
/// dot products ([`Kernel::SeedDot`]).
#[macro_export]
macro_rules! for_each_ladder_rung {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)*
            ops [(Sum, sum) (Max, max) (Min, min) (Product, product)] types [i32 f32];
            (1, InterleavedDivergent, interleaved_divergent, Strided<1>, InterleavedDivergent),
            (2, InterleavedStrided, interleaved_strided, Strided<1>, InterleavedStrided),
            (3, SequentialAddressing, sequential_addressing, Strided<1>, Sequential),
            (4, FirstAddDuringLoad, first_add_during_load, Strided<2>, Sequential),
            (5, VectorViaShared, vector_via_shared, Vector<true>, Sequential),
            (6, CoarsenedVector, coarsened_vector, Vector<false>, Sequential),
            (7, WarpShuffle, warp_shuffle, Vector<false>, Shuffle),
        }
    };
}

macro_rules! rung_table {
    (
        ops [$(($op:ident, $op_stem:ident))*] types $types:tt;
        $(($number:literal, $rung:ident, $stem:ident, $load:ty, $tree:ty)),* $(,)?
    ) => {
        impl Op {
            /// The operators the ladder's rungs implement (the seeds' four).
            pub const LADDER: [Op; [$(stringify!($op)),*].len()] = [$(Op::$op),*];
        }

        impl Rung {
            /// Every rung, in ladder order.
            pub const ALL: [Rung; 7] = [$(Rung::$rung),*];

            /// The rung's number on the ladder, 1 to 7.
            pub fn number(self) -> u32 {
                match self { $(Rung::$rung => $number,)* }
            }

            /// The rung's kernel-name stem.
            pub fn name(self) -> &'static str {
                match self { $(Rung::$rung => stringify!($stem),)* }
            }
        }
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_ladder_rung!(rung_table);

#[cfg(not(target_arch = "nvptx64"))]
impl fmt::Display for Rung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}. {}", self.number(), self.name())
    }
}

macro_rules! reduce_kernel_table {
    ($(($op:ident, $stem:ident, $map:ident, $operator:ident, [$($t:ident)*])),* $(,)?) => {
        const REDUCE_KERNELS: &[(Kernel, &str)] = &[$($(
            (Kernel::Reduce { op: Op::$op, element: scalar!($t) }, kernel_name!(reduce, $stem, $t)),
            segmented_row!($op, $stem, $t, FixedOrder),
            segmented_row!($op, $stem, $t, WarpsTake),
            segmented_row!($op, $stem, $t, BlocksTake),
            (Kernel::Axis { op: Op::$op, element: scalar!($t) }, kernel_name!(axis, $stem, $t)),
        )*)*];
    };
}
macro_rules! segmented_row {
    ($op:ident, $stem:ident, $t:ident, $schedule:ident) => {
        (
            Kernel::Segmented {
                op: Op::$op,
                element: scalar!($t),
                schedule: SegmentSchedule::$schedule,
            },
            kernel_name!(segmented, $schedule, $stem, $t),
        )
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_reduce_kernel!(reduce_kernel_table);

macro_rules! widened_kernel_table {
    ($(($input:ident, $name:ident, $acc:ident, [$(($op:ident, $stem:ident, $operator:ident))*])),* $(,)?) => {
        const WIDENED_KERNELS: &[(Kernel, &str)] = &[$($(
            (
                Kernel::Widened { op: Op::$op, input: scalar!($name), accumulator: scalar!($acc) },
                kernel_name!(widened, $stem, $name, $acc),
            ),
            (
                Kernel::WidenedAxis { op: Op::$op, input: scalar!($name), accumulator: scalar!($acc) },
                kernel_name!(widened_axis, $stem, $name, $acc),
            ),
        )*)*];
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_widened_kernel!(widened_kernel_table);

macro_rules! statistic_kernel_table {
    ($(($statistic:ident, $stem:ident, $type:ident, [$(($input:ident, $name:ident, $acc:ident))*], [$($state:ident)*])),* $(,)?) => {
        const STATISTIC_KERNELS: &[(Kernel, &str)] = &[$(
            $((
                Kernel::Statistic {
                    statistic: Statistic::$statistic,
                    input: scalar!($name),
                    accumulator: scalar!($acc),
                },
                kernel_name!(statistic, $stem, $name, $acc),
            ),)*
            $((
                Kernel::StatisticSegments {
                    statistic: Statistic::$statistic,
                    input: scalar!($name),
                    accumulator: scalar!($acc),
                },
                kernel_name!(statistic_segments, $stem, $name, $acc),
            ),)*
            $((
                Kernel::StatisticStates { statistic: Statistic::$statistic, accumulator: scalar!($state) },
                kernel_name!(statistic_states, $stem, $state),
            ),)*
        )*];
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_statistic_kernel!(statistic_kernel_table);

/// One type's kernels of a family that comes in kinds (argmax and argmin,
/// seed 004's two dot products), a row per kind: a slice, as a
/// `macro_rules` transcription cannot repeat the kinds within the types.
macro_rules! rows_per_kind {
    ($family:ident { $kind_field:ident: $kinds:ident::[$($kind:ident)*], $type_field:ident: $t:ident }, $stem:ident) => {
        &[$((Kernel::$family { $kind_field: $kinds::$kind, $type_field: scalar!($t) }, kernel_name!($stem, $kind, $t))),*]
    };
}

macro_rules! arg_kernel_table {
    ($(($input:ident, $name:ident, $acc:ident)),* $(,)?) => {
        const ARG_KERNELS: &[&[(Kernel, &str)]] = &[$(rows_per_kind!(Arg { op: Op::[Max Min], input: $name }, arg)),*];
        const ARG_AXIS_KERNELS: &[&[(Kernel, &str)]] =
            &[$(rows_per_kind!(ArgAxis { op: Op::[Max Min], input: $name }, arg_axis)),*];
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_arg_kernel!(arg_kernel_table);

macro_rules! dot_kernel_table {
    ($($t:ident),* $(,)?) => {
        const DOT_KERNELS: &[(Kernel, &str)] = &[$((Kernel::Dot { element: scalar!($t) }, kernel_name!(dot, $t)),)*];
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_dot_kernel!(dot_kernel_table);

/// The ladder's kernels: a slice per rung, of a slice per op, of a row per
/// type (a `macro_rules` transcription repeats one list at a time).
#[cfg(not(target_arch = "nvptx64"))]
type LadderTable = &'static [&'static [&'static [(Kernel, &'static str)]]];

macro_rules! ladder_kernel_table {
    (ops $ops:tt types $types:tt; $(($number:literal, $rung:ident, $stem:ident, $load:ty, $tree:ty)),* $(,)?) => {
        const LADDER_KERNELS: LadderTable = &[$(ladder_rung_rows!($rung, $stem, $ops, $types)),*];
    };
}
macro_rules! ladder_rung_rows {
    ($rung:ident, $stem:ident, [$(($op:ident, $op_stem:ident))*], $types:tt) => {
        &[$(ladder_op_rows!($rung, $stem, $op, $op_stem, $types)),*]
    };
}
macro_rules! ladder_op_rows {
    ($rung:ident, $stem:ident, $op:ident, $op_stem:ident, [$($t:ident)*]) => {
        &[$((
            Kernel::Ladder { rung: Rung::$rung, op: Op::$op, element: scalar!($t) },
            kernel_name!(ladder, $stem, $op_stem, $t),
        )),*]
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_ladder_rung!(ladder_kernel_table);

macro_rules! seed_dot_kernel_table {
    (ops $ops:tt types [$($t:ident)*]; $($rungs:tt)*) => {
        const SEED_DOT_KERNELS: &[&[(Kernel, &str)]] =
            &[$(rows_per_kind!(SeedDot { kind: SeedDot::[AtomicPerElement BlockTree], element: $t }, seed_dot)),*];
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_ladder_rung!(seed_dot_kernel_table);

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

    #[test]
    fn every_op_and_element_has_its_kernels_except_max_abs_of_integers() {
        for op in Op::ALL {
            for element in Scalar::ELEMENTS {
                let float = matches!(element, Scalar::F32 | Scalar::F64);
                let expected = op != Op::MaxAbs || float;
                assert_eq!(op.is_defined_for(element), expected, "{op} × {element:?}");
                for schedule in [
                    SegmentSchedule::FixedOrder,
                    SegmentSchedule::WarpsTake,
                    SegmentSchedule::BlocksTake,
                ] {
                    let segmented = Kernel::Segmented { op, element, schedule };
                    assert_eq!(segmented.name().is_some(), expected, "{segmented:?}");
                }
                let axis = Kernel::Axis { op, element };
                assert_eq!(axis.name().is_some(), expected, "{axis:?}");
            }
        }
    }

    #[test]
    fn modules_group_kernels_by_call() {
        let modules = Module::all();
        // 12 whole-input types, 3 schedules × 6 elements, 2 ladder types, 12
        // axis input types (6 elements; i8, i16, u8, u16 widened; f16, bf16
        // widened and argmax), the statistics.
        assert_eq!(modules.len(), 12 + 18 + 2 + 12 + 1);
        let names: std::collections::HashSet<String> = modules.iter().map(Module::to_string).collect();
        assert_eq!(names.len(), modules.len(), "two modules share a file stem");
        let sum_f32 = Kernel::Reduce {
            op: Op::Sum,
            element: Scalar::F32,
        };
        let members: Vec<&str> = Kernel::all()
            .filter(|(kernel, _)| kernel.module() == sum_f32.module())
            .map(|(_, name)| name)
            .collect();
        assert_eq!(sum_f32.module().to_string(), "whole_f32");
        assert_eq!(members.len(), 13, "{members:?}");
        assert!(members.contains(&"argmin_f32") && members.contains(&"reduce_sum_f32_as_f64"));
    }

    #[test]
    fn names_are_unique_and_every_family_is_listed() {
        let all: Vec<(Kernel, &str)> = Kernel::all().collect();
        let names: std::collections::HashSet<&str> = all.iter().map(|(_, name)| *name).collect();
        let kernels: std::collections::HashSet<Kernel> = all.iter().map(|(kernel, _)| *kernel).collect();
        assert_eq!(names.len(), all.len(), "two kernels share a name");
        assert_eq!(kernels.len(), all.len(), "a kernel is listed twice");
        // 8 reductions × 6 types + MaxAbs × 2, each whole-input and per
        // schedule and along an axis; 18 widenings, whole and along an axis;
        // 8 argmax inputs × 2, whole and along an axis; 6 dots; 7 rungs × 4
        // ops × 2 types; 2 seed dots × 2 types; statistics: moments 3 + 2
        // states, logsumexp 2 + 2, three counts of 6 types and a state each;
        // each statistic's inputs again over segments (3 + 2 + 3 × 6).
        assert_eq!(all.len(), 50 * 5 + 18 * 2 + 16 * 2 + 6 + 56 + 4 + 9 + 3 * 7 + 23);
        assert_eq!(
            Kernel::Ladder {
                rung: Rung::WarpShuffle,
                op: Op::Max,
                element: Scalar::F32
            }
            .name(),
            Some("ladder_warp_shuffle_max_f32")
        );
    }
}
