//! Statistics whose running summary is more than one element: the variance
//! (count, mean and sum of squared deviations, merged as Chan, Golub and
//! LeVeque do), logsumexp (the largest element so far and the sum of the
//! exponentials scaled to it), and the count of elements a predicate holds
//! for (nonzero, NaN, infinite), from which `any` and `all` follow.
//!
//! Each is a [`Statistic`]: the value each element is converted to, the
//! summary one element gives ([`Statistic::lift`]), the operator that
//! merges two summaries (associative and commutative up to rounding, with
//! an identity, so every collective carries it as it carries a sum), and
//! what a result finally is ([`Statistic::finish`]). A summary can also be
//! stored as it is (its [`Accumulator`] halves), for a later launch to go on
//! merging: a reduction over several axes takes one launch per axis.
//!
//! `exp` and `ln` are [`crate::math`]'s and `sqrt` the correctly rounded
//! instruction, so the GPU and the emulator compute the same bits.

use crate::abi::Finish;
use crate::device;
use crate::element::{Accumulator, Element, MAX_WORDS};
use crate::math;
use crate::op::{Operator, Sum};
use crate::place::Placement;
use crate::thread::fold_in_order;
use core::marker::PhantomData;
use core::mem::size_of;

/// The floats the variance and logsumexp accumulate in.
pub trait Real: Element + PartialOrd {
    /// `n`, rounded to the nearest float.
    fn from_count(n: u64) -> Self;
    /// `x`, rounded to the nearest float.
    fn from_f64(x: f64) -> Self;
    fn sub(self, other: Self) -> Self;
    fn div(self, other: Self) -> Self;
    /// `e^self`, for `self ≤ 0` and not NaN; at least `e^-86` (`f32`) or
    /// `e^-708` (`f64`) ([`crate::math`]).
    fn exp(self) -> Self;
    /// `ln self`, for positive finite normal `self` ([`crate::math`]).
    fn ln(self) -> Self;
    /// The square root, correctly rounded.
    fn sqrt(self) -> Self;
    fn is_finite(self) -> bool;
}

