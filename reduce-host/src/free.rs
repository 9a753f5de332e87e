//! The free functions: a whole input's reduction to the host, or one over
//! segments, rows or axes into a new buffer, of any [`DeviceInput`] (cust's
//! buffers, and cudarc's with the `cudarc` feature), each with the reducer
//! its runtime caches for the thread.

use crate::axes::Reduced;
use crate::element::{ArgInput, Element, FloatElement, MeanInput};
use crate::error::Result;
use crate::input::DeviceInput;
use crate::over::Over;
use crate::reduction::{ArgMax, ArgMin, Mean, PairReduction, Reduction};
use crate::Op;
#[cfg(doc)]
use crate::{Error, Reducer, Var};
use cust_core::DeviceCopy;

/// Reduces the whole of `input` with `what` and returns the result: an
/// [`Op`] gives a `T`, [`ArgMax`] an `(index, value)`, [`Var`] the
/// variance, … (see [`Reduction`]; the crate docs for the rules).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::{Count, Op, Predicate, Var};
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3i64, -7, 5, 0])?;
/// assert_eq!(reduce::reduce(&buf, Op::Min)?, -7);
/// assert_eq!(reduce::reduce(&buf, Count(Predicate::Nonzero))?, 3);
/// let floats = DeviceBuffer::from_slice(&[1.0f32, 3.0])?;
/// assert_eq!(reduce::reduce(&floats, Var::<f32>::new(1.0)?)?, 2.0);
/// # Ok(()) }
/// ```
pub fn reduce<T, I: DeviceInput<T>, R: Reduction<I::Kernel>>(input: &I, what: R) -> Result<R::Value> {
    input.reduce_whole(what)
}

/// Reduces `input` with `what` over `over` — each segment, each row, or
/// along axes of a strided view — into a new buffer, with the results'
/// shape ([`Reducer::reduce_over`]; see [`Over`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::{axes::Strided, ArgMax, Op, Over};
/// let _ctx = cust::quick_init()?;
/// let x = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?; // 2 × 3
/// let layout = Strided::contiguous(&[2, 3])?;
/// let column_max = reduce::reduce_over(&x, Op::Max, Over::Axes(&layout, &[0]))?;
/// assert_eq!(column_max.values.as_host_vec()?, [4.0, 5.0, 6.0]);
/// assert_eq!(column_max.shape(true), [1, 3]);
/// let offsets = DeviceBuffer::from_slice(&[0u64, 2, 6])?;
/// let sums = reduce::reduce_over(&x, Op::Sum, Over::Segments(&offsets))?;
/// assert_eq!(sums.values.as_host_vec()?, [3.0, 18.0]);
/// let best = reduce::reduce_over(&x, ArgMax, Over::Rows { rows: 2, len: 3 })?;
/// assert_eq!(best.values.as_host_vec()?, [2, 2]);
/// # Ok(()) }
/// ```
#[allow(clippy::type_complexity)]
pub fn reduce_over<'o, T, I: DeviceInput<T>, R: Reduction<I::Kernel>>(
    input: &I,
    what: R,
    over: Over<'o, &'o I::Offsets<'o>>,
) -> Result<Reduced<R::Results<I::Buffer<R::Output>>>> {
    input.reduce_over(what, over)
}

/// The sum of `input`: 0 if empty; integers wrap; floats follow IEEE 754.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[1.5f32, 2.5, -4.0, 10.0])?;
/// assert_eq!(reduce::sum(&buf)?, 10.0);
/// let empty = DeviceBuffer::<u64>::from_slice(&[])?;
/// assert_eq!(reduce::sum(&empty)?, 0);
/// # Ok(()) }
/// ```
pub fn sum<T: Element>(input: &impl DeviceInput<T, Kernel = T>) -> Result<T> {
    reduce(input, Op::Sum)
}

/// The product of `input`: 1 if empty; integers wrap; floats follow IEEE 754.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let floats = DeviceBuffer::from_slice(&[1.5f32, 2.0, -4.0])?;
/// assert_eq!(reduce::product(&floats)?, -12.0);
/// let ints = DeviceBuffer::from_slice(&[i32::MAX, 2])?;
/// assert_eq!(reduce::product(&ints)?, -2); // wraps, as i32::MAX.wrapping_mul(2)
/// # Ok(()) }
/// ```
pub fn product<T: Element>(input: &impl DeviceInput<T, Kernel = T>) -> Result<T> {
    reduce(input, Op::Product)
}

/// The dot product `Σ a[i]·b[i]` (see [`Reducer::dot`]):
/// [`Error::LengthMismatch`] if the lengths differ; 0 if both are empty.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let a = DeviceBuffer::from_slice(&[1i64, 2, 3])?;
/// let b = DeviceBuffer::from_slice(&[4i64, 5, 6])?;
/// assert_eq!(reduce::dot(&a, &b)?, 32);
/// let short = DeviceBuffer::from_slice(&[1i64])?;
/// assert!(matches!(reduce::dot(&a, &short), Err(reduce::Error::LengthMismatch { left: 3, right: 1 })));
/// # Ok(()) }
/// ```
pub fn dot<T: Element, I: DeviceInput<T, Kernel = T>>(a: &I, b: &I) -> Result<T> {
    a.dot(b)
}

