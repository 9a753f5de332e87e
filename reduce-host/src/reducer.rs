//! [`Reducer`]: a loaded module, a stream and per-stream workspaces, reused across calls.

use crate::abi::PARTIAL_SLOT_BYTES;
use crate::element::{ArgInput, Element, WidensTo};
use crate::error::{Error, Result};
use crate::kernels::{Kernels, LaunchShape};
use crate::launch::{self, KernelHandle};
use crate::op::Op;
use crate::policy::Policy;
use crate::strategy::{DotKernel, LadderPlan, Rung, Strategy};
use cust::memory::{AsyncCopyDestination, DeviceBox, DeviceBuffer, DeviceCopy, DeviceSlice, LockedBuffer};
use cust::stream::{Stream, StreamFlags};

/// Reduces device buffers with kernels loaded once into the current CUDA context.
///
/// A `Reducer` owns the PTX module (JIT-compiled for the device when created),
/// a non-blocking stream and a small workspace per stream, so repeated calls
/// with the production kernel (the default [`Strategy`]) allocate nothing
/// and load nothing. The free functions ([`crate::sum`], [`crate::reduce`], ...)
/// use one `Reducer` per thread and context behind the scenes.
///
/// # Workspace and streams
/// The production kernels need a workspace (one 16-byte partial per block, and
/// a ticket word that each launch leaves at zero; the segmented kernels a
/// ticket per segment they split over several blocks); ladder rungs need room for
/// their per-block results. A `Reducer` keeps one workspace per stream it has
/// launched on, so calls queued on different streams
/// ([`Reducer::reduce_into`], [`Reducer::dot_into`]) may run at the same time
/// without host synchronisation, and calls on one stream are ordered by it.
/// The first call on a stream allocates that stream's workspace (a few KiB);
/// [`Reducer::prepare_stream`] does it ahead of time, e.g. before capturing a
/// CUDA graph. (A stream destroyed while its work is pending and replaced by
/// a new stream with the same handle would share the workspace with that
/// work: synchronize before destroying a stream you launched on.)
///
/// # Example
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[1.5f32, -2.0, 4.0, 8.25])?;
/// let mut reducer = reduce::Reducer::new()?;
/// assert_eq!(reducer.reduce(&buf, reduce::Op::Max)?, 8.25);
/// assert_eq!(reducer.reduce(&buf.index(1..), reduce::Op::Sum)?, 10.25);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Reducer {
    pub(crate) kernels: Kernels,
    pub(crate) stream: Stream,
    /// One per stream launched on, found by the stream's handle.
    workspaces: Vec<Workspace>,
    /// Device-side result of [`Reducer::reduce`] (8 bytes hold any element),
    /// and the index of [`Reducer::argmax`] in the second slot.
    result: DeviceBuffer<u64>,
    /// Pinned host copy of `result`, so the copy back is a short async DMA.
    result_host: LockedBuffer<u64>,
    strategy: Strategy,
}

/// What one stream's launches write besides their result.
#[derive(Debug)]
pub(crate) struct Workspace {
    /// The stream's handle.
    stream: usize,
    /// The production kernels' per-block partials: one
    /// [`PARTIAL_SLOT_BYTES`] slot per block of the largest grid.
    partials: DeviceBuffer<u64>,
    /// The production kernels' ticket: zero between launches.
    ticket: DeviceBuffer<u32>,
    /// The segmented kernels' tickets, one per segment split over several
    /// blocks (at most one per block of the largest grid), whose first three
    /// words are the balanced kernels' `u64` counter and ticket: zero
    /// between launches.
    segment_tickets: DeviceBuffer<u32>,
    /// The ladder's per-block results; grown on demand, never shrunk.
    ladder_scratch: Option<DeviceBuffer<u64>>,
}

impl Reducer {
    /// A reducer for the current context's device, with the tuned launch
    /// policy for its compute capability.
    ///
    /// Errors: [`Error::NoContext`] if no context is current,
    /// [`Error::UnsupportedDevice`] before compute capability 7.0, or a CUDA
    /// error (for example out of memory).
    pub fn new() -> Result<Self> {
        Self::build(None)
    }

