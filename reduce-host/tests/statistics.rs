//! Variance, standard deviation, mean, logsumexp, counts, `any` and `all`,
//! over whole inputs and along axes, on the emulator and the GPU, against a
//! CPU reference in `f64`: random views and axes (several passes, axes
//! split over blocks), special values at every position, edge cases and
//! errors.

#[macro_use]
mod common;

use common::{gathered, rng, ResultsToHost, Tester};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use reduce::axes::Strided;
use reduce::statistics::Predicate;
use reduce::Error;

/// A signalling NaN no kernel produces: the staging poison.
const POISON_F32: f32 = f32::from_bits(0x7FA5_A5A5);
const POISON_F64: f64 = f64::from_bits(0x7FF5_A5A5_A5A5_A5A5);

/// A random view of 1 to 4 axes (contiguous, or its axes permuted, or one
/// axis broadcast) and 1 to all of its axes, one of them long enough to be
/// split over blocks now and then; the buffer it needs.
fn random_case(rng: &mut StdRng, long: usize) -> (Strided, Vec<usize>, usize) {
    let rank = rng.gen_range(1..=4);
    let mut shape: Vec<usize> = (0..rank).map(|_| rng.gen_range(1..=6)).collect();
    if rng.gen_ratio(1, 3) {
        let axis = rng.gen_range(0..rank);
        shape[axis] = rng.gen_range(1..=long);
    }
    if rng.gen_ratio(1, 20) {
        shape[rng.gen_range(0..rank)] = 0;
    }
    let contiguous = Strided::contiguous(&shape).unwrap();
    let mut order: Vec<usize> = (0..rank).collect();
    if rng.gen() {
        order.shuffle(rng);
    }
    // The contiguous tensor's axes in another order: a transposed view.
    let mut strides: Vec<usize> = order.iter().map(|&a| contiguous.strides()[a]).collect();
    let shape: Vec<usize> = order.iter().map(|&a| shape[a]).collect();
    if rng.gen_ratio(1, 5) {
        strides[rng.gen_range(0..rank)] = 0;
    }
    let layout = Strided::new(&shape, &strides).unwrap();
    let len = shape.iter().product::<usize>().max(1);
    let mut axes: Vec<usize> = (0..rank).filter(|_| rng.gen()).collect();
    if axes.is_empty() {
        axes.push(rng.gen_range(0..rank));
    }
    (layout, axes, len)
}

/// Random floats around `centre`, a few special values among them where
/// `specials`.
fn random_data(rng: &mut StdRng, len: usize, centre: f64, specials: bool) -> Vec<f64> {
    (0..len)
        .map(|_| {
            if specials && rng.gen_ratio(1, 50) {
                [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0][rng.gen_range(0..5)]
            } else {
                centre + rng.gen_range(-8.0..8.0f64).round() * if rng.gen() { 1.0 } else { 0.25 }
            }
        })
        .collect()
}

/// The reference variance (two passes, in f64), with `correction`, and the mean.
fn mean_var(x: &[f64], correction: f64) -> (f64, f64) {
    if x.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if !mean.is_finite() {
        return (mean, f64::NAN);
    }
    let m2: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    (mean, m2 / (n - correction).max(0.0))
}

/// The reference logsumexp, as PyTorch defines it.
fn logsumexp(x: &[f64]) -> f64 {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, |m, v| {
        if v.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(v)
        }
    });
    if !max.is_finite() {
        return max;
    }
    max + x.iter().map(|v| (v - max).exp()).sum::<f64>().ln()
}

/// Whether `got` is `want` within `tolerance` (relative, at least absolute
/// below 1), NaN matching NaN and infinities matching exactly.
fn close(got: f64, want: f64, tolerance: f64) -> bool {
    if want.is_nan() || !want.is_finite() {
        return got.to_bits() == want.to_bits() || (want.is_nan() && got.is_nan());
    }
    (got - want).abs() <= tolerance * want.abs().max(1.0)
}

