//! `reduce::cudarc` on the GPU: every operation over cudarc buffers, views
//! and streams against a CPU reference on fresh random data (small integers,
//! as floats too, so every answer is exact); the async `_into` forms on two
//! streams, into sub-views; an input dropped right after its call; the
//! refused streams; the raw entry (`ScopeStream::from_raw`) over cudarc's
//! memory. Without a GPU each test says it was skipped.
#![cfg(feature = "cudarc")]

mod common;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaViewMut, DeviceRepr};
use rand::rngs::StdRng;
use rand::Rng;
use reduce::cudarc::half::{bf16, f16};
use reduce::cudarc::{CudarcElement, Reducer};
use reduce::{ArgInput, Element, Error, MeanInput, Op, WidensTo};
use std::sync::Arc;

/// The primary context of device 0 (cudarc's), or `None` after saying the
/// test was skipped.
fn context(test: &str) -> Option<Arc<CudaContext>> {
    common::gpu(test)?;
    Some(CudaContext::new(0).expect("cudarc's context of device 0"))
}

/// Element types under test, with values that are small integers.
trait Sample:
    Element + DeviceRepr + Default + CudarcElement<Kernel = Self> + ArgInput + MeanInput<Mean = f64> + WidensTo<f64>
{
    fn of(value: i32) -> Self;
    fn wide(self) -> f64;
}

macro_rules! sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn of(value: i32) -> Self {
                value as $t
            }
            fn wide(self) -> f64 {
                self as f64
            }
        }
    )*};
}
sample!(i32, i64, f32, f64);

macro_rules! unsigned_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn of(value: i32) -> Self {
                value.unsigned_abs() as $t
            }
            fn wide(self) -> f64 {
                self as f64
            }
        }
    )*};
}
unsigned_sample!(u32, u64);

/// `n` random values in `[-100, 100]` (their sums and dot products stay
/// exact in every type for the lengths used here).
fn values<T: Sample>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::of(rng.gen_range(-100..=100))).collect()
}

fn sum(data: &[f64]) -> f64 {
    data.iter().sum()
}

/// The first index of the largest (`max`) or smallest value.
fn arg(data: &[f64], max: bool) -> (u64, f64) {
    let mut best = 0;
    for (i, &x) in data.iter().enumerate() {
        if (max && x > data[best]) || (!max && x < data[best]) {
            best = i;
        }
    }
    (best as u64, data[best])
}

fn wide<T: Sample>(data: &[T]) -> Vec<f64> {
    data.iter().map(|x| x.wide()).collect()
}

/// Random segment offsets over `len` values (some segments empty), starting past 0.
fn random_offsets(rng: &mut StdRng, len: usize) -> Vec<u64> {
    let segments = rng.gen_range(1..40);
    let mut offsets: Vec<u64> = (0..=segments).map(|_| rng.gen_range(0..=len as u64)).collect();
    offsets.sort_unstable();
    offsets
}

/// The CPU's sum and max of each segment.
fn segment_sums(data: &[f64], offsets: &[u64]) -> Vec<f64> {
    offsets
        .windows(2)
        .map(|w| sum(&data[w[0] as usize..w[1] as usize]))
        .collect()
}

