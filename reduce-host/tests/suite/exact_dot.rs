//! `ExactDot`: each product `a[i] * b[i]` rounded to the element type, the
//! products summed exactly, the sum rounded once. So `ExactDot::fold`'s
//! bits on every backend, length, pair of offsets (both inputs in vectors,
//! or element by element where their offsets differ), launch shape and
//! order, both on the fast path and the exact pass; `ExactSumOfSquares`'s
//! bits for an input with itself; the fold itself against `fsum` of the
//! products (formed in `f64` here: exact for `f32` factors, then rounded).

use crate::common;
use crate::exact_sum::{random_input, reference, same_bits, ExactTest, Kind, KINDS};
use common::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use reduce::emulated::Emulator;
use reduce::{Error, ExactDot, ExactSumOfSquares, Policy};

/// Each product rounded to `T`, formed apart from the library: the exact
/// product of two `f32`s is an `f64`, rounded once to `f32`; an `f64`
/// product is IEEE's.
fn products<T: ExactTest>(a: &[T], b: &[T]) -> Vec<T> {
    a.iter()
        .zip(b)
        .map(|(x, y)| T::from_f64(x.to_f64() * y.to_f64()))
        .collect()
}

/// `ExactDot::fold`, checked to be the exact sum of the rounded products
/// (`ExactSum::fold`, itself checked against `fsum` where that applies).
fn folded<T: ExactTest>(a: &[T], b: &[T]) -> T {
    let fold = ExactDot::fold(a, b).unwrap();
    let want = reference(&products(a, b));
    assert!(same_bits(fold, want), "ExactDot::fold {fold:e} against {want:e}");
    fold
}

/// Two inputs of `kind`: `a` of that kind and `b` uniform, or, for
/// [`Kind::Cancelling`], pairs `(x, y)` and `(-x, y)` shuffled together
/// (products that cancel exactly) and a little left over.
fn random_pair<T: ExactTest>(rng: &mut StdRng, kind: Kind, n: usize) -> (Vec<T>, Vec<T>) {
    if !matches!(kind, Kind::Cancelling) {
        // Specials are at least one value.
        let a = random_input::<T>(rng, kind, n);
        let b = random_input::<T>(rng, Kind::Uniform, a.len());
        return (a, b);
    }
    let b = random_input::<T>(rng, Kind::Uniform, n);
    let mut pairs: Vec<(T, T)> = (0..n / 2)
        .flat_map(|k| {
            let x = T::from_f64(rng.gen_range(-1e6..1e6));
            [(x, b[k]), (T::from_f64(-x.to_f64()), b[k])]
        })
        .collect();
    pairs.extend((0..n % 2).map(|_| (T::from_f64(rng.gen_range(-1e-3..1e-3)), T::from_f64(0.5))));
    pairs.shuffle(rng);
    pairs.into_iter().unzip()
}

/// The exact dot product of `a` and `b`, each staged at its offset between
/// poison, on the tester's backend.
fn exact_dot_on<B: TestBackend, T: ExactTest>(
    tester: &mut Tester<B>,
    (a, offset_a): (&[T], usize),
    (b, offset_b): (&[T], usize),
) -> Result<T, Error> {
    let poison = T::from_f64(f64::NAN);
    let (a, b) = (B::stage(a, offset_a, poison), B::stage(b, offset_b, poison));
    tester.reducer.reduce_pair(B::slice(&a), B::slice(&b), ExactDot)
}

/// Every kind, lengths from none past the grid's cap, the two inputs at
/// one offset and at different ones: the fold's bits, on every backend.
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
                backend.size(3_000_000, 90_000),
            ] {
                let (a, b) = random_pair::<T>(&mut rng, kind, n);
                let want = folded(&a, &b);
                let same = rng.gen_range(0..4);
                for offsets in [(same, same), (rng.gen_range(0..4), rng.gen_range(0..4))] {
                    let got = exact_dot_on(&mut backend, (&a, offsets.0), (&b, offsets.1)).unwrap();
                    assert!(
                        got.to_bits() == want.to_bits(),
                        "{} {kind:?} n = {n} offsets {offsets:?}: {got:e} where the fold gives {want:e}",
                        backend.name()
                    );
                }
            }
        }
    });
}

#[test]
fn exact_dots_of_f32_are_the_folds_bits() {
    matches_the_fold::<f32>("exact_dots_of_f32_are_the_folds_bits");
}

#[test]
fn exact_dots_of_f64_are_the_folds_bits() {
    matches_the_fold::<f64>("exact_dots_of_f64_are_the_folds_bits");
}

