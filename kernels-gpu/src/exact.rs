//! Exact sums of floats, rounded once: the reference every reproducible
//! float sum of the library equals bit for bit.
//!
//! An [`Exact<F>`] holds the sum of any number (below 2^62) of finite
//! `F`s exactly, as a fixed-point integer whose unit is the smallest
//! subnormal (2^-149 for `f32`, 2^-1074 for `f64`) and which is wide enough
//! for the largest finite value times 2^62: 32-bit digits in `i64` words,
//! carry-save (each word may hold more than its 32 bits between
//! normalisations), so an addition touches three words and never carries.
//! Infinities and NaNs are kept aside as flags. [`Exact::round`] gives
//! the exact sum rounded to nearest, ties to even, once: a function of the
//! multiset of values alone, whatever their order, grouping or number of
//! partial sums (merged with [`Exact::merge`]).
//!
//! Specials, as IEEE 754's sum of the same values in any order: any NaN,
//! or `+inf` with `-inf`, gives NaN (the canonical quiet NaN, whatever the
//! payloads); otherwise an infinity gives itself; an exact sum of zero is
//! `+0.0` (as the sum's identity gives: `-0.0 + -0.0` too); an exact sum past the largest finite value rounds to infinity
//! (where a float sum might have overflowed on the way, the exact sum
//! need not: `MAX + MAX - MAX` is `MAX`).

/// A float type with an exact accumulator.
pub trait ExactFloat: Copy {
    /// The accumulator's words: 32-bit digits, least significant first.
    type Words: Copy + AsRef<[i64]> + AsMut<[i64]>;
    /// The accumulator of zero.
    const ZERO_WORDS: Self::Words;
    /// How many words.
    const WORDS_LEN: usize;
    /// Bits of the type (32, 64).
    const BITS: u32;
    /// Bits of the significand, the leading one included (24, 53).
    const PRECISION: u32;
    /// The bits of `+inf`.
    const INFINITY_BITS: u64;
    /// The bits of the canonical NaN (`crate::element::Element::canonical`'s).
    const NAN_BITS: u64;
    /// The bits of the value, in the low bits.
    fn to_bits(self) -> u64;
    /// The value of `bits`.
    fn from_bits(bits: u64) -> Self;
}

impl ExactFloat for f32 {
    // Digits of 2^-149 ... 2^128 (bit positions 0 to 276) and 2^62 more:
    // ceil(339 / 32) = 11, and one to spare.
    type Words = [i64; 12];
    const ZERO_WORDS: [i64; 12] = [0; 12];
    const WORDS_LEN: usize = 12;
    const BITS: u32 = 32;
    const PRECISION: u32 = 24;
    const INFINITY_BITS: u64 = 0x7f80_0000;
    const NAN_BITS: u64 = 0x7fff_ffff;
    fn to_bits(self) -> u64 {
        u64::from(f32::to_bits(self))
    }
    fn from_bits(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
}

impl ExactFloat for f64 {
    // Bit positions 0 to 2097 (2^-1074 ... 2^1024) and 2^62 more:
    // ceil(2160 / 32) = 68.
    type Words = [i64; 68];
    const ZERO_WORDS: [i64; 68] = [0; 68];
    const WORDS_LEN: usize = 68;
    const BITS: u32 = 64;
    const PRECISION: u32 = 53;
    const INFINITY_BITS: u64 = 0x7ff0_0000_0000_0000;
    const NAN_BITS: u64 = 0x7fff_ffff_ffff_ffff;
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

/// Additions a word takes before it is normalised: each adds less than
/// 2^32 in magnitude, so 2^30 of them stay far inside an `i64`. (The
/// tests normalise every few additions, to exercise it.)
#[cfg(not(test))]
const ADDS_BEFORE_NORMALISING: u32 = 1 << 30;
#[cfg(test)]
const ADDS_BEFORE_NORMALISING: u32 = 5;

// What was seen besides the finite sum, as flags.
/// A NaN.
const NAN: u8 = 1;
/// `+inf`.
const PLUS_INFINITY: u8 = 2;
/// `-inf`.
const MINUS_INFINITY: u8 = 4;
/// The flags in the order [`Exact::parts`] counts them.
const SPECIALS: [u8; 3] = [NAN, PLUS_INFINITY, MINUS_INFINITY];

/// The exact sum of `F`s (see the [module](self)).
#[derive(Clone, Copy)]
pub struct Exact<F: ExactFloat> {
    words: F::Words,
    /// Additions since the words were last normalised.
    adds: u32,
    flags: u8,
}

impl<F: ExactFloat> Default for Exact<F> {
    fn default() -> Self {
        Exact::new()
    }
}

impl<F: ExactFloat> Exact<F> {
    /// The sum of no values (which rounds to `+0.0`).
    pub fn new() -> Self {
        Exact {
            words: F::ZERO_WORDS,
            adds: 0,
            flags: 0,
        }
    }

