//! The exact sum's kernel: every float of the input added *exactly*, the
//! total rounded once, so that every launch shape, grid, alignment and
//! order gives the same bits, and so does [`crate::exact`] on the CPU.
//!
//! The fast path carries a partial sum as an [`Expansion`], `hi + lo`:
//! each addition to `hi` is Knuth's TwoSum (the rounded sum and its exact
//! error), and the errors go into `lo` with plain additions. Those are
//! exact too whenever every partial sum of errors fits 53 bits: every
//! value, partial sum and error is a multiple of the finest last bit among
//! the values (`finest`), and each error is at most half an ulp of the
//! largest `hi` ever formed (`largest`), so the `adds` errors one thread
//! adds to its `lo` stay below `adds · ulp(largest) / 2`; where expansions
//! combine, every addition is checked (TwoSum, its error zero), so only the
//! most any thread added unchecked counts (`adds`: a thread's share, about
//! 2^11 vectors for 2^30 `f32`s on an H200, not the whole input's length).
//! [`Expansion::is_exact`] checks that bound once, at the end: it holds for
//! the sums of typical data (a span of about 100 bits from the sum's
//! magnitude down to the smallest value's last bit, less the bits of
//! `adds`), and then `hi + lo` is the exact sum, whatever tree the grid's
//! blocks, warps and lanes combined it in. A 16-byte
//! vector of four `f32`s is summed in `f64` first where its nonzero lanes'
//! exponents lie within 27 of each other (exactly, then), so one addition
//! serves four elements.
//!
//! `f64`s have no such bound (an `f64`'s last bit says little about where
//! the sum's bits end): their errors go into `lo` with a second TwoSum
//! ([`Expansion::plus_checked`]) whose own error must be zero, and `lo` is
//! renormalised below half an ulp of `hi` after each vector, so the
//! expansion holds any sum whose bits span about 106.
//!
//! Where the bound does not hold or an addition was not exact (values over
//! a wide range, an infinity or NaN, an `f64` sum past `f64::MAX`), the
//! block that ends the reduction
//! sums the whole input again with [`Exact`]
//! accumulators: slower (one block, local memory, global atomics), and
//! exact always.
//!
//! Which fast accumulator a kernel carries is its map's ([`ExactMap`]):
//! the elements and the NaN-ignoring sum's take the [`Expansion`]
//! ([`ExactSum`]); the squares, whose bits spread twice as wide, a
//! three-`f64` [`Wide`] ([`WideSum`], [`crate::wide`]).
//! [`FastExact`] is what the kernels ask of either.

use crate::abi::{Finish, VECTOR_BYTES};
use crate::device::{self, block_dim_x, thread_idx_x};
use crate::element::{Accumulator, Element, MAX_WORDS};
use crate::exact::{Exact, ExactFloat};
use crate::map::{ElementMap, Identity, Multiply, NanToZero, Square};
use crate::op::{AnyElement, Operator};
use crate::statistic::Real;
use crate::thread::{self, Pairs, Source};
use crate::wide::{Wide, WideSum};
use core::marker::PhantomData;
use core::mem::size_of;

/// A partial sum `hi + lo` with what [`Expansion::is_exact`] needs to know.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Expansion {
    pub hi: f64,
    /// The sum of the rounding errors of the additions to `hi`.
    pub lo: f64,
    /// The finest last bit of the values added, as the exponent field an
    /// `f64` with that ulp would have (`k`: ulp `2^(k - 1075)`);
    /// [`NO_VALUE`] while only zeros were added.
    pub finest: u32,
    /// The largest exponent field of `hi` so far.
    pub largest: u32,
    /// The most errors one thread added to its `lo` unchecked
    /// ([`Expansion::plus`]; a combination's `lo` counts as one).
    pub adds: u32,
    /// An addition checked with TwoSum ([`Expansion::plus_checked`]) was
    /// not exact: `hi + lo` is not the sum.
    pub inexact: bool,
}

/// [`Expansion::finest`] before any nonzero value.
pub const NO_VALUE: u32 = 0xfff;

/// The bits that count `adds` errors (`ceil(log2 adds)`, 0 to 32): all
/// [`Expansion::is_exact`] needs of the count.
#[inline(always)]
fn count_bits(adds: u32) -> u32 {
    32 - adds.saturating_sub(1).leading_zeros()
}

impl Accumulator for Expansion {
    // Five words, not six: `adds` travels as its bits (which is all the
    // bound needs), packed with `finest`, `largest` and `inexact`. A sixth
    // word cost the `f64` axis kernels 13% (H200, 2026-11-29), whose
    // additions are all checked and count nothing.
    const WORDS: u32 = 5;

    #[inline(always)]
    fn to_words(self) -> [u32; MAX_WORDS] {
        let (hi, lo) = (self.hi.to_bits(), self.lo.to_bits());
        [
            hi as u32,
            (hi >> 32) as u32,
            lo as u32,
            (lo >> 32) as u32,
            // 12 bits, 6, 11 and 1.
            self.finest | count_bits(self.adds) << 12 | self.largest << 18 | (self.inexact as u32) << 31,
            0,
        ]
    }

    #[inline(always)]
    fn from_words(w: [u32; MAX_WORDS]) -> Self {
        // The count back as the power of two with its bits (`u32::MAX` for
        // 32): at least the count, and as many bits.
        let bits = (w[4] >> 12) & 0x3f;
        Expansion {
            hi: f64::from_bits(w[0] as u64 | (w[1] as u64) << 32),
            lo: f64::from_bits(w[2] as u64 | (w[3] as u64) << 32),
            finest: w[4] & 0xfff,
            largest: (w[4] >> 18) & 0x7ff,
            adds: if bits >= 32 { u32::MAX } else { 1 << bits },
            inexact: w[4] >> 31 != 0,
        }
    }
}

/// `(s, e)` with `s = a + b` rounded and `s + e == a + b` exactly
/// (Knuth's TwoSum: any magnitudes, no branch; rustc never contracts or
/// reassociates float arithmetic, so the GPU computes it as written).
#[inline(always)]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let b_virtual = s - a;
    (s, (a - (s - b_virtual)) + (b - b_virtual))
}

/// The exponent field of `x` (its high word's bits 20 to 30).
#[inline(always)]
fn exponent_field(x: f64) -> u32 {
    ((x.to_bits() >> 52) & 0x7ff) as u32
}

