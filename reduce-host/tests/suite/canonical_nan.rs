//! One NaN: every float reduction whose result is a NaN gives the same
//! canonical NaN (`0x7fff_ffff` for `f32`, `0x7fff_ffff_ffff_ffff` for
//! `f64`), whatever payloads and signs the input's NaNs carry, on the
//! emulator and the GPU alike, on every path (whole inputs of every size,
//! rows that pack into vectors, rows per thread and per team, segments,
//! axes), for the statistics (var, std, logsumexp) and for `ExactSum`
//! and its CPU `fold` too, and the means of nothing (`Mean`, `ExactMean`:
//! `0 / 0` on the host and in the divide kernel).

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::axes::Strided;
use reduce::{ExactMean, ExactSum, LogSumExp, Mean, Op, Over, Std, Var};

/// A float type of the test, with NaNs of any payload.
trait NanTest:
    TestElement
    + reduce::FloatElement
    + reduce::MeanInput<Mean = f64>
    + reduce::statistics::MomentsInput<Self>
    + reduce::statistics::LogSumExpInput
{
    /// The canonical NaN's bits.
    const CANONICAL: u64;
    /// A NaN with a random payload (quiet or signalling) and sign.
    fn random_nan(rng: &mut StdRng) -> Self;
}

impl NanTest for f32 {
    const CANONICAL: u64 = 0x7fff_ffff;
    fn random_nan(rng: &mut StdRng) -> Self {
        let payload = rng.gen_range(1..1u32 << 23);
        let sign = rng.gen::<u32>() & 0x8000_0000;
        f32::from_bits(sign | 0x7f80_0000 | payload)
    }
}

impl NanTest for f64 {
    const CANONICAL: u64 = 0x7fff_ffff_ffff_ffff;
    fn random_nan(rng: &mut StdRng) -> Self {
        let payload = rng.gen_range(1..1u64 << 52);
        let sign = rng.gen::<u64>() & (1 << 63);
        f64::from_bits(sign | 0x7ff0_0000_0000_0000 | payload)
    }
}

/// The ops with a NaN result for an input that holds a NaN: every float op
/// but `NanSum` (which counts NaNs as 0). For the NaN-ignoring max and min
/// only an input of NaNs alone gives one.
fn nan_ops<T: TestElement>() -> Vec<(Op, bool)> {
    ops_for::<T>()
        .into_iter()
        .filter(|op| !matches!(op, Op::NanSum))
        .map(|op| (op, matches!(op, Op::NanMax | Op::NanMin)))
        .collect()
}

/// `parts` parts of `len` values each for `op`, each holding a NaN at a
/// random place (or NaNs alone, where `all_nan`).
fn with_nans<T: NanTest>(rng: &mut StdRng, op: Op, (parts, len): (usize, usize), all_nan: bool) -> Vec<T> {
    let mut data = random_vec::<T>(rng, op, parts * len);
    for part in data.chunks_mut(len.max(1)) {
        if all_nan {
            part.iter_mut().for_each(|x| *x = T::random_nan(rng));
        } else {
            let at = rng.gen_range(0..part.len());
            part[at] = T::random_nan(rng);
        }
    }
    data
}

/// A failure's first 300 characters (its results can run to thousands).
fn shortened(text: &str) -> String {
    text.chars().take(300).collect()
}

fn assert_canonical<T: NanTest>(results: &[T], what: &str) {
    for (k, got) in results.iter().enumerate() {
        assert_eq!(
            got.to_bits(),
            T::CANONICAL,
            "{what}: result {k} is {got:?} ({:#x}), not the canonical NaN",
            got.to_bits()
        );
    }
}

