//! The launches of an axis reduction (and of the statistics, which run
//! through the same axis kernel): each pass of the plan, its kernel, its
//! launch shape and its arguments, and the scratch between passes.

use super::plan::{plan_passes, row_runs, Dim, Pass, Route};
use super::{too_large, CheckedView, Strided};
use crate::backend::launcher::{check_aliasing, element_address, Access, Launch, StreamHandle};
use crate::backend::Backend;
use crate::element::{Element, ElementType, FloatElement, WidensTo};
use crate::error::{Error, Result};
use crate::placement::Placement;
use crate::reducer::{checked_parts, ExactOf, ExactRows, Reducer};
use crate::segmented::{Layout, PerSegment};
use crate::shape::{self, LaunchShape};
use crate::tuning::Tuning;
use cust_core::DeviceCopy;
use kernels_gpu::abi::{AxisArgs, Finish, Kernel, Op, AXIS_KEPT_DIMS, PARTIAL_SLOT_BYTES, VECTOR_BYTES};

impl<B: Backend> Reducer<B> {
    /// Enqueues the reduction of `input`'s `axes` (viewed as `layout`) with
    /// `op` on `stream`, its results to the `out_len` `T`s at `out`.
    pub(crate) fn enqueue_axes<T: Element>(
        &mut self,
        input: &B::Slice<T>,
        layout: &Strided,
        axes: &[isize],
        op: Op,
        out: (u64, usize),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        if !op.is_defined_for(T::TYPE.kernel()) {
            return Err(Error::unsupported_op(op, T::TYPE));
        }
        let reading = Reading {
            input: T::TYPE,
            accumulator: T::TYPE,
        };
        self.enqueue_axes_reading::<T, T>(input, (reading, op), (layout, axes), out, stream)
    }

    /// [`Reducer::enqueue_axes`] of `In`s reduced in `A` ([`Widened`](crate::Widened) over axes).
    pub(crate) fn enqueue_widened_axes<A: Element, In: WidensTo<A>>(
        &mut self,
        input: &B::Slice<In>,
        layout: &Strided,
        axes: &[isize],
        op: Op,
        out: (u64, usize),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let reading = Reading {
            input: In::INPUT,
            accumulator: A::TYPE,
        };
        if reading.axis_kernel(op).name().is_none() {
            return Err(Error::unsupported_widening(op, In::INPUT.name(), A::TYPE));
        }
        self.enqueue_axes_reading::<In, A>(input, (reading, op), (layout, axes), out, stream)
    }

    /// Enqueues the reduction of `input`'s `axes` of `layout` with `op`,
    /// read as `reading` says, its results to the `out_len` `A`s at `out`:
    /// the first pass reads the `In`s, the later ones the `A`s it left.
    fn enqueue_axes_reading<In: DeviceCopy, A: Element>(
        &mut self,
        input: &B::Slice<In>,
        (reading, op): (Reading, Op),
        (layout, axes): (&Strided, &[isize]),
        (out, out_len): (u64, usize),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let CheckedReading {
            outputs,
            buffer,
            first: address,
            view:
                CheckedView {
                    dims,
                    span,
                    reduced_elements,
                    ..
                },
        } = checked_reading::<B, In>(input, layout, axes, out_len)?;
        // Before the no-results return: an axis of length 0 has no max even
        // where no kept position asks for one (as `torch.amax`).
        if reduced_elements == 0 && !op.defined_on_empty() {
            return Err(Error::empty(op));
        }
        if outputs == 0 {
            return Ok(());
        }
        // Before the first pass: only the last launch sees the output.
        check_aliasing(&[buffer, Access::write::<A>("out", out, out_len)])?;
        if span == 0 {
            // A reduced axis of length 0 (no kept one is): every result is the identity.
            if !op.defined_on_empty() {
                return Err(Error::empty(op));
            }
            let pass = Pass::empty(outputs as u64);
            return self.run_pass::<In, A>(&pass, (reading, op), (address, 0), out, 0, stream);
        }
        let passes = plan_passes(&dims, self.place_up_to(std::mem::size_of::<A>()));
        // After the first pass, each reads the accumulators the one before left.
        let reading_of = |index: usize| if index == 0 { reading } else { reading.of_accumulators() };
        let scratch = self.pass_scratch(&passes, std::mem::size_of::<A>(), layout, stream, |index, pass| {
            reading_of(index)
                .axis_route(pass)
                .then(|| reading_of(index).axis_kernel(pass_op(op, index)))
        })?;
        let destination = |index: usize| scratch.destination(index, passes.len(), out);
        // `plan_passes` gives at least one pass.
        let first = passes
            .first()
            .ok_or(Error::internal("an axis reduction planned no pass"))?;
        self.run_pass::<In, A>(
            first,
            (reading, op),
            (address, span),
            destination(0),
            scratch.partials,
            stream,
        )?;
        let mut source = (destination(0), first.outputs() as usize);
        for (index, pass) in passes.iter().enumerate().skip(1) {
            let fold = (reading_of(index), pass_op(op, index));
            self.run_pass::<A, A>(pass, fold, source, destination(index), scratch.partials, stream)?;
            source = (destination(index), pass.outputs() as usize);
        }
        Ok(())
    }

