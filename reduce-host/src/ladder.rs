//! The tutorial kernels: the ladder of classic reduction kernels that the
//! tutorials climb (interleaved, strided, sequential addressing, first
//! add during load, vector loads, warp shuffles) and the dot-product tutorial's two dot
//! products, run through the same backends as the production kernels but
//! kept apart from them: nothing on the production path uses this module.
//!
//! `cargo run --release --example ladder` measures them all on your GPU;
//! `docs/LADDER.md` has the H200 numbers.
//!
//! ```
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::emulated::Emulator;
//! use reduce::ladder::{self, Ladder, Rung, DotKernel};
//! let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
//! let mut emulator = Emulator::default();
//! let rung = Ladder::new(Rung::WarpShuffle, 64)?;
//! assert_eq!(ladder::reduce(&mut emulator, &data, reduce::Op::Max, rung)?, 1000.0);
//! assert_eq!(ladder::dot(&mut emulator, &data[..3], &data[..3], DotKernel::BlockTree)?, 14.0);
//! # Ok(()) }
//! ```

use crate::backend::launcher::StreamHandle;
use crate::backend::launcher::{element_address, Access, Launch};
use crate::backend::Backend;
use crate::element::{Element, ElementType};
use crate::error::{Error, Result};
use crate::op::Op;
use crate::reducer::{checked_parts, pair_to_one, Reducer};
#[cfg(feature = "cust")]
use crate::scope::{Input, Output, Scope, ScopeStream};
use crate::shape::{self, LaunchShape};
use kernels_gpu::abi::{self, Kernel, LadderArgs, SeedDotArgs, VECTOR_BYTES};
use std::fmt;

/// Defines a kind of the ladder's kernels from one list: its variants,
/// `ALL` (for [`Rung`]) and the kernels' name of each.
macro_rules! ladder_kinds {
    ($(#[$doc:meta])* $kind:ident = $kernel:ident { $($(#[$variant_doc:meta])* $name:ident,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $kind {
            $($(#[$variant_doc])* $name,)*
        }

        impl $kind {
            /// Every one, in the ladder's order.
            pub const ALL: [$kind; [$($kind::$name),*].len()] = [$($kind::$name),*];

            /// The kernels' name of `self`.
            fn kernel(self) -> abi::$kernel {
                match self {
                    $($kind::$name => abi::$kernel::$name,)*
                }
            }
        }
    };
}

ladder_kinds! {
    /// A rung of the ladder the tutorials climb: each is a kernel that
    /// shows one technique (`docs/LADDER.md` says what each costs on an H200).
    Rung = Rung {
        /// 1. One element per thread into shared memory; at stride `s` the threads
        ///    with `tid % 2s == 0` combine: divergent warps at every step.
        InterleavedDivergent,
        /// 2. Thread `t` combines at `2·s·t`: contiguous active threads, but
        ///    2-, 4-, 8-…-way shared-memory bank conflicts.
        InterleavedStrided,
        /// 3. Strides halve from `B/2`, thread `t < s` combines `t` and `t + s`:
        ///    no divergence in busy warps, no bank conflicts.
        SequentialAddressing,
        /// 4. Each thread adds two elements (`B` apart) while loading: half the blocks.
        FirstAddDuringLoad,
        /// 5. One 16-byte vector per thread stored into a shared array of `4·B`
        ///    values, then summed from there: 4× fewer load instructions, 4× the
        ///    shared memory.
        VectorViaShared,
        /// 6. One 16-byte vector per thread, summed in registers: shared memory
        ///    back to `B` values.
        CoarsenedVector,
        /// 7. As 6, but the block combines with warp shuffles (`shfl.sync`) and
        ///    one barrier instead of a shared-memory tree.
        WarpShuffle,
    }
}

ladder_kinds! {
    /// The dot-product tutorial's two dot-product kernels.
    DotKernel = SeedDot {
        /// Every thread atomically adds its product into the result: one atomic per element.
        AtomicPerElement,
        /// Products into shared memory, a block tree, one atomic per block.
        BlockTree,
    }
}

impl Rung {
    /// The rung's number on the ladder, 1 to 7.
    pub fn number(self) -> u32 {
        self.kernel().number()
    }

    /// The rung's kernel-name stem (`"warp_shuffle"`, ...).
    pub fn name(self) -> &'static str {
        self.kernel().name()
    }
}

impl fmt::Display for Rung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}. {}", self.number(), self.name())
    }
}