fn every_nan_result_is_canonical<T: NanTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let name = backend.name();
        for (op, all_nan) in nan_ops::<T>() {
            // Whole inputs: the NaN in the head, the body or the tail.
            for n in [1usize, 2, 5, 64, 4097, backend.size(300_001, 30_001)] {
                for offset in [0, 1, 3] {
                    let data = with_nans::<T>(&mut rng, op, (1, n), all_nan);
                    let got = backend.reduce(&data, offset, op).unwrap();
                    assert_canonical(&[got], &format!("{name}: {op} of {n} at offset {offset}"));
                }
            }
            // Rows: packed into vectors (1, 2, 4), a thread's (3, 8), a
            // team's (64, 1000); every row holds a NaN.
            for row_len in [1usize, 2, 3, 4, 8, 64, 1000] {
                let rows = 3000 / row_len + 5;
                let data = with_nans::<T>(&mut rng, op, (rows, row_len), all_nan);
                let what = format!("{name}: {op} of {rows} rows of {row_len}");
                let results = backend
                    .rows(&data, 0, (rows, row_len), op)
                    .unwrap_or_else(|e| panic!("{what}: {}", shortened(&e)))
                    .unwrap();
                assert_canonical(&results, &what);
            }
            // Segments of random lengths, each holding a NaN, at an odd offset.
            let lengths: Vec<usize> = (0..300).map(|_| rng.gen_range(1..400)).collect();
            let mut data = Vec::new();
            for &len in &lengths {
                data.extend(with_nans::<T>(&mut rng, op, (1, len), all_nan));
            }
            let what = format!("{name}: {op} of segments");
            let results = backend
                .segmented(&data, 1, &offsets_of(0, &lengths), op)
                .unwrap_or_else(|e| panic!("{what}: {}", shortened(&e)))
                .unwrap();
            assert_canonical(&results, &what);
            // Axes of a view of NaNs alone: along one axis and along two apart.
            let layout = Strided::contiguous(&[6, 10, 7]).unwrap();
            let data = with_nans::<T>(&mut rng, op, (1, 420), true);
            for axes in [&[1isize][..], &[0, 2]] {
                let what = format!("{name}: {op} along axes {axes:?}");
                let (results, _) = backend
                    .axes(&data, 0, &layout, axes, op)
                    .unwrap_or_else(|e| panic!("{what}: {}", shortened(&e)))
                    .unwrap();
                assert_canonical(&results, &what);
            }
        }

        // Statistics along an axis of a view of NaNs alone.
        let layout = Strided::contiguous(&[6, 10, 7]).unwrap();
        let data = with_nans::<T>(&mut rng, Op::Sum, (1, 420), true);
        let statistics = backend.staged_twice(&data, 1, T::poison(), |r, x| {
            let over = || Over::Axes(&layout, &[1]);
            let var = r.reduce_over(x, Var::<T>::new(1.0).unwrap(), over()).unwrap().values;
            let std = r.reduce_over(x, Std::<T>::new(0.0).unwrap(), over()).unwrap().values;
            let lse = r.reduce_over(x, LogSumExp, over()).unwrap().values;
            [r.host(&var), r.host(&std), r.host(&lse)]
        });
        for (results, what) in statistics.iter().zip(["Var", "Std", "LogSumExp"]) {
            assert_canonical(results, &format!("{name}: {what} along axis 1"));
        }

        // The exact sum over every place, each part holding a NaN, and
        // the CPU's fold of each part.
        let lengths: Vec<usize> = (0..200).map(|_| rng.gen_range(1..300)).collect();
        let places = [
            (Place::Whole, (1, 5000)),
            (Place::Whole, (1, 3)),
            (Place::Rows(700, 1), (700, 1)),
            (Place::Rows(300, 16), (300, 16)),
            (Place::Rows(20, 3000), (20, 3000)),
            (Place::Segments(offsets_of(0, &lengths)), (1, lengths.iter().sum())),
            (
                Place::Axes(Strided::contiguous(&[6, 10, 7]).unwrap(), vec![1]),
                (1, 420),
            ),
            (
                Place::Axes(Strided::contiguous(&[6, 10, 7]).unwrap(), vec![0, 2]),
                (1, 420),
            ),
        ];
        for (place, shape) in &places {
            // NaNs alone where the parts are not rows (a NaN in every part).
            let all_nan = !matches!(place, Place::Whole | Place::Rows(..));
            let data = with_nans::<T>(&mut rng, Op::Sum, *shape, all_nan);
            let results = exact_sums(&mut backend, &data, place);
            assert_canonical(&results, &format!("{name}: ExactSum over {place:?}"));
            let folds: Vec<T> = data.chunks(shape.1.max(1)).map(ExactSum::fold).collect();
            assert_canonical(&folds, &format!("ExactSum::fold of {place:?}'s parts"));
        }

        empty_means::<_, T>(&mut backend);
    });
}

