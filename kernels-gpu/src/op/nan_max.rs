use super::Operator;
use crate::element::Element;

/// Maximum that ignores NaN (`fmax`-style): starts from NaN, and a NaN
/// operand yields the other one, so only an input of nothing but NaNs gives
/// NaN. Integers have no NaN: the same as [`super::Max`].
pub struct NanMax;

impl<T: Element> Operator<T> for NanMax {
    #[inline(always)]
    fn identity() -> T {
        T::nan().unwrap_or_else(T::lowest)
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        if a.is_nan() {
            b
        } else if b.is_nan() {
            a
        } else {
            a.max(b)
        }
    }
}
