//! The element types the library reduces.

use cust_core::DeviceCopy;
use kernels_gpu::widen::{Bf16, F16};
use std::fmt::Debug;

use kernels_gpu::abi::Scalar;

/// Defines [`ElementType`] from one list, with the kernels' name of each.
macro_rules! element_types {
    ($($(#[$doc:meta])* $name:ident => $lower:literal, $bytes:literal;)*) => {
        /// The runtime name of an element or input type.
        ///
        /// ```
        /// use reduce::{Element, ElementType};
        /// assert_eq!(<u64 as Element>::TYPE, ElementType::U64);
        /// assert_eq!((ElementType::Bf16.name(), ElementType::Bf16.size()), ("bf16", 2));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ElementType {
            $($(#[$doc])* $name,)*
        }

        impl ElementType {
            /// Lower-case name, as Rust spells the type (`"i32"`, `"bf16"`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(ElementType::$name => $lower,)*
                }
            }

            /// Bytes per value.
            pub fn size(self) -> usize {
                match self {
                    $(ElementType::$name => $bytes,)*
                }
            }

            /// The kernels' name of the type.
            pub(crate) const fn kernel(self) -> Scalar {
                match self {
                    $(ElementType::$name => Scalar::$name,)*
                }
            }

            /// The type the kernels' `scalar` names.
            pub(crate) const fn of_kernel(scalar: Scalar) -> ElementType {
                match scalar {
                    $(Scalar::$name => ElementType::$name,)*
                }
            }
        }
    };
}

element_types! {
    /// `i8`.
    I8 => "i8", 1;
    /// `i16`.
    I16 => "i16", 2;
    /// `i32`.
    I32 => "i32", 4;
    /// `i64`.
    I64 => "i64", 8;
    /// `u8`.
    U8 => "u8", 1;
    /// `u16`.
    U16 => "u16", 2;
    /// `u32`.
    U32 => "u32", 4;
    /// `u64`.
    U64 => "u64", 8;
    /// `half::f16`.
    F16 => "f16", 2;
    /// `half::bf16`.
    Bf16 => "bf16", 2;
    /// `f32`.
    F32 => "f32", 4;
    /// `f64`.
    F64 => "f64", 8;
}

/// A value the kernels write: copyable to the device by cust (and, with
/// the `cudarc` feature, by cudarc). Every element, count and index type is one.
#[doc(hidden)]
#[cfg(not(feature = "cudarc"))]
pub trait DeviceValue: DeviceCopy + 'static {}
#[cfg(not(feature = "cudarc"))]
impl<T: DeviceCopy + 'static> DeviceValue for T {}

/// A value the kernels write: copyable to the device by cust, and with the
/// `cudarc` feature held in cudarc's buffers as [`DeviceValue::Cudarc`]
/// (the type itself; half 2's `f16`/`bf16` for half 1.8's). Every element,
/// count, index and half-float type is one. Generic code over cudarc's
/// buffers names the results' buffer type with it:
///
/// ```no_run
/// use cudarc::driver::{CudaSlice, CudaStream};
/// use reduce::{cudarc::CudarcElement, DeviceValue, Over, Reduction};
/// /// `what` of `x`'s rows of `len`, into a new buffer of cudarc's type.
/// fn rows<T: CudarcElement, R: Reduction<T::Kernel, Results<CudaSlice<O>> = CudaSlice<O>>, O>(
///     x: &CudaSlice<T>,
///     what: R,
///     len: usize,
/// ) -> reduce::Result<CudaSlice<O>>
/// where
///     R::Output: DeviceValue<Cudarc = O>,
/// {
///     let rows = x.len() / len;
///     Ok(reduce::reduce_over(x, what, Over::Rows { rows, len })?.values)
/// }
/// ```
#[cfg(feature = "cudarc")]
pub trait DeviceValue: DeviceCopy + 'static {
    /// The type of cudarc's buffers of these values (the same bits).
    type Cudarc: crate::cudarc::CudarcElement<Kernel = Self> + ::cudarc::driver::DeviceRepr;
}

