//! Shared memory's storage: each shared array of a block ([`ShadowArray`]),
//! poisoned before every block, and who last read and wrote each of its
//! 4-byte words ([`WordHistory`]), which the race detector reads.

use std::alloc::{self, Layout};

/// A shared-memory array, 16-byte aligned.
pub(super) struct ShadowArray {
    pub(super) name: &'static str,
    pub(super) base: *mut u8,
    pub(super) bytes: usize,
    layout: Layout,
}

/// What shared memory holds before a block writes it.
const POISON: u8 = 0xA5;

/// Who last touched a 4-byte word of shared memory, and in which barrier
/// interval (the block's barrier generation).
#[derive(Clone, Copy, Debug)]
pub(super) struct WordHistory {
    pub(super) writer: u32,
    pub(super) written_in: u64,
    /// The one thread that read it in `read_in`, or [`SEVERAL_READERS`].
    pub(super) reader: u32,
    pub(super) read_in: u64,
}

pub(super) const NEVER: u64 = u64::MAX;
pub(super) const SEVERAL_READERS: u32 = u32::MAX;

impl WordHistory {
    pub(super) const UNTOUCHED: WordHistory = WordHistory {
        writer: 0,
        written_in: NEVER,
        reader: 0,
        read_in: NEVER,
    };
}

// SAFETY: the memory is only reached through raw pointers handed to kernel
// code, whose accesses the barriers order, and by the thread that resets it
// between blocks while every other thread waits.
unsafe impl Send for ShadowArray {}
unsafe impl Sync for ShadowArray {}

impl ShadowArray {
    pub(super) fn new(name: &'static str, bytes: usize) -> Self {
        let layout = Layout::from_size_align(bytes.max(16), 16).expect("shared array size fits a Layout");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc::alloc(layout) };
        if base.is_null() {
            alloc::handle_alloc_error(layout);
        }
        let array = ShadowArray {
            name,
            base,
            bytes,
            layout,
        };
        array.poison();
        array
    }

    /// The byte offset of `[address, address + bytes)` in this array, if inside it.
    pub(super) fn offset_of(&self, address: u64, bytes: u64) -> Option<u64> {
        let offset = address.checked_sub(self.base as u64)?;
        (offset + bytes <= self.bytes as u64).then_some(offset)
    }

    pub(super) fn poison(&self) {
        // SAFETY: writes within the allocation, while no kernel code runs.
        unsafe { self.base.write_bytes(POISON, self.layout.size()) }
    }
}

impl Drop for ShadowArray {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { alloc::dealloc(self.base, self.layout) }
    }
}