impl Expansion {
    /// `self + value`, where `value` is a multiple of `2^(finest - 1075)`.
    #[inline(always)]
    pub fn plus(self, value: f64, finest: u32) -> Expansion {
        let (hi, error) = two_sum(self.hi, value);
        Expansion {
            hi,
            lo: self.lo + error,
            finest: Ord::min(self.finest, finest),
            largest: Ord::max(self.largest, exponent_field(hi)),
            adds: self.adds.saturating_add(1),
            inexact: self.inexact,
        }
    }

    /// `self + value`, its error added to `lo` with a second TwoSum whose
    /// own error must be 0 (else the expansion is marked inexact): exact
    /// whatever the values' last bits, as long as the sum fits two `f64`s
    /// (about 106 bits). The `f64` kernel's addition: an `f64`'s last bit
    /// says little about where its sum's bits end, so no bound would do.
    #[inline(always)]
    pub fn plus_checked(self, value: f64) -> Expansion {
        let (hi, error) = two_sum(self.hi, value);
        let (lo, lost) = two_sum(self.lo, error);
        Expansion {
            hi,
            lo,
            // NaN too is `!= 0.0`: an infinity, a NaN or an overflow.
            inexact: self.inexact || lost != 0.0,
            ..self
        }
    }

    /// `hi` and `lo` as the rounded sum and what it leaves out (less than
    /// half an ulp of `hi`): one more TwoSum.
    #[inline(always)]
    pub fn renormalised(self) -> Expansion {
        let (hi, lo) = two_sum(self.hi, self.lo);
        Expansion { hi, lo, ..self }
    }
}

/// Whether every fast accumulator says it is not exact
/// ([`FastAccumulator::is_exact`]), so that every part is summed again by
/// its kernel's exact fallback: `--cfg reduce_exact_fallback_always`, a
/// switch for tests. Only some values (wide exponent ranges, heavy
/// cancellation) reach the fallbacks otherwise; `scripts/test.sh` runs the
/// exact tests with it on the emulator, and a build of the kernels from
/// source passes it on to the PTX (`reduce-host/build/from_source.rs`).
pub const FALLBACK_ALWAYS: bool = cfg!(reduce_exact_fallback_always);

/// A fast path's partial sum ([`Expansion`], [`Wide`]): the sum of no
/// values, whether it holds its values' sum exactly, and that sum handed
/// to the exact accumulators.
pub trait FastAccumulator: Accumulator {
    /// The sum of no values.
    const ZERO: Self;
    /// Whether it holds the exact sum of the values added.
    fn is_exact(self) -> bool;
    /// The exact sum it holds (exact, finite) as an accumulator of `T`s,
    /// for a [`store_state`]: each word is a sum of `T`s or an error of
    /// one, so a multiple of `T`'s unit.
    fn exact_of<T: ExactElement>(self) -> Exact<T>;
}

impl FastAccumulator for Expansion {
    const ZERO: Expansion = Expansion {
        hi: 0.0,
        lo: 0.0,
        finest: NO_VALUE,
        largest: 0,
        adds: 0,
        inexact: false,
    };

    /// Finite, and no thread's partial sum of errors can have needed more
    /// than 53 bits (see the [module](self) docs).
    #[inline(always)]
    fn is_exact(self) -> bool {
        // Each error is at most 2^(largest - 1076) and a multiple of
        // 2^(finest - 1075): `adds` of them fit 53 bits (with a bit to
        // spare) when ceil(log2 adds) + largest <= finest + 52.
        let adds_bits = count_bits(self.adds);
        let finite = self.hi.abs() <= f64::MAX && self.lo.abs() <= f64::MAX;
        !FALLBACK_ALWAYS && finite && !self.inexact && adds_bits + self.largest <= self.finest + 52
    }

    #[inline(never)]
    fn exact_of<T: ExactElement>(self) -> Exact<T> {
        let mut exact = Exact::<T>::new();
        exact.add_f64(self.hi);
        exact.add_f64(self.lo);
        exact
    }
}

/// The exact sum's operator on [`Expansion`]s.
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
        // Checked additions of the errors: where the bound holds they are
        // exact anyway, and the `f64` kernel's expansions rely on them.
        let (hi, error) = two_sum(a.hi, b.hi);
        let (lo, lost) = two_sum(a.lo, b.lo);
        let (lo, lost_too) = two_sum(lo, error);
        Expansion {
            hi,
            lo,
            finest: Ord::min(a.finest, b.finest),
            largest: Ord::max(Ord::max(a.largest, b.largest), exponent_field(hi)),
            // The renormalised `lo` is one error's size: a thread that goes
            // on adding to it adds to one term.
            adds: Ord::max(Ord::max(a.adds, b.adds), 1),
            inexact: a.inexact || b.inexact || lost != 0.0 || lost_too != 0.0,
        }
        .renormalised()
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

/// How an exact sum's fast path adds `T`s: its accumulator, and whether
/// that holds the exact sum at the end. [`ExactSum`]'s [`Expansion`] for
/// the elements, [`WideSum`]'s [`Wide`] for values over more bits (the
/// squares of the elements); which one an [`ExactMap`] says.
pub trait FastExact<T: ExactElement>: Operator<Self::Acc> + AnyElement {
    /// The partial sums the threads carry and the collectives combine.
    type Acc: FastAccumulator;
    /// `acc` plus the lanes of one vector.
    fn add_vector(acc: Self::Acc, words: [u32; 4]) -> Self::Acc;
    /// `acc` plus one element.
    fn add_element(acc: Self::Acc, value: T) -> Self::Acc;
    /// `acc` plus eight elements read one by one (along an axis), added
    /// as cheaply as a vector's lanes.
    fn add_eight(acc: Self::Acc, values: [T; 8]) -> Self::Acc;
    /// The exact sum `acc` holds (exact, finite) rounded once to `T`.
    fn round(acc: Self::Acc) -> T;
}

