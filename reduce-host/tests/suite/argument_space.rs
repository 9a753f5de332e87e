//! The whole argument space on the emulator: 6,000 calls with random
//! arguments, valid and invalid (every op for every type, empty and odd
//! lengths, misaligned slices, offsets out of order or past the end, row
//! shapes that do not match or overflow, dot products of unequal lengths,
//! ladder block sizes that are not allowed). Each call must return a result
//! or a typed error — never panic — and the error must be the one the
//! arguments call for. Valid reductions are checked against the CPU reference.
//! The seed is printed (`REDUCE_TEST_SEED` replays a run).

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::emulated::Emulator;
use reduce::ladder::{self, Ladder, Rung};
use reduce::{ArgMax, Error, Op, Over};
use std::panic::{catch_unwind, AssertUnwindSafe};

const CASES: usize = 6_000;

/// A length: mostly small (the emulator runs an OS thread per GPU thread),
/// sometimes 0 or just around a block's or a tile's edge.
fn length(rng: &mut StdRng) -> usize {
    match rng.gen_range(0..8) {
        0 => 0,
        1 => rng.gen_range(1..4),
        2 => 64 * rng.gen_range(1..5) + rng.gen_range(0..3),
        _ => rng.gen_range(1..400),
    }
}

/// One random call on `T`; `Err` describes a panic or a wrong answer.
fn one_call<T: TestElement + reduce::ArgInput>(rng: &mut StdRng, emulator: &mut Emulator) -> Result<(), String> {
    let op = Op::ALL[rng.gen_range(0..Op::ALL.len())];
    let n = length(rng);
    let data = random_vec::<T>(rng, op, n + 1);
    // Start at element 0 or 1: the emulator's slices are as the caller gives them.
    let skip = rng.gen_range(0..2usize).min(data.len());
    let input = &data[skip..skip + n];
    let defined = op.is_defined_for(T::TYPE);
    let kind = rng.gen_range(0..6);
    let described = format!("call kind {kind}, {op} of {n} {}", std::any::type_name::<T>());
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        match kind {
            0 => match emulator.reduce(input, op) {
                Ok(got) if defined && (n > 0 || op.defined_on_empty()) => T::check(got, input, op),
                Err(Error::UnsupportedOp { .. }) if !defined => Ok(()),
                Err(Error::Empty { .. }) if defined && n == 0 && !op.defined_on_empty() => Ok(()),
                other => Err(format!("gave {other:?}")),
            },
            1 => {
                let other_len = if rng.gen_range(0..4) == 0 { length(rng) } else { n };
                let other = random_vec::<T>(rng, Op::Sum, other_len);
                match emulator.dot(input, &other) {
                    Ok(_) if other_len == n => Ok(()),
                    Err(Error::LengthMismatch { .. }) if other_len != n => Ok(()),
                    other => Err(format!("dot with {other_len} gave {other:?}")),
                }
            }
            2 => {
                let segments = rng.gen_range(0..6);
                let mut offsets: Vec<u64> = (0..=segments).map(|_| rng.gen_range(0..=n as u64 + 2)).collect();
                if rng.gen_range(0..2) == 0 {
                    offsets.sort_unstable();
                }
                // With no segment, the one offset is still checked: past the
                // end it is refused, as any offset past the end is.
                let valid = offsets.windows(2).all(|w| w[0] <= w[1]) && offsets.iter().all(|&o| o <= n as u64);
                match emulator.reduce_over(input, op, Over::Segments(&offsets[..])) {
                    Ok(out) if valid && defined => {
                        let got = out.values.to_vec();
                        for (s, w) in offsets.windows(2).enumerate() {
                            let segment = &input[w[0] as usize..w[1] as usize];
                            let expected_empty = segment.is_empty();
                            let result = got.get(s).copied().ok_or("short output")?;
                            if expected_empty {
                                if result.to_bits() != T::identity(op).to_bits() {
                                    return Err(format!("empty segment {s} gave {result:?}"));
                                }
                            } else {
                                T::check(result, segment, op).map_err(|e| format!("segment {s}: {e}"))?;
                            }
                        }
                        Ok(())
                    }
                    Err(Error::UnsupportedOp { .. }) if !defined => Ok(()),
                    Err(Error::InvalidSegments(_)) if !valid => Ok(()),
                    other => Err(format!("offsets {offsets:?} gave {other:?}")),
                }
            }
            3 => {
                let (rows, row_len) = match rng.gen_range(0..4) {
                    0 => (usize::MAX, rng.gen_range(0..3)),
                    1 => (rng.gen_range(0..5), rng.gen_range(0..5)),
                    _ => {
                        let row_len = rng.gen_range(1..8);
                        (n / row_len, row_len)
                    }
                };
                let fits = rows.checked_mul(row_len) == Some(n);
                // Rows of length 0 are an empty dimension: no max of them.
                let empty_rows = fits && row_len == 0 && !op.defined_on_empty();
                match emulator.reduce_over(input, op, Over::Rows { rows, len: row_len }) {
                    Ok(out) if fits && defined && !empty_rows => {
                        let got = out.values.to_vec();
                        for (r, result) in got.iter().enumerate() {
                            let row = &input[r * row_len..(r + 1) * row_len];
                            if row.is_empty() {
                                if result.to_bits() != T::identity(op).to_bits() {
                                    return Err(format!("empty row {r} gave {result:?}"));
                                }
                            } else {
                                T::check(*result, row, op).map_err(|e| format!("row {r}: {e}"))?;
                            }
                        }
                        Ok(())
                    }
                    Err(Error::UnsupportedOp { .. }) if !defined => Ok(()),
                    Err(Error::Empty { .. }) if empty_rows && defined => Ok(()),
                    // usize::MAX empty rows fit the input but not the host's memory.
                    Err(Error::InvalidSegments(_)) if !fits || rows == usize::MAX => Ok(()),
                    other => Err(format!("{rows} × {row_len} rows gave {other:?}")),
                }
            }
            4 => {
                let rung = Rung::ALL[rng.gen_range(0..Rung::ALL.len())];
                let threads = [0u32, 16, 32, 48, 64, 128, 2048][rng.gen_range(0..7)];
                let smallest = if rung == Rung::WarpShuffle { 32 } else { 8 };
                let allowed = threads.is_power_of_two() && (smallest..=1024).contains(&threads);
                match Ladder::new(rung, threads) {
                    Ok(ladder) if allowed => match ladder::reduce(emulator, input, op, ladder) {
                        Ok(got) => T::check(got, input, op),
                        Err(Error::UnsupportedStrategy { .. } | Error::Empty { .. }) => Ok(()),
                        other => Err(format!("rung {rung} at {threads} gave {other:?}")),
                    },
                    Err(Error::InvalidPolicy(_)) if !allowed => Ok(()),
                    other => Err(format!("Ladder::new({rung}, {threads}) gave {other:?}")),
                }
            }
            _ => match emulator.reduce(input, ArgMax) {
                Ok((index, value)) => {
                    let expected = input.get(index as usize).ok_or("index out of range")?;
                    if value.to_bits() == expected.to_bits() {
                        Ok(())
                    } else {
                        Err(format!("argmax ({index}, {value:?}) is not the element there"))
                    }
                }
                Err(Error::Empty { .. }) if n == 0 => Ok(()),
                other => Err(format!("argmax gave {other:?}")),
            },
        }
    }));
    match outcome {
        Ok(result) => result.map_err(|e| format!("{described}: {e}")),
        Err(_) => Err(format!("{described}: panicked")),
    }
}

#[test]
fn six_thousand_random_calls_valid_and_invalid_on_the_emulator() {
    let test = "six_thousand_random_calls_valid_and_invalid_on_the_emulator";
    let mut rng = rng(test);
    let mut emulator = Emulator::default();
    let mut failures = Vec::new();
    for case in 0..CASES {
        let result = match case % 4 {
            0 => one_call::<i32>(&mut rng, &mut emulator),
            1 => one_call::<u64>(&mut rng, &mut emulator),
            2 => one_call::<f32>(&mut rng, &mut emulator),
            _ => one_call::<f64>(&mut rng, &mut emulator),
        };
        if let Err(e) = result {
            failures.push(format!("case {case}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {CASES} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
