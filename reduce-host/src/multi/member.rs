//! One GPU's part of a multi-GPU reduction: its context, NCCL rank, reducer
//! and the small buffers its partial results pass through.

use super::nccl::Comm;
use crate::backend::launcher::element_address;
use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::reducer::{exact_state_words, to_word, ExactOf, Reducer};
use cust::context::{Context, CurrentContext};
use cust::memory::{AsyncCopyDestination, DeviceBuffer, DevicePointer, DeviceSlice, LockedBuffer};
use cust::stream::Stream;
use kernels_gpu::abi::Op;

/// What the members compute, exchange and combine.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Combining {
    /// Each rank's value, reduced with the kernels' operator.
    Op(Op),
    /// Each rank's exact sum as an exact state (digits, not a rounded
    /// value), the states merged and rounded once ([`crate::ExactSum`],
    /// [`crate::ExactNanSum`]).
    Exact(ExactOf),
}

/// One rank: a GPU's primary context, its communicator and its reducer.
///
/// A reduction goes through three steps, each enqueued on the reducer's
/// stream: [`Member::enqueue_local`] reduces the rank's shards to one value in
/// `send` (or, for the exact sum, its exact state); the ranks'
/// `ncclAllGather` copies every rank's value into every
/// rank's `gathered`, in rank order; [`Member::enqueue_combine`] reduces
/// `gathered`. Every rank thus combines the same values in the same order
/// with the same kernel, so all ranks hold the bitwise same result.
#[derive(Debug)]
pub(crate) struct Member {
    // Dropped in this order, with `context` current (see `Drop`): the
    // communicator and buffers before the context they live in.
    pub(crate) comm: Comm,
    reducer: Reducer,
    /// The rank's shards' results, when it has more than one: one `T`
    /// (or exact state) each.
    local: DeviceBuffer<u64>,
    /// The rank's value or exact state, which the all-gather sends.
    pub(crate) send: DeviceBuffer<u64>,
    /// Every rank's value or exact state, in rank order.
    pub(crate) gathered: DeviceBuffer<u64>,
    /// [`Member::reduce_counting`]'s element counts: this rank's (host and
    /// device), and every rank's (device and host).
    length_host: LockedBuffer<u64>,
    length_send: DeviceBuffer<u64>,
    lengths: DeviceBuffer<u64>,
    lengths_host: LockedBuffer<u64>,
    /// The value a pass's exact kernels read (the variance's mean,
    /// logsumexp's maximum: see `super::passes`), and the pinned word it
    /// is copied from.
    parameter: DeviceBuffer<u64>,
    parameter_host: LockedBuffer<u64>,
    world_size: usize,
    pub(crate) ordinal: u32,
    pub(crate) context: Context,
}

impl Member {
    /// The member for `context`'s device, which must be current.
    pub(crate) fn new(context: Context, ordinal: u32, comm: Comm, world_size: usize) -> Result<Member> {
        Ok(Member {
            comm,
            reducer: Reducer::new()?,
            local: DeviceBuffer::zeroed(1)?,
            send: DeviceBuffer::zeroed(MOST_SLOT_WORDS)?,
            gathered: DeviceBuffer::zeroed(world_size.checked_mul(MOST_SLOT_WORDS).ok_or_else(too_large)?)?,
            length_host: LockedBuffer::new(&0, 1)?,
            length_send: DeviceBuffer::zeroed(1)?,
            lengths: DeviceBuffer::zeroed(world_size)?,
            lengths_host: LockedBuffer::new(&0, world_size)?,
            parameter: DeviceBuffer::zeroed(1)?,
            parameter_host: LockedBuffer::new(&0, 1)?,
            world_size,
            ordinal,
            context,
        })
    }

    /// The stream every step of this member runs on.
    pub(crate) fn stream(&self) -> &Stream {
        self.reducer.stream()
    }

    /// Makes this member's context current on the calling thread.
    pub(crate) fn make_current(&self) -> Result<()> {
        Ok(CurrentContext::set_current(&self.context)?)
    }

