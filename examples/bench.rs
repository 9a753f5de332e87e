//! Times `reduce` the way `benches/cub_reduce.cu` times NVIDIA CUB, so the
//! two CSVs can be joined row by row (`scripts/compare.py`):
//! the same sizes (2^10 … 2^30 in ×4 steps, plus 10^8; 64-bit types up to
//! 2^29), the same input values (1 + hash(i) % 3), the same rotation over
//! enough buffers to cover 4× the 60 MB L2, 3 warm-up calls, then device events
//! around each single call (200 calls below 2^24 elements, 30 above) and the
//! median. Each call is `Scope::reduce_into` on a stream, result left on the
//! device, as CUB's call leaves it.
//!
//! Output: `impl,type,op,n,median_us,gbps` rows, `impl` = `reduce` (`op`
//! also `argmax`/`argmin`).
//! Usage: `bench [TYPE ...]` (default: f32 i32 f64 u32 i64 u64). The type
//! `wide` times the widening reductions (`Widened`: every input/accumulator
//! pair and op) at 2^24, 2^26, 2^28 and 2^30 bytes read, as rows of type
//! `<input>_as_<accumulator>` (and argmax/argmin of `f16` and `bf16`, as
//! rows of type `f16`/`bf16`); compare them with `sum` of a plain type at the
//! same bytes. The type `segmented` times segmented and row-wise reductions
//! of f32 (sum and max) at 2^26 and 2^30 bytes (`segmented_f64`: of f64), as
//! rows of type `f32_rows_<rows>x<row_len>` or `f32_segments_mean_<length>`
//! (random lengths, uniform in `[0, 2 × mean]`), with `sum` of the whole
//! input in the same run to compare with; their GB/s count the results
//! written too.
//! The type `axes` times axis reductions of f32 (`axes_f64`: of f64), sum
//! and max, on the shapes of issue #32, which `scripts/torch_axes.py` times
//! in PyTorch: `[2^k, 2^(28-k)]` over axis 0 and over axis 1 (k = 2, 8, 14,
//! 20, 26), `[64, 2^16, 64]` over axis 1 and `[2^10, 2^10, 2^8]` over axes
//! (0, 2), with the whole-input sum of the same buffer; as rows
//! `reduce,<type>,<shape>,<axes>,<op>,<median_us>,<GB/s>` (`x`-joined
//! shape, `+`-joined axes; GB/s count the results written too).
//! The type `statistics` (`statistics_f64`) times, in the same rows, the
//! statistics of 2^28 elements over the whole input, the last axis of
//! `[2^20, 2^8]` and the first of `[2^8, 2^20]`: `sum` (through
//! `Over::Axes`, to compare with), `var` and `std` (correction 1,
//! accumulated in the input type), `var_f64` (f32 only: accumulated in
//! f64), `logsumexp`, `count_nonzero` and `any_nan`
//! (`scripts/torch_axes.py` times PyTorch's `var`, `std`, `logsumexp`,
//! `count_nonzero` and `isnan().any()` on the same shapes).
//! The type `views` (issue #46) times reductions of f32 over views of one
//! dense `X` of shape `[512, 1024, 64]` (2^25 elements, 128 MiB: past L2)
//! beside the same reductions of its dense memory: `T = X.transpose(0, 2)`
//! (shape `[64, 1024, 512]`, strides `[1, 64, 65536]`), its sum over every
//! axis (and `X`'s), its mean and variance over axes (0, 2) (and `X`'s),
//! argmax along axis 2 (and `X`'s along axis 0, the same memory axis), its
//! sum along axis 1 (and `X`'s) and max along axis 0 (and `X`'s along axis
//! 2); and `X[:, :, 1:]` (a view starting one element in), `X[:, 1:, :]`
//! and `X[:, :, :32]` summed along axis 2 (and `X`). Rows as `axes`', the shape of a view written `<shape>@<strides>` and,
//! with an offset, `+<offset>` (`scripts/torch_axes.py views` times PyTorch
//! on the same views; `scripts/compare_axes.py` puts each view's time over
//! its dense row's).
//! `REDUCE_BLOCK_THREADS=N` replaces the tuned threads per block (for sweeps).
//! `REDUCE_BENCH_LAYOUTS=rows_4194304x64,...` times only the segmented
//! (and `exact_parts`') layouts named (for profiling one of them), and also
//! the probe layouts it names, which are timed only then: `segments_fixed_<length>` (offsets of
//! equal segments) and `segments_halves_<length>` (segments alternately
//! empty and twice the length), for lengths 100, 1000, 1024, 10000 and 16384;
//! for `exact_parts`, rows of 2^12 to 2^15, 2^18, 2^21, 2^22 and 2^23 rows
//! (`rows_2097152x128` for `f32`, `rows_2097152x64` for `f64`, ...), 100,
//! 200, 300, 400 and 600 rows of `n / rows` elements (the first
//! `rows · (n / rows)`: `rows_300x894784` for `f32`, `rows_300x447392` for
//! `f64`), random segments of mean 1000 (`segments_mean_1000`) and axes 0
//! and 2 of 64 × 65536 × n/2^22 (`axes_outer_and_inner_of_64x65536`: short
//! rows in runs).
//! `REDUCE_BENCH_BATCH=k` times `k` calls in a row between each pair of
//! events (their mean: the host's per-call work hidden behind the GPU's).
//! `REDUCE_BENCH_MAX_N=N` times only the sizes up to `N` elements (for many
//! quick rounds at small sizes), `REDUCE_BENCH_MIN_N=N` only those from `N`
//! (both: one size, as `ncu --launch-count` wants it). `REDUCE_BENCH_INPUTS=normal,...` times
//! `exact` on the inputs named only (`small`, `uniform`, `uniform53`,
//! `normal`, `uniform_nans`); the type `exact_f64` times `exact`'s `f64`
//! half alone.

use cust::event::{Event, EventFlags};
use cust::memory::{DeviceBox, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use reduce::statistics::{LogSumExpInput, MomentsInput, Predicate};
use reduce::{
    Any, ArgInput, ArgMax, ArgMin, Count, Element, ElementType, FloatElement, Input, LogSumExp, Op, Output, Over,
    Reducer, Scope, Std, Var, Widened,
};

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
    if let Ok(largest) = std::env::var("REDUCE_BENCH_MAX_N") {
        let largest: usize = largest.parse()?;
        sizes.retain(|&n| n <= largest);
    }
    if let Ok(smallest) = std::env::var("REDUCE_BENCH_MIN_N") {
        let smallest: usize = smallest.parse()?;
        sizes.retain(|&n| n >= smallest);
    }
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
            "wide" => bench_wide(&mut reducer)?,
            "segmented" => bench_segmented::<f32>(&mut reducer, "f32")?,
            "segmented_f64" => bench_segmented::<f64>(&mut reducer, "f64")?,
            "axes" => bench_axes::<f32>(&mut reducer, "f32")?,
            "axes_f64" => bench_axes::<f64>(&mut reducer, "f64")?,
            "views" => bench_views(&mut reducer)?,
            "statistics" => bench_statistics::<f32>(&mut reducer, "f32")?,
            "statistics_f64" => bench_statistics::<f64>(&mut reducer, "f64")?,
            "user" => bench_user(&mut reducer, &sizes)?,
            "user_first" => bench_user_first(&mut reducer)?,
            "exact" => {
                bench_exact::<f32>(&mut reducer, "f32", &sizes)?;
                bench_exact::<f64>(&mut reducer, "f64", &sizes_64)?;
            }
            "exact_f64" => bench_exact::<f64>(&mut reducer, "f64", &sizes_64)?,
            "exact_parts" => {
                bench_exact_parts::<f32>(&mut reducer, "f32")?;
                bench_exact_parts::<f64>(&mut reducer, "f64")?;
            }
            other => return Err(format!("unknown type {other}").into()),
        }
    }
    Ok(())
}

