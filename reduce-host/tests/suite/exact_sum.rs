//! `ExactSum`: the exact sum rounded once, so the same bits as the CPU's
//! `ExactSum::fold` on every backend, launch shape, grid, offset and order;
//! both the fast path (typical data) and the exact pass (values over a
//! wide range, specials, overflow on the way); against an independent
//! reference (Shewchuk's partials, `math.fsum`) where one applies. And
//! `ExactMean`, the exact sum divided by the count, `ExactNanSum`, the
//! exact sum of the elements that are not NaN, and `ExactSumOfSquares`:
//! their folds' bits over every place. (`ExactDot`: `exact_dot.rs`;
//! `ExactVar`, `ExactStd`, `ExactMeanVar`: `exact_variance.rs`.)

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use reduce::axes::Strided;
use reduce::emulated::Emulator;
use reduce::{
    Error, ExactLogSumExp, ExactMean, ExactNanSum, ExactSum, ExactSumOfSquares, ExactVar, FloatElement, Op, Over,
    Policy,
};

/// Python's `math.fsum` for finite `f64`s whose partial sums stay finite:
/// the exact sum rounded once, by another method than the library's.
pub(crate) fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for mut x in values {
        let mut kept = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    let Some(mut n) = partials.len().checked_sub(1) else {
        return 0.0;
    };
    let (mut hi, mut lo) = (partials[n], 0.0);
    while n > 0 {
        let x = hi;
        n -= 1;
        hi = x + partials[n];
        lo = partials[n] - (hi - x);
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
    hi
}

/// The kinds of input: typical data (the fast path) and inputs whose
/// exact sum spans more bits than two `f64`s hold (the exact pass).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// Uniform in (-1, 1).
    Uniform,
    /// Normal-ish, a few thousand times larger, with exact zeros.
    Scaled,
    /// Each value and its negation, shuffled, and a little left over:
    /// huge cancellation, exact result small.
    Cancelling,
    /// Magnitudes over the type's whole range: the exact pass.
    WideRange,
    /// Typical values with one infinity, or a NaN: the exact pass's flags.
    Specials,
}

pub(crate) const KINDS: [Kind; 5] = [
    Kind::Uniform,
    Kind::Scaled,
    Kind::Cancelling,
    Kind::WideRange,
    Kind::Specials,
];

pub(crate) trait ExactTest:
    TestElement + FloatElement + rand::distributions::uniform::SampleUniform + std::fmt::LowerExp
{
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// A random value with an exponent anywhere in the type's finite range.
    fn any_magnitude(rng: &mut StdRng) -> Self;
    /// A NaN from random bits: either sign, any payload, quiet or signalling.
    fn nan_with(bits: u64) -> Self;
}

impl ExactTest for f32 {
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn any_magnitude(rng: &mut StdRng) -> f32 {
        let sign = if rng.gen() { 1.0 } else { -1.0 };
        sign * 2f32.powi(rng.gen_range(-149..120)) * rng.gen_range(1.0f32..2.0)
    }
    fn nan_with(bits: u64) -> f32 {
        // The exponent all ones, a payload bit set.
        f32::from_bits(0x7f80_0000 | (bits as u32 & 0x807f_ffff) | 1 << ((bits >> 32) % 23))
    }
}

impl ExactTest for f64 {
    fn from_f64(x: f64) -> f64 {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn any_magnitude(rng: &mut StdRng) -> f64 {
        let sign = if rng.gen() { 1.0 } else { -1.0 };
        // Below 2^1000, so that fsum's partial sums stay finite.
        sign * 2f64.powi(rng.gen_range(-1074..1000)) * rng.gen_range(1.0..2.0)
    }
    fn nan_with(bits: u64) -> f64 {
        f64::from_bits(0x7ff0_0000_0000_0000 | (bits & 0x800f_ffff_ffff_ffff) | 1 << ((bits >> 52) % 52))
    }
}

pub(crate) fn random_input<T: ExactTest>(rng: &mut StdRng, kind: Kind, n: usize) -> Vec<T> {
    let mut values: Vec<T> = match kind {
        Kind::Uniform => (0..n).map(|_| T::from_f64(rng.gen_range(-1.0..1.0))).collect(),
        Kind::Scaled => (0..n)
            .map(|_| match rng.gen_range(0..10) {
                0 => T::from_f64(0.0),
                _ => T::from_f64(rng.gen_range(-3000.0..3000.0) * rng.gen_range(0.0..1.0)),
            })
            .collect(),
        Kind::Cancelling => {
            let half: Vec<T> = (0..n / 2).map(|_| T::from_f64(rng.gen_range(-1e6..1e6))).collect();
            let mut all: Vec<T> = half.iter().flat_map(|&x| [x, T::from_f64(-x.to_f64())]).collect();
            all.extend((0..n % 2 + 1).map(|_| T::from_f64(rng.gen_range(-1e-3..1e-3))));
            all
        }
        Kind::WideRange => (0..n).map(|_| T::any_magnitude(rng)).collect(),
        Kind::Specials => {
            let mut values: Vec<T> = (0..n.max(1)).map(|_| T::from_f64(rng.gen_range(-1.0..1.0))).collect();
            let special = [f64::INFINITY, f64::NEG_INFINITY, f64::NAN][rng.gen_range(0..3)];
            let at = rng.gen_range(0..values.len());
            values[at] = T::from_f64(special);
            values
        }
    };
    values.shuffle(rng);
    values
}

/// The reference the kernels must equal: `ExactSum::fold`, itself checked
/// against `fsum` where that applies (finite inputs; every `f64` sum, and
/// `f32` sums whose `f64` rounding is an `f32`: kernels-gpu's own tests
/// check the fold's `f32` rounding against fsum in full).
pub(crate) fn reference<T: ExactTest>(values: &[T]) -> T {
    let folded = ExactSum::fold(values);
    if values.iter().all(|x| x.to_f64().is_finite()) {
        let wide = fsum(values.iter().map(|x| x.to_f64()));
        let narrowed = T::from_f64(wide);
        // fsum's value rounds once to `T` where it is a `T` (always for
        // f64); an f32 between two could be a tie fsum cannot break.
        if narrowed.to_f64() == wide {
            // An exact zero is +0.0 by the library's rule, where fsum may
            // give -0.0 (for [-0.0], say).
            let want = if wide == 0.0 { T::from_f64(0.0) } else { narrowed };
            assert_eq!(
                folded.to_bits(),
                want.to_bits(),
                "fold {folded:?} against fsum {wide:e}"
            );
        }
    }
    folded
}

/// The exact sum of `values` staged at `offset` between poison, on the tester's backend.
fn exact_sum_on<B: TestBackend, T: ExactTest>(tester: &mut Tester<B>, values: &[T], offset: usize) -> T {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    tester.reducer.reduce(B::slice(&staged), ExactSum).unwrap()
}

pub(crate) fn same_bits<T: ExactTest>(got: T, want: T) -> bool {
    got.to_bits() == want.to_bits() || (got.to_f64().is_nan() && want.to_f64().is_nan())
}

/// Every kind, several lengths (a block, several, the grid's cap and past
/// it) and offsets: the kernels give the fold's bits, on every backend.
fn matches_the_fold<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for kind in KINDS {
            for n in [
                0,
                1,
                3,
                100,
                4097,
                backend.size(300_001, 40_001),
                backend.size(5_000_000, 90_000),
            ] {
                let values = random_input::<T>(&mut rng, kind, n);
                let want = reference(&values);
                let offset = rng.gen_range(0..4);
                let got = exact_sum_on(&mut backend, &values, offset);
                assert!(
                    same_bits(got, want),
                    "{} {kind:?} n = {n} offset {offset}: {got:e} where the fold gives {want:e}",
                    backend.name()
                );
                if !want.to_f64().is_nan() {
                    assert!(got.to_bits() == want.to_bits(), "{} {kind:?}: NaN bits", backend.name());
                }
            }
        }
    });
}

