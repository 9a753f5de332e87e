//! Reduction kernels for NVIDIA GPUs, written in Rust and compiled to PTX by
//! rustc's NVPTX backend (`nvptx64-nvidia-cuda`, `-Zbuild-std=core`).
//!
//! The host crate (`reduce-host`, library `reduce`) builds this crate from its
//! build script, once per target architecture, and embeds the PTX. On any
//! other target the same kernels compile for the CPU, where [`emulator`] runs
//! them as a SIMT machine would (the host crate's `reduce::emulated`).
//!
//! # Layers
//! Each file is one scope, from the bottom up:
//! - [`device`]: indices, barriers, shuffles, loads, atomics: inline PTX on the
//!   GPU, the emulator's implementation on the CPU;
//! - [`element`], [`op`] and [`map`]: element types, operators (identity +
//!   combine) and the maps applied to elements as they are read ([`user`]:
//!   the user's operator, whose functions the host provides); [`indexed`]:
//!   elements paired with their index, which `Max` and `Min` combine into
//!   argmax and argmin;
//! - [`thread`]: one thread folds its share of the input, 16-byte vector
//!   loads; the input is one array, one array of a narrower type converted as
//!   it is read ([`widen`]), or the product of two (dot products);
//! - [`warp`]: 32 lanes combine through `shfl.sync` (or one `redux.sync`);
//! - [`block`]: warps combine through shared memory;
//! - [`grid`]: blocks combine in one launch (last block combines the partials);
//! - [`segment`]: one result per segment (or matrix row), teams of lanes,
//!   warps or blocks per segment, in one launch;
//! - [`axis`]: one result per position of a strided tensor's kept axes,
//!   along one reduced axis; [`statistic`]: the summaries it also folds
//!   (variance, logsumexp, counts);
//! - [`ladder`]: the seed tutorials' kernels, built from the same layers;
//! - [`entry`]: the entry points' bodies; the PTX exports one instance per
//!   kernel of [`abi`] (operator × element type, per dot product and ladder
//!   rung), and [`dispatch`] gives the emulator the same instances.
// These docs are for the library's maintainers, and link private items:
// `cargo doc -p kernels-gpu --document-private-items` (scripts/lint.sh).
#![allow(rustdoc::private_intra_doc_links)]
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx, asm_experimental_arch))]
#![allow(clippy::missing_safety_doc)]

#[macro_use]
pub mod abi;
pub mod axis;
pub mod block;
pub mod convert;
pub mod device;
pub mod element;
#[cfg(not(target_arch = "nvptx64"))]
pub mod emulator;
pub mod entry;
pub mod exact;
pub mod expansion;
pub mod grid;
pub mod indexed;
pub mod ladder;
pub mod map;
pub mod math;
pub mod op;
pub mod place;
pub mod segment;
pub mod statistic;
pub mod thread;
pub mod user;
pub mod warp;
pub mod wide;
pub mod widen;

/// Calls `$callback! { $extra Args [fields]; (Kernel, name, entry function), ... }`
/// for every kernel of the module, family by family: the identity and name
/// from [`abi`], and the instance of the [`entry`] function that implements
/// it. The PTX exports and the emulator's [`dispatch`] are both made from it.
macro_rules! for_each_instance {
    ($callback:ident $($extra:tt)*) => {
        for_each_kernel_args!(instances_of_args $callback [$($extra)*]);
    };
}

