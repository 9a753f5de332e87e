//! Segmented and row-wise reductions: every op and type against the CPU
//! reference, on segment lengths that select every kind of team (one lane,
//! groups of lanes, warps, a block, several blocks per segment), with empty
//! segments, unaligned starts, gaps and special values; then the errors.

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::{Error, Op};
use std::collections::BTreeSet;

/// Segment lengths of one kind for elements of `element_bytes`, sized for
/// the backend: each kind makes the launch pick a different team (see
/// `segmented_shape` in the host crate: a team of 32 lanes for an average
/// of 1024 to 2047 four-byte elements, two tiles per lane).
fn lengths(rng: &mut StdRng, kind: &str, emulator: bool, element_bytes: usize) -> Vec<usize> {
    let pick = |gpu: usize, emulated: usize| if emulator { emulated } else { gpu };
    let warp_team = 4096 / element_bytes;
    let (count, range) = match kind {
        "tiny" => (pick(3000, 300), 0..=4),
        // Single-thread teams too, but longer than "tiny"'s: some within a
        // few vectors, some not.
        "dozen" => (pick(3000, 300), 0..=24),
        "short" => (pick(1000, 100), 0..=pick(200, 200)),
        // Teams of a warp, enough segments for the balanced kernels to hand
        // them out to warps as they finish (4 takes per warp).
        "warps" => (pick(20_000, 50), warp_team..=2 * warp_team - 1),
        "blocks" => (pick(300, 8), pick(10_000, 2500)..=pick(100_000, 4000)),
        // Teams of several warps (a block on the emulator), enough segments
        // for the balanced kernels to hand them out to blocks (4 takes per block).
        "many blocks" => (pick(2200, 30), pick(8192, 2500)..=pick(12_287, 4000)),
        "few long" => (pick(3, 2), pick(1_000_000, 3000)..=pick(3_000_000, 8000)),
        "uneven" => {
            // Single-thread teams (about 77 bytes on average), but one
            // segment in 16 is 400 to 1600 bytes: a single thread reads
            // those long ones among many short ones (several vector tiles,
            // head and tail, in a batch with short segments).
            let short = 32 / element_bytes;
            let long = 400 / element_bytes..=1600 / element_bytes;
            return (0..pick(3000, 300))
                .map(|_| {
                    if rng.gen_range(0..16) == 0 {
                        rng.gen_range(long.clone())
                    } else {
                        rng.gen_range(0..=short)
                    }
                })
                .collect();
        }
        _ => {
            let choices = [0, 1, 3, 100, 4099, pick(20_000, 2000)];
            return (0..pick(300, 40))
                .map(|_| choices[rng.gen_range(0..choices.len())])
                .collect();
        }
    };
    (0..count).map(|_| rng.gen_range(range.clone())).collect()
}

const KINDS: [&str; 9] = [
    "tiny",
    "dozen",
    "uneven",
    "short",
    "warps",
    "blocks",
    "many blocks",
    "few long",
    "mixed",
];

