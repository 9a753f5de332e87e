//! The reduction operators.

use std::fmt;

/// A reduction operator.
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
///
/// [`Error::Empty`]: crate::Error::Empty
/// [`Error::UnsupportedOp`]: crate::Error::UnsupportedOp
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
    /// The sum of the squares of the elements (its square root is the L2 norm: [`crate::norm_l2`]).
    SumOfSquares,
    /// The largest absolute value (floats only).
    MaxAbs,
}

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

    /// The operators the ladder's rungs implement (the seeds' four).
    pub const LADDER: [Op; 4] = [Op::Sum, Op::Max, Op::Min, Op::Product];

    /// Whether the operator has a value for an empty input (its identity).
    pub fn defined_on_empty(self) -> bool {
        !matches!(self, Op::Max | Op::Min | Op::NanMax | Op::NanMin | Op::MaxAbs)
    }

    /// Whether the operator is defined for `element` (all are, except
    /// `MaxAbs` of integers); the others return [`crate::Error::UnsupportedOp`].
    pub fn is_defined_for(self, element: crate::ElementType) -> bool {
        crate::kernels::reduce_kernel_name(self, element).is_ok()
    }

    /// The operator that combines two partial results of `self` (results of
    /// `self` over two parts of an input) into the result over the whole: the
    /// operator itself, without its element map (`NanSum`, `SumOfSquares` →
    /// `Sum`; `MaxAbs` → `Max`). A NaN in a partial `NanSum` comes from
    /// `inf + -inf` and must survive, so it is not combined with `NanSum`.
    pub(crate) fn combiner(self) -> Op {
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

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