macro_rules! check_all {
    ($what:expr, $got:expr, $want:expr, $tolerance:expr) => {{
        let (got, want): (Vec<f64>, Vec<f64>) = ($got, $want);
        assert_eq!(got.len(), want.len(), "{}: result count", $what);
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert!(
                close(g, w, $tolerance),
                "{}: result {i} is {g:e}, expected {w:e}",
                $what
            );
        }
    }};
}

/// Random views, axes, data and corrections: every statistic, f32 (in f32
/// and in f64) and f64, against the reference; counts exactly.
#[test]
fn random_views_against_the_reference() {
    let test = "random_views_against_the_reference";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let long = backend.size(20_000, 700);
        for round in 0..backend.size(60, 24) {
            let (layout, axes, len) = random_case(&mut rng, long);
            let signed: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
            let what = format!("{} round {round}: {layout:?} axes {axes:?}", backend.name());
            let centre = [0.0, 1.0e3, -5.0e4][rng.gen_range(0..3)];
            let specials = rng.gen_ratio(1, 3);
            let data = random_data(&mut rng, len, centre, specials);
            let per_result = gathered(&data, &layout, &axes);
            let correction = [0.0, 1.0, 2.5][rng.gen_range(0..3)];
            let offset = rng.gen_range(0..4);
            let reference: Vec<(f64, f64)> = per_result.iter().map(|x| mean_var(x, correction)).collect();
            let want_var: Vec<f64> = reference.iter().map(|r| r.1).collect();
            let want_mean: Vec<f64> = reference.iter().map(|r| r.0).collect();

            let data32: Vec<f32> = data.iter().map(|&v| v as f32).collect();
            let (means, vars) = backend.staged_twice(&data32, offset, POISON_F32, |r, x| {
                let both = r.mean_var_axes::<f32, _>(x, &layout, &signed, correction).unwrap();
                (r.host(&both.values.0), r.host(&both.values.1))
            });
            // f32 accumulation loses about eps · |centre| of the mean, which
            // costs the variance that much relative to the spread (~4).
            let f32_tolerance = 2e-5 * (1.0 + centre.abs() / 64.0);
            check_all!(
                format!("{what} var f32"),
                vars.iter().map(|&v| v as f64).collect(),
                want_var.clone(),
                f32_tolerance
            );
            check_all!(
                format!("{what} mean f32"),
                means.iter().map(|&v| v as f64).collect(),
                want_mean.clone(),
                1e-5
            );
            let vars64 = backend.staged_twice(&data32, offset, POISON_F32, |r, x| {
                let values = r.var_axes::<f64, _>(x, &layout, &signed, correction).unwrap().values;
                r.host(&values)
            });
            check_all!(format!("{what} var f32 in f64"), vars64, want_var.clone(), 1e-9);
            let stds = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                let values = r.std_axes::<f64, _>(x, &layout, &signed, correction).unwrap().values;
                r.host(&values)
            });
            let want_std: Vec<f64> = want_var.iter().map(|v| v.sqrt()).collect();
            check_all!(format!("{what} std f64"), stds, want_std, 1e-9);

            let want_lse: Vec<f64> = per_result.iter().map(|x| logsumexp(x)).collect();
            let lse = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                let values = r.logsumexp_axes(x, &layout, &signed).unwrap().values;
                r.host(&values)
            });
            check_all!(format!("{what} logsumexp f64"), lse, want_lse.clone(), 1e-13);
            let lse32 = backend.staged_twice(&data32, offset, POISON_F32, |r, x| {
                let values = r.logsumexp_axes(x, &layout, &signed).unwrap().values;
                r.host(&values)
            });
            let want_lse32: Vec<f64> = gathered(&data32, &layout, &axes)
                .iter()
                .map(|x| logsumexp(&x.iter().map(|&v| v as f64).collect::<Vec<_>>()))
                .collect();
            check_all!(
                format!("{what} logsumexp f32"),
                lse32.iter().map(|&v| v as f64).collect(),
                want_lse32,
                1e-5
            );

            for predicate in [Predicate::Nonzero, Predicate::Nan, Predicate::Inf] {
                let holds = |v: &f64| match predicate {
                    Predicate::Nonzero => *v != 0.0,
                    Predicate::Nan => v.is_nan(),
                    Predicate::Inf => v.is_infinite(),
                };
                let want: Vec<u64> = per_result
                    .iter()
                    .map(|x| x.iter().filter(|v| holds(v)).count() as u64)
                    .collect();
                let counts = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                    let values = r.count_axes(x, &layout, &signed, predicate).unwrap().values;
                    r.host(&values)
                });
                assert_eq!(counts, want, "{what} count {predicate:?}");
                let any = backend.staged_twice(&data32, offset, POISON_F32, |r, x| {
                    let values = r.any_axes(x, &layout, &signed, predicate).unwrap().values;
                    r.host(&values)
                });
                let want_any: Vec<u8> = want.iter().map(|&c| (c > 0) as u8).collect();
                assert_eq!(any, want_any, "{what} any {predicate:?}");
                let all = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                    let values = r.all_axes(x, &layout, &signed, predicate).unwrap().values;
                    r.host(&values)
                });
                let want_all: Vec<u8> = per_result
                    .iter()
                    .zip(&want)
                    .map(|(x, &c)| (c == x.len() as u64) as u8)
                    .collect();
                assert_eq!(all, want_all, "{what} all {predicate:?}");
            }
        }
    });
}

