use super::Operator;
use crate::element::{Element, WarpOp};
use crate::indexed::{self, Indexed};

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

    #[inline(always)]
    unsafe fn warp_reduce_native(value: T) -> Option<T> {
        value.warp_reduce_native(WarpOp::Max)
    }
}

/// argmax: see [`crate::indexed`].
impl<T: Element> Operator<Indexed<T>> for Max {
    #[inline(always)]
    fn identity() -> Indexed<T> {
        indexed::identity(true)
    }

    #[inline(always)]
    fn combine(a: Indexed<T>, b: Indexed<T>) -> Indexed<T> {
        indexed::combine(a, b, true)
    }
}
