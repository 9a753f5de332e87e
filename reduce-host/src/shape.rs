//! Launch shapes: the grid and block of every production launch, computed
//! from the tuning data (`tuning.rs`), the kernels' tiling constants
//! (`kernels_gpu::abi`) and the grid cap of the kernel on the device. A shape
//! depends only on its arguments, so the combine order of every result, and
//! with it every float result, is the same on every run.

use crate::tuning::{self, Tuning};
use kernels_gpu::abi::{
    AxisPlan, SegmentPlan, SegmentSchedule, AXIS_LOADS_IN_FLIGHT, VECTORS_PER_THREAD, VECTOR_BYTES,
};

/// The launch shape of one reduction: blocks × threads per block (see
/// [`Reducer::launch_shape`](crate::Reducer::launch_shape)).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, LaunchShape, Op};
/// let mut emulator = Emulator::default(); // 64-thread blocks, at most 6
/// // One block reads 64 threads × 16 f32s (four 16-byte loads each):
/// assert_eq!(emulator.launch_shape::<f32>(Op::Sum, 1000)?, LaunchShape { blocks: 1, threads_per_block: 64 });
/// assert_eq!(emulator.launch_shape::<f32>(Op::Sum, 3000)?.blocks, 3);
/// assert_eq!(emulator.launch_shape::<f32>(Op::Sum, 1 << 20)?.blocks, 6); // the grid cap
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in the (1-D) grid.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// let shape = reduce::emulated::Emulator::default().launch_shape::<f32>(reduce::Op::Sum, 1 << 20)?;
    /// assert_eq!(shape.blocks, 6); // the emulator's default grid cap
    /// # Ok(()) }
    /// ```
    pub blocks: u32,
    /// Threads per block.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// let shape = reduce::emulated::Emulator::default().launch_shape::<f32>(reduce::Op::Sum, 1 << 20)?;
    /// assert_eq!(shape.threads_per_block, 64); // the emulator's default policy
    /// # Ok(()) }
    /// ```
    pub threads_per_block: u32,
}

/// Elements of `element_bytes` each in one 16-byte vector; `None` unless one
/// fits (the element types have 1 to 8 bytes).
pub(crate) fn elements_per_vector(element_bytes: usize) -> Option<u64> {
    VECTOR_BYTES
        .checked_div(element_bytes as u64)
        .filter(|&elements| elements > 0)
}

/// Elements of `element_bytes` each in one thread's tile of
/// `VECTORS_PER_THREAD` 16-byte vectors (at most 64); `None` as
/// [`elements_per_vector`].
fn tile_elements(element_bytes: usize) -> Option<u64> {
    elements_per_vector(element_bytes)?.checked_mul(VECTORS_PER_THREAD)
}

/// The production kernels' launch shape for `len` input elements of
/// `element_bytes` each: enough blocks for one full tile of 16-byte loads per
/// thread, at most `grid_cap`. (The GPU and the emulator both launch with it.)
/// `None` if its arithmetic overflows, which no length does with the library's
/// element types and block sizes.
pub(crate) fn production_shape(tuning: Tuning, len: usize, element_bytes: usize, grid_cap: u32) -> Option<LaunchShape> {
    let block = tuning.block_threads;
    let elements_per_tile = u64::from(block).checked_mul(tile_elements(element_bytes)?)?;
    let blocks_needed = (len as u64).div_ceil(elements_per_tile).max(1);
    let blocks = blocks_needed.min(grid_cap as u64) as u32;
    Some(LaunchShape {
        blocks,
        threads_per_block: block,
    })
}

/// Whether `rows` give each warp of a grid of `grid_cap` blocks of the
/// tuning row one at least.
pub(crate) fn rows_fill_warps(tuning: Tuning, rows: usize, grid_cap: u32) -> bool {
    let warps = u64::from(grid_cap).saturating_mul(u64::from(tuning.block_threads / 32));
    rows as u64 >= warps
}

/// How many blocks each of `rows` rows of `len` elements of `element_bytes`
/// gets from the whole-input exact kernel whose grid holds `grid` blocks at
/// once: the grid shared evenly (`grid / rows`, at least one), where that
/// uses `Tuning::exact_row_wave_fill_percent` of the grid. Otherwise more,
/// in waves (the SMs take each block as another finishes), the fewest that
/// use that share of the waves' slots (up to ten times the even share),
/// as long as each block still gives its threads
/// `Tuning::exact_row_min_tiles` tiles: a block a row of 300 rows on 264
/// blocks left a second wave of 36, which read at a fraction of the
/// bandwidth, and 200 rows used three quarters of the SMs' blocks.
pub(crate) fn exact_row_parts(tuning: Tuning, grid: u32, rows: u32, len: usize, element_bytes: usize) -> u32 {
    let (grid, rows) = (u64::from(grid.max(1)), u64::from(rows.max(1)));
    // The percentage of the waves' slots `parts` blocks a row use (at most
    // ten times the rows or the grid's blocks: far from overflowing).
    let used = |parts: u64| {
        let blocks = rows.saturating_mul(parts);
        let slots = blocks.div_ceil(grid).saturating_mul(grid);
        blocks.saturating_mul(100).checked_div(slots).unwrap_or(100)
    };
    let even = grid.checked_div(rows).unwrap_or(1).max(1);
    let (mut best, mut parts) = (even, even);
    while used(best) < tuning.exact_row_wave_fill_percent
        && parts < even.saturating_mul(10)
        && fills_block_tiles(
            tuning,
            len.checked_div((parts as usize).saturating_add(1)).unwrap_or(0),
            element_bytes,
            tuning.exact_row_min_tiles,
        )
    {
        parts = parts.saturating_add(1);
        if used(parts) > used(best) {
            best = parts;
        }
    }
    // At most ten times the even share, itself at most the grid: a `u32`.
    u32::try_from(best).unwrap_or(u32::MAX)
}

