use super::Operator;
use crate::element::Element;

/// Maximum; starts from the type's minimum (`-inf` for floats); NaN wins.
pub struct Max;

impl<T: Element> Operator<T> for Max {
    #[inline(always)]
    fn identity() -> T {
        T::lowest()
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.max(b)
    }
}
