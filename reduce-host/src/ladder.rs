//! The tutorial kernels: the ladder of classic reduction kernels that the
//! seed tutorials climb (interleaved, strided, sequential addressing, first
//! add during load, vector loads, warp shuffles) and seed 004's two dot
//! products, run through the same backends as the production kernels but
//! kept apart from them: nothing on the production path uses this module.
//!
//! `cargo run --release --example ladder` measures them all on your GPU;
//! `docs/LADDER.md` has the H200 numbers.
//!
//! ```
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::emulated::Emulator;
//! use reduce::ladder::{self, Ladder, Rung, SeedDot};
//! let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
//! let mut emulator = Emulator::default();
//! let rung = Ladder::new(Rung::WarpShuffle, 64)?;
//! assert_eq!(ladder::reduce(&mut emulator, &data, reduce::Op::Max, rung)?, 1000.0);
//! assert_eq!(ladder::dot(&mut emulator, &data[..3], &data[..3], SeedDot::BlockTree)?, 14.0);
//! # Ok(()) }
//! ```

use crate::backend::launcher::{Access, Launch};
use crate::backend::Backend;
use crate::element::{Element, ElementType};
use crate::error::{Error, Result};
use crate::reducer::{checked_pair, checked_parts, Reducer};
use crate::scope::{Input, Output, Scope};
use crate::shape::LaunchShape;
use cust::stream::Stream;
use kernels_gpu::abi::Op;
use kernels_gpu::abi::{Kernel, LadderArgs, SeedDotArgs, VECTOR_BYTES};
pub use kernels_gpu::abi::{Rung, SeedDot};

/// A rung of the ladder at a block size it supports: a power of two from 8
/// to 1024 threads (from 32 for [`Rung::WarpShuffle`]). Only
/// [`Ladder::new`] makes one, so every `Ladder` can be launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ladder {
    rung: Rung,
    block_threads: u32,
}

impl Ladder {
    /// `rung` at `block_threads` threads per block; [`Error::InvalidPolicy`]
    /// for a block size the rung does not support.
    pub fn new(rung: Rung, block_threads: u32) -> Result<Self> {
        let smallest = if rung == Rung::WarpShuffle { 32 } else { 8 };
        if !block_threads.is_power_of_two() || !(smallest..=1024).contains(&block_threads) {
            return Err(Error::InvalidPolicy(format!(
                "rung {rung} needs a power-of-two block size from {smallest} to 1024, got {block_threads}"
            )));
        }
        Ok(Ladder { rung, block_threads })
    }

    /// The rung.
    pub fn rung(self) -> Rung {
        self.rung
    }

    /// Threads per block.
    pub fn block_threads(self) -> u32 {
        self.block_threads
    }
}

/// Reduces `input` with `op` by `ladder`'s rung: one launch per pass, each
/// pass reducing the previous pass's per-block results, until one block
/// writes the result (deterministic). Blocks until the result is on the host.
///
/// Errors: [`Error::UnsupportedStrategy`] for a type other than `i32`/`f32`
/// or an op other than sum, max, min and product; [`Error::Empty`] for
/// max/min of an empty input.
pub fn reduce<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    op: Op,
    ladder: Ladder,
) -> Result<T> {
    let out = reducer.backend.result_slot();
    enqueue_reduce(reducer, input, op, ladder, out, None)?;
    read_result(reducer)
}

/// [`reduce()`] enqueued on `stream` in `scope`, with the result left in
/// `out`; returns without waiting. The passes' per-block results go to the
/// stream's scratch, allocated (or grown) on the first call that needs more.
pub fn reduce_into<'b, T: Element>(
    scope: &mut Scope<'_, 'b>,
    input: impl Into<Input<'b, T>>,
    op: Op,
    ladder: Ladder,
    out: impl Into<Output<'b, T>>,
    stream: &'b Stream,
) -> Result<()> {
    let out = out.into().single("out")?;
    enqueue_reduce(scope.reducer(), &input.into().slice(), op, ladder, out, Some(stream))
}

