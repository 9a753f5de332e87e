//! *What* to compute: the [`Reduction`] family. Each reduction is a value
//! whose type fixes the input types it takes and the type of its results,
//! so a reduction that cannot be asked for does not compile:
//!
//! | reduction | input `In` | each result ([`Reduction::Output`]) | whole input on the host ([`Reduction::Value`]) |
//! |---|---|---|---|
//! | [`Op`] (`Op::Sum`, `Op::Max`, …) | every [`Element`] the op is defined for | `In` | `In` |
//! | [`Widened::<A>`](Widened) (`Widened::<u64>::new(Op::Sum)`) | the narrower types of [`WidensTo<A>`] | `A` | `A` |
//! | [`ArgMax`], [`ArgMin`] | every [`ArgInput`] (also `f16`/`bf16`) | `u64`: the position along the axis (`u32`, `i64`: [`Cast`]) | `(index, value)` |
//! | [`Mean`] | every [`MeanInput`] | [`MeanInput::Mean`] (the input's type: [`Cast`]) | [`MeanInput::Mean`] |
//! | [`ExactSum`], [`ExactNanSum`], [`ExactMean`], [`ExactSumOfSquares`] | `f32`, `f64` | `In`: the same bits on every GPU | `In` |
//! | [`ExactVar`], [`ExactStd`] | `f32`, `f64` | `In`: the same bits on every GPU | `In` |
//! | [`ExactMeanVar`] | `f32`, `f64` | `In`, twice: `(means, variances)` | `(mean, variance)` |
//! | [`ExactLogSumExp`] | `f32`, `f64` | `In`: the same bits on every GPU | `In` |
//! | [`Var::<A>`](Var), [`Std::<A>`](Std) | `f32` (in `A` = `f32` or `f64`), `f64` | `A` | `A` |
//! | [`MeanVar::<A>`](MeanVar) | as [`Var`] | `A`, twice: `(means, variances)` | `(mean, variance)` |
//! | [`LogSumExp`] | `f32`, `f64` | `In` | `In` |
//! | [`Count`] | every [`Element`] | `u64` | `u64` |
//! | [`Any`], [`All`] | every [`Element`] | `u8`: 1 or 0 | `bool` |
//! | [`Cast`] (`ArgMax.cast::<u32>()`, `Mean.cast::<f16>()`, …) | as the reduction it wraps | `T`: its results rounded once ([`CastTo`]) | its value with `T` for the result |
//!
//! The results in the frameworks' types: argmax/argmin positions as `u32`
//! (candle) or `i64` (PyTorch) with `.cast::<u32>()`/`.cast::<i64>()`;
//! means and sums of `f32`, `f16`, `bf16` in the input's type with
//! `Mean.cast::<f32>()`, `Mean.cast::<f16>()`,
//! `Widened::<f32>::new(Op::Sum).cast::<f16>()`: accumulated wide as
//! without the cast, then each result rounded once (see [`Cast`]).
//!
//! Two inputs reduced pair by pair, `(a[i], b[i])`, are a
//! [`PairReduction`]: [`ExactDot`] and a user operator's pairs, over the
//! whole of both ([`Reducer::reduce_pair`]).
//!
//! *Where* it is computed is an [`Over`]: the whole input, each
//! segment, each row, or along axes of a strided view. Every reduction runs
//! over every [`Over`], except these, which have no kernel and are
//! [`Error::UnsupportedOver`]: `Widened`, `Mean` and `ArgMax`/`ArgMin` over
//! segments (and so their casts).

use crate::axes::Strided;
use crate::backend::launcher::{check_aliasing, Access, StreamHandle};
use crate::backend::Backend;
use crate::element::{ArgInput, CastTo, DeviceValue, Element, FloatElement, MeanInput, WidensTo};
use crate::error::{Error, Result};
use crate::op::Op;
use crate::over::{Over, Target};
use crate::reducer::{checked_parts, ExactOf, Reducer};
use crate::segmented::{Layout, PerSegment};
use crate::statistics::{checked_correction, Call, Destination, LogSumExpInput, MomentsInput, Predicate};
use crate::user::{Operator, Scalar, User};
use cust_core::DeviceCopy;
use kernels_gpu::abi::{self, Finish, Kernel};
use std::marker::PhantomData;

pub(crate) mod sealed {
    /// Only this crate's reductions: each has kernels behind it.
    pub trait Sealed {}
}

/// A reduction of `In`s: *what* to compute (see the [module](self) docs
/// for the family). Sealed: each reduction is a kernel the library ships.
///
/// Code generic over the reduction names its result types:
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ArgMax, Op, Reduction, Var};
/// fn on_emulator<R: Reduction<f32>>(data: &[f32], what: R) -> reduce::Result<R::Value> {
///     Emulator::default().reduce(data, what)
/// }
/// assert_eq!(on_emulator(&[1.0, 4.0, 2.0], Op::Max)?, 4.0);
/// assert_eq!(on_emulator(&[1.0, 4.0, 2.0], ArgMax)?, (1, 4.0));
/// assert_eq!(on_emulator(&[1.0, 3.0], Var::<f64>::new(1.0)?)?, 2.0);
/// # Ok(()) }
/// ```
pub trait Reduction<In: DeviceCopy>: Copy + std::fmt::Debug + sealed::Sealed {
    /// The type of each result over segments, rows or axes.
    type Output: DeviceValue;
    /// The result of a whole input, returned to the host.
    type Value;
    /// What a call over segments, rows or axes gives for outputs of `X`
    /// (buffers, or the `_into` forms' outputs): `X`, or for [`MeanVar`]
    /// `(X, X)`: the means and the variances.
    type Results<X>;

    /// Whether the reduction has means beside its values ([`MeanVar`]).
    #[doc(hidden)]
    const MEANS: bool = false;

    /// The reduction's name in [`Error::UnsupportedOver`] if no kernel of
    /// it takes segments; `None` if one does.
    #[doc(hidden)]
    const WITHOUT_SEGMENTS: Option<&'static str> = None;

    /// [`Error::UnsupportedOver`] (or [`Error::InvalidAxes`] for argmax
    /// along several axes) where no kernel computes the reduction over
    /// `over`: checked before anything is allocated or launched.
    #[doc(hidden)]
    fn check_over<O>(self, over: &Over<'_, O>) -> Result<()> {
        takes_segments(over, Self::WITHOUT_SEGMENTS)
    }

    /// Reduces the whole of `input` on `reducer`'s stream and returns the value.
    #[doc(hidden)]
    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<In>) -> Result<Self::Value>;

    /// Enqueues the reduction of `input` over `over` on `stream`, its
    /// results to `target`.
    #[doc(hidden)]
    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        input: &B::Slice<In>,
        over: Over<'_, &B::Slice<u64>>,
        target: Target,
        stream: Option<StreamHandle>,
    ) -> Result<()>;

    /// `values`, and the means where the reduction has them, as its results;
    /// `None` if the means are missing where it has them.
    #[doc(hidden)]
    fn results<X>(values: X, means: Option<X>) -> Option<Self::Results<X>>;

    /// The outputs of `results`: the values, and the means where it has them.
    #[doc(hidden)]
    fn outputs<X>(results: Self::Results<X>) -> (X, Option<X>);
}

/// A reduction of the pairs `(a[i], b[i])` of two inputs of `T`s of one
/// length, over the whole of both: what [`Reducer::reduce_pair`]
/// computes. [`ExactDot`] (the dot product, the same bits on every GPU)
/// and a user operator (`&`[`User`], with its `map_pair`). Sealed, as
/// [`Reduction`]; the plain dot product is [`Reducer::dot`].
pub trait PairReduction<T: DeviceCopy>: Copy + std::fmt::Debug + sealed::Sealed {
    /// Enqueues the reduction of the pairs of `a` and `b` on `stream`, its
    /// result to `out`; [`Error::LengthMismatch`] if their lengths differ.
    #[doc(hidden)]
    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()>;
}

/// The reductions whose results are one output: every one but [`MeanVar`].
macro_rules! one_output {
    () => {
        type Results<X> = X;
        fn results<X>(values: X, _means: Option<X>) -> Option<X> {
            Some(values)
        }
        fn outputs<X>(results: X) -> (X, Option<X>) {
            (results, None)
        }
    };
}

/// The results of the mean-and-variance reductions ([`MeanVar`],
/// [`ExactMeanVar`]): `(means, values)`.
macro_rules! means_and_values {
    () => {
        type Results<X> = (X, X);
        const MEANS: bool = true;
        fn results<X>(values: X, means: Option<X>) -> Option<(X, X)> {
            means.map(|means| (means, values))
        }
        fn outputs<X>((means, values): (X, X)) -> (X, Option<X>) {
            (values, Some(means))
        }
    };
}

impl sealed::Sealed for Op {}

/// An [`Op`] over `T`s, computed in `T` (see [`Op`] for each op's rules).
impl<T: Element> Reduction<T> for Op {
    type Output = T;
    type Value = T;
    one_output!();

    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<T>) -> Result<T> {
        reducer.blocking(|reducer, out| reducer.enqueue_reduce(input, self.kernel(), out, None, false))
    }

    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        input: &B::Slice<T>,
        over: Over<'_, &B::Slice<u64>>,
        target: Target,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        enqueue_op(self.kernel(), reducer, input, over, target, stream)
    }
}

