//! Reductions along axes of a strided N-d tensor: PyTorch's
//! `x.sum(dim=(0, 2))`, `x.amax(dim=-1, keepdim=True)`, numpy's
//! `x.max(axis=0)`, over a buffer viewed through a shape and element
//! strides ([`Strided`]): any [`Reduction`](crate::Reduction) over
//! [`Over::Axes`](crate::Over::Axes)`(&layout, &axes)`, with
//! [`Reducer::reduce_over`] (blocking, into a new buffer, with the
//! results' shape: [`Reduced`]) or [`Scope::reduce_into`](crate::Scope::reduce_into)
//! (enqueued, into the caller's output of [`Strided::kept_outputs`] elements).
//!
//! ```
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::{axes::Strided, emulated::Emulator, ArgMax, Op, Over, Widened};
//! let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and a device buffer
//! // A 2 × 3 row-major matrix.
//! let matrix = [1i32, 2, 3, 10, 20, 30];
//! let layout = Strided::contiguous(&[2, 3])?;
//! let columns = emulator.reduce_over(&matrix, Op::Sum, Over::Axes(&layout, &[0]))?;
//! assert_eq!((columns.values.to_vec(), columns.shape(false)), (vec![11, 22, 33], vec![3]));
//! let rows = emulator.reduce_over(&matrix, Op::Max, Over::Axes(&layout, &[-1]))?;
//! assert_eq!((rows.values.to_vec(), rows.shape(true)), (vec![3, 30], vec![2, 1]));
//! // Its transpose, as a view (no copy): 3 × 2 with strides (1, 3).
//! let transposed = Strided::new(&[3, 2], &[1, 3])?;
//! let sums = emulator.reduce_over(&matrix, Op::Sum, Over::Axes(&transposed, &[1]))?;
//! assert_eq!(sums.values.to_vec(), [11, 22, 33]);
//! // Widened: summed in i64; argmax: the position along the one axis.
//! let wide = emulator.reduce_over(&[i32::MAX; 6], Widened::<i64>::new(Op::Sum), Over::Axes(&layout, &[0]))?;
//! assert_eq!(wide.values.to_vec(), [2 * i64::from(i32::MAX); 3]);
//! let best_row = emulator.reduce_over(&matrix, ArgMax, Over::Axes(&layout, &[0]))?;
//! assert_eq!(best_row.values.to_vec(), [1, 1, 1]);
//! # Ok(()) }
//! ```
//!
//! # Semantics
//! - **Axes**: any set of distinct axes, each `0..rank` or, counting from
//!   the end, `-rank..0` (as PyTorch's `dim`). No axes reduces nothing: each
//!   result is the op over one element (for `SumOfSquares` its square, for
//!   `NanSum` a NaN becomes 0), as numpy's `axis=()`.
//! - **Results** are written contiguously, row-major over the kept axes in
//!   their order; [`Reduced::shape`] gives their shape with the reduced
//!   axes dropped, or kept as 1 (`keepdim`), which is the same data.
//! - **Strides** are in elements, any values, including 0 (a broadcast axis:
//!   its element is read once per position, so a sum over it counts it that
//!   many times) and layouts whose positions share elements. Every element
//!   the view reaches must be in the buffer: [`Error::InvalidLayout`] if not.
//!   Negative strides cannot be expressed (PyTorch has none either).
//! - **Empty axes**: a kept axis of length 0 gives no results. A reduced
//!   axis of length 0 gives the op's identity (0 for sums, 1 for products)
//!   where it has one, and [`Error::Empty`] for `Max`/`Min` and the other
//!   ops without one, as PyTorch's `amax` of an empty dimension.
//! - Each result follows the rules of a whole-input reduction with the same
//!   op ([`crate::Op`]: NaN, overflow, signed zeros).
//! - **Widened** ([`Widened`](crate::Widened)): the pairs and ops of
//!   [`WidensTo`] (bytes and shorts summed in 64 bits, half floats in
//!   `f32`, ...); each element is converted as it is read, and every pass
//!   after the first reduces the accumulators.
//! - **argmax/argmin along one axis** ([`ArgMax`](crate::ArgMax),
//!   [`ArgMin`](crate::ArgMin), with exactly one axis, else
//!   [`Error::InvalidAxes`]): a `u64` position along the axis per result,
//!   by the rules of a whole input's argmax; an axis of length 0 is
//!   [`Error::Empty`].
//! - **Statistics** ([`Var`](crate::Var), [`LogSumExp`](crate::LogSumExp),
//!   [`Count`](crate::Count), …): see [`crate::statistics`].
//! - **Determinism**: the launches depend only on the shape, the strides,
//!   the axes, the element type and the device, so each result is bitwise
//!   the same on every run. The order in which a result's elements are
//!   combined is not the whole-input reduction's: a float sum along an axis
//!   can differ from [`crate::sum`] of the same elements by rounding.
//!
//! # How the work is divided
//! Axes of length 1 are dropped, and neighbouring axes that are both kept
//! or both reduced and lie in memory as one (the outer stride is the inner
//! one times the inner length) are merged, so `x.sum(dim=(1, 2))` of a
//! contiguous `[a, b, c]` tensor is a row reduction of an `a × bc` matrix.
//! Each reduced axis left is then one launch (the longest first), its
//! results going to the reducer's scratch for the next launch, the last one
//! to the output:
//! - a reduced axis that is contiguous and whose kept axes form the rows of
//!   a matrix runs the row-wise kernels (those of [`Over::Rows`](crate::Over::Rows)); all axes
//!   reduced and contiguous, the whole-input kernel;
//! - otherwise the axis kernel (`kernels-gpu/src/axis.rs`): a block is a
//!   tile of consecutive results by lanes along the reduced axis; when the
//!   kept axes are the contiguous ones (the reduced axis outermost: column
//!   sums), the lanes of a warp read 32 neighbouring results' elements, one
//!   coalesced row at a time; when the reduced axis is contiguous, a
//!   result's lanes read its neighbouring elements. Few results (a short
//!   output) have their reduced axis split over several blocks, whose parts
//!   the last of them combines in part order.

