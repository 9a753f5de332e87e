//! The same input gives the bitwise same result on every call.

mod common;
use common::*;
use cust::memory::DeviceBuffer;
use reduce::{Op, Reducer};

fn repeated_calls<T: TestElement>(test: &str, op: Op) {
    if gpu(test).is_none() {
        return;
    }
    let mut rng = rng(test);
    let mut reducer = Reducer::new().expect("Reducer::new");
    // Large enough for a multi-block grid, so the last-block combine is exercised.
    let data = random_vec::<T>(&mut rng, op, 3_000_017);
    let buffer = DeviceBuffer::from_slice(&data).unwrap();
    let slice = buffer.index(1..);
    let first = reducer.reduce(&slice, op).unwrap();
    T::check(first, &data[1..], op).unwrap();
    for call in 1..100 {
        let again = reducer.reduce(&slice, op).unwrap();
        assert_eq!(again.to_bits(), first.to_bits(), "call {call}: {again:?} != {first:?}");
    }
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
