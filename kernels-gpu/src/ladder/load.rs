//! What each thread of a ladder rung reads before the block combines: one
//! value per thread, made from its share of the block's slice of the input.
//! Out-of-range elements contribute the operator's identity; nothing outside
//! `[0, len)` is read.

use crate::abi::VECTOR_BYTES;
use crate::device::{self, block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::element::Element;
use crate::op::Operator;
use crate::thread::load_element;
use core::mem::size_of;

/// How a rung's threads read the input. (The host sizes the grid and the
/// dynamic shared memory for each rung: reduce-host's `ladder.rs`.)
pub trait LoadShape {
    /// This thread's value. A shape that uses the dynamic shared array returns
    /// with every thread past a barrier, so the caller may reuse the array.
    ///
    /// # Safety
    /// `input` is the global address of `len` readable, element-aligned `T`s;
    /// the dynamic shared array is as large as the host's rung table says.
    /// Every thread of the block calls it together.
    unsafe fn load<T: Element, O: Operator<T>>(input: u64, len: u64) -> T;
}

/// One element (or the identity) at `input[index]`.
#[inline(always)]
pub(crate) unsafe fn element_or_identity<T: Element, O: Operator<T>>(input: u64, len: u64, index: u64) -> T {
    if index >= len {
        return O::identity();
    }
    load_element::<T>(input + index * size_of::<T>() as u64)
}

/// `ELEMENTS` elements per thread, `block_dim` apart (coalesced), combined in
/// registers as they arrive: rungs 1–3 read one (`ELEMENTS = 1`); rung 4,
/// "first add during load", reads two and halves the number of blocks.
pub struct Strided<const ELEMENTS: u64>;

impl<const ELEMENTS: u64> LoadShape for Strided<ELEMENTS> {
    #[inline(always)]
    unsafe fn load<T: Element, O: Operator<T>>(input: u64, len: u64) -> T {
        let block_threads = block_dim_x() as u64;
        let first = block_idx_x() as u64 * block_threads * ELEMENTS + thread_idx_x() as u64;
        let mut value = element_or_identity::<T, O>(input, len, first);
        let mut k = 1;
        while k < ELEMENTS {
            value = O::combine(
                value,
                element_or_identity::<T, O>(input, len, first + k * block_threads),
            );
            k += 1;
        }
        value
    }
}

/// One 16-byte vector per thread. With `THROUGH_SHARED` (rung 5) the vector
/// goes to shared memory as the seed wrote it (`4 × block_dim` values, so 4×
/// the shared memory and lower occupancy) and each thread then folds its 4
/// values from there; without it (rungs 6 and 7) the lanes are folded in
/// registers and no shared memory is needed for the load.
///
/// Vectors are the 16-byte-aligned groups of the address range, so an input at
/// any address works: a group that is only partly inside `[0, len)` (at most
/// the first and the last) is read element by element.
pub struct Vector<const THROUGH_SHARED: bool>;

impl<const THROUGH_SHARED: bool> LoadShape for Vector<THROUGH_SHARED> {
    #[inline(always)]
    unsafe fn load<T: Element, O: Operator<T>>(input: u64, len: u64) -> T {
        let element_bytes = size_of::<T>() as u64;
        let lanes = VECTOR_BYTES / element_bytes;
        // Elements of the first group that lie before `input`.
        let skipped = input % VECTOR_BYTES / element_bytes;
        let group = device::index_1d();
        // Group `g` holds elements `[g * lanes - skipped, (g + 1) * lanes - skipped)`.
        let first = (group * lanes).wrapping_sub(skipped);
        let whole = group * lanes >= skipped && first + lanes <= len;

        let mut values = [O::identity(); 4];
        if whole {
            let words = device::load_global_nc_v4(input - skipped * element_bytes + group * VECTOR_BYTES);
            let mut k = 0;
            while k < lanes as usize {
                values[k] = T::vector_lane(words, k);
                k += 1;
            }
        } else {
            let mut k = 0;
            while k < lanes as usize {
                let index = (group * lanes + k as u64).wrapping_sub(skipped);
                if group * lanes + k as u64 >= skipped {
                    values[k] = element_or_identity::<T, O>(input, len, index);
                }
                k += 1;
            }
        }

        if THROUGH_SHARED {
            let shared = device::dynamic_shared() as *mut T;
            let mine = shared.add(thread_idx_x() as usize * lanes as usize);
            let mut k = 0;
            while k < lanes as usize {
                device::store_shared(mine.add(k), values[k]);
                k += 1;
            }
            sync_threads();
            let mut k = 0;
            while k < lanes as usize {
                values[k] = device::load_shared(mine.add(k));
                k += 1;
            }
            // The tree may overwrite this array next: wait until all have read.
            sync_threads();
        }
        let mut value = values[0];
        let mut k = 1;
        while k < lanes as usize {
            value = O::combine(value, values[k]);
            k += 1;
        }
        value
    }
}