/// The families whose entry points take each argument struct.
macro_rules! instances_of_args {
    ($callback:ident $extra:tt $($args:ident $fields:tt),* $(,)?) => {
        $(instances_of_args!(@ $args $fields, $callback $extra);)*
    };
    (@ ReduceArgs $fields:tt, $($pass:tt)*) => {
        for_each_reduce_kernel!(op_row_instances $($pass)* ReduceArgs $fields; Reduce reduce);
        for_each_widened_kernel!(widened_instances $($pass)* ReduceArgs $fields;);
    };
    (@ SegmentedArgs $fields:tt, $($pass:tt)*) => {
        for_each_reduce_kernel!(segmented_instances $($pass)* SegmentedArgs $fields; FixedOrder);
        for_each_reduce_kernel!(segmented_instances $($pass)* SegmentedArgs $fields; WarpsTake);
        for_each_reduce_kernel!(segmented_instances $($pass)* SegmentedArgs $fields; BlocksTake);
        for_each_reduce_kernel!(segmented_instances $($pass)* SegmentedArgs $fields; StridedRows);
        for_each_exact_kernel!(exact_segments_instances $($pass)* SegmentedArgs $fields;);
    };
    (@ AxisArgs $fields:tt, $($pass:tt)*) => {
        for_each_reduce_kernel!(op_row_instances $($pass)* AxisArgs $fields; Axis axis);
        for_each_widened_kernel!(widened_axis_instances $($pass)* AxisArgs $fields;);
        for_each_statistic_kernel!(statistic_instances $($pass)* AxisArgs $fields;);
        for_each_arg_kernel!(arg_axis_instances $($pass)* AxisArgs $fields; Max);
        for_each_arg_kernel!(arg_axis_instances $($pass)* AxisArgs $fields; Min);
        for_each_exact_kernel!(exact_axis_instances $($pass)* AxisArgs $fields;);
    };
    (@ ArgArgs $fields:tt, $($pass:tt)*) => {
        for_each_arg_kernel!(arg_instances $($pass)* ArgArgs $fields; Max);
        for_each_arg_kernel!(arg_instances $($pass)* ArgArgs $fields; Min);
    };
    (@ DotArgs $fields:tt, $($pass:tt)*) => {
        for_each_dot_kernel!(dot_instances $($pass)* DotArgs $fields;);
    };
    (@ LadderArgs $fields:tt, $($pass:tt)*) => {
        for_each_ladder_rung!(ladder_instances $($pass)* LadderArgs $fields;);
    };
    (@ DivideArgs $fields:tt, $($pass:tt)*) => {
        for_each_divide_kernel!(divide_instances $($pass)* DivideArgs $fields;);
    };
    (@ ConvertArgs $fields:tt, $($pass:tt)*) => {
        for_each_convert_kernel!(convert_instances $($pass)* ConvertArgs $fields;);
    };
    (@ ExactArgs $fields:tt, $($pass:tt)*) => {
        for_each_exact_kernel!(exact_instances $($pass)* ExactArgs $fields;);
    };
    (@ ExactDotArgs $fields:tt, $($pass:tt)*) => {
        for_each_exact_kernel!(exact_dot_instances $($pass)* ExactDotArgs $fields;);
    };
    (@ SeedDotArgs $fields:tt, $($pass:tt)*) => {
        for_each_ladder_rung!(seed_dot_instances $($pass)* SeedDotArgs $fields; AtomicPerElement dot_atomic_per_element);
        for_each_ladder_rung!(seed_dot_instances $($pass)* SeedDotArgs $fields; BlockTree dot_block_tree);
    };
}

/// The instances of a family with one kernel per row of
/// `for_each_reduce_kernel!` and type: `Kernel::$family`, named by
/// `kernel_name!($entry, ...)`, running `entry::$entry` (the whole-input and
/// axis kernels).
macro_rules! op_row_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $family:ident $entry:ident
     $(($op:ident, $stem:ident, $map:ident, $operator:ident, [$($t:ident)*])),* $(,)?) => {
        $callback! { $extra $args $fields; $($((
            abi::Kernel::$family { op: abi::Op::$op, element: scalar!($t) },
            kernel_name!($entry, $stem, $t),
            entry::$entry::<$t, map::$map, op::$operator>
        ),)*)* }
    };
}

macro_rules! segmented_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $schedule:ident
     $(($op:ident, $stem:ident, $map:ident, $operator:ident, [$($t:ident)*])),* $(,)?) => {
        $callback! { $extra $args $fields; $($((
            abi::Kernel::Segmented { op: abi::Op::$op, element: scalar!($t), schedule: abi::SegmentSchedule::$schedule },
            kernel_name!(segmented, $schedule, $stem, $t),
            entry::segmented::<$t, map::$map, op::$operator, { abi::SegmentSchedule::$schedule as u8 }>
        ),)*)* }
    };
}

