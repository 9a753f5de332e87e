//! The emulator backend: the kernels' host build under the SIMT emulator
//! (`kernels_gpu::emulator`), over host memory. See [`crate::emulated`].

use super::launcher::StreamHandle;
use super::launcher::{partial_words, Launch, Launcher, Workspace, PARTIAL_SLOT_WORDS};
use crate::error::{CudaError, Error, Result};
use crate::policy::Policy;
use crate::tuning::{self, Tuning};
use crate::user::program::Program;
use cust_core::DeviceCopy;
use kernels_gpu::abi::Kernel;
use kernels_gpu::dispatch::{self, EntryArgs};
use kernels_gpu::emulator::{self, Buffer, LaunchConfig};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// What the emulator fills workspace, scratch, result slots and new buffers
/// with before a launch, so a kernel that reads one before writing it gives
/// a result a test notices.
const POISON_WORD: u64 = 0xA5A5_A5A5_A5A5_A5A5;

/// Kernels run on the CPU by the SIMT emulator (see [`crate::emulated`]).
/// A `Reducer<Emulated>` ([`Emulator`](crate::emulated::Emulator)) takes
/// `&[T]` slices and returns [`HostBuffer`]s.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::HostBuffer, Emulated, Op, Over, Reducer};
/// let mut reducer: Reducer<Emulated> = Reducer::default();
/// let sums: HostBuffer<f32> = reducer.reduce_over(&[1.0, 2.0, 3.0, 4.0], Op::Sum, Over::Rows { rows: 2, len: 2 })?.values;
/// assert_eq!(*sums, [3.0, 7.0]);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Emulated {
    policy: Policy,
    max_grid: u32,
    next_seed: u64,
    partials: Vec<u64>,
    ticket: Vec<u32>,
    /// `u64`s so that the balanced kernels' counter at its start is aligned.
    segment_tickets: Vec<u64>,
    scratch: Vec<u64>,
    /// [`Launcher::cast_scratch`].
    cast_scratch: Vec<u64>,
    /// Written, never read ([`Workspace::sink`]); a launch that writes it
    /// lists it among its accesses.
    sink: Vec<u64>,
    result: Vec<u64>,
    /// [`Launcher::set_user`]'s operator: its functions on the CPU.
    user: Option<Program>,
}

impl Emulated {
    /// Largest grid of the default shape: small, so modest inputs already
    /// take several grid-stride tiles per block.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, Emulated, Op};
    /// let shape = Emulator::default().launch_shape::<f32>(Op::Sum, 1 << 20)?;
    /// assert_eq!(shape.blocks, Emulated::DEFAULT_MAX_GRID); // however long the input
    /// # Ok(()) }
    /// ```
    pub const DEFAULT_MAX_GRID: u32 = 6;

    /// Blocks of `policy`'s threads, at most `max_grid` of them, the block
    /// order seeded from the clock.
    pub(crate) fn new(policy: Policy, max_grid: u32) -> Result<Self> {
        if max_grid == 0 {
            return Err(Error::InvalidPolicy("max_grid must be at least 1".to_string()));
        }
        let partials = partial_words(max_grid).ok_or_else(|| {
            Error::InvalidPolicy(format!(
                "max_grid {max_grid} is too large: its workspace overflows this host's usize"
            ))
        })?;
        let slots = max_grid as usize;
        Ok(Emulated {
            policy,
            max_grid,
            partials: vec![POISON_WORD; partials],
            segment_tickets: vec![0; slots.max(4).div_ceil(2)],
            ..Self::with_default_shape()
        })
    }