/// Whole inputs of every length up to a few vectors' worth and one long one,
/// with one special value at each position in turn (head, body and tail of
/// every offset): the count finds exactly it; logsumexp of `-inf`s and one
/// `x` is `x` exactly; the variance of a constant is exactly 0 and its mean
/// the constant, unless the special is NaN or infinite.
#[test]
fn one_special_element_at_every_position() {
    let test = "one_special_element_at_every_position";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let long = backend.size(100_003, 5_003);
        for len in (1..40).chain([long]) {
            let positions: Vec<usize> = if len < 40 {
                (0..len).collect()
            } else {
                (0..len).step_by(len / 37).chain([len - 1]).collect()
            };
            for &hot in &positions {
                let offset = rng.gen_range(0..4);
                let special = [f32::NAN, f32::INFINITY, 3.5][hot % 3];
                let mut data = vec![-2.25f32; len];
                data[hot] = special;
                let what = format!("{} len {len} at {hot} ({special})", backend.name());
                let (count, any, all) = backend.staged_twice(&data, offset, POISON_F32, |r, x| {
                    let predicate = if special.is_nan() {
                        Predicate::Nan
                    } else if special.is_infinite() {
                        Predicate::Inf
                    } else {
                        Predicate::Nonzero
                    };
                    let count = r.count(x, predicate).unwrap();
                    (
                        count,
                        r.any(x, predicate).unwrap(),
                        r.all(x, Predicate::Nonzero).unwrap(),
                    )
                });
                let expected_count = if special == 3.5 { len as u64 } else { 1 };
                assert_eq!((count, any, all), (expected_count, true, true), "{what}");
                let (mean, var) =
                    backend.staged_twice(&data, offset, POISON_F32, |r, x| r.mean_var::<f32, _>(x, 1.0).unwrap());
                if special == 3.5 {
                    assert!(var > 0.0 && mean > -2.25, "{what}: {mean} {var}");
                } else {
                    assert!(
                        var.is_nan() && (mean.is_nan() == special.is_nan()),
                        "{what}: {mean} {var}"
                    );
                }
                let mut one_hot = vec![f64::NEG_INFINITY; len];
                one_hot[hot] = -7.125;
                let lse = backend.staged_twice(&one_hot, offset, POISON_F64, |r, x| r.logsumexp(x).unwrap());
                assert_eq!(lse, -7.125, "{what}: logsumexp of one finite element");
            }
            let constant = vec![1.0e3f64 + 0.5; len];
            let (mean, var) =
                backend.staged_twice(&constant, 0, POISON_F64, |r, x| r.mean_var::<f64, _>(x, 1.0).unwrap());
            let expected_var = if len == 1 { f64::NAN } else { 0.0 };
            assert!(
                mean == 1000.5 && (var == expected_var || (var.is_nan() && expected_var.is_nan())),
                "{} len {len}: {mean} {var}",
                backend.name()
            );
        }
    });
}

