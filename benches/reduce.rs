//! Criterion benches: every op and argmax × i32, u32, i64, u64, f32, f64 ×
//! n = 2^10 … 2^30 (×4 steps) and 10^8, throughput in bytes of input.
//!
//! Each sample is timed with device events around `iters` back-to-back
//! `reduce_into` calls (so it measures GPU time, not host wake-ups), rotating
//! over enough buffers to cover 4× the L2. Without a GPU it says so and exits.
//! For the side-by-side comparison with CUB, use `examples/bench.rs`.
//!
//! Group `ladder`: every rung of the seeds' ladder (256 threads) and the
//! production kernel, i32 sum of 2^24 elements. Group `wide`: reductions into
//! a wider accumulator (`Widened`) and argmax of `f16`/`bf16`, 2^28 bytes
//! read each (at 256 MiB, one buffer already covers 4× the L2). Group `segmented`: f32 sums of the rows
//! of 2^26-element matrices from 1 × 2^26 to 2^24 × 4, and of segments of
//! random lengths (mean 100). Group `axes`: f32 sums along each axis of a
//! 2^13 × 2^13 matrix and the middle axis of 64 × 2^14 × 64, argmax along
//! rows, and an i32 column sum widened to i64 (2^26 elements each).
//! Group `statistics`: f32 var, logsumexp and count_nonzero of 2^26
//! elements, whole and over rows of 256, and var over segments of random
//! lengths (mean 256).

use criterion::{BenchmarkId, Criterion, Throughput};
use cust::event::{Event, EventFlags};
use cust::memory::{DeviceBox, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use reduce::axes::Strided;
use reduce::ladder::{self, Ladder, Rung};
use reduce::statistics::Predicate;
use reduce::{ArgMax, Count, Element, Input, LogSumExp, Op, Output, Over, Reducer, Scope, Var, Widened};
use std::time::Duration;

/// A stream and two events: times `iters` calls enqueued back to back.
struct DeviceTimer {
    stream: Stream,
    start: Event,
    stop: Event,
}

impl DeviceTimer {
    fn new() -> Self {
        DeviceTimer {
            stream: Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream"),
            start: Event::new(EventFlags::DEFAULT).expect("event"),
            stop: Event::new(EventFlags::DEFAULT).expect("event"),
        }
    }

    /// The device time of `iters` calls of `call(i, scope, stream)`, which
    /// enqueues call `i`, all in one scope of `reducer`.
    fn time<'b>(
        &'b self,
        reducer: &mut Reducer,
        iters: u64,
        mut call: impl FnMut(usize, &mut Scope<'_, 'b>, &'b Stream) -> reduce::Result<()>,
    ) -> Duration {
        reducer
            .scope(|scope| {
                self.start.record(&self.stream)?;
                for i in 0..iters as usize {
                    call(i, scope, &self.stream)?;
                }
                self.stop.record(&self.stream)?;
                Ok(())
            })
            .unwrap();
        Duration::from_secs_f64(self.stop.elapsed_time_f32(&self.start).unwrap() as f64 * 1e-3)
    }
}

fn bench_type<T: Element + reduce::ArgInput + Default + From<u8>>(c: &mut Criterion, name: &str, max_log2: u32) {
    let mut sizes: Vec<usize> = (10..=max_log2).step_by(2).map(|e| 1usize << e).collect();
    sizes.push(100_000_000);
    let mut reducer = Reducer::new().expect("Reducer::new");
    let timer = DeviceTimer::new();
    let mut out = DeviceBox::new(&T::default()).expect("output");
    let mut group = c.benchmark_group(format!("reduce_{name}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    for n in sizes {
        let bytes = n * std::mem::size_of::<T>();
        let host: Vec<T> = (0..n).map(|i| T::from(1 + (i % 3) as u8)).collect();
        let count = ((256usize << 20) / bytes).clamp(1, 64);
        let buffers: Vec<_> = (0..count)
            .map(|_| DeviceBuffer::from_slice(&host).expect("upload"))
            .collect();
        group.throughput(Throughput::Bytes(bytes as u64));
        for op in Op::ALL.into_iter().filter(|op| op.is_defined_for(T::TYPE)) {
            group.bench_function(BenchmarkId::new(op.name(), n), |b| {
                b.iter_custom(|iters| {
                    let out = Output::from(&mut out);
                    timer.time(&mut reducer, iters, |i, scope, stream| {
                        scope.reduce_into(&buffers[i % count], op, Over::Whole, out, stream)
                    })
                })
            });
        }
        let mut index = DeviceBox::new(&0u64).expect("output");
        group.bench_function(BenchmarkId::new("argmax", n), |b| {
            b.iter_custom(|iters| {
                let index = Output::from(&mut index);
                timer.time(&mut reducer, iters, |i, scope, stream| {
                    scope.reduce_into(&buffers[i % count], ArgMax, Over::Whole, index, stream)
                })
            })
        });
    }
    group.finish();
}

fn bench_ladder(c: &mut Criterion) {
    const N: usize = 1 << 24;
    let host: Vec<i32> = (0..N).map(|i| (i % 7) as i32 - 3).collect();
    let input = DeviceBuffer::from_slice(&host).expect("upload");
    let mut reducer = Reducer::new().expect("Reducer::new");
    let timer = DeviceTimer::new();
    let mut out = DeviceBox::new(&0i32).expect("output");
    let mut group = c.benchmark_group("ladder");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    group.throughput(Throughput::Bytes((N * 4) as u64));
    // `None`: the production kernel.
    let strategies = Rung::ALL
        .iter()
        .map(|&rung| {
            (
                rung.to_string(),
                Some(Ladder::new(rung, 256).expect("valid block size")),
            )
        })
        .chain([("production".to_string(), None)]);
    for (name, strategy) in strategies {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let out = Output::from(&mut out);
                timer.time(&mut reducer, iters, |_, scope, stream| match strategy {
                    Some(rung) => ladder::reduce_into(scope, &input, Op::Sum, rung, out, stream),
                    None => scope.reduce_into(&input, Op::Sum, Over::Whole, out, stream),
                })
            })
        });
    }
    group.finish();
}

