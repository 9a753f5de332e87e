//! Axis reductions of strided views against the CPU reference, on the
//! emulator and the GPU: random shapes, strides (contiguous, permuted,
//! sliced, broadcast) and axes for every op and element type; the layouts
//! that take each path (rows, columns split over blocks, a middle axis,
//! several passes); the edge cases and errors.

use crate::common;

use common::{ops_for, random_axes, random_layout, reduced_axes, rng, span, TestBackend, TestElement, Tester};
use rand::rngs::StdRng;
use rand::Rng;
use reduce::axes::Strided;
use reduce::half::f16;
use reduce::{ArgMax, ArgMin, Error, Op, Over, Widened};

/// Checks one call against the reference: each result, the shape, and the
/// error for a reduced axis of length 0 and an op without identity.
fn check_case<B: TestBackend, T: TestElement>(
    tester: &mut Tester<B>,
    data: &[T],
    offset: usize,
    layout: &Strided,
    axes: &[isize],
    op: Op,
) -> Result<(), String> {
    let case = format!(
        "{:?} strides {:?} offset {} axes {axes:?} {op}",
        layout.shape(),
        layout.strides(),
        layout.offset()
    );
    let reduced = reduced_axes(layout.shape().len(), axes);
    let summed: Vec<usize> = (0..reduced.len()).filter(|&a| reduced[a]).collect();
    let expected = common::gathered(data, layout, &summed);
    let got = tester.axes(data, offset, layout, axes, op)?;
    // A reduced axis of length 0 folds nothing, even where no kept
    // position asks for a result (then `expected` has no results at all).
    let empty_fold = summed.iter().any(|&a| layout.shape()[a] == 0);
    match got {
        Err(Error::Empty { .. }) if empty_fold && !op.defined_on_empty() => Ok(()),
        Err(e) => Err(format!("{case}: {e}")),
        Ok(_) if empty_fold && !op.defined_on_empty() => Err(format!("{case}: no Error::Empty")),
        Ok((results, shape)) => {
            let reduced = reduced_axes(layout.shape().len(), axes);
            let kept: Vec<usize> = layout
                .shape()
                .iter()
                .zip(reduced)
                .filter_map(|(&extent, reduced)| (!reduced).then_some(extent))
                .collect();
            if shape != kept {
                return Err(format!("{case}: shape {shape:?}, expected {kept:?}"));
            }
            if results.len() != expected.len() {
                return Err(format!(
                    "{case}: {} results, expected {}",
                    results.len(),
                    expected.len()
                ));
            }
            for (o, (got, elements)) in results.iter().zip(&expected).enumerate() {
                if elements.is_empty() {
                    let identity = T::identity(op);
                    if got.to_bits() != identity.to_bits() && !(got.is_nan() && identity.is_nan()) {
                        return Err(format!("{case}: result {o} {got:?}, expected the identity"));
                    }
                } else {
                    T::check(*got, elements, op).map_err(|e| format!("{case}: result {o}: {e}"))?;
                }
            }
            Ok(())
        }
    }
}

/// Random data for `op` over a view, with special values (NaN, ±inf, ±0)
/// sprinkled in where the op's reference handles them exactly.
fn data_for<T: TestElement>(rng: &mut StdRng, op: Op, len: usize) -> Vec<T> {
    let specials = matches!(op, Op::Max | Op::Min | Op::NanMax | Op::NanMin | Op::MaxAbs);
    (0..len)
        .map(|_| {
            if specials && rng.gen_ratio(1, 16) {
                T::special(rng, op)
            } else {
                T::random(rng, op, len)
            }
        })
        .collect()
}

fn random_views<T: TestElement>(test: &str, cases_per_op: usize) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for op in ops_for::<T>() {
            for _ in 0..cases_per_op {
                let layout = random_layout(&mut rng);
                let axes = random_axes(&mut rng, layout.shape().len());
                let len = span(&layout) + rng.gen_range(0..3);
                let data = data_for::<T>(&mut rng, op, len);
                let offset = rng.gen_range(0..4);
                if let Err(e) = check_case(&mut backend, &data, offset, &layout, &axes, op) {
                    panic!("{}: {test}: {e}", backend.name());
                }
            }
        }
    });
}

#[test]
fn random_views_of_i32() {
    random_views::<i32>("random_views_of_i32", 12);
}

#[test]
fn random_views_of_u32() {
    random_views::<u32>("random_views_of_u32", 6);
}

#[test]
fn random_views_of_i64() {
    random_views::<i64>("random_views_of_i64", 6);
}