macro_rules! real {
    ($($t:ty: $exp:ident $ln:ident $sqrt:ident;)*) => {$(
        impl Real for $t {
            #[inline(always)]
            fn from_count(n: u64) -> Self {
                n as $t
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                self - other
            }
            #[inline(always)]
            fn div(self, other: Self) -> Self {
                self / other
            }
            #[inline(always)]
            fn exp(self) -> Self {
                math::$exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                math::$ln(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                device::$sqrt(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
        }
    )*};
}
real! {
    f32: exp_f32 ln_f32 sqrt_f32;
    f64: exp_f64 ln_f64 sqrt_f64;
}

/// Where a statistic launch writes result `o`, and what it writes there:
/// the `finish`, `finish_param`, `means` and `out` parameters of
/// [`crate::abi::AxisArgs`].
#[derive(Clone, Copy)]
pub struct Output {
    pub finish: Finish,
    pub finish_param: u64,
    pub means: u64,
    pub out: u64,
    /// Where in `out` (and `means`) each result goes.
    pub placement: Placement,
}

impl Output {
    /// The address of result `o` in an array of `U`s at `base`
    /// (`out` or `means`), placed as [`Output::placement`] says.
    #[inline(always)]
    pub(crate) fn at<U>(&self, base: u64, o: u64) -> u64 {
        device::to_global(base) + self.placement.index(o) * size_of::<U>() as u64
    }
}

/// A statistic: see the module docs.
pub trait Statistic {
    /// What each input element is converted to before it is summarised.
    type Value: Element;
    /// The running summary.
    type Summary: Accumulator;
    /// Merges two summaries.
    type Merge: Operator<Self::Summary>;

    /// The summary of one element.
    fn lift(value: Self::Value) -> Self::Summary;

    /// `acc` merged with the summary of a full batch of `values`, in order.
    #[inline(always)]
    fn fold_batch(acc: Self::Summary, values: [Self::Value; 8]) -> Self::Summary {
        fold_in_order::<_, Self::Merge, _>(acc, values, Self::lift)
    }

    /// Writes result `o`, the summary `summary`, as `output.finish` says.
    ///
    /// # Safety
    /// `output` holds the addresses a launch of this statistic with that
    /// `finish` writes ([`crate::abi::AxisArgs`]), each with room for result `o`.
    unsafe fn finish(summary: Self::Summary, output: &Output, o: u64);
}

/// Stores `summary` as its halves at `out`'s slot `o` ([`Finish::State`]).
///
/// # Safety
/// `out` has room for `o + 1` summaries of `A::HALVES` 8-byte words each.
#[inline(always)]
unsafe fn store_state<A: Accumulator>(summary: A, out: u64, o: u64) {
    // The summaries lie `A::HALVES` words apart: `store_partial` writes those.
    crate::grid::store_partial(device::to_global(out) + o * 8 * A::HALVES as u64, summary)
}

/// The summary a previous launch stored with [`Finish::State`] at `address`.
///
/// # Safety
/// `address` is the global address of a stored summary, not written during the launch.
#[inline(always)]
pub unsafe fn load_state<A: Accumulator>(address: u64) -> A {
    let half = |k: u64| {
        if (k as u32) < A::HALVES {
            device::load_global_nc_u64(address + 8 * k)
        } else {
            0
        }
    };
    A::from_halves([half(0), half(1), half(2)])
}

// ---------------------------------------------------------------- variance

/// The count, mean and sum of squared deviations from the mean (`M2`) of
/// some elements: the variance's summary.
#[derive(Clone, Copy)]
pub struct Moments<F> {
    pub count: u64,
    pub mean: F,
    pub m2: F,
}

/// Words: the count's two, then the mean's, then `M2`'s.
impl<F: Real> Accumulator for Moments<F> {
    const WORDS: u32 = 2 + 2 * <F as Element>::WORDS;

    #[inline(always)]
    fn to_words(self) -> [u32; MAX_WORDS] {
        let (mean, m2) = (self.mean.to_bits(), self.m2.to_bits());
        let count = [self.count as u32, (self.count >> 32) as u32];
        if <F as Element>::WORDS == 1 {
            [count[0], count[1], mean as u32, m2 as u32, 0, 0]
        } else {
            [
                count[0],
                count[1],
                mean as u32,
                (mean >> 32) as u32,
                m2 as u32,
                (m2 >> 32) as u32,
            ]
        }
    }

    #[inline(always)]
    fn from_words(w: [u32; MAX_WORDS]) -> Self {
        let count = w[0] as u64 | (w[1] as u64) << 32;
        let (mean, m2) = if <F as Element>::WORDS == 1 {
            (w[2] as u64, w[3] as u64)
        } else {
            (w[2] as u64 | (w[3] as u64) << 32, w[4] as u64 | (w[5] as u64) << 32)
        };
        Moments {
            count,
            mean: F::from_bits(mean),
            m2: F::from_bits(m2),
        }
    }
}

/// Chan, Golub and LeVeque's merge of two [`Moments`]: with `δ` the
/// difference of the means and `n = n_a + n_b`, the mean moves by
/// `δ · n_b / n` and `M2 = M2_a + M2_b + δ² · n_a · n_b / n`. No
/// difference of large sums is ever taken, so the variance keeps its
/// precision when the mean is large against the spread.
pub struct Chan;

impl<F: Real> Operator<Moments<F>> for Chan {
    #[inline(always)]
    fn identity() -> Moments<F> {
        Moments {
            count: 0,
            mean: F::ZERO,
            m2: F::ZERO,
        }
    }

    #[inline(always)]
    fn combine(a: Moments<F>, b: Moments<F>) -> Moments<F> {
        if a.count == 0 {
            return b;
        }
        if b.count == 0 {
            return a;
        }
        let count = a.count + b.count;
        let delta = b.mean.sub(a.mean);
        // Equal counts (every level of a balanced tree) weigh ½ exactly,
        // which the division would give too: a division saved.
        let weight = if a.count == b.count {
            F::from_f64(0.5)
        } else {
            F::from_count(b.count).div(F::from_count(count))
        };
        let spread = delta.mul(delta).mul(F::from_count(a.count)).mul(weight);
        // An infinite or NaN mean (or two far apart) makes `δ` so: then the
        // weighted sum of the means, which IEEE 754 makes `±inf` or NaN as
        // the elements' mean is (`a.mean + δ·w` would be `inf − inf`).
        let mean = if delta.is_finite() {
            a.mean.add(delta.mul(weight))
        } else {
            let a_weight = F::from_count(a.count).div(F::from_count(count));
            a.mean.mul(a_weight).add(b.mean.mul(weight))
        };
        Moments {
            count,
            mean,
            m2: a.m2.add(b.m2).add(spread),
        }
    }
}

/// The variance (and standard deviation, and mean) accumulated in `F`.
pub struct Variance<F>(PhantomData<F>);

impl<F: Real> Statistic for Variance<F> {
    type Value = F;
    type Summary = Moments<F>;
    type Merge = Chan;

    #[inline(always)]
    fn lift(value: F) -> Moments<F> {
        Moments {
            count: 1,
            mean: value,
            m2: F::ZERO,
        }
    }

    /// A full batch of 8 is summarised on its own (its mean is its sum times
    /// 1/8, exactly; its `M2` the sum of squared deviations from that) and
    /// merged once: one division per 8 elements, where merging each element
    /// (Welford's update) divides for every one.
    #[inline(always)]
    fn fold_batch(acc: Moments<F>, v: [F; 8]) -> Moments<F> {
        let sum = v[0]
            .add(v[1])
            .add(v[2].add(v[3]))
            .add(v[4].add(v[5]).add(v[6].add(v[7])));
        // A division by 8: exact, and compiled as a multiplication.
        let mean = sum.div(F::from_count(8));
        let square = |x: F| {
            let d = x.sub(mean);
            d.mul(d)
        };
        let m2 = square(v[0])
            .add(square(v[1]))
            .add(square(v[2]).add(square(v[3])))
            .add(square(v[4]).add(square(v[5])).add(square(v[6]).add(square(v[7]))));
        Chan::combine(acc, Moments { count: 8, mean, m2 })
    }

    /// [`Finish::Value`]: the variance `M2 / max(0, n − correction)`, the
    /// correction an `f64` (its bits in `finish_param`); [`Finish::Root`]: its
    /// square root. Either way the mean goes to `means` where that is not 0.
    /// No elements: NaN for both. A mean that is not finite (an infinite
    /// element, or overflow): a NaN variance, as NumPy's and PyTorch's.
    #[inline(always)]
    unsafe fn finish(summary: Moments<F>, output: &Output, o: u64) {
        if let Finish::State = output.finish {
            return store_state(summary, output.out, o);
        }
        let nan = F::nan().unwrap_or(F::ZERO);
        let correction = f64::from_bits(output.finish_param);
        // `n − correction` in f64, floored at 0 (PyTorch's rule): 0/0 is NaN,
        // a positive M2 over 0 is +inf.
        let dof = F::from_f64((summary.count as f64 - correction).max(0.0));
        let mean = if summary.count == 0 { nan } else { summary.mean };
        let variance = if mean.is_finite() { summary.m2.div(dof) } else { nan };
        let value = match output.finish {
            Finish::Root => variance.sqrt(),
            _ => variance,
        };
        crate::thread::store_result(output.at::<F>(output.out, o), value);
        if output.means != 0 {
            crate::thread::store_result(output.at::<F>(output.means, o), mean);
        }
    }
}

// ---------------------------------------------------------------- logsumexp

/// The largest element seen and the sum of every element's `exp(x − max)`:
/// logsumexp's summary, whose value is `max + ln(sum)`.
#[derive(Clone, Copy)]
pub struct ScaledSum<F> {
    pub max: F,
    pub sum: F,
}

impl<F: Real> Accumulator for ScaledSum<F> {
    const WORDS: u32 = 2 * <F as Element>::WORDS;

    #[inline(always)]
    fn to_words(self) -> [u32; MAX_WORDS] {
        let (max, sum) = (self.max.to_bits(), self.sum.to_bits());
        if <F as Element>::WORDS == 1 {
            [max as u32, sum as u32, 0, 0, 0, 0]
        } else {
            [max as u32, (max >> 32) as u32, sum as u32, (sum >> 32) as u32, 0, 0]
        }
    }

    #[inline(always)]
    fn from_words(w: [u32; MAX_WORDS]) -> Self {
        let (max, sum) = if <F as Element>::WORDS == 1 {
            (w[0] as u64, w[1] as u64)
        } else {
            (w[0] as u64 | (w[1] as u64) << 32, w[2] as u64 | (w[3] as u64) << 32)
        };
        ScaledSum {
            max: F::from_bits(max),
            sum: F::from_bits(sum),
        }
    }
}

/// Merges two [`ScaledSum`]s: the larger maximum, and the other sum scaled
/// down to it by `exp(smaller − larger)`. A NaN maximum wins (NaN in, NaN
/// out); when the larger maximum is infinite the scale would be `inf − inf`,
/// so the sums just add (`+inf`: the result is `+inf`; `-inf`: every element
/// so far is `-inf`, and the result `-inf` whatever the sum).
pub struct LogAddExp;

impl<F: Real> Operator<ScaledSum<F>> for LogAddExp {
    #[inline(always)]
    fn identity() -> ScaledSum<F> {
        ScaledSum {
            max: F::LOWEST,
            sum: F::ZERO,
        }
    }

    #[inline(always)]
    fn combine(a: ScaledSum<F>, b: ScaledSum<F>) -> ScaledSum<F> {
        if a.max.is_nan() {
            return a;
        }
        if b.max.is_nan() {
            return b;
        }
        let (large, small) = if b.max > a.max { (b, a) } else { (a, b) };
        let sum = if large.max.is_finite() {
            large.sum.add(small.sum.mul(small.max.sub(large.max).exp()))
        } else {
            large.sum.add(small.sum)
        };
        ScaledSum { max: large.max, sum }
    }
}

/// `ln Σ exp(x)`, accumulated in `F`, as PyTorch's `logsumexp`: no elements
/// give `-inf`, a NaN gives NaN, a `+inf` gives `+inf`.
pub struct LogSumExp<F>(PhantomData<F>);

impl<F: Real> Statistic for LogSumExp<F> {
    type Value = F;
    type Summary = ScaledSum<F>;
    type Merge = LogAddExp;

    #[inline(always)]
    fn lift(value: F) -> ScaledSum<F> {
        ScaledSum {
            max: value,
            sum: F::ONE,
        }
    }

    /// A full batch of 8 is scaled to its own maximum and merged once,
    /// where merging each element would test and compare every one. A batch
    /// with a NaN or whose maximum is infinite is merged element by
    /// element, as those cases are defined.
    #[inline(always)]
    fn fold_batch(acc: ScaledSum<F>, v: [F; 8]) -> ScaledSum<F> {
        // NaN wins, so that a finite maximum means every `x − max` is ≤ 0: `exp`'s domain.
        let larger = |a: F, b: F| if b > a || b.is_nan() { b } else { a };
        let max = larger(
            larger(larger(v[0], v[1]), larger(v[2], v[3])),
            larger(larger(v[4], v[5]), larger(v[6], v[7])),
        );
        let scaled = |x: F| x.sub(max).exp();
        let sum = scaled(v[0])
            .add(scaled(v[1]))
            .add(scaled(v[2]).add(scaled(v[3])))
            .add(scaled(v[4]).add(scaled(v[5])).add(scaled(v[6]).add(scaled(v[7]))));
        // A NaN element makes the maximum NaN.
        if max.is_finite() {
            LogAddExp::combine(acc, ScaledSum { max, sum })
        } else {
            fold_in_order::<_, LogAddExp, _>(acc, v, Self::lift)
        }
    }

    /// [`Finish::Value`]: `max + ln(sum)` (`-inf` when `max` is; `+inf`
    /// plus anything is `+inf`).
    #[inline(always)]
    unsafe fn finish(summary: ScaledSum<F>, output: &Output, o: u64) {
        if let Finish::State = output.finish {
            return store_state(summary, output.out, o);
        }
        let value = if summary.max.is_finite() {
            summary.max.add(summary.sum.ln())
        } else {
            summary.max
        };
        crate::thread::store_result(output.at::<F>(output.out, o), value);
    }
}

// ---------------------------------------------------------------- counts

/// A test on an element: what [`Count`] counts.
pub trait Predicate<V: Element> {
    fn holds(value: V) -> bool;
}

/// The element is not zero (`-0.0` is zero; NaN is not).
pub struct Nonzero;

impl<V: Element> Predicate<V> for Nonzero {
    #[inline(always)]
    fn holds(value: V) -> bool {
        !value.equals(V::ZERO)
    }
}

/// The element is a NaN.
pub struct IsNan;

impl<V: Element> Predicate<V> for IsNan {
    #[inline(always)]
    fn holds(value: V) -> bool {
        value.is_nan()
    }
}

/// The element is `+inf` or `-inf` (never, for integers).
pub struct IsInf;

impl<V: Element> Predicate<V> for IsInf {
    /// Of the numbers, only `±inf` times 0 is NaN.
    #[inline(always)]
    fn holds(value: V) -> bool {
        !value.is_nan() && value.mul(V::ZERO).is_nan()
    }
}

/// The number of elements (read as `V`) that `P` holds for.
pub struct Count<P, V>(PhantomData<(P, V)>);

/// The number of elements that are not zero.
pub type CountNonzero<V> = Count<Nonzero, V>;
/// The number of NaN elements.
pub type CountNan<V> = Count<IsNan, V>;
/// The number of infinite elements.
pub type CountInf<V> = Count<IsInf, V>;

impl<P: Predicate<V>, V: Element> Statistic for Count<P, V> {
    type Value = V;
    type Summary = u64;
    type Merge = Sum;

    #[inline(always)]
    fn lift(value: V) -> u64 {
        P::holds(value) as u64
    }

    /// [`Finish::Value`] (or [`Finish::State`]): the count, a `u64`;
    /// [`Finish::Any`]: whether it is above 0, [`Finish::All`]: whether it
    /// is `finish_param` (the elements per result), each a `bool` byte.
    #[inline(always)]
    unsafe fn finish(count: u64, output: &Output, o: u64) {
        let flag = match output.finish {
            Finish::Any => count > 0,
            Finish::All => count == output.finish_param,
            _ => return crate::thread::store_element(output.at::<u64>(output.out, o), count),
        };
        device::store_global_u8(output.at::<u8>(output.out, o), flag as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{self, Scalar};

    /// The host sizes the passes' summaries by `abi::Statistic::state_bytes`;
    /// the kernels store and read `8 · HALVES` bytes each.
    #[test]
    fn stored_summaries_have_the_size_the_abi_gives() {
        let size = |halves: u32| 8 * halves as u64;
        let moments = abi::Statistic::Moments;
        assert_eq!(size(Moments::<f32>::HALVES), moments.state_bytes(Scalar::F32));
        assert_eq!(size(Moments::<f64>::HALVES), moments.state_bytes(Scalar::F64));
        let logsumexp = abi::Statistic::LogSumExp;
        assert_eq!(size(ScaledSum::<f32>::HALVES), logsumexp.state_bytes(Scalar::F32));
        assert_eq!(size(ScaledSum::<f64>::HALVES), logsumexp.state_bytes(Scalar::F64));
        assert_eq!(
            size(<u64 as Accumulator>::HALVES),
            abi::Statistic::CountNan.state_bytes(Scalar::U64)
        );
    }
}