/// Group `wide`: the widening reductions (`Widened`) and argmax of the
/// half floats, 2^28 bytes read each.
fn bench_wide(c: &mut Criterion) {
    use reduce::half::{bf16, f16};
    let mut group = c.benchmark_group("wide");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    group.throughput(Throughput::Bytes(1 << 28));
    bench_pair::<i8, i64>(&mut group, "sum_i8_as_i64", Op::Sum, |i| (i % 3) as i8 + 1);
    bench_pair::<u8, u64>(&mut group, "sum_u8_as_u64", Op::Sum, |i| (i % 3) as u8 + 1);
    bench_pair::<i32, i64>(&mut group, "sum_i32_as_i64", Op::Sum, |i| (i % 3) as i32 + 1);
    bench_pair::<f32, f64>(&mut group, "sum_f32_as_f64", Op::Sum, |i| (i % 3) as f32 + 1.0);
    bench_pair::<f16, f32>(&mut group, "sum_f16_as_f32", Op::Sum, |i| {
        f16::from_f32((i % 3) as f32 + 1.0)
    });
    bench_pair::<f16, f32>(&mut group, "max_f16_as_f32", Op::Max, |i| {
        f16::from_f32((i % 3) as f32 + 1.0)
    });
    bench_pair::<bf16, f32>(&mut group, "sum_bf16_as_f32", Op::Sum, |i| {
        bf16::from_f32((i % 3) as f32 + 1.0)
    });
    bench_half_argmax::<f16>(&mut group, "argmax_f16", f16::from_f32);
    bench_half_argmax::<bf16>(&mut group, "argmax_bf16", bf16::from_f32);
    group.finish();
}

/// argmax of 2^28 bytes of a half-float type (compare with `sum_f16_as_f32`).
fn bench_half_argmax<H: reduce::ArgInput>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    from_f32: impl Fn(f32) -> H,
) {
    let n = (1usize << 28) / std::mem::size_of::<H>();
    let host: Vec<H> = (0..n).map(|i| from_f32((i % 3) as f32 + 1.0)).collect();
    let input = DeviceBuffer::from_slice(&host).expect("upload");
    let mut reducer = Reducer::new().expect("Reducer::new");
    let timer = DeviceTimer::new();
    let mut index = DeviceBox::new(&0u64).expect("output");
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let index = Output::from(&mut index);
            timer.time(&mut reducer, iters, |_, scope, stream| {
                scope.reduce_into(&input, ArgMax, Over::Whole, index, stream)
            })
        })
    });
}

