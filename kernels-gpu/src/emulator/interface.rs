//! What a launch is given ([`LaunchConfig`], with the [`Buffer`]s its
//! kernel may touch and the [`Access`] each allows) and what it reports
//! ([`Fault`]).

use core::fmt;

/// A range of host memory that stands for a device buffer of the launch.
#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    /// The name faults use (`"input"`, `"partials"`, ...).
    pub name: &'static str,
    /// Address of the first byte.
    pub address: u64,
    /// Length in bytes.
    pub bytes: u64,
    /// Whether the kernel may write it.
    pub writable: bool,
}

/// How a global access touches memory; decides which buffers allow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A coherent load (`ld.relaxed`): any buffer.
    Load,
    /// A load through the non-coherent path (`ld.global.nc`): only buffers the
    /// launch does not write, or the load could see stale data.
    NonCoherentLoad,
    /// A store: writable buffers.
    Store,
    /// A read-modify-write: writable buffers.
    Atomic,
}

/// One launch: the grid, the block, the memory it may touch.
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'a> {
    /// The kernel's name, for faults.
    pub kernel: &'a str,
    /// Blocks in the 1-D grid (at least 1).
    pub grid_blocks: u32,
    /// Threads per block (1 to 1024).
    pub block_threads: u32,
    /// Bytes of dynamic shared memory per block.
    pub dynamic_shared_bytes: u32,
    /// Seeds the shuffled block order.
    pub block_order_seed: u64,
    /// Every buffer the kernel may touch.
    pub buffers: &'a [Buffer],
}

/// Why an emulated launch failed: a misuse the GPU would turn into a hang or
/// garbage, or a panic in kernel code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The kernel's name.
    pub kernel: String,
    /// The block that faulted.
    pub block: u32,
    /// The thread (within the block) that found the fault.
    pub thread: u32,
    /// What went wrong, and where.
    pub message: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel {}, block {}, thread {}: {}",
            self.kernel, self.block, self.thread, self.message
        )
    }
}

impl std::error::Error for Fault {}
