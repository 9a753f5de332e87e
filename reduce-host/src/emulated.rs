//! The library's kernels on the CPU: the same Rust source as the PTX, run by a
//! SIMT emulator, over ordinary slices. No GPU, driver or CUDA context needed.
//!
//! It exists so that the kernels themselves are tested where there is no GPU
//! (CI, most laptops): [`Emulator`] launches the production kernel, every
//! ladder rung and the dot products exactly as [`Reducer`](crate::Reducer)
//! does on a GPU (same kernel code, same launch shapes, same passes), and
//! returns the same results. It is slow (every GPU thread is an OS thread),
//! so use it for testing and for trying the library out, not for work.
//!
//! ```
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::{emulated, Op, Rung, Strategy};
//! let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
//! assert_eq!(emulated::reduce(&data, Op::Sum, Strategy::Production)?, 500_500.0);
//! assert_eq!(emulated::reduce(&data, Op::Max, Strategy::ladder(Rung::WarpShuffle, 64)?)?, 1000.0);
//! # Ok(()) }
//! ```
//!
//! # What the emulator checks
//! - Every thread of a block is a real thread, so barriers really wait and
//!   shared memory is really shared; warps of 32 lanes exchange values through
//!   `shfl.sync` with PTX's rules.
//! - Blocks run one at a time in a shuffled order (a fresh order per launch,
//!   from a seed you can fix with [`Emulator::set_block_order_seed`]), so a
//!   kernel that depends on block order gives wrong or varying results.
//! - A barrier or shuffle that not every thread reaches, a global access
//!   outside the launch's buffers (the input slice, the workspace, the output)
//!   or misaligned, a shared array written past its end, or a panic, stops
//!   the launch with [`Error::EmulatedFault`] naming the kernel, block and
//!   thread, instead of hanging. Shared memory is poisoned before each block.
//!
//! # What it cannot show
//! Speed, and races between blocks that run at the same time on a GPU: here
//! blocks run one after another, so the grid combine's memory ordering is
//! exercised only in the orders sequential execution produces. It also runs
//! the portable code paths where the PTX uses an instruction of a newer
//! architecture (`max.NaN.f32` on sm_80+); results are the same by design and
//! the GPU tests check that.
//!
//! # Launch shape
//! [`Emulator::new`] launches 64-thread blocks (two warps) and at most 6
//! blocks, so that small inputs already use several blocks, grid-stride
//! loops and the last-block combine. [`Emulator::with_shape`] takes any
//! shape, such as a GPU's (see [`Reducer::launch_shape`](crate::Reducer::launch_shape)):
//! with the same shape, float results are bitwise those of the GPU.

use crate::abi::{SegmentSchedule, SEGMENTS_INVALID};
use crate::element::{ArgInput, Element, ElementType, WidensTo};
use crate::error::{Error, Result};
use crate::kernels::{self, LaunchShape, SegmentedShape};
use crate::op::Op;
use crate::policy::Policy;
use crate::reducer::{check_ladder, check_ladder_type, PARTIAL_SLOT_WORDS};
use crate::segmented;
use crate::strategy::{DotKernel, LadderPlan, Rung, Strategy};
use kernels_gpu::element::Element as KernelElement;
use kernels_gpu::emulator::{self, Buffer, LaunchConfig};
use kernels_gpu::entry;
use kernels_gpu::ladder::dot::AtomicAdd;
use kernels_gpu::op::{Max, Min, Operator, Product, Sum};
use std::mem::size_of;

/// What the emulator fills workspace and result slots with before a launch,
/// so a kernel that fails to write one is caught.
const POISON_WORD: u64 = 0xA5A5_A5A5_A5A5_A5A5;

/// Runs the library's kernels on the CPU (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct Emulator {
    policy: Policy,
    max_grid: u32,
    strategy: Strategy,
    next_seed: u64,
}

impl Default for Emulator {
    fn default() -> Self {
        Self::new()
    }
}

