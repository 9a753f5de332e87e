//! What a user's program does with the library: a sum and a maximum of
//! `f32`s on the GPU, or, where there is none, of the same data under the
//! CPU emulator (the same kernels). Exits non-zero on a wrong answer.
//!
//! Built twice by CI: with cust's buffers (feature `cust`, the default),
//! and with cudarc's (`--no-default-features --features cudarc`), the
//! configuration that builds with no CUDA on the machine at all, and with
//! cudarc linking libcuda instead of opening it (`--features linked`, as
//! candle has it), which must not conflict with the library.

fn main() -> Result<(), reduce::Error> {
    // 1 + 2 + … + 1000 and its maximum, exact in f32.
    let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
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
