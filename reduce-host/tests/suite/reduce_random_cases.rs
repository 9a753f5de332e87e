//! Random cases: element type, operator, strategy (production or a ladder
//! rung), length biased to the edges of tiles and grids, starting offset
//! within 16 bytes, and special values sprinkled in.
//!
//! - On the emulator, 2,000 property-test cases per run against the CPU
//!   reference (fresh cases every run; proptest prints the failing case).
//! - On the GPU, 2,000 cases with lengths up to 10^7 against the CPU
//!   reference (`REDUCE_TEST_SEED` replays them).
//! - On the GPU, the emulator launched with the GPU's own launch shape must
//!   give bitwise the GPU's result (for NaN results: NaN; for zero results of
//!   max/min: a zero, whose sign is unspecified).

use crate::common;
use common::*;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reduce::emulated::Emulator;
use reduce::ladder::{Ladder, Rung};
use reduce::{ElementType, Op, Policy};

/// Lengths at the edges of the emulator's default shape (64-thread blocks,
/// 6 blocks: a tile is 1024 four-byte or 512 eight-byte elements, a sweep
/// of the grid six tiles) and of small blocks.
const EDGE_LENGTHS: &[usize] = &[
    0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 511, 512, 513, 1023, 1024, 1025, 3071, 3072, 3073, 6143, 6144,
    6145, 12289,
];

#[derive(Clone, Debug)]
struct Case {
    element: ElementType,
    op: Op,
    /// `None`: the production kernels.
    strategy: Option<Ladder>,
    len: usize,
    offset: usize,
    /// Seeds the values (so shrinking a case keeps its kind of data).
    data_seed: u64,
    /// About one special value per this many elements (0: none).
    special_every: usize,
}

fn element_types() -> impl proptest::strategy::Strategy<Value = ElementType> {
    prop::sample::select(vec![
        ElementType::I32,
        ElementType::U32,
        ElementType::I64,
        ElementType::U64,
        ElementType::F32,
        ElementType::F64,
    ])
}

/// Mostly the production kernel; sometimes a ladder rung (for the types it has).
fn strategies(element: ElementType) -> BoxedStrategy<Option<Ladder>> {
    let production = Just(None).boxed();
    if !matches!(element, ElementType::I32 | ElementType::F32) {
        return production;
    }
    let ladder = (
        prop::sample::select(Rung::ALL.to_vec()),
        prop::sample::select(vec![32u32, 64, 128]),
    )
        .prop_map(|(rung, threads)| Some(Ladder::new(rung, threads).expect("valid ladder block size")));
    prop_oneof![4 => production, 1 => ladder].boxed()
}

fn cases() -> impl proptest::strategy::Strategy<Value = Case> {
    element_types().prop_flat_map(|element| {
        (
            prop::sample::select(Op::ALL.to_vec()),
            strategies(element),
            prop_oneof![3 => 0usize..13_000, 2 => prop::sample::select(EDGE_LENGTHS.to_vec())],
            0usize..8,
            any::<u64>(),
            prop::sample::select(vec![0usize, 1, 7, 100, 5000]),
        )
            .prop_map(move |(op, strategy, len, offset, data_seed, special_every)| Case {
                element,
                // Ladder rungs implement the four basic ops; integers have no MaxAbs.
                op: match (op, strategy) {
                    (op, _) if !op.is_defined_for(element) => Op::Max,
                    (op, Some(_)) if !Op::LADDER.contains(&op) => Op::Sum,
                    (op, _) => op,
                },
                strategy,
                len,
                offset,
                data_seed,
                special_every,
            })
    })
}

/// The case's input: random values for its op, special values sprinkled in.
fn case_data<T: TestElement>(case: &Case) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(case.data_seed);
    let mut data = random_vec::<T>(&mut rng, case.op, case.len);
    if case.special_every > 0 {
        for value in data.iter_mut() {
            if rng.gen_range(0..case.special_every) == 0 {
                *value = T::special(&mut rng, case.op);
            }
        }
    }
    data
}

/// `f::<T>()` for the case's element type.
macro_rules! with_element_type {
    ($element:expr, $f:ident($($arg:expr),*)) => {
        match $element {
            ElementType::I32 => $f::<i32>($($arg),*),
            ElementType::U32 => $f::<u32>($($arg),*),
            ElementType::I64 => $f::<i64>($($arg),*),
            ElementType::U64 => $f::<u64>($($arg),*),
            ElementType::F32 => $f::<f32>($($arg),*),
            ElementType::F64 => $f::<f64>($($arg),*),
            other => panic!("no test data for {other:?}"),
        }
    };
}

fn check_case_on_emulator<T: TestElement>(case: &Case) -> Result<(), String> {
    if case.len == 0 && !case.op.defined_on_empty() {
        return Ok(()); // an error, tested in errors.rs
    }
    let mut emulator = Tester {
        reducer: Emulator::default(),
        ladder: case.strategy,
    };
    emulator.check(&case_data::<T>(case), case.offset, case.op)
}

