//! The pass planner of an axis reduction: a view's axes merged where they
//! lie in memory as one, then one pass per reduced axis left, the longest
//! first, each routed to the whole-input, row or axis kernel. Pure: no
//! backend, no launch.

use crate::placement::Placement;

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
    /// Where the results go.
    pub(crate) placed: Placement,
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
            placed: Placement::IN_ORDER,
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
            placed: Placement::IN_ORDER,
        }
    }

    pub(crate) fn outputs(&self) -> u64 {
        self.kept.iter().fold(1, |n, d| n.saturating_mul(d.extent))
    }
}

/// Each result of a view whose kept axes lie in memory in another order
/// than they are given must fold at least this many elements for its one
/// pass to run in memory order, followed by a pass that writes the results
/// in the kept axes' order (see [`plan_passes`]).
pub(crate) const TRANSPOSE_MIN_FOLD: u64 = 32;

/// The launches that reduce the `reduced` axes of `dims` (in the view's
/// order, extents not 0), their results row-major over the kept axes in
/// that order.
///
/// The axes (those of length 1 dropped) are first put in memory order (the
/// largest stride outermost; a stable sort, so equal strides keep their
/// order), which a contiguous view already is, and neighbours that lie in
/// memory as one merged: a permuted view of dense memory is planned as the
/// dense memory. Then a pass per reduced axis left, the longest first, each
/// after the first reading the previous one's contiguous results; one pass
/// with a reduced axis of length 1 when none is left.
///
/// Where that order puts the kept axes in another order than the view's,
/// the results must still come out in the view's order:
/// - with one pass of at most `place_up_to` results, along at most
///   [`PLACED_DIMS`](crate::placement::PLACED_DIMS) axes once merged, that pass places each result where
///   the view's order puts it ([`Pass::placed`]): scattered writes, which
///   the caller allows only for results that fit the L2 cache, so that
///   each line is whole before it goes to memory;
/// - with two passes or more, the last one reads its (scratch) input in the
///   kept axes' order: the planned passes and no more;
/// - with one pass, if each result folds at least [`TRANSPOSE_MIN_FOLD`]
///   elements, that pass writes its results in memory order to scratch,
///   and a last pass with a reduced axis of length 1 (the op over one
///   element: a copy) writes them in the kept axes' order. It reads and
///   writes each result once, at most 1/16 of what the reduction reads for
///   results as wide as the elements, where the one pass in the kept axes'
///   order would read its input in strides;
/// - with one pass of fewer elements per result, that pass reads its input
///   in the kept axes' order (a copy would cost about as much as the
///   reduction).
pub(crate) fn plan_passes(dims: &[Dim], place_up_to: u64) -> Vec<Pass> {
    let dims: Vec<Dim> = dims.iter().copied().filter(|d| d.extent != 1).collect();
    // Each axis with its place in the view, in memory order.
    let mut memory_order: Vec<(usize, Dim)> = dims.iter().copied().enumerate().collect();
    memory_order.sort_by_key(|&(_, dim)| std::cmp::Reverse(dim.stride));
    let in_memory: Vec<Dim> = memory_order.iter().map(|&(_, dim)| dim).collect();
    let (mut passes, last_source) = passes_in_order(&in_memory);
    let given: Vec<(usize, Dim)> = dims.iter().copied().enumerate().filter(|(_, d)| !d.reduced).collect();
    let memory: Vec<(usize, Dim)> = memory_order.iter().copied().filter(|(_, d)| !d.reduced).collect();
    if given == memory {
        return passes;
    }
    if let [only] = &mut passes[..] {
        match Placement::along(placed_axes(&given, &memory).iter().map(|d| (d.extent, d.stride))) {
            Some(placed) if only.outputs() <= place_up_to => {
                only.placed = placed;
                return passes;
            }
            _ => {}
        }
    }
    let reduced_elements = dims
        .iter()
        .filter(|d| d.reduced)
        .fold(1u64, |n, d| n.saturating_mul(d.extent));
    // The stride of each kept axis (by its place in the view) in the tensor
    // the last pass writes (a copy's input) or reads.
    let copy = passes.len() == 1 && reduced_elements >= TRANSPOSE_MIN_FOLD;
    let strides = if copy {
        // The one pass's results, row-major over the kept axes in memory order.
        let mut strides = Vec::with_capacity(memory.len());
        let mut stride = 1u64;
        for &(axis, dim) in memory.iter().rev() {
            strides.push((axis, stride));
            stride = stride.saturating_mul(dim.extent);
        }
        Some(strides)
    } else {
        split_kept(&last_source, &memory)
    };
    let kept: Option<Vec<Dim>> = given
        .iter()
        .map(|&(axis, dim)| {
            let &(_, stride) = strides.as_ref()?.iter().find(|&&(a, _)| a == axis)?;
            Some(Dim { stride, ..dim })
        })
        .collect();
    let (Some(kept), Some(last)) = (kept, passes.last_mut()) else {
        // Not reached (`split_kept` splits every merged axis): the view's order.
        return passes_in_order(&dims).0;
    };
    let kept = merged(&kept, |_, _| true);
    if copy {
        passes.push(Pass {
            kept,
            reduced: Dim {
                extent: 1,
                stride: 0,
                reduced: true,
            },
            placed: Placement::IN_ORDER,
        });
    } else {
        last.kept = kept;
    }
    passes
}