/// The blocking calls, of a random sub-view of a random buffer.
fn blocking_calls<T: Sample>(ctx: &Arc<CudaContext>, rng: &mut StdRng) {
    let stream = ctx.new_stream().unwrap();
    let n = rng.gen_range(1..200_000);
    let offset = rng.gen_range(0..16).min(n - 1);
    let data: Vec<T> = values(rng, n);
    let other: Vec<T> = values(rng, n);
    let (buf, other_buf) = (stream.clone_htod(&data).unwrap(), stream.clone_htod(&other).unwrap());
    let (view, other_view) = (buf.slice(offset..), other_buf.slice(offset..));
    let (x, y) = (wide(&data[offset..]), wide(&other[offset..]));
    let what = format!("{:?}, {} elements from {offset}", T::TYPE, n - offset);

    assert_eq!(reduce::cudarc::sum(&view).unwrap().wide(), sum(&x), "sum {what}");
    assert_eq!(
        reduce::cudarc::sum(&buf).unwrap().wide(),
        sum(&wide(&data)),
        "sum of the slice {what}"
    );
    let max = x.iter().copied().fold(f64::MIN, f64::max);
    let min = x.iter().copied().fold(f64::MAX, f64::min);
    assert_eq!(reduce::cudarc::max(&view).unwrap().wide(), max, "max {what}");
    assert_eq!(reduce::cudarc::min(&view).unwrap().wide(), min, "min {what}");
    assert_eq!(
        reduce::cudarc::sum_as::<f64, T>(&view).unwrap(),
        sum(&x),
        "sum_as f64 {what}"
    );
    assert_eq!(
        reduce::cudarc::mean(&view).unwrap(),
        sum(&x) / x.len() as f64,
        "mean {what}"
    );
    let (index, value) = reduce::cudarc::argmax(&view).unwrap();
    assert_eq!((index, value.wide()), arg(&x, true), "argmax {what}");
    let (index, value) = reduce::cudarc::argmin(&view).unwrap();
    assert_eq!((index, value.wide()), arg(&x, false), "argmin {what}");
    let products: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    if T::TYPE.size() == 8 || n < 1500 {
        // (f32 and 32-bit integer dot products of long inputs could round or wrap.)
        assert_eq!(
            reduce::cudarc::dot(&view, &other_view).unwrap().wide(),
            sum(&products),
            "dot {what}"
        );
    }

    let offsets = random_offsets(rng, x.len());
    let offsets_buf = stream.clone_htod(&offsets).unwrap();
    let sums = reduce::cudarc::segmented_reduce(&view, &offsets_buf, Op::Sum).unwrap();
    assert_eq!(
        wide(&stream.clone_dtoh(&sums).unwrap()),
        segment_sums(&x, &offsets),
        "segments {what}"
    );
    let row_len = rng.gen_range(1..=8);
    let rows = x.len() / row_len;
    let matrix = buf.slice(offset..offset + rows * row_len);
    let row_sums = reduce::cudarc::reduce_rows(&matrix, rows, row_len, Op::Sum).unwrap();
    let row_offsets: Vec<u64> = (0..=rows).map(|r| (r * row_len) as u64).collect();
    assert_eq!(
        wide(&stream.clone_dtoh(&row_sums).unwrap()),
        segment_sums(&x, &row_offsets),
        "{rows} rows of {row_len}, {what}"
    );
}

#[test]
fn blocking_calls_match_the_cpu() {
    let Some(ctx) = context("blocking_calls_match_the_cpu") else {
        return;
    };
    let mut rng = common::rng("blocking_calls_match_the_cpu");
    for _ in 0..3 {
        blocking_calls::<i32>(&ctx, &mut rng);
        blocking_calls::<u32>(&ctx, &mut rng);
        blocking_calls::<i64>(&ctx, &mut rng);
        blocking_calls::<u64>(&ctx, &mut rng);
        blocking_calls::<f32>(&ctx, &mut rng);
        blocking_calls::<f64>(&ctx, &mut rng);
    }
}