#[test]
fn exact_sums_of_f32_are_the_folds_bits() {
    matches_the_fold::<f32>("exact_sums_of_f32_are_the_folds_bits");
}

#[test]
fn exact_sums_of_f64_are_the_folds_bits() {
    matches_the_fold::<f64>("exact_sums_of_f64_are_the_folds_bits");
}

/// The same values under other launch shapes, in other orders and at other
/// offsets: the same bits (where a float sum's tree would differ), for the
/// sum and the sum of squares.
fn independent_of_shape_and_order<T: ExactTest>() {
    let mut rng = rng("exact_sums_do_not_depend_on_shape_order_or_offset");
    for kind in KINDS {
        let mut values = random_input::<T>(&mut rng, kind, 50_000);
        let (want, squares) = (ExactSum::fold(&values), ExactSumOfSquares::fold(&values));
        for (threads, grid) in [(32, 1), (64, 3), (128, 7), (256, 40), (1024, 2)] {
            let mut emulator = Emulator::with_shape(Policy::new(threads).unwrap(), grid).unwrap();
            values.shuffle(&mut rng);
            let start = rng.gen_range(0..3);
            let mut shifted = vec![T::from_f64(0.0); start];
            shifted.extend_from_slice(&values);
            let got = emulator.reduce(&shifted[start..], ExactSum).unwrap();
            assert!(same_bits(got, want), "{kind:?} {threads}×{grid}: {got:e} != {want:e}");
            let got = emulator.reduce(&shifted[start..], ExactSumOfSquares).unwrap();
            assert!(
                same_bits(got, squares),
                "{kind:?} {threads}×{grid}: the sum of squares {got:e} != {squares:e}"
            );
        }
    }
}

#[test]
fn exact_sums_do_not_depend_on_shape_order_or_offset() {
    independent_of_shape_and_order::<f32>();
    independent_of_shape_and_order::<f64>();
}

#[test]
fn adversarial_exact_sums() {
    let test = "adversarial_exact_sums";
    for_each_backend!(test, |backend| {
        let name = backend.name();
        let mut check_f32 = |values: &[f32], want: f32| {
            let got = exact_sum_on(&mut backend, values, 1);
            assert!(
                same_bits(got, want) && same_bits(ExactSum::fold(values), want),
                "{name} {values:?}: {got:e}"
            );
        };
        check_f32(&[1e30, 1.0, -1e30], 1.0);
        check_f32(&[-1e30, 1e30, 1.0], 1.0);
        check_f32(&[1.0, -1e30, 1e30], 1.0);
        check_f32(&[f32::MAX, f32::MAX, -f32::MAX], f32::MAX); // no overflow on the way
        check_f32(&[f32::MAX, f32::MAX], f32::INFINITY);
        check_f32(&[f32::from_bits(1); 5], f32::from_bits(5)); // subnormals, exactly
        check_f32(&[-0.0, -0.0], 0.0);
        check_f32(&[f32::INFINITY, -f32::INFINITY], f32::NAN);
        check_f32(&[f32::NEG_INFINITY, 1.0], f32::NEG_INFINITY);
        check_f32(&[1.0, 2f32.powi(-24)], 1.0); // a tie, to even
                                                // A bit far below breaks the tie.
        check_f32(&[1.0, 2f32.powi(-24), 2f32.powi(-100)], 1.0 + 2f32.powi(-23));
        // Rounding errors that need 60 bits together: past the tie too.
        let tie = [2f64.powi(53), 1.0, 2f64.powi(-7) + 2f64.powi(-59), -2f64.powi(-7)];
        for offset in 0..3 {
            assert_eq!(
                exact_sum_on(&mut backend, &tie, offset),
                2f64.powi(53) + 2.0,
                "{}",
                backend.name()
            );
        }
        assert_eq!(
            exact_sum_on(&mut backend, &[f64::MAX, f64::MAX, -f64::MAX], 1),
            f64::MAX
        );
    });
}

/// Segments or rows of an input.
#[derive(Clone, Debug)]
pub(crate) enum Parts {
    Segments(Vec<u64>),
    Rows { rows: usize, len: usize },
}

impl Parts {
    /// Each part's range of the input.
    pub(crate) fn ranges(&self) -> Vec<std::ops::Range<usize>> {
        match self {
            Parts::Segments(offsets) => offsets.windows(2).map(|w| w[0] as usize..w[1] as usize).collect(),
            Parts::Rows { rows, len } => (0..*rows).map(|r| r * len..(r + 1) * len).collect(),
        }
    }
}

/// The exact sum of each part of `values` (staged at `offset` between
/// poison) on the tester's backend.
fn exact_sums_over<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    offset: usize,
    parts: &Parts,
) -> Vec<T> {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    let results = match parts {
        Parts::Segments(offsets) => {
            let offsets = B::stage(offsets, 0, 0u64);
            tester
                .reducer
                .reduce_over(B::slice(&staged), ExactSum, Over::Segments(B::slice(&offsets)))
        }
        Parts::Rows { rows, len } => {
            tester
                .reducer
                .reduce_over(B::slice(&staged), ExactSum, Over::Rows { rows: *rows, len: *len })
        }
    };
    B::to_vec(&results.unwrap().values).unwrap()
}