/// Whether `len` elements of `element_bytes` each give every thread of a
/// block of the tuning row at least `tiles` full tiles.
pub(crate) fn fills_block_tiles(tuning: Tuning, len: usize, element_bytes: usize, tiles: u64) -> bool {
    let block_tile = tile_elements(element_bytes).and_then(|tile| tile.checked_mul(u64::from(tuning.block_threads)));
    block_tile
        .and_then(|tile| tile.checked_mul(tiles))
        .is_some_and(|needed| len as u64 >= needed)
}

/// [`production_shape`] for a whole-input exact sum of `f64`s whose
/// registers the tuning row caps (`Tuning::exact_f64_max_registers`), so
/// that `grid_cap` is about twice the uncapped kernel's (four 512-thread
/// blocks an SM against two): the blocks past half of it only where each
/// thread still gets `exact_f64_full_grid_tiles` tiles (a block's
/// reduction of expansions costs more than a tile or two of loads); below
/// half, one tile a thread, as [`production_shape`] gives.
pub(crate) fn lean_exact_shape(tuning: Tuning, len: usize, grid_cap: u32) -> Option<LaunchShape> {
    let element_bytes = std::mem::size_of::<f64>();
    let shape = production_shape(tuning, len, element_bytes, grid_cap)?;
    let tiles = usize::try_from(tuning.exact_f64_full_grid_tiles.max(1)).ok()?;
    let loaded = production_shape(tuning, len.checked_div(tiles)?, element_bytes, grid_cap)?;
    let blocks = Ord::max(Ord::min(shape.blocks, (grid_cap / 2).max(1)), loaded.blocks);
    Some(LaunchShape { blocks, ..shape })
}

/// The axis kernel's plan and grid for `outputs` results, each folding
/// `reduced` elements (see [`crate::axes`]): a block of the largest power of
/// two of threads the tuning row allows; when the reduced axis is
/// contiguous, its lanes first, one per [`AXIS_ELEMENTS_PER_LANE`] elements
/// (up to the block), else results first (32, or more while the tiles of results
/// outnumber `grid_cap`); and, when the tiles of results are fewer
/// than `grid_cap` and `splittable`, the reduced axis split into parts of at
/// least [`AXIS_LOADS_PER_PART`] loads per thread, up to `grid_cap` blocks in
/// all.
pub(crate) fn axis_shape(
    tuning: Tuning,
    grid_cap: u32,
    outputs: u64,
    reduced: u64,
    reduced_contiguous: bool,
    splittable: bool,
) -> (AxisPlan, LaunchShape) {
    let threads_log2 = tuning.block_threads.ilog2();
    // Past 2^63 (a broadcast axis can be that long) there is no next power
    // of two: as many lanes as the block has.
    let lanes_for = |n: u64| {
        n.max(1)
            .checked_next_power_of_two()
            .map_or(threads_log2, |p| p.ilog2().min(threads_log2))
    };
    let reduce_lanes_first = reduced_contiguous && reduced > 1;
    let (output_lanes_log2, reduce_lanes_log2) = if reduce_lanes_first {
        let reduce = lanes_for(reduced.div_ceil(AXIS_ELEMENTS_PER_LANE));
        (threads_log2.saturating_sub(reduce), reduce)
    } else {
        // A warp's worth of results at least (a coalesced 32-element row
        // segment), more only while the tiles still fill the grid: the lanes
        // left go along the reduced axis, which then needs fewer parts, each
        // combined by one block at the end.
        let per_tile = outputs.checked_div(u64::from(grid_cap.max(1))).unwrap_or(0);
        let output = lanes_for(per_tile).max(5).min(lanes_for(outputs));
        (output, threads_log2.saturating_sub(output))
    };
    let tiles = outputs.div_ceil(1 << output_lanes_log2).max(1);
    let cap = u64::from(grid_cap.max(1));
    let useful = reduced.div_ceil(AXIS_LOADS_PER_PART << reduce_lanes_log2).max(1);
    let splits = if tiles < cap && splittable {
        cap.checked_div(tiles).unwrap_or(1).min(useful).max(1)
    } else {
        1
    };
    let plan = AxisPlan {
        output_lanes_log2,
        reduce_lanes_log2,
        reduce_lanes_first,
        // At most `grid_cap`, a `u32`.
        splits: splits as u32,
    };
    let blocks = tiles.saturating_mul(splits).min(cap) as u32;
    (
        plan,
        LaunchShape {
            blocks,
            threads_per_block: 1 << threads_log2,
        },
    )
}

