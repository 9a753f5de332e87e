//! The seeds' kernel ladder: the classic steps from a naive shared-memory
//! tree to warp shuffles, each a plain kernel that shows one technique.
//!
//! A rung is a pair: a [`load::LoadShape`] (what each thread reads) and a
//! [`tree::TreeShape`] (how the block combines). Rungs that differ only by a
//! constant share code through a parameter (`Strided<1>` vs `Strided<2>`,
//! `Vector<true>` vs `Vector<false>`); the block size is a launch parameter.
//! The list of rungs, with their kernel names, is in [`crate::abi`].
//!
//! Each launch writes one result per block to `out[block]`; the host combines
//! those by launching the same rung again over them until one value is left
//! (the seeds' "host iterates another launch"), so every rung is deterministic
//! and works for every operator.

pub mod dot;
pub mod load;
pub mod tree;

use crate::device::{self, block_idx_x, thread_idx_x};
use crate::element::Element;
use crate::op::Operator;
use load::LoadShape;
use tree::TreeShape;

/// One pass of a rung: block `b` writes the combination of its slice of
/// `input[0..len]` to `out[b]`.
///
/// # Safety
/// `input` points to `len` readable, element-aligned `T`s; `out` has a
/// writable slot per block; the dynamic shared memory and the block size
/// satisfy the load and tree shapes (the host sizes them from the rung table).
#[inline(always)]
pub unsafe fn rung<T: Element, O: Operator<T>, L: LoadShape, R: TreeShape>(input: *const T, len: u64, out: *mut T) {
    let value = L::load::<T, O>(device::to_global(input as u64), len);
    let total = R::combine::<T, O>(value);
    if thread_idx_x() == 0 {
        let slot = device::to_global(out as u64) + block_idx_x() as u64 * core::mem::size_of::<T>() as u64;
        crate::thread::store_element(slot, total);
    }
}
