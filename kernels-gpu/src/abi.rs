//! The contract between the kernels and the host crate.
//!
//! The host crate reads this module (its constants, and its lists through the
//! exported macros) from the kernel crate compiled for the host, so the list
//! of entry points, their parameter layout and the per-thread tiling constant
//! exist exactly once.
//!
//! Every reduction entry point has the same parameters:
//!
//! | parameter  | PTX type | meaning                                                       |
//! |------------|----------|---------------------------------------------------------------|
//! | `input`    | `.u64`   | device address of the first element (any element-aligned address) |
//! | `len`      | `.u64`   | number of elements                                            |
//! | `partials` | `.u64`   | workspace: one [`PARTIAL_SLOT_BYTES`] slot per block of the grid |
//! | `ticket`   | `.u64`   | workspace: one `u32`, zero before the launch, zero after it   |
//! | `out`      | `.u64`   | where the result (one element) is written                     |

/// Bytes moved by one vector load (`ld.global.nc.v4.u32`).
pub const VECTOR_BYTES: u64 = 16;

/// Independent vector loads each thread issues before it folds any of them:
/// with 512-thread blocks this keeps 32 KiB of loads in flight per block.
pub const VECTORS_PER_THREAD: u64 = 4;

/// Bytes of workspace each block of a launch needs for its partial result
/// (an element, or argmax's element and index).
pub const PARTIAL_SLOT_BYTES: u64 = 16;

/// The value a segmented launch stores in its `status` word when an offset
/// is out of order or past the input's end (it is never cleared by a kernel).
pub const SEGMENTS_INVALID: u32 = 1;

/// How a segmented launch hands out its segments. Each schedule has its own
/// entry points, as its bookkeeping costs registers that the others' paths
/// would pay for (a kernel's registers are those of its worst path); the
/// entry function takes it as a const parameter (`as u8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Calls `$callback! { (HostOp, stem, Map, Operator, [element types]), ... }`
/// with every reduction the PTX module contains: the host's `Op` variant, the
/// kernel-name stem (see below for the entry-point names), the map
/// applied to each element as it is read, the combining operator, and the
/// element types it exists for. The kernel crate turns each (row, type) into
/// four entry points, `reduce_<stem>_<type>` and a segmented one per
/// [`SegmentSchedule`] ([`SegmentPlan`] lists their parameters); the
/// host crate into its kernel table and the emulator's dispatch.
#[macro_export]
macro_rules! for_each_reduce_kernel {
    ($callback:ident) => {
        $callback! {
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

/// Calls `$callback! { (input type, input name, accumulator type, [(HostOp,
/// stem, Operator) ...]), ... }` with every widening reduction: the input is
/// read as elements of the input type, each converted to the accumulator
/// type ([`crate::widen`]), and reduced in it. Entry points are named
/// `reduce_<stem>_<input name>_as_<accumulator>`, with the same parameters as
/// the others (`out` receives an accumulator).
#[macro_export]
macro_rules! for_each_widened_kernel {
    ($callback:ident) => {
        $callback! {
            (i8, i8, i64, [(Sum, sum, Sum)]),
            (i16, i16, i64, [(Sum, sum, Sum)]),
            (i32, i32, i64, [(Sum, sum, Sum)]),
            (u8, u8, u64, [(Sum, sum, Sum)]),
            (u16, u16, u64, [(Sum, sum, Sum)]),
            (u32, u32, u64, [(Sum, sum, Sum)]),
            (i32, i32, f64, [(Sum, sum, Sum)]),
            (u32, u32, f64, [(Sum, sum, Sum)]),
            (i64, i64, f64, [(Sum, sum, Sum)]),
            (u64, u64, f64, [(Sum, sum, Sum)]),
            (f32, f32, f64, [(Sum, sum, Sum)]),
            (f64, f64, f64, [(Sum, sum, Sum)]),
            (F16, f16, f32, [(Sum, sum, Sum) (Max, max, Max) (Min, min, Min)]),
            (Bf16, bf16, f32, [(Sum, sum, Sum) (Max, max, Max) (Min, min, Min)]),
        }
    };
}

/// Calls `$callback! { (input type, input name, accumulator type), ... }`
/// with every input type of argmax and argmin: entry points
/// `argmax_<input name>` and `argmin_<input name>`, parameters `(input, len,
/// partials, ticket, value_out, index_out)`: those of a reduction with two
/// outputs in place of `out`, the preferred value (converted to the
/// accumulator type, exactly) and its lowest index (a `u64`). `len` is not
/// zero.
#[macro_export]
macro_rules! for_each_arg_kernel {
    ($callback:ident) => {
        $callback! {
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

/// Calls `$callback! { (entry_point, element_type), ... }` with every
/// production dot-product kernel: parameters `(a, b, len, partials, ticket,
/// out)`, the same as the reduction kernels with two inputs in place of one.
#[macro_export]
macro_rules! for_each_dot_kernel {
    ($callback:ident) => {
        $callback! {
            (reduce_dot_i32, i32),
            (reduce_dot_u32, u32),
            (reduce_dot_i64, i64),
            (reduce_dot_u64, u64),
            (reduce_dot_f32, f32),
            (reduce_dot_f64, f64),
        }
    };
}

/// Calls `$callback! { (rung number, kernel-name stem, load shape, tree shape), ... }`
/// with every rung of the ladder. Its kernels are named
/// `ladder_<stem>_<op>_<type>` for op in sum/max/min/product and type in
/// i32/f32, with parameters `(input: .u64, len: .u64, out: .u64)` (one result
/// per block in `out`) and dynamic shared memory sized by the host. The dot
/// products are `ladder_dot_atomic_per_element_<type>` and
/// `ladder_dot_block_tree_<type>`, parameters `(a, b, len, out)`.
#[macro_export]
macro_rules! for_each_ladder_rung {
    ($callback:ident) => {
        $callback! {
            (1, interleaved_divergent, Strided<1>, InterleavedDivergent),
            (2, interleaved_strided, Strided<1>, InterleavedStrided),
            (3, sequential_addressing, Strided<1>, Sequential),
            (4, first_add_during_load, Strided<2>, Sequential),
            (5, vector_via_shared, Vector<true>, Sequential),
            (6, coarsened_vector, Vector<false>, Sequential),
            (7, warp_shuffle, Vector<false>, Shuffle),
        }
    };
}
