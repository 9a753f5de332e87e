//! Statistics along any axes of a strided tensor, over the segments of an
//! input (`_segments`: offsets as [`crate::segmented`]'s), or over a whole input:
//! variance and standard deviation (with a correction), mean and variance
//! together, logsumexp, and counts of the elements that are nonzero, NaN or
//! infinite, with `any` and `all` of them. Each reads every element once,
//! in one launch per reduced axis (one for a whole input).
//!
//! ```
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::{axes::Strided, emulated::Emulator, statistics::Predicate};
//! let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and device buffers
//! let x = [1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0]; // 2 × 3, row-major
//! let layout = Strided::contiguous(&[2, 3])?;
//! // PyTorch's x.var(dim=0) (correction 1): columns of (1, 4), (2, 6), (3, 8).
//! let var = emulator.var_axes::<f32, _>(&x, &layout, &[0], 1.0)?;
//! assert_eq!(var.values.to_vec(), [4.5, 8.0, 12.5]);
//! assert_eq!(emulator.mean_var::<f64, _>(&x, 0.0)?, (4.0, 34.0 / 6.0));
//! let lse = emulator.logsumexp(&[0.0f64, 0.0])?;
//! assert!((lse - 2f64.ln()).abs() < 1e-15);
//! assert_eq!(emulator.count(&[0i32, 5, 0, 7], Predicate::Nonzero)?, 2);
//! assert!(!emulator.any(&x, Predicate::Nan)?);
//! # Ok(()) }
//! ```
//!
//! # Semantics
//! | statistic | value | no elements | NaN, ±inf |
//! |---|---|---|---|
//! | `var` | `M2 / max(0, n − correction)`, `M2 = Σ (x − mean)²` | NaN | NaN if any element is NaN or infinite |
//! | `std` | the square root of `var` | NaN | as `var` |
//! | `mean_var` | the mean `Σ x / n`, and `var` | NaN, NaN | the mean follows IEEE 754 (`inf`, or NaN) |
//! | `logsumexp` | `ln Σ exp(x)`, without overflow (`max + ln Σ exp(x − max)`) | `-inf` | NaN if any is NaN; else `+inf` if any is `+inf`; `-inf` elements add nothing |
//! | `count` | elements the [`Predicate`] holds for, a `u64` | 0 | `Nonzero`: NaN is nonzero, `-0.0` is zero |
//! | `any` | whether the count is above 0 | false | |
//! | `all` | whether the count is every element | true | |
//!
//! - **Correction**: PyTorch's `correction` (NumPy's `ddof`): 1 for the
//!   sample variance, 0 for the population's. Any finite value ≥ 0;
//!   `n − correction ≤ 0` divides by 0 (NaN, or `+inf` if the elements
//!   differ), as PyTorch does. [`Error::InvalidArgument`] otherwise.
//! - **Precision**: the variance is merged from (count, mean, `M2`)
//!   summaries as Chan, Golub and LeVeque do: no difference of large sums,
//!   so a large mean does not cost the spread its digits. `f32` inputs
//!   accumulate in `f32` or, asked for, in `f64` ([`MomentsInput`]);
//!   logsumexp accumulates in its input type. Its `exp` and `ln` are
//!   within a few ulps (`kernels-gpu/src/math.rs`).
//! - **Results** of the `_axes` forms follow [`crate::axes`]: row-major
//!   over the kept axes, [`Reduced::shape`] with or without `keepdim`; the
//!   same rules for axes, strides and errors. `any`/`all` along axes give
//!   one byte per result, 0 or 1 (a `u8`, so that no byte a kernel did not
//!   write can be read as a `bool`).
//! - **Segments** (`var_segments`, …): one result per segment, each by
//!   the rules above (an empty segment: no elements); invalid offsets are
//!   [`Error::InvalidSegments`] from the blocking calls, clamped by the
//!   `_into` forms, as for [`Reducer::segmented_reduce`]. A segment's
//!   elements are read by a team of lanes sized for the average segment,
//!   one launch; unlike `segmented_reduce`, segments are not handed out as
//!   teams finish.
//! - **Determinism**: as every reduction of the library, bit for bit the
//!   same on every run for a given shape, device and input.

