//! What a kernel computes: a reduction operator ([`Op`]), a statistic
//! ([`Statistic`]), or one of the seed tutorials' kernels ([`Rung`],
//! [`SeedDot`]).

#[cfg(not(target_arch = "nvptx64"))]
use super::scalar::Scalar;
#[cfg(doc)]
use super::{Finish, Kernel};
#[cfg(not(target_arch = "nvptx64"))]
use core::fmt;

/// A reduction operator of the kernels, and the `<stem>` of the entry
/// points that implement it: the host's public `reduce::Op` (whose docs
/// give each one's rules), and the two that run a user's operator.
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
    /// The operator a user wrote (`reduce::User`): its map, then its
    /// combine. Its kernels are PTX that calls functions the host
    /// generates from the operator (`kernels-gpu/src/user.rs`), so only the
    /// host's user path launches them.
    User,
    /// The user's combine without the map: what combines partial results
    /// of [`Op::User`] (its [`Op::combiner`]).
    UserCombine,
    /// Each element's squared deviation from its part's mean, `(x −
    /// mean)²`, the means read from the launch's `shifts` (the axis
    /// kernels': `means`): what the exact
    /// variance sums in its second pass. Exact kernels only
    /// (`crate::expansion::SquaredDeviation`).
    SquaredDeviation,
    /// Each element's `exp(x − max)` on a fixed grid, the maxima read from
    /// the launch's `shifts` (the axis kernels': `means`), each part's sum
    /// finished as `max + ln(sum)`:
    /// what the exact logsumexp sums in its second pass. Exact kernels only
    /// (`crate::expansion::ScaledExp`).
    ScaledExp,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Op {
    /// The built-in operators (all but the user's), in a fixed order:
    /// the host's public `reduce::Op`s.
    pub const BUILT_IN: &'static [Op] = &[
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

    /// Whether this is a user operator's ([`Op::User`], [`Op::UserCombine`]).
    pub fn is_user(self) -> bool {
        matches!(self, Op::User | Op::UserCombine)
    }

    /// Whether the operator has a value for an empty input (its identity).
    pub fn defined_on_empty(self) -> bool {
        !matches!(self, Op::Max | Op::Min | Op::NanMax | Op::NanMin | Op::MaxAbs)
    }

    /// The operator that combines two partial results of `self` (results of
    /// `self` over two parts of an input) into the result over the whole: the
    /// operator itself, without its element map (`NanSum`, `SumOfSquares` →
    /// `Sum`; `MaxAbs` → `Max`). A NaN in a partial `NanSum` comes from
    /// `inf + -inf` and must survive, so it is not combined with `NanSum`.
    pub fn combiner(self) -> Op {
        match self {
            Op::NanSum | Op::SumOfSquares | Op::SquaredDeviation | Op::ScaledExp => Op::Sum,
            Op::MaxAbs => Op::Max,
            Op::User => Op::UserCombine,
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
            Op::User => "user",
            Op::UserCombine => "user_combine",
            Op::SquaredDeviation => "squared_deviation",
            Op::ScaledExp => "scaled_exp",
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// A rung of the ladder the seed tutorials climb: each is a kernel that shows
/// one technique (`docs/LADDER.md` says what each costs on an H200).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rung {
    InterleavedDivergent,
    InterleavedStrided,
    SequentialAddressing,
    FirstAddDuringLoad,
    VectorViaShared,
    CoarsenedVector,
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
