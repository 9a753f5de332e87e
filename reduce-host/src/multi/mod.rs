//! Reductions over data sharded across several GPUs, combined through NCCL.
//!
//! Each GPU reduces its shards with the single-GPU kernel, concurrently with
//! the others (every GPU works on its own stream); then the per-GPU values
//! are exchanged with NCCL and combined on every GPU, so that each ends up
//! with the result in its own memory without a trip through the host.
//!
//! - [`Group`]: the GPUs of this process (one thread drives them all;
//!   `ncclCommInitAll`). [`Group::reduce`] returns the result to the host;
//!   [`Group::all_reduce_into`] leaves it in a [`DeviceBox`] on every GPU.
//! - [`Communicator`]: one rank of a job with one process per GPU, on one
//!   node or several (`ncclCommInitRank`). The ranks share a [`UniqueId`]
//!   that rank 0 makes and hands to the others out of band (a file, an
//!   environment variable, MPI): `examples/multi_process.rs` is a runnable
//!   example that starts one process per GPU of this machine.
//!
//! ```no_run
//! # fn main() -> Result<(), reduce::Error> {
//! use cust::prelude::*;
//! use reduce::multi::{Group, Shard};
//! let mut group = Group::new(&[0, 1])?; // CUDA devices 0 and 1
//! group.make_current(0)?;
//! let first = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?;
//! group.make_current(1)?;
//! let second = DeviceBuffer::from_slice(&[4.0f32, 5.0])?;
//! let shards = [Shard::new(0, &first), Shard::new(1, &second)];
//! assert_eq!(group.reduce(&shards, reduce::Op::Sum)?, 15.0);
//! assert_eq!(group.reduce(&shards, reduce::Op::Max)?, 5.0);
//! // The same bits from any number of GPUs and any cuts:
//! assert_eq!(group.reduce(&shards, reduce::ExactSum)?, 15.0);
//! # Ok(()) }
//! ```
//!
//! # Semantics
//! The operators, types and rules of [`Op`] hold unchanged: the result is
//! that of the single-GPU reduction of the shards joined in order (shards of
//! [`Group`] in the order given, grouped by GPU in member order; ranks in rank
//! order), with these specifics:
//! - **Empty shards** are allowed anywhere and contribute nothing (a GPU with
//!   no shards, or only empty ones, contributes the operator's neutral
//!   element). If every shard is empty, `Sum`/`Product`/... give their
//!   identity and `Max`/`Min`/... return [`Error::Empty`] — except
//!   [`Communicator::all_reduce_into`], which cannot see the other ranks'
//!   lengths without a host round trip: there it leaves the neutral element
//!   (`-inf`, `T::MIN`, ... — see its docs).
//! - **NaN**: as on one GPU. `Max`/`Min` give NaN if any shard holds a NaN;
//!   `NanMax`/`NanMin` only if every element is NaN.
//! - **Rounding**: integers, `Max`/`Min` and their NaN-ignoring forms are
//!   exact, so they equal the single-GPU result bitwise. Float sums and
//!   products combine per-shard results, so they differ from the single-GPU
//!   result by rounding only, within the same bound (about `n·ε·Σ|x|`).
//! - **[`ExactSum`]** (`f32`, `f64`): each GPU sends the exact state of its
//!   shards' sum (the digits of an exact fixed-point accumulator, not a
//!   rounded value), and the states are merged with integer additions and
//!   rounded once. The result is bitwise the single-GPU `ExactSum` of the
//!   shards joined, and [`ExactSum::fold`] of their values on the CPU,
//!   whatever the number of GPUs, where the shards are cut and in what
//!   order they come.
//!   [`ExactNanSum`] likewise, each NaN added as `+0.0`, and
//!   [`ExactSumOfSquares`] of the squares.
//! - **[`ExactMean`], [`ExactVar`], [`ExactStd`], [`ExactMeanVar`],
//!   [`ExactLogSumExp`]**: the single-GPU passes, each a collective: the
//!   exact sum (for the mean, divided by the total count) or the maximum,
//!   brought to the host and sent to every GPU; then each GPU's exact state
//!   of the squared deviations from that mean or of the exponentials scaled
//!   by that maximum, merged as above; the host finishes as the `fold`
//!   does. So the result is bitwise the single-GPU one and the `fold` of
//!   the values, whatever the GPUs and cuts; it passes through the host,
//!   which [`Group::all_reduce_into`] then copies to every GPU.
//!   [`ExactMeanVar`] gives its `(mean, variance)` through
//!   [`Group::reduce`] and [`Communicator::reduce`]; the `all_reduce_into`
//!   forms, which leave one value per GPU, do not take it (their `op` is a
//!   [`Combine`] whose output is the element type).
//! - **[`ExactDot`]** of two vectors sharded alike
//!   ([`Group::reduce_pair`], [`Group::all_reduce_pair_into`],
//!   [`Communicator::reduce_pair`], [`Communicator::all_reduce_pair_into`]:
//!   shard `i` of `a` and of `b` a pair on one GPU, of one length): each
//!   GPU's exact state of its pairs' products, merged as [`ExactSum`]'s
//!   states; bitwise [`ExactDot::fold`] of the joined vectors.
//! - **Determinism**: every GPU computes the result from the same values in
//!   the same order with the same kernel, so all GPUs hold the bitwise same
//!   result, and the same shards at the same addresses give the same result
//!   on every run.
//!
//! # Why an all-gather, not `ncclAllReduce`
//! The per-GPU values are exchanged with `ncclAllGather` and combined by this
//! crate's own kernel, on every GPU, in rank order. `ncclAllReduce` would
//! combine them with NCCL's operators, whose float `max`/`min` drop NaN
//! (NCCL 2.28.9 on H200s: `max` and `min` of `NaN` and `1.0` give `1.0` on
//! every rank; `scripts/nccl_nan_probe.py`), which would break the NaN rule
//! above, and which have no counterpart for the NaN-ignoring operators. The exchange is of one value per
//! GPU, so the two collectives cost the same.
//!
//! # NCCL is loaded at run time
//! The crate builds and its single-GPU API works without NCCL. The first
//! multi-GPU call opens `libnccl.so` (through `cudarc`, from the library
//! search path: `LD_LIBRARY_PATH`); where that fails, it returns
//! [`Error::NcclUnavailable`], which says what was found and what to do.
//! [`nccl_version`] checks ahead. NCCL's own environment variables apply
//! (`NCCL_DEBUG=INFO` shows what it does; across nodes, `NCCL_SOCKET_IFNAME`
//! and the network plugins).
//!
//! [`Op`]: crate::Op

