//! The embedded PTX, the table of kernels in it, and loading them for a device.

use crate::abi::{SegmentPlan, SegmentSchedule, VECTORS_PER_THREAD, VECTOR_BYTES};
use crate::element::{ArgInput, Element, ElementType, WidensTo};
use crate::error::{Error, Result};
use crate::launch::KernelHandle;
use crate::op::Op;
use crate::policy::Policy;
use cust::device::{Device, DeviceAttribute};
use cust::function::{BlockSize, Function};
use cust::module::Module;
use std::mem::size_of;

/// `(compute capability × 10, PTX)`, newest first; written by `build.rs`.
const PTX: &[(u32, &str)] = include!(concat!(env!("OUT_DIR"), "/ptx_table.rs"));

/// One reduction of the PTX module: its whole-input and segmented entry points.
#[derive(Clone, Copy, Debug)]
struct KernelEntry {
    op: Op,
    element: ElementType,
    name: &'static str,
    /// The segmented entry points, one per schedule, indexed by
    /// `SegmentSchedule as usize` (see [`segment_schedule`]).
    segmented_names: [&'static str; 3],
}

macro_rules! kernel_table {
    ($(($op:ident, $stem:ident, $map:ident, $operator:ident, [$($t:ident)*])),* $(,)?) => {
        /// Every reduction kernel in the PTX, from the list in `kernels-gpu/src/abi.rs`.
        const KERNELS: &[KernelEntry] = &[$($(
            KernelEntry {
                op: Op::$op,
                element: <$t as Element>::TYPE,
                name: concat!("reduce_", stringify!($stem), "_", stringify!($t)),
                // As `kernels-gpu/src/lib.rs` names them.
                segmented_names: [
                    concat!("segmented_", stringify!($stem), "_", stringify!($t)),
                    concat!("segmented_balanced_", stringify!($stem), "_", stringify!($t)),
                    concat!("segmented_block_balanced_", stringify!($stem), "_", stringify!($t)),
                ],
            },
        )*)*];
    };
}
kernels_gpu::for_each_reduce_kernel!(kernel_table);

macro_rules! dot_kernel_table {
    ($(($name:ident, $t:ty)),* $(,)?) => {
        /// The production dot-product kernels, from the list in `kernels-gpu/src/abi.rs`.
        const DOT_KERNELS: &[(ElementType, &str)] = &[$((<$t as Element>::TYPE, stringify!($name)),)*];
    };
}
kernels_gpu::for_each_dot_kernel!(dot_kernel_table);

/// One argmax or argmin entry point of the PTX module.
#[derive(Clone, Copy, Debug)]
struct ArgEntry {
    /// The input type's name (`"f32"`, `"bf16"`, ...).
    input: &'static str,
    /// `Op::Max` for argmax, `Op::Min` for argmin.
    op: Op,
    name: &'static str,
}

macro_rules! arg_kernel_table {
    ($(($input:ident, $name:ident, $acc:ident)),* $(,)?) => {
        /// The argmax and argmin kernels, from the list in `kernels-gpu/src/abi.rs`.
        const ARG_KERNELS: &[ArgEntry] = &[$(
            ArgEntry { input: stringify!($name), op: Op::Max, name: concat!("argmax_", stringify!($name)) },
            ArgEntry { input: stringify!($name), op: Op::Min, name: concat!("argmin_", stringify!($name)) },
        )*];
    };
}
kernels_gpu::for_each_arg_kernel!(arg_kernel_table);

/// One widening entry point of the PTX module.
#[derive(Clone, Copy, Debug)]
struct WidenedEntry {
    /// The input type's name (`"i8"`, `"f16"`, ...).
    input: &'static str,
    accumulator: ElementType,
    op: Op,
    name: &'static str,
}

macro_rules! widened_kernel_table {
    ($(($input:ident, $input_name:ident, $acc:ident, [$(($op:ident, $stem:ident, $operator:ident))*])),* $(,)?) => {
        /// Every widening kernel in the PTX, from the list in `kernels-gpu/src/abi.rs`.
        const WIDENED_KERNELS: &[WidenedEntry] = &[$($(
            WidenedEntry {
                input: stringify!($input_name),
                accumulator: <$acc as Element>::TYPE,
                op: Op::$op,
                name: concat!("reduce_", stringify!($stem), "_", stringify!($input_name), "_as_", stringify!($acc)),
            },
        )*)*];
    };
}
kernels_gpu::for_each_widened_kernel!(widened_kernel_table);

/// The PTX for the newest architecture not newer than `major.minor`.
fn ptx_for(major: u32, minor: u32) -> Result<&'static str> {
    let cc = major * 10 + minor;
    PTX.iter()
        .find(|(arch, _)| cc >= *arch)
        .map(|(_, ptx)| *ptx)
        .ok_or(Error::UnsupportedDevice { major, minor })
}

