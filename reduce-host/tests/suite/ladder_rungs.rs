//! Every ladder rung, every op, i32 and f32: the same CPU-reference checks
//! as the production kernel (sizes, unaligned starts, NaN), at the default
//! block size and at the small blocks of the seeds' coalescing experiment,
//! on the emulator and (when there is one) the GPU.

use crate::common;
use common::*;
use num_traits::Float;
use rand::Rng;
use reduce::ladder::{DotKernel, Ladder, Rung};
use reduce::{Error, Op};

const SIZES: &[usize] = &[1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 4097, 65537, 1_000_003];

/// The largest input the emulator reduces per case here: a rung at 8 threads
/// per block launches thousands of blocks, each a round of OS threads.
const EMULATOR_MAX: usize = 6_000;

/// The seeds' 256 threads per block, or 64 on the emulator (each emulated
/// barrier wakes every thread of the block).
fn default_block<B: TestBackend>(backend: &Tester<B>) -> u32 {
    backend.size(256, 64) as u32
}

/// Block sizes each rung is tested at: the default, and the smallest it allows.
fn block_sizes<B: TestBackend>(rung: Rung, backend: &Tester<B>) -> [u32; 2] {
    [default_block(backend), if rung == Rung::WarpShuffle { 32 } else { 8 }]
}

fn every_rung<T: TestElement>(test: &str, op: Op) {
    let mut rng = rng(test);
    let mut failures = Vec::new();
    for_each_backend!(test, |backend| {
        for rung in Rung::ALL {
            for block_threads in block_sizes(rung, &backend) {
                backend.set_ladder(Some(Ladder::new(rung, block_threads).unwrap()));
                let empty_ok = op.defined_on_empty();
                let sizes: Vec<usize> = SIZES
                    .iter()
                    .copied()
                    .chain(empty_ok.then_some(0))
                    .chain([rng.gen_range(1..3_000_000)])
                    .map(|n| backend.size(n, EMULATOR_MAX))
                    .collect();
                for n in sizes {
                    let offset = rng.gen_range(0..4);
                    let data = if op == Op::Sum && rng.gen() {
                        random_exact_sum_vec::<T>(&mut rng, n)
                    } else {
                        random_vec::<T>(&mut rng, op, n)
                    };
                    if let Err(e) = backend.check(&data, offset, op) {
                        failures.push(format!("{rung} at {block_threads} threads, n={n} offset={offset}: {e}"));
                    }
                }
            }
        }
    });
    assert!(failures.is_empty(), "{test}:\n{}", failures.join("\n"));
}

macro_rules! rung_tests {
    ($($name:ident: $op:ident, $t:ty;)*) => {$(
        #[test]
        fn $name() {
            every_rung::<$t>(stringify!($name), Op::$op);
        }
    )*};
}

rung_tests! {
    sum_i32_every_rung: Sum, i32;
    sum_f32_every_rung: Sum, f32;
    max_i32_every_rung: Max, i32;
    max_f32_every_rung: Max, f32;
    min_i32_every_rung: Min, i32;
    min_f32_every_rung: Min, f32;
    product_i32_every_rung: Product, i32;
    product_f32_every_rung: Product, f32;
}

#[test]
fn all_ops_f32_every_rung_nan_anywhere() {
    let test = "all_ops_f32_every_rung_nan_anywhere";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for rung in Rung::ALL {
            backend.set_ladder(Some(Ladder::new(rung, default_block(&backend)).unwrap()));
            for &op in Op::LADDER {
                for n in [1usize, 1000, backend.size(70_001, EMULATOR_MAX)] {
                    for position in [0, n / 2, n - 1] {
                        let mut data = random_vec::<f32>(&mut rng, op, n);
                        data[position] = f32::nan();
                        backend
                            .check(&data, 1, op)
                            .unwrap_or_else(|e| panic!("{rung} {op} n={n} NaN at {position}: {e}"));
                    }
                }
            }
        }
    });
}

