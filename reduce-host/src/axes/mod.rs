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
//! // x of shape [2, 40, 3] seen as x.transpose(0, 2) (shape [3, 40, 2]),
//! // from element 5 of the buffer: the sums along axis 1, row-major over
//! // the kept axes as given, sums[i][j] = Σ_k x[j][k][i].
//! let buffer: Vec<i64> = (0..245).collect();
//! let t = Strided::new(&[3, 40, 2], &[1, 3, 120])?.with_offset(5);
//! let sums = emulator.reduce_over(&buffer, Op::Sum, Over::Axes(&t, &[1]))?;
//! let x = |j: i64, k: i64, i: i64| buffer[(5 + j * 120 + k * 3 + i) as usize];
//! let expected: Vec<i64> = (0..3)
//!     .flat_map(|i| (0..2).map(move |j| (0..40).map(|k| x(j, k, i)).sum::<i64>()))
//!     .collect();
//! assert_eq!((sums.values.to_vec(), sums.shape(false)), (expected, vec![3, 2]));
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
//!   many times) and layouts whose positions share elements. Negative
//!   strides cannot be expressed (PyTorch has none either).
//! - **Offset**: the view starts at element [`Strided::offset`] of the
//!   buffer (0 unless given by [`Strided::with_offset`]), aligned or not;
//!   with the shape and strides, a candle `Layout`, a PyTorch
//!   `as_strided(size, stride, storage_offset)`, a DLPack tensor. Every
//!   element the view reaches must be in the buffer (offset + span ≤ its
//!   length): [`Error::InvalidLayout`] if not.
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
//!   the axes, the element type and the device (not on the offset), so each
//!   result is bitwise the same on every run; as for a whole input, the same
//!   values at another alignment (the buffer's, or the offset's within 16
//!   bytes) may round differently where a launch reads contiguous elements
//!   as 16-byte vectors. The order
//!   in which a result's elements are combined is not the whole-input
//!   reduction's: a float sum along an axis can differ from [`crate::sum`]
//!   of the same elements by rounding, and a permuted view's from that of
//!   a contiguous copy of it (the reduced axes are folded in memory order).
//!
//! # How the work is divided
//! Axes of length 1 are dropped, the others put in memory order (the
//! largest stride outermost; equal strides keep their order), and
//! neighbouring axes that are both kept or both reduced and lie in memory
//! as one (the outer stride is the inner one times the inner length) are
//! merged, so `x.sum(dim=(1, 2))` of a contiguous `[a, b, c]` tensor is a
//! row reduction of an `a × bc` matrix, and a permuted view of dense
//! memory (`x.transpose(0, 2)`, `x.permute(…)`) is planned as that memory:
//! its sum over every axis is one whole-input launch. Each reduced axis
//! left is then one launch (the longest first), its results going to the
//! reducer's scratch for the next launch, the last one to the output.
//!
//! Where memory order puts the kept axes in another order than given
//! (`x.transpose(0, 2).sum(dim=1)`), the results must still be row-major
//! over the kept axes as given. With several launches, the last one reads
//! the previous one's results in that order. With one, if each result folds
//! at least 32 elements, it writes its results in memory order to scratch
//! and one more launch (each result the op over one element: a copy; for
//! argmax/argmin, of the positions) writes them in the given order: it moves
//! each result twice, at most 1/16 of the bytes the reduction reads for
//! results as wide as the elements, where a launch reading the input in the
//! kept axes' order would read it in strides. Under 32 elements per result,
//! the one launch reads the input in the kept axes' order (a copy would cost
//! about as much as the reduction). Each launch:
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

mod launch;
mod plan;

pub(crate) use launch::{checked_reading, AxisLaunch, CheckedReading, SegmentsLaunch};
pub(crate) use plan::{plan_passes, Dim, Pass, RowRuns};

use crate::error::{Error, Result};
#[cfg(doc)]
use crate::{Reducer, WidensTo};
use kernels_gpu::abi::AXIS_KEPT_DIMS;

/// The most axes a [`Strided`] view has.
pub const MAX_RANK: usize = AXIS_KEPT_DIMS;