/// The values cub_reduce.cu fills its buffers with: 1, 2 or 3.
trait FromSmall: Element + ArgInput<Value = Self> + Default {
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
        let buffers = rotated_buffers(n, |i| fill_value::<T>(i, 7))?;
        let shape = reducer.launch_shape::<T>(Op::Sum, n)?;
        println!(
            "# {name} n={n}: {} blocks x {} threads",
            shape.blocks, shape.threads_per_block
        );
        for op in Op::ALL.into_iter().filter(|op| op.is_defined_for(T::TYPE)) {
            let out = Output::from(&mut out);
            let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
                scope.reduce_into(&buffers[i % buffers.len()], op, Over::Whole, out, &stream)
            })?;
            println!("reduce,{name},{op},{n},{us:.2},{:.1}", bytes as f64 / us / 1e3);
        }
        bench_arg(reducer, name, &buffers)?;
    }
    Ok(())
}

/// `n` elements `value(i)`, uploaded to enough buffers to cover 256 MiB
/// (at most 64), which the timed calls take in turn so that L2 does not
/// serve them.
fn rotated_buffers<T: cust::memory::DeviceCopy>(
    n: usize,
    value: impl Fn(usize) -> T,
) -> Result<Vec<DeviceBuffer<T>>, Box<dyn std::error::Error>> {
    let bytes = n * std::mem::size_of::<T>();
    let host: Vec<T> = (0..n).map(value).collect();
    let buffers = (0..((256usize << 20) / bytes.max(1)).clamp(1, 64))
        .map(|_| DeviceBuffer::from_slice(&host))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(buffers)
}

/// argmax and argmin rows of type `name` over the rotated `buffers` (each
/// call writes the index).
fn bench_arg<T: ArgInput>(
    reducer: &mut Reducer,
    name: &str,
    buffers: &[DeviceBuffer<T>],
) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let n = buffers[0].len();
    let bytes = n * std::mem::size_of::<T>();
    let mut index = DeviceBox::new(&0u64)?;
    let index = Output::from(&mut index);
    let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
        scope.reduce_into(&buffers[i % buffers.len()], ArgMax, Over::Whole, index, &stream)
    })?;
    println!("reduce,{name},argmax,{n},{us:.2},{:.1}", bytes as f64 / us / 1e3);
    let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
        scope.reduce_into(&buffers[i % buffers.len()], ArgMin, Over::Whole, index, &stream)
    })?;
    println!("reduce,{name},argmin,{n},{us:.2},{:.1}", bytes as f64 / us / 1e3);
    Ok(())
}

/// The median time of one call, in µs: 3 warm-up calls, then device events
/// around each of 200 calls (30 from 2^24 elements up), all in one scope of
/// `reducer`. `call(i, scope)` enqueues call `i` on `stream`. With
/// `REDUCE_BENCH_BATCH=k`, the events go around `k` calls in a row and
/// time their mean: the host's enqueueing of one call then overlaps the
/// GPU's work on the last (so a per-call cost the host adds between the
/// start event and the kernel drops out).
fn median_us<'b>(
    reducer: &mut Reducer,
    n: usize,
    stream: &'b Stream,
    (start, stop): (&Event, &Event),
    mut call: impl FnMut(usize, &mut Scope<'_, 'b>) -> reduce::Result<()>,
) -> Result<f64, Box<dyn std::error::Error>> {
    let batch = std::env::var("REDUCE_BENCH_BATCH")
        .ok()
        .and_then(|k| k.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let mut times_ms = reducer.scope(|scope| {
        for warm_up in 0..3 {
            call(warm_up, scope)?;
        }
        stream.synchronize()?;
        let iterations = if n < 1 << 24 { 200 } else { 30 };
        let mut times_ms = Vec::with_capacity(iterations);
        for i in 0..iterations {
            start.record(stream)?;
            for k in 0..batch {
                call(i * batch + k, scope)?;
            }
            stop.record(stream)?;
            stop.synchronize()?;
            times_ms.push(stop.elapsed_time_f32(start)? / batch as f32);
        }
        Ok(times_ms)
    })?;
    times_ms.sort_by(f32::total_cmp);
    Ok(times_ms[times_ms.len() / 2] as f64 * 1e3)
}

/// `ExactSum` against `Op::Sum`, and `ExactNanSum` against `Op::NanSum`,
/// same process and stream, on these inputs: the bench's 1, 2, 3; uniform
/// values in (-1, 1) with 24 random bits (a hash of the index;
/// `cub_determinism.cu` fills the same); for `f64`, uniform values with all
/// 53 bits random; normally distributed values (all bits random: their
/// squares spread over many more bits than the uniform values'); and the
/// uniform values with every 1000th a NaN (only the NaN-ignoring sums: a
/// NaN sends `ExactSum` to its one-block exact pass). Also `Op::SumOfSquares`
/// against `ExactSumOfSquares`, and `Reducer::dot` against `ExactDot` of the
/// values with the same values reversed (two arrays read: their GB/s count
/// both), but on the NaNs. Checks that the exact sums equal their folds on
/// the CPU.
fn bench_exact<T: FromSmall + FloatElement + Uniform + MomentsInput<T> + LogSumExpInput>(
    reducer: &mut Reducer,
    name: &str,
    sizes: &[usize],
) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&T::default())?;
    let small = |i: usize| fill_value::<T>(i, 7);
    let uniform24 = |i: usize| T::uniform(index_hash(i), 24);
    let uniform53 = |i: usize| T::uniform(index_hash(i), 53);
    let nans = |i: usize| if i % 1000 == 999 { T::NAN } else { uniform24(i) };
    let normal = |i: usize| T::normal(index_hash(i));
    let mut inputs: Vec<(&str, &dyn Fn(usize) -> T)> = vec![("small", &small), ("uniform", &uniform24)];
    if T::TYPE == ElementType::F64 {
        inputs.push(("uniform53", &uniform53));
    }
    inputs.push(("normal", &normal));
    inputs.push(("uniform_nans", &nans));
    if let Ok(only) = std::env::var("REDUCE_BENCH_INPUTS") {
        inputs.retain(|(data, _)| only.split(',').any(|name| name == *data));
    }
    for &n in sizes.iter().filter(|&&n| n >= 1 << 20) {
        let bytes = n * std::mem::size_of::<T>();
        for &(data, value) in &inputs {
            let buffers = rotated_buffers(n, value)?;
            let host: Vec<T> = (0..n).map(value).collect();
            let with_nans = data == "uniform_nans";
            let exact_nan = reducer.reduce(&buffers[0], reduce::ExactNanSum)?;
            let (exact, folded) = match with_nans {
                true => (exact_nan, reduce::ExactNanSum::fold(&host)),
                false => (
                    reducer.reduce(&buffers[0], reduce::ExactSum)?,
                    reduce::ExactSum::fold(&host),
                ),
            };
            if format!("{exact:?} {exact_nan:?}") != format!("{folded:?} {folded:?}") {
                let got = format!("exact sum {exact:?}, exact NaN-ignoring sum {exact_nan:?}");
                return Err(format!("{name} {data} n={n}: {got}, fold {folded:?}").into());
            }
            let squares = reducer.reduce(&buffers[0], reduce::ExactSumOfSquares)?;
            let squares_folded = reduce::ExactSumOfSquares::fold(&host);
            if format!("{squares:?}") != format!("{squares_folded:?}") {
                let got = format!("exact sum of squares {squares:?}, fold {squares_folded:?}");
                return Err(format!("{name} {data} n={n}: {got}").into());
            }
            // The dot products' second input: the same values reversed.
            let others = match with_nans {
                true => Vec::new(),
                false => rotated_buffers(n, |i| value(n - 1 - i))?,
            };
            if !with_nans {
                let dot = reducer.reduce_pair(&buffers[0], &others[0], reduce::ExactDot)?;
                let reversed: Vec<T> = host.iter().rev().copied().collect();
                let dot_folded = reduce::ExactDot::fold(&host, &reversed)?;
                if format!("{dot:?}") != format!("{dot_folded:?}") {
                    return Err(format!("{name} {data} n={n}: exact dot {dot:?}, fold {dot_folded:?}").into());
                }
            }
            let sample = reduce::ExactVar::new(1.0)?;
            let (variance, variance_folded) = (reducer.reduce(&buffers[0], sample)?, sample.fold(&host));
            if format!("{variance:?}") != format!("{variance_folded:?}") {
                return Err(
                    format!("{name} {data} n={n}: exact variance {variance:?}, fold {variance_folded:?}").into(),
                );
            }
            let (lse, lse_folded) = (
                reducer.reduce(&buffers[0], reduce::ExactLogSumExp)?,
                reduce::ExactLogSumExp::fold(&host),
            );
            if format!("{lse:?}") != format!("{lse_folded:?}") {
                return Err(format!("{name} {data} n={n}: exact logsumexp {lse:?}, fold {lse_folded:?}").into());
            }
            let sum = reducer.reduce(&buffers[0], if with_nans { Op::NanSum } else { Op::Sum })?;
            println!("exact,{name},{data},values,{n},{exact:?},{sum:?}");
            let out = Output::from(&mut out);
            let timed: &[&str] = match with_nans {
                true => &["nan_sum", "exact_nan_sum"],
                false => &[
                    "sum",
                    "exact_sum",
                    "nan_sum",
                    "exact_nan_sum",
                    "sum_of_squares",
                    "exact_sum_of_squares",
                    "dot",
                    "exact_dot",
                    "var",
                    "exact_var",
                    "lse",
                    "exact_lse",
                ],
            };
            for &what in timed {
                let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
                    let input = &buffers[i % buffers.len()];
                    match what {
                        "dot" => scope.dot_into(input, &others[i % others.len()], out, &stream),
                        "exact_dot" => {
                            let other = &others[i % others.len()];
                            scope.reduce_pair_into(input, other, reduce::ExactDot, out, &stream)
                        }
                        "exact_sum" => scope.reduce_into(input, reduce::ExactSum, Over::Whole, out, &stream),
                        "exact_nan_sum" => scope.reduce_into(input, reduce::ExactNanSum, Over::Whole, out, &stream),
                        "nan_sum" => scope.reduce_into(input, Op::NanSum, Over::Whole, out, &stream),
                        "exact_sum_of_squares" => {
                            scope.reduce_into(input, reduce::ExactSumOfSquares, Over::Whole, out, &stream)
                        }
                        "sum_of_squares" => scope.reduce_into(input, Op::SumOfSquares, Over::Whole, out, &stream),
                        "var" => scope.reduce_into(input, Var::<T>::new(1.0)?, Over::Whole, out, &stream),
                        "exact_var" => scope.reduce_into(input, sample, Over::Whole, out, &stream),
                        "lse" => scope.reduce_into(input, LogSumExp, Over::Whole, out, &stream),
                        "exact_lse" => scope.reduce_into(input, reduce::ExactLogSumExp, Over::Whole, out, &stream),
                        _ => scope.reduce_into(input, Op::Sum, Over::Whole, out, &stream),
                    }
                })?;
                let read = if what.ends_with("dot") { 2 * bytes } else { bytes };
                println!("exact,{name},{data},{what},{n},{us:.2},{:.1}", read as f64 / us / 1e3);
            }
        }
    }
    Ok(())
}