fn enqueue_reduce<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    op: Op,
    ladder: Ladder,
    out: u64,
    stream: Option<&Stream>,
) -> Result<()> {
    let (input, len) = checked_parts::<B, T>(input)?;
    if len == 0 && !op.defined_on_empty() {
        return Err(Error::Empty { op });
    }
    let Ladder { rung, block_threads } = ladder;
    let kernel = Kernel::Ladder {
        rung,
        op,
        element: T::TYPE,
    };
    if kernel.name().is_none() {
        return Err(Error::UnsupportedStrategy {
            kernel: format!("ladder rung {rung} for {op}"),
            element: T::TYPE,
        });
    }
    let backend = &mut reducer.backend;
    let plan = LadderPlan::new(rung, block_threads, T::TYPE, input, len as u64)?;
    let scratch = backend.scratch(stream, plan.scratch_words())?;
    let element = T::TYPE.size() as u64;
    for pass in plan.passes(input, len as u64, scratch, out) {
        let (source, destination) = match (pass.source == input, pass.destination == out) {
            (true, true) => ("input", "out"),
            (true, false) => ("input", "per-block results"),
            (false, true) => ("previous pass's results", "out"),
            (false, false) => ("previous pass's results", "per-block results"),
        };
        let accesses = [
            Access {
                name: source,
                address: pass.source,
                bytes: pass.len * element,
                writable: false,
            },
            Access {
                name: destination,
                address: pass.destination,
                bytes: pass.blocks as u64 * element,
                writable: true,
            },
        ];
        let launch = Launch {
            kernel,
            shape: LaunchShape {
                blocks: pass.blocks,
                threads_per_block: block_threads,
            },
            shared_bytes: shared_bytes(rung, block_threads, T::TYPE),
            args: LadderArgs {
                input: pass.source,
                len: pass.len,
                out: pass.destination,
            },
            accesses: &accesses,
        };
        // SAFETY: the parameters of a ladder entry point (kernels-gpu/src/abi.rs):
        // `destination` has a slot per block (the scratch holds the plan's
        // regions); the shared memory is what the rung needs at this block size.
        unsafe { backend.launch(&launch, stream)? };
    }
    Ok(())
}

/// The dot product `Σ a[i]·b[i]` with one of seed 004's kernels (`i32` or
/// `f32`); blocks until the result is on the host. Float results depend on
/// the order the atomics land in, so they can differ between runs by
/// rounding.
///
/// Errors: [`Error::LengthMismatch`] if `a` and `b` differ in length,
/// [`Error::UnsupportedStrategy`] for other types.
pub fn dot<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    a: &B::Slice<T>,
    b: &B::Slice<T>,
    kernel: SeedDot,
) -> Result<T> {
    let out = reducer.backend.result_slot();
    enqueue_dot(reducer, a, b, kernel, out, None)?;
    read_result(reducer)
}

/// [`dot()`] enqueued on `stream` in `scope`, with the result left in `out`
/// (zeroed on `stream` first: the kernels add into it); returns without
/// waiting.
pub fn dot_into<'b, T: Element>(
    scope: &mut Scope<'_, 'b>,
    a: impl Into<Input<'b, T>>,
    b: impl Into<Input<'b, T>>,
    kernel: SeedDot,
    out: impl Into<Output<'b, T>>,
    stream: &'b Stream,
) -> Result<()> {
    let out = out.into().single("out")?;
    enqueue_dot(
        scope.reducer(),
        &a.into().slice(),
        &b.into().slice(),
        kernel,
        out,
        Some(stream),
    )
}

fn enqueue_dot<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    a: &B::Slice<T>,
    b: &B::Slice<T>,
    kernel: SeedDot,
    out: u64,
    stream: Option<&Stream>,
) -> Result<()> {
    let (a, b, len) = checked_pair::<B, T>(a, b)?;
    let seed = Kernel::SeedDot {
        kind: kernel,
        element: T::TYPE,
    };
    if seed.name().is_none() {
        return Err(Error::UnsupportedStrategy {
            kernel: format!("seed 004 dot kernel {kernel:?}"),
            element: T::TYPE,
        });
    }
    let blocks = seed_dot_blocks(len)?;
    let accesses = [
        Access::read::<T>("a", a, len),
        Access::read::<T>("b", b, len),
        Access::write::<T>("out", out, 1),
    ];
    let launch = Launch {
        kernel: seed,
        shape: LaunchShape {
            blocks,
            threads_per_block: SEED_DOT_THREADS,
        },
        shared_bytes: SEED_DOT_THREADS * T::TYPE.size() as u32,
        args: SeedDotArgs {
            a,
            b,
            len: len as u64,
            out,
        },
        accesses: &accesses,
    };
    let backend = &mut reducer.backend;
    // SAFETY: `out` holds one 4-byte `T` (i32 or f32, checked above), zeroed
    // on the same stream before the kernel adds into it; the arguments match
    // the seed dot entry points; the block tree needs one `T` of shared
    // memory per thread.
    unsafe {
        backend.zero_words(out, 1, stream)?;
        backend.launch(&launch, stream)
    }
}

/// The `T` (4 bytes: `i32` or `f32`) at the start of the result slot.
fn read_result<B: Backend, T: Element>(reducer: &mut Reducer<B>) -> Result<T> {
    let [bits, _] = reducer.backend.read_result_slot()?;
    // SAFETY: the kernel wrote one 4-byte `T` (the ladder's types, checked by
    // the kernel lookup) at the start of the slot.
    Ok(unsafe { std::ptr::read(&bits as *const u64 as *const T) })
}

