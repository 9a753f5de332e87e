//! Which kernel a [`Reducer`](crate::Reducer) runs: the production kernel
//! (the default), or one rung of the seeds' ladder.

use crate::element::ElementType;
use crate::error::{Error, Result};
use std::fmt;

/// A rung of the ladder the seed tutorials climb: each is a kernel that shows
/// one technique. Run them all with `examples/ladder.rs`; `docs/LADDER.md`
/// says what each costs on an H200.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rung {
    /// 1. One element per thread into shared memory; at stride `s` the threads
    ///    with `tid % 2s == 0` combine: divergent warps at every step.
    InterleavedDivergent,
    /// 2. Thread `t` combines at `2·s·t`: contiguous active threads, but
    ///    2-, 4-, 8-…-way shared-memory bank conflicts.
    InterleavedStrided,
    /// 3. Strides halve from `B/2`, thread `t < s` combines `t` and `t + s`:
    ///    no divergence in busy warps, no bank conflicts.
    SequentialAddressing,
    /// 4. Each thread adds two elements (`B` apart) while loading: half the blocks.
    FirstAddDuringLoad,
    /// 5. One 16-byte vector per thread stored into a shared array of `4·B`
    ///    values, then summed from there: 4× fewer load instructions, 4× the
    ///    shared memory.
    VectorViaShared,
    /// 6. One 16-byte vector per thread, summed in registers: shared memory
    ///    back to `B` values.
    CoarsenedVector,
    /// 7. As 6, but the block combines with warp shuffles (`shfl.sync`) and
    ///    one barrier instead of a shared-memory tree.
    WarpShuffle,
}

macro_rules! rung_table {
    ($(($number:literal, $stem:ident, $load:ty, $tree:ty)),* $(,)?) => {
        impl Rung {
            /// Every rung, in ladder order.
            pub const ALL: [Rung; 7] = [
                Rung::InterleavedDivergent,
                Rung::InterleavedStrided,
                Rung::SequentialAddressing,
                Rung::FirstAddDuringLoad,
                Rung::VectorViaShared,
                Rung::CoarsenedVector,
                Rung::WarpShuffle,
            ];

            /// The rung's number on the ladder, 1 to 7.
            pub fn number(self) -> u32 {
                Rung::ALL.iter().position(|&r| r == self).map_or(0, |i| i as u32 + 1)
            }

            /// The rung's kernel-name stem (`ladder_<stem>_<op>_<type>`), from
            /// the list in `kernels-gpu/src/abi.rs`.
            pub fn name(self) -> &'static str {
                const STEMS: &[(u32, &str)] = &[$(($number, stringify!($stem))),*];
                STEMS.iter().find(|(n, _)| *n == self.number()).map_or("unknown", |(_, stem)| stem)
            }
        }
    };
}
kernels_gpu::for_each_ladder_rung!(rung_table);

impl Rung {
    /// Input elements one block covers.
    pub(crate) fn elements_per_block(self, block_threads: u32, element: ElementType) -> u64 {
        block_threads as u64 * self.elements_per_thread(element)
    }

    fn elements_per_thread(self, element: ElementType) -> u64 {
        match self {
            Rung::InterleavedDivergent | Rung::InterleavedStrided | Rung::SequentialAddressing => 1,
            Rung::FirstAddDuringLoad => 2,
            Rung::VectorViaShared | Rung::CoarsenedVector | Rung::WarpShuffle => {
                crate::abi::VECTOR_BYTES / element.size() as u64
            }
        }
    }

    /// Blocks one pass over `len` elements starting at `address` needs. The
    /// vector rungs read the 16-byte-aligned groups of the address range, so
    /// an input that starts inside a group needs that group counted too.
    pub(crate) fn blocks_for(self, len: u64, address: u64, block_threads: u32, element: ElementType) -> u64 {
        let per_thread = self.elements_per_thread(element);
        let threads = match self {
            Rung::VectorViaShared | Rung::CoarsenedVector | Rung::WarpShuffle => {
                let skipped = address % crate::abi::VECTOR_BYTES / element.size() as u64;
                (skipped + len).div_ceil(per_thread)
            }
            _ => len.div_ceil(per_thread),
        };
        threads.div_ceil(block_threads as u64).max(1)
    }

    /// Dynamic shared memory one block needs.
    pub(crate) fn shared_bytes(self, block_threads: u32, element: ElementType) -> u32 {
        let values = match self {
            Rung::VectorViaShared => self.elements_per_block(block_threads, element) as u32,
            Rung::WarpShuffle => 0,
            _ => block_threads,
        };
        values * element.size() as u32
    }
}

impl Rung {
    /// The entry point of this rung for `op` and `element`
    /// (`ladder_<stem>_<op>_<type>`, the rule in kernels-gpu/src/abi.rs).
    pub(crate) fn kernel_name(self, op: crate::Op, element: ElementType) -> String {
        format!("ladder_{}_{}_{}", self.name(), op.name(), element.name())
    }
}

/// The launches of one ladder reduction: each pass reduces the previous
/// pass's per-block results, until one block writes the result. The GPU and
/// the emulator both follow it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LadderPlan {
    rung: Rung,
    block_threads: u32,
    element: ElementType,
    /// 8-byte words of scratch for the per-block results: the first pass's
    /// region, then the second's (later passes alternate between the two).
    region_words: [usize; 2],
}

