//! `ExactLogSumExp`: the maximum, each `exp(x − max)` on a fixed grid,
//! their exact sum rounded once, `max + ln` of it: every result the fold's
//! bits on every backend, place, launch shape, batch, order and offset;
//! specials and empty parts as documented; the error against the exact
//! logsumexp within the stated bound.

use crate::common;
use crate::exact_sum::{
    check_independent_of_shape_batch_and_order, fsum, places, random_input, random_segments, same_bits, ExactTest,
    Kind, Views, KINDS,
};
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::axes::Strided;
use reduce::{ExactLogSumExp, LogSumExp, Over};

/// `ExactLogSumExp` of `values` (staged at `offset` between poison) over
/// `over`, on the tester's backend, into poisoned outputs.
fn logsumexp_over<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    offset: usize,
    over: Over<'_, &[u64]>,
) -> Vec<T> {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    let input = B::slice(&staged);
    let reducer = &mut tester.reducer;
    let offsets = match over {
        Over::Segments(offsets) => B::stage(offsets, 0, u64::MAX),
        _ => B::stage(&[0u64], 0, u64::MAX),
    };
    let results = match over {
        Over::Whole => return vec![reducer.reduce(input, ExactLogSumExp).unwrap()],
        Over::Segments(_) => reducer.reduce_over(input, ExactLogSumExp, Over::Segments(B::slice(&offsets))),
        Over::Rows { rows, len } => reducer.reduce_over(input, ExactLogSumExp, Over::Rows { rows, len }),
        Over::Axes(layout, axes) => reducer.reduce_over(input, ExactLogSumExp, Over::Axes(layout, axes)),
        other => panic!("no such place in these tests: {other:?}"),
    };
    B::to_vec(&results.unwrap().values).unwrap()
}

/// Every result is its fold's bits (NaNs included: the canonical NaN both
/// ways), over the whole input (empty and tiny too), random segments with
/// empty ones, rows (short, long, of none), and axes (the columns and a
/// middle axis, which both passes read in place by the axis kernel, two
/// axes apart (gathered first), all of them, and none along an empty
/// axis); every kind of values, and logits
/// (uniform, times 30 and 60: many terms below the grid's floor); every
/// offset; every backend.
fn matches_the_fold<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let name = backend.name();
        let kinds = KINDS
            .iter()
            .map(|&kind| (kind, 1.0))
            .chain([(Kind::Uniform, 30.0), (Kind::Uniform, 60.0)]);
        for (kind, scale) in kinds {
            let n = backend.size(1_000_000, 20_000);
            let views = Views::new(n);
            let covered = rng.gen_range(0..n);
            let segments = random_segments(&mut rng, covered);
            for (place, parts) in places(n, &segments, &views) {
                let len = match place {
                    Over::Segments(offsets) => *offsets.last().unwrap() as usize + 2,
                    _ => parts.iter().flatten().max().map_or(0, |&last| last + 1),
                };
                let mut values = random_input::<T>(&mut rng, kind, len);
                values.truncate(len);
                for x in values.iter_mut() {
                    *x = T::from_f64(x.to_f64() * scale);
                }
                let offset = rng.gen_range(0..4);
                let case = format!("{name} {kind:?} × {scale}: over {place:?} at offset {offset}");
                let got = logsumexp_over(&mut backend, &values, offset, place);
                assert_eq!(got.len(), parts.len(), "{case}");
                for (part, indices) in parts.iter().enumerate() {
                    let elements: Vec<T> = indices.iter().map(|&i| values[i]).collect();
                    let want = ExactLogSumExp::fold(&elements);
                    assert!(
                        got[part].to_bits() == want.to_bits(),
                        "{case}: part {part} ({} elements) gives {:e} ({:#x}) where the fold gives {want:e} ({:#x})",
                        elements.len(),
                        got[part],
                        got[part].to_bits(),
                        want.to_bits()
                    );
                }
            }
        }
    });
}

#[test]
fn exact_logsumexps_of_f32_are_the_folds_bits() {
    matches_the_fold::<f32>("exact_logsumexps_of_f32_are_the_folds_bits");
}

#[test]
fn exact_logsumexps_of_f64_are_the_folds_bits() {
    matches_the_fold::<f64>("exact_logsumexps_of_f64_are_the_folds_bits");
}