/// An operator's reduction (built in, or the user's with its program set)
/// over `over`.
fn enqueue_op<B: Backend, T: Element>(
    op: abi::Op,
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    over: Over<'_, &B::Slice<u64>>,
    target: Target,
    stream: Option<StreamHandle>,
) -> Result<()> {
    match over {
        Over::Whole => reducer.enqueue_reduce(input, op, target.single()?, stream, false),
        Over::Axes(layout, axes) => reducer.enqueue_axes(input, layout, axes, op, (target.out, target.len), stream),
        over => enqueue_per_segment(PerSegment::Op(op), reducer, input, over, target, stream),
    }
}

/// `what` of each segment or row of `input` (`over` is segments or rows).
fn enqueue_per_segment<B: Backend, T: Element>(
    what: PerSegment,
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    over: Over<'_, &B::Slice<u64>>,
    target: Target,
    stream: Option<StreamHandle>,
) -> Result<()> {
    let (values, layout) = match over {
        Over::Segments(offsets) => {
            let layout = Layout::of_offsets::<B>(offsets)?;
            (checked_parts::<B, T>(input)?, layout)
        }
        Over::Rows { rows, len } => {
            let values = checked_parts::<B, T>(input)?;
            let layout = Layout::of_rows(values.1, rows, len)?;
            // Rows of length 0 are an empty dimension, as an axis of length
            // 0 (the rule for empty parts: `Over`'s docs), even with no
            // row; an op the type lacks is `UnsupportedOp` first, as along axes.
            if let PerSegment::Op(op) = what {
                if len == 0 && !op.defined_on_empty() && op.is_defined_for(T::TYPE.kernel()) {
                    return Err(Error::empty(op));
                }
            }
            (values, layout)
        }
        Over::Whole | Over::Axes(..) => return Err(Error::internal("a whole input or axes as segments")),
    };
    reducer.enqueue_segmented::<T>(values, layout, what, (target.out, target.len), target.status, stream)
}

impl<T: Scalar, O: Operator<T>> sealed::Sealed for &User<T, O> {}

/// A user's [`Operator`] over the pairs of two inputs: its `combine` of
/// its `map_pair` of each pair `(a[i], b[i])`; see
/// [`Reducer::reduce_pair`].
impl<T: Scalar, O: Operator<T>> PairReduction<T> for &User<T, O> {
    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let kernel = Kernel::UserPair {
            element: T::TYPE.kernel(),
        };
        reducer.with_user(self.program(), |reducer| reducer.enqueue_two(kernel, a, b, out, stream))
    }
}

/// A user's [`Operator`] over `T`s, computed in `T`:
/// see [`User`].
impl<T: Scalar, O: Operator<T>> Reduction<T> for &User<T, O> {
    type Output = T;
    type Value = T;
    one_output!();

    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<T>) -> Result<T> {
        reducer.with_user(self.program(), |reducer| {
            reducer.blocking(|reducer, out| reducer.enqueue_reduce(input, abi::Op::User, out, None, false))
        })
    }

    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        input: &B::Slice<T>,
        over: Over<'_, &B::Slice<u64>>,
        target: Target,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        reducer.with_user(self.program(), |reducer| {
            enqueue_op(abi::Op::User, reducer, input, over, target, stream)
        })
    }
}

/// An [`Op`] over narrower inputs, each converted to the accumulator `A`
/// as it is read (PyTorch's `x.sum(dtype=torch.int64)`): see [`WidensTo`]
/// for the pairs and their ops ([`Error::UnsupportedWidening`] for others).
/// No kernel takes it over segments ([`Error::UnsupportedOver`]).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, half::f16, Op, Widened};
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce(&[200u8; 1000], Widened::<u64>::new(Op::Sum))?, 200_000);
/// let halves = [f16::from_f32(0.5), f16::from_f32(-3.0)];
/// assert_eq!(emulator.reduce(&halves, Widened::<f32>::new(Op::Min))?, -3.0);
/// # Ok(()) }
/// ```
pub struct Widened<A> {
    op: Op,
    accumulator: PhantomData<fn() -> A>,
}

impl<A> Widened<A> {
    /// `op` accumulated in `A`.
    pub const fn new(op: Op) -> Self {
        Widened {
            op,
            accumulator: PhantomData,
        }
    }

    /// The results in `T`, each rounded once from `A` ([`Cast`]; the
    /// pairs: [`CastTo`]): `Widened::<f32>::new(Op::Sum).cast::<f16>()`
    /// sums halves in `f32` and returns halves, as PyTorch's `x.sum()`.
    pub const fn cast<T>(self) -> Cast<Self, T> {
        Cast::new(self)
    }
}

impl<A> Clone for Widened<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Widened<A> {}
impl<A> std::fmt::Debug for Widened<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Widened<{}>({:?})", std::any::type_name::<A>(), self.op)
    }
}
impl<A> sealed::Sealed for Widened<A> {}

impl<A: Element, In: WidensTo<A>> Reduction<In> for Widened<A> {
    type Output = A;
    type Value = A;
    one_output!();

    const WITHOUT_SEGMENTS: Option<&'static str> = Some(WIDENED);

    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<In>) -> Result<A> {
        reducer.blocking(|reducer, out| reducer.enqueue_widened::<A, In>(input, self.op.kernel(), out, None))
    }

    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        input: &B::Slice<In>,
        over: Over<'_, &B::Slice<u64>>,
        target: Target,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let out = (target.out, target.len);
        match over {
            Over::Whole => reducer.enqueue_widened::<A, In>(input, self.op.kernel(), target.single()?, stream),
            Over::Segments(_) => Err(no_kernel_over_segments(WIDENED)),
            Over::Rows { rows, len } => {
                let layout = rows_layout(B::parts(input).1, rows, len)?;
                reducer.enqueue_widened_axes::<A, In>(input, &layout, &[1], self.op.kernel(), out, stream)
            }
            Over::Axes(layout, axes) => {
                reducer.enqueue_widened_axes::<A, In>(input, layout, axes, self.op.kernel(), out, stream)
            }
        }
    }
}

/// The name of [`Widened`] in errors.
const WIDENED: &str = "a widened reduction";

/// [`Error::UnsupportedOver`] if `over` is segments and `without_segments`
/// names a reduction no kernel of which takes them.
fn takes_segments<O>(over: &Over<'_, O>, without_segments: Option<&'static str>) -> Result<()> {
    match (over, without_segments) {
        (Over::Segments(_), Some(reduction)) => Err(no_kernel_over_segments(reduction)),
        _ => Ok(()),
    }
}

/// [`Error::UnsupportedOver`] for `reduction` over segments, which no
/// kernel of it takes.
fn no_kernel_over_segments(reduction: &'static str) -> Error {
    Error::UnsupportedOver {
        reduction,
        over: "segments",
    }
}

/// The reductions that are a statistic [`Call`] (and argmax/argmin along
/// an axis, which the same launches run): their `enqueue`.
fn enqueue_call<B: Backend, In: DeviceCopy>(
    call: Call,
    reducer: &mut Reducer<B>,
    input: &B::Slice<In>,
    over: Over<'_, &B::Slice<u64>>,
    target: Target,
    stream: Option<StreamHandle>,
) -> Result<()> {
    let destination = Destination {
        out: target.out,
        len: target.len,
        means: target.means,
    };
    match over {
        Over::Whole => {
            let layout = Strided::contiguous(&[B::parts(input).1])?;
            reducer.enqueue_statistic(input, &layout, &[0], call, destination, stream)
        }
        Over::Segments(offsets) => {
            reducer.enqueue_statistic_segments(input, offsets, call, destination, target.status, stream)
        }
        Over::Rows { rows, len } => {
            let layout = rows_layout(B::parts(input).1, rows, len)?;
            reducer.enqueue_statistic(input, &layout, &[1], call, destination, stream)
        }
        Over::Axes(layout, axes) => reducer.enqueue_statistic(input, layout, axes, call, destination, stream),
    }
}

/// A `rows × len` matrix of `elements` as a view: [`Error::InvalidSegments`]
/// unless it has that many elements (as the row kernels' check).
fn rows_layout(elements: usize, rows: usize, len: usize) -> Result<Strided> {
    Layout::of_rows(elements, rows, len)?;
    Strided::contiguous(&[rows, len])
}

/// The index of the largest element (whole input: `(index, value)`), or its
/// position along one axis per position of the others (PyTorch's
/// `x.argmax(dim)`, `Over::Axes(&layout, &[dim])`; rows: the position in
/// each row). The first among equal values; a NaN before any number (the
/// first NaN); `-0.0 == +0.0`; `f16`/`bf16` compared as the `f32` they
/// are. [`Error::Empty`] for no elements. No kernel takes it over segments.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{axes::Strided, emulated::Emulator, ArgMax, ArgMin, Over};
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce(&[3i32, 9, -1, 9], ArgMax)?, (1, 9));
/// let x = [3i32, 9, 9, 7, 1, 8]; // 2 × 3
/// let per_row = emulator.reduce_over(&x, ArgMin, Over::Rows { rows: 2, len: 3 })?;
/// assert_eq!(per_row.values.to_vec(), [0, 1]);
/// let per_column = emulator.reduce_over(&x, ArgMax, Over::Axes(&Strided::contiguous(&[2, 3])?, &[0]))?;
/// assert_eq!(per_column.values.to_vec(), [1, 0, 0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgMax;