    /// Adds `value`.
    #[inline]
    pub fn add(&mut self, value: F) {
        let bits = value.to_bits();
        let fraction_bits = F::PRECISION - 1;
        let negative = (bits >> (F::BITS - 1)) & 1 == 1;
        let biased = (bits >> fraction_bits) & exponent_mask::<F>();
        let fraction = bits & ((1u64 << fraction_bits) - 1);
        if biased == exponent_mask::<F>() {
            self.flags |= match (fraction != 0, negative) {
                (true, _) => NAN,
                (false, false) => PLUS_INFINITY,
                (false, true) => MINUS_INFINITY,
            };
            return;
        }
        // value = significand · 2^position units (a subnormal's exponent is
        // the smallest normal one's, without the leading one).
        let (significand, position) = match biased {
            0 => (fraction, 0),
            _ => (fraction | (1u64 << fraction_bits), biased as u32 - 1),
        };
        self.add_scaled(negative, significand, position);
    }

    /// Adds `value`, a finite `f64` that is a multiple of the unit
    /// (`2^-149` for `f32`, as every sum of `f32`s is) and at most the
    /// largest `F` times 2^62 in magnitude: an exact partial sum held in an
    /// `f64`, such as the GPU's fast path leaves.
    pub fn add_f64(&mut self, value: f64) {
        let bits = value.to_bits();
        let negative = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1u64 << 52) - 1);
        let significand = match biased {
            0 => fraction,
            _ => fraction | (1u64 << 52),
        };
        // value = significand · 2^(max(biased, 1) - 1075), in units of 2^unit.
        let bias = (exponent_mask::<F>() >> 1) as i32;
        let unit = 1 - bias - (F::PRECISION as i32 - 1);
        let shift = Ord::max(biased, 1) - 1075 - unit;
        if shift >= 0 {
            self.add_scaled(negative, significand, shift as u32);
        } else if shift > -64 {
            // Bits below the unit are zero, as the caller promises.
            self.add_scaled(negative, significand >> -shift, 0);
        }
    }

    /// Adds `significand · 2^position` units (negated if `negative`).
    #[inline]
    fn add_scaled(&mut self, negative: bool, significand: u64, position: u32) {
        if significand == 0 {
            return;
        }
        if self.adds == ADDS_BEFORE_NORMALISING {
            self.normalise();
        }
        self.adds += 1;
        let word = (position / 32) as usize;
        let shifted = (significand as u128) << (position % 32);
        let digits = [
            (shifted & 0xffff_ffff) as i64,
            ((shifted >> 32) & 0xffff_ffff) as i64,
            (shifted >> 64) as i64,
        ];
        let words = self.words.as_mut();
        for (offset, digit) in digits.into_iter().enumerate() {
            if let Some(slot) = words.get_mut(word + offset) {
                *slot = if negative { *slot - digit } else { *slot + digit };
            }
        }
    }

    /// Adds every value `other` holds.
    pub fn merge(&mut self, other: &Exact<F>) {
        let mut other = *other;
        if self.adds + other.adds >= ADDS_BEFORE_NORMALISING {
            self.normalise();
            other.normalise();
        }
        for (mine, theirs) in self.words.as_mut().iter_mut().zip(other.words.as_ref()) {
            *mine += theirs;
        }
        // A normalised word holds up to one addition's worth.
        self.adds += other.adds + 1;
        self.flags |= other.flags;
    }

    /// The digits, normalised (each word but the last in `0..2^32`), and
    /// whether NaNs, `+inf`s and `-inf`s were added (1 or 0 each): what
    /// the GPU's slow path adds up across threads with integer atomics.
    pub fn parts(mut self) -> (F::Words, [u64; 3]) {
        self.normalise();
        (self.words, SPECIALS.map(|flag| u64::from(self.flags & flag != 0)))
    }

