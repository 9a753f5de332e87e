//! argmax and argmin as folds: an element paired with its index, combined
//! by [`crate::op::Max`] or [`crate::op::Min`] so that the preferred value
//! wins and, between equal values, the lower index. That combine is
//! associative and commutative, so the one-launch grid reduction (and its
//! fixed combine order) carries it like any other fold, in one pass over the
//! input.
//!
//! The rules, as NumPy's and PyTorch's: a NaN is preferred to every number
//! (so the first NaN wins, for argmax and argmin alike); `-0.0` and `+0.0`
//! are equal (the lower index wins); integers compare as integers.

use crate::element::{Accumulator, Element, MAX_WORDS};

/// An element and its index in the input.
#[derive(Clone, Copy)]
pub struct Indexed<T> {
    pub value: T,
    pub index: u64,
}

/// Words: the value's (1 or 2), then the index's low and high words.
impl<T: Element> Accumulator for Indexed<T> {
    const WORDS: u32 = <T as Element>::WORDS + 2;

    #[inline(always)]
    fn to_words(self) -> [u32; MAX_WORDS] {
        let value = self.value.to_bits();
        let (low, high) = (self.index as u32, (self.index >> 32) as u32);
        if <T as Element>::WORDS == 1 {
            [value as u32, low, high, 0, 0, 0]
        } else {
            [value as u32, (value >> 32) as u32, low, high, 0, 0]
        }
    }

    #[inline(always)]
    fn from_words(words: [u32; MAX_WORDS]) -> Self {
        let (value, index) = if <T as Element>::WORDS == 1 {
            (words[0] as u64, words[1] as u64 | (words[2] as u64) << 32)
        } else {
            (
                words[0] as u64 | (words[1] as u64) << 32,
                words[2] as u64 | (words[3] as u64) << 32,
            )
        };
        Indexed {
            value: T::from_bits(value),
            index,
        }
    }
}

/// Whether `a` is preferred to `b` by an argmax (`largest`) or argmin: a NaN
/// to any number, else the larger (smaller) number. Neither is preferred
/// when both are NaN or the numbers are equal.
#[inline(always)]
fn preferred<T: Element>(a: T, b: T, largest: bool) -> bool {
    if b.is_nan() {
        false
    } else if a.is_nan() {
        true
    } else if largest {
        b.less(a)
    } else {
        a.less(b)
    }
}

/// argmax's (`largest`) or argmin's combine: the preferred value, the lower
/// index between equal ones.
#[inline(always)]
pub fn combine<T: Element>(a: Indexed<T>, b: Indexed<T>, largest: bool) -> Indexed<T> {
    let b_wins = preferred(b.value, a.value, largest) || (!preferred(a.value, b.value, largest) && b.index < a.index);
    if b_wins {
        b
    } else {
        a
    }
}

/// The identity of argmax (`largest`) or argmin: the least preferred value
/// (`-inf` or the type's minimum for argmax), at an index above every real
/// one, so that it loses every tie.
#[inline(always)]
pub fn identity<T: Element>(largest: bool) -> Indexed<T> {
    Indexed {
        value: if largest { T::LOWEST } else { T::HIGHEST },
        index: u64::MAX,
    }
}