#[test]
fn all_ops_all_types_2000_random_cases_on_the_emulator() {
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    runner
        .run(&cases(), |case| {
            with_element_type!(case.element, check_case_on_emulator(&case)).map_err(TestCaseError::fail)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Same result, allowing for the sign of a zero returned by max/min (which
/// the docs leave unspecified) and a NaN's payload: the production kernels
/// store the canonical NaN (`canonical_nan.rs`), but the ladder's teaching
/// rungs, which these cases run too, store what their arithmetic gives.
fn same_result<T: TestElement>(a: T, b: T, op: Op) -> bool {
    let is_nan = |x: T| format!("{x:?}") == "NaN";
    let is_zero = |x: T| matches!(format!("{x:?}").as_str(), "0.0" | "-0.0");
    a.to_bits() == b.to_bits()
        || (is_nan(a) && is_nan(b))
        || (matches!(op, Op::Max | Op::Min) && is_zero(a) && is_zero(b))
}

/// Lengths at the edges of an H200's launch shapes (512-thread blocks: a tile
/// of 8192 four-byte or 4096 eight-byte elements; 528 blocks: a sweep of the
/// grid of 4,325,376 or 2,162,688 elements).
const GPU_EDGE_LENGTHS: &[usize] = &[
    4095, 4096, 4097, 8191, 8192, 8193, 2_162_687, 2_162_688, 2_162_689, 4_325_375, 4_325_376, 4_325_377,
];

/// A length for a GPU case: a quarter at the edges, the rest log-uniform up to 10^7.
fn gpu_length(rng: &mut StdRng) -> usize {
    match rng.gen_range(0..8) {
        0 => EDGE_LENGTHS[rng.gen_range(0..EDGE_LENGTHS.len())],
        1 => GPU_EDGE_LENGTHS[rng.gen_range(0..GPU_EDGE_LENGTHS.len())],
        _ => 10f64.powf(rng.gen_range(0.0..7.0)) as usize,
    }
}

/// `count` cases drawn by the property-test generator from `rng`'s next seed
/// (so `REDUCE_TEST_SEED` replays them), with lengths from `length`.
fn seeded_cases(rng: &mut StdRng, count: usize, mut length: impl FnMut(&mut StdRng) -> usize) -> Vec<Case> {
    let seed: [u8; 32] = rng.gen();
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    (0..count)
        .map(|_| {
            let mut case = cases().new_tree(&mut runner).expect("a case").current();
            case.len = length(rng);
            case
        })
        .collect()
}

fn check_case_on_gpu<T: TestElement>(case: &Case, gpu: &mut Tester<reduce::Cuda>) -> Result<(), String> {
    if case.len == 0 && !case.op.defined_on_empty() {
        return Ok(());
    }
    gpu.set_ladder(case.strategy);
    gpu.check(&case_data::<T>(case), case.offset, case.op)
}

#[test]
fn all_ops_all_types_2000_random_cases_on_the_gpu() {
    let test = "all_ops_all_types_2000_random_cases_on_the_gpu";
    if gpu(test).is_none() {
        return;
    }
    let mut rng = rng(test);
    let Some(mut gpu) = Tester::<reduce::Cuda>::new(test) else {
        return;
    };
    let cases = seeded_cases(&mut rng, 2000, gpu_length);
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = with_element_type!(case.element, check_case_on_gpu(case, &mut gpu)) {
            failures.push(format!("{case:?}: {e}"));
        }
    }
    let elements: usize = cases.iter().map(|c| c.len).sum();
    println!(
        "{test}: {} cases, {elements} elements in all, {} failed",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn compare_case_with_gpu<T: TestElement>(case: &Case, gpu: &mut Tester<reduce::Cuda>) -> Result<(), String> {
    if case.len == 0 && !case.op.defined_on_empty() {
        return Ok(());
    }
    let data = case_data::<T>(case);
    gpu.set_ladder(case.strategy);
    let on_gpu = gpu.reduce(&data, case.offset, case.op).map_err(|e| e.to_string())?;
    let shape = gpu
        .reducer
        .launch_shape::<T>(case.op, case.len)
        .map_err(|e| e.to_string())?;
    let policy = Policy::new(shape.threads_per_block).map_err(|e| e.to_string())?;
    let mut emulator = Emulator::with_shape(policy, shape.blocks).map_err(|e| e.to_string())?;
    let emulated = reduce_with(
        &mut emulator,
        case.strategy,
        Staged::new(&data, case.offset, case.op).slice(),
        case.op,
    )
    .map_err(|e| e.to_string())?;
    if same_result(on_gpu, emulated, case.op) {
        Ok(())
    } else {
        Err(format!("GPU {on_gpu:?}, emulator {emulated:?} ({shape:?})"))
    }
}

#[test]
fn all_ops_all_types_random_cases_emulator_matches_gpu_bitwise() {
    let test = "all_ops_all_types_random_cases_emulator_matches_gpu_bitwise";
    if gpu(test).is_none() {
        return;
    }
    let mut rng = rng(test);
    let Some(mut gpu) = Tester::<reduce::Cuda>::new(test) else {
        return;
    };
    // Three quarters short (one or two blocks at the GPU's shape), a quarter
    // long enough for a multi-block grid: the emulator runs 512 OS threads
    // per block.
    let cases = seeded_cases(&mut rng, 200, |rng| {
        if rng.gen_range(0..4) == 0 {
            rng.gen_range(0..200_000)
        } else {
            rng.gen_range(0..13_000)
        }
    });
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = with_element_type!(case.element, compare_case_with_gpu(case, &mut gpu)) {
            failures.push(format!("{case:?}: {e}"));
        }
    }
    println!("{test}: {} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
