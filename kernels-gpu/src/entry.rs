//! The bodies of the entry points, as generic functions of their family's
//! argument struct ([`crate::abi`]). The PTX module exports one instance per
//! operator × element type (and per rung) under the names [`crate::abi`]
//! gives, each taking the struct's fields as parameters; the SIMT emulator
//! calls the same functions with the struct ([`crate::dispatch`]), so both
//! run exactly this code.

use crate::abi::{
    self, ArgArgs, AxisArgs, AxisPlan, ConvertArgs, DivideArgs, DotArgs, ExactArgs, ExactDotArgs, ExactSchedule,
    Finish, LadderArgs, ReduceArgs, SeedDotArgs, SegmentPlan, SegmentSchedule, SegmentedArgs, PARTIAL_SLOT_BYTES,
};
use crate::axis;
use crate::block;
use crate::convert::Narrow;
use crate::device;
use crate::device::UserScalar;
use crate::element::Element;
use crate::expansion::{
    self, Contiguous, ElementLayout, ExactElement, ExactFinish, ExactInput, ExactMap, ExactProducts, FastAcc,
    FastAccumulator, FastExact, Runs,
};
use crate::grid;
use crate::indexed::Indexed;
use crate::ladder::{self, dot::AtomicAdd, load::LoadShape, tree::TreeShape};
use crate::map::{ElementMap, Identity, Multiply, UserPairMap};
use crate::op::{AnyElement, Operator, Sum, User};
#[cfg(doc)]
use crate::op::{Max, Min};
use crate::place::{Placement, Results};
use crate::segment;
use crate::statistic::{Output, Real, Statistic};
use crate::thread;
use crate::wide::{Wide, WideSum};
use crate::widen::Widen;
use core::mem::size_of;

/// The [`Placement`] of an entry point's results, from its `placed_*` parameters.
macro_rules! placement {
    ($args:expr) => {
        Placement {
            dims: $args.placed_dims,
            extents: [
                $args.placed_extent0,
                $args.placed_extent1,
                $args.placed_extent2,
                $args.placed_extent3,
            ],
            strides: [
                $args.placed_stride0,
                $args.placed_stride1,
                $args.placed_stride2,
                $args.placed_stride3,
            ],
        }
    };
}

/// A reduction entry point: the map `M` applied to each element, combined
/// with `O`; see [`grid::reduce`] for the contract.
///
/// # Safety
/// The parameters are those [`crate::abi`] documents, as [`grid::reduce`] requires.
#[inline(always)]
pub unsafe fn reduce<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement>(args: ReduceArgs) {
    let source = thread::Mapped::<M>::new(device::to_global(args.input));
    let total = grid::reduce::<T, O, _>(source, args.len, args.partials as *mut u64, args.ticket as *mut u32);
    store(total, args.out)
}

/// Writes a whole-input reduction's result, where [`grid::reduce`] gave it.
///
/// # Safety
/// `out` is the address of a writable `T`.
#[inline(always)]
unsafe fn store<T: Element>(total: Option<T>, out: u64) {
    if let Some(total) = total {
        thread::store_result(device::to_global(out), total);
    }
}

