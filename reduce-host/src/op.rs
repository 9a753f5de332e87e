//! The reduction operators.

use std::fmt;

/// A reduction operator.
///
/// | op        | identity (empty input)  | integers              | floats |
/// |-----------|-------------------------|-----------------------|--------|
/// | `Sum`     | `0`                     | wraps in the type     | IEEE 754 (`inf + -inf` is NaN) |
/// | `Product` | `1`                     | wraps in the type     | IEEE 754 |
/// | `Max`     | none: `Err(Error::Empty)` | exact               | NaN if any element is NaN; `-inf` is a value like any other |
/// | `Min`     | none: `Err(Error::Empty)` | exact               | NaN if any element is NaN; `+inf` is a value like any other |
///
/// More operators will be added, so matches on `Op` need a wildcard arm.
///
/// [`Error::Empty`]: crate::Error::Empty
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
}

impl Op {
    /// Every operator, in a fixed order.
    pub const ALL: [Op; 4] = [Op::Sum, Op::Max, Op::Min, Op::Product];

    /// Whether the operator has a value for an empty input (its identity).
    pub fn defined_on_empty(self) -> bool {
        matches!(self, Op::Sum | Op::Product)
    }

    /// Lower-case name, as in the kernel names (`"sum"`, `"max"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Max => "max",
            Op::Min => "min",
            Op::Product => "product",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