/// Every op over random segments of every kind, with a gap before the first
/// offset and after the last, at random alignments, special values in some
/// cases. On the emulator, also checks that the kinds selected every team.
fn random_segments<T: TestElement>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let mut failures = Vec::new();
        let mut teams = BTreeSet::new();
        for (case, kind) in KINDS.iter().enumerate() {
            let emulator = backend.is_emulator();
            for op in ops_for::<T>() {
                let lengths = lengths(&mut rng, kind, emulator, std::mem::size_of::<T>());
                let offsets = offsets_of(rng.gen_range(0..5), &lengths);
                let len = *offsets.last().unwrap() as usize + rng.gen_range(0..5);
                let mut values = random_vec::<T>(&mut rng, op, len);
                if case % 2 == 1 && len > 0 {
                    for _ in 0..3 {
                        let at = rng.gen_range(0..len);
                        values[at] = T::special(&mut rng, op);
                    }
                }
                if emulator {
                    let shape = backend
                        .reducer
                        .segmented_launch_shape::<T>(op, lengths.len(), len)
                        .unwrap();
                    teams.insert((shape.team_threads, shape.blocks_per_segment > 1));
                }
                let offset = rng.gen_range(0..8);
                if let Err(e) = backend.check_segmented(&values, offset, &offsets, op) {
                    failures.push(format!(
                        "{}: {op} {kind} ({} segments) offset={offset}: {e}",
                        backend.name(),
                        lengths.len()
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        if backend.is_emulator() {
            let (thread, lanes, warps, blocks, split) = (
                teams.iter().any(|&(t, _)| t == 1),
                teams.iter().any(|&(t, _)| 1 < t && t < 32),
                teams.iter().any(|&(t, _)| t == 32),
                teams.iter().any(|&(t, split)| t == 64 && !split),
                teams.iter().any(|&(_, split)| split),
            );
            assert!(
                thread && lanes && warps && blocks && split,
                "kinds did not select every team: {teams:?}"
            );
        }
    });
}

/// Every op over the rows of matrices of many shapes, from one long row to
/// many one-element rows, with empty matrices and rows of no element.
fn rows_shapes<T: TestElement>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let shapes: &[(usize, usize)] = match backend.is_emulator() {
            true => &[
                (1, 5000),
                (3, 3001),
                (40, 40),
                (1000, 3),
                (500, 10),
                (2003, 1),
                (1001, 2),
                (999, 4),
                (0, 5),
                (5, 0),
                (7, 129),
                // Rows of 8 elements (a thread each) and of 64 (teams of 4
                // lanes), at aligned and unaligned starts.
                (513, 8),
                (70, 64),
            ],
            false => &[
                (1, 1_000_003),
                (3, 333_333),
                (1000, 1000),
                (100_000, 10),
                (1_000_003, 1),
                (300_001, 2),
                (250_001, 4),
                (0, 5),
                (5, 0),
                (64, 40_099),
                (65_536, 64),
                (100_003, 16),
                (20_011, 128),
            ],
        };
        let mut failures = Vec::new();
        for &(rows, row_len) in shapes {
            for (op_number, op) in ops_for::<T>().into_iter().enumerate() {
                let values = random_vec::<T>(&mut rng, op, rows * row_len);
                let offsets: Vec<u64> = (0..=rows).map(|r| (r * row_len) as u64).collect();
                // Every other op at a 16-byte boundary (where short rows are
                // read as whole vectors), the others an odd number of
                // elements past one.
                let offset = if op_number % 2 == 0 {
                    0
                } else {
                    2 * rng.gen_range(0..4) + 1
                };
                let got = backend.rows(&values, offset, (rows, row_len), op);
                // Rows of length 0 are an empty dimension: no max of them
                // (empty segments, below, give the identity).
                let outcome = if row_len == 0 && !op.defined_on_empty() {
                    match got {
                        Ok(Err(reduce::Error::Empty { .. })) => Ok(()),
                        Ok(Ok(results)) => Err(format!("{} results, expected Error::Empty", results.len())),
                        Ok(Err(e)) => Err(format!("{e}, expected Error::Empty")),
                        Err(e) => Err(e),
                    }
                } else {
                    got.and_then(|r| r.map_err(|e| e.to_string()))
                        .and_then(|results| check_segments(&results, &values, &offsets, op))
                };
                if let Err(e) = outcome {
                    failures.push(format!(
                        "{}: {op} {rows} × {row_len} offset={offset}: {e}",
                        backend.name()
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

macro_rules! per_type_tests {
    ($($t:ident: $segments:ident, $rows:ident;)*) => {$(
        #[test]
        fn $segments() {
            random_segments::<$t>(stringify!($segments));
        }
        #[test]
        fn $rows() {
            rows_shapes::<$t>(stringify!($rows));
        }
    )*};
}

per_type_tests! {
    i32: all_ops_i32_random_segments, all_ops_i32_rows_shapes;
    u32: all_ops_u32_random_segments, all_ops_u32_rows_shapes;
    i64: all_ops_i64_random_segments, all_ops_i64_rows_shapes;
    u64: all_ops_u64_random_segments, all_ops_u64_rows_shapes;
    f32: all_ops_f32_random_segments, all_ops_f32_rows_shapes;
    f64: all_ops_f64_random_segments, all_ops_f64_rows_shapes;
}

#[test]
fn nan_ops_f32_segments_known_answers() {
    let nan = f32::NAN;
    let values = [1.0, nan, 3.0, nan, nan, -2.0, f32::INFINITY, f32::NEG_INFINITY];
    let offsets = [0, 3, 5, 5, 8];
    let expected: &[(Op, [f32; 4])] = &[
        (Op::Max, [nan, nan, f32::NEG_INFINITY, f32::INFINITY]),
        (Op::NanMax, [3.0, nan, nan, f32::INFINITY]),
        (Op::NanMin, [1.0, nan, nan, f32::NEG_INFINITY]),
        (Op::NanSum, [4.0, 0.0, 0.0, nan]),
        (Op::Sum, [nan, nan, 0.0, nan]),
    ];
    for_each_backend!("nan_ops_f32_segments_known_answers", |backend| {
        for (op, want) in expected {
            let got = backend.segmented(&values, 1, &offsets, *op).unwrap().unwrap();
            let same = got.iter().zip(want).all(|(g, w)| g == w || (g.is_nan() && w.is_nan()));
            assert!(same, "{}: {op}: got {got:?}, expected {want:?}", backend.name());
        }
    });
}

/// The blocking forms' answer for these offsets over 8 values.
fn offsets_error(test: &str, offsets: &[u64]) -> Vec<String> {
    let values: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    let mut messages = Vec::new();
    for_each_backend!(test, |backend| {
        match backend.segmented(&values, 0, offsets, Op::Sum).unwrap() {
            Err(Error::InvalidSegments(message)) => messages.push(message),
            other => panic!("{}: expected InvalidSegments, got {other:?}", backend.name()),
        }
    });
    messages
}

#[test]
fn sum_f32_decreasing_offsets_are_invalid() {
    for message in offsets_error("sum_f32_decreasing_offsets_are_invalid", &[0, 5, 3, 8]) {
        assert!(message.contains("segment 1 is [5, 3)"), "{message}");
    }
}

#[test]
fn sum_f32_offsets_past_the_end_are_invalid() {
    for message in offsets_error("sum_f32_offsets_past_the_end_are_invalid", &[0, 2, 9]) {
        assert!(
            message.contains("segment 1 is [2, 9)") && message.contains("8 values"),
            "{message}"
        );
    }
}

#[test]
fn sum_f32_empty_offsets_are_invalid() {
    for message in offsets_error("sum_f32_empty_offsets_are_invalid", &[]) {
        assert!(message.contains("offsets are empty"), "{message}");
    }
}

#[test]
fn sum_f32_one_offset_gives_no_segments() {
    for_each_backend!("sum_f32_one_offset_gives_no_segments", |backend| {
        let got = backend.segmented(&[1.0f32, 2.0], 0, &[1], Op::Sum).unwrap().unwrap();
        assert!(got.is_empty(), "{}: {got:?}", backend.name());
    });
}

#[test]
fn sum_i64_rows_shape_mismatch_is_invalid() {
    let values = [1i64; 10];
    for_each_backend!("sum_i64_rows_shape_mismatch_is_invalid", |backend| {
        for shape in [(3, 4), (usize::MAX, 2), (10, 0)] {
            match backend.rows(&values, 0, shape, Op::Sum).unwrap() {
                Err(Error::InvalidSegments(message)) => assert!(message.contains("matrix has"), "{message}"),
                other => panic!("{}: {shape:?}: expected InvalidSegments, got {other:?}", backend.name()),
            }
        }
    });
}

#[test]
fn max_abs_i32_segments_is_unsupported() {
    for_each_backend!("max_abs_i32_segments_is_unsupported", |backend| {
        let got = backend.segmented(&[1i32, -2], 0, &[0, 2], Op::MaxAbs).unwrap();
        assert!(
            matches!(got, Err(Error::UnsupportedOp { .. })),
            "{}: {got:?}",
            backend.name()
        );
    });
}

/// The `_into` form does not wait for the GPU, so it cannot report invalid
/// offsets: it clamps them into the input, and reads nothing outside it.
#[test]
fn sum_f32_into_clamps_invalid_offsets() {
    use cust::memory::DeviceBuffer;
    use cust::stream::{Stream, StreamFlags};
    use reduce::Over;
    let Some(_context) = gpu("sum_f32_into_clamps_invalid_offsets") else {
        return;
    };
    let values = DeviceBuffer::from_slice(&[1.0f32, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]).unwrap();
    // [0, 5), [5, 3) → empty, [3, 8), [8, 1000) → [8, 8), empty.
    let offsets = DeviceBuffer::from_slice(&[0u64, 5, 3, 8, 1000]).unwrap();
    let mut out = DeviceBuffer::from_slice(&[f32::poison(); 4]).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let mut reducer = reduce::Reducer::new().unwrap();
    reducer
        .scope(|s| s.reduce_into(&values, Op::Sum, Over::Segments((&offsets).into()), &mut out, &stream))
        .unwrap();
    assert_eq!(out.as_host_vec().unwrap(), [31.0, 0.0, 248.0, 0.0]);

    let mut short = DeviceBuffer::from_slice(&[0.0f32; 3]).unwrap();
    let wrong_length =
        reducer.scope(|s| s.reduce_into(&values, Op::Sum, Over::Segments((&offsets).into()), &mut short, &stream));
    assert!(
        matches!(
            wrong_length,
            Err(Error::OutputLength {
                found: 3,
                expected: 4,
                ..
            })
        ),
        "{wrong_length:?}"
    );
}
