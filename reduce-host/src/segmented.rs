//! Segmented and row-wise reductions of an [`Op`]: one result per segment of
//! an input ([`Over::Segments`](crate::Over::Segments)), or per row of a
//! row-major matrix ([`Over::Rows`](crate::Over::Rows)), in one kernel
//! launch. A private module: the public rules are on [`Over`](crate::Over)
//! and in the crate docs (*Segments, rows and axes*); this is how the
//! kernels meet them.
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use cust::prelude::*;
//! use reduce::{Op, Over};
//! let _ctx = cust::quick_init()?;
//! // Segments [0, 2), [2, 2) (empty) and [2, 5) of five values.
//! let values = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0])?;
//! let offsets = DeviceBuffer::from_slice(&[0u64, 2, 2, 5])?;
//! let sums = reduce::reduce_over(&values, Op::Sum, Over::Segments(&offsets))?.values;
//! assert_eq!(sums.as_host_vec()?, [3.0, 0.0, 12.0]);
//! let maxima = reduce::reduce_over(&values, Op::Max, Over::Segments(&offsets))?.values;
//! assert_eq!(maxima.as_host_vec()?, [2.0, f32::NEG_INFINITY, 5.0]); // empty: max's identity
//!
//! // The rows of a 2 × 3 row-major matrix.
//! let matrix = DeviceBuffer::from_slice(&[1i64, 2, 3, 10, 20, 30])?;
//! let rows = reduce::reduce_over(&matrix, Op::Sum, Over::Rows { rows: 2, len: 3 })?.values;
//! assert_eq!(rows.as_host_vec()?, [6, 60]);
//! # Ok(()) }
//! ```
//!
//! # Semantics
//! - **Offsets**: `segments + 1` offsets as `u64` (as CUB's and CSR's
//!   `offsets`): segment `s` is `values[offsets[s]..offsets[s + 1]]`.
//!   Offsets must not decrease and must not exceed `values.len()`; segments
//!   may be empty, and need not cover `values` (elements before the first
//!   offset and after the last are not read). For `i64` offsets, the bits of
//!   non-negative `i64`s are those of the same `u64`s.
//! - **Invalid offsets**: the blocking calls ([`crate::reduce_over`],
//!   [`Reducer::reduce_over`]) return [`Error::InvalidSegments`] naming
//!   the first bad segment. [`Scope::reduce_into`](crate::Scope::reduce_into),
//!   which does not wait for the GPU, cannot report them: it clamps every offset into
//!   `[0, values.len()]` (a segment whose end is before its begin is empty),
//!   so nothing outside `values` is read, and leaves the clamped results.
//! - **Empty segments** give the operator's identity, as in CUB: 0 for sums,
//!   1 for products, and for `Max`/`MaxAbs` the type's lowest value (`-inf`
//!   for floats, `MIN` for integers), for `Min` its highest (`+inf`, `MAX`);
//!   `NanMax`/`NanMin` of floats give NaN, as for a segment of only NaNs
//!   (of integers, `MIN`/`MAX`). Unlike [`crate::max`] of an empty input,
//!   this is not an error: one empty segment must not fail the others; check
//!   the segment's length where an empty maximum matters.
//! - Each segment's result follows the rules of a whole-input reduction with
//!   the same op ([`Op`]: NaN, overflow, signed zeros).
//! - **Determinism**: the launch ([`Reducer::segmented_launch_shape`]) depends
//!   only on the number of segments, the input length, the element type and
//!   the device, so each result is bitwise the same on every run.
//!
//! # How the work is divided
//! A segment is reduced by a *team* of threads: a group of 1 to 32 lanes of a
//! warp for short segments (many segments per warp, combined with shuffles),
//! several warps or a whole block for longer ones, and several blocks for a
//! few long segments (their partials are combined in index order by the last
//! block to finish, as the whole-input kernel does). The team size is the
//! largest power of two that gives each thread at least one full tile of
//! four 16-byte loads of an average segment; the grid is sized as for
//! whole-input reductions. The choice follows the *average* segment length:
//! a few very long segments among many short ones are read by teams sized for
//! the short ones. Segments given by offsets and read by teams of at least
//! 16 lanes, enough of them for at least 4 takes per taker, are handed out
//! to warps (for teams of several warps, to blocks) as they finish, about
//! 32 KiB of segments at a time from a counter in the reducer's workspace,
//! rather than in a fixed order: with random lengths, a fixed share leaves
//! the GPU waiting at the end for the warps (or blocks) that drew the
//! longest. Which warp or block reduces a segment does not change its
//! result. Rows of 1, 2 or 4 `f32`s (1 or 2 of 8 bytes) in a 16-byte
//! aligned matrix are read a 16-byte vector of whole rows at a time, as a
//! whole-input reduction reads; rows of one element are then a copy (through
//! the op), bound by the GPU's read-and-write bandwidth.