fn bench_pair<In: reduce::WidensTo<A>, A: Element + Default>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    op: Op,
    value: impl Fn(usize) -> In,
) {
    let n = (1usize << 28) / std::mem::size_of::<In>();
    let host: Vec<In> = (0..n).map(value).collect();
    let input = DeviceBuffer::from_slice(&host).expect("upload");
    let mut reducer = Reducer::new().expect("Reducer::new");
    let timer = DeviceTimer::new();
    let mut out = DeviceBox::new(&A::default()).expect("output");
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let out = Output::from(&mut out);
            timer.time(&mut reducer, iters, |_, scope, stream| {
                scope.reduce_into(&input, Widened::<A>::new(op), Over::Whole, out, stream)
            })
        })
    });
}

/// Group `segmented`: row-wise and segmented f32 sums of 2^26 elements.
fn bench_segmented(c: &mut Criterion) {
    const N: usize = 1 << 26;
    let host: Vec<f32> = (0..N).map(|i| (i % 3) as f32 + 1.0).collect();
    let input = DeviceBuffer::from_slice(&host).expect("upload");
    let mut reducer = Reducer::new().expect("Reducer::new");
    let timer = DeviceTimer::new();
    let mut group = c.benchmark_group("segmented");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    group.throughput(Throughput::Bytes((N * 4) as u64));
    for log2_rows in [0, 4, 8, 12, 16, 20, 24] {
        let (rows, row_len) = (1usize << log2_rows, N >> log2_rows);
        let mut out = DeviceBuffer::from_slice(&vec![0.0f32; rows]).expect("output");
        group.bench_function(format!("rows_{rows}x{row_len}"), |b| {
            b.iter_custom(|iters| {
                let out = Output::from(&mut out);
                timer.time(&mut reducer, iters, |_, scope, stream| {
                    scope.reduce_into(&input, Op::Sum, Over::Rows { rows, len: row_len }, out, stream)
                })
            })
        });
    }
    // Lengths 0 to 200, mean 100, cut at N.
    let mut offsets = vec![0u64];
    while offsets[offsets.len() - 1] < N as u64 {
        let length = (offsets.len() as u64).wrapping_mul(2_654_435_761) % 201;
        offsets.push((offsets[offsets.len() - 1] + length).min(N as u64));
    }
    let segments = offsets.len() - 1;
    let offsets = DeviceBuffer::from_slice(&offsets).expect("upload");
    let mut out = DeviceBuffer::from_slice(&vec![0.0f32; segments]).expect("output");
    group.bench_function("segments_mean_100", |b| {
        b.iter_custom(|iters| {
            let out = Output::from(&mut out);
            timer.time(&mut reducer, iters, |_, scope, stream| {
                scope.reduce_into(&input, Op::Sum, Over::Segments(Input::from(&offsets)), out, stream)
            })
        })
    });
    group.finish();
}

/// The `axes` group (see the crate docs): every call through its `_into` form.
fn bench_axes(c: &mut Criterion) {
    const N: usize = 1 << 26;
    let mut reducer = Reducer::new().expect("Reducer::new");
    let timer = DeviceTimer::new();
    let host: Vec<f32> = (0..N).map(|i| (i % 5) as f32).collect();
    let input = DeviceBuffer::from_slice(&host).expect("upload");
    let ints = DeviceBuffer::from_slice(&vec![i32::MAX; N]).expect("upload");
    let mut group = c.benchmark_group("axes");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    group.throughput(Throughput::Bytes((N * 4) as u64));
    let square = Strided::contiguous(&[1 << 13, 1 << 13]).expect("layout");
    let middle = Strided::contiguous(&[64, 1 << 14, 64]).expect("layout");
    for (name, layout, axis) in [
        ("sum_columns_8192x8192", square, 0),
        ("sum_rows_8192x8192", square, 1),
        ("sum_middle_64x16384x64", middle, 1),
    ] {
        let mut out =
            DeviceBuffer::from_slice(&vec![0.0f32; layout.kept_outputs(&[axis]).expect("axes")]).expect("output");
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let out = Output::from(&mut out);
                timer.time(&mut reducer, iters, |_, scope, stream| {
                    scope.reduce_into(&input, Op::Sum, Over::Axes(&layout, &[axis]), out, stream)
                })
            })
        });
    }
    let mut positions = DeviceBuffer::from_slice(&[0u64; 1 << 13]).expect("output");
    group.bench_function("argmax_rows_8192x8192", |b| {
        b.iter_custom(|iters| {
            let out = Output::from(&mut positions);
            timer.time(&mut reducer, iters, |_, scope, stream| {
                scope.reduce_into(&input, ArgMax, Over::Axes(&square, &[1]), out, stream)
            })
        })
    });
    let mut wide = DeviceBuffer::from_slice(&[0i64; 1 << 13]).expect("output");
    group.bench_function("sum_i32_as_i64_columns_8192x8192", |b| {
        b.iter_custom(|iters| {
            let out = Output::from(&mut wide);
            timer.time(&mut reducer, iters, |_, scope, stream| {
                scope.reduce_into(
                    &ints,
                    Widened::<i64>::new(Op::Sum),
                    Over::Axes(&square, &[0]),
                    out,
                    stream,
                )
            })
        })
    });
    group.finish();
}