#[cfg(feature = "cudarc")]
macro_rules! device_value {
    ($($t:ty => $cudarc:ty),* $(,)?) => {$(
        impl DeviceValue for $t {
            type Cudarc = $cudarc;
        }
    )*};
}
#[cfg(feature = "cudarc")]
device_value!(
    i8 => i8, i16 => i16, i32 => i32, i64 => i64, u8 => u8, u16 => u16, u32 => u32, u64 => u64,
    f32 => f32, f64 => f64, half::f16 => half2::f16, half::bf16 => half2::bf16,
);

pub(crate) mod sealed {
    /// Implemented only for the types the kernels are compiled for.
    pub trait Sealed {}
}

/// A type the GPU kernels can reduce: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`.
///
/// Sealed: the kernels are compiled ahead of time for exactly these types.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, Element, ElementType, Op};
/// fn total<T: Element>(values: &[T]) -> reduce::Result<T> {
///     Emulator::default().reduce(values, Op::Sum) // or a `Reducer` on a GPU
/// }
/// assert_eq!(total(&[1u64, 2, 3])?, 6);
/// assert_eq!(<f64 as Element>::TYPE, ElementType::F64);
/// # Ok(()) }
/// ```
pub trait Element: DeviceValue + Copy + Debug + PartialEq + Send + Sync + sealed::Sealed {
    /// The runtime name of this type.
    const TYPE: ElementType;
}