    /// Enqueues the exact sum `of` ([`ExactSum`](crate::ExactSum),
    /// [`ExactNanSum`](crate::ExactNanSum)) `input`'s `axes` (viewed as
    /// `layout`) on `stream`, its results to the
    /// `out_len` `T`s at `out`: each result its elements' exact sum rounded
    /// once, so it does not depend on the view, only on the values. A view
    /// planned as one pass (the reduced axes merge into one, and the kept
    /// axes lie in memory in the given order) is summed in place: by the
    /// exact kernel of a whole input, of rows (a pitch between them), or
    /// along the axis. A view whose reduced axes lie apart as rows in runs
    /// ([`row_runs`]: a contiguous reduced axis innermost, one more reduced
    /// axis, at most one kept axis), each run and row starting and ending a
    /// 16-byte vector, is summed in place, each row's runs read as one row:
    /// by the whole-input kernel of rows in runs where it takes such rows
    /// (as rows one after the other: `Reducer::launch_exact_rows`), else by
    /// the segmented kernel of runs. Any other (more axes apart, kept axes out of
    /// memory order) is first copied into scratch as rows, one per result
    /// (the gather kernel), and those summed: exact sums do not compose
    /// across passes.
    pub(crate) fn enqueue_exact_axes<T: FloatElement>(
        &mut self,
        input: &B::Slice<T>,
        layout: &Strided,
        axes: &[isize],
        of: ExactOf,
        (out, out_len): (u64, usize),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let CheckedReading {
            outputs,
            buffer,
            first: address,
            view:
                CheckedView {
                    dims,
                    span,
                    reduced_elements,
                    ..
                },
        } = checked_reading::<B, T>(input, layout, axes, out_len)?;
        if outputs == 0 || reduced_elements == 0 {
            // No results, or each the sum of nothing: `+0.0`, as `Op::Sum`'s;
            // a mean of nothing `0 / 0`, NaN, as the kernels divide.
            // A variance of nothing too (`0 / max(0, 0 − correction)`).
            self.enqueue_axes::<T>(input, layout, axes, Op::Sum, (out, out_len), stream)?;
            if of.finish() != Finish::Value {
                self.enqueue_divide_by_count::<T>(out, outputs, 0, stream)?;
            }
            return Ok(());
        }
        let accesses = [buffer, Access::write::<T>("out", out, outputs)];
        check_aliasing(&accesses)?;
        // No pass may place its results out of order: the exact kernels
        // write them in order (and the per-result means or maxima of the
        // variance's and logsumexp's terms are read in order).
        let passes = plan_passes(&dims, 0);
        if let [pass] = &passes[..] {
            return self.enqueue_exact_pass::<T>(pass, (address, span), of, (out, outputs), &accesses, stream);
        }
        let exact = PerSegment::Exact(of);
        // In place where the runs are read as whole vectors.
        let lanes = VECTOR_BYTES.checked_div(std::mem::size_of::<T>() as u64).unwrap_or(1);
        let row_runs = row_runs(&dims).filter(|r| address.is_multiple_of(VECTOR_BYTES) && r.vectors_fit(lanes));
        if let Some(row_runs) = row_runs {
            // Rows in runs: the whole-input kernel's where it takes them, as
            // rows one after the other.
            let rows = ExactRows::in_runs(row_runs).ok_or_else(|| too_large(layout))?;
            if self.launch_exact_rows::<T>(of, address, rows, out, &accesses, stream)? {
                return Ok(());
            }
            let layout = Layout::of_row_runs(row_runs);
            return self.enqueue_segmented::<T>((address, span), layout, exact, (out, outputs), None, stream);
        }
        // The gather: one result per element, the kept axes outermost in
        // the view's order (the results' order), then the reduced ones in
        // memory order (the largest stride first, so the innermost reads
        // the nearest elements).
        let (kept, mut reduced): (Vec<Dim>, Vec<Dim>) = dims.iter().filter(|d| d.extent > 1).partition(|d| !d.reduced);
        reduced.sort_by_key(|d| std::cmp::Reverse(d.stride));
        let gather: Vec<Dim> = kept.into_iter().chain(reduced).collect();
        let elements = gather.iter().fold(1u64, |n, d| n.saturating_mul(d.extent));
        let row_len = usize::try_from(reduced_elements).map_err(|_| too_large(layout))?;
        let element_bytes = std::mem::size_of::<T>() as u64;
        let rows_words = elements
            .checked_mul(element_bytes)
            .map(|bytes| bytes.div_ceil(8))
            .and_then(|words| usize::try_from(words).ok())
            .ok_or_else(|| too_large(layout))?;
        let gathered = self.backend.scratch(stream, rows_words)?;
        let elements = usize::try_from(elements).map_err(|_| too_large(layout))?;
        self.launch_gather::<T>(&gather, (address, span), (gathered, elements), stream)?;
        let rows = Layout::of_pass_rows(outputs, row_len, (reduced_elements, (0, 0)), Placement::IN_ORDER);
        self.enqueue_segmented::<T>((gathered, elements), rows, exact, (out, outputs), None, stream)
    }

