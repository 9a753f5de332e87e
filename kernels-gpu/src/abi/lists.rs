//! Which kernels exist: one list per family, each a `for_each_*` macro that
//! calls a `$callback!` macro with its rows (operators with their maps and
//! element types, widenings, argmax/argmin inputs, statistics, dot products,
//! ladder rungs). The PTX exports and the emulator's dispatch (`lib.rs`), the
//! host's tables (`tables.rs`) and the build script are all generated from
//! them, so adding a row adds the kernel everywhere.

#[cfg(doc)]
use super::{Kernel, Op, SegmentSchedule};

/// Calls `$callback! { $extra (Op, stem, Map, Operator, [element types]), ... }`
/// with every reduction the PTX module contains: the [`Op`], the kernel-name
/// stem, the map applied to each element as it is read, the combining
/// operator, and the element types it exists for. Each (row, type) is a
/// [`Kernel::Reduce`], a [`Kernel::Segmented`] per [`SegmentSchedule`] and a
/// [`Kernel::Axis`]. The last two rows are the user operator's
/// (`crate::user`): PTX only, in modules of their own ([`Op::is_user`]).
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
            (User, user, UserMap, User, [i32 u32 i64 u64 f32 f64]),
            (UserCombine, user_combine, Identity, User, [i32 u32 i64 u64 f32 f64]),
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
/// dot-product kernel ([`Kernel::Dot`]), each with the user operator's
/// kernel over two inputs of its type ([`Kernel::UserPair`]).
#[macro_export]
macro_rules! for_each_dot_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)* i32, u32, i64, u64, f32, f64 }
    };
}

/// Calls `$callback! { $extra element_type, ... }` with every type of an
/// exact sum ([`Kernel::ExactSum`]).
#[macro_export]
macro_rules! for_each_exact_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)* f32, f64 }
    };
}

/// Calls `$callback! { $extra element_type, ... }` with every type a mean is
/// computed in ([`Kernel::DivideByCount`]).
#[macro_export]
macro_rules! for_each_divide_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)* f32, f64 }
    };
}

/// Calls `$callback! { $extra (from, to type, to name), ... }` with every
/// conversion of a cast reduction's results ([`Kernel::Convert`]): the
/// type the reduction computes in, and the caller's (the kernels' type of
/// it, `F16`/`Bf16` for the half floats, and its name).
#[macro_export]
macro_rules! for_each_convert_kernel {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)* (u64, u32, u32), (f64, f32, f32), (f32, F16, f16), (f32, Bf16, bf16) }
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
