//! Element maps: what a reduction applies to each element as it is read,
//! before combining (the "map" of map-then-reduce). A map is applied to input
//! elements only, never to partial results, so `nan_sum` can treat a NaN
//! *input* as zero while a NaN *computed* from `inf + -inf` still reaches the
//! result.

use crate::element::Element;
pub use crate::user::{UserMap, UserPairMap};

/// A function applied to every input element.
pub trait ElementMap<T: Element> {
    fn map(x: T) -> T;
}

/// The element itself: plain reductions.
#[derive(Clone, Copy)]
pub struct Identity;

impl<T: Element> ElementMap<T> for Identity {
    #[inline(always)]
    fn map(x: T) -> T {
        x
    }
}

/// NaN becomes 0 (`nan_sum`); integers are unchanged.
#[derive(Clone, Copy)]
pub struct NanToZero;

impl<T: Element> ElementMap<T> for NanToZero {
    #[inline(always)]
    fn map(x: T) -> T {
        if x.is_nan() {
            T::ZERO
        } else {
            x
        }
    }
}

/// `x * x` (sum of squares); integers wrap.
#[derive(Clone, Copy)]
pub struct Square;

impl<T: Element> ElementMap<T> for Square {
    #[inline(always)]
    fn map(x: T) -> T {
        x.mul(x)
    }
}

/// `|x|` (max-abs); see [`Element::abs`].
pub struct Abs;

impl<T: Element> ElementMap<T> for Abs {
    #[inline(always)]
    fn map(x: T) -> T {
        x.abs()
    }
}

/// A function of two input elements, applied to each pair `(a[i], b[i])`
/// as it is read (the terms of a dot product).
pub trait PairMap<T: Element> {
    fn map(a: T, b: T) -> T;
}

/// `a * b` (dot products); integers wrap.
pub struct Multiply;

impl<T: Element> PairMap<T> for Multiply {
    #[inline(always)]
    fn map(a: T, b: T) -> T {
        a.mul(b)
    }
}
