//! Widened reductions along axes (`Widened` over `Over::Axes`) and
//! argmax/argmin along one axis, on the emulator and the GPU, against a
//! CPU reference: random views and axes with integer-valued data (every
//! answer exact), ties and NaNs for the arg reductions, axes long enough to
//! be split over blocks with the preferred element in every part, the other
//! forms (the free function, `reduce_into` into a poisoned output) on the
//! GPU, and the errors.

use crate::common;

use common::{random_axes, random_layout, reduced_axes, rng, span, TestBackend, Tester};
use rand::rngs::StdRng;
use rand::Rng;
use reduce::axes::Strided;
use reduce::half::{bf16, f16};
use reduce::{ArgInput, ArgMax, ArgMin, Element, Error, Mean, Op, Over, Widened, WidensTo};
use std::fmt::Debug;

/// The axes `axes` of a rank-`rank` view as non-negative indices.
fn summed_axes(rank: usize, axes: &[isize]) -> Vec<usize> {
    let reduced = reduced_axes(rank, axes);
    (0..rank).filter(|&a| reduced[a]).collect()
}

/// The kept axes' extents: the results' shape without the reduced axes.
fn kept_shape(layout: &Strided, axes: &[isize]) -> Vec<usize> {
    let reduced = reduced_axes(layout.shape().len(), axes);
    layout
        .shape()
        .iter()
        .zip(reduced)
        .filter_map(|(&extent, reduced)| (!reduced).then_some(extent))
        .collect()
}

/// Whether a reduced axis has length 0: then the reductions without an
/// identity are `Error::Empty`, even where the kept axes have no positions
/// (no result is asked for), as `torch.amax` is.
fn folds_nothing(layout: &Strided, axes: &[isize]) -> bool {
    summed_axes(layout.shape().len(), axes)
        .iter()
        .any(|&a| layout.shape()[a] == 0)
}

/// One widening pair as the test drives it: the input made from a small
/// integer, the accumulator the exact answer converts to.
struct Pair<In, A> {
    input: fn(i64) -> In,
    accumulator: fn(i64) -> A,
    /// The integers the input is drawn from.
    range: (i64, i64),
    ops: &'static [Op],
}

/// `Widened` over the axes of random views against the exact integer reference,
/// run twice on each backend (the two must agree bit for bit).
fn random_widened_views<In, A>(test: &str, pair: Pair<In, A>, cases: usize)
where
    In: WidensTo<A> + Default + Debug,
    A: Element + Default + Debug + PartialEq,
{
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        widened_cases(&mut backend, &mut rng, &pair, cases, test);
    });
}

fn widened_cases<B: TestBackend, In, A>(
    backend: &mut Tester<B>,
    rng: &mut StdRng,
    pair: &Pair<In, A>,
    cases: usize,
    test: &str,
) where
    In: WidensTo<A> + Default + Debug,
    A: Element + Default + Debug + PartialEq,
{
    {
        for &op in pair.ops {
            for _ in 0..cases {
                let layout = random_layout(rng);
                let axes = random_axes(rng, layout.shape().len());
                let len = span(&layout) + rng.gen_range(0..3);
                let ints: Vec<i64> = (0..len).map(|_| rng.gen_range(pair.range.0..=pair.range.1)).collect();
                let data: Vec<In> = ints.iter().map(|&v| (pair.input)(v)).collect();
                let case = format!(
                    "{:?} strides {:?} offset {} axes {axes:?} {op}",
                    layout.shape(),
                    layout.strides(),
                    layout.offset()
                );
                let got = backend.staged_twice(&data, rng.gen_range(0..4), In::default(), |reducer, input| {
                    reducer
                        .reduce_over(input, Widened::<A>::new(op), Over::Axes(&layout, &axes))
                        .map(|r| (B::to_vec(&r.values), r.shape(false)))
                });
                let expected = common::gathered(&ints, &layout, &summed_axes(layout.shape().len(), &axes));
                let empty = folds_nothing(&layout, &axes);
                let (values, shape) = match got {
                    Err(Error::Empty { .. }) if empty && op != Op::Sum => continue,
                    Err(e) => panic!("{}: {test}: {case}: {e}", backend.name()),
                    Ok(_) if empty && op != Op::Sum => panic!("{}: {test}: {case}: no Error::Empty", backend.name()),
                    Ok((values, shape)) => (values.unwrap(), shape),
                };
                assert_eq!(shape, kept_shape(&layout, &axes), "{}: {test}: {case}", backend.name());
                let want: Vec<A> = expected
                    .iter()
                    .map(|elements| {
                        let exact = match op {
                            Op::Max => elements.iter().copied().max().unwrap(),
                            Op::Min => elements.iter().copied().min().unwrap(),
                            _ => elements.iter().sum(),
                        };
                        (pair.accumulator)(exact)
                    })
                    .collect();
                assert_eq!(values, want, "{}: {test}: {case}", backend.name());
            }
        }
    }
}