    /// The exact sums of one pass's results read in place (the whole input,
    /// rows, or the axis kernel), `of` the `span` elements at `address`,
    /// into the `outputs` results at `out`.
    fn enqueue_exact_pass<T: FloatElement>(
        &mut self,
        pass: &Pass,
        (address, span): (u64, usize),
        of: ExactOf,
        (out, outputs): (u64, usize),
        accesses: &[Access],
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        match pass.route() {
            Route::Whole => self.launch_exact::<T>(of, address, ExactRows::dense(1, span), 0, out, accesses, stream),
            Route::Rows {
                rows,
                row_len,
                pitch,
                group: (0, 0),
            } => {
                // Rows with no gaps between them: the rows' route of the
                // whole-input kernel where it takes them, as `Over::Rows`.
                let dense = usize::try_from(pitch).is_ok_and(|pitch| pitch == row_len);
                let dense_rows = ExactRows::dense(rows, row_len);
                if dense && self.launch_exact_rows::<T>(of, address, dense_rows, out, accesses, stream)? {
                    return Ok(());
                }
                let rows = Layout::of_pass_rows(rows, row_len, (pitch, (0, 0)), Placement::IN_ORDER);
                let out = (out, outputs);
                self.enqueue_segmented::<T>((address, span), rows, PerSegment::Exact(of), out, None, stream)
            }
            Route::Rows { .. } | Route::Axis => {
                let kernel = Kernel::ExactAxis {
                    op: of.op(),
                    element: T::TYPE.kernel(),
                };
                let partial_words = self.axis_partial_words(std::slice::from_ref(pass), |_, _| Some(kernel))?;
                let partials = self.backend.scratch(stream, partial_words)?;
                // The variance's means or logsumexp's maxima, one per result.
                let (shifts, finish_param) = of.parameters();
                let means = of
                    .reads_per_part()
                    .then(|| Access::read::<T>("per-result values", shifts, outputs));
                let launch = AxisLaunch {
                    kernel,
                    input: Access::read::<T>("input", address, span),
                    out: Access::write::<T>("out", out, outputs),
                    means,
                    finish: of.finish(),
                    finish_param,
                    partials,
                    segments: None,
                };
                self.launch_axis(pass, launch, stream)
            }
        }
    }

