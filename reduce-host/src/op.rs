//! [`Op`], the built-in reduction operators: the library's own type, which
//! the host maps to the kernels' operator (`kernels_gpu::abi::Op`, whose
//! extra operators run a user's [`User`](crate::User)) at the one place
//! that launches them.

use crate::element::ElementType;
use kernels_gpu::abi;
use std::fmt;

/// Defines [`Op`] from one list: its variants, [`Op::ALL`] (sized by the
/// list) and the kernels' operator of each.
macro_rules! ops {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
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
        /// "Empty" is the rule for empty parts in [`Over`](crate::Over)'s
        /// docs. An operator of your own: [`User`](crate::User). More
        /// operators will be added, so matches on `Op` need a wildcard arm.
        ///
        /// ```
        /// use reduce::{ElementType, Op};
        /// assert_eq!(Op::ALL.len(), 9);
        /// assert!(Op::Sum.defined_on_empty() && !Op::Max.defined_on_empty());
        /// assert!(!Op::MaxAbs.is_defined_for(ElementType::I32));
        /// assert_eq!(Op::NanMax.to_string(), "nan_max");
        /// ```
        ///
        /// A user operator is a [`User`](crate::User), never an `Op`: the
        /// kernels' own operator for it is not one.
        /// ```compile_fail
        /// let _ = reduce::Op::User;
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Op {
            $($(#[$doc])* $name,)*
        }

        impl Op {
            /// Every operator, in a fixed order.
            pub const ALL: [Op; [$(Op::$name),*].len()] = [$(Op::$name),*];

            /// The kernels' operator that computes `self`.
            pub(crate) const fn kernel(self) -> abi::Op {
                match self {
                    $(Op::$name => abi::Op::$name,)*
                }
            }

            /// The operator whose kernels `op` names, if it is one of these
            /// (the kernels' own operators for user operators are not).
            pub(crate) const fn of_kernel(op: abi::Op) -> Option<Op> {
                match op {
                    $(abi::Op::$name => Some(Op::$name),)*
                    _ => None,
                }
            }
        }
    };
}

ops! {
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

impl Op {
    /// The operators the ladder's rungs implement (`reduce::ladder`): sum,
    /// max, min and product.
    pub const LADDER: &'static [Op] = &[Op::Sum, Op::Max, Op::Min, Op::Product];

    /// Whether the operator has a value for no elements (its identity):
    /// `Sum`, `Product`, `NanSum`, `SumOfSquares`. The others are
    /// [`Error::Empty`](crate::Error::Empty) along an empty dimension.
    pub fn defined_on_empty(self) -> bool {
        self.kernel().defined_on_empty()
    }

    /// Whether the operator is defined for `element` (all are, except
    /// `MaxAbs` of integers); the others are
    /// [`Error::UnsupportedOp`](crate::Error::UnsupportedOp).
    pub fn is_defined_for(self, element: ElementType) -> bool {
        self.kernel().is_defined_for(element.kernel())
    }

    /// Lower-case name, as in the kernel names (`"sum"`, `"nan_max"`, ...).
    pub fn name(self) -> &'static str {
        self.kernel().name()
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_is_its_kernels_and_back() {
        let kernels: Vec<abi::Op> = Op::ALL.iter().map(|op| op.kernel()).collect();
        assert_eq!(kernels, abi::Op::BUILT_IN, "the kernels' built-in operators, in order");
        for op in Op::ALL {
            assert_eq!(Op::of_kernel(op.kernel()), Some(op));
            assert_eq!(op.name(), op.kernel().name());
        }
        // The kernels' operators for user operators have no public one.
        assert_eq!(Op::of_kernel(abi::Op::User), None);
        assert_eq!(Op::of_kernel(abi::Op::UserCombine), None);
        let ladder: Vec<abi::Op> = Op::LADDER.iter().map(|op| op.kernel()).collect();
        assert_eq!(ladder, abi::Op::LADDER, "the ladder kernels' operators");
    }
}
