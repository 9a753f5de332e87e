//! Input types read into a wider accumulator: `i32` summed in `i64`, bytes
//! in `u64`, half floats in `f32`, integers in `f64` (for means; `f64` into
//! itself, so that every type has one). Each input element is converted as it
//! is read, so the reduction runs entirely in the accumulator type and
//! nothing narrow is ever added.

use crate::device;
use crate::element::Element;

/// An IEEE 754 half-precision float (binary16), as its bits.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct F16(pub u16);

/// A bfloat16 (the top half of an `f32`), as its bits.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Bf16(pub u16);

/// An input type the kernels read and convert to the accumulator type `A`.
pub trait Widen<A: Element>: Copy {
    /// Bytes per input element: 1, 2, 4 or 8.
    const BYTES: u64;

    /// The element with bits `raw` (in the low `8 * BYTES` bits), converted.
    fn convert(raw: u64) -> A;

    /// Input element `lane` of a 16-byte vector given as its four 32-bit words
    /// (little-endian: lane 0 is in the low bits of word 0), converted.
    #[inline(always)]
    fn lane(words: [u32; 4], lane: usize) -> A {
        let raw = match Self::BYTES {
            1 => (words[lane / 4] >> (8 * (lane % 4))) as u64 & 0xff,
            2 => (words[lane / 2] >> (16 * (lane % 2))) as u64 & 0xffff,
            4 => words[lane] as u64,
            _ => words[2 * lane] as u64 | (words[2 * lane + 1] as u64) << 32,
        };
        Self::convert(raw)
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
        Self::convert(raw)
    }
}

macro_rules! widen {
    ($($input:ty => $acc:ty, $bytes:expr, |$raw:ident| $convert:expr;)*) => {$(
        impl Widen<$acc> for $input {
            const BYTES: u64 = $bytes;
            #[inline(always)]
            fn convert($raw: u64) -> $acc {
                $convert
            }
        }
    )*};
}

// `as` from the raw bits: a truncation to the input's width, then a sign or
// zero extension (integers) or an exact conversion (floats; integers to f64
// round to nearest above 2^53).
widen! {
    i8 => i64, 1, |raw| raw as u8 as i8 as i64;
    i16 => i64, 2, |raw| raw as u16 as i16 as i64;
    i32 => i64, 4, |raw| raw as u32 as i32 as i64;
    u8 => u64, 1, |raw| raw;
    u16 => u64, 2, |raw| raw;
    u32 => u64, 4, |raw| raw;
    i32 => f64, 4, |raw| raw as u32 as i32 as f64;
    u32 => f64, 4, |raw| raw as f64;
    i64 => f64, 8, |raw| raw as i64 as f64;
    u64 => f64, 8, |raw| raw as f64;
    f32 => f64, 4, |raw| f32::from_bits(raw as u32) as f64;
    f64 => f64, 8, |raw| f64::from_bits(raw);
    F16 => f32, 2, |raw| device::f16_to_f32(raw as u16);
    Bf16 => f32, 2, |raw| f32::from_bits((raw as u32) << 16);
}
