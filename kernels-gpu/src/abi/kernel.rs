//! A kernel's identity: [`Kernel`] (its family and what it computes on
//! which types), whose [`Kernel::name`] is the PTX entry point, spelled by
//! [`kernel_name!`](crate::kernel_name) alone; the [`Module`] it ships in;
//! and [`KernelMap`], the host's map keyed by kernels.

use super::operations::{Op, Rung, SeedDot, Statistic};
use super::plans::{ExactSchedule, SegmentSchedule};
use super::scalar::Scalar;
#[cfg(doc)]
use super::{
    ArgArgs, AxisArgs, AxisPlan, ConvertArgs, DivideArgs, DotArgs, ExactArgs, ExactDotArgs, Finish, LadderArgs,
    ReduceArgs, SeedDotArgs, SegmentedArgs,
};
#[cfg(not(target_arch = "nvptx64"))]
use core::fmt;

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
    /// A user operator over two inputs of `element`s: its combine of its
    /// map of each pair `(a[i], b[i])`: [`DotArgs`] (`crate::user`).
    UserPair { element: Scalar },
    /// A ladder rung's `op` over `element`s (one pass): [`LadderArgs`].
    Ladder { rung: Rung, op: Op, element: Scalar },
    /// One of seed 004's dot products: [`SeedDotArgs`].
    SeedDot { kind: SeedDot, element: Scalar },
    /// Each of `len` sums of `element`s divided, in place, by the number
    /// of elements summed, `count` (a mean): [`DivideArgs`].
    DivideByCount { element: Scalar },
    /// Each of `len` results of `from` converted to `to` (a cast
    /// reduction's results in the caller's type: `u64` positions to `u32`,
    /// `f64` to `f32`, `f32` to `f16`/`bf16`, rounded to nearest even):
    /// [`ConvertArgs`].
    Convert { from: Scalar, to: Scalar },
    /// The exact sum of a whole input of `element`s, rounded once (then
    /// divided by the count with [`super::EXACT_MEAN`] in `form`):
    /// [`ExactArgs`] (`crate::expansion`). `op` is [`Op::Sum`] or
    /// [`Op::NanSum`] (NaN elements added as zero), in every exact kernel.
    ExactSum { op: Op, element: Scalar },
    /// [`Kernel::ExactSum`] over rows in runs (the reduced axes of a view
    /// that lie apart, `crate::expansion::Runs`): row `r` starts
    /// `row_pitch` elements after row `r − 1` and is `len / run_len` runs
    /// of `run_len` elements, each `run_pitch` after the one before
    /// ([`ExactArgs`]). In the axis kernels' module: only views read it.
    ExactRowRuns { op: Op, element: Scalar },
    /// The exact sum of a whole input of `element`s (mapped as `op` says)
    /// as an exact state: [`ExactArgs`] with [`super::EXACT_STATE_OUT`].
    ExactState { op: Op, element: Scalar },
    /// The merge of exact states of `element`s by one block, rounded, or
    /// as a state with [`super::EXACT_STATE_OUT`]: [`ExactArgs`] with
    /// [`super::EXACT_STATES_IN`]. A kernel apart from
    /// [`Kernel::ExactState`], whose loop ptxas schedules worse with the
    /// merge in front of it.
    ExactMerge { element: Scalar },
    /// The exact dot product of two inputs of `element`s: each product
    /// `a[i] * b[i]` rounded to `element` (as [`Kernel::Dot`] forms it), the
    /// products summed exactly, rounded once: [`ExactDotArgs`]
    /// (`crate::expansion::ExactProducts`).
    ExactDot { element: Scalar },
    /// [`Kernel::ExactDot`]'s sum as an exact state (for
    /// [`Kernel::ExactMerge`]): [`ExactDotArgs`], `out` room for a state.
    /// How the pairs of shards on several GPUs are summed exactly.
    ExactDotState { element: Scalar },
    /// The exact sum of each segment (or row) of `element`s, rounded once
    /// (with `mean`, then divided by its length: `ExactMean`, `op`
    /// [`Op::Sum`]): [`SegmentedArgs`], the segments handed out as
    /// `schedule` says ([`ExactSchedule`]).
    ExactSegments {
        op: Op,
        element: Scalar,
        schedule: ExactSchedule,
        mean: bool,
    },
    /// The exact sum along an axis of `element`s, each result rounded
    /// once (divided by the reduced count where `finish` is
    /// [`Finish::Mean`]): [`AxisArgs`] (`crate::axis::ExactAlong`).
    ExactAxis { op: Op, element: Scalar },
    /// A view of `element`s copied in the order of its kept axes (each
    /// result one element: [`AxisArgs`] with no reduced axis), which the
    /// exact sum gathers views into rows with (`crate::axis::gather`).
    Gather { element: Scalar },
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
}

