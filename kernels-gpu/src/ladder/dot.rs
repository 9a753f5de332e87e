//! Seed 004's dot product, twice: one atomic add per element, and a block
//! tree with one atomic add per block. Both add into `out`, which the host
//! zeroes before the launch; float results depend on the order the atomics
//! land in, so they are not deterministic.

use super::load::element_or_identity;
use super::tree::{Sequential, TreeShape};
use crate::device::{self, thread_idx_x};
use crate::element::Element;
use crate::op::Sum;

/// Element types with a global atomic add.
pub trait AtomicAdd: Element {
    /// `*address += value`, atomically, result discarded.
    ///
    /// # Safety
    /// `address` is an aligned, writable global address of a `Self`.
    unsafe fn atomic_add(address: u64, value: Self);
}

impl AtomicAdd for f32 {
    #[inline(always)]
    unsafe fn atomic_add(address: u64, value: Self) {
        device::red_add_f32(address, value)
    }
}

impl AtomicAdd for i32 {
    #[inline(always)]
    unsafe fn atomic_add(address: u64, value: Self) {
        device::red_add_u32(address, value as u32)
    }
}

/// `a[i] * b[i]` for this thread's `i` (one element per thread), or 0.
#[inline(always)]
unsafe fn product<T: AtomicAdd>(a: *const T, b: *const T, len: u64) -> T {
    let i = device::index_1d();
    let a = element_or_identity::<T, Sum>(device::to_global(a as u64), len, i);
    let b = element_or_identity::<T, Sum>(device::to_global(b as u64), len, i);
    a.mul(b)
}

/// Every thread adds its product straight into `out`: `len` atomics on one
/// address, serialized by the memory system.
///
/// # Safety
/// `a` and `b` point to `len` readable `T`s; `out` is a writable, zeroed `T`.
#[inline(always)]
pub unsafe fn atomic_per_element<T: AtomicAdd>(a: *const T, b: *const T, len: u64, out: *mut T) {
    let i = device::index_1d();
    if i < len {
        T::atomic_add(device::to_global(out as u64), product(a, b, len));
    }
}

/// Products into shared memory, a sequential-addressing tree, and one atomic
/// add per block.
///
/// # Safety
/// As [`atomic_per_element`]; the block size is a power of two and the dynamic
/// shared memory holds `block_dim` `T`s.
#[inline(always)]
pub unsafe fn block_tree<T: AtomicAdd>(a: *const T, b: *const T, len: u64, out: *mut T) {
    let total = Sequential::combine::<T, Sum>(product(a, b, len));
    if thread_idx_x() == 0 {
        T::atomic_add(device::to_global(out as u64), total);
    }
}
