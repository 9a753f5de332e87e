//! Thread-level accumulation: each thread folds its share of the input into
//! one value, reading 16-byte vectors wherever the input allows it.
//!
//! The input `[0, len)` is split into
//! - a *head* of fewer than one vector's worth of elements, up to the first
//!   16-byte boundary (a sub-slice can start anywhere);
//! - a *body* of whole 16-byte vectors, read in tiles of
//!   `block_dim * VECTORS_PER_THREAD` vectors, blocks taking tiles grid-stride,
//!   each thread issuing all its loads of a tile before its first combine;
//! - the body's last partial tile, one vector per thread, grid-stride;
//! - a *tail* of fewer than one vector's worth of elements.
//!
//! No element outside `[0, len)` is ever read; threads with nothing to read
//! contribute the identity. Which thread reads which element depends only on
//! `len`, the input's alignment and the launch shape, so results are
//! deterministic for a given input and launch.

use crate::abi::{VECTORS_PER_THREAD, VECTOR_BYTES};
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::element::Element;
use crate::op::Operator;
use core::mem::size_of;

/// Folds one 16-byte vector (4 or 2 elements) into `acc`.
#[inline(always)]
fn fold_vector<T: Element, O: Operator<T>>(acc: T, words: [u32; 4]) -> T {
    if T::WORDS == 1 {
        let pair_01 = O::combine(T::from_bits(words[0] as u64), T::from_bits(words[1] as u64));
        let pair_23 = O::combine(T::from_bits(words[2] as u64), T::from_bits(words[3] as u64));
        O::combine(acc, O::combine(pair_01, pair_23))
    } else {
        let first = T::from_bits(words[0] as u64 | (words[1] as u64) << 32);
        let second = T::from_bits(words[2] as u64 | (words[3] as u64) << 32);
        O::combine(acc, O::combine(first, second))
    }
}

/// One element through the read-only path.
///
/// # Safety
/// `address` is a global address of a readable, element-aligned `T`.
#[inline(always)]
unsafe fn load_element<T: Element>(address: u64) -> T {
    if T::WORDS == 1 {
        T::from_bits(device::load_global_nc_u32(address) as u64)
    } else {
        T::from_bits(device::load_global_nc_u64(address))
    }
}

/// This thread's fold of its share of `input[0..len]`.
///
/// # Safety
/// `input` is the global address of `len` readable elements of `T`, aligned to
/// `size_of::<T>()`, not written during the kernel.
#[inline(always)]
pub unsafe fn accumulate<T: Element, O: Operator<T>>(input: u64, len: u64) -> T {
    let element_bytes = size_of::<T>() as u64;
    let lanes = VECTOR_BYTES / element_bytes;

    let head = core::cmp::min(
        len,
        (VECTOR_BYTES - input % VECTOR_BYTES) % VECTOR_BYTES / element_bytes,
    );
    let vectors = (len - head) / lanes;
    let tail_start = head + vectors * lanes;
    let tail = len - tail_start;
    let body = input + head * element_bytes;

    let block_threads = block_dim_x() as u64;
    let grid_threads = block_threads * grid_dim_x() as u64;
    let thread_in_grid = block_idx_x() as u64 * block_threads + thread_idx_x() as u64;

    let mut acc = O::identity();

    let tile_vectors = block_threads * VECTORS_PER_THREAD;
    // `checked_div` keeps a panic path (and an unresolved extern) out of the PTX.
    let full_tiles = vectors.checked_div(tile_vectors).unwrap_or(0);
    let mut tile = block_idx_x() as u64;
    while tile < full_tiles {
        let first = tile * tile_vectors + thread_idx_x() as u64;
        let mut loaded = [[0u32; 4]; VECTORS_PER_THREAD as usize];
        let mut k = 0;
        while k < VECTORS_PER_THREAD as usize {
            loaded[k] = device::load_global_nc_v4(body + (first + k as u64 * block_threads) * VECTOR_BYTES);
            k += 1;
        }
        let mut k = 0;
        while k < VECTORS_PER_THREAD as usize {
            acc = fold_vector::<T, O>(acc, loaded[k]);
            k += 1;
        }
        tile += grid_dim_x() as u64;
    }

    let mut vector = full_tiles * tile_vectors + thread_in_grid;
    while vector < vectors {
        acc = fold_vector::<T, O>(acc, device::load_global_nc_v4(body + vector * VECTOR_BYTES));
        vector += grid_threads;
    }

    if thread_in_grid < head {
        acc = O::combine(acc, load_element::<T>(input + thread_in_grid * element_bytes));
    } else if thread_in_grid - head < tail {
        let index = tail_start + (thread_in_grid - head);
        acc = O::combine(acc, load_element::<T>(input + index * element_bytes));
    }
    acc
}
