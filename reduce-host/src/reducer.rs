//! [`Reducer`]: the whole-input launches, written once over a [`Backend`].
//! The dispatch layer of the library: it checks the call, picks the kernel
//! and its launch shape, and launches it through the backend. The public
//! calls, [`Reducer::reduce`] and [`Reducer::reduce_over`], take a
//! [`Reduction`](crate::Reduction) and an [`Over`](crate::Over).

use crate::axes::RowRuns;
#[cfg(feature = "cust")]
use crate::backend::launcher::Launcher;
use crate::backend::launcher::{element_address, partial_words, Access, Launch, StreamHandle};
use crate::backend::Backend;
#[cfg(feature = "cust")]
use crate::backend::Cuda;
use crate::element::{ArgInput, Element, ElementType, FloatElement, WidensTo};
use crate::error::{Error, Result};
#[cfg(feature = "cust")]
use crate::policy::Policy;
use crate::reduction::PairReduction;
use crate::shape::{self, LaunchShape};
#[cfg(feature = "cust")]
use cust::memory::DeviceSlice;
#[cfg(feature = "cust")]
use cust::stream::Stream;
use cust_core::DeviceCopy;
use kernels_gpu::abi::Op;
use kernels_gpu::abi::{
    ArgArgs, ConvertArgs, DivideArgs, DotArgs, ExactArgs, ExactDotArgs, ExactSchedule, Finish, Kernel, ReduceArgs,
    EXACT_MEAN, EXACT_ROOT, EXACT_STATES_IN, EXACT_VARIANCE,
};

/// Reduces buffers with kernels loaded once: on a GPU ([`Cuda`], the
/// default), or on the CPU under the SIMT emulator
/// ([`Emulator`](crate::emulated::Emulator) = `Reducer<Emulated>`).
///
/// A `Reducer<Cuda>` owns the kernel modules it has loaded (each the first
/// time one of its kernels is launched: see
/// [Which kernels run](crate#which-kernels-run)), a non-blocking stream and a
/// small workspace per stream, so repeated calls allocate nothing and load
/// nothing. The free functions
/// ([`crate::sum`], [`crate::reduce`], ...) use one `Reducer` per thread and
/// context behind the scenes.
///
/// # What × where
/// Every reduction is *what* (a [`Reduction`](crate::Reduction): an
/// [`Op`](crate::Op), [`Widened`](crate::Widened), [`ArgMax`](crate::ArgMax),
/// [`Var`](crate::Var), …) *over where* (an [`Over`](crate::Over): the whole
/// input, segments, rows or axes), one call per form:
/// - [`Reducer::reduce`]: the whole input, its value returned to the host;
/// - [`Reducer::reduce_over`]: one result per segment, row or position of
///   the kept axes, in a new buffer, with the results' shape;
/// - [`Scope::reduce_into`](crate::Scope::reduce_into): either, enqueued on
///   your stream into your output, without waiting.
///
/// # Blocking calls and scopes
/// The methods of `Reducer` block until their result is on the host (or, for
/// [`Reducer::reduce_over`], in the buffer it returns), running on the
/// reducer's own stream with its own workspace (one 16-byte partial per
/// block and tickets that each launch leaves at zero). To enqueue work on
/// your own streams without waiting, use a [`Scope`](crate::Scope)
/// ([`Reducer::scope`]).
///
/// # Example
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// use reduce::{ArgMax, Op, Over};
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[1.5f32, -2.0, 4.0, 8.25])?;
/// let mut reducer = reduce::Reducer::new()?;
/// assert_eq!(reducer.reduce(&buf, Op::Max)?, 8.25);
/// assert_eq!(reducer.reduce(&buf.index(1..), Op::Sum)?, 10.25);
/// assert_eq!(reducer.reduce(&buf, ArgMax)?, (3, 8.25));
/// let rows = reducer.reduce_over(&buf, Op::Sum, Over::Rows { rows: 2, len: 2 })?;
/// assert_eq!(rows.values.as_host_vec()?, [-0.5, 12.25]);
/// # Ok(()) }
/// ```
#[cfg(feature = "cust")]
#[derive(Debug)]
pub struct Reducer<B: Backend = Cuda> {
    pub(crate) backend: B,
}

/// Reduces buffers with kernels loaded once: on the CPU under the SIMT
/// emulator ([`Emulator`](crate::emulated::Emulator) = `Reducer<Emulated>`).
/// With the feature `cust`, also on a GPU, over cust's buffers (`Cuda`, the
/// default backend then); cudarc's buffers have their own reducer,
/// `reduce::cudarc::Reducer` (feature `cudarc`).
#[cfg(not(feature = "cust"))]
#[derive(Debug)]
pub struct Reducer<B: Backend> {
    pub(crate) backend: B,
}

#[cfg(feature = "cust")]
impl Reducer<Cuda> {
    /// A reducer for the current context's device, with the tuned launch
    /// policy for its compute capability.
    ///
    /// Errors: [`Error::NoContext`] if no context is current,
    /// [`Error::UnsupportedDevice`] before compute capability 7.0, or a CUDA
    /// error (for example out of memory).
    ///
    /// ```
    /// // No context is current on this thread (no GPU needed to see it):
    /// assert!(matches!(reduce::Reducer::new(), Err(reduce::Error::NoContext)));
    /// ```
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// let _ctx = cust::quick_init()?;
    /// let mut reducer = reduce::Reducer::new()?; // loads no kernel yet
    /// let buf = cust::memory::DeviceBuffer::from_slice(&[2u32, 3, 7])?;
    /// assert_eq!(reducer.reduce(&buf, reduce::Op::Product)?, 42); // loads the u32 module
    /// # Ok(()) }
    /// ```
    pub fn new() -> Result<Self> {
        Ok(Reducer {
            backend: Cuda::new(None)?,
        })
    }

    #[doc(hidden)]
    /// A reducer that launches with `policy` instead of the tuned one.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{Op, Policy, Reducer};
    /// let _ctx = cust::quick_init()?;
    /// let mut reducer = Reducer::with_policy(Policy::new(128)?)?;
    /// assert_eq!(reducer.launch_shape::<f32>(Op::Sum, 1 << 24)?.threads_per_block, 128);
    /// # Ok(()) }
    /// ```
    pub fn with_policy(policy: Policy) -> Result<Self> {
        Ok(Reducer {
            backend: Cuda::new(Some(policy))?,
        })
    }

    /// The stream the blocking calls run on: a non-blocking stream of the
    /// reducer's own, which does not wait for work on the legacy default stream.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), reduce::Error> {
    /// use cust::stream::StreamFlags;
    /// let _ctx = cust::quick_init()?;
    /// let reducer = reduce::Reducer::new()?;
    /// assert!(reducer.stream().get_flags()?.contains(StreamFlags::NON_BLOCKING));
    /// # Ok(()) }
    /// ```
    pub fn stream(&self) -> &Stream {
        self.backend.stream()
    }