/// The same pairs under other launch shapes, in other orders and at other
/// offsets: the same bits; and an input with itself gives its exact sum
/// of squares.
fn independent_of_shape_and_order<T: ExactTest>() {
    let mut rng = rng("exact_dots_do_not_depend_on_shape_order_or_offset");
    for kind in KINDS {
        let (a, b) = random_pair::<T>(&mut rng, kind, 50_000);
        let want = folded(&a, &b);
        let squares = ExactSumOfSquares::fold(&a);
        let mut pairs: Vec<(T, T)> = a.into_iter().zip(b).collect();
        for (threads, grid) in [(32, 1), (64, 3), (128, 7), (256, 40), (1024, 2)] {
            let mut emulator = Emulator::with_shape(Policy::new(threads).unwrap(), grid).unwrap();
            pairs.shuffle(&mut rng);
            let (a, b): (Vec<T>, Vec<T>) = pairs.iter().copied().unzip();
            let (start_a, start_b) = (rng.gen_range(0..3), rng.gen_range(0..3));
            let shifted = |values: &[T], start: usize| {
                let mut shifted = vec![T::from_f64(0.0); start];
                shifted.extend_from_slice(values);
                shifted
            };
            let (shifted_a, shifted_b) = (shifted(&a, start_a), shifted(&b, start_b));
            let got = emulator
                .reduce_pair(&shifted_a[start_a..], &shifted_b[start_b..], ExactDot)
                .unwrap();
            assert!(same_bits(got, want), "{kind:?} {threads}×{grid}: {got:e} != {want:e}");
            let itself = emulator.reduce_pair(&a, &a, ExactDot).unwrap();
            assert!(
                same_bits(itself, squares),
                "{kind:?} {threads}×{grid}: a·a {itself:e} != its sum of squares {squares:e}"
            );
        }
    }
}

#[test]
fn exact_dots_do_not_depend_on_shape_order_or_offset() {
    independent_of_shape_and_order::<f32>();
    independent_of_shape_and_order::<f64>();
}

/// Known answers where order matters, specials as IEEE's sum of the rounded
/// products gives them, and a length mismatch refused.
#[test]
fn adversarial_exact_dots() {
    let test = "adversarial_exact_dots";
    for_each_backend!(test, |backend| {
        let name = backend.name();
        let mut check = |a: &[f32], b: &[f32], want: f32| {
            for offsets in [(0, 0), (1, 2), (3, 3)] {
                let got = exact_dot_on(&mut backend, (a, offsets.0), (b, offsets.1)).unwrap();
                assert!(
                    same_bits(got, want) && same_bits(ExactDot::fold(a, b).unwrap(), want),
                    "{name} {a:?}·{b:?} at {offsets:?}: {got:e}, want {want:e}"
                );
                assert!(
                    got.to_bits() == ExactDot::fold(a, b).unwrap().to_bits(),
                    "{name} {a:?}·{b:?}: bits {:#x}, the fold's {:#x}",
                    got.to_bits(),
                    ExactDot::fold(a, b).unwrap().to_bits()
                );
            }
        };
        check(&[1e30, 1.0, 1e30], &[1.0, 3.0, -1.0], 3.0);
        check(&[1e30, 1e30, 1.0], &[-1.0, 1.0, 3.0], 3.0);
        check(&[], &[], 0.0);
        check(&[-1.0, 0.0], &[0.0, -2.0], 0.0); // -0.0 + -0.0 is +0.0: an exact zero
        check(&[f32::MAX, f32::MAX], &[1.0, -1.0], 0.0);
        check(&[f32::MAX], &[2.0], f32::INFINITY); // the product overflows
        check(&[f32::MAX, f32::MAX], &[2.0, -2.0], f32::NAN); // +inf and -inf
        check(&[f32::INFINITY, 1.0], &[0.0, 1.0], f32::NAN); // inf × 0
        check(&[f32::NAN, 1.0], &[1.0, 1.0], f32::NAN);
        // Products rounded to f32: 2^-75 squared is 2^-150, half the least
        // subnormal, a tie to even: 0; three halves of it round to 2^-149.
        check(&[2f32.powi(-75); 4], &[2f32.powi(-75); 4], 0.0);
        check(&[1.5 * 2f32.powi(-75)], &[2f32.powi(-75)], f32::from_bits(1));
        // (1 + 2^-12)² = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 (a tie, to
        // even); the exact sum with -1 does not see the lost 2^-24.
        let x = 1.0 + 2f32.powi(-12);
        check(&[x, 1.0], &[x, -1.0], 2f32.powi(-11));
        let short = exact_dot_on(&mut backend, (&[1.0f64, 2.0][..], 0), (&[1.0f64][..], 0));
        assert!(
            matches!(short, Err(Error::LengthMismatch { left: 2, right: 1 })),
            "{name}: {short:?}"
        );
    });
    assert!(ExactDot::fold(&[1.0f32], &[]).is_err());
}