#[test]
fn random_views_of_u64() {
    random_views::<u64>("random_views_of_u64", 6);
}

#[test]
fn random_views_of_f32() {
    random_views::<f32>("random_views_of_f32", 12);
}

#[test]
fn random_views_of_f64() {
    random_views::<f64>("random_views_of_f64", 6);
}

/// Each path with sizes that split the reduced axis over blocks (on the
/// emulator's 6 blocks of 64 threads too): columns of a matrix (1 to 100
/// wide), rows, a middle axis, two reduced axes (two passes), a transposed
/// matrix, and every axis of a strided view.
#[test]
fn each_path_with_split_axes() {
    let test = "each_path_with_split_axes";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let long = backend.size(1 << 16, 4096);
        let mut cases: Vec<(Strided, Vec<isize>)> = Vec::new();
        for width in [1usize, 3, 4, 64, 100] {
            cases.push((Strided::contiguous(&[long / width.min(64), width]).unwrap(), vec![0]));
        }
        cases.push((Strided::contiguous(&[64, long / 64]).unwrap(), vec![1]));
        cases.push((Strided::contiguous(&[4, long / 64, 16]).unwrap(), vec![1]));
        cases.push((Strided::contiguous(&[16, 8, long / 128]).unwrap(), vec![0, 2]));
        cases.push((Strided::new(&[long / 32, 32], &[1, long / 32]).unwrap(), vec![0]));
        cases.push((Strided::new(&[long / 64, 16], &[3, 2]).unwrap(), vec![0, 1]));
        for (layout, axes) in cases {
            for op in [Op::Sum, Op::Max, Op::NanSum] {
                let data = data_for::<f32>(&mut rng, op, span(&layout) + 1);
                if let Err(e) = check_case(&mut backend, &data, 1, &layout, &axes, op) {
                    panic!("{}: {e}", backend.name());
                }
            }
            let data = data_for::<i64>(&mut rng, Op::Product, span(&layout));
            if let Err(e) = check_case(&mut backend, &data, 0, &layout, &axes, Op::Product) {
                panic!("{}: {e}", backend.name());
            }
        }
    });
}

/// A one-hot input at every position of a column-split matrix: exactly the
/// one column holding the 1 sums to 1, whatever block reads it.
#[test]
fn one_hot_columns() {
    let test = "one_hot_columns";
    for_each_backend!(test, |backend| {
        let (rows, width) = (backend.size(4096, 512), 4);
        let layout = Strided::contiguous(&[rows, width]).unwrap();
        for hot in (0..rows * width)
            .step_by(rows * width / 97 + 1)
            .chain([rows * width - 1])
        {
            let mut data = vec![0u32; rows * width];
            data[hot] = 1;
            let (sums, _) = backend.axes(&data, 0, &layout, &[0], Op::Sum).unwrap().unwrap();
            let mut expected = vec![0u32; width];
            expected[hot % width] = 1;
            assert_eq!(sums, expected, "{}: the 1 at {hot}", backend.name());
        }
    });
}

