//! Operators written by the user, in plain Rust: [`User`] makes one a
//! reduction like the built-in ones. An [`Operator`] is an identity, an
//! associative and commutative combine, and optionally a map applied to
//! each element as it is read, written once, generic over [`Value`]; the
//! library runs it on plain numbers ([`Plain`]: the CPU and the emulator)
//! and traces it once into PTX device functions that the driver compiles
//! into the library's kernels (`ARCHITECTURE.md`, "User operators"). What
//! an operator can express is arithmetic on its arguments: no memory access.
//!
//! Files: `value.rs` ([`Value`], [`Plain`], [`Scalar`]), `trace.rs` (the
//! traced value and its expression), `ptx.rs` (an expression as a PTX
//! `.func`), `program.rs` (an operator ready for the backends).

pub(crate) mod program;
pub(crate) mod ptx;
pub(crate) mod trace;
pub(crate) mod value;

#[cfg(test)]
pub(crate) mod tests;

pub use value::{Compare, Plain, Scalar, Value};

use crate::error::{Error, Result};
use program::{OnTheCpu, Program};
use std::sync::Arc;

/// A reduction operator over `T`s, written by the user: the what of a
/// [`User`] reduction.
///
/// - `identity`: the value an empty segment (or an empty input) reduces
///   to; `combine(identity, x) == x` for every `x`.
/// - `combine`: **associative and commutative** — the kernels combine in
///   an order of their own (many threads, then a tree), fixed for a given
///   launch shape, so an operator that is neither still gives the same
///   bits on every run of the same call, but not a meaningful result.
///   Floats are associative up to rounding, as for the built-in sums.
/// - `map` (default: the element itself): applied once to each input
///   element as it is read, never to partial results — `Σ|x|` maps with
///   `abs` and combines with `+`; `map_pair` (default: the product) the
///   same for the pairs of two inputs (`Σ (a - b)²`, a weighted sum), in
///   the calls over two inputs (whole inputs only).
///
/// `combine` and `map` are generic over [`Value`], whose operations (`+ - *`,
/// unary `-`, [`Value::abs`], comparisons, [`Value::select`], [`Value::max`],
/// [`Value::min`], constants) have the same bits on the CPU and the GPU:
/// IEEE arithmetic rounded to nearest, never fused; integers wrap. Branch
/// with [`Value::select`], not `if`: the GPU code is traced from one call,
/// so Rust control flow that depends on a value cannot follow it (it does
/// not compile: a traced comparison is not a `bool`).
///
/// ```
/// use reduce::user::{Operator, Value};
///
/// /// The element of largest magnitude, with its sign.
/// #[derive(Clone, Copy, Debug)]
/// struct SignedAbsMax;
///
/// impl Operator<f32> for SignedAbsMax {
///     fn identity(&self) -> f32 {
///         0.0
///     }
///     fn combine<V: Value<f32>>(&self, a: V, b: V) -> V {
///         V::select(b.abs().gt(a.abs()), b, a)
///     }
/// }
/// ```
pub trait Operator<T: Scalar>: Send + Sync + 'static {
    /// The value of no elements: `combine(identity, x) == x`.
    fn identity(&self) -> T;
    /// Two values (elements after `map`, or partial results) combined.
    fn combine<V: Value<T>>(&self, a: V, b: V) -> V;
    /// An input element as it is read, before it is combined.
    fn map<V: Value<T>>(&self, x: V) -> V {
        x
    }
    /// A pair of two inputs' elements `(a[i], b[i])` as they are read, for
    /// the calls over two inputs ([`Reducer::reduce_pair`](crate::Reducer::reduce_pair),
    /// [`reduce_pair`](crate::reduce_pair)): by default their product, so
    /// an operator whose combine is `+` is a dot product.
    // A `Value`'s `*` wraps (integers) or rounds (floats): it cannot panic.
    #[allow(clippy::arithmetic_side_effects)]
    fn map_pair<V: Value<T>>(&self, a: V, b: V) -> V {
        a * b
    }
}