    /// Enqueues the production kernel for `op` on this reducer's own stream,
    /// also for an empty `input` where `op` has no identity: the kernel then
    /// writes the operator's neutral element (`-inf` for a float `Max`), which
    /// is what [`crate::multi`] needs for a GPU whose shards are all empty.
    pub(crate) fn enqueue_partial<T: Element>(&mut self, input: &DeviceSlice<T>, op: Op, out: u64) -> Result<()> {
        self.enqueue_reduce(input, op, out, None, true)
    }

    /// The result slot's device address.
    pub(crate) fn result_slot(&mut self) -> u64 {
        self.backend.result_slot()
    }
}

impl<B: Backend> Reducer<B> {
    /// The dot product `Σ a[i]·b[i]` (any [`Element`] type, one launch,
    /// deterministic), returned to the host. An empty pair of inputs gives 0.
    /// Integers wrap, floats follow IEEE 754 (each product is rounded, then
    /// summed in a tree); the products are formed as the inputs are read,
    /// with no temporary array.
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
    pub fn dot<T: Element>(&mut self, a: &B::Slice<T>, b: &B::Slice<T>) -> Result<T> {
        self.blocking(|reducer, out| reducer.enqueue_dot(a, b, out, None))
    }

    /// A reduction of the pairs `(a[i], b[i])` of two inputs
    /// ([`PairReduction`]), returned to the host: [`ExactDot`](crate::ExactDot)
    /// (the dot product, the same bits on every GPU), or a user operator
    /// (`&`[`User`](crate::User)): its `combine` over its `map_pair` of each pair (by
    /// default `a[i] * b[i]`: a dot product in the operator's combine), the
    /// identity if both are empty. [`Error::LengthMismatch`] if their
    /// lengths differ.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::user::{Operator, Value};
    /// use reduce::{emulated::Emulator, ExactDot, User};
    /// /// The squared distance Σ (a - b)².
    /// #[derive(Clone, Copy, Debug)]
    /// struct SquaredDistance;
    /// impl Operator<f32> for SquaredDistance {
    ///     fn identity(&self) -> f32 {
    ///         0.0
    ///     }
    ///     fn combine<V: Value<f32>>(&self, a: V, b: V) -> V {
    ///         a + b
    ///     }
    ///     fn map_pair<V: Value<f32>>(&self, a: V, b: V) -> V {
    ///         (a - b) * (a - b)
    ///     }
    /// }
    /// let what = User::new(SquaredDistance)?;
    /// let mut emulator = Emulator::default();
    /// assert_eq!(emulator.reduce_pair(&[1.0, 2.0, 3.0], &[1.0, 4.0, 6.0], &what)?, 13.0);
    /// assert_eq!(emulator.reduce_pair(&[1.0, 2.0, 3.0], &[1.0, 4.0, 6.0], ExactDot)?, 27.0);
    /// # Ok(()) }
    /// ```
    pub fn reduce_pair<T: DeviceCopy, W: PairReduction<T>>(
        &mut self,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        what: W,
    ) -> Result<T> {
        self.blocking(|reducer, out| what.enqueue(reducer, a, b, out, None))
    }

    #[doc(hidden)]
    /// The launch shape a reduction of `len` elements of `T` with `op` uses.
    ///
    /// It depends only on `len`, the element size and the device: threads per
    /// block come from the [`Policy`] (tuned per compute capability), and the
    /// grid is the smaller of "enough blocks for one full tile of 16-byte loads
    /// per thread" and "as many blocks as the device holds at once" (SMs ×
    /// the occupancy calculator's blocks per SM), at least 1.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, shape::LaunchShape, Op};
    /// let mut emulator = Emulator::default(); // 64-thread blocks, at most 6
    /// // A thread's tile is four 16-byte loads: 16 f32s or 8 f64s.
    /// let f32s = emulator.launch_shape::<f32>(Op::Sum, 2000)?;
    /// assert_eq!(f32s, LaunchShape { blocks: 2, threads_per_block: 64 });
    /// assert_eq!(emulator.launch_shape::<f64>(Op::Sum, 2000)?.blocks, 4);
    /// # Ok(()) }
    /// ```
    pub fn launch_shape<T: Element>(&mut self, op: crate::Op, len: usize) -> Result<LaunchShape> {
        let kernel = Kernel::Reduce {
            op: op.kernel(),
            element: T::TYPE.kernel(),
        };
        self.production_shape(kernel, len, T::TYPE.size())
    }

    /// Enqueues the production kernel for `op` over `input`, its result to
    /// `out`. An empty `input` where `op` has no identity is
    /// [`Error::Empty`], unless `neutral_if_empty`: the kernel then writes
    /// the operator's neutral element (`-inf` for a float `Max`).
    pub(crate) fn enqueue_reduce<T: Element>(
        &mut self,
        input: &B::Slice<T>,
        op: Op,
        out: u64,
        stream: Option<StreamHandle>,
        neutral_if_empty: bool,
    ) -> Result<()> {
        // An op the type lacks is that error whatever the length (as in the
        // segmented calls), before the empty-input rule.
        if !op.is_defined_for(T::TYPE.kernel()) {
            return Err(Error::unsupported_op(op, T::TYPE));
        }
        let (address, len) = checked_parts::<B, T>(input)?;
        if len == 0 && !op.defined_on_empty() && !neutral_if_empty {
            return Err(Error::empty(op));
        }
        let kernel = Kernel::Reduce {
            op,
            element: T::TYPE.kernel(),
        };
        self.launch_one_input::<T>(kernel, address, len, Access::write::<T>("out", out, 1), stream)
    }

    /// Enqueues the exact sum `of` `input` ([`crate::ExactSum`],
    /// [`crate::ExactNanSum`]), its result to `out`: one launch (the fast
    /// path, and where it cannot be exact the last block's exact pass, which
    /// uses the stream's scratch).
    pub(crate) fn enqueue_exact_sum<T: FloatElement>(
        &mut self,
        input: &B::Slice<T>,
        of: ExactOf,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let (input, len) = checked_parts::<B, T>(input)?;
        let accesses = [
            Access::read::<T>("input", input, len),
            Access::write::<T>("out", out, 1),
        ];
        self.launch_exact::<T>(of, input, ExactRows::dense(1, len), 0, out, &accesses, stream)
    }

    /// Enqueues the exact dot product of `a` and `b` ([`crate::ExactDot`]),
    /// its result to `out`: one launch, as [`Reducer::enqueue_exact_sum`].
    pub(crate) fn enqueue_exact_dot<T: FloatElement>(
        &mut self,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let ((a, b, len), accesses) = pair_to_one::<B, T>(a, b, out)?;
        let kernel = Kernel::ExactDot {
            element: T::TYPE.kernel(),
        };
        self.launch_exact_dot::<T>(kernel, (a, b, len), out, &accesses, stream)
    }