    /// The sum whose digits are `words` (each at most `adds` times 2^32 in
    /// magnitude) and which saw NaNs, `+inf`s and `-inf`s as often as
    /// `specials` counts: [`Exact::parts`] added up.
    pub fn set_parts(&mut self, words: F::Words, specials: [u64; 3], adds: u32) {
        self.words = words;
        self.adds = adds;
        self.flags = 0;
        for (flag, count) in SPECIALS.into_iter().zip(specials) {
            if count != 0 {
                self.flags |= flag;
            }
        }
    }

    /// Moves each word's bits past its 32 into the next: every word but
    /// the last is then a digit in `0..2^32`, the last carries the sign.
    fn normalise(&mut self) {
        let words = self.words.as_mut();
        let mut carry = 0i64;
        for word in words.iter_mut() {
            let value = *word + carry;
            carry = value >> 32;
            *word = value - (carry << 32);
        }
        if let Some(last) = words.last_mut() {
            *last += carry << 32;
        }
        self.adds = 0;
    }

    /// The exact sum rounded to nearest, ties to even (the [module](self)
    /// says what specials give).
    pub fn round(&self) -> F {
        if self.flags & NAN != 0 || self.flags & (PLUS_INFINITY | MINUS_INFINITY) == PLUS_INFINITY | MINUS_INFINITY {
            return F::from_bits(F::NAN_BITS);
        }
        let sign_bit = 1u64 << (F::BITS - 1);
        if self.flags & PLUS_INFINITY != 0 {
            return F::from_bits(F::INFINITY_BITS);
        }
        if self.flags & MINUS_INFINITY != 0 {
            return F::from_bits(F::INFINITY_BITS | sign_bit);
        }
        let mut sum = *self;
        sum.normalise();
        let words = sum.words.as_mut();
        let negative = words.last().is_some_and(|&last| last < 0);
        if negative {
            // The magnitude: two's complement over the digits.
            let mut borrow = 0i64;
            for word in words.iter_mut() {
                let value = -*word - borrow;
                borrow = i64::from(value < 0);
                *word = value + (borrow << 32);
            }
        }
        // No indexing that could panic: the kernels have no panic handler to call.
        let Some((top, top_word)) = words.iter().enumerate().rev().find(|&(_, &word)| word != 0) else {
            return F::from_bits(0);
        };
        let highest = top as u32 * 32 + (63 - top_word.leading_zeros());
        let bit = |index: u32| {
            words
                .get((index / 32) as usize)
                .is_some_and(|word| (word >> (index % 32)) & 1 == 1)
        };
        let magnitude_bits = if highest < F::PRECISION {
            // Exactly representable, as a subnormal or with the smallest
            // exponents, whose bits are the integer itself.
            words
                .iter()
                .take(2)
                .rev()
                .fold(0u64, |acc, &word| (acc << 32) | word as u64)
        } else {
            let shift = highest + 1 - F::PRECISION;
            let mut significand = 0u64;
            for index in (shift..=highest).rev() {
                significand = (significand << 1) | u64::from(bit(index));
            }
            let round = bit(shift - 1);
            let sticky = (0..shift - 1).any(bit);
            if round && (sticky || significand & 1 == 1) {
                significand += 1; // 2^PRECISION carries into the exponent
            }
            ((u64::from(shift)) << (F::PRECISION - 1)) + significand
        };
        let magnitude_bits = magnitude_bits.min(F::INFINITY_BITS);
        F::from_bits(if negative {
            magnitude_bits | sign_bit
        } else {
            magnitude_bits
        })
    }
}

