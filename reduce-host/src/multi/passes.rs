//! The reproducible reductions that take more than one collective:
//! [`ExactMean`](crate::ExactMean) (the exact sum, then the division by the
//! count over every rank), [`ExactVar`](crate::ExactVar),
//! [`ExactStd`](crate::ExactStd) and [`ExactMeanVar`](crate::ExactMeanVar)
//! (the mean, then the squared deviations from it),
//! [`ExactLogSumExp`](crate::ExactLogSumExp) (the largest element, then the
//! scaled exponentials). Each pass is an exact sum (or a
//! maximum) combined over the ranks as the one-collective reductions are,
//! brought to the host; the next pass's value goes to every member's GPU,
//! where its kernels read it as a single-GPU second pass reads its part's;
//! the host finishes with the folds' own last step. So the result is the
//! single-GPU one's and the fold's bit for bit.

use super::member::Combining;
use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::op::Op;
use crate::reducer::ExactOf;

/// The ranks' side of the passes: one [`super::Group`]'s members, or this
/// process's [`super::Communicator`] rank with the others.
pub(crate) trait Ranks<T: Element> {
    /// The reduction of every rank's shards with `combining` (an exact sum
    /// rounded once, or an [`Op`]'s value), on the host, and the number of
    /// elements over all ranks. An exact sum that reads a value per part
    /// reads the one [`Ranks::set_parameter`] gave.
    fn combined(&mut self, combining: Combining) -> Result<(T, u64)>;

    /// Gives every member `value` for the next pass's kernels to read.
    fn set_parameter(&mut self, value: T) -> Result<()>;
}

/// A reduction's passes, run on the ranks: its output (a `T`, or a pair),
/// or the error.
pub(crate) type Run<T, O> = dyn FnOnce(&mut dyn Ranks<T>) -> Result<O>;

/// [`crate::ExactMean`] of the ranks' data.
pub(crate) fn mean<T: FloatElement>(ranks: &mut dyn Ranks<T>) -> Result<T> {
    let (sum, count) = ranks.combined(Combining::Exact(ExactOf::Elements))?;
    Ok(T::exact_mean_of_sum(sum, as_count(count)?))
}

/// [`crate::ExactVar`] (with `root`: [`crate::ExactStd`]) of the ranks'
/// data with `correction`.
pub(crate) fn variance<T: FloatElement>(ranks: &mut dyn Ranks<T>, correction: f64, root: bool) -> Result<T> {
    let (_, variance) = mean_variance(ranks, correction)?;
    Ok(if root { variance.sqrt().canonical() } else { variance })
}

/// [`crate::ExactMeanVar`] of the ranks' data with `correction`: the exact
/// mean, sent to every member, then the exact sum of the squared deviations
/// from it, finished as [`crate::ExactVar`]'s fold.
pub(crate) fn mean_variance<T: FloatElement>(ranks: &mut dyn Ranks<T>, correction: f64) -> Result<(T, T)> {
    let (sum, count) = ranks.combined(Combining::Exact(ExactOf::Elements))?;
    let count = as_count(count)?;
    let mean = T::exact_mean_of_sum(sum, count);
    ranks.set_parameter(mean)?;
    // The states' sum: the host divides (and takes the root) below.
    let deviations = ExactOf::Deviations {
        shifts: 0, // each member's parameter: see `ExactOf::reading`
        correction: correction.to_bits(),
        root: false,
    };
    let (squares, _) = ranks.combined(Combining::Exact(deviations))?;
    Ok((mean, T::exact_variance_of_squares(squares, count, correction)))
}

/// [`crate::ExactLogSumExp`] of the ranks' data: `-inf` for none.
pub(crate) fn logsumexp<T: FloatElement>(ranks: &mut dyn Ranks<T>) -> Result<T> {
    let max = match ranks.combined(Combining::Op(Op::Max.kernel())) {
        // No elements anywhere: the fold of none.
        Err(Error::Empty { .. }) => return Ok(T::exact_logsumexp(&[])),
        other => other?.0,
    };
    ranks.set_parameter(max)?;
    let (sum, _) = ranks.combined(Combining::Exact(ExactOf::ScaledExps { maxima: 0 }))?;
    Ok(T::exact_logsumexp_of_sum(max, sum))
}

/// The ranks' element count as a `usize`, which the folds divide by.
fn as_count(count: u64) -> Result<usize> {
    usize::try_from(count)
        .map_err(|_| Error::InvalidGroup(format!("{count} elements in all: more than a usize counts")))
}