/// One part's values `row`, whose fold is `want`, on the emulator: under
/// five launch shapes, shuffled and shifted (`whole`); as one row of each
/// batch of `batches` rows among random others, at a random position; as
/// one segment among random others (`parts`: each part's result). Every
/// result `want`'s bits. For the two-pass exact reductions, whose results
/// come from folds of their own.
pub(crate) fn check_independent_of_shape_batch_and_order<T: ExactTest>(
    rng: &mut StdRng,
    (kind, row): (Kind, &mut [T]),
    (batches, want): (&[usize], T),
    whole: impl Fn(&mut Emulator, &[T]) -> T,
    parts: impl Fn(&mut Emulator, &[T], Over<'_, &[u64]>) -> Vec<T>,
) {
    let len = row.len();
    for (threads, grid) in [(32, 1), (64, 3), (128, 7), (256, 40), (1024, 2)] {
        let mut emulator = Emulator::with_shape(Policy::new(threads).unwrap(), grid).unwrap();
        row.shuffle(rng);
        let start = rng.gen_range(0..3);
        let mut shifted = vec![T::from_f64(0.0); start];
        shifted.extend_from_slice(row);
        let got = whole(&mut emulator, &shifted[start..]);
        assert!(same_bits(got, want), "{kind:?} {threads}×{grid}: {got:e} != {want:e}");
    }
    let mut emulator = Emulator::default();
    for &rows in batches {
        let at = rng.gen_range(0..rows);
        let mut batch = random_input::<T>(rng, Kind::Scaled, rows * len);
        batch.truncate(rows * len);
        batch[at * len..(at + 1) * len].copy_from_slice(row);
        let got = parts(&mut emulator, &batch, Over::Rows { rows, len })[at];
        assert!(
            same_bits(got, want),
            "{kind:?}: row {at} of {rows}: {got:e} != {want:e}"
        );
    }
    let before = rng.gen_range(0..500);
    let mut values = random_input::<T>(rng, Kind::Uniform, before);
    values.truncate(before);
    let mut offsets = random_segments(rng, before);
    values.extend_from_slice(row);
    offsets.push(values.len() as u64);
    values.extend(random_input::<T>(rng, Kind::Scaled, 100));
    let got = *parts(&mut emulator, &values, Over::Segments(&offsets[..]))
        .last()
        .unwrap();
    assert!(
        same_bits(got, want),
        "{kind:?}: a segment among others: {got:e} != {want:e}"
    );
}

/// Random segments over `n` values: lengths from empty to long, some
/// values outside every segment.
pub(crate) fn random_segments(rng: &mut StdRng, n: usize) -> Vec<u64> {
    let mut offsets = vec![rng.gen_range(0..=n.min(3)) as u64];
    while (*offsets.last().unwrap() as usize) < n {
        let left = n - *offsets.last().unwrap() as usize;
        let len = match rng.gen_range(0..4) {
            0 => 0,
            1 => rng.gen_range(1..=left.min(40)),
            _ => rng.gen_range(1..=left),
        };
        offsets.push(offsets.last().unwrap() + len as u64);
    }
    offsets
}

/// Every part's result is the fold of its values, bit for bit: segments
/// and rows of every kind, short and long (rows in parts over several
/// blocks), at every offset, on every backend.
fn parts_match_the_fold<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for kind in KINDS {
            let n = backend.size(3_000_000, 60_000);
            let covered = rng.gen_range(0..n);
            let shapes = [
                Parts::Segments(random_segments(&mut rng, covered)),
                Parts::Rows { rows: 1, len: n },
                Parts::Rows { rows: 3, len: n / 3 },
                Parts::Rows {
                    rows: 1000,
                    len: n / 1000,
                },
                Parts::Rows { rows: n / 7, len: 7 },
                Parts::Rows { rows: 5, len: 0 },
            ];
            for parts in shapes {
                let len = match &parts {
                    Parts::Segments(offsets) => *offsets.last().unwrap() as usize + rng.gen_range(0..3),
                    Parts::Rows { rows, len } => rows * len,
                };
                let mut values = random_input::<T>(&mut rng, kind, len);
                values.truncate(len);
                values.resize(len, T::from_f64(0.5));
                let offset = rng.gen_range(0..4);
                let got = exact_sums_over(&mut backend, &values, offset, &parts);
                let ranges = parts.ranges();
                assert_eq!(got.len(), ranges.len());
                for (part, (got, range)) in got.iter().zip(ranges).enumerate() {
                    let want = ExactSum::fold(&values[range.clone()]);
                    assert!(
                        got.to_bits() == want.to_bits(),
                        "{} {kind:?} {}: part {part} {range:?} gives {got:e} where the fold gives {want:e}",
                        backend.name(),
                        match &parts {
                            Parts::Segments(offsets) => format!("{} segments", offsets.len() - 1),
                            Parts::Rows { rows, len } => format!("{rows} rows of {len}"),
                        }
                    );
                }
            }
        }
    });
}

#[test]
fn exact_sums_of_f32_segments_and_rows_are_the_folds_bits() {
    parts_match_the_fold::<f32>("exact_sums_of_f32_segments_and_rows_are_the_folds_bits");
}

#[test]
fn exact_sums_of_f64_segments_and_rows_are_the_folds_bits() {
    parts_match_the_fold::<f64>("exact_sums_of_f64_segments_and_rows_are_the_folds_bits");
}

/// Many long segments given by offsets, a third each empty, `mean` and
/// `2 · mean` elements long, in random order (as the bench's): more
/// segments than the launch has warps' takes, long enough on average for
/// teams of a warp or more (and, for `f64`, of 8 lanes), so warps take
/// them from a counter (`ExactSchedule::WarpsTake`; on the GPU 4500 and
/// 18000 segments, past an H200's 4224 warps and their takes of 4). Every kind of values, at a
/// random offset; every result of `ExactSum`, `ExactMean`,
/// `ExactSumOfSquares`, `ExactVar` (both passes) and `ExactLogSumExp` is
/// its fold's bits, and a second run gives the same.
fn many_long_segments_match_the_fold<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        // Averages past 32 lanes' 16 tiles each (8192 `f32`s, 4096
        // `f64`s: a team of a warp or more in a fixed order) and of 8
        // lanes' (`f64`: warps take those too; `f32`: a fixed order).
        let means = [
            (49_152 / std::mem::size_of::<T>() as u64, backend.size(4500, 24)),
            (8192 / std::mem::size_of::<T>() as u64, backend.size(18_000, 60)),
        ];
        for ((mean, count), kind) in means.into_iter().flat_map(|mean| KINDS.map(|kind| (mean, kind))) {
            let mut lengths: Vec<u64> = (0..count as u64).map(|s| s % 3 * mean).collect();
            lengths.shuffle(&mut rng);
            let mut offsets = vec![0u64];
            for length in lengths {
                offsets.push(offsets.last().unwrap() + length);
            }
            let len = *offsets.last().unwrap() as usize;
            let mut values = random_input::<T>(&mut rng, kind, len);
            values.truncate(len);
            let offset = rng.gen_range(0..4);
            let first = exact_family_over_segments(&mut backend, &values, offset, &offsets);
            for (what, got) in &first {
                assert_eq!(got.len(), count, "{what}");
                for (segment, (got, range)) in got.iter().zip(offsets.windows(2)).enumerate() {
                    let part = &values[range[0] as usize..range[1] as usize];
                    let want = family_fold(what, part);
                    assert!(
                        got.to_bits() == want.to_bits(),
                        "{} {kind:?}: {what} of segment {segment} ({} elements) of {count} is {got:e} where the fold gives {want:e}",
                        backend.name(),
                        part.len()
                    );
                }
            }
            let again = exact_family_over_segments(&mut backend, &values, offset, &offsets);
            for ((what, first), (_, again)) in first.iter().zip(again) {
                let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert!(
                    bits(first) == bits(&again),
                    "{} {kind:?}: {what} differs between runs",
                    backend.name()
                );
            }
        }
    });
}

