//! Tuning as data: every number the launch shapes are chosen with, per
//! compute capability, each with the measurement that chose it (in the
//! spirit of CUB's `tuning_reduce.cuh`).
//!
//! The shapes themselves are computed in [`crate::shape`] from these numbers
//! and from what is not tuned but read from the device or the kernel: the
//! grid cap (SMs × the occupancy calculator's blocks per SM for the kernel and
//! block size) and the loads in flight per thread
//! ([`VECTORS_PER_THREAD`](kernels_gpu::abi::VECTORS_PER_THREAD) 16-byte vectors,
//! a constant of the kernels).
//!
//! This file uses nothing from the rest of the crate: `build.rs` compiles it
//! on its own (`#[path]`) to read [`Tuning::segmented_max_registers`], which
//! it writes into the PTX of the same architecture.

/// The launch policy of one range of compute capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// The lowest compute capability (major × 10 + minor) this row is for;
    /// also the PTX architecture (`sm_<min_cc>`) built with this row's
    /// register cap.
    pub min_cc: u32,
    /// Threads per block of the production (whole-input) and segmented
    /// kernels.
    pub block_threads: u32,
    /// Registers per thread the segmented kernels may use (`.maxnreg`, as
    /// CUDA C's `__launch_bounds__` would set; rustc has no attribute for it).
    pub segmented_max_registers: u32,
    /// Registers per thread logsumexp of `f64` may use (`.maxnreg` on its
    /// kernels over elements, along an axis or segments), or `None` for no cap: its
    /// 8 `exp` series per batch are independent, and ptxas interleaves them
    /// up to more registers than the row's block may have.
    pub series_max_registers: Option<u32>,
    /// Registers per thread the whole-input exact sums of `f64` may use
    /// (`.maxnreg` on the kernels `abi::Kernel::is_lean_exact_f64` names:
    /// of the elements, the NaN-ignoring elements, the squares and the
    /// squared deviations), or `None` for no cap: ptxas gives them 47,
    /// which fits two 512-thread blocks on an SM, and 32 fits four, with no
    /// spills. Their grid then holds more than half the blocks an SM
    /// can hold only where each thread still gets
    /// [`Tuning::exact_f64_full_grid_tiles`] tiles
    /// (`shape::lean_exact_shape`).
    pub exact_f64_max_registers: Option<u32>,
    /// Registers per thread the whole-input exact sum of logsumexp's terms
    /// of `f64` may use (`.maxnreg` on `reduce_exact_scaled_exp_f64`; its
    /// state form, for `reduce::multi`, is not capped), or `None` for no
    /// cap: ptxas gives it 72 since its blocks may sum rows, and above 64
    /// an SM holds one 512-thread block instead of two.
    pub exact_exp_f64_max_registers: Option<u32>,
    /// Registers per thread the exact sums along an axis and of rows in
    /// runs may use, `f32` (`[0]`) and `f64` (`[1]`) (`.maxnreg` on every
    /// `abi::Kernel::ExactAxis` and `abi::Kernel::ExactRowRuns` of the type:
    /// the sums, the squares, the variance's deviations and logsumexp's
    /// terms), or `None` for no cap: ptxas gives the axis kernels 96
    /// (`f32`), 127 and 168 (`f64`), so an SM holds 512 or 384 of their
    /// threads where it holds 1024 of the axis sum's; the `f64` kernels of
    /// rows in runs 79 to 96 (the `f32` ones 62 to 64), and at 64 spill
    /// nothing (at 48, 36–76 bytes; at 32, as the other `f64` sums, 180–232).
    pub exact_axis_max_registers: [Option<u32>; 2],
    /// The fewest tiles each thread of a block gets from a row for the
    /// whole-input exact kernel to sum rows one block each where it cannot
    /// give each row two (`Reducer::launch_exact_rows`): each row ends in a
    /// block reduction of expansions, which costs about a tile's loads.
    pub exact_row_min_tiles: u64,
    /// The share, in percent, of the SMs' block slots the whole-input exact
    /// kernel's blocks over rows should use: where the grid shared evenly
    /// among the rows uses less (rows past the grid come in waves, the last
    /// as full as the row count makes it), each row gets the fewest more
    /// blocks (up to ten times its share, each still of
    /// `exact_row_min_tiles` tiles) whose waves use so many
    /// (`shape::exact_row_parts`).
    pub exact_row_wave_fill_percent: u64,
    /// The fewest tiles each thread gets from a row for those rows to stay
    /// one block each where they are enough for a warp each of the
    /// segmented grid (whose teams of a warp at most take them otherwise)
    /// and the whole-input kernel fits more blocks an SM than the
    /// segmented one (the sums of `exact_f64_max_registers`).
    pub exact_lean_row_tiles: u64,
    /// Tiles of loads each thread of a capped whole-input exact sum of
    /// `f64` gets before its grid grows past half the blocks the SMs hold:
    /// each block ends in a reduction of expansions, whose `f64` additions
    /// cost more than the loads of a tile or two.
    pub exact_f64_full_grid_tiles: u64,
    /// Full tiles each thread of a segment's team should get: each tile is one
    /// batch of loads in flight, and each segment costs its team a fixed
    /// overhead (its bounds, head and tail, the team's reduction), which more
    /// tiles per thread spread over more bytes.
    pub segment_tiles_per_thread: u64,
    /// The fewest lanes a team has when its segment holds a full tile for
    /// each: the lanes of narrower teams read rows that lie further apart.
    pub min_segment_lanes: u64,
    /// Bytes of an average segment's elements a warp (or block) takes at a
    /// time from the balanced kernels' counter; where a segment is longer, a
    /// take is the taker's teams, one segment each.
    pub take_bytes: u64,
    /// The fewest takes each taker (warp, or block) should get from the
    /// balanced kernels: fewer segments per take where there are not that
    /// many, and the fixed-order kernel where even takes of one round would
    /// leave fewer.
    pub min_takes_per_taker: u64,
    /// The fewest lanes per team for which segments given by offsets are
    /// handed out to warps (or blocks) as they finish rather than in a fixed
    /// order.
    pub balanced_min_lanes: u32,
    /// `ExactSum`'s teams over segments and rows, for 4-byte (`f32`) and
    /// 8-byte (`f64`) elements: its expansions make a team's reduction and
    /// a round's barrier several times dearer than a sum's, so it wants more
    /// tiles per thread. A team is a warp at most or the whole block,
    /// nothing between (see `shape::segmented_shape`).
    pub exact_segment_teams: [ExactTeams; 2],
}

