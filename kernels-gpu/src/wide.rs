//! The exact sums' wide fast accumulator, for values whose bits spread
//! over more than an [`Expansion`](crate::expansion::Expansion) holds: the
//! squares of the elements (`ExactSumOfSquares`).
//!
//! An [`Expansion`](crate::expansion::Expansion) holds a sum whose bits
//! span about `104 - log2(adds)` bits from its top down to the finest last
//! bit of its values (`adds`: the most additions one thread made, about
//! 2^11 for 2^30 elements on an H200). Squares double the values' spread:
//! of 2^30 normally distributed `f32`s the smallest square's last bit lies
//! about 2^-83 while the sum is about 2^30, 113 bits apart, past that span
//! (`scripts/exact_span.py` models the bound), so such sums would take the
//! one-block exact pass. A [`Wide`] is
//! three `f64`s, `hi + mid + lo`: each value goes into `hi` with a TwoSum,
//! whose error goes into `mid` with a TwoSum, whose error goes into `lo`
//! with a TwoSum that must itself be exact. Every step is exact but the
//! last, which is checked, so the sum needs no bound on its values: it
//! holds any sum whose bits fit its three words (about 150 bits below the
//! sum's top bit; the smallest square of 2^30 normal `f64`s lies about 142
//! below), and where one addition was not exact (or a value was an
//! infinity or NaN, or a sum overflowed), `lo` becomes NaN, and the
//! kernels sum the part again in the exact pass. Being NaN is the only
//! flag, so the accumulator is six words, as the collectives carry.

use crate::element::{Accumulator, Element, MAX_WORDS};
use crate::exact::Exact;
use crate::expansion::{f32_lanes, two_sum, ExactElement, FastAccumulator, FastExact, FALLBACK_ALWAYS};
use crate::op::Operator;

/// A partial sum `hi + mid + lo`, or, with `lo` NaN, a sum it could not
/// hold exactly (see the [module](self) docs).
#[derive(Clone, Copy, Debug)]
pub struct Wide {
    pub hi: f64,
    pub mid: f64,
    pub lo: f64,
}

impl Accumulator for Wide {
    const WORDS: u32 = 6;

    #[inline(always)]
    fn to_words(self) -> [u32; MAX_WORDS] {
        let [hi, mid, lo] = [self.hi, self.mid, self.lo].map(f64::to_bits);
        [
            hi as u32,
            (hi >> 32) as u32,
            mid as u32,
            (mid >> 32) as u32,
            lo as u32,
            (lo >> 32) as u32,
        ]
    }

    #[inline(always)]
    fn from_words(w: [u32; MAX_WORDS]) -> Self {
        let word = |k: usize| f64::from_bits(w[2 * k] as u64 | (w[2 * k + 1] as u64) << 32);
        Wide {
            hi: word(0),
            mid: word(1),
            lo: word(2),
        }
    }
}

impl FastAccumulator for Wide {
    const ZERO: Wide = Wide {
        hi: 0.0,
        mid: 0.0,
        lo: 0.0,
    };

    /// Every word finite: no addition lost bits (`lo` NaN says one did).
    #[inline(always)]
    fn is_exact(self) -> bool {
        !FALLBACK_ALWAYS && self.hi.is_finite() && self.mid.is_finite() && self.lo.is_finite()
    }

    #[inline(never)]
    fn exact_of<T: ExactElement>(self) -> Exact<T> {
        let mut exact = Exact::<T>::new();
        exact.add_f64(self.hi);
        exact.add_f64(self.mid);
        exact.add_f64(self.lo);
        exact
    }
}

/// `lo` if `lost` is zero, else NaN: the flag of a sum not held exactly
/// (a NaN `lost`, from an infinity, NaN or overflow, is not zero either).
#[inline(always)]
fn kept(lo: f64, lost: f64) -> f64 {
    if lost == 0.0 {
        lo
    } else {
        f64::NAN
    }
}

impl Wide {
    /// `self + value`: three TwoSums, the last one's error checked.
    #[inline(always)]
    pub fn plus(self, value: f64) -> Wide {
        let (hi, error) = two_sum(self.hi, value);
        let (mid, error) = two_sum(self.mid, error);
        let (lo, lost) = two_sum(self.lo, error);
        Wide {
            hi,
            mid,
            lo: kept(lo, lost),
        }
    }