/// Entry point types, as [`kernels_gpu::entry`] defines them.
type ReduceKernel<T> = unsafe fn(*const T, u64, *mut u64, *mut u32, *mut T);
type DotKernelFn<T> = unsafe fn(*const T, *const T, u64, *mut u64, *mut u32, *mut T);
type LadderKernel<T> = unsafe fn(*const T, u64, *mut T);
type SegmentedKernel<T> = unsafe fn(*const T, u64, *const u64, u64, u64, u64, *mut u64, *mut u32, *mut u32, *mut T);
/// Seed 004's dot kernels over addresses `(a, b, len, out)`, for `i32` or `f32`.
type SeedDotKernel = unsafe fn(u64, u64, u64, u64);

impl Emulator {
    /// Largest grid of [`Emulator::new`]: small, so modest inputs already
    /// take several grid-stride tiles per block.
    pub const DEFAULT_MAX_GRID: u32 = 6;

    /// An emulator with the default small launch shape and a block order
    /// seeded from the clock.
    pub fn new() -> Self {
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Emulator {
            policy: Policy::EMULATOR_DEFAULT,
            max_grid: Self::DEFAULT_MAX_GRID,
            strategy: Strategy::Production,
            next_seed: clock,
        }
    }

    /// An emulator that launches the production kernels with `policy`'s
    /// threads per block and at most `max_grid` blocks, as a GPU with that
    /// policy and grid cap would. Errors: [`Error::InvalidPolicy`] if
    /// `max_grid` is 0.
    pub fn with_shape(policy: Policy, max_grid: u32) -> Result<Self> {
        if max_grid == 0 {
            return Err(Error::InvalidPolicy("max_grid must be at least 1".to_string()));
        }
        Ok(Emulator {
            policy,
            max_grid,
            ..Self::new()
        })
    }

    /// The kernel this emulator runs: [`Strategy::Production`] unless changed.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Runs `strategy`'s kernel from now on (ladder rungs: `i32` and `f32` only).
    pub fn set_strategy(&mut self, strategy: Strategy) {
        self.strategy = strategy;
    }

    /// Fixes the block order of the next launches (each launch takes the next
    /// seed of a sequence starting here), e.g. to replay a fault, whose error
    /// names the seed of its launch.
    pub fn set_block_order_seed(&mut self, seed: u64) {
        self.next_seed = seed;
    }

    /// The launch shape the production kernel uses for `len` elements of `T`.
    pub fn launch_shape<T: Element>(&self, len: usize) -> LaunchShape {
        kernels::production_shape(self.policy, len, T::TYPE.size(), self.max_grid)
    }

    /// Reduces `input` with `op`, with the same rules as
    /// [`Reducer::reduce`](crate::Reducer::reduce) (see the crate docs).
    ///
    /// Errors: [`Error::Empty`] for `max`/`min` (and their NaN-ignoring
    /// forms, and `MaxAbs`) of an empty input, [`Error::UnsupportedOp`] for
    /// `MaxAbs` of integers, [`Error::UnsupportedStrategy`] for a ladder rung
    /// on a type other than `i32`/`f32` or an op other than the basic four,
    /// [`Error::EmulatedFault`] if a kernel misbehaves.
    pub fn reduce<T: Element>(&mut self, input: &[T], op: Op) -> Result<T> {
        if input.is_empty() && !op.defined_on_empty() {
            return Err(Error::Empty { op });
        }
        match self.strategy {
            Strategy::Production => {
                let name = kernels::reduce_kernel_name(op, T::TYPE)?;
                let kernel = production_kernel::<T::Kernel>(op);
                self.run_production::<T>(
                    name,
                    input.len(),
                    size_of::<T>(),
                    &[slice_buffer("input", input)],
                    |partials, ticket, out| {
                        // SAFETY: the parameters of a reduction entry point, over the
                        // buffers registered with the launch; `T::Kernel` is `T`.
                        unsafe { kernel(input.as_ptr().cast(), input.len() as u64, partials, ticket, out) }
                    },
                )
            }
            Strategy::Ladder { rung, block_threads } => self.run_ladder(rung, block_threads, input, op),
        }
    }

