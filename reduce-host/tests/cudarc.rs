//! `reduce::cudarc` on the GPU: every operation over cudarc buffers, views
//! and streams against a CPU reference on fresh random data (small integers,
//! as floats too, so every answer is exact); every what (`Op`s, `ArgMax`,
//! `Var`, `MeanVar`, `Count`) over every where (`Over::Axes`, `Segments`,
//! `Rows`), `reduce_into` bit for bit as `reduce_over`; the async
//! `reduce_into` forms on two streams, into sub-views; an input dropped
//! right after its call; the refused streams; the raw entry
//! (`ScopeStream::from_raw`) over cudarc's memory. Without a GPU each test
//! says it was skipped.
#![cfg(feature = "cudarc")]

mod common;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaViewMut, DevicePtr, DeviceRepr};
use rand::rngs::StdRng;
use rand::Rng;
use reduce::axes::Strided;
use reduce::cudarc::half::{bf16, f16};
use reduce::cudarc::{CudarcElement, Reducer};
use reduce::element::DeviceValue;
use reduce::{
    ArgInput, ArgMax, ArgMin, Count, Element, Error, MeanInput, MeanVar, Op, Over, Predicate, Reduction, Var, Widened,
    WidensTo,
};
use std::sync::Arc;

/// The primary context of device 0 (cudarc's), or `None` after saying the
/// test was skipped.
fn context(test: &str) -> Option<Arc<CudaContext>> {
    common::gpu(test)?;
    Some(CudaContext::new(0).expect("cudarc's context of device 0"))
}

/// Element types under test, with values that are small integers.
trait Sample:
    Element
    + DeviceRepr
    + Default
    + CudarcElement<Kernel = Self>
    + DeviceValue<Cudarc = Self>
    + ArgInput
    + MeanInput<Mean = f64>
    + WidensTo<f64>
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

    assert_eq!(reduce::sum(&view).unwrap().wide(), sum(&x), "sum {what}");
    assert_eq!(
        reduce::sum(&buf).unwrap().wide(),
        sum(&wide(&data)),
        "sum of the slice {what}"
    );
    let max = x.iter().copied().fold(f64::MIN, f64::max);
    let min = x.iter().copied().fold(f64::MAX, f64::min);
    assert_eq!(reduce::max(&view).unwrap().wide(), max, "max {what}");
    assert_eq!(reduce::min(&view).unwrap().wide(), min, "min {what}");
    assert_eq!(
        reduce::reduce(&view, Widened::<f64>::new(Op::Sum)).unwrap(),
        sum(&x),
        "sum widened to f64 {what}"
    );
    assert_eq!(reduce::mean(&view).unwrap(), sum(&x) / x.len() as f64, "mean {what}");
    let (index, value) = reduce::argmax(&view).unwrap();
    assert_eq!((index, value.wide()), arg(&x, true), "argmax {what}");
    let (index, value) = reduce::argmin(&view).unwrap();
    assert_eq!((index, value.wide()), arg(&x, false), "argmin {what}");
    let products: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    if T::TYPE.size() == 8 || n < 1500 {
        // (f32 and 32-bit integer dot products of long inputs could round or wrap.)
        assert_eq!(
            reduce::dot(&view, &other_view).unwrap().wide(),
            sum(&products),
            "dot {what}"
        );
    }

    let offsets = random_offsets(rng, x.len());
    let offsets_buf = stream.clone_htod(&offsets).unwrap();
    let sums = reduce::reduce_over(&view, Op::Sum, Over::Segments(&offsets_buf))
        .unwrap()
        .values;
    assert_eq!(
        wide(&stream.clone_dtoh(&sums).unwrap()),
        segment_sums(&x, &offsets),
        "segments {what}"
    );
    let row_len = rng.gen_range(1..=8);
    let rows = x.len() / row_len;
    let matrix = buf.slice(offset..offset + rows * row_len);
    let row_sums = reduce::reduce_over(&matrix, Op::Sum, Over::Rows { rows, len: row_len })
        .unwrap()
        .values;
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
    assert_eq!(
        reduce::reduce(&h, Widened::<f32>::new(Op::Sum)).unwrap() as f64,
        sum(&x)
    );
    assert_eq!(
        reduce::reduce(&b, Widened::<f32>::new(Op::Sum)).unwrap() as f64,
        sum(&x)
    );
    assert_eq!(reduce::reduce(&h, Widened::<f32>::new(Op::Max)).unwrap() as f64, max);
    assert_eq!(reduce::mean(&b).unwrap(), (sum(&x) / n as f64) as f32);
    assert_eq!(reduce::argmax(&h).unwrap(), (max_index, f16::from_f64(max)));
    assert_eq!(reduce::argmin(&b).unwrap(), (min_index, bf16::from_f64(min)));

    // The reducer's blocking call gives the value as the kernels' type, half 1.8's.
    let mut reducer = Reducer::new(&ctx).unwrap();
    assert_eq!(
        reducer.reduce(&h, ArgMax).unwrap(),
        (max_index, reduce::half::f16::from_f64(max))
    );
    assert_eq!(
        reducer.reduce(&b, ArgMin).unwrap(),
        (min_index, reduce::half::bf16::from_f64(min))
    );

    // The async forms: the index as u64 (checked against the blocking
    // argmin too), the value widened to f32.
    let (mut index, mut value) = (
        stream.alloc_zeros::<u64>(1).unwrap(),
        stream.alloc_zeros::<f32>(1).unwrap(),
    );
    reducer
        .reduce_into(&h, ArgMin, Over::Whole, &mut index, &stream)
        .unwrap();
    reducer
        .reduce_into(&h, Widened::<f32>::new(Op::Min), Over::Whole, &mut value, &stream)
        .unwrap();
    let (blocking_index, _) = reduce::argmin(&h).unwrap();
    assert_eq!(blocking_index, min_index);
    assert_eq!(
        (
            stream.clone_dtoh(&index).unwrap()[0],
            stream.clone_dtoh(&value).unwrap()[0] as f64
        ),
        (blocking_index, min)
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
    /// The index of the maximum: the CPU's, which the blocking `argmax` gave too.
    max_index: u64,
}