/// The environment variable that pins the PTX architecture (`sm_70`, `sm_90`),
/// so the code for older GPUs can be tested on a newer one (PTX is forward
/// compatible: the driver compiles sm_70 PTX for any later GPU).
const PTX_ARCH_VARIABLE: &str = "REDUCE_PTX_ARCH";

/// The PTX to load on a `major.minor` device: the newest it runs, unless
/// [`PTX_ARCH_VARIABLE`] names another that it can run.
fn chosen_ptx(major: u32, minor: u32) -> Result<&'static str> {
    let Ok(forced) = std::env::var(PTX_ARCH_VARIABLE) else {
        return ptx_for(major, minor);
    };
    let cc = major * 10 + minor;
    PTX.iter()
        .find(|(arch, _)| format!("sm_{arch}") == forced)
        .filter(|(arch, _)| cc >= *arch)
        .map(|(_, ptx)| *ptx)
        .ok_or_else(|| {
            let built: Vec<String> = PTX.iter().map(|(arch, _)| format!("sm_{arch}")).collect();
            Error::InvalidPolicy(format!(
                "{PTX_ARCH_VARIABLE}={forced} is not one of the built architectures {built:?} that this compute capability {major}.{minor} device runs"
            ))
        })
}

/// The kernels loaded into the current context, with their launch limits.
#[derive(Debug)]
pub(crate) struct Kernels {
    /// Per entry of `KERNELS`: its handle and its largest useful grid (SMs ×
    /// resident blocks per SM). Declared before `module`, so dropped first.
    loaded: Vec<(KernelHandle, u32)>,
    /// The same for each entry of `DOT_KERNELS`.
    loaded_dots: Vec<(KernelHandle, u32)>,
    /// The same for each entry of `WIDENED_KERNELS`.
    loaded_widened: Vec<(KernelHandle, u32)>,
    /// The same for each entry of `ARG_KERNELS`.
    loaded_arg: Vec<(KernelHandle, u32)>,
    /// The same for the segmented entry points of each entry of `KERNELS`,
    /// indexed by `SegmentSchedule as usize`.
    loaded_segmented: Vec<[(KernelHandle, u32); 3]>,
    /// Kept loaded: the handles in `loaded` point into it.
    module: Module,
    policy: Policy,
}

/// The launch shape of one reduction: blocks × threads per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in the (1-D) grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
}