    /// A reducer that launches with `policy` instead of the tuned one.
    pub fn with_policy(policy: Policy) -> Result<Self> {
        Self::build(Some(policy))
    }

    fn build(policy: Option<Policy>) -> Result<Self> {
        current_context()?;
        let kernels = Kernels::load(policy)?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
        let mut reducer = Reducer {
            kernels,
            stream,
            workspaces: Vec::new(),
            result: DeviceBuffer::zeroed(2)?,
            result_host: LockedBuffer::new(&0, 2)?,
            strategy: Strategy::Production,
        };
        reducer.workspace(reducer.stream.as_inner())?;
        Ok(reducer)
    }

    /// Allocates `stream`'s workspace now, if this reducer has none for it
    /// yet, so that later calls on `stream` allocate nothing (for example
    /// while it is being captured into a CUDA graph). Ladder rungs may still
    /// grow their part of it.
    pub fn prepare_stream(&mut self, stream: &Stream) -> Result<()> {
        self.workspace(stream.as_inner()).map(|_| ())
    }

    /// The workspace of the stream with handle `stream`, allocated on first use.
    pub(crate) fn workspace(&mut self, stream: cust::sys::CUstream) -> Result<&mut Workspace> {
        let key = stream as usize;
        let index = match self.workspaces.iter().position(|w| w.stream == key) {
            Some(index) => index,
            None => {
                self.workspaces.push(Workspace {
                    stream: key,
                    partials: DeviceBuffer::zeroed(self.kernels.max_grid() as usize * PARTIAL_SLOT_WORDS)?,
                    // Zero once: every launch leaves the tickets at zero again.
                    ticket: DeviceBuffer::zeroed(1)?,
                    segment_tickets: DeviceBuffer::zeroed(self.kernels.max_grid().max(4) as usize)?,
                    ladder_scratch: None,
                });
                self.workspaces.len() - 1
            }
        };
        Ok(&mut self.workspaces[index])
    }

    /// The kernel this reducer runs: [`Strategy::Production`] unless changed.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Runs `strategy`'s kernel from now on. A ladder rung works on `i32`
    /// and `f32` only; calls with other types then return
    /// [`Error::UnsupportedStrategy`]. Ladder rungs allocate room for their
    /// per-block results when a call needs more than the stream's workspace has.
    pub fn set_strategy(&mut self, strategy: Strategy) {
        self.strategy = strategy;
    }

    /// The stream [`Reducer::reduce`] runs on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Reduces `input` with `op` and returns the result to the host.
    ///
    /// Blocks until the result is on the host. See [`Op`] for the rules on
    /// empty input, NaN and overflow; the result is bitwise the same on every
    /// run for the same input at the same address and the same device.
    pub fn reduce<T: Element>(&mut self, input: &DeviceSlice<T>, op: Op) -> Result<T> {
        self.enqueue(input, op, self.result_slot(), StreamChoice::Own)?;
        self.result_to_host()
    }

    /// The device address of the reducer's own result slot (8 bytes), which
    /// [`Reducer::result_to_host`] reads.
    pub(crate) fn result_slot(&self) -> u64 {
        self.result.as_device_ptr().as_raw()
    }

    /// Copies the `T` at the start of the result slot to the host, after the
    /// work on the reducer's own stream.
    pub(crate) fn result_to_host<T: Element>(&mut self) -> Result<T> {
        let [bits, _] = self.result_slots_to_host()?;
        // SAFETY: the kernel wrote one `T` (4 or 8 bytes) at the start of the
        // 8-byte slot, and `u64`'s alignment suffices for every `Element`.
        Ok(unsafe { std::ptr::read(&bits as *const u64 as *const T) })
    }

    /// Both result slots, after the work on the reducer's own stream.
    pub(crate) fn result_slots_to_host(&mut self) -> Result<[u64; 2]> {
        // SAFETY: `result_host` is pinned and not touched until the stream is synchronized.
        unsafe { self.result.async_copy_to(&mut *self.result_host, &self.stream)? };
        self.stream.synchronize()?;
        Ok([self.result_host[0], self.result_host[1]])
    }