#[test]
fn errors_and_edge_cases() {
    let test = "errors_and_edge_cases";
    for_each_backend!(test, |backend| {
        let data = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        let matrix = Strided::contiguous(&[2, 3]).unwrap();
        let err = |backend: &mut Tester<_>, layout: &Strided, axes: &[isize], op: Op| {
            backend.axes(&data, 0, layout, axes, op).unwrap().unwrap_err()
        };
        assert!(matches!(
            err(&mut backend, &matrix, &[2], Op::Sum),
            Error::InvalidAxes(_)
        ));
        assert!(matches!(
            err(&mut backend, &matrix, &[-3], Op::Sum),
            Error::InvalidAxes(_)
        ));
        assert!(matches!(
            err(&mut backend, &matrix, &[1, -1], Op::Sum),
            Error::InvalidAxes(_)
        ));
        let past_the_end = Strided::new(&[2, 3], &[4, 1]).unwrap(); // reaches element 6
        assert!(matches!(
            err(&mut backend, &past_the_end, &[0], Op::Sum),
            Error::InvalidLayout(_)
        ));
        // An offset: the view from element 1 fits, from element 2 reaches
        // past the end; an offset near usize::MAX is refused, not wrapped.
        let tail = Strided::new(&[2, 2], &[3, 1]).unwrap();
        let sums = backend
            .axes(&data, 0, &tail.with_offset(1), &[1], Op::Sum)
            .unwrap()
            .unwrap();
        assert_eq!(sums, (vec![2.0 + 3.0, 5.0 + 6.0], vec![2]));
        for offset in [2, usize::MAX - 1, usize::MAX] {
            match err(&mut backend, &tail.with_offset(offset), &[1], Op::Sum) {
                Error::InvalidLayout(message) => assert!(message.contains("offset"), "{message}"),
                other => panic!("offset {offset}: {other:?}"),
            }
        }
        let empty_past_the_end = Strided::contiguous(&[0, 3]).unwrap().with_offset(7);
        assert!(matches!(
            err(&mut backend, &empty_past_the_end, &[0], Op::Sum),
            Error::InvalidLayout(_)
        ));
        let ints = [1i32; 6];
        let max_abs = backend.axes(&ints, 0, &matrix, &[0], Op::MaxAbs).unwrap();
        assert!(matches!(max_abs, Err(Error::UnsupportedOp { .. })));
        // A reduced axis of length 0: identity where there is one, else Empty.
        let empty_rows = Strided::contiguous(&[0, 3]).unwrap();
        let sums = backend.axes(&data, 0, &empty_rows, &[0], Op::Sum).unwrap().unwrap();
        assert_eq!(sums, (vec![0.0; 3], vec![3]));
        let products = backend.axes(&data, 0, &empty_rows, &[0], Op::Product).unwrap().unwrap();
        assert_eq!(products.0, [1.0; 3]);
        assert!(matches!(
            err(&mut backend, &empty_rows, &[0], Op::Max),
            Error::Empty { .. }
        ));
        // A kept axis of length 0: no results, even for max.
        let none = backend.axes(&data, 0, &empty_rows, &[1], Op::Max).unwrap().unwrap();
        assert_eq!(none, (vec![], vec![0]));
        // No axes: each result is the op over one element (squared here).
        let squares = backend.axes(&data, 0, &matrix, &[], Op::SumOfSquares).unwrap().unwrap();
        assert_eq!(squares, (vec![1.0, 4.0, 9.0, 16.0, 25.0, 36.0], vec![2, 3]));
        // A broadcast axis counts its element once per position.
        let broadcast = Strided::new(&[4, 3], &[0, 1]).unwrap();
        let sums = backend.axes(&data, 0, &broadcast, &[0], Op::Sum).unwrap().unwrap();
        assert_eq!(sums.0, [4.0, 8.0, 12.0]);
        // Scalar tensor (no axes at all).
        let scalar = Strided::contiguous(&[]).unwrap();
        let one = backend.axes(&data, 0, &scalar, &[], Op::Sum).unwrap().unwrap();
        assert_eq!(one, (vec![1.0], vec![]));
    });
}

/// Regression: an axis of length 0 reduced where the kept axes have no
/// positions either (`[0, 5, 0]`, the last axis): no result is asked for,
/// but `Max` and the others without an identity are still
/// [`Error::Empty`], as `torch.amax` is (they once returned `Ok` with no
/// values); ops with an identity return no results. The same for a widened
/// `Max` and for argmax/argmin.
#[test]
fn empty_axis_without_kept_positions_is_empty() {
    let test = "empty_axis_without_kept_positions_is_empty";
    for_each_backend!(test, |backend| { empty_axis_without_kept_positions(&mut backend) });
}