/// The means of no elements, `0 / 0`: divided on the host (a whole input)
/// and by the divide kernel (rows of none, empty segments).
fn empty_means<B: TestBackend, T: NanTest>(tester: &mut Tester<B>) {
    let name = tester.name();
    let empty = B::stage::<T>(&[], 0, T::poison());
    let none = B::slice(&empty);
    let reducer = &mut tester.reducer;
    let means: f64 = reducer.reduce(none, Mean).unwrap();
    assert_canonical(&[means], &format!("{name}: Mean of nothing"));
    let exact: T = reducer.reduce(none, ExactMean).unwrap();
    assert_canonical(&[exact], &format!("{name}: ExactMean of nothing"));
    let data = B::stage(&[T::poison(); 3], 0, T::poison());
    let offsets = B::stage(&[1u64, 1, 1, 2, 2], 0, u64::MAX);
    let (rows, segments) = (Over::Rows { rows: 4, len: 0 }, Over::Segments(B::slice(&offsets)));
    let exact_rows = reducer.reduce_over(none, ExactMean, rows).unwrap().values;
    let exact_segments = reducer
        .reduce_over(B::slice(&data), ExactMean, segments)
        .unwrap()
        .values;
    let mean_rows = reducer.reduce_over(none, Mean, rows).unwrap().values;
    let mut empty_segments = B::to_vec(&exact_segments).unwrap();
    empty_segments.remove(2); // [1, 2): the segment of one element
    assert_canonical(
        &B::to_vec(&exact_rows).unwrap(),
        &format!("{name}: ExactMean of rows of none"),
    );
    assert_canonical(&empty_segments, &format!("{name}: ExactMean of empty segments"));
    assert_canonical(
        &B::to_vec(&mean_rows).unwrap(),
        &format!("{name}: Mean of rows of none"),
    );
}

/// Where an exact sum is taken.
#[derive(Debug)]
enum Place {
    Whole,
    Rows(usize, usize),
    Segments(Vec<u64>),
    Axes(Strided, Vec<isize>),
}

/// `ExactSum` of `data` (staged one element past a 16-byte boundary) over `place`.
fn exact_sums<B: TestBackend, T: NanTest>(tester: &mut Tester<B>, data: &[T], place: &Place) -> Vec<T> {
    let staged = B::stage(data, 1, T::poison());
    let input = B::slice(&staged);
    let reducer = &mut tester.reducer;
    let reduced = match place {
        Place::Whole => return vec![reducer.reduce(input, ExactSum).unwrap()],
        Place::Rows(rows, len) => reducer.reduce_over(input, ExactSum, Over::Rows { rows: *rows, len: *len }),
        Place::Segments(offsets) => {
            let offsets = B::stage(offsets, 0, u64::MAX);
            reducer.reduce_over(input, ExactSum, Over::Segments(B::slice(&offsets)))
        }
        Place::Axes(layout, axes) => reducer.reduce_over(input, ExactSum, Over::Axes(layout, axes)),
    };
    B::to_vec(&reduced.unwrap().values).unwrap()
}

#[test]
fn every_f32_nan_result_is_the_canonical_nan() {
    every_nan_result_is_canonical::<f32>("every_f32_nan_result_is_the_canonical_nan");
}

#[test]
fn every_f64_nan_result_is_the_canonical_nan() {
    every_nan_result_is_canonical::<f64>("every_f64_nan_result_is_the_canonical_nan");
}