use crate::backend::launcher::{check_aliasing, element_address, Access, Launch, StreamHandle};
use crate::backend::Backend;
use crate::element::{Element, ElementType, WidensTo};
use crate::error::{Error, Result};
use crate::reducer::{checked_parts, Reducer};
use crate::segmented::Layout;
use crate::shape::{self, LaunchShape};
use crate::tuning::Tuning;
use cust::error::CudaError;
use cust::memory::DeviceCopy;
use kernels_gpu::abi::{AxisArgs, Finish, Kernel, Op, AXIS_KEPT_DIMS, PARTIAL_SLOT_BYTES};

/// The most axes a [`Strided`] view has.
pub const MAX_RANK: usize = AXIS_KEPT_DIMS;

/// An N-d view of a buffer: a shape and a stride per axis, in elements
/// (PyTorch's `size()` and `stride()`), at most [`MAX_RANK`] axes.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::axes::Strided;
/// let image = Strided::contiguous(&[3, 4, 5])?;
/// assert_eq!(image.strides(), [20, 5, 1]);
/// let every_other_row = Strided::new(&[3, 2, 5], &[20, 10, 1])?; // x[:, ::2, :]
/// assert_eq!(every_other_row.shape(), [3, 2, 5]);
/// assert!(Strided::new(&[3, 4], &[1]).is_err()); // a stride per axis
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Strided {
    rank: usize,
    shape: [usize; MAX_RANK],
    strides: [usize; MAX_RANK],
}

impl Strided {
    /// A view of `shape` with the strides `strides` (one per axis, in elements).
    ///
    /// Errors: [`Error::InvalidLayout`] if the lengths differ or there are
    /// more than [`MAX_RANK`] axes.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// let broadcast = reduce::axes::Strided::new(&[4, 3], &[0, 1])?; // one row, seen 4 times
    /// assert_eq!(broadcast.strides(), [0, 1]);
    /// # Ok(()) }
    /// ```
    pub fn new(shape: &[usize], strides: &[usize]) -> Result<Self> {
        if shape.len() != strides.len() {
            return Err(Error::InvalidLayout(format!(
                "{} extents but {} strides: give one stride per axis",
                shape.len(),
                strides.len()
            )));
        }
        if shape.len() > MAX_RANK {
            return Err(Error::InvalidLayout(format!(
                "{} axes; at most {MAX_RANK} are supported",
                shape.len()
            )));
        }
        let mut layout = Strided {
            rank: shape.len(),
            shape: [1; MAX_RANK],
            strides: [0; MAX_RANK],
        };
        for (slot, &extent) in layout.shape.iter_mut().zip(shape) {
            *slot = extent;
        }
        for (slot, &stride) in layout.strides.iter_mut().zip(strides) {
            *slot = stride;
        }
        Ok(layout)
    }