/// The axes of one pass's results, which come row-major over the kept axes
/// in memory order (`memory`, with their places in the view), each with
/// its stride in the output, row-major over the kept axes in the view's
/// order (`given`); neighbours merged.
fn placed_axes(given: &[(usize, Dim)], memory: &[(usize, Dim)]) -> Vec<Dim> {
    // Each kept axis (by its place in the view) with its output stride.
    let mut output_strides = Vec::with_capacity(given.len());
    let mut stride = 1u64;
    for &(axis, dim) in given.iter().rev() {
        output_strides.push((axis, stride));
        stride = stride.saturating_mul(dim.extent);
    }
    let output_stride = |axis: usize| output_strides.iter().find(|&&(a, _)| a == axis).map_or(0, |&(_, s)| s);
    let placed: Vec<Dim> = memory
        .iter()
        .map(|&(axis, dim)| Dim {
            stride: output_stride(axis),
            ..dim
        })
        .collect();
    merged(&placed, |_, _| true)
}

/// The stride of each kept axis (by its place in the view) in `source`,
/// whose kept axes are those of `memory` (with their places, in memory
/// order), neighbours merged; `None` if they do not split so.
fn split_kept(source: &[Dim], memory: &[(usize, Dim)]) -> Option<Vec<(usize, u64)>> {
    let mut strides = Vec::with_capacity(memory.len());
    let mut axes = memory.iter().copied();
    for merged in source.iter().filter(|d| !d.reduced) {
        // The axes (extents above 1) whose product is the merged extent.
        let mut group = Vec::new();
        let mut product = 1u64;
        while product < merged.extent {
            let (axis, dim) = axes.next()?;
            group.push((axis, dim.extent));
            product = product.checked_mul(dim.extent)?;
        }
        if product != merged.extent {
            return None;
        }
        let mut stride = merged.stride;
        for &(axis, extent) in group.iter().rev() {
            strides.push((axis, stride));
            stride = stride.saturating_mul(extent);
        }
    }
    axes.next().is_none().then_some(strides)
}

/// The passes of `dims` (extents not 1 nor 0) in their order, and the
/// tensor the last one reads (its axes, neighbours merged).
fn passes_in_order(dims: &[Dim]) -> (Vec<Pass>, Vec<Dim>) {
    let same_kind = |a: &Dim, b: &Dim| a.reduced == b.reduced;
    let mut current = merged(dims, same_kind);
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
            // Not reached: the loop goes on only while a reduced axis is left.
            None => return (passes, current),
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
            placed: Placement::IN_ORDER,
        });
        let next = merged(&next, same_kind);
        if longest.is_none() || !next.iter().any(|d| d.reduced) {
            return (passes, current);
        }
        current = next;
    }
}