/// One part's values (logits: uniform times 40) under five launch shapes,
/// shuffled and shifted; as one row of batches of 1, 7, 64 (and 4096 short
/// rows) among random others, at a random position; as one segment among
/// random others: the same bits, the fold's.
fn independent_of_shape_batch_and_order<T: ExactTest>(rng: &mut StdRng) {
    for kind in KINDS {
        for (len, batches) in [(3000, &[1, 7, 64][..]), (16, &[1, 7, 64, 4096][..])] {
            let mut row = random_input::<T>(rng, kind, len);
            row.truncate(len);
            if matches!(kind, Kind::Uniform) {
                row.iter_mut().for_each(|x| *x = T::from_f64(x.to_f64() * 40.0));
            }
            let want = ExactLogSumExp::fold(&row);
            check_independent_of_shape_batch_and_order(
                rng,
                (kind, &mut row),
                (batches, want),
                |emulator, values| emulator.reduce(values, ExactLogSumExp).unwrap(),
                |emulator, values, over| {
                    let results = emulator.reduce_over(values, ExactLogSumExp, over).unwrap();
                    results.values.to_vec()
                },
            );
        }
    }
}

#[test]
fn exact_logsumexps_do_not_depend_on_shape_batch_order_or_offset() {
    let mut rng = rng("exact_logsumexps_do_not_depend_on_shape_batch_order_or_offset");
    independent_of_shape_batch_and_order::<f32>(&mut rng);
    independent_of_shape_batch_and_order::<f64>(&mut rng);
}

#[test]
fn adversarial_exact_logsumexps() {
    let test = "adversarial_exact_logsumexps";
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    for_each_backend!(test, |backend| {
        let name = backend.name();
        let mut check = |values: &[f32], want: f32| {
            let got = logsumexp_over(&mut backend, values, 1, Over::Whole)[0];
            let fold = ExactLogSumExp::fold(values);
            assert!(
                same_bits(got, want) && same_bits(fold, want),
                "{name} {values:?}: {got:e}, fold {fold:e}, want {want:e}"
            );
            // The NaN the kernels make or pass on is the canonical one.
            if want.is_nan() {
                assert_eq!(got.to_bits(), 0x7fff_ffff, "{name} {values:?}");
            }
        };
        check(&[], -inf);
        check(&[-inf, -inf], -inf);
        check(&[-inf, 3.0, -inf], 3.0); // ln 1 = 0: the max itself
        check(&[nan, inf], nan);
        check(&[inf, -inf, 1.0], inf);
        check(&[f32::from_bits(0xffc0_1234), 1.0], nan); // any payload, either sign
        check(&[-f32::MAX, f32::MAX], f32::MAX); // x − max overflows to -inf: a term of 0
        check(&[f32::MAX, f32::MAX], f32::MAX); // MAX + ln 2 rounds to MAX
        check(&[1e30, 1.0, -1e30], 1e30);
        check(&[-0.0, 0.0], ExactLogSumExp::fold(&[0.0f32, 0.0]));
        // e^-30 is below the grid's floor (2^-41), rounded to a multiple of
        // 2^-64; 1 + e^-30 rounds to 1, whose ln is +0.0.
        check(&[0.0, -30.0], 0.0);
        check(&[-30.0, 0.0, -20.0], ExactLogSumExp::fold(&[0.0f32, -20.0, -30.0]));
        // The same values in any order.
        let mixed = [5.0f32, -1e30, 4.5, -inf, 5.0, 0.25];
        let want = ExactLogSumExp::fold(&mixed);
        let mut permuted = mixed;
        for _ in 0..6 {
            permuted.rotate_left(1);
            check(&permuted, want);
        }
        empty_dimensions_give_minus_infinity(&mut backend);
    });
}

/// A reduced dimension of length 0 (rows of none, an axis of length 0,
/// where `Op::Max` has no value): `-inf` for every result, as `LogSumExp`.
fn empty_dimensions_give_minus_infinity<B: TestBackend>(tester: &mut Tester<B>) {
    let name = B::NAME;
    let staged = B::stage(&[0.0f32; 0], 0, f32::NAN);
    let input = B::slice(&staged);
    let reducer = &mut tester.reducer;
    let rows = reducer
        .reduce_over(input, ExactLogSumExp, Over::Rows { rows: 4, len: 0 })
        .unwrap();
    assert_eq!(B::to_vec(&rows.values).unwrap(), vec![f32::NEG_INFINITY; 4], "{name}");
    let layout = Strided::contiguous(&[3, 0]).unwrap();
    let along = reducer
        .reduce_over(input, ExactLogSumExp, Over::Axes(&layout, &[1]))
        .unwrap();
    let statistic = reducer
        .reduce_over(input, LogSumExp, Over::Axes(&layout, &[1]))
        .unwrap();
    assert_eq!(B::to_vec(&along.values).unwrap(), vec![f32::NEG_INFINITY; 3], "{name}");
    assert_eq!(
        B::to_vec(&statistic.values).unwrap(),
        vec![f32::NEG_INFINITY; 3],
        "{name}"
    );
}