    /// The row-major (C-contiguous) view of `shape`: the last axis has stride 1.
    ///
    /// Errors: [`Error::InvalidLayout`] for more than [`MAX_RANK`] axes, or
    /// strides past `usize::MAX`.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// assert_eq!(reduce::axes::Strided::contiguous(&[2, 3])?.strides(), [3, 1]);
    /// # Ok(()) }
    /// ```
    pub fn contiguous(shape: &[usize]) -> Result<Self> {
        let mut strides = vec![0; shape.len()];
        let mut stride = 1usize;
        for (slot, &extent) in strides.iter_mut().zip(shape).rev() {
            *slot = stride;
            stride = stride.checked_mul(extent.max(1)).ok_or_else(|| {
                Error::InvalidLayout(format!("the shape {shape:?} has more elements than a usize counts"))
            })?;
        }
        Strided::new(shape, &strides)
    }

    /// The length of each axis.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// assert_eq!(reduce::axes::Strided::contiguous(&[2, 3])?.shape(), [2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.shape.get(..self.rank).unwrap_or_default()
    }

    /// The stride of each axis, in elements.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// assert_eq!(reduce::axes::Strided::new(&[2, 3], &[1, 2])?.strides(), [1, 2]);
    /// # Ok(()) }
    /// ```
    pub fn strides(&self) -> &[usize] {
        self.strides.get(..self.rank).unwrap_or_default()
    }

    /// The elements of a buffer the view reaches: one past its last
    /// element's offset (0 if an axis has length 0); `None` past `usize::MAX`.
    fn span(&self) -> Option<usize> {
        if self.shape().contains(&0) {
            return Some(0);
        }
        self.shape()
            .iter()
            .zip(self.strides())
            .try_fold(1usize, |span, (&extent, &stride)| {
                span.checked_add(extent.checked_sub(1)?.checked_mul(stride)?)
            })
    }

    /// Which axes `axes` names (negative ones counting from the end).
    fn reduced_mask(&self, axes: &[isize]) -> Result<[bool; MAX_RANK]> {
        let mut reduced = [false; MAX_RANK];
        let rank = self.rank as isize;
        for &axis in axes {
            let index = if axis < 0 { axis.checked_add(rank) } else { Some(axis) };
            let slot = index
                .filter(|index| (0..rank).contains(index))
                .and_then(|index| reduced.get_mut(index as usize))
                .ok_or_else(|| {
                    Error::InvalidAxes(format!(
                        "axis {axis} is out of range for {} axes (use 0..{rank} or -{rank}..0)",
                        self.rank
                    ))
                })?;
            if std::mem::replace(slot, true) {
                return Err(Error::InvalidAxes(format!("axis {axis} is named twice in {axes:?}")));
            }
        }
        Ok(reduced)
    }
}

impl Strided {
    /// The number of results a reduction along `axes` has: the positions
    /// of the axes that `axes` does not name (the length a `reduce_into` call's
    /// output needs). Errors as the reductions give for these axes.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// let layout = reduce::axes::Strided::contiguous(&[4, 5, 6])?;
    /// assert_eq!(layout.kept_outputs(&[0, -1])?, 5);
    /// assert_eq!(layout.kept_outputs(&[])?, 120);
    /// assert!(layout.kept_outputs(&[3]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn kept_outputs(&self, axes: &[isize]) -> Result<usize> {
        kept_outputs(self, &self.reduced_mask(axes)?)
    }

    /// [`Strided::kept_outputs`], checked against an output of `out_len`
    /// elements: [`Error::InvalidAxes`] unless it has exactly that many.
    pub(crate) fn checked_outputs(&self, axes: &[isize], out_len: usize) -> Result<usize> {
        let outputs = self.kept_outputs(axes)?;
        if out_len != outputs {
            return Err(Error::InvalidAxes(format!(
                "the output has {out_len} elements, but the kept axes of {:?} have {outputs} positions",
                self.shape()
            )));
        }
        Ok(outputs)
    }

    /// The view's axes, with `axes` reduced, checked against a buffer of
    /// `len` elements: [`Error::InvalidLayout`] if an element lies past
    /// it or the elements outnumber a `u64`.
    pub(crate) fn checked_dims(&self, axes: &[isize], len: usize) -> Result<CheckedView> {
        let reduced = self.reduced_mask(axes)?;
        let span = self.span().filter(|&span| span <= len).ok_or_else(|| {
            Error::InvalidLayout(format!(
                "the view with shape {:?} and strides {:?} reaches past the input's {len} elements",
                self.shape(),
                self.strides()
            ))
        })?;
        if self
            .shape()
            .iter()
            .try_fold(1u64, |n, &e| n.checked_mul(e as u64))
            .is_none()
        {
            return Err(too_large(self));
        }
        let dims: Vec<Dim> = self
            .shape()
            .iter()
            .zip(self.strides())
            .zip(reduced)
            .map(|((&extent, &stride), reduced)| Dim {
                extent: extent as u64,
                stride: stride as u64,
                reduced,
            })
            .collect();
        // No product overflows: the product of all extents fits.
        let reduced_elements = dims
            .iter()
            .filter(|d| d.reduced)
            .fold(1u64, |n, d| n.saturating_mul(d.extent));
        Ok(CheckedView {
            dims,
            span,
            reduced_elements,
        })
    }
}