/// Exact and default sums over rows and segments of 2^30 bytes of
/// uniform values, in the same process, one after the other; the first
/// and last part of each layout checked against the fold.
fn bench_exact_parts<T: FromSmall + FloatElement + Uniform + MomentsInput<T> + LogSumExpInput>(
    reducer: &mut Reducer,
    name: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let element = std::mem::size_of::<T>();
    let log2_n = 30 - element.ilog2();
    let n = 1usize << log2_n;
    let value = |i: usize| T::uniform(index_hash(i), 24);
    let buffers = rotated_buffers(n, value)?;
    let host: Vec<T> = (0..n).map(value).collect();
    let only = std::env::var("REDUCE_BENCH_LAYOUTS").ok();
    let wanted = |layout: &str| only.as_deref().is_none_or(|list| list.split(',').any(|l| l == layout));
    let named = |layout: &str| only.as_deref().is_some_and(|list| list.split(',').any(|l| l == layout));
    let mut layouts: Vec<(String, Segmentation)> = [0u32, 4, 10, 12, 13, 14, 15, 16, 18, 20, 21, 22, 23, 24]
        .into_iter()
        .filter(|&log2_rows| {
            // Probe lengths, timed only where named.
            let row_len = 1usize << (log2_n - log2_rows);
            ![12, 13, 14, 15, 18, 21, 22, 23].contains(&log2_rows)
                || named(&format!("rows_{}x{row_len}", 1usize << log2_rows))
        })
        .map(|log2_rows| {
            let (rows, row_len) = (1usize << log2_rows, 1usize << (log2_n - log2_rows));
            (format!("rows_{rows}x{row_len}"), Segmentation::Rows { rows, row_len })
        })
        .collect();
    // Row counts that are not powers of two (the first `rows · (n / rows)`
    // elements): probes, timed only where named.
    for rows in [100usize, 200, 300, 400, 600] {
        let row_len = n / rows;
        let layout = format!("rows_{rows}x{row_len}");
        if named(&layout) {
            layouts.push((layout, Segmentation::Rows { rows, row_len }));
        }
    }
    // Segments of mean 1000: a probe, timed only where named.
    for mean in [100u64, 1000, 10_000]
        .into_iter()
        .filter(|&mean| mean != 1000 || named("segments_mean_1000"))
    {
        let mut offsets = vec![0u64];
        while offsets[offsets.len() - 1] < n as u64 {
            let length = u64::from(fill_value::<u32>(offsets.len(), 11) - 1) * mean;
            offsets.push((offsets[offsets.len() - 1] + length).min(n as u64));
        }
        layouts.push((
            format!("segments_mean_{mean}"),
            Segmentation::Offsets(DeviceBuffer::from_slice(&offsets)?),
        ));
    }
    for (layout, segmentation) in layouts.iter().filter(|(layout, _)| wanted(layout)) {
        let elements = match segmentation {
            Segmentation::Rows { rows, row_len } => rows * row_len,
            Segmentation::Offsets(_) => n,
        };
        let part = buffers[0].index(..elements);
        let (segments, ranges) = match segmentation {
            Segmentation::Rows { rows, row_len } => (*rows, vec![0..*row_len, (rows - 1) * row_len..rows * row_len]),
            Segmentation::Offsets(offsets) => {
                let host = offsets.as_host_vec()?;
                let last = host.len() - 2;
                let range = |s: usize| host[s] as usize..host[s + 1] as usize;
                (host.len() - 1, vec![range(0), range(last)])
            }
        };
        let over = || match segmentation {
            Segmentation::Rows { rows, row_len } => Over::Rows {
                rows: *rows,
                len: *row_len,
            },
            Segmentation::Offsets(offsets) => Over::Segments(Input::from(offsets)),
        };
        let blocking_over = match segmentation {
            Segmentation::Rows { rows, row_len } => Over::Rows {
                rows: *rows,
                len: *row_len,
            },
            Segmentation::Offsets(offsets) => Over::Segments(&**offsets),
        };
        let results = reducer
            .reduce_over(&part, reduce::ExactSum, blocking_over)?
            .values
            .as_host_vec()?;
        let means = reducer
            .reduce_over(&part, reduce::ExactMean, blocking_over)?
            .values
            .as_host_vec()?;
        let squares = reducer
            .reduce_over(&part, reduce::ExactSumOfSquares, blocking_over)?
            .values
            .as_host_vec()?;
        let sample = reduce::ExactVar::new(1.0)?;
        let variances = reducer
            .reduce_over(&part, sample, blocking_over)?
            .values
            .as_host_vec()?;
        let lses = reducer
            .reduce_over(&part, reduce::ExactLogSumExp, blocking_over)?
            .values
            .as_host_vec()?;
        let checked = [0, segments - 1];
        for (&s, range) in checked.iter().zip(ranges) {
            let folded = reduce::ExactSum::fold(&host[range.clone()]);
            let mean = reduce::ExactMean::fold(&host[range.clone()]);
            let square = reduce::ExactSumOfSquares::fold(&host[range.clone()]);
            let lse = reduce::ExactLogSumExp::fold(&host[range.clone()]);
            let variance = sample.fold(&host[range]);
            let got = format!(
                "{:?} {:?} {:?} {:?} {:?}",
                results[s], means[s], squares[s], variances[s], lses[s]
            );
            if got != format!("{folded:?} {mean:?} {square:?} {variance:?} {lse:?}") {
                let got = format!("exact sum, mean, sum of squares, variance, logsumexp {got}");
                let folds = format!("{folded:?}, {mean:?}, {square:?}, {variance:?}, {lse:?}");
                return Err(format!("{name} {layout}: part {s} {got}; folds {folds}").into());
            }
        }
        let timing = (&stream, (&start, &stop));
        time_sum_and_exact(
            reducer,
            (&buffers, elements),
            segments,
            timing,
            over,
            &format!("{name},{layout}"),
        )?;
    }
    // Along axes: read in place (rows, columns, a middle axis), and
    // gathered into rows first (two axes apart).
    // The last, short rows in runs (the segmented kernel's), a probe timed
    // only where named.
    let views: [(&str, Vec<usize>, Vec<isize>); 5] = [
        ("axes_last_of_1024", vec![1024, n >> 10], vec![-1]),
        ("axes_columns_of_1024", vec![1024, n >> 10], vec![0]),
        ("axes_middle_of_64x1024", vec![64, 1024, n >> 16], vec![1]),
        ("axes_outer_and_inner_of_64x1024", vec![64, 1024, n >> 16], vec![0, 2]),
        ("axes_outer_and_inner_of_64x65536", vec![64, 65536, n >> 22], vec![0, 2]),
    ];
    let probe = |layout: &str| layout == "axes_outer_and_inner_of_64x65536";
    for (layout, shape, axes) in views
        .iter()
        .filter(|(layout, ..)| wanted(layout) && (!probe(layout) || named(layout)))
    {
        let view = reduce::axes::Strided::contiguous(shape)?;
        let over = || Over::<Input<u64>>::Axes(&view, axes);
        let results = reducer
            .reduce_over(&buffers[0], reduce::ExactSum, Over::Axes(&view, axes))?
            .values
            .as_host_vec()?;
        // Result 0's elements: the view's positions with every kept index 0.
        let strides = view.strides();
        let mut first: Vec<usize> = vec![0];
        for &axis in axes.iter() {
            let axis = axis.rem_euclid(shape.len() as isize) as usize;
            first = first
                .iter()
                .flat_map(|&o| (0..shape[axis]).map(move |i| o + i * strides[axis]))
                .collect();
        }
        let first: Vec<T> = first.iter().map(|&i| host[i]).collect();
        let folded = reduce::ExactSum::fold(&first);
        if format!("{:?}", results[0]) != format!("{folded:?}") {
            return Err(format!("{name} {layout}: result 0 exact sum {:?}, fold {folded:?}", results[0]).into());
        }
        let lse = reducer.reduce_over(&buffers[0], reduce::ExactLogSumExp, Over::Axes(&view, axes))?;
        let (lse, lse_folded) = (lse.values.as_host_vec()?[0], reduce::ExactLogSumExp::fold(&first));
        if format!("{lse:?}") != format!("{lse_folded:?}") {
            return Err(format!("{name} {layout}: result 0 exact logsumexp {lse:?}, fold {lse_folded:?}").into());
        }
        let timing = (&stream, (&start, &stop));
        time_sum_and_exact(
            reducer,
            (&buffers, n),
            results.len(),
            timing,
            over,
            &format!("{name},{layout}"),
        )?;
    }
    Ok(())
}

