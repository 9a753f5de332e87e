//! The exact sum's kernel: every float of the input added *exactly*, the
//! total rounded once, so that every launch shape, grid, alignment and
//! order gives the same bits, and so does [`crate::exact`] on the CPU.
//!
//! The fast path carries a partial sum as an [`Expansion`]: two `f64`s
//! whose sum is the exact sum of the values added so far. Adding a value is
//! Knuth's TwoSum twice (12 additions, no branch), and it stays exact as
//! long as the exact sum's bits span at most about 104 (from the partial
//! sum's magnitude down to the smallest value's last bit): that holds for
//! the sums of typical data (an `f32` or `f64` input from a distribution of
//! moderate range, of any length). `f32`s are added four at a time: the sum
//! of a 16-byte vector in `f64` is exact when its nonzero lanes' exponents
//! lie within 27 of each other, so one expansion addition serves four
//! elements. Every tree of such exact additions has the same value, so the
//! grid's blocks, warps and lanes combine them as any operator.
//!
//! Where an addition would not be exact (a value far below the sum, an
//! infinity, a NaN, an `f64` sum past `f64::MAX`) the expansion is marked
//! inexact, and the block that ends the reduction sums the whole input
//! again with [`Exact`](crate::exact::Exact) accumulators: slower (one
//! block, local memory, global atomics), and exact always.

use crate::abi::VECTOR_BYTES;
use crate::device::{self, block_dim_x, thread_idx_x};
use crate::element::{Accumulator, Element, MAX_WORDS};
use crate::exact::{Exact, ExactFloat};
use crate::op::Operator;
use crate::thread::{self, Source};
use core::marker::PhantomData;
use core::mem::size_of;

/// A partial sum `hi + lo`, exact unless `inexact`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Expansion {
    pub hi: f64,
    pub lo: f64,
    /// An addition did not fit: `hi + lo` is not the sum.
    pub inexact: bool,
}

impl Accumulator for Expansion {
    const WORDS: u32 = 5;

    #[inline(always)]
    fn to_words(self) -> [u32; MAX_WORDS] {
        let (hi, lo) = (self.hi.to_bits(), self.lo.to_bits());
        [
            hi as u32,
            (hi >> 32) as u32,
            lo as u32,
            (lo >> 32) as u32,
            self.inexact as u32,
            0,
        ]
    }

    #[inline(always)]
    fn from_words(w: [u32; MAX_WORDS]) -> Self {
        Expansion {
            hi: f64::from_bits(w[0] as u64 | (w[1] as u64) << 32),
            lo: f64::from_bits(w[2] as u64 | (w[3] as u64) << 32),
            inexact: w[4] != 0,
        }
    }
}

/// `(s, e)` with `s = a + b` rounded and `s + e == a + b` exactly
/// (Knuth's TwoSum: any magnitudes, no branch; rustc never contracts or
/// reassociates float arithmetic, so the GPU computes it as written).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let b_virtual = s - a;
    (s, (a - (s - b_virtual)) + (b - b_virtual))
}

impl Expansion {
    /// The sum of no values.
    pub const ZERO: Expansion = Expansion {
        hi: 0.0,
        lo: 0.0,
        inexact: false,
    };

    /// The sum `value` alone.
    #[inline(always)]
    pub fn of(value: f64) -> Expansion {
        Expansion::ZERO.plus(value)
    }

    /// `self + value` exactly; where that does not fit two `f64`s (or
    /// `value` is not finite, or the sum overflows), `self` marked inexact.
    #[inline(always)]
    pub fn plus(self, value: f64) -> Expansion {
        let (hi, error) = two_sum(self.hi, value);
        let (lo, lost) = two_sum(self.lo, error);
        // NaN too is `!= 0.0`: an infinity or NaN among the operands, or an
        // overflow, makes the errors NaN.
        if lost != 0.0 {
            return Expansion { inexact: true, ..self };
        }
        Expansion {
            hi,
            lo,
            inexact: self.inexact,
        }
    }

    /// The same sum with `lo` below half an ulp of `hi` (so later additions
    /// leave it room): one more exact TwoSum.
    #[inline(always)]
    pub fn renormalised(self) -> Expansion {
        let (hi, lo) = two_sum(self.hi, self.lo);
        Expansion { hi, lo, ..self }
    }
}