#[test]
fn edge_cases_and_errors() {
    let test = "edge_cases_and_errors";
    for_each_backend!(test, |backend| {
        let empty: [f64; 0] = [];
        let results = backend.staged_twice(&empty, 0, POISON_F64, |r, x| {
            (
                r.var::<f64, _>(x, 1.0).unwrap(),
                r.logsumexp(x).unwrap(),
                r.count(x, Predicate::Nonzero).unwrap(),
                r.any(x, Predicate::Nonzero).unwrap(),
                r.all(x, Predicate::Nonzero).unwrap(),
            )
        });
        assert!(results.0.is_nan() && results.1 == f64::NEG_INFINITY, "{results:?}");
        assert_eq!((results.2, results.3, results.4), (0, false, true));
        let lse = |backend: &mut Tester<_>, data: &[f32]| {
            backend.staged_twice(data, 1, POISON_F32, |r, x| r.logsumexp(x).unwrap())
        };
        assert_eq!(lse(&mut backend, &[f32::INFINITY, 1.0]), f32::INFINITY);
        assert_eq!(lse(&mut backend, &[f32::INFINITY, f32::NEG_INFINITY]), f32::INFINITY);
        assert_eq!(
            lse(&mut backend, &[f32::NEG_INFINITY, f32::NEG_INFINITY]),
            f32::NEG_INFINITY
        );
        assert!(lse(&mut backend, &[f32::NAN, f32::INFINITY]).is_nan());
        // A NaN and a +inf anywhere in one full batch of 8: NaN (a batch
        // maximum that lost the NaN once took `exp` of +inf).
        for (nan_at, inf_at) in (0..8).flat_map(|n| (0..8).map(move |i| (n, i))).filter(|(n, i)| n != i) {
            let mut batch = [0.0f32; 8];
            (batch[nan_at], batch[inf_at]) = (f32::NAN, f32::INFINITY);
            assert!(lse(&mut backend, &batch).is_nan(), "{batch:?}");
        }
        assert_eq!(
            lse(&mut backend, &[88.0, 88.0]),
            88.0 + 2f32.ln(),
            "no overflow past e^88"
        );
        // A correction of n: M2 / 0.
        let inf = backend.staged_twice(&[1.0f64, 3.0], 0, POISON_F64, |r, x| r.var::<f64, _>(x, 2.0).unwrap());
        let nan = backend.staged_twice(&[1.0f64], 0, POISON_F64, |r, x| r.var::<f64, _>(x, 1.0).unwrap());
        assert!(inf == f64::INFINITY && nan.is_nan(), "{inf} {nan}");
        // Reduced axis of length 0 along axes; a kept one of length 0.
        let layout = Strided::contiguous(&[3, 0]).unwrap();
        let (vars, all) = backend.staged_twice(&empty, 0, POISON_F64, |r, x| {
            (
                {
                    let values = r.var_axes::<f64, _>(x, &layout, &[1], 1.0).unwrap().values;
                    r.host(&values)
                },
                {
                    let values = r.all_axes(x, &layout, &[1], Predicate::Nan).unwrap().values;
                    r.host(&values)
                },
            )
        });
        assert!(vars.len() == 3 && vars.iter().all(|v| v.is_nan()), "{vars:?}");
        assert_eq!(all, [1, 1, 1]);
        let none = backend.staged_twice(&empty, 0, POISON_F64, |r, x| {
            let values = r.logsumexp_axes(x, &layout, &[0]).unwrap().values;
            r.host(&values)
        });
        assert!(none.is_empty());
        // Errors.
        let data = [1.0f32; 6];
        let matrix = Strided::contiguous(&[2, 3]).unwrap();
        let errors = backend.staged_twice(&data, 0, POISON_F32, |r, x| {
            (
                r.var::<f32, _>(x, -1.0).map(|_| ()).unwrap_err(),
                r.std::<f32, _>(x, f64::NAN).map(|_| ()).unwrap_err(),
                r.var_axes::<f32, _>(x, &matrix, &[2], 1.0).map(|_| ()).unwrap_err(),
                r.count_axes(x, &matrix, &[0, -2], Predicate::Nan)
                    .map(|_| ())
                    .unwrap_err(),
                r.logsumexp_axes(x, &Strided::contiguous(&[2, 4]).unwrap(), &[0])
                    .map(|_| ())
                    .unwrap_err(),
            )
        });
        assert!(
            matches!(errors.0, Error::InvalidArgument(_)) && matches!(errors.1, Error::InvalidArgument(_)),
            "{errors:?}"
        );
        assert!(
            matches!(errors.2, Error::InvalidAxes(_)) && matches!(errors.3, Error::InvalidAxes(_)),
            "{errors:?}"
        );
        assert!(matches!(errors.4, Error::InvalidLayout(_)), "{errors:?}");
    });
}