/// Prints the median times of `Op::Sum`, `ExactSum`, `ExactMean`,
/// `ExactNanSum`, `Op::SumOfSquares`, `ExactSumOfSquares`, `Var`,
/// `ExactVar` (both with correction 1, `Var` in the input's type),
/// `LogSumExp` and `ExactLogSumExp` over `over()`
/// of the first `n` elements of the rotated `buffers`, `results` results
/// each, into one output, as
/// `exact_parts,{label},{what},{n},{µs},{GB/s}`.
fn time_sum_and_exact<'b, T: FloatElement + Default + MomentsInput<T> + LogSumExpInput>(
    reducer: &mut Reducer,
    (buffers, n): (&[DeviceBuffer<T>], usize),
    results: usize,
    (stream, events): (&'b Stream, (&Event, &Event)),
    over: impl Fn() -> Over<'b, Input<'b, u64>>,
    label: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let element = std::mem::size_of::<T>();
    let mut out = DeviceBuffer::from_slice(&vec![T::default(); results])?;
    let bytes = (n * element + results * element) as f64;
    let whats = [
        "sum",
        "exact_sum",
        "exact_mean",
        "exact_nan_sum",
        "sum_of_squares",
        "exact_sum_of_squares",
        "var",
        "exact_var",
        "lse",
        "exact_lse",
    ];
    let views: Vec<_> = buffers.iter().map(|buffer| buffer.index(..n)).collect();
    for what in whats {
        let out = Output::from(&mut out);
        let us = median_us(reducer, n, stream, events, |i, scope| {
            // SAFETY: the views are of buffers this function borrows for
            // all its work, which nothing else accesses meanwhile.
            let input = unsafe { Input::from_view(&views[i % views.len()]) };
            match what {
                "exact_sum" => scope.reduce_into(input, reduce::ExactSum, over(), out, stream),
                "exact_mean" => scope.reduce_into(input, reduce::ExactMean, over(), out, stream),
                "exact_nan_sum" => scope.reduce_into(input, reduce::ExactNanSum, over(), out, stream),
                "sum_of_squares" => scope.reduce_into(input, Op::SumOfSquares, over(), out, stream),
                "exact_sum_of_squares" => scope.reduce_into(input, reduce::ExactSumOfSquares, over(), out, stream),
                "var" => scope.reduce_into(input, Var::<T>::new(1.0)?, over(), out, stream),
                "exact_var" => scope.reduce_into(input, reduce::ExactVar::new(1.0)?, over(), out, stream),
                "lse" => scope.reduce_into(input, LogSumExp, over(), out, stream),
                "exact_lse" => scope.reduce_into(input, reduce::ExactLogSumExp, over(), out, stream),
                _ => scope.reduce_into(input, Op::Sum, over(), out, stream),
            }
        })?;
        println!("exact_parts,{label},{what},{n},{us:.2},{:.1}", bytes / us / 1e3);
    }
    Ok(())
}