mod member;
mod nccl;
mod passes;

use crate::element::{Element, FloatElement};
use crate::error::{Error, Result};
use crate::op::Op;
use crate::reducer::ExactOf;
use crate::reduction::{
    ExactDot, ExactLogSumExp, ExactMean, ExactMeanVar, ExactNanSum, ExactStd, ExactSum, ExactSumOfSquares, ExactVar,
};
use crate::user::program::Program;
use crate::user::{Operator, Scalar, User};
use cust::context::Context;
use cust::device::Device;
use cust::memory::{DeviceBox, DeviceSlice};
use cust::stream::Stream;
use kernels_gpu::abi;
use member::{total_elements, Combining, Member, RestoreContext};
use passes::Ranks;
use std::fmt;
use std::str::FromStr;

/// What a [`Group`] or [`Communicator`] reduces with: an [`Op`]; a
/// reproducible reduction of `f32`s or `f64`s ([`ExactSum`],
/// [`ExactNanSum`], [`ExactSumOfSquares`], [`ExactMean`], [`ExactVar`],
/// [`ExactStd`], [`ExactMeanVar`], [`ExactLogSumExp`]); or a user's
/// operator (`&`[`User`]) over the shards' type, whose partial results the
/// members combine with its `combine`.
pub trait Combine<T: Element>: Copy + sealed::Sealed {
    /// What the reduction gives: a `T`, but `(mean, variance)` for
    /// [`ExactMeanVar`] (whose pair the `all_reduce_into` forms, which
    /// leave one `T` per GPU, do not take).
    type Output;

    /// What the members compute and exchange.
    #[doc(hidden)]
    fn plan(self) -> sealed::Plan<T, Self::Output>;
}

mod sealed {
    use super::passes::Run;
    use super::{Combining, Program};

    pub trait Sealed {}

    /// How the members reduce for a [`Combine`](super::Combine) whose
    /// output is an `O`: public in a private module, so the trait can
    /// return it and no one else can name it.
    pub enum Plan<T, O> {
        /// In one collective, combined on every GPU, its value the output
        /// (`O` is `T`: the function is the identity).
        Combined(Operator, fn(T) -> O),
        /// In passes of collectives, finished on the host.
        Passes(Passes<T, O>),
    }

    /// What the members launch in one collective, and the user's program
    /// for the kernels if it is one.
    pub struct Operator {
        pub(crate) combining: Combining,
        pub(crate) program: Option<Program>,
    }

    /// The passes (see `super::passes`), run on the ranks.
    pub struct Passes<T, O>(pub(crate) Box<Run<T, O>>);
}

/// The plan of one collective of `combining`, with no user program.
fn combined<T>(combining: Combining) -> sealed::Plan<T, T> {
    sealed::Plan::Combined(
        sealed::Operator {
            combining,
            program: None,
        },
        |value| value,
    )
}

/// The plan of `passes`.
fn in_passes<T, O>(passes: impl FnOnce(&mut dyn Ranks<T>) -> Result<O> + 'static) -> sealed::Plan<T, O> {
    sealed::Plan::Passes(sealed::Passes(Box::new(passes)))
}

impl sealed::Sealed for Op {}
impl<T: Element> Combine<T> for Op {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        combined(Combining::Op(self.kernel()))
    }
}

impl sealed::Sealed for ExactSum {}
impl<T: FloatElement> Combine<T> for ExactSum {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        combined(Combining::Exact(ExactOf::Elements))
    }
}

impl sealed::Sealed for ExactNanSum {}
impl<T: FloatElement> Combine<T> for ExactNanSum {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        combined(Combining::Exact(ExactOf::NotNan))
    }
}

impl sealed::Sealed for ExactSumOfSquares {}
impl<T: FloatElement> Combine<T> for ExactSumOfSquares {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        combined(Combining::Exact(ExactOf::Squares))
    }
}

impl sealed::Sealed for ExactMean {}
impl<T: FloatElement> Combine<T> for ExactMean {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        in_passes(passes::mean)
    }
}

impl sealed::Sealed for ExactVar {}
impl<T: FloatElement> Combine<T> for ExactVar {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        in_passes(move |ranks| passes::variance(ranks, self.correction, false))
    }
}

impl sealed::Sealed for ExactStd {}
impl<T: FloatElement> Combine<T> for ExactStd {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        in_passes(move |ranks| passes::variance(ranks, self.correction, true))
    }
}

impl sealed::Sealed for ExactMeanVar {}
impl<T: FloatElement> Combine<T> for ExactMeanVar {
    type Output = (T, T);

    fn plan(self) -> sealed::Plan<T, (T, T)> {
        in_passes(move |ranks| passes::mean_variance(ranks, self.correction))
    }
}

impl sealed::Sealed for ExactLogSumExp {}
impl<T: FloatElement> Combine<T> for ExactLogSumExp {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        in_passes(passes::logsumexp)
    }
}

impl<T: Scalar, O: Operator<T>> sealed::Sealed for &User<T, O> {}
impl<T: Scalar, O: Operator<T>> Combine<T> for &User<T, O> {
    type Output = T;

    fn plan(self) -> sealed::Plan<T, T> {
        sealed::Plan::Combined(
            sealed::Operator {
                combining: Combining::Op(abi::Op::User),
                program: Some(self.program().clone()),
            },
            |value| value,
        )
    }
}

/// The version of the NCCL library that the multi-GPU calls use, as
/// `(major, minor, patch)`, loading it if it is not yet loaded:
/// [`Error::NcclUnavailable`] if it cannot be loaded.
///
/// ```
/// // Runs anywhere: with no NCCL on the library path this is the error, not a crash.
/// match reduce::multi::nccl_version() {
///     Ok((major, minor, patch)) => println!("NCCL {major}.{minor}.{patch}"),
///     Err(reduce::Error::NcclUnavailable { reason }) => println!("no multi-GPU calls: {reason}"),
///     Err(other) => panic!("{other}"),
/// }
/// ```
pub fn nccl_version() -> Result<(u32, u32, u32)> {
    nccl::load()
}