/// Each statistic's `Scope::*_axes_into` form, on its own stream, into an
/// output one element past a poisoned one: the same bits as the blocking
/// call, and the poison untouched (GPU only: scopes are CUDA's).
#[test]
fn scope_forms_agree_with_the_blocking_calls() {
    use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};
    use cust::stream::{Stream, StreamFlags};
    use reduce::{Output, Reducer};
    let test = "scope_forms_agree_with_the_blocking_calls";
    if common::gpu(test).is_none() {
        return;
    }
    let mut rng = rng(test);
    let mut reducer = Reducer::new().expect("a reducer");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("a stream");
    /// A device buffer of `len + 1` copies of `poison`, for an output at 1.. .
    fn padded<T: DeviceCopy + Copy>(poison: T, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer::from_slice(&vec![poison; len + 1]).expect("an output")
    }
    /// The buffer's elements, the poison at 0 checked (`same`: bit for
    /// bit) and dropped.
    fn written<T: DeviceCopy + Copy + Default + std::fmt::Debug>(
        buffer: &DeviceBuffer<T>,
        poison: T,
        same: impl Fn(T, T) -> bool,
        form: &str,
    ) -> Vec<T> {
        let mut host = vec![T::default(); buffer.len()];
        buffer.copy_to(&mut host[..]).expect("copy back");
        assert!(same(host[0], poison), "{form} wrote before its output: {:?}", host[0]);
        host.split_off(1)
    }
    let bits32 = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    fn host<T: DeviceCopy + Default>(buffer: &DeviceBuffer<T>) -> Vec<T> {
        buffer.as_host_vec().expect("copy back")
    }
    for round in 0..12 {
        let (layout, axes, len) = random_case(&mut rng, 50_000);
        let signed: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
        let what = format!("round {round}: {layout:?} axes {axes:?}");
        let specials = rng.gen_ratio(1, 3);
        let data: Vec<f32> = random_data(&mut rng, len, 1.0e3, specials)
            .iter()
            .map(|&v| v as f32)
            .collect();
        let x = DeviceBuffer::from_slice(&data).expect("the input");
        let n = layout.kept_outputs(&signed).expect("valid axes");
        let blocking = reducer
            .mean_var_axes::<f32, _>(&x, &layout, &signed, 1.0)
            .expect("mean_var");
        let (want_means, want_vars) = (host(&blocking.values.0), host(&blocking.values.1));
        let want_std = host(
            &reducer
                .std_axes::<f32, _>(&x, &layout, &signed, 1.0)
                .expect("std")
                .values,
        );
        let want_lse = host(&reducer.logsumexp_axes(&x, &layout, &signed).expect("lse").values);
        let want_count = host(
            &reducer
                .count_axes(&x, &layout, &signed, Predicate::Nan)
                .expect("count")
                .values,
        );
        let want_any = host(
            &reducer
                .any_axes(&x, &layout, &signed, Predicate::Inf)
                .expect("any")
                .values,
        );
        let want_all = host(
            &reducer
                .all_axes(&x, &layout, &signed, Predicate::Nonzero)
                .expect("all")
                .values,
        );

        let (mut means, mut vars, mut stds, mut lse) = (
            padded(POISON_F32, n),
            padded(POISON_F32, n),
            padded(POISON_F32, n),
            padded(POISON_F32, n),
        );
        let mut var_alone = padded(POISON_F32, n);
        let (mut counts, mut any, mut all) = (padded(u64::MAX, n), padded(0xA5u8, n), padded(0xA5u8, n));
        reducer
            .scope(|s| {
                fn at_1(o: Output<'_, f32>) -> Output<'_, f32> {
                    o.get(1..).expect("room")
                }
                let (layout, axes, stream) = (&layout, &signed[..], &stream);
                s.mean_var_axes_into::<f32, _>(
                    &x,
                    layout,
                    axes,
                    1.0,
                    at_1((&mut means).into()),
                    at_1((&mut vars).into()),
                    stream,
                )?;
                s.var_axes_into::<f32, _>(&x, layout, axes, 1.0, at_1((&mut var_alone).into()), stream)?;
                s.std_axes_into::<f32, _>(&x, layout, axes, 1.0, at_1((&mut stds).into()), stream)?;
                s.logsumexp_axes_into(&x, layout, axes, at_1((&mut lse).into()), stream)?;
                let counts = Output::from(&mut counts).get(1..).expect("room");
                s.count_axes_into(&x, layout, axes, Predicate::Nan, counts, stream)?;
                let any = Output::from(&mut any).get(1..).expect("room");
                s.any_axes_into(&x, layout, axes, Predicate::Inf, any, stream)?;
                let all = Output::from(&mut all).get(1..).expect("room");
                s.all_axes_into(&x, layout, axes, Predicate::Nonzero, all, stream)
            })
            .expect("the scope's calls");
        let poisoned = POISON_F32.to_bits();
        for (form, buffer, want) in [
            ("mean_var_axes_into means", &means, &want_means),
            ("mean_var_axes_into variances", &vars, &want_vars),
            ("var_axes_into", &var_alone, &want_vars),
            ("std_axes_into", &stds, &want_std),
            ("logsumexp_axes_into", &lse, &want_lse),
        ] {
            let got = written(
                buffer,
                f32::from_bits(poisoned),
                |a, b| a.to_bits() == b.to_bits(),
                form,
            );
            assert_eq!(bits32(&got), bits32(want), "{what}: {form}");
        }
        assert_eq!(
            written(&counts, u64::MAX, |a, b| a == b, "count_axes_into"),
            want_count,
            "{what}: count"
        );
        assert_eq!(
            written(&any, 0xA5, |a, b| a == b, "any_axes_into"),
            want_any,
            "{what}: any"
        );
        assert_eq!(
            written(&all, 0xA5, |a, b| a == b, "all_axes_into"),
            want_all,
            "{what}: all"
        );
    }
    // Two results: `vars` (2 elements) fits, `means` (3) does not.
    let x = DeviceBuffer::from_slice(&[1.0f32; 6]).expect("the input");
    let layout = Strided::contiguous(&[2, 3]).expect("a layout");
    let (mut means, mut vars) = (padded(0.0f32, 2), padded(0.0f32, 1));
    let refused =
        reducer.scope(|s| s.mean_var_axes_into::<f32, _>(&x, &layout, &[1], 1.0, &mut means, &mut vars, &stream));
    assert!(matches!(refused, Err(Error::InvalidAxes(_))), "{refused:?}");
    // Means and variances in one place: refused before any launch.
    let refused = reducer.scope(|s| {
        let both = Output::from(&mut vars);
        s.mean_var_axes_into::<f32, _>(&x, &layout, &[1], 1.0, both, both, &stream)
    });
    assert!(matches!(refused, Err(Error::Aliasing { .. })), "{refused:?}");
    let refused = reducer.scope(|s| s.var_axes_into::<f32, _>(&x, &layout, &[0], -1.0, &mut vars, &stream));
    assert!(matches!(refused, Err(Error::InvalidArgument(_))), "{refused:?}");
}