/// Elements of a contiguous reduced axis per lane: a result's lanes fold
/// their share, then combine in a tree whose levels cost a summary merge
/// each; fewer lanes mean fewer levels but more rounds of loads in turn.
/// Measured on an H100 (2026-11-24, `bench statistics`, rows of 256, each
/// ratio our time over our sum's, medians of 2–4 rounds in two calls),
/// at 8 / 16 / 32 / 64 / 128 / 256 elements per lane:
///
/// | statistic | f32 | f64 |
/// |---|---|---|
/// | var | 2.02 / 1.29 / **1.12** / 1.13 / 1.47 / 2.95 | 1.61 / 1.13 / **1.05** / 1.03 / 1.10 / 1.52 |
/// | logsumexp | 2.78 / 1.98 / **1.65** / 1.54 / 1.60 / 2.96 | 3.04 / 2.26 / **1.96** / 1.83 / 1.84 / 1.94 |
/// | count_nonzero | 1.09 / 1.04 / **1.03** / 1.15 / 1.49 / 2.95 | 1.00 / 1.00 / **1.00** / 1.02 / 1.15 / 1.53 |
///
/// (`bench-results/2026-11-24-statistics-speed/lanes-per-row/`.)
pub(crate) const AXIS_ELEMENTS_PER_LANE: u64 = 4 * AXIS_LOADS_IN_FLIGHT;

/// The fewest elements each thread of an axis launch folds in one part of
/// a split reduced axis: a part's fold ends in a combine through shared
/// memory and a slot written and read back, which fewer loads would not
/// pay for. A first choice (4 rounds of 8 loads in flight), not yet tuned
/// by measurement.
pub(crate) const AXIS_LOADS_PER_PART: u64 = 4 * AXIS_LOADS_IN_FLIGHT;

/// How a segmented reduction is launched: how many threads reduce each
/// segment, and the grid. See [`crate::Reducer::segmented_launch_shape`].
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, LaunchShape, Op};
/// let mut emulator = Emulator::default(); // 64-thread blocks, at most 6
/// // 1000 rows of 4 f32s: a thread each, 64 rows to a block.
/// let short = emulator.segmented_launch_shape::<f32>(Op::Sum, 1000, 4000)?;
/// assert_eq!((short.team_threads, short.blocks_per_segment), (1, 1));
/// // Two rows of 100,000 f32s: a block each, split over 3 blocks.
/// let long = emulator.segmented_launch_shape::<f32>(Op::Sum, 2, 200_000)?;
/// assert_eq!((long.team_threads, long.blocks_per_segment), (64, 3));
/// assert_eq!(long.launch, LaunchShape { blocks: 6, threads_per_block: 64 });
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedShape {
    /// Threads that reduce one segment (or one part of it): 1 to 32 lanes of
    /// a warp, several warps, or a whole block; always a power of two.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// # use reduce::{emulated::Emulator, Op};
    /// // Two rows of 100,000 f32s on the emulator's default shape (64 threads, at most 6 blocks).
    /// let shape = Emulator::default().segmented_launch_shape::<f32>(Op::Sum, 2, 200_000)?;
    /// assert_eq!(shape.team_threads, 64); // a whole block
    /// # Ok(()) }
    /// ```
    pub team_threads: u32,
    /// Blocks that share one segment, each reducing a part of it: above 1
    /// only for few segments, each longer than one block's tile.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// # use reduce::{emulated::Emulator, Op};
    /// // Two rows of 100,000 f32s on the emulator's default shape (64 threads, at most 6 blocks).
    /// let shape = Emulator::default().segmented_launch_shape::<f32>(Op::Sum, 2, 200_000)?;
    /// assert_eq!(shape.blocks_per_segment, 3); // each row split over 3 of the 6 blocks
    /// # Ok(()) }
    /// ```
    pub blocks_per_segment: u32,
    /// Segments a warp (or, for teams of several warps, a block) takes at a
    /// time where segments given by offsets are handed out as they finish
    /// (teams of at least 16 lanes; see [`Over::Segments`](crate::Over::Segments)
    /// module): about 32 KiB of an average segment's elements, at least the
    /// taker's teams.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// # use reduce::{emulated::Emulator, Op};
    /// // Two rows of 100,000 f32s on the emulator's default shape (64 threads, at most 6 blocks).
    /// let shape = Emulator::default().segmented_launch_shape::<f32>(Op::Sum, 2, 200_000)?;
    /// assert_eq!(shape.segments_per_take, 1); // far more than 32 KiB a segment
    /// # Ok(()) }
    /// ```
    pub segments_per_take: u32,
    /// The grid and block size.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// # use reduce::{emulated::Emulator, Op};
    /// // Two rows of 100,000 f32s on the emulator's default shape (64 threads, at most 6 blocks).
    /// let shape = Emulator::default().segmented_launch_shape::<f32>(Op::Sum, 2, 200_000)?;
    /// assert_eq!((shape.launch.blocks, shape.launch.threads_per_block), (6, 64));
    /// # Ok(()) }
    /// ```
    pub launch: LaunchShape,
}