    /// Enqueues, on the own stream, the exact dot product of `a` and `b` as
    /// an exact state ([`exact_state_words`] `u64`s) to `out`, for
    /// [`Reducer::enqueue_exact_merge`]: how the pairs of shards of a
    /// sharded dot product are summed exactly.
    #[cfg(any(feature = "cust", test))]
    pub(crate) fn enqueue_exact_dot_state<T: FloatElement>(
        &mut self,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        out: u64,
    ) -> Result<()> {
        let (a, b, len) = checked_pair::<B, T>(a, b)?;
        let accesses = [
            Access::read::<T>("a", a, len),
            Access::read::<T>("b", b, len),
            Access::write::<u64>("out", out, exact_state_words(T::TYPE)?),
        ];
        let kernel = Kernel::ExactDotState {
            element: T::TYPE.kernel(),
        };
        self.launch_exact_dot::<T>(kernel, (a, b, len), out, &accesses, None)
    }

    /// Launches `kernel` ([`Kernel::ExactDot`] or its state form) over the
    /// `len` pairs at `a` and `b`, its result to `out`.
    fn launch_exact_dot<T: FloatElement>(
        &mut self,
        kernel: Kernel,
        (a, b, len): (u64, u64, usize),
        out: u64,
        accesses: &[Access],
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let scratch = self.backend.scratch(stream, exact_state_words(T::TYPE)?)?;
        self.launch_whole(kernel, len, T::TYPE.size(), accesses, stream, |partials, ticket| {
            ExactDotArgs {
                a,
                b,
                len: len as u64,
                partials,
                ticket,
                scratch,
                out,
            }
        })
    }

    /// Enqueues, on the own stream, the exact sum `of` `input` as an exact
    /// state ([`exact_state_words`] `u64`s) to `out`, for
    /// [`Reducer::enqueue_exact_merge`]: how the parts of a sharded input
    /// are summed exactly. `T` is `f32` or `f64`; `of` is not
    /// [`ExactOf::Mean`], and its finish (a variance's division) is not
    /// applied: the state is of the sum.
    #[cfg(any(feature = "cust", test))]
    pub(crate) fn enqueue_exact_state<T: Element>(&mut self, input: &B::Slice<T>, of: ExactOf, out: u64) -> Result<()> {
        let (input, len) = checked_parts::<B, T>(input)?;
        let accesses = [
            Access::read::<T>("input", input, len),
            Access::write::<u64>("out", out, exact_state_words(T::TYPE)?),
        ];
        self.launch_exact::<T>(
            of,
            input,
            ExactRows::dense(1, len),
            kernels_gpu::abi::EXACT_STATE_OUT,
            out,
            &accesses,
            None,
        )
    }

    /// Enqueues, on the own stream, the sum of the `count` exact states of
    /// `T`s at `states` into `out`: rounded to a `T`, or, with
    /// `state_out`, as a state again.
    #[cfg(any(feature = "cust", test))]
    pub(crate) fn enqueue_exact_merge<T: Element>(
        &mut self,
        states: u64,
        count: usize,
        out: u64,
        state_out: bool,
    ) -> Result<()> {
        let words = exact_state_words(T::TYPE)?;
        // The kernel adds up to 2^30 states' digits inside an i64.
        if count >= 1 << 30 {
            return Err(Error::InvalidGroup(format!(
                "{count} exact sums to merge: at most 2^30 - 1 (fewer shards per GPU, or fewer GPUs)"
            )));
        }
        let (form, output) = if state_out {
            (
                kernels_gpu::abi::EXACT_STATE_OUT,
                Access::write::<u64>("out", out, words),
            )
        } else {
            (0, Access::write::<T>("out", out, 1))
        };
        let state_words = count
            .checked_mul(words)
            .ok_or_else(|| Error::internal("more exact states than a usize counts"))?;
        let accesses = [Access::read::<u64>("states", states, state_words), output];
        // The merge kernel (`Kernel::ExactMerge`), the same for every sum.
        self.launch_exact::<T>(
            ExactOf::Elements,
            states,
            ExactRows::dense(1, count),
            EXACT_STATES_IN | form,
            out,
            &accesses,
            None,
        )
    }

