//! Shared test support: the backends (the SIMT emulator always, the GPU when
//! there is one), random inputs and the CPU reference.
#![allow(dead_code)] // each test file uses a different part of this module

use cust::context::{Context, CurrentContext};
use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::stream::{Stream, StreamFlags};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use reduce::axes::Strided;
use reduce::emulated::Emulator;
use reduce::emulated::HostBuffer;
use reduce::ladder::{self, DotKernel, Ladder};
use reduce::{
    ArgInput, ArgMax, ArgMin, Backend as ReduceBackend, Cuda, Element, Emulated, Op, Over, Reducer, Widened, WidensTo,
};
use std::sync::OnceLock;

/// The shared context, made current on this thread; `None` (after printing
/// that the test was skipped) when there is no CUDA device.
pub fn gpu(test: &str) -> Option<&'static Context> {
    static CONTEXT: OnceLock<Option<Context>> = OnceLock::new();
    let context = CONTEXT.get_or_init(|| match cust::quick_init() {
        Ok(context) => Some(context),
        Err(e) => {
            eprintln!("no usable CUDA device ({e})");
            None
        }
    });
    match context {
        Some(context) => {
            CurrentContext::set_current(context).expect("make the test context current");
            Some(context)
        }
        None => {
            skipped(test, "on the GPU: no CUDA device");
            None
        }
    }
}

/// Says that `test` (or its GPU half) was skipped, and why: on stdout, and
/// as a line of the file `REDUCE_TEST_SKIP_LOG` names, if set, so that the
/// test script can report every skip (the test runner counts a test that
/// returned early as passed).
pub fn skipped(test: &str, why: &str) {
    println!("skipped {test} {why}");
    if let Ok(path) = std::env::var("REDUCE_TEST_SKIP_LOG") {
        use std::io::Write;
        let line = format!("{test} {why}\n");
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
        file.and_then(|mut f| f.write_all(line.as_bytes()))
            .unwrap_or_else(|e| panic!("cannot record the skip of {test} in {path}: {e}"));
    }
}

/// A generator seeded from the clock (fresh data every run), or from
/// `REDUCE_TEST_SEED` to replay a failure; the seed is printed either way.
pub fn rng(test: &str) -> StdRng {
    let seed = std::env::var("REDUCE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("{test}: REDUCE_TEST_SEED={seed}");
    StdRng::seed_from_u64(seed)
}

/// Element types under test: random data and the CPU reference.
pub trait TestElement: Element + Default {
    /// A random value suited to `op` over `n` elements: never zero for
    /// products, close to 1 for float products (so they neither overflow nor
    /// vanish), odd for integer products (so they never wrap to 0).
    fn random(rng: &mut StdRng, op: Op, n: usize) -> Self;
    /// A value no correct kernel writes for the inputs the tests use.
    /// A random value such that sums of a few million of them are exact in
    /// the element type (small integers), so a sum can be checked bit for bit.
    fn random_exact_sum(rng: &mut StdRng) -> Self;
    /// A special value for `op`: integer bounds and zero; NaN, ±inf, ±0 for
    /// floats (and subnormals, except in products, whose CPU reference in
    /// f64 would not underflow where the element type does).
    fn special(rng: &mut StdRng, op: Op) -> Self;
    /// What the tests put into outputs before a call, and around inputs
    /// where no op is known: for floats a signalling NaN with an `A5`
    /// payload, which no arithmetic produces (an unwritten output is caught
    /// even where the answer is NaN) and which turns any sum, product, max
    /// or min that reads it into NaN; for integers `0xA5…`, odd and nonzero,
    /// so it changes any sum or wrapping product that reads it.
    fn poison() -> Self;
    /// What the tests put around an input reduced with `op`: a value that
    /// changes `op`'s result if a kernel reads it (the extreme for max and
    /// min, an infinity or the largest float for the NaN-ignoring ops,
    /// [`TestElement::poison`] otherwise).
    fn poison_for(op: Op) -> Self;
    /// `op`'s identity: what an empty segment reduces to (0, 1, the lowest
    /// value for max, the highest for min, NaN for the NaN-ignoring max and
    /// min of floats).
    fn identity(op: Op) -> Self;
    fn to_bits(self) -> u64;
    fn is_nan(self) -> bool;
    /// `x * x` in the type, as the kernels compute it (integers wrap).
    fn square(self) -> Self;
    fn abs_value(self) -> Self;
    /// `Ok` if `got` is the right result of `Sum`, `Product`, `Max` or `Min` over `data`.
    fn check_basic(got: Self, data: &[Self], op: Op) -> Result<(), String>;

    /// `Ok` if `got` is the right result of `op` over `data`: the other ops
    /// are checked as a basic op over the data they map to.
    fn check(got: Self, data: &[Self], op: Op) -> Result<(), String> {
        let without_nan = || data.iter().copied().filter(|x| !x.is_nan()).collect::<Vec<_>>();
        match op {
            Op::NanSum => Self::check_basic(got, &without_nan(), Op::Sum),
            Op::NanMax | Op::NanMin if data.iter().all(|x| x.is_nan()) && !data.is_empty() => {
                // Nothing but NaN: the result is NaN, as max/min of the data says.
                Self::check_basic(got, data, Op::Max)
            }
            Op::NanMax => Self::check_basic(got, &without_nan(), Op::Max),
            Op::NanMin => Self::check_basic(got, &without_nan(), Op::Min),
            Op::SumOfSquares => Self::check_basic(got, &data.iter().map(|x| x.square()).collect::<Vec<_>>(), Op::Sum),
            Op::MaxAbs => Self::check_basic(got, &data.iter().map(|x| x.abs_value()).collect::<Vec<_>>(), Op::Max),
            _ => Self::check_basic(got, data, op),
        }
    }
}

/// The operators defined for `T`.
pub fn ops_for<T: TestElement>() -> Vec<Op> {
    Op::ALL.into_iter().filter(|op| op.is_defined_for(T::TYPE)).collect()
}

macro_rules! integer_test_element {
    ($($t:ty),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut StdRng, op: Op, _n: usize) -> Self {
                let x: $t = rng.gen();
                if op == Op::Product { x | 1 } else if x == 0 { 1 } else { x }
            }
            fn random_exact_sum(rng: &mut StdRng) -> Self { Self::random(rng, Op::Sum, 0) }
            fn special(rng: &mut StdRng, _op: Op) -> Self {
                [<$t>::MIN, <$t>::MAX, 0, 1][rng.gen_range(0..4)]
            }
            fn poison() -> Self { 0xA5A5_A5A5_A5A5_A5A5u64 as $t }
            fn poison_for(op: Op) -> Self {
                match op {
                    Op::Max | Op::NanMax | Op::MaxAbs => <$t>::MAX,
                    Op::Min | Op::NanMin => <$t>::MIN,
                    _ => Self::poison(),
                }
            }
            fn identity(op: Op) -> Self {
                match op {
                    Op::Product => 1,
                    Op::Max | Op::NanMax | Op::MaxAbs => <$t>::MIN,
                    Op::Min | Op::NanMin => <$t>::MAX,
                    _ => 0,
                }
            }
            fn to_bits(self) -> u64 { self as u64 }
            fn is_nan(self) -> bool { false }
            fn square(self) -> Self { self.wrapping_mul(self) }
            fn abs_value(self) -> Self { self }
            fn check_basic(got: Self, data: &[Self], op: Op) -> Result<(), String> {
                let expected = match op {
                    Op::Sum => data.iter().fold(0 as $t, |a, &b| a.wrapping_add(b)),
                    Op::Product => data.iter().fold(1 as $t, |a, &b| a.wrapping_mul(b)),
                    Op::Max => *data.iter().max().ok_or("max of empty")?,
                    Op::Min => *data.iter().min().ok_or("min of empty")?,
                    _ => return Err(format!("no reference for {op}")),
                };
                if got == expected { Ok(()) } else { Err(format!("got {got}, expected {expected}")) }
            }
        }
    )*};
}
integer_test_element!(i32, u32, i64, u64);

