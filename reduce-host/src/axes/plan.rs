//! The pass planner of an axis reduction: a view's axes merged where they
//! lie in memory as one, then one pass per reduced axis left, the longest
//! first, each routed to the whole-input, row or axis kernel. Pure: no
//! backend, no launch.

/// One axis of a view as the passes see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dim {
    pub(crate) extent: u64,
    pub(crate) stride: u64,
    pub(crate) reduced: bool,
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
    pub(crate) kept: Vec<Dim>,
    pub(crate) reduced: Dim,
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
}
