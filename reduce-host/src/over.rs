//! *Where* a reduction is computed: [`Over`], and where an enqueued
//! reduction writes: [`Target`].

use crate::axes::Strided;
use crate::error::{Error, Result};
#[cfg(doc)]
use crate::{MeanVar, Reducer, Reduction};

/// *Where* a reduction is computed: which elements make each result.
///
/// `Offsets` is how the caller holds the segments' offsets: a device slice
/// of `u64` of the caller's buffer kind (`&DeviceSlice<u64>`, `&[u64]` on
/// the emulator, an [`Input`](crate::Input) in a [`Scope`](crate::Scope), a
/// cudarc buffer).
///
/// | over | results | shape (`keepdim`: false / true) |
/// |---|---|---|
/// | `Whole` | one | `[]` / `[1]` |
/// | `Segments(offsets)` | one per segment `s`, the elements `offsets[s]..offsets[s + 1]` (CSR-style, `segments + 1` offsets) | `[segments]` |
/// | `Rows { rows, len }` | one per row of a row-major `rows × len` matrix | `[rows]` / `[rows, 1]` |
/// | `Axes(&layout, &axes)` | one per position of the axes of the view `layout` not in `axes` (PyTorch's `dim`; negative from the end), row-major | see [`crate::axes`] |
///
/// - **Empty parts**, one rule for every *what*: a reduction that has a
///   value for no elements gives it wherever a part is empty (sum 0,
///   product 1, mean and variance NaN, logsumexp `-inf`, count 0, any
///   false, all true: see [`Reduction`]). One that has none (`Max`/`Min`,
///   their NaN-ignoring forms and `MaxAbs`, widened or not, and
///   argmax/argmin) is [`Error::Empty`] along an **empty dimension**, known
///   from the call's shape: a whole input of no elements, rows of length 0
///   or a reduced axis of length 0, as `torch.amax` and `torch.argmax` are,
///   even where no result is asked for (0 rows of length 0). An **empty
///   segment** is data (its offsets are read by the kernel, on the device),
///   so it cannot fail the call: it gets the op's identity (`-inf`/`MIN` for
///   `Max` and `MaxAbs`, `+inf`/`MAX` for `Min`; NaN for `NanMax`/`NanMin`
///   of floats, as a segment of only NaNs), as CUB's segmented reduction
///   gives its initial value (the crate docs list every op's).
/// - **Offsets** that decrease or pass the end of the input are
///   [`Error::InvalidSegments`] naming the first bad segment from the
///   blocking calls; the `_into` calls, which do not wait, clamp them into
///   the input, so nothing outside it is read.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Over<'a, Offsets> {
    /// The whole input: one result.
    Whole,
    /// One result per segment given by CSR-style `u64` offsets.
    Segments(Offsets),
    /// One result per row of a row-major matrix of `rows` rows of `len` elements.
    Rows {
        /// The number of rows.
        rows: usize,
        /// The elements of each row.
        len: usize,
    },
    /// One result per position of the kept axes of a strided view: the
    /// view, and the axes reduced.
    Axes(&'a Strided, &'a [isize]),
}

impl<'a, Offsets> Over<'a, Offsets> {
    /// The number of offsets (`len` of them, for segments), 0 for the
    /// places without.
    pub(crate) fn offsets_len(&self, len: impl FnOnce(&Offsets) -> usize) -> usize {
        match self {
            Over::Segments(offsets) => len(offsets),
            _ => 0,
        }
    }

    /// The same place, with the offsets converted by `f`.
    #[cfg(any(feature = "cust", feature = "cudarc"))]
    pub(crate) fn map<O>(self, f: impl FnOnce(Offsets) -> O) -> Over<'a, O> {
        match self {
            Over::Whole => Over::Whole,
            Over::Segments(offsets) => Over::Segments(f(offsets)),
            Over::Rows { rows, len } => Over::Rows { rows, len },
            Over::Axes(layout, axes) => Over::Axes(layout, axes),
        }
    }

    /// The same place, with the offsets converted by the fallible `f`.
    #[cfg(feature = "cudarc")]
    pub(crate) fn try_map<O>(self, f: impl FnOnce(Offsets) -> Result<O>) -> Result<Over<'a, O>> {
        Ok(match self {
            Over::Whole => Over::Whole,
            Over::Segments(offsets) => Over::Segments(f(offsets)?),
            Over::Rows { rows, len } => Over::Rows { rows, len },
            Over::Axes(layout, axes) => Over::Axes(layout, axes),
        })
    }

    /// The same place, borrowing the offsets.
    #[cfg(any(feature = "cust", feature = "cudarc"))]
    pub(crate) fn as_ref(&self) -> Over<'a, &Offsets> {
        match self {
            Over::Whole => Over::Whole,
            Over::Segments(offsets) => Over::Segments(offsets),
            Over::Rows { rows, len } => Over::Rows { rows: *rows, len: *len },
            Over::Axes(layout, axes) => Over::Axes(layout, axes),
        }
    }
}

/// Where an enqueued reduction writes: `len` results at `out`, the means
/// of [`MeanVar`](crate::MeanVar) at `means`, and, for a blocking call over
/// segments, the kernel's offset check at `status` (a `u32`).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub(crate) out: u64,
    pub(crate) len: usize,
    pub(crate) means: Option<u64>,
    pub(crate) status: Option<u64>,
}

impl Target {
    /// One result at `out` (and, with `means`, its mean there): a blocking
    /// call's over the whole input.
    pub(crate) fn whole(out: u64, means: Option<u64>) -> Target {
        Target {
            out,
            len: 1,
            means,
            status: None,
        }
    }

    /// The address of a one-result target; [`Error::OutputLength`] otherwise.
    pub(crate) fn single(self) -> Result<u64> {
        if self.len != 1 {
            return Err(Error::OutputLength {
                output: "out",
                found: self.len,
                expected: 1,
            });
        }
        Ok(self.out)
    }
}