/// [`exact_family`] of the segments `offsets` of `values` (staged at
/// `offset` between poison) on the tester's backend.
fn exact_family_over_segments<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    offset: usize,
    offsets: &[u64],
) -> [(&'static str, Vec<T>); 5] {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    let staged_offsets = B::stage(offsets, 0, 0u64);
    exact_family(tester, B::slice(&staged), || Over::Segments(B::slice(&staged_offsets)))
}

/// `ExactSum`, `ExactMean`, `ExactSumOfSquares`, `ExactVar` (with a
/// correction of one) and `ExactLogSumExp` of `input` over `over()` on
/// the tester's backend, each named as [`family_fold`] names them.
fn exact_family<'a, B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    input: &B::Slice<T>,
    over: impl Fn() -> Over<'a, &'a B::Slice<u64>>,
) -> [(&'static str, Vec<T>); 5]
where
    B::Slice<u64>: 'a,
{
    let reducer = &mut tester.reducer;
    let sums = reducer.reduce_over(input, ExactSum, over()).unwrap();
    let means = reducer.reduce_over(input, ExactMean, over()).unwrap();
    let squares = reducer.reduce_over(input, ExactSumOfSquares, over()).unwrap();
    let var = reducer.reduce_over(input, ExactVar::new(1.0).unwrap(), over()).unwrap();
    let lse = reducer.reduce_over(input, ExactLogSumExp, over()).unwrap();
    [
        ("ExactSum", B::to_vec(&sums.values).unwrap()),
        ("ExactMean", B::to_vec(&means.values).unwrap()),
        ("ExactSumOfSquares", B::to_vec(&squares.values).unwrap()),
        ("ExactVar", B::to_vec(&var.values).unwrap()),
        ("ExactLogSumExp", B::to_vec(&lse.values).unwrap()),
    ]
}

/// The CPU fold of `part` for the exact reduction [`exact_family`] names
/// `what`.
fn family_fold<T: ExactTest>(what: &str, part: &[T]) -> T {
    match what {
        "ExactSum" => ExactSum::fold(part),
        "ExactMean" => ExactMean::fold(part),
        "ExactSumOfSquares" => ExactSumOfSquares::fold(part),
        "ExactVar" => ExactVar::new(1.0).unwrap().fold(part),
        "ExactLogSumExp" => ExactLogSumExp::fold(part),
        other => panic!("no fold for {other}"),
    }
}

#[test]
fn exact_sums_of_many_long_f32_segments_are_the_folds_bits() {
    many_long_segments_match_the_fold::<f32>("exact_sums_of_many_long_f32_segments_are_the_folds_bits");
}

#[test]
fn exact_sums_of_many_long_f64_segments_are_the_folds_bits() {
    many_long_segments_match_the_fold::<f64>("exact_sums_of_many_long_f64_segments_are_the_folds_bits");
}

/// Batch invariance: a row's exact sum has the same bits whether it is
/// reduced alone or as one row of batches of 7, 64 and 4096 rows of other
/// data (each batch a different launch plan), and as a segment among
/// random others, and as a whole input; on every backend.
fn batch_invariant<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for kind in KINDS {
            let len = backend.size(3000, 300);
            let row = random_input::<T>(&mut rng, kind, len)[..len].to_vec();
            let want = ExactSum::fold(&row);
            let alone = exact_sum_on(&mut backend, &row, 1);
            assert!(
                same_bits(alone, want),
                "{} {kind:?} whole: {alone:e} != {want:e}",
                backend.name()
            );
            for rows in [1, 7, 64, backend.size(4096, 256)] {
                let at = rng.gen_range(0..rows);
                let mut values = Vec::with_capacity(rows * len);
                for r in 0..rows {
                    if r == at {
                        values.extend_from_slice(&row);
                    } else {
                        let other = KINDS[rng.gen_range(0..KINDS.len())];
                        values.extend_from_slice(&random_input::<T>(&mut rng, other, len)[..len]);
                    }
                }
                let got = exact_sums_over(&mut backend, &values, rng.gen_range(0..4), &Parts::Rows { rows, len });
                assert!(
                    same_bits(got[at], want),
                    "{} {kind:?}: row {at} of {rows} gives {:e} where alone it is {want:e}",
                    backend.name(),
                    got[at]
                );
                // The same values cut into random segments around the row.
                let mut offsets: Vec<u64> = random_segments(&mut rng, at * len).to_vec();
                offsets.retain(|&o| o < (at * len) as u64);
                offsets.extend([(at * len) as u64, ((at + 1) * len) as u64, values.len() as u64]);
                let segment = offsets.len() - 3;
                let got = exact_sums_over(&mut backend, &values, 0, &Parts::Segments(offsets));
                assert!(
                    same_bits(got[segment], want),
                    "{} {kind:?}: as segment {segment}, {:e} != {want:e}",
                    backend.name(),
                    got[segment]
                );
            }
        }
    });
}

#[test]
fn exact_row_sums_are_batch_invariant() {
    batch_invariant::<f32>("exact_row_sums_are_batch_invariant");
    batch_invariant::<f64>("exact_row_sums_are_batch_invariant");
}

/// Long rows take the whole-input kernel, each over its own blocks where
/// each gets two or more (on the emulator's grid of 6, up to 3 rows), else
/// one block a row (a grid past the blocks the SMs hold), and rows enough
/// for a warp each of the segmented grid take its warp teams (the
/// emulator's 16 rows): every exact reduction's result of every row is the fold's bits (one
/// row's also the whole input's), at every offset, on every backend; a
/// row of another length is still `InvalidSegments`, and a row of nothing
/// still the empty part's result.
fn few_long_rows_are_the_folds_bits<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for kind in KINDS {
            // More rows than the grid holds blocks (GPU: 600; the
            // emulator's grid is 6): blocks in waves, two to four a row
            // (their partial slots and tickets in the scratch), where a
            // row fills their tiles.
            for rows in [1, 2, 3, 4, 16, backend.size(600, 7)] {
                let longest = if rows > 16 { 33_000 } else { 300_000 };
                let len = backend.size(longest, 6_000) + rng.gen_range(0..100);
                let mut values = random_input::<T>(&mut rng, kind, rows * len);
                values.truncate(rows * len);
                few_long_rows_on(&mut backend, &values, (rows, len), rng.gen_range(0..4), kind);
            }
        }
        few_long_rows_on::<_, T>(&mut backend, &[], (1, 0), 0, Kind::Uniform);
    });
}