    /// Reduces `input` with `op` in the wider type `A`, as
    /// [`Reducer::reduce_as`](crate::Reducer::reduce_as) (always the
    /// production kernel, whatever the strategy).
    ///
    /// Errors: [`Error::UnsupportedWidening`], [`Error::Empty`],
    /// [`Error::EmulatedFault`].
    pub fn reduce_as<A: Element, In: WidensTo<A>>(&mut self, input: &[In], op: Op) -> Result<A> {
        let name = kernels::widened_kernel_name::<A, In>(op)?;
        if input.is_empty() && !op.defined_on_empty() {
            return Err(Error::Empty { op });
        }
        let kernel = In::emulated_kernel(op).ok_or(Error::UnsupportedWidening {
            op,
            input: In::NAME,
            accumulator: A::TYPE,
        })?;
        self.run_production::<A>(
            name,
            input.len(),
            size_of::<In>(),
            &[slice_buffer("input", input)],
            |partials, ticket, out| {
                // SAFETY: the parameters of a widening entry point, over the
                // buffers registered with the launch; `In::KernelInput` has
                // `In`'s layout and `A::Kernel` is `A`.
                unsafe { kernel(input.as_ptr().cast(), input.len() as u64, partials, ticket, out) }
            },
        )
    }

    /// The index and value of the largest element, as
    /// [`Reducer::argmax`](crate::Reducer::argmax) (the same kernel).
    pub fn argmax<T: ArgInput>(&mut self, input: &[T]) -> Result<(u64, T)> {
        self.arg(input, Op::Max)
    }

    /// The index and value of the smallest element, as
    /// [`Reducer::argmin`](crate::Reducer::argmin).
    pub fn argmin<T: ArgInput>(&mut self, input: &[T]) -> Result<(u64, T)> {
        self.arg(input, Op::Min)
    }

    fn arg<T: ArgInput>(&mut self, input: &[T], op: Op) -> Result<(u64, T)> {
        if input.is_empty() {
            return Err(Error::Empty { op });
        }
        let mut value = [POISON_WORD];
        let mut index = [POISON_WORD];
        let (input_address, value_address, index_address) = (
            input.as_ptr() as u64,
            value.as_mut_ptr() as u64,
            index.as_mut_ptr() as u64,
        );
        let buffers = [
            slice_buffer("input", input),
            result_buffer::<T::Value>("value", &mut value),
            result_buffer::<u64>("index", &mut index),
        ];
        self.run_grid(
            kernels::arg_kernel_name::<T>(op)?,
            input.len(),
            size_of::<T>(),
            &buffers,
            |partials, ticket| {
                // SAFETY: the parameters of an argmax/argmin entry point, over
                // the buffers registered with the launch; `input` is not empty.
                unsafe {
                    T::emulated_arg(
                        op,
                        input_address,
                        input.len() as u64,
                        partials as u64,
                        ticket as u64,
                        value_address,
                        index_address,
                    )
                }
            },
        )?;
        Ok((read_result(&index), T::from_value(read_result(&value))))
    }

    /// One result of `op` per segment of `values`, as
    /// [`Reducer::segmented_reduce`](crate::Reducer::segmented_reduce) (the
    /// same kernel, launch shape and offset check; see [`crate::segmented`]).
    ///
    /// Errors: [`Error::InvalidSegments`], [`Error::UnsupportedOp`],
    /// [`Error::EmulatedFault`].
    pub fn segmented_reduce<T: Element>(&mut self, values: &[T], offsets: &[u64], op: Op) -> Result<Vec<T>> {
        let segments = segmented::segment_count(offsets.len())?;
        let (out, status) = self.run_segmented(values, Some(offsets), segments, 0, op)?;
        if status == SEGMENTS_INVALID {
            return Err(segmented::invalid_offsets(offsets, values.len()));
        }
        Ok(out)
    }

