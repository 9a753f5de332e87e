//! Launch policy: how many threads per block, chosen per compute capability.
//!
//! The other half of the launch shape is derived, not tuned:
//! - blocks per SM: the occupancy calculator's answer for the kernel and block
//!   size (`cuOccupancyMaxActiveBlocksPerMultiprocessor`);
//! - grid: `min(SMs × blocks per SM, blocks needed to give every thread one
//!   full tile of VECTORS_PER_THREAD 16-byte loads)`, at least 1.
//!
//! The grid depends only on the input length, the element size and the
//! device, so the combine order, and with it every float result, is the same
//! on every run.

use crate::error::{Error, Result};

/// Threads per block for the production reduction kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    block_threads: u32,
}

/// Tuning data: `(minimum compute capability × 10, policy)`, newest first.
/// 512-thread blocks with 4 × 16-byte loads per thread keep 32 KiB in flight
/// per block; the occupancy calculator then fits several blocks per SM.
const POLICIES: &[(u32, Policy)] = &[(90, Policy { block_threads: 512 }), (70, Policy { block_threads: 256 })];

impl Policy {
    /// The emulator's default ([`crate::emulated::Emulator::new`]): two warps
    /// per block, so the block reduction combines across warps.
    pub(crate) const EMULATOR_DEFAULT: Policy = Policy { block_threads: 64 };

    /// A policy with `block_threads` threads per block: a multiple of 32 from 32 to 1024.
    pub fn new(block_threads: u32) -> Result<Self> {
        if !(32..=1024).contains(&block_threads) || !block_threads.is_multiple_of(32) {
            return Err(Error::InvalidPolicy(format!(
                "block_threads must be a multiple of 32 between 32 and 1024, got {block_threads}"
            )));
        }
        Ok(Policy { block_threads })
    }

    /// The tuned policy for a device of compute capability `major.minor`.
    pub fn for_compute_capability(major: u32, minor: u32) -> Result<Self> {
        let cc = major * 10 + minor;
        POLICIES
            .iter()
            .find(|(min_cc, _)| cc >= *min_cc)
            .map(|(_, policy)| *policy)
            .ok_or(Error::UnsupportedDevice { major, minor })
    }

    /// Threads per block.
    pub fn block_threads(self) -> u32 {
        self.block_threads
    }
}