/// The index of the smallest element: [`ArgMax`]'s rules (a NaN is still
/// the first choice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgMin;

macro_rules! arg_cast {
    ($($name:ident),*) => {$(
        impl $name {
            /// The positions in the index type `T` of the caller's buffers
            /// (`u32`, as candle's; `i64`, as PyTorch's): see [`Cast`].
            /// [`Error::IndexOverflow`] for `u32` along more than 2^32
            /// elements, before anything runs.
            pub const fn cast<T>(self) -> Cast<Self, T> {
                Cast::new(self)
            }
        }
    )*};
}
arg_cast!(ArgMax, ArgMin);

/// The name of [`Mean`] in errors.
const MEAN: &str = "Mean";

/// The name of [`ArgMax`] and [`ArgMin`] in errors.
const ARG: &str = "argmax/argmin";

macro_rules! arg_reduction {
    ($($name:ident => $op:ident),*) => {$(
        impl sealed::Sealed for $name {}

        impl<T: ArgInput> Reduction<T> for $name {
            type Output = u64;
            type Value = (u64, T);
            one_output!();

            const WITHOUT_SEGMENTS: Option<&'static str> = Some(ARG);

            fn check_over<O>(self, over: &Over<'_, O>) -> Result<()> {
                if let Over::Axes(_, axes) = over {
                    if axes.len() != 1 {
                        return Err(Error::InvalidAxes(format!("argmax and argmin take one axis, not {axes:?}")));
                    }
                }
                takes_segments(over, Some(ARG))
            }

            fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<T>) -> Result<(u64, T)> {
                reducer.arg_to_host(input, abi::Op::$op)
            }

            fn enqueue<B: Backend>(
                self,
                reducer: &mut Reducer<B>,
                input: &B::Slice<T>,
                over: Over<'_, &B::Slice<u64>>,
                target: Target,
                stream: Option<StreamHandle>,
            ) -> Result<()> {
                <Self as Reduction<T>>::check_over(self, &over)?;
                match over {
                    // The whole-input kernel (one pass, as `value`): its
                    // value goes to the stream's sink, the index to `target`.
                    Over::Whole => {
                        let sink = reducer.backend.workspace(stream)?.sink;
                        reducer.enqueue_arg(input, abi::Op::$op, (sink, target.single()?), stream)
                    }
                    _ => enqueue_call(Call::arg::<T>(abi::Op::$op)?, reducer, input, over, target, stream),
                }
            }
        }
    )*};
}
arg_reduction!(ArgMax => Max, ArgMin => Min);

/// The arithmetic mean (PyTorch's `x.mean(dim)`): the sum in
/// [`MeanInput::Mean`] (`f64` for integers, `f32` and `f64`; `f32` for
/// `f16`/`bf16`), as [`Widened`] sums, divided by the number of elements
/// summed (`sum / n as f64`, `as f32` for the halves, correctly rounded);
/// NaN for none (as NumPy and PyTorch). Over the whole input, rows or axes:
/// over a place, the sums' launches and then one that divides each sum
/// exactly as [`Reducer::reduce`] divides a whole input's (over the whole
/// input, the same bits as it). No kernel takes it over segments
/// ([`Error::UnsupportedOver`]).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{axes::Strided, emulated::Emulator, Mean, Over};
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce(&[1u32, 2, 3, 4], Mean)?, 2.5);
/// let x = [1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0]; // 2 × 3
/// let rows = emulator.reduce_over(&x, Mean, Over::Rows { rows: 2, len: 3 })?;
/// assert_eq!(rows.values.to_vec(), [2.0f64, 6.0]);
/// let columns = emulator.reduce_over(&x, Mean, Over::Axes(&Strided::contiguous(&[2, 3])?, &[0]))?;
/// assert_eq!(columns.values.to_vec(), [2.5, 4.0, 5.5]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mean;

impl Mean {
    /// The means in `T`, each rounded once from [`MeanInput::Mean`]
    /// ([`Cast`]): `Mean.cast::<f32>()` of `f32`s, `Mean.cast::<f16>()` of
    /// halves, the input's type as PyTorch's and candle's means.
    pub const fn cast<T>(self) -> Cast<Self, T> {
        Cast::new(self)
    }
}

impl sealed::Sealed for Mean {}

impl<In: MeanInput> Reduction<In> for Mean {
    type Output = In::Mean;
    type Value = In::Mean;
    one_output!();

    const WITHOUT_SEGMENTS: Option<&'static str> = Some(MEAN);

    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<In>) -> Result<In::Mean> {
        let sum: In::Mean = Widened::<In::Mean>::new(Op::Sum).value(reducer, input)?;
        // `.canonical()`: the host's own `0 / 0` is another NaN (x86's has the sign set).
        Ok(sum.divide_by_count(B::parts(input).1).canonical())
    }

    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        input: &B::Slice<In>,
        over: Over<'_, &B::Slice<u64>>,
        target: Target,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        <Self as Reduction<In>>::check_over(self, &over)?;
        let count = reduced_extent(&over, B::parts(input).1)?;
        // The sums as `Widened` computes them (for the whole input, the
        // kernel `value` reads back), then each divided as `value` divides.
        Widened::<In::Mean>::new(Op::Sum).enqueue(reducer, input, over, target, stream)?;
        reducer.enqueue_divide_by_count::<In::Mean>(target.out, target.len, count, stream)
    }
}

/// The [`Reduction`] of an exact sum `$what` ([`ExactOf`] `$of`: which
/// elements, and whether divided by their count): [`enqueue_exact`] over
/// every place.
macro_rules! exact_sum_reduction {
    ($what:ident, $of:ident) => {
        impl sealed::Sealed for $what {}

        impl<T: FloatElement> Reduction<T> for $what {
            type Output = T;
            type Value = T;
            one_output!();

            fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<T>) -> Result<T> {
                reducer.blocking(|reducer, out| reducer.enqueue_exact_sum(input, ExactOf::$of, out, None))
            }

            fn enqueue<B: Backend>(
                self,
                reducer: &mut Reducer<B>,
                input: &B::Slice<T>,
                over: Over<'_, &B::Slice<u64>>,
                target: Target,
                stream: Option<StreamHandle>,
            ) -> Result<()> {
                enqueue_exact(ExactOf::$of, reducer, input, over, target, stream)
            }
        }
    };
}

/// The exact sum of `f32`s or `f64`s rounded once, to nearest with ties to
/// even: the correctly rounded sum, so **the same bits on every GPU, grid,
/// launch shape, alignment and order**, as [`ExactSum::fold`] gives on the
/// CPU (and any other correctly rounded sum: Python's `math.fsum` for
/// `f64`). Its error is at most half an ulp of the result, whatever the
/// input (no cancellation error: `1e30 + 1 - 1e30` is `1`).
///
/// Specials follow IEEE 754's sum of the same values in any order: a NaN,
/// or `+inf` with `-inf`, gives NaN (the canonical quiet NaN, whatever the
/// payloads); otherwise an infinity gives itself; an exact zero is `+0.0`;
/// a sum past the largest finite value is infinite (an overflow on the way
/// that the exact sum does not have, as in `MAX + MAX - MAX`, is none).
///
/// Cost: one launch, as [`Op::Sum`]. The kernel carries each partial sum
/// exactly as two `f64`s while its bits span at most about 104 (from the
/// sum's magnitude down to the last bit of its smallest element; for
/// `f32`s, 104 less the bits of one thread's share of the additions, about
/// 11 for 2^30 elements on an H200): the sums of typical data (2^30
/// uniform or normally distributed `f32`s, 2^28 `f64`s with all 53 bits
/// random). Where they
/// do not (values spread over a wider range, an infinity or NaN, an `f64`
/// overflow on the way), the launch's last block sums the input again with
/// wide fixed-point accumulators: exact always, but one block's speed.
///
/// Over segments and rows ([`Over::Segments`], [`Over::Rows`]) each result
/// is its part's exact sum rounded once, so it does not depend on the
/// other parts or how many there are (a row has the same bits alone or in
/// a batch of 4096), nor on the launch plan; a part whose sum the fast
/// path cannot hold (values over a very wide range, specials) is summed
/// again exactly by one warp: correct, at one warp's speed. Along axes
/// ([`Over::Axes`]): each result its elements' exact sum rounded once,
/// whatever the view. Where the reduced axes merge into one and the kept
/// axes lie in memory in the given order (`dim=-1`, `dim=0` or a middle
/// axis of a dense or sliced tensor), one launch reads the view in place,
/// as the rows or the axis kernel of [`Op::Sum`] would; a result the fast
/// path cannot hold is summed again by one thread. Two reduced axes apart,
/// the inner one contiguous, with at most one kept axis (axes 0 and 2 of a
/// dense 3-d tensor, a whole slice with gaps between its rows) are read in
/// place too, each result's runs read by a row kernel as one row, where
/// every run and row is whole 16-byte vectors and the view's first element
/// starts one (a run of a multiple of 4 `f32`s or 2 `f64`s, aligned). Any
/// other view (more axes apart, kept axes permuted) is first copied
/// into the reducer's scratch as one row per result: one more read and
/// write of every element, and scratch as large as the view's elements.
/// Across GPUs
/// (`reduce::multi`): the GPUs exchange exact states, not rounded values,
/// so one GPU and four, cut anywhere, give the same bits.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{axes::Strided, emulated::Emulator, ExactSum, Over};
/// let x = [1e30f32, 1.0, -1e30]; // a float sum gives 0 or 1, by its tree
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce(&x, ExactSum)?, 1.0);
/// assert_eq!(ExactSum::fold(&x), 1.0); // the same on the CPU
/// // Each row alone: the same bits in any batch.
/// let rows = emulator.reduce_over(&[1e30f32, 1.0, -1e30, 0.5, 0.25, 0.25], ExactSum, Over::Rows { rows: 2, len: 3 })?;
/// assert_eq!(rows.values.to_vec(), [1.0, 1.0]);
/// // Along an axis: the columns of a 3 × 2 matrix, (1e30, 1, -1e30) and (0.5, 0.25, 0.25).
/// let matrix = Strided::contiguous(&[3, 2])?;
/// let x = [1e30f32, 0.5, 1.0, 0.25, -1e30, 0.25];
/// let columns = emulator.reduce_over(&x, ExactSum, Over::Axes(&matrix, &[0]))?;
/// assert_eq!(columns.values.to_vec(), [1.0, 1.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExactSum;

