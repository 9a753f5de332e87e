//! Floating-point special values: NaN anywhere, ±inf, signed zeros.

use crate::common;
use common::*;
use reduce::Op;

/// NaN at the first, a middle and the last position, for sizes that put it in
/// the head, the vector body and the tail, must reach the result of every op.
fn nan_anywhere<T: TestElement + num_traits::Float>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for op in ops_for::<T>() {
            for n in [1usize, 7, 100, 4097, backend.size(1_000_003, 100_003)] {
                for position in [0, n / 2, n - 1] {
                    for offset in [0, 1] {
                        let mut data = random_vec::<T>(&mut rng, op, n);
                        data[position] = T::nan();
                        backend
                            .check(&data, offset, op)
                            .unwrap_or_else(|e| panic!("{op} n={n} NaN at {position} offset={offset}: {e}"));
                    }
                }
            }
        }
    });
}

/// All `+inf`: min is `+inf` (not `MAX`); all `-inf`: max is `-inf`; sums of
/// one sign stay infinite; mixed signs sum to NaN; max/min pick the infinities.
fn infinities<T: TestElement + num_traits::Float>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for n in [1usize, 33, 65537] {
            let all_pos = vec![T::infinity(); n];
            let all_neg = vec![T::neg_infinity(); n];
            for op in ops_for::<T>() {
                backend
                    .check(&all_pos, 0, op)
                    .unwrap_or_else(|e| panic!("{op} of {n} × +inf: {e}"));
                backend
                    .check(&all_neg, 1, op)
                    .unwrap_or_else(|e| panic!("{op} of {n} × -inf: {e}"));
            }
            let mut mixed = random_vec::<T>(&mut rng, Op::Sum, n.max(2));
            mixed[0] = T::infinity();
            let last = mixed.len() - 1;
            mixed[last] = T::neg_infinity();
            for op in [
                Op::Sum,
                Op::Max,
                Op::Min,
                Op::NanSum,
                Op::NanMax,
                Op::NanMin,
                Op::MaxAbs,
            ] {
                backend
                    .check(&mixed, 2, op)
                    .unwrap_or_else(|e| panic!("{op} of mixed ±inf: {e}"));
            }
        }
    });
}

/// `max`/`min` over signed zeros return a zero (either sign: unspecified).
fn signed_zeros<T: TestElement + num_traits::Float>(test: &str) {
    let data: Vec<T> = (0..1000)
        .map(|i| if i % 2 == 0 { T::zero() } else { -T::zero() })
        .collect();
    for_each_backend!(test, |backend| {
        for op in [
            Op::Max,
            Op::Min,
            Op::Sum,
            Op::NanMax,
            Op::NanMin,
            Op::NanSum,
            Op::MaxAbs,
            Op::SumOfSquares,
        ] {
            let got = backend.reduce(&data, 0, op).unwrap();
            assert!(
                got == T::zero(),
                "{}: {op} of signed zeros gave {got:?}",
                backend.name()
            );
        }
    });
}

/// The NaN-ignoring ops on small inputs whose answers are known (NumPy's
/// `nansum`/`nanmax`/`nanmin` give the same).
fn nan_ops_known_answers<T: TestElement + num_traits::Float>(test: &str) {
    let (nan, inf, one, two) = (T::nan(), T::infinity(), T::one(), T::one() + T::one());
    let cases: Vec<(Vec<T>, Op, T)> = vec![
        (vec![one, nan, two], Op::NanSum, one + two),
        (vec![nan, nan], Op::NanSum, T::zero()),
        (vec![inf, -inf, nan], Op::NanSum, nan),
        (vec![nan, one, -inf], Op::NanMax, one),
        (vec![nan, nan, nan], Op::NanMax, nan),
        (vec![two, nan, -two], Op::NanMin, -two),
        (vec![-two, one, nan], Op::MaxAbs, nan),
        (vec![-two, one], Op::MaxAbs, two),
        (vec![-two, one, nan], Op::SumOfSquares, nan),
    ];
    for_each_backend!(test, |backend| {
        for (data, op, expected) in &cases {
            let got = backend.reduce(data, 1, *op).unwrap();
            let same = got == *expected || (TestElement::is_nan(got) && TestElement::is_nan(*expected));
            assert!(
                same,
                "{}: {op} of {data:?} gave {got:?}, expected {expected:?}",
                backend.name()
            );
        }
    });
}

#[test]
fn nan_ops_f32_known_answers() {
    nan_ops_known_answers::<f32>("nan_ops_f32_known_answers");
}

#[test]
fn nan_ops_f64_known_answers() {
    nan_ops_known_answers::<f64>("nan_ops_f64_known_answers");
}

#[test]
fn all_ops_f32_nan_first_middle_last() {
    nan_anywhere::<f32>("all_ops_f32_nan_first_middle_last");
}

#[test]
fn all_ops_f64_nan_first_middle_last() {
    nan_anywhere::<f64>("all_ops_f64_nan_first_middle_last");
}

#[test]
fn all_ops_f32_infinities() {
    infinities::<f32>("all_ops_f32_infinities");
}

#[test]
fn all_ops_f64_infinities() {
    infinities::<f64>("all_ops_f64_infinities");
}

#[test]
fn max_min_sum_f32_signed_zeros() {
    signed_zeros::<f32>("max_min_sum_f32_signed_zeros");
}

#[test]
fn max_min_sum_f64_signed_zeros() {
    signed_zeros::<f64>("max_min_sum_f64_signed_zeros");
}
