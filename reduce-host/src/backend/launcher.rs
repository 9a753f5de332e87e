//! What the operations need of a backend ([`Launcher`]), and the
//! descriptions of a launch they hand it. Crate-internal: the public face of
//! a backend is [`super::Backend`].

use crate::error::Result;
use crate::shape::LaunchShape;
use crate::tuning::Tuning;
use cust::memory::DeviceCopy;
use cust::stream::Stream;
use kernels_gpu::abi::{Kernel, KernelArgs};
use kernels_gpu::dispatch::EntryArgs;

/// A caller's buffer that a launch reads or writes.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// What it is, for the emulator's fault messages.
    pub name: &'static str,
    /// Its address on the backend.
    pub address: u64,
    /// Its size.
    pub bytes: u64,
    /// Whether the kernel may write it.
    pub writable: bool,
}

impl Access {
    /// `len` elements of `T` at `address`, read only.
    pub fn read<T>(name: &'static str, address: u64, len: usize) -> Self {
        Access::of::<T>(name, address, len, false)
    }

    /// `len` elements of `T` at `address`, written.
    pub fn write<T>(name: &'static str, address: u64, len: usize) -> Self {
        Access::of::<T>(name, address, len, true)
    }

    fn of<T>(name: &'static str, address: u64, len: usize, writable: bool) -> Self {
        let bytes = (len as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        Access {
            name,
            address,
            bytes,
            writable,
        }
    }
}

/// One launch: a kernel, its grid, its typed arguments and the caller's
/// buffers it touches (the backend adds its own workspace).
#[derive(Clone, Copy, Debug)]
pub struct Launch<'a, A: KernelArgs> {
    pub kernel: Kernel,
    pub shape: LaunchShape,
    pub shared_bytes: u32,
    pub args: A,
    pub accesses: &'a [Access],
}

/// Device addresses of a stream's workspace (zero tickets between launches).
#[derive(Clone, Copy, Debug)]
pub struct Workspace {
    /// One `abi::PARTIAL_SLOT_BYTES` slot per block of the largest grid.
    pub partials: u64,
    /// The whole-input kernels' ticket: one `u32`.
    pub ticket: u64,
    /// The segmented kernels' tickets: one `u32` per block of the largest
    /// grid (at least four).
    pub segment_tickets: u64,
}

/// What the operations need of a backend. `stream` is a caller's stream,
/// or `None` for the backend's own (the emulator has only its own).
pub trait Launcher: Sized {
    /// The caller's view of `T`s on this backend: `DeviceSlice<T>` or `[T]`.
    type Slice<T: DeviceCopy>: ?Sized;
    /// A new buffer of `T`s: `DeviceBuffer<T>`, or a `HostBuffer<T>` on the emulator.
    type Buffer<T: DeviceCopy>;

    /// The address and length of `slice`.
    fn parts<T: DeviceCopy>(slice: &Self::Slice<T>) -> (u64, usize);
    /// `buffer` as a slice.
    fn as_slice_mut<T: DeviceCopy>(buffer: &mut Self::Buffer<T>) -> &mut Self::Slice<T>;
    /// A buffer of `len` `T`s whose contents the caller writes before reading.
    fn alloc<T: DeviceCopy>(&mut self, len: usize) -> Result<Self::Buffer<T>>;
    /// `slice`'s elements on the host (an error path: it synchronizes).
    fn to_host<T: DeviceCopy + Default>(&mut self, slice: &Self::Slice<T>) -> Result<Vec<T>>;

    /// The launch policy: the tuning row of the device, with the block
    /// size of the reducer's [`Policy`](crate::Policy).
    fn tuning(&self) -> Tuning;
    /// The largest useful grid of `kernel` with [`Launcher::block_threads`]
    /// threads per block; loads the kernel if needed.
    fn grid_cap(&mut self, kernel: Kernel) -> Result<u32>;
    /// `stream`'s workspace, allocated on first use.
    fn workspace(&mut self, stream: Option<&Stream>) -> Result<Workspace>;
    /// At least `words` 8-byte words of scratch for `stream`'s launches
    /// (the ladder's per-block results), grown on demand.
    fn scratch(&mut self, stream: Option<&Stream>, words: usize) -> Result<u64>;
    /// The backend's 16-byte result slot: where blocking calls have their
    /// kernel write, before [`Launcher::read_result_slot`].
    fn result_slot(&mut self) -> u64;
    /// Both words of the result slot, after the work on the own stream.
    fn read_result_slot(&mut self) -> Result<[u64; 2]>;
    /// Sets `count` 4-byte words at `address` to zero, on `stream`.
    ///
    /// # Safety
    /// `address` is 4-byte aligned, with `count` writable words (the
    /// result slot, or a buffer the caller lent for the launch).
    unsafe fn zero_words(&mut self, address: u64, count: usize, stream: Option<&Stream>) -> Result<()>;
    /// Launches `launch` on `stream`.
    ///
    /// # Safety
    /// `launch.args` are what `launch.kernel`'s family expects
    /// (`kernels-gpu/src/abi.rs`), every address in them is either in
    /// `launch.accesses` (with the size the kernel touches) or the
    /// backend's own workspace, scratch or result slot, and the shape and
    /// shared memory are what the kernel needs.
    unsafe fn launch<A: EntryArgs>(&mut self, launch: &Launch<'_, A>, stream: Option<&Stream>) -> Result<()>;
}
