//! 100M random f32 on the GPU: sum, max, min and product, each checked
//! against the CPU, and the bandwidth of the sum.
//!
//! Run with `bash scripts/quickstart.sh` (or `cargo run --release --example quickstart`).

use cust::event::{Event, EventFlags};
use cust::memory::{DeviceBox, DeviceBuffer};
use reduce::{Op, Reducer};
use std::process::ExitCode;

const N: usize = 100_000_000;

fn main() -> ExitCode {
    let _context = match cust::quick_init() {
        Ok(context) => context,
        Err(e) => {
            eprintln!("quickstart: no CUDA GPU found ({e}).");
            eprintln!("The library and its tests are built; running the kernels needs an NVIDIA GPU (compute capability 7.0+).");
            return ExitCode::FAILURE;
        }
    };
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("quickstart: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let device = cust::device::Device::get_device(0)?;
    println!("device: {}", device.name()?);

    // xorshift: fast, and fresh every run (seeded from the clock).
    let mut state = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos() as u64
        | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 // [0, 1)
    };
    let data: Vec<f32> = (0..N).map(|_| next() * 2.0 - 1.0).collect();
    // Products of 100M arbitrary values under/overflow; use values near 1 for it.
    let near_one: Vec<f32> = (0..N).map(|_| 1.0 + (next() - 0.5) * 1e-3).collect();
    let buffer = DeviceBuffer::from_slice(&data)?;
    let near_one_buffer = DeviceBuffer::from_slice(&near_one)?;

    let mut reducer = Reducer::new()?;
    let mut all_ok = true;
    for op in Op::ALL {
        let (input, host) = if op == Op::Product {
            (&near_one_buffer, &near_one)
        } else {
            (&buffer, &data)
        };
        let gpu: f32 = reducer.reduce(input, op)?;
        let (reference, tolerance) = cpu_reference(host, op);
        let ok = (gpu as f64 - reference).abs() <= tolerance;
        all_ok &= ok;
        println!(
            "{op:>7}: gpu {gpu:>+16.6e}   cpu (f64) {reference:>+16.6e}   {}",
            if ok { "ok" } else { "MISMATCH" }
        );
    }

    // Bandwidth of the sum: device events around each call, median of 50 after a warm-up.
    let stream = cust::stream::Stream::new(cust::stream::StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&0.0f32)?;
    let mut times = Vec::new();
    for i in 0..53 {
        start.record(&stream)?;
        reducer.reduce_into(&buffer, Op::Sum, &mut out, &stream)?;
        stop.record(&stream)?;
        stop.synchronize()?;
        if i >= 3 {
            times.push(stop.elapsed_time_f32(&start)?);
        }
    }
    times.sort_by(f32::total_cmp);
    let median_ms = times[times.len() / 2] as f64;
    println!(
        "sum of {N} f32: {:.1} us, {:.0} GB/s",
        median_ms * 1e3,
        (N * 4) as f64 / (median_ms * 1e-3) / 1e9
    );
    Ok(all_ok)
}

/// The exact-ish reference in f64 and the error bound for an f32 tree reduction.
fn cpu_reference(data: &[f32], op: Op) -> (f64, f64) {
    let n = data.len() as f64;
    match op {
        Op::Sum => {
            let abs: f64 = data.iter().map(|&x| (x as f64).abs()).sum();
            (
                data.iter().map(|&x| x as f64).sum(),
                (n + 1.0) * f32::EPSILON as f64 * abs,
            )
        }
        Op::Product => {
            let p: f64 = data.iter().map(|&x| x as f64).product();
            (p, (n + 1.0) * f32::EPSILON as f64 * p.abs())
        }
        Op::Max => (data.iter().fold(f64::NEG_INFINITY, |a, &x| a.max(x as f64)), 0.0),
        Op::Min => (data.iter().fold(f64::INFINITY, |a, &x| a.min(x as f64)), 0.0),
        _ => (f64::NAN, 0.0),
    }
}