/// How [`Tuning::exact_segment_teams`] sizes the exact sum's teams: as
/// [`Tuning::segment_tiles_per_thread`] and [`Tuning::min_segment_lanes`]
/// size the reductions'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExactTeams {
    /// Full tiles each thread of a team should get.
    pub tiles_per_thread: u64,
    /// The fewest lanes a team has when its segment holds a full tile for each.
    pub min_lanes: u64,
    /// Up to these bytes in an average part, rows (`[0]`) or segments given
    /// by offsets (`[1]`), each part is one thread's: the kernel's loop for
    /// teams of one has no shuffles, votes or barriers, and a segment of
    /// random length leaves no lanes idle.
    pub single_thread_bytes: [u64; 2],
    /// Whether those threads of one part run in the per-thread loop's own
    /// kernel ([`ExactSchedule::PerThread`](kernels_gpu::abi::ExactSchedule::PerThread)), rows (`[0]`) and segments
    /// (`[1]`), or the teams' kernel calls the loop.
    pub single_thread_kernel: [bool; 2],
    /// Which segments given by offsets go to warps as they finish
    /// ([`ExactSchedule::WarpsTake`](kernels_gpu::abi::ExactSchedule::WarpsTake);
    /// `None`: never).
    pub warps_take: Option<WarpsTake>,
}

/// Segments given by offsets whose average would have a team of at least
/// `min_lanes` lanes in a fixed order get a team of at most a warp,
/// handed out to the warps from a counter as they finish, where there are
/// segments for at least `min_takes` takes per warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpsTake {
    pub min_lanes: u32,
    pub min_takes: u64,
}