#[test]
fn widened_random_views_of_bytes_and_shorts() {
    let ops = &[Op::Sum];
    let u8s = Pair {
        input: |v| v as u8,
        accumulator: |v| v as u64,
        range: (200, 255),
        ops,
    };
    random_widened_views::<u8, u64>("widened_random_views_of_u8", u8s, 30);
    let i16s = Pair {
        input: |v| v as i16,
        accumulator: |v| v,
        range: (-32768, 32767),
        ops,
    };
    random_widened_views::<i16, i64>("widened_random_views_of_i16", i16s, 30);
}

#[test]
fn widened_random_views_of_words() {
    let ops = &[Op::Sum];
    let i32s = Pair {
        input: |v| v as i32,
        accumulator: |v| v,
        range: (i32::MAX as i64 - 9, i32::MAX as i64),
        ops,
    };
    random_widened_views::<i32, i64>("widened_random_views_of_i32", i32s, 30);
    let u32s = Pair {
        input: |v| v as u32,
        accumulator: |v| v as f64,
        range: (0, 1 << 30),
        ops,
    };
    random_widened_views::<u32, f64>("widened_random_views_of_u32_in_f64", u32s, 20);
    // Integer-valued f32s above 2^23: an f32 sum of two rounds, the f64 one is exact.
    let f32s = Pair {
        input: |v| v as f32,
        accumulator: |v| v as f64,
        range: (1 << 23, (1 << 23) + 1000),
        ops,
    };
    random_widened_views::<f32, f64>("widened_random_views_of_f32_in_f64", f32s, 20);
}

#[test]
fn widened_random_views_of_halves() {
    let ops = &[Op::Sum, Op::Max, Op::Min];
    // A view has at most 7^5 elements: with |v| ≤ 512 every partial sum
    // stays below 2^24, so the f32 sum is exact in any order.
    let f16s = Pair {
        input: |v| f16::from_f32(v as f32),
        accumulator: |v| v as f32,
        range: (-512, 512),
        ops,
    };
    random_widened_views::<f16, f32>("widened_random_views_of_f16", f16s, 20);
    let bf16s = Pair {
        input: |v| bf16::from_f32(v as f32),
        accumulator: |v| v as f32,
        range: (-256, 256),
        ops,
    };
    random_widened_views::<bf16, f32>("widened_random_views_of_bf16", bf16s, 20);
}

/// A comparable view of an arg input: `None` for a NaN.
trait ArgValue: ArgInput + Debug {
    fn number(self) -> Option<f64>;
    fn from_number(v: i64) -> Self;
    fn nan() -> Option<Self>;
}