macro_rules! float_test_element {
    ($(($t:ty, $poison:expr)),*) => {$(
        impl TestElement for $t {
            fn random(rng: &mut StdRng, op: Op, n: usize) -> Self {
                match op {
                    // ±1, with about one 2 and one 0.5 per input (fewer per element
                    // as n grows, so the exponent stays small): the product is
                    // exact in the element type, so it is checked bit for bit and
                    // a single skipped or repeated element changes the result.
                    Op::Product => {
                        let magnitude = match rng.gen_range(0..n.max(64)) {
                            0 => 2.0,
                            1 => 0.5,
                            _ => 1.0,
                        };
                        if rng.gen() { magnitude } else { -magnitude }
                    }
                    // Nonzero integers small enough that every partial sum
                    // (of squares, for `SumOfSquares`) is exact in the element
                    // type in any order: the sum is checked bit for bit, and a
                    // dropped or repeated element changes it by at least 1.
                    Op::Sum | Op::NanSum | Op::SumOfSquares => {
                        let budget = (1u64 << (<$t>::MANTISSA_DIGITS - 1)) as f64 / n.max(1) as f64;
                        let limit = if op == Op::SumOfSquares { budget.sqrt() } else { budget };
                        let x = rng.gen_range(1..=limit.clamp(1.0, 1000.0) as i64) as $t;
                        if rng.gen() { x } else { -x }
                    }
                    _ => {
                        let x: f64 = rng.gen_range(-1000.0..1000.0);
                        if x == 0.0 { 1.0 } else { x as $t }
                    }
                }
            }
            fn random_exact_sum(rng: &mut StdRng) -> Self {
                let x: i32 = rng.gen_range(-3..=3);
                if x == 0 { 1.0 } else { x as $t }
            }
            fn special(rng: &mut StdRng, op: Op) -> Self {
                let specials = [<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, 0.0, -0.0, <$t>::MIN_POSITIVE / 2.0];
                let count = if op == Op::Product { specials.len() - 1 } else { specials.len() };
                specials[rng.gen_range(0..count)]
            }
            fn poison() -> Self { <$t>::from_bits($poison) }
            fn poison_for(op: Op) -> Self {
                match op {
                    // These skip NaN: a huge value changes them instead.
                    Op::NanSum => <$t>::MAX,
                    Op::NanMax => <$t>::INFINITY,
                    Op::NanMin => <$t>::NEG_INFINITY,
                    _ => Self::poison(),
                }
            }
            fn identity(op: Op) -> Self {
                match op {
                    Op::Product => 1.0,
                    Op::Max | Op::MaxAbs => <$t>::NEG_INFINITY,
                    Op::Min => <$t>::INFINITY,
                    // No non-NaN element, as in an all-NaN input: the
                    // canonical NaN, as every NaN result is.
                    Op::NanMax | Op::NanMin => <$t>::from_bits(!0 >> 1),
                    _ => 0.0,
                }
            }
            fn to_bits(self) -> u64 { <$t>::to_bits(self) as u64 }
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            fn square(self) -> Self { self * self }
            fn abs_value(self) -> Self { <$t>::abs(self) }
            fn check_basic(got: Self, data: &[Self], op: Op) -> Result<(), String> {
                let wide = data.iter().map(|&x| x as f64);
                let has_nan = data.iter().any(|x| x.is_nan());
                let abs_sum: f64 = data.iter().map(|&x| (x as f64).abs()).sum();
                // Integers whose absolute sum fits the mantissa add without rounding
                // in any order; ±powers of two multiply without rounding while the
                // result stays in range. Such inputs are checked exactly.
                let exact_sum = abs_sum < (1u64 << <$t>::MANTISSA_DIGITS) as f64 && data.iter().all(|x| x.fract() == 0.0);
                let exact_product = data.iter().all(|&x| x != 0.0 && (x.abs() as f64).log2().fract() == 0.0);
                let (expected, bound) = match op {
                    Op::Max | Op::Min if data.is_empty() => return Err(format!("{op} of empty")),
                    Op::Max if has_nan => (f64::NAN, 0.0),
                    Op::Min if has_nan => (f64::NAN, 0.0),
                    Op::Max => (wide.fold(f64::NEG_INFINITY, f64::max), 0.0),
                    Op::Min => (wide.fold(f64::INFINITY, f64::min), 0.0),
                    Op::Sum if exact_sum => (wide.sum::<f64>(), 0.0),
                    Op::Sum => (wide.sum::<f64>(), (data.len() + 1) as f64 * <$t>::EPSILON as f64 * abs_sum),
                    Op::Product if exact_product => (wide.product::<f64>(), 0.0),
                    Op::Product => {
                        let p: f64 = wide.product();
                        (p, (data.len() + 1) as f64 * <$t>::EPSILON as f64 * p.abs())
                    }
                    _ => return Err(format!("no reference for {op}")),
                };
                let got_wide = got as f64;
                let ok = if expected.is_nan() {
                    got.is_nan() && got.to_bits() != Self::poison().to_bits()
                } else if expected.is_infinite() || bound == 0.0 {
                    got_wide == expected
                } else {
                    (got_wide - expected).abs() <= bound
                };
                if ok { Ok(()) } else { Err(format!("got {got:e}, expected {expected:e} ± {bound:e}")) }
            }
        }
    )*};
}
// The poisons: exponent all ones, quiet bit clear, an A5 payload.
float_test_element!((f32, 0x7FA5_A5A5), (f64, 0x7FF5_A5A5_A5A5_A5A5));

