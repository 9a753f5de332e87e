//! The same input gives the bitwise same result on every call (and, on the
//! emulator, in every block order).

use crate::common;
use common::*;
use reduce::Op;

/// Repeated calls on one input; on the emulator each call also runs the
/// blocks in another order.
fn repeated_calls<T: TestElement>(test: &str, op: Op) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        // Large enough for a multi-block grid, so the last-block combine is exercised.
        let data = random_vec::<T>(&mut rng, op, backend.size(3_000_017, 100_003));
        let calls = backend.size(100, 20);
        let first = backend.reduce(&data, 1, op).unwrap();
        T::check(first, &data, op).unwrap();
        for call in 1..calls {
            let again = backend.reduce(&data, 1, op).unwrap();
            assert_eq!(
                again.to_bits(),
                first.to_bits(),
                "{}: call {call}: {again:?} != {first:?}",
                backend.name()
            );
        }
    });
}

#[test]
fn sum_f32_100_calls_bitwise_equal() {
    repeated_calls::<f32>("sum_f32_100_calls_bitwise_equal", Op::Sum);
}

#[test]
fn sum_f64_100_calls_bitwise_equal() {
    repeated_calls::<f64>("sum_f64_100_calls_bitwise_equal", Op::Sum);
}

#[test]
fn product_f32_100_calls_bitwise_equal() {
    repeated_calls::<f32>("product_f32_100_calls_bitwise_equal", Op::Product);
}