macro_rules! element {
    ($($t:ty => $name:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElementType = ElementType::$name;
        }
    )*};
}
element!(i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

// The narrower inputs of the widening and argmax kernels.
impl sealed::Sealed for i8 {}
impl sealed::Sealed for i16 {}
impl sealed::Sealed for u8 {}
impl sealed::Sealed for u16 {}
impl sealed::Sealed for half::f16 {}
impl sealed::Sealed for half::bf16 {}

/// The float element types, `f32` and `f64`: what [`crate::norm_l2`] takes.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, FloatElement, Op};
/// fn rms<T: FloatElement>(x: &[T]) -> reduce::Result<T> {
///     Ok(Emulator::default().reduce(x, Op::SumOfSquares)?.divide_by_count(x.len()).sqrt())
/// }
/// assert_eq!(rms(&[1.0f32, 7.0])?, 5.0);
/// # Ok(()) }
/// ```
pub trait FloatElement: Element {
    /// The square root (IEEE 754, correctly rounded).
    fn sqrt(self) -> Self;
    /// `self / count`, with `count` converted to `Self` first (exactly up to
    /// 2^24 for `f32` and 2^53 for `f64`, rounded to nearest above).
    fn divide_by_count(self, count: usize) -> Self;
    /// The exact sum of `values` rounded once ([`ExactSum::fold`](crate::ExactSum::fold)).
    #[doc(hidden)]
    fn exact_sum(values: &[Self]) -> Self;
    /// The exact sum of the values that are not NaN, rounded once
    /// ([`ExactNanSum::fold`](crate::ExactNanSum::fold)).
    #[doc(hidden)]
    fn exact_nan_sum(values: &[Self]) -> Self;
    /// The exact sum of the values' squares (each rounded to `Self`),
    /// rounded once ([`ExactSumOfSquares::fold`](crate::ExactSumOfSquares::fold)).
    #[doc(hidden)]
    fn exact_sum_of_squares(values: &[Self]) -> Self;
    /// The exact sum of the products `a[i] * b[i]` (each rounded to
    /// `Self`) of two slices of one length, rounded once
    /// ([`ExactDot::fold`](crate::ExactDot::fold)).
    #[doc(hidden)]
    fn exact_dot(a: &[Self], b: &[Self]) -> Self;
    /// The exact variance of `values` with `correction`
    /// ([`ExactVar::fold`](crate::ExactVar::fold)): the exact mean, each
    /// squared deviation from it rounded to `Self`, their exact sum rounded
    /// once, divided by `max(0, n − correction)` rounded to `Self`.
    #[doc(hidden)]
    fn exact_variance(values: &[Self], correction: f64) -> Self;
    /// The exact logsumexp of `values`
    /// ([`ExactLogSumExp::fold`](crate::ExactLogSumExp::fold)): the largest
    /// element `m` (NaN if any is NaN), each `exp(x − m)` as the kernels'
    /// map forms it, their exact sum `S` rounded once, and `m + ln(S)` as
    /// the kernels finish it; `m` itself where it is not finite.
    #[doc(hidden)]
    fn exact_logsumexp(values: &[Self]) -> Self;
    /// [`ExactMean`](crate::ExactMean)'s last step, which its kernels take
    /// too: the rounded exact `sum` of `count` values divided by the count
    /// ([`FloatElement::divide_by_count`]), a NaN the canonical one.
    #[doc(hidden)]
    fn exact_mean_of_sum(sum: Self, count: usize) -> Self;
    /// [`ExactVar`](crate::ExactVar)'s last step, which its kernels take
    /// too: the rounded exact sum of the squared deviations of `count`
    /// values divided by `max(0, count − correction)` (in `f64`, rounded to
    /// `Self`).
    #[doc(hidden)]
    fn exact_variance_of_squares(squares: Self, count: usize, correction: f64) -> Self;
    /// [`ExactLogSumExp`](crate::ExactLogSumExp)'s last step, as its
    /// kernels take it: `max + ln(sum)` of the largest element and the
    /// rounded exact sum of the scaled exponentials; `max` where it is not
    /// finite.
    #[doc(hidden)]
    fn exact_logsumexp_of_sum(max: Self, sum: Self) -> Self;
    /// `self`, or the canonical NaN if it is a NaN: the kernels' rule
    /// (`kernels_gpu::element::Element::canonical`) for results the host
    /// computes.
    #[doc(hidden)]
    fn canonical(self) -> Self;
}

macro_rules! float_element {
    ($($t:ty),*) => {$(
        impl FloatElement for $t {
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn divide_by_count(self, count: usize) -> Self {
                self / count as $t
            }
            fn exact_sum(values: &[Self]) -> Self {
                exact_sum_of(values.iter().copied())
            }
            fn exact_nan_sum(values: &[Self]) -> Self {
                // A NaN adds `+0.0`, as the kernels' map makes it.
                exact_sum_of(values.iter().map(|&value| if value.is_nan() { 0.0 } else { value }))
            }
            fn exact_sum_of_squares(values: &[Self]) -> Self {
                // Each square rounded to the type, as the kernels' map squares.
                exact_sum_of(values.iter().map(|&value| value * value))
            }
            fn exact_dot(a: &[Self], b: &[Self]) -> Self {
                // Each product rounded to the type, as the kernels multiply.
                exact_sum_of(a.iter().zip(b).map(|(&a, &b)| a * b))
            }
            fn exact_variance(values: &[Self], correction: f64) -> Self {
                // As the kernels: the exact mean, then the deviations'
                // squares, each rounded, summed exactly; a mean that is not
                // finite makes every square NaN.
                let mean = Self::exact_mean_of_sum(Self::exact_sum(values), values.len());
                let sum = exact_sum_of(values.iter().map(|&value| {
                    let deviation = value - mean;
                    if mean.is_finite() { deviation * deviation } else { Self::NAN }
                }));
                Self::exact_variance_of_squares(sum, values.len(), correction)
            }
            fn exact_logsumexp(values: &[Self]) -> Self {
                use kernels_gpu::expansion::{ExactMap, ScaledExp};
                // `Op::Max`'s: a NaN anywhere wins; nothing is `-inf`.
                let max = values.iter().fold(<$t>::NEG_INFINITY, |max, &value| {
                    if max.is_nan() || value.is_nan() { <$t>::NAN } else { max.max(value) }
                });
                let map = ScaledExp::new(max);
                Self::exact_logsumexp_of_sum(max, exact_sum_of(values.iter().map(|&value| map.apply(value))))
            }
            fn exact_mean_of_sum(sum: Self, count: usize) -> Self {
                sum.divide_by_count(count).canonical()
            }
            fn exact_variance_of_squares(squares: Self, count: usize, correction: f64) -> Self {
                let divisor = count as f64 - correction;
                (squares / (if divisor > 0.0 { divisor } else { 0.0 }) as $t).canonical()
            }
            fn exact_logsumexp_of_sum(max: Self, sum: Self) -> Self {
                use kernels_gpu::expansion::{ExactMap, ScaledExp};
                ScaledExp::new(max).finish(sum).canonical()
            }
            fn canonical(self) -> Self {
                kernels_gpu::element::Element::canonical(self)
            }
        }
    )*};
}
float_element!(f32, f64);

/// The exact sum of `terms` rounded once: the CPU's fold of the exact
/// reductions.
fn exact_sum_of<T: kernels_gpu::exact::ExactFloat>(terms: impl Iterator<Item = T>) -> T {
    let mut sum = kernels_gpu::exact::Exact::<T>::new();
    terms.for_each(|term| sum.add(term));
    sum.round()
}

/// An input type that the kernels read into the wider accumulator type `A`:
/// each element is converted to `A` as it is read and the whole reduction
/// runs in `A` ([`Widened::<A>`](crate::Widened), [`crate::mean`]).
///
/// | input | accumulator `A` | ops |
/// |---|---|---|
/// | `i8`, `i16`, `i32` | `i64` | `Sum` |
/// | `u8`, `u16`, `u32` | `u64` | `Sum` |
/// | `i32`, `u32`, `i64`, `u64`, `f32`, `f64` | `f64` | `Sum` |
/// | [`half::f16`], [`half::bf16`] | `f32` | `Sum`, `Max`, `Min` |
///
/// Integer sums wrap in `A` (a sum of `i32` in `i64` cannot overflow below
/// 2^32 elements); integers convert to `f64` exactly up to 2^53 in magnitude
/// and round to nearest above; half-precision values convert to `f32`
/// exactly. Sealed: the kernels are compiled ahead of time for these pairs.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, Error, Op, Widened};
/// let mut emulator = Emulator::default();
/// // An i32 sum that would wrap in i32 is exact in i64.
/// assert_eq!(emulator.reduce(&[i32::MAX; 4], Widened::<i64>::new(Op::Sum))?, 4 * i64::from(i32::MAX));
/// let max = emulator.reduce(&[1i8, 2], Widened::<i64>::new(Op::Max)); // the integer pairs only sum
/// assert!(matches!(max, Err(Error::UnsupportedWidening { .. })));
/// # Ok(()) }
/// ```
pub trait WidensTo<A: Element>: DeviceCopy + Copy + Debug + Send + Sync + 'static + sealed::Sealed {
    /// The input type.
    const INPUT: ElementType;
}