/// A segmented entry point: one result of `M` then `O` per segment of
/// `input`, the segments given by `offsets` or, if `offsets` is null, rows of
/// `row_len` elements `row_pitch` apart (in groups, for strided rows), handed out as `SCHEDULE` (a
/// [`SegmentSchedule`]) says: in a fixed order ([`segment::reduce`]; with
/// [`SegmentSchedule::StridedRows`], the results placed as `placed_*` say),
/// or to warps or blocks as they finish ([`segment::reduce_balanced`], whose
/// counter and ticket are the first 12 bytes of `tickets`; `partials` is
/// not used). See [`crate::abi::SegmentPlan`].
///
/// # Safety
/// The parameters are those [`crate::abi::SegmentPlan`] documents, as
/// [`segment::reduce`] or [`segment::reduce_balanced`] requires for
/// `SCHEDULE`.
#[inline(always)]
pub unsafe fn segmented<T: Element, M: ElementMap<T>, O: Operator<T> + AnyElement, const SCHEDULE: u8>(
    args: SegmentedArgs,
) {
    // A null pointer means "none"; it must not go through `to_global`.
    let global_or_zero = |address: u64| if address == 0 { 0 } else { device::to_global(address) };
    let segments = segment::Segments {
        offsets: global_or_zero(args.offsets),
        row_len: args.row_len,
        row_pitch: args.row_pitch,
        row_group: args.row_group,
        group_pitch: args.group_pitch,
        runs: 1,
        run_pitch: 0,
        count: args.segments,
        len: args.len,
        status: global_or_zero(args.status),
    };
    let (input, plan) = (device::to_global(args.input), SegmentPlan::from_bits(args.plan));
    let tickets = device::to_global(args.tickets);
    let out = device::to_global(args.out);
    let partials = device::to_global(args.partials);
    const WARPS_TAKE: u8 = SegmentSchedule::WarpsTake as u8;
    const BLOCKS_TAKE: u8 = SegmentSchedule::BlocksTake as u8;
    const STRIDED_ROWS: u8 = SegmentSchedule::StridedRows as u8;
    let in_order = Results::in_order(out);
    // Only strided rows come in groups: a constant 0 takes the grouping out
    // of the other kernels (and their registers).
    let ungrouped = segment::Segments {
        row_group: 0,
        group_pitch: 0,
        ..segments
    };
    match SCHEDULE {
        WARPS_TAKE => segment::reduce_balanced::<T, M, O, false>(input, ungrouped, plan, tickets, in_order),
        BLOCKS_TAKE => segment::reduce_balanced::<T, M, O, true>(input, ungrouped, plan, tickets, in_order),
        STRIDED_ROWS => {
            let placed = Results::placed(out, placement!(args));
            segment::reduce::<T, M, O, true>(input, segments, plan, partials, tickets, placed)
        }
        _ => segment::reduce::<T, M, O, false>(input, ungrouped, plan, partials, tickets, in_order),
    }
}

/// The exact sum of each segment of `input` (each element mapped by `M`),
/// rounded once, with `MEAN` divided by the segment's length, the segments
/// as [`segmented`] takes them, handed out as `SCHEDULE` (an
/// [`ExactSchedule`]) says: in a fixed order by teams of any size
/// ([`segment::reduce_exact`]) or of one thread ([`segment::reduce_exact_per_thread`]),
/// as rows in runs (each row `args.runs` runs of its length,
/// `args.run_pitch` elements apart, summed as one row: a view's reduced
/// axes apart in memory), or to warps as they finish
/// ([`segment::reduce_exact_balanced`], whose counter and ticket are the
/// first 12 bytes of `tickets`); results in order. `MEAN` and each
/// schedule are kernels of their own, not run-time parameters, so that
/// the sums' kernels keep their code: with the division behind a
/// parameter, the `f64` per-thread kernel spilled 40 bytes instead of 32
/// (`ptxas -v`, sm_90).
///
/// # Safety
/// As [`segmented`] with [`SegmentSchedule::FixedOrder`] (for
/// [`ExactSchedule::Runs`], every run of each row readable; for
/// [`ExactSchedule::PerThread`], a plan of teams of one thread and one
/// block per segment; for [`ExactSchedule::WarpsTake`], as
/// [`SegmentSchedule::WarpsTake`]).
#[inline(always)]
pub unsafe fn exact_segments<T: ExactElement, M: ExactMap<T>, const SCHEDULE: u8, const MEAN: bool>(
    args: SegmentedArgs,
) {
    const PER_THREAD: u8 = ExactSchedule::PerThread as u8;
    const RUNS: u8 = ExactSchedule::Runs as u8;
    const WARPS_TAKE: u8 = ExactSchedule::WarpsTake as u8;
    let global_or_zero = |address: u64| if address == 0 { 0 } else { device::to_global(address) };
    let segments = segment::Segments {
        offsets: global_or_zero(args.offsets),
        row_len: args.row_len,
        row_pitch: args.row_pitch,
        row_group: 0,
        group_pitch: 0,
        // The parameters' default, 0, is one run.
        runs: if SCHEDULE == RUNS { Ord::max(args.runs, 1) } else { 1 },
        run_pitch: if SCHEDULE == RUNS { args.run_pitch } else { 0 },
        count: args.segments,
        len: args.len,
        status: global_or_zero(args.status),
    };
    let (input, out) = (
        device::to_global(args.input),
        Results::in_order(device::to_global(args.out)),
    );
    // The mean's kernels are their own; the variance's read their finish
    // (with its correction); the sums' is a constant.
    let finish = match (MEAN, M::READS_SHIFTS) {
        (true, _) => ExactFinish::plain(Finish::Mean),
        (false, true) => ExactFinish {
            finish: Finish::from_bits(args.finish),
            correction: f64::from_bits(args.finish_param),
        },
        (false, false) => ExactFinish::plain(Finish::Value),
    };
    use segment::{reduce_exact, reduce_exact_balanced, reduce_exact_per_thread};
    let (plan, shifts) = (SegmentPlan::from_bits(args.plan), args.shifts);
    let (partials, tickets) = (device::to_global(args.partials), device::to_global(args.tickets));
    match SCHEDULE {
        PER_THREAD => reduce_exact_per_thread::<T, M, false, false>(input, segments, out, shifts, finish),
        WARPS_TAKE => reduce_exact_balanced::<T, M>(input, segments, plan, tickets, out, shifts, finish),
        RUNS => reduce_exact::<T, M, false, true>(input, segments, plan, partials, tickets, out, shifts, finish),
        _ => reduce_exact::<T, M, false, false>(input, segments, plan, partials, tickets, out, shifts, finish),
    }
}