    /// Copies the `outputs` elements of the view `kept` (its axes,
    /// outermost first; strides from `input`, whose `span` elements they
    /// reach) to `out` in row-major order over them ([`Kernel::Gather`]).
    fn launch_gather<T: FloatElement>(
        &mut self,
        kept: &[Dim],
        (input, span): (u64, usize),
        (out, outputs): (u64, usize),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let kernel = Kernel::Gather {
            element: T::TYPE.kernel(),
        };
        let shape = self.production_shape(kernel, outputs, std::mem::size_of::<T>())?;
        let args = AxisArgs {
            input,
            outputs: outputs as u64,
            out,
            ..kept_args(kept)?
        };
        let accesses = [
            Access::read::<T>("input", input, span),
            Access::write::<T>("gathered", out, outputs),
        ];
        let launch = Launch {
            kernel,
            shape,
            shared_bytes: 0,
            args,
            accesses: &accesses,
        };
        // SAFETY: the parameters of the gather entry point (`axis::gather`):
        // every element the kept axes reach lies in the `span` elements at
        // `input` (the caller checked the view against its buffer), which
        // the launch only reads; `out` has room for the `outputs` elements,
        // one per position of the kept axes, and is not the input (the
        // caller's scratch).
        unsafe { self.backend.launch(&launch, stream) }
    }

    /// The most results of `bytes_each` bytes (all the outputs of one
    /// result) a pass may place out of order ([`plan_passes`]): those that
    /// fill at most half the L2 cache, so that the lines its scattered
    /// writes start are whole before they are evicted.
    pub(crate) fn place_up_to(&self, bytes_each: usize) -> u64 {
        let half = self.backend.l2_bytes().checked_div(2).unwrap_or(0);
        half.checked_div(bytes_each as u64).unwrap_or(0)
    }

    /// The stream's scratch for `passes`: two regions that the results
    /// between passes (of `bytes_each` bytes each) alternate between, then
    /// the partial slots of the split launches, pass `index` running the
    /// axis kernel `kernel(index, pass)` (`None`: another kernel).
    pub(crate) fn pass_scratch(
        &mut self,
        passes: &[Pass],
        bytes_each: usize,
        layout: &Strided,
        stream: Option<StreamHandle>,
        kernel: impl Fn(usize, &Pass) -> Option<Kernel>,
    ) -> Result<PassScratch> {
        // Each region whole 16-byte vectors.
        let region_words = passes
            .iter()
            .rev()
            .skip(1)
            .map(|pass| {
                (pass.outputs() as usize)
                    .saturating_mul(bytes_each)
                    .div_ceil(16)
                    .saturating_mul(2)
            })
            .max()
            .unwrap_or(0);
        let partial_words = self.axis_partial_words(passes, kernel)?;
        let scratch_words = region_words
            .checked_mul(2)
            .and_then(|w| w.checked_add(partial_words))
            .ok_or_else(|| too_large(layout))?;
        let first = self.backend.scratch(stream, scratch_words)?;
        let second = element_address::<u64>(first, region_words).ok_or_else(|| too_large(layout))?;
        let partials = element_address::<u64>(second, region_words).ok_or_else(|| too_large(layout))?;
        Ok(PassScratch {
            regions: [first, second],
            partials,
        })
    }

