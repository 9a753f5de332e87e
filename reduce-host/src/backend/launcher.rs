//! What the operations need of a backend ([`Launcher`]), and the
//! descriptions of a launch they hand it. Crate-internal: the public face of
//! a backend is [`super::Backend`].

use crate::error::{Error, Result};
use crate::shape::LaunchShape;
use crate::tuning::Tuning;
use crate::user::program::Program;
use cust_core::DeviceCopy;
use kernels_gpu::abi::{Kernel, KernelArgs, PARTIAL_SLOT_BYTES};
use kernels_gpu::dispatch::EntryArgs;

/// `u64`s per partial slot: a workspace holds one slot per block.
pub(crate) const PARTIAL_SLOT_WORDS: usize = (PARTIAL_SLOT_BYTES / 8) as usize;

/// `u64` words of partial slots for a grid of `blocks` blocks; `None` where
/// they overflow `usize` (never on a 64-bit host).
pub(crate) fn partial_words(blocks: u32) -> Option<usize> {
    usize::try_from(blocks).ok()?.checked_mul(PARTIAL_SLOT_WORDS)
}

/// The address of element `index` of the `T`s at `base`; `None` past
/// `u64::MAX` (which no element of a real buffer is).
pub(crate) fn element_address<T>(base: u64, index: usize) -> Option<u64> {
    let offset = index.checked_mul(std::mem::size_of::<T>())?;
    base.checked_add(u64::try_from(offset).ok()?)
}

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

impl Access {
    /// Whether the two byte ranges share a byte.
    fn overlaps(&self, other: &Access) -> bool {
        let end = |a: &Access| a.address.saturating_add(a.bytes);
        self.bytes > 0 && other.bytes > 0 && self.address < end(other) && other.address < end(self)
    }
}

/// [`Error::Aliasing`] if a buffer that `accesses` writes shares a byte with
/// another buffer of the same launch (an input, or another output): the
/// kernels read their inputs while writing their outputs and assume no
/// overlap. Safe code cannot make such a pair (an output is borrowed
/// mutably); raw-pointer-built slices can.
pub fn check_aliasing(accesses: &[Access]) -> Result<()> {
    for (index, written) in accesses.iter().enumerate().filter(|(_, a)| a.writable) {
        for (other_index, other) in accesses.iter().enumerate() {
            if other_index != index && written.overlaps(other) {
                return Err(Error::Aliasing {
                    output: written.name,
                    other: other.name,
                });
            }
        }
    }
    Ok(())
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

/// A caller's stream, by its driver handle: a cust `Stream`'s, a cudarc
/// `CudaStream`'s or another runtime's (the operations pass `None` for the
/// backend's own stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamHandle(pub cudarc::driver::sys::CUstream);

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
    /// 16 bytes that launches may write and nothing reads: the value of a
    /// whole-input argmax whose caller asked for the index only.
    pub sink: u64,
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
    /// Element `index` of `slice` on the host (it synchronizes);
    /// [`Error::Cuda`] (`InvalidValue`) if `index` is out of bounds.
    fn element_to_host<T: DeviceCopy + Default>(&mut self, slice: &Self::Slice<T>, index: u64) -> Result<T>;

    /// The launch policy: the tuning row of the device, with the block
    /// size of the reducer's [`Policy`](crate::Policy).
    fn tuning(&self) -> Tuning;
    /// Bytes of the device's L2 cache.
    fn l2_bytes(&self) -> u64;
    /// The largest useful grid of `kernel` with [`Launcher::block_threads`]
    /// threads per block; loads the kernel if needed.
    fn grid_cap(&mut self, kernel: Kernel) -> Result<u32>;
    /// The threads per block and the grid cap of an axis launch of
    /// `kernel` (a kernel that takes any power-of-two block): the tuning
    /// row's block, or half or a quarter of it where that keeps over 4/3 as
    /// many threads resident per SM (a kernel whose registers leave room
    /// for one block of the tuning row's size, or for none: ptxas gave
    /// logsumexp of `f64` 156 registers, more than 512 threads may have);
    /// loads the kernel if needed.
    fn axis_block(&mut self, kernel: Kernel) -> Result<(u32, u32)>;
    /// `stream`'s workspace, allocated on first use.
    fn workspace(&mut self, stream: Option<StreamHandle>) -> Result<Workspace>;
    /// At least `words` 8-byte words of scratch for `stream`'s launches
    /// (the ladder's per-block results), grown on demand.
    fn scratch(&mut self, stream: Option<StreamHandle>, words: usize) -> Result<u64>;
    /// At least `words` 8-byte words for `stream`'s launches apart from
    /// [`Launcher::scratch`] (which the reductions' own passes use): where a
    /// cast reduction's results wait, in the type it computes them in, for
    /// their conversion ([`crate::Cast`]). Grown on demand; its address may
    /// change at each call.
    fn cast_scratch(&mut self, stream: Option<StreamHandle>, words: usize) -> Result<u64>;
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
    unsafe fn zero_words(&mut self, address: u64, count: usize, stream: Option<StreamHandle>) -> Result<()>;
    /// The user operator whose functions the `Op::User` kernels launched
    /// from now on call (`None`: no launch of them until one is set).
    fn set_user(&mut self, program: Option<Program>);
    /// Launches `launch` on `stream` (after [`Launcher::launch`]'s checks).
    ///
    /// # Safety
    /// As [`Launcher::launch`], and no buffer `launch.accesses` writes
    /// overlaps another of them.
    unsafe fn submit<A: EntryArgs>(&mut self, launch: &Launch<'_, A>, stream: Option<StreamHandle>) -> Result<()>;

    /// Launches `launch` on `stream`: [`Error::Aliasing`] if an output
    /// overlaps another buffer of the launch, else the backend's own checks
    /// (the CUDA backend's: every buffer is in this context's memory) and the
    /// launch.
    ///
    /// # Safety
    /// `launch.args` are what `launch.kernel`'s family expects
    /// (`kernels-gpu/src/abi/`), every address in them is either in
    /// `launch.accesses` (with the size the kernel touches) or the
    /// backend's own workspace, scratch or result slot, and the shape and
    /// shared memory are what the kernel needs.
    unsafe fn launch<A: EntryArgs>(&mut self, launch: &Launch<'_, A>, stream: Option<StreamHandle>) -> Result<()> {
        check_aliasing(launch.accesses)?;
        // SAFETY: the caller's promise, and no output overlaps (checked above).
        unsafe { self.submit(launch, stream) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_may_not_overlap_any_other_buffer() {
        let input = Access::read::<u32>("input", 1000, 10); // bytes 1000..1040
        let out = |address| Access::write::<u32>("out", address, 1);
        assert!(check_aliasing(&[input, out(1040)]).is_ok(), "just past the end");
        assert!(check_aliasing(&[input, out(996)]).is_ok(), "just before the start");
        assert!(
            check_aliasing(&[input, Access::read::<u32>("b", 1000, 10)]).is_ok(),
            "inputs may share"
        );
        assert!(
            check_aliasing(&[input, Access::write::<u8>("out", 1040, 0)]).is_ok(),
            "empty"
        );
        for address in [997, 1000, 1036, 1039] {
            assert!(
                matches!(
                    check_aliasing(&[input, out(address)]),
                    Err(Error::Aliasing {
                        output: "out",
                        other: "input"
                    })
                ),
                "{address}"
            );
        }
        let outputs = [
            Access::write::<u64>("value", 64, 1),
            Access::write::<u64>("index", 64, 1),
        ];
        assert!(matches!(check_aliasing(&outputs), Err(Error::Aliasing { .. })));
    }
}
