//! Reductions into a wider accumulator (`Widened::<A>`, `mean`):
//! every input/accumulator pair, on the emulator and the GPU, against an
//! exact (integer) or `f64` (float) CPU reference.

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::Rng;
use reduce::half::{bf16, f16};
use reduce::{ElementType, Error, Op, Widened, WidensTo};

/// Input types under test: random values, a poison, and the value as the
/// reference sees it.
trait TestInput: Copy + std::fmt::Debug {
    fn random(rng: &mut StdRng) -> Self;
    fn poison() -> Self;
    /// The value, exactly (every input type fits in `f64` or `i128`).
    fn wide(self) -> Wide;
}

#[derive(Clone, Copy, Debug)]
enum Wide {
    Int(i128),
    Float(f64),
}

macro_rules! int_input {
    ($($t:ty),*) => {$(
        impl TestInput for $t {
            fn random(rng: &mut StdRng) -> Self {
                // The whole range, and never 0 (a skipped element must show).
                let x: $t = rng.gen();
                if x == 0 { 1 } else { x }
            }
            fn poison() -> Self { 0xA5A5_A5A5_A5A5_A5A5u64 as $t }
            fn wide(self) -> Wide { Wide::Int(self as i128) }
        }
    )*};
}
int_input!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_input {
    ($($t:ty),*) => {$(
        impl TestInput for $t {
            fn random(rng: &mut StdRng) -> Self {
                let x: $t = rng.gen_range(-1000.0..1000.0);
                if x == 0.0 { 1.0 } else { x }
            }
            fn poison() -> Self { <$t as TestElement>::poison() }
            fn wide(self) -> Wide { Wide::Float(self as f64) }
        }
    )*};
}
float_input!(f32, f64);

macro_rules! half_input {
    ($(($t:ident, $poison:expr)),*) => {$(
        impl TestInput for $t {
            fn random(rng: &mut StdRng) -> Self {
                // Beyond the type's integers (2048 for f16, 256 for bf16), so
                // a sum in the narrow type would round where f32 does not.
                let x: f32 = rng.gen_range(-3000.0..3000.0);
                $t::from_f32(if x.abs() < 1.0 { 1.0 } else { x })
            }
            fn poison() -> Self { $t::from_bits($poison) }
            fn wide(self) -> Wide { Wide::Float(self.to_f64()) }
        }
    )*};
}
half_input!((f16, F16_POISON), (bf16, BF16_POISON));

/// The CPU reference for `op` over `data` in `A`, and the check of `got`:
/// integer accumulators exactly (the sum wraps in the low 64 bits); float
/// accumulators through the crate's float reference (`check_basic`), over
/// the inputs converted to `A` as the kernels convert them.
fn check<A: TestElement, In: TestInput>(got: A, data: &[In], op: Op) -> Result<(), String> {
    let float_accumulator = matches!(A::TYPE, ElementType::F32 | ElementType::F64);
    let wide: Vec<Wide> = data.iter().map(|x| x.wide()).collect();
    if !float_accumulator {
        let sum: i128 = wide.iter().map(|w| if let Wide::Int(x) = w { *x } else { 0 }).sum();
        return if got.to_bits() == sum as u64 {
            Ok(())
        } else {
            Err(format!("got {got:?}, expected the low 64 bits of {sum}"))
        };
    }
    let converted: Vec<f64> = wide
        .iter()
        .map(|w| match *w {
            Wide::Int(x) => x as f64,
            Wide::Float(x) => x,
        })
        .collect();
    A::check_basic(got, &from_f64::<A>(&converted), op)
}

/// The values as `A` (f32 or f64), for the float reference. Exact: each
/// value is already what the kernel converts its input to (halves are exact
/// in f32; integers were rounded to f64 as the kernel rounds them).
fn from_f64<A: TestElement>(values: &[f64]) -> Vec<A> {
    values
        .iter()
        .map(|&x| {
            if std::mem::size_of::<A>() == 4 {
                // SAFETY: `A` is f32 here (4-byte float accumulator).
                unsafe { std::mem::transmute_copy(&(x as f32)) }
            } else {
                // SAFETY: `A` is f64 here.
                unsafe { std::mem::transmute_copy(&x) }
            }
        })
        .collect()
}