    /// The index and value of the largest element of `input`: the first
    /// (lowest) index among equal largest values; the first NaN if there is
    /// one (as NumPy and PyTorch); `-0.0` and `+0.0` compare equal (so the
    /// first zero wins, and the value returned is that element, sign
    /// included). [`Error::Empty`] if `input` is empty.
    ///
    /// One pass over the input, one launch: each thread keeps the best
    /// (value, index) pair it has seen, and the pairs combine like any other
    /// fold, deterministically. [`half::f16`] and [`half::bf16`] inputs are
    /// compared as the `f32` they convert to exactly ([`ArgInput`]).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// let _ctx = cust::quick_init()?;
    /// let buf = DeviceBuffer::from_slice(&[3.0f32, 9.5, -1.0, 9.5])?;
    /// let mut r = reduce::Reducer::new()?;
    /// assert_eq!(r.argmax(&buf)?, (1, 9.5));
    /// assert_eq!(r.argmin(&buf)?, (2, -1.0));
    /// # Ok(()) }
    /// ```
    pub fn argmax<T: ArgInput>(&mut self, input: &DeviceSlice<T>) -> Result<(u64, T)> {
        self.arg_to_host(input, Op::Max)
    }

    /// The index and value of the smallest element of `input` (the rules of
    /// [`Reducer::argmax`]; a NaN is still the first choice).
    pub fn argmin<T: ArgInput>(&mut self, input: &DeviceSlice<T>) -> Result<(u64, T)> {
        self.arg_to_host(input, Op::Min)
    }

    /// [`Reducer::argmax`] enqueued on `stream`, leaving the index in `index`
    /// and the value in `value` (in [`ArgInput::Value`]: the element type,
    /// or `f32` for the half types); returns without waiting (as
    /// [`Reducer::reduce_into`]). An empty `input` is rejected before
    /// anything is enqueued.
    pub fn argmax_into<T: ArgInput>(
        &mut self,
        input: &DeviceSlice<T>,
        index: &mut DeviceBox<u64>,
        value: &mut DeviceBox<T::Value>,
        stream: &Stream,
    ) -> Result<()> {
        let outs = (value.as_device_ptr().as_raw(), index.as_device_ptr().as_raw());
        self.enqueue_arg(input, Op::Max, outs, StreamChoice::Given(stream))
    }

    /// [`Reducer::argmin`] enqueued on `stream` (as [`Reducer::argmax_into`]).
    pub fn argmin_into<T: ArgInput>(
        &mut self,
        input: &DeviceSlice<T>,
        index: &mut DeviceBox<u64>,
        value: &mut DeviceBox<T::Value>,
        stream: &Stream,
    ) -> Result<()> {
        let outs = (value.as_device_ptr().as_raw(), index.as_device_ptr().as_raw());
        self.enqueue_arg(input, Op::Min, outs, StreamChoice::Given(stream))
    }

    fn arg_to_host<T: ArgInput>(&mut self, input: &DeviceSlice<T>, op: Op) -> Result<(u64, T)> {
        let slot = self.result_slot();
        self.enqueue_arg(input, op, (slot, slot + 8), StreamChoice::Own)?;
        let [value, index] = self.result_slots_to_host()?;
        // SAFETY: as in `result_to_host`, for the `T::Value` the kernel wrote.
        let value = unsafe { std::ptr::read(&value as *const u64 as *const T::Value) };
        Ok((index, T::from_value(value)))
    }

