//! The two blocking calls that take a reduction and a place:
//! [`Reducer::reduce`] (a whole input, to the host) and
//! [`Reducer::reduce_over`] (one result per segment, row or position of the
//! kept axes, in a new buffer).

use crate::axes::{Reduced, Strided};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::over::{Over, Target};
use crate::reducer::Reducer;
use crate::reduction::Reduction;
use crate::segmented::{check_rows, invalid_offsets, segment_count};
use cust_core::DeviceCopy;
use kernels_gpu::abi::SEGMENTS_INVALID;
/// The number of results of `over` an input of `len` elements whose
/// offsets (if any) number `offsets_len`; the place's errors
/// ([`Error::InvalidSegments`], [`Error::InvalidAxes`], …) if it has none.
pub(crate) fn result_count<O>(over: &Over<'_, O>, len: usize, offsets_len: usize) -> Result<usize> {
    match *over {
        Over::Whole => Ok(1),
        Over::Segments(_) => segment_count(offsets_len),
        Over::Rows { rows, len: row_len } => {
            // Before any allocation, whose size it bounds.
            check_rows(len, rows, row_len)?;
            Ok(rows)
        }
        Over::Axes(layout, axes) => {
            // The view fits the input (`InvalidLayout`), before any allocation.
            layout.checked_dims(axes, len)?;
            layout.kept_outputs(axes)
        }
    }
}

/// The results' count and the shape to give them ([`result_count`]).
pub(crate) fn results_of<O>(
    over: &Over<'_, O>,
    len: usize,
    offsets_len: usize,
) -> Result<(usize, Strided, Vec<isize>)> {
    let results = result_count(over, len, offsets_len)?;
    Ok(match *over {
        Over::Whole => (results, Strided::contiguous(&[len])?, vec![0]),
        Over::Segments(_) => (results, Strided::contiguous(&[results])?, vec![]),
        Over::Rows { rows, len: row_len } => (results, Strided::contiguous(&[rows, row_len])?, vec![1]),
        Over::Axes(layout, axes) => (results, *layout, axes.to_vec()),
    })
}

/// The `_into` forms' outputs, checked before anything is enqueued:
/// `what` computes over `over` (else [`Error::UnsupportedOver`]), the place
/// is valid for an input of `len` elements and `offsets_len` offsets, and
/// the output (`out_len` elements; and the means, `means_len`) holds one
/// element per result, else [`Error::OutputLength`].
#[cfg(any(feature = "cust", feature = "cudarc"))]
pub(crate) fn check_into<In: DeviceCopy, R: Reduction<In>, O>(
    what: R,
    over: &Over<'_, O>,
    (len, offsets_len): (usize, usize),
    out_len: usize,
    means_len: Option<usize>,
) -> Result<()> {
    what.check_over(over)?;
    let expected = result_count(over, len, offsets_len)?;
    // In the order the caller names them: `(means, variances)`.
    let values = if means_len.is_some() { "variances" } else { "out" };
    for (output, found) in [("means", means_len), (values, Some(out_len))] {
        match found {
            Some(found) if found != expected => {
                return Err(Error::OutputLength {
                    output,
                    found,
                    expected,
                })
            }
            _ => {}
        }
    }
    Ok(())
}