impl SegmentedShape {
    /// The plan parameter of the segmented entry points.
    pub(crate) fn plan(self) -> SegmentPlan {
        SegmentPlan {
            team_threads: self.team_threads,
            blocks_per_segment: self.blocks_per_segment,
            segments_per_take: self.segments_per_take,
        }
    }
}

/// Whose teams [`segmented_shape`] sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Teams {
    /// The reductions' (every [`Op`](crate::Op)).
    Reduction,
    /// The exact sum's ([`ExactSum`](crate::ExactSum)), over segments
    /// given by offsets (`offsets`) or rows, with `warp_at_most` a warp at
    /// most (segments handed out to warps: [`exact_warps_take`]).
    ExactSum { offsets: bool, warp_at_most: bool },
}

/// The segmented kernels' launch shape for `len` elements of `element_bytes`
/// each, in `segments` segments (see [`SegmentedShape`]). It depends only on
/// the segment count, the length, the element size and the device, so the
/// combine order of every segment is the same on every run.
///
/// A team gets the largest power of two of threads that still gives each
/// thread [`Tuning::segment_tiles_per_thread`] full tiles (a tile is
/// `VECTORS_PER_THREAD` 16-byte loads issued together) of an average
/// segment, but at least [`Tuning::min_segment_lanes`] threads where each still gets
/// one full tile, and at most the largest power of two dividing the block. Teams of a whole block split each segment over
/// several blocks when there are fewer segments than the grid holds blocks,
/// so that a few long rows still fill the GPU; the grid then has one block
/// per part, at most `grid_cap`.
///
/// The exact sum's teams ([`Teams::ExactSum`]) are sized by
/// [`Tuning::exact_segment_teams`] instead: one thread where an average
/// part is short ([`ExactTeams::single_thread_bytes`]), and a team of more
/// than a warp is the largest: its reduction's barrier costs the same for
/// any team past a warp, and a block of one team waits for no other segment
/// each round; with `warp_at_most`, a warp at most (for warps that take
/// segments as they finish: [`exact_warps_take`]).
///
/// `None` if its arithmetic overflows: where the bytes of an average
/// segment pass `u64::MAX` (a `len` no buffer has), or for a grid cap of 0.
pub(crate) fn segmented_shape(
    tuning: Tuning,
    teams: Teams,
    segments: usize,
    len: usize,
    element_bytes: usize,
    grid_cap: u32,
) -> Option<SegmentedShape> {
    let block = tuning.block_threads;
    let segments = segments.max(1) as u64;
    let tile_elements = tile_elements(element_bytes)?;
    let average = (len as u64).div_ceil(segments);
    // The largest power of two not above each count of threads.
    let floor_power_of_two = |threads: u64| 1u64 << threads.max(1).ilog2();
    let (tiles_per_thread, min_lanes, single_thread_bytes) = match teams {
        Teams::Reduction => (tuning.segment_tiles_per_thread, tuning.min_segment_lanes, None),
        Teams::ExactSum { offsets, .. } => {
            let [four_bytes, eight_bytes] = tuning.exact_segment_teams;
            let sizing = if element_bytes > 4 { eight_bytes } else { four_bytes };
            let [rows, segments] = sizing.single_thread_bytes;
            let single = if offsets { segments } else { rows };
            (sizing.tiles_per_thread, sizing.min_lanes, Some(single))
        }
    };
    let thread_elements = tiles_per_thread.checked_mul(tile_elements)?;
    let wanted = floor_power_of_two(average.checked_div(thread_elements)?)
        .max(floor_power_of_two(average.checked_div(tile_elements)?).min(min_lanes));
    let largest_team = 1u64 << block.trailing_zeros();
    let single_thread = single_thread_bytes.is_some_and(|bytes| average.saturating_mul(element_bytes as u64) <= bytes);
    let team_threads = match teams {
        Teams::ExactSum { .. } if single_thread => 1,
        Teams::ExactSum { warp_at_most: true, .. } => wanted.min(32).min(largest_team),
        Teams::ExactSum { .. } if wanted > 32 => largest_team,
        _ => wanted.min(largest_team),
    } as u32;

    let parts_wanted = average.div_ceil(u64::from(block).checked_mul(tile_elements)?);
    let blocks_per_segment = if team_threads == block && parts_wanted > 1 {
        parts_wanted.min(u64::from(grid_cap).checked_div(segments)?).max(1) as u32
    } else {
        1
    };
    // At most `grid_cap` either way (a split segment's parts are at most
    // `grid_cap / segments`), so the grid fits its `u32`.
    let blocks = if blocks_per_segment > 1 {
        segments.checked_mul(u64::from(blocks_per_segment))?
    } else {
        let teams_per_block = block.checked_div(team_threads)?;
        segments.div_ceil(u64::from(teams_per_block)).min(u64::from(grid_cap))
    };
    let launch = LaunchShape {
        blocks: blocks as u32,
        threads_per_block: block,
    };
    let (takers, teams_per_taker) = takers(launch, team_threads)?;
    let average_bytes = average.checked_mul(element_bytes as u64)?.max(1);
    let takes = takers.checked_mul(tuning.min_takes_per_taker)?;
    let segments_per_take = floor_power_of_two(tuning.take_bytes.checked_div(average_bytes)?)
        .min(floor_power_of_two(segments.checked_div(takes)?))
        .clamp(teams_per_taker, tuning::MAX_SEGMENTS_PER_TAKE);
    Some(SegmentedShape {
        team_threads,
        blocks_per_segment,
        segments_per_take: segments_per_take as u32,
        launch,
    })
}