/// Lengths around the vector width of every input size, tiles, and the grid
/// cap; the largest run on the GPU only.
const LENGTHS: [usize; 13] = [1, 2, 3, 7, 15, 16, 17, 31, 33, 1000, 4099, 50_001, 3_000_001];

fn sizes_offsets<A: TestElement, In: WidensTo<A> + TestInput>(test: &str, op: Op) {
    let mut rng = rng(test);
    let lanes = 16 / std::mem::size_of::<In>();
    for_each_backend!(test, |backend| {
        let mut failures = Vec::new();
        for &n in &LENGTHS {
            let n = backend.size(n, 60_000);
            for offset in [0, 1, lanes / 2, lanes - 1] {
                let data: Vec<In> = (0..n).map(|_| In::random(&mut rng)).collect();
                let result = backend
                    .reduce_as::<A, In>(&data, offset, In::poison(), op)
                    .and_then(|got| check::<A, In>(got, &data, op));
                if let Err(e) = result {
                    failures.push(format!("{}: n={n} offset={offset}: {e}", backend.name()));
                }
            }
        }
        if op.name() == "sum" {
            // Empty: the identity.
            if let Err(e) = backend
                .reduce_as::<A, In>(&[], 0, In::poison(), op)
                .and_then(|got| check::<A, In>(got, &[], op))
            {
                failures.push(format!("{}: empty: {e}", backend.name()));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}

macro_rules! sizes_offsets_tests {
    ($($name:ident: $op:ident, $in:ty => $acc:ty;)*) => {$(
        #[test]
        fn $name() {
            sizes_offsets::<$acc, $in>(stringify!($name), Op::$op);
        }
    )*};
}

sizes_offsets_tests! {
    sum_i8_as_i64_sizes_offsets: Sum, i8 => i64;
    sum_i16_as_i64_sizes_offsets: Sum, i16 => i64;
    sum_i32_as_i64_sizes_offsets: Sum, i32 => i64;
    sum_u8_as_u64_sizes_offsets: Sum, u8 => u64;
    sum_u16_as_u64_sizes_offsets: Sum, u16 => u64;
    sum_u32_as_u64_sizes_offsets: Sum, u32 => u64;
    sum_i32_as_f64_sizes_offsets: Sum, i32 => f64;
    sum_u32_as_f64_sizes_offsets: Sum, u32 => f64;
    sum_i64_as_f64_sizes_offsets: Sum, i64 => f64;
    sum_u64_as_f64_sizes_offsets: Sum, u64 => f64;
    sum_f32_as_f64_sizes_offsets: Sum, f32 => f64;
    sum_f64_as_f64_sizes_offsets: Sum, f64 => f64;
    sum_f16_as_f32_sizes_offsets: Sum, f16 => f32;
    max_f16_as_f32_sizes_offsets: Max, f16 => f32;
    min_f16_as_f32_sizes_offsets: Min, f16 => f32;
    sum_bf16_as_f32_sizes_offsets: Sum, bf16 => f32;
    max_bf16_as_f32_sizes_offsets: Max, bf16 => f32;
    min_bf16_as_f32_sizes_offsets: Min, bf16 => f32;
}

/// Known answers the narrow types cannot give: 70,000 f16 ones sum to
/// exactly 70,000 (f16 itself stops counting at 2048); i32::MAX × 1000 in
/// i64 does not wrap; 300 × 255 bytes.
#[test]
fn sum_f16_i32_u8_wide_known_answers() {
    for_each_backend!("sum_f16_i32_u8_wide_known_answers", |backend| {
        let ones = vec![f16::ONE; 70_000];
        let got = backend.reduce_as::<f32, f16>(&ones, 3, f16::NAN, Op::Sum).unwrap();
        assert_eq!(got, 70_000.0, "{}", backend.name());
        let bf_ones = vec![bf16::ONE; 70_000];
        let got = backend.reduce_as::<f32, bf16>(&bf_ones, 1, bf16::NAN, Op::Sum).unwrap();
        assert_eq!(got, 70_000.0, "{}", backend.name());
        let big = vec![i32::MAX; 1000];
        let got = backend.reduce_as::<i64, i32>(&big, 1, 0, Op::Sum).unwrap();
        assert_eq!(got, 1000 * i32::MAX as i64, "{}", backend.name());
        let bytes = vec![255u8; 300];
        assert_eq!(
            backend.reduce_as::<u64, u8>(&bytes, 5, 0, Op::Sum).unwrap(),
            300 * 255,
            "{}",
            backend.name()
        );
    });
}

/// Half-precision max/min follow the float rules: NaN anywhere gives NaN,
/// infinities are values, empty is an error; and sum keeps NaN and ±inf.
#[test]
fn max_min_f16_bf16_special_values() {
    for_each_backend!("max_min_f16_bf16_special_values", |backend| {
        let name = backend.name();
        let mut data = vec![f16::from_f32(2.5); 1000];
        data[617] = f16::NEG_INFINITY;
        data[3] = f16::from_f32(-7.0);
        assert_eq!(
            backend.reduce_as::<f32, f16>(&data, 0, f16::NAN, Op::Max).unwrap(),
            2.5,
            "{name}"
        );
        assert_eq!(
            backend.reduce_as::<f32, f16>(&data, 0, f16::NAN, Op::Min).unwrap(),
            f32::NEG_INFINITY,
            "{name}"
        );
        data[999] = f16::INFINITY;
        assert!(
            backend
                .reduce_as::<f32, f16>(&data, 0, f16::NAN, Op::Sum)
                .unwrap()
                .is_nan(),
            "{name}: inf + -inf"
        );
        data[500] = f16::NAN;
        for op in [Op::Max, Op::Min, Op::Sum] {
            assert!(
                backend.reduce_as::<f32, f16>(&data, 2, f16::ZERO, op).unwrap().is_nan(),
                "{name}: {op}"
            );
        }
        let mut brain = vec![bf16::from_f32(1e30); 100];
        brain[40] = bf16::NAN;
        assert!(
            backend
                .reduce_as::<f32, bf16>(&brain, 0, bf16::ZERO, Op::Max)
                .unwrap()
                .is_nan(),
            "{name}"
        );
        for op in [Op::Max, Op::Min] {
            assert!(
                matches!(backend.reduce_as::<f32, f16>(&[], 0, f16::ZERO, op), Err(ref e) if e.contains("empty")),
                "{name}: {op}"
            );
        }
    });
}

/// Pairs without a kernel for the op are refused with a helpful error.
#[test]
fn product_f16_as_f32_is_unsupported() {
    for_each_backend!("product_f16_as_f32_is_unsupported", |backend| {
        let data = [f16::ONE; 4];
        let error = backend
            .reduce_as::<f32, f16>(&data, 0, f16::ZERO, Op::Product)
            .unwrap_err();
        assert!(
            error.contains("product of f16 into F32 is not available"),
            "{}: {error}",
            backend.name()
        );
        let error = backend.reduce_as::<i64, i32>(&[1, 2], 0, 0, Op::Max).unwrap_err();
        assert!(error.contains("max of i32 into I64"), "{}: {error}", backend.name());
    });
    assert!(matches!(
        reduce::emulated::Emulator::default().reduce(&[f16::ONE], Widened::<f32>::new(Op::Product)),
        Err(Error::UnsupportedWidening {
            op: Op::Product,
            input: "f16",
            ..
        })
    ));
}

/// `mean` on the GPU: known answers, NaN for empty input and for NaN data.
#[test]
fn mean_u32_f16_f64_known_answers() {
    if gpu("mean_u32_f16_f64_known_answers").is_none() {
        return;
    }
    use cust::memory::DeviceBuffer;
    let ints = DeviceBuffer::from_slice(&[1u32, 2, 3, 4]).unwrap();
    assert_eq!(reduce::mean(&ints).unwrap(), 2.5);
    let big = DeviceBuffer::from_slice(&[u32::MAX; 1000]).unwrap();
    assert_eq!(reduce::mean(&big).unwrap(), u32::MAX as f64);
    let halves = DeviceBuffer::from_slice(&[f16::from_f32(1.5), f16::from_f32(-0.5)]).unwrap();
    assert_eq!(reduce::mean(&halves).unwrap(), 0.5f32);
    let floats = DeviceBuffer::from_slice(&[0.1f64, 0.2, 0.3]).unwrap();
    assert!((reduce::mean(&floats).unwrap() - 0.2).abs() < 1e-16);
    assert!(reduce::mean(&floats.index(..0)).unwrap().is_nan());
    let with_nan = DeviceBuffer::from_slice(&[1.0f32, f32::NAN]).unwrap();
    assert!(reduce::mean(&with_nan).unwrap().is_nan());
}