    /// `hi + mid + lo` rounded to nearest (ties to even) or, with
    /// `to_odd`, rounded to odd (exact, else the neighbour whose last bit
    /// is 1). Boldo and Melquiond's sum of three ("Emulation of FMA and
    /// correctly rounded sums: proved algorithms using rounding to odd",
    /// IEEE TC 2008): the low parts' sum rounded to odd keeps the sticky
    /// bit a rounding of the whole needs. Rounding to odd first and to
    /// `f32` after is correct too (53 bits are more than 24 + 1), where
    /// two roundings to nearest might not be.
    #[inline(always)]
    fn sum(self, to_odd: bool) -> f64 {
        let (upper, lower) = two_sum(self.mid, self.lo);
        let (top, rest) = two_sum(self.hi, upper);
        let low = add_to_odd(rest, lower);
        if to_odd {
            add_to_odd(top, low)
        } else {
            top + low
        }
    }
}

/// `a + b` rounded to odd: the sum if it is an `f64`, else whichever of the
/// two `f64`s around it has an odd significand.
#[inline(always)]
fn add_to_odd(a: f64, b: f64) -> f64 {
    let (sum, error) = two_sum(a, b);
    let bits = sum.to_bits();
    if error == 0.0 || bits & 1 == 1 {
        return sum;
    }
    // `sum` is not zero (a sum that rounds to zero is exact): the odd
    // neighbour lies toward `error`, one step up or down in magnitude.
    let away_from_zero = (error > 0.0) == (sum > 0.0);
    f64::from_bits(if away_from_zero { bits + 1 } else { bits - 1 })
}

/// The exact sum on [`Wide`]s: [`FastExact`] for values that spread over
/// many bits (the squares of `f32`s and `f64`s).
///
/// Over plain elements it is the sum: the bound the thread layer puts on
/// every operator.
pub struct WideSum;

impl Operator<Wide> for WideSum {
    #[inline(always)]
    fn identity() -> Wide {
        Wide::ZERO
    }

    #[inline(always)]
    fn combine(a: Wide, b: Wide) -> Wide {
        let (hi, error) = two_sum(a.hi, b.hi);
        let (mid, mid_error) = two_sum(a.mid, b.mid);
        let (mid, carried) = two_sum(mid, error);
        let (lo, lost) = two_sum(a.lo, b.lo);
        let (lo, lost_too) = two_sum(lo, mid_error);
        let (lo, lost_last) = two_sum(lo, carried);
        // Exact: the top of `mid` into `hi` and of `lo` into `mid`, so the
        // next combination's `lo`s are the low bits of sums of similar size.
        let (hi, mid) = two_sum(hi, mid);
        let (mid, lo) = two_sum(mid, lo);
        let exact = lost == 0.0 && lost_too == 0.0 && lost_last == 0.0;
        Wide {
            hi,
            mid,
            lo: if exact { lo } else { f64::NAN },
        }
    }
}

impl<T: Element> Operator<T> for WideSum {
    #[inline(always)]
    fn identity() -> T {
        T::ZERO
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        a.add(b)
    }
}

impl FastExact<f32> for WideSum {
    type Acc = Wide;

    #[inline(always)]
    fn add_vector(acc: Wide, words: [u32; 4]) -> Wide {
        let lane = |k: usize| f64::from(f32::from_bits(words[k]));
        // Four lanes within 27 binades of each other sum exactly in an
        // `f64` (see `f32_lanes`): one addition for four elements.
        if f32_lanes(words).1 {
            acc.plus((lane(0) + lane(1)) + (lane(2) + lane(3)))
        } else {
            acc.plus(lane(0)).plus(lane(1)).plus(lane(2)).plus(lane(3))
        }
    }

    #[inline(always)]
    fn add_element(acc: Wide, value: f32) -> Wide {
        acc.plus(f64::from(value))
    }

    #[inline(always)]
    fn add_eight(acc: Wide, values: [f32; 8]) -> Wide {
        let w = values.map(f32::to_bits);
        let add = <Self as FastExact<f32>>::add_vector;
        add(add(acc, [w[0], w[1], w[2], w[3]]), [w[4], w[5], w[6], w[7]])
    }

    #[inline(always)]
    fn round(acc: Wide) -> f32 {
        // Rounded to odd in `f64`, then to nearest in `f32`: correctly rounded.
        acc.sum(true) as f32
    }
}

impl FastExact<f64> for WideSum {
    type Acc = Wide;

