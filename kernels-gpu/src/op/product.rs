use super::Operator;
use crate::element::Element;

/// Product; wraps for integers, IEEE for floats.
pub struct Product;

impl<T: Element> Operator<T> for Product {
    #[inline(always)]
    fn identity() -> T {
        T::one()
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.mul(b)
    }
}