    /// 8-byte words of partial slots the split launches of `passes` need,
    /// pass `index` running the axis kernel `kernel(index, pass)` (`None`
    /// for a pass that runs another kernel).
    pub(crate) fn axis_partial_words(
        &mut self,
        passes: &[Pass],
        kernel: impl Fn(usize, &Pass) -> Option<Kernel>,
    ) -> Result<usize> {
        let mut words = 0;
        for (index, pass) in passes.iter().enumerate() {
            if let Some(kernel) = kernel(index, pass) {
                let (plan, _) = self.axis_shape(kernel, pass, true)?;
                // A slot per result lane of each part of each tile.
                let lanes = 1u64 << plan.output_lanes_log2;
                let slots = pass
                    .outputs()
                    .div_ceil(lanes)
                    .saturating_mul(lanes)
                    .saturating_mul(u64::from(plan.splits));
                if plan.splits > 1 {
                    let split_words = slots.saturating_mul(PARTIAL_SLOT_BYTES / 8);
                    words = words.max(usize::try_from(split_words).unwrap_or(usize::MAX));
                }
            }
        }
        Ok(words)
    }

    /// The axis kernel's plan and launch for `pass` (its reduced axis split
    /// over blocks where that helps and `splittable`).
    fn axis_shape(
        &mut self,
        kernel: Kernel,
        pass: &Pass,
        splittable: bool,
    ) -> Result<(kernels_gpu::abi::AxisPlan, LaunchShape)> {
        let (block_threads, grid_cap) = self.backend.axis_block(kernel)?;
        let tuning = Tuning {
            block_threads,
            ..self.backend.tuning()
        };
        let reduced_contiguous = pass.reduced.stride == 1;
        Ok(shape::axis_shape(
            tuning,
            grid_cap,
            pass.outputs(),
            pass.reduced.extent,
            reduced_contiguous,
            splittable,
        ))
    }

    /// Launches `pass` of `op` over the tensor of `In`s at `source`
    /// (address, elements it spans), read as `reading` says, its `A`
    /// results to `destination`.
    fn run_pass<In: DeviceCopy, A: Element>(
        &mut self,
        pass: &Pass,
        (reading, op): (Reading, Op),
        (input, span): (u64, usize),
        destination: u64,
        partials: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let outputs = pass.outputs() as usize;
        match pass.route() {
            Route::Whole => self.launch_one_input::<In>(
                reading.whole_kernel(op),
                input,
                span,
                Access::write::<A>("out", destination, 1),
                stream,
            ),
            Route::Rows {
                rows,
                row_len,
                pitch,
                group,
            } if !reading.widened() => {
                let layout = Layout::of_pass_rows(rows, row_len, (pitch, group), pass.placed);
                self.enqueue_segmented::<A>((input, span), layout, op, (destination, outputs), None, stream)
            }
            Route::Rows { .. } | Route::Axis => self.launch_axis(
                pass,
                AxisLaunch {
                    kernel: reading.axis_kernel(op),
                    input: Access::read::<In>("input", input, span),
                    out: Access::write::<A>("out", destination, outputs),
                    means: None,
                    finish: Finish::Value,
                    finish_param: 0,
                    partials,
                    segments: None,
                },
                stream,
            ),
        }
    }

