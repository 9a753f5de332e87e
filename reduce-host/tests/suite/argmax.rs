//! argmax / argmin: the first index of the largest (smallest) element, the
//! first NaN if there is one, signed zeros equal (the first zero's bits are
//! returned); on the emulator and the GPU, against a CPU reference. Also of
//! `f16` and `bf16` inputs, compared as `f32`.

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::half::{bf16, f16};
use reduce::{ArgInput, ArgMin, Error, Op};

/// The CPU reference: the first index holding the largest (`Op::Max`) or
/// smallest element, or the first NaN.
fn expected_index<T: TestElement + PartialOrd>(data: &[T], op: Op) -> usize {
    if let Some(first_nan) = data.iter().position(|x| x.is_nan()) {
        return first_nan;
    }
    let mut best = 0;
    for (i, x) in data.iter().enumerate().skip(1) {
        let better = match op {
            Op::Max => *x > data[best],
            _ => *x < data[best],
        };
        if better {
            best = i;
        }
    }
    best
}

fn check<B: TestBackend, T: TestElement + ArgInput<Value = T> + PartialOrd>(
    backend: &mut Tester<B>,
    data: &[T],
    offset: usize,
    op: Op,
) -> Result<(), String> {
    let (index, value) = backend.arg(data, offset, op)?;
    let expected = expected_index(data, op);
    // The element itself: a NaN's payload may change, a zero's sign may not.
    let value_ok = value.to_bits() == data[expected].to_bits() || (value.is_nan() && data[expected].is_nan());
    if index != expected as u64 || !value_ok {
        return Err(format!(
            "got ({index}, {value:?}), expected ({expected}, {:?})",
            data[expected]
        ));
    }
    Ok(())
}