/// A rung of the ladder at a block size it supports: a power of two from 8
/// to 1024 threads (from 32 for [`Rung::WarpShuffle`]). Only
/// [`Ladder::new`] makes one, so every `Ladder` can be launched.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::ladder::{Ladder, Rung};
/// let ladder = Ladder::new(Rung::SequentialAddressing, 128)?;
/// assert_eq!((ladder.rung(), ladder.block_threads()), (Rung::SequentialAddressing, 128));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ladder {
    rung: Rung,
    block_threads: u32,
}

impl Ladder {
    /// `rung` at `block_threads` threads per block; [`Error::InvalidPolicy`]
    /// for a block size the rung does not support.
    ///
    /// ```
    /// use reduce::{ladder::{Ladder, Rung}, Error};
    /// assert!(Ladder::new(Rung::InterleavedDivergent, 8).is_ok());
    /// assert!(matches!(Ladder::new(Rung::WarpShuffle, 16), Err(Error::InvalidPolicy(_)))); // under a warp
    /// assert!(matches!(Ladder::new(Rung::CoarsenedVector, 96), Err(Error::InvalidPolicy(_)))); // not a power of two
    /// ```
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
    ///
    /// ```
    /// # use reduce::ladder::{Ladder, Rung};
    /// assert_eq!(Ladder::new(Rung::WarpShuffle, 256).map(Ladder::rung).ok(), Some(Rung::WarpShuffle));
    /// ```
    pub fn rung(self) -> Rung {
        self.rung
    }

    /// Threads per block.
    ///
    /// ```
    /// # use reduce::ladder::{Ladder, Rung};
    /// assert_eq!(Ladder::new(Rung::WarpShuffle, 256).map(Ladder::block_threads).ok(), Some(256));
    /// ```
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
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, Error, Op};
/// use reduce::ladder::{self, Ladder, Rung};
/// let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and a device buffer
/// let data: Vec<i32> = (1..=100).collect();
/// let rung = Ladder::new(Rung::FirstAddDuringLoad, 8)?; // 16 elements a block: two passes
/// assert_eq!(ladder::reduce(&mut emulator, &data, Op::Sum, rung)?, 5050);
/// let doubles = ladder::reduce(&mut emulator, &[1.0f64], Op::Sum, rung);
/// assert!(matches!(doubles, Err(Error::UnsupportedStrategy { .. }))); // i32 and f32 only
/// # Ok(()) }
/// ```
pub fn reduce<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    op: Op,
    ladder: Ladder,
) -> Result<T> {
    reducer.blocking(|reducer, out| enqueue_reduce(reducer, input, op, ladder, out, None))
}

/// [`reduce()`] enqueued on `stream` in `scope`, with the result left in
/// `out`; returns without waiting. The passes' per-block results go to the
/// stream's scratch, allocated (or grown) on the first call that needs more.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::{memory::DeviceBox, prelude::*};
/// use reduce::ladder::{self, Ladder, Rung};
/// let _ctx = cust::quick_init()?;
/// let input = DeviceBuffer::from_slice(&[1i32; 10_000])?;
/// let mut out = DeviceBox::new(&0i32)?;
/// let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// let rung = Ladder::new(Rung::WarpShuffle, 256)?;
/// reduce::Reducer::new()?.scope(|s| ladder::reduce_into(s, &input, reduce::Op::Sum, rung, &mut out, &stream))?;
/// assert_eq!(out.as_host_value()?, 10_000);
/// # Ok(()) }
/// ```
#[cfg(feature = "cust")]
pub fn reduce_into<'b, T: Element>(
    scope: &mut Scope<'_, 'b>,
    input: impl Into<Input<'b, T>>,
    op: Op,
    ladder: Ladder,
    out: impl Into<Output<'b, T>>,
    stream: impl Into<ScopeStream<'b>>,
) -> Result<()> {
    let out = out.into().single("out")?;
    enqueue_reduce(
        scope.reducer(),
        &input.into().slice(),
        op,
        ladder,
        out,
        Some(stream.into().handle()),
    )
}