/// The half floats' poisons, made as the floats' ([`TestElement::poison`]).
pub const F16_POISON: u16 = 0x7DA5;
pub const BF16_POISON: u16 = 0x7FA5;

/// `Ok` if `results` holds the right result of `op` for each segment of
/// `values` that `offsets` describes (the identity for an empty one).
pub fn check_segments<T: TestElement>(results: &[T], values: &[T], offsets: &[u64], op: Op) -> Result<(), String> {
    if results.len() + 1 != offsets.len() {
        return Err(format!("{} results for {} offsets", results.len(), offsets.len()));
    }
    for (s, (got, bounds)) in results.iter().zip(offsets.windows(2)).enumerate() {
        let (begin, end) = (bounds[0] as usize, bounds[1] as usize);
        if begin == end {
            let identity = T::identity(op);
            if got.to_bits() != identity.to_bits() && !(got.is_nan() && identity.is_nan()) {
                return Err(format!("segment {s} (empty): got {got:?}, expected {identity:?}"));
            }
            continue;
        }
        T::check(*got, &values[begin..end], op).map_err(|e| format!("segment {s} [{begin}, {end}): {e}"))?;
    }
    Ok(())
}

/// Offsets of consecutive segments of the given lengths, starting at `first`.
/// Whether `predicate` holds for `x` (`Nonzero`: NaN is nonzero, -0.0 is
/// zero): the CPU reference of `Count`, `Any` and `All`.
pub fn predicate_holds(predicate: reduce::Predicate, x: f64) -> bool {
    match predicate {
        reduce::Predicate::Nonzero => x != 0.0,
        reduce::Predicate::Nan => x.is_nan(),
        reduce::Predicate::Inf => x.is_infinite(),
        other => panic!("no reference for {other:?}"),
    }
}

pub fn offsets_of(first: u64, lengths: &[usize]) -> Vec<u64> {
    let mut offsets = vec![first];
    for length in lengths {
        offsets.push(offsets[offsets.len() - 1] + *length as u64);
    }
    offsets
}

/// Random data of length `n` for `op`.
pub fn random_vec<T: TestElement>(rng: &mut StdRng, op: Op, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng, op, n)).collect()
}

/// Random small integers (as `T`) whose sum is exact in `T`.
pub fn random_exact_sum_vec<T: TestElement>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random_exact_sum(rng)).collect()
}

/// Element types for dot tests: random inputs and the exact expected dot.
pub trait DotElement: TestElement {
    /// Full-range integers (the products and sum wrap); small integers as
    /// floats (products and every partial sum exact up to a few million terms).
    fn random_for_dot(rng: &mut StdRng) -> Self;
    /// The dot product as the GPU must compute it, exactly.
    fn exact_dot(a: &[Self], b: &[Self]) -> Self;
}

macro_rules! integer_dot {
    ($($t:ty),*) => {$(
        impl DotElement for $t {
            fn random_for_dot(rng: &mut StdRng) -> Self { rng.gen() }
            fn exact_dot(a: &[Self], b: &[Self]) -> Self {
                a.iter().zip(b).fold(0, |acc: $t, (x, y)| acc.wrapping_add(x.wrapping_mul(*y)))
            }
        }
    )*};
}
integer_dot!(i32, u32, i64, u64);

macro_rules! float_dot {
    ($($t:ty),*) => {$(
        impl DotElement for $t {
            fn random_for_dot(rng: &mut StdRng) -> Self { rng.gen_range(-3i8..=3) as $t }
            fn exact_dot(a: &[Self], b: &[Self]) -> Self {
                // Every product and partial sum is an integer below 2^24 for the
                // sizes tested: exact in f64 and in $t.
                // Fold from +0.0, the library's documented start (Rust's `sum`
                // starts from -0.0, which differs on an empty or all-(-0.0) input).
                a.iter().zip(b).fold(0.0f64, |acc, (x, y)| acc + *x as f64 * *y as f64) as $t
            }
        }
    )*};
}
float_dot!(f32, f64);

/// A backend the tests run on: how test data is staged there (between
/// poison, at an offset from a 16-byte boundary), and the other forms of
/// each call that it has besides the blocking one, which must agree with it
/// bit for bit (the GPU's `_into` forms and free functions).
pub trait TestBackend: ReduceBackend + Sized {
    /// `"emulator"` or `"GPU"`.
    const NAME: &'static str;
    /// Staged data; owns its memory.
    type Staged<T: DeviceCopy>;

    /// A reducer on this backend; `None` (after printing that `test` was
    /// skipped there) where there is none.
    fn reducer(test: &str) -> Option<Reducer<Self>>;
    /// `data` between `offset` leading and 4 trailing copies of `poison`.
    fn stage<T: DeviceCopy>(data: &[T], offset: usize, poison: T) -> Self::Staged<T>;
    fn slice<T: DeviceCopy>(staged: &Self::Staged<T>) -> &Self::Slice<T>;
    fn to_vec<T: DeviceCopy + Default>(buffer: &Self::Buffer<T>) -> Result<Vec<T>, String>;
    /// `n`, or at most `emulator_max` on the emulator (every GPU thread is an
    /// OS thread there, so the largest sizes are for the GPU).
    fn size(n: usize, emulator_max: usize) -> usize;

    /// The other forms of `reduce` of `input` (with the production kernel),
    /// each of which must give `expected` bit for bit.
    fn other_reduce_forms<T: TestElement>(
        _reducer: &mut Reducer<Self>,
        _input: &Self::Slice<T>,
        _op: Op,
        _expected: T,
    ) -> Result<(), String> {
        Ok(())
    }
    /// As [`TestBackend::other_reduce_forms`], for `reduce_as`.
    fn other_reduce_as_forms<A: TestElement, In: WidensTo<A>>(
        _reducer: &mut Reducer<Self>,
        _input: &Self::Slice<In>,
        _op: Op,
        _expected: A,
    ) -> Result<(), String> {
        Ok(())
    }
    /// As [`TestBackend::other_reduce_forms`], for argmax (`op` = `Max`) and argmin.
    fn other_arg_forms<T: ArgInput>(
        _reducer: &mut Reducer<Self>,
        _input: &Self::Slice<T>,
        _op: Op,
        _expected: (u64, T),
    ) -> Result<(), String> {
        Ok(())
    }
    /// As [`TestBackend::other_reduce_forms`], for segmented and row-wise reductions.
    fn other_segmented_forms<T: TestElement>(
        _reducer: &mut Reducer<Self>,
        _values: &Self::Slice<T>,
        _segments: &StagedSegments<'_, Self>,
        _op: Op,
        _expected: &[T],
    ) -> Result<(), String> {
        Ok(())
    }
    /// As [`TestBackend::other_reduce_forms`], for axis reductions.
    fn other_axes_forms<T: TestElement>(
        _reducer: &mut Reducer<Self>,
        _input: &Self::Slice<T>,
        _layout: &Strided,
        _axes: &[isize],
        _op: Op,
        _expected: &[T],
    ) -> Result<(), String> {
        Ok(())
    }
    /// As [`TestBackend::other_reduce_forms`], for the dot product.
    fn other_dot_forms<T: TestElement>(
        _reducer: &mut Reducer<Self>,
        _a: &Self::Slice<T>,
        _b: &Self::Slice<T>,
        _expected: T,
    ) -> Result<(), String> {
        Ok(())
    }
}