    /// argmax (`op` = `Max`) or argmin of `input` in one launch: the value
    /// (a `T::Value`) into `value`, its index into `index`; `(value, index)`
    /// are device addresses.
    fn enqueue_arg<T: ArgInput>(
        &mut self,
        input: &DeviceSlice<T>,
        op: Op,
        (value, index): (u64, u64),
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        if input.is_empty() {
            return Err(Error::Empty { op });
        }
        let address = checked_address(input)?;
        let (kernel, shape) = self.kernels.arg_launch_for::<T>(op, input.len())?;
        let [partials, ticket] = self.workspace(stream.resolve(&self.stream).as_inner())?.addresses();
        let stream = stream.resolve(&self.stream);
        let mut params = [address, input.len() as u64, partials, ticket, value, index];
        // SAFETY: the parameters of an argmax/argmin entry point
        // (kernels-gpu/src/abi.rs), `input` not empty; the workspace as for
        // every production launch.
        unsafe { launch::launch(kernel, shape.blocks, shape.threads_per_block, 0, stream, &mut params)? };
        Ok(())
    }

    /// Enqueues the reduction of `input` with `op` on `stream`, writing the
    /// result to `out` on the device. Returns without waiting for the GPU.
    ///
    /// Synchronizes nothing and sets no memory, and allocates nothing once
    /// `stream` has a workspace (after the first call on it, or
    /// [`Reducer::prepare_stream`]), so it can be captured in a CUDA graph.
    /// Calls on different streams may overlap on the GPU (each stream has its
    /// own workspace). `input` must stay alive and unchanged until the work
    /// completes. An empty `input` with `Max`/`Min` is rejected before
    /// anything is enqueued.
    pub fn reduce_into<T: Element>(
        &mut self,
        input: &DeviceSlice<T>,
        op: Op,
        out: &mut DeviceBox<T>,
        stream: &Stream,
    ) -> Result<()> {
        self.enqueue(input, op, out.as_device_ptr().as_raw(), StreamChoice::Given(stream))
    }

    fn enqueue<T: Element>(
        &mut self,
        input: &DeviceSlice<T>,
        op: Op,
        out: u64,
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        if input.is_empty() && !op.defined_on_empty() {
            return Err(Error::Empty { op });
        }
        let address = checked_address(input)?;
        if let Strategy::Ladder { rung, block_threads } = self.strategy {
            return self.enqueue_ladder::<T>(rung, block_threads, address, input.len(), op, out, stream);
        }
        self.enqueue_production::<T>(address, input.len(), op, out, stream)
    }

    /// Enqueues the production kernel for `op` on this reducer's own stream,
    /// also for an empty `input` where `op` has no identity: the kernel then
    /// writes the operator's neutral element (`-inf` for a float `Max`), which
    /// is what [`crate::multi`] needs for a GPU whose shards are all empty.
    pub(crate) fn enqueue_partial<T: Element>(&mut self, input: &DeviceSlice<T>, op: Op, out: u64) -> Result<()> {
        let address = checked_address(input)?;
        self.enqueue_production::<T>(address, input.len(), op, out, StreamChoice::Own)
    }

    fn enqueue_production<T: Element>(
        &mut self,
        address: u64,
        len: usize,
        op: Op,
        out: u64,
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        let (kernel, shape) = self.kernels.launch_for::<T>(op, len)?;
        self.launch_production(kernel, shape, address, len, out, stream)
    }

    /// Launches a production (or widening) kernel on `stream`'s workspace.
    fn launch_production(
        &mut self,
        kernel: KernelHandle,
        shape: LaunchShape,
        address: u64,
        len: usize,
        out: u64,
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        let [partials, ticket] = self.workspace(stream.resolve(&self.stream).as_inner())?.addresses();
        let stream = stream.resolve(&self.stream);
        let mut params = [address, len as u64, partials, ticket, out];
        // SAFETY: the parameters of a reduction entry point (kernels-gpu/src/abi.rs);
        // `partials` holds one slot per block of the largest grid; the ticket
        // is zero between launches.
        unsafe { launch::launch(kernel, shape.blocks, shape.threads_per_block, 0, stream, &mut params)? };
        Ok(())
    }

