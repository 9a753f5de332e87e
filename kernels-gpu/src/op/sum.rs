use super::Operator;
use crate::element::Element;

/// Sum; wraps for integers, IEEE for floats (`inf + -inf` is NaN).
pub struct Sum;

impl<T: Element> Operator<T> for Sum {
    #[inline(always)]
    fn identity() -> T {
        T::zero()
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.add(b)
    }
}