    /// Launches the exact sum kernel `of` `T`s on the `len` elements at
    /// `input` (or states, with [`EXACT_STATES_IN`]) in `form`, into `out`
    /// (for [`ExactOf::Mean`], a form of 0: the rounded value); with
    /// `rows.count` past one, on each of the rows of `len` elements there,
    /// over its own `grid / rows` blocks (with a ticket, partial slots and
    /// exact scratch of its own), into `rows.count` results; rows in runs
    /// by [`Kernel::ExactRowRuns`] (a form of 0).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_exact<T: Element>(
        &mut self,
        of: ExactOf,
        input: u64,
        rows_of: ExactRows,
        form: u64,
        out: u64,
        accesses: &[Access],
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let ExactRows { count: rows, len, runs } = rows_of;
        let (kernel, form) = exact_kernel(of, T::TYPE.kernel(), form)?;
        let kernel = rows_of.kernel(kernel)?;
        let (shifts, finish_param) = of.parameters();
        // The variance's means (logsumexp's maxima), which its kernel reads.
        let mut accesses = accesses.to_vec();
        if shifts != 0 {
            accesses.push(Access::read::<T>("per-part values", shifts, rows));
        }
        let too_many = || Error::internal("more exact rows than a usize counts");
        // States are merged by one block: the launch of one element.
        let shape_len = match form & EXACT_STATES_IN != 0 {
            true => 1,
            false => rows.checked_mul(len).ok_or_else(too_many)?,
        };
        let shape = self.production_shape(kernel, shape_len, T::TYPE.size())?;
        // Each row over `parts` blocks of its own: at least one, so with
        // more rows than the grid holds, a grid past it (the SMs take the
        // blocks as others finish).
        let row_count = u32::try_from(rows).map_err(|_| too_many())?;
        if row_count == 0 {
            return Err(Error::internal("an exact launch over no rows"));
        }
        let parts = shape::exact_row_parts(self.backend.tuning(), shape.blocks, row_count, len, T::TYPE.size());
        let blocks = parts
            .checked_mul(row_count)
            .ok_or(Error::internal("more exact blocks than a grid counts"))?;
        // Rows of several blocks in waves past the grid: their partial slots
        // and tickets (zeroed) after the rows' states in the scratch, as the
        // workspace has them for the grid only.
        let in_waves = parts > 1 && blocks > shape.blocks;
        let state_words = exact_state_words(T::TYPE)?.checked_mul(rows).ok_or_else(too_many)?;
        let slot_words = match in_waves {
            true => partial_words(blocks).ok_or_else(too_many)?,
            false => 0,
        };
        let ticket_words = if in_waves { rows.div_ceil(2) } else { 0 };
        let scratch_words = state_words
            .checked_add(slot_words)
            .and_then(|words| words.checked_add(ticket_words))
            .ok_or_else(too_many)?;
        let scratch = self.backend.scratch(stream, scratch_words)?;
        let workspace = self.backend.workspace(stream)?;
        let word_address = |words: usize| {
            (words as u64)
                .checked_mul(8)
                .and_then(|bytes| scratch.checked_add(bytes))
                .ok_or_else(too_many)
        };
        // One ticket a row: the segmented kernels' (one a block of the largest grid).
        let (partials, ticket) = if in_waves {
            let tickets = word_address(scratch_words.saturating_sub(ticket_words))?;
            // SAFETY: the scratch's last `ticket_words` words, 8-byte
            // aligned: `rows` 4-byte tickets, which only this launch uses.
            unsafe { self.backend.zero_words(tickets, rows, stream)? };
            (word_address(state_words)?, tickets)
        } else if rows == 1 {
            (workspace.partials, workspace.ticket)
        } else {
            (workspace.partials, workspace.segment_tickets)
        };
        let launch = Launch {
            kernel,
            shape: LaunchShape { blocks, ..shape },
            shared_bytes: 0,
            args: ExactArgs {
                input,
                len: len as u64,
                partials,
                ticket,
                scratch,
                out,
                form,
                shifts,
                finish_param,
                rows: rows as u64,
                row_pitch: runs.map_or(len as u64, |runs| runs.pitch),
                run_len: runs.map_or(0, |runs| runs.run_len as u64),
                run_pitch: runs.map_or(0, |runs| runs.run_pitch),
            },
            accesses: &accesses,
        };
        // SAFETY: the family's parameters over the buffers in `accesses`
        // (the inputs, checked element-aligned, the outputs the caller gave,
        // a per-part value a row where the map reads them) and the stream's
        // workspace and scratch: a partial slot a block (the workspace's,
        // one a block of the largest grid, or in waves past the grid the
        // scratch's), a ticket at zero a row of several blocks (the
        // segmented kernels' are one a block of the largest grid; in waves,
        // the scratch's, zeroed above; a row of one block uses none), an
        // exact state's scratch a row; the grid `rows` times `parts`; rows
        // in runs as the caller's accesses cover them.
        unsafe { self.backend.launch(&launch, stream) }
    }

    /// Enqueues the exact sums `of` each of `rows` rows of `len` `T`s, all
    /// of `input`, their results to `out`, by the whole-input kernel where
    /// [`Reducer::launch_exact_rows`] takes them. `Ok(false)`, nothing
    /// enqueued, where it does not, or where the shape is not `input`'s:
    /// the segmented kernels' work and errors.
    pub(crate) fn enqueue_exact_rows<T: FloatElement>(
        &mut self,
        input: &B::Slice<T>,
        (rows, len): (usize, usize),
        of: ExactOf,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<bool> {
        let (address, total) = checked_parts::<B, T>(input)?;
        if rows.checked_mul(len) != Some(total) {
            return Ok(false);
        }
        let accesses = [
            Access::read::<T>("input", address, total),
            Access::write::<T>("out", out, rows),
        ];
        self.launch_exact_rows::<T>(of, address, ExactRows::dense(rows, len), out, &accesses, stream)
    }

    /// Launches the exact sums `of` each of the rows of `T`s at `address`
    /// (one after the other, or each in runs: `rows`), their results to
    /// `out`, by the whole-input kernel (of rows in runs,
    /// [`Kernel::ExactRowRuns`]): each row over its own `grid / rows` blocks, as
    /// one row alone would be spread over the grid (the segmented kernels
    /// keep a few long rows to fewer registers' worth of blocks), or, where
    /// that would leave a row fewer than two blocks, one block a row (more,
    /// in waves, where either leaves the SMs' blocks idle:
    /// `shape::exact_row_parts`), where
    /// a row gives each of its threads `Tuning::exact_row_min_tiles` tiles
    /// and the rows are too few for a warp each of the segmented grid (or
    /// give `Tuning::exact_lean_row_tiles` for a whole-input kernel that
    /// fits more blocks an SM). `Ok(false)`, nothing launched, for empty or
    /// shorter rows, or where the whole-input kernel fits fewer blocks an
    /// SM than the segmented one: the segmented kernels' rows.
    pub(crate) fn launch_exact_rows<T: FloatElement>(
        &mut self,
        of: ExactOf,
        address: u64,
        rows_of: ExactRows,
        out: u64,
        accesses: &[Access],
        stream: Option<StreamHandle>,
    ) -> Result<bool> {
        let ExactRows { count: rows, len, runs } = rows_of;
        let Some(total) = rows.checked_mul(len).filter(|&total| total > 0) else {
            return Ok(false);
        };
        if rows > 1 {
            let element = T::TYPE.kernel();
            let kernel = rows_of.kernel(exact_kernel(of, element, 0)?.0)?;
            let blocks = self.production_shape(kernel, total, T::TYPE.size())?.blocks;
            let segmented = Kernel::ExactSegments {
                op: of.op(),
                element,
                schedule: match runs {
                    Some(_) => ExactSchedule::Runs,
                    None => ExactSchedule::FixedOrder,
                },
                mean: of.finish() == Finish::Mean,
            };
            let two_blocks_a_row = rows.checked_mul(2).is_some_and(|needed| blocks as usize >= needed);
            let tuning = self.backend.tuning();
            let (whole_cap, segmented_cap) = (self.backend.grid_cap(kernel)?, self.backend.grid_cap(segmented)?);
            let fills = |tiles| shape::fills_block_tiles(tuning, len, T::TYPE.size(), tiles);
            // Rows enough for a warp each of the segmented grid are its
            // warps' (a warp a row), but where the whole-input kernel fits
            // more blocks an SM and a row fills their tiles.
            let warps = shape::rows_fill_warps(tuning, rows, segmented_cap)
                && (whole_cap <= segmented_cap || !fills(tuning.exact_lean_row_tiles));
            let long = fills(tuning.exact_row_min_tiles) && !warps;
            // Not where the whole-input kernel fits fewer blocks an SM than
            // the segmented one: `f64` logsumexp's terms uncapped (72
            // registers against 64) took 17% longer over 16 rows (H200,
            // 2026-11-30); a row without `exact_exp_f64_max_registers`.
            if !(two_blocks_a_row || long) || whole_cap < segmented_cap {
                return Ok(false);
            }
        }
        self.launch_exact::<T>(of, address, rows_of, 0, out, accesses, stream)?;
        Ok(true)
    }

    pub(crate) fn enqueue_widened<A: Element, In: WidensTo<A>>(
        &mut self,
        input: &B::Slice<In>,
        op: Op,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let kernel = Kernel::Widened {
            op,
            input: In::INPUT.kernel(),
            accumulator: A::TYPE.kernel(),
        };
        if kernel.name().is_none() {
            return Err(Error::unsupported_widening(op, In::INPUT.name(), A::TYPE));
        }
        let (address, len) = checked_parts::<B, In>(input)?;
        if len == 0 && !op.defined_on_empty() {
            return Err(Error::empty(op));
        }
        self.launch_one_input::<In>(kernel, address, len, Access::write::<A>("out", out, 1), stream)
    }

    /// Launches a kernel that takes [`ReduceArgs`] (a reduction or a
    /// widening) over the `len` `In`s at `input`, its result to `out`.
    pub(crate) fn launch_one_input<In: DeviceCopy>(
        &mut self,
        kernel: Kernel,
        input: u64,
        len: usize,
        out: Access,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let accesses = [Access::read::<In>("input", input, len), out];
        let element_bytes = std::mem::size_of::<In>();
        self.launch_whole(kernel, len, element_bytes, &accesses, stream, |partials, ticket| {
            ReduceArgs {
                input,
                len: len as u64,
                partials,
                ticket,
                out: out.address,
            }
        })
    }

    pub(crate) fn arg_to_host<T: ArgInput>(&mut self, input: &B::Slice<T>, op: Op) -> Result<(u64, T)> {
        let slot = self.backend.result_slot();
        // The slot's second word: inside the backend's 16-byte slot, so always an address.
        let index_word = element_address::<u64>(slot, 1).ok_or(Error::internal("the result slot's second word"))?;
        self.enqueue_arg(input, op, (slot, index_word), None)?;
        let [value, index] = self.backend.read_result_slot()?;
        let value: T::Value = from_word(value);
        // A half-float NaN comes back through `f32`, which keeps its payload
        // but sets its quiet bit: return the input's own bits instead.
        if is_nan(value) {
            return Ok((index, self.backend.element_to_host(input, index)?));
        }
        Ok((index, T::from_value(value)))
    }

    /// argmax (`op` = `Max`) or argmin of `input` in one launch: the value
    /// (a `T::Value`) to the device address `value`, its index to `index`.
    pub(crate) fn enqueue_arg<T: ArgInput>(
        &mut self,
        input: &B::Slice<T>,
        op: Op,
        (value, index): (u64, u64),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        if !matches!(op, Op::Max | Op::Min) {
            return Err(Error::unsupported_op(op, T::INPUT));
        }
        let (address, len) = checked_parts::<B, T>(input)?;
        if len == 0 {
            return Err(Error::empty(op));
        }
        let kernel = Kernel::Arg {
            op,
            input: T::INPUT.kernel(),
        };
        let accesses = [
            Access::read::<T>("input", address, len),
            Access::write::<T::Value>("value", value, 1),
            Access::write::<u64>("index", index, 1),
        ];
        self.launch_whole(kernel, len, T::INPUT.size(), &accesses, stream, |partials, ticket| {
            ArgArgs {
                input: address,
                len: len as u64,
                partials,
                ticket,
                value_out: value,
                index_out: index,
            }
        })
    }

    pub(crate) fn enqueue_dot<T: Element>(
        &mut self,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        self.enqueue_two(
            Kernel::Dot {
                element: T::TYPE.kernel(),
            },
            a,
            b,
            out,
            stream,
        )
    }

    /// Enqueues `kernel`, of the two-input family ([`DotArgs`]: a dot
    /// product, or a user operator's pairs), over `a` and `b`.
    pub(crate) fn enqueue_two<T: Element>(
        &mut self,
        kernel: Kernel,
        a: &B::Slice<T>,
        b: &B::Slice<T>,
        out: u64,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        let ((a, b, len), accesses) = pair_to_one::<B, T>(a, b, out)?;
        self.launch_whole(kernel, len, T::TYPE.size(), &accesses, stream, |partials, ticket| {
            DotArgs {
                a,
                b,
                len: len as u64,
                partials,
                ticket,
                out,
            }
        })
    }

    /// Enqueues the division of each of the `len` sums at `out` by `count`,
    /// in place: a mean ([`crate::Mean`]; an [`crate::ExactMean`] of
    /// nothing) along axes or rows, after its sums.
    pub(crate) fn enqueue_divide_by_count<A: FloatElement>(
        &mut self,
        out: u64,
        len: usize,
        count: usize,
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let kernel = Kernel::DivideByCount {
            element: A::TYPE.kernel(),
        };
        let shape = self.production_shape(kernel, len, A::TYPE.size())?;
        let accesses = [Access::write::<A>("out", out, len)];
        let launch = Launch {
            kernel,
            shape,
            shared_bytes: 0,
            args: DivideArgs {
                out,
                len: len as u64,
                count: count as u64,
            },
            accesses: &accesses,
        };
        // SAFETY: `out` holds the `len` results the caller's earlier launch
        // on `stream` wrote (checked writable by `Launcher::launch`), which
        // the grid-stride loop reads and rewrites, each by one thread.
        unsafe { self.backend.launch(&launch, stream) }
    }

    /// Enqueues the conversion of the `len` `from`s at `wide` (a cast
    /// reduction's results, which the caller's earlier launches on `stream`
    /// wrote in the stream's cast scratch) to the `to`s at `out`
    /// ([`crate::Cast`]).
    pub(crate) fn enqueue_convert(
        &mut self,
        (from, to): (ElementType, ElementType),
        wide: u64,
        (out, len): (u64, usize),
        stream: Option<StreamHandle>,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let kernel = Kernel::Convert {
            from: from.kernel(),
            to: to.kernel(),
        };
        let shape = self.production_shape(kernel, len, from.size())?;
        let bytes = |size: usize| (len as u64).saturating_mul(size as u64);
        let accesses = [
            Access {
                name: "wide results",
                address: wide,
                bytes: bytes(from.size()),
                writable: false,
            },
            Access {
                name: "out",
                address: out,
                bytes: bytes(to.size()),
                writable: true,
            },
        ];
        let launch = Launch {
            kernel,
            shape,
            shared_bytes: 0,
            args: ConvertArgs {
                input: wide,
                len: len as u64,
                out,
            },
            accesses: &accesses,
        };
        // SAFETY: `wide` holds the `len` results the caller's earlier
        // launches on `stream` wrote, `out` room for `len` converted ones
        // (the caller's output, checked writable and not overlapping by
        // `Launcher::launch`); the grid-stride loop converts each once.
        unsafe { self.backend.launch(&launch, stream) }
    }

    /// Launches a whole-input kernel over `len` elements of `element_bytes`
    /// each in the production shape, with `stream`'s workspace.
    fn launch_whole<A: kernels_gpu::dispatch::EntryArgs>(
        &mut self,
        kernel: Kernel,
        len: usize,
        element_bytes: usize,
        accesses: &[Access],
        stream: Option<StreamHandle>,
        args: impl FnOnce(u64, u64) -> A,
    ) -> Result<()> {
        let shape = self.production_shape(kernel, len, element_bytes)?;
        let workspace = self.backend.workspace(stream)?;
        let launch = Launch {
            kernel,
            shape,
            shared_bytes: 0,
            args: args(workspace.partials, workspace.ticket),
            accesses,
        };
        // SAFETY: `args` are the family's parameters over the buffers in
        // `accesses` (the inputs, checked element-aligned, and the outputs
        // the caller gave) and the stream's workspace, which holds a partial
        // slot per block of the largest grid and a ticket left at zero.
        unsafe { self.backend.launch(&launch, stream) }
    }

    pub(crate) fn production_shape(&mut self, kernel: Kernel, len: usize, element_bytes: usize) -> Result<LaunchShape> {
        let grid_cap = self.backend.grid_cap(kernel)?;
        let tuning = self.backend.tuning();
        let shape = match tuning.exact_f64_max_registers {
            Some(_) if kernel.is_lean_exact_f64() => shape::lean_exact_shape(tuning, len, grid_cap),
            _ => shape::production_shape(tuning, len, element_bytes, grid_cap),
        };
        shape.ok_or_else(|| {
            Error::InvalidPolicy(format!(
                "no launch shape for {len} elements of {element_bytes} bytes in blocks of {} threads",
                tuning.block_threads
            ))
        })
    }

    /// Runs `enqueue` with the result slot's two words as its outputs (the
    /// value's, then the mean's; on the own stream), then returns the
    /// `(mean, value)` it wrote there: the blocking form of the mean and
    /// variance ([`crate::MeanVar`], [`crate::ExactMeanVar`]).
    pub(crate) fn blocking_with_mean<T: DeviceCopy>(
        &mut self,
        enqueue: impl FnOnce(&mut Self, u64, u64) -> Result<()>,
    ) -> Result<(T, T)> {
        let slot = self.backend.result_slot();
        // The slot's second word: inside the backend's 16-byte slot.
        let mean = element_address::<u64>(slot, 1).ok_or(Error::internal("the result slot's second word"))?;
        enqueue(self, slot, mean)?;
        let [value, mean] = self.backend.read_result_slot()?;
        Ok((from_word(mean), from_word(value)))
    }

    /// Runs `enqueue` with the result slot as its output (on the own
    /// stream), then returns the `T` it wrote there: the blocking form of
    /// each operation with one result.
    pub(crate) fn blocking<T: DeviceCopy>(&mut self, enqueue: impl FnOnce(&mut Self, u64) -> Result<()>) -> Result<T> {
        let out = self.backend.result_slot();
        enqueue(self, out)?;
        self.result_to_host()
    }

    /// `run` with `program` as the user operator of the backend's launches
    /// (the kernels' `Op::User`), none again afterwards, whatever `run`
    /// returns (or if it panics).
    pub(crate) fn with_user<R>(
        &mut self,
        program: &crate::user::program::Program,
        run: impl FnOnce(&mut Self) -> Result<R>,
    ) -> Result<R> {
        /// Unsets the user operator when dropped: also if `run` panics.
        struct Unset<'r, B: Backend>(&'r mut Reducer<B>);
        impl<B: Backend> Drop for Unset<'_, B> {
            fn drop(&mut self) {
                self.0.backend.set_user(None);
            }
        }
        self.backend.set_user(Some(program.clone()));
        let set = Unset(self);
        run(&mut *set.0)
    }

    /// The `T` at the start of the result slot, after the own stream's work.
    pub(crate) fn result_to_host<T: DeviceCopy>(&mut self) -> Result<T> {
        let [bits, _] = self.backend.read_result_slot()?;
        Ok(from_word(bits))
    }
}