/// Hopper (sm_90) and newer. Measured on an H200 (1 GiB inputs unless said
/// otherwise; the sessions' accounts are in `git show 4cb2489:BENCHMARKS.md`
/// and the `bench-results/` folders it names):
/// - `block_threads` 512: 512-thread blocks with 4 × 16-byte loads per thread
///   keep 32 KiB in flight per block; the occupancy calculator then fits
///   several blocks per SM (whole-input sums at 0.97–0.99× CUB's time).
/// - `segmented_max_registers` 64: lets two 512-thread blocks share an SM's
///   65,536 registers. Left to itself, ptxas gave the segmented kernels up to
///   80 on sm_90 (every 8-byte type above 64), and above 64 an SM holds one
///   block: half the loads in flight, and the segmented layouts up to 1.3×
///   slower. At the cap ptxas spills a few bytes per thread instead; caps of
///   40 or 32 spilled 300–680 B and were 1.33–2.70× slower.
/// - `series_max_registers` 128 (measured on an H100, same-call A/B,
///   `bench-results/2026-11-25-axes-arg-lse/lse-f64-ab/`): uncapped, ptxas
///   gave logsumexp of `f64` 156 registers, so it ran in 128-thread blocks
///   (3 per SM): 1327 µs for 2 GiB; at 128 (ptxas spills 64–76 bytes
///   a thread, which stay in L1), 512-thread blocks: 970 µs. A cap on every axis kernel instead
///   raised the others' registers (ptxas spends what `.maxnreg` allows:
///   the axis sum went from 56 to 111) and their blocks per SM fell.
/// - `exact_exp_f64_max_registers` 64 (2026-11-30, H200, same-call A/B of
///   two rounds, `bench-results/2026-11-30-exact-lse-f64-cap/`): at 72
///   registers (ptxas's choice since the kernel's blocks may sum rows) an SM
///   held one 512-thread block; capped, two (4 bytes of spill stores, 12 of
///   loads): `ExactLogSumExp` of `f64` ÷ `LogSumExp` 2.36 → 1.96 at 2^28
///   elements, 2.19 → 1.85 at 2^26, 1.84 → 1.60 at 2^24; one row of 2^27
///   2.29 → 1.91.
/// - `exact_axis_max_registers` 64 for both types (2026-12-01, H200,
///   same-call A/B of two rounds, `bench exact_parts` along the columns of
///   1024 × n/1024 and the middle axis of 64 × 1024 × n/2^16, 1 GiB,
///   `bench-results/2026-12-01-exact-axis-registers/`): two 512-thread
///   blocks an SM instead of one (`f64` squares, deviations and terms: of
///   three 128-thread blocks), ptxas spilling 132–284 bytes a thread
///   (logsumexp's `f64` terms 412). Each exact time ÷ its default's,
///   columns (the middle axis within 0.02): `ExactSum` `f32` 1.30 → 1.10,
///   `f64` 1.18 → 1.07; `ExactSumOfSquares` 1.76 → 1.12, 1.54 → 1.09;
///   `ExactVar` 2.38 → 1.71, 2.50 → 1.99; `ExactLogSumExp` 1.88 → 1.70,
///   2.00 → 1.76. At 80 (256-thread blocks, three an SM) every one was
///   10–18% (`f32`) and 13–43% (`f64`) slower than at 64; at 40 (three
///   512-thread blocks, 400–530 bytes spilled) 10–22% and 1–4%; at 32
///   (four) 3–40% and 1–27%.
/// - `exact_row_min_tiles` 2 and `exact_lean_row_tiles` 4 (2026-11-30,
///   H200, 1 GiB, `bench exact_parts`, same-call A/Bs of 2–3 rounds,
///   `bench-results/2026-11-30-exact-rows-one-block/`): one block a row
///   took 0.90 / 0.65 of the segmented kernels' time (`f32` / `f64`
///   `ExactSum`) at 2 tiles a thread, 0.87 / 0.70 at 4, 0.84 / 0.76 at 8,
///   0.93 / 0.81 at 32, and 2.1 / 1.6 times it at 1. With a warp of the
///   segmented grid for each row, its teams of a warp took 0.96 / 0.68
///   of the one-block time at 2 tiles and 1.19 / 0.95 at 4 (`f64`
///   logsumexp, whose whole-input kernel fits no more blocks: 0.92).
/// - `exact_row_wave_fill_percent` 90 (2026-12-01, H200, 1 GiB, `bench
///   exact_parts` with rows not a power of two, same-call A/Bs of two
///   rounds, `bench-results/2026-12-01-exact-row-waves/`): one block a
///   row, 300 `f32` rows on a grid of 264 left a second wave of 36 blocks,
///   and `ExactSum` took 1.14× `Op::Sum`'s time; four blocks a row (1200
///   blocks in five waves, 91% of their slots) 0.97×. 400 `f32` rows 1.12
///   → 1.08 (three a row), 600 `f64` rows on 528 1.39 → 1.04 (four a
///   row); where the even share leaves the grid a quarter idle, 100 `f32`
///   rows 1.09 → 1.02 and 200 1.08 → 1.05 (five a row, two and four
///   waves), 200 `f64` rows 1.08 → 1.05. `ExactVar` 1.91 → 1.58 (300
///   `f32` rows), 2.31 → 1.84 (600 `f64`) × `Var`. 16 and 1024 rows
///   unchanged.
/// - `exact_f64_max_registers` 32 and `exact_f64_full_grid_tiles` 4
///   (2026-11-30, H200, `bench exact`, same-call A/Bs of two rounds,
///   `bench-results/2026-11-30-exact-f64-registers/`, each exact time ÷
///   its default's): capped, four blocks of 512 threads fit an SM instead
///   of two (ptxas spills nothing at 32): `ExactSum` of `f64` 1.081 → 1.061
///   at 2^26 elements, 1.066 → 1.040 at 10^8 and 1.056 → 1.024 at 2^28
///   (those two with the sum alone capped); `ExactSumOfSquares` 1.30 → 1.12
///   and `ExactVar` 2.10 → 1.88 at 2^26. The cost: `ExactSum` at 2^24
///   1.120 → 1.178 (43.6 → 45.6 µs; `ExactSumOfSquares` there 1.35 →
///   1.28). With the whole grid at every length, `ExactSum` of 2^22 took
///   22.7–23.6 µs against 20.5 uncapped (the blocks' reductions of
///   expansions, twice as many, cost more than their few tiles of loads);
///   blocks past half the grid only with 4 tiles a thread: 21.0–21.3 (2
///   tiles: 23.3; 4 tiles for every block left 2^20 with 64 blocks:
///   17.0 µs against 15.0). Not measured: more tiles (16 would give 2^24
///   half the grid). Not logsumexp's terms nor the dot product (104 and
///   144 bytes spilled at 32), nor `f32` (at 40 registers it spills 56
///   bytes in its loop and took 1.6× as long).
/// - `segment_tiles_per_thread` 2 and `min_segment_lanes` 4: teams of 2
///   lanes made 64-element f32 rows take 1.4× as long as teams of 4.
/// - `take_bytes` 32 KiB: takes of about 16 KiB made equal f32 segments of
///   1024 elements 6% slower than the fixed-order kernel (the warps contend
///   for the counter); takes of 64 to 128 KiB lost most of the gain on
///   random lengths (a coarser balance).
/// - `min_takes_per_taker` 4: with random f32 segments of mean 1000 in
///   64 MiB, 2 takes of 4 rounds per warp took 1.24× as long as the fixed
///   order.
/// - `balanced_min_lanes` 16: the balanced kernels read random lengths of
///   mean 1000 (warps take: teams of 16 f32 lanes, 32 f64) 5–8% faster, and
///   equal lengths through offsets 2–3.5% slower; random lengths of mean
///   10^4 (blocks take: teams of 256 and 512) 7% (f32) and 14–15% (f64)
///   faster, equal lengths 0–3% faster; random lengths of mean 100 (teams of
///   4) 2.5% slower.
/// - `exact_segment_teams` `f32` 16 tiles, at least 2 lanes; `f64` 16 tiles,
///   at least 8 lanes; teams of a warp at most, or the block (2026-11-28,
///   `bench exact_parts`, 2^30 bytes, each team size forced in turn,
///   `bench-results/2026-11-28-exact-teams/`; exact ÷ `Op::Sum` of the same
///   layout): `f32` rows of 256 took 1.28 with teams of 2 or 4 lanes, 1.36
///   with 8 (the reductions' choice), 1.75 with 1, 1.93 with 16; rows of
///   4096 1.09–1.18 with 4 to 16 lanes, 1.95 with 128 (the reductions'), 2.7
///   with 256 or 512; random segments of mean 100 1.62 with 1 or 2 lanes,
///   1.90 with 4; of mean 10^4 1.41 with 32, 1.5–1.8 with 16, 64 or 256,
///   2.39 with 512. `f64` rows of 128 1.62 with 8 lanes, 1.72 with 1 or 2,
///   1.97 with 4, 2.01 with 16; rows of 2048 1.34 with 16, 1.43 with 8 or
///   32, 2.16 with 128 (the reductions'), 2.9 with 256 or 512; random
///   segments of mean 10^4 2.13 with 512, 2.24 with 256, 2.4–2.8 with 8 to 128.
///   One thread per part (`single_thread_bytes`) up to 128 bytes a row and
///   512 a segment for `f32`, 256 and 1024 for `f64` (2026-11-29, the
///   kernel's loop for teams of one, the same bench, each team forced in
///   turn, `bench-results/2026-11-29-exact-single/`): `f32` rows of 32 1.40
///   with one thread, 1.66 with 2 lanes; rows of 64 1.74 with one, 1.38
///   with 2; random segments of mean 100 1.49 with one, 1.59 with 2; `f64`
///   rows of 16 1.46 with one, 1.51 with 8; rows of 32 1.78 with one, 1.91
///   with 8 (1.67 with 2); rows of 64 1.80 with one, 1.76 with 8 (1.52 with
///   2: not taken, the rule has no such case); random segments of mean 100
///   1.81 with one, 2.16 with 8.
///   Those threads in the loop's own kernel (`single_thread_kernel`;
///   2026-11-29, `bench-results/2026-11-29-exact-nan/per-thread.csv`,
///   against the teams' kernel calling it, same bench): `f32` rows of 16
///   1.03 against 1.25, segments of mean 100 1.30 against 1.45; `f64`
///   segments of mean 100 1.52 against 1.80, but rows of 8 1.29 against
///   1.20 (the own kernel spills 32 bytes).
///   `warps_take` from 32 lanes (`f32`) and 8 (`f64`), one take a warp
///   (2026-11-30, `bench exact_parts`, same-call A/Bs against the fixed
///   order, `bench-results/2026-11-30-exact-warps-take/`): random segments
///   of mean 10^4 (a third empty, a third 10^4, a third 2 · 10^4 long;
///   `f32` teams of 32 lanes in a fixed order, `f64` teams of the block)
///   handed out to warps of 32 lanes: `ExactSum` `f32` 1.41 → 1.11 ×
///   `Op::Sum`, `f64` 2.03 → 1.34, with 6.4 and 3.2 segments a warp (so
///   one take each: `f64`'s would not pass the reductions' four); of mean
///   1000 (`f32` teams of 2 lanes, `f64` of 8), all teams taking: `f64`
///   `ExactSum` 2.11 → 1.54, `ExactVar` 2.77 → 2.47 × `Var`; `f32`
///   `ExactSum` 1.55 → 1.46 but `ExactVar` 2% slower (its deviations'
///   pass 8%), so `f32` keeps the fixed order below a warp.
pub(crate) const HOPPER: Tuning = Tuning {
    min_cc: 90,
    block_threads: 512,
    segmented_max_registers: 64,
    series_max_registers: Some(128),
    exact_f64_max_registers: Some(32),
    exact_exp_f64_max_registers: Some(64),
    exact_axis_max_registers: [Some(64), Some(64)],
    exact_row_min_tiles: 2,
    exact_row_wave_fill_percent: 90,
    exact_lean_row_tiles: 4,
    exact_f64_full_grid_tiles: 4,
    segment_tiles_per_thread: 2,
    min_segment_lanes: 4,
    take_bytes: 32 << 10,
    min_takes_per_taker: 4,
    balanced_min_lanes: 16,
    exact_segment_teams: [
        ExactTeams {
            tiles_per_thread: 16,
            min_lanes: 2,
            single_thread_bytes: [128, 512],
            single_thread_kernel: [true, true],
            warps_take: Some(WarpsTake {
                min_lanes: 32,
                min_takes: 1,
            }),
        },
        ExactTeams {
            tiles_per_thread: 16,
            min_lanes: 8,
            single_thread_bytes: [256, 1024],
            single_thread_kernel: [false, true],
            warps_take: Some(WarpsTake {
                min_lanes: 8,
                min_takes: 1,
            }),
        },
    ],
};