    /// Launches the axis kernel `launch.kernel` for `pass`.
    pub(crate) fn launch_axis(&mut self, pass: &Pass, launch: AxisLaunch, stream: Option<StreamHandle>) -> Result<()> {
        let (plan, shape) = self.axis_shape(launch.kernel, pass, launch.segments.is_none())?;
        let tickets = self.backend.workspace(stream)?.segment_tickets;
        let offsets = launch.segments.map(|segments| segments.offsets);
        let status = launch.segments.and_then(|segments| segments.status);
        let accesses: Vec<Access> = [Some(launch.input), Some(launch.out), launch.means, offsets, status]
            .into_iter()
            .flatten()
            .collect();
        let [(placed_extent0, placed_stride0), (placed_extent1, placed_stride1), (placed_extent2, placed_stride2), (placed_extent3, placed_stride3)] =
            pass.placed.axes;
        let args = AxisArgs {
            input: launch.input.address,
            // Segments are clamped into the input's elements.
            reduced: launch.segments.map_or(pass.reduced.extent, |segments| segments.len),
            reduced_stride: pass.reduced.stride,
            outputs: pass.outputs(),
            plan: plan.to_bits(),
            partials: launch.partials,
            tickets,
            finish: launch.finish as u64,
            finish_param: launch.finish_param,
            means: launch.means.map_or(0, |means| means.address),
            out: launch.out.address,
            offsets: offsets.map_or(0, |offsets| offsets.address),
            status: status.map_or(0, |status| status.address),
            placed_dims: pass.placed.dims as u64,
            placed_extent0,
            placed_stride0,
            placed_extent1,
            placed_stride1,
            placed_extent2,
            placed_stride2,
            placed_extent3,
            placed_stride3,
            ..kept_args(&pass.kept)?
        };
        let launch = Launch {
            kernel: launch.kernel,
            shape,
            shared_bytes: shape.threads_per_block.saturating_mul(PARTIAL_SLOT_BYTES as u32),
            args,
            accesses: &accesses,
        };
        // SAFETY: the parameters of an axis entry point
        // (kernels-gpu/src/abi/plans.rs, `AxisPlan`): every element the kept and
        // reduced axes reach lies in `launch.input` (the callers checked the
        // view against the input, or it is a previous pass's results);
        // `out` (and `means`, where given) has room for `pass.outputs()`
        // results as the kernel and `finish` write them; a split plan's
        // partial slots are in the scratch sized by `axis_partial_words`,
        // its tickets (one per tile, fewer than the grid's blocks) in the
        // zeroed workspace; the shared memory is a slot per thread. With
        // segments: `outputs + 1` offsets (read only, clamped into the
        // input by the kernel), no split (`splittable` false above), and
        // the status word where given.
        unsafe { self.backend.launch(&launch, stream) }
    }
}

/// A view of a buffer checked for a reduction along some of its axes
/// ([`checked_reading`]).
pub(crate) struct CheckedReading {
    /// The results: the positions of the kept axes.
    pub outputs: usize,
    /// The whole buffer, as the launches read it (for the aliasing checks).
    pub buffer: Access,
    /// The address of the view's first element: the launches read the
    /// view's `span` elements from there. It is aligned to an element only;
    /// every kernel reads an unaligned start element by element up to its
    /// first aligned vector, as any slice of a buffer.
    pub first: u64,
    pub view: CheckedView,
}

/// `input` viewed as `layout`, checked for the reduction of its `axes`
/// into `out_len` results: [`Error::InvalidAxes`] unless the kept axes have
/// `out_len` positions, [`Error::MisalignedInput`], and
/// [`Error::InvalidLayout`] if the view reaches past the buffer.
pub(crate) fn checked_reading<B: Backend, In: DeviceCopy>(
    input: &B::Slice<In>,
    layout: &Strided,
    axes: &[isize],
    out_len: usize,
) -> Result<CheckedReading> {
    let outputs = layout.checked_outputs(axes, out_len)?;
    let (address, len) = checked_parts::<B, In>(input)?;
    let view = layout.checked_dims(axes, len)?;
    // `offset + span <= len`: checked by `checked_dims`.
    let first = element_address::<In>(address, view.offset).ok_or_else(|| too_large(layout))?;
    Ok(CheckedReading {
        outputs,
        buffer: Access::read::<In>("input", address, len),
        first,
        view,
    })
}

/// An axis launch's parameters with only the kept axes set: `kept`
/// (outermost first) innermost first, extent 1 past them. A view has at
/// most [`AXIS_KEPT_DIMS`] axes ([`crate::axes::MAX_RANK`]), and merging
/// never adds one.
fn kept_args(kept: &[Dim]) -> Result<AxisArgs> {
    if kept.len() > AXIS_KEPT_DIMS {
        return Err(Error::internal("an axis launch with more kept axes than a view has"));
    }
    let mut slots = [(1u64, 0u64); AXIS_KEPT_DIMS];
    for (slot, dim) in slots.iter_mut().zip(kept.iter().rev()) {
        *slot = (dim.extent, dim.stride);
    }
    let [(extent0, stride0), (extent1, stride1), (extent2, stride2), (extent3, stride3), (extent4, stride4), (extent5, stride5), (extent6, stride6), (extent7, stride7)] =
        slots;
    Ok(AxisArgs {
        kept_dims: kept.len().max(1) as u64,
        extent0,
        stride0,
        extent1,
        stride1,
        extent2,
        stride2,
        extent3,
        stride3,
        extent4,
        stride4,
        extent5,
        stride5,
        extent6,
        stride6,
        extent7,
        stride7,
        ..AxisArgs::default()
    })
}