macro_rules! arg_value {
    ($($t:ty: |$v:ident| $from:expr, nan $nan:expr;)*) => {$(
        impl ArgValue for $t {
            fn number(self) -> Option<f64> {
                let n = self as f64;
                (!n.is_nan()).then_some(n)
            }
            fn from_number($v: i64) -> Self {
                $from
            }
            fn nan() -> Option<Self> {
                $nan
            }
        }
    )*};
}

impl ArgValue for f16 {
    fn number(self) -> Option<f64> {
        (!self.is_nan()).then(|| self.to_f64())
    }
    fn from_number(v: i64) -> Self {
        f16::from_f32(v as f32)
    }
    fn nan() -> Option<Self> {
        Some(f16::NAN)
    }
}

arg_value! {
    i32: |v| v as i32, nan None;
    u64: |v| v as u64, nan None;
    f32: |v| if v == 0 { -0.0 } else { v as f32 }, nan Some(f32::NAN);
    f64: |v| v as f64, nan Some(f64::NAN);
}

/// The reference: the position of the first preferred element (a NaN
/// before any number; equal numbers, `-0.0` and `+0.0` among them, by the
/// lower position).
fn preferred_position<T: ArgValue>(elements: &[T], op: Op) -> u64 {
    let mut best = 0;
    for (i, &e) in elements.iter().enumerate() {
        let better = match (e.number(), elements[best].number()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(x), Some(b)) => (op == Op::Max && x > b) || (op == Op::Min && x < b),
        };
        if better {
            best = i;
        }
    }
    best as u64
}

/// Values from a few integers (many ties), now and then a NaN.
fn arg_data<T: ArgValue>(rng: &mut StdRng, len: usize) -> Vec<T> {
    (0..len)
        .map(|_| match T::nan() {
            Some(nan) if rng.gen_ratio(1, 40) => nan,
            _ => T::from_number(rng.gen_range(0..6)),
        })
        .collect()
}

/// argmax/argmin of `data` along `axis` of `layout` on `backend`, run twice,
/// against the reference.
fn check_arg<B: TestBackend, T: ArgValue>(
    backend: &mut Tester<B>,
    data: &[T],
    layout: &Strided,
    axis: isize,
    op: Op,
) -> Result<(), String> {
    let case = format!(
        "{:?} strides {:?} offset {} axis {axis} {op}",
        layout.shape(),
        layout.strides(),
        layout.offset()
    );
    let got = backend.staged_twice(data, 1, T::default(), |reducer, input| {
        match op {
            Op::Max => reducer.reduce_over(input, ArgMax, Over::Axes(layout, &[axis])),
            _ => reducer.reduce_over(input, ArgMin, Over::Axes(layout, &[axis])),
        }
        .map(|r| (B::to_vec(&r.values), r.shape(false)))
    });
    let rank = layout.shape().len();
    let expected = common::gathered(data, layout, &summed_axes(rank, &[axis]));
    let empty = folds_nothing(layout, &[axis]);
    match got {
        Err(Error::Empty { .. }) if empty => Ok(()),
        Err(e) => Err(format!("{case}: {e}")),
        Ok(_) if empty => Err(format!("{case}: no Error::Empty")),
        Ok((values, shape)) => {
            let want: Vec<u64> = expected.iter().map(|e| preferred_position(e, op)).collect();
            if shape != kept_shape(layout, &[axis]) || values.as_ref() != Ok(&want) {
                return Err(format!("{case}: got {values:?} {shape:?}, expected {want:?}"));
            }
            Ok(())
        }
    }
}

fn random_arg_views<T: ArgValue>(test: &str, cases: usize) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for op in [Op::Max, Op::Min] {
            for _ in 0..cases {
                let layout = random_layout(&mut rng);
                let rank = layout.shape().len() as isize;
                let axis = rng.gen_range(-rank..rank);
                let data = arg_data::<T>(&mut rng, span(&layout) + 1);
                if let Err(e) = check_arg(&mut backend, &data, &layout, axis, op) {
                    panic!("{}: {test}: {e}", backend.name());
                }
            }
        }
    });
}

