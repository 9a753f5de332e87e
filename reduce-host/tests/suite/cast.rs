//! The cast reductions' conversions (issue #46), on the emulator and the
//! GPU: every device conversion gives the bits of the host's (the same
//! function, and `half`'s `from_f32`, Rust's `as f32`), on special values
//! (ties, overflow to ±∞, subnormal results, NaN) and random ones; and `u32`
//! positions that could pass `u32::MAX` are refused before anything runs.
//! The matrix (`matrix::casts`) runs every cast over every place and form.

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::axes::Strided;
use reduce::half::{bf16, f16};
use reduce::{ArgMax, ArgMin, CastTo, ElementType, Error, Mean, Op, Over, Reducer, Reduction, Widened};

/// `what` and `what.cast::<T>()` (`cast`) over `rows` of 2 of `data`: each
/// cast result must be the wide one converted by `convert`, bit for bit
/// (a NaN: any NaN), and what [`CastTo`] gives.
fn check_pairs<B: TestBackend, In: Copy + reduce::element::DeviceValue + Default + std::fmt::Debug, W, T, R, C>(
    reducer: &mut Reducer<B>,
    data: &[In],
    poison: In,
    (what, cast): (R, C),
    convert: fn(W) -> T,
) -> Result<(), String>
where
    W: CastTo<T> + Copy + Default + std::fmt::Debug + reduce::element::DeviceValue,
    T: Copy + Default + std::fmt::Debug + reduce::element::DeviceValue,
    R: Reduction<In, Output = W, Results<B::Buffer<W>> = B::Buffer<W>>,
    C: Reduction<In, Output = T, Results<B::Buffer<T>> = B::Buffer<T>>,
{
    let staged = B::stage(data, 1, poison);
    let input = B::slice(&staged);
    let rows = Over::Rows {
        rows: data.len() / 2,
        len: 2,
    };
    let wide = reducer.reduce_over(input, what, rows).map_err(|e| e.to_string())?;
    let narrow = reducer.reduce_over(input, cast, rows).map_err(|e| e.to_string())?;
    let (wide, narrow) = (B::to_vec(&wide.values)?, B::to_vec(&narrow.values)?);
    let bits = |x: &T| bytes_of(x);
    let nan = |x: &T| format!("{x:?}").to_lowercase().contains("nan");
    for (i, (&w, got)) in wide.iter().zip(&narrow).enumerate() {
        let expected = convert(w);
        let same = bits(got) == bits(&expected) || (nan(got) && nan(&expected));
        if !same || bits(&w.cast()) != bits(&expected) {
            return Err(format!(
                "{cast:?}, result {i} (of {:?}): {got:?} {:02x?}, expected {expected:?} {:02x?} (the wide result {w:?})",
                &data[2 * i..2 * i + 2],
                bits(got),
                bits(&expected)
            ));
        }
    }
    Ok(())
}

/// Pairs of `f64`s whose sums are the `f32` conversion's hard cases: ties
/// (to even, up and down), the largest finite `f32` and past it, subnormal
/// `f32`s and below them, NaN and ±∞; then random bit patterns.
fn f64_pairs(rng: &mut StdRng) -> Vec<f64> {
    let tie = 2f64.powi(-24);
    let mut pairs = vec![
        1.0,
        tie,
        1.0 + 2.0 * tie,
        tie,
        1.0,
        tie * 1.0001,
        f32::MAX as f64,
        2f64.powi(103),
        f32::MAX as f64,
        2f64.powi(104),
        -(f32::MAX as f64),
        -(2f64.powi(105)),
        1e-40,
        0.0,
        1e-45,
        0.0,
        2f64.powi(-150),
        0.0,
        -(2f64.powi(-150)) * 1.5,
        0.0,
        f64::NAN,
        1.0,
        f64::INFINITY,
        1.0,
        f64::NEG_INFINITY,
        -0.0,
        -0.0,
        -0.0,
    ];
    for _ in 0..200 {
        let exponent = rng.gen_range(-160..140);
        pairs.push(rng.gen_range(-2.0..2.0) * 2f64.powi(exponent));
        pairs.push(rng.gen_range(-2.0..2.0) * 2f64.powi(exponent - rng.gen_range(0..60)));
    }
    pairs
}

