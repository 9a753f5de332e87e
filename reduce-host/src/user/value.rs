//! The values an operator computes with: [`Value`], implemented by plain
//! numbers ([`Plain`]: the CPU and the emulator) and by traced ones
//! ([`super::Traced`]: recorded into an expression for the GPU). The
//! operations are those both can do with the same bits: IEEE 754
//! arithmetic rounded to nearest (no fused multiply-add), wrapping integer
//! arithmetic, comparisons, selection, and the sign-bit operations.

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// An arithmetic operation of two values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[doc(hidden)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    /// Floats only (`Traced` integers have no `/`).
    Div,
}

/// An operation of one value: on the sign bit for floats (as Rust's `-x`
/// and `x.abs()`, NaN included), wrapping for integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[doc(hidden)]
pub enum Unary {
    Neg,
    Abs,
}

/// A comparison ([`Value::compare`]): false whenever a float operand is
/// NaN, but `Ne`, as Rust's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compare {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

/// An element type a user operator computes in: `i32`, `u32`, `i64`,
/// `u64`, `f32`, `f64` (sealed, as [`Element`](crate::Element)). Its items
/// are the library's: the semantics of each operation on plain numbers,
/// which the GPU code reproduces.
pub trait Scalar: crate::Element + Debug + PartialEq + Send + Sync + 'static {
    /// The type's name in kernel and function names (`f32`, `i64`, …).
    #[doc(hidden)]
    const NAME: &'static str;
    /// The PTX type of arithmetic and comparisons (`f32`, `s64`, `u32`, …).
    #[doc(hidden)]
    const PTX: &'static str;
    /// Bits in a value: 32 or 64.
    #[doc(hidden)]
    const BITS: u32;
    /// Whether it is a float.
    #[doc(hidden)]
    const FLOAT: bool;
    /// The value's bits, zero-extended.
    #[doc(hidden)]
    fn to_bits(self) -> u64;
    /// The value of the low [`Scalar::BITS`] bits of `bits`.
    #[doc(hidden)]
    fn from_bits(bits: u64) -> Self;
    /// `op` of `a` and `b`.
    #[doc(hidden)]
    fn binary(op: Binary, a: Self, b: Self) -> Self;
    /// `op` of `a`.
    #[doc(hidden)]
    fn unary(op: Unary, a: Self) -> Self;
    /// `a op b`.
    #[doc(hidden)]
    fn compare(op: Compare, a: Self, b: Self) -> bool;
}

fn compare<T: PartialOrd>(op: Compare, a: T, b: T) -> bool {
    match op {
        Compare::Lt => a < b,
        Compare::Le => a <= b,
        Compare::Gt => a > b,
        Compare::Ge => a >= b,
        Compare::Eq => a == b,
        Compare::Ne => a != b,
    }
}

macro_rules! float_scalar {
    ($t:ty, $ptx:literal, $bits:literal, $sign:expr) => {
        impl Scalar for $t {
            const NAME: &'static str = stringify!($t);
            const PTX: &'static str = $ptx;
            const BITS: u32 = $bits;
            const FLOAT: bool = true;
            fn to_bits(self) -> u64 {
                u64::from(<$t>::to_bits(self))
            }
            fn from_bits(bits: u64) -> Self {
                // The low bits (`as`: truncation intended).
                <$t>::from_bits(bits as _)
            }
            fn binary(op: Binary, a: Self, b: Self) -> Self {
                match op {
                    Binary::Add => a + b,
                    Binary::Sub => a - b,
                    Binary::Mul => a * b,
                    Binary::Div => a / b,
                }
            }
            fn unary(op: Unary, a: Self) -> Self {
                let bits = <$t>::to_bits(a);
                <$t>::from_bits(match op {
                    Unary::Neg => bits ^ $sign,
                    Unary::Abs => bits & !$sign,
                })
            }
            fn compare(op: Compare, a: Self, b: Self) -> bool {
                compare(op, a, b)
            }
        }
    };
}
float_scalar!(f32, "f32", 32, 1u32 << 31);
float_scalar!(f64, "f64", 64, 1u64 << 63);