// With the kernels rather than the operators: an operator is defined for a
// type where the lists give it a kernel.
#[cfg(not(target_arch = "nvptx64"))]
impl Op {
    /// Whether the operator is defined for `element` (all are, except
    /// `MaxAbs` of integers); the others are `Error::UnsupportedOp`.
    pub fn is_defined_for(self, element: Scalar) -> bool {
        Kernel::Reduce { op: self, element }.name().is_some()
    }
}

/// The PTX entry-point name of a kernel, as a string literal: the one place
/// that spells kernel names. `kernel_name!(reduce, stem, type)`,
/// `(segmented, Schedule, stem, type)`, `(axis, stem, type)`, `(widened, stem, input, accumulator)`,
/// `(widened_axis, stem, input, accumulator)`, `(statistic, stem, input, accumulator)`,
/// `(statistic_segments, stem, input, accumulator)`, `(statistic_states, stem, accumulator)`,
/// `(arg, Max|Min, input)`, `(arg_axis, Max|Min, input)`, `(dot, type)`, `(ladder, rung stem, op stem, type)`,
/// `(seed_dot, Kind, type)`, `(divide_by_count, type)`, `(convert, from, to)`, `(user_pair, type)`,
/// `(exact_sum, stem, type)`, `(exact_state, stem, type)`, `(exact_dot, type)`, `(exact_segments, stem, type)`,
/// `(exact_segments_per_thread, stem, type)`, `(exact_segments_runs, stem, type)`,
/// `(exact_segments_balanced, stem, type)`,
/// `(exact_axis, stem, type)`, `(gather, type)`.
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
    (segmented, StridedRows, $stem:ident, $t:ident) => {
        concat!("segmented_strided_rows_", stringify!($stem), "_", stringify!($t))
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
    (user_pair, $t:ident) => {
        concat!("reduce_user_pair_", stringify!($t))
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
    (divide_by_count, $t:ident) => {
        concat!("divide_by_count_", stringify!($t))
    };
    (exact_sum, $stem:ident, $t:ident) => {
        concat!("reduce_exact_", stringify!($stem), "_", stringify!($t))
    };
    (exact_row_runs, $stem:ident, $t:ident) => {
        concat!("axis_exact_", stringify!($stem), "_row_runs_", stringify!($t))
    };
    (exact_state, $stem:ident, $t:ident) => {
        concat!("reduce_exact_", stringify!($stem), "_state_", stringify!($t))
    };
    (exact_dot, $t:ident) => {
        concat!("reduce_exact_dot_", stringify!($t))
    };
    (exact_dot_state, $t:ident) => {
        concat!("reduce_exact_dot_state_", stringify!($t))
    };
    (exact_merge, $t:ident) => {
        concat!("reduce_exact_merge_", stringify!($t))
    };
    (exact_segments, $stem:ident, $t:ident) => {
        concat!("segmented_exact_", stringify!($stem), "_", stringify!($t))
    };
    (exact_segments_per_thread, $stem:ident, $t:ident) => {
        concat!("segmented_exact_", stringify!($stem), "_per_thread_", stringify!($t))
    };
    (exact_segments_runs, $stem:ident, $t:ident) => {
        concat!("segmented_exact_", stringify!($stem), "_runs_", stringify!($t))
    };
    (exact_segments_balanced, $stem:ident, $t:ident) => {
        concat!("segmented_exact_", stringify!($stem), "_balanced_", stringify!($t))
    };
    (exact_axis, $stem:ident, $t:ident) => {
        concat!("axis_exact_", stringify!($stem), "_", stringify!($t))
    };
    (gather, $t:ident) => {
        concat!("axis_gather_", stringify!($t))
    };
    (convert, $from:ident, $to:ident) => {
        concat!("convert_", stringify!($from), "_to_", stringify!($to))
    };
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
    /// [`Kernel::Widened`] (by input), [`Kernel::Arg`], [`Kernel::Dot`],
    /// [`Kernel::ExactSum`] (and its state forms) and [`Kernel::ExactDot`];
    /// and [`Kernel::DivideByCount`] of `Scalar` results and
    /// [`Kernel::Convert`] from them.
    Whole(Scalar),
    /// The [`Kernel::Segmented`] kernels of one schedule and element type.
    Segmented(SegmentSchedule, Scalar),
    /// The ladder's [`Kernel::Ladder`] and [`Kernel::SeedDot`] kernels of one element type.
    Ladder(Scalar),
    /// The [`Kernel::Axis`], [`Kernel::WidenedAxis`], [`Kernel::ArgAxis`],
    /// [`Kernel::ExactAxis`], [`Kernel::ExactRowRuns`] and [`Kernel::Gather`]
    /// kernels of one input type.
    Axis(Scalar),
    /// Every [`Kernel::Statistic`], [`Kernel::StatisticStates`] and
    /// [`Kernel::StatisticSegments`] kernel.
    Statistics,
    /// The user operator's ([`Op::is_user`]) kernels of one family and
    /// element type: the [`Kernel::Reduce`], the [`Kernel::Segmented`] of one
    /// schedule, or the [`Kernel::Axis`] kernels. PTX only: each calls the
    /// operator's functions, which the host splices in before the driver
    /// compiles it (`crate::user`).
    User(UserFamily, Scalar),
}

/// The families of [`Module::User`].
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UserFamily {
    Whole,
    Segmented(SegmentSchedule),
    Axis,
    /// [`Kernel::UserPair`].
    Pair,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Kernel {
    /// Whether it is a whole-input exact sum of `f64`s whose registers a
    /// tuning row may cap (the host's `Tuning::exact_f64_max_registers`):
    /// of the elements, the NaN-ignoring elements, the squares or the
    /// squared deviations; not logsumexp's terms, which ptxas spills when
    /// capped.
    pub fn is_lean_exact_f64(self) -> bool {
        matches!(
            self,
            Kernel::ExactSum {
                op: Op::Sum | Op::NanSum | Op::SumOfSquares | Op::SquaredDeviation,
                element: Scalar::F64,
            }
        )
    }

    /// The module this kernel ships in.
    pub fn module(self) -> Module {
        match self {
            Kernel::Reduce { op, element } if op.is_user() => Module::User(UserFamily::Whole, element),
            Kernel::Segmented { op, element, schedule } if op.is_user() => {
                Module::User(UserFamily::Segmented(schedule), element)
            }
            Kernel::Axis { op, element } if op.is_user() => Module::User(UserFamily::Axis, element),
            Kernel::UserPair { element } => Module::User(UserFamily::Pair, element),
            Kernel::Reduce { element, .. }
            | Kernel::Dot { element }
            | Kernel::DivideByCount { element }
            | Kernel::ExactSum { element, .. }
            | Kernel::ExactState { element, .. }
            | Kernel::ExactMerge { element }
            | Kernel::ExactDot { element }
            | Kernel::ExactDotState { element }
            | Kernel::Convert { from: element, .. } => Module::Whole(element),
            Kernel::Widened { input, .. } | Kernel::Arg { input, .. } => Module::Whole(input),
            Kernel::Segmented { element, schedule, .. } => Module::Segmented(schedule, element),
            Kernel::ExactSegments { element, .. } => Module::Segmented(SegmentSchedule::FixedOrder, element),
            Kernel::Axis { element: input, .. }
            | Kernel::WidenedAxis { input, .. }
            | Kernel::ArgAxis { input, .. }
            | Kernel::ExactAxis { element: input, .. }
            | Kernel::ExactRowRuns { element: input, .. }
            | Kernel::Gather { element: input } => Module::Axis(input),
            Kernel::Statistic { .. } | Kernel::StatisticStates { .. } | Kernel::StatisticSegments { .. } => {
                Module::Statistics
            }
            Kernel::Ladder { element, .. } | Kernel::SeedDot { element, .. } => Module::Ladder(element),
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl Module {
    /// Whether it is a user operator's module ([`Module::User`]): PTX only.
    pub fn is_user(self) -> bool {
        matches!(self, Module::User(..))
    }

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
            Module::Segmented(SegmentSchedule::StridedRows, element) => {
                write!(f, "segmented_strided_rows_{}", element.name())
            }
            Module::Ladder(element) => write!(f, "ladder_{}", element.name()),
            Module::Axis(element) => write!(f, "axis_{}", element.name()),
            Module::Statistics => f.write_str("statistics"),
            Module::User(UserFamily::Whole, element) => write!(f, "user_whole_{}", element.name()),
            Module::User(UserFamily::Segmented(schedule), element) => {
                write!(f, "user_{}", Module::Segmented(*schedule, *element))
            }
            Module::User(UserFamily::Axis, element) => write!(f, "user_axis_{}", element.name()),
            Module::User(UserFamily::Pair, element) => write!(f, "user_pair_{}", element.name()),
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

#[cfg(test)]
mod tests {
    use crate::abi::{Kernel, Module, Op, Scalar};

    #[test]
    fn modules_group_kernels_by_call() {
        let modules = Module::all();
        // 12 whole-input types, 4 schedules × 6 elements, 2 ladder types, 12
        // axis input types (6 elements; i8, i16, u8, u16 widened; f16, bf16
        // widened and argmax), the statistics; the user operator's whole,
        // 4 segmented, axis and pair modules of 6 elements.
        assert_eq!(modules.len(), 12 + 24 + 2 + 12 + 1 + 6 * 7);
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
        // 8 ops, argmax and argmin, a dot, the widened sum to f64, the mean's
        // division, the conversions to f16 and bf16, the exact sum and its
        // state forms, each plain, NaN-ignoring and of squares, the exact dot
        // and its state,
        // the exact sums of squared deviations (the exact variance's) and of
        // scaled exponentials (the exact logsumexp's) and their states, the
        // states' merge.
        assert_eq!(members.len(), 29, "{members:?}");
        assert!(members.contains(&"reduce_exact_squared_deviation_f32"));
        assert!(members.contains(&"reduce_exact_scaled_exp_f32"));
        assert!(members.contains(&"reduce_exact_scaled_exp_state_f32"));
        assert!(members.contains(&"reduce_exact_dot_f32") && members.contains(&"reduce_exact_dot_state_f32"));
        assert!(members.contains(&"reduce_exact_sum_f32") && members.contains(&"reduce_exact_sum_state_f32"));
        assert!(members.contains(&"reduce_exact_nan_sum_f32") && members.contains(&"reduce_exact_nan_sum_state_f32"));
        assert!(members.contains(&"reduce_exact_sum_of_squares_state_f32"));
        assert!(members.contains(&"convert_f32_to_f16") && members.contains(&"convert_f32_to_bf16"));
        assert!(members.contains(&"argmin_f32") && members.contains(&"reduce_sum_f32_as_f64"));
        assert!(members.contains(&"divide_by_count_f32"));
    }
}