/// Enqueues every form of `reduce_into` (and `dot_into`) on `stream`, the
/// whole-input ones into the five elements of `out` (and the argmax's
/// index), over random sub-views of inputs that are dropped at once.
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
    let (max_index, max) = arg(&x, true);
    // The blocking argmax, before this stream's work is enqueued (it waits for the stream).
    let (blocking_index, blocking_max) = reduce::argmax(&a_view).unwrap();
    assert_eq!((blocking_index, blocking_max as f64), (max_index, max));
    let mut expected = Vec::new();
    reducer
        .reduce_into(&a_view, Op::Sum, Over::Whole, &mut slot(out, 0), stream)
        .unwrap();
    expected.push(sum(&x) as i64);
    reducer
        .reduce_into(&a_view, Op::Min, Over::Whole, &mut slot(out, 1), stream)
        .unwrap();
    expected.push(x.iter().copied().fold(f64::MAX, f64::min) as i64);
    reducer
        .reduce_into(
            &narrow_buf.slice(offset..),
            Widened::<i64>::new(Op::Sum),
            Over::Whole,
            &mut slot(out, 2),
            stream,
        )
        .unwrap();
    expected.push(sum(&wide(&narrow[offset..])) as i64);
    reducer.dot_into(&a_view, &b_view, &mut slot(out, 3), stream).unwrap();
    expected.push(x.iter().zip(&y).map(|(p, q)| p * q).sum::<f64>() as i64);
    // The argmax into `reduce_into` writes the index only; the value is the max's.
    let mut index = stream.alloc_zeros::<u64>(1).unwrap();
    reducer
        .reduce_into(&a_view, ArgMax, Over::Whole, &mut index, stream)
        .unwrap();
    reducer
        .reduce_into(&a_view, Op::Max, Over::Whole, &mut slot(out, 4), stream)
        .unwrap();
    expected.push(max as i64);

    let offsets = random_offsets(rng, x.len());
    let offsets_buf = stream.clone_htod(&offsets).unwrap();
    let mut segments = stream.alloc_zeros::<i64>(offsets.len() - 1).unwrap();
    reducer
        .reduce_into(&a_view, Op::Sum, Over::Segments(&offsets_buf), &mut segments, stream)
        .unwrap();
    let rows = x.len() / 3;
    let mut row_sums = stream.alloc_zeros::<i64>(rows + 2).unwrap();
    let mut row_view = row_sums.slice_mut(1..rows + 1);
    reducer
        .reduce_into(
            &a_buf.slice(offset..offset + rows * 3),
            Op::Sum,
            Over::Rows { rows, len: 3 },
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
        max_index: blocking_index,
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
                .reduce_into(
                    &input,
                    Op::Sum,
                    Over::Whole,
                    &mut outs.slice_mut(slot..slot + 1),
                    &reducing,
                )
                .unwrap();
        }
        drop(input);
        // Memory the freed input may be reused for, overwritten at once.
        let reuse = allocating.alloc_zeros::<i64>(n).unwrap();
        let reuse_sum = reduce::sum(&reuse).unwrap();
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
            reducer
                .reduce_into(&input, Op::Sum, Over::Whole, &mut out, stream)
                .unwrap();
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
        reducer.reduce_into(&input, Op::Sum, Over::Whole, &mut two, &stream),
        Err(Error::OutputLength {
            output: "out",
            found: 2,
            expected: 1
        })
    ));
    assert!(matches!(
        reducer.reduce(&empty, Op::Max),
        Err(Error::Empty { op: Op::Max })
    ));
    let per_thread = ctx.per_thread_stream();
    assert!(matches!(
        reducer.reduce_into(&input, Op::Sum, Over::Whole, &mut one, &per_thread),
        Err(Error::UnsupportedStream(_))
    ));
    stream
        .begin_capture(cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let captured = reducer.reduce_into(&input, Op::Sum, Over::Whole, &mut one, &stream);
    let _ = stream.end_capture(cudarc::driver::sys::CUgraphInstantiate_flags(0));
    assert!(matches!(captured, Err(Error::UnsupportedStream(_))), "{captured:?}");
    let other = CudaContext::new_non_primary(0, 0).unwrap();
    let other_stream = other.new_stream().unwrap();
    let refused = reducer.reduce_into(&input, Op::Sum, Over::Whole, &mut one, &other_stream);
    assert!(matches!(refused, Err(Error::UnsupportedStream(_))), "{refused:?}");
    // Still usable, and nothing was written.
    reducer
        .reduce_into(&input, Op::Sum, Over::Whole, &mut one, &stream)
        .unwrap();
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
                scope.reduce_into(input, Op::Sum, Over::Whole, out, on)
            })
            .unwrap();
    }
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [sum(&wide(&data)) as i32]);
}