// A Reducer can move to another thread (with its context made current
// there), and be shared behind a lock.
const _: () = {
    const fn assert_send<T: Send + Sync>() {}
    assert_send::<Reducer<crate::Emulated>>();
    #[cfg(any(feature = "cust", feature = "cudarc"))]
    assert_send::<Reducer<crate::backend::gpu::Gpu>>();
    #[cfg(feature = "cust")]
    assert_send::<Reducer<Cuda>>();
};

/// Whether `value` is a NaN: the one value unequal to itself.
#[allow(clippy::eq_op)]
fn is_nan<V: PartialEq>(value: V) -> bool {
    value != value
}

/// The `T` in the first bytes of a result word.
pub(crate) fn from_word<T: DeviceCopy>(word: u64) -> T {
    const { assert!(std::mem::size_of::<T>() <= 8 && std::mem::align_of::<T>() <= 8) };
    // SAFETY: the kernel wrote one `T` (1 to 8 bytes of plain data, checked
    // above) at the start of the 8-byte word, or the word is the backend's
    // poison, which is a value of every element type too.
    unsafe { std::ptr::read(&word as *const u64 as *const T) }
}

/// `value` in the first bytes of a word, the others zero: [`from_word`]'s
/// inverse, how a `T` goes into a word-sized slot.
#[cfg(any(feature = "cust", test))]
pub(crate) fn to_word<T: DeviceCopy>(value: T) -> u64 {
    const { assert!(std::mem::size_of::<T>() <= 8) };
    let mut word = 0u64;
    // SAFETY: a `T` of at most 8 bytes (checked above) of plain data,
    // written unaligned into the word's bytes.
    unsafe { std::ptr::write_unaligned(&mut word as *mut u64 as *mut T, value) };
    word
}