/// A view whose exact sums the row kernel reads in place although its
/// reduced axes lie apart ([`row_runs`]): `rows` results, each `pitch`
/// elements after the one before, each the elements of `runs` runs of
/// `run_len` contiguous elements, `run_pitch` elements apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowRuns {
    pub(crate) rows: usize,
    pub(crate) run_len: usize,
    pub(crate) pitch: u64,
    pub(crate) runs: u64,
    pub(crate) run_pitch: u64,
}

impl RowRuns {
    /// Whether every run and row starts a 16-byte vector of `lanes`
    /// elements where the first does, and ends one: then the kernel reads
    /// the runs as whole vectors (else element by element, slower than
    /// gathering them).
    pub(crate) fn vectors_fit(&self, lanes: u64) -> bool {
        [self.run_len as u64, self.run_pitch, self.pitch]
            .iter()
            .all(|&n| n.checked_rem(lanes) == Some(0))
    }
}

/// The view `dims` (in the view's order, extents not 0) as rows in runs,
/// where, with the axes of length 1 dropped, put in memory order and
/// neighbours that lie as one merged, it is a reduced contiguous axis
/// innermost, one other reduced axis, and at most one kept axis, given in
/// memory order: a sum over axes 0 and 2 of a row-major 3-d tensor, or of
/// a slice with gaps between its rows. `None` for any other view.
pub(crate) fn row_runs(dims: &[Dim]) -> Option<RowRuns> {
    let dims: Vec<(usize, Dim)> = dims.iter().copied().filter(|d| d.extent != 1).enumerate().collect();
    let mut memory_order = dims.clone();
    memory_order.sort_by_key(|&(_, dim)| std::cmp::Reverse(dim.stride));
    let kept_axes = |axes: &[(usize, Dim)]| {
        axes.iter()
            .filter(|(_, d)| !d.reduced)
            .map(|&(axis, _)| axis)
            .collect::<Vec<_>>()
    };
    if kept_axes(&dims) != kept_axes(&memory_order) {
        return None;
    }
    let in_memory: Vec<Dim> = memory_order.iter().map(|&(_, dim)| dim).collect();
    let merged = merged(&in_memory, |a, b| a.reduced == b.reduced);
    let (runs, kept, run) = match merged[..] {
        [runs, run] => (runs, None, run),
        [runs, kept, run] if !kept.reduced => (runs, Some(kept), run),
        [kept, runs, run] if !kept.reduced => (runs, Some(kept), run),
        _ => return None,
    };
    if !(runs.reduced && run.reduced && run.stride == 1) {
        return None;
    }
    Some(RowRuns {
        rows: usize::try_from(kept.map_or(1, |k| k.extent)).ok()?,
        run_len: usize::try_from(run.extent).ok()?,
        pitch: kept.map_or(0, |k| k.stride),
        runs: runs.extent,
        run_pitch: runs.stride,
    })
}

/// How one pass runs.
pub(crate) enum Route {
    /// All of it one contiguous run: the whole-input kernel.
    Whole,
    /// Rows of contiguous elements, `pitch` elements from one's start to
    /// the next's, in groups of `group.0` rows `group.1` apart (under two
    /// kept axes; `(0, 0)` under one): the row-wise kernels.
    Rows {
        rows: usize,
        row_len: usize,
        pitch: u64,
        group: (u64, u64),
    },
    /// The axis kernel.
    Axis,
}