#[test]
fn sum_f64_every_rung_is_unsupported() {
    for_each_backend!("sum_f64_every_rung_is_unsupported", |backend| {
        for rung in Rung::ALL {
            backend.set_ladder(Some(Ladder::new(rung, 256).unwrap()));
            match backend.reduce(&[1.0f64, 2.0], 0, Op::Sum) {
                Err(Error::UnsupportedStrategy { .. }) => {}
                other => panic!("{}: {rung} on f64 gave {other:?}", backend.name()),
            }
        }
        backend.set_ladder(None);
        assert_eq!(backend.reduce(&[1.0f64, 2.0], 0, Op::Sum).unwrap(), 3.0);
    });
}

#[test]
fn strategy_rejects_bad_block_sizes() {
    for bad in [0, 4, 48, 100, 2048] {
        assert!(Ladder::new(Rung::SequentialAddressing, bad).is_err(), "{bad} accepted");
    }
    assert!(Ladder::new(Rung::WarpShuffle, 8).is_err());
    assert!(Ladder::new(Rung::InterleavedDivergent, 8).is_ok());
    assert_eq!(Rung::ALL.map(|r| r.number()), [1, 2, 3, 4, 5, 6, 7]);
}

/// Small integers (as `T`): every product and every partial sum is exact, so
/// the atomics' order cannot change the result and it is checked exactly.
fn dot_exact<T: TestElement + From<i8> + Into<f64>>(test: &str, kernel: DotKernel) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for n in [1usize, 255, 256, 257, backend.size(100_003, 5_003)] {
            let a: Vec<T> = (0..n).map(|_| T::from(rng.gen_range(-3i8..=3))).collect();
            let b: Vec<T> = (0..n).map(|_| T::from(rng.gen_range(-3i8..=3))).collect();
            let expected: f64 = (0..n).map(|i| a[i].into() * b[i].into()).sum();
            let got = backend.dot_with(&a, &b, kernel).unwrap();
            assert_eq!(got.into(), expected, "{}: {kernel:?} n={n}", backend.name());
        }
        match backend.dot_with(&[T::from(1); 3], &[T::from(1); 2], kernel) {
            Err(Error::LengthMismatch { left: 3, right: 2 }) => {}
            other => panic!("{}: mismatched lengths gave {other:?}", backend.name()),
        }
    });
}

#[test]
fn dot_f32_atomic_per_element() {
    dot_exact::<f32>("dot_f32_atomic_per_element", DotKernel::AtomicPerElement);
}

#[test]
fn dot_f32_block_tree() {
    dot_exact::<f32>("dot_f32_block_tree", DotKernel::BlockTree);
}

#[test]
fn dot_i32_atomic_per_element() {
    dot_exact::<i32>("dot_i32_atomic_per_element", DotKernel::AtomicPerElement);
}

#[test]
fn dot_i32_block_tree() {
    dot_exact::<i32>("dot_i32_block_tree", DotKernel::BlockTree);
}

/// The special values of the production suite, through every rung: all ±inf,
/// mixed ±inf, and integers at their bounds.
#[test]
fn all_ops_i32_f32_every_rung_infinities_and_bounds() {
    let test = "all_ops_i32_f32_every_rung_infinities_and_bounds";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for rung in Rung::ALL {
            backend.set_ladder(Some(Ladder::new(rung, default_block(&backend)).unwrap()));
            for n in [1usize, 33, backend.size(65537, EMULATOR_MAX)] {
                for &op in Op::LADDER {
                    for value in [f32::INFINITY, f32::NEG_INFINITY] {
                        backend
                            .check(&vec![value; n], 1, op)
                            .unwrap_or_else(|e| panic!("{rung} {op} of {n} × {value}: {e}"));
                    }
                    let mut mixed = random_vec::<f32>(&mut rng, Op::Sum, n.max(2));
                    let last = mixed.len() - 1;
                    (mixed[0], mixed[last]) = (f32::INFINITY, f32::NEG_INFINITY);
                    backend
                        .check(&mixed, 2, op)
                        .unwrap_or_else(|e| panic!("{rung} {op} mixed ±inf: {e}"));

                    let mut bounded = random_vec::<i32>(&mut rng, op, n.max(2));
                    let (low, high) = (rng.gen_range(0..bounded.len()), rng.gen_range(0..bounded.len()));
                    (bounded[low], bounded[high]) = (i32::MIN, i32::MAX);
                    backend
                        .check(&bounded, 3, op)
                        .unwrap_or_else(|e| panic!("{rung} {op} with bounds: {e}"));
                }
            }
        }
    });
}