macro_rules! widened_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt;
     $(($input:ident, $name:ident, $acc:ident, [$(($op:ident, $stem:ident, $operator:ident))*])),* $(,)?) => {
        $callback! { $extra $args $fields; $($((
            abi::Kernel::Widened { op: abi::Op::$op, input: scalar!($name), accumulator: scalar!($acc) },
            kernel_name!(widened, $stem, $name, $acc),
            entry::reduce_widened::<$input, $acc, op::$operator>
        ),)*)* }
    };
}

macro_rules! widened_axis_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt;
     $(($input:ident, $name:ident, $acc:ident, [$(($op:ident, $stem:ident, $operator:ident))*])),* $(,)?) => {
        $callback! { $extra $args $fields; $($((
            abi::Kernel::WidenedAxis { op: abi::Op::$op, input: scalar!($name), accumulator: scalar!($acc) },
            kernel_name!(widened_axis, $stem, $name, $acc),
            entry::axis_widened::<$input, $acc, op::$operator>
        ),)*)* }
    };
}

macro_rules! statistic_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt;
     $(($statistic:ident, $stem:ident, $type:ident, [$(($input:ident, $name:ident, $acc:ident))*], [$($state:ident)*])),* $(,)?) => {
        $callback! { $extra $args $fields; $(
            $((
                abi::Kernel::Statistic {
                    statistic: abi::Statistic::$statistic,
                    input: scalar!($name),
                    accumulator: scalar!($acc),
                },
                kernel_name!(statistic, $stem, $name, $acc),
                entry::statistic::<$input, statistic::$type<$acc>>
            ),)*
            $((
                abi::Kernel::StatisticSegments {
                    statistic: abi::Statistic::$statistic,
                    input: scalar!($name),
                    accumulator: scalar!($acc),
                },
                kernel_name!(statistic_segments, $stem, $name, $acc),
                entry::statistic_segments::<$input, statistic::$type<$acc>>
            ),)*
            $((
                abi::Kernel::StatisticStates { statistic: abi::Statistic::$statistic, accumulator: scalar!($state) },
                kernel_name!(statistic_states, $stem, $state),
                entry::statistic_states::<statistic::$type<$state>>
            ),)*
        )* }
    };
}

macro_rules! arg_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $op:ident $(($input:ident, $name:ident, $acc:ident)),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::Arg { op: abi::Op::$op, input: scalar!($name) },
            kernel_name!(arg, $op, $name),
            entry::arg::<$input, $acc, op::$op>
        ),)* }
    };
}

macro_rules! arg_axis_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $op:ident $(($input:ident, $name:ident, $acc:ident)),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::ArgAxis { op: abi::Op::$op, input: scalar!($name) },
            kernel_name!(arg_axis, $op, $name),
            entry::arg_axis::<$input, $acc, op::$op>
        ),)* }
    };
}

macro_rules! dot_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $($t:ident),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::Dot { element: scalar!($t) },
            kernel_name!(dot, $t),
            entry::dot::<$t>
        ), (
            abi::Kernel::UserPair { element: scalar!($t) },
            kernel_name!(user_pair, $t),
            entry::user_pair::<$t>
        ),)* }
    };
}