/// Random segments (empty ones, long ones, offsets that skip elements at
/// both ends) of random data: every statistic per segment against the
/// reference, run twice on each backend; then offsets that decrease or
/// pass the end are refused, naming the segment.
#[test]
fn segments_against_the_reference() {
    let test = "segments_against_the_reference";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for round in 0..backend.size(30, 12) {
            segments_round(&mut backend, &mut rng, round);
        }
        segment_errors(&mut backend);
    });
}

fn segments_round<B: common::TestBackend>(backend: &mut Tester<B>, rng: &mut StdRng, round: usize) {
    let long = backend.size(30_000, 2_000);
    let segments = rng.gen_range(1..=40);
    let mut offsets = vec![rng.gen_range(0..5u64)];
    for _ in 0..segments {
        let length = match rng.gen_range(0..6) {
            0 => 0,
            1 => rng.gen_range(1..=long),
            _ => rng.gen_range(1..=300),
        };
        offsets.push(offsets.last().unwrap() + length as u64);
    }
    let len = *offsets.last().unwrap() as usize + rng.gen_range(0..3);
    let centre = [0.0, 1.0e3][rng.gen_range(0..2)];
    let specials = rng.gen_ratio(1, 3);
    let data = random_data(rng, len, centre, specials);
    let data32: Vec<f32> = data.iter().map(|&v| v as f32).collect();
    let per_segment: Vec<&[f64]> = offsets
        .windows(2)
        .map(|w| &data[w[0] as usize..w[1] as usize])
        .collect();
    let what = format!("{} round {round}: {segments} segments of {len}", backend.name());
    let staged = B::stage(&offsets, 0, u64::MAX);
    let offsets = B::slice(&staged);
    let correction = [0.0, 1.0][rng.gen_range(0..2)];
    let reference: Vec<(f64, f64)> = per_segment.iter().map(|x| mean_var(x, correction)).collect();
    let (means, vars) = backend.staged_twice(&data, 1, POISON_F64, |r, x| {
        let (means, vars) = r.mean_var_segments::<f64, _>(x, offsets, correction).unwrap();
        (r.host(&means), r.host(&vars))
    });
    check_all!(
        format!("{what} mean"),
        means,
        reference.iter().map(|r| r.0).collect(),
        1e-12
    );
    check_all!(
        format!("{what} var"),
        vars,
        reference.iter().map(|r| r.1).collect(),
        1e-9
    );
    let stds = backend.staged_twice(&data32, 2, POISON_F32, |r, x| {
        B::to_vec(&r.std_segments::<f64, _>(x, offsets, correction).unwrap()).unwrap()
    });
    let want_std: Vec<f64> = reference.iter().map(|r| r.1.sqrt()).collect();
    check_all!(format!("{what} std of f32 in f64"), stds, want_std, 1e-9);
    let lse = backend.staged_twice(&data, 0, POISON_F64, |r, x| {
        B::to_vec(&r.logsumexp_segments(x, offsets).unwrap()).unwrap()
    });
    check_all!(
        format!("{what} logsumexp"),
        lse,
        per_segment.iter().map(|x| logsumexp(x)).collect(),
        1e-13
    );
    for predicate in [Predicate::Nonzero, Predicate::Nan, Predicate::Inf] {
        let holds = |v: &f64| match predicate {
            Predicate::Nonzero => *v != 0.0,
            Predicate::Nan => v.is_nan(),
            Predicate::Inf => v.is_infinite(),
        };
        let want: Vec<u64> = per_segment
            .iter()
            .map(|x| x.iter().filter(|v| holds(v)).count() as u64)
            .collect();
        let (counts, any, all) = backend.staged_twice(&data32, 3, POISON_F32, |r, x| {
            let counts = B::to_vec(&r.count_segments(x, offsets, predicate).unwrap()).unwrap();
            let any = B::to_vec(&r.any_segments(x, offsets, predicate).unwrap()).unwrap();
            (
                counts,
                any,
                B::to_vec(&r.all_segments(x, offsets, predicate).unwrap()).unwrap(),
            )
        });
        assert_eq!(counts, want, "{what} count {predicate:?}");
        let want_any: Vec<u8> = want.iter().map(|&c| (c > 0) as u8).collect();
        assert_eq!(any, want_any, "{what} any {predicate:?}");
        let want_all: Vec<u8> = per_segment
            .iter()
            .zip(&want)
            .map(|(x, &c)| (c == x.len() as u64) as u8)
            .collect();
        assert_eq!(all, want_all, "{what} all {predicate:?}");
    }
}