impl ExactSum {
    /// The exact sum of `values` rounded once, on the CPU: the bits the
    /// GPU and the emulator give for the same values.
    ///
    /// ```
    /// use reduce::ExactSum;
    /// assert_eq!(ExactSum::fold(&[0.1f64, 0.2, 0.3]), 0.6); // 0.1 + 0.2 + 0.3 is 0.6000000000000001
    /// ```
    pub fn fold<T: FloatElement>(values: &[T]) -> T {
        T::exact_sum(values)
    }
}

exact_sum_reduction!(ExactSum, Elements);

/// Enqueues the exact sum `of` `input`'s elements over `over`, its results
/// to `target` ([`ExactSum`] and the reductions built on it).
fn enqueue_exact<B: Backend, T: FloatElement>(
    of: ExactOf,
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    over: Over<'_, &B::Slice<u64>>,
    target: Target,
    stream: Option<StreamHandle>,
) -> Result<()> {
    match over {
        Over::Whole => reducer.enqueue_exact_sum(input, of, target.single()?, stream),
        // A few long rows: the whole-input kernel, each row over its own
        // blocks as one row alone would be spread over the grid. One row
        // of 2^30 bytes took 3% (`f32`) and 20% (`f64`) longer through the
        // segmented kernels, 16 rows 3% and 20% (H200, 2026-11-30). An
        // exact sum's bits do not depend on the kernel. Shorter rows, and a
        // shape or output that does not fit, take the segmented path, whose
        // rules and errors those are.
        Over::Rows { rows, len } if target.len == rows => {
            match reducer.enqueue_exact_rows(input, (rows, len), of, target.out, stream)? {
                true => Ok(()),
                false => enqueue_per_segment(PerSegment::Exact(of), reducer, input, over, target, stream),
            }
        }
        Over::Axes(layout, axes) => {
            reducer.enqueue_exact_axes(input, layout, axes, of, (target.out, target.len), stream)
        }
        over => enqueue_per_segment(PerSegment::Exact(of), reducer, input, over, target, stream),
    }
}

/// [`ExactSum`] of the elements that are not NaN: each NaN added as `+0.0`
/// (PyTorch's `torch.nansum`, this crate's [`Op::NanSum`]), the rest as
/// [`ExactSum`] adds them. So, like it, the correctly rounded sum of the
/// other elements, **the same bits on every GPU, grid, launch shape,
/// alignment and order, alone or in any batch, on one GPU or several**, as
/// [`ExactNanSum::fold`] gives on the CPU. Error: at most half an ulp of the
/// result.
///
/// Specials: `+inf` with `-inf` still gives NaN (the canonical NaN: a NaN
/// the sum makes, not one it reads); otherwise an infinity gives itself;
/// only NaNs, or nothing, give `+0.0`.
///
/// Every place ([`Over`]), form and buffer kind, and across GPUs
/// (`reduce::multi`), as [`ExactSum`]; its cost too (NaNs do not send a
/// part to the slower exact pass, as they do for [`ExactSum`]).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ExactNanSum, Over};
/// let x = [1e30f32, f32::NAN, 1.0, -1e30];
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce(&x, ExactNanSum)?, 1.0);
/// assert_eq!(ExactNanSum::fold(&x), 1.0); // the same on the CPU
/// // Rows of 2: a row of NaNs sums to +0.0.
/// let rows = emulator.reduce_over(&[f64::NAN, f64::NAN, 0.5, f64::NAN], ExactNanSum, Over::Rows { rows: 2, len: 2 })?;
/// assert_eq!(rows.values.to_vec(), [0.0, 0.5]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExactNanSum;

impl ExactNanSum {
    /// The exact sum of the values that are not NaN, rounded once, on the
    /// CPU: the bits the GPU and the emulator give for the same values.
    ///
    /// ```
    /// use reduce::ExactNanSum;
    /// assert_eq!(ExactNanSum::fold(&[0.1f64, f64::NAN, 0.2, 0.3]), 0.6);
    /// assert_eq!(ExactNanSum::fold(&[f32::NAN]).to_bits(), 0); // +0.0
    /// ```
    pub fn fold<T: FloatElement>(values: &[T]) -> T {
        T::exact_nan_sum(values)
    }
}

exact_sum_reduction!(ExactNanSum, NotNan);

/// The sum of the squares of `f32`s or `f64`s, exactly: each square `x * x`
/// rounded to the element type (as [`Op::SumOfSquares`] squares it), the
/// squares summed exactly, the sum rounded once. So **the same bits on every
/// GPU, grid, launch shape, alignment and order, alone or in any batch, on
/// one GPU or several**, as [`ExactSumOfSquares::fold`] gives on the CPU.
/// Error against the exact `Σ x²`: each square's rounding (a relative
/// error of at most ε, 2^-24 for `f32`, 2^-53 for `f64`) and the sum's
/// (half an ulp), so a relative error of at most about 2ε (under 1.5 ulps
/// of the result), whatever the length (a float sum's bound grows with
/// it); a square below the smallest normal number is rounded to the
/// subnormals' fixed step instead (an absolute error of at most half the
/// smallest subnormal each). Its square root is an L2 norm with the same guarantee
/// (`sqrt` is correctly rounded: [`FloatElement::sqrt`]).
///
/// Specials: a NaN gives NaN (the canonical one); otherwise an infinity,
/// or a square past the largest finite value, gives `+inf`; no elements
/// give `+0.0`.
///
/// Every place ([`Over`]), form and buffer kind, and across GPUs
/// (`reduce::multi`: the GPUs exchange exact states), as [`ExactSum`].
/// Cost: one launch, as [`Op::SumOfSquares`]; the kernels carry each
/// partial sum exactly as three `f64`s (squares spread over twice the bits
/// of their elements, more than [`ExactSum`]'s two hold), which holds every
/// sum whose bits span at most about 150 from its top (2^30 squares of
/// normally distributed `f32`s span about 113, of `f64`s about 142). A part
/// whose sum does not fit (values over a very wide range, specials) is
/// summed again exactly, as [`ExactSum`] does: correct, at one block's,
/// warp's or thread's speed.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ExactSumOfSquares, FloatElement, Over};
/// let mut emulator = Emulator::default();
/// let x = [3.0f32, 1e-10, 4.0];
/// assert_eq!(emulator.reduce(&x, ExactSumOfSquares)?, 25.0);
/// assert_eq!(ExactSumOfSquares::fold(&x), 25.0); // the same on the CPU
/// assert_eq!(emulator.reduce(&x, ExactSumOfSquares)?.sqrt(), 5.0); // the L2 norm
/// // Rows of 2: each row's own sum of squares.
/// let rows = emulator.reduce_over(&[1.0f64, 2.0, -3.0, 0.5], ExactSumOfSquares, Over::Rows { rows: 2, len: 2 })?;
/// assert_eq!(rows.values.to_vec(), [5.0, 9.25]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExactSumOfSquares;

impl ExactSumOfSquares {
    /// The exact sum of the squares of `values` (each rounded to `T`),
    /// rounded once, on the CPU: the bits the GPU and the emulator give
    /// for the same values.
    ///
    /// ```
    /// use reduce::ExactSumOfSquares;
    /// let x = [1e8f64, 1.0, 1e-8];
    /// assert_eq!(ExactSumOfSquares::fold(&x), 1e16 + 2.0); // 1e16 + 1 + 1e-16, rounded once
    /// ```
    pub fn fold<T: FloatElement>(values: &[T]) -> T {
        T::exact_sum_of_squares(values)
    }
}

exact_sum_reduction!(ExactSumOfSquares, Squares);