macro_rules! exact_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $($t:ident),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::ExactSum { op: abi::Op::Sum, element: scalar!($t) },
            kernel_name!(exact_sum, sum, $t),
            entry::exact_sum::<$t, map::Identity, false>
        ), (
            abi::Kernel::ExactSum { op: abi::Op::NanSum, element: scalar!($t) },
            kernel_name!(exact_sum, nan_sum, $t),
            entry::exact_sum::<$t, map::NanToZero, false>
        ), (
            abi::Kernel::ExactState { op: abi::Op::Sum, element: scalar!($t) },
            kernel_name!(exact_state, sum, $t),
            entry::exact_state::<$t, map::Identity>
        ), (
            abi::Kernel::ExactState { op: abi::Op::NanSum, element: scalar!($t) },
            kernel_name!(exact_state, nan_sum, $t),
            entry::exact_state::<$t, map::NanToZero>
        ), (
            abi::Kernel::ExactSum { op: abi::Op::SumOfSquares, element: scalar!($t) },
            kernel_name!(exact_sum, sum_of_squares, $t),
            entry::exact_sum::<$t, map::Square, false>
        ), (
            abi::Kernel::ExactState { op: abi::Op::SumOfSquares, element: scalar!($t) },
            kernel_name!(exact_state, sum_of_squares, $t),
            entry::exact_state::<$t, map::Square>
        ), (
            abi::Kernel::ExactSum { op: abi::Op::SquaredDeviation, element: scalar!($t) },
            kernel_name!(exact_sum, squared_deviation, $t),
            entry::exact_sum::<$t, crate::expansion::SquaredDeviation<$t>, false>
        ), (
            abi::Kernel::ExactState { op: abi::Op::SquaredDeviation, element: scalar!($t) },
            kernel_name!(exact_state, squared_deviation, $t),
            entry::exact_state::<$t, crate::expansion::SquaredDeviation<$t>>
        ), (
            abi::Kernel::ExactSum { op: abi::Op::ScaledExp, element: scalar!($t) },
            kernel_name!(exact_sum, scaled_exp, $t),
            entry::exact_sum::<$t, crate::expansion::ScaledExp<$t>, false>
        ), (
            abi::Kernel::ExactState { op: abi::Op::ScaledExp, element: scalar!($t) },
            kernel_name!(exact_state, scaled_exp, $t),
            entry::exact_state::<$t, crate::expansion::ScaledExp<$t>>
        ), (
            abi::Kernel::ExactRowRuns { op: abi::Op::Sum, element: scalar!($t) },
            kernel_name!(exact_row_runs, sum, $t),
            entry::exact_sum::<$t, map::Identity, true>
        ), (
            abi::Kernel::ExactRowRuns { op: abi::Op::NanSum, element: scalar!($t) },
            kernel_name!(exact_row_runs, nan_sum, $t),
            entry::exact_sum::<$t, map::NanToZero, true>
        ), (
            abi::Kernel::ExactRowRuns { op: abi::Op::SumOfSquares, element: scalar!($t) },
            kernel_name!(exact_row_runs, sum_of_squares, $t),
            entry::exact_sum::<$t, map::Square, true>
        ), (
            abi::Kernel::ExactRowRuns { op: abi::Op::SquaredDeviation, element: scalar!($t) },
            kernel_name!(exact_row_runs, squared_deviation, $t),
            entry::exact_sum::<$t, crate::expansion::SquaredDeviation<$t>, true>
        ), (
            abi::Kernel::ExactRowRuns { op: abi::Op::ScaledExp, element: scalar!($t) },
            kernel_name!(exact_row_runs, scaled_exp, $t),
            entry::exact_sum::<$t, crate::expansion::ScaledExp<$t>, true>
        ), (
            abi::Kernel::ExactMerge { element: scalar!($t) },
            kernel_name!(exact_merge, $t),
            entry::exact_merge::<$t>
        ),)* }
    };
}

macro_rules! exact_dot_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $($t:ident),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::ExactDot { element: scalar!($t) },
            kernel_name!(exact_dot, $t),
            entry::exact_dot::<$t>
        ), (
            abi::Kernel::ExactDotState { element: scalar!($t) },
            kernel_name!(exact_dot_state, $t),
            entry::exact_dot_state::<$t>
        ),)* }
    };
}