/// One launch of a ladder rung: `blocks` blocks reduce `len` elements at
/// `source` into one result each at `destination`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LadderPass {
    pub source: u64,
    pub len: u64,
    pub blocks: u32,
    pub destination: u64,
}

impl LadderPlan {
    /// The plan for `len` elements of `element` at address `input`.
    pub(crate) fn new(rung: Rung, block_threads: u32, element: ElementType, input: u64, len: u64) -> Result<Self> {
        let first = rung.blocks_for(len, input, block_threads, element);
        if first > i32::MAX as u64 {
            return Err(Error::InvalidPolicy(format!(
                "{len} elements need more than 2^31 blocks of {block_threads} threads; use more threads per block"
            )));
        }
        // Later passes read a region at an 8-byte-aligned address; count the
        // worst case (it starts one 8-byte word into a 16-byte group).
        let second = if first > 1 {
            rung.blocks_for(first, 8, block_threads, element)
        } else {
            0
        };
        let words = |results: u64| (results as usize * element.size()).div_ceil(8);
        Ok(LadderPlan {
            rung,
            block_threads,
            element,
            region_words: [words(first), words(second)],
        })
    }

    /// 8-byte words of scratch the passes need (at least 1).
    pub(crate) fn scratch_words(&self) -> usize {
        (self.region_words[0] + self.region_words[1]).max(1)
    }

    /// The passes over `len` elements at `input`, with per-block results in
    /// the scratch at `scratch` and the final result at `out`.
    pub(crate) fn passes(&self, input: u64, len: u64, scratch: u64, out: u64) -> Vec<LadderPass> {
        let regions = [scratch, scratch + 8 * self.region_words[0] as u64];
        let mut passes = Vec::new();
        let (mut source, mut len) = (input, len);
        loop {
            let blocks = self.rung.blocks_for(len, source, self.block_threads, self.element);
            let destination = if blocks == 1 { out } else { regions[passes.len() % 2] };
            passes.push(LadderPass {
                source,
                len,
                blocks: blocks as u32,
                destination,
            });
            if blocks == 1 {
                return passes;
            }
            (source, len) = (destination, blocks);
        }
    }
}

impl fmt::Display for Rung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}. {}", self.number(), self.name())
    }
}

/// The kernel a [`Reducer`](crate::Reducer) runs. Build ladder strategies
/// with [`Strategy::ladder`], which checks the block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Strategy {
    /// The production kernel: one launch, every element type, tuned launch
    /// shape. The default.
    #[default]
    Production,
    /// A rung of the ladder with `block_threads` threads per block. Only for
    /// `i32` and `f32` (the seeds' types); per-block results are combined by
    /// further launches of the same rung, so results are deterministic.
    Ladder {
        /// The rung.
        rung: Rung,
        /// Threads per block: a power of two from 8 to 1024 (from 32 for
        /// [`Rung::WarpShuffle`]).
        block_threads: u32,
    },
}

impl Strategy {
    /// The ladder's `rung` at `block_threads` threads per block.
    pub fn ladder(rung: Rung, block_threads: u32) -> Result<Self> {
        let smallest = if rung == Rung::WarpShuffle { 32 } else { 8 };
        if !block_threads.is_power_of_two() || !(smallest..=1024).contains(&block_threads) {
            return Err(Error::InvalidPolicy(format!(
                "rung {rung} needs a power-of-two block size from {smallest} to 1024, got {block_threads}"
            )));
        }
        Ok(Strategy::Ladder { rung, block_threads })
    }
}

/// The dot-product kernels of seed 004, for [`Reducer::dot_with`](crate::Reducer::dot_with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DotKernel {
    /// Every thread atomically adds its product into the result: one atomic per element.
    AtomicPerElement,
    /// Products into shared memory, a block tree, one atomic per block.
    BlockTree,
}

impl DotKernel {
    /// Threads per block of both kernels (the seed's 256).
    pub(crate) const BLOCK_THREADS: u32 = 256;

    /// Blocks for `len` pairs: one thread per pair.
    pub(crate) fn blocks_for(len: usize) -> Result<u32> {
        let blocks = (len as u64).div_ceil(Self::BLOCK_THREADS as u64).max(1);
        if blocks > i32::MAX as u64 {
            return Err(Error::InvalidPolicy(format!(
                "{len} elements are too many for one thread each"
            )));
        }
        Ok(blocks as u32)
    }

    /// Dynamic shared memory per block: the block tree's one `T` per thread.
    pub(crate) fn shared_bytes(element: ElementType) -> u32 {
        Self::BLOCK_THREADS * element.size() as u32
    }

    /// The entry point of this kernel for `element` (`ladder_dot_<kind>_<type>`).
    pub(crate) fn kernel_name(self, element: ElementType) -> String {
        let kind = match self {
            DotKernel::AtomicPerElement => "atomic_per_element",
            DotKernel::BlockTree => "block_tree",
        };
        format!("ladder_dot_{kind}_{}", element.name())
    }
}
