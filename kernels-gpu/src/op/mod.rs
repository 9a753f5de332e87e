//! Reduction operators: an identity and an associative, commutative combine.
//!
//! One file per operator. The identity is what out-of-range lanes and empty
//! inputs contribute, so `combine(identity(), x) == x` must hold for every `x`
//! (for floats too: `max` starts from `-inf`, not from `-MAX`).
//!
//! [`Max`] and [`Min`] also combine [`Indexed`] elements: that is argmax and
//! argmin ([`crate::indexed`]).

mod max;
mod min;
mod nan_max;
mod nan_min;
mod product;
mod sum;

pub use max::Max;
pub use min::Min;
pub use nan_max::NanMax;
pub use nan_min::NanMin;
pub use product::Product;
pub use sum::Sum;

use crate::element::Accumulator;
#[cfg(doc)]
use crate::indexed::Indexed;

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