/// The exact sum's operator on [`Expansion`]s: exact addition, inexact if
/// either was or it does not fit.
///
/// Over plain elements it is the sum: the bound the thread layer puts on
/// every operator (the exact sum's [`Source`] folds its vectors itself).
pub struct ExactSum;

impl Operator<Expansion> for ExactSum {
    #[inline(always)]
    fn identity() -> Expansion {
        Expansion::ZERO
    }

    #[inline(always)]
    fn combine(a: Expansion, b: Expansion) -> Expansion {
        let sum = a.plus(b.hi).plus(b.lo).renormalised();
        Expansion {
            inexact: sum.inexact || b.inexact,
            ..sum
        }
    }
}

impl<T: Element> Operator<T> for ExactSum {
    #[inline(always)]
    fn identity() -> T {
        T::ZERO
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.add(b)
    }
}

/// A float type the exact sum reads: how a 16-byte vector of it is added,
/// and how the exact sum is rounded back to it.
pub trait ExactElement: Element + ExactFloat {
    /// `acc` plus the lanes of one vector, exactly (or marked inexact).
    fn add_vector(acc: Expansion, words: [u32; 4]) -> Expansion;
    /// The value, exactly, as an `f64`.
    fn widen(self) -> f64;
    /// The exact sum `total` (not inexact) rounded once to the type.
    fn round(total: Expansion) -> Self;
}

impl ExactElement for f32 {
    #[inline(always)]
    fn add_vector(acc: Expansion, words: [u32; 4]) -> Expansion {
        // The lanes' exponent fields (magnitudes' bits, so the largest has
        // the largest field); a zero lane has no last bit to keep.
        let magnitude = words.map(|w| w & 0x7fff_ffff);
        let largest = Ord::max(
            Ord::max(magnitude[0], magnitude[1]),
            Ord::max(magnitude[2], magnitude[3]),
        ) >> 23;
        let nonzero = magnitude.map(|m| if m == 0 { u32::MAX } else { m });
        let smallest = Ord::max(
            Ord::min(Ord::min(nonzero[0], nonzero[1]), Ord::min(nonzero[2], nonzero[3])) >> 23,
            1,
        );
        let lane = |k: usize| f64::from(f32::from_bits(words[k]));
        // Every lane is a multiple of 2^(smallest - 150) below
        // 2^(largest - 126), so four of them sum exactly within 53 bits
        // when largest - smallest <= 53 - 24 - 2 (a zero vector too).
        if largest.wrapping_sub(smallest) <= 27 || largest < smallest {
            acc.plus((lane(0) + lane(1)) + (lane(2) + lane(3))).renormalised()
        } else {
            acc.plus(lane(0))
                .plus(lane(1))
                .plus(lane(2))
                .plus(lane(3))
                .renormalised()
        }
    }

    #[inline(always)]
    fn widen(self) -> f64 {
        f64::from(self)
    }

    #[inline(always)]
    fn round(total: Expansion) -> f32 {
        let Expansion { hi, lo, .. } = total.renormalised();
        // `hi` is the sum rounded to f64, `lo` what that left out (less
        // than half an ulp of `hi`). Rounding `hi` to f32 is right unless
        // `hi` lies exactly halfway between two f32s (every such midpoint
        // is an f64) and `lo` says which side the sum is on.
        let nearest = hi as f32;
        let sign = (hi.to_bits() >> 32) as u32 & 0x8000_0000;
        // Past f32::MAX, the next f32 would be 2^128.
        let nearest_wide = if nearest.is_infinite() {
            f64::from_bits(0x47f0_0000_0000_0000 | (sign as u64) << 32)
        } else {
            f64::from(nearest)
        };
        if lo == 0.0 || nearest_wide == hi {
            return nearest;
        }
        // The f32 on the other side of `hi` from `nearest`.
        let away_from_zero = (nearest_wide.abs() < hi.abs()) as i32;
        let bits = nearest.to_bits() as i32;
        let other = if nearest.is_infinite() {
            f32::from_bits(f32::MAX.to_bits() | sign)
        } else if nearest == 0.0 {
            f32::from_bits(1 | sign)
        } else {
            f32::from_bits((bits + 2 * away_from_zero - 1) as u32)
        };
        let midpoint = (nearest_wide + f64::from(other)) * 0.5;
        if hi != midpoint {
            return nearest;
        }
        // A tie that `lo` breaks: toward `lo`'s sign.
        let (low, high) = if nearest_wide < f64::from(other) {
            (nearest, other)
        } else {
            (other, nearest)
        };
        if lo > 0.0 {
            high
        } else {
            low
        }
    }
}

