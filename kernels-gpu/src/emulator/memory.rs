//! Memory as kernel code reaches it: every global access checked against
//! the launch's buffers ([`check_access`]), the block's shared arrays
//! ([`shared_array`]), and every shared access checked against them and
//! against the other threads' accesses since the last barrier
//! ([`check_shared`], the race detector).

use super::interface::Access;
use super::launch::{current, CURRENT};
use super::shadow::{NEVER, SEVERAL_READERS};
use std::panic::Location;

/// How a shared-memory access touches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedAccess {
    Read,
    Write,
}

/// The shared arrays of the device module.
#[derive(Clone, Copy, Debug)]
pub enum SharedArray {
    /// 32 slots of `abi::PARTIAL_SLOT_BYTES`, one per warp.
    WarpSlots,
    /// One 8-byte word.
    BlockWord,
    /// The dynamic shared array, sized at launch.
    Dynamic,
}

/// Checks a global access of `bytes` bytes at `address` (faulting the launch
/// if it is outside every buffer, misaligned, or not allowed there).
#[track_caller]
pub(crate) fn check_access(address: u64, bytes: u64, access: Access) {
    let problem = CURRENT.with(|current| {
        let current = current.borrow();
        let Some(current) = &*current else {
            panic!("a device function was called outside an emulated kernel launch");
        };
        let buffers = &current.launch.buffers;
        if !address.is_multiple_of(bytes) {
            return Some(format!("misaligned {bytes}-byte access at {address:#x}"));
        }
        let inside = buffers
            .iter()
            .find(|b| address >= b.address && address - b.address + bytes <= b.bytes);
        match (inside, access) {
            (None, _) => {
                let list: Vec<String> = buffers
                    .iter()
                    .map(|b| format!("{} [{:#x}, {:#x})", b.name, b.address, b.address + b.bytes))
                    .collect();
                Some(format!(
                    "{bytes}-byte {access:?} at {address:#x} is outside every buffer of the launch: {}",
                    list.join(", ")
                ))
            }
            (Some(buffer), Access::Store | Access::Atomic) if !buffer.writable => Some(format!(
                "{access:?} to the read-only buffer {} at {address:#x}",
                buffer.name
            )),
            (Some(buffer), Access::NonCoherentLoad) if buffer.writable => Some(format!(
                "non-coherent load from {} at {address:#x}, a buffer this launch writes (it may read stale data)",
                buffer.name
            )),
            _ => None,
        }
    });
    if let Some(problem) = problem {
        let (ids, launch) = current();
        let state = launch.lock();
        launch.fault_in(state, ids, format!("{problem} (at {})", Location::caller()));
    }
}

/// The calling block's shared array `array`.
pub(crate) fn shared_array(array: SharedArray) -> *mut u8 {
    CURRENT.with(|current| match &*current.borrow() {
        Some(current) => current.launch.shared[array as usize].base,
        None => panic!("a device function was called outside an emulated kernel launch"),
    })
}

/// Checks a shared-memory access of `bytes` bytes at `address` (faulting the
/// launch if it is outside every shared array, misaligned, reads memory no
/// thread has written, or races with another thread's access since the last
/// barrier), and records it.
#[track_caller]
pub(crate) fn check_shared(address: u64, bytes: u64, access: SharedAccess) {
    let site = Location::caller();
    let (ids, launch) = current();
    let mut state = launch.lock();
    let found = launch
        .shared
        .iter()
        .enumerate()
        .find_map(|(index, array)| array.offset_of(address, bytes).map(|offset| (index, offset)));
    let Some((index, offset)) = found else {
        let list: Vec<String> = launch
            .shared
            .iter()
            .map(|a| {
                format!(
                    "{} [{:#x}, {:#x})",
                    a.name,
                    a.base as u64,
                    a.base as u64 + a.bytes as u64
                )
            })
            .collect();
        let message = format!(
            "{bytes}-byte shared {access:?} at {address:#x} is outside every shared array: {} (at {site})",
            list.join(", ")
        );
        launch.fault_in(state, ids, message);
    };
    if !address.is_multiple_of(bytes) {
        launch.fault_in(
            state,
            ids,
            format!("misaligned {bytes}-byte shared {access:?} at {address:#x} (at {site})"),
        );
    }
    let name = launch.shared[index].name;
    let (epoch, thread) = (state.barrier_generation, ids.thread);
    for word in offset / 4..(offset + bytes).div_ceil(4) {
        let history = state.shared_history[index][word as usize];
        let race = match access {
            SharedAccess::Read if history.written_in == NEVER => Some(format!(
                "reads byte {} of the {name}, which no thread of this block has written",
                4 * word
            )),
            SharedAccess::Read | SharedAccess::Write if history.written_in == epoch && history.writer != thread => {
                Some(format!(
                    "{access:?} of byte {} of the {name}, which thread {} wrote with no barrier in between",
                    4 * word,
                    history.writer
                ))
            }
            SharedAccess::Write if history.read_in == epoch && history.reader != thread => Some(format!(
                "writes byte {} of the {name}, which {} read with no barrier in between",
                4 * word,
                match history.reader {
                    SEVERAL_READERS => "other threads".to_string(),
                    reader => format!("thread {reader}"),
                }
            )),
            _ => None,
        };
        if let Some(race) = race {
            launch.fault_in(state, ids, format!("shared-memory race: {race} (at {site})"));
        }
        let history = &mut state.shared_history[index][word as usize];
        match access {
            SharedAccess::Read if history.read_in == epoch && history.reader != thread => {
                history.reader = SEVERAL_READERS
            }
            SharedAccess::Read if history.read_in != epoch => (history.reader, history.read_in) = (thread, epoch),
            SharedAccess::Read => {}
            SharedAccess::Write => (history.writer, history.written_in) = (thread, epoch),
        }
    }
}