/// The `statistics` group (see the crate docs).
fn bench_statistics(c: &mut Criterion) {
    const N: usize = 1 << 26;
    let mut reducer = Reducer::new().expect("Reducer::new");
    let timer = DeviceTimer::new();
    let host: Vec<f32> = (0..N).map(|i| (i % 7) as f32 - 3.0).collect();
    let input = DeviceBuffer::from_slice(&host).expect("upload");
    let mut group = c.benchmark_group("statistics");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    group.throughput(Throughput::Bytes((N * 4) as u64));
    let var = Var::<f32>::new(1.0).expect("a valid correction");
    for (shape, layout) in [
        ("whole", Strided::contiguous(&[N]).expect("layout")),
        ("rows_262144x256", Strided::contiguous(&[N / 256, 256]).expect("layout")),
    ] {
        let outputs = layout.kept_outputs(&[-1]).expect("axes");
        let mut floats = DeviceBuffer::from_slice(&vec![0.0f32; outputs]).expect("output");
        let mut counts = DeviceBuffer::from_slice(&vec![0u64; outputs]).expect("output");
        group.bench_function(format!("var_{shape}"), |b| {
            b.iter_custom(|iters| {
                let out = Output::from(&mut floats);
                timer.time(&mut reducer, iters, |_, scope, stream| {
                    scope.reduce_into(&input, var, Over::Axes(&layout, &[-1]), out, stream)
                })
            })
        });
        group.bench_function(format!("logsumexp_{shape}"), |b| {
            b.iter_custom(|iters| {
                let out = Output::from(&mut floats);
                timer.time(&mut reducer, iters, |_, scope, stream| {
                    scope.reduce_into(&input, LogSumExp, Over::Axes(&layout, &[-1]), out, stream)
                })
            })
        });
        group.bench_function(format!("count_nonzero_{shape}"), |b| {
            b.iter_custom(|iters| {
                let out = Output::from(&mut counts);
                timer.time(&mut reducer, iters, |_, scope, stream| {
                    let count = Count(Predicate::Nonzero);
                    scope.reduce_into(&input, count, Over::Axes(&layout, &[-1]), out, stream)
                })
            })
        });
    }
    // Segments of random lengths 0..512 (a fixed seed: the same every run).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut offsets = vec![0u64];
    while *offsets.last().expect("an offset") < (N - 512) as u64 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        offsets.push(offsets.last().expect("an offset") + state % 512);
    }
    let segments = offsets.len() - 1;
    let offsets = DeviceBuffer::from_slice(&offsets).expect("upload");
    let mut floats = DeviceBuffer::from_slice(&vec![0.0f32; segments]).expect("output");
    group.bench_function("var_segments_mean_256", |b| {
        b.iter_custom(|iters| {
            let out = Output::from(&mut floats);
            timer.time(&mut reducer, iters, |_, scope, stream| {
                scope.reduce_into(&input, var, Over::Segments(Input::from(&offsets)), out, stream)
            })
        })
    });
    group.finish();
}

fn main() {
    let _context = match cust::quick_init() {
        Ok(context) => context,
        Err(e) => {
            println!("benches skipped: no CUDA device ({e})");
            return;
        }
    };
    let mut c = Criterion::default().configure_from_args();
    bench_type::<f32>(&mut c, "f32", 30);
    bench_type::<i32>(&mut c, "i32", 30);
    bench_type::<u32>(&mut c, "u32", 30);
    bench_type::<f64>(&mut c, "f64", 28);
    bench_type::<i64>(&mut c, "i64", 28);
    bench_type::<u64>(&mut c, "u64", 28);
    bench_ladder(&mut c);
    bench_wide(&mut c);
    bench_segmented(&mut c);
    bench_axes(&mut c);
    bench_statistics(&mut c);
    c.final_summary();
}