use crate::axes::{plan_passes, AxisLaunch, Pass, Reduced, SegmentsLaunch, Strided};
use crate::backend::launcher::{check_aliasing, element_address, Access, StreamHandle};
use crate::backend::Backend;
use crate::element::{sealed::Sealed, ArgInput, Element, ElementType, FloatElement};
use crate::error::{Error, Result};
use crate::reducer::{checked_parts, from_word, Reducer};
use crate::segmented::{invalid_offsets, Layout};
use cust::error::CudaError;
use cust::memory::DeviceCopy;
use kernels_gpu::abi::{Finish, Kernel, Op, Statistic, SEGMENTS_INVALID};

/// What [`Reducer::count`], [`Reducer::any`] and [`Reducer::all`] test
/// each element for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Predicate {
    /// The element is not zero (`-0.0` is zero; NaN is not): NumPy's
    /// `count_nonzero`, PyTorch's `any`/`all` of a tensor.
    Nonzero,
    /// The element is NaN (`isnan`; never, for integers).
    Nan,
    /// The element is `+inf` or `-inf` (`isinf`; never, for integers).
    Inf,
}

impl Predicate {
    fn statistic(self) -> Statistic {
        match self {
            Predicate::Nonzero => Statistic::CountNonzero,
            Predicate::Nan => Statistic::CountNan,
            Predicate::Inf => Statistic::CountInf,
        }
    }
}

/// An input type of the variance family accumulated in `A`: `f32` in `f32`
/// or `f64`, `f64` in `f64`. Sealed.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::emulated::Emulator;
/// // 1e6 + {0, 1, 2}: the spread survives the large mean (where Σx² − n·mean²
/// // in f32 would have lost it), in f32 and in f64.
/// let x = [1.0e6f32, 1.0e6 + 1.0, 1.0e6 + 2.0];
/// assert_eq!(Emulator::default().var::<f32, _>(&x, 1.0)?, 1.0);
/// assert_eq!(Emulator::default().var::<f64, _>(&x, 1.0)?, 1.0);
/// # Ok(()) }
/// ```
pub trait MomentsInput<A: FloatElement>: Element + Sealed {}

/// The input types of logsumexp, `f32` and `f64`, each accumulated in
/// itself. Sealed.
pub trait LogSumExpInput: FloatElement {}

macro_rules! statistic_inputs {
    ($(($statistic:ident, $stem:ident, $type:ident, [$(($input:ident, $name:ident, $acc:ident))*], $states:tt)),* $(,)?) => {
        $($(statistic_inputs!(@ $statistic $input $acc);)*)*
    };
    (@ Moments $input:ident $acc:ident) => {
        impl MomentsInput<$acc> for $input {}
    };
    (@ LogSumExp $input:ident $acc:ident) => {
        impl LogSumExpInput for $input {}
    };
    (@ $count:ident $input:ident $acc:ident) => {};
}
kernels_gpu::for_each_statistic_kernel!(statistic_inputs);

/// One statistic call as the kernels see it: the kernels of its passes,
/// and what each result is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call {
    /// The first pass's kernel, over the elements.
    elements: Kernel,
    /// The later passes' kernel, over the summaries the pass before stored,
    /// and the bytes of one; `None` for a call along one axis (argmax,
    /// argmin), which is one pass.
    states: Option<(Kernel, usize)>,
    /// The op whose [`Error::Empty`] a result of no elements is; `None`
    /// where the statistic has a value for none.
    empty: Option<Op>,
    finish: Finish,
    finish_param: u64,
    /// Bytes of one result as `finish` writes it.
    pub(crate) result_bytes: usize,
}

impl Call {
    /// `statistic` of `input`s accumulated in `accumulator`.
    fn statistic(statistic: Statistic, input: ElementType, accumulator: ElementType, finish: Finish) -> Self {
        let states = Kernel::StatisticStates {
            statistic,
            accumulator: statistic.states_accumulator(accumulator),
        };
        Call {
            elements: Kernel::Statistic {
                statistic,
                input,
                accumulator,
            },
            states: Some((states, statistic.state_bytes(accumulator) as usize)),
            empty: None,
            finish,
            finish_param: 0,
            result_bytes: match (finish, statistic) {
                (Finish::Any | Finish::All, _) => 1,
                (_, Statistic::Moments | Statistic::LogSumExp) => accumulator.size(),
                _ => std::mem::size_of::<u64>(),
            },
        }
    }

