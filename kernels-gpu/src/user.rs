//! The user's operator: [`User`] combines and [`UserMap`] maps with the
//! functions of a user-written operator ([`UserScalar`]), which the kernels
//! of `Op::User` (its map, then its combine) and `Op::UserCombine` (partial
//! results: its combine only) are written over like any other operator.
//!
//! On the GPU the functions are PTX `.func`s that the host generates from the
//! operator (`reduce-host/src/user_op/`) and splices into these kernels' PTX
//! (`abi::Module::User`, shipped as PTX only) before the driver compiles it,
//! which inlines them; on the emulator they call the operator on the CPU.
//! The host requires the operator to be associative and commutative, as the
//! kernels combine in an order of their own.

use crate::device::UserScalar;
use crate::element::Element;
use crate::map::{ElementMap, PairMap};
use crate::op::Operator;

/// The user's combine, and its identity.
pub struct User;

impl<T: Element + UserScalar> Operator<T> for User {
    #[inline(always)]
    fn identity() -> T {
        T::user_identity()
    }

    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        T::user_combine(a, b)
    }
}

/// The user's map of each input element.
pub struct UserMap;

impl<T: Element + UserScalar> ElementMap<T> for UserMap {
    #[inline(always)]
    fn map(x: T) -> T {
        T::user_map(x)
    }
}

/// The user's map of each pair of two inputs' elements (`Kernel::UserPair`).
pub struct UserPairMap;

impl<T: Element + UserScalar> PairMap<T> for UserPairMap {
    #[inline(always)]
    fn map(a: T, b: T) -> T {
        T::user_map_pair(a, b)
    }
}