fn enqueue_reduce<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    input: &B::Slice<T>,
    op: Op,
    ladder: Ladder,
    out: u64,
    stream: Option<StreamHandle>,
) -> Result<()> {
    let (input, len) = checked_parts::<B, T>(input)?;
    if len == 0 && !op.defined_on_empty() {
        return Err(Error::Empty { op });
    }
    let Ladder { rung, block_threads } = ladder;
    let kernel = Kernel::Ladder {
        rung: rung.kernel(),
        op: op.kernel(),
        element: T::TYPE.kernel(),
    };
    if kernel.name().is_none() {
        return Err(Error::UnsupportedStrategy {
            kernel: format!("ladder rung {rung} for {op}"),
            element: T::TYPE,
        });
    }
    let backend = &mut reducer.backend;
    let plan = LadderPlan::new(rung, block_threads, T::TYPE, input, len as u64)?;
    let shared_bytes = shared_bytes(rung, block_threads, T::TYPE).ok_or_else(|| {
        Error::InvalidPolicy(format!(
            "rung {rung} at {block_threads} threads needs more shared memory than a launch can ask for"
        ))
    })?;
    let scratch = backend.scratch(stream, plan.scratch_words())?;
    let passes = plan
        .passes(input, len as u64, scratch, out)
        .ok_or_else(|| too_many_blocks(len as u64, block_threads))?;
    for pass in passes {
        let (source, destination) = match (pass.source == input, pass.destination == out) {
            (true, true) => ("input", "out"),
            (true, false) => ("input", "per-block results"),
            (false, true) => ("previous pass's results", "out"),
            (false, false) => ("previous pass's results", "per-block results"),
        };
        // `pass.len` is the input's length or a count of blocks: a `usize` either way.
        let accesses = [
            Access::read::<T>(source, pass.source, pass.len as usize),
            Access::write::<T>(destination, pass.destination, pass.blocks as usize),
        ];
        let launch = Launch {
            kernel,
            shape: LaunchShape {
                blocks: pass.blocks,
                threads_per_block: block_threads,
            },
            shared_bytes,
            args: LadderArgs {
                input: pass.source,
                len: pass.len,
                out: pass.destination,
            },
            accesses: &accesses,
        };
        // SAFETY: the parameters of a ladder entry point (kernels-gpu/src/abi/):
        // `destination` has a slot per block (the scratch holds the plan's
        // regions); the shared memory is what the rung needs at this block size.
        unsafe { backend.launch(&launch, stream)? };
    }
    Ok(())
}

/// The dot product `Σ a[i]·b[i]` with one of the dot-product tutorial's kernels (`i32` or
/// `f32`); blocks until the result is on the host. Float results depend on
/// the order the atomics land in, so they can differ between runs by
/// rounding.
///
/// Errors: [`Error::LengthMismatch`] if `a` and `b` differ in length,
/// [`Error::UnsupportedStrategy`] for other types.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ladder::{self, DotKernel}};
/// let mut emulator = Emulator::default(); // on a GPU: a `Reducer` and device buffers
/// let (a, b) = ([1i32, 2, 3], [4i32, 5, 6]);
/// assert_eq!(ladder::dot(&mut emulator, &a, &b, DotKernel::AtomicPerElement)?, 32);
/// assert_eq!(ladder::dot(&mut emulator, &a, &b, DotKernel::BlockTree)?, 32);
/// # Ok(()) }
/// ```
pub fn dot<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    a: &B::Slice<T>,
    b: &B::Slice<T>,
    kernel: DotKernel,
) -> Result<T> {
    reducer.blocking(|reducer, out| enqueue_dot(reducer, a, b, kernel, out, None))
}