impl ExactElement for f64 {
    #[inline(always)]
    fn add_vector(acc: Expansion, words: [u32; 4]) -> Expansion {
        let lane = |k: usize| f64::from_bits(words[2 * k] as u64 | (words[2 * k + 1] as u64) << 32);
        acc.plus(lane(0)).plus(lane(1)).renormalised()
    }

    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }

    #[inline(always)]
    fn round(total: Expansion) -> f64 {
        // TwoSum's sum is `hi + lo` rounded once.
        total.renormalised().hi
    }
}

/// One array of `T`s, read for the exact sum.
pub struct ExactInput<T> {
    pub input: u64,
    element: PhantomData<T>,
}

impl<T> Clone for ExactInput<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ExactInput<T> {}

impl<T> ExactInput<T> {
    /// The array at global address `input`.
    #[inline(always)]
    pub fn new(input: u64) -> Self {
        ExactInput {
            input,
            element: PhantomData,
        }
    }
}

impl<T: ExactElement> Source<Expansion> for ExactInput<T> {
    const LANES: u64 = VECTOR_BYTES / size_of::<T>() as u64;

    #[inline(always)]
    fn common_misalignment(&self) -> Option<u64> {
        Some(self.input % VECTOR_BYTES)
    }

    #[inline(always)]
    unsafe fn vector(&self, index: u64) -> [u32; 4] {
        device::load_global_nc_v4(self.input + index * size_of::<T>() as u64)
    }

    #[inline(always)]
    fn fold<O: Operator<Expansion>>(acc: Expansion, words: [u32; 4], _index: u64) -> Expansion {
        T::add_vector(acc, words)
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> Expansion {
        Expansion::of(thread::load_element::<T>(self.input + index * size_of::<T>() as u64).widen())
    }
}

/// Words of the global scratch the slow path needs for `T`: the exact
/// accumulator's digits, then counts of NaNs, `+inf`s and `-inf`s.
pub const fn scratch_words<T: ExactFloat>() -> usize {
    T::WORDS_LEN + 3
}

/// The slow path: the block sums the `len` elements at `input` again, each
/// thread into an [`Exact`], which it adds to the words at `scratch`
/// (zeroed here first); thread 0 gets the exact sum rounded.
///
/// # Safety
/// Every thread of the block calls it together; `input` holds `len`
/// readable `T`s; `scratch` is [`scratch_words`] writable, 8-byte aligned
/// words that no other block uses during the launch.
#[inline(never)]
pub unsafe fn sum_exactly<T: ExactElement>(input: u64, len: u64, scratch: u64) -> Option<T> {
    let words = scratch_words::<T>();
    if thread_idx_x() == 0 {
        for word in 0..words {
            device::store_global_u64(scratch + 8 * word as u64, 0);
        }
        device::thread_fence_gpu();
    }
    device::sync_threads();
    let mut exact = Exact::<T>::new();
    let mut index = thread_idx_x() as u64;
    while index < len {
        exact.add(thread::load_element::<T>(input + index * size_of::<T>() as u64));
        index += block_dim_x() as u64;
    }
    let (digits, specials) = exact.parts();
    for (word, &digit) in digits.as_ref().iter().enumerate() {
        if digit != 0 {
            device::atomic_add_relaxed_gpu_u64(scratch + 8 * word as u64, digit as u64);
        }
    }
    for (k, &count) in specials.iter().enumerate() {
        if count != 0 {
            device::atomic_add_relaxed_gpu_u64(scratch + 8 * (T::WORDS_LEN + k) as u64, count);
        }
    }
    device::thread_fence_gpu();
    device::sync_threads();
    if thread_idx_x() != 0 {
        return None;
    }
    let mut total = Exact::<T>::new();
    let mut digits = T::ZERO_WORDS;
    for (word, digit) in digits.as_mut().iter_mut().enumerate() {
        *digit = device::load_relaxed_gpu_u64(scratch + 8 * word as u64) as i64;
    }
    let specials = [0, 1, 2].map(|k| device::load_relaxed_gpu_u64(scratch + 8 * (T::WORDS_LEN + k) as u64));
    total.set_parts(digits, specials, block_dim_x());
    Some(total.round())
}
