//! The scalar types the kernels read and write, by name: [`Scalar`], and
//! [`scalar!`](crate::scalar), which turns a type name of the lists into one.

/// The runtime name of a scalar type the kernels read or write: the six
/// element types ([`Scalar::ELEMENTS`], which every operator reduces in), and
/// the narrower inputs that the widening and argmax kernels read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    Bf16,
    F32,
    F64,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Scalar {
    /// The element types: those the reductions accumulate in.
    pub const ELEMENTS: [Scalar; 6] = [
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F32,
        Scalar::F64,
    ];

    /// Lower-case name, as in the kernel names (`"i32"`, `"bf16"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F16 => "f16",
            Scalar::Bf16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }
}

/// The [`Scalar`] named by a type name of the lists (`i32`, `f16`, ...).
#[macro_export]
macro_rules! scalar {
    (i8) => {
        $crate::abi::Scalar::I8
    };
    (i16) => {
        $crate::abi::Scalar::I16
    };
    (i32) => {
        $crate::abi::Scalar::I32
    };
    (i64) => {
        $crate::abi::Scalar::I64
    };
    (u8) => {
        $crate::abi::Scalar::U8
    };
    (u16) => {
        $crate::abi::Scalar::U16
    };
    (u32) => {
        $crate::abi::Scalar::U32
    };
    (u64) => {
        $crate::abi::Scalar::U64
    };
    (f16) => {
        $crate::abi::Scalar::F16
    };
    (bf16) => {
        $crate::abi::Scalar::Bf16
    };
    (f32) => {
        $crate::abi::Scalar::F32
    };
    (f64) => {
        $crate::abi::Scalar::F64
    };
}