impl Kernels {
    /// Loads the PTX that fits the current context's device (JIT-compiled by
    /// the driver; cached on disk by it across runs).
    pub(crate) fn load(policy: Option<Policy>) -> Result<Self> {
        let device = cust::context::CurrentContext::get_device()?;
        let (major, minor) = compute_capability(device)?;
        let policy = match policy {
            Some(policy) => policy,
            None => Policy::for_compute_capability(major, minor)?,
        };
        let module = Module::from_ptx(chosen_ptx(major, minor)?, &[])?;
        let sms = device.get_attribute(DeviceAttribute::MultiprocessorCount)? as u32;

        let block = policy.block_threads();
        let load = |name: &str| -> Result<(KernelHandle, u32)> {
            let function: Function<'_> = module.get_function(name)?;
            let per_sm = function.max_active_blocks_per_multiprocessor(BlockSize::x(block), 0)?;
            if per_sm == 0 {
                return Err(Error::InvalidPolicy(format!(
                    "{name} cannot run with {block} threads per block on this device"
                )));
            }
            Ok((KernelHandle(function.to_raw()), sms * per_sm))
        };
        let loaded = KERNELS
            .iter()
            .map(|entry| load(entry.name))
            .collect::<Result<Vec<_>>>()?;
        let loaded_dots = DOT_KERNELS
            .iter()
            .map(|(_, name)| load(name))
            .collect::<Result<Vec<_>>>()?;
        let loaded_widened = WIDENED_KERNELS
            .iter()
            .map(|entry| load(entry.name))
            .collect::<Result<Vec<_>>>()?;
        let loaded_arg = ARG_KERNELS
            .iter()
            .map(|entry| load(entry.name))
            .collect::<Result<Vec<_>>>()?;
        let loaded_segmented = KERNELS
            .iter()
            .map(|entry| {
                let [fixed_order, warps_take, blocks_take] = entry.segmented_names;
                Ok([load(fixed_order)?, load(warps_take)?, load(blocks_take)?])
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Kernels {
            loaded,
            loaded_dots,
            loaded_widened,
            loaded_arg,
            loaded_segmented,
            module,
            policy,
        })
    }

    /// The largest grid any kernel is launched with: the workspace holds one
    /// partial per block of it.
    pub(crate) fn max_grid(&self) -> u32 {
        self.loaded
            .iter()
            .chain(&self.loaded_dots)
            .chain(&self.loaded_widened)
            .chain(&self.loaded_arg)
            .chain(self.loaded_segmented.iter().flatten())
            .map(|&(_, cap)| cap)
            .max()
            .unwrap_or(1)
    }

    /// Any entry point of the module by name (the ladder's kernels, which are
    /// looked up when a ladder strategy is chosen, not on every call).
    pub(crate) fn function(&self, name: &str) -> Result<KernelHandle> {
        Ok(KernelHandle(self.module.get_function(name)?.to_raw()))
    }

    /// The kernel and launch shape for reducing `len` elements of `T` with `op`;
    /// [`Error::UnsupportedOp`] where the op is not defined for `T`.
    pub(crate) fn launch_for<T: Element>(&self, op: Op, len: usize) -> Result<(KernelHandle, LaunchShape)> {
        let (kernel, grid_cap) = self.loaded[kernel_index(op, T::TYPE)?];
        Ok((kernel, production_shape(self.policy, len, T::TYPE.size(), grid_cap)))
    }

    /// The segmented kernel and launch shape for reducing `len` elements of
    /// `T` in `segments` segments with `op` (given by offsets if `offsets`,
    /// else rows); [`Error::UnsupportedOp`] where the op is not defined for `T`.
    pub(crate) fn segmented_launch_for<T: Element>(
        &self,
        op: Op,
        segments: usize,
        len: usize,
        offsets: bool,
    ) -> Result<(KernelHandle, SegmentedShape)> {
        let kernels = self.loaded_segmented[kernel_index(op, T::TYPE)?];
        // The fixed-order kernel's limit sizes the grid for all three: the
        // schedule depends on the shape.
        let grid_cap = kernels[SegmentSchedule::FixedOrder as usize].1;
        let shape = segmented_shape(self.policy, segments, len, T::TYPE.size(), grid_cap);
        let (kernel, _) = kernels[segment_schedule(shape, segments, offsets) as usize];
        Ok((kernel, shape))
    }

    /// The widening kernel and launch shape for reducing `len` elements of
    /// `In` into `A` with `op`; [`Error::UnsupportedWidening`] where there is none.
    pub(crate) fn widened_launch_for<A: Element, In: WidensTo<A>>(
        &self,
        op: Op,
        len: usize,
    ) -> Result<(KernelHandle, LaunchShape)> {
        let index = widened_kernel_index::<A, In>(op)?;
        let (kernel, grid_cap) = self.loaded_widened[index];
        Ok((kernel, production_shape(self.policy, len, size_of::<In>(), grid_cap)))
    }

    /// The argmax (`op` = `Max`) or argmin (`Min`) kernel and launch shape
    /// for `len` elements of `T`.
    pub(crate) fn arg_launch_for<T: ArgInput>(&self, op: Op, len: usize) -> Result<(KernelHandle, LaunchShape)> {
        let (kernel, grid_cap) = self.loaded_arg[arg_kernel_index::<T>(op)?];
        Ok((kernel, production_shape(self.policy, len, size_of::<T>(), grid_cap)))
    }

    /// The production dot-product kernel and launch shape for `len` pairs of `T`.
    pub(crate) fn dot_launch_for<T: Element>(&self, len: usize) -> Result<(KernelHandle, LaunchShape)> {
        let index = DOT_KERNELS
            .iter()
            .position(|(element, _)| *element == T::TYPE)
            .ok_or(Error::Cuda(cust::error::CudaError::NotFound))?;
        let (kernel, grid_cap) = self.loaded_dots[index];
        Ok((kernel, production_shape(self.policy, len, T::TYPE.size(), grid_cap)))
    }
}

/// The production kernels' launch shape for `len` input elements of
/// `element_bytes` each: enough blocks for one full tile of 16-byte loads per
/// thread, at most `grid_cap`. (The GPU and the emulator both launch with it.)
pub(crate) fn production_shape(policy: Policy, len: usize, element_bytes: usize, grid_cap: u32) -> LaunchShape {
    let block = policy.block_threads();
    let elements_per_tile = block as u64 * VECTORS_PER_THREAD * (VECTOR_BYTES / element_bytes as u64);
    let blocks_needed = (len as u64).div_ceil(elements_per_tile).max(1);
    let blocks = blocks_needed.min(grid_cap as u64) as u32;
    LaunchShape {
        blocks,
        threads_per_block: block,
    }
}

/// How a segmented reduction is launched: how many threads reduce each
/// segment, and the grid. See [`crate::Reducer::segmented_launch_shape`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedShape {
    /// Threads that reduce one segment (or one part of it): 1 to 32 lanes of
    /// a warp, several warps, or a whole block; always a power of two.
    pub team_threads: u32,
    /// Blocks that share one segment, each reducing a part of it: above 1
    /// only for few segments, each longer than one block's tile.
    pub blocks_per_segment: u32,
    /// Segments a warp (or, for teams of several warps, a block) takes at a
    /// time where segments given by offsets are handed out as they finish
    /// (teams of at least 16 lanes; see the [`segmented`](crate::segmented)
    /// module): about 32 KiB of an average segment's elements, at least the
    /// taker's teams.
    pub segments_per_take: u32,
    /// The grid and block size.
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

/// Full tiles each thread of a segment's team should get: each tile is one
/// batch of loads in flight, and each segment costs its team a fixed
/// overhead (its bounds, head and tail, the team's reduction), which more
/// tiles per thread spread over more bytes.
const SEGMENT_TILES_PER_THREAD: u64 = 2;

/// The fewest lanes a team has when its segment holds a full tile for each:
/// the lanes of narrower teams read rows that lie further apart, so one warp
/// load touches more cache lines (on the H200, 64-element f32 rows took 1.4×
/// as long with teams of 2 lanes as with 4).
const MIN_SEGMENT_LANES: u64 = 4;

/// Bytes of an average segment's elements a warp (or block) takes at a time
/// from the balanced kernels' counter; where a segment is longer, a take is
/// the taker's teams, one segment each. On the H200 (`BENCHMARKS.md`), takes of about
/// 16 KiB made equal f32 segments of 1024 elements 6% slower than the
/// fixed-order kernel (the warps contend for the counter), takes of 64 to
/// 128 KiB lost most of the gain on random lengths (a coarser balance).
const TAKE_BYTES: u64 = 32 << 10;

/// The fewest takes each taker (warp, or block: [`takers`]) should get from
/// the balanced kernels: fewer segments per take where there are not that
/// many, and the fixed-order kernel where even takes of one round would leave
/// fewer. (With too few segments, a warp's take would hold several rounds of
/// segments that other warps could read at the same time: on the H200,
/// random f32 segments of mean 1000 in 64 MiB, 2 takes of 4 rounds per warp,
/// took 1.24× as long as in the fixed order.)
const MIN_TAKES_PER_TAKER: u64 = 4;

/// The most segments a warp or block takes at a time (they must fit the
/// plan's 16 bits).
const MAX_SEGMENTS_PER_TAKE: u64 = 1 << 15;

/// The segmented kernels' launch shape for `len` elements of `element_bytes`
/// each, in `segments` segments (see [`SegmentedShape`]). It depends only on
/// the segment count, the length, the element size and the device, so the
/// combine order of every segment is the same on every run.
///
/// A team gets the largest power of two of threads that still gives each
/// thread [`SEGMENT_TILES_PER_THREAD`] full tiles (a tile is
/// `VECTORS_PER_THREAD` 16-byte loads issued together) of an average
/// segment, but at least [`MIN_SEGMENT_LANES`] threads where each still gets
/// one full tile, and at most the largest power of two dividing the block. Teams of a whole block split each segment over
/// several blocks when there are fewer segments than the grid holds blocks,
/// so that a few long rows still fill the GPU; the grid then has one block
/// per part, at most `grid_cap`.
pub(crate) fn segmented_shape(
    policy: Policy,
    segments: usize,
    len: usize,
    element_bytes: usize,
    grid_cap: u32,
) -> SegmentedShape {
    let block = policy.block_threads();
    let segments = segments.max(1) as u64;
    let tile_elements = VECTORS_PER_THREAD * (VECTOR_BYTES / element_bytes as u64);
    let average = (len as u64).div_ceil(segments);
    // The largest power of two not above each count of threads.
    let floor_power_of_two = |threads: u64| 1u64 << threads.max(1).ilog2();
    let wanted = floor_power_of_two(average / (SEGMENT_TILES_PER_THREAD * tile_elements))
        .max(floor_power_of_two(average / tile_elements).min(MIN_SEGMENT_LANES));
    let largest_team = 1u64 << block.trailing_zeros();
    let team_threads = wanted.min(largest_team) as u32;

    let parts_wanted = average.div_ceil(block as u64 * tile_elements);
    let blocks_per_segment = if team_threads == block && parts_wanted > 1 {
        parts_wanted.min(grid_cap as u64 / segments).max(1) as u32
    } else {
        1
    };
    let blocks = if blocks_per_segment > 1 {
        segments * blocks_per_segment as u64
    } else {
        let teams_per_block = (block / team_threads) as u64;
        segments.div_ceil(teams_per_block).min(grid_cap as u64)
    };
    let launch = LaunchShape {
        blocks: blocks as u32,
        threads_per_block: block,
    };
    let (takers, teams_per_taker) = takers(launch, team_threads);
    let average_bytes = (average * element_bytes as u64).max(1);
    let segments_per_take = floor_power_of_two(TAKE_BYTES / average_bytes)
        .min(floor_power_of_two(segments / (takers * MIN_TAKES_PER_TAKER)))
        .clamp(teams_per_taker, MAX_SEGMENTS_PER_TAKE);
    SegmentedShape {
        team_threads,
        blocks_per_segment,
        segments_per_take: segments_per_take as u32,
        launch,
    }
}

/// Who takes segments from the balanced kernels' counter in `launch` with
/// teams of `team_threads`, as `(takers, teams per taker)`: each warp, or
/// each block where a team is several warps.
fn takers(launch: LaunchShape, team_threads: u32) -> (u64, u64) {
    let blocks = launch.blocks as u64;
    let block = launch.threads_per_block;
    if team_threads > 32 {
        (blocks, (block / team_threads) as u64)
    } else {
        (blocks * (block / 32) as u64, (32 / team_threads).max(1) as u64)
    }
}

/// The index in `KERNELS` of the reduction `op` over `element`;
/// [`Error::UnsupportedOp`] where the op is not defined for it.
fn kernel_index(op: Op, element: ElementType) -> Result<usize> {
    KERNELS
        .iter()
        .position(|k| k.op == op && k.element == element)
        .ok_or(Error::UnsupportedOp { op, element })
}

/// The name of the production kernel for `op` over `element` (from
/// `KERNELS`); [`Error::UnsupportedOp`] where the op is not defined for it.
pub(crate) fn reduce_kernel_name(op: Op, element: ElementType) -> Result<&'static str> {
    Ok(KERNELS[kernel_index(op, element)?].name)
}

