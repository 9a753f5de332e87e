//! Where a launch of the segmented or axis kernels writes its results: in
//! order, or each at a place of its own (the kernels' `placed_*`
//! parameters; see `kernels-gpu/src/place.rs`). A reduction over a permuted
//! view runs in memory order and places its results in the view's order.

/// The most axes results can be placed along (the kernels' parameters).
pub(crate) const PLACED_DIMS: usize = 4;

/// Where a pass writes its results (the kernels' `placed_*` parameters):
/// in order, or result `o` at the sum of its indices along some axes of the
/// results (row-major, the product of their extents the results' count)
/// times their strides in the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Axes in use; none: in order.
    pub(crate) dims: usize,
    /// Each axis's extent and stride, innermost first.
    pub(crate) axes: [(u64, u64); PLACED_DIMS],
}

impl Placement {
    /// Each result at its own index.
    pub(crate) const IN_ORDER: Placement = Placement {
        dims: 0,
        axes: [(1, 0); PLACED_DIMS],
    };

    /// Results placed along `axes` (extent and stride in the output of
    /// each, outermost first); `None` past [`PLACED_DIMS`] axes.
    pub(crate) fn along(axes: impl DoubleEndedIterator<Item = (u64, u64)> + ExactSizeIterator) -> Option<Placement> {
        let dims = axes.len();
        if dims > PLACED_DIMS {
            return None;
        }
        let mut placement = Placement {
            dims,
            ..Placement::IN_ORDER
        };
        for (slot, axis) in placement.axes.iter_mut().zip(axes.rev()) {
            *slot = axis;
        }
        Some(placement)
    }

    /// The index result `o` is written at (what the kernels compute).
    #[cfg(test)]
    pub(crate) fn index(&self, o: u64) -> u64 {
        if self.dims == 0 {
            return o;
        }
        let (mut rest, mut index) = (o, 0);
        for &(extent, stride) in &self.axes[..self.dims] {
            index += (rest % extent) * stride;
            rest /= extent;
        }
        index
    }
}