/// 64 well-mixed bits of `i` (SplitMix64's finaliser).
fn index_hash(i: usize) -> u64 {
    let mut h = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5851_f42d_4c95_7f2d;
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

/// A uniform value in (-1, 1) with `bits` random bits (at most the type's).
trait Uniform {
    fn uniform(hash: u64, bits: u32) -> Self;
    const NAN: Self;
    /// A normally distributed value (Box–Muller on the hash's two halves),
    /// all its bits random: squares spread over many bits.
    fn normal(hash: u64) -> Self;
}

/// A standard normal value from the 64 bits `h`.
fn normal_f64(h: u64) -> f64 {
    let u = ((h >> 32) as f64 + 0.5) / 4_294_967_296.0;
    let v = (h & 0xffff_ffff) as f64 / 4_294_967_296.0;
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}
impl Uniform for f32 {
    const NAN: f32 = f32::NAN;
    fn normal(h: u64) -> f32 {
        normal_f64(h) as f32
    }
    fn uniform(h: u64, bits: u32) -> f32 {
        let bits = bits.min(24);
        let magnitude = (h & ((1 << bits) - 1)) as f32 / (1u64 << bits) as f32;
        if h >> 63 == 1 {
            -magnitude
        } else {
            magnitude
        }
    }
}
impl Uniform for f64 {
    const NAN: f64 = f64::NAN;
    fn normal(h: u64) -> f64 {
        normal_f64(h)
    }
    fn uniform(h: u64, bits: u32) -> f64 {
        let bits = bits.min(53);
        let magnitude = (h & ((1 << bits) - 1)) as f64 / (1u64 << bits) as f64;
        // The 24-bit values are exactly cub_determinism.cu's (its f32s, widened).
        let magnitude = if bits == 24 {
            f64::from(magnitude as f32)
        } else {
            magnitude
        };
        if h >> 63 == 1 {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// Every widening pair and op at 2^24 … 2^30 bytes read.
fn bench_wide(reducer: &mut Reducer) -> Result<(), Box<dyn std::error::Error>> {
    use reduce::half::{bf16, f16};
    bench_pair::<i8, i64>(reducer, "i8", "i64", &[Op::Sum], |i| fill_value::<i32>(i, 7) as i8)?;
    bench_pair::<i16, i64>(reducer, "i16", "i64", &[Op::Sum], |i| fill_value::<i32>(i, 7) as i16)?;
    bench_pair::<i32, i64>(reducer, "i32", "i64", &[Op::Sum], |i| fill_value(i, 7))?;
    bench_pair::<u8, u64>(reducer, "u8", "u64", &[Op::Sum], |i| fill_value::<u32>(i, 7) as u8)?;
    bench_pair::<u16, u64>(reducer, "u16", "u64", &[Op::Sum], |i| fill_value::<u32>(i, 7) as u16)?;
    bench_pair::<u32, u64>(reducer, "u32", "u64", &[Op::Sum], |i| fill_value(i, 7))?;
    bench_pair::<i32, f64>(reducer, "i32", "f64", &[Op::Sum], |i| fill_value(i, 7))?;
    bench_pair::<u32, f64>(reducer, "u32", "f64", &[Op::Sum], |i| fill_value(i, 7))?;
    bench_pair::<i64, f64>(reducer, "i64", "f64", &[Op::Sum], |i| fill_value(i, 7))?;
    bench_pair::<u64, f64>(reducer, "u64", "f64", &[Op::Sum], |i| fill_value(i, 7))?;
    bench_pair::<f32, f64>(reducer, "f32", "f64", &[Op::Sum], |i| fill_value(i, 7))?;
    bench_pair::<f64, f64>(reducer, "f64", "f64", &[Op::Sum], |i| fill_value(i, 7))?;
    let halves = [Op::Sum, Op::Max, Op::Min];
    bench_pair::<f16, f32>(reducer, "f16", "f32", &halves, |i| f16::from_f32(fill_value(i, 7)))?;
    bench_pair::<bf16, f32>(reducer, "bf16", "f32", &halves, |i| bf16::from_f32(fill_value(i, 7)))?;
    for log2_bytes in [24, 26, 28, 30] {
        let n = (1usize << log2_bytes) / 2;
        bench_arg(
            reducer,
            "f16",
            &rotated_buffers(n, |i| f16::from_f32(fill_value(i, 7)))?,
        )?;
        bench_arg(
            reducer,
            "bf16",
            &rotated_buffers(n, |i| bf16::from_f32(fill_value(i, 7)))?,
        )?;
    }
    Ok(())
}

fn bench_pair<In: reduce::WidensTo<A>, A: Element + Default>(
    reducer: &mut Reducer,
    input: &str,
    accumulator: &str,
    ops: &[Op],
    value: impl Fn(usize) -> In,
) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&A::default())?;
    for log2_bytes in [24, 26, 28, 30] {
        let bytes = 1usize << log2_bytes;
        let n = bytes / std::mem::size_of::<In>();
        let buffers = rotated_buffers(n, &value)?;
        for &op in ops {
            let out = Output::from(&mut out);
            let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
                scope.reduce_into(
                    &buffers[i % buffers.len()],
                    Widened::<A>::new(op),
                    Over::Whole,
                    out,
                    &stream,
                )
            })?;
            println!(
                "reduce,{input}_as_{accumulator},{op},{n},{us:.2},{:.1}",
                bytes as f64 / us / 1e3
            );
        }
    }
    Ok(())
}

/// How a segmented bench cuts its input.
enum Segmentation {
    Rows { rows: usize, row_len: usize },
    Offsets(DeviceBuffer<u64>),
}

