//! Reductions of cudarc buffers (`reduce::cudarc`), as candle or burn hold
//! them: blocking calls that return the result, and `_into` calls that
//! enqueue it into a cudarc buffer on two streams without waiting. Every
//! answer is checked against the CPU (the data are small integers, so they
//! are exact).
//!
//! Run with `cargo run --release --features cudarc --example cudarc`.

use cudarc::driver::CudaContext;
use reduce::cudarc::half::f16;
use reduce::{Op, Over, Widened};
use std::process::ExitCode;

const N: usize = 10_000_000;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("cudarc: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    if CudaContext::device_count().unwrap_or(0) == 0 {
        println!(
            "cudarc: no CUDA GPU found; nothing to run (the emulator takes host slices: see the quickstart example)."
        );
        return Ok(true);
    }
    let ctx = CudaContext::new(0)?;
    let (s1, s2) = (ctx.new_stream()?, ctx.new_stream()?);
    // Integers in [-100, 100]: every partial sum is exact in f32.
    let data: Vec<f32> = (0..N).map(|i| ((i * 7919) % 201) as f32 - 100.0).collect();
    let expected_sum: f64 = data.iter().map(|&x| x as f64).sum();
    let buf = s1.clone_htod(&data)?;

    // Blocking: each waits for the buffer's stream, then returns the result.
    let sum = reduce::sum(&buf)?;
    let (index, max) = reduce::argmax(&buf.slice(1000..))?; // a view: index within it
    let halves = s1.clone_htod(&data.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>())?;
    let half_sum = reduce::reduce(&halves, Widened::<f32>::new(Op::Sum))?; // half 2's f16, summed in f32
    println!("sum {sum}, argmax of [1000..] ({index}, {max}), f16 sum in f32 {half_sum}");
    let mut ok = sum as f64 == expected_sum && half_sum as f64 == expected_sum;
    ok &= max == 100.0 && data[1000 + index as usize] == 100.0;

    // Async: into cudarc buffers on two streams, overlapping; the reducer
    // keeps a workspace per stream.
    let mut reducer = reduce::cudarc::Reducer::new(&ctx)?;
    let mut results = s1.alloc_zeros::<f32>(2)?;
    let mut minimum = s2.alloc_zeros::<f32>(1)?;
    reducer.reduce_into(&buf, Op::Sum, Over::Whole, &mut results.slice_mut(0..1), &s1)?;
    reducer.reduce_into(
        &buf.slice(..N / 2),
        Op::Max,
        Over::Whole,
        &mut results.slice_mut(1..2),
        &s1,
    )?;
    reducer.reduce_into(&buf, Op::Min, Over::Whole, &mut minimum, &s2)?;
    drop(buf); // safe: cudarc frees it after the kernels that read it
    let (results, minimum) = (s1.clone_dtoh(&results)?, s2.clone_dtoh(&minimum)?);
    println!(
        "async: sum {}, max of the first half {}, min {}",
        results[0], results[1], minimum[0]
    );
    ok &= results[0] as f64 == expected_sum && results[1] == 100.0 && minimum[0] == -100.0;
    println!("{}", if ok { "all checks passed" } else { "MISMATCH" });
    Ok(ok)
}
