//! Variance, standard deviation, mean, logsumexp, counts, `any` and `all`,
//! over whole inputs and along axes, on the emulator and the GPU, against a
//! CPU reference in `f64`: random views and axes (several passes, axes
//! split over blocks), special values at every position, edge cases and
//! errors.

use crate::common;

use common::{gathered, rng, ResultsToHost, Tester};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use reduce::axes::Strided;
use reduce::{All, Any, Count, Error, LogSumExp, MeanVar, Op, Over, Predicate, Std, Var};

/// A signalling NaN no kernel produces: the staging poison.
const POISON_F32: f32 = f32::from_bits(0x7FA5_A5A5);
const POISON_F64: f64 = f64::from_bits(0x7FF5_A5A5_A5A5_A5A5);

/// A random view of 1 to 4 axes (contiguous, or its axes permuted, or one
/// axis broadcast; half of them starting some elements into the buffer) and
/// 1 to all of its axes, one of them long enough to be split over blocks now
/// and then; the buffer it needs.
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
    let head = if rng.gen() { 0 } else { rng.gen_range(1..=5) };
    let layout = Strided::new(&shape, &strides).unwrap().with_offset(head);
    let len = shape.iter().product::<usize>().max(1) + head;
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
                let mean_var = MeanVar::<f32>::new(correction).unwrap();
                let both = r.reduce_over(x, mean_var, Over::Axes(&layout, &signed)).unwrap();
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
                let var = Var::<f64>::new(correction).unwrap();
                let values = r.reduce_over(x, var, Over::Axes(&layout, &signed)).unwrap().values;
                r.host(&values)
            });
            check_all!(format!("{what} var f32 in f64"), vars64, want_var.clone(), 1e-9);
            let stds = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                let std = Std::<f64>::new(correction).unwrap();
                let values = r.reduce_over(x, std, Over::Axes(&layout, &signed)).unwrap().values;
                r.host(&values)
            });
            let want_std: Vec<f64> = want_var.iter().map(|v| v.sqrt()).collect();
            check_all!(format!("{what} std f64"), stds, want_std, 1e-9);

            let want_lse: Vec<f64> = per_result.iter().map(|x| logsumexp(x)).collect();
            let lse = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                let values = r
                    .reduce_over(x, LogSumExp, Over::Axes(&layout, &signed))
                    .unwrap()
                    .values;
                r.host(&values)
            });
            check_all!(format!("{what} logsumexp f64"), lse, want_lse.clone(), 1e-13);
            let lse32 = backend.staged_twice(&data32, offset, POISON_F32, |r, x| {
                let values = r
                    .reduce_over(x, LogSumExp, Over::Axes(&layout, &signed))
                    .unwrap()
                    .values;
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
                let holds = |v: &f64| common::predicate_holds(predicate, *v);
                let want: Vec<u64> = per_result
                    .iter()
                    .map(|x| x.iter().filter(|v| holds(v)).count() as u64)
                    .collect();
                let counts = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                    let values = r
                        .reduce_over(x, Count(predicate), Over::Axes(&layout, &signed))
                        .unwrap()
                        .values;
                    r.host(&values)
                });
                assert_eq!(counts, want, "{what} count {predicate:?}");
                let any = backend.staged_twice(&data32, offset, POISON_F32, |r, x| {
                    let values = r
                        .reduce_over(x, Any(predicate), Over::Axes(&layout, &signed))
                        .unwrap()
                        .values;
                    r.host(&values)
                });
                let want_any: Vec<u8> = want.iter().map(|&c| (c > 0) as u8).collect();
                assert_eq!(any, want_any, "{what} any {predicate:?}");
                let all = backend.staged_twice(&data, offset, POISON_F64, |r, x| {
                    let values = r
                        .reduce_over(x, All(predicate), Over::Axes(&layout, &signed))
                        .unwrap()
                        .values;
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
                    let count = r.reduce(x, Count(predicate)).unwrap();
                    (
                        count,
                        r.reduce(x, Any(predicate)).unwrap(),
                        r.reduce(x, All(Predicate::Nonzero)).unwrap(),
                    )
                });
                let expected_count = if special == 3.5 { len as u64 } else { 1 };
                assert_eq!((count, any, all), (expected_count, true, true), "{what}");
                let (mean, var) = backend.staged_twice(&data, offset, POISON_F32, |r, x| {
                    r.reduce(x, MeanVar::<f32>::new(1.0).unwrap()).unwrap()
                });
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
                let lse = backend.staged_twice(&one_hot, offset, POISON_F64, |r, x| r.reduce(x, LogSumExp).unwrap());
                assert_eq!(lse, -7.125, "{what}: logsumexp of one finite element");
            }
            let constant = vec![1.0e3f64 + 0.5; len];
            let (mean, var) = backend.staged_twice(&constant, 0, POISON_F64, |r, x| {
                r.reduce(x, MeanVar::<f64>::new(1.0).unwrap()).unwrap()
            });
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
                r.reduce(x, Var::<f64>::new(1.0).unwrap()).unwrap(),
                r.reduce(x, LogSumExp).unwrap(),
                r.reduce(x, Count(Predicate::Nonzero)).unwrap(),
                r.reduce(x, Any(Predicate::Nonzero)).unwrap(),
                r.reduce(x, All(Predicate::Nonzero)).unwrap(),
            )
        });
        assert!(results.0.is_nan() && results.1 == f64::NEG_INFINITY, "{results:?}");
        assert_eq!((results.2, results.3, results.4), (0, false, true));
        let lse = |backend: &mut Tester<_>, data: &[f32]| {
            backend.staged_twice(data, 1, POISON_F32, |r, x| r.reduce(x, LogSumExp).unwrap())
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
        let inf = backend.staged_twice(&[1.0f64, 3.0], 0, POISON_F64, |r, x| {
            r.reduce(x, Var::<f64>::new(2.0).unwrap()).unwrap()
        });
        let nan = backend.staged_twice(&[1.0f64], 0, POISON_F64, |r, x| {
            r.reduce(x, Var::<f64>::new(1.0).unwrap()).unwrap()
        });
        assert!(inf == f64::INFINITY && nan.is_nan(), "{inf} {nan}");
        // Reduced axis of length 0 along axes; a kept one of length 0.
        let layout = Strided::contiguous(&[3, 0]).unwrap();
        let (vars, all) = backend.staged_twice(&empty, 0, POISON_F64, |r, x| {
            (
                {
                    let var = Var::<f64>::new(1.0).unwrap();
                    let values = r.reduce_over(x, var, Over::Axes(&layout, &[1])).unwrap().values;
                    r.host(&values)
                },
                {
                    let all = All(Predicate::Nan);
                    let values = r.reduce_over(x, all, Over::Axes(&layout, &[1])).unwrap().values;
                    r.host(&values)
                },
            )
        });
        assert!(vars.len() == 3 && vars.iter().all(|v| v.is_nan()), "{vars:?}");
        assert_eq!(all, [1, 1, 1]);
        let none = backend.staged_twice(&empty, 0, POISON_F64, |r, x| {
            let values = r.reduce_over(x, LogSumExp, Over::Axes(&layout, &[0])).unwrap().values;
            r.host(&values)
        });
        assert!(none.is_empty());
        // Errors. A bad correction is refused by the constructor, before any call.
        let data = [1.0f32; 6];
        let matrix = Strided::contiguous(&[2, 3]).unwrap();
        let errors = backend.staged_twice(&data, 0, POISON_F32, |r, x| {
            (
                Var::<f32>::new(-1.0).map(|_| ()).unwrap_err(),
                Std::<f32>::new(f64::NAN).map(|_| ()).unwrap_err(),
                r.reduce_over(x, Var::<f32>::new(1.0).unwrap(), Over::Axes(&matrix, &[2]))
                    .map(|_| ())
                    .unwrap_err(),
                r.reduce_over(x, Count(Predicate::Nan), Over::Axes(&matrix, &[0, -2]))
                    .map(|_| ())
                    .unwrap_err(),
                r.reduce_over(x, LogSumExp, Over::Axes(&Strided::contiguous(&[2, 4]).unwrap(), &[0]))
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

/// Each statistic over axes by `Scope::reduce_into`, on its own stream,
/// into an output one element past a poisoned one: the same bits as the
/// blocking call, and the poison untouched (GPU only: scopes are CUDA's).
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
    let (mean_var, var, std) = (
        MeanVar::<f32>::new(1.0).expect("a correction"),
        Var::<f32>::new(1.0).expect("a correction"),
        Std::<f32>::new(1.0).expect("a correction"),
    );
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
        let over = Over::Axes(&layout, &signed);
        let blocking = reducer.reduce_over(&x, mean_var, over).expect("mean_var");
        let (want_means, want_vars) = (host(&blocking.values.0), host(&blocking.values.1));
        let want_std = host(&reducer.reduce_over(&x, std, over).expect("std").values);
        let want_lse = host(&reducer.reduce_over(&x, LogSumExp, over).expect("lse").values);
        let want_count = host(
            &reducer
                .reduce_over(&x, Count(Predicate::Nan), over)
                .expect("count")
                .values,
        );
        let want_any = host(&reducer.reduce_over(&x, Any(Predicate::Inf), over).expect("any").values);
        let want_all = host(
            &reducer
                .reduce_over(&x, All(Predicate::Nonzero), over)
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
                let (over, stream) = (Over::Axes(&layout, &signed), &stream);
                let both = (at_1((&mut means).into()), at_1((&mut vars).into()));
                s.reduce_into(&x, mean_var, over, both, stream)?;
                s.reduce_into(&x, var, over, at_1((&mut var_alone).into()), stream)?;
                s.reduce_into(&x, std, over, at_1((&mut stds).into()), stream)?;
                s.reduce_into(&x, LogSumExp, over, at_1((&mut lse).into()), stream)?;
                let counts = Output::from(&mut counts).get(1..).expect("room");
                s.reduce_into(&x, Count(Predicate::Nan), over, counts, stream)?;
                let any = Output::from(&mut any).get(1..).expect("room");
                s.reduce_into(&x, Any(Predicate::Inf), over, any, stream)?;
                let all = Output::from(&mut all).get(1..).expect("room");
                s.reduce_into(&x, All(Predicate::Nonzero), over, all, stream)
            })
            .expect("the scope's calls");
        let poisoned = POISON_F32.to_bits();
        for (form, buffer, want) in [
            ("reduce_into MeanVar means", &means, &want_means),
            ("reduce_into MeanVar variances", &vars, &want_vars),
            ("reduce_into Var", &var_alone, &want_vars),
            ("reduce_into Std", &stds, &want_std),
            ("reduce_into LogSumExp", &lse, &want_lse),
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
            written(&counts, u64::MAX, |a, b| a == b, "reduce_into Count"),
            want_count,
            "{what}: count"
        );
        assert_eq!(
            written(&any, 0xA5, |a, b| a == b, "reduce_into Any"),
            want_any,
            "{what}: any"
        );
        assert_eq!(
            written(&all, 0xA5, |a, b| a == b, "reduce_into All"),
            want_all,
            "{what}: all"
        );
    }
    // Two results: `vars` (2 elements) fits, `means` (3) does not: the two
    // outputs' lengths differ; both of 3, neither fits.
    let x = DeviceBuffer::from_slice(&[1.0f32; 6]).expect("the input");
    let layout = Strided::contiguous(&[2, 3]).expect("a layout");
    let (mut means, mut vars) = (padded(0.0f32, 2), padded(0.0f32, 1));
    let refused = reducer.scope(|s| {
        let both = (Output::from(&mut means), Output::from(&mut vars));
        s.reduce_into(&x, mean_var, Over::Axes(&layout, &[1]), both, &stream)
    });
    assert!(
        matches!(refused, Err(Error::OutputLength { output: "means", .. })),
        "{refused:?}"
    );
    let mut vars_of_3 = padded(0.0f32, 2);
    let refused = reducer.scope(|s| {
        s.reduce_into(
            &x,
            mean_var,
            Over::Axes(&layout, &[1]),
            (&mut means, &mut vars_of_3),
            &stream,
        )
    });
    assert!(
        matches!(
            refused,
            Err(Error::OutputLength {
                output: "means",
                found: 3,
                expected: 2
            })
        ),
        "{refused:?}"
    );
    // Means and variances in one place: refused before any launch.
    let refused = reducer.scope(|s| {
        let both = Output::from(&mut vars);
        s.reduce_into(&x, mean_var, Over::Axes(&layout, &[1]), (both, both), &stream)
    });
    assert!(matches!(refused, Err(Error::Aliasing { .. })), "{refused:?}");
    // A bad correction: refused by `Var::new`, inside the scope before any launch.
    let refused = reducer.scope(|s| {
        let var = Var::<f32>::new(-1.0)?;
        s.reduce_into(&x, var, Over::Axes(&layout, &[0]), &mut vars, &stream)
    });
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
        let mean_var = MeanVar::<f64>::new(correction).unwrap();
        let (means, vars) = r.reduce_over(x, mean_var, Over::Segments(offsets)).unwrap().values;
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
        let std = Std::<f64>::new(correction).unwrap();
        B::to_vec(&r.reduce_over(x, std, Over::Segments(offsets)).unwrap().values).unwrap()
    });
    let want_std: Vec<f64> = reference.iter().map(|r| r.1.sqrt()).collect();
    check_all!(format!("{what} std of f32 in f64"), stds, want_std, 1e-9);
    let lse = backend.staged_twice(&data, 0, POISON_F64, |r, x| {
        B::to_vec(&r.reduce_over(x, LogSumExp, Over::Segments(offsets)).unwrap().values).unwrap()
    });
    check_all!(
        format!("{what} logsumexp"),
        lse,
        per_segment.iter().map(|x| logsumexp(x)).collect(),
        1e-13
    );
    for predicate in [Predicate::Nonzero, Predicate::Nan, Predicate::Inf] {
        let holds = |v: &f64| common::predicate_holds(predicate, *v);
        let want: Vec<u64> = per_segment
            .iter()
            .map(|x| x.iter().filter(|v| holds(v)).count() as u64)
            .collect();
        let (counts, any, all) = backend.staged_twice(&data32, 3, POISON_F32, |r, x| {
            let over = Over::Segments(offsets);
            let counts = B::to_vec(&r.reduce_over(x, Count(predicate), over).unwrap().values).unwrap();
            let any = B::to_vec(&r.reduce_over(x, Any(predicate), over).unwrap().values).unwrap();
            (
                counts,
                any,
                B::to_vec(&r.reduce_over(x, All(predicate), over).unwrap().values).unwrap(),
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
        let var = Var::<f64>::new(1.0).unwrap();
        r.reduce_over(B::slice(&data), var, Over::Segments(B::slice(&staged)))
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

/// Regression: zero segments, given by one offset. Past the end of the
/// values (`[7]` over 3) it is refused as any offset past the end is
/// (no segment is launched, so the kernels' check never saw it: it once
/// returned `Ok` with no results); at the end (`[3]` over 3) it is no
/// segments, no results. Statistics and an op alike.
#[test]
fn one_offset_past_the_end_is_refused() {
    let test = "one_offset_past_the_end_is_refused";
    for_each_backend!(test, |backend| { one_offset_past_the_end(&mut backend) });
}

fn one_offset_past_the_end<B: common::TestBackend>(backend: &mut Tester<B>) {
    let name = backend.name();
    let data = B::stage(&[1.0f32, 0.0, 3.0], 0, POISON_F32);
    let x = B::slice(&data);
    let r = &mut backend.reducer;
    let past = B::stage(&[7u64], 0, 0);
    let over = Over::Segments(B::slice(&past));
    let count = r.reduce_over(x, Count(Predicate::Nonzero), over).map(|_| ());
    assert!(
        matches!(count, Err(Error::InvalidSegments(_))),
        "{name}: count: {count:?}"
    );
    let all = r.reduce_over(x, All(Predicate::Nonzero), over).map(|_| ());
    assert!(matches!(all, Err(Error::InvalidSegments(_))), "{name}: all: {all:?}");
    let sum = r.reduce_over(x, Op::Sum, over).map(|_| ());
    assert!(matches!(sum, Err(Error::InvalidSegments(_))), "{name}: sum: {sum:?}");
    let at_the_end = B::stage(&[3u64], 0, 0);
    let over = Over::Segments(B::slice(&at_the_end));
    let counts = r.reduce_over(x, Count(Predicate::Nonzero), over).unwrap();
    assert_eq!(
        (B::to_vec(&counts.values).unwrap(), counts.shape(false)),
        (vec![], vec![0]),
        "{name}: count"
    );
    let all = r.reduce_over(x, All(Predicate::Nonzero), over).unwrap();
    assert_eq!(B::to_vec(&all.values).unwrap(), [0u8; 0], "{name}: all");
    let sums = r.reduce_over(x, Op::Sum, over).unwrap();
    assert_eq!(B::to_vec(&sums.values).unwrap(), [0.0f32; 0], "{name}: sum");
}

/// On the GPU: `reduce_into` over segments agrees bit for bit with the
/// blocking calls, into an output one element past a poisoned one, and
/// clamps invalid offsets (nothing outside the values is read).
#[test]
fn segment_scope_forms_agree_with_the_blocking_calls() {
    use cust::memory::DeviceBuffer;
    use cust::stream::{Stream, StreamFlags};
    use reduce::{Input, Output, Reducer};
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
    let var = Var::<f32>::new(1.0).unwrap();
    let want = bits(
        reducer
            .reduce_over(&x, var, Over::Segments(&o))
            .unwrap()
            .values
            .as_host_vec()
            .unwrap(),
    );
    let want_all = reducer
        .reduce_over(&x, All(Predicate::Nan), Over::Segments(&o))
        .unwrap()
        .values
        .as_host_vec()
        .unwrap();
    let mut var_out = DeviceBuffer::from_slice(&vec![POISON_F32; n + 1]).unwrap();
    let mut all = DeviceBuffer::from_slice(&vec![7u8; n + 1]).unwrap();
    reducer
        .scope(|s| {
            let over = Over::Segments(Input::from(&o));
            s.reduce_into(&x, var, over, Output::from(&mut var_out).get(1..).unwrap(), &stream)?;
            let all_out = Output::from(&mut all).get(1..).unwrap();
            s.reduce_into(&x, All(Predicate::Nan), over, all_out, &stream)
        })
        .expect("reduce_into");
    let (var, all) = (bits(var_out.as_host_vec().unwrap()), all.as_host_vec().unwrap());
    assert_eq!(
        (var[0], &var[1..]),
        (POISON_F32.to_bits(), &want[..]),
        "reduce_into Var over segments"
    );
    assert_eq!((all[0], &all[1..]), (7, &want_all[..]), "reduce_into All over segments");
    // Offsets past the end are clamped by reduce_into: the segment ends at the values' end.
    let past = DeviceBuffer::from_slice(&[49_990u64, 60_000]).unwrap();
    let mut count = DeviceBuffer::from_slice(&[0u64]).unwrap();
    reducer
        .scope(|s| {
            let over = Over::Segments(Input::from(&past));
            s.reduce_into(&x, Count(Predicate::Nonzero), over, &mut count, &stream)
        })
        .expect("reduce_into Count over segments");
    let tail = data[49_990..].iter().filter(|&&v| v != 0.0).count() as u64;
    assert_eq!(count.as_host_vec().unwrap(), [tail]);
    let wrong_length = reducer.scope(|s| {
        let over = Over::Segments(Input::from(&o));
        s.reduce_into(&x, Count(Predicate::Nan), over, &mut count, &stream)
    });
    assert!(
        matches!(wrong_length, Err(Error::OutputLength { output: "out", .. })),
        "{wrong_length:?}"
    );
}