/// Results compared bit for bit (`-0.0` and NaN's payload too), and the
/// poison an output holds before a call: no result has its bits.
trait Bits: Copy + std::fmt::Debug {
    fn bits(self) -> u64;
    fn poison() -> Self;
}

macro_rules! float_bits {
    ($($t:ty => $poison:expr),*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn poison() -> Self {
                <$t>::from_bits($poison)
            }
        }
    )*};
}
float_bits!(f32 => 0x7fc5_a5a5, f64 => 0x7ff8_5a5a_5a5a_5a5a);

macro_rules! int_bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                self as u64
            }
            fn poison() -> Self {
                <$t>::MAX - 0x5a
            }
        }
    )*};
}
int_bits!(i32, i64, u32, u64);

fn bits<T: Bits>(values: &[T]) -> Vec<u64> {
    values.iter().map(|&v| v.bits()).collect()
}

/// The element types reduced over every place: `Min`'s identity, an empty segment's minimum.
trait Placed: Sample + Bits {
    const MIN_IDENTITY: Self;
}

impl Placed for f32 {
    const MIN_IDENTITY: f32 = f32::INFINITY;
}

impl Placed for i32 {
    const MIN_IDENTITY: i32 = i32::MAX;
}

/// `n` random values in `[-100, 100]`, about a quarter of them zeros (to count).
fn sparse_values<T: Sample>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| match rng.gen_bool(0.25) {
            true => T::of(0),
            false => T::of(rng.gen_range(-100..=100)),
        })
        .collect()
}

/// A random `rows × cols` shape, both at least 2: small, wide or tall by `round`.
fn matrix_shape(rng: &mut StdRng, round: usize) -> (usize, usize) {
    match round % 3 {
        0 => (rng.gen_range(2..40), rng.gen_range(2..40)),
        1 => (rng.gen_range(2..8), rng.gen_range(1000..20_000)),
        _ => (rng.gen_range(1000..20_000), rng.gen_range(2..8)),
    }
}

/// The lanes of the row-major `rows × cols` matrix `x` along `axis`, 0 (its
/// columns) or -1 (its rows), in the order of the results.
fn lanes(x: &[f64], rows: usize, cols: usize, axis: isize) -> Vec<Vec<f64>> {
    match axis {
        0 => (0..cols)
            .map(|j| (0..rows).map(|i| x[i * cols + j]).collect())
            .collect(),
        _ => x.chunks(cols).map(<[f64]>::to_vec).collect(),
    }
}

/// The CPU's sample variance (correction 1), in two passes.
fn variance(lane: &[f64]) -> f64 {
    let mean = sum(lane) / lane.len() as f64;
    lane.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (lane.len() - 1) as f64
}

/// Whether each of `got` is within `tolerance` of `expected`, relative to
/// the larger of its magnitude and `floor`.
fn assert_close(got: &[f64], expected: &[f64], tolerance: f64, floor: f64, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}");
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= tolerance * e.abs().max(floor),
            "{what}: result {i} is {g}, not {e}"
        );
    }
}