/// The name of the segmented kernel for `op` over `element` with `schedule`.
pub(crate) fn segmented_kernel_name(op: Op, element: ElementType, schedule: SegmentSchedule) -> Result<&'static str> {
    Ok(KERNELS[kernel_index(op, element)?].segmented_names[schedule as usize])
}

/// The fewest lanes per team for which segments given by offsets are handed
/// out to warps (or blocks) as they finish (the balanced entry points)
/// rather than in a fixed order. On the H200 (`BENCHMARKS.md`, 1 GiB), the
/// balanced kernels read random lengths of mean 1000 (warps take: teams of
/// 16 `f32` lanes, 32 `f64`) 5–8% faster, and equal lengths through offsets
/// 2–3.5% slower; random lengths of mean 10^4 (blocks take: teams of 256
/// and 512) 7% (`f32`) and 14–15% (`f64`) faster, equal lengths 0–3% faster;
/// in a probe, random lengths of mean 100 (teams of 4) 2.5% slower.
const BALANCED_MIN_LANES: u32 = 16;

/// How a segmented launch of `shape` over `segments` segments hands them
/// out: from a counter as warps (teams of at most 32 lanes) or blocks (teams
/// of several warps) finish, for segments given by offsets (rows are all one
/// length), each reduced by one team of at least [`BALANCED_MIN_LANES`]
/// lanes, with at least [`MIN_TAKES_PER_TAKER`] takes for each taker and, where
/// blocks take, a power of two of teams per block (a take is a power of two
/// of segments, a multiple of them); else in a fixed order.
pub(crate) fn segment_schedule(shape: SegmentedShape, segments: usize, offsets: bool) -> SegmentSchedule {
    let (takers, teams_per_taker) = takers(shape.launch, shape.team_threads);
    let balanced = offsets
        && shape.team_threads >= BALANCED_MIN_LANES
        && shape.blocks_per_segment == 1
        && teams_per_taker.is_power_of_two()
        && segments as u64 >= takers * shape.segments_per_take as u64 * MIN_TAKES_PER_TAKER;
    match (balanced, shape.team_threads > 32) {
        (false, _) => SegmentSchedule::FixedOrder,
        (true, false) => SegmentSchedule::WarpsTake,
        (true, true) => SegmentSchedule::BlocksTake,
    }
}

