//! The production dot product (on the GPU `reduce::dot` and
//! `Reducer::dot_into`; the emulator's `dot`) for every element type: edge
//! sizes, the two inputs at equal and at different offsets within 16 bytes
//! (vector and element-by-element paths), against an exact CPU reference.

mod common;
use common::*;
use rand::Rng;
use reduce::Element;

const SIZES: &[usize] = &[0, 1, 2, 3, 31, 33, 257, 4097, 65537, 1_000_003];

/// Element types for dot tests: random inputs and the exact expected dot.
trait DotElement: TestElement {
    /// Full-range integers (the products and sum wrap); small integers as
    /// floats (products and every partial sum exact up to a few million terms).
    fn random_for_dot(rng: &mut rand::rngs::StdRng) -> Self;
    /// The dot product as the GPU must compute it, exactly.
    fn exact_dot(a: &[Self], b: &[Self]) -> Self;
}

macro_rules! integer_dot {
    ($($t:ty),*) => {$(
        impl DotElement for $t {
            fn random_for_dot(rng: &mut rand::rngs::StdRng) -> Self { rng.gen() }
            fn exact_dot(a: &[Self], b: &[Self]) -> Self {
                a.iter().zip(b).fold(0, |acc: $t, (x, y)| acc.wrapping_add(x.wrapping_mul(*y)))
            }
        }
    )*};
}
integer_dot!(i32, u32, i64, u64);

macro_rules! float_dot {
    ($($t:ty),*) => {$(
        impl DotElement for $t {
            fn random_for_dot(rng: &mut rand::rngs::StdRng) -> Self { rng.gen_range(-3i8..=3) as $t }
            fn exact_dot(a: &[Self], b: &[Self]) -> Self {
                // Every product and partial sum is an integer below 2^24 for the
                // sizes tested: exact in f64 and in $t.
                // Fold from +0.0, the library's documented start (Rust's `sum`
                // starts from -0.0, which differs on an empty or all-(-0.0) input).
                a.iter().zip(b).fold(0.0f64, |acc, (x, y)| acc + *x as f64 * *y as f64) as $t
            }
        }
    )*};
}
float_dot!(f32, f64);

fn sizes_and_offsets<T: DotElement + Element>(test: &str) {
    let mut rng = rng(test);
    let mut failures = Vec::new();
    for mut backend in backends(test) {
        // Below 1.86M terms, Σ|a·b| ≤ 9·n stays under 2^24: small-integer f32 dots are exact.
        let random_n = backend.size(rng.gen_range(1..1_800_000), 200_000);
        for &n in SIZES.iter().chain([random_n].iter()) {
            for (offset_a, offset_b) in [(0, 0), (1, 1), (0, 1), (3, 2)] {
                let a: Vec<T> = (0..n).map(|_| T::random_for_dot(&mut rng)).collect();
                let b: Vec<T> = (0..n).map(|_| T::random_for_dot(&mut rng)).collect();
                let expected = T::exact_dot(&a, &b);
                match backend.dot((&a, offset_a), (&b, offset_b)) {
                    Ok(got) if got.to_bits() == expected.to_bits() => {}
                    other => failures.push(format!(
                        "{}: n={n} offsets=({offset_a},{offset_b}): got {other:?}, expected {expected:?}",
                        backend.name()
                    )),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{test}:\n{}", failures.join("\n"));
}

#[test]
fn dot_i32_sizes_offsets() {
    sizes_and_offsets::<i32>("dot_i32_sizes_offsets");
}

#[test]
fn dot_u32_sizes_offsets() {
    sizes_and_offsets::<u32>("dot_u32_sizes_offsets");
}

#[test]
fn dot_i64_sizes_offsets() {
    sizes_and_offsets::<i64>("dot_i64_sizes_offsets");
}

#[test]
fn dot_u64_sizes_offsets() {
    sizes_and_offsets::<u64>("dot_u64_sizes_offsets");
}

#[test]
fn dot_f32_sizes_offsets() {
    sizes_and_offsets::<f32>("dot_f32_sizes_offsets");
}

#[test]
fn dot_f64_sizes_offsets() {
    sizes_and_offsets::<f64>("dot_f64_sizes_offsets");
}

#[test]
fn dot_f64_random_reals_within_bound() {
    let test = "dot_f64_random_reals_within_bound";
    let mut rng = rng(test);
    for mut backend in backends(test) {
        let n = backend.size(777_777, 77_777);
        let a: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let b: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let got = backend.dot((&a, 0), (&b, 0)).unwrap();
        let reference: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let magnitude: f64 = a.iter().zip(&b).map(|(x, y)| (x * y).abs()).sum();
        let bound = (n + 2) as f64 * f64::EPSILON * magnitude;
        assert!(
            (got - reference).abs() <= bound,
            "{}: got {got}, reference {reference} ± {bound}",
            backend.name()
        );
    }
}

#[test]
fn dot_f32_mismatched_lengths_is_an_error() {
    for mut backend in backends("dot_f32_mismatched_lengths_is_an_error") {
        let (a, b) = ([1.0f32; 5], [1.0f32; 4]);
        match backend.dot((&a, 0), (&b, 0)) {
            Err(message) if message.contains("differ in length (5 and 4") => {}
            other => panic!("{}: mismatched lengths gave {other:?}", backend.name()),
        }
        assert_eq!(backend.dot((&a[..4], 0), (&b, 0)).unwrap(), 4.0);
        assert_eq!(backend.dot((&a[..0], 0), (&b[..0], 0)).unwrap(), 0.0);
    }
}