/// Segmented and row-wise sums and maxima of `T` (named `name`), and the
/// whole-input sum of the same elements, at 2^26 and 2^30 bytes.
fn bench_segmented<T: FromSmall>(reducer: &mut Reducer, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let element = std::mem::size_of::<T>();
    for log2_bytes in [26u32, 30] {
        let log2_n = log2_bytes - element.ilog2();
        let n = 1usize << log2_n;
        let bytes = n * element;
        let buffers = rotated_buffers(n, |i| fill_value::<T>(i, 7))?;
        let mut whole = DeviceBox::new(&T::default())?;
        let whole = Output::from(&mut whole);
        let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
            scope.reduce_into(&buffers[i % buffers.len()], Op::Sum, Over::Whole, whole, &stream)
        })?;
        println!("reduce,{name},sum,{n},{us:.2},{:.1}", bytes as f64 / us / 1e3);

        let mut layouts: Vec<(String, Segmentation)> = (0..=log2_n)
            .step_by(2)
            .map(|log2_rows| {
                let (rows, row_len) = (1usize << log2_rows, 1usize << (log2_n - log2_rows));
                (format!("rows_{rows}x{row_len}"), Segmentation::Rows { rows, row_len })
            })
            .collect();
        for mean in [10u64, 100, 1000, 10_000] {
            // Lengths 0, mean or 2·mean (from the bench's hash), up to n elements.
            let mut offsets = vec![0u64];
            while offsets[offsets.len() - 1] < n as u64 {
                let length = u64::from(fill_value::<u32>(offsets.len(), 11) - 1) * mean;
                offsets.push((offsets[offsets.len() - 1] + length).min(n as u64));
            }
            let offsets = DeviceBuffer::from_slice(&offsets)?;
            layouts.push((format!("segments_mean_{mean}"), Segmentation::Offsets(offsets)));
        }
        let only = std::env::var("REDUCE_BENCH_LAYOUTS").ok();
        let wanted = |layout: &str| only.as_deref().is_none_or(|list| list.split(',').any(|l| l == layout));
        // Probe layouts, timed only when named: offsets of equal segments
        // (`segments_fixed_<length>`) and of segments alternately empty and
        // twice the mean (`segments_halves_<mean>`).
        let named = |layout: &str| only.as_deref().is_some_and(|list| list.split(',').any(|l| l == layout));
        for length in [100u64, 1000, 1024, 10_000, 16_384] {
            for (layout, lengths) in [
                (format!("segments_fixed_{length}"), [length, length]),
                (format!("segments_halves_{length}"), [0, 2 * length]),
            ] {
                if named(&layout) {
                    let mut offsets = vec![0u64];
                    while offsets[offsets.len() - 1] < n as u64 {
                        let length = lengths[offsets.len() % 2];
                        offsets.push((offsets[offsets.len() - 1] + length).min(n as u64));
                    }
                    layouts.push((layout, Segmentation::Offsets(DeviceBuffer::from_slice(&offsets)?)));
                }
            }
        }
        for (layout, segmentation) in layouts.iter().filter(|(layout, _)| wanted(layout)) {
            let segments = match segmentation {
                Segmentation::Rows { rows, .. } => *rows,
                Segmentation::Offsets(offsets) => offsets.len() - 1,
            };
            let mut out = DeviceBuffer::from_slice(&vec![T::default(); segments])?;
            let shape = reducer.segmented_launch_shape::<T>(Op::Sum, segments, n)?;
            println!(
                "# {name}_{layout}: {} threads per segment, {} blocks per segment, {} blocks",
                shape.team_threads, shape.blocks_per_segment, shape.launch.blocks
            );
            let moved = (bytes + segments * element) as f64;
            for op in [Op::Sum, Op::Max] {
                let out = Output::from(&mut out);
                let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
                    let over = match segmentation {
                        Segmentation::Rows { rows, row_len } => Over::Rows {
                            rows: *rows,
                            len: *row_len,
                        },
                        Segmentation::Offsets(offsets) => Over::Segments(Input::from(offsets)),
                    };
                    scope.reduce_into(&buffers[i % buffers.len()], op, over, out, &stream)
                })?;
                println!("reduce,{name}_{layout},{op},{n},{us:.2},{:.1}", moved / us / 1e3);
            }
        }
    }
    Ok(())
}

/// The shapes and axes issue #32 times: `[2^k, 2^(28-k)]` over each axis,
/// a middle axis and two outer ones of a 3-d tensor (2^28 elements each).
fn axes_cases() -> Vec<(Vec<usize>, Vec<isize>)> {
    let mut cases = Vec::new();
    for k in [2, 8, 14, 20, 26] {
        for axis in [0, 1] {
            cases.push((vec![1 << k, 1 << (28 - k)], vec![axis]));
        }
    }
    cases.push((vec![64, 1 << 16, 64], vec![1]));
    cases.push((vec![1 << 10, 1 << 10, 1 << 8], vec![0, 2]));
    cases
}

/// Axis sums and maxima of 2^28 elements of `T` (one buffer: far past L2),
/// through `Scope::reduce_into` over `Over::Axes` into a preallocated output, and the
/// whole-input sum of the same buffer.
fn bench_axes<T: FromSmall>(reducer: &mut Reducer, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    use reduce::axes::Strided;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let n = 1usize << 28;
    let element = std::mem::size_of::<T>();
    let host: Vec<T> = (0..n).map(|i| fill_value::<T>(i, 7)).collect();
    let input = DeviceBuffer::from_slice(&host)?;
    drop(host);
    let mut whole = DeviceBox::new(&T::default())?;
    let whole = Output::from(&mut whole);
    let us = median_us(reducer, n, &stream, (&start, &stop), |_, scope| {
        scope.reduce_into(&input, Op::Sum, Over::Whole, whole, &stream)
    })?;
    println!(
        "reduce,{name},{n},all,sum,{us:.2},{:.1}",
        (n * element) as f64 / us / 1e3
    );
    for (shape, axes) in axes_cases() {
        let layout = Strided::contiguous(&shape)?;
        let outputs: usize = shape
            .iter()
            .enumerate()
            .filter(|(a, _)| !axes.contains(&(*a as isize)))
            .map(|(_, e)| e)
            .product();
        let mut out = DeviceBuffer::from_slice(&vec![T::default(); outputs])?;
        let shape_text = shape.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("x");
        let axes_text = axes.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("+");
        for op in [Op::Sum, Op::Max] {
            let out = Output::from(&mut out);
            let us = median_us(reducer, n, &stream, (&start, &stop), |_, scope| {
                scope.reduce_into(&input, op, Over::Axes(&layout, &axes), out, &stream)
            })?;
            let moved = ((n + outputs) * element) as f64;
            println!(
                "reduce,{name},{shape_text},{axes_text},{op},{us:.2},{:.1}",
                moved / us / 1e3
            );
        }
    }
    Ok(())
}

