use super::Operator;
use crate::element::Element;

/// Minimum; starts from the type's maximum (`+inf` for floats); NaN wins.
pub struct Min;

impl<T: Element> Operator<T> for Min {
    #[inline(always)]
    fn identity() -> T {
        T::highest()
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.min(b)
    }
}