#[test]
fn arg_along_random_axes() {
    random_arg_views::<i32>("arg_along_random_axes_of_i32", 25);
    random_arg_views::<u64>("arg_along_random_axes_of_u64", 10);
    random_arg_views::<f32>("arg_along_random_axes_of_f32", 25);
    random_arg_views::<f64>("arg_along_random_axes_of_f64", 10);
    random_arg_views::<f16>("arg_along_random_axes_of_f16", 10);
}

/// argmax/argmin along each axis of every permutation of dense tensors
/// with a long axis, starting at the buffer's head or some elements in: the
/// positions found in memory order, then copied in the kept axes' order
/// where the permutation reorders them.
#[test]
fn arg_along_permuted_dense_views() {
    let test = "arg_along_permuted_dense_views";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for dense in [[3usize, 40, 5], [36, 2, 4]] {
            let strides = Strided::contiguous(&dense).unwrap().strides().to_vec();
            for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
                let shape: Vec<usize> = order.iter().map(|&a| dense[a]).collect();
                let view_strides: Vec<usize> = order.iter().map(|&a| strides[a]).collect();
                let head = [0, 1, 3][rng.gen_range(0..3)];
                let layout = Strided::new(&shape, &view_strides).unwrap().with_offset(head);
                for axis in -3..3 {
                    let op = [Op::Max, Op::Min][rng.gen_range(0..2)];
                    let len = span(&layout) + rng.gen_range(0..2);
                    let data = arg_data::<f32>(&mut rng, len);
                    if let Err(e) = check_arg(&mut backend, &data, &layout, axis, op) {
                        panic!("{}: {test}: {e}", backend.name());
                    }
                }
            }
        }
    });
}

/// Axes long enough to be split over blocks: the preferred value twice, at
/// random positions, so the first must win across the parts; columns, rows,
/// a middle axis and a transposed matrix.
#[test]
fn arg_along_split_axes() {
    let test = "arg_along_split_axes";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let long = backend.size(1 << 16, 4096);
        let layouts = [
            (Strided::contiguous(&[long, 3]).unwrap(), 0),
            (Strided::contiguous(&[2, long]).unwrap(), 1),
            (Strided::contiguous(&[2, long / 8, 8]).unwrap(), 1),
            (Strided::new(&[long / 2, 2], &[1, long / 2]).unwrap(), 0),
        ];
        for (layout, axis) in layouts {
            // Each result's elements, as offsets into the data, in order along the axis.
            let offsets: Vec<usize> = (0..span(&layout)).collect();
            let lines = common::gathered(&offsets, &layout, &[axis]);
            for op in [Op::Max, Op::Min] {
                for _ in 0..4 {
                    let mut data: Vec<f32> = (0..span(&layout)).map(|_| rng.gen_range(-1000..1000) as f32).collect();
                    let best = if op == Op::Max { 5000.0 } else { -5000.0 };
                    let along = layout.shape()[axis];
                    let (a, b) = (rng.gen_range(0..along), rng.gen_range(0..along));
                    for line in &lines {
                        data[line[a]] = best;
                        data[line[b]] = best;
                    }
                    if let Err(e) = check_arg(&mut backend, &data, &layout, axis as isize, op) {
                        panic!("{}: {test}: {e}", backend.name());
                    }
                }
            }
        }
    });
}

#[test]
fn errors_and_edge_cases() {
    let test = "axes_widened_and_arg_errors";
    for_each_backend!(test, |backend| { errors_on(&mut backend) });
}