use crate::axes::RowRuns;
use crate::backend::launcher::StreamHandle;
use crate::backend::launcher::{Access, Launch};
use crate::backend::Backend;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::placement::Placement;
use crate::reducer::{checked_parts, ExactOf, Reducer};
use crate::shape::{self, SegmentedShape, Teams};
use kernels_gpu::abi::Op;
use kernels_gpu::abi::{ExactSchedule, Finish, Kernel, SegmentSchedule, SegmentedArgs};

/// What a segmented launch computes for each segment.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PerSegment {
    /// The reduction with the kernels' operator.
    Op(Op),
    /// An exact sum, rounded once ([`crate::ExactSum`],
    /// [`crate::ExactNanSum`]): the fixed-order schedule's kernel of its own.
    Exact(ExactOf),
}

impl From<Op> for PerSegment {
    fn from(op: Op) -> Self {
        PerSegment::Op(op)
    }
}

/// A row of one run ([`Layout::Rows`]).
const ONE_RUN: (u64, u64) = (1, 0);

/// Where the segments of a call are.
#[derive(Clone, Copy)]
pub(crate) enum Layout {
    /// `segments + 1` offsets at this address.
    Offsets { address: u64, segments: usize },
    /// `rows` rows of `row_len` elements, each `pitch` elements after the
    /// one before, in groups of `group.0` rows, each `group.1` elements
    /// after the one before (`(0, 0)`: one group), their results placed as
    /// `placed` says; each row `runs.0` runs of `row_len` elements, each
    /// `runs.1` elements after the one before (`(1, 0)`: one run; only the
    /// exact kernel reads several).
    Rows {
        rows: usize,
        row_len: usize,
        pitch: u64,
        group: (u64, u64),
        placed: Placement,
        runs: (u64, u64),
    },
}

impl Layout {
    pub(crate) fn segments(self) -> usize {
        match self {
            Layout::Offsets { segments, .. } => segments,
            Layout::Rows { rows, .. } => rows,
        }
    }

    /// The layout of `offsets`, or [`Error::InvalidSegments`] if it has no element.
    pub(crate) fn of_offsets<B: Backend>(offsets: &B::Slice<u64>) -> Result<Self> {
        let (address, len) = checked_parts::<B, u64>(offsets)?;
        Ok(Layout::Offsets {
            segments: segment_count(len)?,
            address,
        })
    }

    /// The layout of a `rows × row_len` matrix of `len` elements.
    pub(crate) fn of_rows(len: usize, rows: usize, row_len: usize) -> Result<Self> {
        check_rows(len, rows, row_len)?;
        Ok(Layout::Rows {
            rows,
            row_len,
            pitch: row_len as u64,
            group: (0, 0),
            placed: Placement::IN_ORDER,
            runs: ONE_RUN,
        })
    }

    /// The layout of a pass's rows ([`Route::Rows`](crate::axes::Route)),
    /// whose elements the view's check put inside the input.
    pub(crate) fn of_pass_rows(
        rows: usize,
        row_len: usize,
        (pitch, group): (u64, (u64, u64)),
        placed: Placement,
    ) -> Self {
        Layout::Rows {
            rows,
            row_len,
            pitch,
            group,
            placed,
            runs: ONE_RUN,
        }
    }

    /// The layout of rows in runs ([`RowRuns`](crate::axes::RowRuns)) of
    /// an exact sum, whose elements the view's check put inside the input.
    pub(crate) fn of_row_runs(row_runs: RowRuns) -> Self {
        Layout::Rows {
            rows: row_runs.rows,
            row_len: row_runs.run_len,
            pitch: row_runs.pitch,
            group: (0, 0),
            placed: Placement::IN_ORDER,
            runs: (row_runs.runs, row_runs.run_pitch),
        }
    }
}