/// A view checked against its buffer ([`Strided::checked_dims`]).
pub(crate) struct CheckedView {
    /// The axes, outermost first.
    pub dims: Vec<Dim>,
    /// Elements from the first to one past the last the view reaches (0 if
    /// an axis is empty).
    pub span: usize,
    /// Elements per result: the product of the reduced axes' extents.
    pub reduced_elements: u64,
}

/// The result of [`Reducer::reduce_over`]: the values (one buffer, or for
/// [`MeanVar`](crate::MeanVar) the pair `(means, variances)`), row-major
/// over the kept axes (one per segment or row), and the input's shape to
/// give them.
#[derive(Debug)]
pub struct Reduced<Buffer> {
    /// One result per position of the kept axes, row-major.
    pub values: Buffer,
    input_shape: Vec<usize>,
    reduced: [bool; MAX_RANK],
}

impl<Buffer> Reduced<Buffer> {
    /// `values` as the results of reducing `axes` of `layout`.
    pub(crate) fn new(values: Buffer, layout: &Strided, axes: &[isize]) -> Result<Self> {
        Ok(Reduced {
            values,
            input_shape: layout.shape().to_vec(),
            reduced: layout.reduced_mask(axes)?,
        })
    }

    /// The results' shape: the input's, with each reduced axis dropped, or
    /// kept with length 1 if `keepdim` (PyTorch's `keepdim=True`).
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator, Op, Over};
    /// let layout = Strided::contiguous(&[2, 3, 4])?;
    /// let sums = Emulator::default().reduce_over(&[1.0f32; 24], Op::Sum, Over::Axes(&layout, &[0, 2]))?;
    /// assert_eq!(sums.shape(false), [3]);
    /// assert_eq!(sums.shape(true), [1, 3, 1]);
    /// assert_eq!(sums.values.to_vec(), [8.0; 3]);
    /// # Ok(()) }
    /// ```
    pub fn shape(&self, keepdim: bool) -> Vec<usize> {
        self.input_shape
            .iter()
            .zip(self.reduced)
            .filter_map(|(&extent, reduced)| match (reduced, keepdim) {
                (false, _) => Some(extent),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect()
    }
}

/// One axis of a view as the passes see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dim {
    extent: u64,
    stride: u64,
    reduced: bool,
}

/// `dims` with each pair of neighbours that `joinable` allows and that lie
/// in memory as one axis merged into it.
fn merged(dims: &[Dim], joinable: impl Fn(&Dim, &Dim) -> bool) -> Vec<Dim> {
    let mut out: Vec<Dim> = Vec::with_capacity(dims.len());
    for &dim in dims {
        match out.last_mut() {
            Some(outer) if joinable(outer, &dim) && dim.extent.checked_mul(dim.stride) == Some(outer.stride) => {
                // No product of extents overflows: `enqueue_axes` checked the positions.
                outer.extent = outer.extent.saturating_mul(dim.extent);
                outer.stride = dim.stride;
            }
            _ => out.push(dim),
        }
    }
    out
}