/// The index in `WIDENED_KERNELS` of the kernel reducing `In` into `A` with
/// `op`; [`Error::UnsupportedWidening`] where there is none.
fn widened_kernel_index<A: Element, In: WidensTo<A>>(op: Op) -> Result<usize> {
    WIDENED_KERNELS
        .iter()
        .position(|k| k.op == op && k.input == In::NAME && k.accumulator == A::TYPE)
        .ok_or(Error::UnsupportedWidening {
            op,
            input: In::NAME,
            accumulator: A::TYPE,
        })
}

/// The name of the widening kernel reducing `In` into `A` with `op`.
pub(crate) fn widened_kernel_name<A: Element, In: WidensTo<A>>(op: Op) -> Result<&'static str> {
    Ok(WIDENED_KERNELS[widened_kernel_index::<A, In>(op)?].name)
}

/// The index in `ARG_KERNELS` of argmax (`op` = `Max`) or argmin over `T`.
fn arg_kernel_index<T: ArgInput>(op: Op) -> Result<usize> {
    ARG_KERNELS
        .iter()
        .position(|k| k.op == op && k.input == T::NAME)
        .ok_or(Error::Cuda(cust::error::CudaError::NotFound))
}

/// The name of the argmax (`op` = `Max`) or argmin kernel over `T`.
pub(crate) fn arg_kernel_name<T: ArgInput>(op: Op) -> Result<&'static str> {
    Ok(ARG_KERNELS[arg_kernel_index::<T>(op)?].name)
}