    /// One result of `op` per row of the row-major `rows × row_len` matrix,
    /// as [`Reducer::reduce_rows`](crate::Reducer::reduce_rows).
    ///
    /// Errors: [`Error::InvalidSegments`], [`Error::UnsupportedOp`],
    /// [`Error::EmulatedFault`].
    pub fn reduce_rows<T: Element>(&mut self, matrix: &[T], rows: usize, row_len: usize, op: Op) -> Result<Vec<T>> {
        segmented::check_rows(matrix.len(), rows, row_len)?;
        Ok(self.run_segmented(matrix, None, rows, row_len, op)?.0)
    }

    /// The launch a segmented reduction of `len` elements of `T` in
    /// `segments` segments uses on this emulator.
    pub fn segmented_launch_shape<T: Element>(&self, segments: usize, len: usize) -> SegmentedShape {
        kernels::segmented_shape(self.policy, segments, len, size_of::<T>(), self.max_grid)
    }

    /// One segmented launch: `segments` segments given by `offsets` or, if
    /// none, rows of `row_len`; fresh poisoned partials and results, zeroed
    /// tickets and status word. Returns the results and the status word, and
    /// checks that the kernel left every ticket at zero.
    fn run_segmented<T: Element>(
        &mut self,
        values: &[T],
        offsets: Option<&[u64]>,
        segments: usize,
        row_len: usize,
        op: Op,
    ) -> Result<(Vec<T>, u32)> {
        let shape = self.segmented_launch_shape::<T>(segments, values.len());
        let schedule = kernels::segment_schedule(shape, segments, offsets.is_some());
        let name = kernels::segmented_kernel_name(op, T::TYPE, schedule)?;
        let kernel = segmented_kernel::<T::Kernel>(op, schedule);
        if segments == 0 {
            return Ok((Vec::new(), 0));
        }
        let mut partials = vec![POISON_WORD; shape.launch.blocks as usize * PARTIAL_SLOT_WORDS];
        // 8-byte aligned, at least four words: the balanced kernels' counter
        // and ticket.
        let mut ticket_words = vec![0u64; segments.div_ceil(2).max(2)];
        // SAFETY: the `u64`s' bytes, as `u32`s (same size, looser alignment).
        let tickets =
            unsafe { std::slice::from_raw_parts_mut(ticket_words.as_mut_ptr() as *mut u32, 2 * ticket_words.len()) };
        let mut status = [0u32];
        // Results at a 16-byte boundary on launches of even seed, one element
        // past one on odd seeds (consecutive launches alternate), since a
        // kernel may store whole vectors of results only where the output is
        // aligned, and element by element elsewhere.
        let out_shift = (self.next_seed % 2) as usize * size_of::<T>();
        let mut out_storage = vec![
            u128::from(POISON_WORD) << 64 | u128::from(POISON_WORD);
            (out_shift + segments * size_of::<T>()).div_ceil(16)
        ];
        let out_address = out_storage.as_mut_ptr() as u64 + out_shift as u64;
        let mut buffers = vec![
            slice_buffer("input", values),
            writable_buffer("partials", &mut partials),
            writable_buffer("tickets", tickets),
            writable_buffer("status", &mut status),
            Buffer {
                name: "out",
                address: out_address,
                bytes: (segments * size_of::<T>()) as u64,
                writable: true,
            },
        ];
        buffers.extend(offsets.map(|offsets| slice_buffer("offsets", offsets)));
        let offsets_address = offsets.map_or(0, |offsets| offsets.as_ptr() as u64);
        let addresses = [
            values.as_ptr() as u64,
            partials.as_mut_ptr() as u64,
            tickets.as_mut_ptr() as u64,
            status.as_mut_ptr() as u64,
            out_address,
        ];
        let len = values.len() as u64;
        let plan = shape.plan().to_bits();
        let launch = shape.launch;
        self.launch(name, launch.blocks, launch.threads_per_block, 0, &buffers, &move || {
            let [input, partials, tickets, status, out] = addresses;
            // SAFETY: the parameters of a segmented entry point, over the
            // buffers registered with the launch; `T::Kernel` is `T`.
            unsafe {
                kernel(
                    input as *const _,
                    len,
                    offsets_address as *const u64,
                    segments as u64,
                    row_len as u64,
                    plan,
                    partials as *mut u64,
                    tickets as *mut u32,
                    status as *mut u32,
                    out as *mut _,
                )
            }
        })?;
        if let Some(segment) = tickets.iter().position(|&t| t != 0) {
            return Err(self.contract_fault(
                name,
                format!(
                    "the launch left segment {segment}'s ticket at {}, not 0",
                    tickets[segment]
                ),
            ));
        }
        // SAFETY: `out_address` is `segments` element-aligned `T`s (plain
        // data) inside `out_storage`, each written by the kernel or still poison.
        let results = unsafe { std::slice::from_raw_parts(out_address as *const T, segments) }.to_vec();
        Ok((results, status[0]))
    }