fn errors_on<B: TestBackend>(backend: &mut Tester<B>) {
    let matrix = Strided::contiguous(&[2, 3]).unwrap();
    let (bytes, ints) = (
        B::stage(&[1u8, 2, 3, 4, 5, 6], 0, 0),
        B::stage(&[4i32, 9, 1, 9, 0, 7], 0, 0),
    );
    let (bytes, ints) = (B::slice(&bytes), B::slice(&ints));
    let r = &mut backend.reducer;
    // The integer pairs only sum.
    let max = r
        .reduce_over(bytes, Widened::<u64>::new(Op::Max), Over::Axes(&matrix, &[0]))
        .map(|_| ());
    assert!(matches!(max, Err(Error::UnsupportedWidening { .. })), "{max:?}");
    let bad_axis = r
        .reduce_over(bytes, Widened::<u64>::new(Op::Sum), Over::Axes(&matrix, &[2]))
        .map(|_| ());
    assert!(matches!(bad_axis, Err(Error::InvalidAxes(_))), "{bad_axis:?}");
    assert!(matches!(
        r.reduce_over(ints, ArgMax, Over::Axes(&matrix, &[-3])).map(|_| ()),
        Err(Error::InvalidAxes(_))
    ));
    let past_the_end = Strided::new(&[2, 3], &[4, 1]).unwrap();
    assert!(matches!(
        r.reduce_over(ints, ArgMin, Over::Axes(&past_the_end, &[0])).map(|_| ()),
        Err(Error::InvalidLayout(_))
    ));
    // One axis only (the old `argmax_axis` took one by its type), and no
    // kernel takes the arg reductions or a widened one over segments.
    let two_axes = r.reduce_over(ints, ArgMax, Over::Axes(&matrix, &[0, 1])).map(|_| ());
    assert!(matches!(two_axes, Err(Error::InvalidAxes(_))), "{two_axes:?}");
    let no_axis = r.reduce_over(ints, ArgMin, Over::Axes(&matrix, &[])).map(|_| ());
    assert!(matches!(no_axis, Err(Error::InvalidAxes(_))), "{no_axis:?}");
    let offsets = B::stage(&[0u64, 2, 6], 0, u64::MAX);
    let arg_segments = r
        .reduce_over(ints, ArgMax, Over::Segments(B::slice(&offsets)))
        .map(|_| ());
    assert!(
        matches!(arg_segments, Err(Error::UnsupportedOver { .. })),
        "{arg_segments:?}"
    );
    let widened_segments = r
        .reduce_over(bytes, Widened::<u64>::new(Op::Sum), Over::Segments(B::slice(&offsets)))
        .map(|_| ());
    assert!(
        matches!(widened_segments, Err(Error::UnsupportedOver { .. })),
        "{widened_segments:?}"
    );
    // A pair no kernel computes is refused before the place is checked (or
    // anything allocated): one offset past the end, or none at all, would
    // otherwise be `InvalidSegments`.
    let past_the_end = B::stage(&[7u64], 0, u64::MAX);
    let no_offsets = B::stage(&[0u64; 0], 0, u64::MAX);
    for offsets in [&past_the_end, &no_offsets] {
        let widened = r
            .reduce_over(bytes, Widened::<u64>::new(Op::Sum), Over::Segments(B::slice(offsets)))
            .map(|_| ());
        assert!(matches!(widened, Err(Error::UnsupportedOver { .. })), "{widened:?}");
        let arg = r
            .reduce_over(ints, ArgMin, Over::Segments(B::slice(offsets)))
            .map(|_| ());
        assert!(matches!(arg, Err(Error::UnsupportedOver { .. })), "{arg:?}");
        let mean = r.reduce_over(ints, Mean, Over::Segments(B::slice(offsets))).map(|_| ());
        assert!(matches!(mean, Err(Error::UnsupportedOver { .. })), "{mean:?}");
    }
    // A pair a kernel computes gets its place checked.
    let bad_matrix = r.reduce_over(ints, Mean, Over::Rows { rows: 5, len: 5 }).map(|_| ());
    assert!(matches!(bad_matrix, Err(Error::InvalidSegments(_))), "{bad_matrix:?}");
    // An empty axis has no position; an empty kept axis, no results.
    let empty_rows = Strided::contiguous(&[0, 3]).unwrap();
    let empty = r.reduce_over(ints, ArgMax, Over::Axes(&empty_rows, &[0])).map(|_| ());
    assert!(matches!(empty, Err(Error::Empty { op: Op::Max })), "{empty:?}");
    let none = r.reduce_over(ints, ArgMax, Over::Axes(&empty_rows, &[1])).unwrap();
    assert_eq!((B::to_vec(&none.values).unwrap(), none.shape(false)), (vec![], vec![0]));
    let halves = B::stage(&[f16::ONE; 3], 0, f16::ZERO);
    let empty_max = r
        .reduce_over(
            B::slice(&halves),
            Widened::<f32>::new(Op::Max),
            Over::Axes(&empty_rows, &[0]),
        )
        .map(|_| ());
    assert!(matches!(empty_max, Err(Error::Empty { op: Op::Max })), "{empty_max:?}");
    let shorts = B::stage(&[1i16; 3], 0, 0);
    let empty_sum = r
        .reduce_over(
            B::slice(&shorts),
            Widened::<i64>::new(Op::Sum),
            Over::Axes(&empty_rows, &[0]),
        )
        .unwrap();
    assert_eq!(B::to_vec(&empty_sum.values).unwrap(), [0i64; 3]);
    // A length-1 axis: position 0; a broadcast axis: every element ties, position 0.
    let column = Strided::contiguous(&[6, 1]).unwrap();
    let ones = r.reduce_over(ints, ArgMax, Over::Axes(&column, &[1])).unwrap();
    assert_eq!(B::to_vec(&ones.values).unwrap(), [0u64; 6]);
    let broadcast = Strided::new(&[4, 3], &[0, 1]).unwrap();
    let tied = r.reduce_over(ints, ArgMin, Over::Axes(&broadcast, &[0])).unwrap();
    assert_eq!(B::to_vec(&tied.values).unwrap(), [0u64; 3]);
    // Rows and columns of a small matrix, a NaN winning both ways.
    let floats = B::stage(&[1.0f32, f32::NAN, 3.0, -2.0, 5.0, -2.0], 0, 0.0);
    let rows_max = r
        .reduce_over(B::slice(&floats), ArgMax, Over::Axes(&matrix, &[1]))
        .unwrap();
    assert_eq!(B::to_vec(&rows_max.values).unwrap(), [1u64, 1]);
    let columns_min = r
        .reduce_over(B::slice(&floats), ArgMin, Over::Axes(&matrix, &[0]))
        .unwrap();
    assert_eq!(B::to_vec(&columns_min.values).unwrap(), [1u64, 0, 1]);
}

