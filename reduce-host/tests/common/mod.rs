//! Shared test support: the backends (the SIMT emulator always, the GPU when
//! there is one), random inputs and the CPU reference.
#![allow(dead_code)] // each test file uses a different part of this module

use cust::context::{Context, CurrentContext};
use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer, DeviceSlice};
use cust::stream::{Stream, StreamFlags};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reduce::emulated::Emulator;
use reduce::{ArgInput, DotKernel, Element, Op, Reducer, Strategy, WidensTo};
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
            println!("skipped {test} on the GPU: no CUDA device");
            None
        }
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
    fn poison() -> Self;
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
    ($($t:ty),*) => {$(
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
            fn poison() -> Self { <$t>::from_bits(0xA5A5_A5A5_A5A5_A5A5u64 as _) }
            fn identity(op: Op) -> Self {
                match op {
                    Op::Product => 1.0,
                    Op::Max | Op::MaxAbs => <$t>::NEG_INFINITY,
                    Op::Min => <$t>::INFINITY,
                    // No non-NaN element, as in an all-NaN input.
                    Op::NanMax | Op::NanMin => <$t>::NAN,
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
float_test_element!(f32, f64);

/// Uploads `data` between `offset` leading and 4 trailing poison elements (so
/// the slice starts at an address that is not 16-byte aligned when `offset` is
/// not a multiple of the vector width, and any read outside the slice changes
/// the result), reduces the slice with `reducer.reduce` and with
/// `reducer.reduce_into` into a poisoned output, and checks both against the
/// CPU reference. The two must be bitwise equal (one strategy, deterministic);
/// under the production strategy the free function must match them too.
pub fn check_on_gpu<T: TestElement>(reducer: &mut Reducer, data: &[T], offset: usize, op: Op) -> Result<(), String> {
    let (buffer, range) = staged_on_gpu(data, offset);
    let slice: DeviceSlice<T> = buffer.index(range);

    let via_reduce = reducer
        .reduce(&slice, op)
        .map_err(|e| format!("Reducer::reduce: {e}"))?;
    T::check(via_reduce, data, op).map_err(|e| format!("Reducer::reduce: {e}"))?;

    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|e| e.to_string())?;
    let mut out = DeviceBox::new(&T::poison()).map_err(|e| e.to_string())?;
    reducer
        .reduce_into(&slice, op, &mut out, &stream)
        .map_err(|e| format!("reduce_into: {e}"))?;
    stream.synchronize().map_err(|e| e.to_string())?;
    let mut via_into = T::poison();
    out.copy_to(&mut via_into).map_err(|e| e.to_string())?;
    T::check(via_into, data, op).map_err(|e| format!("reduce_into: {e}"))?;
    if via_reduce.to_bits() != via_into.to_bits() {
        return Err(format!(
            "Reducer::reduce gave {via_reduce:?} but reduce_into gave {via_into:?}"
        ));
    }

    if reducer.strategy() == Strategy::Production {
        let free = reduce::reduce(&slice, op).map_err(|e| format!("reduce::reduce: {e}"))?;
        if free.to_bits() != via_reduce.to_bits() {
            return Err(format!(
                "reduce::reduce gave {free:?} but Reducer::reduce gave {via_reduce:?}"
            ));
        }
    }
    Ok(())
}

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

/// Where a test runs the kernels.
pub enum Backend {
    /// The SIMT emulator, with its default small launch shape.
    Emulator(Emulator),
    /// The GPU, through a [`Reducer`] in the shared test context.
    Gpu(Reducer),
}

/// The backends a kernel test runs on: the emulator, then the GPU when there
/// is one (the GPU tests print that they were skipped otherwise).
/// `REDUCE_TEST_BACKENDS=gpu` or `=emulator` keeps only that one (the
/// sanitizer script runs the GPU half alone).
pub fn backends(test: &str) -> Vec<Backend> {
    let only = std::env::var("REDUCE_TEST_BACKENDS").unwrap_or_default();
    let mut backends = Vec::new();
    if only != "gpu" {
        backends.push(Backend::Emulator(Emulator::new()));
    }
    if only != "emulator" && gpu(test).is_some() {
        backends.push(Backend::Gpu(Reducer::new().expect("Reducer::new")));
    }
    backends
}

impl Backend {
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Emulator(_) => "emulator",
            Backend::Gpu(_) => "GPU",
        }
    }

    /// `n`, or at most `emulator_max` on the emulator (every GPU thread is an
    /// OS thread there, so the largest sizes are for the GPU).
    pub fn size(&self, n: usize, emulator_max: usize) -> usize {
        match self {
            Backend::Emulator(_) => n.min(emulator_max),
            Backend::Gpu(_) => n,
        }
    }

    pub fn set_strategy(&mut self, strategy: Strategy) {
        match self {
            Backend::Emulator(e) => e.set_strategy(strategy),
            Backend::Gpu(r) => r.set_strategy(strategy),
        }
    }

    /// Reduces `data`, staged at `offset` elements past a 16-byte boundary
    /// between poison, and checks the result against the CPU reference (see
    /// [`check_on_gpu`] and [`check_on_emulator`] for what else each checks).
    pub fn check<T: TestElement>(&mut self, data: &[T], offset: usize, op: Op) -> Result<(), String> {
        match self {
            Backend::Emulator(e) => check_on_emulator(e, data, offset, op),
            Backend::Gpu(r) => check_on_gpu(r, data, offset, op),
        }
        .map_err(|e| format!("{}: {e}", self.name()))
    }

    /// Reduces `data` staged at `offset` and returns the result.
    pub fn reduce<T: TestElement>(&mut self, data: &[T], offset: usize, op: Op) -> Result<T, reduce::Error> {
        match self {
            Backend::Emulator(e) => e.reduce(Staged::new(data, offset).slice(), op),
            Backend::Gpu(r) => {
                let (buffer, range) = staged_on_gpu(data, offset);
                r.reduce(&buffer.index(range), op)
            }
        }
    }

    /// Reduces `data` (staged at `offset` between `poison`) in the wider type
    /// `A`. On the emulator it runs twice, in two block orders, and on the GPU
    /// through `reduce_as`, `reduce_as_into` and `reduce::reduce_as`; each
    /// pair must agree bitwise.
    pub fn reduce_as<A: TestElement, In: WidensTo<A>>(
        &mut self,
        data: &[In],
        offset: usize,
        poison: In,
        op: Op,
    ) -> Result<A, String> {
        let text = |e: reduce::Error| e.to_string();
        let (first, second) = match self {
            Backend::Emulator(e) => {
                let staged = Staged::with_poison(data, offset, poison);
                (
                    e.reduce_as::<A, In>(staged.slice(), op).map_err(text)?,
                    e.reduce_as::<A, In>(staged.slice(), op).map_err(text)?,
                )
            }
            Backend::Gpu(r) => {
                let (buffer, range) = staged_on_gpu_with(data, offset, poison);
                let slice = buffer.index(range);
                let via_reduce = r.reduce_as::<A, In>(&slice, op).map_err(text)?;
                let stream = Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|e| e.to_string())?;
                let mut out = DeviceBox::new(&A::poison()).map_err(|e| e.to_string())?;
                r.reduce_as_into::<A, In>(&slice, op, &mut out, &stream).map_err(text)?;
                stream.synchronize().map_err(|e| e.to_string())?;
                let mut via_into = A::poison();
                out.copy_to(&mut via_into).map_err(|e| e.to_string())?;
                let free = reduce::reduce_as::<A>(&slice, op).map_err(text)?;
                if free.to_bits() != via_into.to_bits() {
                    return Err(format!("reduce::reduce_as gave {free:?}, reduce_as_into {via_into:?}"));
                }
                (via_reduce, via_into)
            }
        };
        if first.to_bits() != second.to_bits() {
            return Err(format!("{}: two runs gave {first:?} and {second:?}", self.name()));
        }
        Ok(first)
    }

    /// argmax (`Op::Max`) or argmin (`Op::Min`) of `data` staged at
    /// `offset`. On the GPU, `Reducer::argmax`, `argmax_into` and
    /// `reduce::argmax` (and the `min` forms) must agree bitwise.
    pub fn arg<T: TestElement + ArgInput<Value = T>>(
        &mut self,
        data: &[T],
        offset: usize,
        op: Op,
    ) -> Result<(u64, T), String> {
        self.arg_with_poison(data, offset, T::poison(), op)
    }

    /// [`Backend::arg`] for any argmax input (the half floats too), staged
    /// between copies of `poison`.
    pub fn arg_with_poison<T: ArgInput>(
        &mut self,
        data: &[T],
        offset: usize,
        poison: T,
        op: Op,
    ) -> Result<(u64, T), String>
    where
        T::Value: TestElement,
    {
        let text = |e: reduce::Error| e.to_string();
        match self {
            Backend::Emulator(e) => {
                let staged = Staged::with_poison(data, offset, poison);
                match op {
                    Op::Max => e.argmax(staged.slice()),
                    _ => e.argmin(staged.slice()),
                }
                .map_err(text)
            }
            Backend::Gpu(r) => {
                let (buffer, range) = staged_on_gpu_with(data, offset, poison);
                let slice = buffer.index(range);
                let (via_reducer, via_free) = match op {
                    Op::Max => (r.argmax(&slice).map_err(text)?, reduce::argmax(&slice).map_err(text)?),
                    _ => (r.argmin(&slice).map_err(text)?, reduce::argmin(&slice).map_err(text)?),
                };
                let stream = Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|e| e.to_string())?;
                let mut index = DeviceBox::new(&u64::poison()).map_err(|e| e.to_string())?;
                let mut value = DeviceBox::new(&T::Value::poison()).map_err(|e| e.to_string())?;
                match op {
                    Op::Max => r.argmax_into(&slice, &mut index, &mut value, &stream),
                    _ => r.argmin_into(&slice, &mut index, &mut value, &stream),
                }
                .map_err(text)?;
                stream.synchronize().map_err(|e| e.to_string())?;
                let (mut into_index, mut into_value) = (0u64, T::Value::poison());
                index.copy_to(&mut into_index).map_err(|e| e.to_string())?;
                value.copy_to(&mut into_value).map_err(|e| e.to_string())?;
                let into = (into_index, T::from_value(into_value));
                let bits = |(i, v): (u64, T)| (i, bytes_of(&v));
                if bits(via_reducer) != bits(via_free) || bits(via_reducer) != bits(into) {
                    return Err(format!(
                        "Reducer gave {via_reducer:?}, the free function {via_free:?}, the _into form {into:?}"
                    ));
                }
                Ok(via_reducer)
            }
        }
    }

    /// One result of `op` per segment of `values` (staged at `offset`), the
    /// segments given by `offsets` (relative to the staged slice). The outer
    /// `Err` is a test failure; the inner result is the library's answer.
    /// On the emulator it runs twice, in two block orders; on the GPU through
    /// `Reducer::segmented_reduce`, `reduce::segmented_reduce` and (if those
    /// succeed) `segmented_reduce_into` into a poisoned output on another
    /// stream. Every run must agree bitwise with the first, or fail alike.
    pub fn segmented<T: TestElement>(
        &mut self,
        values: &[T],
        offset: usize,
        offsets: &[u64],
        op: Op,
    ) -> Result<Result<Vec<T>, reduce::Error>, String> {
        self.segmented_or_rows(values, offset, Segmentation::Offsets(offsets), op)
    }

    /// [`Backend::segmented`], then each result against the CPU reference
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
    /// (staged at `offset`), checked across forms as [`Backend::segmented`].
    pub fn rows<T: TestElement>(
        &mut self,
        matrix: &[T],
        offset: usize,
        (rows, row_len): (usize, usize),
        op: Op,
    ) -> Result<Result<Vec<T>, reduce::Error>, String> {
        self.segmented_or_rows(matrix, offset, Segmentation::Rows(rows, row_len), op)
    }

    fn segmented_or_rows<T: TestElement>(
        &mut self,
        values: &[T],
        offset: usize,
        segmentation: Segmentation<'_>,
        op: Op,
    ) -> Result<Result<Vec<T>, reduce::Error>, String> {
        let text = |e: reduce::Error| e.to_string();
        let agree = |what: &str, first: &Result<Vec<T>, reduce::Error>, other: Result<Vec<T>, reduce::Error>| {
            let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            match (first, &other) {
                (Ok(a), Ok(b)) if bits(a) == bits(b) => Ok(()),
                (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
                _ => Err(format!("{what} disagree: {first:?} and {other:?}")),
            }
        };
        match self {
            Backend::Emulator(e) => {
                let staged = Staged::new(values, offset);
                let mut run = || match segmentation {
                    Segmentation::Offsets(offsets) => e.segmented_reduce(staged.slice(), offsets, op),
                    Segmentation::Rows(rows, row_len) => e.reduce_rows(staged.slice(), rows, row_len, op),
                };
                let first = run();
                agree("two block orders", &first, run())?;
                Ok(first)
            }
            Backend::Gpu(r) => {
                let (buffer, range) = staged_on_gpu(values, offset);
                let slice = buffer.index(range);
                let segments = match segmentation {
                    Segmentation::Offsets(offsets) => {
                        GpuSegments::Offsets(DeviceBuffer::from_slice(offsets).map_err(|e| e.to_string())?)
                    }
                    Segmentation::Rows(rows, row_len) => GpuSegments::Rows(rows, row_len),
                };
                let (first, free) = match &segments {
                    GpuSegments::Offsets(offsets) => (
                        r.segmented_reduce(&slice, offsets, op),
                        reduce::segmented_reduce(&slice, offsets, op),
                    ),
                    GpuSegments::Rows(rows, row_len) => (
                        r.reduce_rows(&slice, *rows, *row_len, op),
                        reduce::reduce_rows(&slice, *rows, *row_len, op),
                    ),
                };
                let to_host = |b: Result<DeviceBuffer<T>, reduce::Error>| b.and_then(|b| Ok(b.as_host_vec()?));
                let first = to_host(first);
                agree("Reducer and free function", &first, to_host(free))?;
                let Ok(results) = &first else { return Ok(first) };

                let stream = Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|e| e.to_string())?;
                // The results one element past the buffer's (16-byte aligned)
                // start, after a poisoned element that must stay as it is.
                let padded =
                    DeviceBuffer::from_slice(&vec![T::poison(); results.len() + 1]).map_err(|e| e.to_string())?;
                let mut out = padded.index(1..);
                match &segments {
                    GpuSegments::Offsets(offsets) => r.segmented_reduce_into(&slice, offsets, op, &mut out, &stream),
                    GpuSegments::Rows(rows, row_len) => {
                        r.reduce_rows_into(&slice, *rows, *row_len, op, &mut out, &stream)
                    }
                }
                .map_err(text)?;
                stream.synchronize().map_err(|e| e.to_string())?;
                let written = padded.as_host_vec().map_err(|e| e.to_string())?;
                if written[0].to_bits() != T::poison().to_bits() {
                    return Err("the _into form wrote before its output".to_string());
                }
                agree("Reducer and _into form", &first, Ok(written[1..].to_vec()))?;
                Ok(first)
            }
        }
    }

    /// The production dot product of `a` and `b`, staged at their offsets.
    /// On the GPU, `reduce::dot` and `Reducer::dot_into` must agree bitwise.
    pub fn dot<T: TestElement>(&mut self, a: (&[T], usize), b: (&[T], usize)) -> Result<T, String> {
        match self {
            Backend::Emulator(e) => {
                let (sa, sb) = (Staged::new(a.0, a.1), Staged::new(b.0, b.1));
                e.dot(sa.slice(), sb.slice()).map_err(|e| e.to_string())
            }
            Backend::Gpu(r) => {
                let ((da, ra), (db, rb)) = (staged_on_gpu(a.0, a.1), staged_on_gpu(b.0, b.1));
                let (sa, sb) = (da.index(ra), db.index(rb));
                let free = reduce::dot(&sa, &sb).map_err(|e| e.to_string())?;
                let stream = Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|e| e.to_string())?;
                let mut out = DeviceBox::new(&T::poison()).map_err(|e| e.to_string())?;
                r.dot_into(&sa, &sb, &mut out, &stream).map_err(|e| e.to_string())?;
                stream.synchronize().map_err(|e| e.to_string())?;
                let mut into = T::poison();
                out.copy_to(&mut into).map_err(|e| e.to_string())?;
                if free.to_bits() != into.to_bits() {
                    return Err(format!("reduce::dot gave {free:?} but dot_into gave {into:?}"));
                }
                Ok(free)
            }
        }
    }

    /// The dot product with one of seed 004's kernels.
    pub fn dot_with<T: TestElement>(&mut self, a: &[T], b: &[T], kernel: DotKernel) -> Result<T, reduce::Error> {
        match self {
            Backend::Emulator(e) => e.dot_with(a, b, kernel),
            Backend::Gpu(r) => {
                let (da, db) = (DeviceBuffer::from_slice(a)?, DeviceBuffer::from_slice(b)?);
                r.dot_with(&da, &db, kernel)
            }
        }
    }
}