    /// The dot product `Σ a[i]·b[i]`, as [`Reducer::dot`](crate::Reducer::dot).
    ///
    /// Errors: [`Error::LengthMismatch`] if `a` and `b` differ in length,
    /// [`Error::EmulatedFault`] if the kernel misbehaves.
    pub fn dot<T: Element>(&mut self, a: &[T], b: &[T]) -> Result<T> {
        check_lengths(a, b)?;
        let kernel: DotKernelFn<T::Kernel> = entry::dot::<T::Kernel>;
        let buffers = [slice_buffer("a", a), slice_buffer("b", b)];
        self.run_production::<T>(
            kernels::dot_kernel_name(T::TYPE),
            a.len(),
            size_of::<T>(),
            &buffers,
            |partials, ticket, out| {
                // SAFETY: the parameters of a dot entry point, over the buffers
                // registered with the launch; `T::Kernel` is `T`.
                unsafe {
                    kernel(
                        a.as_ptr().cast(),
                        b.as_ptr().cast(),
                        a.len() as u64,
                        partials,
                        ticket,
                        out,
                    )
                }
            },
        )
    }

    /// The dot product with one of seed 004's kernels (`i32` or `f32`), as
    /// [`Reducer::dot_with`](crate::Reducer::dot_with).
    pub fn dot_with<T: Element>(&mut self, a: &[T], b: &[T], kernel: DotKernel) -> Result<T> {
        check_lengths(a, b)?;
        check_ladder_type::<T>(format!("seed 004 dot kernel {kernel:?}"))?;
        let function = seed_dot_kernel::<T>(kernel).ok_or_else(|| Error::UnsupportedStrategy {
            kernel: format!("seed 004 dot kernel {kernel:?}"),
            element: T::TYPE,
        })?;
        let mut out = [0u64];
        let buffers = [
            slice_buffer("a", a),
            slice_buffer("b", b),
            result_buffer::<T>("out", &mut out),
        ];
        let out_address = out.as_mut_ptr() as u64;
        let (a_address, b_address) = (a.as_ptr() as u64, b.as_ptr() as u64);
        let len = a.len() as u64;
        self.launch(
            &kernel.kernel_name(T::TYPE),
            DotKernel::blocks_for(a.len())?,
            DotKernel::BLOCK_THREADS,
            DotKernel::shared_bytes(T::TYPE),
            &buffers,
            // SAFETY: `out` is one zeroed `T` (the kernels add into it); the
            // arguments match the seed dot entry points.
            &move || unsafe { function(a_address, b_address, len, out_address) },
        )?;
        Ok(read_result(&out))
    }