/// `u64` words of the exact sum's state of `element`s: its digits, then
/// its counts of NaNs, `+inf`s and `-inf`s (also the words of scratch its
/// exact pass uses). [`Error::Internal`] for a type without an exact sum.
pub(crate) fn exact_state_words(element: ElementType) -> Result<usize> {
    use kernels_gpu::expansion::scratch_words;
    match element {
        ElementType::F32 => Ok(scratch_words::<f32>()),
        ElementType::F64 => Ok(scratch_words::<f64>()),
        other => Err(Error::internal(format!("an exact sum of {}s", other.name()))),
    }
}

/// The rows of an exact launch: `count` rows of `len` elements, one after
/// the other, or each in runs (`runs`; `len` is then its runs' elements).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExactRows {
    pub(crate) count: usize,
    pub(crate) len: usize,
    pub(crate) runs: Option<RowRuns>,
}

impl ExactRows {
    /// `count` rows of `len` elements, one after the other.
    pub(crate) fn dense(count: usize, len: usize) -> Self {
        ExactRows { count, len, runs: None }
    }

    /// The rows of `runs`, or `None` where their elements overflow a `usize`.
    pub(crate) fn in_runs(runs: RowRuns) -> Option<Self> {
        let len = usize::try_from(runs.runs).ok()?.checked_mul(runs.run_len)?;
        Some(ExactRows {
            count: runs.rows,
            len,
            runs: Some(runs),
        })
    }

    /// The kernel that reads these rows for the whole-input `kernel`: itself,
    /// or for rows in runs, its [`Kernel::ExactRowRuns`] (which has no state
    /// forms).
    fn kernel(self, kernel: Kernel) -> Result<Kernel> {
        match (self.runs, kernel) {
            (None, kernel) => Ok(kernel),
            (Some(_), Kernel::ExactSum { op, element }) => Ok(Kernel::ExactRowRuns { op, element }),
            (Some(_), other) => Err(Error::internal(format!("{other:?} over rows in runs"))),
        }
    }
}