#[test]
fn half_2_buffers_widen_and_argmax() {
    let Some(ctx) = context("half_2_buffers_widen_and_argmax") else {
        return;
    };
    let mut rng = common::rng("half_2_buffers_widen_and_argmax");
    let stream = ctx.default_stream();
    let n = rng.gen_range(1..100_000);
    let ints: Vec<i32> = (0..n).map(|_| rng.gen_range(-100..=100)).collect();
    let x: Vec<f64> = ints.iter().map(|&v| v as f64).collect();
    let (max_index, max) = arg(&x, true);
    let (min_index, min) = arg(&x, false);
    let halves: Vec<f16> = ints.iter().map(|&v| f16::from_f32(v as f32)).collect();
    let brains: Vec<bf16> = ints.iter().map(|&v| bf16::from_f32(v as f32)).collect();
    let (h, b) = (stream.clone_htod(&halves).unwrap(), stream.clone_htod(&brains).unwrap());
    assert_eq!(reduce::cudarc::sum_as::<f32, f16>(&h).unwrap() as f64, sum(&x));
    assert_eq!(reduce::cudarc::sum_as::<f32, bf16>(&b).unwrap() as f64, sum(&x));
    assert_eq!(reduce::cudarc::reduce_as::<f32, f16>(&h, Op::Max).unwrap() as f64, max);
    assert_eq!(reduce::cudarc::mean(&b).unwrap(), (sum(&x) / n as f64) as f32);
    assert_eq!(reduce::cudarc::argmax(&h).unwrap(), (max_index, f16::from_f64(max)));
    assert_eq!(reduce::cudarc::argmin(&b).unwrap(), (min_index, bf16::from_f64(min)));

    // The async form: the value as f32, the index as u64.
    let mut reducer = Reducer::new(&ctx).unwrap();
    let (mut index, mut value) = (
        stream.alloc_zeros::<u64>(1).unwrap(),
        stream.alloc_zeros::<f32>(1).unwrap(),
    );
    reducer.arg_into(&h, Op::Min, &mut index, &mut value, &stream).unwrap();
    assert_eq!(
        (
            stream.clone_dtoh(&index).unwrap()[0],
            stream.clone_dtoh(&value).unwrap()[0] as f64
        ),
        (min_index, min)
    );
}

/// Element `i` of `out`, as a one-element view.
fn slot(out: &mut CudaSlice<i64>, i: usize) -> CudaViewMut<'_, i64> {
    out.slice_mut(i..i + 1)
}

/// What `enqueue_all` left running: the CPU's answers, and where the GPU's go.
struct Pending {
    /// The five whole-input results, then the segments', then the rows' (with a zero either side).
    expected: Vec<i64>,
    /// The segments' results, then the rows'.
    buffers: Vec<CudaSlice<i64>>,
    index: CudaSlice<u64>,
    max_index: u64,
}

/// Enqueues every `_into` form on `stream`, the whole-input ones into the
/// five elements of `out`, over random sub-views of inputs that are
/// dropped at once.
fn enqueue_all(reducer: &mut Reducer, rng: &mut StdRng, stream: &Arc<CudaStream>, out: &mut CudaSlice<i64>) -> Pending {
    let n = rng.gen_range(2..300_000);
    let offset = rng.gen_range(0..n / 2);
    let a: Vec<i64> = values(rng, n);
    let b: Vec<i64> = values(rng, n);
    let narrow: Vec<i32> = values(rng, n);
    let (a_buf, b_buf, narrow_buf) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
        stream.clone_htod(&narrow).unwrap(),
    );
    let (x, y) = (wide(&a[offset..]), wide(&b[offset..]));
    let (a_view, b_view) = (a_buf.slice(offset..), b_buf.slice(offset..));
    let mut expected = Vec::new();
    reducer
        .reduce_into(&a_view, Op::Sum, &mut slot(out, 0), stream)
        .unwrap();
    expected.push(sum(&x) as i64);
    reducer
        .reduce_into(&a_view, Op::Min, &mut slot(out, 1), stream)
        .unwrap();
    expected.push(x.iter().copied().fold(f64::MAX, f64::min) as i64);
    reducer
        .reduce_as_into(&narrow_buf.slice(offset..), Op::Sum, &mut slot(out, 2), stream)
        .unwrap();
    expected.push(sum(&wide(&narrow[offset..])) as i64);
    reducer.dot_into(&a_view, &b_view, &mut slot(out, 3), stream).unwrap();
    expected.push(x.iter().zip(&y).map(|(p, q)| p * q).sum::<f64>() as i64);
    let mut index = stream.alloc_zeros::<u64>(1).unwrap();
    reducer
        .arg_into(&a_view, Op::Max, &mut index, &mut slot(out, 4), stream)
        .unwrap();
    let (max_index, max) = arg(&x, true);
    expected.push(max as i64);

    let offsets = random_offsets(rng, x.len());
    let offsets_buf = stream.clone_htod(&offsets).unwrap();
    let mut segments = stream.alloc_zeros::<i64>(offsets.len() - 1).unwrap();
    reducer
        .segmented_reduce_into(&a_view, &offsets_buf, Op::Sum, &mut segments, stream)
        .unwrap();
    let rows = x.len() / 3;
    let mut row_sums = stream.alloc_zeros::<i64>(rows + 2).unwrap();
    let mut row_view = row_sums.slice_mut(1..rows + 1);
    reducer
        .reduce_rows_into(
            &a_buf.slice(offset..offset + rows * 3),
            rows,
            3,
            Op::Sum,
            &mut row_view,
            stream,
        )
        .unwrap();
    // Dropped right after their calls: freed once the kernels have read them.
    drop((a_buf, b_buf, narrow_buf, offsets_buf));

    let row_offsets: Vec<u64> = (0..=rows).map(|r| (r * 3) as u64).collect();
    expected.extend(segment_sums(&x, &offsets).iter().map(|&s| s as i64));
    expected.push(0);
    expected.extend(segment_sums(&x, &row_offsets).iter().map(|&s| s as i64));
    expected.push(0);
    Pending {
        expected,
        buffers: vec![segments, row_sums],
        index,
        max_index,
    }
}

