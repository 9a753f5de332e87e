//! Device primitives: thread and block indices, the block barrier, warp
//! shuffles, shared memory, global loads, stores and atomics. Everything
//! above this module is plain Rust over these functions.
//!
//! There are two implementations with one API, chosen by target, so kernel
//! code never changes and holds no `cfg`:
//! - `ptx` on `nvptx64` (the GPU): inline PTX, the only `asm!` in the crate;
//! - `emulated` everywhere else: the same functions on the CPU, run by the
//!   SIMT emulator in `crate::emulator`, which checks every access and every
//!   barrier and shuffle against what the GPU defines.
//!
//! Names follow `cuda_std` (`thread_idx_x`, `sync_threads`, ...) so that a move
//! to `rustc_codegen_nvvm` stays small.
//!
//! Addresses handed to the `*_global_*` functions are *global-window*
//! addresses produced by `to_global`; on current CUDA the generic and global
//! windows coincide for `cuMemAlloc` memory, but PTX does not promise it.

#[cfg(target_arch = "nvptx64")]
pub mod ptx;
#[cfg(target_arch = "nvptx64")]
pub use ptx::*;

#[cfg(not(target_arch = "nvptx64"))]
mod emulated;
#[cfg(not(target_arch = "nvptx64"))]
pub use emulated::*;

/// This thread's index in the whole 1-D grid (`blockIdx.x · blockDim.x +
/// threadIdx.x`, `cuda_std`'s `index_1d`), as a `u64`: the product of two
/// `u32`s may exceed `u32::MAX`.
#[inline(always)]
pub fn index_1d() -> u64 {
    block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64
}

/// An element type a user operator computes in: its functions, which the
/// host provides (`crate::user`).
pub trait UserScalar: crate::element::Element {
    /// The operator's identity.
    fn user_identity() -> Self;
    /// The operator's combine.
    fn user_combine(a: Self, b: Self) -> Self;
    /// The operator's map of an input element.
    fn user_map(x: Self) -> Self;
    /// The operator's map of a pair of two inputs' elements.
    fn user_map_pair(a: Self, b: Self) -> Self;
}