impl Pass {
    pub(crate) fn route(&self) -> Route {
        let contiguous = self.reduced.stride == 1 && self.reduced.extent > 0;
        match self.kept[..] {
            [] if contiguous => Route::Whole,
            [rows] if contiguous => Route::Rows {
                rows: rows.extent as usize,
                row_len: self.reduced.extent as usize,
                pitch: rows.stride,
                group: (0, 0),
            },
            // No product of extents overflows: `enqueue_axes` checked the positions.
            [groups, rows] if contiguous => Route::Rows {
                rows: groups.extent.saturating_mul(rows.extent) as usize,
                row_len: self.reduced.extent as usize,
                pitch: rows.stride,
                group: (rows.extent, groups.stride),
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
        let passes = plan_passes(&dims(&[4, 5, 6], &[30, 6, 1], &[false, true, true]), 0);
        assert_eq!(passes.len(), 1);
        assert!(matches!(
            passes[0].route(),
            Route::Rows {
                rows: 4,
                row_len: 30,
                pitch: 30,
                group: (0, 0)
            }
        ));
        // Reduce (0, 2) of [1024, 1024, 256]: the longest (axis 0) first, as
        // columns of 2^18, then rows of 256.
        let passes = plan_passes(&dims(&[1024, 1024, 256], &[1 << 18, 256, 1], &[true, false, true]), 0);
        assert_eq!(passes.len(), 2);
        assert_eq!(passes[0].reduced.extent, 1024);
        assert_eq!(passes[0].kept, dims(&[1 << 18], &[1], &[false]));
        assert!(matches!(
            passes[1].route(),
            Route::Rows {
                rows: 1024,
                row_len: 256,
                pitch: 256,
                group: (0, 0)
            }
        ));
        // All axes of a contiguous tensor: the whole-input kernel.
        let passes = plan_passes(&dims(&[3, 7], &[7, 1], &[true, true]), 0);
        assert!(matches!(passes[..], [ref p] if matches!(p.route(), Route::Whole)));
        // Length-1 axes vanish; nothing to reduce is one pass of one element.
        let passes = plan_passes(&dims(&[1, 9], &[9, 1], &[true, false]), 0);
        assert_eq!(passes.len(), 1);
        assert_eq!((passes[0].reduced.extent, passes[0].outputs()), (1, 9));
    }

    /// The dims of a view of `shape` and `strides`, `reduced` the set of axes.
    fn view(shape: &[u64], strides: &[u64], reduced: &[usize]) -> Vec<Dim> {
        let flags: Vec<bool> = (0..shape.len()).map(|a| reduced.contains(&a)).collect();
        dims(shape, strides, &flags)
    }

    fn row_major(shape: &[u64]) -> Vec<u64> {
        let mut strides = vec![0; shape.len()];
        let mut stride = 1;
        for (slot, &extent) in strides.iter_mut().zip(shape).rev() {
            *slot = stride;
            stride *= extent;
        }
        strides
    }

    /// Which views with reduced axes apart the exact kernels read in place
    /// as rows in runs, and how.
    #[test]
    fn row_runs_are_a_contiguous_run_innermost_one_more_reduced_axis_and_one_kept() {
        let runs = |shape: &[u64], strides: &[u64], reduced: &[usize]| row_runs(&view(shape, strides, reduced));
        let cube = [4, 100, 500];
        let in_place = RowRuns {
            rows: 100,
            run_len: 500,
            pitch: 500,
            runs: 4,
            run_pitch: 50_000,
        };
        assert_eq!(runs(&cube, &row_major(&cube), &[0, 2]), Some(in_place));
        // Vectors of 4 fit (500 = 125 · 4); of 8 they do not.
        assert!(in_place.vectors_fit(4));
        assert!(!in_place.vectors_fit(8));
        // The kept axis outermost, and none: a slice with gaps between its rows.
        let outer_kept = runs(&[4, 100, 500], &[100 * 600, 600, 1], &[1, 2]);
        assert_eq!(
            outer_kept,
            Some(RowRuns {
                rows: 4,
                run_len: 500,
                pitch: 60_000,
                runs: 100,
                run_pitch: 600,
            })
        );
        let gaps = runs(&[100, 499], &[500, 1], &[0, 1]);
        let whole = RowRuns {
            rows: 1,
            run_len: 499,
            pitch: 0,
            runs: 100,
            run_pitch: 500,
        };
        assert_eq!(gaps, Some(whole));
        assert!(!whole.vectors_fit(2));
        // Merged neighbours: axes 0, 2 and 3 of [4, 5, 6, 500] (2 and 3 one
        // run of 3000), the kept axes 1 and 2 of [4, 5, 6, 500] as one.
        let four = [4, 5, 6, 500];
        assert_eq!(
            runs(&four, &row_major(&four), &[0, 2, 3]).map(|r| r.run_len),
            Some(3000)
        );
        assert_eq!(runs(&four, &row_major(&four), &[0, 3]).map(|r| r.rows), Some(30));
        // Not rows in runs: a kept axis innermost, two axes apart from the
        // run, the kept axes out of memory order, one pass (no axis apart).
        assert_eq!(runs(&four, &row_major(&four), &[0, 2]), None);
        assert_eq!(runs(&four, &row_major(&four), &[1, 3]), None);
        assert_eq!(runs(&[6, 5, 4, 500], &[500, 3000, 15_000, 1], &[2, 3]), None);
        assert_eq!(runs(&cube, &row_major(&cube), &[1, 2]), None);
    }

    /// Every subset of `0..rank`.
    fn subsets(rank: usize) -> impl Iterator<Item = Vec<usize>> {
        (0u32..1 << rank).map(move |bits| (0..rank).filter(|&a| bits & (1 << a) != 0).collect())
    }

    /// The plans of contiguous views are those of the planner before it
    /// put axes in memory order (`passes_in_order` of the axes as given).
    #[test]
    fn contiguous_plans_are_unchanged() {
        for shape in [
            &[7u64][..],
            &[4, 5, 6],
            &[1024, 1024, 256],
            &[512, 1024, 64],
            &[3, 1, 5, 1, 2],
            &[2, 3, 4, 5, 6],
            &[1, 1, 1],
        ] {
            let strides = row_major(shape);
            for reduced in subsets(shape.len()) {
                let dims = view(shape, &strides, &reduced);
                let given: Vec<Dim> = dims.iter().copied().filter(|d| d.extent != 1).collect();
                assert_eq!(
                    plan_passes(&dims, 0),
                    passes_in_order(&given).0,
                    "{shape:?} reducing {reduced:?}"
                );
            }
        }
    }

    /// A permutation of dense memory whose kept axes keep their order is
    /// planned as the dense memory; one that reorders them, as the dense
    /// memory and then a copy in the kept axes' order (or, with several
    /// passes, the same passes, the last reading in the kept axes' order).
    #[test]
    fn permuted_dense_plans_are_the_dense_plans() {
        let x = [512u64, 1024, 64];
        let x_strides = row_major(&x);
        // T = X.transpose(0, 2): [64, 1024, 512], strides [1, 64, 65536].
        let t = [64u64, 1024, 512];
        let t_strides = [1u64, 64, 65536];
        // The sum over all axes, the mean over [0, 2]: X's plans.
        assert_eq!(
            plan_passes(&view(&t, &t_strides, &[0, 1, 2]), 0),
            plan_passes(&view(&x, &x_strides, &[0, 1, 2]), 0)
        );
        assert!(
            matches!(plan_passes(&view(&t, &t_strides, &[0, 1, 2]), 0)[..], [ref p] if matches!(p.route(), Route::Whole))
        );
        assert_eq!(
            plan_passes(&view(&t, &t_strides, &[0, 2]), 0),
            plan_passes(&view(&x, &x_strides, &[0, 2]), 0)
        );
        // Along axis 2 (argmax): X along axis 0, then its 2^16 results
        // (row-major [1024, 64]) copied as [64, 1024].
        let along_2 = plan_passes(&view(&t, &t_strides, &[2]), 0);
        let copy = |kept: &[(u64, u64)]| Pass {
            kept: kept
                .iter()
                .map(|&(extent, stride)| Dim {
                    extent,
                    stride,
                    reduced: false,
                })
                .collect(),
            reduced: Dim {
                extent: 1,
                stride: 0,
                reduced: true,
            },
            placed: Placement::IN_ORDER,
        };
        let x_along_0 = plan_passes(&view(&x, &x_strides, &[0]), 0);
        assert_eq!(along_2[..1], x_along_0[..]);
        assert_eq!(along_2[1], copy(&[(64, 1), (1024, 64)]));
        // Along axis 1: X along axis 1, its [512, 64] results copied as [64, 512].
        let along_1 = plan_passes(&view(&t, &t_strides, &[1]), 0);
        assert_eq!(along_1[..1], plan_passes(&view(&x, &x_strides, &[1]), 0)[..]);
        assert_eq!(along_1[1], copy(&[(64, 1), (512, 64)]));
        // Placed: the one pass of X, each result written where T's order puts it.
        let placed = |axes: &[(u64, u64)]| {
            let dims: Vec<Dim> = axes
                .iter()
                .map(|&(extent, stride)| Dim {
                    extent,
                    stride,
                    reduced: false,
                })
                .collect();
            Placement::along(dims.iter().map(|d| (d.extent, d.stride)))
        };
        let along_2 = plan_passes(&view(&t, &t_strides, &[2]), 1 << 16);
        assert_eq!(along_2.len(), 1);
        assert_eq!(
            (&along_2[0].kept, along_2[0].reduced),
            (&x_along_0[0].kept, x_along_0[0].reduced)
        );
        assert_eq!(Some(along_2[0].placed), placed(&[(1024, 1), (64, 1024)]));
        // One result over the limit: the copy.
        assert_eq!(plan_passes(&view(&t, &t_strides, &[2]), (1 << 16) - 1).len(), 2);
        // Along axis 0 (rows of 64 in memory): X's rows, placed as [1024, 512].
        let along_0 = plan_passes(&view(&t, &t_strides, &[0]), u64::MAX);
        let x_along_2 = plan_passes(&view(&x, &x_strides, &[2]), 0);
        assert_eq!(
            (&along_0[0].kept, along_0[0].reduced),
            (&x_along_2[0].kept, x_along_2[0].reduced)
        );
        assert_eq!(Some(along_0[0].placed), placed(&[(512, 1), (1024, 512)]));
        // Every permutation of a dense [6, 5, 40, 3] and every set of axes.
        let dense = [6u64, 5, 40, 3];
        let dense_strides = row_major(&dense);
        for order in permutations(4) {
            let shape: Vec<u64> = order.iter().map(|&a| dense[a]).collect();
            let strides: Vec<u64> = order.iter().map(|&a| dense_strides[a]).collect();
            for reduced in subsets(4) {
                let in_dense: Vec<usize> = reduced.iter().map(|&a| order[a]).collect();
                let expected = plan_passes(&view(&dense, &dense_strides, &in_dense), 0);
                let got = plan_passes(&view(&shape, &strides, &reduced), 0);
                let kept: Vec<usize> = (0..4).filter(|a| !reduced.contains(a)).map(|a| order[a]).collect();
                let what = format!("{shape:?} {strides:?} reducing {reduced:?}");
                if kept.windows(2).all(|w| w[0] < w[1]) {
                    assert_eq!(got, expected, "{what}");
                } else if got.len() == expected.len() + 1 {
                    assert_eq!(got[..expected.len()], expected[..], "{what}");
                    assert_eq!(got.last().map(|p| p.reduced.extent), Some(1), "{what}");
                } else {
                    // The last pass reads in the kept axes' order.
                    let last = got.len() - 1;
                    assert_eq!(got[..last], expected[..last], "{what}");
                    assert_eq!(got[last].reduced, expected[last].reduced, "{what}");
                }
            }
        }
    }

    fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for shorter in permutations(n - 1) {
            for at in 0..n {
                let mut p = shorter.clone();
                p.insert(at, n - 1);
                out.push(p);
            }
        }
        out
    }

    /// Runs `passes` on the CPU over `data` (wrapping sums), as the kernels
    /// would: each pass's results row-major over its kept axes.
    fn run(passes: &[Pass], data: &[u64], first_offset: u64) -> Vec<u64> {
        let mut source = data.to_vec();
        let mut base = first_offset;
        for pass in passes {
            let outputs = pass.outputs();
            let mut results: Vec<Option<u64>> = vec![None; outputs as usize];
            for index in 0..outputs {
                let mut rest = index;
                let mut at = base;
                for dim in pass.kept.iter().rev() {
                    at += (rest % dim.extent) * dim.stride;
                    rest /= dim.extent;
                }
                let sum = (0..pass.reduced.extent).fold(0u64, |s, j| {
                    s.wrapping_add(source[(at + j * pass.reduced.stride) as usize])
                });
                let place = pass.placed.index(index);
                assert_eq!(results[place as usize], None, "two results placed at {place}");
                results[place as usize] = Some(sum);
            }
            source = results
                .into_iter()
                .map(|r| r.expect("a result placed nowhere"))
                .collect();
            base = 0;
        }
        source
    }

    /// The planned passes, run on the CPU, give the sums of random views
    /// (permuted, sliced, broadcast, overlapping) row-major over the kept
    /// axes in their order.
    #[test]
    fn planned_passes_sum_random_views() {
        use rand::{Rng, SeedableRng};
        let seed: u64 = rand::random();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        for case in 0..3000 {
            let rank = rng.gen_range(1..=5);
            let shape: Vec<u64> = (0..rank)
                .map(|_| {
                    if rng.gen_ratio(1, 6) {
                        rng.gen_range(8..=40)
                    } else {
                        rng.gen_range(1..=6)
                    }
                })
                .collect();
            let dense = row_major(&shape);
            let mut order: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                order.swap(i, rng.gen_range(0..=i));
            }
            let mut strides: Vec<u64> = order.iter().map(|&a| dense[a]).collect();
            match rng.gen_range(0..4) {
                0 => strides[rng.gen_range(0..rank)] = 0,
                1 => strides[rng.gen_range(0..rank)] *= 2,
                2 => strides[rng.gen_range(0..rank)] = rng.gen_range(1..4),
                _ => {}
            }
            let reduced: Vec<usize> = (0..rank).filter(|_| rng.gen()).collect();
            let offset = rng.gen_range(0..3);
            let span = 1 + shape.iter().zip(&strides).map(|(e, s)| (e - 1) * s).sum::<u64>();
            let data: Vec<u64> = (0..offset + span).map(|_| rng.gen::<u32>() as u64).collect();
            let dims = view(&shape, &strides, &reduced);
            let place_up_to = if rng.gen() { 0 } else { rng.gen_range(0..200) };
            let got = run(&plan_passes(&dims, place_up_to), &data, offset);
            // The reference: each kept position (row-major, in order) over all reduced ones.
            let kept: Vec<usize> = (0..rank).filter(|a| !reduced.contains(a)).collect();
            let positions = |axes: &[usize]| {
                axes.iter().fold(vec![0u64], |bases, &a| {
                    let (extent, stride) = (shape[a], strides[a]);
                    bases
                        .iter()
                        .flat_map(|&b| (0..extent).map(move |i| b + i * stride))
                        .collect()
                })
            };
            let inner = positions(&reduced);
            let expected: Vec<u64> = positions(&kept)
                .iter()
                .map(|&b| {
                    inner
                        .iter()
                        .fold(0u64, |s, &r| s.wrapping_add(data[(offset + b + r) as usize]))
                })
                .collect();
            assert_eq!(
                got, expected,
                "seed {seed} case {case}: {shape:?} {strides:?} reducing {reduced:?}, placing up to {place_up_to}"
            );
        }
    }
}