/// A shard of the data: a slice on one member GPU of a [`Group`].
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::multi::{Group, Shard};
/// let mut group = Group::new(&[0, 1])?;
/// group.make_current(1)?;
/// let data = DeviceBuffer::from_slice(&[1u32, 2, 3, 4])?;
/// // Several shards may share a GPU, and a buffer: two halves on member 1.
/// let (low, high) = (data.index(..2), data.index(2..));
/// let shards = [Shard::new(1, &low), Shard::new(1, &high)];
/// assert_eq!(group.reduce(&shards, reduce::Op::Sum)?, 10);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Shard<'a, T: Element> {
    /// The index of the member (in [`Group::new`]'s list) whose GPU holds `data`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// # use cust::prelude::*;
    /// # let _ctx = cust::quick_init()?;
    /// # let buf = DeviceBuffer::from_slice(&[1.0f32])?;
    /// let shard = reduce::multi::Shard::new(1, &buf);
    /// assert_eq!(shard.member, 1);
    /// # Ok(()) }
    /// ```
    pub member: usize,
    /// The shard's elements, in that GPU's memory.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// # use cust::prelude::*;
    /// # let _ctx = cust::quick_init()?;
    /// # let buf = DeviceBuffer::from_slice(&[1.0f32, 2.0])?;
    /// let shard = reduce::multi::Shard::new(0, &buf);
    /// assert_eq!(shard.data.len(), 2);
    /// # Ok(()) }
    /// ```
    pub data: &'a DeviceSlice<T>,
}

impl<'a, T: Element> Shard<'a, T> {
    /// The shard `data` on member `member`'s GPU.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::multi::{Group, Shard};
    /// let mut group = Group::new(&[0])?;
    /// group.make_current(0)?;
    /// let buf = DeviceBuffer::from_slice(&[5i64, -2])?;
    /// assert_eq!(group.reduce(&[Shard::new(0, &buf)], reduce::Op::Min)?, -2);
    /// # Ok(()) }
    /// ```
    pub fn new(member: usize, data: &'a DeviceSlice<T>) -> Self {
        Shard { member, data }
    }
}

/// Several GPUs of this process, driven by one thread, with one NCCL
/// communicator each.
///
/// Creating a group initialises NCCL for its devices (tens to hundreds of
/// milliseconds): make one and reuse it. Each member uses its device's
/// primary context (the one `cust::quick_init` and `Context::new` use), so
/// buffers allocated there are usable directly. Calls switch contexts as they
/// go and restore the caller's current context before they return.
///
/// NCCL cannot put two ranks on one GPU, so the devices must be distinct;
/// several shards may live on one GPU instead.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::multi::{Group, Shard};
/// let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
/// let mut group = Group::all_devices()?;
/// let mut buffers = Vec::new(); // one part of `data` per GPU
/// for (member, part) in data.chunks(data.len().div_ceil(group.world_size())).enumerate() {
///     group.make_current(member)?;
///     buffers.push(DeviceBuffer::from_slice(part)?);
/// }
/// let shards: Vec<_> = buffers.iter().enumerate().map(|(member, b)| Shard::new(member, b)).collect();
/// assert_eq!(group.reduce(&shards, reduce::Op::Sum)?, 500_500.0);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Group {
    members: Vec<Member>,
}

impl Group {
    /// A group of the CUDA devices with ordinals `devices`, ranks in that order.
    ///
    /// Errors: [`Error::InvalidGroup`] for an empty list, a repeated device
    /// or one that does not exist; [`Error::NcclUnavailable`]; NCCL's and
    /// CUDA's errors.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{multi::Group, Error};
    /// let group = Group::new(&[1, 0])?; // member 0 is device 1
    /// assert_eq!(group.device_ordinal(0)?, 1);
    /// assert!(matches!(Group::new(&[0, 0]), Err(Error::InvalidGroup(_)))); // one rank per GPU
    /// # Ok(()) }
    /// ```
    pub fn new(devices: &[u32]) -> Result<Group> {
        nccl::load()?;
        cust::init(cust::CudaFlags::empty())?;
        let count = Device::num_devices()?;
        if devices.is_empty() {
            return Err(Error::InvalidGroup("a group needs at least one device".into()));
        }
        for (index, &device) in devices.iter().enumerate() {
            if device >= count {
                return Err(Error::InvalidGroup(format!(
                    "there is no CUDA device {device}: this machine has {count}"
                )));
            }
            if devices.iter().take(index).any(|&earlier| earlier == device) {
                return Err(Error::InvalidGroup(format!(
                    "device {device} is listed twice: NCCL cannot put two ranks on one GPU; put several shards on it instead"
                )));
            }
        }
        let _restore = RestoreContext::new();
        let contexts = devices
            .iter()
            .map(|&device| Context::new(Device::get_device(device)?))
            .collect::<Result<Vec<_>, _>>()?;
        let ordinals: Vec<i32> = devices.iter().map(|&d| d as i32).collect();
        let comms = nccl::Comm::init_all(&ordinals)?;
        let members = contexts
            .into_iter()
            .zip(comms)
            .zip(devices)
            .map(|((context, comm), &ordinal)| {
                cust::context::CurrentContext::set_current(&context)?;
                Member::new(context, ordinal, comm, devices.len())
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Group { members })
    }

    /// A group of every CUDA device of the machine, in ordinal order.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let group = reduce::multi::Group::all_devices()?;
    /// for member in 0..group.world_size() {
    ///     assert_eq!(group.device_ordinal(member)?, member as u32);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn all_devices() -> Result<Group> {
        cust::init(cust::CudaFlags::empty())?;
        let devices: Vec<u32> = (0..Device::num_devices()?).collect();
        Group::new(&devices)
    }

    /// The number of GPUs (NCCL ranks) in the group; at least 1.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// assert_eq!(reduce::multi::Group::new(&[0, 1])?.world_size(), 2);
    /// # Ok(()) }
    /// ```
    pub fn world_size(&self) -> usize {
        self.members.len()
    }

    /// The CUDA ordinal of member `member`'s device.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let group = reduce::multi::Group::new(&[2, 3])?;
    /// assert_eq!(group.device_ordinal(1)?, 3);
    /// assert!(group.device_ordinal(2).is_err()); // no member 2
    /// # Ok(()) }
    /// ```
    pub fn device_ordinal(&self, member: usize) -> Result<u32> {
        Ok(self.member(member)?.ordinal)
    }

    /// Makes member `member`'s context current on the calling thread, for
    /// example to allocate its shards.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// let group = reduce::multi::Group::new(&[0, 1])?;
    /// group.make_current(1)?;
    /// let on_device_1 = DeviceBuffer::from_slice(&[1.0f64, 2.0])?; // allocated on member 1's GPU
    /// # Ok(()) }
    /// ```
    pub fn make_current(&self, member: usize) -> Result<()> {
        self.member(member)?.make_current()
    }