/// Volta to Ada (sm_70 to sm_89): 256-thread blocks, as the policy table has
/// held since before Hopper was tuned. None of these numbers was measured
/// on these GPUs (the project has had only H100s and H200s): the segmented
/// ones are Hopper's. The whole-input exact sums of `f64` and the exact
/// sums along an axis are not capped (their caps were measured on
/// Hopper's 512-thread blocks only); the exact rows' tiles are Hopper's.
/// Logsumexp of `f64` is not capped there: its 152 registers fit a
/// 256-thread block, and a cap (`.maxnreg`, even 255) changes what ptxas does.
const VOLTA: Tuning = Tuning {
    min_cc: 70,
    block_threads: 256,
    series_max_registers: None,
    exact_f64_max_registers: None,
    exact_exp_f64_max_registers: None,
    exact_axis_max_registers: [None, None],
    ..HOPPER
};

/// Every row, newest first: a device takes the first row whose `min_cc` it
/// reaches. The PTX is built for each row's architecture.
pub const BY_ARCHITECTURE: &[Tuning] = &[HOPPER, VOLTA];

/// The row for compute capability `cc` (major × 10 + minor); `None` before
/// the oldest row (sm_70).
pub fn for_compute_capability(cc: u32) -> Option<Tuning> {
    BY_ARCHITECTURE.iter().find(|row| cc >= row.min_cc).copied()
}