/// One launch of an axis reduction: `reduced` folded for each position of
/// `kept` (outermost first), read from the current tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pass {
    kept: Vec<Dim>,
    reduced: Dim,
}

impl Pass {
    /// The one pass of a view with a reduced axis of length 0: `outputs`
    /// results, each of no elements.
    pub(crate) fn empty(outputs: u64) -> Self {
        Pass {
            kept: vec![Dim {
                extent: outputs,
                stride: 0,
                reduced: false,
            }],
            reduced: Dim {
                extent: 0,
                stride: 0,
                reduced: true,
            },
        }
    }

    /// The one pass of a statistic over `segments` segments of a contiguous
    /// input, `average` elements each on average (what the plan is made for).
    pub(crate) fn segments(segments: u64, average: u64) -> Self {
        Pass {
            kept: vec![Dim {
                extent: segments,
                stride: 0,
                reduced: false,
            }],
            reduced: Dim {
                extent: average,
                stride: 1,
                reduced: true,
            },
        }
    }

    pub(crate) fn outputs(&self) -> u64 {
        self.kept.iter().fold(1, |n, d| n.saturating_mul(d.extent))
    }
}

/// The launches that reduce the `reduced` axes of `dims` (outermost first,
/// extents not 0): a pass per reduced axis left after merging, the longest
/// first, each after the first reading the previous one's contiguous
/// results; one pass with a reduced axis of length 1 when none is left.
pub(crate) fn plan_passes(dims: &[Dim]) -> Vec<Pass> {
    let same_kind = |a: &Dim, b: &Dim| a.reduced == b.reduced;
    let mut current = merged(
        &dims.iter().copied().filter(|d| d.extent != 1).collect::<Vec<_>>(),
        same_kind,
    );
    let mut passes = Vec::new();
    loop {
        let longest = current
            .iter()
            .enumerate()
            .filter(|(_, dim)| dim.reduced)
            .max_by_key(|&(i, dim)| (dim.extent, std::cmp::Reverse(i)))
            .map(|(i, _)| i);
        let (kept, reduced) = match longest {
            Some(index) => {
                let mut kept = current.clone();
                let reduced = kept.remove(index);
                (kept, reduced)
            }
            None if passes.is_empty() => (
                current.clone(),
                Dim {
                    extent: 1,
                    stride: 0,
                    reduced: true,
                },
            ),
            None => return passes,
        };
        // The next pass reads these results: contiguous, row-major.
        let mut stride = 1;
        let mut next = kept.clone();
        for dim in next.iter_mut().rev() {
            dim.stride = stride;
            stride = stride.saturating_mul(dim.extent);
        }
        passes.push(Pass {
            kept: merged(&kept, |_, _| true),
            reduced,
        });
        if longest.is_none() {
            return passes;
        }
        current = merged(&next, same_kind);
    }
}

/// How one pass runs.
pub(crate) enum Route {
    /// All of it one contiguous run: the whole-input kernel.
    Whole,
    /// The rows of a row-major matrix: the row-wise kernels.
    Rows { rows: usize, row_len: usize },
    /// The axis kernel.
    Axis,
}