    /// [`Error::InvalidGroup`] unless `address` is in this member's GPU's
    /// memory: a kernel reading another GPU's memory would fault and leave the
    /// context unusable.
    pub(crate) fn check_owns(&self, address: u64, what: &str) -> Result<()> {
        let mut ordinal: i32 = -1;
        // SAFETY: writes one int; CUDA answers for any address.
        let status = unsafe {
            cust::sys::cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                cust::sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                address,
            )
        };
        if status == cust::sys::cudaError_enum::CUDA_SUCCESS && ordinal == self.ordinal as i32 {
            return Ok(());
        }
        let found = if status == cust::sys::cudaError_enum::CUDA_SUCCESS {
            format!("device {ordinal}'s")
        } else {
            format!("unknown to CUDA ({status:?})")
        };
        Err(Error::InvalidGroup(format!(
            "{what} for CUDA device {} is at {address:#x}, memory {found}: each shard and output must be in its own GPU's memory",
            self.ordinal
        )))
    }

    /// The user operator of this member's `Op::User` launches from now on
    /// (`None`: none).
    pub(crate) fn set_user(&mut self, program: Option<crate::user::program::Program>) {
        use crate::backend::launcher::Launcher;
        self.reducer.backend.set_user(program);
    }

    /// Enqueues the reduction of `shards` (on this member's device) into
    /// `send`. No shards, or only empty ones, give the operator's neutral
    /// element (the exact state of zero). The context must be current.
    pub(crate) fn enqueue_local<T: Element>(&mut self, shards: &[&DeviceSlice<T>], combining: Combining) -> Result<()> {
        let op = match combining {
            Combining::Op(op) => op,
            Combining::Exact(of) => return self.enqueue_local_exact(shards, of),
        };
        let send = self.send.as_device_ptr().as_raw();
        match shards {
            [] => self.reducer.enqueue_partial(&typed::<T>(send, 0), op, send),
            [shard] => self.reducer.enqueue_partial(shard, op, send),
            shards => {
                let local = self.local_slots(shards.len())?;
                for (index, shard) in shards.iter().enumerate() {
                    // Inside `local`, which has a slot per shard: always an address.
                    let slot =
                        element_address::<T>(local, index).ok_or(Error::internal("a shard slot past the partials"))?;
                    self.reducer.enqueue_partial(shard, op, slot)?;
                }
                self.reducer
                    .enqueue_partial(&typed::<T>(local, shards.len()), op.combiner(), send)
            }
        }
    }

    /// Enqueues the copy of `value` into the member's parameter, which its
    /// exact kernels read as their part's value from now on. The context
    /// must be current.
    pub(crate) fn enqueue_parameter<T: Element>(&mut self, value: T) -> Result<()> {
        // Earlier work on the stream may still copy the pinned word.
        self.reducer.stream().synchronize()?;
        if let Some(word) = self.parameter_host.first_mut() {
            *word = to_word(value);
        }
        // SAFETY: both hold one word; the pinned one is not written again
        // before the stream is synchronized (above, on the next call).
        unsafe {
            self.parameter
                .async_copy_from(&*self.parameter_host, self.reducer.stream())?
        };
        Ok(())
    }

    /// Enqueues the copy of `value` to `out` (a device address holding one
    /// `T`, on this member's GPU), through the parameter. The context must
    /// be current.
    pub(crate) fn enqueue_store<T: Element>(&mut self, value: T, out: u64) -> Result<()> {
        self.enqueue_parameter(value)?;
        let parameter = typed::<T>(self.parameter.as_device_ptr().as_raw(), 1);
        // SAFETY: `out` holds one `T` on this member's GPU (the caller's
        // output, checked to be there), which the caller waits for.
        unsafe { typed::<T>(out, 1).async_copy_from(&parameter, self.reducer.stream())? };
        Ok(())
    }

    /// [`Member::enqueue_local`] of the exact sum `of` the elements: each
    /// shard's exact state, merged into one in `send`. A sum that reads a
    /// value per part reads the member's parameter.
    fn enqueue_local_exact<T: Element>(&mut self, shards: &[&DeviceSlice<T>], of: ExactOf) -> Result<()> {
        let of = of.reading(self.parameter.as_device_ptr().as_raw());
        let send = self.send.as_device_ptr().as_raw();
        match shards {
            [] => self.reducer.enqueue_exact_state(&typed::<T>(send, 0), of, send),
            [shard] => self.reducer.enqueue_exact_state(shard, of, send),
            shards => {
                let local = self.state_slots::<T>(shards.len())?;
                for (index, shard) in shards.iter().enumerate() {
                    self.reducer
                        .enqueue_exact_state(shard, of, state_slot::<T>(local, index)?)?;
                }
                self.reducer.enqueue_exact_merge::<T>(local, shards.len(), send, true)
            }
        }
    }

    /// Enqueues the exact dot product of this rank's `pairs` of shards
    /// (each pair on this member's device, of one length) into `send`, as
    /// an exact state: each pair's, merged into one. No pairs give the
    /// state of zero. The context must be current.
    pub(crate) fn enqueue_local_dot<T: FloatElement>(
        &mut self,
        pairs: &[(&DeviceSlice<T>, &DeviceSlice<T>)],
    ) -> Result<()> {
        let send = self.send.as_device_ptr().as_raw();
        match pairs {
            [] => self
                .reducer
                .enqueue_exact_state(&typed::<T>(send, 0), ExactOf::Elements, send),
            [(a, b)] => self.reducer.enqueue_exact_dot_state(a, b, send),
            pairs => {
                let local = self.state_slots::<T>(pairs.len())?;
                for (index, (a, b)) in pairs.iter().enumerate() {
                    self.reducer
                        .enqueue_exact_dot_state(a, b, state_slot::<T>(local, index)?)?;
                }
                self.reducer.enqueue_exact_merge::<T>(local, pairs.len(), send, true)
            }
        }
    }

    /// The address of `local`, grown to hold `count` exact states of `T`s.
    fn state_slots<T: Element>(&mut self, count: usize) -> Result<u64> {
        let words = exact_state_words(T::TYPE)?;
        self.local_slots(count.checked_mul(words).ok_or_else(too_large)?)
    }

    /// The address of `local`, grown to at least `words` 8-byte slots.
    fn local_slots(&mut self, words: usize) -> Result<u64> {
        if self.local.len() < words {
            // Earlier work on the stream may still use the old buffer.
            self.reducer.stream().synchronize()?;
            self.local = DeviceBuffer::zeroed(words)?;
        }
        Ok(self.local.as_device_ptr().as_raw())
    }

    /// Enqueues this rank's part of the all-gather of the ranks' values
    /// (or exact states). Where one thread drives several ranks, call it
    /// inside [`super::nccl::group`].
    pub(crate) fn enqueue_gather<T: Element>(&self, combining: Combining) -> Result<()> {
        let bytes = match combining {
            Combining::Op(_) => std::mem::size_of::<T>(),
            Combining::Exact(_) => exact_state_words(T::TYPE)?.checked_mul(8).ok_or_else(too_large)?,
        };
        // SAFETY: `send` holds `MOST_SLOT_WORDS` 8-byte words ≥ `bytes`
        // bytes and `gathered` as many per rank, on this member's device; the member owns them and
        // frees them only after its stream's work (freeing waits for it).
        unsafe {
            self.comm.all_gather(
                self.send.as_device_ptr().as_raw(),
                self.gathered.as_device_ptr().as_raw(),
                bytes,
                self.stream(),
            )
        }
    }

    /// Runs the whole reduction of this rank (the only one of its process)
    /// into the result slot and returns the result and the total number of
    /// elements over all ranks, gathered alongside the values.
    pub(crate) fn reduce_counting<T: Element>(
        &mut self,
        shards: &[&DeviceSlice<T>],
        combining: Combining,
    ) -> Result<(T, u64)> {
        self.enqueue_local(shards, combining)?;
        if let Some(length) = self.length_host.first_mut() {
            *length = total_elements(shards.iter().map(|s| s.len() as u64))?;
        }
        let stream = self.reducer.stream();
        // SAFETY: the pinned buffers are not touched again before the
        // stream is synchronized (in `result_to_host`).
        unsafe { self.length_send.async_copy_from(&*self.length_host, stream)? };
        super::nccl::group(|| {
            self.enqueue_gather::<T>(combining)?;
            let (send, lengths) = (
                self.length_send.as_device_ptr().as_raw(),
                self.lengths.as_device_ptr().as_raw(),
            );
            // SAFETY: `length_send` holds one `u64` and `lengths` one per rank.
            unsafe {
                self.comm
                    .all_gather(send, lengths, std::mem::size_of::<u64>(), self.stream())
            }
        })?;
        self.enqueue_combine::<T>(combining, None)?;
        // SAFETY: as above.
        unsafe {
            self.lengths
                .async_copy_to(&mut *self.lengths_host, self.reducer.stream())?
        };
        let value = self.result_to_host()?;
        Ok((value, total_elements(self.lengths_host.iter().copied())?))
    }

    /// Enqueues the reduction of the gathered values (or the merge of the
    /// gathered exact states, rounded once) into `out` (a device address
    /// holding one `T`), or, with `None`, into the reducer's result slot,
    /// which [`Member::result_to_host`] reads. The context must be current.
    pub(crate) fn enqueue_combine<T: Element>(&mut self, combining: Combining, out: Option<u64>) -> Result<()> {
        let gathered = self.gathered.as_device_ptr().as_raw();
        let out = out.unwrap_or_else(|| self.reducer.result_slot());
        match combining {
            Combining::Op(op) => {
                self.reducer
                    .enqueue_partial(&typed::<T>(gathered, self.world_size), op.combiner(), out)
            }
            Combining::Exact(_) => self
                .reducer
                .enqueue_exact_merge::<T>(gathered, self.world_size, out, false),
        }
    }

    /// Waits for this member's stream, then returns the value
    /// [`Member::enqueue_combine`] wrote to the result slot.
    pub(crate) fn result_to_host<T: Element>(&mut self) -> Result<T> {
        self.reducer.result_to_host()
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        // The module, stream, buffers and communicator are freed in this
        // member's context. An error here cannot be reported from `drop`.
        let _ = CurrentContext::set_current(&self.context);
    }
}