/// An axis entry point: one result of `M` then `O` per position of the
/// kept axes, along the reduced axis; see [`axis::reduce`].
///
/// # Safety
/// The parameters are those [`crate::abi::AxisPlan`] documents, as
/// [`axis::reduce`] requires.
#[inline(always)]
pub unsafe fn axis<T: Element + Widen<T>, M: ElementMap<T>, O: Operator<T>>(args: AxisArgs) {
    axis_fold::<axis::Plain<T, T, M, O>>(args)
}

/// The exact sum's axis entry point: one result per position of the kept
/// axes, each the exact sum of its elements (mapped by `M`) along the
/// reduced axis rounded once, then finished; see [`axis::ExactAlong`] and
/// [`axis::reduce`].
///
/// # Safety
/// As [`axis()`]; where `M` reads per-result values, `means` holds a `T`
/// per result, in order.
#[inline(always)]
pub unsafe fn exact_axis<T: ExactElement + Widen<T>, M: ExactMap<T>>(args: AxisArgs) {
    axis_fold::<axis::ExactAlong<T, M>>(args)
}

/// The gather entry point: the `outputs` elements of the view the kept
/// axes describe (of `T`s at `input`) copied to `out` in their order; the
/// other fields of [`AxisArgs`] unread. See [`axis::gather`].
///
/// # Safety
/// As [`axis::gather`].
#[inline(always)]
pub unsafe fn gather<T: Element>(args: AxisArgs) {
    axis::gather::<T>(args.input, args.outputs, kept_axes(&args), args.out)
}

/// A widened axis entry point: elements of `In`, each converted to `A` as
/// it is read, combined with `O` in `A`, one `A` per result; see
/// [`axis::reduce`].
///
/// # Safety
/// As [`axis()`], the tensor's elements being `In`s and `out`'s `A`s.
#[inline(always)]
pub unsafe fn axis_widened<In: Widen<A>, A: Element, O: Operator<A>>(args: AxisArgs) {
    axis_fold::<axis::Plain<In, A, Identity, O>>(args)
}

/// A statistic's axis entry point over elements of `In`, each converted to
/// `S::Value` as it is read; see [`crate::statistic`] and [`axis::reduce`].
///
/// # Safety
/// As [`axis()`], with `finish`, `finish_param` and `means` as
/// [`crate::abi::AxisPlan`] documents them for `S`.
#[inline(always)]
pub unsafe fn statistic<In: Widen<S::Value>, S: Statistic>(args: AxisArgs) {
    axis_fold::<axis::FromElements<In, S>>(args)
}

/// An argmax (`O` = [`Max`]) or argmin (`O` = [`Min`]) axis entry point:
/// per position of the kept axes, the position along the reduced axis of
/// the preferred element of `In` (compared as `A`, converted exactly), a
/// `u64` to `out`; see [`axis::ArgAlong`]. The reduced axis is not empty
/// (the host rejects it).
///
/// # Safety
/// As [`axis()`], with room for a `u64` per result at `out`.
#[inline(always)]
pub unsafe fn arg_axis<In: Widen<A>, A: Element, O: Operator<Indexed<A>>>(args: AxisArgs) {
    axis_fold::<axis::ArgAlong<In, A, O>>(args)
}