    /// The variance family of `In`s, accumulated in `A`.
    pub(crate) fn moments<A: FloatElement, In: MomentsInput<A>>(finish: Finish, correction: f64) -> Result<Self> {
        if !(correction.is_finite() && correction >= 0.0) {
            return Err(Error::InvalidArgument(format!(
                "the correction is {correction}: it must be finite and at least 0"
            )));
        }
        Ok(Call {
            finish_param: correction.to_bits(),
            ..Call::statistic(Statistic::Moments, In::TYPE, A::TYPE, finish)
        })
    }

    /// logsumexp in `F`.
    pub(crate) fn logsumexp<F: LogSumExpInput>() -> Self {
        Call::statistic(Statistic::LogSumExp, F::TYPE, F::TYPE, Finish::Value)
    }

    /// A count (`Finish::Value`, a `u64`) or `any`/`all` (a byte) of the
    /// elements of `T` that `predicate` holds for.
    pub(crate) fn count<T: Element>(predicate: Predicate, finish: Finish) -> Self {
        Call::statistic(predicate.statistic(), T::TYPE, T::TYPE, finish)
    }

    /// argmax (`op` = `Max`) or argmin (`Min`) of `T`s along one axis: a
    /// `u64` position per result. [`Error::UnsupportedOp`] for another op.
    pub(crate) fn arg<T: ArgInput>(op: Op) -> Result<Self> {
        if !matches!(op, Op::Max | Op::Min) {
            return Err(Error::UnsupportedOp { op, element: T::INPUT });
        }
        Ok(Call {
            elements: Kernel::ArgAxis { op, input: T::INPUT },
            states: None,
            empty: Some(op),
            finish: Finish::Value,
            finish_param: 0,
            result_bytes: std::mem::size_of::<u64>(),
        })
    }
}

/// Where a call's results go: `len` results at `out`, and a variance's
/// means at `means`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Destination {
    pub(crate) out: u64,
    pub(crate) len: usize,
    pub(crate) means: Option<u64>,
}