fn segment_errors<B: common::TestBackend>(backend: &mut Tester<B>) {
    let data = B::stage(&[1.0f64, 2.0, 3.0, 4.0], 0, POISON_F64);
    let r = &mut backend.reducer;
    let bad = |offsets: &[u64], r: &mut reduce::Reducer<B>| {
        let staged = B::stage(offsets, 0, 0);
        r.var_segments::<f64, _>(B::slice(&data), B::slice(&staged), 1.0)
            .err()
            .map(|e| e.to_string())
    };
    let message = bad(&[0, 3, 2, 4], r).expect("decreasing offsets refused");
    assert!(message.contains("segment 1 is [3, 2)"), "{message}");
    let message = bad(&[0, 2, 5], r).expect("offsets past the end refused");
    assert!(message.contains("segment 1 is [2, 5)"), "{message}");
    assert!(bad(&[], r).is_some(), "no offsets refused");
    assert_eq!(bad(&[4], r), None, "no segments");
}

/// On the GPU: the `_segments_into` forms agree bit for bit with the
/// blocking calls, into an output one element past a poisoned one, and
/// clamp invalid offsets (nothing outside the values is read).
#[test]
fn segment_scope_forms_agree_with_the_blocking_calls() {
    use cust::memory::DeviceBuffer;
    use cust::stream::{Stream, StreamFlags};
    use reduce::{Output, Reducer};
    let test = "segment_scope_forms_agree_with_the_blocking_calls";
    if common::gpu(test).is_none() {
        return;
    }
    let mut rng = rng(test);
    let mut reducer = Reducer::new().expect("a reducer");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("a stream");
    let data: Vec<f32> = random_data(&mut rng, 50_000, 10.0, true)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let mut offsets = vec![0u64];
    while *offsets.last().unwrap() < 45_000 {
        offsets.push(offsets.last().unwrap() + rng.gen_range(0..3000));
    }
    let x = DeviceBuffer::from_slice(&data).expect("the input");
    let o = DeviceBuffer::from_slice(&offsets).expect("the offsets");
    let n = offsets.len() - 1;
    let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let want = bits(
        reducer
            .var_segments::<f32, _>(&x, &o, 1.0)
            .unwrap()
            .as_host_vec()
            .unwrap(),
    );
    let want_all = reducer
        .all_segments(&x, &o, Predicate::Nan)
        .unwrap()
        .as_host_vec()
        .unwrap();
    let mut var = DeviceBuffer::from_slice(&vec![POISON_F32; n + 1]).unwrap();
    let mut all = DeviceBuffer::from_slice(&vec![7u8; n + 1]).unwrap();
    reducer
        .scope(|s| {
            s.var_segments_into::<f32, _>(&x, &o, 1.0, Output::from(&mut var).get(1..).unwrap(), &stream)?;
            s.all_segments_into(
                &x,
                &o,
                Predicate::Nan,
                Output::from(&mut all).get(1..).unwrap(),
                &stream,
            )
        })
        .expect("the _into forms");
    let (var, all) = (bits(var.as_host_vec().unwrap()), all.as_host_vec().unwrap());
    assert_eq!(
        (var[0], &var[1..]),
        (POISON_F32.to_bits(), &want[..]),
        "var_segments_into"
    );
    assert_eq!((all[0], &all[1..]), (7, &want_all[..]), "all_segments_into");
    // Offsets past the end are clamped by the _into forms: the segment ends at the values' end.
    let past = DeviceBuffer::from_slice(&[49_990u64, 60_000]).unwrap();
    let mut count = DeviceBuffer::from_slice(&[0u64]).unwrap();
    reducer
        .scope(|s| s.count_segments_into(&x, &past, Predicate::Nonzero, &mut count, &stream))
        .expect("count_segments_into");
    let tail = data[49_990..].iter().filter(|&&v| v != 0.0).count() as u64;
    assert_eq!(count.as_host_vec().unwrap(), [tail]);
    let wrong_length = reducer.scope(|s| s.count_segments_into(&x, &o, Predicate::Nan, &mut count, &stream));
    assert!(
        matches!(wrong_length, Err(Error::InvalidSegments(_))),
        "{wrong_length:?}"
    );
}