/// A statistic's axis entry point over summaries an earlier launch stored.
///
/// # Safety
/// As [`statistic`], the tensor being `S`'s stored summaries.
#[inline(always)]
pub unsafe fn statistic_states<S: Statistic>(args: AxisArgs) {
    axis_fold::<axis::FromStates<S>>(args)
}

/// [`axis::reduce`] of `F` with the launch's parameters.
///
/// # Safety
/// As [`axis::reduce`], for the parameters [`crate::abi::AxisPlan`] documents.
#[inline(always)]
unsafe fn axis_fold<F: axis::AxisFold>(args: AxisArgs) {
    axis::reduce::<F>(axis_launch(&args), kept_axes(&args), axis_output(&args))
}

/// The kept axes of an axis entry point.
#[inline(always)]
fn kept_axes(args: &AxisArgs) -> axis::Kept {
    axis::Kept {
        dims: args.kept_dims,
        extents: [
            args.extent0,
            args.extent1,
            args.extent2,
            args.extent3,
            args.extent4,
            args.extent5,
            args.extent6,
            args.extent7,
        ],
        strides: [
            args.stride0,
            args.stride1,
            args.stride2,
            args.stride3,
            args.stride4,
            args.stride5,
            args.stride6,
            args.stride7,
        ],
    }
}

/// The launch parameters of an axis entry point but its kept axes.
#[inline(always)]
fn axis_launch(args: &AxisArgs) -> axis::Launch {
    axis::Launch {
        input: args.input,
        outputs: args.outputs,
        reduced: args.reduced,
        reduced_stride: args.reduced_stride,
        plan: AxisPlan::from_bits(args.plan),
        partials: args.partials,
        tickets: args.tickets,
    }
}

/// What an axis entry point writes, and where.
#[inline(always)]
fn axis_output(args: &AxisArgs) -> Output {
    Output {
        finish: Finish::from_bits(args.finish),
        finish_param: args.finish_param,
        means: args.means,
        out: args.out,
        placement: placement!(args),
    }
}

/// A statistic's entry point over the segments of a contiguous input
/// (`offsets`, `status` and `reduced` as [`crate::abi::AxisPlan`] documents);
/// see [`axis::reduce_segments`].
///
/// # Safety
/// As [`statistic`], for segments.
#[inline(always)]
pub unsafe fn statistic_segments<In: Widen<S::Value>, S: Statistic>(args: AxisArgs) {
    let segments = segment::Segments {
        offsets: device::to_global(args.offsets),
        row_len: 0,
        row_pitch: 0,
        row_group: 0,
        group_pitch: 0,
        runs: 1,
        run_pitch: 0,
        count: args.outputs,
        len: args.reduced,
        status: if args.status == 0 {
            0
        } else {
            device::to_global(args.status)
        },
    };
    axis::reduce_segments::<axis::FromElements<In, S>>(axis_launch(&args), segments, axis_output(&args))
}

/// A widening entry point: `In` elements, each converted to `A` as it is
/// read, combined with `O` in `A`; see [`grid::reduce`].
///
/// # Safety
/// As [`reduce`], with `len` elements of `In` at `input` and an `A` at `out`.
#[inline(always)]
pub unsafe fn reduce_widened<In: Widen<A>, A: Element, O: Operator<A> + AnyElement>(args: ReduceArgs) {
    let source = thread::Widened::<In>::new(device::to_global(args.input));
    let total = grid::reduce::<A, O, _>(source, args.len, args.partials as *mut u64, args.ticket as *mut u32);
    store(total, args.out)
}

/// An argmax (`O` = [`Max`]) or argmin (`O` = [`Min`]) entry point: the
/// preferred element of `len` elements of `In` (converted to `A` as they
/// are read, exactly) and the lowest index holding it, in one pass; see
/// [`crate::indexed`] for the rules and [`grid::reduce`] for the contract.
/// `len` must not be zero (the host rejects empty inputs).
///
/// # Safety
/// As [`reduce`], with `len` elements of `In` at `input`, and a writable
/// `A` at `value_out` and `u64` at `index_out` in place of `out`.
#[inline(always)]
pub unsafe fn arg<In: Widen<A>, A: Element, O: Operator<Indexed<A>> + AnyElement>(args: ArgArgs) {
    let source = thread::Widened::<In>::new(device::to_global(args.input));
    let (partials, ticket) = (args.partials as *mut u64, args.ticket as *mut u32);
    if let Some(best) = grid::reduce::<Indexed<A>, O, _>(source, args.len, partials, ticket) {
        thread::store_element(device::to_global(args.value_out), best.value);
        thread::store_element(device::to_global(args.index_out), best.index);
    }
}

