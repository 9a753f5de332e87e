//! Element types the kernels reduce, and their arithmetic.
//!
//! Integer `add`/`mul` wrap in the element type (two's complement), as the host
//! docs promise. Float `max`/`min` propagate NaN: if either operand is NaN the
//! result is NaN, so a NaN anywhere in the input reaches the result.

use num_traits::float::FloatCore;
use num_traits::{WrappingAdd, WrappingMul};

/// A type the kernels can reduce: 4 or 8 bytes, carried between threads as bits.
pub trait Element: Copy {
    /// 32-bit words per element (1 or 2): how many shuffles move one value.
    const WORDS: u32;
    /// The additive identity.
    const ZERO: Self;
    /// The multiplicative identity.
    const ONE: Self;
    /// The identity of `max`: the type's minimum, `-inf` for floats.
    const LOWEST: Self;
    /// The identity of `min`: the type's maximum, `+inf` for floats.
    const HIGHEST: Self;
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn max(self, other: Self) -> Self;
    fn min(self, other: Self) -> Self;
    /// The value's bits in the low `32 * WORDS` bits.
    fn to_bits(self) -> u64;
    /// Inverse of [`Element::to_bits`]; bits above `32 * WORDS` are ignored.
    fn from_bits(bits: u64) -> Self;
    /// Whether the value is a NaN (never, for integers).
    fn is_nan(self) -> bool;
    /// The value as a reduction's result is stored: a NaN as the one
    /// canonical NaN (the GPU's own: the sign clear and every other bit set,
    /// `0x7fff_ffff` for `f32`, `0x7fff_ffff_ffff_ffff` for `f64`), whatever
    /// payload and sign it came with; any other value as it is.
    #[inline(always)]
    fn canonical(self) -> Self {
        if self.is_nan() {
            Self::from_bits(u64::MAX >> (65 - 32 * Self::WORDS))
        } else {
            self
        }
    }
    /// A quiet NaN, for types that have one.
    fn nan() -> Option<Self>;
    /// The absolute value (integers: wrapping, so the minimum stays itself).
    fn abs(self) -> Self;
    /// Whether the two are the same number (`-0.0` equals `+0.0`; NaN equals nothing).
    fn equals(self, other: Self) -> bool;
    /// Whether `self` is the smaller number (false if either is NaN).
    fn less(self, other: Self) -> bool;

    /// `op` over this value of each of the 32 lanes of the warp, in one
    /// instruction where the hardware has one for the type (`redux.sync`:
    /// 32-bit integers, sm_80+); `None` for the others, which shuffle
    /// ([`crate::warp`]). Every lane receives the result.
    ///
    /// # Safety
    /// All 32 lanes of the warp must call it together.
    #[inline(always)]
    unsafe fn warp_reduce_native(self, op: WarpOp) -> Option<Self> {
        let _ = op;
        None
    }

    /// Lane `lane` of a 16-byte vector of `Self`s, given as its four 32-bit
    /// words (4 lanes of a 4-byte type, 2 of an 8-byte one).
    #[inline(always)]
    fn vector_lane(words: [u32; 4], lane: usize) -> Self {
        if Self::WORDS == 1 {
            Self::from_bits(words[lane] as u64)
        } else {
            Self::from_bits(words[2 * lane] as u64 | (words[2 * lane + 1] as u64) << 32)
        }
    }
}

/// The operators some hardware reduces over a warp in one instruction
/// ([`Element::warp_reduce_native`]).
#[derive(Clone, Copy)]
pub enum WarpOp {
    Sum,
    Max,
    Min,
}

/// The most 32-bit words an [`Accumulator`] takes: variance's count, mean
/// and sum of squared deviations in `f64` ([`crate::statistic::Moments`]).
pub const MAX_WORDS: usize = 6;

/// A value the collectives ([`crate::warp`], [`crate::block`],
/// [`crate::grid`]) carry between threads: an [`Element`], an element with
/// its index ([`crate::indexed::Indexed`], for argmax/argmin), or a
/// statistic's running summary ([`crate::statistic`]). It moves as 32-bit
/// words (one shuffle each) and is stored as 8-byte halves in a slot of
/// [`crate::abi::PARTIAL_SLOT_BYTES`].
pub trait Accumulator: Copy {
    /// 32-bit words that carry the value: 1 to [`MAX_WORDS`].
    const WORDS: u32;
    /// 8-byte halves that hold the words: what a slot or a stored state uses.
    const HALVES: u32 = Self::WORDS.div_ceil(2);
    /// The value as words; those from `WORDS` on are zero.
    fn to_words(self) -> [u32; MAX_WORDS];
    /// Inverse of [`Accumulator::to_words`]; words from `WORDS` on are ignored.
    fn from_words(words: [u32; MAX_WORDS]) -> Self;

    /// The words as 8-byte halves, low word first: how a slot holds the
    /// value (the halves from `HALVES` on are zero, and not stored).
    #[inline(always)]
    fn to_halves(self) -> [u64; MAX_WORDS / 2] {
        let w = self.to_words();
        [
            w[0] as u64 | (w[1] as u64) << 32,
            w[2] as u64 | (w[3] as u64) << 32,
            w[4] as u64 | (w[5] as u64) << 32,
        ]
    }

    /// Inverse of [`Accumulator::to_halves`].
    #[inline(always)]
    fn from_halves(h: [u64; MAX_WORDS / 2]) -> Self {
        Self::from_words([
            h[0] as u32,
            (h[0] >> 32) as u32,
            h[1] as u32,
            (h[1] >> 32) as u32,
            h[2] as u32,
            (h[2] >> 32) as u32,
        ])
    }
}

impl<T: Element> Accumulator for T {
    const WORDS: u32 = <T as Element>::WORDS;