/// The mean of `f32`s or `f64`s from their exact sum: [`ExactSum`]'s
/// result divided by the number of elements (`sum / n as T`, each rounded
/// once), so, like it, **the same bits on every GPU, grid, launch shape,
/// alignment and order, alone or in any batch**, as [`ExactMean::fold`]
/// gives on the CPU. Error: two roundings, the sum's and the division's
/// (at most about one ulp of the result; for `f32`, a count past 2^24 is
/// rounded to `f32` too, as [`FloatElement::divide_by_count`] says), and no
/// cancellation error. No elements: NaN (`0 / 0`, PyTorch's mean of an
/// empty tensor).
///
/// Results in the input's type (PyTorch's `x.mean(dim)`), over every place:
/// the whole input, segments (each divided by its own length), rows and
/// axes, through every form. Cost: [`ExactSum`]'s (its kernels divide each
/// result as they store it). Across GPUs (`reduce::multi`): the shards'
/// exact sum, divided on the host by their total count, as here.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ExactMean, Over};
/// let mut emulator = Emulator::default();
/// let x = [1e30f32, 3.0, -1e30, 1.0]; // a float sum gives 0, 1, 3 or 4, by its tree
/// assert_eq!(emulator.reduce(&x, ExactMean)?, 1.0);
/// assert_eq!(ExactMean::fold(&x), 1.0); // the same on the CPU
/// // Segments [0, 1) and [1, 4): each divided by its own length.
/// let offsets = [0u64, 1, 4];
/// let means = emulator.reduce_over(&[2.0f64, 1.0, 2.0, 6.0], ExactMean, Over::Segments(&offsets[..]))?;
/// assert_eq!(means.values.to_vec(), [2.0, 3.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExactMean;

impl ExactMean {
    /// The exact sum of `values` rounded once ([`ExactSum::fold`]), divided
    /// by their number as the GPU divides it, on the CPU: the bits the GPU
    /// and the emulator give for the same values.
    ///
    /// ```
    /// use reduce::ExactMean;
    /// let x = [1e16f64, 1.0, -1e16, 3.0];
    /// assert_eq!(ExactMean::fold(&x), 1.0);
    /// assert_eq!(x.iter().sum::<f64>() / 4.0, 0.75); // 1e16 + 1 is 1e16
    /// ```
    pub fn fold<T: FloatElement>(values: &[T]) -> T {
        T::exact_mean_of_sum(T::exact_sum(values), values.len())
    }
}

exact_sum_reduction!(ExactMean, Mean);

/// Enqueues the exact variance of `input` over `over` ([`ExactVar`],
/// [`ExactStd`] with `root`, [`ExactMeanVar`] with `target.means`): two
/// launches over the input, the exact means ([`ExactMean`]) into the
/// target's means or the stream's cast scratch, then the exact sums of the
/// squared deviations from them, finished by the second launch.
fn enqueue_exact_variance<B: Backend, T: FloatElement>(
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    over: Over<'_, &B::Slice<u64>>,
    target: Target,
    (correction, root): (f64, bool),
    stream: Option<StreamHandle>,
) -> Result<()> {
    let means = match target.means {
        Some(means) => means,
        None => per_part_scratch::<B, T>(reducer, target.len, stream)?,
    };
    let of_means = Target {
        out: means,
        means: None,
        ..target
    };
    enqueue_exact(ExactOf::Mean, reducer, input, over, of_means, stream)?;
    let deviations = ExactOf::Deviations {
        shifts: means,
        correction: correction.to_bits(),
        root,
    };
    let values = Target { means: None, ..target };
    enqueue_exact(deviations, reducer, input, over, values, stream)
}

/// Room for one `T` per part in `stream`'s cast scratch: where a two-pass
/// exact reduction's first pass leaves what its second reads per part (the
/// exact kernels and the gather use the other scratch).
fn per_part_scratch<B: Backend, T: FloatElement>(
    reducer: &mut Reducer<B>,
    parts: usize,
    stream: Option<StreamHandle>,
) -> Result<u64> {
    let bytes = parts.checked_mul(std::mem::size_of::<T>());
    let words = bytes.ok_or_else(|| Error::internal("more parts than a usize counts"))?;
    reducer.backend.cast_scratch(stream, words.div_ceil(8))
}

/// The variance family's reproducible forms: a correction, and the
/// exact variance's [`Reduction`] (`$root`: its square root; `@mean_var`:
/// the means too).
macro_rules! exact_variance_reduction {
    ($(#[$doc:meta])* $name:ident, $root:literal, $value:ty, $fold:ident, $($kind:tt)*) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name {
            pub(crate) correction: f64,
        }

        impl $name {
            /// With `correction` subtracted from the count (`1.0`: Bessel's,
            /// the sample variance; `0.0`: the population's), as PyTorch's
            /// `correction`. [`Error::InvalidArgument`] unless it is finite
            /// and at least 0.
            pub fn new(correction: f64) -> Result<Self> {
                Ok($name {
                    correction: checked_correction(correction)?,
                })
            }

            /// The same on the CPU: the bits the GPU and the emulator give
            /// for the same values.
            pub fn fold<T: FloatElement>(&self, values: &[T]) -> $value {
                $fold(values, self.correction)
            }
        }

        impl sealed::Sealed for $name {}

        impl<T: FloatElement> Reduction<T> for $name {
            type Output = T;
            type Value = $value;

            fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<T>) -> Result<$value> {
                exact_variance_reduction!(@value $($kind)*, self, reducer, input, $root)
            }

            fn enqueue<B: Backend>(
                self,
                reducer: &mut Reducer<B>,
                input: &B::Slice<T>,
                over: Over<'_, &B::Slice<u64>>,
                target: Target,
                stream: Option<StreamHandle>,
            ) -> Result<()> {
                enqueue_exact_variance(reducer, input, over, target, (self.correction, $root), stream)
            }

            exact_variance_reduction!(@results $($kind)*);
        }
    };
    (@value one, $self:ident, $reducer:ident, $input:ident, $root:literal) => {
        $reducer.blocking(|reducer, out| {
            enqueue_exact_variance(reducer, $input, Over::Whole, Target::whole(out, None), ($self.correction, $root), None)
        })
    };
    (@value mean_var, $self:ident, $reducer:ident, $input:ident, $root:literal) => {
        $reducer.blocking_with_mean(|reducer, out, mean| {
            let target = Target::whole(out, Some(mean));
            enqueue_exact_variance(reducer, $input, Over::Whole, target, ($self.correction, $root), None)
        })
    };
    (@results one) => {
        one_output!();
    };
    (@results mean_var) => {
        means_and_values!();
    };
}

/// The exact variance (population, sample, or any correction) of each part.
fn exact_variance_of<T: FloatElement>(values: &[T], correction: f64) -> T {
    T::exact_variance(values, correction)
}

/// Its square root.
fn exact_std_of<T: FloatElement>(values: &[T], correction: f64) -> T {
    T::exact_variance(values, correction).sqrt().canonical()
}

/// The exact mean and the exact variance.
fn exact_mean_var_of<T: FloatElement>(values: &[T], correction: f64) -> (T, T) {
    (ExactMean::fold(values), T::exact_variance(values, correction))
}

exact_variance_reduction!(
    /// The variance of `f32`s or `f64`s with a correction (PyTorch's
    /// `x.var(dim, correction=…)`), **the same bits on every GPU, grid,
    /// launch shape, alignment and order, alone or in any batch**, as
    /// [`ExactVar::fold`] gives on the CPU. Two passes over the input: the
    /// mean `m` is [`ExactMean`]'s (the exact sum rounded once, divided by
    /// the count), then each deviation `x − m` and its square are rounded
    /// to the type, the squares summed exactly and rounded once, and that
    /// divided by `max(0, n − correction)` (`n − correction` in `f64`,
    /// rounded to the type).
    ///
    /// Error against the exact variance `v` of the values: each deviation's
    /// and square's rounding (a relative `ε` each: 2^-24 for `f32`, 2^-53
    /// for `f64`; the deviation's twice, as it is squared), the sum's and
    /// the division's, so at most about `5ε·v` whatever the length, plus
    /// what the mean's own rounding adds (it is off by at most an ulp,
    /// `2ε·|m|`): at most `n·(2ε·m)² / (n − correction)`, below `ε·v`
    /// unless the values' spread is under about `2√ε` of their mean's
    /// magnitude (`f32`s around 1e5 spread by 5: a relative error of about
    /// 4e-6). Subnormal deviations and squares: half the smallest subnormal
    /// each instead of `ε`. A one-pass float variance ([`Var`]) has a bound
    /// that grows with the length, and its bits depend on the launch.
    ///
    /// Specials: a NaN or infinite element, or a sum past the largest
    /// float (an infinite mean), gives NaN (as [`Var`]); a square past the
    /// largest float gives `+inf`; no elements give NaN; `n − correction ≤
    /// 0` divides by 0 (`+inf`, or NaN for `0 / 0`).
    ///
    /// Every place ([`Over`]): each segment's, row's or result's variance,
    /// the same alone or in any batch; along axes both passes read the view
    /// as [`ExactSum`] does (in place where the reduced axes merge into one
    /// and the kept axes lie in memory in order: `dim=-1`, `dim=0`, a middle
    /// axis; two reduced axes apart as rows in runs; any other view gathered
    /// into rows first). Across GPUs
    /// (`reduce::multi`; [`ExactMeanVar`]'s pair through `reduce` only):
    /// the shards' exact sum, the mean sent to every GPU, their exact states
    /// of the squared deviations, finished on the host. Cost: two passes ([`ExactMean`]'s
    /// and a sum of squares as [`ExactSumOfSquares`]'s), about twice
    /// [`Var`]'s one.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, ExactVar, Over};
    /// let mut emulator = Emulator::default();
    /// let x = [1.0e8f32, 1.0e8 + 8.0, 1.0e8 + 16.0];
    /// let sample = ExactVar::new(1.0)?;
    /// assert_eq!(emulator.reduce(&x, sample)?, 64.0);
    /// assert_eq!(sample.fold(&x), 64.0); // the same on the CPU
    /// // Rows of 2, the population variance of each.
    /// let rows = emulator.reduce_over(&[1.0f64, 3.0, 2.0, 6.0], ExactVar::new(0.0)?, Over::Rows { rows: 2, len: 2 })?;
    /// assert_eq!(rows.values.to_vec(), [1.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ExactVar, false, T, exact_variance_of, one
);