impl<B: Backend> Reducer<B> {
    /// The variance of `input` along `axes` of the view `layout`, with
    /// `correction` (1: the sample variance, PyTorch's default), accumulated
    /// in `A`: one result per position of the other axes. See the
    /// [module docs](crate::statistics) for the rules, [`crate::axes`] for
    /// axes and views.
    ///
    /// Errors: as [`Reducer::reduce_axes`], and [`Error::InvalidArgument`]
    /// for a correction that is negative or not finite.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator};
    /// let x = [1.0f64, 3.0, 2.0, 6.0]; // 2 × 2
    /// let rows = Emulator::default().var_axes::<f64, _>(&x, &Strided::contiguous(&[2, 2])?, &[-1], 0.0)?;
    /// assert_eq!((rows.values.to_vec(), rows.shape(true)), (vec![1.0, 4.0], vec![2, 1]));
    /// # Ok(()) }
    /// ```
    pub fn var_axes<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: &B::Slice<In>,
        layout: &Strided,
        axes: &[isize],
        correction: f64,
    ) -> Result<Reduced<B::Buffer<A>>> {
        self.statistic_axes(input, layout, axes, Call::moments::<A, In>(Finish::Value, correction)?)
    }

    /// The standard deviation: the square root of [`Reducer::var_axes`].
    pub fn std_axes<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: &B::Slice<In>,
        layout: &Strided,
        axes: &[isize],
        correction: f64,
    ) -> Result<Reduced<B::Buffer<A>>> {
        self.statistic_axes(input, layout, axes, Call::moments::<A, In>(Finish::Root, correction)?)
    }

    /// The means and variances along `axes`, from one pass over the
    /// elements (PyTorch's `var_mean`, in the other order): `values.0` the
    /// means, `values.1` the variances, as [`Reducer::var_axes`].
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator};
    /// let x = [1.0f32, 3.0, 2.0, 6.0]; // 2 × 2
    /// let both = Emulator::default().mean_var_axes::<f32, _>(&x, &Strided::contiguous(&[2, 2])?, &[0], 1.0)?;
    /// assert_eq!((both.values.0.to_vec(), both.values.1.to_vec()), (vec![1.5, 4.5], vec![0.5, 4.5]));
    /// # Ok(()) }
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn mean_var_axes<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: &B::Slice<In>,
        layout: &Strided,
        axes: &[isize],
        correction: f64,
    ) -> Result<Reduced<(B::Buffer<A>, B::Buffer<A>)>> {
        let call = Call::moments::<A, In>(Finish::Value, correction)?;
        let outputs = layout.kept_outputs(axes)?;
        let mut means = self.backend.alloc::<A>(outputs)?;
        let mut variances = self.backend.alloc::<A>(outputs)?;
        let (out, len) = B::parts(B::as_slice_mut(&mut variances));
        let (means_address, _) = B::parts(B::as_slice_mut(&mut means));
        let destination = Destination {
            out,
            len,
            means: Some(means_address),
        };
        self.enqueue_statistic(input, layout, axes, call, destination, None)?;
        // Waits for the own stream: the buffers are read on others.
        self.backend.read_result_slot()?;
        Reduced::new((means, variances), layout, axes)
    }

    /// logsumexp along `axes`: `ln Σ exp(x)` of each result's elements,
    /// without overflow (the softmax's normaliser: `softmax(x) = exp(x −
    /// logsumexp(x))`). See the [module docs](crate::statistics).
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator};
    /// let x = [1000.0f32, 1000.0, f32::NEG_INFINITY, 0.0]; // 2 × 2: no overflow
    /// let rows = Emulator::default().logsumexp_axes(&x, &Strided::contiguous(&[2, 2])?, &[1])?;
    /// assert_eq!(rows.values.to_vec(), [1000.0 + 2f32.ln(), 0.0]);
    /// # Ok(()) }
    /// ```
    pub fn logsumexp_axes<F: LogSumExpInput>(
        &mut self,
        input: &B::Slice<F>,
        layout: &Strided,
        axes: &[isize],
    ) -> Result<Reduced<B::Buffer<F>>> {
        self.statistic_axes(input, layout, axes, Call::logsumexp::<F>())
    }

    /// The number of elements along `axes` that `predicate` holds for.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator, statistics::Predicate};
    /// let x = [0i64, 1, 2, 0, 0, 3]; // 2 × 3
    /// let per_column = Emulator::default().count_axes(&x, &Strided::contiguous(&[2, 3])?, &[0], Predicate::Nonzero)?;
    /// assert_eq!(per_column.values.to_vec(), [0, 1, 2]);
    /// # Ok(()) }
    /// ```
    pub fn count_axes<T: Element>(
        &mut self,
        input: &B::Slice<T>,
        layout: &Strided,
        axes: &[isize],
        predicate: Predicate,
    ) -> Result<Reduced<B::Buffer<u64>>> {
        self.statistic_axes(input, layout, axes, Call::count::<T>(predicate, Finish::Value))
    }

    /// Whether `predicate` holds for any element along `axes`: 1 or 0 per
    /// result (a byte; see the [module docs](crate::statistics)).
    pub fn any_axes<T: Element>(
        &mut self,
        input: &B::Slice<T>,
        layout: &Strided,
        axes: &[isize],
        predicate: Predicate,
    ) -> Result<Reduced<B::Buffer<u8>>> {
        self.statistic_axes(input, layout, axes, Call::count::<T>(predicate, Finish::Any))
    }

    /// Whether `predicate` holds for every element along `axes` (1 where
    /// the reduced axes are empty): 1 or 0 per result.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator, statistics::Predicate};
    /// let x = [1u32, 2, 0, 4]; // 2 × 2
    /// let rows = Emulator::default().all_axes(&x, &Strided::contiguous(&[2, 2])?, &[1], Predicate::Nonzero)?;
    /// assert_eq!(rows.values.to_vec(), [1, 0]);
    /// # Ok(()) }
    /// ```
    pub fn all_axes<T: Element>(
        &mut self,
        input: &B::Slice<T>,
        layout: &Strided,
        axes: &[isize],
        predicate: Predicate,
    ) -> Result<Reduced<B::Buffer<u8>>> {
        self.statistic_axes(input, layout, axes, Call::count::<T>(predicate, Finish::All))
    }

    /// The position along `axis` of the largest element, per position of
    /// the other axes (PyTorch's `x.argmax(dim=axis)`): the first among
    /// equal ones, a NaN before any number, by the rules of
    /// [`Reducer::argmax`]; [`half::f16`] and [`half::bf16`] compared as
    /// `f32`. One launch. [`Error::Empty`] if the axis has length 0 (and
    /// the other axes have positions).
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator};
    /// let x = [3i32, 9, 9, 7, 1, 8]; // 2 × 3
    /// let layout = Strided::contiguous(&[2, 3])?;
    /// let per_row = Emulator::default().argmax_axis(&x, &layout, -1)?;
    /// assert_eq!((per_row.values.to_vec(), per_row.shape(true)), (vec![1, 2], vec![2, 1]));
    /// let per_column = Emulator::default().argmin_axis(&x, &layout, 0)?;
    /// assert_eq!(per_column.values.to_vec(), [0, 1, 1]);
    /// # Ok(()) }
    /// ```
    pub fn argmax_axis<T: ArgInput>(
        &mut self,
        input: &B::Slice<T>,
        layout: &Strided,
        axis: isize,
    ) -> Result<Reduced<B::Buffer<u64>>> {
        self.statistic_axes(input, layout, &[axis], Call::arg::<T>(Op::Max)?)
    }

    /// The position along `axis` of the smallest element, per position of
    /// the other axes: [`Reducer::argmax_axis`]'s rules (a NaN is still the
    /// first choice).
    pub fn argmin_axis<T: ArgInput>(
        &mut self,
        input: &B::Slice<T>,
        layout: &Strided,
        axis: isize,
    ) -> Result<Reduced<B::Buffer<u64>>> {
        self.statistic_axes(input, layout, &[axis], Call::arg::<T>(Op::Min)?)
    }

    /// The variance of the whole of `input`, with `correction`, accumulated
    /// in `A` ([`Reducer::var_axes`] over its one axis).
    pub fn var<A: FloatElement, In: MomentsInput<A>>(&mut self, input: &B::Slice<In>, correction: f64) -> Result<A> {
        self.statistic_to_host::<_, _>(input, Call::moments::<A, In>(Finish::Value, correction)?)
    }

    /// The standard deviation of the whole of `input`.
    pub fn std<A: FloatElement, In: MomentsInput<A>>(&mut self, input: &B::Slice<In>, correction: f64) -> Result<A> {
        self.statistic_to_host::<_, _>(input, Call::moments::<A, In>(Finish::Root, correction)?)
    }

    /// The mean and the variance of the whole of `input`, in one pass.
    pub fn mean_var<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: &B::Slice<In>,
        correction: f64,
    ) -> Result<(A, A)> {
        let call = Call::moments::<A, In>(Finish::Value, correction)?;
        let slot = self.backend.result_slot();
        // The slot's second word: inside the backend's 16-byte slot.
        let means = element_address::<u64>(slot, 1).ok_or(Error::Cuda(CudaError::InvalidValue))?;
        let destination = Destination {
            out: slot,
            len: 1,
            means: Some(means),
        };
        self.enqueue_statistic(input, &whole::<B, In>(input)?, &[0], call, destination, None)?;
        let [variance, mean] = self.backend.read_result_slot()?;
        Ok((from_word(mean), from_word(variance)))
    }

    /// logsumexp of the whole of `input`.
    pub fn logsumexp<F: LogSumExpInput>(&mut self, input: &B::Slice<F>) -> Result<F> {
        self.statistic_to_host::<_, _>(input, Call::logsumexp::<F>())
    }

    /// The number of elements of `input` that `predicate` holds for.
    pub fn count<T: Element>(&mut self, input: &B::Slice<T>, predicate: Predicate) -> Result<u64> {
        self.statistic_to_host::<_, _>(input, Call::count::<T>(predicate, Finish::Value))
    }

    /// Whether `predicate` holds for any element of `input` (false if empty).
    pub fn any<T: Element>(&mut self, input: &B::Slice<T>, predicate: Predicate) -> Result<bool> {
        let byte: u8 = self.statistic_to_host::<_, _>(input, Call::count::<T>(predicate, Finish::Any))?;
        Ok(byte != 0)
    }

    /// Whether `predicate` holds for every element of `input` (true if empty).
    pub fn all<T: Element>(&mut self, input: &B::Slice<T>, predicate: Predicate) -> Result<bool> {
        let byte: u8 = self.statistic_to_host::<_, _>(input, Call::count::<T>(predicate, Finish::All))?;
        Ok(byte != 0)
    }

    /// `call` along `axes`, into a new buffer of `R`s (the type `call`'s
    /// results have), after the own stream's work.
    fn statistic_axes<In: DeviceCopy, R: DeviceCopy>(
        &mut self,
        input: &B::Slice<In>,
        layout: &Strided,
        axes: &[isize],
        call: Call,
    ) -> Result<Reduced<B::Buffer<R>>> {
        debug_assert_eq!(call.result_bytes, std::mem::size_of::<R>());
        let outputs = layout.kept_outputs(axes)?;
        let mut values = self.backend.alloc::<R>(outputs)?;
        let (out, len) = B::parts(B::as_slice_mut(&mut values));
        self.enqueue_statistic(input, layout, axes, call, Destination { out, len, means: None }, None)?;
        // Waits for the own stream: the buffer is read on others.
        self.backend.read_result_slot()?;
        Reduced::new(values, layout, axes)
    }

    /// `call` over the whole of `input`, its one result (of `R`) read back.
    fn statistic_to_host<In: Element, R: DeviceCopy>(&mut self, input: &B::Slice<In>, call: Call) -> Result<R> {
        debug_assert_eq!(call.result_bytes, std::mem::size_of::<R>());
        let out = self.backend.result_slot();
        let destination = Destination {
            out,
            len: 1,
            means: None,
        };
        self.enqueue_statistic(input, &whole::<B, In>(input)?, &[0], call, destination, None)?;
        let [word, _] = self.backend.read_result_slot()?;
        Ok(from_word(word))
    }

    /// Enqueues `call` over `axes` of `input` viewed as `layout`: one launch
    /// per reduced axis left after merging (as [`crate::axes`] plans them),
    /// each but the last storing its summaries in the stream's scratch for
    /// the next, the last writing the results to `destination`.
    pub(crate) fn enqueue_statistic<In: DeviceCopy>(
        &mut self,
        input: &B::Slice<In>,
        layout: &Strided,
        axes: &[isize],
        call: Call,
        destination: Destination,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let outputs = layout.checked_outputs(axes, destination.len)?;
        let (address, len) = checked_parts::<B, In>(input)?;
        let checked = layout.checked_dims(axes, len)?;
        if outputs == 0 {
            return Ok(());
        }
        if let (0, Some(op)) = (checked.reduced_elements, call.empty) {
            return Err(Error::Empty { op });
        }
        // Before the first pass: only the last launch sees the outputs.
        let result_bytes = outputs.saturating_mul(call.result_bytes);
        let mut outputs_and_input = vec![
            Access::read::<In>("input", address, len),
            Access::write::<u8>("out", destination.out, result_bytes),
        ];
        if let Some(means) = destination.means {
            outputs_and_input.push(Access::write::<u8>("means", means, result_bytes));
        }
        check_aliasing(&outputs_and_input)?;
        let passes = match checked.span {
            0 => vec![Pass::empty(outputs as u64)],
            _ => plan_passes(&checked.dims),
        };
        // A call without states reduces one axis: one pass.
        let (states_kernel, state_bytes) = match (call.states, passes.len()) {
            (Some(states), _) => states,
            (None, 1) => (call.elements, 0),
            (None, _) => return Err(Error::InvalidAxes("this reduction takes one axis".into())),
        };
        let kernel = |index: usize| if index == 0 { call.elements } else { states_kernel };
        // Every pass runs the axis kernel, whatever its layout.
        let scratch = self.pass_scratch(&passes, state_bytes, layout, stream, |index, _| Some(kernel(index)))?;
        let bytes = |n: u64, each: usize| (n as usize).saturating_mul(each);
        let mut source = Access::read::<u8>("input", address, bytes(checked.span as u64, std::mem::size_of::<In>()));
        for (index, pass) in passes.iter().enumerate() {
            let last = index.saturating_add(1) == passes.len();
            let out = scratch.destination(index, passes.len(), destination.out);
            let each = if last { call.result_bytes } else { state_bytes };
            let out = Access::write::<u8>("out", out, bytes(pass.outputs(), each));
            let means = destination
                .means
                .filter(|_| last)
                .map(|means| Access::write::<u8>("means", means, bytes(pass.outputs(), call.result_bytes)));
            let launch = AxisLaunch {
                kernel: kernel(index),
                input: source,
                out,
                means,
                finish: if last { call.finish } else { Finish::State },
                // `all` compares each count with the elements per result.
                finish_param: match call.finish {
                    Finish::All => checked.reduced_elements,
                    _ => call.finish_param,
                },
                partials: scratch.partials,
                segments: None,
            };
            self.launch_axis(pass, launch, stream)?;
            source = Access::read::<u8>("states", out.address, out.bytes as usize);
        }
        Ok(())
    }
}

