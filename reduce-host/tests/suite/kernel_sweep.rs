//! Every kernel of the PTX module (50 reductions and their segmented forms
//! in each of the 3 schedules, 6 dot products, 7 ladder rungs × 4 ops × 2
//! types at two block sizes, seed 004's 4 dot kernels) on sizes that reach
//! head and tail peeling, partial tiles and the last-block combine, each
//! checked against the CPU. Small enough to run under
//! `compute-sanitizer` (`scripts/sanitize.sh` runs it with memcheck,
//! racecheck, synccheck and initcheck); the emulator runs the same kernels in
//! the other test files.

use crate::common;
use common::*;
use rand::Rng;
use reduce::ladder::{DotKernel, Ladder, Rung};
use reduce::{ElementType, Op};

/// One element up to a multi-block grid at an H200's shape (9 blocks of 512
/// threads for 4-byte types), with odd lengths for the tails.
const SIZES: &[usize] = &[1, 5, 33, 4099, 70_001];

/// Segment counts and length ranges for the segmented kernels. The last two
/// are enough segments for the balanced schedules at an H200's shape (4
/// takes per warp or block): warps take the first (4-byte types), blocks
/// take both (8-byte types) or the second (4-byte types).
const SEGMENT_LENGTHS: &[(usize, std::ops::RangeInclusive<usize>)] = &[
    (1000, 0..=4),
    (100, 100..=300),
    (30, 2000..=6000),
    (140, 9000..=10_000),
    (2, 20_000..=30_000),
    (17_000, 1024..=2047),
    (9000, 2048..=4095),
];

fn sweep<T: DotElement>(test: &str) {
    // The ladder's kernels (rungs and seed 004's dots) exist for i32 and f32.
    let ladder = matches!(T::TYPE, ElementType::I32 | ElementType::F32);
    let mut rng = rng(test);
    let Some(mut gpu) = Tester::<reduce::Cuda>::new(test) else {
        return;
    };
    let mut strategies = vec![None];
    if ladder {
        for rung in Rung::ALL {
            let smallest = if rung == Rung::WarpShuffle { 32 } else { 8 };
            strategies.extend([smallest, 256].map(|threads| Some(Ladder::new(rung, threads).unwrap())));
        }
    }
    let mut failures = Vec::new();
    let mut checks = 0;
    for strategy in strategies {
        gpu.set_ladder(strategy);
        let ops = match strategy {
            None => ops_for::<T>(),
            Some(_) => Op::LADDER.to_vec(),
        };
        for op in ops {
            for &n in SIZES {
                let offset = rng.gen_range(0..4);
                if let Err(e) = gpu.check(&random_vec::<T>(&mut rng, op, n), offset, op) {
                    failures.push(format!("{strategy:?} {op} n={n} offset={offset}: {e}"));
                }
                checks += 1;
            }
        }
    }
    gpu.set_ladder(None);
    for &n in SIZES {
        let a: Vec<T> = (0..n).map(|_| T::random_for_dot(&mut rng)).collect();
        let b: Vec<T> = (0..n).map(|_| T::random_for_dot(&mut rng)).collect();
        let expected = T::exact_dot(&a, &b);
        let mut dots = vec![("dot", gpu.dot((&a, 1), (&b, 3)))];
        if ladder {
            for kernel in [DotKernel::AtomicPerElement, DotKernel::BlockTree] {
                dots.push(("seed dot", gpu.dot_with(&a, &b, kernel).map_err(|e| e.to_string())));
            }
        }
        for (name, result) in dots {
            match result {
                Ok(got) if got.to_bits() == expected.to_bits() => {}
                other => failures.push(format!("{name} n={n}: got {other:?}, expected {expected:?}")),
            }
            checks += 1;
        }
    }
    // The segmented kernels, on segment lengths that give each kind of team
    // at an H200's shape (512-thread blocks): a lane, a few lanes, several
    // warps, a block, and several blocks per segment.
    for (count, lengths) in SEGMENT_LENGTHS {
        for op in ops_for::<T>() {
            let lengths: Vec<usize> = (0..*count).map(|_| rng.gen_range(lengths.clone())).collect();
            let offsets = offsets_of(rng.gen_range(0..3), &lengths);
            let values = random_vec::<T>(&mut rng, op, offsets[offsets.len() - 1] as usize + 2);
            let offset = rng.gen_range(0..4);
            if let Err(e) = gpu.check_segmented(&values, offset, &offsets, op) {
                failures.push(format!("segmented {op} {count} segments of {lengths:?}: {e}"));
            }
            checks += 1;
        }
    }
    println!("{test}: {checks} checks, {} failed", failures.len());
    assert!(failures.is_empty(), "{test}:\n{}", failures.join("\n"));
}

macro_rules! sweep_tests {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() {
            sweep::<$t>(stringify!($name));
        }
    )*};
}

sweep_tests! {
    all_kernels_i32_sweep: i32;
    all_kernels_f32_sweep: f32;
    all_kernels_u32_sweep: u32;
    all_kernels_i64_sweep: i64;
    all_kernels_u64_sweep: u64;
    all_kernels_f64_sweep: f64;
}