    /// One production launch over `len` input elements of `input_bytes`
    /// each, with a fresh poisoned result of type `T`; see [`Emulator::run_grid`].
    fn run_production<T: Element>(
        &mut self,
        name: &str,
        len: usize,
        input_bytes: usize,
        inputs: &[Buffer],
        kernel: impl Fn(*mut u64, *mut u32, *mut T::Kernel) + Sync,
    ) -> Result<T> {
        let mut out = [POISON_WORD];
        let out_address = out.as_mut_ptr() as u64;
        let mut buffers = inputs.to_vec();
        buffers.push(result_buffer::<T>("out", &mut out));
        self.run_grid(name, len, input_bytes, &buffers, |partials, ticket| {
            kernel(partials, ticket, out_address as *mut T::Kernel)
        })?;
        Ok(read_result(&out))
    }

    /// One launch of a whole-input kernel over `len` input elements of
    /// `input_bytes` each, in the production launch shape: fresh poisoned
    /// partials and a zero ticket (passed to `kernel`), plus `buffers`; then
    /// checks that the kernel left the ticket at zero as its contract says.
    fn run_grid(
        &mut self,
        name: &str,
        len: usize,
        input_bytes: usize,
        buffers: &[Buffer],
        kernel: impl Fn(*mut u64, *mut u32) + Sync,
    ) -> Result<()> {
        let shape = kernels::production_shape(self.policy, len, input_bytes, self.max_grid);
        let mut partials = vec![POISON_WORD; shape.blocks as usize * PARTIAL_SLOT_WORDS];
        let mut ticket = [0u32];
        let mut buffers = buffers.to_vec();
        buffers.extend([
            writable_buffer("partials", &mut partials),
            writable_buffer("ticket", &mut ticket),
        ]);
        let (partials_address, ticket_address) = (partials.as_mut_ptr() as u64, ticket.as_mut_ptr() as u64);
        self.launch(name, shape.blocks, shape.threads_per_block, 0, &buffers, &|| {
            kernel(partials_address as *mut u64, ticket_address as *mut u32)
        })?;
        if ticket[0] != 0 {
            return Err(self.contract_fault(name, format!("the launch left the ticket at {}, not 0", ticket[0])));
        }
        Ok(())
    }

    /// A ladder rung: the passes of [`LadderPlan`], each one emulated launch.
    fn run_ladder<T: Element>(&mut self, rung: Rung, block_threads: u32, input: &[T], op: Op) -> Result<T> {
        check_ladder::<T>(rung, op)?;
        let kernel = ladder_kernel::<T::Kernel>(op, rung).ok_or_else(|| Error::UnsupportedStrategy {
            kernel: format!("ladder rung {rung}"),
            element: T::TYPE,
        })?;
        let name = rung.kernel_name(op, T::TYPE);
        let input_address = input.as_ptr() as u64;
        let plan = LadderPlan::new(rung, block_threads, T::TYPE, input_address, input.len() as u64)?;
        let mut scratch = vec![POISON_WORD; plan.scratch_words()];
        let mut out = [POISON_WORD];
        let out_address = out.as_mut_ptr() as u64;
        let element = size_of::<T>() as u64;
        for pass in plan.passes(
            input_address,
            input.len() as u64,
            scratch.as_mut_ptr() as u64,
            out_address,
        ) {
            let source = Buffer {
                name: if pass.source == input_address {
                    "input"
                } else {
                    "previous pass's results"
                },
                address: pass.source,
                bytes: pass.len * element,
                writable: false,
            };
            let destination = Buffer {
                name: if pass.destination == out_address {
                    "out"
                } else {
                    "per-block results"
                },
                address: pass.destination,
                bytes: pass.blocks as u64 * element,
                writable: true,
            };
            self.launch(
                &name,
                pass.blocks,
                block_threads,
                rung.shared_bytes(block_threads, T::TYPE),
                &[source, destination],
                // SAFETY: the parameters of a ladder entry point; `destination`
                // has a slot per block; the shared memory is what the rung needs.
                &move || unsafe { kernel(pass.source as *const _, pass.len, pass.destination as *mut _) },
            )?;
        }
        Ok(read_result(&out))
    }