    /// The default shape: 64-thread blocks (two warps), at most
    /// [`Emulated::DEFAULT_MAX_GRID`] of them.
    pub(crate) fn with_default_shape() -> Self {
        let max_grid = Self::DEFAULT_MAX_GRID;
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let slots = max_grid as usize;
        Emulated {
            policy: Policy::EMULATOR_DEFAULT,
            max_grid,
            next_seed: clock,
            // A constant, so an overflow would not compile.
            partials: vec![POISON_WORD; const { Self::DEFAULT_MAX_GRID as usize * PARTIAL_SLOT_WORDS }],
            ticket: vec![0],
            segment_tickets: vec![0; slots.max(4).div_ceil(2)],
            scratch: Vec::new(),
            cast_scratch: Vec::new(),
            sink: vec![POISON_WORD; 2],
            result: vec![POISON_WORD; 2],
            user: None,
        }
    }

    /// Fixes the block order of the next launches (each launch takes the next
    /// seed of a sequence starting here).
    pub(crate) fn set_block_order_seed(&mut self, seed: u64) {
        self.next_seed = seed;
    }

    /// A broken kernel contract found after launch `seed` of `kernel`.
    fn contract_fault(kernel: &str, seed: u64, message: String) -> Error {
        Error::EmulatedFault {
            kernel: kernel.to_string(),
            block: 0,
            thread: 0,
            message,
            block_order_seed: seed,
        }
    }
}

/// A new buffer of the emulator backend: host memory whose first element is
/// at a 16-byte boundary or, every other allocation, one element past one
/// (kernels may store whole vectors only where the output is aligned, and
/// must store element by element elsewhere: both paths get exercised).
/// It dereferences to `[T]`, so it is also an input of further calls.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::{Emulator, HostBuffer}, Op, Over};
/// let mut emulator = Emulator::default();
/// let offsets = [0u64, 3, 5];
/// let minima: HostBuffer<u32> = emulator.reduce_over(&[4, 1, 7, 3, 9], Op::Min, Over::Segments(&offsets[..]))?.values;
/// assert_eq!(minima.to_vec(), [1, 3]);
/// assert_eq!(emulator.reduce(&minima, Op::Max)?, 3);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct HostBuffer<T> {
    storage: Vec<u128>,
    shift: usize,
    len: usize,
    element: PhantomData<T>,
}

impl<T: DeviceCopy> HostBuffer<T> {
    /// `len` poisoned `T`s, one element past a 16-byte boundary if
    /// `shifted` (never for an empty buffer: nothing to place, and the offset
    /// would leave the allocation). `None` if the bytes overflow `usize` or
    /// the memory cannot be had.
    fn poisoned(len: usize, shifted: bool) -> Option<Self> {
        let shift = if shifted && len > 0 {
            std::mem::size_of::<T>()
        } else {
            0
        };
        let bytes = len.checked_mul(std::mem::size_of::<T>())?.checked_add(shift)?;
        let words = bytes.div_ceil(16);
        let mut storage = Vec::new();
        storage.try_reserve_exact(words).ok()?;
        storage.resize(words, u128::from(POISON_WORD) << 64 | u128::from(POISON_WORD));
        Some(HostBuffer {
            storage,
            shift,
            len,
            element: PhantomData,
        })
    }
}