/// On the GPU: the free function `reduce::reduce_over` and `reduce_into`
/// (on another stream, into an output one element past a poisoned one that
/// must stay as it is) agree bit for bit with the blocking calls;
/// `reduce_into` refuses argmax over two axes or over segments (the old
/// `arg_axis_into` refused an op other than `Max` and `Min`, which the
/// types `ArgMax`/`ArgMin` now rule out).
#[test]
fn other_forms_agree_on_the_gpu() {
    use cust::memory::DeviceBuffer;
    use cust::stream::{Stream, StreamFlags};
    use reduce::{Input, Output, Reducer};
    let test = "other_forms_agree_on_the_gpu";
    if common::gpu(test).is_none() {
        return;
    }
    let mut rng = rng(test);
    let mut reducer = Reducer::new().expect("a reducer");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("a stream");
    for round in 0..12 {
        let layout = random_layout(&mut rng);
        let rank = layout.shape().len();
        let axes = random_axes(&mut rng, rank);
        let axis = rng.gen_range(-(rank as isize)..rank as isize);
        let what = format!("round {round}: {layout:?} axes {axes:?} axis {axis}");
        let len = span(&layout) + 1;
        let halves: Vec<f16> = (0..len).map(|_| f16::from_f32(rng.gen_range(-99..99) as f32)).collect();
        let x = DeviceBuffer::from_slice(&halves).expect("the input");
        for op in [Op::Max, Op::Min] {
            let blocking = match op {
                Op::Max => reducer.reduce_over(&x, ArgMax, Over::Axes(&layout, &[axis])),
                _ => reducer.reduce_over(&x, ArgMin, Over::Axes(&layout, &[axis])),
            };
            let Ok(blocking) = blocking else { continue };
            let want = blocking.values.as_host_vec().expect("copy back");
            let free = match op {
                Op::Max => reduce::reduce_over(&x, ArgMax, Over::Axes(&layout, &[axis])),
                _ => reduce::reduce_over(&x, ArgMin, Over::Axes(&layout, &[axis])),
            }
            .expect("the free function");
            assert_eq!(
                free.values.as_host_vec().expect("copy back"),
                want,
                "{what}: {op} free function"
            );
            let mut padded = DeviceBuffer::from_slice(&vec![u64::MAX; want.len() + 1]).expect("an output");
            reducer
                .scope(|s| {
                    let out = Output::from(&mut padded).get(1..).unwrap();
                    let over = Over::Axes(&layout, &[axis]);
                    match op {
                        Op::Max => s.reduce_into(&x, ArgMax, over, out, &stream),
                        _ => s.reduce_into(&x, ArgMin, over, out, &stream),
                    }
                })
                .expect("reduce_into");
            let written = padded.as_host_vec().expect("copy back");
            assert_eq!(
                (written[0], &written[1..]),
                (u64::MAX, &want[..]),
                "{what}: arg{op} reduce_into"
            );
        }
        for op in [Op::Sum, Op::Max] {
            let widened = Widened::<f32>::new(op);
            let Ok(blocking) = reducer.reduce_over(&x, widened, Over::Axes(&layout, &axes)) else {
                continue;
            };
            let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let want = bits(blocking.values.as_host_vec().expect("copy back"));
            let free = reduce::reduce_over(&x, widened, Over::Axes(&layout, &axes)).expect("the free function");
            assert_eq!(
                bits(free.values.as_host_vec().expect("copy back")),
                want,
                "{what}: {op} free function"
            );
            let poison = f32::from_bits(0x7FA5_A5A5);
            let mut padded = DeviceBuffer::from_slice(&vec![poison; want.len() + 1]).expect("an output");
            reducer
                .scope(|s| {
                    let out = Output::from(&mut padded).get(1..).unwrap();
                    s.reduce_into(&x, widened, Over::Axes(&layout, &axes), out, &stream)
                })
                .expect("reduce_into");
            let written = bits(padded.as_host_vec().expect("copy back"));
            assert_eq!(
                (written[0], &written[1..]),
                (poison.to_bits(), &want[..]),
                "{what}: widened {op} reduce_into"
            );
        }
    }
    let x = DeviceBuffer::from_slice(&[1i32, 2, 3, 4]).expect("the input");
    let mut out = DeviceBuffer::from_slice(&[0u64; 2]).expect("an output");
    let layout = Strided::contiguous(&[2, 2]).unwrap();
    let two_axes = reducer.scope(|s| s.reduce_into(&x, ArgMax, Over::Axes(&layout, &[0, 1]), &mut out, &stream));
    assert!(matches!(two_axes, Err(Error::InvalidAxes(_))), "{two_axes:?}");
    let offsets = DeviceBuffer::from_slice(&[0u64, 2, 4]).expect("the offsets");
    let segments = reducer.scope(|s| {
        let over = Over::Segments(Input::from(&offsets));
        s.reduce_into(&x, ArgMin, over, &mut out, &stream)
    });
    assert!(matches!(segments, Err(Error::UnsupportedOver { .. })), "{segments:?}");
}