/// A map the exact sums read their elements through, and the fast path
/// its values need: the elements and the NaN-ignoring sum's (NaN as zero)
/// span what an [`Expansion`] holds; their squares, and the squared
/// deviations from a mean, twice as many bits, so [`Wide`]s
/// ([`crate::wide`]).
///
/// A map may depend on the part it reads (the whole input, a segment or
/// row): each part's is [`ExactMap::of_part`], from the launch's `shifts`
/// (one `T` per part, for [`SquaredDeviation`]; the other maps read none).
pub trait ExactMap<T: ExactElement>: Copy {
    type Fast: FastExact<T>;
    /// Whether the map reads per-part values: the variance's, whose kernels
    /// also read their finish (and correction) from their arguments; the
    /// others' finish is a constant, which keeps their code as it was.
    const READS_SHIFTS: bool;
    /// Whether [`ExactInput`] maps a vector's lanes as it loads them (and
    /// the axis kernel, [`crate::axis::ExactAlong`], each element), rather
    /// than as it adds them: the variance's short map (mapped where
    /// added, its `f64` segmented kernel spilled 28 bytes instead of 16,
    /// and its short segments took 5% longer, H200, 2026-11-30). A long map
    /// (logsumexp's `exp`) must not: the loads would not be in flight
    /// together.
    const MAPS_AS_LOADED: bool = false;
    /// The map of part `part`, the launch's per-part values being the
    /// `T`s at global address `shifts`.
    ///
    /// # Safety
    /// Where the map reads them, `shifts` holds a `T` for `part`.
    unsafe fn of_part(shifts: u64, part: u64) -> Self;
    /// `x` mapped.
    fn apply(self, x: T) -> T;
    /// What the part's rounded exact `sum` of mapped values becomes where
    /// the kernel stores it as it is ([`Finish::Value`]): itself, but
    /// logsumexp's `max + ln(sum)` ([`ScaledExp`]).
    #[inline(always)]
    fn finish(self, sum: T) -> T {
        sum
    }
}

/// The maps that read nothing per part: each is its [`ElementMap`].
macro_rules! exact_map {
    ($($map:ident: $fast:ident;)*) => {$(
        impl<T: ExactElement> ExactMap<T> for $map
        where
            $fast: FastExact<T>,
        {
            type Fast = $fast;
            const READS_SHIFTS: bool = false;

            #[inline(always)]
            unsafe fn of_part(_shifts: u64, _part: u64) -> Self {
                $map
            }

            #[inline(always)]
            fn apply(self, x: T) -> T {
                <$map as ElementMap<T>>::map(x)
            }
        }
    )*};
}
exact_map! {
    Identity: ExactSum;
    NanToZero: ExactSum;
    Square: WideSum;
}

/// `(x − mean)²`, the difference and the square each rounded to `T`,
/// `mean` the part's (the `T` at `shifts` for the part): what the exact
/// variance sums in its second pass, the means being its first's. A mean
/// that is not finite (an infinite or NaN element, or a sum past the
/// largest float) makes every value NaN, so the variance is NaN, as
/// [`crate::statistic`]'s is.
#[derive(Clone, Copy)]
pub struct SquaredDeviation<T> {
    mean: T,
}

impl<T: ExactElement> ExactMap<T> for SquaredDeviation<T>
where
    WideSum: FastExact<T>,
{
    type Fast = WideSum;
    const READS_SHIFTS: bool = true;
    const MAPS_AS_LOADED: bool = true;

    #[inline(always)]
    unsafe fn of_part(shifts: u64, part: u64) -> Self {
        SquaredDeviation {
            mean: thread::load_element::<T>(device::to_global(shifts) + part * size_of::<T>() as u64),
        }
    }

    #[inline(always)]
    fn apply(self, x: T) -> T {
        let deviation = x.sub(self.mean);
        if self.mean.is_finite() {
            deviation.mul(deviation)
        } else {
            T::nan().unwrap_or(T::ZERO)
        }
    }
}

/// `exp(x − max)`, `max` the part's largest element (the `T` at `shifts`
/// for the part), on logsumexp's grid ([`ExactElement::exp_on_grid`]):
/// what the exact logsumexp sums in its second pass, its first having
/// found the maxima; a part's sum becomes `max + ln(sum)`
/// ([`ExactMap::finish`]). A maximum that is not finite is the result
/// itself (NaN: an element is NaN; `+inf`: one is `+inf`; `-inf`: every
/// element is `-inf`, or there is none), so its terms are all `+0.0`.
#[derive(Clone, Copy)]
pub struct ScaledExp<T> {
    max: T,
}

impl<T: ExactElement> ScaledExp<T> {
    /// The map of a part whose largest element is `max` (NaN if any is
    /// NaN): what the host's fold computes with.
    #[inline(always)]
    pub fn new(max: T) -> Self {
        ScaledExp { max }
    }
}

impl<T: ExactElement> ExactMap<T> for ScaledExp<T>
where
    WideSum: FastExact<T>,
{
    type Fast = WideSum;
    const READS_SHIFTS: bool = true;

    #[inline(always)]
    unsafe fn of_part(shifts: u64, part: u64) -> Self {
        ScaledExp {
            max: thread::load_element::<T>(device::to_global(shifts) + part * size_of::<T>() as u64),
        }
    }

    /// `x ≤ max` whenever `max` is finite (`x − max` is `-inf` for
    /// `x = -inf`, or where it overflows: `exp` takes both), so every term
    /// lies in `[0, 1]`, the maximum's own being 1.
    #[inline(always)]
    fn apply(self, x: T) -> T {
        if self.max.is_finite() {
            T::exp_on_grid(x.sub(self.max))
        } else {
            T::ZERO
        }
    }

    /// The sum is at least 1 where `max` is finite (the maximum's term),
    /// so `ln`'s domain.
    #[inline(always)]
    fn finish(self, sum: T) -> T {
        if self.max.is_finite() {
            self.max.add(sum.ln())
        } else {
            self.max.canonical()
        }
    }
}

/// The fast path's accumulator for `T`s read through the map `M`.
pub type FastAcc<T, M> = <<M as ExactMap<T>>::Fast as FastExact<T>>::Acc;

/// A float type the exact sums read: how a 16-byte vector of it is mapped
/// (how it is added and rounded back: [`FastExact`]).
pub trait ExactElement: Element + ExactFloat + Real {
    /// One vector's lanes, each mapped by `map` (what the sum adds: the
    /// elements, NaN as zero, the squares or the squared deviations).
    fn map_vector<M: ExactMap<Self>>(map: M, words: [u32; 4]) -> [u32; 4];
    /// `e^x` for `x ≤ 0` ([`crate::math`]), rounded to a multiple of
    /// `2^-64` (`f32`) or `2^-100` (`f64`) below `2^-41` (`2^-48`), by
    /// adding that power of two and taking it away: so the terms of an
    /// exact logsumexp span at most 64 (100) bits below the largest, 1,
    /// which a [`Wide`] holds with the bits of any count. Each term moves
    /// by at most `2^-65` (`2^-101`) against a sum of at least 1.
    fn exp_on_grid(x: Self) -> Self;
}

