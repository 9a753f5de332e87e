//! `ExactVar`, `ExactStd` and `ExactMeanVar`: the exact mean, each
//! squared deviation from it rounded, their exact sum rounded once and
//! divided: every result the fold's bits on every backend, place, launch
//! shape, batch, order and offset; specials and corrections as documented;
//! the error against the exact variance within the stated bound.

use crate::common;
use crate::exact_sum::{
    check_independent_of_shape_batch_and_order, fsum, places, random_input, random_segments, same_bits, ExactTest,
    Kind, Views, KINDS,
};
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::{Error, ExactMean, ExactMeanVar, ExactStd, ExactVar, Over};

/// The family's results over one place: `ExactVar`'s, `ExactStd`'s, and
/// `ExactMeanVar`'s means and variances.
struct Family<T> {
    var: Vec<T>,
    std: Vec<T>,
    means: Vec<T>,
    mean_var: Vec<T>,
}

/// The family of `values` (staged at `offset` between poison) over `over`
/// with `correction`, on the tester's backend, into poisoned outputs.
fn family_over<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    values: &[T],
    offset: usize,
    over: Over<'_, &[u64]>,
    correction: f64,
) -> Family<T> {
    let staged = B::stage(values, offset, T::from_f64(f64::NAN));
    let input = B::slice(&staged);
    let reducer = &mut tester.reducer;
    let (var, std, mean_var) = (
        ExactVar::new(correction).unwrap(),
        ExactStd::new(correction).unwrap(),
        ExactMeanVar::new(correction).unwrap(),
    );
    if let Over::Whole = over {
        let (mean, variance) = reducer.reduce(input, mean_var).unwrap();
        return Family {
            var: vec![reducer.reduce(input, var).unwrap()],
            std: vec![reducer.reduce(input, std).unwrap()],
            means: vec![mean],
            mean_var: vec![variance],
        };
    }
    let offsets = match over {
        Over::Segments(offsets) => B::stage(offsets, 0, u64::MAX),
        _ => B::stage(&[0u64], 0, u64::MAX),
    };
    macro_rules! over {
        ($what:expr) => {
            match over {
                Over::Segments(_) => reducer.reduce_over(input, $what, Over::Segments(B::slice(&offsets))),
                Over::Rows { rows, len } => reducer.reduce_over(input, $what, Over::Rows { rows, len }),
                Over::Axes(layout, axes) => reducer.reduce_over(input, $what, Over::Axes(layout, axes)),
                other => panic!("no such place in these tests: {other:?}"),
            }
            .unwrap()
            .values
        };
    }
    let (means, variances) = over!(mean_var);
    Family {
        var: B::to_vec(&over!(var)).unwrap(),
        std: B::to_vec(&over!(std)).unwrap(),
        means: B::to_vec(&means).unwrap(),
        mean_var: B::to_vec(&variances).unwrap(),
    }
}