/// The name of the production dot-product kernel for `element` (from `DOT_KERNELS`).
pub(crate) fn dot_kernel_name(element: ElementType) -> &'static str {
    DOT_KERNELS
        .iter()
        .find(|(e, _)| *e == element)
        .map_or("unknown dot kernel", |(_, name)| name)
}

fn compute_capability(device: Device) -> Result<(u32, u32)> {
    let major = device.get_attribute(DeviceAttribute::ComputeCapabilityMajor)? as u32;
    let minor = device.get_attribute(DeviceAttribute::ComputeCapabilityMinor)? as u32;
    Ok((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_and_element_has_one_kernel_except_max_abs_of_integers() {
        for op in Op::ALL {
            for element in ElementType::ALL {
                let count = KERNELS.iter().filter(|k| k.op == op && k.element == element).count();
                let integer = !matches!(element, ElementType::F32 | ElementType::F64);
                let expected = if op == Op::MaxAbs && integer { 0 } else { 1 };
                assert_eq!(count, expected, "{op} × {element:?}");
                assert_eq!(op.is_defined_for(element), expected == 1, "{op} × {element:?}");
            }
        }
    }

    fn assert_in_every_ptx(names: impl IntoIterator<Item = impl AsRef<str>>) {
        for name in names {
            let name = name.as_ref();
            for (arch, ptx) in PTX {
                assert!(
                    ptx.contains(&format!(".entry {name}(")),
                    "{name} missing from sm_{arch} PTX"
                );
            }
        }
    }

    #[test]
    fn every_kernel_is_in_every_ptx() {
        assert_in_every_ptx(
            KERNELS
                .iter()
                .flat_map(|k| [[k.name].as_slice(), k.segmented_names.as_slice()].concat())
                .chain(DOT_KERNELS.iter().map(|(_, name)| *name))
                .chain(ARG_KERNELS.iter().map(|k| k.name))
                .chain(WIDENED_KERNELS.iter().map(|k| k.name)),
        );
    }

    fn shape(segments: usize, len: usize, element_bytes: usize) -> (u32, u32, u32) {
        let policy = Policy::new(512).unwrap();
        let s = segmented_shape(policy, segments, len, element_bytes, 264);
        (s.team_threads, s.blocks_per_segment, s.launch.blocks)
    }

    #[test]
    fn balanced_takes_are_about_32_kib_of_segments() {
        use SegmentSchedule::{BlocksTake, FixedOrder, WarpsTake};
        // (segments, elements, element bytes, offsets) → (team, segments per take, schedule).
        let policy = Policy::new(512).unwrap();
        let cases = [
            (
                (1 << 18, 1000 << 18, 4, true),
                (16, 8, WarpsTake),
                "f32, mean 1000: 2 teams a round, 4 rounds",
            ),
            (
                (1 << 18, 1 << 28, 4, true),
                (32, 8, WarpsTake),
                "f32, 1024 each: 8 rounds",
            ),
            (
                (1 << 17, 1000 << 17, 8, true),
                (32, 4, WarpsTake),
                "f64, mean 1000: 4 rounds",
            ),
            (
                (1 << 14, 1000 << 14, 4, true),
                (16, 2, FixedOrder),
                "f32, mean 1000, 2^14 of them: too few to balance",
            ),
            (
                (1 << 18, 1 << 28, 4, false),
                (32, 8, FixedOrder),
                "rows: all one length, fixed order",
            ),
            (
                (1 << 22, 100 << 22, 4, true),
                (4, 64, FixedOrder),
                "teams of 4: fixed order",
            ),
            (
                (1 << 14, 10_000 << 14, 4, true),
                (256, 2, BlocksTake),
                "f32, mean 10^4: teams of 8 warps, 2 a block",
            ),
            (
                (1 << 14, 10_000 << 14, 8, true),
                (512, 1, BlocksTake),
                "f64, mean 10^4: a block each",
            ),
            (
                (1 << 10, 10_000 << 10, 4, true),
                (256, 2, FixedOrder),
                "f32, mean 10^4, 2^10 of them: too few to balance",
            ),
            // `tests/kernel_sweep.rs`'s balanced cases (lengths 1024–2047 and
            // 2048–4095) at their smallest and largest averages.
            ((17_000, 17_000 * 1024, 4, true), (32, 1, WarpsTake), "sweep, f32, 1024"),
            ((17_000, 17_000 * 2047, 4, true), (32, 1, WarpsTake), "sweep, f32, 2047"),
            (
                (17_000, 17_000 * 1024, 8, true),
                (64, 8, BlocksTake),
                "sweep, f64, 1024",
            ),
            (
                (17_000, 17_000 * 2047, 8, true),
                (64, 8, BlocksTake),
                "sweep, f64, 2047",
            ),
            ((9000, 9000 * 2048, 4, true), (64, 8, BlocksTake), "sweep, f32, 2048"),
            ((9000, 9000 * 4095, 4, true), (64, 8, BlocksTake), "sweep, f32, 4095"),
            ((9000, 9000 * 2048, 8, true), (128, 4, BlocksTake), "sweep, f64, 2048"),
            ((9000, 9000 * 4095, 8, true), (128, 4, BlocksTake), "sweep, f64, 4095"),
        ];
        for ((segments, len, bytes, offsets), expected, why) in cases {
            let s = segmented_shape(policy, segments, len, bytes, 264);
            let got = (
                s.team_threads,
                s.segments_per_take,
                segment_schedule(s, segments, offsets),
            );
            assert_eq!(got, expected, "{why}");
            assert_eq!(SegmentPlan::from_bits(s.plan().to_bits()), s.plan(), "{why}");
        }
        // A block size that is not a power of two: three teams of 128
        // threads per block cannot share a take of a power of two.
        let odd = segmented_shape(Policy::new(384).unwrap(), 1 << 14, 10_000 << 14, 8, 264);
        assert_eq!(odd.team_threads, 128);
        assert_eq!(segment_schedule(odd, 1 << 14, true), FixedOrder);
        // The segmented tests' "warps" and "many blocks" cases on the
        // emulator (its default shape): 50 segments of about 1536 f32s, and
        // 30 of about 3250 (teams of the 64-thread block), take the balanced
        // kernels.
        for (segments, average, team, schedule) in [(50, 1536, 32, WarpsTake), (30, 3250, 64, BlocksTake)] {
            let emulated = segmented_shape(
                Policy::EMULATOR_DEFAULT,
                segments,
                segments * average,
                4,
                crate::emulated::Emulator::DEFAULT_MAX_GRID,
            );
            assert_eq!(emulated.team_threads, team);
            assert_eq!(segment_schedule(emulated, segments, true), schedule);
        }
    }

    #[test]
    fn segmented_shape_adapts_to_segment_length() {
        // (segments, elements, element bytes) → (team, blocks per segment, grid).
        // A tile is 16 f32 or 8 f64 elements per thread.
        let cases = [
            ((1 << 20, 1 << 20, 4), (1, 1, 264), "1-element rows: a thread each"),
            (
                (1 << 18, 1 << 24, 4),
                (4, 1, 264),
                "64-element rows: 4 lanes each, one tile",
            ),
            (
                (1 << 16, 1 << 24, 4),
                (8, 1, 264),
                "256-element rows: 8 lanes each, two tiles",
            ),
            ((1 << 14, 1 << 24, 4), (32, 1, 264), "1024-element rows: a warp each"),
            (
                (1 << 12, 1 << 24, 4),
                (128, 1, 264),
                "4096-element rows: four warps each",
            ),
            ((1 << 10, 1 << 26, 4), (512, 1, 264), "2^16-element rows: a block each"),
            ((4, 1 << 26, 4), (512, 66, 264), "4 long rows: 66 blocks each"),
            ((1, 1 << 30, 4), (512, 264, 264), "one row: the whole grid"),
            ((3, 3, 4), (1, 1, 1), "tiny: one block"),
            ((5, 0, 8), (1, 1, 1), "all empty"),
            (
                (1 << 10, 1 << 20, 8),
                (64, 1, 128),
                "1024-element f64 rows: two warps each",
            ),
        ];
        for ((segments, len, bytes), expected, why) in cases {
            assert_eq!(shape(segments, len, bytes), expected, "{why}");
        }
        // A block size that is not a power of two: teams stop at 32, never split.
        let odd = segmented_shape(Policy::new(96).unwrap(), 2, 1 << 24, 4, 100);
        assert_eq!(
            (odd.team_threads, odd.blocks_per_segment, odd.launch.blocks),
            (32, 1, 1)
        );
    }

    #[test]
    fn every_ladder_and_seed_dot_kernel_is_in_every_ptx() {
        use crate::{DotKernel, Rung};
        let seed_types = [ElementType::I32, ElementType::F32];
        let mut names = Vec::new();
        for element in seed_types {
            for rung in Rung::ALL {
                names.extend(Op::LADDER.map(|op| rung.kernel_name(op, element)));
            }
            names.extend([DotKernel::AtomicPerElement, DotKernel::BlockTree].map(|k| k.kernel_name(element)));
        }
        assert_eq!(names.len(), 2 * (7 * 4 + 2));
        assert_in_every_ptx(names);
    }

    #[test]
    fn ptx_is_chosen_by_compute_capability() {
        assert!(ptx_for(9, 0).unwrap().contains(".target sm_90"));
        assert!(ptx_for(10, 0).unwrap().contains(".target sm_90"));
        assert!(ptx_for(8, 6).unwrap().contains(".target sm_70"));
        assert!(ptx_for(7, 0).unwrap().contains(".target sm_70"));
        assert!(matches!(
            ptx_for(6, 1),
            Err(Error::UnsupportedDevice { major: 6, minor: 1 })
        ));
    }
}