    /// The stream member `member`'s work runs on (to order other work on
    /// that GPU after the group's).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::event::{Event, EventFlags};
    /// let group = reduce::multi::Group::new(&[0, 1])?;
    /// group.make_current(1)?;
    /// let done = Event::new(EventFlags::DEFAULT)?;
    /// done.record(group.stream(1)?)?; // other streams of device 1 can wait on `done`
    /// # Ok(()) }
    /// ```
    pub fn stream(&self, member: usize) -> Result<&Stream> {
        Ok(self.member(member)?.stream())
    }

    /// Waits until every member's work has finished.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let group = reduce::multi::Group::new(&[0, 1])?;
    /// group.synchronize()?; // the blocking calls already do this before they return
    /// # Ok(()) }
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.members.iter().try_for_each(|m| Ok(m.stream().synchronize()?))
    }

    /// Reduces the data made of `shards` with `op` (an [`Op`], a
    /// reproducible reduction, or a user's operator: `&`[`User`], see
    /// [`Combine`]) and returns the result to the host (a `T`;
    /// [`ExactMeanVar`]'s `(mean, variance)`; see the module docs for the
    /// rules). Blocks until every GPU
    /// has finished. Errors as [`Group::all_reduce_into`]'s.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::{multi::{Group, Shard}, Error, Op};
    /// let mut group = Group::new(&[0, 1])?;
    /// group.make_current(0)?;
    /// let (a, empty) = (DeviceBuffer::from_slice(&[2.0f32, 8.0])?, DeviceBuffer::<f32>::from_slice(&[])?);
    /// group.make_current(1)?;
    /// let b = DeviceBuffer::from_slice(&[-1.0f32])?;
    /// assert_eq!(group.reduce(&[Shard::new(0, &a), Shard::new(1, &b)], Op::Max)?, 8.0);
    /// assert!(matches!(group.reduce(&[Shard::new(0, &empty)], Op::Max), Err(Error::Empty { .. })));
    /// # Ok(()) }
    /// ```
    pub fn reduce<T: Element, C: Combine<T>>(&mut self, shards: &[Shard<'_, T>], op: C) -> Result<C::Output> {
        match op.plan() {
            sealed::Plan::Combined(operator, output) => self.reduce_combined(shards, operator).map(output),
            sealed::Plan::Passes(passes) => (passes.0)(&mut GroupRanks { group: self, shards }),
        }
    }

    /// Reduces the data made of `shards` with `op`, leaving the result in
    /// `outs[i]` on member `i`'s GPU, for every member; returns once every
    /// member's work is done (it waits for every [`Group::stream`], so the
    /// borrowed shards and outputs are free again). Errors found before
    /// anything is enqueued: [`Error::InvalidGroup`] if `outs` does not have
    /// one output per member, or a shard or output is not in the memory of
    /// its member's GPU, or names a member that does not exist;
    /// [`Error::Empty`] if every shard is empty and `op` has no identity;
    /// [`Error::UnsupportedOp`].
    ///
    /// An [`Op`], an exact sum or a user's operator runs on the GPUs alone;
    /// [`ExactMean`], [`ExactVar`], [`ExactStd`] and [`ExactLogSumExp`]
    /// take passes that each end on the host (see the module docs), and
    /// their result is copied from there to every output.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::{memory::DeviceBox, prelude::*};
    /// use reduce::multi::{Group, Shard};
    /// let mut group = Group::new(&[0, 1])?;
    /// group.make_current(0)?;
    /// let (a, out0) = (DeviceBuffer::from_slice(&[1i32, 2])?, DeviceBox::new(&0i32)?);
    /// group.make_current(1)?;
    /// let (b, out1) = (DeviceBuffer::from_slice(&[3i32])?, DeviceBox::new(&0i32)?);
    /// let mut outs = [out0, out1];
    /// group.all_reduce_into(&[Shard::new(0, &a), Shard::new(1, &b)], reduce::Op::Sum, &mut outs)?;
    /// assert_eq!(outs[1].as_host_value()?, 6); // on device 1 (and on device 0 in outs[0])
    /// # Ok(()) }
    /// ```
    pub fn all_reduce_into<T: Element>(
        &mut self,
        shards: &[Shard<'_, T>],
        op: impl Combine<T, Output = T>,
        outs: &mut [DeviceBox<T>],
    ) -> Result<()> {
        let outs = self.checked_outs(outs, "all_reduce_into")?;
        let enqueued = match op.plan() {
            sealed::Plan::Combined(operator, _) => self.enqueue(shards, operator, &outs),
            sealed::Plan::Passes(passes) => {
                (passes.0)(&mut GroupRanks { group: self, shards }).and_then(|value| self.enqueue_stores(value, &outs))
            }
        };
        self.finished(enqueued)
    }

    /// The exact dot product ([`ExactDot`]) of the vectors `a` and `b`, each
    /// made of shards: `a[i]` and `b[i]` are a pair, on one member, of one
    /// length, and the dot product is the exact sum of every pair's
    /// products, rounded once. Each member sends the exact state of its
    /// pairs' products, as [`ExactSum`] sends its shards' sum, so the
    /// result is bitwise [`ExactDot::fold`] of the joined vectors and one
    /// GPU's `ExactDot`, wherever they are cut; it is returned to the host.
    /// Blocks until every GPU has finished.
    ///
    /// Errors, before anything is enqueued: [`Error::InvalidGroup`] if `a`
    /// and `b` do not have as many shards, a pair's shards are on different
    /// members, or a shard is not in its member's GPU's memory or names a
    /// member that does not exist; [`Error::LengthMismatch`] if a pair's
    /// lengths differ. No pairs, or only empty ones, give `+0.0`.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// use reduce::{multi::{Group, Shard}, ExactDot};
    /// let mut group = Group::new(&[0, 1])?;
    /// group.make_current(0)?;
    /// let (a0, b0) = (DeviceBuffer::from_slice(&[1e30f32, 2.0])?, DeviceBuffer::from_slice(&[1.0f32, 3.0])?);
    /// group.make_current(1)?;
    /// let (a1, b1) = (DeviceBuffer::from_slice(&[-1e30f32])?, DeviceBuffer::from_slice(&[1.0f32])?);
    /// let a = [Shard::new(0, &a0), Shard::new(1, &a1)];
    /// let b = [Shard::new(0, &b0), Shard::new(1, &b1)];
    /// assert_eq!(group.reduce_pair(&a, &b, ExactDot)?, 6.0); // 1e30 + 6 − 1e30, exactly
    /// # Ok(()) }
    /// ```
    pub fn reduce_pair<T: FloatElement>(
        &mut self,
        a: &[Shard<'_, T>],
        b: &[Shard<'_, T>],
        what: ExactDot,
    ) -> Result<T> {
        let ExactDot = what;
        let enqueued = self.enqueue_pair_steps(a, b, &[]);
        self.result_after(enqueued)
    }

    /// [`Group::reduce_pair`], leaving the result in `outs[i]` on member
    /// `i`'s GPU, for every member (no host round trip); returns once every
    /// member's work is done. Errors as [`Group::reduce_pair`]'s, and
    /// [`Error::InvalidGroup`] if `outs` does not have one output per
    /// member, each in its member's GPU's memory.
    pub fn all_reduce_pair_into<T: FloatElement>(
        &mut self,
        a: &[Shard<'_, T>],
        b: &[Shard<'_, T>],
        what: ExactDot,
        outs: &mut [DeviceBox<T>],
    ) -> Result<()> {
        let ExactDot = what;
        let outs = self.checked_outs(outs, "all_reduce_pair_into")?;
        let enqueued = self.enqueue_pair_steps(a, b, &outs);
        self.finished(enqueued)
    }

    /// The steps of [`Group::reduce_pair`]: the pairs checked, each
    /// member's exact state of its pairs' products, then the exchange of
    /// exact states (as an exact sum's).
    fn enqueue_pair_steps<T: FloatElement>(
        &mut self,
        a: &[Shard<'_, T>],
        b: &[Shard<'_, T>],
        outs: &[u64],
    ) -> Result<()> {
        check_pairs(
            a.len(),
            b.len(),
            a.iter().zip(b).map(|(x, y)| (x.data.len(), y.data.len())),
        )?;
        for (index, (x, y)) in a.iter().zip(b).enumerate() {
            if x.member != y.member {
                return Err(Error::InvalidGroup(format!(
                    "pair {index}: a's shard is on member {}, b's on member {}: a pair's shards must be on one GPU",
                    x.member, y.member
                )));
            }
            let member = self.member(x.member)?;
            for shard in [x, y].into_iter().filter(|s| !s.data.is_empty()) {
                member.check_owns(shard.data.as_device_ptr().as_raw(), "a shard")?;
            }
        }
        let _restore = RestoreContext::new();
        for (index, member) in self.members.iter_mut().enumerate() {
            let own: Vec<(&DeviceSlice<T>, &DeviceSlice<T>)> = a
                .iter()
                .zip(b)
                .filter(|(x, _)| x.member == index)
                .map(|(x, y)| (x.data, y.data))
                .collect();
            member.make_current()?;
            member.enqueue_local_dot(&own)?;
        }
        self.enqueue_exchange::<T>(Combining::Exact(ExactOf::Elements), outs)
    }

    /// [`Group::reduce`] in one collective of `operator`.
    fn reduce_combined<T: Element>(&mut self, shards: &[Shard<'_, T>], operator: sealed::Operator) -> Result<T> {
        let enqueued = self.enqueue(shards, operator, &[]);
        self.result_after(enqueued)
    }

    /// Waits for every member, then `enqueued` (whether the steps were
    /// enqueued): waited for even if a later member failed to enqueue, as
    /// earlier members' work borrows the shards and outputs.
    fn finished(&self, enqueued: Result<()>) -> Result<()> {
        let waited = self.synchronize();
        enqueued.and(waited)
    }

    /// The result a reduction `enqueued` into member 0's result slot, once
    /// every member is done.
    fn result_after<T: Element>(&mut self, enqueued: Result<()>) -> Result<T> {
        self.finished(enqueued)?;
        let _restore = RestoreContext::new();
        let first = self.first_member()?;
        first.make_current()?;
        first.result_to_host()
    }

    /// The device addresses of `outs`, one per member, each checked to be in
    /// its member's GPU's memory.
    fn checked_outs<T: Element>(&self, outs: &mut [DeviceBox<T>], call: &str) -> Result<Vec<u64>> {
        if outs.len() != self.members.len() {
            return Err(Error::InvalidGroup(format!(
                "{call} needs one output per member: {} outputs for {} members",
                outs.len(),
                self.members.len()
            )));
        }
        let outs: Vec<u64> = outs.iter_mut().map(|out| out.as_device_ptr().as_raw()).collect();
        for (member, &out) in self.members.iter().zip(&outs) {
            member.check_owns(out, "an output")?;
        }
        Ok(outs)
    }

    /// The three steps of a reduction (see [`Member`]), with `operator`'s
    /// user program set on every member's reducer meanwhile.
    fn enqueue<T: Element>(&mut self, shards: &[Shard<'_, T>], operator: sealed::Operator, outs: &[u64]) -> Result<()> {
        let sealed::Operator { combining, program } = operator;
        self.members
            .iter_mut()
            .for_each(|member| member.set_user(program.clone()));
        let enqueued = self.enqueue_steps(shards, combining, outs);
        self.members.iter_mut().for_each(|member| member.set_user(None));
        enqueued
    }

    /// [`Group::enqueue`] of `combining`; the combine runs on every
    /// member into `outs` (checked to be theirs), or on member 0 into its
    /// result slot if `outs` is empty.
    fn enqueue_steps<T: Element>(&mut self, shards: &[Shard<'_, T>], combining: Combining, outs: &[u64]) -> Result<()> {
        check_defined::<T>(combining)?;
        if let Some(shard) = shards.iter().find(|s| s.member >= self.members.len()) {
            return Err(Error::InvalidGroup(format!(
                "a shard is on member {}, but the group has {} members",
                shard.member,
                self.members.len()
            )));
        }
        if shards.iter().all(|s| s.data.is_empty()) {
            check_defined_on_empty(combining)?;
        }
        // A kernel reading another GPU's memory would fault and poison the
        // context; find such a shard first.
        for shard in shards.iter().filter(|s| !s.data.is_empty()) {
            self.member(shard.member)?
                .check_owns(shard.data.as_device_ptr().as_raw(), "a shard")?;
        }
        let _restore = RestoreContext::new();
        for (index, member) in self.members.iter_mut().enumerate() {
            let own: Vec<&DeviceSlice<T>> = shards.iter().filter(|s| s.member == index).map(|s| s.data).collect();
            member.make_current()?;
            member.enqueue_local(&own, combining)?;
        }
        self.enqueue_exchange::<T>(combining, outs)
    }

    /// Steps 2 and 3 after every member's local step: the all-gather of
    /// the members' values (or exact states), and the combine on every
    /// member into `outs`, or on member 0 into its result slot if `outs` is
    /// empty.
    fn enqueue_exchange<T: Element>(&mut self, combining: Combining, outs: &[u64]) -> Result<()> {
        let _restore = RestoreContext::new();
        nccl::group(|| {
            self.members
                .iter()
                .try_for_each(|member| member.enqueue_gather::<T>(combining))
        })?;
        if outs.is_empty() {
            let first = self.first_member()?;
            first.make_current()?;
            return first.enqueue_combine::<T>(combining, None);
        }
        for (member, &out) in self.members.iter_mut().zip(outs) {
            member.make_current()?;
            member.enqueue_combine::<T>(combining, Some(out))?;
        }
        Ok(())
    }

    /// Enqueues the copy of `value` to `outs[i]` on member `i`'s GPU.
    fn enqueue_stores<T: Element>(&mut self, value: T, outs: &[u64]) -> Result<()> {
        let _restore = RestoreContext::new();
        for (member, &out) in self.members.iter_mut().zip(outs) {
            member.make_current()?;
            member.enqueue_store(value, out)?;
        }
        Ok(())
    }

    /// Member 0, which [`Group::reduce`] returns the result from (a group
    /// has at least one member).
    fn first_member(&mut self) -> Result<&mut Member> {
        self.members
            .first_mut()
            .ok_or_else(|| Error::InvalidGroup("the group has no members".to_string()))
    }

    fn member(&self, member: usize) -> Result<&Member> {
        self.members.get(member).ok_or_else(|| {
            Error::InvalidGroup(format!(
                "there is no member {member}: the group has {}",
                self.members.len()
            ))
        })
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Each member frees its resources in its own context (see
        // `Member`'s drop); the caller's context is current again afterwards.
        let _restore = RestoreContext::new();
        self.members.clear();
    }
}

/// A [`Group`]'s members as the passes' [`Ranks`], over `shards`.
struct GroupRanks<'g, 's, 'd, T: Element> {
    group: &'g mut Group,
    shards: &'s [Shard<'d, T>],
}

impl<T: Element> Ranks<T> for GroupRanks<'_, '_, '_, T> {
    fn combined(&mut self, combining: Combining) -> Result<(T, u64)> {
        let operator = sealed::Operator {
            combining,
            program: None,
        };
        let value = self.group.reduce_combined(self.shards, operator)?;
        Ok((value, total_elements(self.shards.iter().map(|s| s.data.len() as u64))?))
    }

    fn set_parameter(&mut self, value: T) -> Result<()> {
        let _restore = RestoreContext::new();
        self.group.members.iter_mut().try_for_each(|member| {
            member.make_current()?;
            member.enqueue_parameter(value)
        })
    }
}

/// The id that the ranks of one [`Communicator`] share: 128 bytes from
/// `ncclGetUniqueId`, made by one rank and sent to the others out of band.
/// It prints and parses as 256 hex digits, for passing in an environment
/// variable or a file.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::multi::UniqueId;
/// let id = UniqueId::from_bytes([0xab; 128]); // rank 0 would use `UniqueId::new()?`
/// let text = id.to_string(); // hand this to the other ranks
/// assert_eq!(text, "ab".repeat(128));
/// assert_eq!(text.parse::<UniqueId>()?, id);
/// assert!("not hex".parse::<UniqueId>().is_err());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId([u8; 128]);

impl UniqueId {
    /// A new id (it names this host and a port that rank 0 listens on).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let id = reduce::multi::UniqueId::new()?; // on rank 0
    /// std::fs::write("nccl-id.txt", id.to_string())?; // for the other ranks to parse
    /// # Ok(()) }
    /// ```
    pub fn new() -> Result<UniqueId> {
        Ok(UniqueId(nccl::unique_id()?))
    }

    /// The id's bytes.
    ///
    /// ```
    /// let id = reduce::multi::UniqueId::from_bytes([7; 128]);
    /// assert_eq!(id.as_bytes()[0], 7);
    /// ```
    pub fn as_bytes(&self) -> &[u8; 128] {
        &self.0
    }

    /// The id with these bytes (for example received from rank 0 over MPI).
    ///
    /// ```
    /// use reduce::multi::UniqueId;
    /// let received = [1u8; 128];
    /// assert_eq!(UniqueId::from_bytes(received).as_bytes(), &received);
    /// ```
    pub fn from_bytes(bytes: [u8; 128]) -> UniqueId {
        UniqueId(bytes)
    }
}

impl fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UniqueId({self})")
    }
}

impl fmt::Display for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl FromStr for UniqueId {
    type Err = Error;

    fn from_str(text: &str) -> Result<UniqueId> {
        let invalid = || Error::InvalidGroup(format!("{text:?} is not a unique id: it must be 256 hex digits"));
        let text = text.trim();
        // Hex digits only: `from_str_radix` alone would take a `+` sign.
        if text.len() != 256 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        let mut bytes = [0u8; 128];
        for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).map_err(|_| invalid())?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| invalid())?;
        }
        Ok(UniqueId(bytes))
    }
}

/// One rank of a multi-process job: the GPU of this process, in a
/// communicator of `world_size` ranks on one node or several.
///
/// Every rank must make the same calls in the same order (each is a
/// collective: it waits for the others). A call that fails on one rank
/// before its collective (a shard in another GPU's memory, say) leaves the
/// other ranks waiting in theirs: as in any NCCL program, treat an error on
/// one rank as the end of the job. Rank 0 makes a [`UniqueId`] and
/// gives it to the others before they create their communicators; creating
/// one blocks until all ranks have.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::multi::{Communicator, UniqueId};
/// // Rank 0 ran `UniqueId::new()?` and shared `id.to_string()`, e.g. through
/// // an environment variable; every rank then runs:
/// let id: UniqueId = std::env::var("REDUCE_NCCL_ID").unwrap_or_default().parse()?;
/// let (rank, world_size) = (1, 4);
/// let mut comm = Communicator::new(&id, world_size, rank, 0)?; // this process's GPU: device 0
/// let shard = DeviceBuffer::from_slice(&[1u64, 2, 3])?;
/// let total: u64 = comm.reduce(&[&shard], reduce::Op::Sum)?; // over all ranks' shards
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Communicator {
    member: Member,
    rank: u32,
    world_size: u32,
}

impl Communicator {
    /// Rank `rank` of `world_size` on CUDA device `device`, whose primary
    /// context it makes current on the calling thread (allocate the shards
    /// there). Blocks until every rank has called it.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::multi::{Communicator, UniqueId};
    /// # let id = UniqueId::from_bytes([0; 128]);
    /// // `id` is rank 0's `UniqueId`, parsed from the text it shared.
    /// let comm = Communicator::new(&id, 2, 1, 0)?; // rank 1 of 2, on this machine's device 0
    /// assert_eq!((comm.rank(), comm.world_size()), (1, 2));
    /// assert!(matches!(Communicator::new(&id, 2, 2, 0), Err(reduce::Error::InvalidGroup(_)))); // no rank 2 of 2
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`Error::InvalidGroup`] if `rank ≥ world_size` or the device
    /// does not exist; [`Error::NcclUnavailable`]; NCCL's and CUDA's errors.
    pub fn new(id: &UniqueId, world_size: u32, rank: u32, device: u32) -> Result<Communicator> {
        nccl::load()?;
        if rank >= world_size {
            return Err(Error::InvalidGroup(format!(
                "rank {rank} is not below the world size {world_size}"
            )));
        }
        cust::init(cust::CudaFlags::empty())?;
        let count = Device::num_devices()?;
        if device >= count {
            return Err(Error::InvalidGroup(format!(
                "there is no CUDA device {device}: this machine has {count}"
            )));
        }
        let context = Context::new(Device::get_device(device)?)?;
        let comm = nccl::Comm::init_rank(&id.0, world_size as i32, rank as i32)?;
        let member = Member::new(context, device, comm, world_size as usize)?;
        Ok(Communicator {
            member,
            rank,
            world_size,
        })
    }

    /// This process's rank.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// # let id = reduce::multi::UniqueId::from_bytes([0; 128]);
    /// let comm = reduce::multi::Communicator::new(&id, 4, 3, 0)?;
    /// assert_eq!(comm.rank(), 3);
    /// # Ok(()) }
    /// ```
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// # let id = reduce::multi::UniqueId::from_bytes([0; 128]);
    /// let comm = reduce::multi::Communicator::new(&id, 4, 3, 0)?;
    /// assert_eq!(comm.world_size(), 4);
    /// # Ok(()) }
    /// ```
    pub fn world_size(&self) -> u32 {
        self.world_size
    }

    /// The stream this rank's work runs on.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// # let id = reduce::multi::UniqueId::from_bytes([0; 128]);
    /// let comm = reduce::multi::Communicator::new(&id, 2, 0, 0)?;
    /// comm.stream().synchronize()?; // the blocking calls already wait for it
    /// # Ok(()) }
    /// ```
    pub fn stream(&self) -> &Stream {
        self.member.stream()
    }

    /// Reduces, with `op`, the data made of every rank's `shards` (this
    /// rank's in order, ranks in rank order) and returns the result (a `T`;
    /// [`ExactMeanVar`]'s `(mean, variance)`) to the host on every rank.
    /// Blocks until it is there.
    ///
    /// [`Error::Empty`] if every rank's shards are empty and `op` has no
    /// identity (every rank returns it). The lengths are exchanged with the
    /// values, in the same NCCL group.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// # let id = reduce::multi::UniqueId::from_bytes([0; 128]);
    /// let (world_size, rank) = (2, 0);
    /// let mut comm = reduce::multi::Communicator::new(&id, world_size, rank, rank)?;
    /// let shard = DeviceBuffer::from_slice(&[rank as f64 + 1.0; 10])?; // ten 1s on rank 0, ten 2s on rank 1
    /// assert_eq!(comm.reduce(&[&shard], reduce::Op::Sum)?, 30.0); // on every rank
    /// # Ok(()) }
    /// ```
    pub fn reduce<T: Element, C: Combine<T>>(&mut self, shards: &[&DeviceSlice<T>], op: C) -> Result<C::Output> {
        let (sealed::Operator { combining, program }, output) = match op.plan() {
            sealed::Plan::Combined(operator, output) => (operator, output),
            sealed::Plan::Passes(passes) => return self.in_passes(shards, passes),
        };
        self.check(shards, combining)?;
        self.member.set_user(program);
        let reduced = self.member.reduce_counting(shards, combining);
        self.member.set_user(None);
        let (value, total_length) = reduced?;
        if total_length == 0 {
            check_defined_on_empty(combining)?;
        }
        Ok(output(value))
    }

    /// The same reduction as [`Communicator::reduce`], leaving the result in
    /// `out` on this rank's GPU; returns once it is there (it waits for
    /// [`Communicator::stream`], so the borrowed shards and output are free
    /// again).
    ///
    /// If every rank's shards are empty and `op` has no identity, `out`
    /// receives the operator's neutral element (`-inf` for a float `Max`,
    /// `+inf` for `Min`, `T::MIN`/`T::MAX` for integers, NaN for
    /// `NanMax`/`NanMin`): seeing the other ranks' lengths would need a host
    /// round trip. Use [`Communicator::reduce`] where that case can occur.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::{memory::DeviceBox, prelude::*};
    /// # let id = reduce::multi::UniqueId::from_bytes([0; 128]);
    /// let (world_size, rank) = (2, 1);
    /// let mut comm = reduce::multi::Communicator::new(&id, world_size, rank, rank)?;
    /// let shard = DeviceBuffer::from_slice(&[rank as i32 * 10; 3])?; // 0, 0, 0 and 10, 10, 10
    /// let mut out = DeviceBox::new(&0i32)?;
    /// comm.all_reduce_into(&[&shard], reduce::Op::Max, &mut out)?;
    /// assert_eq!(out.as_host_value()?, 10); // in this rank's GPU memory
    /// # Ok(()) }
    /// ```
    pub fn all_reduce_into<T: Element>(
        &mut self,
        shards: &[&DeviceSlice<T>],
        op: impl Combine<T, Output = T>,
        out: &mut DeviceBox<T>,
    ) -> Result<()> {
        let out = out.as_device_ptr().as_raw();
        self.member.check_owns(out, "the output")?;
        let enqueued = match op.plan() {
            sealed::Plan::Combined(sealed::Operator { combining, program }, _) => {
                self.check(shards, combining)?;
                self.member.set_user(program);
                let enqueued = self.enqueue_all_reduce(shards, combining, out);
                self.member.set_user(None);
                enqueued
            }
            sealed::Plan::Passes(passes) => self
                .in_passes(shards, passes)
                .and_then(|value| self.member.enqueue_store(value, out)),
        };
        // Wait even after a failed step: the earlier steps borrow `shards`.
        let waited = self.member.stream().synchronize();
        enqueued.and(waited.map_err(Error::from))
    }

    /// The exact dot product ([`ExactDot`]) of the vectors `a` and `b`, made
    /// of every rank's shards (`a[i]` and `b[i]` a pair of one length on
    /// this rank's GPU; ranks in rank order), returned to the host on every
    /// rank: bitwise [`ExactDot::fold`] of the joined vectors, as
    /// [`Group::reduce_pair`]. Blocks until it is there. Errors, before
    /// anything is enqueued: [`Error::InvalidGroup`] if `a` and `b` do not
    /// have as many shards or a shard is not on this rank's GPU;
    /// [`Error::LengthMismatch`] if a pair's lengths differ.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::prelude::*;
    /// # let id = reduce::multi::UniqueId::from_bytes([0; 128]);
    /// let (world_size, rank) = (2, 0);
    /// let mut comm = reduce::multi::Communicator::new(&id, world_size, rank, rank)?;
    /// let a = DeviceBuffer::from_slice(&[0.5f64; 4])?;
    /// let b = DeviceBuffer::from_slice(&[rank as f64 + 1.0; 4])?;
    /// assert_eq!(comm.reduce_pair(&[&a], &[&b], reduce::ExactDot)?, 6.0); // 2 + 4, on every rank
    /// # Ok(()) }
    /// ```
    pub fn reduce_pair<T: FloatElement>(
        &mut self,
        a: &[&DeviceSlice<T>],
        b: &[&DeviceSlice<T>],
        what: ExactDot,
    ) -> Result<T> {
        let ExactDot = what;
        let enqueued = self.enqueue_pair(a, b, None);
        // Wait even after a failed step: the earlier steps borrow the shards.
        let waited = self.member.stream().synchronize().map_err(Error::from);
        enqueued.and(waited)?;
        self.member.result_to_host()
    }

    /// [`Communicator::reduce_pair`], leaving the result in `out` on this
    /// rank's GPU; returns once it is there. Errors as
    /// [`Communicator::reduce_pair`]'s, and [`Error::InvalidGroup`] if
    /// `out` is not on this rank's GPU.
    pub fn all_reduce_pair_into<T: FloatElement>(
        &mut self,
        a: &[&DeviceSlice<T>],
        b: &[&DeviceSlice<T>],
        what: ExactDot,
        out: &mut DeviceBox<T>,
    ) -> Result<()> {
        let ExactDot = what;
        let out = out.as_device_ptr().as_raw();
        self.member.check_owns(out, "the output")?;
        let enqueued = self.enqueue_pair(a, b, Some(out));
        let waited = self.member.stream().synchronize().map_err(Error::from);
        enqueued.and(waited)
    }

    /// The steps of [`Communicator::reduce_pair`]: the pairs checked, this
    /// rank's exact state of its pairs' products, the all-gather and the
    /// merge into `out` (or the result slot).
    fn enqueue_pair<T: FloatElement>(
        &mut self,
        a: &[&DeviceSlice<T>],
        b: &[&DeviceSlice<T>],
        out: Option<u64>,
    ) -> Result<()> {
        check_pairs(a.len(), b.len(), a.iter().zip(b).map(|(x, y)| (x.len(), y.len())))?;
        let pairs: Vec<(&DeviceSlice<T>, &DeviceSlice<T>)> = a.iter().zip(b).map(|(&x, &y)| (x, y)).collect();
        let combining = Combining::Exact(ExactOf::Elements);
        self.check(a, combining)?;
        self.check(b, combining)?;
        self.member.enqueue_local_dot(&pairs)?;
        self.member.enqueue_gather::<T>(combining)?;
        self.member.enqueue_combine::<T>(combining, out)
    }

    /// The result of `passes` over every rank's shards, on the host.
    fn in_passes<T: Element, O>(&mut self, shards: &[&DeviceSlice<T>], passes: sealed::Passes<T, O>) -> Result<O> {
        // The passes' kernels are the float types' exact sums and maxima.
        self.check(shards, Combining::Exact(ExactOf::Elements))?;
        (passes.0)(&mut CommunicatorRank {
            member: &mut self.member,
            shards,
        })
    }

    /// The three steps of [`Communicator::all_reduce_into`], enqueued.
    fn enqueue_all_reduce<T: Element>(
        &mut self,
        shards: &[&DeviceSlice<T>],
        combining: Combining,
        out: u64,
    ) -> Result<()> {
        self.member.enqueue_local(shards, combining)?;
        // One rank per process: no NCCL group needed.
        self.member.enqueue_gather::<T>(combining)?;
        self.member.enqueue_combine::<T>(combining, Some(out))
    }

    /// The checks before the collective: the op is defined for `T` and the
    /// shards are on this rank's GPU. Leaves this rank's context current.
    fn check<T: Element>(&self, shards: &[&DeviceSlice<T>], combining: Combining) -> Result<()> {
        check_defined::<T>(combining)?;
        for shard in shards.iter().filter(|s| !s.is_empty()) {
            self.member.check_owns(shard.as_device_ptr().as_raw(), "a shard")?;
        }
        self.member.make_current()
    }
}

/// A [`Communicator`]'s rank as the passes' [`Ranks`], over its `shards`.
struct CommunicatorRank<'m, 's, 'd, T: Element> {
    member: &'m mut Member,
    shards: &'s [&'d DeviceSlice<T>],
}