macro_rules! int_scalar {
    ($t:ty, $ptx:literal, $bits:literal, $unsigned:ty, $abs:expr) => {
        impl Scalar for $t {
            const NAME: &'static str = stringify!($t);
            const PTX: &'static str = $ptx;
            const BITS: u32 = $bits;
            const FLOAT: bool = false;
            fn to_bits(self) -> u64 {
                // Zero-extended: through the unsigned type of the same width.
                u64::from(self as $unsigned)
            }
            fn from_bits(bits: u64) -> Self {
                // The low bits (`as`: truncation intended).
                bits as $unsigned as $t
            }
            fn binary(op: Binary, a: Self, b: Self) -> Self {
                match op {
                    Binary::Add => a.wrapping_add(b),
                    Binary::Sub => a.wrapping_sub(b),
                    Binary::Mul => a.wrapping_mul(b),
                    // Not reached: integers have no traced division, and
                    // `Plain` integers no `/`.
                    Binary::Div => a,
                }
            }
            fn unary(op: Unary, a: Self) -> Self {
                match op {
                    Unary::Neg => a.wrapping_neg(),
                    Unary::Abs => $abs(a),
                }
            }
            fn compare(op: Compare, a: Self, b: Self) -> bool {
                compare(op, a, b)
            }
        }
    };
}
// `abs` wraps (`MIN` stays itself); of an unsigned value, the value.
int_scalar!(i32, "s32", 32, u32, i32::wrapping_abs);
int_scalar!(i64, "s64", 64, u64, i64::wrapping_abs);
int_scalar!(u32, "u32", 32, u32, std::convert::identity::<u32>);
int_scalar!(u64, "u64", 64, u64, std::convert::identity::<u64>);

/// A float [`Scalar`]: values of it divide.
pub trait FloatScalar: Scalar {}
impl FloatScalar for f32 {}
impl FloatScalar for f64 {}

/// What an operator computes with: written once, generic over this trait,
/// it runs on plain numbers ([`Plain`]) and is traced for the GPU (the
/// library's own implementation, recording each operation) with the same
/// results bit for bit. `+`, `-`, `*`, unary `-`, and the methods below;
/// no division (the library's values of float types divide, but an
/// [`Operator`](super::Operator)'s methods are generic over every `Value`).
pub trait Value<T: Scalar>:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self>
{
    /// The result of a comparison, for [`Value::select`].
    type Bool: Copy;

    /// The constant `value`.
    fn constant(value: T) -> Self;
    /// The absolute value (floats: the sign bit cleared, NaN too; integers:
    /// wrapping, so `i32::MIN` stays itself).
    fn abs(self) -> Self;
    /// `self op other` (false where a float is NaN, but for `Ne`).
    fn compare(self, op: Compare, other: Self) -> Self::Bool;
    /// `if_true` where `condition` holds, else `if_false`.
    fn select(condition: Self::Bool, if_true: Self, if_false: Self) -> Self;

    /// `self < other`.
    fn lt(self, other: Self) -> Self::Bool {
        self.compare(Compare::Lt, other)
    }
    /// `self > other`.
    fn gt(self, other: Self) -> Self::Bool {
        self.compare(Compare::Gt, other)
    }
    /// `other` where it is greater than `self`, else `self` (so a NaN
    /// `other` gives `self`, a NaN `self` gives NaN, and of `-0` and `+0`
    /// the first).
    fn max(self, other: Self) -> Self {
        Self::select(other.gt(self), other, self)
    }
    /// `other` where it is less than `self`, else `self` (NaN and zeros as
    /// [`Value::max`]).
    fn min(self, other: Self) -> Self {
        Self::select(other.lt(self), other, self)
    }
}

/// A plain number as a [`Value`]: the operator evaluated on the CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plain<T>(pub T);

impl<T: Scalar> Value<T> for Plain<T> {
    type Bool = bool;

    fn constant(value: T) -> Self {
        Plain(value)
    }
    fn abs(self) -> Self {
        Plain(T::unary(Unary::Abs, self.0))
    }
    fn compare(self, op: Compare, other: Self) -> bool {
        T::compare(op, self.0, other.0)
    }
    fn select(condition: bool, if_true: Self, if_false: Self) -> Self {
        if condition {
            if_true
        } else {
            if_false
        }
    }
}

macro_rules! plain_binary {
    ($trait:ident, $method:ident, $op:ident) => {
        impl<T: Scalar> $trait for Plain<T> {
            type Output = Self;
            fn $method(self, other: Self) -> Self {
                Plain(T::binary(Binary::$op, self.0, other.0))
            }
        }
    };
}
plain_binary!(Add, add, Add);
plain_binary!(Sub, sub, Sub);
plain_binary!(Mul, mul, Mul);

impl<T: FloatScalar> Div for Plain<T> {
    type Output = Self;
    fn div(self, other: Self) -> Self {
        Plain(T::binary(Binary::Div, self.0, other.0))
    }
}

impl<T: Scalar> Neg for Plain<T> {
    type Output = Self;
    fn neg(self) -> Self {
        Plain(T::unary(Unary::Neg, self.0))
    }
}