/// One row of `bench views`: shape, strides, offset, axes and what.
type ViewCase = (Vec<usize>, Vec<usize>, usize, Vec<isize>, &'static str);

/// The views of `bench views`: `X`'s dense rows beside those of
/// `T = X.transpose(0, 2)`, and a sliced view.
fn views_cases() -> Vec<ViewCase> {
    let x = (vec![512, 1024, 64], vec![65536, 64, 1]);
    let t = (vec![64, 1024, 512], vec![1, 64, 65536]);
    let mut cases = Vec::new();
    for (axes, x_axes, what) in [
        (vec![0, 1, 2], vec![0, 1, 2], "sum"),
        (vec![0, 2], vec![0, 2], "mean"),
        (vec![0, 2], vec![0, 2], "var"),
        (vec![2], vec![0], "argmax"),
        (vec![1], vec![1], "sum"),
        (vec![0], vec![2], "max"),
    ] {
        cases.push((x.0.clone(), x.1.clone(), 0, x_axes, what));
        cases.push((t.0.clone(), t.1.clone(), 0, axes, what));
    }
    // X[:, :, 1:]: rows of 63 from element 1, after X's rows of 64; then
    // X[:, 1:, :] (whole rows, a row's gap after each 1023) and X[:, :, :32]
    // (the first half of each row).
    cases.push((x.0.clone(), x.1.clone(), 0, vec![2], "sum"));
    cases.push((vec![512, 1024, 63], x.1.clone(), 1, vec![2], "sum"));
    cases.push((vec![512, 1023, 64], x.1.clone(), 64, vec![2], "sum"));
    cases.push((vec![512, 1024, 32], x.1.clone(), 0, vec![2], "sum"));
    cases
}

/// `bench views`: the reductions of [`views_cases`] over one buffer of
/// 2^25 `f32`s, each through `Scope::reduce_into` into a preallocated output.
fn bench_views(reducer: &mut Reducer) -> Result<(), Box<dyn std::error::Error>> {
    use reduce::axes::Strided;
    use reduce::Mean;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let n = 1usize << 25;
    let element = std::mem::size_of::<f32>();
    let host: Vec<f32> = (0..n).map(|i| fill_value::<f32>(i, 7)).collect();
    let input = DeviceBuffer::from_slice(&host)?;
    drop(host);
    for (shape, strides, offset, axes, what) in views_cases() {
        let layout = Strided::new(&shape, &strides)?.with_offset(offset);
        let outputs = layout.kept_outputs(&axes)?;
        let mut values = DeviceBuffer::from_slice(&vec![0f32; outputs])?;
        let mut positions = DeviceBuffer::from_slice(&vec![0u64; outputs])?;
        let mut means = DeviceBuffer::from_slice(&vec![0f64; outputs])?;
        let (values, positions) = (Output::from(&mut values), Output::from(&mut positions));
        let means = Output::from(&mut means);
        let over = Over::Axes(&layout, &axes);
        let us = median_us(reducer, n, &stream, (&start, &stop), |_, scope| match what {
            "sum" => scope.reduce_into(&input, Op::Sum, over, values, &stream),
            "max" => scope.reduce_into(&input, Op::Max, over, values, &stream),
            // The mean of f32s is an f64 (`MeanInput`).
            "mean" => scope.reduce_into(&input, Mean, over, means, &stream),
            "var" => scope.reduce_into(&input, Var::<f32>::new(1.0)?, over, values, &stream),
            _ => scope.reduce_into(&input, ArgMax, over, positions, &stream),
        })?;
        let join = |v: &[usize]| v.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("x");
        let mut shape_text = join(&shape);
        if strides != Strided::contiguous(&shape)?.strides() || offset != 0 {
            shape_text = format!(
                "{shape_text}@{}",
                strides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(":")
            );
        }
        if offset != 0 {
            shape_text = format!("{shape_text}+{offset}");
        }
        let axes_text = axes.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("+");
        let result_bytes = if matches!(what, "argmax" | "mean") { 8 } else { element };
        let read = layout.shape().iter().product::<usize>() * element;
        let moved = (read + outputs * result_bytes) as f64;
        println!(
            "reduce,f32,{shape_text},{axes_text},{what},{us:.2},{:.1}",
            moved / us / 1e3
        );
    }
    Ok(())
}

/// The shapes and axes of the statistics' rows: the whole input, rows of
/// 2^8 and columns of 2^8 (2^28 elements each).
fn statistics_cases() -> Vec<(Vec<usize>, Vec<isize>)> {
    vec![
        (vec![1 << 28], vec![0]),
        (vec![1 << 20, 1 << 8], vec![1]),
        (vec![1 << 8, 1 << 20], vec![0]),
    ]
}

/// The statistics of 2^28 elements of `F` (one buffer: far past L2), each
/// through `Scope::reduce_into` over `Over::Axes` into a preallocated output, beside
/// the sum of the same elements.
fn bench_statistics<F>(reducer: &mut Reducer, name: &str) -> Result<(), Box<dyn std::error::Error>>
where
    F: FromSmall + FloatElement + MomentsInput<F> + MomentsInput<f64> + LogSumExpInput,
{
    use reduce::axes::Strided;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let n = 1usize << 28;
    let element = std::mem::size_of::<F>();
    let host: Vec<F> = (0..n).map(|i| fill_value::<F>(i, 7)).collect();
    let input = DeviceBuffer::from_slice(&host)?;
    drop(host);
    for (shape, axes) in statistics_cases() {
        let layout = Strided::contiguous(&shape)?;
        let outputs = layout.kept_outputs(&axes)?;
        let mut values = DeviceBuffer::from_slice(&vec![F::default(); outputs])?;
        let mut wide = DeviceBuffer::from_slice(&vec![0f64; outputs])?;
        let mut counts = DeviceBuffer::from_slice(&vec![0u64; outputs])?;
        let mut flags = DeviceBuffer::from_slice(&vec![0u8; outputs])?;
        let shape_text = shape.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("x");
        let axes_text = axes.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("+");
        let (values, wide) = (Output::from(&mut values), Output::from(&mut wide));
        let (counts, flags) = (Output::from(&mut counts), Output::from(&mut flags));
        let over = Over::Axes(&layout, &axes);
        // One row: `what` over `over` into `out`, results of `result_bytes` bytes.
        macro_rules! time {
            ($statistic:literal, $result_bytes:expr, $what:expr, $out:expr) => {{
                let what = $what;
                let us = median_us(reducer, n, &stream, (&start, &stop), |_, scope| {
                    scope.reduce_into(&input, what, over, $out, &stream)
                })?;
                let moved = (n * element + outputs * $result_bytes) as f64;
                println!(
                    "reduce,{name},{shape_text},{axes_text},{},{us:.2},{:.1}",
                    $statistic,
                    moved / us / 1e3
                );
            }};
        }
        time!("sum", element, Op::Sum, values);
        time!("var", element, Var::<F>::new(1.0)?, values);
        time!("std", element, Std::<F>::new(1.0)?, values);
        if F::TYPE == ElementType::F32 {
            time!("var_f64", 8, Var::<f64>::new(1.0)?, wide);
        }
        time!("logsumexp", element, LogSumExp, values);
        time!("count_nonzero", 8, Count(Predicate::Nonzero), counts);
        time!("any_nan", 1, Any(Predicate::Nan), flags);
    }
    Ok(())
}

/// User operators against the built-ins they coincide with, in the same
/// process and scope: sum and max of f32, f64, i32 (f64 to 2^28), absmax
/// of f32; then f32 sums at 1 GiB over rows of 1024, segments (mean 1024)
/// and along the leading axis of 2^13 × 2^15.
fn bench_user(reducer: &mut Reducer, sizes: &[usize]) -> Result<(), Box<dyn std::error::Error>> {
    user_vs_built_in::<f32>(reducer, "f32", sizes)?;
    user_vs_built_in::<f64>(
        reducer,
        "f64",
        &sizes.iter().copied().filter(|&n| n <= 1 << 28).collect::<Vec<_>>(),
    )?;
    user_vs_built_in::<i32>(reducer, "i32", sizes)?;
    user_abs_max(reducer, sizes)?;
    user_pairs(reducer, sizes)?;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let sum = reduce::User::new(UserSum)?;
    let n = 1usize << 28;
    let buffers = rotated_buffers(n, |i| fill_value::<f32>(i, 7))?;
    let offsets: Vec<u64> = (0..=n / 1024)
        .map(|s| (s * 1024) as u64 - if s % 2 == 1 { 7 } else { 0 })
        .collect();
    let offsets = DeviceBuffer::from_slice(&offsets)?;
    let layout = reduce::axes::Strided::contiguous(&[1 << 13, 1 << 15])?;
    let places: [(&str, usize); 3] = [
        ("rows of 1024", n / 1024),
        ("segments of ~1024", n / 1024),
        ("axis 0 of 2^13 x 2^15", 1 << 15),
    ];
    for (place, results) in places {
        let mut values = DeviceBuffer::from_slice(&vec![0.0f32; results])?;
        for user in [false, true] {
            let values = Output::from(&mut values);
            let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
                let over = match results {
                    r if r == 1 << 15 => Over::Axes(&layout, &[0]),
                    _ if place.starts_with("rows") => Over::Rows {
                        rows: n / 1024,
                        len: 1024,
                    },
                    _ => Over::Segments(Input::from(&offsets)),
                };
                let input = &buffers[i % buffers.len()];
                match user {
                    true => scope.reduce_into(input, &sum, over, values, &stream),
                    false => scope.reduce_into(input, Op::Sum, over, values, &stream),
                }
            })?;
            let what = if user { "user sum" } else { "sum" };
            println!("user,f32,{what},{place},{n},{us:.2},{:.1}", (n * 4) as f64 / us / 1e3);
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug)]
struct UserSum;
impl<T: reduce::user::Scalar + Default> reduce::user::Operator<T> for UserSum {
    fn identity(&self) -> T {
        T::default()
    }
    fn combine<V: reduce::user::Value<T>>(&self, a: V, b: V) -> V {
        a + b
    }
}