impl<T: DeviceCopy> Deref for HostBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` `T`s start `shift` bytes (0, or one element when
        // `len > 0`) into the 16-byte-aligned storage, which `poisoned` sized
        // to hold them (checked arithmetic); every bit pattern is a value of
        // the plain-data types the library reduces.
        unsafe {
            std::slice::from_raw_parts(
                (self.storage.as_ptr() as *const u8).add(self.shift) as *const T,
                self.len,
            )
        }
    }
}

impl<T: DeviceCopy> DerefMut for HostBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, uniquely borrowed.
        unsafe {
            std::slice::from_raw_parts_mut(
                (self.storage.as_mut_ptr() as *mut u8).add(self.shift) as *mut T,
                self.len,
            )
        }
    }
}

impl Launcher for Emulated {
    type Slice<T: DeviceCopy> = [T];
    type Buffer<T: DeviceCopy> = HostBuffer<T>;

    fn parts<T: DeviceCopy>(slice: &[T]) -> (u64, usize) {
        (slice.as_ptr() as u64, slice.len())
    }

    fn as_slice_mut<T: DeviceCopy>(buffer: &mut HostBuffer<T>) -> &mut [T] {
        buffer
    }

    fn alloc<T: DeviceCopy>(&mut self, len: usize) -> Result<HostBuffer<T>> {
        HostBuffer::poisoned(len, self.next_seed % 2 == 1).ok_or_else(|| {
            Error::InvalidSegments(format!(
                "{len} results of {} bytes do not fit in the host's memory",
                std::mem::size_of::<T>()
            ))
        })
    }

    fn to_host<T: DeviceCopy + Default>(&mut self, slice: &[T]) -> Result<Vec<T>> {
        Ok(slice.to_vec())
    }

    fn element_to_host<T: DeviceCopy + Default>(&mut self, slice: &[T], index: u64) -> Result<T> {
        usize::try_from(index)
            .ok()
            .and_then(|index| slice.get(index).copied())
            .ok_or_else(|| Error::internal(format_args!("element {index} of {} read back", slice.len())))
    }

    fn set_user(&mut self, program: Option<Program>) {
        self.user = program;
    }

    fn l2_bytes(&self) -> u64 {
        // An H100's, whose tuning row the emulator takes; results do not
        // depend on it, only where a pass writes them.
        50 << 20
    }

    fn tuning(&self) -> Tuning {
        Tuning {
            block_threads: self.policy.block_threads(),
            ..tuning::HOPPER
        }
    }

    fn grid_cap(&mut self, kernel: Kernel) -> Result<u32> {
        dispatch::entry(kernel).ok_or(Error::missing_kernel(kernel))?;
        Ok(self.max_grid)
    }

    fn axis_block(&mut self, kernel: Kernel) -> Result<(u32, u32)> {
        Ok((self.policy.block_threads(), self.grid_cap(kernel)?))
    }

    fn workspace(&mut self, _stream: Option<StreamHandle>) -> Result<Workspace> {
        Ok(Workspace {
            partials: self.partials.as_ptr() as u64,
            ticket: self.ticket.as_ptr() as u64,
            segment_tickets: self.segment_tickets.as_ptr() as u64,
            sink: self.sink.as_ptr() as u64,
        })
    }

    fn scratch(&mut self, _stream: Option<StreamHandle>, words: usize) -> Result<u64> {
        poisoned_words(&mut self.scratch, words)
    }

    fn cast_scratch(&mut self, _stream: Option<StreamHandle>, words: usize) -> Result<u64> {
        poisoned_words(&mut self.cast_scratch, words)
    }

    fn result_slot(&mut self) -> u64 {
        self.result.fill(POISON_WORD);
        self.result.as_ptr() as u64
    }

    fn read_result_slot(&mut self) -> Result<[u64; 2]> {
        match self.result[..] {
            [first, second] => Ok([first, second]),
            _ => Err(Error::InvalidPolicy(
                "the emulator's result slot is two words".to_string(),
            )),
        }
    }

    unsafe fn zero_words(&mut self, address: u64, count: usize, _stream: Option<StreamHandle>) -> Result<()> {
        // SAFETY: `count` writable, aligned 4-byte words at `address`, as the caller promises.
        unsafe { std::ptr::write_bytes(address as *mut u32, 0, count) };
        Ok(())
    }

    unsafe fn submit<A: EntryArgs>(&mut self, launch: &Launch<'_, A>, _stream: Option<StreamHandle>) -> Result<()> {
        // As the GPU backend: the argument struct must be the kernel's.
        if !A::fits(launch.kernel) {
            return Err(Error::missing_kernel(launch.kernel));
        }
        let (name, entry) = dispatch::entry(launch.kernel).ok_or(Error::missing_kernel(launch.kernel))?;
        let function = A::entry(entry).ok_or(Error::missing_kernel(launch.kernel))?;
        let blocks = launch.shape.blocks;
        self.partials.fill(POISON_WORD);
        // Past `usize` (never on a 64-bit host): all of them, as for any grid
        // above `max_grid`, since `writable` stops at the buffer's end.
        let partial_words = partial_words(blocks).unwrap_or(usize::MAX);
        let workspace = [
            writable("partials", &self.partials, partial_words),
            writable("ticket", &self.ticket, 1),
            writable("tickets", &self.segment_tickets, (blocks as usize).max(4).div_ceil(2)),
            writable("scratch", &self.scratch, self.scratch.len()),
            writable("cast scratch", &self.cast_scratch, self.cast_scratch.len()),
        ];
        let buffers: Vec<Buffer> = launch
            .accesses
            .iter()
            .map(|a| Buffer {
                name: a.name,
                address: a.address,
                bytes: a.bytes,
                writable: a.writable,
            })
            .chain(workspace)
            .collect();
        let seed = self.next_seed;
        self.next_seed = self.next_seed.wrapping_add(1);
        let config = LaunchConfig {
            kernel: name,
            grid_blocks: blocks,
            block_threads: launch.shape.threads_per_block,
            dynamic_shared_bytes: launch.shared_bytes,
            block_order_seed: seed,
            buffers: &buffers,
        };
        let args = launch.args;
        let user = self.user.as_ref().map(|program| program.functions.clone());
        // SAFETY: the caller promises that `args` fit the kernel and address
        // only the buffers registered here, which the emulator checks.
        let run = || unsafe { function(args) };
        // Each emulated thread calls the user operator's functions, if any.
        let kernel = || match &user {
            Some(functions) => kernels_gpu::device::with_user_functions(functions.clone(), run),
            None => run(),
        };
        emulator::launch(&config, &kernel).map_err(|fault| Error::EmulatedFault {
            kernel: fault.kernel,
            block: fault.block,
            thread: fault.thread,
            message: fault.message,
            block_order_seed: seed,
        })?;
        if let Some(ticket) = self.ticket.iter().find(|&&t| t != 0) {
            let message = format!("the launch left the ticket at {ticket}, not 0");
            return Err(Self::contract_fault(name, seed, message));
        }
        if let Some(word) = self.segment_tickets.iter().position(|&t| t != 0) {
            let message = format!("the launch left the segment tickets' word {word} nonzero");
            return Err(Self::contract_fault(name, seed, message));
        }
        Ok(())
    }
}

/// The first `len` elements of `buffer` (all of it, if it is shorter) as a
/// writable buffer of the launch.
fn writable<T>(name: &'static str, buffer: &[T], len: usize) -> Buffer {
    let elements = buffer.get(..len).unwrap_or(buffer);
    Buffer {
        name,
        address: elements.as_ptr() as u64,
        bytes: std::mem::size_of_val(elements) as u64,
        writable: true,
    }
}

/// `storage` as `words` (at least one) poisoned words, and its address; out
/// of memory as the GPU says it, where the host cannot have them (a
/// scratch as large as a broadcast view's elements, say).
fn poisoned_words(storage: &mut Vec<u64>, words: usize) -> Result<u64> {
    storage.clear();
    let words = words.max(1);
    storage
        .try_reserve_exact(words)
        .map_err(|_| Error::Cuda(CudaError::OutOfMemory))?;
    storage.resize(words, POISON_WORD);
    Ok(storage.as_ptr() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_the_host_cannot_have_is_out_of_memory() {
        let mut storage = vec![1u64; 3];
        let huge = poisoned_words(&mut storage, usize::MAX);
        assert!(matches!(huge, Err(Error::Cuda(CudaError::OutOfMemory))), "{huge:?}");
        let address = poisoned_words(&mut storage, 0).unwrap();
        assert_eq!(
            (address, storage.as_slice()),
            (storage.as_ptr() as u64, &[POISON_WORD][..])
        );
    }
}