impl TestBackend for Emulated {
    const NAME: &'static str = "emulator";
    type Staged<T: DeviceCopy> = Staged<T>;

    fn reducer(_test: &str) -> Option<Emulator> {
        (std::env::var("REDUCE_TEST_BACKENDS").unwrap_or_default() != "gpu").then(Emulator::default)
    }
    fn stage<T: DeviceCopy>(data: &[T], offset: usize, poison: T) -> Staged<T> {
        Staged::with_poison(data, offset, poison)
    }
    fn slice<T: DeviceCopy>(staged: &Staged<T>) -> &[T] {
        staged.slice()
    }
    fn to_vec<T: DeviceCopy + Default>(buffer: &HostBuffer<T>) -> Result<Vec<T>, String> {
        Ok(buffer.to_vec())
    }
    fn size(n: usize, emulator_max: usize) -> usize {
        n.min(emulator_max)
    }
}

impl TestBackend for Cuda {
    const NAME: &'static str = "GPU";
    /// The buffer, and the slice of it that holds the data.
    type Staged<T: DeviceCopy> = (DeviceBuffer<T>, DeviceSlice<T>);

    fn reducer(test: &str) -> Option<Reducer> {
        if std::env::var("REDUCE_TEST_BACKENDS").unwrap_or_default() == "emulator" {
            return None;
        }
        gpu(test).map(|_| Reducer::new().expect("Reducer::new"))
    }
    fn stage<T: DeviceCopy>(data: &[T], offset: usize, poison: T) -> Self::Staged<T> {
        let (buffer, range) = staged_on_gpu_with(data, offset, poison);
        let slice = buffer.index(range);
        (buffer, slice)
    }
    fn slice<T: DeviceCopy>((_, slice): &Self::Staged<T>) -> &DeviceSlice<T> {
        slice
    }
    fn to_vec<T: DeviceCopy + Default>(buffer: &DeviceBuffer<T>) -> Result<Vec<T>, String> {
        buffer.as_host_vec().map_err(|e| e.to_string())
    }
    fn size(n: usize, _emulator_max: usize) -> usize {
        n
    }

    /// `reduce_into` on another stream into a poisoned output, and `reduce::reduce`.
    fn other_reduce_forms<T: TestElement>(
        reducer: &mut Reducer,
        input: &DeviceSlice<T>,
        op: Op,
        expected: T,
    ) -> Result<(), String> {
        let (stream, copy) = (new_stream()?, input_of(input));
        let mut out = DeviceBox::new(&T::poison()).map_err(|e| e.to_string())?;
        reducer
            .scope(|s| s.reduce_into(copy, op, Over::Whole, &mut out, &stream))
            .map_err(|e| format!("reduce_into: {e}"))?;
        agree("reduce_into", expected, read_box(&out)?)?;
        agree(
            "reduce::reduce",
            expected,
            reduce::reduce(input, op).map_err(|e| format!("reduce::reduce: {e}"))?,
        )
    }

    /// `reduce_into` of the widened reduction, and `reduce::reduce` of it.
    fn other_reduce_as_forms<A: TestElement, In: WidensTo<A>>(
        reducer: &mut Reducer,
        input: &DeviceSlice<In>,
        op: Op,
        expected: A,
    ) -> Result<(), String> {
        let (stream, copy, what) = (new_stream()?, input_of(input), Widened::<A>::new(op));
        let mut out = DeviceBox::new(&A::poison()).map_err(|e| e.to_string())?;
        reducer
            .scope(|s| s.reduce_into(copy, what, Over::Whole, &mut out, &stream))
            .map_err(|e| e.to_string())?;
        agree("reduce_into (widened)", expected, read_box(&out)?)?;
        agree(
            "reduce::reduce (widened)",
            expected,
            reduce::reduce(input, what).map_err(|e| e.to_string())?,
        )
    }

    /// `reduce::argmax`/`argmin` and `reduce::reduce` (index and value),
    /// and `reduce_into` on another stream (which writes the index only).
    fn other_arg_forms<T: ArgInput>(
        reducer: &mut Reducer,
        input: &DeviceSlice<T>,
        op: Op,
        expected: (u64, T),
    ) -> Result<(), String> {
        let text = |e: reduce::Error| e.to_string();
        let (free, generic) = match op {
            Op::Max => (
                reduce::argmax(input).map_err(text)?,
                reduce::reduce(input, ArgMax).map_err(text)?,
            ),
            _ => (
                reduce::argmin(input).map_err(text)?,
                reduce::reduce(input, ArgMin).map_err(text)?,
            ),
        };
        let (stream, copy) = (new_stream()?, input_of(input));
        let mut index = DeviceBox::new(&u64::MAX).map_err(|e| e.to_string())?;
        reducer
            .scope(|s| match op {
                Op::Max => s.reduce_into(copy, ArgMax, Over::Whole, &mut index, &stream),
                _ => s.reduce_into(copy, ArgMin, Over::Whole, &mut index, &stream),
            })
            .map_err(text)?;
        let mut into_index = u64::MAX;
        index.copy_to(&mut into_index).map_err(|e| e.to_string())?;
        let bits = |(i, v): (u64, T)| (i, bytes_of(&v));
        if bits(expected) != bits(free) || bits(expected) != bits(generic) || expected.0 != into_index {
            return Err(format!(
                "Reducer gave {expected:?}, the free function {free:?}, reduce::reduce {generic:?}, \
                 the _into form the index {into_index}"
            ));
        }
        Ok(())
    }

