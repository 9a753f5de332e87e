//! What a user's program does with the library: a sum and a maximum of
//! `f32`s on the GPU, or, where there is none, of the same data under the
//! CPU emulator (the same kernels), and the same sum by an operator written
//! here (`SumOfSquaresPlusOne`, a `reduce::user::Operator`). Exits non-zero
//! on a wrong answer.
//!
//! Built twice by CI: with cust's buffers (feature `cust`, the default),
//! and with cudarc's (`--no-default-features --features cudarc`), the
//! configuration that builds with no CUDA on the machine at all, and with
//! cudarc linking libcuda instead of opening it (`--features linked`, as
//! candle has it), which must not conflict with the library.

use reduce::user::{Operator, Value};

/// A user's operator, on stable Rust: Σ (x² + 1).
#[derive(Clone, Copy, Debug)]
struct SumOfSquaresPlusOne;

impl Operator<f32> for SumOfSquaresPlusOne {
    fn identity(&self) -> f32 {
        0.0
    }
    fn combine<V: Value<f32>>(&self, a: V, b: V) -> V {
        a + b
    }
    fn map<V: Value<f32>>(&self, x: V) -> V {
        x * x + V::constant(1.0)
    }
}

fn main() -> Result<(), reduce::Error> {
    // 1 + 2 + … + 1000 and its maximum, exact in f32.
    let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
    user_operator(&data)?;
    let (sum, max, on) = match on_gpu(&data) {
        Ok(found) => found,
        Err(why) => {
            println!("no usable GPU ({why}): running the kernels under the CPU emulator");
            let mut emulator = reduce::emulated::Emulator::default();
            let sum = emulator.reduce(&data, reduce::Op::Sum)?;
            (sum, emulator.reduce(&data, reduce::Op::Max)?, "the CPU emulator")
        }
    };
    println!("downstream: on {on}, sum of 1..=1000 = {sum}, max = {max}");
    assert_eq!((sum, max), (500_500.0, 1000.0), "wrong answer on {on}");
    Ok(())
}

/// Σ (x² + 1) of 1..=100 by the user's operator: on the CPU, on the
/// emulator, and on the GPU where there is one.
fn user_operator(data: &[f32]) -> Result<(), reduce::Error> {
    let what = reduce::User::new(SumOfSquaresPlusOne)?;
    // Σ (x² + 1) over 1..=100 = 338 350 + 100: every partial sum is an
    // integer below 2^24, so every order gives it exactly.
    let small = &data[..100];
    assert_eq!(what.fold(small), 338_450.0, "the operator on the CPU");
    let mut emulator = reduce::emulated::Emulator::default();
    assert_eq!(
        emulator.reduce(small, &what)?,
        338_450.0,
        "the operator on the emulator"
    );
    match user_on_gpu(small, &what) {
        Ok(Some(on_gpu)) => assert_eq!(on_gpu, 338_450.0, "the operator on the GPU"),
        Ok(None) => println!("downstream: the user operator ran on the CPU and the emulator (no GPU)"),
        Err(e) => panic!("the user operator on the GPU: {e}"),
    }
    println!("downstream: the user operator's Σ (x² + 1) of 1..=100 = 338450");
    Ok(())
}

/// The user's operator over `data` on the GPU, if there is one.
#[cfg(feature = "cust")]
fn user_on_gpu(data: &[f32], what: &reduce::User<f32, SumOfSquaresPlusOne>) -> Result<Option<f32>, String> {
    use cust::prelude::*;
    let Ok(_context) = cust::quick_init() else {
        return Ok(None);
    };
    let buf = DeviceBuffer::from_slice(data).map_err(|e| e.to_string())?;
    reduce::reduce(&buf, what).map(Some).map_err(|e| e.to_string())
}

/// The user's operator over `data` on the GPU, if there is one.
#[cfg(all(feature = "cudarc", not(feature = "cust")))]
fn user_on_gpu(data: &[f32], what: &reduce::User<f32, SumOfSquaresPlusOne>) -> Result<Option<f32>, String> {
    // SAFETY: only tries to open the driver library.
    #[cfg(not(feature = "linked"))]
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Ok(None);
    }
    let Ok(context) = cudarc::driver::CudaContext::new(0) else {
        return Ok(None);
    };
    let buf = context.default_stream().clone_htod(data).map_err(|e| e.to_string())?;
    reduce::reduce(&buf, what).map(Some).map_err(|e| e.to_string())
}

/// Built with neither buffer kind: no GPU.
#[cfg(not(any(feature = "cust", feature = "cudarc")))]
fn user_on_gpu(_: &[f32], _: &reduce::User<f32, SumOfSquaresPlusOne>) -> Result<Option<f32>, String> {
    Ok(None)
}

/// The sum and maximum of `data` on the GPU, through cust's buffers.
#[cfg(feature = "cust")]
fn on_gpu(data: &[f32]) -> Result<(f32, f32, &'static str), String> {
    use cust::prelude::*;
    let _context = cust::quick_init().map_err(|e| e.to_string())?;
    let buf = DeviceBuffer::from_slice(data).map_err(|e| e.to_string())?;
    let sum: f32 = reduce::sum(&buf).map_err(|e| e.to_string())?;
    Ok((sum, reduce::max(&buf).map_err(|e| e.to_string())?, "the GPU (cust)"))
}

/// The sum and maximum of `data` on the GPU, through cudarc's buffers.
#[cfg(all(feature = "cudarc", not(feature = "cust")))]
fn on_gpu(data: &[f32]) -> Result<(f32, f32, &'static str), String> {
    // SAFETY: only tries to open the driver library (cudarc's calls panic
    // without it). Linked, the program would not have started without it.
    #[cfg(not(feature = "linked"))]
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no CUDA driver library".to_string());
    }
    let context = cudarc::driver::CudaContext::new(0).map_err(|e| e.to_string())?;
    let buf = context.default_stream().clone_htod(data).map_err(|e| e.to_string())?;
    let sum: f32 = reduce::sum(&buf).map_err(|e| e.to_string())?;
    Ok((sum, reduce::max(&buf).map_err(|e| e.to_string())?, "the GPU (cudarc)"))
}

/// Built with neither buffer kind: the emulator only.
#[cfg(not(any(feature = "cust", feature = "cudarc")))]
fn on_gpu(_: &[f32]) -> Result<(f32, f32, &'static str), String> {
    Err("built without cust and cudarc".to_string())
}