exact_variance_reduction!(
    /// The standard deviation: [`ExactVar`]'s square root (correctly
    /// rounded), with its guarantee (the same bits everywhere, and
    /// [`ExactStd::fold`] on the CPU) and its places and cost.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, ExactStd};
    /// let x = [2.0f64, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
    /// assert_eq!(Emulator::default().reduce(&x, ExactStd::new(0.0)?)?, 2.0);
    /// # Ok(()) }
    /// ```
    ExactStd, true, T, exact_std_of, one
);

exact_variance_reduction!(
    /// The mean and the variance: `(mean, variance)` of a whole input,
    /// `(means, variances)` over segments, rows or axes: [`ExactMean`]'s
    /// and [`ExactVar`]'s bits (the variance's first pass writes the
    /// means), as [`ExactMeanVar::fold`] gives on the CPU. Across GPUs,
    /// `reduce::multi`'s `Group::reduce` and `Communicator::reduce` give
    /// the pair (the `all_reduce_into` forms, which leave one value per
    /// GPU, do not take it).
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, ExactMeanVar, Over};
    /// let x = [1.0f64, 3.0, 2.0, 6.0];
    /// assert_eq!(Emulator::default().reduce(&x, ExactMeanVar::new(0.0)?)?, (3.0, 3.5));
    /// let rows = Emulator::default().reduce_over(&x, ExactMeanVar::new(1.0)?, Over::Rows { rows: 2, len: 2 })?;
    /// let (means, variances) = rows.values;
    /// assert_eq!((means.to_vec(), variances.to_vec()), (vec![2.0, 4.0], vec![2.0, 8.0]));
    /// # Ok(()) }
    /// ```
    ExactMeanVar, false, (T, T), exact_mean_var_of, mean_var
);

/// logsumexp, `ln Σ exp(x)`, of `f32`s or `f64`s (PyTorch's
/// `torch.logsumexp`), **the same bits on every GPU, grid, launch shape,
/// alignment and order, alone or in any batch**, as
/// [`ExactLogSumExp::fold`] gives on the CPU. Two passes over the input:
/// the largest element `m` ([`Op::Max`], exact), then each term
/// `exp(x − m)` (the difference rounded to the type, `exp` as
/// [`LogSumExp`]'s, within a few ulps, the same bits on the GPU and the
/// CPU) put on a fixed grid (a term below `2^-41` rounded to a multiple of
/// `2^-64` for `f32`; below `2^-48` to one of `2^-100` for `f64`: it moves
/// by at most `2^-65` (`2^-101`) against a sum of at least 1), the terms
/// summed exactly and rounded once to `S`, and the result `m + ln(S)`
/// (`ln` as [`LogSumExp`]'s), each step rounded to the type.
///
/// Error against the exact logsumexp: the terms' relative errors (their
/// `exp`'s few ulps, and `ε·|x − m|` from the rounded difference, as any
/// `exp(x − m)` form has), averaged by their weights, plus ε for `S`, the
/// grid's `n·2^-65` (`n·2^-101`) at most, `ln`'s few ulps of `ln S` and
/// the final addition's half ulp: no term of it grows with the length as
/// a float sum's rounding does (ε: 2^-24 for `f32`, 2^-53 for `f64`).
///
/// Specials, as [`LogSumExp`]: NaN if any element is NaN (the canonical
/// NaN); else `+inf` if any is `+inf`; `-inf` elements add nothing; only
/// `-inf`s, or no elements, give `-inf`.
///
/// Every place ([`Over`]): each segment's, row's or result's logsumexp,
/// the same alone or in any batch; along axes the terms' pass reads the
/// view as [`ExactSum`] does (in place where the reduced axes merge into one
/// and the kept axes lie in memory in order; two reduced axes apart as rows
/// in runs; any other view gathered into rows first); a reduced dimension
/// of length 0 gives `-inf` everywhere.
/// Across GPUs (`reduce::multi`): the shards' maximum, sent to every GPU,
/// then their exact states of the terms, finished on the host. Cost:
/// [`Op::Max`]'s pass and an exact sum of the terms (as
/// [`ExactSumOfSquares`]'s), where [`LogSumExp`] makes one pass.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ExactLogSumExp, Over};
/// let mut emulator = Emulator::default();
/// let x = [1000.0f32, 1000.0, f32::NEG_INFINITY];
/// let lse = emulator.reduce(&x, ExactLogSumExp)?;
/// assert_eq!(lse, 1000.0 + 2f32.ln());
/// assert_eq!(lse, ExactLogSumExp::fold(&x)); // the same on the CPU
/// // Rows of 2; a row of only -inf gives -inf.
/// let rows = emulator.reduce_over(&[0.0f64, 0.0, f64::NEG_INFINITY, f64::NEG_INFINITY], ExactLogSumExp, Over::Rows { rows: 2, len: 2 })?;
/// assert_eq!(rows.values.to_vec(), [2f64.ln(), f64::NEG_INFINITY]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExactLogSumExp;

impl ExactLogSumExp {
    /// The same on the CPU: the bits the GPU and the emulator give for the
    /// same values.
    ///
    /// ```
    /// use reduce::ExactLogSumExp;
    /// assert_eq!(ExactLogSumExp::fold(&[0.0f64; 4]), 4f64.ln());
    /// assert_eq!(ExactLogSumExp::fold::<f32>(&[]), f32::NEG_INFINITY);
    /// ```
    pub fn fold<T: FloatElement>(values: &[T]) -> T {
        T::exact_logsumexp(values)
    }
}

impl sealed::Sealed for ExactLogSumExp {}

impl<T: FloatElement> Reduction<T> for ExactLogSumExp {
    type Output = T;
    type Value = T;
    one_output!();

    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<T>) -> Result<T> {
        reducer.blocking(|reducer, out| {
            enqueue_exact_logsumexp(reducer, input, Over::Whole, Target::whole(out, None), None)
        })
    }

    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        input: &B::Slice<T>,
        over: Over<'_, &B::Slice<u64>>,
        target: Target,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        enqueue_exact_logsumexp(reducer, input, over, target, stream)
    }
}

/// Enqueues [`ExactLogSumExp`] of `input` over `over`: two launches over
/// the input, the maxima ([`Op::Max`]) into the stream's cast scratch, then
/// the exact sums of the scaled exponentials, which the second launch
/// finishes. A reduced dimension of length 0, where `Max` has no value,
/// gives `-inf` for every result, as [`LogSumExp`]'s kernels do.
fn enqueue_exact_logsumexp<B: Backend, T: FloatElement>(
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    over: Over<'_, &B::Slice<u64>>,
    target: Target,
    stream: Option<StreamHandle>,
) -> Result<()> {
    let maxima = per_part_scratch::<B, T>(reducer, target.len, stream)?;
    let of_maxima = Target { out: maxima, ..target };
    match enqueue_op(Op::Max.kernel(), reducer, input, over, of_maxima, stream) {
        Err(Error::Empty { .. }) => return enqueue_call(Call::logsumexp::<T>(), reducer, input, over, target, stream),
        result => result?,
    }
    enqueue_exact(ExactOf::ScaledExps { maxima }, reducer, input, over, target, stream)
}

/// The dot product `Σ a[i]·b[i]` of `f32`s or `f64`s, exactly: each
/// product rounded to the element type (as [`Reducer::dot`] forms it), the
/// products summed exactly, the sum rounded once. So **the same bits on
/// every GPU, grid, launch shape, alignment and order**, as
/// [`ExactDot::fold`] gives on the CPU, and as [`ExactSumOfSquares`] gives
/// for `a` with itself. Error against the exact `Σ a[i]·b[i]`: at most ε
/// (2^-24 for `f32`, 2^-53 for `f64`) times `Σ |a[i]·b[i]|` (the
/// products' roundings; a product below the smallest normal number is
/// off by at most half the smallest subnormal instead), plus half an ulp
/// of the result, whatever the length (a float dot product's bound grows
/// with it); no cancellation error beyond the products' own.
///
/// Specials follow IEEE 754's sum of the rounded products: a NaN, or an
/// infinity times zero, or `+inf` with `-inf` among the products, gives
/// NaN (the canonical one); otherwise an infinite or overflowing product
/// gives that infinity; no pairs give `+0.0`.
///
/// Over the whole of both inputs, in every form: blocking
/// ([`Reducer::reduce_pair`], the free [`reduce_pair`](crate::reduce_pair),
/// cudarc's `reduce_pair`, the emulator) or enqueued
/// ([`Scope::reduce_pair_into`](crate::Scope::reduce_pair_into), cudarc's
/// `reduce_pair_into`); [`Error::LengthMismatch`] if their lengths differ. Cost:
/// one launch, as [`Reducer::dot`], its products added as
/// [`ExactSumOfSquares`] adds its squares (three `f64`s per partial sum;
/// a sum whose bits spread over more than about 150 is summed again
/// exactly by one block).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ExactDot};
/// let a = [1e30f32, 1.0, 1e30];
/// let b = [1.0f32, 3.0, -1.0]; // a float dot product gives 0 or 3, by its tree
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce_pair(&a, &b, ExactDot)?, 3.0);
/// assert_eq!(ExactDot::fold(&a, &b)?, 3.0); // the same on the CPU
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExactDot;

