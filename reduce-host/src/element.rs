//! The element types the library reduces.

use cust::memory::DeviceCopy;
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
    pub trait Sealed {
        /// The same type as the kernel crate sees it (the emulator's kernels
        /// are instantiated with it). An associated type rather than a
        /// supertrait, so the kernel trait's methods stay out of users' scope.
        type Kernel: kernels_gpu::element::Element;
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
}

impl FloatElement for f32 {
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
}

impl FloatElement for f64 {
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
}