impl<B: Backend> Reducer<B> {
    /// The variance of each segment of `values` given by `offsets` (as
    /// [`crate::segmented`]'s: `segments + 1` `u64`s, segment `s` being
    /// `values[offsets[s]..offsets[s + 1]]`), with `correction`,
    /// accumulated in `A`: one result per segment, in a new buffer. Empty
    /// segments give NaN. One launch, reading each element once.
    ///
    /// Errors: [`Error::InvalidSegments`] naming the first segment whose
    /// offsets decrease or pass the end of `values` (or for no offsets),
    /// [`Error::InvalidArgument`] for a bad correction, CUDA errors.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, statistics::Predicate, Error};
    /// let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and device buffers
    /// let values = [1.0f64, 3.0, 2.0, 4.0, 6.0, f64::NAN];
    /// let offsets = [0u64, 2, 2, 5, 6]; // [1, 3], [], [2, 4, 6], [NaN]
    /// let var = emulator.var_segments::<f64, _>(&values, &offsets, 1.0)?.to_vec();
    /// assert!(var[0] == 2.0 && var[1].is_nan() && var[2] == 4.0 && var[3].is_nan());
    /// assert_eq!(emulator.count_segments(&values, &offsets, Predicate::Nan)?.to_vec(), [0, 0, 0, 1]);
    /// assert_eq!(emulator.all_segments(&values, &offsets, Predicate::Nonzero)?.to_vec(), [1, 1, 1, 1]);
    /// let past_the_end = emulator.logsumexp_segments(&values, &[0, 7]);
    /// assert!(matches!(past_the_end, Err(Error::InvalidSegments(_))));
    /// # Ok(()) }
    /// ```
    pub fn var_segments<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        values: &B::Slice<In>,
        offsets: &B::Slice<u64>,
        correction: f64,
    ) -> Result<B::Buffer<A>> {
        self.statistic_segments(values, offsets, Call::moments::<A, In>(Finish::Value, correction)?)
    }

    /// The standard deviation of each segment: the square root of [`Reducer::var_segments`].
    pub fn std_segments<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        values: &B::Slice<In>,
        offsets: &B::Slice<u64>,
        correction: f64,
    ) -> Result<B::Buffer<A>> {
        self.statistic_segments(values, offsets, Call::moments::<A, In>(Finish::Root, correction)?)
    }

    /// The mean and the variance of each segment, from one pass: `(means,
    /// variances)`, as [`Reducer::var_segments`].
    pub fn mean_var_segments<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        values: &B::Slice<In>,
        offsets: &B::Slice<u64>,
        correction: f64,
    ) -> Result<(B::Buffer<A>, B::Buffer<A>)> {
        let call = Call::moments::<A, In>(Finish::Value, correction)?;
        let segments = Layout::of_offsets::<B>(offsets)?.segments();
        let mut means = self.backend.alloc::<A>(segments)?;
        let mut variances = self.backend.alloc::<A>(segments)?;
        let (out, len) = B::parts(B::as_slice_mut(&mut variances));
        let (means_address, _) = B::parts(B::as_slice_mut(&mut means));
        let destination = Destination {
            out,
            len,
            means: Some(means_address),
        };
        self.blocking_statistic_segments(values, offsets, call, destination)?;
        Ok((means, variances))
    }

    /// logsumexp of each segment (`-inf` for an empty one), as [`Reducer::var_segments`].
    pub fn logsumexp_segments<F: LogSumExpInput>(
        &mut self,
        values: &B::Slice<F>,
        offsets: &B::Slice<u64>,
    ) -> Result<B::Buffer<F>> {
        self.statistic_segments(values, offsets, Call::logsumexp::<F>())
    }

    /// The number of elements of each segment that `predicate` holds for.
    pub fn count_segments<T: Element>(
        &mut self,
        values: &B::Slice<T>,
        offsets: &B::Slice<u64>,
        predicate: Predicate,
    ) -> Result<B::Buffer<u64>> {
        self.statistic_segments(values, offsets, Call::count::<T>(predicate, Finish::Value))
    }

    /// Whether `predicate` holds for any element of each segment: 1 or 0 per
    /// segment (0 for an empty one).
    pub fn any_segments<T: Element>(
        &mut self,
        values: &B::Slice<T>,
        offsets: &B::Slice<u64>,
        predicate: Predicate,
    ) -> Result<B::Buffer<u8>> {
        self.statistic_segments(values, offsets, Call::count::<T>(predicate, Finish::Any))
    }

    /// Whether `predicate` holds for every element of each segment: 1 or 0
    /// per segment (1 for an empty one).
    pub fn all_segments<T: Element>(
        &mut self,
        values: &B::Slice<T>,
        offsets: &B::Slice<u64>,
        predicate: Predicate,
    ) -> Result<B::Buffer<u8>> {
        self.statistic_segments(values, offsets, Call::count::<T>(predicate, Finish::All))
    }

    /// `call` over each segment, into a new buffer of `R`s (the type
    /// `call`'s results have).
    fn statistic_segments<In: DeviceCopy, R: DeviceCopy>(
        &mut self,
        values: &B::Slice<In>,
        offsets: &B::Slice<u64>,
        call: Call,
    ) -> Result<B::Buffer<R>> {
        debug_assert_eq!(call.result_bytes, std::mem::size_of::<R>());
        let segments = Layout::of_offsets::<B>(offsets)?.segments();
        let mut results = self.backend.alloc::<R>(segments)?;
        let (out, len) = B::parts(B::as_slice_mut(&mut results));
        self.blocking_statistic_segments(values, offsets, call, Destination { out, len, means: None })?;
        Ok(results)
    }

    /// `call` over each segment on the own stream, waited for, the offsets
    /// checked by the kernel: [`Error::InvalidSegments`] naming the first
    /// bad segment.
    fn blocking_statistic_segments<In: DeviceCopy>(
        &mut self,
        values: &B::Slice<In>,
        offsets: &B::Slice<u64>,
        call: Call,
        destination: Destination,
    ) -> Result<()> {
        // The status word is the first word of the result slot, zeroed first.
        let status = self.backend.result_slot();
        // SAFETY: the result slot is 16 writable, aligned bytes.
        unsafe { self.backend.zero_words(status, 1, None)? };
        self.enqueue_statistic_segments(values, offsets, call, destination, Some(status), None)?;
        let [status_word, _] = self.backend.read_result_slot()?;
        if status_word as u32 == SEGMENTS_INVALID {
            let offsets = self.backend.to_host(offsets)?;
            return Err(invalid_offsets(&offsets, B::parts(values).1));
        }
        Ok(())
    }

    /// Enqueues `call` over each segment of `values` on `stream`: one axis
    /// launch whose results are the segments, their offsets clamped into
    /// `values` and, where `status` is given, flagged there if invalid.
    pub(crate) fn enqueue_statistic_segments<In: DeviceCopy>(
        &mut self,
        values: &B::Slice<In>,
        offsets: &B::Slice<u64>,
        call: Call,
        destination: Destination,
        status: Option<u64>,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let segments = Layout::of_offsets::<B>(offsets)?.segments();
        if destination.len != segments {
            return Err(Error::InvalidSegments(format!(
                "the output has {} elements for {segments} segments",
                destination.len
            )));
        }
        let (address, len) = checked_parts::<B, In>(values)?;
        let (offsets_address, _) = checked_parts::<B, u64>(offsets)?;
        if segments == 0 {
            return Ok(());
        }
        let result_bytes = segments.saturating_mul(call.result_bytes);
        let input = Access::read::<In>("input", address, len);
        let out = Access::write::<u8>("out", destination.out, result_bytes);
        let means = destination
            .means
            .map(|means| Access::write::<u8>("means", means, result_bytes));
        let offsets = Access::read::<u64>("offsets", offsets_address, segments.saturating_add(1));
        let status = status.map(|status| Access::write::<u32>("status", status, 1));
        let mut accesses = vec![input, out, offsets];
        accesses.extend(means);
        accesses.extend(status);
        check_aliasing(&accesses)?;
        // The plan follows the average segment.
        let pass = Pass::segments(segments as u64, (len as u64).div_ceil(segments as u64));
        let Kernel::Statistic {
            statistic,
            input: input_type,
            accumulator,
        } = call.elements
        else {
            return Err(Error::InvalidSegments("only a statistic is taken over segments".into()));
        };
        let kernel = Kernel::StatisticSegments {
            statistic,
            input: input_type,
            accumulator,
        };
        let launch = AxisLaunch {
            kernel,
            input,
            out,
            means,
            finish: call.finish,
            finish_param: call.finish_param,
            partials: 0,
            segments: Some(SegmentsLaunch {
                offsets,
                status,
                len: len as u64,
            }),
        };
        self.launch_axis(&pass, launch, stream)
    }
}

/// `input` as one axis: a whole-input statistic reduces it.
fn whole<B: Backend, T: DeviceCopy>(input: &B::Slice<T>) -> Result<Strided> {
    Strided::contiguous(&[B::parts(input).1])
}