macro_rules! exact_segments_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $($t:ident),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::FixedOrder, mean: false },
            kernel_name!(exact_segments, sum, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::FixedOrder as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::NanSum, element: scalar!($t), schedule: abi::ExactSchedule::FixedOrder, mean: false },
            kernel_name!(exact_segments, nan_sum, $t),
            entry::exact_segments::<$t, map::NanToZero, { abi::ExactSchedule::FixedOrder as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::PerThread, mean: false },
            kernel_name!(exact_segments_per_thread, sum, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::PerThread as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::NanSum, element: scalar!($t), schedule: abi::ExactSchedule::PerThread, mean: false },
            kernel_name!(exact_segments_per_thread, nan_sum, $t),
            entry::exact_segments::<$t, map::NanToZero, { abi::ExactSchedule::PerThread as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::FixedOrder, mean: true },
            kernel_name!(exact_segments, mean, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::FixedOrder as u8 }, true>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::PerThread, mean: true },
            kernel_name!(exact_segments_per_thread, mean, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::PerThread as u8 }, true>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SumOfSquares, element: scalar!($t), schedule: abi::ExactSchedule::FixedOrder, mean: false },
            kernel_name!(exact_segments, sum_of_squares, $t),
            entry::exact_segments::<$t, map::Square, { abi::ExactSchedule::FixedOrder as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SumOfSquares, element: scalar!($t), schedule: abi::ExactSchedule::PerThread, mean: false },
            kernel_name!(exact_segments_per_thread, sum_of_squares, $t),
            entry::exact_segments::<$t, map::Square, { abi::ExactSchedule::PerThread as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SquaredDeviation, element: scalar!($t), schedule: abi::ExactSchedule::FixedOrder, mean: false },
            kernel_name!(exact_segments, squared_deviation, $t),
            entry::exact_segments::<$t, crate::expansion::SquaredDeviation<$t>, { abi::ExactSchedule::FixedOrder as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SquaredDeviation, element: scalar!($t), schedule: abi::ExactSchedule::PerThread, mean: false },
            kernel_name!(exact_segments_per_thread, squared_deviation, $t),
            entry::exact_segments::<$t, crate::expansion::SquaredDeviation<$t>, { abi::ExactSchedule::PerThread as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::ScaledExp, element: scalar!($t), schedule: abi::ExactSchedule::FixedOrder, mean: false },
            kernel_name!(exact_segments, scaled_exp, $t),
            entry::exact_segments::<$t, crate::expansion::ScaledExp<$t>, { abi::ExactSchedule::FixedOrder as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::ScaledExp, element: scalar!($t), schedule: abi::ExactSchedule::PerThread, mean: false },
            kernel_name!(exact_segments_per_thread, scaled_exp, $t),
            entry::exact_segments::<$t, crate::expansion::ScaledExp<$t>, { abi::ExactSchedule::PerThread as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::Runs, mean: false },
            kernel_name!(exact_segments_runs, sum, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::Runs as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::NanSum, element: scalar!($t), schedule: abi::ExactSchedule::Runs, mean: false },
            kernel_name!(exact_segments_runs, nan_sum, $t),
            entry::exact_segments::<$t, map::NanToZero, { abi::ExactSchedule::Runs as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::Runs, mean: true },
            kernel_name!(exact_segments_runs, mean, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::Runs as u8 }, true>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SumOfSquares, element: scalar!($t), schedule: abi::ExactSchedule::Runs, mean: false },
            kernel_name!(exact_segments_runs, sum_of_squares, $t),
            entry::exact_segments::<$t, map::Square, { abi::ExactSchedule::Runs as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SquaredDeviation, element: scalar!($t), schedule: abi::ExactSchedule::Runs, mean: false },
            kernel_name!(exact_segments_runs, squared_deviation, $t),
            entry::exact_segments::<$t, crate::expansion::SquaredDeviation<$t>, { abi::ExactSchedule::Runs as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::ScaledExp, element: scalar!($t), schedule: abi::ExactSchedule::Runs, mean: false },
            kernel_name!(exact_segments_runs, scaled_exp, $t),
            entry::exact_segments::<$t, crate::expansion::ScaledExp<$t>, { abi::ExactSchedule::Runs as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::WarpsTake, mean: false },
            kernel_name!(exact_segments_balanced, sum, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::WarpsTake as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::NanSum, element: scalar!($t), schedule: abi::ExactSchedule::WarpsTake, mean: false },
            kernel_name!(exact_segments_balanced, nan_sum, $t),
            entry::exact_segments::<$t, map::NanToZero, { abi::ExactSchedule::WarpsTake as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::Sum, element: scalar!($t), schedule: abi::ExactSchedule::WarpsTake, mean: true },
            kernel_name!(exact_segments_balanced, mean, $t),
            entry::exact_segments::<$t, map::Identity, { abi::ExactSchedule::WarpsTake as u8 }, true>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SumOfSquares, element: scalar!($t), schedule: abi::ExactSchedule::WarpsTake, mean: false },
            kernel_name!(exact_segments_balanced, sum_of_squares, $t),
            entry::exact_segments::<$t, map::Square, { abi::ExactSchedule::WarpsTake as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::SquaredDeviation, element: scalar!($t), schedule: abi::ExactSchedule::WarpsTake, mean: false },
            kernel_name!(exact_segments_balanced, squared_deviation, $t),
            entry::exact_segments::<$t, crate::expansion::SquaredDeviation<$t>, { abi::ExactSchedule::WarpsTake as u8 }, false>
        ), (
            abi::Kernel::ExactSegments { op: abi::Op::ScaledExp, element: scalar!($t), schedule: abi::ExactSchedule::WarpsTake, mean: false },
            kernel_name!(exact_segments_balanced, scaled_exp, $t),
            entry::exact_segments::<$t, crate::expansion::ScaledExp<$t>, { abi::ExactSchedule::WarpsTake as u8 }, false>
        ),)* }
    };
}