/// [`few_long_rows_are_the_folds_bits`] of `values` as `rows` rows of
/// `len`, staged at `offset`.
fn few_long_rows_on<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    (rows, len): (usize, usize),
    offset: usize,
    kind: Kind,
) {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    let results = exact_family(tester, B::slice(&staged), || Over::Rows { rows, len });
    if len == 0 {
        // The empty part's results (the sum's identity, a mean of nothing), not the empty input's error.
        let [(_, sum), (_, mean), ..] = &results;
        assert!(
            same_bits(sum[0], T::from_f64(0.0)) && mean[0].is_nan(),
            "{sum:?} {mean:?}"
        );
        return;
    }
    let whole = (rows == 1).then(|| exact_family(tester, B::slice(&staged), || Over::Whole));
    for (index, (what, got)) in results.iter().enumerate() {
        assert_eq!(got.len(), rows, "{what}");
        for (row, got) in got.iter().enumerate() {
            let want = family_fold(what, &values[row * len..(row + 1) * len]);
            assert!(
                same_bits(*got, want),
                "{} {kind:?}: {what} of row {row} of {rows} rows of {len}: {got:e}, the fold {want:e}",
                tester.name()
            );
        }
        if let Some(whole) = &whole {
            assert!(
                same_bits(whole[index].1[0], got[0]),
                "{what}: whole {:?}, one row {got:?}",
                whole[index].1
            );
        }
    }
    let short = tester
        .reducer
        .reduce_over(B::slice(&staged), ExactSum, Over::Rows { rows, len: len - 1 });
    assert!(
        matches!(short, Err(Error::InvalidSegments(_))),
        "{rows} rows of {} of {}: {:?}",
        len - 1,
        values.len(),
        short.map(|_| ())
    );
}

#[test]
fn exact_reductions_of_a_few_long_rows_are_the_folds_bits() {
    few_long_rows_are_the_folds_bits::<f32>("exact_reductions_of_a_few_long_rows_are_the_folds_bits");
    few_long_rows_are_the_folds_bits::<f64>("exact_reductions_of_a_few_long_rows_are_the_folds_bits");
}

/// Segments under other launch shapes (other teams, rounds and grids): the
/// same bits.
#[test]
fn exact_segment_sums_do_not_depend_on_the_launch_shape() {
    let mut rng = rng("exact_segment_sums_do_not_depend_on_the_launch_shape");
    for kind in KINDS {
        let values = random_input::<f64>(&mut rng, kind, 40_000);
        let offsets = random_segments(&mut rng, values.len());
        let want: Vec<f64> = Parts::Segments(offsets.clone())
            .ranges()
            .into_iter()
            .map(|range| ExactSum::fold(&values[range]))
            .collect();
        for (threads, grid) in [(32, 1), (64, 3), (128, 7), (256, 40), (1024, 2)] {
            let mut emulator = Emulator::with_shape(Policy::new(threads).unwrap(), grid).unwrap();
            let got = emulator
                .reduce_over(&values[..], ExactSum, Over::Segments(&offsets[..]))
                .unwrap()
                .values;
            for (s, (got, want)) in got.iter().zip(&want).enumerate() {
                assert!(
                    same_bits(*got, *want),
                    "{kind:?} {threads}×{grid} segment {s}: {got:e} != {want:e}"
                );
            }
        }
    }
}

/// The exact sum of `axes` of `layout` over `values` (staged at `offset`
/// between poison) on the tester's backend.
fn exact_sums_along<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    offset: usize,
    (layout, axes): (&Strided, &[isize]),
) -> Vec<T> {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    let results = tester
        .reducer
        .reduce_over(B::slice(&staged), ExactSum, Over::Axes(layout, axes))
        .unwrap_or_else(|e| panic!("{layout:?} axes {axes:?}: {e}"));
    B::to_vec(&results.values).unwrap()
}

/// Along axes: every result is the fold of its elements, bit for bit. The
/// views the exact kernels read in place (all axes of a dense tensor, its
/// rows, rows with gaps between them) and those gathered into rows first
/// (columns, the middle axis, axes apart, a transpose, broadcast axes),
/// long enough for results in parts over several blocks; then random
/// views (permuted, strided, broadcast, offset) and axes; every kind of
/// values, on every backend.
fn axes_match_the_fold<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let (rows, columns) = (rng.gen_range(1..40), backend.size(rng.gen_range(1000..60_000), 900));
        let dense = Strided::contiguous(&[rows, columns]).unwrap();
        let cube = Strided::contiguous(&[3, rows, columns / 3]).unwrap();
        let fixed: Vec<(Strided, Vec<isize>)> = vec![
            (dense, vec![0, 1]),
            (dense, vec![1]),
            (dense, vec![0]),
            // Rows with gaps: the last column dropped, the view offset by one.
            (
                Strided::new(&[rows, columns - 1], &[columns, 1])
                    .unwrap()
                    .with_offset(1),
                vec![-1],
            ),
            (cube, vec![1]),
            (cube, vec![0, 2]),
            (cube, vec![2]),
            // The transpose, its rows the matrix's columns.
            (Strided::new(&[columns, rows], &[1, columns]).unwrap(), vec![1]),
            // A row broadcast down `rows` rows.
            (Strided::new(&[rows, columns], &[0, 1]).unwrap(), vec![0]),
        ];
        let random = (0..backend.size(40, 12)).map(|_| {
            let layout = random_layout(&mut rng);
            let axes = random_axes(&mut rng, layout.shape().len());
            (layout, axes)
        });
        for (case, (layout, axes)) in fixed.into_iter().chain(random.collect::<Vec<_>>()).enumerate() {
            let kind = KINDS[rng.gen_range(0..KINDS.len())];
            let len = span(&layout) + rng.gen_range(0..3);
            let mut values = random_input::<T>(&mut rng, kind, len);
            values.truncate(len);
            let offset = rng.gen_range(0..4);
            let got = exact_sums_along(&mut backend, &values, offset, (&layout, &axes));
            let rank = layout.shape().len() as isize;
            let positive: Vec<usize> = axes.iter().map(|&a| ((a + rank) % rank.max(1)) as usize).collect();
            let want: Vec<T> = gathered(&values, &layout, &positive)
                .iter()
                .map(|x| ExactSum::fold(x))
                .collect();
            assert_eq!(got.len(), want.len(), "case {case}: {layout:?} axes {axes:?}");
            for (o, (got, want)) in got.iter().zip(&want).enumerate() {
                assert!(
                    got.to_bits() == want.to_bits(),
                    "{} case {case} {kind:?}: {layout:?} axes {axes:?} offset {offset}: result {o} is {got:e} where the fold gives {want:e}",
                    backend.name()
                );
            }
        }
    });
}

#[test]
fn exact_sums_of_f32_along_axes_are_the_folds_bits() {
    axes_match_the_fold::<f32>("exact_sums_of_f32_along_axes_are_the_folds_bits");
}

#[test]
fn exact_sums_of_f64_along_axes_are_the_folds_bits() {
    axes_match_the_fold::<f64>("exact_sums_of_f64_along_axes_are_the_folds_bits");
}