impl<T: Element> Ranks<T> for CommunicatorRank<'_, '_, '_, T> {
    fn combined(&mut self, combining: Combining) -> Result<(T, u64)> {
        self.member.reduce_counting(self.shards, combining)
    }

    fn set_parameter(&mut self, value: T) -> Result<()> {
        self.member.enqueue_parameter(value)
    }
}

/// [`Error::InvalidGroup`] unless `a` and `b` have as many shards (`a_len`,
/// `b_len`); [`Error::LengthMismatch`] unless each pair's `lengths` agree.
fn check_pairs(a_len: usize, b_len: usize, mut lengths: impl Iterator<Item = (usize, usize)>) -> Result<()> {
    if a_len != b_len {
        return Err(Error::InvalidGroup(format!(
            "reduce_pair pairs a's shard i with b's shard i: {a_len} shards and {b_len}"
        )));
    }
    match lengths.find(|(left, right)| left != right) {
        Some((left, right)) => Err(Error::LengthMismatch { left, right }),
        None => Ok(()),
    }
}

/// [`Error::UnsupportedOp`] unless `combining`'s operator is defined for
/// `T` (the exact sum is, by its [`Combine`] bound).
fn check_defined<T: Element>(combining: Combining) -> Result<()> {
    match combining {
        Combining::Op(op) if !op.is_defined_for(T::TYPE.kernel()) => Err(Error::unsupported_op(op, T::TYPE)),
        _ => Ok(()),
    }
}

/// [`Error::Empty`] if `combining` has no value for an empty input (the
/// exact sum's is `+0.0`).
fn check_defined_on_empty(combining: Combining) -> Result<()> {
    match combining {
        Combining::Op(op) if !op.defined_on_empty() => Err(Error::empty(op)),
        _ => Ok(()),
    }
}