/// The number of segments `offsets_len` offsets describe; [`Error::InvalidSegments`] for none.
pub(crate) fn segment_count(offsets_len: usize) -> Result<usize> {
    offsets_len.checked_sub(1).ok_or_else(|| {
        Error::InvalidSegments("the offsets are empty: segmented reductions take segments + 1 offsets".to_string())
    })
}

/// [`Error::InvalidSegments`] unless a `rows × row_len` matrix has `len` elements.
pub(crate) fn check_rows(len: usize, rows: usize, row_len: usize) -> Result<()> {
    match rows.checked_mul(row_len) {
        Some(elements) if elements == len => Ok(()),
        elements => Err(Error::InvalidSegments(format!(
            "a {rows} × {row_len} matrix has {} elements, but the input has {len}",
            elements.map_or("more than usize::MAX".to_string(), |n| n.to_string())
        ))),
    }
}

/// [`Error::InvalidSegments`] for an output of `out_len` elements and `segments` segments.
pub(crate) fn check_output(out_len: usize, segments: usize) -> Result<()> {
    if out_len != segments {
        return Err(Error::InvalidSegments(format!(
            "the output has {out_len} elements, but there are {segments} segments"
        )));
    }
    Ok(())
}

impl<B: Backend> Reducer<B> {
    #[doc(hidden)]
    /// The launch a segmented reduction of `len` elements of `T` in
    /// `segments` segments (or rows) with `op` uses: threads per segment,
    /// blocks per segment and the grid (see [`Over::Segments`](crate::Over::Segments)
    /// and the crate docs). Like [`Reducer::launch_shape`], it depends only on its
    /// arguments and the device.
    ///
    /// Errors: [`Error::InvalidPolicy`] if an average segment of `len`
    /// elements has more bytes than a `u64` counts (no buffer does),
    /// [`Error::UnsupportedOp`].
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, Op};
    /// let mut emulator = Emulator::default(); // 64-thread blocks, at most 6
    /// let rows = emulator.segmented_launch_shape::<f32>(Op::Max, 100, 100 * 1024)?;
    /// assert_eq!(rows.team_threads, 32); // a warp per row of 1024
    /// let tiny = emulator.segmented_launch_shape::<f32>(Op::Max, 100, 100 * 4)?;
    /// assert_eq!(tiny.team_threads, 1); // a thread per row of 4
    /// # Ok(()) }
    /// ```
    pub fn segmented_launch_shape<T: Element>(
        &mut self,
        op: crate::Op,
        segments: usize,
        len: usize,
    ) -> Result<SegmentedShape> {
        let what = PerSegment::Op(op.kernel());
        Ok(self.segmented_plan::<T>(what, segments, len, (false, false, false))?.1)
    }

    /// The segmented kernel and launch shape for `len` elements of `T` in
    /// `segments` segments (given by offsets if `offsets`, else rows; rows
    /// with gaps or placed results if `strided_rows`; rows in runs, for the
    /// exact sums, if `in_runs`).
    fn segmented_plan<T: Element>(
        &mut self,
        what: PerSegment,
        segments: usize,
        len: usize,
        (offsets, strided_rows, in_runs): (bool, bool, bool),
    ) -> Result<(Kernel, SegmentedShape)> {
        let element = T::TYPE.kernel();
        let kernel = |schedule| match what {
            PerSegment::Op(op) => Kernel::Segmented { op, element, schedule },
            PerSegment::Exact(of) => Kernel::ExactSegments {
                op: of.op(),
                element,
                schedule: if in_runs {
                    ExactSchedule::Runs
                } else {
                    ExactSchedule::FixedOrder
                },
                mean: of.finish() == Finish::Mean,
            },
        };
        if let PerSegment::Op(op) = what {
            if !op.is_defined_for(element) {
                return Err(Error::unsupported_op(op, T::TYPE));
            }
        }
        // The fixed-order kernel's limit sizes the grid for it and the
        // balanced ones (the schedule depends on the shape); strided rows
        // have a kernel of their own, and always take it (but for the exact
        // sum, whose one kernel reads rows with a pitch).
        let first_choice = match strided_rows {
            true => SegmentSchedule::StridedRows,
            false => SegmentSchedule::FixedOrder,
        };
        let grid_cap = self.backend.grid_cap(kernel(first_choice))?;
        let tuning = self.backend.tuning();
        let element_bytes = T::TYPE.size();
        let teams = match what {
            PerSegment::Op(_) => Teams::Reduction,
            // Rows enough for a warp each of the grid: a warp a row at most
            // (a larger team's reduction waits at the block's barrier; rows
            // in runs not measured so).
            PerSegment::Exact(_) => Teams::ExactSum {
                offsets,
                warp_at_most: !offsets && !in_runs && shape::rows_fill_warps(tuning, segments, grid_cap),
            },
        };
        let mut plan =
            shape::segmented_shape(tuning, teams, segments, len, element_bytes, grid_cap).and_then(|shape| {
                let schedule = match (what, strided_rows) {
                    (PerSegment::Exact(_), _) => SegmentSchedule::FixedOrder,
                    (PerSegment::Op(_), true) => SegmentSchedule::StridedRows,
                    (PerSegment::Op(_), false) => shape::segment_schedule(tuning, shape, segments, offsets)?,
                };
                Some((kernel(schedule), shape))
            });
        // The exact sum's teams of one thread have a kernel of their own
        // where the tuning says so (but over rows in runs, which the teams'
        // kernel of runs reads), whose grid cap sizes their grid (the team
        // does not depend on it). Segments given by offsets whose teams
        // would be large enough go to warps as they finish, where the
        // tuning says so and there are enough of them.
        if let Some((Kernel::ExactSegments { op, element, mean, .. }, shape)) = plan {
            let exact_kernel = |schedule| Kernel::ExactSegments {
                op,
                element,
                schedule,
                mean,
            };
            let [four_bytes, eight_bytes] = tuning.exact_segment_teams;
            let sizing = if element_bytes > 4 { eight_bytes } else { four_bytes };
            let [for_rows, for_segments] = sizing.single_thread_kernel;
            let own_kernel = if offsets { for_segments } else { for_rows };
            if own_kernel && !in_runs && shape.team_threads == 1 && shape.blocks_per_segment == 1 {
                let kernel = exact_kernel(ExactSchedule::PerThread);
                let grid_cap = self.backend.grid_cap(kernel)?;
                let tuning = self.backend.tuning();
                plan = shape::segmented_shape(tuning, teams, segments, len, element_bytes, grid_cap)
                    .map(|shape| (kernel, shape));
            } else if let Some(take) = sizing
                .warps_take
                .filter(|take| offsets && shape.team_threads >= take.min_lanes)
            {
                let kernel = exact_kernel(ExactSchedule::WarpsTake);
                let grid_cap = self.backend.grid_cap(kernel)?;
                let tuning = self.backend.tuning();
                let warps = Teams::ExactSum {
                    offsets,
                    warp_at_most: true,
                };
                let balanced = shape::segmented_shape(tuning, warps, segments, len, element_bytes, grid_cap)
                    .filter(|&shape| shape::exact_warps_take(shape, segments, take.min_takes));
                if let Some(shape) = balanced {
                    plan = Some((kernel, shape));
                }
            }
        }
        plan.ok_or_else(|| {
            Error::InvalidPolicy(format!(
                "no launch shape for {len} elements of {element_bytes} bytes in {segments} segments \
                 with a grid of at most {grid_cap} blocks: the sizes overflow 64 bits"
            ))
        })
    }

    /// Enqueues the segmented kernel for `what` over the `len` `T`s at
    /// `input` (element-aligned: [`checked_parts`] of the values) on
    /// `stream`, writing one result per segment to the `out_len` `T`s at
    /// `out`, and the kernel's offset check to the `u32` at `status` if given.
    pub(crate) fn enqueue_segmented<T: Element>(
        &mut self,
        (input, len): (u64, usize),
        layout: Layout,
        what: impl Into<PerSegment>,
        (out, out_len): (u64, usize),
        status: Option<u64>,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let segments = layout.segments();
        check_output(out_len, segments)?;
        let offsets = matches!(layout, Layout::Offsets { .. });
        // The elements the rows hold (without the gaps between them, all
        // their runs' for rows in runs, which a team reads as one row), which
        // the launch shape is made for.
        let (elements, strided_rows) = match layout {
            Layout::Offsets { .. } => (len, false),
            Layout::Rows {
                rows,
                row_len,
                pitch,
                group,
                placed,
                runs: (runs, _),
            } => (
                rows.saturating_mul(row_len).saturating_mul(runs as usize),
                pitch != row_len as u64 || group != (0, 0) || placed != Placement::IN_ORDER,
            ),
        };
        let in_runs = matches!(layout, Layout::Rows { runs, .. } if runs != ONE_RUN);
        let what = what.into();
        // The exact kernel reads rows with a pitch (in runs), in order, not
        // in groups nor placed (`enqueue_exact_axes` gathers those first);
        // the others read rows of one run.
        if let Layout::Rows {
            group, placed, runs, ..
        } = layout
        {
            let exact = matches!(what, PerSegment::Exact(_));
            if exact && (group != (0, 0) || placed != Placement::IN_ORDER) {
                return Err(Error::internal(
                    "an exact sum of grouped or placed rows (no kernel reads them)",
                ));
            }
            if !exact && runs != ONE_RUN {
                return Err(Error::internal("rows in runs for a kernel that reads one run"));
            }
        }
        let (kernel, shape) = self.segmented_plan::<T>(what, segments, elements, (offsets, strided_rows, in_runs))?;
        if segments == 0 {
            return Ok(());
        }
        let workspace = self.backend.workspace(stream)?;
        let (offsets, row_len, row_pitch, (row_group, group_pitch), placed, (runs, run_pitch)) = match layout {
            Layout::Offsets { address, .. } => (address, 0, 0, (0, 0), Placement::IN_ORDER, ONE_RUN),
            Layout::Rows {
                row_len,
                pitch,
                group,
                placed,
                runs,
                ..
            } => (0, row_len as u64, pitch, group, placed, runs),
        };
        let (
            placed_dims,
            [(placed_extent0, placed_stride0), (placed_extent1, placed_stride1), (placed_extent2, placed_stride2), (placed_extent3, placed_stride3)],
        ) = (placed.dims as u64, placed.axes);
        let mut accesses = vec![
            Access::read::<T>("input", input, len),
            Access::write::<T>("out", out, segments),
        ];
        if offsets != 0 {
            // `segments` is the offsets' length less one (`segment_count`).
            let offsets_len = segments.checked_add(1).ok_or_else(|| {
                Error::InvalidSegments(format!("{segments} segments need more offsets than a usize counts"))
            })?;
            accesses.push(Access::read::<u64>("offsets", offsets, offsets_len));
        }
        accesses.extend(status.map(|status| Access::write::<u32>("status", status, 1)));
        // The exact variance's means (one per segment), which its kernel reads.
        let (shifts, finish, finish_param) = match what {
            PerSegment::Exact(of) => {
                let (shifts, finish_param) = of.parameters();
                (shifts, of.finish() as u64, finish_param)
            }
            PerSegment::Op(_) => (0, Finish::Value as u64, 0),
        };
        if shifts != 0 {
            accesses.push(Access::read::<T>("means", shifts, segments));
        }
        let launch = Launch {
            kernel,
            shape: shape.launch,
            shared_bytes: 0,
            args: SegmentedArgs {
                input,
                len: len as u64,
                offsets,
                segments: segments as u64,
                row_len,
                row_pitch,
                row_group,
                group_pitch,
                plan: shape.plan().to_bits(),
                partials: workspace.partials,
                tickets: workspace.segment_tickets,
                status: status.unwrap_or(0),
                out,
                placed_dims,
                placed_extent0,
                placed_stride0,
                placed_extent1,
                placed_stride1,
                placed_extent2,
                placed_stride2,
                placed_extent3,
                placed_stride3,
                shifts,
                finish,
                finish_param,
                runs,
                run_pitch,
            },
            accesses: &accesses,
        };
        // SAFETY: the parameters of a segmented entry point (kernels-gpu/src/abi/plans.rs,
        // `SegmentPlan`): `out` has one element per segment; the workspace has a
        // partial slot per part and a zeroed ticket per segment, since a split
        // plan's grid is at most the largest grid; the rows layout was checked
        // to cover `values` exactly.
        unsafe { self.backend.launch(&launch, stream) }
    }
}

/// [`Error::InvalidSegments`] naming the first segment of `offsets` that is
/// out of order or past `len`.
pub(crate) fn invalid_offsets(offsets: &[u64], len: usize) -> Error {
    let message = offsets
        .iter()
        .zip(offsets.iter().skip(1))
        .enumerate()
        .find(|&(_, (&begin, &end))| begin > end || end > len as u64)
        .map_or_else(
            || "an offset is out of order or past the end of the values".to_string(),
            |(s, (begin, end))| {
                format!(
                    "segment {s} is [{begin}, {end}), but offsets must not decrease and must not exceed the {len} values"
                )
            },
        );
    Error::InvalidSegments(message)
}
