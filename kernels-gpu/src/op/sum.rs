use super::Operator;
use crate::element::{Element, WarpOp};

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

    #[inline(always)]
    unsafe fn warp_reduce_native(value: T) -> Option<T> {
        value.warp_reduce_native(WarpOp::Sum)
    }
}