    /// One emulated launch with the next block-order seed.
    fn launch(
        &mut self,
        name: &str,
        blocks: u32,
        threads: u32,
        dynamic_shared_bytes: u32,
        buffers: &[Buffer],
        body: &(dyn Fn() + Sync),
    ) -> Result<()> {
        let seed = self.next_seed;
        self.next_seed = self.next_seed.wrapping_add(1);
        let config = LaunchConfig {
            kernel: name,
            grid_blocks: blocks,
            block_threads: threads,
            dynamic_shared_bytes,
            block_order_seed: seed,
            buffers,
        };
        emulator::launch(&config, body).map_err(|fault| Error::EmulatedFault {
            kernel: fault.kernel,
            block: fault.block,
            thread: fault.thread,
            message: fault.message,
            block_order_seed: seed,
        })
    }

    /// A broken kernel contract found after the launch.
    fn contract_fault(&self, name: &str, message: String) -> Error {
        Error::EmulatedFault {
            kernel: name.to_string(),
            block: 0,
            thread: 0,
            message,
            block_order_seed: self.next_seed.wrapping_sub(1),
        }
    }
}

/// Reduces `input` with `op` under `strategy` on a fresh [`Emulator`] with
/// the default shape (see [`Emulator::reduce`]).
pub fn reduce<T: Element>(input: &[T], op: Op, strategy: Strategy) -> Result<T> {
    let mut emulator = Emulator::new();
    emulator.set_strategy(strategy);
    emulator.reduce(input, op)
}

/// Reduces `input` with `op` in the wider type `A` on a fresh [`Emulator`]
/// (see [`Emulator::reduce_as`]).
pub fn reduce_as<A: Element>(input: &[impl WidensTo<A>], op: Op) -> Result<A> {
    Emulator::new().reduce_as(input, op)
}

/// The dot product `Σ a[i]·b[i]` on a fresh [`Emulator`] (see [`Emulator::dot`]).
pub fn dot<T: Element>(a: &[T], b: &[T]) -> Result<T> {
    Emulator::new().dot(a, b)
}

fn check_lengths<T>(a: &[T], b: &[T]) -> Result<()> {
    if a.len() != b.len() {
        return Err(Error::LengthMismatch {
            left: a.len(),
            right: b.len(),
        });
    }
    Ok(())
}

/// `slice` as a read-only buffer of the launch.
fn slice_buffer<T>(name: &'static str, slice: &[T]) -> Buffer {
    Buffer {
        name,
        address: slice.as_ptr() as u64,
        bytes: std::mem::size_of_val(slice) as u64,
        writable: false,
    }
}

/// `slice` as a writable buffer of the launch.
fn writable_buffer<T>(name: &'static str, slice: &mut [T]) -> Buffer {
    Buffer {
        name,
        address: slice.as_mut_ptr() as u64,
        bytes: std::mem::size_of_val(slice) as u64,
        writable: true,
    }
}

/// A result slot named `name`: one `T` at the start of `out`, writable.
fn result_buffer<T: Element>(name: &'static str, out: &mut [u64; 1]) -> Buffer {
    Buffer {
        name,
        address: out.as_mut_ptr() as u64,
        bytes: size_of::<T>() as u64,
        writable: true,
    }
}

fn read_result<T: Element>(out: &[u64; 1]) -> T {
    // SAFETY: every `Element` is 4 or 8 bytes of plain data with an alignment
    // of at most 8, so the start of a `u64` holds one.
    unsafe { std::ptr::read(out.as_ptr() as *const T) }
}