/// The whole-input exact kernel `of` a type (`element`) in `form` (0, or
/// with states in or out), and the form it takes: the plain sum has a
/// kernel of its own, whose registers the state forms do not burden; it
/// divides for the mean as it stores.
fn exact_kernel(of: ExactOf, element: kernels_gpu::abi::Scalar, form: u64) -> Result<(Kernel, u64)> {
    let op = of.op();
    Ok(match (form, of.finish()) {
        // States hold sums already: one kernel merges them for every sum.
        (form, _) if form & EXACT_STATES_IN != 0 => (Kernel::ExactMerge { element }, form),
        (0, Finish::Mean) => (Kernel::ExactSum { op, element }, EXACT_MEAN),
        (0, Finish::Variance) => (Kernel::ExactSum { op, element }, EXACT_VARIANCE),
        (0, Finish::Root) => (Kernel::ExactSum { op, element }, EXACT_VARIANCE | EXACT_ROOT),
        (0, _) => (Kernel::ExactSum { op, element }, 0),
        // A state is of the sum alone: whoever merges it finishes it (the
        // multi-GPU passes, on the host).
        (_, Finish::Mean) => return Err(Error::internal("an exact mean as a state: ExactOf::Elements' is")),
        (_, _) => (Kernel::ExactState { op, element }, form),
    })
}

/// The address and length of `slice`, its address checked to be a multiple
/// of the element size.
pub(crate) fn checked_parts<B: Backend, T: DeviceCopy>(slice: &B::Slice<T>) -> Result<(u64, usize)> {
    let (address, len) = B::parts(slice);
    let align = std::mem::size_of::<T>();
    if !address.is_multiple_of(align as u64) {
        return Err(Error::MisalignedInput { address, align });
    }
    Ok((address, len))
}

/// The addresses of `a` and `b` (as [`checked_parts`]) and their common
/// length; [`Error::LengthMismatch`] if the lengths differ.
pub(crate) fn checked_pair<B: Backend, T: DeviceCopy>(a: &B::Slice<T>, b: &B::Slice<T>) -> Result<(u64, u64, usize)> {
    let ((a, len), (b, b_len)) = (checked_parts::<B, T>(a)?, checked_parts::<B, T>(b)?);
    if len != b_len {
        return Err(Error::LengthMismatch {
            left: len,
            right: b_len,
        });
    }
    Ok((a, b, len))
}

/// `a` and `b` checked as a pair ([`checked_pair`]), with the accesses of
/// a launch that reads both and writes one `T` to `out`.
pub(crate) fn pair_to_one<B: Backend, T: DeviceCopy>(
    a: &B::Slice<T>,
    b: &B::Slice<T>,
    out: u64,
) -> Result<((u64, u64, usize), [Access; 3])> {
    let (a, b, len) = checked_pair::<B, T>(a, b)?;
    let accesses = [
        Access::read::<T>("a", a, len),
        Access::read::<T>("b", b, len),
        Access::write::<T>("out", out, 1),
    ];
    Ok(((a, b, len), accesses))
}

/// What an exact kernel gives per part: the exact sum of which values,
/// and whether divided by their count ([`crate::ExactSum`],
/// [`crate::ExactNanSum`], [`crate::ExactMean`], [`crate::ExactSumOfSquares`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExactOf {
    /// Every element.
    Elements,
    /// The elements that are not NaN (a NaN added as `+0.0`, as
    /// [`Op::NanSum`] adds it).
    NotNan,
    /// Every element, the rounded sum divided by the count rounded to the
    /// element type, as the kernel stores it (the mean: no state form).
    Mean,
    /// The elements' squares, each rounded to the element type (as
    /// [`Op::SumOfSquares`] squares them).
    Squares,
    /// Each element's squared deviation from its part's mean (the
    /// element-type values at `shifts`, one per part, read by the kernel),
    /// `(x − mean)²` rounded; the rounded sum divided by `max(0, count −
    /// correction)` (the `f64` whose bits are `correction`), and with
    /// `root` its square root: [`crate::ExactVar`]'s second pass.
    Deviations { shifts: u64, correction: u64, root: bool },
    /// Each element's `exp(x − max)` on logsumexp's grid, `max` its part's
    /// (the element-type values at `maxima`, one per part, read by the
    /// kernel); each rounded sum `S` finished as `max + ln(S)`:
    /// [`crate::ExactLogSumExp`]'s second pass.
    ScaledExps { maxima: u64 },
}

impl ExactOf {
    /// The operator that names its kernels.
    pub(crate) fn op(self) -> Op {
        match self {
            ExactOf::Elements | ExactOf::Mean => Op::Sum,
            ExactOf::NotNan => Op::NanSum,
            ExactOf::Squares => Op::SumOfSquares,
            ExactOf::Deviations { .. } => Op::SquaredDeviation,
            ExactOf::ScaledExps { .. } => Op::ScaledExp,
        }
    }

    /// What the kernels do with each rounded sum: store it, or divide it.
    pub(crate) fn finish(self) -> Finish {
        match self {
            // Logsumexp's `max + ln(S)` is its map's ([`Op::ScaledExp`]'s kernels').
            ExactOf::Elements | ExactOf::NotNan | ExactOf::Squares | ExactOf::ScaledExps { .. } => Finish::Value,
            ExactOf::Mean => Finish::Mean,
            ExactOf::Deviations { root: false, .. } => Finish::Variance,
            ExactOf::Deviations { root: true, .. } => Finish::Root,
        }
    }

    /// The kernels' per-part values (their `shifts`) and the finish's
    /// parameter (`finish_param`): the means and the correction's bits of
    /// [`ExactOf::Deviations`], the maxima of [`ExactOf::ScaledExps`],
    /// zeros for the others.
    pub(crate) fn parameters(self) -> (u64, u64) {
        match self {
            ExactOf::Deviations { shifts, correction, .. } => (shifts, correction),
            ExactOf::ScaledExps { maxima } => (maxima, 0),
            _ => (0, 0),
        }
    }

    /// Whether its kernels read a value per part (`shifts`; the axis
    /// kernels' `means`).
    pub(crate) fn reads_per_part(self) -> bool {
        matches!(self, ExactOf::Deviations { .. } | ExactOf::ScaledExps { .. })
    }