#[derive(Clone, Copy, Debug)]
struct UserMax<T>(T);
impl<T: reduce::user::Scalar> reduce::user::Operator<T> for UserMax<T> {
    fn identity(&self) -> T {
        self.0
    }
    fn combine<V: reduce::user::Value<T>>(&self, a: V, b: V) -> V {
        a.max(b)
    }
}

#[derive(Clone, Copy, Debug)]
struct UserAbsMax;
impl reduce::user::Operator<f32> for UserAbsMax {
    fn identity(&self) -> f32 {
        0.0
    }
    fn combine<V: reduce::user::Value<f32>>(&self, a: V, b: V) -> V {
        a.max(b)
    }
    fn map<V: reduce::user::Value<f32>>(&self, x: V) -> V {
        x.abs()
    }
}

trait Lowest {
    const LOWEST: Self;
}
impl Lowest for f32 {
    const LOWEST: f32 = f32::NEG_INFINITY;
}
impl Lowest for f64 {
    const LOWEST: f64 = f64::NEG_INFINITY;
}
impl Lowest for i32 {
    const LOWEST: i32 = i32::MIN;
}

fn user_vs_built_in<T: FromSmall + reduce::user::Scalar + Lowest>(
    reducer: &mut Reducer,
    name: &str,
    sizes: &[usize],
) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&T::default())?;
    let (sum, max) = (reduce::User::new(UserSum)?, reduce::User::new(UserMax(T::LOWEST))?);
    for &n in sizes.iter().filter(|&&n| n >= 1 << 20) {
        let bytes = n * std::mem::size_of::<T>();
        let buffers = rotated_buffers(n, |i| fill_value::<T>(i, 7))?;
        let row = |what: &str, us: f64| println!("user,{name},{what},whole,{n},{us:.2},{:.1}", bytes as f64 / us / 1e3);
        let out = Output::from(&mut out);
        for (what, op) in [("sum", Op::Sum), ("max", Op::Max)] {
            let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
                scope.reduce_into(&buffers[i % buffers.len()], op, Over::Whole, out, &stream)
            })?;
            row(what, us);
            let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| {
                let input = &buffers[i % buffers.len()];
                match op {
                    Op::Sum => scope.reduce_into(input, &sum, Over::Whole, out, &stream),
                    _ => scope.reduce_into(input, &max, Over::Whole, out, &stream),
                }
            })?;
            row(&format!("user {what}"), us);
        }
    }
    Ok(())
}

/// A user absmax (map `abs`, combine `max`) against `Op::MaxAbs`, f32.
fn user_abs_max(reducer: &mut Reducer, sizes: &[usize]) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let mut out = DeviceBox::new(&0.0f32)?;
    let out = Output::from(&mut out);
    let abs_max = reduce::User::new(UserAbsMax)?;
    for &n in sizes.iter().filter(|&&n| n >= 1 << 20) {
        let buffers = rotated_buffers(n, |i| fill_value::<f32>(i, 7))?;
        for user in [false, true] {
            let us = median_us(reducer, n, &stream, (&start, &stop), |i, scope| match user {
                true => scope.reduce_into(&buffers[i % buffers.len()], &abs_max, Over::Whole, out, &stream),
                false => scope.reduce_into(&buffers[i % buffers.len()], Op::MaxAbs, Over::Whole, out, &stream),
            })?;
            let what = if user { "user max_abs" } else { "max_abs" };
            println!("user,f32,{what},whole,{n},{us:.2},{:.1}", (n * 4) as f64 / us / 1e3);
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug)]
struct SquaredDistance;
impl reduce::user::Operator<f32> for SquaredDistance {
    fn identity(&self) -> f32 {
        0.0
    }
    fn combine<V: reduce::user::Value<f32>>(&self, a: V, b: V) -> V {
        a + b
    }
    fn map_pair<V: reduce::user::Value<f32>>(&self, a: V, b: V) -> V {
        (a - b) * (a - b)
    }
}

/// Two inputs, f32: `dot` against a user sum of the default pair map (the
/// product: the same computation) and a user squared distance. Blocking
/// calls (there is no `_into` form over two user inputs yet), timed by
/// events on the reducer's stream around each call: each time includes
/// the result's copy to the host and the host's wait, alike for the three.
fn user_pairs(reducer: &mut Reducer, sizes: &[usize]) -> Result<(), Box<dyn std::error::Error>> {
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    let (sum, distance) = (reduce::User::new(UserSum)?, reduce::User::new(SquaredDistance)?);
    for &n in sizes.iter().filter(|&&n| (1 << 24..=1 << 28).contains(&n)) {
        let a = rotated_buffers(n, |i| fill_value::<f32>(i, 7))?;
        let b = rotated_buffers(n, |i| fill_value::<f32>(i, 11))?;
        for what in ["dot", "user pair sum", "user squared distance"] {
            let mut times = Vec::with_capacity(if n < 1 << 24 { 200 } else { 30 });
            for i in 0..times.capacity() + 3 {
                let (x, y) = (&a[i % a.len()], &b[i % b.len()]);
                start.record(reducer.stream())?;
                match what {
                    "dot" => reducer.dot(x, y).map(drop)?,
                    "user pair sum" => reducer.reduce_pair(x, y, &sum).map(drop)?,
                    _ => reducer.reduce_pair(x, y, &distance).map(drop)?,
                }
                stop.record(reducer.stream())?;
                stop.synchronize()?;
                if i >= 3 {
                    times.push(stop.elapsed_time_f32(&start)?);
                }
            }
            times.sort_by(f32::total_cmp);
            let us = times[times.len() / 2] as f64 * 1e3;
            println!("user,f32,{what},pairs,{n},{us:.2},{:.1}", (2 * n * 4) as f64 / us / 1e3);
        }
    }
    Ok(())
}

/// The first use of a user operator in this process: seconds from the
/// process's first bench call to the first result (trace, the driver's
/// compile of the module, the launch), then a second operator, then the
/// same operator again (cached).
fn bench_user_first(reducer: &mut Reducer) -> Result<(), Box<dyn std::error::Error>> {
    let data = DeviceBuffer::from_slice(&vec![1.0f32; 1 << 20])?;
    let started = std::time::Instant::now();
    let built_in = reducer.reduce(&data, Op::Sum)?;
    let built_in_s = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let sum = reduce::User::new(UserSum)?;
    let first = reducer.reduce(&data, &sum)?;
    let first_s = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let again = reducer.reduce(&data, &sum)?;
    let again_s = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let max = reduce::User::new(UserMax(f32::NEG_INFINITY))?;
    let other = reducer.reduce(&data, &max)?;
    let other_s = started.elapsed().as_secs_f64();
    println!(
        "user_first,f32,built-in sum first {built_in_s:.3} s ({built_in}),user sum first {first_s:.3} s ({first}),again {again_s:.6} s ({again}),user max first {other_s:.3} s ({other}),CUDA_CACHE_DISABLE={}",
        std::env::var("CUDA_CACHE_DISABLE").unwrap_or_default()
    );
    Ok(())
}