    /// Reduces `input` with `op` in the wider accumulator type `A`: each
    /// element is converted to `A` as it is read (see [`WidensTo`] for the
    /// pairs and ops). Always the production kernel, whatever the strategy.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// let _ctx = cust::quick_init()?;
    /// let bytes = DeviceBuffer::from_slice(&[200u8; 1000])?;
    /// let mut r = reduce::Reducer::new()?;
    /// assert_eq!(r.reduce_as::<u64, _>(&bytes, reduce::Op::Sum)?, 200_000);
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`Error::UnsupportedWidening`] for an op the pair does not
    /// have, [`Error::Empty`] for `Max`/`Min` of an empty input, CUDA errors.
    pub fn reduce_as<A: Element, In: WidensTo<A>>(&mut self, input: &DeviceSlice<In>, op: Op) -> Result<A> {
        self.enqueue_widened::<A, In>(input, op, self.result_slot(), StreamChoice::Own)?;
        self.result_to_host()
    }

    /// [`Reducer::reduce_as`] into `out` on `stream`, without waiting (as
    /// [`Reducer::reduce_into`]).
    pub fn reduce_as_into<A: Element, In: WidensTo<A>>(
        &mut self,
        input: &DeviceSlice<In>,
        op: Op,
        out: &mut DeviceBox<A>,
        stream: &Stream,
    ) -> Result<()> {
        self.enqueue_widened::<A, In>(input, op, out.as_device_ptr().as_raw(), StreamChoice::Given(stream))
    }

    fn enqueue_widened<A: Element, In: WidensTo<A>>(
        &mut self,
        input: &DeviceSlice<In>,
        op: Op,
        out: u64,
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        let (kernel, shape) = self.kernels.widened_launch_for::<A, In>(op, input.len())?;
        if input.is_empty() && !op.defined_on_empty() {
            return Err(Error::Empty { op });
        }
        let address = checked_address(input)?;
        self.launch_production(kernel, shape, address, input.len(), out, stream)
    }

    /// A ladder rung: one launch per pass, each pass reducing the previous
    /// pass's per-block results, until one block writes `out`.
    #[allow(clippy::too_many_arguments)]
    fn enqueue_ladder<T: Element>(
        &mut self,
        rung: Rung,
        block_threads: u32,
        input: u64,
        len: usize,
        op: Op,
        out: u64,
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        check_ladder::<T>(rung, op)?;
        let kernel = self.kernels.function(&rung.kernel_name(op, T::TYPE))?;
        let shared = rung.shared_bytes(block_threads, T::TYPE);
        let plan = LadderPlan::new(rung, block_threads, T::TYPE, input, len as u64)?;
        let workspace = self.workspace(stream.resolve(&self.stream).as_inner())?;
        if workspace
            .ladder_scratch
            .as_ref()
            .is_none_or(|b| b.len() < plan.scratch_words())
        {
            workspace.ladder_scratch = Some(DeviceBuffer::zeroed(plan.scratch_words())?);
        }
        let scratch = workspace
            .ladder_scratch
            .as_ref()
            .map_or(0, |b| b.as_device_ptr().as_raw());
        let stream = stream.resolve(&self.stream);
        for pass in plan.passes(input, len as u64, scratch, out) {
            // SAFETY: the parameters of a ladder entry point (kernels-gpu/src/abi.rs);
            // `destination` has a slot per block; `shared` is what the rung needs.
            unsafe {
                launch::launch(
                    kernel,
                    pass.blocks,
                    block_threads,
                    shared,
                    stream,
                    &mut [pass.source, pass.len, pass.destination],
                )?
            };
        }
        Ok(())
    }

    /// The dot product `Σ a[i]·b[i]` with the production kernel (any
    /// [`Element`] type, one launch, deterministic), returned to the host.
    /// An empty pair of inputs gives 0. Integers wrap, floats follow IEEE 754
    /// (each product is rounded, then summed in a tree); the products are
    /// formed as the inputs are read, with no temporary array.
    ///
    /// Errors: [`Error::LengthMismatch`] if `a` and `b` differ in length.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// let _ctx = cust::quick_init()?;
    /// let a = DeviceBuffer::from_slice(&[1.0f64, 2.0, 3.0])?;
    /// let b = DeviceBuffer::from_slice(&[4.0f64, 5.0, 6.0])?;
    /// assert_eq!(reduce::Reducer::new()?.dot(&a, &b)?, 32.0);
    /// # Ok(()) }
    /// ```
    pub fn dot<T: Element>(&mut self, a: &DeviceSlice<T>, b: &DeviceSlice<T>) -> Result<T> {
        let out = self.result.as_device_ptr().as_raw();
        self.enqueue_production_dot(a, b, out, StreamChoice::Own)?;
        self.result_to_host()
    }

    /// As [`Reducer::dot`], enqueued on `stream` with the result left in
    /// `out`; returns without waiting (and, as [`Reducer::reduce_into`], allocates nothing once `stream` has a workspace).
    pub fn dot_into<T: Element>(
        &mut self,
        a: &DeviceSlice<T>,
        b: &DeviceSlice<T>,
        out: &mut DeviceBox<T>,
        stream: &Stream,
    ) -> Result<()> {
        self.enqueue_production_dot(a, b, out.as_device_ptr().as_raw(), StreamChoice::Given(stream))
    }

    fn enqueue_production_dot<T: Element>(
        &mut self,
        a: &DeviceSlice<T>,
        b: &DeviceSlice<T>,
        out: u64,
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        if a.len() != b.len() {
            return Err(Error::LengthMismatch {
                left: a.len(),
                right: b.len(),
            });
        }
        let (a_address, b_address) = (checked_address(a)?, checked_address(b)?);
        let (kernel, shape) = self.kernels.dot_launch_for::<T>(a.len())?;
        let [partials, ticket] = self.workspace(stream.resolve(&self.stream).as_inner())?.addresses();
        let stream = stream.resolve(&self.stream);
        let mut params = [a_address, b_address, a.len() as u64, partials, ticket, out];
        // SAFETY: as in `enqueue`, with the dot entry points' parameters
        // (kernels-gpu/src/abi.rs).
        unsafe { launch::launch(kernel, shape.blocks, shape.threads_per_block, 0, stream, &mut params)? };
        Ok(())
    }

    /// The dot product `Σ a[i]·b[i]` with one of seed 004's kernels (`i32`
    /// or `f32`), on this reducer's stream; blocks until the result is on the
    /// host. Float results depend on the order the atomics land in, so they
    /// can differ between runs by rounding.
    ///
    /// Errors: [`Error::LengthMismatch`] if `a` and `b` differ in length.
    pub fn dot_with<T: Element>(&mut self, a: &DeviceSlice<T>, b: &DeviceSlice<T>, kernel: DotKernel) -> Result<T> {
        let out = self.result.as_device_ptr().as_raw();
        self.enqueue_dot(a, b, kernel, out, StreamChoice::Own)?;
        self.result_to_host()
    }

    /// As [`Reducer::dot_with`], but enqueued on `stream` with the result
    /// left in `out`; returns without waiting. `out` is zeroed on `stream`
    /// first (the kernels add into it).
    pub fn dot_into_with<T: Element>(
        &mut self,
        a: &DeviceSlice<T>,
        b: &DeviceSlice<T>,
        kernel: DotKernel,
        out: &mut DeviceBox<T>,
        stream: &Stream,
    ) -> Result<()> {
        self.enqueue_dot(a, b, kernel, out.as_device_ptr().as_raw(), StreamChoice::Given(stream))
    }

    fn enqueue_dot<T: Element>(
        &mut self,
        a: &DeviceSlice<T>,
        b: &DeviceSlice<T>,
        kernel: DotKernel,
        out: u64,
        stream: StreamChoice<'_>,
    ) -> Result<()> {
        if a.len() != b.len() {
            return Err(Error::LengthMismatch {
                left: a.len(),
                right: b.len(),
            });
        }
        check_ladder_type::<T>(format!("seed 004 dot kernel {kernel:?}"))?;
        let (a_address, b_address) = (checked_address(a)?, checked_address(b)?);
        let function = self.kernels.function(&kernel.kernel_name(T::TYPE))?;
        let blocks = DotKernel::blocks_for(a.len())?;
        let stream = stream.resolve(&self.stream);
        let mut params = [a_address, b_address, a.len() as u64, out];
        // SAFETY: `out` holds one 4-byte `T` (i32 or f32, checked above), zeroed
        // on the same stream before the kernel adds into it; the arguments match
        // the dot entry points; the block tree needs one `T` of shared memory per thread.
        unsafe {
            launch::zero_words_async(out, 1, stream)?;
            launch::launch(
                function,
                blocks,
                DotKernel::BLOCK_THREADS,
                DotKernel::shared_bytes(T::TYPE),
                stream,
                &mut params,
            )?;
        }
        Ok(())
    }

    /// The launch shape a reduction of `len` elements of `T` with `op` uses.
    ///
    /// It depends only on `len`, the element size and the device: threads per
    /// block come from the [`Policy`] (tuned per compute capability), and the
    /// grid is the smaller of "enough blocks for one full tile of 16-byte loads
    /// per thread" and "as many blocks as the device holds at once" (SMs ×
    /// the occupancy calculator's blocks per SM), at least 1.
    pub fn launch_shape<T: Element>(&self, op: Op, len: usize) -> Result<LaunchShape> {
        Ok(self.kernels.launch_for::<T>(op, len)?.1)
    }
}

