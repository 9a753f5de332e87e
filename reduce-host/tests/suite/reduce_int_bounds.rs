//! Integers at their bounds: exact max/min, wrapping sum/product, all-equal input.

use crate::common;
use common::*;
use num_traits::{Bounded, One, WrappingAdd};
use rand::Rng;
use reduce::Op;

/// Inputs that contain the type's minimum and maximum somewhere random, that
/// overflow when summed, and that hold one value everywhere.
fn bounds<T: TestElement + Bounded + WrappingAdd + One + Ord>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for n in [2usize, 33, 4097, backend.size(1_000_003, 100_003)] {
            for op in ops_for::<T>() {
                let mut data = random_vec::<T>(&mut rng, op, n);
                let (low, high) = (rng.gen_range(0..n), rng.gen_range(0..n));
                data[low] = T::min_value();
                data[high] = T::max_value();
                backend
                    .check(&data, 1, op)
                    .unwrap_or_else(|e| panic!("{op} n={n} with bounds: {e}"));
            }
            // Sums of the maximum overflow on every add: the result must wrap exactly.
            let all_max = vec![T::max_value(); n];
            backend
                .check(&all_max, 3, Op::Sum)
                .unwrap_or_else(|e| panic!("sum of {n} × MAX: {e}"));
            let all_min = vec![T::min_value(); n];
            for op in ops_for::<T>() {
                backend
                    .check(&all_min, 2, op)
                    .unwrap_or_else(|e| panic!("{op} of {n} × MIN: {e}"));
            }
            let value = T::random(&mut rng, Op::Max, n);
            let all_equal = vec![value; n];
            for op in ops_for::<T>() {
                backend
                    .check(&all_equal, 0, op)
                    .unwrap_or_else(|e| panic!("{op} of {n} equal values: {e}"));
            }
        }
    });
}

#[test]
fn all_ops_i32_bounds() {
    bounds::<i32>("all_ops_i32_bounds");
}

#[test]
fn all_ops_u32_bounds() {
    bounds::<u32>("all_ops_u32_bounds");
}

#[test]
fn all_ops_i64_bounds() {
    bounds::<i64>("all_ops_i64_bounds");
}

#[test]
fn all_ops_u64_bounds() {
    bounds::<u64>("all_ops_u64_bounds");
}
