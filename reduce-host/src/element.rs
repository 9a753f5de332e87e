//! The element types the library reduces.

use cust::memory::DeviceCopy;
use kernels_gpu::widen::{Bf16, F16};
use std::fmt::Debug;

/// The runtime name of an [`Element`] type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElementType {
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl ElementType {
    /// Every element type.
    pub const ALL: [ElementType; 6] = [
        ElementType::I32,
        ElementType::U32,
        ElementType::I64,
        ElementType::U64,
        ElementType::F32,
        ElementType::F64,
    ];

    /// Lower-case name, as in the kernel names (`"i32"`, `"f32"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ElementType::I32 => "i32",
            ElementType::U32 => "u32",
            ElementType::I64 => "i64",
            ElementType::U64 => "u64",
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElementType::I32 | ElementType::U32 | ElementType::F32 => 4,
            ElementType::I64 | ElementType::U64 | ElementType::F64 => 8,
        }
    }
}

pub(crate) mod sealed {
    use crate::op::Op;

    pub trait Sealed {
        /// The same type as the kernel crate sees it (the emulator's kernels
        /// are instantiated with it). An associated type rather than a
        /// supertrait, so the kernel trait's methods stay out of users' scope.
        type Kernel: kernels_gpu::element::Element;
    }

    /// A widening entry point over kernel-side types, as [`kernels_gpu::entry`] defines it.
    pub type WidenedKernel<In, A> = unsafe fn(*const In, u64, *mut u64, *mut u32, *mut A);

    pub trait SealedArg {
        /// Runs the emulated argmax (`Op::Max`) or argmin (`Op::Min`) entry
        /// point for this input type on the current emulator thread.
        ///
        /// # Safety
        /// The parameters of an argmax/argmin entry point
        /// (`kernels-gpu/src/abi.rs`), as addresses of buffers registered
        /// with the emulated launch.
        unsafe fn emulated_arg(op: Op, input: u64, len: u64, partials: u64, ticket: u64, value: u64, index: u64);
    }

    pub trait SealedInput<A: super::Element> {
        /// The input type as the kernel crate sees it.
        type KernelInput: kernels_gpu::widen::Widen<A::Kernel>;
        /// The widening entry point for `op`, for the emulator (none where the
        /// PTX has none).
        fn emulated_kernel(op: Op) -> Option<WidenedKernel<Self::KernelInput, A::Kernel>>;
    }
}

/// A type the GPU kernels can reduce: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`.
///
/// Sealed: the kernels are compiled ahead of time for exactly these types.
pub trait Element: DeviceCopy + Copy + Debug + PartialEq + Send + Sync + 'static + sealed::Sealed {
    /// The runtime name of this type.
    const TYPE: ElementType;
}

macro_rules! element {
    ($($t:ty => $name:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {
            type Kernel = $t;
        }
        impl Element for $t {
            const TYPE: ElementType = ElementType::$name;
        }
    )*};
}
element!(i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

/// The float element types, `f32` and `f64`: what [`crate::norm_l2`] takes.
pub trait FloatElement: Element {
    /// The square root (IEEE 754, correctly rounded).
    fn sqrt(self) -> Self;
    /// `self / count`, with `count` converted to `Self` first (exactly up to
    /// 2^24 for `f32` and 2^53 for `f64`, rounded to nearest above).
    fn divide_by_count(self, count: usize) -> Self;
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
        }
    )*};
}
float_element!(f32, f64);

/// An input type that the kernels read into the wider accumulator type `A`:
/// each element is converted to `A` as it is read and the whole reduction
/// runs in `A` ([`crate::sum_as`], [`crate::reduce_as`], [`crate::mean`]).
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
pub trait WidensTo<A: Element>: DeviceCopy + Copy + Debug + Send + Sync + 'static + sealed::SealedInput<A> {
    /// The input type's name, as in the kernel names (`"i8"`, `"f16"`, ...).
    const NAME: &'static str;
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
        impl sealed::SealedInput<$acc> for host_input!($input_name) {
            type KernelInput = $input;
            fn emulated_kernel(op: crate::Op) -> Option<sealed::WidenedKernel<$input, $acc>> {
                use kernels_gpu::op::*;
                match op {
                    $(crate::Op::$op => Some(kernels_gpu::entry::reduce_widened::<$input, $acc, $operator>),)*
                    _ => None,
                }
            }
        }
        impl WidensTo<$acc> for host_input!($input_name) {
            const NAME: &'static str = stringify!($input_name);
        }
    )*};
}
kernels_gpu::for_each_widened_kernel!(widens_to);

// The kernel crate's half types are the same bits as `half`'s.
const _: () = assert!(std::mem::size_of::<F16>() == std::mem::size_of::<half::f16>());
const _: () = assert!(std::mem::size_of::<Bf16>() == std::mem::size_of::<half::bf16>());

/// An input type with a mean ([`crate::mean`]): computed from its sum in
/// [`MeanInput::Mean`] (see [`WidensTo`]), divided by the length.
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

/// An input type of [`crate::argmax`] and [`crate::argmin`]: every
/// [`Element`], and [`half::f16`] and [`half::bf16`], which are compared as
/// the `f32` they convert to (exactly).
pub trait ArgInput: DeviceCopy + Copy + Debug + PartialEq + Send + Sync + 'static + sealed::SealedArg {
    /// The type the kernel writes the value in: the type itself, `f32` for
    /// the half types ([`crate::Reducer::argmax_into`] takes a `DeviceBox` of it).
    type Value: Element;
    /// The type's name, as in the kernel names (`"f32"`, `"bf16"`, ...).
    const NAME: &'static str;
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
        impl sealed::SealedArg for host_input!($name) {
            unsafe fn emulated_arg(op: crate::Op, input: u64, len: u64, partials: u64, ticket: u64, value: u64, index: u64) {
                use kernels_gpu::entry::arg;
                use kernels_gpu::op::{Max, Min};
                let kernel = match op {
                    crate::Op::Max => arg::<$input, $acc, Max>,
                    _ => arg::<$input, $acc, Min>,
                };
                // SAFETY: as the caller promises.
                unsafe {
                    kernel(
                        input as *const $input,
                        len,
                        partials as *mut u64,
                        ticket as *mut u32,
                        value as *mut $acc,
                        index as *mut u64,
                    )
                }
            }
        }
        impl ArgInput for host_input!($name) {
            type Value = $acc;
            const NAME: &'static str = stringify!($name);
            fn from_value(value: $acc) -> Self {
                arg_from_value!($name, value)
            }
        }
    )*};
}
kernels_gpu::for_each_arg_kernel!(arg_input);