/// An N-d view of a buffer: a shape and a stride per axis, in elements
/// (PyTorch's `size()` and `stride()`), at most [`MAX_RANK`] axes, and the
/// element the view starts at ([`Strided::with_offset`]; PyTorch's
/// `storage_offset()`, candle's `Layout::start_offset`), 0 unless given.
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
    offset: usize,
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
            offset: 0,
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

    /// The same view, starting `offset` elements into the buffer (PyTorch's
    /// `as_strided(size, stride, storage_offset)`, candle's `Layout`, a
    /// DLPack tensor's `byte_offset` in elements): the element at position
    /// `(i0, i1, …)` is `buffer[offset + i0 * stride0 + i1 * stride1 + …]`.
    /// The offset is checked, as the rest of the view, when a reduction
    /// reads a buffer through it: [`Error::InvalidLayout`] unless `offset`
    /// plus the view's span is at most the buffer's length. The view's start
    /// need not be aligned beyond its element: any offset runs at full speed.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator, Op, Over};
    /// let x = [0i32, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    /// // x[1:9].reshape(2, 4)[:, 1:]: 2 × 3 from element 2, rows 4 apart.
    /// let view = Strided::new(&[2, 3], &[4, 1])?.with_offset(2);
    /// assert_eq!(view.offset(), 2);
    /// let sums = Emulator::default().reduce_over(&x, Op::Sum, Over::Axes(&view, &[1]))?;
    /// assert_eq!(sums.values.to_vec(), [2 + 3 + 4, 6 + 7 + 8]);
    /// // Reaching past the buffer is an error, never a read out of it.
    /// let past = Strided::new(&[2, 3], &[4, 1])?.with_offset(4);
    /// assert!(matches!(
    ///     Emulator::default().reduce_over(&x, Op::Sum, Over::Axes(&past, &[1])),
    ///     Err(reduce::Error::InvalidLayout(_))
    /// ));
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_offset(self, offset: usize) -> Self {
        Strided { offset, ..self }
    }

    /// The element of the buffer the view starts at (0 unless set by
    /// [`Strided::with_offset`]).
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// let layout = reduce::axes::Strided::contiguous(&[2, 3])?;
    /// assert_eq!((layout.offset(), layout.with_offset(5).offset()), (0, 5));
    /// # Ok(()) }
    /// ```
    pub fn offset(&self) -> usize {
        self.offset
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

    /// The number of elements each result of a reduction along `axes`
    /// folds: the positions of the axes `axes` names (the count a mean
    /// divides by).
    pub(crate) fn reduced_count(&self, axes: &[isize]) -> Result<usize> {
        let reduced = self.reduced_mask(axes)?;
        self.shape()
            .iter()
            .zip(reduced)
            .filter(|&(_, reduced)| reduced)
            .try_fold(1usize, |n, (&extent, _)| n.checked_mul(extent))
            .ok_or_else(|| too_large(self))
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
    /// `len` elements: [`Error::InvalidLayout`] if the offset or an element
    /// lies past it or the elements outnumber a `u64`.
    pub(crate) fn checked_dims(&self, axes: &[isize], len: usize) -> Result<CheckedView> {
        let reduced = self.reduced_mask(axes)?;
        let span = self
            .span()
            .filter(|&span| span.checked_add(self.offset).is_some_and(|end| end <= len))
            .ok_or_else(|| {
                let needs = match self.span() {
                    Some(span) => match span.checked_add(self.offset) {
                        Some(end) => format!("needs {end} elements (offset {} + span {span})", self.offset),
                        None => format!("needs offset {} + span {span} elements, past usize::MAX", self.offset),
                    },
                    None => "spans more elements than a usize counts".to_string(),
                };
                Error::InvalidLayout(format!(
                    "the view with shape {:?}, strides {:?} and offset {} {needs}, but the input has {len}",
                    self.shape(),
                    self.strides(),
                    self.offset
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
            offset: self.offset,
            span,
            reduced_elements,
        })
    }
}

/// A view checked against its buffer ([`Strided::checked_dims`]).
pub(crate) struct CheckedView {
    /// The axes, outermost first.
    pub dims: Vec<Dim>,
    /// The element of the buffer the view starts at (`offset + span` is at
    /// most the buffer's length).
    pub offset: usize,
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

#[cfg(test)]
mod tests {
    use super::*;

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