    /// The same sum with its per-part values (the means of
    /// [`ExactOf::Deviations`], the maxima of [`ExactOf::ScaledExps`]) read
    /// at `address`: where a multi-GPU member keeps its copy of them. The
    /// sums that read none are unchanged.
    #[cfg(any(feature = "cust", test))]
    pub(crate) fn reading(self, address: u64) -> ExactOf {
        match self {
            ExactOf::Deviations { correction, root, .. } => ExactOf::Deviations {
                shifts: address,
                correction,
                root,
            },
            ExactOf::ScaledExps { .. } => ExactOf::ScaledExps { maxima: address },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ExactOf;
    use crate::element::FloatElement;
    use crate::emulated::Emulator;
    use crate::{ExactDot, ExactNanSum, ExactSum, ExactSumOfSquares};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// The terms of the exact sums that read a value per part, as the
    /// folds form them.
    trait Terms: FloatElement {
        fn deviation_square(self, mean: Self) -> Self;
        fn scaled_exp(self, max: Self) -> Self;
    }

    macro_rules! terms {
        ($($t:ty),*) => {$(
            impl Terms for $t {
                fn deviation_square(self, mean: Self) -> Self {
                    if mean.is_finite() { (self - mean) * (self - mean) } else { <$t>::NAN }
                }
                fn scaled_exp(self, max: Self) -> Self {
                    use kernels_gpu::expansion::{ExactMap, ScaledExp};
                    ScaledExp::new(max).apply(self)
                }
            }
        )*};
    }
    terms!(f32, f64);

    /// The exact states (`of` the values) of random parts of `values`,
    /// merged on the emulator in one step and in two (a state of states):
    /// the same bits as [`ExactSum::fold`] (or [`ExactNanSum::fold`],
    /// [`ExactSumOfSquares::fold`]) of the whole. What `multi` does across GPUs.
    fn check_states_merge<T: Terms>(rng: &mut StdRng, values: &[T], of: ExactOf) {
        let expected = match of {
            ExactOf::Elements => ExactSum::fold(values),
            ExactOf::NotNan => ExactNanSum::fold(values),
            ExactOf::Squares => ExactSumOfSquares::fold(values),
            ExactOf::Deviations { shifts, .. } => {
                // SAFETY: the caller's mean, a live `T`.
                let mean = unsafe { *(shifts as *const T) };
                ExactSum::fold(&values.iter().map(|&x| x.deviation_square(mean)).collect::<Vec<_>>())
            }
            ExactOf::ScaledExps { maxima } => {
                // SAFETY: the caller's maximum, a live `T`.
                let max = unsafe { *(maxima as *const T) };
                ExactSum::fold(&values.iter().map(|&x| x.scaled_exp(max)).collect::<Vec<_>>())
            }
            ExactOf::Mean => panic!("{of:?} has no state form"),
        };
        check_parts_merge(
            rng,
            values.len(),
            expected,
            &format!("{of:?}"),
            |emulator, part, out| emulator.enqueue_exact_state(&values[part], of, out),
        );
    }

    /// The exact states of random parts `0..len` (each enqueued by `state`
    /// into the given words), merged on the emulator in one step and in two
    /// (a state of states): `expected`'s bits.
    fn check_parts_merge<T: Terms>(
        rng: &mut StdRng,
        len: usize,
        expected: T,
        what: &str,
        state: impl Fn(&mut Emulator, std::ops::Range<usize>, u64) -> crate::error::Result<()>,
    ) {
        let words = super::exact_state_words(T::TYPE).expect("a float type");
        let mut emulator = Emulator::default();
        let parts = rng.gen_range(1..6);
        let mut cuts: Vec<usize> = (1..parts).map(|_| rng.gen_range(0..=len)).collect();
        cuts.extend([0, len]);
        cuts.sort_unstable();
        // Poisoned: every word of every state must be written.
        let mut states = vec![0xdead_beef_dead_beef_u64; parts * words];
        for (part, bounds) in cuts.windows(2).enumerate() {
            let out = states[part * words..].as_mut_ptr() as u64;
            state(&mut emulator, bounds[0]..bounds[1], out).expect("a part's state");
        }
        let mut rounded = [0xdead_beef_dead_beef_u64];
        let address = states.as_ptr() as u64;
        emulator
            .enqueue_exact_merge::<T>(address, parts, rounded.as_mut_ptr() as u64, false)
            .expect("merged");
        let bits = |word: u64| super::from_word::<T>(word);
        // Bitwise (a NaN's too).
        let same = |got: T| super::to_word(got) == super::to_word(expected);
        assert!(same(bits(rounded[0])), "{what}: {parts} parts cut at {cuts:?}");
        // The first part's state with a state of the others, then those two.
        let mut merged = vec![0xdead_beef_dead_beef_u64; 2 * words];
        merged[..words].copy_from_slice(&states[..words]);
        let rest = states[words..].as_ptr() as u64;
        emulator
            .enqueue_exact_merge::<T>(rest, parts - 1, merged[words..].as_mut_ptr() as u64, true)
            .expect("a state of states");
        emulator
            .enqueue_exact_merge::<T>(merged.as_ptr() as u64, 2, rounded.as_mut_ptr() as u64, false)
            .expect("merged in two steps");
        assert!(
            same(bits(rounded[0])),
            "{what}: {parts} parts cut at {cuts:?}, in two steps"
        );
    }

    #[test]
    fn exact_states_merge_to_the_whole_sum() {
        let mut rng = StdRng::from_entropy();
        for round in 0..32 {
            let len = rng.gen_range(0..3000);
            // Typical values (the kernel's fast path), values over a wide
            // range (its exact pass), specials among them, NaNs among
            // typical values.
            let value = |rng: &mut StdRng| -> f64 {
                let unit = rng.gen_range(-1.0..1.0);
                match round % 4 {
                    0 => unit,
                    1 => unit * 2f64.powi(rng.gen_range(-140..120)),
                    2 => [unit, f64::INFINITY, -0.0, 1e30, -1e30][rng.gen_range(0..5)],
                    _ => [unit, unit, f64::NAN, -f64::NAN][rng.gen_range(0..4)],
                }
            };
            let values: Vec<f64> = (0..len).map(|_| value(&mut rng)).collect();
            let narrow: Vec<f32> = values.iter().map(|&x| x as f32).collect();
            for of in [ExactOf::Elements, ExactOf::NotNan, ExactOf::Squares] {
                check_states_merge(&mut rng, &values, of);
                check_states_merge(&mut rng, &narrow, of);
            }
            // The second passes of the variance and logsumexp, about a
            // value near the data's (or infinite, or NaN).
            let unit = rng.gen_range(-1.0..1.0);
            let about = [unit, unit * 1e3, f64::INFINITY, f64::NAN][rng.gen_range(0..4)];
            let (wide_about, narrow_about) = ([about], [about as f32]);
            let (wide_at, narrow_at) = (wide_about.as_ptr() as u64, narrow_about.as_ptr() as u64);
            let deviations = |shifts| ExactOf::Deviations {
                shifts,
                correction: 1f64.to_bits(),
                root: false,
            };
            check_states_merge(&mut rng, &values, deviations(wide_at));
            check_states_merge(&mut rng, &narrow, deviations(narrow_at));
            check_states_merge(&mut rng, &values, ExactOf::ScaledExps { maxima: wide_at });
            check_states_merge(&mut rng, &narrow, ExactOf::ScaledExps { maxima: narrow_at });
            // The dot product's states (`multi`'s `reduce_pair`): the values
            // with a second vector of typical values.
            let other: Vec<f64> = (0..len).map(|_| rng.gen_range(-2.0..2.0)).collect();
            let narrow_other: Vec<f32> = other.iter().map(|&x| x as f32).collect();
            check_dot_states_merge(&mut rng, &values, &other);
            check_dot_states_merge(&mut rng, &narrow, &narrow_other);
        }
    }

    /// [`check_parts_merge`] of the exact dot product of `a` and `b`
    /// (cut at the same places): [`ExactDot::fold`]'s bits.
    fn check_dot_states_merge<T: Terms>(rng: &mut StdRng, a: &[T], b: &[T]) {
        let expected = ExactDot::fold(a, b).expect("one length");
        check_parts_merge(rng, a.len(), expected, "ExactDot", |emulator, part, out| {
            emulator.enqueue_exact_dot_state(&a[part.clone()], &b[part], out)
        });
    }
}