/// `what` over `over` of `input` from `reduce_over`, and from `reduce_into`
/// on `stream` into a poisoned buffer, which must agree bit for bit: the
/// results on the host, and their shape (without `keepdim`).
fn over_and_into<T, O, R>(
    reducer: &mut Reducer,
    input: &CudaSlice<T>,
    what: R,
    over: Over<'_, &dyn DevicePtr<u64>>,
    stream: &Arc<CudaStream>,
    label: &str,
) -> (Vec<O>, Vec<usize>)
where
    T: CudarcElement,
    O: Bits + DeviceRepr + DeviceValue<Cudarc = O>,
    R: Reduction<T::Kernel, Output = O, Results<CudaSlice<O>> = CudaSlice<O>>
        + for<'o> Reduction<T::Kernel, Results<&'o mut CudaSlice<O>> = &'o mut CudaSlice<O>>,
{
    let reduced = reducer.reduce_over(input, what, over).unwrap();
    let shape = reduced.shape(false);
    let values = stream.clone_dtoh(&reduced.values).unwrap();
    let mut out = stream.clone_htod(&vec![O::poison(); values.len()]).unwrap();
    reducer
        .reduce_into::<T, R, CudaSlice<O>>(input, what, over, &mut out, stream)
        .unwrap();
    assert_eq!(
        bits(&stream.clone_dtoh(&out).unwrap()),
        bits(&values),
        "reduce_into as reduce_over, {what:?} {label}"
    );
    (values, shape)
}

/// `Op::Sum`, `Op::Max`, `ArgMax` and `Count` of a random `rows × cols`
/// matrix along axis 0 and axis -1, and `Op::Min` and `Count` over random
/// segments (one empty at least), against the CPU.
fn every_place<T: Placed>(reducer: &mut Reducer, rng: &mut StdRng, stream: &Arc<CudaStream>, round: usize) {
    let (rows, cols) = matrix_shape(rng, round);
    let data: Vec<T> = sparse_values(rng, rows * cols);
    let buf = stream.clone_htod(&data).unwrap();
    let x = wide(&data);
    let layout = Strided::contiguous(&[rows, cols]).unwrap();
    let nonzero = Count(Predicate::Nonzero);
    for axis in [0isize, -1] {
        let label = format!("{:?}, {rows} × {cols} along axis {axis}", T::TYPE);
        let axes = [axis];
        let over = Over::Axes(&layout, &axes);
        let lanes = lanes(&x, rows, cols, axis);
        let kept = if axis == 0 { cols } else { rows };

        let (sums, shape) = over_and_into(reducer, &buf, Op::Sum, over, stream, &label);
        assert_eq!(shape, [kept], "shape {label}");
        let expected: Vec<f64> = lanes.iter().map(|lane| sum(lane)).collect();
        assert_eq!(wide(&sums), expected, "Sum {label}");

        let (maxima, _) = over_and_into(reducer, &buf, Op::Max, over, stream, &label);
        let expected: Vec<f64> = lanes
            .iter()
            .map(|lane| lane.iter().copied().fold(f64::MIN, f64::max))
            .collect();
        assert_eq!(wide(&maxima), expected, "Max {label}");

        let (indices, shape) = over_and_into(reducer, &buf, ArgMax, over, stream, &label);
        assert_eq!(shape, [kept], "argmax's shape {label}");
        let expected: Vec<u64> = lanes.iter().map(|lane| arg(lane, true).0).collect();
        assert_eq!(indices, expected, "ArgMax {label}");

        let (counts, _) = over_and_into(reducer, &buf, nonzero, over, stream, &label);
        let expected: Vec<u64> = lanes
            .iter()
            .map(|lane| lane.iter().filter(|&&v| v != 0.0).count() as u64)
            .collect();
        assert_eq!(counts, expected, "Count {label}");
    }

    let mut offsets = random_offsets(rng, x.len());
    let empty = rng.gen_range(0..offsets.len());
    offsets.insert(empty, offsets[empty]);
    let offsets_buf = stream.clone_htod(&offsets).unwrap();
    let over: Over<'_, &dyn DevicePtr<u64>> = Over::Segments(&offsets_buf);
    let label = format!("{:?}, {} elements, offsets {offsets:?}", T::TYPE, x.len());
    let segments: Vec<&[f64]> = offsets.windows(2).map(|w| &x[w[0] as usize..w[1] as usize]).collect();

    let (minima, shape) = over_and_into(reducer, &buf, Op::Min, over, stream, &label);
    assert_eq!(shape, [offsets.len() - 1], "shape {label}");
    let expected: Vec<T> = segments
        .iter()
        .map(|segment| match segment.iter().copied().reduce(f64::min) {
            Some(min) => T::of(min as i32),
            None => T::MIN_IDENTITY,
        })
        .collect();
    assert_eq!(
        bits(&minima),
        bits(&expected),
        "Min {label}: {minima:?}, not {expected:?}"
    );

    // The offsets as a view this time.
    let offsets_view = offsets_buf.slice(..);
    let over: Over<'_, &dyn DevicePtr<u64>> = Over::Segments(&offsets_view);
    let (counts, _) = over_and_into(reducer, &buf, nonzero, over, stream, &label);
    let expected: Vec<u64> = segments
        .iter()
        .map(|segment| segment.iter().filter(|&&v| v != 0.0).count() as u64)
        .collect();
    assert_eq!(counts, expected, "Count {label}");
}