#[test]
fn into_forms_on_two_streams_into_sub_views() {
    let Some(ctx) = context("into_forms_on_two_streams_into_sub_views") else {
        return;
    };
    let mut rng = common::rng("into_forms_on_two_streams_into_sub_views");
    let mut reducer = Reducer::new(&ctx).unwrap();
    let streams = [ctx.new_stream().unwrap(), ctx.new_stream().unwrap()];
    for round in 0..4 {
        let mut outs: Vec<CudaSlice<i64>> = streams.iter().map(|s| s.alloc_zeros::<i64>(5).unwrap()).collect();
        let mut pending = Vec::new();
        for (stream, out) in streams.iter().zip(outs.iter_mut()) {
            pending.push(enqueue_all(&mut reducer, &mut rng, stream, out));
        }
        for ((stream, out), pending) in streams.iter().zip(&outs).zip(pending) {
            let mut got = stream.clone_dtoh(out).unwrap();
            for buffer in &pending.buffers {
                got.extend(stream.clone_dtoh(buffer).unwrap());
            }
            assert_eq!(got, pending.expected, "round {round}");
            assert_eq!(
                stream.clone_dtoh(&pending.index).unwrap(),
                [pending.max_index],
                "round {round}"
            );
        }
    }
}

#[test]
fn an_input_dropped_after_enqueue_is_read_before_it_is_freed() {
    let Some(ctx) = context("an_input_dropped_after_enqueue_is_read_before_it_is_freed") else {
        return;
    };
    let mut rng = common::rng("an_input_dropped_after_enqueue_is_read_before_it_is_freed");
    let (allocating, reducing) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut reducer = Reducer::new(&ctx).unwrap();
    let n = 1 << 25;
    for _ in 0..3 {
        let data: Vec<i64> = values(&mut rng, n);
        let expected = sum(&wide(&data)) as i64;
        let input = allocating.clone_htod(&data).unwrap();
        let mut outs = reducing.alloc_zeros::<i64>(8).unwrap();
        // Work ahead of the last call on `reducing`, so that it runs late.
        for slot in 0..8 {
            reducer
                .reduce_into(&input, Op::Sum, &mut outs.slice_mut(slot..slot + 1), &reducing)
                .unwrap();
        }
        drop(input);
        // Memory the freed input may be reused for, overwritten at once.
        let reuse = allocating.alloc_zeros::<i64>(n).unwrap();
        let reuse_sum = reduce::cudarc::sum(&reuse).unwrap();
        assert_eq!(reuse_sum, 0);
        assert_eq!(reducing.clone_dtoh(&outs).unwrap(), [expected; 8]);
    }
}