/// Views whose reduced axes lie apart that the exact kernel reads in place
/// as rows in runs (each run and row whole 16-byte vectors, the input
/// aligned): many rows, few rows of long runs (split among blocks), the
/// kept axis outermost with gaps between the runs, and a whole slice with
/// gaps between its rows. Every kind of values; uniform ones also at an
/// offset that misaligns the input (then gathered first). Every result of
/// `ExactSum`, `ExactMean`, `ExactSumOfSquares`, `ExactVar` (both passes
/// read in place) and `ExactLogSumExp` is its fold's bits.
fn axes_apart_match_the_fold<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let (run, rows) = (backend.size(2048, 300), backend.size(2048, 64));
        let (long, long_rows, long_runs) = (backend.size(1 << 19, 65_536), backend.size(8, 2), backend.size(6, 8));
        let (gapped, slice) = (backend.size(8192, 500), backend.size(3_000_000, 7000));
        let kept_outer = backend.size(512, 16);
        let views: Vec<(Strided, Vec<isize>)> = vec![
            (Strided::contiguous(&[3, rows, run]).unwrap(), vec![0, 2]),
            (Strided::contiguous(&[long_runs, long_rows, long]).unwrap(), vec![0, 2]),
            (
                Strided::new(&[kept_outer, 5, gapped], &[5 * (gapped + 4), gapped + 4, 1]).unwrap(),
                vec![1, 2],
            ),
            (Strided::new(&[3, slice], &[slice + 4, 1]).unwrap(), vec![0, 1]),
        ];
        for ((layout, axes), kind) in views.iter().flat_map(|view| KINDS.map(|kind| (view, kind))) {
            let len = span(layout);
            let values = random_input::<T>(&mut rng, kind, len);
            let offset = if matches!(kind, Kind::Uniform) {
                rng.gen_range(1..4)
            } else {
                0
            };
            let positive: Vec<usize> = axes.iter().map(|&a| a as usize).collect();
            let parts = gathered(&values, layout, &positive);
            let results = exact_family_along(&mut backend, &values, offset, (layout, axes));
            for (what, got) in results {
                assert_eq!(got.len(), parts.len(), "{what} {layout:?} axes {axes:?}");
                for (o, (got, part)) in got.iter().zip(&parts).enumerate() {
                    let want = family_fold(what, part);
                    assert!(
                        got.to_bits() == want.to_bits(),
                        "{} {kind:?}: {layout:?} axes {axes:?} offset {offset}: {what} of result {o} is {got:e} where the fold gives {want:e}",
                        backend.name()
                    );
                }
            }
        }
    });
}

/// [`exact_family`] of `axes` of `layout` over `values` (staged at
/// `offset` between poison) on the tester's backend.
fn exact_family_along<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    offset: usize,
    (layout, axes): (&Strided, &[isize]),
) -> [(&'static str, Vec<T>); 5] {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    exact_family(tester, B::slice(&staged), || Over::Axes(layout, axes))
}

#[test]
fn exact_sums_of_f32_along_axes_apart_are_the_folds_bits() {
    axes_apart_match_the_fold::<f32>("exact_sums_of_f32_along_axes_apart_are_the_folds_bits");
}

#[test]
fn exact_sums_of_f64_along_axes_apart_are_the_folds_bits() {
    axes_apart_match_the_fold::<f64>("exact_sums_of_f64_along_axes_apart_are_the_folds_bits");
}

/// A column's exact sum has the bits of the same values summed as a row,
/// and the small value a float sum may lose is kept, along any axis.
#[test]
fn exact_column_sums_are_the_rows_sums() {
    let mut emulator = Emulator::default();
    // Columns (1e30, 1, -1e30) and (0.5, 0.25, 0.25), row-major 3 × 2.
    let x = [1e30f32, 0.5, 1.0, 0.25, -1e30, 0.25];
    let columns = emulator
        .reduce_over(&x, ExactSum, Over::Axes(&Strided::contiguous(&[3, 2]).unwrap(), &[0]))
        .unwrap();
    assert_eq!(columns.values.to_vec(), [1.0, 1.0]);
    let transposed = [1e30f32, 1.0, -1e30, 0.5, 0.25, 0.25];
    let rows = emulator
        .reduce_over(&transposed, ExactSum, Over::Rows { rows: 2, len: 3 })
        .unwrap();
    assert_eq!(rows.values.to_vec(), columns.values.to_vec());
    assert_eq!(emulator.reduce(&[1.0f32, 1.0, 1.0], Op::Sum).unwrap(), 3.0);
}

/// `Scope::reduce_into` of `ExactSum` over segments and rows, and of
/// `ExactMean` over the whole input and rows, on another stream into
/// poisoned outputs: the folds' bits, as the blocking calls' (GPU only: the
/// scoped forms take CUDA streams).
#[test]
fn exact_sums_into_a_scope_are_the_folds_bits() {
    use cust::memory::DeviceBuffer;
    use cust::stream::{Stream, StreamFlags};
    let test = "exact_sums_into_a_scope_are_the_folds_bits";
    let Some(_context) = gpu(test) else {
        return;
    };
    let mut rng = rng(test);
    let mut reducer = reduce::Reducer::new().unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    for kind in KINDS {
        let values = random_input::<f64>(&mut rng, kind, 200_000)[..200_000].to_vec();
        let offsets = random_segments(&mut rng, values.len());
        let (rows, len) = (400, 500);
        let device_values = DeviceBuffer::from_slice(&values).unwrap();
        let device_offsets = DeviceBuffer::from_slice(&offsets).unwrap();
        let mut per_segment = DeviceBuffer::from_slice(&vec![f64::poison(); offsets.len() - 1]).unwrap();
        let mut per_row = DeviceBuffer::from_slice(&vec![f64::poison(); rows]).unwrap();
        let mut mean = DeviceBuffer::from_slice(&[f64::poison()]).unwrap();
        let mut row_means = DeviceBuffer::from_slice(&vec![f64::poison(); rows]).unwrap();
        reducer
            .scope(|s| {
                let over = Over::Segments((&device_offsets).into());
                s.reduce_into(&device_values, ExactSum, over, &mut per_segment, &stream)?;
                s.reduce_into(
                    &device_values,
                    ExactSum,
                    Over::Rows { rows, len },
                    &mut per_row,
                    &stream,
                )?;
                s.reduce_into(&device_values, ExactMean, Over::Whole, &mut mean, &stream)?;
                s.reduce_into(
                    &device_values,
                    ExactMean,
                    Over::Rows { rows, len },
                    &mut row_means,
                    &stream,
                )
            })
            .unwrap();
        let mean = mean.as_host_vec().unwrap()[0];
        let want = ExactMean::fold(&values);
        assert!(same_bits(mean, want), "{kind:?} mean: {mean:e} != {want:e}");
        for (row, got) in row_means.as_host_vec().unwrap().iter().enumerate() {
            let want = ExactMean::fold(&values[row * len..(row + 1) * len]);
            assert!(same_bits(*got, want), "{kind:?} row {row}'s mean: {got:e} != {want:e}");
        }
        let segments = Parts::Segments(offsets).ranges();
        let row_ranges = Parts::Rows { rows, len }.ranges();
        for (results, ranges) in [(&per_segment, segments), (&per_row, row_ranges)] {
            for (part, (got, range)) in results.as_host_vec().unwrap().iter().zip(ranges).enumerate() {
                let want = ExactSum::fold(&values[range]);
                assert!(same_bits(*got, want), "{kind:?} part {part}: {got:e} != {want:e}");
            }
        }
    }
}

/// The exact reductions built on the exact sum.
#[derive(Clone, Copy, Debug)]
enum Derived {
    Mean,
    NanSum,
    SumOfSquares,
}

impl Derived {
    fn fold<T: ExactTest>(self, values: &[T]) -> T {
        match self {
            Derived::Mean => ExactMean::fold(values),
            Derived::NanSum => ExactNanSum::fold(values),
            Derived::SumOfSquares => ExactSumOfSquares::fold(values),
        }
    }
}

/// `what` of `values` (staged at `offset` between poison) over `over` on
/// the tester's backend, its results into poisoned outputs.
fn exact_over<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    offset: usize,
    over: Over<'_, &[u64]>,
    what: Derived,
) -> Vec<T> {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    let input = B::slice(&staged);
    let reducer = &mut tester.reducer;
    macro_rules! over {
        ($what:expr) => {
            match over {
                Over::Whole => return vec![reducer.reduce(input, $what).unwrap()],
                Over::Segments(offsets) => {
                    let offsets = B::stage(offsets, 0, u64::MAX);
                    reducer.reduce_over(input, $what, Over::Segments(B::slice(&offsets)))
                }
                Over::Rows { rows, len } => reducer.reduce_over(input, $what, Over::Rows { rows, len }),
                Over::Axes(layout, axes) => reducer.reduce_over(input, $what, Over::Axes(layout, axes)),
                other => panic!("no such place in these tests: {other:?}"),
            }
        };
    }
    let results = match what {
        Derived::Mean => over!(ExactMean),
        Derived::NanSum => over!(ExactNanSum),
        Derived::SumOfSquares => over!(ExactSumOfSquares),
    };
    B::to_vec(&results.unwrap().values).unwrap()
}