/// Random data with the extreme planted several times (ties), at random
/// lengths and offsets; for floats also NaN, infinities and signed zeros.
fn random_ties<T: TestElement + ArgInput<Value = T> + PartialOrd>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let mut failures = Vec::new();
        for &n in &[1usize, 2, 3, 5, 16, 17, 33, 1000, 4097, 50_001, 2_000_003] {
            let n = backend.size(n, 60_000);
            for case in 0..4 {
                for op in [Op::Max, Op::Min] {
                    let mut data: Vec<T> = random_vec::<T>(&mut rng, Op::Sum, n);
                    let extreme = data[rng.gen_range(0..n)];
                    for _ in 0..rng.gen_range(1..4) {
                        let at = rng.gen_range(0..n);
                        data[at] = extreme;
                        // A tie a few elements on, often in the same 16-byte vector.
                        if let Some(near) = data.get_mut(at + rng.gen_range(1..4)) {
                            *near = extreme;
                        }
                    }
                    if case == 3 {
                        let at = rng.gen_range(0..n);
                        data[at] = T::special(&mut rng, op);
                    }
                    let offset = rng.gen_range(0..8);
                    if let Err(e) = check(&mut backend, &data, offset, op) {
                        failures.push(format!("{}: {op} n={n} offset={offset}: {e}", backend.name()));
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

macro_rules! random_ties_tests {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() {
            random_ties::<$t>(stringify!($name));
        }
    )*};
}

random_ties_tests! {
    argmax_i32_ties_sizes_offsets: i32;
    argmax_u32_ties_sizes_offsets: u32;
    argmax_i64_ties_sizes_offsets: i64;
    argmax_u64_ties_sizes_offsets: u64;
    argmax_f32_ties_sizes_offsets: f32;
    argmax_f64_ties_sizes_offsets: f64;
}

/// Known answers: the first NaN wins (also before a larger value), ties and
/// signed zeros give the first index, infinities are values; empty is an error.
#[test]
fn argmax_f32_known_answers() {
    for_each_backend!("argmax_f32_known_answers", |backend| {
        let name = backend.name();
        let mut data = vec![1.0f32; 5000];
        data[4000] = f32::NAN;
        data[4321] = f32::NAN;
        data[10] = 7.0;
        for op in [Op::Max, Op::Min] {
            let (index, value) = backend.arg(&data, 1, op).unwrap();
            assert_eq!(index, 4000, "{name}: {op}");
            assert!(value.is_nan(), "{name}: {op}");
        }
        let zeros = [-1.0f32, -0.0, 0.0, -0.0];
        let (index, value) = backend.arg(&zeros, 0, Op::Max).unwrap();
        assert_eq!(
            (index, value.to_bits()),
            (1, (-0.0f32).to_bits()),
            "{name}: -0.0 and +0.0 are equal, the first one is returned"
        );
        let (index, value) = backend.arg(&zeros[1..], 0, Op::Min).unwrap();
        assert_eq!((index, value.to_bits()), (0, (-0.0f32).to_bits()), "{name}");
        let infinities = [
            3.0f32,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        assert_eq!(
            backend.arg(&infinities, 2, Op::Max).unwrap(),
            (2, f32::INFINITY),
            "{name}"
        );
        assert_eq!(
            backend.arg(&infinities, 2, Op::Min).unwrap(),
            (1, f32::NEG_INFINITY),
            "{name}"
        );
        let empty: [f32; 0] = [];
        let error = backend.arg(&empty, 0, Op::Max).unwrap_err();
        assert!(error.contains("empty"), "{name}: {error}");
    });
    assert!(matches!(
        reduce::emulated::Emulator::default().reduce::<i64, _>(&[], ArgMin),
        Err(Error::Empty { op: Op::Min })
    ));
}

/// Integer bounds and all-equal input.
#[test]
fn argmax_i64_bounds_and_equal() {
    for_each_backend!("argmax_i64_bounds_and_equal", |backend| {
        let name = backend.name();
        let mut data = vec![0i64; 3000];
        data[2999] = i64::MAX;
        data[17] = i64::MIN;
        data[2500] = i64::MAX;
        assert_eq!(backend.arg(&data, 3, Op::Max).unwrap(), (2500, i64::MAX), "{name}");
        assert_eq!(backend.arg(&data, 3, Op::Min).unwrap(), (17, i64::MIN), "{name}");
        let equal = vec![42i64; 777];
        assert_eq!(backend.arg(&equal, 1, Op::Max).unwrap(), (0, 42), "{name}");
        assert_eq!(backend.arg(&equal, 1, Op::Min).unwrap(), (0, 42), "{name}");
    });
}

/// A half float that argmax compares as the `f32` it converts to.
trait HalfInput: ArgInput<Value = f32> + PartialEq {
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
    fn bits(self) -> u16;
    fn poison() -> Self;
}

macro_rules! half_input {
    ($(($t:ident, $poison:expr)),*) => {$(
        impl HalfInput for $t {
            fn from_f32(x: f32) -> Self { $t::from_f32(x) }
            fn to_f32(self) -> f32 { $t::to_f32(self) }
            fn bits(self) -> u16 { $t::to_bits(self) }
            fn poison() -> Self { $t::from_bits($poison) }
        }
    )*};
}
// NaNs: argmax and argmin return the first NaN, so a read of the padding
// changes the index.
half_input!((f16, F16_POISON), (bf16, BF16_POISON));

/// A random half: multiples of 0.5 below `range` in magnitude (a small
/// range puts ties in the same vector); with `specials`, sometimes a NaN, an
/// infinity or a signed zero.
fn random_half<H: HalfInput>(rng: &mut StdRng, range: i32, specials: bool) -> H {
    if specials && rng.gen_ratio(1, 500) {
        let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0];
        return H::from_f32(special[rng.gen_range(0..special.len())]);
    }
    H::from_f32(rng.gen_range(-2 * range..2 * range) as f32 / 2.0)
}

/// Half inputs at random lengths and offsets, against the reference over
/// their `f32` values: the index, and the value bit for bit (any NaN for a NaN).
fn random_halves<H: HalfInput + std::fmt::Debug>(test: &str) {
    let mut rng = rng(test);
    for_each_backend!(test, |backend| {
        let mut failures = Vec::new();
        for &n in &[1usize, 2, 7, 8, 9, 1000, 4097, 70_001, 3_000_017] {
            let n = backend.size(n, 70_001);
            for case in 0..3 {
                let range = if case == 0 { 8 } else { 1000 };
                let data: Vec<H> = (0..n).map(|_| random_half(&mut rng, range, case == 2)).collect();
                let as_f32: Vec<f32> = data.iter().map(|h| h.to_f32()).collect();
                for op in [Op::Max, Op::Min] {
                    let offset = rng.gen_range(0..16);
                    let expected = expected_index(&as_f32, op);
                    let result = backend.arg_with_poison(&data, offset, H::poison(), op);
                    let ok = matches!(result, Ok((index, value)) if index == expected as u64
                        && (value.bits() == data[expected].bits() || (value.to_f32().is_nan() && as_f32[expected].is_nan())));
                    if !ok {
                        failures.push(format!(
                            "{}: {op} n={n} offset={offset}: got {result:?}, expected ({expected}, {:?})",
                            backend.name(),
                            data[expected]
                        ));
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

#[test]
fn argmax_f16_ties_sizes_offsets() {
    random_halves::<f16>("argmax_f16_ties_sizes_offsets");
}

#[test]
fn argmax_bf16_ties_sizes_offsets() {
    random_halves::<bf16>("argmax_bf16_ties_sizes_offsets");
}

/// Known answers for halves: 70,000 f16 ones with the maximum 2.0 planted
/// twice and the minimum at the very end; signed zeros keep their sign.
#[test]
fn argmax_f16_known_answers() {
    for_each_backend!("argmax_f16_known_answers", |backend| {
        let name = backend.name();
        let mut data = vec![f16::ONE; 70_000];
        data[65_537] = f16::from_f32(2.0);
        data[69_000] = f16::from_f32(2.0);
        data[69_999] = f16::from_f32(-0.5);
        let poison = f16::poison();
        assert_eq!(
            backend.arg_with_poison(&data, 3, poison, Op::Max).unwrap(),
            (65_537, f16::from_f32(2.0)),
            "{name}"
        );
        assert_eq!(
            backend.arg_with_poison(&data, 3, poison, Op::Min).unwrap(),
            (69_999, f16::from_f32(-0.5)),
            "{name}"
        );
        let zeros = [bf16::from_f32(-1.0), bf16::NEG_ZERO, bf16::ZERO];
        let (index, value) = backend.arg_with_poison(&zeros, 1, bf16::poison(), Op::Max).unwrap();
        assert_eq!((index, value.to_bits()), (1, bf16::NEG_ZERO.to_bits()), "{name}");
    });
}