/// Pairs of `bf16`s whose `f32` sums are the half conversions' hard cases:
/// ties of `f16` (1 + 2^-11, to even) and of `bf16`, `f16`'s largest and
/// past it (65520: a tie to ∞), `f16` subnormals and half the smallest,
/// values far past `f16`'s range, NaN, ±∞; then random ones.
fn bf16_pairs(rng: &mut StdRng) -> Vec<bf16> {
    let b = bf16::from_f32;
    let mut pairs = vec![
        b(1.0),
        b(2f32.powi(-11)),
        b(1.0 + 2f32.powi(-7)),
        b(2f32.powi(-11)),
        b(1.0),
        b(2f32.powi(-9)),
        b(65504.0),
        b(8.0),
        b(65504.0),
        b(16.0),
        b(-65504.0),
        b(-32.0),
        b(2f32.powi(-24)),
        b(2f32.powi(-26)),
        b(2f32.powi(-25)),
        b(0.0),
        b(3.0 * 2f32.powi(-25)),
        b(0.0),
        b(2f32.powi(-30)),
        b(-0.0),
        b(1e30),
        b(1e30),
        b(-3e38),
        b(-3e38),
        bf16::NAN,
        b(1.0),
        bf16::INFINITY,
        b(-1.0),
        bf16::NEG_INFINITY,
        b(-0.0),
        b(1.0),
        b(2f32.powi(-8)),
    ];
    for _ in 0..200 {
        let exponent = rng.gen_range(-30..20);
        pairs.push(b(rng.gen_range(-2.0..2.0) * 2f32.powi(exponent)));
        pairs.push(b(rng.gen_range(-2.0..2.0) * 2f32.powi(exponent - rng.gen_range(0..14))));
    }
    pairs
}