impl Pass {
    pub(crate) fn route(&self) -> Route {
        let contiguous = self.reduced.stride == 1 && self.reduced.extent > 0;
        match self.kept[..] {
            [] if contiguous => Route::Whole,
            [rows] if contiguous && rows.stride == self.reduced.extent => Route::Rows {
                rows: rows.extent as usize,
                row_len: self.reduced.extent as usize,
            },
            _ => Route::Axis,
        }
    }
}

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
        if !op.is_defined_for(T::TYPE) {
            return Err(Error::UnsupportedOp { op, element: T::TYPE });
        }
        let reading = Reading {
            input: T::TYPE,
            accumulator: T::TYPE,
        };
        self.enqueue_axes_reading::<T, T>(input, reading, layout, axes, op, out, stream)
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
            return Err(Error::UnsupportedWidening {
                op,
                input: In::INPUT.name(),
                accumulator: A::TYPE,
            });
        }
        self.enqueue_axes_reading::<In, A>(input, reading, layout, axes, op, out, stream)
    }

    /// Enqueues the reduction of `input`'s `axes` with `op`, read as
    /// `reading` says, its results to the `out_len` `A`s at `out`: the
    /// first pass reads the `In`s, the later ones the `A`s it left.
    #[allow(clippy::too_many_arguments)]
    fn enqueue_axes_reading<In: DeviceCopy, A: Element>(
        &mut self,
        input: &B::Slice<In>,
        reading: Reading,
        layout: &Strided,
        axes: &[isize],
        op: Op,
        (out, out_len): (u64, usize),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let outputs = layout.checked_outputs(axes, out_len)?;
        let (address, len) = checked_parts::<B, In>(input)?;
        let CheckedView {
            dims,
            span,
            reduced_elements,
        } = layout.checked_dims(axes, len)?;
        // Before the no-results return: an axis of length 0 has no max even
        // where no kept position asks for one (as `torch.amax`).
        if reduced_elements == 0 && !op.defined_on_empty() {
            return Err(Error::Empty { op });
        }
        if outputs == 0 {
            return Ok(());
        }
        // Before the first pass: only the last launch sees the output.
        check_aliasing(&[
            Access::read::<In>("input", address, len),
            Access::write::<A>("out", out, out_len),
        ])?;
        if span == 0 {
            // A reduced axis of length 0 (no kept one is): every result is the identity.
            if !op.defined_on_empty() {
                return Err(Error::Empty { op });
            }
            let pass = Pass::empty(outputs as u64);
            return self.run_pass::<In, A>(&pass, reading, op, (address, 0), out, 0, stream);
        }
        let passes = plan_passes(&dims);
        // After the first pass, each reads the accumulators the one before left.
        let reading_of = |index: usize| if index == 0 { reading } else { reading.of_accumulators() };
        let scratch = self.pass_scratch(&passes, std::mem::size_of::<A>(), layout, stream, |index, pass| {
            reading_of(index)
                .axis_route(pass)
                .then(|| reading_of(index).axis_kernel(pass_op(op, index)))
        })?;
        let destination = |index: usize| scratch.destination(index, passes.len(), out);
        // `plan_passes` gives at least one pass.
        let first = passes.first().ok_or(Error::Cuda(CudaError::InvalidValue))?;
        self.run_pass::<In, A>(
            first,
            reading,
            op,
            (address, span),
            destination(0),
            scratch.partials,
            stream,
        )?;
        let mut source = (destination(0), first.outputs() as usize);
        for (index, pass) in passes.iter().enumerate().skip(1) {
            let (reading, op) = (reading_of(index), pass_op(op, index));
            self.run_pass::<A, A>(pass, reading, op, source, destination(index), scratch.partials, stream)?;
            source = (destination(index), pass.outputs() as usize);
        }
        Ok(())
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

    /// Launches `pass` over the tensor of `In`s at `source` (address,
    /// elements it spans), read as `reading` says, its `A` results to
    /// `destination`.
    #[allow(clippy::too_many_arguments)]
    fn run_pass<In: DeviceCopy, A: Element>(
        &mut self,
        pass: &Pass,
        reading: Reading,
        op: Op,
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
            Route::Rows { rows, row_len } if !reading.widened() => {
                let layout = Layout::of_rows(span, rows, row_len)?;
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
        let mut kept = [(1u64, 0u64); AXIS_KEPT_DIMS];
        for (slot, dim) in kept.iter_mut().zip(pass.kept.iter().rev()) {
            *slot = (dim.extent, dim.stride);
        }
        let tickets = self.backend.workspace(stream)?.segment_tickets;
        let offsets = launch.segments.map(|segments| segments.offsets);
        let status = launch.segments.and_then(|segments| segments.status);
        let accesses: Vec<Access> = [Some(launch.input), Some(launch.out), launch.means, offsets, status]
            .into_iter()
            .flatten()
            .collect();
        let [(extent0, stride0), (extent1, stride1), (extent2, stride2), (extent3, stride3), (extent4, stride4), (extent5, stride5), (extent6, stride6), (extent7, stride7)] =
            kept;
        let args = AxisArgs {
            input: launch.input.address,
            // Segments are clamped into the input's elements.
            reduced: launch.segments.map_or(pass.reduced.extent, |segments| segments.len),
            reduced_stride: pass.reduced.stride,
            outputs: pass.outputs(),
            kept_dims: pass.kept.len().max(1) as u64,
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
            plan: plan.to_bits(),
            partials: launch.partials,
            tickets,
            finish: launch.finish as u64,
            finish_param: launch.finish_param,
            means: launch.means.map_or(0, |means| means.address),
            out: launch.out.address,
            offsets: offsets.map_or(0, |offsets| offsets.address),
            status: status.map_or(0, |status| status.address),
        };
        let launch = Launch {
            kernel: launch.kernel,
            shape,
            shared_bytes: shape.threads_per_block.saturating_mul(PARTIAL_SLOT_BYTES as u32),
            args,
            accesses: &accesses,
        };
        // SAFETY: the parameters of an axis entry point
        // (kernels-gpu/src/abi.rs, `AxisPlan`): every element the kept and
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
                element: self.accumulator,
            },
            true => Kernel::Widened {
                op,
                input: self.input,
                accumulator: self.accumulator,
            },
        }
    }

    /// The axis kernel of `op`.
    fn axis_kernel(self, op: Op) -> Kernel {
        match self.widened() {
            false => Kernel::Axis {
                op,
                element: self.accumulator,
            },
            true => Kernel::WidenedAxis {
                op,
                input: self.input,
                accumulator: self.accumulator,
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

/// The number of positions of the kept axes of `layout`.
fn kept_outputs(layout: &Strided, reduced: &[bool; MAX_RANK]) -> Result<usize> {
    layout
        .shape()
        .iter()
        .zip(reduced)
        .filter(|(_, &r)| !r)
        .try_fold(1usize, |n, (&extent, _)| n.checked_mul(extent))
        .ok_or_else(|| too_large(layout))
}

pub(crate) fn too_large(layout: &Strided) -> Error {
    Error::InvalidLayout(format!(
        "the shape {:?} has more elements than a usize counts",
        layout.shape()
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(shape: &[u64], strides: &[u64], reduced: &[bool]) -> Vec<Dim> {
        (0..shape.len())
            .map(|i| Dim {
                extent: shape[i],
                stride: strides[i],
                reduced: reduced[i],
            })
            .collect()
    }

    #[test]
    fn contiguous_neighbours_merge_and_each_reduced_axis_left_is_a_pass() {
        // [a, b, c] contiguous, reduce (1, 2): rows of b·c.
        let passes = plan_passes(&dims(&[4, 5, 6], &[30, 6, 1], &[false, true, true]));
        assert_eq!(passes.len(), 1);
        assert!(matches!(passes[0].route(), Route::Rows { rows: 4, row_len: 30 }));
        // Reduce (0, 2) of [1024, 1024, 256]: the longest (axis 0) first, as
        // columns of 2^18, then rows of 256.
        let passes = plan_passes(&dims(&[1024, 1024, 256], &[1 << 18, 256, 1], &[true, false, true]));
        assert_eq!(passes.len(), 2);
        assert_eq!(passes[0].reduced.extent, 1024);
        assert_eq!(passes[0].kept, dims(&[1 << 18], &[1], &[false]));
        assert!(matches!(
            passes[1].route(),
            Route::Rows {
                rows: 1024,
                row_len: 256
            }
        ));
        // All axes of a contiguous tensor: the whole-input kernel.
        let passes = plan_passes(&dims(&[3, 7], &[7, 1], &[true, true]));
        assert!(matches!(passes[..], [ref p] if matches!(p.route(), Route::Whole)));
        // Length-1 axes vanish; nothing to reduce is one pass of one element.
        let passes = plan_passes(&dims(&[1, 9], &[9, 1], &[true, false]));
        assert_eq!(passes.len(), 1);
        assert_eq!((passes[0].reduced.extent, passes[0].outputs()), (1, 9));
    }

    #[test]
    fn axes_are_checked() {
        let layout = Strided::contiguous(&[2, 3, 4]).unwrap();
        assert_eq!(layout.reduced_mask(&[-1, 0]).unwrap()[..3], [true, false, true]);
        assert!(matches!(layout.reduced_mask(&[3]), Err(Error::InvalidAxes(_))));
        assert!(matches!(layout.reduced_mask(&[-4]), Err(Error::InvalidAxes(_))));
        assert!(matches!(layout.reduced_mask(&[1, -2]), Err(Error::InvalidAxes(_))));
        assert!(matches!(Strided::contiguous(&[1; 9]), Err(Error::InvalidLayout(_))));
        assert_eq!(Strided::new(&[2, 3], &[0, 5]).unwrap().span(), Some(11));
        assert_eq!(Strided::new(&[2, 0], &[9, 9]).unwrap().span(), Some(0));
    }
}