    #[inline(always)]
    fn to_words(self) -> [u32; MAX_WORDS] {
        let bits = self.to_bits();
        [bits as u32, (bits >> 32) as u32, 0, 0, 0, 0]
    }

    #[inline(always)]
    fn from_words(words: [u32; MAX_WORDS]) -> Self {
        T::from_bits(words[0] as u64 | (words[1] as u64) << 32)
    }
}

/// `wrapping_abs` for signed integers, the value itself for unsigned ones.
macro_rules! integer_abs {
    ($x:expr, i32) => {
        $x.wrapping_abs()
    };
    ($x:expr, i64) => {
        $x.wrapping_abs()
    };
    ($x:expr, $unsigned:ty) => {
        $x
    };
}

/// `impl Element for $t`: what every element type states alike (its width,
/// its operators' identities, and `equals` and `less`, which `==` and `<`
/// are for every type), with the arithmetic of its kind, `$methods`.
macro_rules! element {
    ($t:ty, words $words:expr, identities [$zero:expr, $one:expr, $lowest:expr, $highest:expr], $($methods:tt)*) => {
        impl Element for $t {
            const WORDS: u32 = $words;
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            const LOWEST: Self = $lowest;
            const HIGHEST: Self = $highest;
            #[inline(always)]
            fn equals(self, other: Self) -> bool {
                self == other
            }
            #[inline(always)]
            fn less(self, other: Self) -> bool {
                self < other
            }
            $($methods)*
        }
    };
}

macro_rules! integer_element {
    ($($t:ty, $words:expr $(, $native:path)?);* $(;)?) => {$(
        element! { $t, words $words, identities [0, 1, <$t>::MIN, <$t>::MAX],
            #[inline(always)] fn add(self, other: Self) -> Self { WrappingAdd::wrapping_add(&self, &other) }
            #[inline(always)] fn mul(self, other: Self) -> Self { WrappingMul::wrapping_mul(&self, &other) }
            #[inline(always)] fn max(self, other: Self) -> Self { Ord::max(self, other) }
            #[inline(always)] fn min(self, other: Self) -> Self { Ord::min(self, other) }
            // `as` between integers of one width (or to a wider unsigned) is a bit copy.
            #[inline(always)] fn to_bits(self) -> u64 { self as u64 & (u64::MAX >> (64 - 32 * $words)) }
            #[inline(always)] fn from_bits(bits: u64) -> Self { bits as Self }
            #[inline(always)] fn is_nan(self) -> bool { false }
            #[inline(always)] fn nan() -> Option<Self> { None }
            #[inline(always)] fn abs(self) -> Self { integer_abs!(self, $t) }
            $(
                #[inline(always)]
                unsafe fn warp_reduce_native(self, op: WarpOp) -> Option<Self> {
                    $native(self, op)
                }
            )?
        }
    )*};
}
integer_element!(i32, 1, redux::i32; u32, 1, redux::u32; i64, 2; u64, 2);

/// [`Element::warp_reduce_native`] for the 32-bit integers: `redux.sync`
/// where the target has it (sm_80+), nothing before.
mod redux {
    use super::WarpOp;

    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    pub(super) unsafe fn i32(value: i32, op: WarpOp) -> Option<i32> {
        use crate::device::{redux_add_u32, redux_max_s32, redux_min_s32};
        Some(match op {
            WarpOp::Sum => redux_add_u32(value as u32) as i32,
            WarpOp::Max => redux_max_s32(value),
            WarpOp::Min => redux_min_s32(value),
        })
    }

    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    pub(super) unsafe fn u32(value: u32, op: WarpOp) -> Option<u32> {
        use crate::device::{redux_add_u32, redux_max_u32, redux_min_u32};
        Some(match op {
            WarpOp::Sum => redux_add_u32(value),
            WarpOp::Max => redux_max_u32(value),
            WarpOp::Min => redux_min_u32(value),
        })
    }

    #[cfg(not(target_feature = "sm_80"))]
    pub(super) use {none as i32, none as u32};

    #[cfg(not(target_feature = "sm_80"))]
    #[inline(always)]
    pub(super) unsafe fn none<T>(_: T, _: WarpOp) -> Option<T> {
        None
    }
}

/// NaN-propagating max for any float: written with comparisons so it works on
/// every architecture and for f64, which has no `max.NaN` instruction.
#[inline(always)]
fn max_propagating_nan<F: FloatCore>(a: F, b: F) -> F {
    if a.is_nan() {
        a
    } else if b.is_nan() || b > a {
        b
    } else {
        a
    }
}

#[inline(always)]
fn min_propagating_nan<F: FloatCore>(a: F, b: F) -> F {
    if a.is_nan() {
        a
    } else if b.is_nan() || b < a {
        b
    } else {
        a
    }
}

// f32 max/min: the hardware's NaN-propagating instructions where they exist.
#[cfg(target_feature = "sm_80")]
use crate::device::{max_nan_f32, min_nan_f32};
#[cfg(not(target_feature = "sm_80"))]
use {max_propagating_nan as max_nan_f32, min_propagating_nan as min_nan_f32};

macro_rules! float_element {
    ($($t:ty, $words:expr, $max:ident, $min:ident);* $(;)?) => {$(
        element! { $t, words $words, identities [0.0, 1.0, <$t>::NEG_INFINITY, <$t>::INFINITY],
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self * other
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                $max(self, other)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                $min(self, other)
            }
            #[inline(always)]
            fn to_bits(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as _)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                FloatCore::is_nan(self)
            }
            #[inline(always)]
            fn nan() -> Option<Self> {
                Some(FloatCore::nan())
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
        }
    )*};
}
float_element!(f32, 1, max_nan_f32, min_nan_f32; f64, 2, max_propagating_nan, min_propagating_nan);