#[test]
fn device_conversions_are_the_hosts() {
    let mut rng = common::rng("device_conversions_are_the_hosts");
    for_each_backend!("device_conversions_are_the_hosts", |backend| {
        let name = backend.name();
        let reducer = &mut backend.reducer;
        let doubles = f64_pairs(&mut rng);
        let sum = Widened::<f64>::new(Op::Sum);
        check_pairs(reducer, &doubles, f64::NAN, (sum, sum.cast::<f32>()), |x: f64| x as f32)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        check_pairs(reducer, &doubles, f64::NAN, (Mean, Mean.cast::<f32>()), |x: f64| {
            x as f32
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let halves = bf16_pairs(&mut rng);
        let sum = Widened::<f32>::new(Op::Sum);
        check_pairs(reducer, &halves, bf16::NAN, (sum, sum.cast::<f16>()), f16::from_f32)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        check_pairs(reducer, &halves, bf16::NAN, (sum, sum.cast::<bf16>()), bf16::from_f32)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        check_pairs(reducer, &halves, bf16::NAN, (Mean, Mean.cast::<f16>()), f16::from_f32)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    });
}

/// A whole input's cast value, which the host converts, against the
/// `Over::Whole` results, which the kernel converts: the same bits.
fn whole_values<B: TestBackend>(reducer: &mut Reducer<B>, rng: &mut StdRng) -> Result<(), String> {
    let halves: Vec<f16> = (0..1000)
        .map(|_| f16::from_f32(rng.gen_range(-1000..1000) as f32))
        .collect();
    for data in [
        halves.clone(),
        vec![f16::MAX, f16::from_f32(16.0)],
        vec![f16::MAX, f16::from_f32(32.0)],
    ] {
        let staged = B::stage(&data, 0, f16::NAN);
        let input = B::slice(&staged);
        let sum = Widened::<f32>::new(Op::Sum);
        let wide = reducer.reduce(input, sum).map_err(|e| e.to_string())?;
        let value = reducer.reduce(input, sum.cast::<f16>()).map_err(|e| e.to_string())?;
        let over = reducer
            .reduce_over(input, sum.cast::<f16>(), Over::Whole)
            .map_err(|e| e.to_string())?;
        let over = B::to_vec(&over.values)?;
        if value.to_bits() != f16::from_f32(wide).to_bits() || over != [value] {
            return Err(format!(
                "{wide} as f16: the value {value:?}, over the whole input {over:?}"
            ));
        }
        let mean = reducer.reduce(input, Mean.cast::<f16>()).map_err(|e| e.to_string())?;
        let over = reducer
            .reduce_over(input, Mean.cast::<f16>(), Over::Whole)
            .map_err(|e| e.to_string())?;
        if B::to_vec(&over.values)? != [mean] {
            return Err(format!(
                "the mean {mean:?}, over the whole input {:?}",
                B::to_vec(&over.values)?
            ));
        }
        let (index, max) = reducer.reduce(input, ArgMax.cast::<u32>()).map_err(|e| e.to_string())?;
        let (wide_index, wide_max) = reducer.reduce(input, ArgMax).map_err(|e| e.to_string())?;
        let over = reducer
            .reduce_over(input, ArgMin.cast::<u32>(), Over::Whole)
            .map_err(|e| e.to_string())?;
        let (min_index, _) = reducer.reduce(input, ArgMin).map_err(|e| e.to_string())?;
        if (u64::from(index), max) != (wide_index, wide_max) || B::to_vec(&over.values)? != [min_index as u32] {
            return Err(format!(
                "argmax {index} of {max:?}, argmin over the whole input {:?}",
                B::to_vec(&over.values)?
            ));
        }
    }
    Ok(())
}

#[test]
fn whole_input_values_convert_as_the_kernels() {
    let mut rng = common::rng("whole_input_values_convert_as_the_kernels");
    for_each_backend!("whole_input_values_convert_as_the_kernels", |backend| {
        let name = backend.name();
        whole_values(&mut backend.reducer, &mut rng).unwrap_or_else(|e| panic!("{name}: {e}"));
    });
}

/// `u32` positions along more than 2^32 elements: [`Error::IndexOverflow`]
/// before anything runs (a broadcast view of one element, and rows of none);
/// exactly 2^32, and `i64` positions, are accepted.
fn u32_overflow<B: TestBackend>(reducer: &mut Reducer<B>) -> Result<(), String> {
    let staged = B::stage(&[1.0f32], 0, f32::NAN);
    let input = B::slice(&staged);
    let long = (1usize << 32) + 1;
    let broadcast = Strided::new(&[long], &[0]).map_err(|e| e.to_string())?;
    let overflow = |result: reduce::Result<()>, what: &str| match result {
        Err(Error::IndexOverflow {
            index: ElementType::U32,
            extent,
        }) if extent == long as u64 => Ok(()),
        other => Err(format!("{what}: {other:?}, not IndexOverflow")),
    };
    let along = Over::Axes(&broadcast, &[0]);
    overflow(
        reducer.reduce_over(input, ArgMax.cast::<u32>(), along).map(drop),
        "argmax along 2^32 + 1",
    )?;
    overflow(
        reducer.reduce_over(input, ArgMin.cast::<u32>(), along).map(drop),
        "argmin along 2^32 + 1",
    )?;
    let empty = B::stage::<f32>(&[], 0, f32::NAN);
    let rows = Over::Rows { rows: 0, len: long };
    overflow(
        reducer
            .reduce_over(B::slice(&empty), ArgMax.cast::<u32>(), rows)
            .map(drop),
        "argmax of rows of 2^32 + 1",
    )?;
    let fits = Over::Rows { rows: 0, len: 1 << 32 };
    let results = reducer
        .reduce_over(B::slice(&empty), ArgMax.cast::<u32>(), fits)
        .map_err(|e| e.to_string())?;
    let wide = reducer
        .reduce_over(B::slice(&empty), ArgMax.cast::<i64>(), rows)
        .map_err(|e| e.to_string())?;
    if !B::to_vec(&results.values)?.is_empty() || !B::to_vec(&wide.values)?.is_empty() {
        return Err("results for no rows".into());
    }
    Ok(())
}

#[test]
fn u32_positions_that_could_overflow_are_refused() {
    for_each_backend!("u32_positions_that_could_overflow_are_refused", |backend| {
        let name = backend.name();
        u32_overflow(&mut backend.reducer).unwrap_or_else(|e| panic!("{name}: {e}"));
    });
}