/// A dot-product entry point: the sum of `a[i] * b[i]`; see [`grid::reduce`].
///
/// # Safety
/// As [`reduce`], with two inputs of `len` elements each.
#[inline(always)]
pub unsafe fn dot<T: Element>(args: DotArgs) {
    let source = thread::Pairs::<Multiply>::new(device::to_global(args.a), device::to_global(args.b));
    let total = grid::reduce::<T, Sum, _>(source, args.len, args.partials as *mut u64, args.ticket as *mut u32);
    store(total, args.out)
}

/// A user operator's entry point over two inputs: its combine of its map
/// of each pair; see [`grid::reduce`] and `crate::user`.
///
/// # Safety
/// As [`dot`].
#[inline(always)]
pub unsafe fn user_pair<T: Element + UserScalar>(args: DotArgs) {
    let source = thread::Pairs::<UserPairMap>::new(device::to_global(args.a), device::to_global(args.b));
    let total = grid::reduce::<T, User, _>(source, args.len, args.partials as *mut u64, args.ticket as *mut u32);
    store(total, args.out)
}

/// The exact sum's entry point: every element (mapped by `M`: NaN as zero
/// for the NaN-ignoring sum) added exactly, the total
/// rounded once; the fast path and, where it cannot be exact, the last
/// block's exact pass (see [`crate::expansion`]); finished as `form`
/// says ([`abi::exact_finish`], [`ExactFinish::of`]: with
/// [`abi::EXACT_MEAN`] divided by `len`); the map of the part at `shifts`.
/// Otherwise as [`reduce`], with `scratch` for the exact pass.
///
/// With `rows` past one, each of `rows` consecutive rows of `len`
/// elements is summed so by its own `grid / rows` consecutive blocks
/// ([`RowPart`]): row `r`'s map is part `r`'s, its result goes to the
/// `r`-th `T` at `out`, its ticket is the `r`-th `u32` at `ticket`, its
/// exact pass uses the `r`-th state's room at `scratch`. A grid of one
/// block a row (past the blocks an SM holds, which then take the rows as
/// others finish) touches no partial slot or ticket. With `RUNS`
/// ([`abi::Kernel::ExactRowRuns`]), row `r` starts `r · row_pitch`
/// elements after `input` and its `len` elements lie in runs of
/// `run_len`, `run_pitch` apart ([`Runs`]), each run and row whole 16-byte
/// vectors where the input is aligned.
///
/// # Safety
/// As [`reduce`] (`rows · len` elements at `input`, or with `RUNS` every
/// element of every row's runs; `rows` tickets at zero where a row has
/// more than one block; room for `rows` results), the grid a multiple of
/// `rows`, and `scratch` holds `rows` times
/// [`scratch_words`](crate::expansion::scratch_words) writable, 8-byte
/// aligned words that no other launch uses concurrently.
#[inline(always)]
pub unsafe fn exact_sum<T: ExactElement, M: ExactMap<T>, const RUNS: bool>(args: ExactArgs) {
    if RUNS {
        let runs = Runs::new(args.run_len, args.run_pitch);
        exact_sum_of_rows::<T, M, Runs>(args, args.row_pitch, runs)
    } else {
        exact_sum_of_rows::<T, M, Contiguous>(args, args.len, Contiguous)
    }
}

