//! The program of the cold-start measurement (`scripts/cold_start.sh`): a
//! process that makes a context, copies 1000 `f32`s to the GPU, sums them
//! with `reduce::sum` and prints the sum: what a user's first call costs,
//! from process start to result, with nothing loaded beforehand.
//! `benches/cub_first_sum.cu` does the same with NVIDIA CUB.

use cust::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _context = cust::quick_init()?;
    let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
    let buf = DeviceBuffer::from_slice(&data)?;
    let sum: f32 = reduce::sum(&buf)?;
    println!("{sum}");
    if sum != 500_500.0 {
        return Err(format!("wrong sum {sum}, expected 500500").into());
    }
    Ok(())
}
