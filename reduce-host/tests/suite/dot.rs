//! The production dot product (on the GPU `reduce::dot` and
//! `Scope::dot_into`; the emulator's `dot`) for every element type: edge
//! sizes, the two inputs at equal and at different offsets within 16 bytes
//! (vector and element-by-element paths), against an exact CPU reference.

use crate::common;
use common::*;
use rand::Rng;
use reduce::Element;

const SIZES: &[usize] = &[0, 1, 2, 3, 31, 33, 257, 4097, 65537, 1_000_003];

fn sizes_and_offsets<T: DotElement + Element>(test: &str) {
    let mut rng = rng(test);
    let mut failures = Vec::new();
    for_each_backend!(test, |backend| {
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
    });
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
    for_each_backend!(test, |backend| {
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
    });
}

#[test]
fn dot_f32_mismatched_lengths_is_an_error() {
    for_each_backend!("dot_f32_mismatched_lengths_is_an_error", |backend| {
        let (a, b) = ([1.0f32; 5], [1.0f32; 4]);
        match backend.dot((&a, 0), (&b, 0)) {
            Err(message) if message.contains("differ in length (5 and 4") => {}
            other => panic!("{}: mismatched lengths gave {other:?}", backend.name()),
        }
        assert_eq!(backend.dot((&a[..4], 0), (&b, 0)).unwrap(), 4.0);
        assert_eq!(backend.dot((&a[..0], 0), (&b[..0], 0)).unwrap(), 0.0);
    });
}