/// [`exact_sum`] of rows `pitch` elements apart, each laid out as `layout`
/// says.
///
/// # Safety
/// As [`exact_sum`].
#[inline(always)]
unsafe fn exact_sum_of_rows<T: ExactElement, M: ExactMap<T>, L: ElementLayout>(args: ExactArgs, pitch: u64, layout: L) {
    let at = RowPart::of_block(args.rows);
    let input = device::to_global(args.input) + at.row * pitch * size_of::<T>() as u64;
    let map = M::of_part(args.shifts, at.row);
    let source = ExactInput::<T, M, L>::laid_out(input, map, layout);
    let Some(total) = fast_total::<T, M::Fast, _>(source, args.len, (args.partials, args.ticket), at) else {
        return;
    };
    // The total is thread 0's; the exact pass, if it needs one, the block's.
    let inexact = block::broadcast_from_thread_0(device::thread_idx_x() == 0 && !total.is_exact());
    let result = if inexact {
        let scratch = device::to_global(args.scratch) + at.row * 8 * expansion::scratch_words::<T>() as u64;
        expansion::sum_exactly::<T>(args.len, scratch, move |index| {
            expansion::mapped_element::<T, M>(input, map, layout.offset(index))
        })
    } else {
        (device::thread_idx_x() == 0).then(|| M::Fast::round(total))
    };
    // Only the variance's kernels finish more than a mean.
    let finish = match M::READS_SHIFTS {
        true => ExactFinish {
            finish: abi::exact_finish(args.form),
            correction: f64::from_bits(args.finish_param),
        },
        false if args.form & abi::EXACT_MEAN != 0 => ExactFinish::plain(Finish::Mean),
        false => ExactFinish::plain(Finish::Value),
    };
    let out = args.out + at.row * size_of::<T>() as u64;
    store(result.map(|sum| finish.of::<T, M>(map, sum, args.len)), out)
}

/// The exact sum's state form, how the sums of several parts (shards on
/// several GPUs) are combined exactly: the exact state of the `len`
/// elements at `input` (mapped by `M`), for [`exact_merge`]. A kernel of
/// its own, so that [`exact_sum`]'s registers are its alone.
///
/// # Safety
/// As [`exact_sum`], and `out` has room for a state.
#[inline(always)]
pub unsafe fn exact_state<T: ExactElement, M: ExactMap<T>>(args: ExactArgs) {
    let (input, scratch, out) = (
        device::to_global(args.input),
        device::to_global(args.scratch),
        device::to_global(args.out),
    );
    let map = M::of_part(args.shifts, 0);
    let Some(total) = exact_expansion::<T, M>(input, map, &args, RowPart::of_block(1)) else {
        return;
    };
    let inexact = block::broadcast_from_thread_0(device::thread_idx_x() == 0 && !total.is_exact());
    if inexact {
        expansion::sum_exactly_as_state::<T>(args.len, scratch, out, move |index| {
            expansion::mapped_element::<T, M>(input, map, index)
        });
    } else if device::thread_idx_x() == 0 {
        expansion::store_state(total.exact_of::<T>(), out);
    }
}

/// The merge of the `len` exact states at `input` by block 0 (the others
/// return), rounded, or as a state with [`abi::EXACT_STATE_OUT`]. Apart
/// from [`exact_state`]: with this branch in front of its loop, ptxas
/// issued the loop's four vector loads one by one instead of together
/// (SASS of `sm_90`, 2026-11-30), and the loop ran at 63% of an H200's
/// DRAM bandwidth against [`exact_sum`]'s 88%.
///
/// # Safety
/// `input` holds `len < 2^30` states, `scratch` as [`exact_sum`]'s, `out`
/// room for a `T`, or a state with [`abi::EXACT_STATE_OUT`].
#[inline(always)]
pub unsafe fn exact_merge<T: ExactElement>(args: ExactArgs) {
    if device::block_idx_x() != 0 {
        return;
    }
    let (input, scratch, out) = (
        device::to_global(args.input),
        device::to_global(args.scratch),
        device::to_global(args.out),
    );
    if let Some(merged) = expansion::merge_states::<T>(input, args.len, scratch) {
        if args.form & abi::EXACT_STATE_OUT != 0 {
            expansion::store_state(merged, out);
        } else {
            thread::store_result(out, merged.round());
        }
    }
}

/// Which row of a whole-input exact launch a block sums, and which of the
/// row's `parts` blocks it is: a grid of `rows · parts` blocks, each row's
/// consecutive (one row, the whole input: every block of the grid).
#[derive(Clone, Copy)]
struct RowPart {
    row: u64,
    part: u32,
    parts: u32,
}