/// `Scope::reduce_pair_into` on another stream into poisoned outputs:
/// `ExactDot` gives the fold's bits, and a user operator's pairs (the
/// enqueued form sets its program as the blocking one does) the blocking
/// call's value (GPU only: scopes take CUDA streams).
#[test]
fn exact_dots_into_a_scope_are_the_folds_bits() {
    use cust::memory::{DeviceBox, DeviceBuffer};
    use cust::stream::{Stream, StreamFlags};
    use reduce::user::{Operator, Value};
    use reduce::User;
    /// `Σ a·b` in the operator's order: an ordinary float dot product.
    #[derive(Clone, Copy, Debug)]
    struct Products;
    impl Operator<f64> for Products {
        fn identity(&self) -> f64 {
            0.0
        }
        fn combine<V: Value<f64>>(&self, a: V, b: V) -> V {
            a + b
        }
    }
    let test = "exact_dots_into_a_scope_are_the_folds_bits";
    let Some(_context) = gpu(test) else {
        return;
    };
    let mut rng = rng(test);
    let mut reducer = reduce::Reducer::new().unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let products = User::new(Products).unwrap();
    for kind in KINDS {
        let (a, b) = random_pair::<f64>(&mut rng, kind, 300_001);
        let want = folded(&a, &b);
        let (device_a, device_b) = (
            DeviceBuffer::from_slice(&a).unwrap(),
            DeviceBuffer::from_slice(&b).unwrap(),
        );
        let mut exact = DeviceBox::new(&f64::NAN).unwrap();
        let mut user = DeviceBox::new(&f64::NAN).unwrap();
        reducer
            .scope(|s| {
                s.reduce_pair_into(&device_a, &device_b, ExactDot, &mut exact, &stream)?;
                s.reduce_pair_into(&device_a, &device_b, &products, &mut user, &stream)
            })
            .unwrap();
        let got = exact.as_host_value().unwrap();
        assert!(got.to_bits() == want.to_bits(), "{kind:?}: {got:e} != {want:e}");
        let blocking = reducer.reduce_pair(&device_a, &device_b, &products).unwrap();
        let got = user.as_host_value().unwrap();
        assert!(
            same_bits(got, blocking),
            "{kind:?}: user pairs {got:e}, blocking {blocking:e}"
        );
    }
}

/// The stated bound against the exact dot product: `|result − Σ a·b| ≤
/// Σ|a·b − fl(a·b)| + ½ ulp(result)` (the products' own rounding errors,
/// at most u·Σ|a·b|, u = 2^-24 for `f32`, 2^-53 for `f64`, with normal
/// products), checked against `fsum` of the exact products (an `f32`
/// product is exact in an `f64`; an `f64` product is `p + e` with
/// `e = fma(a, b, −p)`), whose own rounding adds half an ulp. Cancelling
/// inputs, where a float dot product's error is many ulps of its result;
/// with `b` powers of two every product is exact, so the bound is the
/// roundings' alone: a float dot product fails it.
#[test]
fn exact_dot_error_is_within_its_bound() {
    use crate::exact_sum::fsum;
    let mut rng = rng("exact_dot_error_is_within_its_bound");
    let ulp = |x: f64, bits: i32| {
        let exponent = if x == 0.0 { -1022 } else { x.abs().log2().floor() as i32 };
        2f64.powi(exponent.max(-1022) - (bits - 1))
    };
    let power_of_two = |y: f64| {
        if y == 0.0 {
            1.0
        } else {
            y.signum() * 2f64.powi(y.abs().log2().floor() as i32)
        }
    };
    for round in 0..400 {
        let n = rng.gen_range(1..2000);
        let exact_products = round % 2 == 1;
        let (a, mut b) = random_pair::<f32>(&mut rng, Kind::Cancelling, n);
        if exact_products {
            b.iter_mut().for_each(|y| *y = power_of_two(f64::from(*y)) as f32);
        }
        let got = f64::from(ExactDot::fold(&a, &b).unwrap());
        let exact = fsum(a.iter().zip(&b).map(|(&x, &y)| f64::from(x) * f64::from(y)));
        let lost: f64 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| (f64::from(x) * f64::from(y) - f64::from(x * y)).abs())
            .sum();
        assert!(!exact_products || lost == 0.0);
        let bound = lost + 0.5 * ulp(got, 24) + 0.5 * ulp(exact, 53);
        assert!(
            (got - exact).abs() <= bound,
            "f32 n = {n}: {got:e} against {exact:e}, bound {bound:e}"
        );

        let (a, mut b) = random_pair::<f64>(&mut rng, Kind::Cancelling, n);
        if exact_products {
            b.iter_mut().for_each(|y| *y = power_of_two(*y));
        }
        let got = ExactDot::fold(&a, &b).unwrap();
        let errors: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| x.mul_add(y, -(x * y))).collect();
        let exact = fsum(a.iter().zip(&b).map(|(&x, &y)| x * y).chain(errors.iter().copied()));
        let lost: f64 = errors.iter().map(|e| e.abs()).sum();
        assert!(!exact_products || lost == 0.0);
        let bound = lost * (1.0 + 1e-12) + 0.5 * ulp(got, 53) + 0.5 * ulp(exact, 53);
        assert!(
            (got - exact).abs() <= bound,
            "f64 n = {n}: {got:e} against {exact:e}, bound {bound:e}"
        );
    }
}