macro_rules! exact_axis_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $($t:ident),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::ExactAxis { op: abi::Op::Sum, element: scalar!($t) },
            kernel_name!(exact_axis, sum, $t),
            entry::exact_axis::<$t, map::Identity>
        ), (
            abi::Kernel::ExactAxis { op: abi::Op::NanSum, element: scalar!($t) },
            kernel_name!(exact_axis, nan_sum, $t),
            entry::exact_axis::<$t, map::NanToZero>
        ), (
            abi::Kernel::ExactAxis { op: abi::Op::SumOfSquares, element: scalar!($t) },
            kernel_name!(exact_axis, sum_of_squares, $t),
            entry::exact_axis::<$t, map::Square>
        ), (
            abi::Kernel::ExactAxis { op: abi::Op::SquaredDeviation, element: scalar!($t) },
            kernel_name!(exact_axis, squared_deviation, $t),
            entry::exact_axis::<$t, crate::expansion::SquaredDeviation<$t>>
        ), (
            abi::Kernel::ExactAxis { op: abi::Op::ScaledExp, element: scalar!($t) },
            kernel_name!(exact_axis, scaled_exp, $t),
            entry::exact_axis::<$t, crate::expansion::ScaledExp<$t>>
        ), (
            abi::Kernel::Gather { element: scalar!($t) },
            kernel_name!(gather, $t),
            entry::gather::<$t>
        ),)* }
    };
}

macro_rules! divide_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $($t:ident),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::DivideByCount { element: scalar!($t) },
            kernel_name!(divide_by_count, $t),
            entry::divide_by_count::<$t>
        ),)* }
    };
}

macro_rules! convert_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $(($from:ident, $to:ident, $to_name:ident)),* $(,)?) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::Convert { from: scalar!($from), to: scalar!($to_name) },
            kernel_name!(convert, $from, $to_name),
            entry::convert::<$from, $to>
        ),)* }
    };
}

macro_rules! ladder_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; ops $ops:tt types $types:tt;
     $(($number:literal, $rung:ident, $stem:ident, $load:ty, $tree:ty)),* $(,)?) => {
        $(ladder_instances!(@rung $callback $extra $args $fields; $rung $stem $load, $tree; $ops $types);)*
    };
    (@rung $callback:ident $extra:tt $args:ident $fields:tt; $rung:ident $stem:ident $load:ty, $tree:ty;
     [$($op:tt)*] $types:tt) => {
        $(ladder_instances!(@ $callback $extra $args $fields; $rung $stem $load, $tree; $op $types);)*
    };
    (@ $callback:ident $extra:tt $args:ident $fields:tt; $rung:ident $stem:ident $load:ty, $tree:ty;
     ($op:ident, $op_stem:ident) [$($t:ident)*]) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::Ladder { rung: abi::Rung::$rung, op: abi::Op::$op, element: scalar!($t) },
            kernel_name!(ladder, $stem, $op_stem, $t),
            entry::ladder::<$t, op::$op, $load, $tree>
        ),)* }
    };
}

macro_rules! seed_dot_instances {
    ($callback:ident $extra:tt $args:ident $fields:tt; $kind:ident $entry:ident ops $ops:tt types [$($t:ident)*];
     $($rungs:tt)*) => {
        $callback! { $extra $args $fields; $((
            abi::Kernel::SeedDot { kind: abi::SeedDot::$kind, element: scalar!($t) },
            kernel_name!(seed_dot, $kind, $t),
            entry::$entry::<$t>
        ),)* }
    };
}

/// The PTX module's exported kernels: one `extern "ptx-kernel"` function per
/// kernel of [`abi`], taking its argument struct's fields as `.u64`
/// parameters and calling its [`entry`] function with the struct.
#[cfg(target_arch = "nvptx64")]
mod ptx_exports {
    use crate::ladder::{load::*, tree::*};
    use crate::widen::{Bf16, F16};
    use crate::{abi, entry, map, op, statistic};

