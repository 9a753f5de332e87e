//! The SIMT emulator: runs a kernel launch on the CPU, as the GPU defines it,
//! so the kernels of this crate are tested exactly as written on machines
//! without a GPU. (Host targets only; the device primitives it serves are in
//! `device/emulated.rs`.)
//!
//! # What a launch is here
//! - Every thread of a block is a real OS thread, so a barrier really waits
//!   for all of them and shared memory is really shared. The same
//!   `block_threads` OS threads run every block of the grid.
//! - Blocks run one at a time, in an order shuffled by a seed (the GPU
//!   promises no order, so a kernel that depends on one fails here).
//! - Warps are lanes `32w .. 32w + 31`; `shfl.sync` exchanges values once
//!   every lane of the member mask has arrived, with PTX's rules for source
//!   lanes out of range (the lane keeps its own value).
//! - Shared memory is per block and filled with a poison pattern before each
//!   block. Every access goes through [`check_shared`], a race detector in
//!   the manner of `compute-sanitizer --tool racecheck`: it must fall inside
//!   a shared array, must not read what no thread has written yet, and must
//!   not read what another thread wrote, or write what another thread read
//!   or wrote, without a barrier in between.
//! - Global memory is host memory. Every load, store and atomic goes through
//!   [`check_access`]: it must fall inside one of the launch's [`Buffer`]s,
//!   be aligned to its size, and respect the buffer's access (stores need a
//!   writable buffer; non-coherent loads need one that nothing writes).
//!
//! # Faults instead of hangs
//! Misuse that a GPU turns into a hang or garbage becomes a [`Fault`] naming
//! the kernel, block and thread: a barrier that some threads of the block
//! cannot reach (they returned, or wait at another barrier or shuffle),
//! a shuffle whose member mask leaves out the calling lane or names lanes
//! that never arrive, a lane reading from a lane outside the mask, an access
//! outside every buffer or shared array, a misaligned access, a shared-memory
//! race or read of unwritten shared memory, and any panic in kernel code.
//!
//! # What it cannot show
//! Speed, and races between blocks: blocks run one after another, so the
//! memory-model questions between concurrently running blocks (fences,
//! acquire/release of the grid combine) are only exercised through the
//! orders that sequential execution produces.
//!
//! # Files
//! - `interface.rs`: what a launch is given and what it reports
//!   ([`LaunchConfig`], [`Buffer`], [`Access`], [`Fault`]);
//! - `launch.rs`: [`launch()`], the launch's state, which emulated thread
//!   each OS thread runs, and how a fault stops the launch;
//! - `sync.rs`: the block barrier and the warp shuffles;
//! - `memory.rs`: global and shared accesses, each checked
//!   ([`check_access`], [`check_shared`]);
//! - `shadow.rs`: shared memory's storage, and the history of each word
//!   that the race detector reads.

mod interface;
mod launch;
mod memory;
mod shadow;
mod sync;

pub use interface::{Access, Buffer, Fault, LaunchConfig};
pub use launch::launch;
pub use memory::{SharedAccess, SharedArray};

// What the device primitives (`device/emulated.rs`) call.
pub(crate) use launch::with_thread;
pub(crate) use memory::{check_access, check_shared, shared_array};
pub(crate) use sync::{barrier, shuffle_butterfly};
