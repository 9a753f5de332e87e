//! The conversions of a cast reduction's results ([`Narrow`]), written in
//! plain Rust so that the GPU, the emulator and the host (which converts a
//! whole input's value with these same functions) give the same bits: each
//! rounds to nearest, ties to even, as `half`'s `from_f32` and Rust's `as`
//! do, subnormal results included; values too large become ±∞.

use crate::device;
use crate::element::Element;
use crate::widen::{Bf16, F16};

/// `x` rounded to the nearest `f32` (ties to even; subnormals kept; too
/// large: ±∞). A NaN stays a NaN of the same sign, quiet, keeping the top
/// 22 bits of its payload (as x86's `cvtsd2ss`), so that every target gives
/// the same bits.
#[inline(always)]
pub fn f64_to_f32(x: f64) -> f32 {
    if x.is_nan() {
        let bits = x.to_bits();
        let sign = ((bits >> 32) as u32) & 0x8000_0000;
        let payload = ((bits >> 29) as u32) & 0x003f_ffff;
        return f32::from_bits(sign | 0x7fc0_0000 | payload);
    }
    x as f32
}

/// The bits of `x` rounded to the nearest IEEE binary16 (ties to even;
/// subnormal halves kept, smaller magnitudes to ±0; from 65520 up: ±∞). A
/// NaN stays a quiet NaN of the same sign with the top bits of its payload.
/// The same bits as `half`'s `f16::from_f32` (its software conversion).
#[inline(always)]
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let x = x.to_bits();
    let sign = x & 0x8000_0000;
    let exponent = x & 0x7f80_0000;
    let mantissa = x & 0x007f_ffff;
    let half_sign = sign >> 16;
    if exponent == 0x7f80_0000 {
        // Infinity, or NaN (quiet, the payload's top bits kept).
        let quiet = if mantissa == 0 { 0 } else { 0x0200 };
        return (half_sign | 0x7c00 | quiet | mantissa >> 13) as u16;
    }
    let half_exponent = (exponent >> 23) as i32 - 127 + 15;
    if half_exponent >= 0x1f {
        return (half_sign | 0x7c00) as u16;
    }
    if half_exponent <= 0 {
        // A subnormal half, or zero.
        if 14 - half_exponent > 24 {
            return half_sign as u16;
        }
        let mantissa = mantissa | 0x0080_0000;
        let shift = (14 - half_exponent) as u32;
        let mut half_mantissa = mantissa >> shift;
        let round_bit = 1u32 << (shift - 1);
        if mantissa & round_bit != 0 && mantissa & (3 * round_bit - 1) != 0 {
            half_mantissa += 1;
        }
        return (half_sign | half_mantissa) as u16;
    }
    let half = half_sign | (half_exponent as u32) << 10 | mantissa >> 13;
    // Round half to even: up if past the half, or at it with an odd result
    // (a carry into the exponent is right, up to ∞).
    let round_bit = 0x0000_1000;
    if mantissa & round_bit != 0 && mantissa & (3 * round_bit - 1) != 0 {
        (half + 1) as u16
    } else {
        half as u16
    }
}

/// The bits of `x` rounded to the nearest bfloat16 (ties to even; too
/// large: ±∞). A NaN stays a quiet NaN with the top bits of its payload.
/// The same bits as `half`'s `bf16::from_f32`.
#[inline(always)]
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let x = x.to_bits();
    if x & 0x7fff_ffff > 0x7f80_0000 {
        return ((x >> 16) | 0x0040) as u16;
    }
    let round_bit = 0x0000_8000;
    if x & round_bit != 0 && x & (3 * round_bit - 1) != 0 {
        (x >> 16) as u16 + 1
    } else {
        (x >> 16) as u16
    }
}

/// A narrower type that results of `From` are converted to.
pub trait Narrow<From: Element>: Copy {
    /// Bytes per converted value.
    const BYTES: u64;

    /// Stores `value` converted at `address`.
    ///
    /// # Safety
    /// `address` is a global address of `BYTES` writable, aligned bytes that
    /// no other thread of the launch touches.
    unsafe fn store(address: u64, value: From);
}

impl Narrow<u64> for u32 {
    const BYTES: u64 = 4;
    /// A position below 2^32 (the host checks that every one is): its low half.
    #[inline(always)]
    unsafe fn store(address: u64, value: u64) {
        device::store_global_u32(address, value as u32)
    }
}

impl Narrow<f64> for f32 {
    const BYTES: u64 = 4;
    #[inline(always)]
    unsafe fn store(address: u64, value: f64) {
        device::store_global_u32(address, f64_to_f32(value).to_bits())
    }
}

impl Narrow<f32> for F16 {
    const BYTES: u64 = 2;
    #[inline(always)]
    unsafe fn store(address: u64, value: f32) {
        device::store_global_u16(address, f32_to_f16_bits(value))
    }
}

impl Narrow<f32> for Bf16 {
    const BYTES: u64 = 2;
    #[inline(always)]
    unsafe fn store(address: u64, value: f32) {
        device::store_global_u16(address, f32_to_bf16_bits(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_round_to_nearest_even() {
        let f16 = |x: f32| f32_to_f16_bits(x);
        assert_eq!(f16(1.0), 0x3c00);
        assert_eq!(f16(1.0 + 1.0 / 2048.0), 0x3c00, "a tie to the even 1.0");
        assert_eq!(f16(1.0 + 3.0 / 2048.0), 0x3c02, "a tie to the even 1 + 2^-9");
        assert_eq!(f16(65504.0), 0x7bff);
        assert_eq!(f16(65519.0), 0x7bff);
        assert_eq!(f16(65520.0), 0x7c00, "a tie to ∞");
        assert_eq!(f16(-1e9), 0xfc00);
        assert_eq!(f16(2f32.powi(-24)), 0x0001, "the smallest subnormal");
        assert_eq!(f16(2f32.powi(-25)), 0x0000, "a tie to the even 0");
        assert_eq!(f16(1.5 * 2f32.powi(-24)), 0x0002, "a tie to the even 2^-23");
        assert_eq!(f16(-0.0), 0x8000);
        assert_eq!(f16(f32::NAN) & 0x7e00, 0x7e00);
        let bf16 = |x: f32| f32_to_bf16_bits(x);
        assert_eq!(bf16(1.0), 0x3f80);
        assert_eq!(bf16(f32::from_bits(0x3f80_8000)), 0x3f80, "a tie to even");
        assert_eq!(bf16(f32::from_bits(0x3f81_8000)), 0x3f82, "a tie to even");
        assert_eq!(bf16(f32::MAX), 0x7f80, "rounds to ∞");
        assert_eq!(f64_to_f32(1.0 + 2f64.powi(-24)), 1.0, "a tie to even");
        assert_eq!(f64_to_f32(1e-45).to_bits(), 1, "a subnormal");
        assert_eq!(f64_to_f32(1e300), f32::INFINITY);
        assert_eq!(f64_to_f32(f64::from_bits(0xfff8_0000_0000_0001)).to_bits(), 0xffc0_0000);
    }
}
