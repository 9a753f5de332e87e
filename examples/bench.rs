//! Times `reduce` the way `shared/bench/cub_reduce.cu` times NVIDIA CUB, so the
//! two CSVs can be joined row by row (`scripts/compare.py`):
//! the same sizes (2^10 … 2^30 in ×4 steps, plus 10^8; 64-bit types up to
//! 2^29), the same input values (1 + hash(i) % 3), the same rotation over
//! enough buffers to cover 4× the 60 MB L2, 3 warm-up calls, then device events
//! around each single call (200 calls below 2^24 elements, 30 above) and the
//! median. Each call is `Reducer::reduce_into` on a stream, result left on the
//! device, as CUB's call leaves it.
//!
//! Output: `impl,type,op,n,median_us,gbps` rows, `impl` = `reduce`.
//! Usage: `bench [TYPE ...]` (default: f32 i32 f64 u32 i64 u64).
//! `REDUCE_BLOCK_THREADS=N` replaces the tuned threads per block (for sweeps).

use cust::event::{Event, EventFlags};
use cust::memory::{DeviceBox, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use reduce::{Element, Op, Reducer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _context = cust::quick_init().map_err(|e| format!("bench needs a CUDA GPU: {e}"))?;
    let device = cust::device::Device::get_device(0)?;
    println!("# {} reduce bench", device.name()?);
    let mut types: Vec<String> = std::env::args().skip(1).collect();
    if types.is_empty() {
        types = ["f32", "i32", "f64", "u32", "i64", "u64"].map(String::from).to_vec();
    }
    let mut sizes: Vec<usize> = (10..=30).step_by(2).map(|e| 1usize << e).collect();
    sizes.push(100_000_000);
    let sizes_64: Vec<usize> = sizes.iter().copied().filter(|&n| n <= 1 << 29).collect();
    let mut reducer = match std::env::var("REDUCE_BLOCK_THREADS") {
        Ok(threads) => Reducer::with_policy(reduce::Policy::new(threads.parse()?)?)?,
        Err(_) => Reducer::new()?,
    };
    for t in &types {
        match t.as_str() {
            "f32" => bench_type::<f32>(&mut reducer, "f32", &sizes)?,
            "i32" => bench_type::<i32>(&mut reducer, "i32", &sizes)?,
            "u32" => bench_type::<u32>(&mut reducer, "u32", &sizes)?,
            "f64" => bench_type::<f64>(&mut reducer, "f64", &sizes_64)?,
            "i64" => bench_type::<i64>(&mut reducer, "i64", &sizes_64)?,
            "u64" => bench_type::<u64>(&mut reducer, "u64", &sizes_64)?,
            other => return Err(format!("unknown type {other}").into()),
        }
    }
    Ok(())
}

/// The values cub_reduce.cu fills its buffers with: 1, 2 or 3.
trait FromSmall: Element + Default {
    fn from_small(v: u32) -> Self;
}
macro_rules! from_small {
    ($($t:ty),*) => {$( impl FromSmall for $t { fn from_small(v: u32) -> Self { v as $t } } )*};
}
from_small!(f32, f64, i32, u32, i64, u64);

fn fill_value<T: FromSmall>(i: usize, seed: u32) -> T {
    let mut h = (i as u32).wrapping_mul(2_654_435_761) ^ seed;
    h ^= h >> 13;
    h = h.wrapping_mul(0x5bd1_e995);
    h ^= h >> 15;
    T::from_small(1 + h % 3)
}

fn bench_type<T: FromSmall>(
    reducer: &mut Reducer,
    name: &str,
    sizes: &[usize],
) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&T::default())?;
    for &n in sizes {
        let bytes = n * std::mem::size_of::<T>();
        let buffers_needed = ((256usize << 20) / bytes.max(1)).clamp(1, 64);
        let host: Vec<T> = (0..n).map(|i| fill_value(i, 7)).collect();
        let buffers = (0..buffers_needed)
            .map(|_| DeviceBuffer::from_slice(&host))
            .collect::<Result<Vec<_>, _>>()?;
        drop(host);
        let shape = reducer.launch_shape::<T>(Op::Sum, n)?;
        println!(
            "# {name} n={n}: {} blocks x {} threads",
            shape.blocks, shape.threads_per_block
        );
        let iterations = if n < 1 << 24 { 200 } else { 30 };
        for op in Op::ALL.into_iter().filter(|op| op.is_defined_for(T::TYPE)) {
            for warm_up in 0..3 {
                reducer.reduce_into(&buffers[warm_up % buffers.len()], op, &mut out, &stream)?;
            }
            stream.synchronize()?;
            let mut times_ms = Vec::with_capacity(iterations);
            for i in 0..iterations {
                start.record(&stream)?;
                reducer.reduce_into(&buffers[i % buffers.len()], op, &mut out, &stream)?;
                stop.record(&stream)?;
                stop.synchronize()?;
                times_ms.push(stop.elapsed_time_f32(&start)?);
            }
            times_ms.sort_by(f32::total_cmp);
            let us = times_ms[times_ms.len() / 2] as f64 * 1e3;
            println!("reduce,{name},{op},{n},{us:.2},{:.1}", bytes as f64 / us / 1e3);
        }
    }
    Ok(())
}