/// The exponent field's all-ones value.
fn exponent_mask<F: ExactFloat>() -> u64 {
    F::INFINITY_BITS >> (F::PRECISION - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64: this crate has no dependencies to draw random numbers
    /// with. Seeded from the clock, and the seed printed, so every run
    /// checks fresh values and a failure can be replayed.
    struct StdRng(u64);

    impl StdRng {
        fn seed_from_u64(seed: u64) -> StdRng {
            StdRng(seed)
        }

        fn fresh() -> StdRng {
            let seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |time| time.as_nanos() as u64);
            println!("seed {seed}");
            StdRng(seed)
        }

        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn coin(&mut self) -> bool {
            self.next() & 1 == 1
        }

        /// Uniform in `low..high` (`high > low`).
        fn below(&mut self, low: i64, high: i64) -> i64 {
            low + (self.next() % (high - low) as u64) as i64
        }

        /// Uniform in `low..high`.
        fn unit(&mut self, low: f64, high: f64) -> f64 {
            low + (high - low) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }

        fn shuffle<T>(&mut self, items: &mut [T]) {
            for i in (1..items.len()).rev() {
                items.swap(i, self.below(0, i as i64 + 1) as usize);
            }
        }
    }

    /// Python's `math.fsum` (Shewchuk's partials, then the half-way
    /// correction): the exact sum of finite `f64`s rounded once, by a
    /// method independent of [`Exact`]'s, and an exact sum of zero as
    /// `+0.0`, [`Exact::round`]'s convention (the partials keep the sign
    /// of a lone `-0.0`, which the random values give where `powi`
    /// underflows). No intermediate may overflow.
    fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
        let mut partials: Vec<f64> = Vec::new();
        for mut x in values {
            let mut i = 0;
            for j in 0..partials.len() {
                let mut y = partials[j];
                if x.abs() < y.abs() {
                    core::mem::swap(&mut x, &mut y);
                }
                let hi = x + y;
                let lo = y - (hi - x);
                if lo != 0.0 {
                    partials[i] = lo;
                    i += 1;
                }
                x = hi;
            }
            partials.truncate(i);
            partials.push(x);
        }
        let mut n = partials.len();
        if n == 0 {
            return 0.0;
        }
        n -= 1;
        let mut hi = partials[n];
        let mut lo = 0.0;
        while n > 0 {
            let x = hi;
            n -= 1;
            let y = partials[n];
            hi = x + y;
            lo = y - (hi - x);
            if lo != 0.0 {
                break;
            }
        }
        if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
        if hi == 0.0 {
            0.0
        } else {
            hi
        }
    }

    /// The exact sum of finite `f32`s rounded once to `f32`, from `fsum`:
    /// its `f64` rounding, and the sign of what that rounding left out
    /// decides a tie between two `f32`s.
    fn fsum32(values: &[f32]) -> f32 {
        let wide = fsum(values.iter().map(|&x| f64::from(x)));
        let left_out = fsum(values.iter().map(|&x| f64::from(x)).chain([-wide]));
        let nearest = wide as f32;
        if f64::from(nearest) == wide || nearest.is_infinite() {
            return nearest;
        }
        let toward = |x: f32, up: bool| {
            let bits = x.to_bits() as i32;
            let step = if (x >= 0.0) == up { 1 } else { -1 };
            f32::from_bits(
                (if x == 0.0 {
                    if up {
                        1
                    } else {
                        i32::MIN + 1
                    }
                } else {
                    bits + step
                }) as u32,
            )
        };
        let other = toward(nearest, f64::from(nearest) < wide);
        let midpoint = (f64::from(nearest) + f64::from(other)) / 2.0;
        if wide != midpoint || left_out == 0.0 {
            return nearest;
        }
        let (low, high) = if nearest < other {
            (nearest, other)
        } else {
            (other, nearest)
        };
        if left_out > 0.0 {
            high
        } else {
            low
        }
    }

    fn exact<F: ExactFloat>(values: &[F]) -> F {
        let mut sum = Exact::new();
        values.iter().for_each(|&x| sum.add(x));
        sum.round()
    }

    /// The same values summed in pieces of random lengths, shuffled, the
    /// pieces merged in a random order.
    fn exact_in_pieces<F: ExactFloat>(values: &[F], rng: &mut StdRng) -> F {
        let mut values = values.to_vec();
        rng.shuffle(&mut values);
        let mut pieces = Vec::new();
        let mut rest = &values[..];
        while !rest.is_empty() {
            let (piece, after) = rest.split_at(rng.below(1, rest.len() as i64 + 1) as usize);
            let mut sum = Exact::new();
            piece.iter().for_each(|&x| sum.add(x));
            pieces.push(sum);
            rest = after;
        }
        pieces.push(Exact::new());
        rng.shuffle(&mut pieces);
        while pieces.len() > 1 {
            let i = rng.below(0, pieces.len() as i64 - 1) as usize;
            let last = pieces.remove(i + 1);
            pieces[i].merge(&last);
        }
        pieces[0].round()
    }

    fn random_f64(rng: &mut StdRng, kind: usize) -> f64 {
        let sign = if rng.coin() { 1.0 } else { -1.0 };
        match kind {
            0 => rng.unit(-1.0, 1.0),
            1 => sign * 2f64.powi(rng.below(-1060, 1000) as i32) * rng.unit(1.0, 2.0),
            2 => sign * f64::from_bits(rng.below(1, 1 << 52) as u64), // subnormal
            _ => sign * 2f64.powi(rng.below(-30, 30) as i32) * rng.below(1, 1000) as f64,
        }
    }

    #[test]
    fn f64_sums_are_fsums_in_any_order() {
        let mut rng = StdRng::fresh();
        for case in 0..400 {
            let n = rng.below(0, 300);
            let kind = case % 5;
            let mut values: Vec<f64> = (0..n).map(|_| random_f64(&mut rng, kind % 4)).collect();
            if kind == 4 {
                // Huge cancellation: each value and its negation, and a small rest.
                let negated: Vec<f64> = values.iter().map(|x| -x).collect();
                values.extend(negated);
                values.push(random_f64(&mut rng, 2));
            }
            let want = fsum(values.iter().copied());
            let got = exact(&values);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "case {case}: {got:e} vs fsum {want:e} of {values:?}"
            );
            let pieces = exact_in_pieces(&values, &mut rng);
            assert_eq!(pieces.to_bits(), want.to_bits(), "case {case} in pieces");
        }
    }

    #[test]
    fn f32_sums_are_rounded_once_in_any_order() {
        let mut rng = StdRng::fresh();
        for case in 0..400 {
            let n = rng.below(0, 300);
            let values: Vec<f32> = (0..n)
                .map(|_| {
                    let sign = if rng.coin() { 1.0 } else { -1.0 };
                    match case % 4 {
                        0 => rng.unit(-1.0, 1.0) as f32,
                        1 => sign * 2f32.powi(rng.below(-149, 127) as i32) * rng.unit(1.0, 2.0) as f32,
                        2 => sign * f32::from_bits(rng.below(1, 1 << 23) as u32),
                        _ => sign * 2f32.powi(rng.below(-20, 20) as i32) * rng.below(1, 1 << 24) as f32,
                    }
                })
                .filter(|x: &f32| x.is_finite())
                .collect();
            let want = fsum32(&values);
            assert_eq!(
                exact(&values).to_bits(),
                want.to_bits(),
                "case {case}: fsum32 {want:e} of {values:?}"
            );
            assert_eq!(
                exact_in_pieces(&values, &mut rng).to_bits(),
                want.to_bits(),
                "case {case} in pieces"
            );
        }
    }

    #[test]
    fn ties_round_to_even_and_a_far_bit_breaks_them() {
        let tiny = 2f64.powi(-53);
        assert_eq!(exact(&[1.0, tiny]), 1.0); // a tie: to even
        assert_eq!(exact(&[1.0, tiny, 2f64.powi(-200)]), 1.0 + 2.0 * tiny); // past the tie
        assert_eq!(exact(&[1.0 + 2.0 * tiny, tiny]), 1.0 + 4.0 * tiny); // a tie from odd: up
        assert_eq!(exact(&[1e30f32, 1.0, -1e30]), 1.0);
        assert_eq!(exact(&[1e300, 1.0, -1e300, 2f64.powi(-1074)]), 1.0);
    }

    #[test]
    fn overflow_only_where_the_exact_sum_overflows() {
        assert_eq!(exact(&[f64::MAX, f64::MAX, -f64::MAX]), f64::MAX);
        assert_eq!(exact(&[f64::MAX, f64::MAX]), f64::INFINITY);
        assert_eq!(exact(&[-f32::MAX, -f32::MAX]), f32::NEG_INFINITY);
        // Half an ulp past MAX rounds to infinity; less does not.
        let half_ulp = 2f64.powi(970);
        assert_eq!(exact(&[f64::MAX, half_ulp]), f64::INFINITY);
        assert_eq!(exact(&[f64::MAX, half_ulp, -2f64.powi(900)]), f64::MAX);
        let many = vec![f32::MAX; 1000];
        assert_eq!(exact(&many), f32::INFINITY);
        let mut cancelling = many.clone();
        cancelling.extend(vec![-f32::MAX; 999]);
        assert_eq!(exact_in_pieces(&cancelling, &mut StdRng::seed_from_u64(7)), f32::MAX);
    }

    #[test]
    fn specials_and_zeros() {
        let nan = f64::from_bits(0x7ff0_0000_0000_0abc); // a payload
        assert_eq!(exact(&[1.0, nan]).to_bits(), 0x7fff_ffff_ffff_ffff);
        assert_eq!(exact(&[-nan]).to_bits(), 0x7fff_ffff_ffff_ffff);
        assert_eq!(
            exact(&[f64::INFINITY, f64::NEG_INFINITY]).to_bits(),
            0x7fff_ffff_ffff_ffff
        );
        assert_eq!(exact(&[f32::INFINITY, 1.0, f32::INFINITY]), f32::INFINITY);
        assert_eq!(exact(&[f32::NEG_INFINITY, f32::MAX]), f32::NEG_INFINITY);
        assert_eq!(exact::<f64>(&[]).to_bits(), 0);
        // An exact zero is +0.0, as the sum's identity gives.
        assert_eq!(exact(&[-0.0f64]).to_bits(), 0);
        assert_eq!(exact(&[-0.0f32, -0.0]).to_bits(), 0);
        assert_eq!(exact(&[-1.5f32, 1.5]).to_bits(), 0);
        // Parts added up are the sum of the parts.
        let (a, b) = ([1.5f64, -2.0, f64::INFINITY], [2f64.powi(-1074), 1e300]);
        let (mut left, mut right) = (Exact::new(), Exact::new());
        a.iter().for_each(|&x| left.add(x));
        b.iter().for_each(|&x| right.add(x));
        let ((mut words, left_specials), (right_words, right_specials)) = (left.parts(), right.parts());
        words.iter_mut().zip(right_words).for_each(|(w, r)| *w += r);
        let specials = [0, 1, 2].map(|k| left_specials[k] + right_specials[k]);
        let mut both = Exact::<f64>::new();
        both.set_parts(words, specials, 2);
        assert_eq!(both.round(), f64::INFINITY);
        let mut finite = Exact::<f64>::new();
        finite.set_parts(words, [0; 3], 2);
        assert_eq!(finite.round(), fsum(a[..2].iter().chain(&b).copied()));
        // Subnormals add exactly.
        let smallest = f32::from_bits(1);
        assert_eq!(exact(&[smallest; 3]), f32::from_bits(3));
        assert_eq!(exact(&[f64::from_bits(1); 7]), f64::from_bits(7));
        assert_eq!(exact(&[f32::MIN_POSITIVE, -smallest]), f32::from_bits(0x007f_ffff));
    }

    #[test]
    fn an_f64_partial_sum_adds_as_its_pieces() {
        let mut rng = StdRng::fresh();
        for _ in 0..2000 {
            // a · 2^e, a of 53 bits, e down to f32's unit: three f32 pieces.
            let a = rng.next() >> 11 | 1 << 52;
            let e = rng.below(-149, 71) as i32;
            let negative = rng.coin();
            let value = if negative { -1.0 } else { 1.0 } * a as f64 * 2f64.powi(e);
            let pieces = [(a & 0xff_ffff, 0), ((a >> 24) & 0xff_ffff, 24), (a >> 48, 48)]
                .map(|(p, shift)| (if negative { -1.0 } else { 1.0 } * p as f64 * 2f64.powi(e + shift)) as f32);
            let mut by_f64 = Exact::<f32>::new();
            by_f64.add(1.0);
            by_f64.add_f64(value);
            let mut by_pieces = Exact::<f32>::new();
            by_pieces.add(1.0);
            pieces.iter().for_each(|&p| by_pieces.add(p));
            assert_eq!(by_f64.parts().0, by_pieces.parts().0, "{a} · 2^{e}");
            assert_eq!(by_f64.round().to_bits(), by_pieces.round().to_bits());
            // An f64 accumulator takes any finite f64 as itself.
            let kind = rng.below(0, 4) as usize;
            let x = random_f64(&mut rng, kind);
            if x.is_finite() {
                let (mut as_f64, mut as_value) = (Exact::<f64>::new(), Exact::<f64>::new());
                as_f64.add_f64(x);
                as_value.add(x);
                assert_eq!(as_f64.parts().0, as_value.parts().0, "{x:e}");
            }
        }
    }

    /// The exact sum's NaN is the one every other result is stored as.
    #[test]
    fn the_nan_is_the_canonical_one() {
        use crate::element::Element;
        assert_eq!(
            Element::canonical(f32::NAN).to_bits() as u64,
            <f32 as ExactFloat>::NAN_BITS
        );
        assert_eq!(Element::canonical(-f64::NAN).to_bits(), <f64 as ExactFloat>::NAN_BITS);
    }
}