/// How the input of a segmented test is cut.
#[derive(Clone, Copy)]
enum Segmentation<'a> {
    Offsets(&'a [u64]),
    Rows(usize, usize),
}

/// [`Segmentation`] with the offsets on the GPU.
enum GpuSegments {
    Offsets(DeviceBuffer<u64>),
    Rows(usize, usize),
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
    pub fn new(data: &[T], offset: usize) -> Self {
        Self::with_poison(data, offset, T::poison())
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

/// `data` uploaded between `offset` leading and 4 trailing poison elements,
/// and the range of the buffer that holds it.
fn staged_on_gpu<T: TestElement>(data: &[T], offset: usize) -> (DeviceBuffer<T>, std::ops::Range<usize>) {
    staged_on_gpu_with(data, offset, T::poison())
}

/// [`staged_on_gpu`] with `poison` around the data.
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

/// Reduces `data` staged at `offset` on the emulator and checks it against
/// the CPU reference; then reduces it again (another block order) and checks
/// that the result is bitwise the same.
pub fn check_on_emulator<T: TestElement>(
    emulator: &mut Emulator,
    data: &[T],
    offset: usize,
    op: Op,
) -> Result<(), String> {
    let staged = Staged::new(data, offset);
    let first = emulator.reduce(staged.slice(), op).map_err(|e| e.to_string())?;
    T::check(first, data, op)?;
    let again = emulator.reduce(staged.slice(), op).map_err(|e| e.to_string())?;
    if again.to_bits() != first.to_bits() {
        return Err(format!("another block order gave {again:?}, the first {first:?}"));
    }
    Ok(())
}

/// The bytes of a plain-data value (an element or half float), to compare
/// results bit for bit whatever their type.
pub fn bytes_of<T: cust::memory::DeviceCopy>(value: &T) -> Vec<u8> {
    // SAFETY: `DeviceCopy` types are plain data; the element and half types
    // have no padding, so every byte is initialised.
    unsafe { std::slice::from_raw_parts(value as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
}