fn empty_axis_without_kept_positions<B: TestBackend>(backend: &mut Tester<B>) {
    let name = backend.name();
    let layout = Strided::contiguous(&[0, 5, 0]).unwrap();
    let r = &mut backend.reducer;
    let floats = B::stage(&[0.0f32; 0], 0, f32::NAN);
    for op in [Op::Max, Op::Min, Op::NanMax, Op::NanMin, Op::MaxAbs] {
        let got = r
            .reduce_over(B::slice(&floats), op, Over::Axes(&layout, &[-1]))
            .map(|reduced| B::to_vec(&reduced.values));
        assert!(
            matches!(got, Err(Error::Empty { op: empty }) if empty == op),
            "{name}: f32 {op}: {got:?}"
        );
    }
    let ints = B::stage(&[0i32; 0], 0, 0);
    for op in [Op::Max, Op::Min] {
        let got = r
            .reduce_over(B::slice(&ints), op, Over::Axes(&layout, &[-1]))
            .map(|reduced| B::to_vec(&reduced.values));
        assert!(
            matches!(got, Err(Error::Empty { op: empty }) if empty == op),
            "{name}: i32 {op}: {got:?}"
        );
    }
    let halves = B::stage(&[f16::ZERO; 0], 0, f16::NAN);
    let widened = r
        .reduce_over(
            B::slice(&halves),
            Widened::<f32>::new(Op::Max),
            Over::Axes(&layout, &[-1]),
        )
        .map(|reduced| B::to_vec(&reduced.values));
    assert!(
        matches!(widened, Err(Error::Empty { op: Op::Max })),
        "{name}: widened max of f16: {widened:?}"
    );
    let argmax = r
        .reduce_over(B::slice(&floats), ArgMax, Over::Axes(&layout, &[-1]))
        .map(|reduced| B::to_vec(&reduced.values));
    assert!(
        matches!(argmax, Err(Error::Empty { op: Op::Max })),
        "{name}: argmax: {argmax:?}"
    );
    let argmin = r
        .reduce_over(B::slice(&ints), ArgMin, Over::Axes(&layout, &[-1]))
        .map(|reduced| B::to_vec(&reduced.values));
    assert!(
        matches!(argmin, Err(Error::Empty { op: Op::Min })),
        "{name}: argmin: {argmin:?}"
    );
    // With an identity: no results, of the kept shape.
    let sums = r
        .reduce_over(B::slice(&floats), Op::Sum, Over::Axes(&layout, &[-1]))
        .unwrap();
    assert_eq!(
        (B::to_vec(&sums.values).unwrap(), sums.shape(false)),
        (vec![], vec![0, 5]),
        "{name}: sum"
    );
    let widened_sums = r
        .reduce_over(
            B::slice(&halves),
            Widened::<f32>::new(Op::Sum),
            Over::Axes(&layout, &[-1]),
        )
        .unwrap();
    assert_eq!(
        B::to_vec(&widened_sums.values).unwrap(),
        [0.0f32; 0],
        "{name}: widened sum"
    );
}

/// Every permutation of the axes of dense tensors with a long axis (so
/// that a result folds enough elements for the planner's copy in the kept
/// axes' order, and short ones for the reordered single pass), every set of
/// axes, the view starting at the buffer's head or some elements in and
/// ending at its tail or before: the views candle and PyTorch make of a
/// contiguous tensor, planned as its dense memory, their results placed in
/// the view's order by the one pass. Then the reversed axes of rank-6
/// tensors, reduced along the contiguous one: 5 kept axes, more than a pass
/// places, so the results are put in order by a copy (a long axis) or by
/// the pass reading in the view's order (a short one).
#[test]
fn permuted_dense_views() {
    let test = "permuted_dense_views";
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        for dense in [[3usize, 40, 5], [36, 2, 4], [2, 3, 50]] {
            let strides = Strided::contiguous(&dense).unwrap().strides().to_vec();
            for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
                let shape: Vec<usize> = order.iter().map(|&a| dense[a]).collect();
                let view_strides: Vec<usize> = order.iter().map(|&a| strides[a]).collect();
                let head = [0, 1, 3][rng.gen_range(0..3)];
                let layout = Strided::new(&shape, &view_strides).unwrap().with_offset(head);
                for bits in 0..8 {
                    let axes: Vec<isize> = (0..3).filter(|a| bits & (1 << a) != 0).collect();
                    let op = [Op::Sum, Op::Max, Op::NanSum, Op::SumOfSquares][rng.gen_range(0..4)];
                    let tail = rng.gen_range(0..2);
                    let data = data_for::<f32>(&mut rng, op, span(&layout) + tail);
                    if let Err(e) = check_case(&mut backend, &data, 1, &layout, &axes, op) {
                        panic!("{}: {test}: {e}", backend.name());
                    }
                    let ints = data_for::<i32>(&mut rng, Op::Sum, span(&layout) + tail);
                    if let Err(e) = check_case(&mut backend, &ints, 0, &layout, &axes, Op::Sum) {
                        panic!("{}: {test}: {e}", backend.name());
                    }
                }
            }
        }
        for long in [40usize, 5] {
            let dense = [2usize, 3, 2, 3, 2, long];
            let strides = Strided::contiguous(&dense).unwrap().strides().to_vec();
            let shape: Vec<usize> = dense.iter().rev().copied().collect();
            let view_strides: Vec<usize> = strides.iter().rev().copied().collect();
            let layout = Strided::new(&shape, &view_strides).unwrap();
            let data = data_for::<i32>(&mut rng, Op::Sum, span(&layout));
            for op in [Op::Sum, Op::Max] {
                if let Err(e) = check_case(&mut backend, &data, 0, &layout, &[0], op) {
                    panic!("{}: {test}: {e}", backend.name());
                }
            }
        }
    });
}
