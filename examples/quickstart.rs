//! 100M random f32 on the GPU: sum, max, min and product, each checked
//! against the CPU, and the bandwidth of the sum. Without a GPU, the same
//! kernels run under the CPU emulator (`reduce::emulated`) on 1M elements.
//!
//! Run with `bash scripts/quickstart.sh` (or `cargo run --release --example quickstart`).

use cust::event::{Event, EventFlags};
use cust::memory::{DeviceBox, DeviceBuffer};
use reduce::emulated::Emulator;
use reduce::{Op, Over, Reducer};
use std::process::ExitCode;

const N: usize = 100_000_000;
/// The emulator runs every GPU thread as an OS thread: a smaller input.
const N_EMULATED: usize = 1_000_000;

fn main() -> ExitCode {
    let outcome = match cust::quick_init() {
        Ok(_context) => on_gpu(),
        Err(e) => {
            println!("quickstart: no CUDA GPU found ({e}).");
            println!(
                "Running the same kernels under the CPU emulator (reduce::emulated) on {N_EMULATED} elements instead."
            );
            on_emulator()
        }
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("quickstart: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The three inputs, chosen so that every check is exact:
/// - reals in [-1, 1): max and min are exact whatever the order;
/// - integers in [-100, 100]: every partial sum stays far below 2^24, so the
///   f32 sum has no rounding in any order and must equal the f64 sum;
/// - ±1 with a few ±2 and ±0.5: the product is a power of two, exact in f32.
///   (Products of arbitrary reals drift: 10^8 roundings move an f32 product
///   by several percent, and the worst-case bound n·ε exceeds 1.)
struct Inputs {
    reals: Vec<f32>,
    integers: Vec<f32>,
    powers_of_two: Vec<f32>,
}

impl Inputs {
    fn random(n: usize) -> Self {
        // xorshift: fast, and fresh every run (seeded from the clock).
        let mut state = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state >> 11 // 53 random bits
        };
        let reals = (0..n)
            .map(|_| (next() as f64 / (1u64 << 52) as f64 - 1.0) as f32)
            .collect();
        let integers = (0..n).map(|_| (next() % 201) as f32 - 100.0).collect();
        let powers_of_two = (0..n)
            .map(|_| {
                let r = next();
                let magnitude = match r % (n as u64 / 2).max(2) {
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
        Inputs {
            reals,
            integers,
            powers_of_two,
        }
    }

    /// The input each op is checked on, and its name.
    fn for_op(&self, op: Op) -> (&[f32], &'static str) {
        match op {
            Op::Sum => (&self.integers, "integers"),
            Op::Product => (&self.powers_of_two, "±2^k"),
            _ => (&self.reals, "reals"),
        }
    }
}

/// Runs the four basic ops through `reduce` (given the op and its input) and prints
/// each result next to the CPU's; true if all are exact.
fn check_all(
    inputs: &Inputs,
    backend: &str,
    mut reduce: impl FnMut(Op, &[f32]) -> Result<f32, reduce::Error>,
) -> Result<bool, reduce::Error> {
    let mut all_ok = true;
    for op in [Op::Sum, Op::Max, Op::Min, Op::Product] {
        let (host, kind) = inputs.for_op(op);
        let got = reduce(op, host)?;
        let reference = cpu_reference(host, op);
        let ok = got as f64 == reference;
        all_ok &= ok;
        println!(
            "{op:>7} of {} {kind:<8}: {backend} {got:>+14.7e}   cpu (f64) {reference:>+14.7e}   {}",
            host.len(),
            if ok { "ok (exact)" } else { "MISMATCH" }
        );
    }
    Ok(all_ok)
}

fn on_emulator() -> Result<bool, Box<dyn std::error::Error>> {
    let inputs = Inputs::random(N_EMULATED);
    let mut emulator = Emulator::default();
    let shape = emulator.launch_shape::<f32>(Op::Sum, N_EMULATED)?;
    println!(
        "emulated launch: {} blocks of {} threads, blocks in a shuffled order",
        shape.blocks, shape.threads_per_block
    );
    Ok(check_all(&inputs, "emulator", |op, data| emulator.reduce(data, op))?)
}

fn on_gpu() -> Result<bool, Box<dyn std::error::Error>> {
    let device = cust::device::Device::get_device(0)?;
    println!("device: {}", device.name()?);
    let inputs = Inputs::random(N);
    // Each host input with its device copy (found again by the host address).
    let mut uploads = Vec::new();
    for host in [&inputs.reals, &inputs.integers, &inputs.powers_of_two] {
        uploads.push((host.as_ptr(), DeviceBuffer::from_slice(host)?));
    }
    let reals_buffer = &uploads[0].1;

    let mut reducer = Reducer::new()?;
    let all_ok = check_all(&inputs, "gpu", |op, data| {
        let (_, buffer) = uploads
            .iter()
            .find(|(host, _)| *host == data.as_ptr())
            .ok_or(reduce::Error::InvalidPolicy("input not uploaded".to_string()))?;
        reducer.reduce(buffer, op)
    })?;

    // Bandwidth of the sum: device events around each call, median of 50 after a warm-up.
    let stream = cust::stream::Stream::new(cust::stream::StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&0.0f32)?;
    let mut times = Vec::new();
    for i in 0..53 {
        // A scope waits for its stream at the end, after `stop` is recorded.
        reducer.scope(|scope| {
            start.record(&stream)?;
            scope.reduce_into(reals_buffer, Op::Sum, Over::Whole, &mut out, &stream)?;
            Ok(stop.record(&stream)?)
        })?;
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