/// The host type of a widening kernel's input (the kernel crate's `f16` and
/// `bf16` are bit-compatible stand-ins for `half`'s).
macro_rules! host_input {
    (f16) => {
        half::f16
    };
    (bf16) => {
        half::bf16
    };
    ($t:ident) => {
        $t
    };
}

macro_rules! widens_to {
    ($(($input:ident, $input_name:ident, $acc:ident, [$(($op:ident, $stem:ident, $operator:ident))*])),* $(,)?) => {$(
        impl WidensTo<$acc> for host_input!($input_name) {
            const INPUT: ElementType = ElementType::of_kernel(kernels_gpu::scalar!($input_name));
        }
    )*};
}
kernels_gpu::for_each_widened_kernel!(widens_to);

// The kernel crate's half types are the same bits as `half`'s.
const _: () = assert!(std::mem::size_of::<F16>() == std::mem::size_of::<half::f16>());
const _: () = assert!(std::mem::size_of::<Bf16>() == std::mem::size_of::<half::bf16>());

/// An input type with a mean ([`Mean`](crate::Mean), [`crate::mean`]): computed from its sum in
/// [`MeanInput::Mean`] (see [`WidensTo`]), divided by the length.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, FloatElement, Mean, MeanInput, Op, Widened};
/// fn mean<In: MeanInput>(x: &[In]) -> reduce::Result<In::Mean> {
///     let sum = Emulator::default().reduce(x, Widened::<In::Mean>::new(Op::Sum))?;
///     Ok(sum.divide_by_count(x.len()))
/// }
/// assert_eq!(mean(&[1u32, 2, 3, 4])?, 2.5f64); // integers: an f64 mean
/// assert_eq!(Emulator::default().reduce(&[1u32, 2, 3, 4], Mean)?, 2.5); // the same, built in
/// # Ok(()) }
/// ```
pub trait MeanInput: WidensTo<Self::Mean> {
    /// The mean's type: `f64` for the integers, `f32` and `f64`; `f32` for
    /// [`half::f16`] and [`half::bf16`].
    type Mean: FloatElement;
}