    macro_rules! ptx_exports {
        ([] $args:ident $fields:tt; $(($kernel:expr, $name:expr, $entry:expr),)*) => {
            $(ptx_exports!(@ $args $fields, $name, $entry);)*
        };
        (@ $args:ident [$($field:ident)*], $name:expr, $entry:expr) => {
            const _: () = {
                /// Entry point; see [`entry`].
                #[export_name = $name]
                pub unsafe extern "ptx-kernel" fn export($($field: u64),*) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe { $entry(abi::$args { $($field),* }) }
                }
            };
        };
    }
    for_each_instance!(ptx_exports);
}

/// The emulator's table of entry points: every kernel of [`abi`] with the
/// instance of its [`entry`] function, as the PTX module exports it.
#[cfg(not(target_arch = "nvptx64"))]
pub mod dispatch {
    use crate::abi::{self, Kernel};
    use crate::ladder::{load::*, tree::*};
    use crate::widen::{Bf16, F16};
    use crate::{entry, map, op, statistic};
    use std::sync::OnceLock;

    /// An entry function, by the argument struct it takes.
    #[derive(Clone, Copy, Debug)]
    pub enum Entry {
        Reduce(unsafe fn(abi::ReduceArgs)),
        Segmented(unsafe fn(abi::SegmentedArgs)),
        Axis(unsafe fn(abi::AxisArgs)),
        Arg(unsafe fn(abi::ArgArgs)),
        Dot(unsafe fn(abi::DotArgs)),
        Ladder(unsafe fn(abi::LadderArgs)),
        SeedDot(unsafe fn(abi::SeedDotArgs)),
        DivideByCount(unsafe fn(abi::DivideArgs)),
        Convert(unsafe fn(abi::ConvertArgs)),
        Exact(unsafe fn(abi::ExactArgs)),
        ExactDot(unsafe fn(abi::ExactDotArgs)),
    }

    /// Argument structs with their [`Entry`] variant.
    pub trait EntryArgs: abi::KernelArgs {
        /// The entry function if `entry` takes `Self`.
        fn entry(entry: Entry) -> Option<unsafe fn(Self)>;
        /// `function` as an [`Entry`].
        fn wrap(function: unsafe fn(Self)) -> Entry;
    }

    macro_rules! entry_args {
        ($($args:ident => $variant:ident),* $(,)?) => {$(
            impl EntryArgs for abi::$args {
                fn entry(entry: Entry) -> Option<unsafe fn(Self)> {
                    match entry {
                        Entry::$variant(function) => Some(function),
                        _ => None,
                    }
                }
                fn wrap(function: unsafe fn(Self)) -> Entry {
                    Entry::$variant(function)
                }
            }
        )*};
    }
    entry_args!(
        ReduceArgs => Reduce,
        SegmentedArgs => Segmented,
        AxisArgs => Axis,
        ArgArgs => Arg,
        DotArgs => Dot,
        LadderArgs => Ladder,
        SeedDotArgs => SeedDot,
        DivideArgs => DivideByCount,
        ConvertArgs => Convert,
        ExactArgs => Exact,
        ExactDotArgs => ExactDot,
    );

    macro_rules! dispatch_rows {
        ([$map:ident] $args:ident $fields:tt; $(($kernel:expr, $name:expr, $entry:expr),)*) => {
            $($map.insert($kernel, ($name, <abi::$args as EntryArgs>::wrap($entry)));)*
        };
    }

    /// The name and entry function of `kernel`; `None` if the module has no such kernel.
    pub fn entry(kernel: Kernel) -> Option<(&'static str, Entry)> {
        static TABLE: OnceLock<abi::KernelMap<(&'static str, Entry)>> = OnceLock::new();
        TABLE
            .get_or_init(|| {
                let mut table = abi::KernelMap::default();
                for_each_instance!(dispatch_rows table);
                table
            })
            .get(&kernel)
            .copied()
    }
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Unreachable by construction (the build rejects PTX with unresolved
    // externs, which any reachable panic would leave); trap if it ever runs.
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