    /// The free function, then the `_into` form on another stream into an
    /// output one element past a 16-byte boundary, after a poisoned element
    /// that must stay as it is.
    fn other_segmented_forms<T: TestElement>(
        reducer: &mut Reducer,
        values: &DeviceSlice<T>,
        segments: &StagedSegments<'_, Self>,
        op: Op,
        expected: &[T],
    ) -> Result<(), String> {
        let text = |e: reduce::Error| e.to_string();
        let over = match segments {
            StagedSegments::Offsets(offsets) => Over::Segments(Self::slice(offsets)),
            StagedSegments::Rows(rows, row_len) => Over::Rows {
                rows: *rows,
                len: *row_len,
            },
        };
        let free = reduce::reduce_over(values, op, over).map_err(text)?;
        agree_all("reduce::reduce_over", expected, &Self::to_vec(&free.values)?)?;
        let (stream, values) = (new_stream()?, input_of(values));
        let mut padded = DeviceBuffer::from_slice(&vec![T::poison(); expected.len() + 1]).map_err(|e| e.to_string())?;
        let out = reduce::Output::from(&mut padded).get(1..).ok_or("no room")?;
        let offsets = match segments {
            StagedSegments::Offsets(offsets) => Some(input_of(Self::slice(offsets))),
            StagedSegments::Rows(..) => None,
        };
        reducer
            .scope(|s| match (segments, &offsets) {
                (StagedSegments::Rows(rows, row_len), _) => {
                    let over = Over::Rows {
                        rows: *rows,
                        len: *row_len,
                    };
                    s.reduce_into(values, op, over, out, &stream)
                }
                (_, Some(offsets)) => s.reduce_into(values, op, Over::Segments(*offsets), out, &stream),
                (_, None) => Ok(()),
            })
            .map_err(text)?;
        let written = padded.as_host_vec().map_err(|e| e.to_string())?;
        if written[0].to_bits() != T::poison().to_bits() {
            return Err("the _into form wrote before its output".to_string());
        }
        agree_all("the _into form", expected, &written[1..])
    }

    /// `reduce::reduce_over` the axes, then `reduce_into` on another stream
    /// into an output one element past a 16-byte boundary, after a poisoned
    /// element that must stay as it is.
    fn other_axes_forms<T: TestElement>(
        reducer: &mut Reducer,
        input: &DeviceSlice<T>,
        layout: &Strided,
        axes: &[isize],
        op: Op,
        expected: &[T],
    ) -> Result<(), String> {
        let text = |e: reduce::Error| e.to_string();
        let free = reduce::reduce_over(input, op, Over::Axes(layout, axes)).map_err(text)?;
        agree_all("reduce::reduce_over", expected, &Self::to_vec(&free.values)?)?;
        let (stream, input) = (new_stream()?, input_of(input));
        let mut padded = DeviceBuffer::from_slice(&vec![T::poison(); expected.len() + 1]).map_err(|e| e.to_string())?;
        let out = reduce::Output::from(&mut padded).get(1..).ok_or("no room")?;
        reducer
            .scope(|s| s.reduce_into(input, op, Over::Axes(layout, axes), out, &stream))
            .map_err(text)?;
        let written = padded.as_host_vec().map_err(|e| e.to_string())?;
        if written[0].to_bits() != T::poison().to_bits() {
            return Err("reduce_into (axes) wrote before its output".to_string());
        }
        agree_all("reduce_into (axes)", expected, &written[1..])
    }

    /// `reduce::dot` and `dot_into`.
    fn other_dot_forms<T: TestElement>(
        reducer: &mut Reducer,
        a: &DeviceSlice<T>,
        b: &DeviceSlice<T>,
        expected: T,
    ) -> Result<(), String> {
        agree("reduce::dot", expected, reduce::dot(a, b).map_err(|e| e.to_string())?)?;
        let (stream, a, b) = (new_stream()?, input_of(a), input_of(b));
        let mut out = DeviceBox::new(&T::poison()).map_err(|e| e.to_string())?;
        reducer
            .scope(|s| s.dot_into(a, b, &mut out, &stream))
            .map_err(|e| e.to_string())?;
        agree("dot_into", expected, read_box(&out)?)
    }
}

/// A new non-blocking stream.
fn new_stream() -> Result<Stream, String> {
    Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|e| e.to_string())
}

/// `view` as a scope's input (at the same address, so results agree bit
/// for bit with the blocking call's).
fn input_of<T: DeviceCopy>(view: &DeviceSlice<T>) -> reduce::Input<'_, T> {
    // SAFETY: every view the tests pass is of a staged buffer that outlives
    // the test's scope, and nothing writes it meanwhile.
    unsafe { reduce::Input::from_view(view) }
}

/// `Ok` if `got` is `expected` bit for bit.
fn agree<T: TestElement>(form: &str, expected: T, got: T) -> Result<(), String> {
    if got.to_bits() == expected.to_bits() {
        Ok(())
    } else {
        Err(format!("{form} gave {got:?}, the blocking call {expected:?}"))
    }
}

/// `Ok` if `got` is `expected` bit for bit, element by element.
fn agree_all<T: TestElement>(form: &str, expected: &[T], got: &[T]) -> Result<(), String> {
    let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    if bits(got) == bits(expected) {
        Ok(())
    } else {
        Err(format!("{form} gave {got:?}, the blocking call {expected:?}"))
    }
}

fn read_box<T: TestElement>(out: &DeviceBox<T>) -> Result<T, String> {
    let mut value = T::poison();
    out.copy_to(&mut value).map_err(|e| e.to_string())?;
    Ok(value)
}

/// An axis reduction's results and their shape (reduced axes dropped), or its error.
pub type AxesOutcome<T> = Result<(Vec<T>, Vec<usize>), reduce::Error>;

/// How the input of a segmented test is cut, staged on backend `B`.
pub enum StagedSegments<'a, B: TestBackend> {
    Offsets(&'a B::Staged<u64>),
    Rows(usize, usize),
}

/// `input` reduced with `op` by the production kernel, or by `ladder`'s rung.
pub fn reduce_with<B: ReduceBackend, T: Element>(
    reducer: &mut Reducer<B>,
    ladder: Option<Ladder>,
    input: &B::Slice<T>,
    op: Op,
) -> Result<T, reduce::Error> {
    match ladder {
        Some(ladder) => ladder::reduce(reducer, input, op, ladder),
        None => reducer.reduce(input, op),
    }
}

/// A buffer of results on the host, from a reducer's backend (so that a
/// test's closures, generic over the backend, can read one).
pub trait ResultsToHost<B: TestBackend> {
    fn host<T: DeviceCopy + Default>(&self, buffer: &B::Buffer<T>) -> Vec<T>;
}

impl<B: TestBackend> ResultsToHost<B> for Reducer<B> {
    fn host<T: DeviceCopy + Default>(&self, buffer: &B::Buffer<T>) -> Vec<T> {
        B::to_vec(buffer).expect("copy the results to the host")
    }
}

/// Runs `$body` once per backend (the emulator, then the GPU where there is
/// one), with `$backend` a [`Tester`] of that backend: the body is compiled
/// for each, so everything it calls is generic over [`TestBackend`].
#[allow(unused_macros)] // some test files drive one backend themselves
macro_rules! for_each_backend {
    ($test:expr, |$backend:ident| $body:block) => {{
        #[allow(unused_mut)]
        for mut $backend in $crate::common::Tester::<reduce::Emulated>::new($test) $body
        #[allow(unused_mut)]
        for mut $backend in $crate::common::Tester::<reduce::Cuda>::new($test) $body
    }};
}