/// Threads per block of both seed 004 dot kernels (the seed's 256).
const SEED_DOT_THREADS: u32 = 256;

/// Blocks for `len` pairs: one thread per pair.
fn seed_dot_blocks(len: usize) -> Result<u32> {
    let blocks = (len as u64).div_ceil(SEED_DOT_THREADS as u64).max(1);
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::InvalidPolicy(format!("{len} elements are too many for one thread each")))
}

/// Input elements each thread of `rung` reads.
fn elements_per_thread(rung: Rung, element: ElementType) -> u64 {
    match rung {
        Rung::InterleavedDivergent | Rung::InterleavedStrided | Rung::SequentialAddressing => 1,
        Rung::FirstAddDuringLoad => 2,
        Rung::VectorViaShared | Rung::CoarsenedVector | Rung::WarpShuffle => VECTOR_BYTES / element.size() as u64,
    }
}

/// Blocks one pass of `rung` over `len` elements starting at `address`
/// needs. The vector rungs read the 16-byte-aligned groups of the address
/// range, so an input that starts inside a group needs that group counted too.
fn blocks_for(rung: Rung, len: u64, address: u64, block_threads: u32, element: ElementType) -> u64 {
    let per_thread = elements_per_thread(rung, element);
    let threads = match rung {
        Rung::VectorViaShared | Rung::CoarsenedVector | Rung::WarpShuffle => {
            let skipped = address % VECTOR_BYTES / element.size() as u64;
            (skipped + len).div_ceil(per_thread)
        }
        _ => len.div_ceil(per_thread),
    };
    threads.div_ceil(block_threads as u64).max(1)
}

/// Dynamic shared memory one block of `rung` needs.
fn shared_bytes(rung: Rung, block_threads: u32, element: ElementType) -> u32 {
    let values = match rung {
        Rung::VectorViaShared => block_threads * elements_per_thread(rung, element) as u32,
        Rung::WarpShuffle => 0,
        _ => block_threads,
    };
    values * element.size() as u32
}

/// The launches of one ladder reduction: each pass reduces the previous
/// pass's per-block results, until one block writes the result. The GPU and
/// the emulator both follow it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LadderPlan {
    rung: Rung,
    block_threads: u32,
    element: ElementType,
    /// 8-byte words of scratch for the per-block results: the first pass's
    /// region, then the second's (later passes alternate between the two).
    region_words: [usize; 2],
}

/// One launch of a ladder rung: `blocks` blocks reduce `len` elements at
/// `source` into one result each at `destination`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LadderPass {
    pub source: u64,
    pub len: u64,
    pub blocks: u32,
    pub destination: u64,
}

impl LadderPlan {
    /// The plan for `len` elements of `element` at address `input`.
    pub(crate) fn new(rung: Rung, block_threads: u32, element: ElementType, input: u64, len: u64) -> Result<Self> {
        let first = blocks_for(rung, len, input, block_threads, element);
        if first > i32::MAX as u64 {
            return Err(Error::InvalidPolicy(format!(
                "{len} elements need more than 2^31 blocks of {block_threads} threads; use more threads per block"
            )));
        }
        // Later passes read a region at an 8-byte-aligned address; count the
        // worst case (it starts one 8-byte word into a 16-byte group).
        let second = if first > 1 {
            blocks_for(rung, first, 8, block_threads, element)
        } else {
            0
        };
        let words = |results: u64| (results as usize * element.size()).div_ceil(8);
        Ok(LadderPlan {
            rung,
            block_threads,
            element,
            region_words: [words(first), words(second)],
        })
    }

    /// 8-byte words of scratch the passes need (at least 1).
    pub(crate) fn scratch_words(&self) -> usize {
        let [first, second] = self.region_words;
        (first + second).max(1)
    }

    /// The passes over `len` elements at `input`, with per-block results in
    /// the scratch at `scratch` and the final result at `out`.
    pub(crate) fn passes(&self, input: u64, len: u64, scratch: u64, out: u64) -> Vec<LadderPass> {
        let [first_words, _] = self.region_words;
        let regions = (scratch, scratch + 8 * first_words as u64);
        let mut passes = Vec::new();
        let (mut source, mut len) = (input, len);
        loop {
            let blocks = blocks_for(self.rung, len, source, self.block_threads, self.element);
            let destination = match (blocks, passes.len() % 2) {
                (1, _) => out,
                (_, 0) => regions.0,
                _ => regions.1,
            };
            passes.push(LadderPass {
                source,
                len,
                blocks: blocks as u32,
                destination,
            });
            if blocks == 1 {
                return passes;
            }
            (source, len) = (destination, blocks);
        }
    }
}