/// An `f32`'s last bit, `2^(max(field, 1) - 150)`, in [`Expansion::finest`]'s scale.
const F32_FINEST_OFFSET: u32 = 1075 - 150;

/// A vector of four `f32`s as the exact sums read it: the finest last bit
/// of its lanes (in [`Expansion::finest`]'s scale; [`NO_VALUE`] if all are
/// zero), and whether the four sum exactly in an `f64`.
#[inline(always)]
pub(crate) fn f32_lanes(words: [u32; 4]) -> (u32, bool) {
    // The lanes' exponent fields (magnitudes' bits, so the largest has
    // the largest field); a zero lane has no last bit to keep.
    let magnitude = words.map(|w| w & 0x7fff_ffff);
    let largest = Ord::max(
        Ord::max(magnitude[0], magnitude[1]),
        Ord::max(magnitude[2], magnitude[3]),
    ) >> 23;
    let nonzero = magnitude.map(|m| if m == 0 { u32::MAX } else { m });
    let smallest = Ord::min(Ord::min(nonzero[0], nonzero[1]), Ord::min(nonzero[2], nonzero[3])) >> 23;
    let all_zero = smallest == u32::MAX >> 23;
    let smallest = Ord::max(smallest, 1);
    let finest = if all_zero {
        NO_VALUE
    } else {
        smallest + F32_FINEST_OFFSET
    };
    // Every lane is a multiple of 2^(smallest - 150) below
    // 2^(largest - 126), so four of them sum exactly within 53 bits
    // when largest - smallest <= 53 - 24 - 2 (an all-zero vector too).
    (finest, all_zero || largest.wrapping_sub(smallest) <= 27)
}

impl ExactElement for f32 {
    #[inline(always)]
    fn map_vector<M: ExactMap<f32>>(map: M, words: [u32; 4]) -> [u32; 4] {
        words.map(|w| map.apply(f32::from_bits(w)).to_bits())
    }

    #[inline(always)]
    fn exp_on_grid(x: f32) -> f32 {
        // 2^-41, whose ulp is 2^-64.
        const FLOOR: f32 = 1.0 / (1u64 << 41) as f32;
        let e = crate::math::exp_f32(x);
        if e < FLOOR {
            (e + FLOOR) - FLOOR
        } else {
            e
        }
    }
}

impl FastExact<f32> for ExactSum {
    type Acc = Expansion;

    #[inline(always)]
    fn add_vector(acc: Expansion, words: [u32; 4]) -> Expansion {
        let lane = |k: usize| f64::from(f32::from_bits(words[k]));
        let (finest, summable) = f32_lanes(words);
        if summable {
            acc.plus((lane(0) + lane(1)) + (lane(2) + lane(3)), finest)
        } else {
            acc.plus(lane(0), finest)
                .plus(lane(1), finest)
                .plus(lane(2), finest)
                .plus(lane(3), finest)
        }
    }

    #[inline(always)]
    fn add_eight(acc: Expansion, values: [f32; 8]) -> Expansion {
        // Written out: a loop over lanes built the vectors in local memory.
        let w = values.map(f32::to_bits);
        <Self as FastExact<f32>>::add_vector(
            <Self as FastExact<f32>>::add_vector(acc, [w[0], w[1], w[2], w[3]]),
            [w[4], w[5], w[6], w[7]],
        )
    }

    #[inline(always)]
    fn add_element(acc: Expansion, value: f32) -> Expansion {
        let magnitude = value.to_bits() & 0x7fff_ffff;
        let finest = if magnitude == 0 {
            NO_VALUE
        } else {
            Ord::max(magnitude >> 23, 1) + F32_FINEST_OFFSET
        };
        acc.plus(f64::from(value), finest)
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
    fn map_vector<M: ExactMap<f64>>(map: M, words: [u32; 4]) -> [u32; 4] {
        let lane = |k: usize| {
            map.apply(f64::from_bits(words[2 * k] as u64 | (words[2 * k + 1] as u64) << 32))
                .to_bits()
        };
        let (a, b) = (lane(0), lane(1));
        [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]
    }

    #[inline(always)]
    fn exp_on_grid(x: f64) -> f64 {
        // 2^-48, whose ulp is 2^-100.
        const FLOOR: f64 = 1.0 / (1u64 << 48) as f64;
        let e = crate::math::exp_f64(x);
        if e < FLOOR {
            (e + FLOOR) - FLOOR
        } else {
            e
        }
    }
}

impl FastExact<f64> for ExactSum {
    type Acc = Expansion;

    #[inline(always)]
    fn add_vector(acc: Expansion, words: [u32; 4]) -> Expansion {
        let lane = |k: usize| f64::from_bits(words[2 * k] as u64 | (words[2 * k + 1] as u64) << 32);
        // `lo` back below half an ulp of `hi`, so it has room for the
        // next errors' low bits.
        acc.plus_checked(lane(0)).plus_checked(lane(1)).renormalised()
    }

    #[inline(always)]
    fn add_eight(acc: Expansion, v: [f64; 8]) -> Expansion {
        // As `add_vector`: `lo` renormalised after each pair.
        let pair = |acc: Expansion, a: f64, b: f64| acc.plus_checked(a).plus_checked(b).renormalised();
        pair(pair(pair(pair(acc, v[0], v[1]), v[2], v[3]), v[4], v[5]), v[6], v[7])
    }

    #[inline(always)]
    fn add_element(acc: Expansion, value: f64) -> Expansion {
        acc.plus_checked(value).renormalised()
    }

    #[inline(always)]
    fn round(total: Expansion) -> f64 {
        // TwoSum's sum is `hi + lo` rounded once.
        total.renormalised().hi
    }
}

/// How an exact kernel finishes each part's rounded exact sum: the
/// [`Finish`], and for [`Finish::Variance`] and [`Finish::Root`] the
/// variance's correction.
#[derive(Clone, Copy)]
pub struct ExactFinish {
    pub finish: Finish,
    pub correction: f64,
}

impl ExactFinish {
    /// `finish`, with no correction (the sums and the mean).
    #[inline(always)]
    pub const fn plain(finish: Finish) -> Self {
        ExactFinish {
            finish,
            correction: 0.0,
        }
    }