/// Every result is its fold's bits (NaNs included: the canonical NaN both
/// ways), over the whole input (empty and tiny too), random segments with
/// empty ones, rows (short, long, of none), and axes (the columns and a
/// middle axis, which both passes read in place by the axis kernel, two
/// axes apart (gathered first), all of them, and none along an empty
/// axis); every kind of values, and values
/// whose mean is far larger than their spread; every offset; random
/// corrections; every backend.
fn matches_the_fold<T: ExactTest>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let name = backend.name();
        let kinds = KINDS.iter().map(|&kind| (kind, 0.0)).chain([(Kind::Uniform, 1000.0)]);
        for (kind, center) in kinds {
            let n = backend.size(1_000_000, 20_000);
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
                for x in values.iter_mut() {
                    *x = T::from_f64(x.to_f64() + center);
                }
                let correction = [0.0, 1.0, 2.5][rng.gen_range(0..3)];
                let offset = rng.gen_range(0..4);
                let case =
                    format!("{name} {kind:?} + {center}: over {place:?} at offset {offset}, correction {correction}");
                let got = family_over(&mut backend, &values, offset, place, correction);
                assert_eq!(got.var.len(), parts.len(), "{case}");
                let var = ExactVar::new(correction).unwrap();
                let std = ExactStd::new(correction).unwrap();
                let mean_var = ExactMeanVar::new(correction).unwrap();
                for (part, indices) in parts.iter().enumerate() {
                    let elements: Vec<T> = indices.iter().map(|&i| values[i]).collect();
                    let (mean, variance) = mean_var.fold(&elements);
                    assert!(
                        same_bits(mean, ExactMean::fold(&elements)) && same_bits(variance, var.fold(&elements)),
                        "{case}: ExactMeanVar's fold is not ExactMean's and ExactVar's"
                    );
                    for (what, got, want) in [
                        ("ExactVar", got.var[part], var.fold(&elements)),
                        ("ExactStd", got.std[part], std.fold(&elements)),
                        ("ExactMeanVar's mean", got.means[part], mean),
                        ("ExactMeanVar's variance", got.mean_var[part], variance),
                    ] {
                        assert!(
                            got.to_bits() == want.to_bits(),
                            "{case}: {what} of part {part} ({} elements) gives {got:e} ({:#x}) where the fold gives {want:e} ({:#x})",
                            elements.len(),
                            got.to_bits(),
                            want.to_bits()
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn exact_variances_of_f32_are_the_folds_bits() {
    matches_the_fold::<f32>("exact_variances_of_f32_are_the_folds_bits");
}

#[test]
fn exact_variances_of_f64_are_the_folds_bits() {
    matches_the_fold::<f64>("exact_variances_of_f64_are_the_folds_bits");
}

/// One part's values under five launch shapes, shuffled and shifted; as
/// one row of batches of 1, 7, 64 (and 4096 short rows) among random
/// others, at a random position; as one segment among random others: the
/// same bits, the fold's.
fn independent_of_shape_batch_and_order<T: ExactTest>(rng: &mut StdRng) {
    let var = ExactVar::new(1.0).unwrap();
    for kind in KINDS {
        for (len, batches) in [(3000, &[1, 7, 64][..]), (16, &[1, 7, 64, 4096][..])] {
            let mut row = random_input::<T>(rng, kind, len);
            row.truncate(len);
            let want = var.fold(&row);
            check_independent_of_shape_batch_and_order(
                rng,
                (kind, &mut row),
                (batches, want),
                |emulator, values| emulator.reduce(values, var).unwrap(),
                |emulator, values, over| emulator.reduce_over(values, var, over).unwrap().values.to_vec(),
            );
        }
    }
}

#[test]
fn exact_variances_do_not_depend_on_shape_batch_order_or_offset() {
    let mut rng = rng("exact_variances_do_not_depend_on_shape_batch_order_or_offset");
    independent_of_shape_batch_and_order::<f32>(&mut rng);
    independent_of_shape_batch_and_order::<f64>(&mut rng);
}

#[test]
fn adversarial_exact_variances() {
    let test = "adversarial_exact_variances";
    for_each_backend!(test, |backend| {
        let name = backend.name();
        let mut check = |values: &[f32], correction: f64, want: f32| {
            let what = ExactVar::new(correction).unwrap();
            let got = family_over(&mut backend, values, 1, Over::Whole, correction);
            assert!(
                same_bits(got.var[0], want) && same_bits(what.fold(values), want) && same_bits(got.mean_var[0], want),
                "{name} {values:?} correction {correction}: {:e}, fold {:e}, want {want:e}",
                got.var[0],
                what.fold(values)
            );
        };
        check(&[1.0e8, 1.0e8 + 8.0, 1.0e8 + 16.0], 1.0, 64.0);
        check(&[1.0, 3.0], 0.0, 1.0);
        check(&[1.0, 3.0], 2.0, f32::INFINITY); // 2 / max(0, 0)
        check(&[1.0, 3.0], 3.0, f32::INFINITY); // 2 / max(0, -1)
        check(&[5.0], 1.0, f32::NAN); // 0 / 0
        check(&[], 0.0, f32::NAN);
        check(&[f32::NAN, 1.0], 0.0, f32::NAN);
        check(&[f32::INFINITY, 1.0], 0.0, f32::NAN);
        check(&[f32::NEG_INFINITY], 0.0, f32::NAN);
        check(&[f32::MAX, f32::MAX], 0.0, f32::NAN); // the mean overflows
        check(&[1e30, 1.0, -1e30], 1.0, f32::INFINITY); // squares past f32::MAX
        check(&[-3e19, 3e19], 0.0, f32::INFINITY);
        check(&[-0.0, -0.0], 0.0, 0.0); // +0.0
        check(&[f32::from_bits(1), 0.0], 0.0, 0.0); // the squares underflow
        let var = ExactVar::new(0.0).unwrap();
        let cancelling = [1e30f64, 1.0, -1e30];
        let got = family_over(&mut backend, &cancelling, 2, Over::Whole, 0.0);
        // (1e30 − 1/3)² + (2/3)² + (1e30 + 1/3)²: the deviations round to
        // ±1e30, the squares to one `f64` twice, whose exact sum with 4/9
        // rounds to twice it; over 3.
        let want = (2.0 * (1e30 * 1e30)) / 3.0;
        assert_eq!(var.fold(&cancelling), want);
        assert!(same_bits(got.var[0], want), "{name}: {:e}", got.var[0]);
        let x = [2.0f64, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let got = family_over(&mut backend, &x, 3, Over::Whole, 0.0);
        assert_eq!((got.std[0], got.means[0], got.mean_var[0]), (2.0, 5.0, 4.0), "{name}");
    });
    for correction in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(ExactVar::new(correction), Err(Error::InvalidArgument(_))));
        assert!(matches!(ExactStd::new(correction), Err(Error::InvalidArgument(_))));
        assert!(matches!(ExactMeanVar::new(correction), Err(Error::InvalidArgument(_))));
    }
}

/// `ExactVar::fold` of `f32`s against the exact variance, within the
/// documented bound `5.01ε·v + 1.01·n·(2ε·m)² / (n − correction)`, `m` the
/// rounded mean, ε = 2^-24 (the mean is off by at most an ulp, `2ε·|m|`). The reference: the `f64` mean of the exact sum
/// (`fsum`), the deviations and squares in `f64` (each relative error
/// 2^-53), summed with `fsum`: its own error is far below the bound's.
/// Values around centres from 0 to 1e5 with spreads from 1e-3 to 1e3, so
/// the mean's term matters in some rounds.
#[test]
fn exact_variance_error_is_within_its_bound() {
    let mut rng = rng("exact_variance_error_is_within_its_bound");
    let epsilon = 2f64.powi(-24);
    for round in 0..400 {
        let n = rng.gen_range(2..3000);
        let center = [0.0, 1.0, 1e3, 1e5][round % 4];
        let spread = 10f64.powf(rng.gen_range(-3.0..3.0));
        let values: Vec<f32> = (0..n)
            .map(|_| (center + spread * (rng.gen_range(-1.0..1.0) + rng.gen_range(-1.0..1.0))) as f32)
            .collect();
        let correction = (round % 2) as f64;
        let wide: Vec<f64> = values.iter().map(|&x| f64::from(x)).collect();
        let mean = fsum(wide.iter().copied()) / n as f64;
        let exact = fsum(wide.iter().map(|&x| (x - mean) * (x - mean))) / (n as f64 - correction);
        let got = f64::from(ExactVar::new(correction).unwrap().fold(&values));
        let rounded_mean = f64::from(ExactMean::fold(&values));
        let dof = n as f64 - correction;
        let bound =
            5.01 * epsilon * exact + 1.01 * n as f64 * (2.0 * epsilon * rounded_mean).powi(2) / dof + 1e-12 * exact;
        assert!(
            (got - exact).abs() <= bound,
            "round {round}: n = {n} around {center} spread {spread:e}: {got:e} against {exact:e}, bound {bound:e}"
        );
    }
}

/// `Scope::reduce_into` of `ExactMeanVar` over rows (its means into one
/// output, its variances into another) and of `ExactStd` over the whole
/// input, on another stream into poisoned outputs: the folds' bits (GPU
/// only: the scoped forms take CUDA streams).
#[test]
fn exact_variances_into_a_scope_are_the_folds_bits() {
    use cust::memory::DeviceBuffer;
    use cust::stream::{Stream, StreamFlags};
    let test = "exact_variances_into_a_scope_are_the_folds_bits";
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
        let mut means = DeviceBuffer::from_slice(&vec![f64::poison(); rows]).unwrap();
        let mut variances = DeviceBuffer::from_slice(&vec![f64::poison(); rows]).unwrap();
        let mut std = DeviceBuffer::from_slice(&[f64::poison()]).unwrap();
        let (mean_var, whole_std) = (ExactMeanVar::new(1.0).unwrap(), ExactStd::new(0.0).unwrap());
        reducer
            .scope(|s| {
                let over = Over::Rows { rows, len };
                s.reduce_into(&device_values, mean_var, over, (&mut means, &mut variances), &stream)?;
                s.reduce_into(&device_values, whole_std, Over::Whole, &mut std, &stream)
            })
            .unwrap();
        let got = std.as_host_vec().unwrap()[0];
        let want = whole_std.fold(&values);
        assert!(same_bits(got, want), "{kind:?} std: {got:e} != {want:e}");
        let (means, variances) = (means.as_host_vec().unwrap(), variances.as_host_vec().unwrap());
        for row in 0..rows {
            let (mean, variance) = mean_var.fold(&values[row * len..(row + 1) * len]);
            assert!(
                same_bits(means[row], mean) && same_bits(variances[row], variance),
                "{kind:?} row {row}: ({:e}, {:e}) != ({mean:e}, {variance:e})",
                means[row],
                variances[row]
            );
        }
    }
}