/// One axis launch's kernel and buffers (see [`Reducer::launch_axis`]):
/// what it reads, where its results (and a variance's means) go, and what
/// it writes there.
pub(crate) struct AxisLaunch {
    pub kernel: Kernel,
    pub input: Access,
    pub out: Access,
    pub means: Option<Access>,
    pub finish: Finish,
    pub finish_param: u64,
    pub partials: u64,
    /// Segments of the input in place of the pass's kept axes.
    pub segments: Option<SegmentsLaunch>,
}

/// The segments of an axis launch over segments ([`AxisLaunch::segments`]).
#[derive(Clone, Copy)]
pub(crate) struct SegmentsLaunch {
    /// The `segments + 1` offsets.
    pub offsets: Access,
    /// The status word the kernel flags invalid offsets in, if any.
    pub status: Option<Access>,
    /// The input's elements, into which the kernel clamps the offsets.
    pub len: u64,
}

/// What a pass of an axis reduction reads: elements of `input` reduced in
/// `accumulator`, the same type but in the first pass of a widened one.
#[derive(Clone, Copy, Debug)]
struct Reading {
    input: ElementType,
    accumulator: ElementType,
}

impl Reading {
    fn widened(self) -> bool {
        self.input != self.accumulator
    }

    /// The accumulators this pass leaves, as the next pass reads them.
    fn of_accumulators(self) -> Reading {
        Reading {
            input: self.accumulator,
            ..self
        }
    }

    /// The whole-input kernel of `op`.
    fn whole_kernel(self, op: Op) -> Kernel {
        match self.widened() {
            false => Kernel::Reduce {
                op,
                element: self.accumulator.kernel(),
            },
            true => Kernel::Widened {
                op,
                input: self.input.kernel(),
                accumulator: self.accumulator.kernel(),
            },
        }
    }

    /// The axis kernel of `op`.
    fn axis_kernel(self, op: Op) -> Kernel {
        match self.widened() {
            false => Kernel::Axis {
                op,
                element: self.accumulator.kernel(),
            },
            true => Kernel::WidenedAxis {
                op,
                input: self.input.kernel(),
                accumulator: self.accumulator.kernel(),
            },
        }
    }

    /// Whether `pass` runs the axis kernel (the row-wise kernels have no
    /// widened forms: widened rows go to the axis kernel).
    fn axis_route(self, pass: &Pass) -> bool {
        match pass.route() {
            Route::Whole => false,
            Route::Rows { .. } => self.widened(),
            Route::Axis => true,
        }
    }
}

/// The op of pass `index` of a reduction with `op`: after the first, the
/// passes combine results, without the op's element map (the square of
/// `SumOfSquares`, `NanSum`'s NaN to 0: see [`Op::combiner`]).
fn pass_op(op: Op, index: usize) -> Op {
    if index == 0 {
        op
    } else {
        op.combiner()
    }
}

/// Where the passes of one reduction keep what they hand on, in the
/// stream's scratch ([`Reducer::pass_scratch`]).
pub(crate) struct PassScratch {
    /// The two regions the results between passes alternate between.
    regions: [u64; 2],
    /// The split launches' partial slots.
    pub partials: u64,
}

impl PassScratch {
    /// Where pass `index` of `passes` writes its results: `out` for the
    /// last, else the regions in turn.
    pub fn destination(&self, index: usize, passes: usize, out: u64) -> u64 {
        match (index.saturating_add(1) == passes, index & 1) {
            (true, _) => out,
            (false, 0) => self.regions[0],
            (false, _) => self.regions[1],
        }
    }
}