    /// A part's rounded exact `sum` as it asks for it: divided by the
    /// `count` of its elements rounded to `T` for [`Finish::Mean`]
    /// (`ExactMean`: `sum / count as T`, as the host's `divide_by_count`);
    /// for [`Finish::Variance`] (a sum of squared deviations) divided by
    /// `max(0, count − correction)` (in `f64`, then rounded to `T`), and for
    /// [`Finish::Root`] that quotient's square root (correctly rounded);
    /// else as the part's `map` finishes it ([`ExactMap::finish`]: itself
    /// but for logsumexp). The host's folds compute the same, so the same
    /// bits. Only the kernels of a map `M` that reads per-part values (the
    /// variance's, logsumexp's) have the variance's code.
    #[inline(always)]
    pub fn of<T: ExactElement, M: ExactMap<T>>(self, map: M, sum: T, count: u64) -> T {
        match self.finish {
            Finish::Mean => sum.div(T::from_count(count)),
            Finish::Variance | Finish::Root if M::READS_SHIFTS => {
                let divisor = count as f64 - self.correction;
                let variance = sum.div(T::from_f64(if divisor > 0.0 { divisor } else { 0.0 }));
                if self.finish == Finish::Root {
                    variance.sqrt()
                } else {
                    variance
                }
            }
            _ => map.finish(sum),
        }
    }
}

/// Where an input's element `index` lies: `offset(index)` elements after
/// its first.
pub trait ElementLayout: Copy {
    /// Whether an offset is computed (a product, [`Runs`]): then a
    /// thread's loads are written out
    /// ([`crate::thread::Source::LOADS_WRITTEN_OUT`]).
    const COMPUTES_OFFSETS: bool = false;
    /// The element offset of element `index`.
    fn offset(self, index: u64) -> u64;
    /// Whether its vectors can be read as 16-byte vectors (then the byte
    /// offset of element 0 within its 16-byte group) for an input at
    /// `input`, `lanes` elements to a vector.
    fn misalignment(self, input: u64, lanes: u64) -> Option<u64>;
}

/// Elements one after the other.
#[derive(Clone, Copy)]
pub struct Contiguous;

impl ElementLayout for Contiguous {
    #[inline(always)]
    fn offset(self, index: u64) -> u64 {
        index
    }

    #[inline(always)]
    fn misalignment(self, input: u64, _lanes: u64) -> Option<u64> {
        Some(input % VECTOR_BYTES)
    }
}

/// Runs of `run_len` contiguous elements, each `run_pitch` elements after
/// the one before: the reduced axes of a view that lie apart in memory,
/// read as one row (of `runs · run_len` elements: with runs of none,
/// no element is read).
#[derive(Clone, Copy)]
pub struct Runs {
    run_len: u64,
    run_pitch: u64,
    /// `⌈2^64 / run_len⌉` (0 for runs of one element or none): the
    /// reciprocal [`ElementLayout::offset`] multiplies by.
    reciprocal: u64,
}

impl Runs {
    /// Runs of `run_len` elements, `run_pitch` apart. One 64-bit division
    /// here, so that each offset takes a multiplication instead of a 32-bit
    /// division: the exact sums of 1024 rows of 64 runs took 5–9% less
    /// time (H200, 2026-12-01, `bench-results/2026-12-01-ptx-stores/`).
    #[inline(always)]
    pub fn new(run_len: u64, run_pitch: u64) -> Self {
        // `checked_div`: no panic path in the PTX (and none for 0).
        let reciprocal = match run_len {
            0 | 1 => 0,
            len => (u64::MAX.checked_div(len).unwrap_or(0)).wrapping_add(1),
        };
        Runs {
            run_len,
            run_pitch,
            reciprocal,
        }
    }
}

impl ElementLayout for Runs {
    const COMPUTES_OFFSETS: bool = true;

    /// The run by the reciprocal where the index and the run fit 32 bits
    /// (then `⌊index · ⌈2^64 / run_len⌉ / 2^64⌋` is the quotient exactly:
    /// the product exceeds `index / run_len` by under `2^-32`, less than
    /// the `1 / run_len` the fraction stays short of the next integer); a
    /// 64-bit division otherwise.
    #[inline(always)]
    fn offset(self, index: u64) -> u64 {
        let (run, at) = if (index | self.run_len) >> 32 == 0 {
            let run = match self.run_len {
                0 => 0,
                1 => index,
                _ => ((u128::from(index) * u128::from(self.reciprocal)) >> 64) as u64,
            };
            // Below 2^32 both: the 32-bit product.
            (
                run,
                u64::from(index as u32 - (run as u32).wrapping_mul(self.run_len as u32)),
            )
        } else {
            let run = index.checked_div(self.run_len).unwrap_or(0);
            (run, index - run * self.run_len)
        };
        run * self.run_pitch + at
    }

    /// Vectors only where none straddles two runs: the input aligned, and
    /// the runs' lengths and pitch whole vectors.
    #[inline(always)]
    fn misalignment(self, input: u64, lanes: u64) -> Option<u64> {
        let whole = input.is_multiple_of(VECTOR_BYTES)
            && self.run_len.is_multiple_of(lanes)
            && self.run_pitch.is_multiple_of(lanes);
        whole.then_some(0)
    }
}

/// One array of `T`s, read for the exact sum, each element mapped by `map`
/// as it is read ([`Identity`]: the sum; [`crate::map::NanToZero`]: the
/// NaN-ignoring sum; a [`SquaredDeviation`]: the variance's second pass),
/// its elements where `L` puts them.
#[derive(Clone, Copy)]
pub struct ExactInput<T, M = Identity, L = Contiguous> {
    pub input: u64,
    map: M,
    layout: L,
    element: PhantomData<T>,
}

impl<T, M> ExactInput<T, M> {
    /// The array at global address `input`, read through `map`.
    #[inline(always)]
    pub fn new(input: u64, map: M) -> Self {
        ExactInput::laid_out(input, map, Contiguous)
    }
}

impl<T, M, L> ExactInput<T, M, L> {
    /// The array whose first element is at global address `input`, the
    /// others where `layout` puts them, read through `map`.
    #[inline(always)]
    pub fn laid_out(input: u64, map: M, layout: L) -> Self {
        ExactInput {
            input,
            map,
            layout,
            element: PhantomData,
        }
    }
}

impl<T: ExactElement, M: ExactMap<T>, L: ElementLayout> Source<FastAcc<T, M>> for ExactInput<T, M, L> {
    const LANES: u64 = VECTOR_BYTES / size_of::<T>() as u64;
    const LOADS_WRITTEN_OUT: bool = L::COMPUTES_OFFSETS;