/// [`Error::InvalidGroup`] for buffers whose size a `usize` cannot count.
fn too_large() -> Error {
    Error::InvalidGroup("the group's buffers would hold more bytes than a usize counts".into())
}

/// 8-byte words of the largest value a rank sends: an `f64` exact state.
const MOST_SLOT_WORDS: usize = kernels_gpu::expansion::scratch_words::<f64>();

/// The address of exact state `index` of `T`s among the states at `local`
/// ([`Member::state_slots`]).
fn state_slot<T: Element>(local: u64, index: usize) -> Result<u64> {
    let words = exact_state_words(T::TYPE)? as u64;
    (index as u64)
        .checked_mul(words)
        .and_then(|slots| slots.checked_mul(8))
        .and_then(|bytes| local.checked_add(bytes))
        .ok_or_else(too_large)
}

/// `len` elements of `T` at `address`: a view of one of a member's own
/// buffers, which hold at least `len` 8-byte slots, or of the caller's
/// output (one `T`).
fn typed<T: Element>(address: u64, len: usize) -> DeviceSlice<T> {
    // SAFETY: a view of a live buffer of the member (or, with `len` 0, one
    // that is never read; or the caller's output, a `T`'s); `u64` slots are
    // aligned for every `Element`.
    unsafe { DeviceSlice::from_raw_parts(DevicePointer::from_raw(address), len) }
}

/// Restores, when dropped, the context that was current when it was made:
/// the multi-GPU calls switch contexts and leave the caller's in place.
pub(crate) struct RestoreContext(cust::sys::CUcontext);

impl RestoreContext {
    pub(crate) fn new() -> RestoreContext {
        let mut context = std::ptr::null_mut();
        // SAFETY: writes one handle; on failure it stays null, and restoring
        // null leaves no context current, as before.
        let _ = unsafe { cust::sys::cuCtxGetCurrent(&mut context) };
        RestoreContext(context)
    }
}

impl Drop for RestoreContext {
    fn drop(&mut self) {
        // SAFETY: the handle was current when this guard was made (or null).
        let _ = unsafe { cust::sys::cuCtxSetCurrent(self.0) };
    }
}

/// The sum of `lengths` (of shards, or of ranks, sent by the other ranks),
/// or [`Error::InvalidGroup`] past `u64::MAX` (the same shard passed very
/// many times; a rank that sent a wrong count).
pub(crate) fn total_elements(mut lengths: impl Iterator<Item = u64>) -> Result<u64> {
    lengths
        .try_fold(0u64, u64::checked_add)
        .ok_or_else(|| Error::InvalidGroup("the group's inputs hold more than u64::MAX elements in all".into()))
}