impl<B: Backend> Reducer<B> {
    /// Reduces the whole of `input` with `what` and returns the result to
    /// the host: an [`Op`](crate::Op) (`Op::Sum`, `Op::Max`, …) gives a
    /// `T`, [`ArgMax`](crate::ArgMax) an `(index, value)`, [`Var`](crate::Var)
    /// the variance, … (see [`Reduction`] for the family and each one's
    /// rules). Blocks until the result is on the host; bitwise the same on
    /// every run for the same input at the same address and device.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, ArgMin, Error, Op, Var};
    /// let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and device buffers
    /// assert_eq!(emulator.reduce(&[2u32, 3, 7], Op::Product)?, 42);
    /// assert_eq!(emulator.reduce(&[i32::MAX, 1], Op::Sum)?, i32::MIN); // integers wrap
    /// assert!(matches!(emulator.reduce::<f32, _>(&[], Op::Max), Err(Error::Empty { op: Op::Max })));
    /// assert_eq!(emulator.reduce(&[5i32, -2, 8, -2], ArgMin)?, (1, -2));
    /// assert_eq!(emulator.reduce(&[1.0f64, 3.0], Var::<f64>::new(1.0)?)?, 2.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce<In: DeviceCopy, R: Reduction<In>>(&mut self, input: &B::Slice<In>, what: R) -> Result<R::Value> {
        what.value(self, input)
    }

    /// Reduces `input` with `what` over `over`: one result per segment,
    /// row, or position of the kept axes, in a new buffer, with the shape
    /// to give them ([`Reduced::shape`]). Blocks until the results are in
    /// the buffer. See [`Over`] for the places and their rules, and
    /// [`Reduction`] for what each result is.
    ///
    /// Errors: [`Error::InvalidSegments`] naming the first segment whose
    /// offsets decrease or pass the end of the input (or for no offsets),
    /// or a matrix whose shape is not the input's length;
    /// [`Error::InvalidAxes`], [`Error::InvalidLayout`] for axes and views
    /// ([`crate::axes`]); [`Error::Empty`] for `Max`/`Min`/argmax along
    /// axes of length 0; [`Error::UnsupportedOver`] for a pair no kernel
    /// computes; CUDA errors.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{axes::Strided, emulated::Emulator, Error, Op, Over};
    /// let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and device buffers
    /// let x = [4u32, 1, 7, 3, 9, 2]; // 2 × 3
    /// let minima = emulator.reduce_over(&x, Op::Min, Over::Segments(&[0u64, 3, 3, 6][..]))?;
    /// assert_eq!(minima.values.to_vec(), [1, u32::MAX, 2]); // an empty segment: the identity
    /// let rows = emulator.reduce_over(&x, Op::Sum, Over::Rows { rows: 2, len: 3 })?;
    /// assert_eq!((rows.values.to_vec(), rows.shape(true)), (vec![12, 14], vec![2, 1]));
    /// let columns = emulator.reduce_over(&x, Op::Max, Over::Axes(&Strided::contiguous(&[2, 3])?, &[0]))?;
    /// assert_eq!((columns.values.to_vec(), columns.shape(false)), (vec![4, 9, 7], vec![3]));
    /// let past_the_end = emulator.reduce_over(&x, Op::Min, Over::Segments(&[0u64, 7][..]));
    /// assert!(matches!(past_the_end, Err(Error::InvalidSegments(_))));
    /// # Ok(()) }
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn reduce_over<In: DeviceCopy, R: Reduction<In>>(
        &mut self,
        input: &B::Slice<In>,
        what: R,
        over: Over<'_, &B::Slice<u64>>,
    ) -> Result<Reduced<R::Results<B::Buffer<R::Output>>>> {
        what.check_over(&over)?;
        let len = B::parts(input).1;
        let offsets_len = over.offsets_len(|offsets| B::parts(*offsets).1);
        let (results, layout, axes) = results_of(&over, len, offsets_len)?;
        let mut values = self.backend.alloc::<R::Output>(results)?;
        let mut means = match R::MEANS {
            true => Some(self.backend.alloc::<R::Output>(results)?),
            false => None,
        };
        let out = B::parts(B::as_slice_mut(&mut values));
        let means_address = means.as_mut().map(|means| B::parts(B::as_slice_mut(means)).0);
        self.blocking_over(input, what, over, out, means_address)?;
        let results = R::results(values, means).ok_or(Error::internal("a mean-and-variance call without its means"))?;
        Reduced::new(results, &layout, &axes)
    }

    /// Runs `what` over `over` of `input` on the own stream into the `len`
    /// results at `out` (and the means at `means`) and waits for it; over
    /// segments, the offsets are checked (by the kernel, and here where
    /// there is no segment to launch for): [`Error::InvalidSegments`]
    /// naming the first bad one.
    pub(crate) fn blocking_over<In: DeviceCopy, R: Reduction<In>>(
        &mut self,
        input: &B::Slice<In>,
        what: R,
        over: Over<'_, &B::Slice<u64>>,
        (out, len): (u64, usize),
        means: Option<u64>,
    ) -> Result<()> {
        let values_len = B::parts(input).1;
        let status = match over {
            Over::Segments(offsets) => {
                if B::parts(offsets).1 == 1 {
                    // No segment, so no launch checks the one offset.
                    let offset = self.backend.element_to_host(offsets, 0)?;
                    if offset > values_len as u64 {
                        return Err(Error::InvalidSegments(format!(
                            "the offset {offset} is past the end of the {values_len} values"
                        )));
                    }
                }
                let status = self.backend.result_slot();
                // SAFETY: the result slot is 16 writable, aligned bytes.
                unsafe { self.backend.zero_words(status, 1, None)? };
                Some(status)
            }
            _ => None,
        };
        let target = Target {
            out,
            len,
            means,
            status,
        };
        what.enqueue(self, input, over, target, None)?;
        // Waits for the own stream: the buffers are read on others.
        let [status_word, _] = self.backend.read_result_slot()?;
        if let (Over::Segments(offsets), Some(_)) = (over, status) {
            if status_word as u32 == SEGMENTS_INVALID {
                return Err(invalid_offsets(&self.backend.to_host(offsets)?, values_len));
            }
        }
        Ok(())
    }
}