    #[inline(always)]
    fn common_misalignment(&self) -> Option<u64> {
        self.layout.misalignment(self.input, Self::LANES)
    }

    /// The vector's lanes, mapped here only by a map that
    /// [maps as loaded](ExactMap::MAPS_AS_LOADED).
    #[inline(always)]
    unsafe fn vector(&self, index: u64) -> [u32; 4] {
        let offset = self.layout.offset(index);
        let words = device::load_global_nc_v4(self.input + offset * size_of::<T>() as u64);
        if M::MAPS_AS_LOADED {
            T::map_vector(self.map, words)
        } else {
            words
        }
    }

    /// The lanes mapped by the part's map (unless [`Source::vector`] did),
    /// after the loads: mapped in `vector`, logsumexp's `exp` kept
    /// `for_each_strided`'s four loads from being in flight together (their
    /// array went to local memory), and its `f32` pass ran at a third of
    /// the bandwidth (H200, 2026-11-30).
    #[inline(always)]
    fn fold<O: Operator<FastAcc<T, M>> + AnyElement>(
        &self,
        acc: FastAcc<T, M>,
        words: [u32; 4],
        _index: u64,
    ) -> FastAcc<T, M> {
        if M::MAPS_AS_LOADED {
            M::Fast::add_vector(acc, words)
        } else {
            M::Fast::add_vector(acc, T::map_vector(self.map, words))
        }
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> FastAcc<T, M> {
        self.fold_element::<M::Fast>(FastAcc::<T, M>::ZERO, index)
    }

    /// One addition, as a vector's lanes are added, not the combination of
    /// two accumulators ([`ExactSum`]'s takes four TwoSums).
    #[inline(always)]
    unsafe fn fold_element<O: Operator<FastAcc<T, M>> + AnyElement>(
        &self,
        acc: FastAcc<T, M>,
        index: u64,
    ) -> FastAcc<T, M> {
        let offset = self.layout.offset(index);
        M::Fast::add_element(acc, mapped_element::<T, M>(self.input, self.map, offset))
    }
}

/// Two arrays of `T`s read for the exact dot product: each pair's product
/// `a[i] * b[i]` rounded to `T`, read as the dot product reads it
/// ([`Pairs`]`<`[`Multiply`]`>`), added by [`WideSum`] (products spread
/// over twice their factors' bits, as squares do).
pub struct ExactProducts<T> {
    pairs: Pairs<Multiply>,
    element: PhantomData<T>,
}

impl<T> Clone for ExactProducts<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ExactProducts<T> {}

impl<T: ExactElement> ExactProducts<T> {
    /// The pairs of the arrays at global addresses `a` and `b`.
    #[inline(always)]
    pub fn new(a: u64, b: u64) -> Self {
        ExactProducts {
            pairs: Pairs::new(a, b),
            element: PhantomData,
        }
    }

