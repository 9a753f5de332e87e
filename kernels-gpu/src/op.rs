//! Reduction operators: an identity and an associative, commutative combine.
//!
//! One `operator!` invocation per operator: its identity, its combine and,
//! where the hardware has one, its warp instruction. The identity is what
//! out-of-range lanes and empty inputs contribute, so
//! `combine(identity(), x) == x` must hold for every `x` (for floats too:
//! `max` starts from `-inf`, not from `-MAX`).
//!
//! [`Max`] and [`Min`] also combine [`Indexed`] elements: that is argmax and
//! argmin ([`crate::indexed`]).

use crate::element::{Accumulator, Element, WarpOp};
use crate::indexed::{self, Indexed};
pub use crate::user::User;

/// A reduction operator over values of type `A`.
pub trait Operator<A: Accumulator> {
    /// The value that leaves every other value unchanged under [`Operator::combine`].
    fn identity() -> A;
    /// Combines two values; associative and commutative (floats: up to rounding).
    fn combine(a: A, b: A) -> A;

    /// `value` combined over the 32 lanes of the warp by one hardware
    /// instruction, where there is one for this operator and type
    /// ([`crate::element::Element::warp_reduce_native`]); `None` otherwise,
    /// and [`crate::warp`] shuffles. Every lane receives the result.
    ///
    /// # Safety
    /// All 32 lanes of the warp must call it together.
    #[inline(always)]
    unsafe fn warp_reduce_native(value: A) -> Option<A> {
        let _ = value;
        None
    }
}

/// An operator over every element type, as all of ours are: the widening
/// kernels combine the lanes of a word in a narrower type than the
/// accumulator ([`crate::widen::Widen::Word`]).
pub trait AnyElement:
    Operator<i32> + Operator<u32> + Operator<i64> + Operator<u64> + Operator<f32> + Operator<f64>
{
}

impl<O> AnyElement for O where
    O: Operator<i32> + Operator<u32> + Operator<i64> + Operator<u64> + Operator<f32> + Operator<f64>
{
}

/// Defines the operator `$name` over every [`Element`] `T`: `identity()` is
/// `$identity`, `combine(a, b)` is `$combine`, and `warp_reduce_native` is
/// the element's instruction for [`WarpOp`] `$warp` where given (else the
/// default, `None`). With `indexed` (argmax if `true`, argmin if `false`),
/// `$name` also combines [`Indexed`] elements (see [`crate::indexed`]).
macro_rules! operator {
    (
        $(#[$doc:meta])*
        $name:ident {
            identity: $identity:expr,
            combine: |$a:ident, $b:ident| $combine:expr,
            $(warp: $warp:ident,)?
            $($(#[$indexed_doc:meta])* indexed: $largest:literal,)?
        }
    ) => {
        $(#[$doc])*
        pub struct $name;

        impl<T: Element> Operator<T> for $name {
            #[inline(always)]
            fn identity() -> T {
                $identity
            }

            #[inline(always)]
            fn combine($a: T, $b: T) -> T {
                $combine
            }

            $(
                #[inline(always)]
                unsafe fn warp_reduce_native(value: T) -> Option<T> {
                    value.warp_reduce_native(WarpOp::$warp)
                }
            )?
        }

        $(
            $(#[$indexed_doc])*
            impl<T: Element> Operator<Indexed<T>> for $name {
                #[inline(always)]
                fn identity() -> Indexed<T> {
                    indexed::identity($largest)
                }

                #[inline(always)]
                fn combine(a: Indexed<T>, b: Indexed<T>) -> Indexed<T> {
                    indexed::combine(a, b, $largest)
                }
            }
        )?
    };
}

/// `$a.$pick($b)`, except that a NaN operand yields the other one (so two
/// NaNs give NaN): the combine of [`NanMax`] and [`NanMin`].
macro_rules! ignoring_nan {
    ($a:ident, $b:ident, $pick:ident) => {
        if $a.is_nan() {
            $b
        } else if $b.is_nan() {
            $a
        } else {
            $a.$pick($b)
        }
    };
}

operator! {
    /// Sum; wraps for integers, IEEE for floats (`inf + -inf` is NaN).
    Sum {
        identity: T::ZERO,
        combine: |a, b| a.add(b),
        warp: Sum,
    }
}

operator! {
    /// Maximum; starts from the type's minimum (`-inf` for floats); NaN wins.
    Max {
        identity: T::LOWEST,
        combine: |a, b| a.max(b),
        warp: Max,
        /// argmax: see [`crate::indexed`].
        indexed: true,
    }
}

operator! {
    /// Minimum; starts from the type's maximum (`+inf` for floats); NaN wins.
    Min {
        identity: T::HIGHEST,
        combine: |a, b| a.min(b),
        warp: Min,
        /// argmin: see [`crate::indexed`].
        indexed: false,
    }
}

operator! {
    /// Product; wraps for integers, IEEE for floats.
    Product {
        identity: T::ONE,
        combine: |a, b| a.mul(b),
    }
}

operator! {
    /// Maximum that ignores NaN (`fmax`-style): starts from NaN, and a NaN
    /// operand yields the other one, so only an input of nothing but NaNs gives
    /// NaN. Integers have no NaN: the same as [`Max`].
    NanMax {
        identity: T::nan().unwrap_or(T::LOWEST),
        combine: |a, b| ignoring_nan!(a, b, max),
    }
}

operator! {
    /// Minimum that ignores NaN (`fmin`-style): starts from NaN, and a NaN
    /// operand yields the other one, so only an input of nothing but NaNs gives
    /// NaN. Integers have no NaN: the same as [`Min`].
    NanMin {
        identity: T::nan().unwrap_or(T::HIGHEST),
        combine: |a, b| ignoring_nan!(a, b, min),
    }
}