/// A reduction of the pairs `(a[i], b[i])` of two inputs on the GPU
/// ([`Reducer::reduce_pair`](crate::Reducer::reduce_pair), whose example
/// is a user operator's squared distance): [`ExactDot`](crate::ExactDot),
/// or a user operator (`&`[`User`](crate::User)) with its `map_pair`;
/// [`Error::LengthMismatch`] if the lengths differ.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let a = DeviceBuffer::from_slice(&[1e30f32, 1.0, 1e30])?;
/// let b = DeviceBuffer::from_slice(&[1.0f32, 3.0, -1.0])?;
/// assert_eq!(reduce::reduce_pair(&a, &b, reduce::ExactDot)?, 3.0); // the same bits on every GPU
/// # Ok(()) }
/// ```
pub fn reduce_pair<T: DeviceCopy, W: PairReduction<T>, I: DeviceInput<T, Kernel = T>>(
    a: &I,
    b: &I,
    what: W,
) -> Result<T> {
    a.reduce_pair(b, what)
}

/// The largest element of `input`: [`Error::Empty`] if empty; NaN if any element is NaN.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3.0f32, -8.0, 7.5])?;
/// assert_eq!(reduce::max(&buf)?, 7.5);
/// let with_nan = DeviceBuffer::from_slice(&[1.0f32, f32::NAN, 2.0])?;
/// assert!(reduce::max(&with_nan)?.is_nan());
/// let empty = DeviceBuffer::<i32>::from_slice(&[])?;
/// assert!(matches!(reduce::max(&empty), Err(reduce::Error::Empty { .. })));
/// # Ok(()) }
/// ```
pub fn max<T: Element>(input: &impl DeviceInput<T, Kernel = T>) -> Result<T> {
    reduce(input, Op::Max)
}

/// The smallest element of `input`: [`Error::Empty`] if empty; NaN if any element is NaN.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3i32, -8, 7])?;
/// assert_eq!(reduce::min(&buf)?, -8);
/// let inf = DeviceBuffer::from_slice(&[f64::INFINITY; 3])?;
/// assert_eq!(reduce::min(&inf)?, f64::INFINITY); // ±inf are ordinary values
/// # Ok(()) }
/// ```
pub fn min<T: Element>(input: &impl DeviceInput<T, Kernel = T>) -> Result<T> {
    reduce(input, Op::Min)
}

/// The arithmetic mean of `input`: its sum in [`MeanInput::Mean`] (`f64` for
/// integers, `f32` and `f64`; `f32` for `f16`/`bf16`), divided by the length.
/// NaN for an empty input (as NumPy and PyTorch), and if any element is NaN.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?;
/// assert_eq!(reduce::mean(&buf)?, 2.5);
/// # Ok(()) }
/// ```
pub fn mean<T, I: DeviceInput<T>>(input: &I) -> Result<<I::Kernel as MeanInput>::Mean>
where
    I::Kernel: MeanInput,
{
    reduce(input, Mean)
}

/// The index and value of the largest element of `input`, in one pass: ties
/// give the first index, a NaN anywhere gives the first NaN's; [`Error::Empty`] if
/// empty: `reduce(input, ArgMax)` (see [`ArgMax`]). Any [`ArgInput`]: the
/// element types and the half floats.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3i32, 9, -1, 9])?;
/// assert_eq!(reduce::argmax(&buf)?, (1, 9)); // the first of the tied maxima
/// let with_nan = DeviceBuffer::from_slice(&[1.0f32, f32::NAN, 5.0])?;
/// assert!(matches!(reduce::argmax(&with_nan)?, (1, v) if v.is_nan()));
/// # Ok(()) }
/// ```
pub fn argmax<T, I: DeviceInput<T>>(input: &I) -> Result<(u64, T)>
where
    I::Kernel: ArgInput,
{
    let (index, value) = reduce(input, ArgMax)?;
    Ok((index, I::from_kernel(value)))
}

/// The index and value of the smallest element of `input` (as [`argmax`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[4.0f64, -2.0, 7.0, -2.0])?;
/// assert_eq!(reduce::argmin(&buf)?, (1, -2.0));
/// # Ok(()) }
/// ```
pub fn argmin<T, I: DeviceInput<T>>(input: &I) -> Result<(u64, T)>
where
    I::Kernel: ArgInput,
{
    let (index, value) = reduce(input, ArgMin)?;
    Ok((index, I::from_kernel(value)))
}

/// The Euclidean (L2) norm `√Σx²` of a float input: 0 if empty, NaN if any
/// element is NaN. The square root of [`Op::SumOfSquares`], computed without
/// scaling, so it is `inf` once `Σx²` exceeds the type's range (above about
/// `1.8e19` for `f32`).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[3.0f32, -4.0])?;
/// assert_eq!(reduce::norm_l2(&buf)?, 5.0);
/// assert_eq!(reduce::reduce(&buf, reduce::Op::MaxAbs)?, 4.0);
/// # Ok(()) }
/// ```
pub fn norm_l2<T: FloatElement>(input: &impl DeviceInput<T, Kernel = T>) -> Result<T> {
    Ok(reduce(input, Op::SumOfSquares)?.sqrt())
}