// A Reducer can move to another thread (with its context made current there).
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<Reducer>();
};

/// `u64`s per partial slot: `Workspace::partials` holds one slot per block.
pub(crate) const PARTIAL_SLOT_WORDS: usize = (PARTIAL_SLOT_BYTES / std::mem::size_of::<u64>() as u64) as usize;

impl Workspace {
    /// Device addresses of the production kernels' part: partials, ticket.
    fn addresses(&self) -> [u64; 2] {
        [
            self.partials.as_device_ptr().as_raw(),
            self.ticket.as_device_ptr().as_raw(),
        ]
    }

    /// Device addresses of the segmented kernels' part: partials, tickets.
    pub(crate) fn segment_addresses(&self) -> [u64; 2] {
        [
            self.partials.as_device_ptr().as_raw(),
            self.segment_tickets.as_device_ptr().as_raw(),
        ]
    }
}

/// The reducer's own stream, or a caller's.
#[derive(Clone, Copy)]
pub(crate) enum StreamChoice<'a> {
    Own,
    Given(&'a Stream),
}

impl<'a> StreamChoice<'a> {
    pub(crate) fn resolve(self, own: &'a Stream) -> &'a Stream {
        match self {
            StreamChoice::Own => own,
            StreamChoice::Given(stream) => stream,
        }
    }
}

/// The slice's address, checked to be a multiple of the element size.
pub(crate) fn checked_address<T: DeviceCopy>(slice: &DeviceSlice<T>) -> Result<u64> {
    let address = slice.as_device_ptr().as_raw();
    if !address.is_multiple_of(std::mem::size_of::<T>() as u64) {
        return Err(Error::MisalignedInput {
            address,
            align: std::mem::size_of::<T>(),
        });
    }
    Ok(address)
}

/// Ladder rungs exist for the seeds' operators and types only.
pub(crate) fn check_ladder<T: Element>(rung: Rung, op: Op) -> Result<()> {
    let kernel = format!("ladder rung {rung} for {op}");
    if !Op::LADDER.contains(&op) {
        return Err(Error::UnsupportedStrategy {
            kernel,
            element: T::TYPE,
        });
    }
    check_ladder_type::<T>(kernel)
}

/// Ladder kernels exist for the seeds' types only.
pub(crate) fn check_ladder_type<T: Element>(kernel: String) -> Result<()> {
    match T::TYPE {
        crate::ElementType::I32 | crate::ElementType::F32 => Ok(()),
        element => Err(Error::UnsupportedStrategy { kernel, element }),
    }
}

/// The current context's handle, or [`Error::NoContext`].
pub(crate) fn current_context() -> Result<usize> {
    let mut context: cust::sys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle to a valid location.
    let status = unsafe { cust::sys::cuCtxGetCurrent(&mut context) };
    if status != cust::sys::cudaError_enum::CUDA_SUCCESS || context.is_null() {
        return Err(Error::NoContext);
    }
    Ok(context as usize)
}