impl ExactDot {
    /// The exact sum of the products `a[i] * b[i]` (each rounded to `T`),
    /// rounded once, on the CPU: the bits the GPU and the emulator give
    /// for the same values. [`Error::LengthMismatch`] if the lengths differ.
    ///
    /// ```
    /// use reduce::ExactDot;
    /// let (a, b) = ([0.1f64, 0.2, 0.3], [1.0, 1.0, 1.0]);
    /// assert_eq!(ExactDot::fold(&a, &b)?, 0.6); // a float dot product gives 0.6000000000000001
    /// assert!(ExactDot::fold(&a, &b[..2]).is_err());
    /// # Ok::<(), reduce::Error>(())
    /// ```
    pub fn fold<T: FloatElement>(a: &[T], b: &[T]) -> Result<T> {
        if a.len() != b.len() {
            return Err(Error::LengthMismatch {
                left: a.len(),
                right: b.len(),
            });
        }
        Ok(T::exact_dot(a, b))
    }
}

impl sealed::Sealed for ExactDot {}

impl<T: FloatElement> PairReduction<T> for ExactDot {
    fn enqueue<B: Backend>(
        self,
        reducer: &mut Reducer<B>,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        reducer.enqueue_exact_dot(a, b, out, stream)
    }
}

/// The variance family's settings: the correction and the accumulator.
macro_rules! moments_reduction {
    ($(#[$doc:meta])* $name:ident, $finish:ident, $value:ty) => {
        $(#[$doc])*
        pub struct $name<A> {
            correction: f64,
            accumulator: PhantomData<fn() -> A>,
        }

        impl<A: FloatElement> $name<A> {
            /// With `correction`: 1 for the sample variance (PyTorch's
            /// default), 0 for the population's; any finite value ≥ 0, else
            /// [`Error::InvalidArgument`].
            pub fn new(correction: f64) -> Result<Self> {
                let correction = checked_correction(correction)?;
                Ok($name { correction, accumulator: PhantomData })
            }
        }

        impl<A> Clone for $name<A> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<A> Copy for $name<A> {}
        impl<A> std::fmt::Debug for $name<A> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>({})", stringify!($name), std::any::type_name::<A>(), self.correction)
            }
        }
        impl<A> sealed::Sealed for $name<A> {}

        impl<A: FloatElement, In: MomentsInput<A>> Reduction<In> for $name<A> {
            type Output = A;
            type Value = $value;

            fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<In>) -> Result<$value> {
                let call = Call::moments::<A, In>(Finish::$finish, self.correction);
                moments_reduction!(@value $name, reducer, input, call)
            }

            fn enqueue<B: Backend>(
                self,
                reducer: &mut Reducer<B>,
                input: &B::Slice<In>,
                over: Over<'_, &B::Slice<u64>>,
                target: Target,
                stream: Option<StreamHandle>,
            ) -> Result<()> {
                let call = Call::moments::<A, In>(Finish::$finish, self.correction);
                enqueue_call(call, reducer, input, over, target, stream)
            }

            moments_reduction!(@results $name);
        }
    };
    (@value MeanVar, $reducer:ident, $input:ident, $call:ident) => {
        $reducer.mean_var_to_host::<A, In>($input, $call)
    };
    (@value $name:ident, $reducer:ident, $input:ident, $call:ident) => {
        $reducer.statistic_to_host::<In, A>($input, $call)
    };
    (@results MeanVar) => {
        means_and_values!();
    };
    (@results $name:ident) => {
        one_output!();
    };
}

moments_reduction!(
    /// The variance with a correction, accumulated in `A` (PyTorch's
    /// `x.var(dim, correction=1)`): one pass, count/mean/M2 merged as Chan
    /// et al. (no `Σx² − n·mean²` cancellation); `f32` inputs in `f32` or
    /// `f64`, `f64` in `f64` ([`MomentsInput`]). `n − correction ≤ 0`
    /// divides by 0; no elements: NaN; a NaN or ±inf element: NaN. See
    /// [`crate::statistics`].
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator, Over, Var};
    /// let x = [1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0]; // 2 × 3
    /// let columns = Emulator::default().reduce_over(&x, Var::<f32>::new(1.0)?, Over::Axes(&Strided::contiguous(&[2, 3])?, &[0]))?;
    /// assert_eq!(columns.values.to_vec(), [4.5, 8.0, 12.5]);
    /// assert_eq!(Emulator::default().reduce(&[1.0e6f32, 1.0e6 + 1.0, 1.0e6 + 2.0], Var::<f64>::new(1.0)?)?, 1.0);
    /// # Ok(()) }
    /// ```
    Var, Value, A
);
moments_reduction!(
    /// The standard deviation: the square root of [`Var`].
    Std, Root, A
);
moments_reduction!(
    /// The mean and the variance from one pass (PyTorch's `var_mean`, in
    /// the other order): `(mean, variance)` of a whole input, `(means,
    /// variances)` over segments, rows or axes, each as [`Var`].
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, MeanVar, Over};
    /// let x = [1.0f64, 3.0, 2.0, 6.0];
    /// assert_eq!(Emulator::default().reduce(&x, MeanVar::<f64>::new(0.0)?)?, (3.0, 3.5));
    /// let rows = Emulator::default().reduce_over(&x, MeanVar::<f64>::new(1.0)?, Over::Rows { rows: 2, len: 2 })?;
    /// let (means, variances) = rows.values;
    /// assert_eq!((means.to_vec(), variances.to_vec()), (vec![2.0, 4.0], vec![2.0, 8.0]));
    /// # Ok(()) }
    /// ```
    MeanVar, Value, (A, A)
);

/// logsumexp, `ln Σ exp(x)`, without overflow (the softmax's normaliser),
/// in one pass, of `f32` or `f64` in its own type: empty `-inf`; NaN if any
/// is NaN, else `+inf` if any is `+inf`.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, LogSumExp};
/// let lse = Emulator::default().reduce(&[1000.0f32, 1000.0], LogSumExp)?;
/// assert_eq!(lse, 1000.0 + 2f32.ln());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LogSumExp;

/// The number of elements `.0` holds for (a `u64`).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, All, Any, Count, Predicate};
/// let mut emulator = Emulator::default();
/// assert_eq!(emulator.reduce(&[0i32, 5, 0, 7], Count(Predicate::Nonzero))?, 2);
/// assert!(!emulator.reduce(&[1.0f32, 2.0], Any(Predicate::Nan))?);
/// assert!(emulator.reduce(&[0i32; 0], All(Predicate::Nonzero))?); // empty: true
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Count(pub Predicate);

/// Whether `.0` holds for any element (empty: false); over segments, rows
/// or axes a `u8`, 1 or 0, per result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Any(pub Predicate);

/// Whether `.0` holds for every element (empty: true); over segments, rows
/// or axes a `u8`, 1 or 0, per result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct All(pub Predicate);

impl sealed::Sealed for LogSumExp {}
impl sealed::Sealed for Count {}
impl sealed::Sealed for Any {}
impl sealed::Sealed for All {}

/// The statistics whose call depends only on the input type.
macro_rules! statistic_reduction {
    ($name:ident, [$($bound:tt)*], $output:ty, $value:ty, |$self:ident| $call:expr, |$raw:ident| $to_value:expr) => {
        impl<T: $($bound)*> Reduction<T> for $name {
            type Output = $output;
            type Value = $value;
            one_output!();

            fn value<B: Backend>($self, reducer: &mut Reducer<B>, input: &B::Slice<T>) -> Result<$value> {
                let $raw: $output = reducer.statistic_to_host::<T, $output>(input, $call)?;
                Ok($to_value)
            }

            fn enqueue<B: Backend>(
                $self,
                reducer: &mut Reducer<B>,
                input: &B::Slice<T>,
                over: Over<'_, &B::Slice<u64>>,
                target: Target,
                stream: Option<StreamHandle>,
            ) -> Result<()> {
                enqueue_call($call, reducer, input, over, target, stream)
            }
        }
    };
}
statistic_reduction!(LogSumExp, [LogSumExpInput], T, T, |self| Call::logsumexp::<T>(), |x| x);
statistic_reduction!(
    Count,
    [Element],
    u64,
    u64,
    |self| Call::count::<T>(self.0, Finish::Value),
    |n| n
);
statistic_reduction!(
    Any,
    [Element],
    u8,
    bool,
    |self| Call::count::<T>(self.0, Finish::Any),
    |b| b != 0
);
statistic_reduction!(
    All,
    [Element],
    u8,
    bool,
    |self| Call::count::<T>(self.0, Finish::All),
    |b| b != 0
);