macro_rules! mean_input {
    ($($t:ty => $mean:ty),* $(,)?) => {$(
        impl MeanInput for $t {
            type Mean = $mean;
        }
    )*};
}
mean_input!(i32 => f64, u32 => f64, i64 => f64, u64 => f64, f32 => f64, f64 => f64, half::f16 => f32, half::bf16 => f32);

/// An input type of [`ArgMax`](crate::ArgMax) and [`ArgMin`](crate::ArgMin)
/// ([`crate::argmax`], [`crate::argmin`]): every
/// [`Element`], and [`half::f16`] and [`half::bf16`], which are compared as
/// the `f32` they convert to (exactly).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, half::f16, ArgInput, ArgMax};
/// let halves = [f16::from_f32(-1.0), f16::from_f32(2.5), f16::from_f32(2.5)];
/// assert_eq!(Emulator::default().reduce(&halves, ArgMax)?, (1, f16::from_f32(2.5)));
/// fn compared_as_f32<T: ArgInput<Value = f32>>() {}
/// compared_as_f32::<f16>();
/// # Ok(()) }
/// ```
pub trait ArgInput: DeviceCopy + Copy + Default + Debug + PartialEq + Send + Sync + 'static + sealed::Sealed {
    /// The type the kernel writes the value in: the type itself, `f32` for
    /// the half types (the value a whole input's argmax returns is converted
    /// back to the input type, exactly: [`ArgInput::from_value`]).
    type Value: Element;
    /// The input type.
    const INPUT: ElementType;
    /// The input value that converts to `value` (exact for every value the
    /// kernel writes).
    fn from_value(value: Self::Value) -> Self;
}

/// `value` (an `f32` converted from the input type, or the input itself) as the input type.
macro_rules! arg_from_value {
    (f16, $value:expr) => {
        half::f16::from_f32($value)
    };
    (bf16, $value:expr) => {
        half::bf16::from_f32($value)
    };
    ($t:ident, $value:expr) => {
        $value
    };
}

macro_rules! arg_input {
    ($(($input:ident, $name:ident, $acc:ident)),* $(,)?) => {$(
        impl ArgInput for host_input!($name) {
            type Value = $acc;
            const INPUT: ElementType = ElementType::of_kernel(kernels_gpu::scalar!($name));
            fn from_value(value: $acc) -> Self {
                arg_from_value!($name, value)
            }
        }
    )*};
}
kernels_gpu::for_each_arg_kernel!(arg_input);

