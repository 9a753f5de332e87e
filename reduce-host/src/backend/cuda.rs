//! The cust backend ([`Cuda`]): the GPU backend ([`Gpu`]) over cust's
//! `DeviceSlice`s and `DeviceBuffer`s, with a cust stream of its own.

use super::gpu::Gpu;
use super::launcher::{Launch, Launcher, StreamHandle, Workspace};
use crate::error::{Error, Result};
use crate::policy::Policy;
use crate::tuning::Tuning;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceSlice};
use cust::stream::{Stream, StreamFlags};
use cust_core::DeviceCopy;
use kernels_gpu::abi::Kernel;
use kernels_gpu::dispatch::EntryArgs;
use std::mem::ManuallyDrop;

/// Kernels run on the GPU of the context that was current when the backend
/// was created (see [`Reducer::new`](crate::Reducer::new)). The default
/// backend (feature `cust`): `Reducer` is `Reducer<Cuda>`, over `cust`'s
/// `DeviceSlice`s, and its calls over segments, rows or axes return
/// `DeviceBuffer`s.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::memory::DeviceBuffer;
/// let _ctx = cust::quick_init()?;
/// let mut reducer: reduce::Reducer<reduce::Cuda> = reduce::Reducer::new()?;
/// let (values, offsets) = (DeviceBuffer::from_slice(&[4.0f32, 1.0, 7.0])?, DeviceBuffer::from_slice(&[0u64, 2, 3])?);
/// let maxima = reducer.reduce_over(&values, reduce::Op::Max, reduce::Over::Segments(&offsets))?;
/// let maxima: DeviceBuffer<f32> = maxima.values;
/// assert_eq!(maxima.as_host_vec()?, [4.0, 7.0]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Cuda {
    /// Dropped before the stream it runs on, while their context lives
    /// (see `Drop`).
    pub(crate) gpu: ManuallyDrop<Gpu>,
    stream: ManuallyDrop<Stream>,
}

impl Cuda {
    /// A backend for the current context's device, with `policy` or the
    /// tuned one for the device.
    pub(crate) fn new(policy: Option<Policy>) -> Result<Self> {
        super::driver::current_context()?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
        // SAFETY: the stream is of the current context, and `Cuda`'s `Drop`
        // drops it after the `Gpu` (or leaks both, once the context is gone).
        let gpu = unsafe { Gpu::new(policy, stream.as_inner().cast())? };
        Ok(Cuda {
            gpu: ManuallyDrop::new(gpu),
            stream: ManuallyDrop::new(stream),
        })
    }

    /// The stream the blocking calls run on.
    pub(crate) fn stream(&self) -> &Stream {
        &self.stream
    }
}

impl Drop for Cuda {
    fn drop(&mut self) {
        if !self.gpu.is_alive() {
            // The context was destroyed first (cust lets a `Reducer` outlive
            // its `Context`): the handles and addresses name nothing now, or
            // objects of a context made since; freeing them could free
            // another buffer. Their host side is leaked instead. (A context
            // destroyed by another thread after this check is not caught:
            // cust gives no way to hold it alive.)
            return;
        }
        // A blocking call that failed between launches may have left work on
        // the own stream, which must not outlive the workspace and modules
        // freed next. A failed wait means the context is broken: nothing of
        // it is left running either way.
        let _ = self.stream.synchronize();
        // SAFETY: each is dropped once, here, and not used after; the
        // backend before the stream its work runs on.
        unsafe {
            ManuallyDrop::drop(&mut self.gpu);
            ManuallyDrop::drop(&mut self.stream);
        }
    }
}

impl Launcher for Cuda {
    type Slice<T: DeviceCopy> = DeviceSlice<T>;
    type Buffer<T: DeviceCopy> = DeviceBuffer<T>;

    fn parts<T: DeviceCopy>(slice: &DeviceSlice<T>) -> (u64, usize) {
        (slice.as_device_ptr().as_raw(), slice.len())
    }

    fn as_slice_mut<T: DeviceCopy>(buffer: &mut DeviceBuffer<T>) -> &mut DeviceSlice<T> {
        buffer
    }

    fn alloc<T: DeviceCopy>(&mut self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: the caller writes every element before reading it (each
        // segment's team writes its result), or drops the buffer.
        Ok(unsafe { DeviceBuffer::uninitialized(len)? })
    }

    fn to_host<T: DeviceCopy + Default>(&mut self, slice: &DeviceSlice<T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); slice.len()];
        slice.copy_to(&mut host[..])?;
        Ok(host)
    }

    fn element_to_host<T: DeviceCopy + Default>(&mut self, slice: &DeviceSlice<T>, index: u64) -> Result<T> {
        let index = usize::try_from(index)
            .ok()
            .filter(|&index| index < slice.len())
            .ok_or_else(|| Error::internal(format_args!("element {index} of {} read back", slice.len())))?;
        let mut element = [T::default()];
        slice.index(index).copy_to(&mut element[..])?;
        let [element] = element;
        Ok(element)
    }

    fn tuning(&self) -> Tuning {
        self.gpu.tuning()
    }

    fn l2_bytes(&self) -> u64 {
        self.gpu.l2_bytes()
    }

    fn set_user(&mut self, program: Option<crate::user::program::Program>) {
        self.gpu.set_user(program)
    }

    fn grid_cap(&mut self, kernel: Kernel) -> Result<u32> {
        self.gpu.grid_cap(kernel)
    }

    fn axis_block(&mut self, kernel: Kernel) -> Result<(u32, u32)> {
        self.gpu.axis_block(kernel)
    }

    fn workspace(&mut self, stream: Option<StreamHandle>) -> Result<Workspace> {
        self.gpu.workspace(stream)
    }

    fn scratch(&mut self, stream: Option<StreamHandle>, words: usize) -> Result<u64> {
        self.gpu.scratch(stream, words)
    }

    fn cast_scratch(&mut self, stream: Option<StreamHandle>, words: usize) -> Result<u64> {
        self.gpu.cast_scratch(stream, words)
    }

    fn result_slot(&mut self) -> u64 {
        self.gpu.result_slot()
    }

    fn read_result_slot(&mut self) -> Result<[u64; 2]> {
        self.gpu.read_result_slot()
    }

    unsafe fn zero_words(&mut self, address: u64, count: usize, stream: Option<StreamHandle>) -> Result<()> {
        // SAFETY: the caller's promise.
        unsafe { self.gpu.zero_words(address, count, stream) }
    }

    unsafe fn submit<A: EntryArgs>(&mut self, launch: &Launch<'_, A>, stream: Option<StreamHandle>) -> Result<()> {
        // SAFETY: the caller's promise.
        unsafe { self.gpu.submit(launch, stream) }
    }
}