/// Where an exact reduction reduces, and the input's indices of each result's elements.
pub(crate) type Place<'a> = (Over<'a, &'a [u64]>, Vec<Vec<usize>>);

/// The dense views of `n` values the exact reductions' tests reduce along:
/// columns of 500, a cube of 4 × n/2000 × 500, and 5 × 0.
pub(crate) struct Views {
    columns: Strided,
    /// Four long rows, along the last axis the whole-input kernel's rows
    /// (on the emulator's grid of 6, one block a row).
    long_rows: Strided,
    cube: Strided,
    /// Axes 0 and 2 of it, as of the cube: read in place as rows in runs
    /// where the input is aligned, else gathered (two chances to be both).
    runs: Strided,
    none_along: Strided,
}

impl Views {
    pub(crate) fn new(n: usize) -> Views {
        Views {
            columns: Strided::contiguous(&[n / 500, 500]).unwrap(),
            long_rows: Strided::contiguous(&[4, n / 4]).unwrap(),
            cube: Strided::contiguous(&[4, n / 2000, 500]).unwrap(),
            runs: Strided::contiguous(&[2, n / 1000, 500]).unwrap(),
            none_along: Strided::contiguous(&[5, 0]).unwrap(),
        }
    }
}

/// Every place the exact reductions are tested over, for `n` values and
/// `segments` of them: the whole input (empty and tiny too), the segments,
/// rows (long, short, of none), and axes of `views` (the columns and the
/// last axis, long rows' last axis, a middle one, two apart (gathered, and in place as rows in
/// runs), all of them, none along an empty axis), each with its results'
/// elements.
pub(crate) fn places<'a>(n: usize, segments: &'a [u64], views: &'a Views) -> Vec<Place<'a>> {
    let indices = |parts: Parts| -> Vec<Vec<usize>> { parts.ranges().into_iter().map(Vec::from_iter).collect() };
    let Views {
        columns,
        long_rows,
        cube,
        runs,
        none_along,
    } = views;
    vec![
        (Over::Whole, vec![(0..n).collect()]),
        (Over::Whole, vec![vec![]]),
        (Over::Whole, vec![vec![0, 1, 2]]),
        (Over::Segments(segments), indices(Parts::Segments(segments.to_vec()))),
        (
            Over::Rows {
                rows: 1000,
                len: n / 1000,
            },
            indices(Parts::Rows {
                rows: 1000,
                len: n / 1000,
            }),
        ),
        (
            Over::Rows { rows: n / 3, len: 3 },
            indices(Parts::Rows { rows: n / 3, len: 3 }),
        ),
        (Over::Rows { rows: 5, len: 0 }, vec![vec![]; 5]),
        (Over::Axes(columns, &[0]), gathered_indices(columns, &[0])),
        (Over::Axes(columns, &[1]), gathered_indices(columns, &[1])),
        (Over::Axes(long_rows, &[1]), gathered_indices(long_rows, &[1])),
        (Over::Axes(cube, &[1]), gathered_indices(cube, &[1])),
        (Over::Axes(cube, &[0, 2]), gathered_indices(cube, &[0, 2])),
        (Over::Axes(runs, &[0, 2]), gathered_indices(runs, &[0, 2])),
        (Over::Axes(cube, &[0, 1, 2]), gathered_indices(cube, &[0, 1, 2])),
        (Over::Axes(none_along, &[1]), vec![vec![]; 5]),
    ]
}

/// `ExactMean`, `ExactNanSum` and `ExactSumOfSquares`: every result is the fold of its
/// elements, bit for bit (NaNs included: both give the canonical NaN),
/// over the whole input (empty too), random segments with empty ones (each
/// mean divided by its own length), rows (of none too), and axes read in
/// place (all of them too), gathered and of none; every kind of values, at every offset, on every
/// backend. For `ExactNanSum`, NaNs of either sign and any payload among
/// the values, at a density that leaves some short parts all NaN.
fn derived_match_the_fold<T: ExactTest>(test: &str, what: Derived) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let name = backend.name();
        for kind in KINDS {
            let n = backend.size(1_000_000, 30_000);
            let views = Views::new(n);
            let covered = rng.gen_range(0..n);
            let segments = random_segments(&mut rng, covered);
            let places = places(n, &segments, &views);
            for (place, parts) in places {
                let len = match place {
                    Over::Segments(offsets) => *offsets.last().unwrap() as usize + 2,
                    _ => parts.iter().flatten().max().map_or(0, |&last| last + 1),
                };
                let mut values = random_input::<T>(&mut rng, kind, len);
                values.truncate(len);
                if let Derived::NanSum = what {
                    sprinkle_nans(&mut rng, &mut values, matches!(kind, Kind::Specials));
                }
                if let (Derived::SumOfSquares, Kind::WideRange) = (what, kind) {
                    // Square roots of values over the whole range: squares
                    // over the whole range, finite, too many bits for the
                    // fast path (not infinities, as most squares would be).
                    for x in values.iter_mut() {
                        let v = x.to_f64();
                        *x = T::from_f64(v.abs().sqrt().copysign(v));
                    }
                }
                let offset = rng.gen_range(0..4);
                let case = format!("{name} {kind:?}: {what:?} over {place:?} at offset {offset}");
                let got = exact_over(&mut backend, &values, offset, place, what);
                assert_eq!(got.len(), parts.len(), "{case}");
                for (part, (got, indices)) in got.iter().zip(&parts).enumerate() {
                    let elements: Vec<T> = indices.iter().map(|&i| values[i]).collect();
                    let want = what.fold(&elements);
                    assert!(
                        got.to_bits() == want.to_bits(),
                        "{case}: part {part} of {} elements gives {got:e} ({:#x}) where the fold gives {want:e} ({:#x})",
                        elements.len(),
                        got.to_bits(),
                        want.to_bits()
                    );
                }
            }
        }
    });
}

