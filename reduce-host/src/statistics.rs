//! The statistics: variance and standard deviation (with a correction),
//! mean and variance together, logsumexp, and counts of the elements that
//! are nonzero, NaN or infinite, with `any` and `all` of them — the
//! reductions [`Var`], [`Std`], [`MeanVar`], [`LogSumExp`], [`Count`],
//! [`Any`] and [`All`] (see [`crate::reduction`]), over a whole input
//! ([`Reducer::reduce`]) or over segments, rows or axes of a strided tensor
//! ([`Reducer::reduce_over`] with an [`Over`](crate::Over)). Each reads
//! every element once, in one launch per reduced axis (one for a whole
//! input, rows or segments).
//!
//! ```
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::{axes::Strided, emulated::Emulator, Any, Count, LogSumExp, MeanVar, Over, Predicate, Var};
//! let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and device buffers
//! let x = [1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0]; // 2 × 3, row-major
//! let layout = Strided::contiguous(&[2, 3])?;
//! // PyTorch's x.var(dim=0) (correction 1): columns of (1, 4), (2, 6), (3, 8).
//! let var = emulator.reduce_over(&x, Var::<f32>::new(1.0)?, Over::Axes(&layout, &[0]))?;
//! assert_eq!(var.values.to_vec(), [4.5, 8.0, 12.5]);
//! assert_eq!(emulator.reduce(&x, MeanVar::<f64>::new(0.0)?)?, (4.0, 34.0 / 6.0));
//! let lse = emulator.reduce(&[0.0f64, 0.0], LogSumExp)?;
//! assert!((lse - 2f64.ln()).abs() < 1e-15);
//! assert_eq!(emulator.reduce(&[0i32, 5, 0, 7], Count(Predicate::Nonzero))?, 2);
//! assert!(!emulator.reduce(&x, Any(Predicate::Nan))?);
//! // Per segment: the elements 0..3 and 3..6 (offsets: a device slice; on the emulator, `&[u64]`).
//! let per_segment = emulator.reduce_over(&x, Var::<f32>::new(1.0)?, Over::Segments(&[0u64, 3, 6][..]))?;
//! assert_eq!(per_segment.values.to_vec(), [1.0, 4.0]);
//! # Ok(()) }
//! ```
//!
//! # Semantics
//! | statistic | value | no elements | NaN, ±inf |
//! |---|---|---|---|
//! | [`Var`] | `M2 / max(0, n − correction)`, `M2 = Σ (x − mean)²` | NaN | NaN if any element is NaN or infinite |
//! | [`Std`] | the square root of `Var` | NaN | as `Var` |
//! | [`MeanVar`] | the mean `Σ x / n`, and `Var` | NaN, NaN | the mean follows IEEE 754 (`inf`, or NaN) |
//! | [`LogSumExp`] | `ln Σ exp(x)`, without overflow (`max + ln Σ exp(x − max)`) | `-inf` | NaN if any is NaN; else `+inf` if any is `+inf`; `-inf` elements add nothing |
//! | [`Count`] | elements the [`Predicate`] holds for, a `u64` | 0 | `Nonzero`: NaN is nonzero, `-0.0` is zero |
//! | [`Any`] | whether the count is above 0 | false | |
//! | [`All`] | whether the count is every element | true | |
//!
//! - **Correction**: PyTorch's `correction` (NumPy's `ddof`): 1 for the
//!   sample variance, 0 for the population's. Any finite value ≥ 0;
//!   `n − correction ≤ 0` divides by 0 (NaN, or `+inf` if the elements
//!   differ), as PyTorch does. [`Error::InvalidArgument`] otherwise, from
//!   [`Var::new`] (and [`Std::new`], [`MeanVar::new`]).
//! - **Precision**: the variance is merged from (count, mean, `M2`)
//!   summaries as Chan, Golub and LeVeque do: no difference of large sums,
//!   so a large mean does not cost the spread its digits. `f32` inputs
//!   accumulate in `f32` or, asked for (`Var::<f64>`), in `f64`
//!   ([`MomentsInput`]); logsumexp accumulates in its input type. Its `exp`
//!   and `ln` are within a few ulps (`kernels-gpu/src/math.rs`).
//! - **Reproducibility**: these results are the same bits for the same
//!   input at the same address on the same GPU; their trees depend on the
//!   launch. The same bits on every GPU, launch, alignment and batch, and
//!   on the CPU, in two passes: [`ExactVar`](crate::ExactVar),
//!   [`ExactStd`](crate::ExactStd), [`ExactMeanVar`](crate::ExactMeanVar)
//!   and [`ExactLogSumExp`](crate::ExactLogSumExp), also sharded over
//!   several GPUs (`reduce::multi`).
//! - **Results** over rows or axes follow [`crate::axes`]: row-major over
//!   the kept axes, [`Reduced::shape`] with or without `keepdim`; the same
//!   rules for axes, strides and errors. `Any`/`All` over anything but the
//!   whole input give one byte per result, 0 or 1 (a `u8`, so that no byte
//!   a kernel did not write can be read as a `bool`). [`MeanVar`] gives a
//!   pair of buffers, `(means, variances)`.
//! - **Segments** ([`Over::Segments`](crate::Over::Segments)): one result
//!   per segment, each by the rules above (an empty segment: no elements);
//!   invalid offsets are [`Error::InvalidSegments`] from the blocking
//!   calls, clamped by [`Scope::reduce_into`](crate::Scope::reduce_into),
//!   as for every reduction over segments (see [`Over`](crate::Over)). A
//!   segment's elements are read by a team of lanes sized for the average
//!   segment, one launch; unlike an [`Op`] over segments, segments are not
//!   handed out as teams finish.
//! - **Determinism**: as every reduction of the library, bit for bit the
//!   same on every run for a given shape, device and input.
//!
//! [`Var`]: crate::Var
//! [`Var::new`]: crate::Var::new
//! [`Std`]: crate::Std
//! [`Std::new`]: crate::Std::new
//! [`MeanVar`]: crate::MeanVar
//! [`MeanVar::new`]: crate::MeanVar::new
//! [`LogSumExp`]: crate::LogSumExp
//! [`Count`]: crate::Count
//! [`Any`]: crate::Any
//! [`All`]: crate::All
//! [`Op`]: crate::Op
//! [`Reduced::shape`]: crate::axes::Reduced::shape