/// A reduction whose results are converted to the caller's type `T`: made
/// by `.cast::<T>()` on [`ArgMax`], [`ArgMin`], [`Mean`] and [`Widened`]
/// (the pairs: [`CastTo`]). The reduction runs as without the cast, in its
/// own type (positions in `u64`; sums and means accumulated in `f32` or
/// `f64`), and each result is then rounded once to `T` (to nearest, ties to
/// even; see [`CastTo`] for overflow and NaN): PyTorch's rule for the
/// half floats, which it sums in `f32` and returns as halves.
///
/// | reduction | input | each result (`Output`) | whole input (`Value`) |
/// |---|---|---|---|
/// | `ArgMax.cast::<u32>()`, `::<i64>()` (and `ArgMin`) | every [`ArgInput`] | `T` | `(T, In)` |
/// | `Mean.cast::<f32>()` | `f32`, `f64`, the integers (means in `f64`) | `f32` | `f32` |
/// | `Mean.cast::<f16>()`, `::<bf16>()` | `f16`, `bf16` (means in `f32`) | `T` | `T` |
/// | `Widened::<f64>::new(Op::Sum).cast::<f32>()` | `f32`, the integers | `f32` | `f32` |
/// | `Widened::<f32>::new(op).cast::<f16>()`, `::<bf16>()` | `f16`, `bf16` | `T` | `T` |
///
/// The wider results stay what the same reductions without `.cast` give.
/// Over the whole input, rows and axes, as the reduction (no kernel takes
/// these over segments). Cost: over a place, one more launch, which reads
/// the wide results from the stream's scratch and writes `T`s (none for
/// `i64` positions, the same bits as `u64`'s); a whole input's value is
/// converted on the host by the same function, so it has the same bits.
/// `u32` positions along more than 2^32 elements are
/// [`Error::IndexOverflow`], before anything runs. In a scope
/// (`Scope::reduce_into`), the first cast call on a stream (or one with
/// more results than before) allocates the stream's cast scratch, and each
/// scope lends a stream a workspace anew: capture a cast call into a CUDA
/// graph only after a cast call with at least as many results has run on
/// that stream earlier in the same scope.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{axes::Strided, emulated::Emulator, half::f16, ArgMax, Mean, Op, Over, Widened};
/// let mut emulator = Emulator::default();
/// let x = [3.0f32, 9.0, 9.0, 7.0, 1.0, 8.0]; // 2 × 3
/// let rows = Over::Rows { rows: 2, len: 3 };
/// let positions = emulator.reduce_over(&x, ArgMax.cast::<u32>(), rows)?; // candle's u32
/// assert_eq!(positions.values.to_vec(), [1u32, 2]);
/// let columns = Over::Axes(&Strided::contiguous(&[2, 3])?, &[0]);
/// let positions = emulator.reduce_over(&x, ArgMax.cast::<i64>(), columns)?; // PyTorch's int64
/// assert_eq!(positions.values.to_vec(), [1i64, 0, 0]);
/// assert_eq!(emulator.reduce(&x, ArgMax.cast::<u32>())?, (1u32, 9.0));
/// let means = emulator.reduce_over(&x, Mean.cast::<f32>(), rows)?; // f32, not f64
/// assert_eq!(means.values.to_vec(), [7.0f32, 16.0 / 3.0]);
///
/// let halves = [f16::from_f32(65504.0), f16::from_f32(32.0)];
/// let sum = emulator.reduce(&halves, Widened::<f32>::new(Op::Sum))?; // 65536 in f32
/// assert_eq!(sum, 65536.0);
/// let sum = emulator.reduce(&halves, Widened::<f32>::new(Op::Sum).cast::<f16>())?;
/// assert_eq!(sum, f16::INFINITY); // rounded once: past f16::MAX
/// assert_eq!(emulator.reduce(&halves, Mean.cast::<f16>())?, f16::from_f32(32768.0));
/// # Ok(()) }
/// ```
///
/// The positions' pairs are for positions only: an integer sum is not cut
/// to `u32`.
/// ```compile_fail
/// use reduce::{emulated::Emulator, Op, Widened};
/// let _ = Emulator::default().reduce(&[1u32, 2], Widened::<u64>::new(Op::Sum).cast::<u32>());
/// ```
pub struct Cast<R, T> {
    inner: R,
    to: PhantomData<fn() -> T>,
}

impl<R, T> Cast<R, T> {
    const fn new(inner: R) -> Self {
        Cast { inner, to: PhantomData }
    }
}

impl<R: Copy, T> Clone for Cast<R, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: Copy, T> Copy for Cast<R, T> {}
impl<R: std::fmt::Debug, T> std::fmt::Debug for Cast<R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}.cast::<{}>()", self.inner, std::any::type_name::<T>())
    }
}
impl<R, T> sealed::Sealed for Cast<R, T> {}

/// [`Error::IndexOverflow`] if positions among `extent` elements do not
/// all fit the index type of `W → T` (a no-op for the float pairs).
fn check_positions<W: CastTo<T>, T>(extent: usize) -> Result<()> {
    let extent = extent as u64;
    if extent > W::POSITIONS {
        return Err(Error::IndexOverflow { index: W::TO, extent });
    }
    Ok(())
}

/// The number of elements each result of a reduction over `over` folds
/// along (the whole input of `len`, a row, the reduced axes: a mean's
/// count, the positions of argmax/argmin); 0 over segments, which
/// neither takes.
fn reduced_extent<O>(over: &Over<'_, O>, len: usize) -> Result<usize> {
    match over {
        Over::Whole => Ok(len),
        Over::Rows { len, .. } => Ok(*len),
        Over::Axes(layout, axes) => layout.reduced_count(axes),
        _ => Ok(0),
    }
}

/// [`Reduction::enqueue`] of `inner` cast to `T`: `inner`'s results into
/// the stream's cast scratch, then converted into `target` (or, for the
/// pairs of the same bits, straight into `target`).
fn enqueue_cast<B: Backend, In: DeviceCopy, R: Reduction<In>, T>(
    inner: R,
    reducer: &mut Reducer<B>,
    input: &B::Slice<In>,
    over: Over<'_, &B::Slice<u64>>,
    target: Target,
    stream: Option<StreamHandle>,
) -> Result<()>
where
    R::Output: CastTo<T>,
{
    inner.check_over(&over)?;
    let (address, len) = B::parts(input);
    check_positions::<R::Output, T>(reduced_extent(&over, len)?)?;
    if <R::Output as CastTo<T>>::SAME_BITS {
        return inner.enqueue(reducer, input, over, target, stream);
    }
    // The inner launches check their input against the scratch only.
    let to = <R::Output as CastTo<T>>::TO;
    check_aliasing(&[
        Access::read::<In>("input", address, len),
        Access {
            name: "out",
            address: target.out,
            bytes: (target.len as u64).saturating_mul(to.size() as u64),
            writable: true,
        },
    ])?;
    let from = <R::Output as CastTo<T>>::FROM;
    let words = target.len.saturating_mul(from.size()).div_ceil(8);
    let wide = reducer.backend.cast_scratch(stream, words)?;
    let wide_target = Target { out: wide, ..target };
    inner.enqueue(reducer, input, over, wide_target, stream)?;
    reducer.enqueue_convert((from, to), wide, (target.out, target.len), stream)
}

/// The [`Reduction`] items every cast shares: its place checks and `enqueue`.
macro_rules! cast_common {
    ($inner:ty, $input:ty) => {
        type Output = T;
        one_output!();

        const WITHOUT_SEGMENTS: Option<&'static str> = <$inner as Reduction<$input>>::WITHOUT_SEGMENTS;

        fn check_over<O>(self, over: &Over<'_, O>) -> Result<()> {
            <$inner as Reduction<$input>>::check_over(self.inner, over)
        }

        fn enqueue<B: Backend>(
            self,
            reducer: &mut Reducer<B>,
            input: &B::Slice<$input>,
            over: Over<'_, &B::Slice<u64>>,
            target: Target,
            stream: Option<StreamHandle>,
        ) -> Result<()> {
            enqueue_cast::<B, $input, $inner, T>(self.inner, reducer, input, over, target, stream)
        }
    };
}

macro_rules! arg_cast_reduction {
    ($($name:ident),*) => {$(
        /// The positions in `T` (see [`Cast`]); a whole input's value is
        /// `(index, value)` with the index in `T`.
        impl<In: ArgInput, T: DeviceValue> Reduction<In> for Cast<$name, T>
        where
            u64: CastTo<T>,
        {
            type Value = (T, In);
            cast_common!($name, In);

            fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<In>) -> Result<(T, In)> {
                check_positions::<u64, T>(B::parts(input).1)?;
                let (index, value) = self.inner.value(reducer, input)?;
                Ok((index.cast(), value))
            }
        }
    )*};
}
arg_cast_reduction!(ArgMax, ArgMin);

/// The means in `T` (see [`Cast`]).
impl<In: MeanInput, T: DeviceValue> Reduction<In> for Cast<Mean, T>
where
    In::Mean: CastTo<T>,
{
    type Value = T;
    cast_common!(Mean, In);

    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<In>) -> Result<T> {
        let mean: In::Mean = self.inner.value(reducer, input)?;
        Ok(mean.cast())
    }
}

/// The widened results in `T` (see [`Cast`]): float accumulators only (an
/// integer sum is no position, to be cut to `u32`).
impl<A: FloatElement + CastTo<T>, In: WidensTo<A>, T: DeviceValue> Reduction<In> for Cast<Widened<A>, T> {
    type Value = T;
    cast_common!(Widened<A>, In);

    fn value<B: Backend>(self, reducer: &mut Reducer<B>, input: &B::Slice<In>) -> Result<T> {
        let wide: A = self.inner.value(reducer, input)?;
        Ok(wide.cast())
    }
}