/// Who takes segments from the balanced kernels' counter in `launch` with
/// teams of `team_threads`, as `(takers, teams per taker)`: each warp, or
/// each block where a team is several warps. `None` for a team of 0 threads.
fn takers(launch: LaunchShape, team_threads: u32) -> Option<(u64, u64)> {
    let blocks = u64::from(launch.blocks);
    let block = launch.threads_per_block;
    if team_threads > 32 {
        Some((blocks, u64::from(block.checked_div(team_threads)?)))
    } else {
        let warps = blocks.checked_mul(u64::from(block / 32))?;
        Some((warps, u64::from(32u32.checked_div(team_threads)?.max(1))))
    }
}

/// Whether the exact sum's segments (given by offsets) in `shape` can be
/// handed out to warps from a counter
/// ([`ExactSchedule::WarpsTake`](kernels_gpu::abi::ExactSchedule::WarpsTake)):
/// teams of 2 to 32 lanes, one part per segment, and segments for at
/// least `min_takes` takes for each warp
/// ([`WarpsTake::min_takes`](crate::tuning::WarpsTake::min_takes)).
pub(crate) fn exact_warps_take(shape: SegmentedShape, segments: usize, min_takes: u64) -> bool {
    let Some((warps, _)) = takers(shape.launch, shape.team_threads) else {
        return false;
    };
    let enough_segments = warps
        .checked_mul(u64::from(shape.segments_per_take))
        .and_then(|takes| takes.checked_mul(min_takes))
        .is_some_and(|needed| segments as u64 >= needed);
    (2..=32).contains(&shape.team_threads) && shape.blocks_per_segment == 1 && enough_segments
}