use crate::axes::{checked_reading, plan_passes, AxisLaunch, CheckedReading, Pass, SegmentsLaunch, Strided};
use crate::backend::launcher::{check_aliasing, Access, StreamHandle};
use crate::backend::Backend;
use crate::element::{sealed::Sealed, ArgInput, Element, ElementType, FloatElement};
use crate::error::{Error, Result};
use crate::reducer::{checked_parts, from_word, Reducer};
use crate::segmented::Layout;
use cust_core::DeviceCopy;
use kernels_gpu::abi::{Finish, Kernel, Op, Scalar, Statistic};

/// What [`Count`](crate::Count), [`Any`](crate::Any) and [`All`](crate::All)
/// test each element for. `#[non_exhaustive]`: more may come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
/// use reduce::{emulated::Emulator, Var};
/// // 1e6 + {0, 1, 2}: the spread survives the large mean (where Σx² − n·mean²
/// // in f32 would have lost it), in f32 and in f64.
/// let x = [1.0e6f32, 1.0e6 + 1.0, 1.0e6 + 2.0];
/// assert_eq!(Emulator::default().reduce(&x, Var::<f32>::new(1.0)?)?, 1.0);
/// assert_eq!(Emulator::default().reduce(&x, Var::<f64>::new(1.0)?)?, 1.0);
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
            accumulator: statistic.states_accumulator(accumulator.kernel()),
        };
        Call {
            elements: Kernel::Statistic {
                statistic,
                input: input.kernel(),
                accumulator: accumulator.kernel(),
            },
            states: Some((states, statistic.state_bytes(accumulator.kernel()) as usize)),
            empty: None,
            finish,
            finish_param: 0,
            // Every statistic named, so that a new one cannot fall into
            // another's size unnoticed.
            result_bytes: match (finish, statistic) {
                (Finish::Any | Finish::All, _) => 1,
                (_, Statistic::Moments | Statistic::LogSumExp) => accumulator.size(),
                (_, Statistic::CountNonzero | Statistic::CountNan | Statistic::CountInf) => std::mem::size_of::<u64>(),
            },
        }
    }

    /// The variance family of `In`s, accumulated in `A`, with a
    /// `correction` that [`checked_correction`] passed (the only way to
    /// make a `Var`, `Std` or `MeanVar`).
    pub(crate) fn moments<A: FloatElement, In: MomentsInput<A>>(finish: Finish, correction: f64) -> Self {
        Call {
            finish_param: correction.to_bits(),
            ..Call::statistic(Statistic::Moments, In::TYPE, A::TYPE, finish)
        }
    }

    /// logsumexp in `F` (every [`FloatElement`] is a [`LogSumExpInput`]).
    pub(crate) fn logsumexp<F: FloatElement>() -> Self {
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
            return Err(Error::unsupported_op(op, T::INPUT));
        }
        Ok(Call {
            elements: Kernel::ArgAxis {
                op,
                input: T::INPUT.kernel(),
            },
            states: None,
            empty: Some(op),
            finish: Finish::Value,
            finish_param: 0,
            result_bytes: std::mem::size_of::<u64>(),
        })
    }
}