/// [`dot()`] enqueued on `stream` in `scope`, with the result left in `out`
/// (zeroed on `stream` first: the kernels add into it); returns without
/// waiting.
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::{memory::DeviceBox, prelude::*};
/// use reduce::ladder::{self, DotKernel};
/// let _ctx = cust::quick_init()?;
/// let (a, b) = (DeviceBuffer::from_slice(&[2.0f32; 1000])?, DeviceBuffer::from_slice(&[0.5f32; 1000])?);
/// let mut out = DeviceBox::new(&0.0f32)?;
/// let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// reduce::Reducer::new()?.scope(|s| ladder::dot_into(s, &a, &b, DotKernel::BlockTree, &mut out, &stream))?;
/// assert_eq!(out.as_host_value()?, 1000.0); // exact here: every partial sum is an integer
/// # Ok(()) }
/// ```
#[cfg(feature = "cust")]
pub fn dot_into<'b, T: Element>(
    scope: &mut Scope<'_, 'b>,
    a: impl Into<Input<'b, T>>,
    b: impl Into<Input<'b, T>>,
    kernel: DotKernel,
    out: impl Into<Output<'b, T>>,
    stream: impl Into<ScopeStream<'b>>,
) -> Result<()> {
    let out = out.into().single("out")?;
    enqueue_dot(
        scope.reducer(),
        &a.into().slice(),
        &b.into().slice(),
        kernel,
        out,
        Some(stream.into().handle()),
    )
}