#[test]
fn more_streams_than_workspaces() {
    let Some(ctx) = context("more_streams_than_workspaces") else {
        return;
    };
    let mut rng = common::rng("more_streams_than_workspaces");
    let mut reducer = Reducer::new(&ctx).unwrap();
    let streams: Vec<_> = (0..13).map(|_| ctx.new_stream().unwrap()).collect();
    let mut pending = Vec::new();
    for round in 0..3 {
        for stream in &streams {
            let data: Vec<u64> = {
                let n = rng.gen_range(1..400_000);
                values(&mut rng, n)
            };
            let input = stream.clone_htod(&data).unwrap();
            let mut out = stream.alloc_zeros::<u64>(1).unwrap();
            reducer.reduce_into(&input, Op::Sum, &mut out, stream).unwrap();
            pending.push((round, sum(&wide(&data)) as u64, out, Arc::clone(stream)));
        }
    }
    for (round, expected, out, stream) in pending {
        assert_eq!(stream.clone_dtoh(&out).unwrap(), [expected], "round {round}");
    }
}

#[test]
fn refused_calls_say_why() {
    let Some(ctx) = context("refused_calls_say_why") else {
        return;
    };
    let stream = ctx.new_stream().unwrap();
    let mut reducer = Reducer::new(&ctx).unwrap();
    let input = stream.clone_htod(&[1.0f32, 2.0]).unwrap();
    let empty = stream.alloc_zeros::<f32>(0).unwrap();
    let mut two = stream.alloc_zeros::<f32>(2).unwrap();
    let mut one = stream.alloc_zeros::<f32>(1).unwrap();
    assert!(matches!(
        reducer.reduce_into(&input, Op::Sum, &mut two, &stream),
        Err(Error::OutputLength {
            output: "out",
            found: 2
        })
    ));
    assert!(matches!(
        reducer.reduce(&empty, Op::Max),
        Err(Error::Empty { op: Op::Max })
    ));
    let per_thread = ctx.per_thread_stream();
    assert!(matches!(
        reducer.reduce_into(&input, Op::Sum, &mut one, &per_thread),
        Err(Error::UnsupportedStream(_))
    ));
    stream
        .begin_capture(cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let captured = reducer.reduce_into(&input, Op::Sum, &mut one, &stream);
    let _ = stream.end_capture(cudarc::driver::sys::CUgraphInstantiate_flags(0));
    assert!(matches!(captured, Err(Error::UnsupportedStream(_))), "{captured:?}");
    let other = CudaContext::new_non_primary(0, 0).unwrap();
    let other_stream = other.new_stream().unwrap();
    let refused = reducer.reduce_into(&input, Op::Sum, &mut one, &other_stream);
    assert!(matches!(refused, Err(Error::UnsupportedStream(_))), "{refused:?}");
    // Still usable, and nothing was written.
    reducer.reduce_into(&input, Op::Sum, &mut one, &stream).unwrap();
    assert_eq!(stream.clone_dtoh(&one).unwrap(), [3.0]);
}

#[test]
fn raw_entry_over_cudarc_memory() {
    let Some(ctx) = context("raw_entry_over_cudarc_memory") else {
        return;
    };
    let mut rng = common::rng("raw_entry_over_cudarc_memory");
    let stream = ctx.new_stream().unwrap();
    let data: Vec<i32> = {
        let n = rng.gen_range(1..100_000);
        values(&mut rng, n)
    };
    let input = stream.clone_htod(&data).unwrap();
    let mut out = stream.alloc_zeros::<i32>(1).unwrap();
    ctx.bind_to_thread().unwrap();
    let mut reducer = reduce::Reducer::new().unwrap();
    {
        use cudarc::driver::{DevicePtr, DevicePtrMut};
        let (address, _read) = input.device_ptr(&stream);
        let (out_address, _write) = out.device_ptr_mut(&stream);
        reducer
            .scope(|scope| {
                // SAFETY: the buffers and the stream outlive the scope, which
                // waits for the stream; nothing else touches them meanwhile.
                let (input, out, on) = unsafe {
                    (
                        reduce::Input::<i32>::from_raw(address, data.len()),
                        reduce::Output::<i32>::from_raw(out_address, 1),
                        reduce::ScopeStream::from_raw(stream.cu_stream() as cust::sys::CUstream),
                    )
                };
                scope.reduce_into(input, Op::Sum, out, on)
            })
            .unwrap();
    }
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [sum(&wide(&data)) as i32]);
}
