//! `exp` and `ln` for the statistics, in plain Rust so that the GPU and the
//! emulator compute the same bits (the PTX build has no link step, so a
//! math library's functions, which do not inline, cannot be called; the
//! hardware's `ex2.approx`/`lg2.approx` the emulator could not reproduce).
//!
//! Both reduce the argument by powers of two and evaluate a short series:
//! - `exp(x) = 2^n · e^r`, `n = round(x / ln 2)`, `r = x − n·ln 2` (with
//!   `ln 2` in two parts, the first with trailing zero bits so that `n`
//!   times it is exact), `|r| ≤ ln 2 / 2`,
//!   `e^r` by its Taylor series to `r^7` (`f32`) or `r^13` (`f64`), whose
//!   first omitted term is below half an ulp, by Horner's rule in fused
//!   multiply-adds (`fma.rn`, which the emulator's `mul_add` matches bit
//!   for bit). No instruction converts between floats and integers (they
//!   issue at an eighth of the fused multiply-add's rate, and logsumexp
//!   calls `exp` once per element): `n` is rounded by adding `1.5 · 2^m`
//!   (`m` the mantissa's bits), whose ulp is 1, so that `n` is then in the
//!   sum's low bits, and `2^n` is applied by adding those bits, shifted
//!   into the exponent field, to the series' bits;
//! - `ln(x) = e·ln 2 + ln m`, `x = m·2^e`, `m` in `[√½, √2)`, `ln m =
//!   2·atanh(s)`, `s = (m − 1)/(m + 1)`, `|s| ≤ 0.172`, by its series to
//!   `s^11` (`f32`) or `s^21` (`f64`).
//!
//! Accuracy: a few ulps (measured against the host's `f64` functions in
//! the tests below), as CUDA's own `expf`/`logf` (2 and 1 ulp). Domains, as
//! logsumexp uses them: `exp` for `x ≤ 0` (`-inf` included, NaN not), where
//! an `x` below `−86` (`f32`) or `−708` (`f64`) is taken as that bound, so
//! that `2^n` stays a normal number: `e^x` is then at most `4.5e-38`
//! (`3.4e-308`) too large, which a sum of at least 1 does not notice;
//! `ln` for positive finite normal `x` (logsumexp takes the log of a sum of
//! at least 1).

use crate::device;

/// `1/k!` for `k < N`: the exponential's Taylor coefficients.
const fn inverse_factorials<const N: usize>() -> [f64; N] {
    let mut c = [1.0; N];
    let mut k = 1;
    while k < N {
        c[k] = c[k - 1] / k as f64;
        k += 1;
    }
    c
}

macro_rules! math {
    ($exp:ident, $ln:ident, $t:ty, $fma:ident, $bits:ty, mantissa $mantissa:literal, bias $bias:literal,
     ln2 [$ln2_hi:expr, $ln2_lo:expr], lowest_exp $lowest:literal,
     exp_terms $exp_terms:literal, ln_terms $ln_terms:literal) => {
        /// `e^x` for `x ≤ 0`, not NaN; below `lowest`, `e^lowest` (see the module docs).
        #[inline(always)]
        pub fn $exp(x: $t) -> $t {
            // 1.5 · 2^mantissa: its ulp is 1, and its bits shifted by the
            // mantissa's width are 0 (its lowest set bit is the mantissa's top one).
            const SHIFTER: $t = 1.5 * (1u64 << $mantissa) as $t;
            let x = x.max($lowest);
            // round(x / ln 2) in the low bits of `shifted`, and as a float in `n`.
            let shifted = device::$fma(x, core::f64::consts::LOG2_E as $t, SHIFTER);
            let n = shifted - SHIFTER;
            let r = device::$fma(n, -$ln2_lo, device::$fma(n, -$ln2_hi, x));
            // Horner over 1/k!, from the highest term down, one fused
            // multiply-add per term (the loop unrolls: constant indices).
            const C: [f64; $exp_terms + 1] = inverse_factorials::<{ $exp_terms + 1 }>();
            let mut p = C[$exp_terms] as $t;
            let mut k = $exp_terms;
            while k > 0 {
                k -= 1;
                p = device::$fma(p, r, C[k] as $t);
            }
            // p · 2^n: n added to p's exponent (p is in [0.7, 1.5], n ≥ −124
            // or −1021: the result is normal).
            <$t>::from_bits(p.to_bits().wrapping_add(shifted.to_bits() << $mantissa))
        }

        /// `ln x` for positive finite normal `x` (see the module docs).
        #[inline(always)]
        pub fn $ln(x: $t) -> $t {
            let bits = x.to_bits();
            let mut e = ((bits >> $mantissa) as i32) - $bias;
            let mut m = <$t>::from_bits((bits & ((1 << $mantissa) - 1)) | (($bias as $bits) << $mantissa));
            if m > core::f64::consts::SQRT_2 as $t {
                m *= 0.5;
                e += 1;
            }
            let s = (m - 1.0) / (m + 1.0);
            let z = s * s;
            // 2·(s + s³/3 + s⁵/5 + …), Horner in z from the highest term.
            let mut series: $t = 0.0;
            let mut k = $ln_terms;
            while k > 0 {
                series = device::$fma(z, series, 2.0 / (2 * k + 1) as $t);
                k -= 1;
            }
            let e = e as $t;
            e * $ln2_hi + (s * (2.0 + z * series) + e * $ln2_lo)
        }
    };
}