/// How a segmented launch of `shape` over `segments` segments hands them
/// out: from a counter as warps (teams of at most 32 lanes) or blocks (teams
/// of several warps) finish, for segments given by offsets (rows are all one
/// length), each reduced by one team of at least [`Tuning::balanced_min_lanes`]
/// lanes, with at least [`Tuning::min_takes_per_taker`] takes for each taker and, where
/// blocks take, a power of two of teams per block (a take is a power of two
/// of segments, a multiple of them); else in a fixed order. `None` as
/// [`takers`].
pub(crate) fn segment_schedule(
    tuning: Tuning,
    shape: SegmentedShape,
    segments: usize,
    offsets: bool,
) -> Option<SegmentSchedule> {
    let (takers, teams_per_taker) = takers(shape.launch, shape.team_threads)?;
    // The segments that many takes need; a count past `u64` is never there.
    let enough_segments = takers
        .checked_mul(u64::from(shape.segments_per_take))
        .and_then(|takes| takes.checked_mul(tuning.min_takes_per_taker))
        .is_some_and(|needed| segments as u64 >= needed);
    let balanced = offsets
        && shape.team_threads >= tuning.balanced_min_lanes
        && shape.blocks_per_segment == 1
        && teams_per_taker.is_power_of_two()
        && enough_segments;
    Some(match (balanced, shape.team_threads > 32) {
        (false, _) => SegmentSchedule::FixedOrder,
        (true, false) => SegmentSchedule::WarpsTake,
        (true, true) => SegmentSchedule::BlocksTake,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Hopper row of the tuning data with `block_threads` threads per block.
    fn hopper(block_threads: u32) -> Tuning {
        Tuning {
            block_threads,
            ..tuning::BY_ARCHITECTURE[0]
        }
    }

    #[test]
    fn axis_shapes_of_any_length_fit_the_block_and_the_grid() {
        for (outputs, reduced, contiguous) in [(1, u64::MAX, false), (u64::MAX, 1, false), (3, (1 << 63) + 1, true)] {
            let (plan, launch) = axis_shape(hopper(512), 264, outputs, reduced, contiguous, true);
            assert_eq!(plan.output_lanes_log2 + plan.reduce_lanes_log2, 9);
            assert!(plan.splits >= 1 && launch.blocks >= 1 && launch.blocks <= 264);
        }
    }

    #[test]
    fn exact_rows_fill_tiles_and_warps_from_the_tuning_row() {
        // A tile a thread of a 512-thread block: 8192 `f32`s, 4096 `f64`s.
        assert!(fills_block_tiles(hopper(512), 2 * 8192, 4, 2));
        assert!(!fills_block_tiles(hopper(512), 2 * 8192 - 1, 4, 2));
        assert!(fills_block_tiles(hopper(512), 4 * 4096, 8, 4));
        assert!(!fills_block_tiles(hopper(256), 4 * 2048 - 1, 8, 4));
        // Tiles past what a `u64` counts: no.
        assert!(!fills_block_tiles(hopper(512), usize::MAX, 4, u64::MAX));
        // 264 blocks of 16 warps.
        assert!(rows_fill_warps(hopper(512), 4224, 264));
        assert!(!rows_fill_warps(hopper(512), 4223, 264));
        assert!(rows_fill_warps(hopper(256), 2112, 264));
    }

    #[test]
    fn exact_rows_get_blocks_enough_to_fill_their_waves() {
        let parts = |grid, rows, len, element_bytes| exact_row_parts(hopper(512), grid, rows, len, element_bytes);
        // The grid shared evenly where that fills it: one row, 16, 1024.
        assert_eq!(parts(264, 1, 1 << 28, 4), 264);
        assert_eq!(parts(264, 16, 1 << 24, 4), 16);
        assert_eq!(parts(264, 1024, 262_144, 4), 1);
        // 100 rows: two a row use 76% of the grid, five 95% of two waves.
        assert_eq!(parts(264, 100, 2_684_354, 4), 5);
        assert_eq!(parts(528, 200, 671_088, 8), 5);
        // 300 rows: 300 blocks in two waves of 264 use 57% of their
        // slots, 600 in three 76%, 900 in four 85%, 1200 in five 91%.
        assert_eq!(parts(264, 300, 894_784, 4), 4);
        assert_eq!(parts(264, 400, 671_088, 4), 3);
        assert_eq!(parts(264, 600, 447_392, 4), 2);
        assert_eq!(parts(528, 600, 223_696, 8), 4);
        // Each block keeps two tiles (8192 `f32`s a tile of the block): a
        // row of 3.9 tiles is not split, one of 4 in two.
        assert_eq!(parts(264, 300, 4 * 8192 - 1, 4), 1);
        assert_eq!(parts(264, 300, 4 * 8192, 4), 2);
        // 265 rows: nine a row (2385 blocks in ten waves, 90%).
        assert_eq!(parts(264, 265, 1 << 30, 4), 9);
        // At most ten times the even share: 133 rows on 264 reach 91% at
        // nine a row; on a grid of 1, 2 rows at 100% with one.
        assert_eq!(parts(264, 133, 1 << 30, 4), 9);
        assert_eq!(parts(1, 2, 1 << 30, 4), 1);
        assert_eq!(parts(0, 0, 0, 4), 1);
    }

    #[test]
    fn capped_exact_f64_sums_fill_their_grid_only_with_four_tiles_a_thread() {
        // An H200 with the kernels capped: four 512-thread blocks an SM
        // (528), two uncapped (264); a tile of a thread is 8 `f64`s.
        let blocks = |len: usize| lean_exact_shape(hopper(512), len, 528).map(|s| s.blocks);
        assert_eq!(blocks(1), Some(1));
        assert_eq!(blocks(1 << 20), Some(256), "one tile each, as uncapped");
        assert_eq!(blocks(1 << 22), Some(264), "half the grid: the uncapped kernel's");
        assert_eq!(blocks(1 << 23), Some(512), "4 tiles each");
        assert_eq!(blocks(1 << 24), Some(528), "the whole grid");
        assert_eq!(blocks(usize::MAX), Some(528));
        // A grid of one block (the emulator's smallest) stays one.
        assert_eq!(lean_exact_shape(hopper(512), 1 << 24, 1).map(|s| s.blocks), Some(1));
    }

    fn shape(segments: usize, len: usize, element_bytes: usize) -> (u32, u32, u32) {
        let s = segmented_shape(hopper(512), Teams::Reduction, segments, len, element_bytes, 264).unwrap();
        (s.team_threads, s.blocks_per_segment, s.launch.blocks)
    }

    #[test]
    fn balanced_takes_are_about_32_kib_of_segments() {
        use SegmentSchedule::{BlocksTake, FixedOrder, WarpsTake};
        // segments, elements, element bytes, offsets → team, segments per take, schedule: one case a line.
        #[rustfmt::skip]
        let cases = [
            ((1 << 18, 1000 << 18, 4, true), (16, 8, WarpsTake), "f32, mean 1000: 2 teams a round, 4 rounds"),
            ((1 << 18, 1 << 28, 4, true), (32, 8, WarpsTake), "f32, 1024 each: 8 rounds"),
            ((1 << 17, 1000 << 17, 8, true), (32, 4, WarpsTake), "f64, mean 1000: 4 rounds"),
            ((1 << 14, 1000 << 14, 4, true), (16, 2, FixedOrder), "f32, mean 1000, 2^14 of them: too few to balance"),
            ((1 << 18, 1 << 28, 4, false), (32, 8, FixedOrder), "rows: all one length, fixed order"),
            ((1 << 22, 100 << 22, 4, true), (4, 64, FixedOrder), "teams of 4: fixed order"),
            ((1 << 14, 10_000 << 14, 4, true), (256, 2, BlocksTake), "f32, mean 10^4: teams of 8 warps, 2 a block"),
            ((1 << 14, 10_000 << 14, 8, true), (512, 1, BlocksTake), "f64, mean 10^4: a block each"),
            ((1 << 10, 10_000 << 10, 4, true), (256, 2, FixedOrder), "f32, mean 10^4, 2^10 of them: too few to balance"),
            // `tests/kernel_sweep.rs`'s balanced cases (lengths 1024–2047 and
            // 2048–4095) at their smallest and largest averages.
            ((17_000, 17_000 * 1024, 4, true), (32, 1, WarpsTake), "sweep, f32, 1024"),
            ((17_000, 17_000 * 2047, 4, true), (32, 1, WarpsTake), "sweep, f32, 2047"),
            ((17_000, 17_000 * 1024, 8, true), (64, 8, BlocksTake), "sweep, f64, 1024"),
            ((17_000, 17_000 * 2047, 8, true), (64, 8, BlocksTake), "sweep, f64, 2047"),
            ((9000, 9000 * 2048, 4, true), (64, 8, BlocksTake), "sweep, f32, 2048"),
            ((9000, 9000 * 4095, 4, true), (64, 8, BlocksTake), "sweep, f32, 4095"),
            ((9000, 9000 * 2048, 8, true), (128, 4, BlocksTake), "sweep, f64, 2048"),
            ((9000, 9000 * 4095, 8, true), (128, 4, BlocksTake), "sweep, f64, 4095"),
        ];
        for ((segments, len, bytes, offsets), expected, why) in cases {
            let s = segmented_shape(hopper(512), Teams::Reduction, segments, len, bytes, 264).unwrap();
            let got = (
                s.team_threads,
                s.segments_per_take,
                segment_schedule(hopper(512), s, segments, offsets).unwrap(),
            );
            assert_eq!(got, expected, "{why}");
            assert_eq!(SegmentPlan::from_bits(s.plan().to_bits()), s.plan(), "{why}");
        }
        // A block size that is not a power of two: three teams of 128
        // threads per block cannot share a take of a power of two.
        let odd = segmented_shape(hopper(384), Teams::Reduction, 1 << 14, 10_000 << 14, 8, 264).unwrap();
        assert_eq!(odd.team_threads, 128);
        assert_eq!(segment_schedule(hopper(384), odd, 1 << 14, true), Some(FixedOrder));
        // The segmented tests' "warps" and "many blocks" cases on the
        // emulator (its default shape): 50 segments of about 1536 f32s, and
        // 30 of about 3250 (teams of the 64-thread block), take the balanced
        // kernels.
        for (segments, average, team, schedule) in [(50, 1536, 32, WarpsTake), (30, 3250, 64, BlocksTake)] {
            let emulator = hopper(crate::policy::Policy::EMULATOR_DEFAULT.block_threads());
            let max_grid = crate::backend::Emulated::DEFAULT_MAX_GRID;
            let emulated =
                segmented_shape(emulator, Teams::Reduction, segments, segments * average, 4, max_grid).unwrap();
            assert_eq!(emulated.team_threads, team);
            assert_eq!(segment_schedule(emulator, emulated, segments, true), Some(schedule));
        }
    }

    #[test]
    fn segmented_shape_adapts_to_segment_length() {
        // segments, elements, element bytes → team, blocks per segment, grid: one case a line.
        // A tile is 16 f32 or 8 f64 elements per thread.
        #[rustfmt::skip]
        let cases = [
            ((1 << 20, 1 << 20, 4), (1, 1, 264), "1-element rows: a thread each"),
            ((1 << 18, 1 << 24, 4), (4, 1, 264), "64-element rows: 4 lanes each, one tile"),
            ((1 << 16, 1 << 24, 4), (8, 1, 264), "256-element rows: 8 lanes each, two tiles"),
            ((1 << 14, 1 << 24, 4), (32, 1, 264), "1024-element rows: a warp each"),
            ((1 << 12, 1 << 24, 4), (128, 1, 264), "4096-element rows: four warps each"),
            ((1 << 10, 1 << 26, 4), (512, 1, 264), "2^16-element rows: a block each"),
            ((4, 1 << 26, 4), (512, 66, 264), "4 long rows: 66 blocks each"),
            ((1, 1 << 30, 4), (512, 264, 264), "one row: the whole grid"),
            ((3, 3, 4), (1, 1, 1), "tiny: one block"),
            ((5, 0, 8), (1, 1, 1), "all empty"),
            ((1 << 10, 1 << 20, 8), (64, 1, 128), "1024-element f64 rows: two warps each"),
        ];
        for ((segments, len, bytes), expected, why) in cases {
            assert_eq!(shape(segments, len, bytes), expected, "{why}");
        }
        // A block size that is not a power of two: teams stop at 32, never split.
        let odd = segmented_shape(hopper(96), Teams::Reduction, 2, 1 << 24, 4, 100).unwrap();
        assert_eq!(
            (odd.team_threads, odd.blocks_per_segment, odd.launch.blocks),
            (32, 1, 1)
        );
    }

    #[test]
    fn exact_sums_teams_are_a_thread_a_warp_at_most_or_the_block() {
        // segments, elements, element bytes, offsets → team: one case a line.
        #[rustfmt::skip]
        let cases = [
            ((1 << 20, 1 << 24, 4, false), 1, "16-element f32 rows: a thread each"),
            ((1 << 23, 1 << 28, 4, false), 1, "32-element f32 rows (128 bytes): a thread each"),
            ((1 << 22, 1 << 28, 4, false), 2, "64-element f32 rows (256 bytes): 2 lanes"),
            ((1 << 22, 100 << 22, 4, true), 1, "f32 segments, mean 100 (400 bytes): a thread each"),
            ((1 << 22, 200 << 22, 4, true), 2, "f32 segments, mean 200 (800 bytes): 2 lanes"),
            ((1 << 20, 1 << 28, 4, false), 2, "256-element f32 rows: 2 lanes, 8 tiles each"),
            ((1 << 16, 1 << 28, 4, false), 16, "4096-element f32 rows: 16 lanes, 16 tiles each"),
            ((1 << 14, 10_000 << 14, 4, true), 32, "f32, mean 10^4: a warp"),
            ((1 << 14, 1 << 28, 4, false), 512, "2^14-element f32 rows: 64 lanes wanted, so the block"),
            ((1 << 23, 1 << 28, 8, false), 1, "32-element f64 rows (256 bytes): a thread each"),
            ((1 << 22, 1 << 28, 8, false), 8, "64-element f64 rows (512 bytes): 8 lanes"),
            ((1 << 22, 100 << 22, 8, true), 1, "f64 segments, mean 100 (800 bytes): a thread each"),
            ((1 << 20, 1 << 27, 8, false), 8, "128-element f64 rows: 8 lanes, 2 tiles each"),
            ((1 << 16, 1 << 27, 8, false), 16, "2048-element f64 rows: 16 lanes, 16 tiles each"),
            ((1 << 14, 10_000 << 14, 8, true), 512, "f64, mean 10^4: 64 lanes wanted, so the block"),
        ];
        for ((segments, len, bytes, offsets), team, why) in cases {
            let s = segmented_shape(
                hopper(512),
                Teams::ExactSum {
                    offsets,
                    warp_at_most: false,
                },
                segments,
                len,
                bytes,
                264,
            )
            .unwrap();
            assert_eq!(s.team_threads, team, "{why}");
        }
        // The largest power of two dividing a block of 384 is 128.
        let odd = segmented_shape(
            hopper(384),
            Teams::ExactSum {
                offsets: false,
                warp_at_most: false,
            },
            1 << 14,
            1 << 28,
            4,
            264,
        )
        .unwrap();
        assert_eq!(odd.team_threads, 128);
    }

    /// Warps can take the exact sum's segments where there are enough for
    /// every warp's take: `f32` and `f64` segments of mean 10^4 in 1 GiB
    /// (26843 and 13422 on 4224 warps), `f64` segments of mean 1000 in
    /// teams of 8 lanes, not a few long ones, nor where a team would be
    /// one thread.
    #[test]
    fn exact_segments_go_to_warps_where_there_is_one_for_each() {
        let warp_shape = |segments: usize, len: usize, bytes: usize| {
            let warps = Teams::ExactSum {
                offsets: true,
                warp_at_most: true,
            };
            segmented_shape(hopper(512), warps, segments, len, bytes, 264).unwrap()
        };
        for (segments, len, bytes) in [(26_843, 1 << 28, 4), (13_422, 1 << 27, 8)] {
            let shape = warp_shape(segments, len, bytes);
            assert_eq!((shape.team_threads, shape.blocks_per_segment), (32, 1));
            assert_eq!(shape.launch.blocks, 264);
            assert!(exact_warps_take(shape, segments, 1));
            // Not with 4 takes for each warp (`f64`: 3.2 segments a warp).
            assert_eq!(exact_warps_take(shape, segments, 4), bytes == 4 && segments >= 4 * 4224);
        }
        // `f64` segments of mean 1000: teams of 8 lanes, 4 to a warp and
        // 4 segments a take, 134217 segments for 4224 warps' takes.
        let eights = warp_shape(134_217, 1 << 27, 8);
        assert_eq!((eights.team_threads, eights.segments_per_take), (8, 4));
        assert!(exact_warps_take(eights, 134_217, 1));
        assert!(!exact_warps_take(eights, 4224 * 4 - 1, 1));
        // Fewer segments than warps: 1000 segments of 2^18 `f32`s.
        let few = warp_shape(1000, 1 << 28, 4);
        assert_eq!(few.team_threads, 32);
        assert!(!exact_warps_take(few, 1000, 1));
        // Segments of one thread's size (mean 100) are never a warp's.
        let short = warp_shape(1 << 20, 100 << 20, 4);
        assert_eq!(short.team_threads, 1);
        assert!(!exact_warps_take(short, 1 << 20, 1));
    }

    #[test]
    fn segmented_shape_is_none_where_its_arithmetic_overflows() {
        // An average segment of 2^64 bytes, and one element short of it.
        assert_eq!(segmented_shape(hopper(512), Teams::Reduction, 1, 1 << 62, 4, 264), None);
        assert_eq!(shape(1, (1 << 62) - 1, 4), (512, 264, 264));
        // No grid: no takers to divide the segments among.
        assert_eq!(
            segmented_shape(hopper(512), Teams::Reduction, 1 << 10, 1 << 20, 4, 0),
            None
        );
    }
}