impl RowPart {
    /// This block's, in a launch over `rows` rows (0 counts as one).
    ///
    /// # Safety
    /// The grid is a multiple of `rows`.
    #[inline(always)]
    unsafe fn of_block(rows: u64) -> Self {
        let (block, grid) = (device::block_idx_x(), device::grid_dim_x());
        // At most one block a row: `rows` fits the grid's `u32`.
        let rows = Ord::min(Ord::max(rows, 1), u64::from(grid)) as u32;
        if rows == 1 {
            return RowPart {
                row: 0,
                part: block,
                parts: grid,
            };
        }
        // `checked_*`: no panic path in the PTX (`rows` and `parts` are not
        // zero: `rows` is at most the grid).
        let parts = grid.checked_div(rows).unwrap_or(1);
        RowPart {
            row: u64::from(block.checked_div(parts).unwrap_or(0)),
            part: block.checked_rem(parts).unwrap_or(0),
            parts,
        }
    }
}

/// The fast path of the exact sum over this block's row: `Some` in the
/// row's last block to finish (thread 0's value is the total), `None` in
/// the others.
///
/// # Safety
/// As [`exact_sum`], `input` this block's row.
#[inline(always)]
unsafe fn exact_expansion<T: ExactElement, M: ExactMap<T>>(
    input: u64,
    map: M,
    args: &ExactArgs,
    at: RowPart,
) -> Option<FastAcc<T, M>> {
    fast_total::<T, M::Fast, _>(
        ExactInput::<T, M>::new(input, map),
        args.len,
        (args.partials, args.ticket),
        at,
    )
}

/// The fast accumulator `F` of the `len` values of `source` over the
/// blocks of row `at.row`, `partials` (a slot per block of the grid) and
/// `tickets` (a `u32` per row) their slots and counters: `Some` in the
/// row's last block to finish (thread 0's value is the total), `None` in
/// the others.
///
/// # Safety
/// As [`exact_sum`], `source` holding `len` values.
#[inline(always)]
unsafe fn fast_total<T: ExactElement, F: FastExact<T>, S: thread::Source<F::Acc>>(
    source: S,
    len: u64,
    (partials, tickets): (u64, u64),
    at: RowPart,
) -> Option<F::Acc> {
    let team = thread::Team {
        worker: u64::from(at.part),
        workers: u64::from(at.parts),
        threads: u64::from(device::block_dim_x()),
        thread: u64::from(device::thread_idx_x()),
    };
    let accumulated = thread::accumulate::<F::Acc, F, _>(source, len, team);
    let block_total = block::reduce::<F::Acc, F>(accumulated);
    if at.parts == 1 {
        return Some(block_total);
    }
    let (partials, ticket) = (
        device::to_global(partials),
        device::to_global(tickets) + at.row * size_of::<u32>() as u64,
    );
    let slot = partials + u64::from(device::block_idx_x()) * PARTIAL_SLOT_BYTES;
    if !grid::finished_last(slot, ticket, at.parts, block_total) {
        return None;
    }
    let first = slot - u64::from(at.part) * PARTIAL_SLOT_BYTES;
    Some(grid::combine_partials::<F::Acc, F>(first, at.parts, ticket))
}

/// The exact dot product's entry point: each product `a[i] * b[i]`
/// rounded to `T` (as [`dot`] forms it), the products added exactly on
/// [`Wide`]s ([`ExactProducts`]), the total rounded once; where the fast
/// path cannot be exact, the last block's exact pass, as in [`exact_sum`].
///
/// # Safety
/// As [`dot`], and `scratch` as in [`exact_sum`].
#[inline(always)]
pub unsafe fn exact_dot<T: ExactElement>(args: ExactDotArgs)
where
    WideSum: FastExact<T, Acc = Wide>,
{
    let products = ExactProducts::<T>::new(device::to_global(args.a), device::to_global(args.b));
    let Some(total) =
        fast_total::<T, WideSum, _>(products, args.len, (args.partials, args.ticket), RowPart::of_block(1))
    else {
        return;
    };
    let inexact = block::broadcast_from_thread_0(device::thread_idx_x() == 0 && !total.is_exact());
    let result = if inexact {
        // By reference: captured by value, `products` took the `f64`
        // kernel from 56 registers to 71 and its 2^24 pairs from 75 µs to
        // 95 (H200); by reference it is one local store per thread.
        expansion::sum_exactly::<T>(args.len, device::to_global(args.scratch), |index| {
            products.product(index)
        })
    } else {
        (device::thread_idx_x() == 0).then(|| <WideSum as FastExact<T>>::round(total))
    };
    store(result, args.out)
}