fn enqueue_dot<B: Backend, T: Element>(
    reducer: &mut Reducer<B>,
    a: &B::Slice<T>,
    b: &B::Slice<T>,
    kernel: DotKernel,
    out: u64,
    stream: Option<StreamHandle>,
) -> Result<()> {
    let ((a, b, len), accesses) = pair_to_one::<B, T>(a, b, out)?;
    let seed = Kernel::SeedDot {
        kind: kernel.kernel(),
        element: T::TYPE.kernel(),
    };
    if seed.name().is_none() {
        return Err(Error::UnsupportedStrategy {
            kernel: format!("ladder dot kernel {kernel:?}"),
            element: T::TYPE,
        });
    }
    let blocks = seed_dot_blocks(len)?;
    let launch = Launch {
        kernel: seed,
        shape: LaunchShape {
            blocks,
            threads_per_block: SEED_DOT_THREADS,
        },
        // A constant, so an overflow would not compile.
        shared_bytes: const { SEED_DOT_THREADS * std::mem::size_of::<T>() as u32 },
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

/// Threads per block of both ladder dot kernels (the tutorial's 256).
const SEED_DOT_THREADS: u32 = 256;

/// Blocks for `len` pairs: one thread per pair.
fn seed_dot_blocks(len: usize) -> Result<u32> {
    let blocks = (len as u64).div_ceil(SEED_DOT_THREADS as u64).max(1);
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::InvalidPolicy(format!("{len} elements are too many for one thread each")))
}

/// [`Error::InvalidPolicy`]: `len` elements are too many for one ladder
/// reduction with blocks of `block_threads` threads.
fn too_many_blocks(len: u64, block_threads: u32) -> Error {
    Error::InvalidPolicy(format!(
        "{len} elements need more than 2^31 blocks of {block_threads} threads; use more threads per block"
    ))
}

/// Input elements each thread of `rung` reads (at most 16); `None` as
/// [`shape::elements_per_vector`].
fn elements_per_thread(rung: Rung, element: ElementType) -> Option<u64> {
    match rung {
        Rung::InterleavedDivergent | Rung::InterleavedStrided | Rung::SequentialAddressing => Some(1),
        Rung::FirstAddDuringLoad => Some(2),
        Rung::VectorViaShared | Rung::CoarsenedVector | Rung::WarpShuffle => shape::elements_per_vector(element.size()),
    }
}

/// Blocks one pass of `rung` over `len` elements starting at `address`
/// needs. The vector rungs read the 16-byte-aligned groups of the address
/// range, so an input that starts inside a group needs that group counted
/// too. `None` where the count passes `u64::MAX` (far more than 2^31 blocks).
fn blocks_for(rung: Rung, len: u64, address: u64, block_threads: u32, element: ElementType) -> Option<u64> {
    let per_thread = elements_per_thread(rung, element)?;
    let threads = match rung {
        Rung::VectorViaShared | Rung::CoarsenedVector | Rung::WarpShuffle => {
            let skipped = (address % VECTOR_BYTES).checked_div(element.size() as u64)?;
            skipped.checked_add(len)?.div_ceil(per_thread)
        }
        _ => len.div_ceil(per_thread),
    };
    Some(threads.div_ceil(u64::from(block_threads)).max(1))
}

/// Dynamic shared memory one block of `rung` needs (at most 64 KiB for a
/// [`Ladder`]'s block sizes); `None` past `u32::MAX`.
fn shared_bytes(rung: Rung, block_threads: u32, element: ElementType) -> Option<u32> {
    let values = match rung {
        Rung::VectorViaShared => block_threads.checked_mul(elements_per_thread(rung, element)? as u32)?,
        Rung::WarpShuffle => 0,
        _ => block_threads,
    };
    values.checked_mul(element.size() as u32)
}

/// The launches of one ladder reduction: each pass reduces the previous
/// pass's per-block results, until one block writes the result. The GPU and
/// the emulator both follow it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LadderPlan {
    rung: Rung,
    block_threads: u32,
    element: ElementType,
    /// 8-byte words of scratch for the first pass's per-block results; the
    /// second pass's region follows (later passes alternate between the two).
    first_region_words: usize,
    /// 8-byte words of scratch the passes need (at least 1).
    scratch_words: usize,
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
        let too_many = || too_many_blocks(len, block_threads);
        let first = blocks_for(rung, len, input, block_threads, element)
            .filter(|&blocks| blocks <= i32::MAX as u64)
            .ok_or_else(too_many)?;
        // Later passes read a region at an 8-byte-aligned address; count the
        // worst case (it starts one 8-byte word into a 16-byte group).
        let second = if first > 1 {
            blocks_for(rung, first, 8, block_threads, element).ok_or_else(too_many)?
        } else {
            0
        };
        // Below 2^31 results of at most 8 bytes: these never overflow.
        let words = |results: u64| Some(usize::try_from(results).ok()?.checked_mul(element.size())?.div_ceil(8));
        let (first_region_words, second_region_words) = words(first).zip(words(second)).ok_or_else(too_many)?;
        let scratch_words = first_region_words
            .checked_add(second_region_words)
            .ok_or_else(too_many)?
            .max(1);
        Ok(LadderPlan {
            rung,
            block_threads,
            element,
            first_region_words,
            scratch_words,
        })
    }

    /// 8-byte words of scratch the passes need (at least 1).
    pub(crate) fn scratch_words(&self) -> usize {
        self.scratch_words
    }

    /// The passes over `len` elements at `input`, with per-block results in
    /// the scratch at `scratch` and the final result at `out`. `None` only
    /// where [`LadderPlan::new`] would have refused `len` at `input`, or for
    /// a scratch that ends past `u64::MAX`.
    pub(crate) fn passes(&self, input: u64, len: u64, scratch: u64, out: u64) -> Option<Vec<LadderPass>> {
        let regions = (scratch, element_address::<u64>(scratch, self.first_region_words)?);
        let mut passes = Vec::new();
        let (mut source, mut len) = (input, len);
        loop {
            let blocks = blocks_for(self.rung, len, source, self.block_threads, self.element)?;
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
                return Some(passes);
            }
            (source, len) = (destination, blocks);
        }
    }
}
