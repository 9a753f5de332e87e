//! Every kernel of the lists with its name: each list expanded into a table
//! of `(Kernel, name)` rows, which [`Kernel::all`] chains and the host's
//! lookups ([`Kernel::name`]) and the build script read. Host only: the PTX
//! needs no names.

use super::kernel::Kernel;
use super::operations::{Op, Rung, SeedDot, Statistic};
use super::plans::{ExactSchedule, SegmentSchedule};

impl Kernel {
    /// Every kernel of the module with its name.
    pub fn all() -> impl Iterator<Item = (Kernel, &'static str)> {
        let per_kind = [ARG_KERNELS, ARG_AXIS_KERNELS, SEED_DOT_KERNELS]
            .into_iter()
            .flatten()
            .copied()
            .flatten();
        let ladder = LADDER_KERNELS.iter().copied().flatten().copied().flatten();
        [
            REDUCE_KERNELS,
            WIDENED_KERNELS,
            DOT_KERNELS,
            STATISTIC_KERNELS,
            DIVIDE_KERNELS,
            CONVERT_KERNELS,
            EXACT_KERNELS,
        ]
        .into_iter()
        .flatten()
        .chain(per_kind)
        .chain(ladder)
        .copied()
    }
}

macro_rules! reduce_kernel_table {
    ($(($op:ident, $stem:ident, $map:ident, $operator:ident, [$($t:ident)*])),* $(,)?) => {
        const REDUCE_KERNELS: &[(Kernel, &str)] = &[$($(
            (Kernel::Reduce { op: Op::$op, element: scalar!($t) }, kernel_name!(reduce, $stem, $t)),
            segmented_row!($op, $stem, $t, FixedOrder),
            segmented_row!($op, $stem, $t, WarpsTake),
            segmented_row!($op, $stem, $t, BlocksTake),
            segmented_row!($op, $stem, $t, StridedRows),
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
for_each_arg_kernel!(arg_kernel_table);

macro_rules! dot_kernel_table {
    ($($t:ident),* $(,)?) => {
        const DOT_KERNELS: &[(Kernel, &str)] = &[$(
            (Kernel::Dot { element: scalar!($t) }, kernel_name!(dot, $t)),
            (Kernel::UserPair { element: scalar!($t) }, kernel_name!(user_pair, $t)),
        )*];
    };
}
for_each_dot_kernel!(dot_kernel_table);

macro_rules! divide_kernel_table {
    ($($t:ident),*) => {
        const DIVIDE_KERNELS: &[(Kernel, &str)] =
            &[$((Kernel::DivideByCount { element: scalar!($t) }, kernel_name!(divide_by_count, $t)),)*];
    };
}
for_each_divide_kernel!(divide_kernel_table);

macro_rules! convert_kernel_table {
    ($(($from:ident, $to:ident, $to_name:ident)),*) => {
        const CONVERT_KERNELS: &[(Kernel, &str)] = &[$((
            Kernel::Convert { from: scalar!($from), to: scalar!($to_name) },
            kernel_name!(convert, $from, $to_name),
        ),)*];
    };
}
for_each_convert_kernel!(convert_kernel_table);

macro_rules! exact_kernel_table {
    ($($t:ident),*) => {
        const EXACT_KERNELS: &[(Kernel, &str)] = &[$(
            (Kernel::ExactSum { op: Op::Sum, element: scalar!($t) }, kernel_name!(exact_sum, sum, $t)),
            (Kernel::ExactSum { op: Op::NanSum, element: scalar!($t) }, kernel_name!(exact_sum, nan_sum, $t)),
            (Kernel::ExactState { op: Op::Sum, element: scalar!($t) }, kernel_name!(exact_state, sum, $t)),
            (Kernel::ExactState { op: Op::NanSum, element: scalar!($t) }, kernel_name!(exact_state, nan_sum, $t)),
            (
                Kernel::ExactSum { op: Op::SumOfSquares, element: scalar!($t) },
                kernel_name!(exact_sum, sum_of_squares, $t),
            ),
            (
                Kernel::ExactState { op: Op::SumOfSquares, element: scalar!($t) },
                kernel_name!(exact_state, sum_of_squares, $t),
            ),
            (
                Kernel::ExactSum { op: Op::SquaredDeviation, element: scalar!($t) },
                kernel_name!(exact_sum, squared_deviation, $t),
            ),
            (
                Kernel::ExactState { op: Op::SquaredDeviation, element: scalar!($t) },
                kernel_name!(exact_state, squared_deviation, $t),
            ),
            (
                Kernel::ExactSum { op: Op::ScaledExp, element: scalar!($t) },
                kernel_name!(exact_sum, scaled_exp, $t),
            ),
            (
                Kernel::ExactState { op: Op::ScaledExp, element: scalar!($t) },
                kernel_name!(exact_state, scaled_exp, $t),
            ),
            (Kernel::ExactRowRuns { op: Op::Sum, element: scalar!($t) }, kernel_name!(exact_row_runs, sum, $t)),
            (Kernel::ExactRowRuns { op: Op::NanSum, element: scalar!($t) }, kernel_name!(exact_row_runs, nan_sum, $t)),
            (
                Kernel::ExactRowRuns { op: Op::SumOfSquares, element: scalar!($t) },
                kernel_name!(exact_row_runs, sum_of_squares, $t),
            ),
            (
                Kernel::ExactRowRuns { op: Op::SquaredDeviation, element: scalar!($t) },
                kernel_name!(exact_row_runs, squared_deviation, $t),
            ),
            (
                Kernel::ExactRowRuns { op: Op::ScaledExp, element: scalar!($t) },
                kernel_name!(exact_row_runs, scaled_exp, $t),
            ),
            (Kernel::ExactMerge { element: scalar!($t) }, kernel_name!(exact_merge, $t)),
            (Kernel::ExactDot { element: scalar!($t) }, kernel_name!(exact_dot, $t)),
            (Kernel::ExactDotState { element: scalar!($t) }, kernel_name!(exact_dot_state, $t)),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::FixedOrder, mean: false },
                kernel_name!(exact_segments, sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::NanSum, element: scalar!($t), schedule: ExactSchedule::FixedOrder, mean: false },
                kernel_name!(exact_segments, nan_sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::PerThread, mean: false },
                kernel_name!(exact_segments_per_thread, sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::NanSum, element: scalar!($t), schedule: ExactSchedule::PerThread, mean: false },
                kernel_name!(exact_segments_per_thread, nan_sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::FixedOrder, mean: true },
                kernel_name!(exact_segments, mean, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::PerThread, mean: true },
                kernel_name!(exact_segments_per_thread, mean, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SumOfSquares, element: scalar!($t), schedule: ExactSchedule::FixedOrder, mean: false },
                kernel_name!(exact_segments, sum_of_squares, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SumOfSquares, element: scalar!($t), schedule: ExactSchedule::PerThread, mean: false },
                kernel_name!(exact_segments_per_thread, sum_of_squares, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SquaredDeviation, element: scalar!($t), schedule: ExactSchedule::FixedOrder, mean: false },
                kernel_name!(exact_segments, squared_deviation, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SquaredDeviation, element: scalar!($t), schedule: ExactSchedule::PerThread, mean: false },
                kernel_name!(exact_segments_per_thread, squared_deviation, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::ScaledExp, element: scalar!($t), schedule: ExactSchedule::FixedOrder, mean: false },
                kernel_name!(exact_segments, scaled_exp, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::ScaledExp, element: scalar!($t), schedule: ExactSchedule::PerThread, mean: false },
                kernel_name!(exact_segments_per_thread, scaled_exp, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::Runs, mean: false },
                kernel_name!(exact_segments_runs, sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::NanSum, element: scalar!($t), schedule: ExactSchedule::Runs, mean: false },
                kernel_name!(exact_segments_runs, nan_sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::Runs, mean: true },
                kernel_name!(exact_segments_runs, mean, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SumOfSquares, element: scalar!($t), schedule: ExactSchedule::Runs, mean: false },
                kernel_name!(exact_segments_runs, sum_of_squares, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SquaredDeviation, element: scalar!($t), schedule: ExactSchedule::Runs, mean: false },
                kernel_name!(exact_segments_runs, squared_deviation, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::ScaledExp, element: scalar!($t), schedule: ExactSchedule::Runs, mean: false },
                kernel_name!(exact_segments_runs, scaled_exp, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::WarpsTake, mean: false },
                kernel_name!(exact_segments_balanced, sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::NanSum, element: scalar!($t), schedule: ExactSchedule::WarpsTake, mean: false },
                kernel_name!(exact_segments_balanced, nan_sum, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::Sum, element: scalar!($t), schedule: ExactSchedule::WarpsTake, mean: true },
                kernel_name!(exact_segments_balanced, mean, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SumOfSquares, element: scalar!($t), schedule: ExactSchedule::WarpsTake, mean: false },
                kernel_name!(exact_segments_balanced, sum_of_squares, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::SquaredDeviation, element: scalar!($t), schedule: ExactSchedule::WarpsTake, mean: false },
                kernel_name!(exact_segments_balanced, squared_deviation, $t),
            ),
            (
                Kernel::ExactSegments { op: Op::ScaledExp, element: scalar!($t), schedule: ExactSchedule::WarpsTake, mean: false },
                kernel_name!(exact_segments_balanced, scaled_exp, $t),
            ),
            (Kernel::ExactAxis { op: Op::Sum, element: scalar!($t) }, kernel_name!(exact_axis, sum, $t)),
            (Kernel::ExactAxis { op: Op::NanSum, element: scalar!($t) }, kernel_name!(exact_axis, nan_sum, $t)),
            (
                Kernel::ExactAxis { op: Op::SumOfSquares, element: scalar!($t) },
                kernel_name!(exact_axis, sum_of_squares, $t),
            ),
            (
                Kernel::ExactAxis { op: Op::SquaredDeviation, element: scalar!($t) },
                kernel_name!(exact_axis, squared_deviation, $t),
            ),
            (
                Kernel::ExactAxis { op: Op::ScaledExp, element: scalar!($t) },
                kernel_name!(exact_axis, scaled_exp, $t),
            ),
            (Kernel::Gather { element: scalar!($t) }, kernel_name!(gather, $t)),
        )*];
    };
}
for_each_exact_kernel!(exact_kernel_table);

/// The ladder's kernels: a slice per rung, of a slice per op, of a row per
/// type (a `macro_rules` transcription repeats one list at a time).
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
for_each_ladder_rung!(ladder_kernel_table);

macro_rules! seed_dot_kernel_table {
    (ops $ops:tt types [$($t:ident)*]; $($rungs:tt)*) => {
        const SEED_DOT_KERNELS: &[&[(Kernel, &str)]] =
            &[$(rows_per_kind!(SeedDot { kind: SeedDot::[AtomicPerElement BlockTree], element: $t }, seed_dot)),*];
    };
}
for_each_ladder_rung!(seed_dot_kernel_table);

#[cfg(test)]
mod tests {
    use crate::abi::{Kernel, Op, Rung, Scalar, SegmentSchedule};

    #[test]
    fn every_op_and_element_has_its_kernels_except_max_abs_of_integers() {
        for &op in Op::BUILT_IN {
            assert!(!op.is_user(), "{op}: the built-in operators are not the user's");
            for element in Scalar::ELEMENTS {
                let float = matches!(element, Scalar::F32 | Scalar::F64);
                let expected = op != Op::MaxAbs || float;
                assert_eq!(op.is_defined_for(element), expected, "{op} × {element:?}");
                for schedule in [
                    SegmentSchedule::FixedOrder,
                    SegmentSchedule::WarpsTake,
                    SegmentSchedule::BlocksTake,
                    SegmentSchedule::StridedRows,
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
    fn names_are_unique_and_every_family_is_listed() {
        let all: Vec<(Kernel, &str)> = Kernel::all().collect();
        let names: std::collections::HashSet<&str> = all.iter().map(|(_, name)| *name).collect();
        let kernels: std::collections::HashSet<Kernel> = all.iter().map(|(kernel, _)| *kernel).collect();
        assert_eq!(names.len(), all.len(), "two kernels share a name");
        assert_eq!(kernels.len(), all.len(), "a kernel is listed twice");
        // 8 reductions × 6 types + MaxAbs × 2 + the user operator's two
        // (with and without its map) × 6 types, each whole-input and per
        // schedule (4) and along an axis; 18 widenings, whole and along an axis;
        // 8 argmax inputs × 2, whole and along an axis; 6 dots and 6 user pairs; 7 rungs × 4
        // ops × 2 types; 2 seed dots × 2 types; statistics: moments 3 + 2
        // states, logsumexp 2 + 2, three counts of 6 types and a state each;
        // each statistic's inputs again over segments (3 + 2 + 3 × 6); 2
        // divisions (the means); 4 conversions (the casts); 2 types' exact
        // sums, NaN-ignoring exact sums and exact sums of squares, whole, as
        // states, over segments (by teams and per thread) and along an axis,
        // their exact means over segments (by teams and per thread), the 2
        // types' exact dots (plain and as states) and gathers, and their
        // exact sums of squared deviations (the exact variance's) and of
        // scaled exponentials (the
        // exact logsumexp's) whole, as states (the multi-GPU passes), over
        // segments (by teams and per thread) and along an axis; the 2 types'
        // merges of states; each of the 6 exact sums by teams over rows in
        // runs and by warps taking segments from a counter; and the 5 whole
        // exact sums (not the mean, a form) over rows in runs.
        let passes = 2 * (2 * 5 + 1); // the two-pass sums' 5 forms, the merges
        let runs = 2 * 6 + 2 * 5;
        let balanced = 2 * 6;
        assert_eq!(
            all.len(),
            62 * 6
                + 18 * 2
                + 16 * 2
                + 6 * 2
                + 56
                + 4
                + 9
                + 3 * 7
                + 23
                + 2
                + 4
                + 2 * 3 * 5
                + 2 * 2
                + 2 * 2
                + 2
                + passes
                + runs
                + balanced
        );
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