    #[inline(always)]
    fn add_vector(acc: Wide, words: [u32; 4]) -> Wide {
        let lane = |k: usize| f64::from_bits(words[2 * k] as u64 | (words[2 * k + 1] as u64) << 32);
        acc.plus(lane(0)).plus(lane(1))
    }

    #[inline(always)]
    fn add_element(acc: Wide, value: f64) -> Wide {
        acc.plus(value)
    }

    #[inline(always)]
    fn add_eight(acc: Wide, v: [f64; 8]) -> Wide {
        v.into_iter().fold(acc, Wide::plus)
    }

    #[inline(always)]
    fn round(acc: Wide) -> f64 {
        acc.sum(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expansion::tests::hashes;

    fn exact<T: ExactElement>(values: &[T]) -> T {
        let mut sum = Exact::<T>::new();
        values.iter().for_each(|&x| sum.add(x));
        sum.round()
    }

    /// Folds `values` as threads would (`chunk` each, element by element),
    /// then combines the threads' accumulators pairwise.
    fn fold_and_combine<T: ExactElement>(values: &[T], chunk: usize) -> Wide
    where
        WideSum: FastExact<T, Acc = Wide>,
    {
        let mut parts: Vec<Wide> = values
            .chunks(chunk)
            .map(|chunk| chunk.iter().fold(Wide::ZERO, |acc, &x| WideSum::add_element(acc, x)))
            .collect();
        while parts.len() > 1 {
            parts = parts
                .chunks(2)
                .map(|pair| pair.iter().fold(Wide::ZERO, |acc, &x| WideSum::combine(acc, x)))
                .collect();
        }
        parts.first().copied().unwrap_or(Wide::ZERO)
    }

    /// A normally distributed value from two hashes (Box–Muller).
    fn normal(a: u64, b: u64) -> f64 {
        let u = ((a >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let v = (b >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u.ln()).sqrt() * (2.0 * core::f64::consts::PI * v).cos()
    }

    fn squares_of_normals(seed: u64, n: usize) -> (Vec<f32>, Vec<f64>) {
        let h: Vec<u64> = hashes(seed, 2 * n).collect();
        let x: Vec<f64> = h.chunks(2).map(|p| normal(p[0], p[1])).collect();
        (
            x.iter().map(|&v| (v as f32) * (v as f32)).collect(),
            x.iter().map(|&v| v * v).collect(),
        )
    }

    #[test]
    fn squares_of_normal_data_take_the_fast_path_and_are_exact() {
        for (seed, n) in [(1, 10), (2, 1000), (3, 100_000), (4, 1 << 20)] {
            let (single, double) = squares_of_normals(seed, n);
            for chunk in [1, 7, 64, 1000] {
                let total = fold_and_combine(&single, chunk);
                assert!(total.is_exact(), "f32, n = {n}, chunks of {chunk}: {total:?}");
                assert_eq!(
                    <WideSum as FastExact<f32>>::round(total).to_bits(),
                    exact(&single).to_bits(),
                    "f32, n = {n}"
                );
                assert_eq!(total.exact_of::<f32>().round().to_bits(), exact(&single).to_bits());
                let total = fold_and_combine(&double, chunk);
                assert!(total.is_exact(), "f64, n = {n}, chunks of {chunk}: {total:?}");
                assert_eq!(
                    <WideSum as FastExact<f64>>::round(total).to_bits(),
                    exact(&double).to_bits(),
                    "f64, n = {n}"
                );
                assert_eq!(total.exact_of::<f64>().round().to_bits(), exact(&double).to_bits());
            }
        }
        // The `f32` vectors' path: four lanes at a time.
        let (single, _) = squares_of_normals(5, 1 << 16);
        let total = single.chunks(4).fold(Wide::ZERO, |acc, v| {
            <WideSum as FastExact<f32>>::add_vector(acc, [v[0], v[1], v[2], v[3]].map(f32::to_bits))
        });
        assert!(total.is_exact());
        assert_eq!(
            <WideSum as FastExact<f32>>::round(total).to_bits(),
            exact(&single).to_bits()
        );
    }

    /// Values with exponents over `span` binades, of either sign, some of
    /// them ties' halves: sums whose last bits decide the rounding.
    fn adversarial(seed: u64, n: usize, span: u32) -> Vec<f64> {
        hashes(seed, n)
            .map(|h| {
                let unit = ((h >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
                let scaled = unit * 2f64.powi((h % u64::from(span)) as i32 - 60);
                // Some values only their top bit: sums landing on ties.
                if h % 5 == 0 {
                    f64::from_bits(scaled.to_bits() & !((1u64 << 52) - 1))
                } else {
                    scaled
                }
            })
            .collect()
    }

    #[test]
    fn whenever_it_says_exact_it_is_and_rounds_correctly() {
        let (mut fast, mut tries) = (0, 0);
        for seed in 0..3000u64 {
            let n = 1 + (seed as usize * 7) % 40;
            let span = [20, 60, 120, 200, 2000][seed as usize % 5];
            let values = adversarial(seed, n, span);
            let total = fold_and_combine(&values, 1 + seed as usize % 5);
            tries += 1;
            if total.is_exact() {
                fast += 1;
                assert_eq!(
                    <WideSum as FastExact<f64>>::round(total).to_bits(),
                    exact(&values).to_bits(),
                    "seed {seed}: {values:?} -> {total:?}"
                );
                // Rounded to f32 from the same state: as the exact sum of
                // the values would be, were they f32s' sums (here checked
                // against the f64 sum rounded to odd then to f32).
                let single: Vec<f32> = values.iter().map(|&v| v as f32).collect();
                let total = fold_and_combine(&single, 1 + seed as usize % 5);
                if total.is_exact() {
                    assert_eq!(
                        <WideSum as FastExact<f32>>::round(total).to_bits(),
                        exact(&single).to_bits(),
                        "seed {seed}: {single:?}"
                    );
                }
            }
        }
        assert!(fast > tries / 2, "only {fast} of {tries} took the fast path");
        // Ties: the sum of the high parts lies halfway between two f64s
        // (or f32s), and a bit far below decides.
        let one = 1.0f64;
        for (values, want) in [
            (vec![one, 2f64.powi(-53), 2f64.powi(-120)], one + 2f64.powi(-52)),
            (vec![one, 2f64.powi(-53), -2f64.powi(-120)], one),
            (vec![one, 2f64.powi(-53)], one),
            (vec![one + 2f64.powi(-52), 2f64.powi(-53)], one + 2f64.powi(-51)),
        ] {
            let total = fold_and_combine(&values, 1);
            assert!(total.is_exact(), "{values:?}");
            assert_eq!(<WideSum as FastExact<f64>>::round(total), want, "{values:?}");
            assert_eq!(exact(&values), want, "{values:?}");
        }
        for (values, want) in [
            (vec![1.0f32, 2f32.powi(-24), 2f32.powi(-100)], 1.0 + 2f32.powi(-23)),
            (vec![1.0f32, 2f32.powi(-24), -2f32.powi(-100)], 1.0),
            (vec![1.0f32, 2f32.powi(-24)], 1.0),
            (
                vec![1.0f32, 2f32.powi(-24), 2f32.powi(-60), 2f32.powi(-119)],
                1.0 + 2f32.powi(-23),
            ),
        ] {
            let total = fold_and_combine(&values, 2);
            assert!(total.is_exact(), "{values:?}");
            assert_eq!(<WideSum as FastExact<f32>>::round(total), want, "{values:?}");
            assert_eq!(exact(&values), want, "{values:?}");
        }
        // Bits that do not fit: 2^-180 cannot join `lo` = 2^-120, and
        // without it the rest is a tie that rounds down. Not exact, then,
        // rather than 1 (one thread's additions, and combinations).
        let lost = [1.0, 2f64.powi(-53), 2f64.powi(-120), 2f64.powi(-180), -2f64.powi(-120)];
        assert_eq!(exact(&lost), 1.0 + 2f64.powi(-52));
        for chunk in [5, 1] {
            let total = fold_and_combine(&lost, chunk);
            assert!(
                !total.is_exact() || <WideSum as FastExact<f64>>::round(total) == exact(&lost),
                "chunks of {chunk}: {total:?}"
            );
        }
        // Specials and overflow never are exact.
        for values in [
            vec![1.0, f64::INFINITY],
            vec![f64::NAN],
            vec![f64::MAX, f64::MAX, -f64::MAX],
        ] {
            assert!(!fold_and_combine(&values, 2).is_exact(), "{values:?}");
            assert!(!fold_and_combine(&values, 1).is_exact(), "{values:?}");
        }
        // A span past three words: not exact, rather than wrong.
        let values = [2f64.powi(100), 1.0, 2f64.powi(-100)];
        let total = fold_and_combine(&values, 1);
        assert!(!total.is_exact() || <WideSum as FastExact<f64>>::round(total) == exact(&values));
    }
}
