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
        state >> 11 // 53 random bits
    };
    // Three inputs of N f32 each, chosen so that every check is exact:
    // - reals in [-1, 1): max and min are exact whatever the order;
    // - integers in [-100, 100]: every partial sum stays far below 2^24, so the
    //   f32 sum has no rounding in any order and must equal the f64 sum;
    // - ±1 with a few ±2 and ±0.5: the product is a power of two, exact in f32.
    //   (Products of arbitrary reals drift: 10^8 roundings move an f32 product
    //   by several percent, and the worst-case bound n·ε exceeds 1.)
    let reals: Vec<f32> = (0..N)
        .map(|_| (next() as f64 / (1u64 << 52) as f64 - 1.0) as f32)
        .collect();
    let integers: Vec<f32> = (0..N).map(|_| (next() % 201) as f32 - 100.0).collect();
    let powers_of_two: Vec<f32> = (0..N)
        .map(|_| {
            let r = next();
            let magnitude = match r % 50_000_000 {
                0 => 2.0,
                1 => 0.5,
                _ => 1.0,
            };
            if r & (1 << 40) == 0 {
                magnitude
            } else {
                -magnitude
            }
        })
        .collect();
    let reals_buffer = DeviceBuffer::from_slice(&reals)?;
    let integers_buffer = DeviceBuffer::from_slice(&integers)?;
    let powers_buffer = DeviceBuffer::from_slice(&powers_of_two)?;

    let mut reducer = Reducer::new()?;
    let mut all_ok = true;
    for op in Op::ALL {
        let (input, host, kind) = match op {
            Op::Sum => (&integers_buffer, &integers, "integers"),
            Op::Product => (&powers_buffer, &powers_of_two, "±2^k"),
            _ => (&reals_buffer, &reals, "reals"),
        };
        let gpu: f32 = reducer.reduce(input, op)?;
        let reference = cpu_reference(host, op);
        let ok = gpu as f64 == reference;
        all_ok &= ok;
        println!(
            "{op:>7} of {N} {kind:<8}: gpu {gpu:>+14.7e}   cpu (f64) {reference:>+14.7e}   {}",
            if ok { "ok (exact)" } else { "MISMATCH" }
        );
    }

    // Bandwidth of the sum: device events around each call, median of 50 after a warm-up.
    let stream = cust::stream::Stream::new(cust::stream::StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&0.0f32)?;
    let mut times = Vec::new();
    for i in 0..53 {
        start.record(&stream)?;
        reducer.reduce_into(&reals_buffer, Op::Sum, &mut out, &stream)?;
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

/// The reference, computed in f64 on the CPU.
fn cpu_reference(data: &[f32], op: Op) -> f64 {
    let wide = data.iter().map(|&x| x as f64);
    match op {
        Op::Sum => wide.sum(),
        Op::Product => wide.product(),
        Op::Max => wide.fold(f64::NEG_INFINITY, f64::max),
        Op::Min => wide.fold(f64::INFINITY, f64::min),
        _ => f64::NAN,
    }
}