/// A conversion of a reduction's results to the caller's type `T`, which
/// [`Cast`](crate::Cast) applies: sealed, for these pairs.
///
/// | from | to `T` | how |
/// |---|---|---|
/// | `u64` (positions) | `i64` | the same bits (a position is below 2^63) |
/// | `u64` (positions) | `u32` | exact; [`Error::IndexOverflow`](crate::Error::IndexOverflow) before anything runs where a position could pass `u32::MAX` |
/// | `f64` | `f32` | rounded to nearest, ties to even (Rust's `as f32`) |
/// | `f32` | [`half::f16`], [`half::bf16`] | rounded to nearest, ties to even (`half`'s `from_f32`) |
///
/// Floats too large for `T` become ±∞, too small ±0 or a subnormal of `T`;
/// a NaN stays a quiet NaN of the same sign. Each result is rounded once,
/// from the wide result; a whole input's value is converted on the host
/// with the same function as the kernel's, so it has the same bits.
///
/// ```
/// use reduce::{half::f16, CastTo};
/// assert_eq!(CastTo::<f16>::cast(65519.0f32), f16::MAX); // rounded to nearest
/// assert_eq!(CastTo::<f16>::cast(65520.0f32), f16::INFINITY); // the tie goes to even: ∞
/// assert_eq!(CastTo::<f32>::cast(1.0 + 2f64.powi(-24)), 1.0); // a tie to even
/// assert_eq!(CastTo::<i64>::cast(7u64), 7i64);
/// ```
pub trait CastTo<T>: Copy + sealed::Sealed {
    /// The type converted from.
    #[doc(hidden)]
    const FROM: ElementType;
    /// The type converted to.
    #[doc(hidden)]
    const TO: ElementType;
    /// Whether `T` holds the same bits (no conversion to run).
    #[doc(hidden)]
    const SAME_BITS: bool = false;
    /// The most positions `T` holds (`u32`: 2^32), for an index type.
    #[doc(hidden)]
    const POSITIONS: u64 = u64::MAX;
    /// `self` converted to `T` (a position: one below [`CastTo::POSITIONS`]).
    fn cast(self) -> T;
}

impl CastTo<u32> for u64 {
    const FROM: ElementType = ElementType::U64;
    const TO: ElementType = ElementType::U32;
    const POSITIONS: u64 = 1 << 32;
    fn cast(self) -> u32 {
        self as u32
    }
}

impl CastTo<i64> for u64 {
    const FROM: ElementType = ElementType::U64;
    const TO: ElementType = ElementType::I64;
    const SAME_BITS: bool = true;
    const POSITIONS: u64 = 1 << 63;
    fn cast(self) -> i64 {
        self as i64
    }
}

impl CastTo<f32> for f64 {
    const FROM: ElementType = ElementType::F64;
    const TO: ElementType = ElementType::F32;
    fn cast(self) -> f32 {
        kernels_gpu::convert::f64_to_f32(self)
    }
}

impl CastTo<half::f16> for f32 {
    const FROM: ElementType = ElementType::F32;
    const TO: ElementType = ElementType::F16;
    fn cast(self) -> half::f16 {
        half::f16::from_bits(kernels_gpu::convert::f32_to_f16_bits(self))
    }
}

impl CastTo<half::bf16> for f32 {
    const FROM: ElementType = ElementType::F32;
    const TO: ElementType = ElementType::Bf16;
    fn cast(self) -> half::bf16 {
        half::bf16::from_bits(kernels_gpu::convert::f32_to_bf16_bits(self))
    }
}

#[cfg(test)]
mod tests {
    use super::CastTo;

    /// The kernels' conversions give `half`'s bits for every `f32` of a
    /// dense sample of the bit patterns and around every exponent
    /// (subnormals, ties, overflow, NaN payloads).
    #[test]
    fn half_conversions_are_halfs() {
        let check = |bits: u32| {
            let x = f32::from_bits(bits);
            let f16: half::f16 = x.cast();
            let bf16: half::bf16 = x.cast();
            assert_eq!(f16.to_bits(), half::f16::from_f32(x).to_bits(), "{bits:#x}");
            assert_eq!(bf16.to_bits(), half::bf16::from_f32(x).to_bits(), "{bits:#x}");
        };
        for bits in (0..=u32::MAX).step_by(997) {
            check(bits);
        }
        for exponent in 0..256u32 {
            for low in [
                0u32, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001, 0x18000, 0x7f_ffff,
            ] {
                for sign in [0, 0x8000_0000] {
                    check(sign | exponent << 23 | low);
                    check(sign | exponent << 23 | (0x40_0000 | low));
                }
            }
        }
    }

    #[test]
    fn f64_to_f32_is_as() {
        for x in [
            1.0f64,
            1.0 + 2f64.powi(-24),
            1e-40,
            1e-46,
            3.4e38,
            3.5e38,
            -0.0,
            f64::INFINITY,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(CastTo::<f32>::cast(x).to_bits(), (x as f32).to_bits(), "{x:e}");
        }
        assert!(CastTo::<f32>::cast(f64::NAN).is_nan());
    }
}