/// `Var::<f64>` of a random `f32` matrix along axis 0 and axis -1, and
/// `MeanVar::<f64>` over its rows into a pair, against the CPU.
fn variances(reducer: &mut Reducer, rng: &mut StdRng, stream: &Arc<CudaStream>, round: usize) {
    let (rows, cols) = matrix_shape(rng, round);
    let data: Vec<f32> = sparse_values(rng, rows * cols);
    let buf = stream.clone_htod(&data).unwrap();
    let x = wide(&data);
    let layout = Strided::contiguous(&[rows, cols]).unwrap();
    let var = Var::<f64>::new(1.0).unwrap();
    for axis in [0isize, -1] {
        let label = format!("f32, {rows} × {cols} along axis {axis}");
        let axes = [axis];
        let (got, shape) = over_and_into(reducer, &buf, var, Over::Axes(&layout, &axes), stream, &label);
        assert_eq!(shape, [if axis == 0 { cols } else { rows }], "shape {label}");
        let expected: Vec<f64> = lanes(&x, rows, cols, axis).iter().map(|lane| variance(lane)).collect();
        assert_close(&got, &expected, 1e-9, 0.0, &format!("Var {label}"));
    }

    let label = format!("MeanVar, f32, {rows} rows of {cols}");
    let mean_var = MeanVar::<f64>::new(1.0).unwrap();
    let over_rows = Over::Rows { rows, len: cols };
    let reduced = reducer.reduce_over(&buf, mean_var, over_rows).unwrap();
    assert_eq!(reduced.shape(true), [rows, 1], "shape {label}");
    let (means_buf, variances_buf) = reduced.values;
    let (means, variances) = (
        stream.clone_dtoh(&means_buf).unwrap(),
        stream.clone_dtoh(&variances_buf).unwrap(),
    );
    let mut into = (
        stream.clone_htod(&vec![f64::poison(); rows]).unwrap(),
        stream.clone_htod(&vec![f64::poison(); rows]).unwrap(),
    );
    reducer
        .reduce_into(&buf, mean_var, over_rows, (&mut into.0, &mut into.1), stream)
        .unwrap();
    assert_eq!(
        bits(&stream.clone_dtoh(&into.0).unwrap()),
        bits(&means),
        "reduce_into's means as reduce_over's, {label}"
    );
    assert_eq!(
        bits(&stream.clone_dtoh(&into.1).unwrap()),
        bits(&variances),
        "reduce_into's variances as reduce_over's, {label}"
    );
    let row_lanes = lanes(&x, rows, cols, -1);
    let expected: Vec<f64> = row_lanes.iter().map(|lane| sum(lane) / cols as f64).collect();
    // (A mean of 0 may come out a rounding away: relative to the data's scale, 1.)
    assert_close(&means, &expected, 1e-9, 1.0, &format!("means {label}"));
    let expected: Vec<f64> = row_lanes.iter().map(|lane| variance(lane)).collect();
    assert_close(&variances, &expected, 1e-9, 0.0, &format!("variances {label}"));
}

#[test]
fn every_what_over_axes_segments_and_rows_matches_the_cpu() {
    let Some(ctx) = context("every_what_over_axes_segments_and_rows_matches_the_cpu") else {
        return;
    };
    let mut rng = common::rng("every_what_over_axes_segments_and_rows_matches_the_cpu");
    let mut reducer = Reducer::new(&ctx).unwrap();
    let stream = ctx.new_stream().unwrap();
    for round in 0..3 {
        every_place::<f32>(&mut reducer, &mut rng, &stream, round);
        every_place::<i32>(&mut reducer, &mut rng, &stream, round);
        variances(&mut reducer, &mut rng, &stream, round);
    }
}
