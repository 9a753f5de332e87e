//! The bits of every exact reduction over a fixed battery of inputs and
//! places, on this GPU: one line per (type, input, place, reduction) with
//! the count of results, an FNV-1a hash of all their bits and the first
//! and last result's bits, each result first checked against its CPU
//! `fold`. The inputs come from a fixed hash of the index, not from a
//! random generator, so the lines are the same on every machine: run it on
//! two GPU models and `diff` the outputs (issue #48's cross-GPU check; an
//! H200's is in `bench-results/2026-11-30-exact-bits/`).
//!
//! `cargo run --release --example exact_bits > bits.txt` (a CUDA GPU);
//! exits 1 if any result differs from its fold.

use cust::memory::DeviceBuffer;
use reduce::axes::Strided;
use reduce::{
    ExactDot, ExactLogSumExp, ExactMean, ExactNanSum, ExactSum, ExactSumOfSquares, ExactVar, FloatElement, Over,
    Reducer,
};
use std::process::ExitCode;

/// Elements of each input: a 64 × 128 × 128 tensor for the axes.
const N: usize = 1 << 20;
const SHAPE: [usize; 3] = [64, 128, 128];

fn main() -> ExitCode {
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(mismatches) => {
            eprintln!("exact_bits: {mismatches} results differ from their folds");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("exact_bits: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<usize, Box<dyn std::error::Error>> {
    let _context = cust::quick_init().map_err(|e| format!("exact_bits needs a CUDA GPU: {e}"))?;
    let device = cust::device::Device::get_device(0)?;
    println!("# {} exact_bits, {N} elements an input", device.name()?);
    let mut reducer = Reducer::new()?;
    let mut mismatches = battery_f32(&mut reducer, "f32")?;
    mismatches += battery_f64(&mut reducer, "f64")?;
    Ok(mismatches)
}

/// A float built from a hash: what the inputs need of `f32` and `f64`.
trait FromHash: FloatElement + cust::memory::DeviceCopy {
    /// The value of kind `kind` at index `i`.
    fn input(kind: &str, i: usize) -> Self;
    /// The bits, widened.
    fn bits(self) -> u64;
}

/// SplitMix64's finaliser of `i` and `seed`: the same bits everywhere.
fn hash(i: usize, seed: u64) -> u64 {
    let mut z = (i as u64 ^ seed.rotate_left(32))
        .wrapping_add(seed)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The inputs, in `f64`, before each type rounds them: `uniform` in
/// (-1, 1); `normal`; `wide` (exponents from -140 to 120: past `f32`'s
/// subnormals and towards its largest); `cancel` (2^60 and -2^60 eight
/// apart, ones and small values between: huge cancellation in every part
/// of 16 or more); `specials` (NaN, ±inf, -0.0, subnormals among uniform
/// values).
fn value(kind: &str, i: usize) -> f64 {
    let h = hash(i, 0x5eed);
    let unit = (h >> 11) as f64 / (1u64 << 53) as f64;
    let signed = if h & 1 == 1 { -unit } else { unit };
    match kind {
        "uniform" => signed,
        "normal" => {
            let u = ((h >> 32) as f64 + 0.5) / 4_294_967_296.0;
            let v = (h & 0xffff_ffff) as f64 / 4_294_967_296.0;
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
        "wide" => signed * 2f64.powi((hash(i, 7) % 261) as i32 - 140),
        "cancel" => match i % 16 {
            0 => 2f64.powi(60),
            8 => -(2f64.powi(60)),
            4 => 1.0,
            _ => signed * 1e-3,
        },
        "specials" => match hash(i, 5) % 64 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            4 => 1e-310,
            5 => 1e-40,
            _ => signed,
        },
        other => unreachable!("no input {other}"),
    }
}

impl FromHash for f32 {
    fn input(kind: &str, i: usize) -> f32 {
        // 24 random bits for `uniform`, as the benches' values.
        match kind {
            "uniform" => {
                let h = hash(i, 0x5eed);
                let magnitude = (h >> 40) as f32 / (1u32 << 24) as f32;
                if h & 1 == 1 {
                    -magnitude
                } else {
                    magnitude
                }
            }
            _ => value(kind, i) as f32,
        }
    }

    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl FromHash for f64 {
    fn input(kind: &str, i: usize) -> f64 {
        value(kind, i)
    }

    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// A place and, per result, the indices of the elements it reduces.
struct Place {
    name: String,
    parts: Vec<Vec<usize>>,
}

/// The whole input, rows, segments (random lengths, some empty, a head
/// and a tail in none) and the axes of the 64 × 128 × 128 tensor.
fn places() -> Vec<(Place, PlaceKind)> {
    let whole = Place {
        name: "whole".to_string(),
        parts: vec![(0..N).collect()],
    };
    let mut places = vec![(whole, PlaceKind::Whole)];
    for rows in [1, 16, 4096, N / 4] {
        let len = N / rows;
        let parts = (0..rows).map(|r| (r * len..(r + 1) * len).collect()).collect();
        let name = format!("rows_{rows}x{len}");
        places.push((Place { name, parts }, PlaceKind::Rows { rows, len }));
    }
    let mut offsets = vec![3u64];
    while *offsets.last().unwrap() < N as u64 - 5 {
        let length = match hash(offsets.len(), 11) % 4 {
            0 => 0,
            1 => hash(offsets.len(), 13) % 40,
            _ => hash(offsets.len(), 17) % 4000,
        };
        offsets.push((offsets.last().unwrap() + length).min(N as u64 - 5));
    }
    let parts = offsets
        .windows(2)
        .map(|w| (w[0] as usize..w[1] as usize).collect())
        .collect();
    let name = format!("segments_{}", offsets.len() - 1);
    places.push((Place { name, parts }, PlaceKind::Segments(offsets)));
    for axes in [vec![2isize], vec![1], vec![0], vec![0, 2]] {
        let kept: Vec<usize> = (0..3).filter(|a| !axes.contains(&(*a as isize))).collect();
        let kept_positions: usize = kept.iter().map(|&a| SHAPE[a]).product();
        let mut parts = vec![Vec::new(); kept_positions];
        for i in 0..N {
            let at = [i / (SHAPE[1] * SHAPE[2]), i / SHAPE[2] % SHAPE[1], i % SHAPE[2]];
            // The result's position: row-major over the kept axes.
            parts[kept.iter().fold(0, |p, &a| p * SHAPE[a] + at[a])].push(i);
        }
        let name = format!("axes_{axes:?}_of_64x128x128").replace(' ', "");
        places.push((Place { name, parts }, PlaceKind::Axes(axes)));
    }
    places
}

enum PlaceKind {
    Whole,
    Rows { rows: usize, len: usize },
    Segments(Vec<u64>),
    Axes(Vec<isize>),
}

/// `$name`: every exact reduction of every input over every place, in
/// `$t`, checked against the folds and printed: the number of results
/// that differ. (A macro: the reductions' result types are `$t`'s.)
macro_rules! battery {
    // `$d` is `$`, for the macros inside.
    ($d:tt, $name:ident, $t:ty) => {
        fn $name(reducer: &mut Reducer, name: &str) -> Result<usize, Box<dyn std::error::Error>> {
            type T = $t;
            let mut mismatches = 0;
            let places = places();
            let layout = Strided::new(&SHAPE, &[SHAPE[1] * SHAPE[2], SHAPE[2], 1])?;
            for kind in ["uniform", "normal", "wide", "cancel", "specials"] {
                let host: Vec<T> = (0..N).map(|i| T::input(kind, i)).collect();
                let input = DeviceBuffer::from_slice(&host)?;
                let reversed: Vec<T> = host.iter().rev().copied().collect();
                let other = DeviceBuffer::from_slice(&reversed)?;
                let mut report = |place: &str, what: &str, got: &[T], want: &[T]| {
                    let bad = got.iter().zip(want).filter(|(g, w)| g.bits() != w.bits()).count()
                        + got.len().abs_diff(want.len());
                    if bad > 0 {
                        println!("MISMATCH {name} {kind} {place} {what}: {bad} of {} results differ from the fold", want.len());
                    }
                    mismatches += bad;
                    let fnv = got.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
                        x.bits().to_le_bytes().iter().fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
                    });
                    let (first, last) = (got.first().map(|x| x.bits()), got.last().map(|x| x.bits()));
                    println!(
                        "{name} {kind} {place} {what} results={} fnv={fnv:016x} first={:x} last={:x}",
                        got.len(),
                        first.unwrap_or(0),
                        last.unwrap_or(0)
                    );
                };
                let dot = reducer.reduce_pair(&input, &other, ExactDot)?;
                report("whole", "ExactDot", &[dot], &[ExactDot::fold(&host, &reversed)?]);
                let var = ExactVar::new(1.0)?;
                for (place, kind_of_place) in &places {
                    let offsets = match kind_of_place {
                        PlaceKind::Segments(offsets) => Some(DeviceBuffer::from_slice(offsets)?),
                        _ => None,
                    };
                    let over = || match kind_of_place {
                        PlaceKind::Whole => Over::Whole,
                        PlaceKind::Rows { rows, len } => Over::Rows { rows: *rows, len: *len },
                        PlaceKind::Segments(_) => Over::Segments(offsets.as_deref().expect("the offsets")),
                        PlaceKind::Axes(axes) => Over::Axes(&layout, axes),
                    };
                    let part_values = |part: &Vec<usize>| part.iter().map(|&i| host[i]).collect::<Vec<T>>();
                    macro_rules! over {
                        ($d($d label:literal: $d what:expr => $d fold:expr),*) => {$d(
                            let got = reducer.reduce_over(&input, $d what, over())?.values.as_host_vec()?;
                            let want: Vec<T> = place.parts.iter().map(|part| $d fold(&part_values(part)[..])).collect();
                            report(&place.name, $d label, &got, &want);
                        )*};
                    }
                    over!(
                        "ExactSum": ExactSum => ExactSum::fold,
                        "ExactNanSum": ExactNanSum => ExactNanSum::fold,
                        "ExactMean": ExactMean => ExactMean::fold,
                        "ExactSumOfSquares": ExactSumOfSquares => ExactSumOfSquares::fold,
                        "ExactVar(1)": var => |x: &[T]| var.fold(x),
                        "ExactLogSumExp": ExactLogSumExp => ExactLogSumExp::fold
                    );
                }
            }
            Ok(mismatches)
        }
    };
}
battery!($, battery_f32, f32);
battery!($, battery_f64, f64);