/// [`exact_dot`]'s sum as an exact state at `out` (for [`exact_merge`]):
/// how the pairs of shards on several GPUs are summed exactly. A kernel of
/// its own, so that [`exact_dot`]'s registers are its alone.
///
/// # Safety
/// As [`exact_dot`], and `out` has room for a state.
#[inline(always)]
pub unsafe fn exact_dot_state<T: ExactElement>(args: ExactDotArgs)
where
    WideSum: FastExact<T, Acc = Wide>,
{
    let products = ExactProducts::<T>::new(device::to_global(args.a), device::to_global(args.b));
    let Some(total) =
        fast_total::<T, WideSum, _>(products, args.len, (args.partials, args.ticket), RowPart::of_block(1))
    else {
        return;
    };
    let (scratch, out) = (device::to_global(args.scratch), device::to_global(args.out));
    let inexact = block::broadcast_from_thread_0(device::thread_idx_x() == 0 && !total.is_exact());
    if inexact {
        // By reference, as in `exact_dot`.
        expansion::sum_exactly_as_state::<T>(args.len, scratch, out, |index| products.product(index));
    } else if device::thread_idx_x() == 0 {
        expansion::store_state(total.exact_of::<T>(), out);
    }
}

/// The mean from a sum: each of the `len` `T`s at `out` divided, in place,
/// by `count` rounded to `T` (`sum / count as T`, as the host divides a
/// whole input's sum), by a grid-stride loop.
///
/// # Safety
/// `out` holds `len` readable and writable `T`s that no other thread of
/// the launch touches.
#[inline(always)]
pub unsafe fn divide_by_count<T: Real>(args: DivideArgs) {
    let count = T::from_count(args.count);
    let bytes = u64::from(T::WORDS) * 4;
    let stride = u64::from(device::grid_dim_x()) * u64::from(device::block_dim_x());
    let mut i = device::index_1d();
    while i < args.len {
        let address = device::to_global(args.out + i * bytes);
        let sum: T = thread::load_written_element(address);
        thread::store_result(address, sum.div(count));
        i += stride;
    }
}

/// A cast reduction's results in the caller's type: each of the `len`
/// `From`s at `input` (the reduction's results, in the stream's scratch)
/// converted to `To` ([`Narrow`]) and stored at `out`, by a grid-stride loop.
///
/// # Safety
/// `input` holds `len` readable `From`s and `out` room for `len` writable
/// `To`s, each element-aligned, not overlapping.
#[inline(always)]
pub unsafe fn convert<From: Element, To: Narrow<From>>(args: ConvertArgs) {
    let bytes = u64::from(From::WORDS) * 4;
    let stride = u64::from(device::grid_dim_x()) * u64::from(device::block_dim_x());
    let mut i = device::index_1d();
    while i < args.len {
        let wide: From = thread::load_written_element(device::to_global(args.input + i * bytes));
        To::store(device::to_global(args.out + i * To::BYTES), wide);
        i += stride;
    }
}

/// A ladder rung's entry point; see [`ladder::rung`].
///
/// # Safety
/// As [`ladder::rung`].
#[inline(always)]
pub unsafe fn ladder<T: Element, O: Operator<T>, L: LoadShape, R: TreeShape>(args: LadderArgs) {
    ladder::rung::<T, O, L, R>(args.input as *const T, args.len, args.out as *mut T)
}

/// Seed 004's naive dot product; see [`ladder::dot::atomic_per_element`].
///
/// # Safety
/// As [`ladder::dot::atomic_per_element`].
#[inline(always)]
pub unsafe fn dot_atomic_per_element<T: AtomicAdd>(args: SeedDotArgs) {
    ladder::dot::atomic_per_element::<T>(args.a as *const T, args.b as *const T, args.len, args.out as *mut T)
}

/// Seed 004's block-tree dot product; see [`ladder::dot::block_tree`].
///
/// # Safety
/// As [`ladder::dot::block_tree`].
#[inline(always)]
pub unsafe fn dot_block_tree<T: AtomicAdd>(args: SeedDotArgs) {
    ladder::dot::block_tree::<T>(args.a as *const T, args.b as *const T, args.len, args.out as *mut T)
}