    /// Product `index`, rounded to `T`.
    ///
    /// # Safety
    /// `index` is in range of both arrays.
    #[inline(always)]
    pub unsafe fn product(&self, index: u64) -> T {
        Source::<T>::element(&self.pairs, index)
    }
}

impl<T: ExactElement> Source<Wide> for ExactProducts<T>
where
    WideSum: FastExact<T, Acc = Wide>,
{
    const LANES: u64 = VECTOR_BYTES / size_of::<T>() as u64;

    #[inline(always)]
    fn common_misalignment(&self) -> Option<u64> {
        Source::<T>::common_misalignment(&self.pairs)
    }

    /// The vector's products, as `T`s.
    #[inline(always)]
    unsafe fn vector(&self, index: u64) -> [u32; 4] {
        Source::<T>::vector(&self.pairs, index)
    }

    #[inline(always)]
    fn fold<O: Operator<Wide> + AnyElement>(&self, acc: Wide, words: [u32; 4], _index: u64) -> Wide {
        <WideSum as FastExact<T>>::add_vector(acc, words)
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> Wide {
        self.fold_element::<WideSum>(Wide::ZERO, index)
    }

    /// One addition, as a vector's lanes are added.
    #[inline(always)]
    unsafe fn fold_element<O: Operator<Wide> + AnyElement>(&self, acc: Wide, index: u64) -> Wide {
        <WideSum as FastExact<T>>::add_element(acc, self.product(index))
    }
}

/// Words of an exact sum's state of `T`s, as [`store_state`] writes it and
/// [`merge_states`] reads it: the exact accumulator's digits (normalised,
/// least significant first, as `i64`s), then counts of NaNs, `+inf`s and
/// `-inf`s. The slow path's global scratch has the same layout.
pub const fn scratch_words<T: ExactFloat>() -> usize {
    T::WORDS_LEN + 3
}

/// Writes `exact`'s state ([`scratch_words`] words) to `out`.
///
/// # Safety
/// `out` is [`scratch_words`] writable, 8-byte aligned words.
#[inline(never)]
pub unsafe fn store_state<T: ExactElement>(exact: Exact<T>, out: u64) {
    let (digits, specials) = exact.parts();
    for (word, &digit) in digits.as_ref().iter().enumerate() {
        device::store_global_u64(out + 8 * word as u64, digit as u64);
    }
    for (k, &count) in specials.iter().enumerate() {
        device::store_global_u64(out + 8 * (T::WORDS_LEN + k) as u64, count);
    }
}

/// Thread 0 reads the state at `scratch` (digits at most `adds` times
/// 2^32 in magnitude) back into an accumulator.
///
/// # Safety
/// `scratch` is [`scratch_words`] readable, 8-byte aligned words.
unsafe fn read_state<T: ExactElement>(scratch: u64, adds: u32) -> Exact<T> {
    let mut total = Exact::<T>::new();
    let mut digits = T::ZERO_WORDS;
    for (word, digit) in digits.as_mut().iter_mut().enumerate() {
        *digit = device::load_relaxed_gpu_u64(scratch + 8 * word as u64) as i64;
    }
    let specials = [0, 1, 2].map(|k| device::load_relaxed_gpu_u64(scratch + 8 * (T::WORDS_LEN + k) as u64));
    total.set_parts(digits, specials, adds);
    total
}

/// The slow path: the block sums the `len` values `value(index)` again
/// (the elements, mapped; or products), each thread into an [`Exact`],
/// which it adds to the words at `scratch` (zeroed here first); thread 0
/// gets the exact sum rounded.
///
/// `value` is best a `move` closure: one holding a reference makes its
/// caller keep the referent in local memory, a store on every thread's
/// path, not only the exact pass's.
///
/// # Safety
/// Every thread of the block calls it together; `value` may be called
/// for every index below `len`; `scratch` is [`scratch_words`] writable,
/// 8-byte aligned words that no other block uses during the launch.
#[inline(never)]
pub unsafe fn sum_exactly<T: ExactElement>(len: u64, scratch: u64, value: impl Fn(u64) -> T) -> Option<T> {
    add_into_scratch::<T>(len, scratch, value);
    (thread_idx_x() == 0).then(|| read_state::<T>(scratch, block_dim_x()).round())
}

/// [`sum_exactly`], thread 0 writing the exact state to `out` ([`store_state`]).
///
/// # Safety
/// As [`sum_exactly`] and [`store_state`].
#[inline(never)]
pub unsafe fn sum_exactly_as_state<T: ExactElement>(len: u64, scratch: u64, out: u64, value: impl Fn(u64) -> T) {
    add_into_scratch::<T>(len, scratch, value);
    if thread_idx_x() == 0 {
        store_state(read_state::<T>(scratch, block_dim_x()), out);
    }
}

/// Element `index` of the `T`s at `input`, mapped by `map`: what the exact
/// pass adds for a sum of one array.
///
/// # Safety
/// `index` is in range of the array at `input`.
#[inline(always)]
pub unsafe fn mapped_element<T: ExactElement, M: ExactMap<T>>(input: u64, map: M, index: u64) -> T {
    map.apply(thread::load_element::<T>(input + index * size_of::<T>() as u64))
}

/// The block's exact sum of the `len` values `value(index)`, as digits
/// and counts at `scratch` (zeroed here first): each thread's [`Exact`]
/// added with integer atomics. Ends with a barrier.
///
/// # Safety
/// As [`sum_exactly`].
#[inline(always)]
unsafe fn add_into_scratch<T: ExactElement>(len: u64, scratch: u64, value: impl Fn(u64) -> T) {
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
        exact.add(value(index));
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
}

/// The sum of the `count` states at `states` (each [`scratch_words`]
/// words, as [`store_state`] writes them): each thread adds up some of the
/// words, into `scratch`; thread 0 gets the total. Integer additions, so
/// the result is the exact sum of every value the states hold, whatever
/// their order.
///
/// # Safety
/// Every thread of the block calls it together; `states` holds `count`
/// readable states and `count < 2^30` (the digits' sums stay inside an
/// `i64`); `scratch` is [`scratch_words`] writable, 8-byte aligned words
/// that no other block uses during the launch.
#[inline(never)]
pub unsafe fn merge_states<T: ExactElement>(states: u64, count: u64, scratch: u64) -> Option<Exact<T>> {
    let words = scratch_words::<T>() as u64;
    let mut word = thread_idx_x() as u64;
    while word < words {
        let mut sum = 0u64;
        for state in 0..count {
            sum = sum.wrapping_add(device::load_global_nc_u64(states + 8 * (state * words + word)));
        }
        device::store_global_u64(scratch + 8 * word, sum);
        word += block_dim_x() as u64;
    }
    device::thread_fence_gpu();
    device::sync_threads();
    (thread_idx_x() == 0).then(|| read_state::<T>(scratch, Ord::max(count, 1) as u32))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A value of `kind` from the 64 bits `h`: uniform in (-1, 1) (typical),
    /// or with an exponent anywhere in `f64`'s range (wide).
    fn value(h: u64, wide: bool) -> f64 {
        let unit = (h >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        if wide {
            unit * 2f64.powi((h % 2000) as i32 - 1040)
        } else {
            unit
        }
    }

    pub(crate) fn hashes(seed: u64, n: usize) -> impl Iterator<Item = u64> {
        (0..n as u64).map(move |i| {
            let mut z = (i + seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^ (z >> 31)
        })
    }

    /// Every element's offset in runs is the divided one: run lengths at
    /// the edges of the reciprocal (1, powers of two, just below 2^32) and
    /// random ones of every width, indices at the ends of each run and of
    /// 32 bits, random ones, and some past 32 bits (the division).
    #[test]
    fn offsets_in_runs_are_the_quotients() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |time| time.as_nanos() as u64);
        println!("seed {seed}");
        let mut random = hashes(seed, 1 << 20);
        let mut next = move || random.next().unwrap_or(0);
        let mut lens: Vec<u64> = vec![1, 2, 3, 4, 7, 1000, 4096, 65_535, 65_536, (1 << 31) - 1, 1 << 31];
        lens.extend([(1u64 << 32) - 2, (1 << 32) - 1, 1 << 32, 5 << 33]);
        lens.extend((0..300).map(|_| Ord::max(next() >> (next() % 64), 1)));
        for len in lens {
            let pitch = len.wrapping_mul(3).wrapping_add(next() % 64) >> 2;
            let runs = Runs::new(len, pitch);
            let mut indices: Vec<u64> = vec![0, 1, len - 1, len, len + 1, 2 * len - 1, (1 << 32) - 1, (1 << 32) - 2];
            indices.extend([1 << 32, u64::MAX / 2]);
            indices.extend((0..200).map(|_| next() >> 32));
            indices.extend((0..20).map(|_| next() >> (next() % 64)));
            for index in indices {
                let want = (index / len).wrapping_mul(pitch).wrapping_add(index % len);
                assert_eq!(
                    runs.offset(index),
                    want,
                    "index {index}, runs of {len}, pitch {pitch} (seed {seed})"
                );
            }
        }
    }

    /// Folds `values` as threads would (in `chunks`), then combines the
    /// chunks' expansions pairwise: the kernel's two kinds of addition.
    fn fold_and_combine(values: &[f64], chunk: usize) -> Expansion {
        let mut parts: Vec<Expansion> = values
            .chunks(chunk)
            .map(|chunk| {
                chunk.iter().fold(Expansion::ZERO, |acc, &x| {
                    <ExactSum as FastExact<f64>>::add_element(acc, x)
                })
            })
            .collect();
        while parts.len() > 1 {
            parts = parts
                .chunks(2)
                .map(|pair| pair.iter().fold(Expansion::ZERO, |acc, &x| ExactSum::combine(acc, x)))
                .collect();
        }
        parts.first().copied().unwrap_or(Expansion::ZERO)
    }

    fn exact(values: &[f64]) -> f64 {
        let mut sum = Exact::<f64>::new();
        values.iter().for_each(|&x| sum.add(x));
        sum.round()
    }

    #[test]
    fn typical_sums_take_the_fast_path_and_are_exact() {
        for (seed, n) in [(1, 10), (2, 1000), (3, 100_000), (4, 1 << 20)] {
            let values: Vec<f64> = hashes(seed, n).map(|h| value(h, false)).collect();
            for chunk in [1, 7, 64, 1000] {
                let total = fold_and_combine(&values, chunk);
                assert!(total.is_exact(), "n = {n}, chunks of {chunk}: {total:?}");
                assert_eq!(
                    <ExactSum as FastExact<f64>>::round(total).to_bits(),
                    exact(&values).to_bits(),
                    "n = {n}"
                );
                // As a state: the same sum.
                assert_eq!(total.exact_of::<f64>().round().to_bits(), exact(&values).to_bits());
            }
        }
    }

    #[test]
    fn a_threads_share_bounds_its_errors_not_the_length() {
        // 2^20 f32s of 24 random bits and one 2^-60: the errors' span,
        // `largest - finest`, is about 41 bits, so the input's length
        // (20 bits) would break the bound; a thread's 256 additions (8
        // bits) do not.
        let mut values: Vec<f32> = hashes(9, 1 << 20).map(|h| value(h, false) as f32).collect();
        values[12_345] = 2f32.powi(-60);
        let mut parts: Vec<Expansion> = values
            .chunks(256)
            .map(|chunk| {
                chunk.iter().fold(Expansion::ZERO, |acc, &x| {
                    <ExactSum as FastExact<f32>>::add_element(acc, x)
                })
            })
            .collect();
        while parts.len() > 1 {
            parts = parts
                .chunks(2)
                .map(|pair| ExactSum::combine(pair[0], pair[1]))
                .collect();
        }
        let total = parts[0];
        assert_eq!(total.adds, 256);
        // Through the collectives' words: the count as its bits.
        for adds in [0, 1, 2, 3, 255, 256, 257, 1 << 31, (1 << 31) + 1, u32::MAX] {
            let sent = Expansion {
                adds,
                inexact: adds % 2 == 1,
                ..total
            };
            let got = Expansion::from_words(sent.to_words());
            assert_eq!(count_bits(got.adds), count_bits(adds), "{adds}");
            assert!(got.adds >= adds, "{adds}");
            assert_eq!(Expansion { adds, ..got }, sent, "{adds}");
        }
        assert!(64 - (values.len() as u64 - 1).leading_zeros() + total.largest > total.finest + 52);
        assert!(total.is_exact(), "{total:?}");
        let mut reference = Exact::<f32>::new();
        values.iter().for_each(|&x| reference.add(x));
        assert_eq!(
            <ExactSum as FastExact<f32>>::round(total).to_bits(),
            reference.round().to_bits()
        );
    }

    #[test]
    fn whenever_it_says_exact_it_is() {
        // Wide values: mostly not exact, and where it says so, it must be.
        let mut fast = 0;
        for seed in 0..300 {
            let n = 1 + (seed as usize * 7) % 50;
            let values: Vec<f64> = hashes(seed, n).map(|h| value(h, seed % 3 != 0)).collect();
            let total = fold_and_combine(&values, 1 + seed as usize % 5);
            if total.is_exact() {
                fast += 1;
                assert_eq!(
                    <ExactSum as FastExact<f64>>::round(total).to_bits(),
                    exact(&values).to_bits(),
                    "seed {seed}: {values:?}"
                );
            }
        }
        assert!(fast > 50, "only {fast} of 300 took the fast path");
        // Errors 1, 2^-7 + 2^-59 and -2^-7 under hi = 2^53: their sum
        // needs 60 bits, so `lo` rounds, and the tie it leaves rounds the
        // wrong way. The bound must send it to the exact pass.
        let tie = [2f64.powi(53), 1.0, 2f64.powi(-7) + 2f64.powi(-59), -2f64.powi(-7)];
        let total = fold_and_combine(&tie, 4);
        assert!(
            !total.is_exact() || <ExactSum as FastExact<f64>>::round(total) == exact(&tie),
            "{total:?}"
        );
        assert_eq!(exact(&tie), 2f64.powi(53) + 2.0);
        // f32 vectors in one thread, errors summed with plain additions:
        // 2^-24 and 2^-80 need 57 bits together, so `lo` rounds and leaves
        // an f32 tie that rounds the wrong way. The bound must catch it.
        let vectors = [
            [1.0f32, 2f32.powi(30), 2f32.powi(-24), -2f32.powi(30)],
            [2f32.powi(-80), 0.0, 0.0, 0.0],
        ];
        let total = vectors.iter().fold(Expansion::ZERO, |acc, v| {
            <ExactSum as FastExact<f32>>::add_vector(acc, v.map(f32::to_bits))
        });
        let mut reference = Exact::<f32>::new();
        vectors.iter().flatten().for_each(|&x| reference.add(x));
        assert_eq!(reference.round(), 1.0 + 2f32.powi(-23));
        assert!(
            !total.is_exact() || <ExactSum as FastExact<f32>>::round(total) == reference.round(),
            "{total:?}"
        );
        // An exact f32 expansion as a state: the same digits as the values'.
        let typical = [[1.5f32, -2.0, 2f32.powi(-30), 3e7], [0.25, 1e-3, -7.0, 2f32.powi(-40)]];
        let total = typical.iter().fold(Expansion::ZERO, |acc, v| {
            <ExactSum as FastExact<f32>>::add_vector(acc, v.map(f32::to_bits))
        });
        let mut reference = Exact::<f32>::new();
        typical.iter().flatten().for_each(|&x| reference.add(x));
        assert!(total.is_exact(), "{total:?}");
        assert_eq!(total.exact_of::<f32>().parts().0, reference.parts().0);
        // Specials and overflow never do.
        for values in [
            vec![1.0, f64::INFINITY],
            vec![f64::NAN],
            vec![f64::MAX, f64::MAX, -f64::MAX],
        ] {
            assert!(!fold_and_combine(&values, 2).is_exact(), "{values:?}");
        }
    }
}