macro_rules! production_kernel_table {
    ($(($op:ident, $stem:ident, $map:ident, $operator:ident, [$($t:ident)*])),* $(,)?) => {
        /// The production reduction entry point for `op` over `T`, from the
        /// list in `kernels-gpu/src/abi.rs` (callers check first, with
        /// `reduce_kernel_name`, that the op exists for the type).
        fn production_kernel<T: KernelElement>(op: Op) -> ReduceKernel<T> {
            use kernels_gpu::map::*;
            use kernels_gpu::op::*;
            match op {
                $(Op::$op => entry::reduce::<T, $map, $operator>,)*
            }
        }

        /// The segmented entry point for `op` over `T` with `schedule`
        /// (callers check first, with `segmented_kernel_name`, that the op
        /// exists for the type).
        fn segmented_kernel<T: KernelElement>(op: Op, schedule: SegmentSchedule) -> SegmentedKernel<T> {
            use kernels_gpu::map::*;
            use kernels_gpu::op::*;
            const FIXED_ORDER: u8 = SegmentSchedule::FixedOrder as u8;
            const WARPS_TAKE: u8 = SegmentSchedule::WarpsTake as u8;
            const BLOCKS_TAKE: u8 = SegmentSchedule::BlocksTake as u8;
            match (op, schedule) {
                $((Op::$op, SegmentSchedule::FixedOrder) => entry::segmented::<T, $map, $operator, FIXED_ORDER>,)*
                $((Op::$op, SegmentSchedule::WarpsTake) => entry::segmented::<T, $map, $operator, WARPS_TAKE>,)*
                $((Op::$op, SegmentSchedule::BlocksTake) => entry::segmented::<T, $map, $operator, BLOCKS_TAKE>,)*
            }
        }
    };
}
kernels_gpu::for_each_reduce_kernel!(production_kernel_table);

/// The ladder entry point for `op` and `rung` over `T` (none for the
/// operators the ladder lacks).
fn ladder_kernel<T: KernelElement>(op: Op, rung: Rung) -> Option<LadderKernel<T>> {
    match op {
        Op::Sum => ladder_kernel_for::<T, Sum>(rung),
        Op::Max => ladder_kernel_for::<T, Max>(rung),
        Op::Min => ladder_kernel_for::<T, Min>(rung),
        Op::Product => ladder_kernel_for::<T, Product>(rung),
        _ => None,
    }
}

macro_rules! ladder_kernel_table {
    ($(($number:literal, $stem:ident, $load:ty, $tree:ty)),* $(,)?) => {
        /// The ladder entry point of `rung` for operator `O`, from the rung
        /// list in `kernels-gpu/src/abi.rs`.
        fn ladder_kernel_for<T: KernelElement, O: Operator<T>>(rung: Rung) -> Option<LadderKernel<T>> {
            use kernels_gpu::ladder::load::*;
            use kernels_gpu::ladder::tree::*;
            match rung.number() {
                $($number => Some(entry::ladder::<T, O, $load, $tree>),)*
                _ => None,
            }
        }
    };
}
kernels_gpu::for_each_ladder_rung!(ladder_kernel_table);

/// Seed 004's kernel `kernel` for `T`, if `T` is one of its types (`i32`, `f32`).
fn seed_dot_kernel<T: Element>(kernel: DotKernel) -> Option<SeedDotKernel> {
    // Addresses instead of typed pointers: one signature for both types.
    unsafe fn atomic_per_element<U: AtomicAdd>(a: u64, b: u64, len: u64, out: u64) {
        entry::dot_atomic_per_element::<U>(a as *const U, b as *const U, len, out as *mut U)
    }
    unsafe fn block_tree<U: AtomicAdd>(a: u64, b: u64, len: u64, out: u64) {
        entry::dot_block_tree::<U>(a as *const U, b as *const U, len, out as *mut U)
    }
    match (kernel, T::TYPE) {
        (DotKernel::AtomicPerElement, ElementType::I32) => Some(atomic_per_element::<i32>),
        (DotKernel::AtomicPerElement, ElementType::F32) => Some(atomic_per_element::<f32>),
        (DotKernel::BlockTree, ElementType::I32) => Some(block_tree::<i32>),
        (DotKernel::BlockTree, ElementType::F32) => Some(block_tree::<f32>),
        _ => None,
    }
}
