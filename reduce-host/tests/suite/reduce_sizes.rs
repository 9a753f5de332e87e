//! Every op × type over the edge sizes and a random size, at aligned and
//! unaligned starting addresses, against the CPU reference, on the emulator
//! and (when there is one) the GPU.

use crate::common;
use common::*;
use rand::Rng;
use reduce::Op;

const SIZES: &[usize] = &[0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 4097, 65537, 1_000_003];

fn sizes_and_offsets<T: TestElement>(test: &str, op: Op) {
    let mut rng = rng(test);
    let random_n = rng.gen_range(1..=5_000_000);
    let mut failures = Vec::new();
    for_each_backend!(test, |backend| {
        for &n in SIZES.iter().chain([backend.size(random_n, 200_000)].iter()) {
            if n == 0 && !op.defined_on_empty() {
                continue; // the empty case of max/min is an error: see errors.rs
            }
            for offset in [0, 1, 2, 3] {
                let data = random_vec::<T>(&mut rng, op, n);
                if let Err(e) = backend.check(&data, offset, op) {
                    failures.push(format!("n={n} offset={offset}: {e}"));
                }
                if op == Op::Sum {
                    // For floats, random reals are only checked to the rounding bound,
                    // which at large n exceeds any one element; small integers are
                    // summed exactly and checked bit for bit.
                    let data = random_exact_sum_vec::<T>(&mut rng, n);
                    if let Err(e) = backend.check(&data, offset, op) {
                        failures.push(format!("n={n} offset={offset} exact-sum data: {e}"));
                    }
                }
            }
        }
    });
    assert!(failures.is_empty(), "{test}:\n{}", failures.join("\n"));
}

macro_rules! size_tests {
    ($($name:ident: $op:ident, $t:ty;)*) => {$(
        #[test]
        fn $name() {
            sizes_and_offsets::<$t>(stringify!($name), Op::$op);
        }
    )*};
}

size_tests! {
    sum_i32_sizes_offsets: Sum, i32;
    sum_u32_sizes_offsets: Sum, u32;
    sum_i64_sizes_offsets: Sum, i64;
    sum_u64_sizes_offsets: Sum, u64;
    sum_f32_sizes_offsets: Sum, f32;
    sum_f64_sizes_offsets: Sum, f64;
    max_i32_sizes_offsets: Max, i32;
    max_u32_sizes_offsets: Max, u32;
    max_i64_sizes_offsets: Max, i64;
    max_u64_sizes_offsets: Max, u64;
    max_f32_sizes_offsets: Max, f32;
    max_f64_sizes_offsets: Max, f64;
    min_i32_sizes_offsets: Min, i32;
    min_u32_sizes_offsets: Min, u32;
    min_i64_sizes_offsets: Min, i64;
    min_u64_sizes_offsets: Min, u64;
    min_f32_sizes_offsets: Min, f32;
    min_f64_sizes_offsets: Min, f64;
    product_i32_sizes_offsets: Product, i32;
    product_u32_sizes_offsets: Product, u32;
    product_i64_sizes_offsets: Product, i64;
    product_u64_sizes_offsets: Product, u64;
    product_f32_sizes_offsets: Product, f32;
    product_f64_sizes_offsets: Product, f64;
    nan_sum_i32_sizes_offsets: NanSum, i32;
    nan_sum_u32_sizes_offsets: NanSum, u32;
    nan_sum_i64_sizes_offsets: NanSum, i64;
    nan_sum_u64_sizes_offsets: NanSum, u64;
    nan_sum_f32_sizes_offsets: NanSum, f32;
    nan_sum_f64_sizes_offsets: NanSum, f64;
    nan_max_i32_sizes_offsets: NanMax, i32;
    nan_max_u32_sizes_offsets: NanMax, u32;
    nan_max_i64_sizes_offsets: NanMax, i64;
    nan_max_u64_sizes_offsets: NanMax, u64;
    nan_max_f32_sizes_offsets: NanMax, f32;
    nan_max_f64_sizes_offsets: NanMax, f64;
    nan_min_i32_sizes_offsets: NanMin, i32;
    nan_min_u32_sizes_offsets: NanMin, u32;
    nan_min_i64_sizes_offsets: NanMin, i64;
    nan_min_u64_sizes_offsets: NanMin, u64;
    nan_min_f32_sizes_offsets: NanMin, f32;
    nan_min_f64_sizes_offsets: NanMin, f64;
    sum_of_squares_i32_sizes_offsets: SumOfSquares, i32;
    sum_of_squares_u32_sizes_offsets: SumOfSquares, u32;
    sum_of_squares_i64_sizes_offsets: SumOfSquares, i64;
    sum_of_squares_u64_sizes_offsets: SumOfSquares, u64;
    sum_of_squares_f32_sizes_offsets: SumOfSquares, f32;
    sum_of_squares_f64_sizes_offsets: SumOfSquares, f64;
    max_abs_f32_sizes_offsets: MaxAbs, f32;
    max_abs_f64_sizes_offsets: MaxAbs, f64;
}
