use super::Operator;
use crate::element::Element;

/// Minimum that ignores NaN (`fmin`-style): starts from NaN, and a NaN
/// operand yields the other one, so only an input of nothing but NaNs gives
/// NaN. Integers have no NaN: the same as [`super::Min`].
pub struct NanMin;

impl<T: Element> Operator<T> for NanMin {
    #[inline(always)]
    fn identity() -> T {
        T::nan().unwrap_or_else(T::highest)
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        if a.is_nan() {
            b
        } else if b.is_nan() {
            a
        } else {
            a.min(b)
        }
    }
}