/// `ExactLogSumExp::fold` of `f32`s against the exact logsumexp within the
/// documented bound: `ε·(|lse| + 8·|ln S| + w + 10) + n·2^-65`, `ε` =
/// 2^-24, `w` the terms' weighted mean of `|x − max|` (the rounded
/// difference's relative error in each term), 8ε·|ln S| for `ln`'s and 10ε
/// for `exp`'s few ulps and the roundings, `n·2^-65` the grid's. The
/// reference: `max + ln(fsum(exp(x − max)))` in `f64` (each term's
/// relative error about 2^-52): far below the bound's.
#[test]
fn exact_logsumexp_error_is_within_its_bound() {
    let mut rng = rng("exact_logsumexp_error_is_within_its_bound");
    let epsilon = 2f64.powi(-24);
    for round in 0..400 {
        let n = rng.gen_range(1..3000);
        let spread = [0.01, 1.0, 10.0, 50.0][round % 4];
        let center = [0.0, 1.0, -300.0, 1e4][(round / 4) % 4];
        let values: Vec<f32> = (0..n)
            .map(|_| (center + spread * rng.gen_range(-1.0..1.0)) as f32)
            .collect();
        let max = values.iter().map(|&x| f64::from(x)).fold(f64::NEG_INFINITY, f64::max);
        let terms: Vec<f64> = values.iter().map(|&x| (f64::from(x) - max).exp()).collect();
        let sum = fsum(terms.iter().copied());
        let exact = max + sum.ln();
        let weighted = fsum(values.iter().zip(&terms).map(|(&x, t)| t * (max - f64::from(x)))) / sum;
        let got = f64::from(ExactLogSumExp::fold(&values));
        let bound = epsilon * (exact.abs() + 8.0 * sum.ln().abs() + weighted + 10.0) + n as f64 * 2f64.powi(-65);
        assert!(
            (got - exact).abs() <= bound,
            "round {round}: n = {n} around {center} spread {spread}: {got:e} against {exact:e}, bound {bound:e}"
        );
    }
}

/// `Scope::reduce_into` of `ExactLogSumExp` over rows and over the whole
/// input, on another stream into poisoned outputs: the folds' bits (GPU
/// only: the scoped forms take CUDA streams).
#[test]
fn exact_logsumexps_into_a_scope_are_the_folds_bits() {
    use cust::memory::DeviceBuffer;
    use cust::stream::{Stream, StreamFlags};
    let test = "exact_logsumexps_into_a_scope_are_the_folds_bits";
    let Some(_context) = gpu(test) else {
        return;
    };
    let mut rng = rng(test);
    let mut reducer = reduce::Reducer::new().unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let (rows, len) = (400, 500);
    for kind in KINDS {
        let values = random_input::<f64>(&mut rng, kind, rows * len)[..rows * len].to_vec();
        let device_values = DeviceBuffer::from_slice(&values).unwrap();
        let mut per_row = DeviceBuffer::from_slice(&vec![f64::poison(); rows]).unwrap();
        let mut whole = DeviceBuffer::from_slice(&[f64::poison()]).unwrap();
        reducer
            .scope(|s| {
                s.reduce_into(
                    &device_values,
                    ExactLogSumExp,
                    Over::Rows { rows, len },
                    &mut per_row,
                    &stream,
                )?;
                s.reduce_into(&device_values, ExactLogSumExp, Over::Whole, &mut whole, &stream)
            })
            .unwrap();
        let got = whole.as_host_vec().unwrap()[0];
        let want = ExactLogSumExp::fold(&values);
        assert!(same_bits(got, want), "{kind:?} whole: {got:e} != {want:e}");
        let per_row = per_row.as_host_vec().unwrap();
        for row in 0..rows {
            let want = ExactLogSumExp::fold(&values[row * len..(row + 1) * len]);
            assert!(
                same_bits(per_row[row], want),
                "{kind:?} row {row}: {:e} != {want:e}",
                per_row[row]
            );
        }
    }
}
