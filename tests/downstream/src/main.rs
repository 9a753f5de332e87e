//! What a user's program does with the library: a sum and a maximum of
//! `f32`s on the GPU, or, where there is none, of the same data under the
//! CPU emulator (the same kernels). Exits non-zero on a wrong answer.

use cust::prelude::*;

fn main() -> Result<(), reduce::Error> {
    // 1 + 2 + … + 1000 and its maximum, exact in f32.
    let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
    let (sum, max, on) = match cust::quick_init() {
        Ok(_context) => {
            let buf = DeviceBuffer::from_slice(&data)?;
            let sum: f32 = reduce::sum(&buf)?;
            (sum, reduce::max(&buf)?, "the GPU")
        }
        Err(e) => {
            println!("no usable GPU ({e}): running the kernels under the CPU emulator");
            let mut emulator = reduce::emulated::Emulator::default();
            let sum = emulator.reduce(&data, reduce::Op::Sum)?;
            (sum, emulator.reduce(&data, reduce::Op::Max)?, "the CPU emulator")
        }
    };
    println!("downstream: on {on}, sum of 1..=1000 = {sum}, max = {max}");
    assert_eq!((sum, max), (500_500.0, 1000.0), "wrong answer on {on}");
    Ok(())
}