/// A user's [`Operator`] as a reduction: pass `&User` wherever a
/// reduction goes (`reduce`, `reduce_over` over every [`Over`](crate::Over),
/// the `_into` forms, [`Scope`](crate::Scope), the cudarc reducer).
///
/// [`User::new`] traces the operator once into GPU code; build it once and
/// reuse it. The first launch of each of its kernels on a device has the
/// driver compile that kernel with the operator inlined (about a second for
/// the first call; then cached in memory per reducer and, by the driver, on
/// disk). On the emulator the operator runs as written, on plain values.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::user::{Operator, Value};
/// use reduce::{emulated::Emulator, Over, User};
///
/// /// Σ x² over `f64`: a map, then a sum.
/// #[derive(Clone, Copy, Debug)]
/// struct SumOfSquares;
/// impl Operator<f64> for SumOfSquares {
///     fn identity(&self) -> f64 {
///         0.0
///     }
///     fn combine<V: Value<f64>>(&self, a: V, b: V) -> V {
///         a + b
///     }
///     fn map<V: Value<f64>>(&self, x: V) -> V {
///         x * x
///     }
/// }
///
/// let squares = User::new(SumOfSquares)?;
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce(&[1.0, 2.0, 3.0], &squares)?, 14.0);
/// let rows = emulator.reduce_over(&[1.0, 2.0, 3.0, 4.0], &squares, Over::Rows { rows: 2, len: 2 })?;
/// assert_eq!(rows.values.to_vec(), [5.0, 25.0]);
/// // The same operator on the CPU:
/// assert_eq!(squares.fold(&[1.0, 2.0, 3.0]), 14.0);
/// # Ok(()) }
/// ```
pub struct User<T: Scalar, O: Operator<T>> {
    program: Program,
    on_the_cpu: Arc<OnTheCpu<T, O>>,
}

impl<T: Scalar, O: Operator<T>> User<T, O> {
    /// `operator`, traced into GPU code: [`Error::UserOperator`] if it
    /// cannot be (it kept a traced value from an earlier call, or used
    /// another trace's).
    pub fn new(operator: O) -> Result<Self> {
        let (program, on_the_cpu) =
            program::compile::<T, O>(operator).map_err(|e| Error::UserOperator(e.0.to_string()))?;
        Ok(User { program, on_the_cpu })
    }

    /// The operator.
    pub fn operator(&self) -> &O {
        &self.on_the_cpu.operator
    }

    /// The operator's reduction of the pairs of `a` and `b` on the CPU,
    /// folded from the left as [`User::fold`] (pairs past the shorter of
    /// the two are left out).
    pub fn fold_pairs(&self, a: &[T], b: &[T]) -> T {
        let operator = &self.on_the_cpu.operator;
        a.iter()
            .zip(b)
            .fold(Plain(operator.identity()), |total, (&x, &y)| {
                operator.combine(total, operator.map_pair(Plain(x), Plain(y)))
            })
            .0
    }

    /// The operator's reduction of `elements` on the CPU, folded from the
    /// left (`combine(…combine(identity, map(x0))…, map(xn))`): the exact
    /// result where the operator is exact (integers, max, min); for float
    /// sums, a result of another order than the GPU's.
    pub fn fold(&self, elements: &[T]) -> T {
        let operator = &self.on_the_cpu.operator;
        elements
            .iter()
            .fold(Plain(operator.identity()), |total, &x| {
                operator.combine(total, operator.map(Plain(x)))
            })
            .0
    }

    pub(crate) fn program(&self) -> &Program {
        &self.program
    }
}

impl<T: Scalar, O: Operator<T>> std::fmt::Debug for User<T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("element", &T::NAME)
            .field("operator", &std::any::type_name::<O>())
            .finish()
    }
}