/// The indices into the input of each result's elements, along `axes` of
/// the dense `layout`, in the kept axes' order.
pub(crate) fn gathered_indices(layout: &Strided, axes: &[usize]) -> Vec<Vec<usize>> {
    let len = layout.shape().iter().product();
    let indices: Vec<usize> = (0..len).collect();
    gathered(&indices, layout, axes)
}

#[test]
fn exact_means_of_f32_are_the_folds_bits() {
    derived_match_the_fold::<f32>("exact_means_of_f32_are_the_folds_bits", Derived::Mean);
}

#[test]
fn exact_means_of_f64_are_the_folds_bits() {
    derived_match_the_fold::<f64>("exact_means_of_f64_are_the_folds_bits", Derived::Mean);
}

#[test]
fn exact_sums_of_squares_of_f32_are_the_folds_bits() {
    derived_match_the_fold::<f32>("exact_sums_of_squares_of_f32_are_the_folds_bits", Derived::SumOfSquares);
}

#[test]
fn exact_sums_of_squares_of_f64_are_the_folds_bits() {
    derived_match_the_fold::<f64>("exact_sums_of_squares_of_f64_are_the_folds_bits", Derived::SumOfSquares);
}

#[test]
fn exact_nan_sums_of_f32_are_the_folds_bits() {
    derived_match_the_fold::<f32>("exact_nan_sums_of_f32_are_the_folds_bits", Derived::NanSum);
}

#[test]
fn exact_nan_sums_of_f64_are_the_folds_bits() {
    derived_match_the_fold::<f64>("exact_nan_sums_of_f64_are_the_folds_bits", Derived::NanSum);
}

/// Replaces about one value in four with a NaN: either sign, a random
/// payload, quiet or signalling; with `infinities`, one in 64 with `+inf`
/// or `-inf` too (a part with both sums to NaN: the canonical one).
fn sprinkle_nans<T: ExactTest>(rng: &mut StdRng, values: &mut [T], infinities: bool) {
    for x in values.iter_mut() {
        match rng.gen_range(0..64) {
            0..16 => *x = T::nan_with(rng.gen()),
            16 if infinities => *x = T::from_f64(if rng.gen() { f64::INFINITY } else { f64::NEG_INFINITY }),
            _ => {}
        }
    }
}

/// `ExactNanSum` of a whole input: the bits of `ExactSum` of the values
/// that are not NaN (its fold, itself checked against `fsum`), every kind,
/// lengths past the grid's cap, every offset, NaN densities from none to
/// all, on every backend; and known answers.
#[test]
fn exact_nan_sums_are_the_sums_without_the_nans() {
    assert_eq!(ExactNanSum::fold(&[1e30f32, f32::NAN, 1.0, -1e30]), 1.0);
    assert_eq!(ExactNanSum::fold(&[f64::NAN, -0.0]).to_bits(), 0);
    assert!(ExactNanSum::fold(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    assert_eq!(ExactNanSum::fold(&[f32::NAN, f32::INFINITY]), f32::INFINITY);
    let test = "exact_nan_sums_are_the_sums_without_the_nans";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for kind in KINDS {
            for (n, nan_every) in [
                (1, 1),
                (100, 1),
                (4097, 3),
                (backend.size(300_001, 40_001), 50),
                (backend.size(5_000_000, 90_000), 1000),
            ] {
                let mut values = random_input::<f32>(&mut rng, kind, n);
                for x in values.iter_mut() {
                    if rng.gen_range(0..nan_every) == 0 {
                        *x = f32::nan_with(rng.gen());
                    }
                }
                let wide: Vec<f64> = values.iter().map(|&x| f64::from(x)).collect();
                for offset in [0, rng.gen_range(1..4)] {
                    let case = format!(
                        "{} {kind:?} n = {n}, a NaN in {nan_every}, offset {offset}",
                        backend.name()
                    );
                    check_nan_sum(&mut backend, &values, offset, &case);
                    check_nan_sum(&mut backend, &wide, offset, &case);
                }
            }
        }
    });
}

fn check_nan_sum<B: TestBackend, T: ExactTest>(tester: &mut Tester<B>, values: &[T], offset: usize, case: &str) {
    let not_nan: Vec<T> = values.iter().copied().filter(|x| !x.to_f64().is_nan()).collect();
    let want = reference(&not_nan);
    assert_eq!(ExactNanSum::fold(values).to_bits(), want.to_bits(), "{case}: the fold");
    let got = exact_over(tester, values, offset, Over::Whole, Derived::NanSum)[0];
    assert!(
        got.to_bits() == want.to_bits(),
        "{case}: {got:e} ({:#x}) where the sum without the NaNs is {want:e} ({:#x})",
        got.to_bits(),
        want.to_bits()
    );
}

/// `ExactMean::fold` against exact arithmetic: the fold's sum rounded, then
/// divided; `f64` against `fsum` and one correctly rounded division; and
/// values a float mean loses.
#[test]
fn exact_mean_fold_is_the_sum_divided() {
    assert_eq!(ExactMean::fold(&[1e30f32, 3.0, -1e30, 1.0]), 1.0);
    assert_eq!(ExactMean::fold(&[1e16f64, 1.0, -1e16, 3.0]), 1.0);
    assert_eq!(ExactMean::fold::<f64>(&[]).to_bits(), 0x7fff_ffff_ffff_ffff);
    assert_eq!(ExactMean::fold::<f32>(&[]).to_bits(), 0x7fff_ffff);
    let mut rng = rng("exact_mean_fold_is_the_sum_divided");
    for _ in 0..200 {
        let n = rng.gen_range(1..2000);
        let values = random_input::<f64>(&mut rng, Kind::Cancelling, n);
        let want = fsum(values.iter().copied()) / values.len() as f64;
        assert_eq!(ExactMean::fold(&values).to_bits(), want.to_bits(), "{n} values");
    }
}