/// A test's reducer on one backend, and whether it runs a ladder rung
/// (`None`: the production kernels). Every call checks the backend's other
/// forms against the blocking one and runs the blocking call twice (on the
/// emulator, in two block orders), which must agree bit for bit.
pub struct Tester<B: TestBackend> {
    pub reducer: Reducer<B>,
    pub ladder: Option<Ladder>,
}

impl<B: TestBackend> Tester<B> {
    /// `None` where `test` cannot run on `B` (no GPU).
    pub fn new(test: &str) -> Option<Self> {
        Some(Tester {
            reducer: B::reducer(test)?,
            ladder: None,
        })
    }

    pub fn name(&self) -> &'static str {
        B::NAME
    }

    pub fn is_emulator(&self) -> bool {
        B::NAME == <Emulated as TestBackend>::NAME
    }

    pub fn size(&self, n: usize, emulator_max: usize) -> usize {
        B::size(n, emulator_max)
    }

    /// Runs `ladder`'s rung from now on (`None`: the production kernels).
    pub fn set_ladder(&mut self, ladder: Option<Ladder>) {
        self.ladder = ladder;
    }

    /// Reduces `data`, staged at `offset` elements past a 16-byte boundary
    /// between poison, checks the result against the CPU reference, and
    /// checks that a second run and the other forms agree bit for bit.
    pub fn check<T: TestElement>(&mut self, data: &[T], offset: usize, op: Op) -> Result<(), String> {
        let result = self.reduce(data, offset, op).map_err(|e| e.to_string());
        result
            .and_then(|got| T::check(got, data, op))
            .map_err(|e| format!("{}: {e}", self.name()))
    }

    /// Reduces `data` staged at `offset` and returns the result; panics
    /// (fails the test) if a second run or another form disagrees with it.
    pub fn reduce<T: TestElement>(&mut self, data: &[T], offset: usize, op: Op) -> Result<T, reduce::Error> {
        let staged = B::stage(data, offset, T::poison_for(op));
        let input = B::slice(&staged);
        let first = reduce_with(&mut self.reducer, self.ladder, input, op)?;
        let again = reduce_with(&mut self.reducer, self.ladder, input, op)?;
        let others = match self.ladder {
            Some(_) => Ok(()),
            None => B::other_reduce_forms(&mut self.reducer, input, op, first),
        };
        if let Err(e) = agree("a second run", first, again).and(others) {
            panic!("{}: {e}", B::NAME);
        }
        Ok(first)
    }

    /// Reduces `data` (staged at `offset` between `poison`) in the wider type
    /// `A`; a second run and the other forms must agree bitwise.
    pub fn reduce_as<A: TestElement, In: WidensTo<A>>(
        &mut self,
        data: &[In],
        offset: usize,
        poison: In,
        op: Op,
    ) -> Result<A, String> {
        let staged = B::stage(data, offset, poison);
        let input = B::slice(&staged);
        let what = Widened::<A>::new(op);
        let first = self.reducer.reduce(input, what).map_err(|e| e.to_string())?;
        let again = self.reducer.reduce(input, what).map_err(|e| e.to_string())?;
        agree("a second run", first, again)?;
        B::other_reduce_as_forms(&mut self.reducer, input, op, first).map_err(|e| format!("{}: {e}", self.name()))?;
        Ok(first)
    }

    /// argmax (`Op::Max`) or argmin (`Op::Min`) of `data` staged at `offset`.
    pub fn arg<T: TestElement + ArgInput<Value = T>>(
        &mut self,
        data: &[T],
        offset: usize,
        op: Op,
    ) -> Result<(u64, T), String> {
        self.arg_with_poison(data, offset, T::poison_for(op), op)
    }

    /// [`Tester::arg`] for any argmax input (the half floats too), staged
    /// between copies of `poison`; the other forms must agree bitwise.
    pub fn arg_with_poison<T: ArgInput>(
        &mut self,
        data: &[T],
        offset: usize,
        poison: T,
        op: Op,
    ) -> Result<(u64, T), String> {
        let staged = B::stage(data, offset, poison);
        let input = B::slice(&staged);
        let first = match op {
            Op::Max => self.reducer.reduce(input, ArgMax),
            _ => self.reducer.reduce(input, ArgMin),
        }
        .map_err(|e| e.to_string())?;
        B::other_arg_forms(&mut self.reducer, input, op, first).map_err(|e| format!("{}: {e}", self.name()))?;
        Ok(first)
    }

    /// One result of `op` per segment of `values` (staged at `offset`), the
    /// segments given by `offsets` (relative to the staged slice). The outer
    /// `Err` is a test failure; the inner result is the library's answer. A
    /// second run must agree bitwise (or fail alike), and so must the other
    /// forms where the first succeeds.
    pub fn segmented<T: TestElement>(
        &mut self,
        values: &[T],
        offset: usize,
        offsets: &[u64],
        op: Op,
    ) -> Result<Result<Vec<T>, reduce::Error>, String> {
        let staged_offsets = B::stage(offsets, 0, u64::MAX);
        self.segmented_or_rows(values, offset, StagedSegments::Offsets(&staged_offsets), op)
    }

    /// [`Tester::segmented`], then each result against the CPU reference
    /// ([`check_segments`]); `Err` describes the first problem.
    pub fn check_segmented<T: TestElement>(
        &mut self,
        values: &[T],
        offset: usize,
        offsets: &[u64],
        op: Op,
    ) -> Result<(), String> {
        let results = self
            .segmented(values, offset, offsets, op)?
            .map_err(|e| e.to_string())?;
        check_segments(&results, values, offsets, op)
    }

    /// One result of `op` per row of the `rows × row_len` matrix `matrix`
    /// (staged at `offset`), checked across runs and forms as [`Tester::segmented`].
    pub fn rows<T: TestElement>(
        &mut self,
        matrix: &[T],
        offset: usize,
        (rows, row_len): (usize, usize),
        op: Op,
    ) -> Result<Result<Vec<T>, reduce::Error>, String> {
        self.segmented_or_rows(matrix, offset, StagedSegments::Rows(rows, row_len), op)
    }

    fn segmented_or_rows<T: TestElement>(
        &mut self,
        values: &[T],
        offset: usize,
        segments: StagedSegments<'_, B>,
        op: Op,
    ) -> Result<Result<Vec<T>, reduce::Error>, String> {
        let staged = B::stage(values, offset, T::poison_for(op));
        let input = B::slice(&staged);
        let run = |reducer: &mut Reducer<B>| -> Result<Result<Vec<T>, reduce::Error>, String> {
            let over = match &segments {
                StagedSegments::Offsets(offsets) => Over::Segments(B::slice(offsets)),
                StagedSegments::Rows(rows, row_len) => Over::Rows {
                    rows: *rows,
                    len: *row_len,
                },
            };
            reducer
                .reduce_over(input, op, over)
                .map(|reduced| B::to_vec(&reduced.values))
                .map_or_else(|e| Ok(Err(e)), |v| v.map(Ok))
        };
        let first = run(&mut self.reducer)?;
        let again = run(&mut self.reducer)?;
        match (&first, &again) {
            (Ok(a), Ok(b)) => agree_all("a second run", a, b)?,
            (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
            _ => return Err(format!("two runs disagree: {first:?} and {again:?}")),
        }
        if let Ok(results) = &first {
            B::other_segmented_forms(&mut self.reducer, input, &segments, op, results)
                .map_err(|e| format!("{}: {e}", self.name()))?;
        }
        Ok(first)
    }

    /// `op` over the `axes` of `data` (staged at `offset`) viewed as
    /// `layout`: the results and their shape without the reduced axes. A
    /// second run must agree bitwise (or fail alike), and so must the other
    /// forms where the first succeeds.
    pub fn axes<T: TestElement>(
        &mut self,
        data: &[T],
        offset: usize,
        layout: &Strided,
        axes: &[isize],
        op: Op,
    ) -> Result<AxesOutcome<T>, String> {
        let staged = B::stage(data, offset, T::poison_for(op));
        let input = B::slice(&staged);
        let run = |reducer: &mut Reducer<B>| -> Result<AxesOutcome<T>, String> {
            match reducer.reduce_over(input, op, Over::Axes(layout, axes)) {
                Ok(reduced) => Ok(Ok((B::to_vec(&reduced.values)?, reduced.shape(false)))),
                Err(e) => Ok(Err(e)),
            }
        };
        let first = run(&mut self.reducer)?;
        let again = run(&mut self.reducer)?;
        match (&first, &again) {
            (Ok(a), Ok(b)) => agree_all("a second run", &a.0, &b.0)?,
            (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
            _ => return Err(format!("two runs disagree: {first:?} and {again:?}")),
        }
        if let Ok((results, _)) = &first {
            B::other_axes_forms(&mut self.reducer, input, layout, axes, op, results)
                .map_err(|e| format!("{}: {e}", self.name()))?;
        }
        Ok(first)
    }

    /// `call` on `data` staged at `offset` between copies of `poison`, run
    /// twice: the two results must be the same (as their `Debug` text, so
    /// NaNs compare equal), and are returned.
    pub fn staged_twice<T: DeviceCopy, R: std::fmt::Debug>(
        &mut self,
        data: &[T],
        offset: usize,
        poison: T,
        call: impl Fn(&mut Reducer<B>, &B::Slice<T>) -> R,
    ) -> R {
        let staged = B::stage(data, offset, poison);
        let input = B::slice(&staged);
        let first = call(&mut self.reducer, input);
        let again = call(&mut self.reducer, input);
        assert_eq!(
            format!("{first:?}"),
            format!("{again:?}"),
            "{}: two runs disagree",
            self.name()
        );
        first
    }

    /// The production dot product of `a` and `b`, staged at their offsets;
    /// the other forms must agree bitwise.
    pub fn dot<T: TestElement>(&mut self, a: (&[T], usize), b: (&[T], usize)) -> Result<T, String> {
        let (staged_a, staged_b) = (B::stage(a.0, a.1, T::poison()), B::stage(b.0, b.1, T::poison()));
        let (a, b) = (B::slice(&staged_a), B::slice(&staged_b));
        let first = self.reducer.dot(a, b).map_err(|e| e.to_string())?;
        B::other_dot_forms(&mut self.reducer, a, b, first).map_err(|e| format!("{}: {e}", self.name()))?;
        Ok(first)
    }

    /// The dot product with one of seed 004's kernels.
    pub fn dot_with<T: TestElement>(&mut self, a: &[T], b: &[T], kernel: DotKernel) -> Result<T, reduce::Error> {
        let (staged_a, staged_b) = (B::stage(a, 0, T::poison()), B::stage(b, 0, T::poison()));
        ladder::dot(&mut self.reducer, B::slice(&staged_a), B::slice(&staged_b), kernel)
    }
}

/// `data` in host memory at `offset` elements past a 16-byte boundary, with
/// poison before and after it.
pub struct Staged<T> {
    storage: Vec<u128>,
    offset: usize,
    len: usize,
    element: std::marker::PhantomData<T>,
}

impl<T: TestElement> Staged<T> {
    /// `data` staged for a reduction with `op` ([`TestElement::poison_for`]).
    pub fn new(data: &[T], offset: usize, op: Op) -> Self {
        Self::with_poison(data, offset, T::poison_for(op))
    }
}

impl<T: Copy> Staged<T> {
    pub fn with_poison(data: &[T], offset: usize, poison: T) -> Self {
        let total = offset + data.len() + 4;
        let words = (total * std::mem::size_of::<T>()).div_ceil(16);
        let mut staged = Staged {
            storage: vec![0; words],
            offset,
            len: data.len(),
            element: std::marker::PhantomData,
        };
        // SAFETY: the storage holds `total` elements and is 16-byte aligned.
        let all = unsafe { std::slice::from_raw_parts_mut(staged.storage.as_mut_ptr() as *mut T, total) };
        all.fill(poison);
        all[offset..offset + data.len()].copy_from_slice(data);
        staged
    }

    pub fn slice(&self) -> &[T] {
        // SAFETY: `new` wrote `len` elements at `offset`, inside the storage.
        unsafe { std::slice::from_raw_parts((self.storage.as_ptr() as *const T).add(self.offset), self.len) }
    }
}

/// `data` uploaded between `offset` leading and 4 trailing copies of
/// `poison`, and the range of the buffer that holds it.
pub fn staged_on_gpu_with<T: cust::memory::DeviceCopy>(
    data: &[T],
    offset: usize,
    poison: T,
) -> (DeviceBuffer<T>, std::ops::Range<usize>) {
    let mut padded = vec![poison; offset];
    padded.extend_from_slice(data);
    padded.extend_from_slice(&[poison; 4]);
    let buffer = DeviceBuffer::from_slice(&padded).expect("upload test data");
    (buffer, offset..offset + data.len())
}

/// The bytes of a plain-data value (an element or half float), to compare
/// results bit for bit whatever their type.
pub fn bytes_of<T: cust::memory::DeviceCopy>(value: &T) -> Vec<u8> {
    // SAFETY: `DeviceCopy` types are plain data; the element and half types
    // have no padding, so every byte is initialised.
    unsafe { std::slice::from_raw_parts(value as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
}

/// The elements each result of reducing `axes` (distinct, from 0) of
/// `layout` folds, per result in row-major order of the kept axes, each
/// result's in row-major order of the reduced axes: the CPU references' input.
pub fn gathered<T: Copy>(data: &[T], layout: &reduce::axes::Strided, axes: &[usize]) -> Vec<Vec<T>> {
    let rank = layout.shape().len();
    // Offsets of every position of `chosen` (ascending), row-major.
    let positions = |chosen: Vec<usize>| -> Vec<usize> {
        let mut offsets = vec![0usize];
        for axis in chosen {
            let (extent, stride) = (layout.shape()[axis], layout.strides()[axis]);
            offsets = offsets
                .iter()
                .flat_map(|&o| (0..extent).map(move |i| o + i * stride))
                .collect();
        }
        offsets
    };
    let inner = positions((0..rank).filter(|a| axes.contains(a)).collect());
    positions((0..rank).filter(|a| !axes.contains(a)).collect())
        .into_iter()
        .map(|base| inner.iter().map(|&r| data[layout.offset() + base + r]).collect())
        .collect()
}

/// Whether each axis of a rank-`rank` view is among `axes` (negative ones
/// counting from the end).
pub fn reduced_axes(rank: usize, axes: &[isize]) -> Vec<bool> {
    (0..rank)
        .map(|a| {
            axes.iter()
                .any(|&x| (if x < 0 { x + rank as isize } else { x }) as usize == a)
        })
        .collect()
}

/// A random view of up to 5 axes over a buffer it fits: contiguous,
/// permuted, every other element of some axes, or with a broadcast axis;
/// extents from 0 to 7 (0 rarely); or, one time in five, a
/// [`random_dense_view`] (with an offset).
pub fn random_layout(rng: &mut StdRng) -> Strided {
    if rng.gen_ratio(1, 5) {
        return random_dense_view(rng);
    }
    let rank = rng.gen_range(1..=5);
    let shape: Vec<usize> = (0..rank)
        .map(|_| if rng.gen_ratio(1, 25) { 0 } else { rng.gen_range(1..=7) })
        .collect();
    let contiguous = Strided::contiguous(&shape).unwrap();
    let mut strides = contiguous.strides().to_vec();
    match rng.gen_range(0..4) {
        0 => {}
        1 => {
            // A permutation of a contiguous tensor's axes.
            let mut order: Vec<usize> = (0..rank).collect();
            order.shuffle(rng);
            let permuted: Vec<usize> = order.iter().map(|&a| shape[a]).collect();
            let base = Strided::contiguous(&permuted).unwrap();
            let mut s = vec![0; rank];
            for (position, &axis) in order.iter().enumerate() {
                s[axis] = base.strides()[position];
            }
            strides = s;
        }
        2 => {
            // Gaps: each axis's stride a multiple of the inner span, plus slack.
            let mut stride = rng.gen_range(1..=3);
            for axis in (0..rank).rev() {
                strides[axis] = stride;
                stride = stride * shape[axis].max(1) + rng.gen_range(0..=2);
            }
        }
        _ => strides[rng.gen_range(0..rank)] = 0,
    }
    Strided::new(&shape, &strides).unwrap()
}

/// A random view of dense memory, as candle's and PyTorch's views of a
/// contiguous tensor are: a row-major tensor of 1 to 5 axes (extents 1 to
/// 7, now and then one from 8 to 40; at most 3000 elements) that starts some elements into the
/// buffer (0 to 5; [`span`] ends the buffer at its last element), sliced
/// (each axis, sometimes, to a sub-range, or every other element), its axes
/// permuted, and sometimes one of them broadcast (stride 0). The view's
/// [`Strided::offset`] is its first element.
pub fn random_dense_view(rng: &mut StdRng) -> Strided {
    let rank = rng.gen_range(1..=5);
    let dense: Vec<usize> = (0..rank)
        .map(|_| match rng.gen_range(0..8) {
            0 => 1,
            1 => rng.gen_range(8..=40),
            _ => rng.gen_range(2..=7),
        })
        .collect();
    // At most 3000 elements: the emulator runs every GPU thread as an OS thread.
    let mut dense = dense;
    while dense.iter().product::<usize>() > 3000 {
        let largest = (0..rank).max_by_key(|&a| dense[a]).unwrap();
        dense[largest] = dense[largest].div_ceil(2);
    }
    let strides = Strided::contiguous(&dense).unwrap().strides().to_vec();
    let mut offset = if rng.gen() { 0 } else { rng.gen_range(1..=5) };
    let mut shape = dense.clone();
    let mut view_strides = strides.clone();
    for axis in 0..rank {
        match rng.gen_range(0..6) {
            0 => {
                // x[.., a..b, ..]
                let start = rng.gen_range(0..dense[axis]);
                let end = rng.gen_range(start + 1..=dense[axis]);
                offset += start * strides[axis];
                shape[axis] = end - start;
            }
            1 => {
                // x[.., a::2, ..]
                let start = rng.gen_range(0..dense[axis]);
                offset += start * strides[axis];
                shape[axis] = (dense[axis] - start).div_ceil(2);
                view_strides[axis] *= 2;
            }
            _ => {}
        }
    }
    if rng.gen_ratio(1, 6) {
        // x.expand(..): an axis seen several times.
        let axis = rng.gen_range(0..rank);
        view_strides[axis] = 0;
        shape[axis] = rng.gen_range(1..=5);
    }
    let mut order: Vec<usize> = (0..rank).collect();
    order.shuffle(rng);
    let shape: Vec<usize> = order.iter().map(|&a| shape[a]).collect();
    let view_strides: Vec<usize> = order.iter().map(|&a| view_strides[a]).collect();
    Strided::new(&shape, &view_strides).unwrap().with_offset(offset)
}

/// A random set of distinct axes of a rank-`rank` view, some negative.
pub fn random_axes(rng: &mut StdRng, rank: usize) -> Vec<isize> {
    let mut axes: Vec<isize> = (0..rank as isize).filter(|_| rng.gen()).collect();
    axes.shuffle(rng);
    for axis in axes.iter_mut() {
        if rng.gen() {
            *axis -= rank as isize;
        }
    }
    axes
}

/// Elements of `data` up to one past the view's last one (from the buffer's
/// start: the view's offset included).
pub fn span(layout: &Strided) -> usize {
    if layout.shape().contains(&0) {
        return layout.offset();
    }
    1 + layout.offset()
        + layout
            .shape()
            .iter()
            .zip(layout.strides())
            .map(|(e, s)| (e - 1) * s)
            .sum::<usize>()
}
