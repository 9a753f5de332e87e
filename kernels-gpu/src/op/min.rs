use super::Operator;
use crate::element::{Element, WarpOp};
use crate::indexed::{self, Indexed};

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

    #[inline(always)]
    unsafe fn warp_reduce_native(value: T) -> Option<T> {
        value.warp_reduce_native(WarpOp::Min)
    }
}

/// argmin: see [`crate::indexed`].
impl<T: Element> Operator<Indexed<T>> for Min {
    #[inline(always)]
    fn identity() -> Indexed<T> {
        indexed::identity(false)
    }

    #[inline(always)]
    fn combine(a: Indexed<T>, b: Indexed<T>) -> Indexed<T> {
        indexed::combine(a, b, false)
    }
}
