//! Input types read into a wider accumulator: `i32` summed in `i64`, bytes
//! in `u64`, half floats in `f32`, integers in `f64` (for means; `f64` into
//! itself, so that every type has one). Each input element is converted as it
//! is read, so the reduction runs entirely in the accumulator type and
//! nothing narrow is ever added.

use crate::device;
use crate::element::Element;
use crate::op::{AnyElement, Operator};

/// An IEEE 754 half-precision float (binary16), as its bits.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct F16(pub u16);

/// A bfloat16 (the top half of an `f32`), as its bits.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Bf16(pub u16);

/// An input type the kernels read and convert to the accumulator type `A`.
///
/// A lane is first converted to [`Widen::Word`], the type in which the lanes
/// of one 32-bit word are combined, and that result to `A`: for 8- and 16-bit
/// integers a 32-bit integer, which holds the sum, max or min of a word's
/// lanes exactly and costs a fraction of 64-bit arithmetic (the `i8` kernel
/// ran at half speed with every byte sign-extended to 64 bits); for the other
/// inputs `A` itself.
pub trait Widen<A: Element>: Copy {
    /// Bytes per input element: 1, 2, 4 or 8.
    const BYTES: u64;

    /// The type one 32-bit word's lanes are combined in.
    type Word: Element;

    /// The element with bits `raw` (in the low `8 * BYTES` bits), as a `Word`.
    fn lane_in_word(raw: u64) -> Self::Word;

    /// A combination of lanes, converted to the accumulator type.
    fn word_to_accumulator(word: Self::Word) -> A;

    /// The lanes of one 16-byte vector (given as its four words) converted
    /// and combined with `O`, pairwise and adjacent lanes first, each 32-bit
    /// word's lanes in `Word`.
    fn fold_vector<O: AnyElement>(words: [u32; 4]) -> A;

    /// Input element `lane` of a 16-byte vector given as its four 32-bit words
    /// (little-endian: lane 0 is in the low bits of word 0), as a `Word`.
    #[inline(always)]
    fn lane(words: [u32; 4], lane: usize) -> Self::Word {
        let raw = match Self::BYTES {
            1 => (words[lane / 4] >> (8 * (lane % 4))) as u64 & 0xff,
            2 => (words[lane / 2] >> (16 * (lane % 2))) as u64 & 0xffff,
            4 => words[lane] as u64,
            _ => words[2 * lane] as u64 | (words[2 * lane + 1] as u64) << 32,
        };
        Self::lane_in_word(raw)
    }

    /// The input element at `address`, converted.
    ///
    /// # Safety
    /// `address` is a global address of a readable, `BYTES`-aligned element
    /// that no thread writes during the kernel.
    #[inline(always)]
    unsafe fn load(address: u64) -> A {
        let raw = match Self::BYTES {
            1 => device::load_global_nc_u8(address) as u64,
            2 => device::load_global_nc_u16(address) as u64,
            4 => device::load_global_nc_u32(address) as u64,
            _ => device::load_global_nc_u64(address),
        };
        Self::word_to_accumulator(Self::lane_in_word(raw))
    }
}

macro_rules! widen {
    ($($input:ty => $acc:ty, $bytes:expr, word $word:ty, |$raw:ident| $lane:expr, |$w:ident| $widen:expr;)*) => {$(
        impl Widen<$acc> for $input {
            const BYTES: u64 = $bytes;
            type Word = $word;
            #[inline(always)]
            fn lane_in_word($raw: u64) -> $word {
                $lane
            }
            #[inline(always)]
            fn word_to_accumulator($w: $word) -> $acc {
                $widen
            }
            #[inline(always)]
            fn fold_vector<O: AnyElement>(words: [u32; 4]) -> $acc {
                fold_lanes::<Self, $acc, O>(words)
            }
        }
    )*};
}

/// [`Widen::fold_vector`], written out per lane width with constant lane
/// indices (as loops over an array, LLVM kept the vectors in local memory).
#[inline(always)]
fn fold_lanes<In: Widen<A>, A: Element, O: Operator<A> + Operator<In::Word>>(words: [u32; 4]) -> A {
    let lane = |k: usize| In::lane(words, k);
    let in_word = |a, b| <O as Operator<In::Word>>::combine(a, b);
    let widened = |k: usize| In::word_to_accumulator(lane(k));
    let combine = |a, b| <O as Operator<A>>::combine(a, b);
    match In::BYTES {
        1 => {
            let word = |w: usize| {
                In::word_to_accumulator(in_word(
                    in_word(lane(4 * w), lane(4 * w + 1)),
                    in_word(lane(4 * w + 2), lane(4 * w + 3)),
                ))
            };
            combine(combine(word(0), word(1)), combine(word(2), word(3)))
        }
        2 => {
            let word = |w: usize| In::word_to_accumulator(in_word(lane(2 * w), lane(2 * w + 1)));
            combine(combine(word(0), word(1)), combine(word(2), word(3)))
        }
        4 => combine(combine(widened(0), widened(1)), combine(widened(2), widened(3))),
        _ => combine(widened(0), widened(1)),
    }
}

// `as` from the raw bits: a truncation to the input's width, then a sign or
// zero extension (integers) or an exact conversion (floats; integers to f64
// round to nearest above 2^53). Each element type also "widens" to itself,
// for argmax/argmin, whose input may be any element type or a half float.
widen! {
    i32 => i32, 4, word i32, |raw| raw as u32 as i32, |w| w;
    u32 => u32, 4, word u32, |raw| raw as u32, |w| w;
    i64 => i64, 8, word i64, |raw| raw as i64, |w| w;
    u64 => u64, 8, word u64, |raw| raw, |w| w;
    f32 => f32, 4, word f32, |raw| f32::from_bits(raw as u32), |w| w;
    i8 => i64, 1, word i32, |raw| raw as u8 as i8 as i32, |w| w as i64;
    i16 => i64, 2, word i32, |raw| raw as u16 as i16 as i32, |w| w as i64;
    i32 => i64, 4, word i64, |raw| raw as u32 as i32 as i64, |w| w;
    u8 => u64, 1, word u32, |raw| raw as u32, |w| w as u64;
    u16 => u64, 2, word u32, |raw| raw as u32, |w| w as u64;
    u32 => u64, 4, word u64, |raw| raw, |w| w;
    i32 => f64, 4, word f64, |raw| raw as u32 as i32 as f64, |w| w;
    u32 => f64, 4, word f64, |raw| raw as f64, |w| w;
    i64 => f64, 8, word f64, |raw| raw as i64 as f64, |w| w;
    u64 => f64, 8, word f64, |raw| raw as f64, |w| w;
    f32 => f64, 4, word f64, |raw| f32::from_bits(raw as u32) as f64, |w| w;
    f64 => f64, 8, word f64, |raw| f64::from_bits(raw), |w| w;
    F16 => f32, 2, word f32, |raw| device::f16_to_f32(raw as u16), |w| w;
    Bf16 => f32, 2, word f32, |raw| f32::from_bits((raw as u32) << 16), |w| w;
}