/// `correction` if it is finite and at least 0, else [`Error::InvalidArgument`].
pub(crate) fn checked_correction(correction: f64) -> Result<f64> {
    if !(correction.is_finite() && correction >= 0.0) {
        return Err(Error::InvalidArgument(format!(
            "the correction is {correction}: it must be finite and at least 0"
        )));
    }
    Ok(correction)
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
    /// The mean and the variance of the whole of `input`, in one pass
    /// (`call`: the variance family's, `Finish::Value`).
    pub(crate) fn mean_var_to_host<A: FloatElement, In: MomentsInput<A>>(
        &mut self,
        input: &B::Slice<In>,
        call: Call,
    ) -> Result<(A, A)> {
        let layout = whole::<B, In>(input)?;
        self.blocking_with_mean(|reducer, out, mean| {
            let destination = Destination {
                out,
                len: 1,
                means: Some(mean),
            };
            reducer.enqueue_statistic(input, &layout, &[0], call, destination, None)
        })
    }

    /// `call` over the whole of `input`, its one result (of `R`) read back.
    pub(crate) fn statistic_to_host<In: DeviceCopy, R: DeviceCopy>(
        &mut self,
        input: &B::Slice<In>,
        call: Call,
    ) -> Result<R> {
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
        let CheckedReading {
            outputs,
            buffer,
            first: address,
            view: checked,
        } = checked_reading::<B, In>(input, layout, axes, destination.len)?;
        // Before the no-results return: an axis of length 0 has no argmax
        // even where no kept position asks for one.
        if let (0, Some(op)) = (checked.reduced_elements, call.empty) {
            return Err(Error::empty(op));
        }
        if outputs == 0 {
            return Ok(());
        }
        // Before the first pass: only the last launch sees the outputs.
        let result_bytes = outputs.saturating_mul(call.result_bytes);
        let mut outputs_and_input = vec![buffer, Access::write::<u8>("out", destination.out, result_bytes)];
        if let Some(means) = destination.means {
            outputs_and_input.push(Access::write::<u8>("means", means, result_bytes));
        }
        check_aliasing(&outputs_and_input)?;
        let passes = match checked.span {
            0 => vec![Pass::empty(outputs as u64)],
            // The results and the means, where asked for, are placed alike.
            _ => {
                let arrays = if destination.means.is_some() { 2 } else { 1 };
                plan_passes(
                    &checked.dims,
                    self.place_up_to(call.result_bytes.saturating_mul(arrays)),
                )
            }
        };
        // A call without states reduces one axis: one pass, and where the
        // plan writes the results in the kept axes' order after it (a pass
        // of one element each, see `plan_passes`), a copy of its `u64`
        // positions (the max of one `u64`: the value itself).
        let (states_kernel, state_bytes) = match (call.states, &passes[..]) {
            (Some(states), _) => states,
            (None, [_]) => (call.elements, 0),
            (None, [_, copy]) if copy.reduced.extent == 1 && call.result_bytes == 8 => (
                Kernel::Axis {
                    op: Op::Max,
                    element: Scalar::U64,
                },
                call.result_bytes,
            ),
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
                // Positions (a call without states) are final from the first pass.
                finish: if last || call.states.is_none() {
                    call.finish
                } else {
                    Finish::State
                },
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