/// The most segments a warp or block takes at a time: they must fit the
/// plan's 16 bits (`abi::SegmentPlan`). A limit of the format, not tuned.
pub const MAX_SEGMENTS_PER_TAKE: u64 = 1 << 15;

#[cfg(test)]
mod tests {
    //! The tuning table's rows, as its users read them.

    #[test]
    fn row_0() {
        use crate::tuning;
        let ada = tuning::for_compute_capability(89); // an RTX 4090 or L40S: the Volta row
        assert_eq!(ada.map(|row| (row.min_cc, row.block_threads)), Some((70, 256)));
        let blackwell = tuning::for_compute_capability(100); // the Hopper row
        assert_eq!(blackwell.map(|row| (row.min_cc, row.block_threads)), Some((90, 512)));
    }

    #[test]
    fn row_1() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.min_cc), Some(90));
    }

    #[test]
    fn row_2() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.block_threads), Some(512));
    }

    #[test]
    fn row_3() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.segmented_max_registers), Some(64)); // two 512-thread blocks per SM
    }

    #[test]
    fn row_4() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.and_then(|row| row.series_max_registers), Some(128)); // a 512-thread block
    }

    #[test]
    fn row_5() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.segment_tiles_per_thread), Some(2));
    }

    #[test]
    fn row_6() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.min_segment_lanes), Some(4));
    }

    #[test]
    fn row_7() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.take_bytes), Some(32 << 10)); // 32 KiB
    }

    #[test]
    fn row_8() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.min_takes_per_taker), Some(4));
    }

    #[test]
    fn row_9() {
        let hopper = crate::tuning::for_compute_capability(90);
        assert_eq!(hopper.map(|row| row.balanced_min_lanes), Some(16));
    }

    #[test]
    fn row_10() {
        use crate::tuning::BY_ARCHITECTURE;
        assert!(BY_ARCHITECTURE.windows(2).all(|pair| pair[0].min_cc > pair[1].min_cc)); // newest first
        assert_eq!(BY_ARCHITECTURE.last().map(|oldest| oldest.min_cc), Some(70));
        // Volta
    }

    #[test]
    fn row_11() {
        use crate::tuning::for_compute_capability;
        assert_eq!(for_compute_capability(90).map(|row| row.block_threads), Some(512));
        assert_eq!(for_compute_capability(120).map(|row| row.min_cc), Some(90));
        assert_eq!(for_compute_capability(75).map(|row| row.min_cc), Some(70));
        assert_eq!(for_compute_capability(61), None); // Pascal
    }

    #[test]
    fn row_12() -> crate::Result<()> {
        use crate::{emulated::Emulator, tuning::MAX_SEGMENTS_PER_TAKE, Op};
        // A million one-element segments: as many per take as 32 KiB holds, within the cap.
        let shape = Emulator::default().segmented_launch_shape::<f32>(Op::Sum, 1 << 20, 1 << 20)?;
        assert_eq!(shape.segments_per_take, 8192);
        assert!(u64::from(shape.segments_per_take) <= MAX_SEGMENTS_PER_TAKE);
        Ok(())
    }
}