math!(exp_f32, ln_f32, f32, fma_f32, u32, mantissa 23, bias 127,
    ln2 [f32::from_bits(0x3f31_7200), f32::from_bits(0x35bf_be8e)], lowest_exp -86.0,
    exp_terms 7, ln_terms 5);
math!(exp_f64, ln_f64, f64, fma_f64, u64, mantissa 52, bias 1023,
    ln2 [f64::from_bits(0x3fe6_2e42_fee0_0000), f64::from_bits(0x3dea_39ef_3579_3c76)], lowest_exp -708.0,
    exp_terms 13, ln_terms 10);

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of `got` against `want` in units of `got`'s last place.
    fn ulps(got: f64, want: f64, ulp_of: impl Fn(f64) -> f64) -> f64 {
        (got - want).abs() / ulp_of(want)
    }

    #[test]
    fn exp_and_ln_are_within_a_few_ulps() {
        let ulp32 = |w: f64| (w.abs() as f32).max(f32::MIN_POSITIVE) as f64 * f32::EPSILON as f64;
        let ulp64 = |w: f64| w.abs().max(f64::MIN_POSITIVE) * f64::EPSILON;
        let mut worst = [0.0f64; 4];
        for i in 0..200_000 {
            let x = -(i as f64) * 86.0 / 200_000.0;
            worst[0] = worst[0].max(ulps(exp_f32(x as f32) as f64, (x as f32 as f64).exp(), ulp32));
            worst[1] = worst[1].max(ulps(exp_f64(x * 8.0), (x * 8.0).exp(), ulp64));
            let y = 1.0 + i as f64 * 37.0;
            worst[2] = worst[2].max(ulps(ln_f32(y as f32) as f64, (y as f32 as f64).ln(), ulp32));
            worst[3] = worst[3].max(ulps(ln_f64(y * 1e9), (y * 1e9).ln(), ulp64));
        }
        assert!(worst.iter().all(|&w| w <= 3.0), "worst errors in ulps: {worst:?}");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f64(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(ln_f32(1.0), 0.0);
        assert_eq!(ln_f64(1.0), 0.0);
        // Below the bound (and -inf): e^bound, a normal number.
        assert_eq!(exp_f32(f32::NEG_INFINITY), exp_f32(-86.0));
        assert_eq!(exp_f32(-1000.0), exp_f32(-86.0));
        assert!(exp_f32(-86.0).is_normal() && exp_f32(-86.0) < 4.5e-38);
        assert_eq!(exp_f64(f64::NEG_INFINITY), exp_f64(-708.0));
        assert!(exp_f64(-708.0).is_normal() && exp_f64(-708.0) < 3.4e-308);
    }
}
