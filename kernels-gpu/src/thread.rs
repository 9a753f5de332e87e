//! Thread-level accumulation: each thread folds its share of the input into
//! one value, reading 16-byte vectors wherever the input allows it. The input
//! is a [`Source`]: one array with a map applied to each element as it is
//! read (the identity, NaN-to-zero, square, absolute value), one array of a
//! narrower type converted to the accumulator type as it is read, or the
//! elementwise product of two (a dot product), so all share every layer above
//! this one.
//!
//! The input `[0, len)` is split into
//! - a *head* of fewer than one vector's worth of elements, up to the first
//!   16-byte boundary (a sub-slice can start anywhere);
//! - a *body* of whole 16-byte vectors, read in tiles of
//!   `threads * VECTORS_PER_THREAD` vectors, the workers of a [`Team`] (the
//!   grid's blocks, or a segment's group of lanes) taking tiles in turn, each
//!   thread issuing all its loads of a tile before its first combine;
//! - the body's last partial tile, spread over the whole team: up to
//!   `VECTORS_PER_THREAD` vectors per thread, team-stride, again all loaded
//!   before the first combine;
//! - a *tail* of fewer than one vector's worth of elements.
//!
//! No element outside `[0, len)` is ever read; threads with nothing to read
//! contribute the identity. Which thread reads which element depends only on
//! `len`, the input's alignment and the team's shape, so results are
//! deterministic for a given input and launch.

use crate::abi::{VECTORS_PER_THREAD, VECTOR_BYTES};
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::indexed::Indexed;
use crate::map::{ElementMap, PairMap};
use crate::op::{AnyElement, Operator};
use crate::widen::Widen;
use core::marker::PhantomData;
use core::mem::size_of;

/// Folds one 16-byte vector (4 or 2 elements) into `acc`, pairwise.
#[inline(always)]
fn fold_vector<T: Element, O: Operator<T>>(acc: T, words: [u32; 4]) -> T {
    let lane = |k| T::vector_lane(words, k);
    if T::WORDS == 1 {
        O::combine(
            acc,
            O::combine(O::combine(lane(0), lane(1)), O::combine(lane(2), lane(3))),
        )
    } else {
        O::combine(acc, O::combine(lane(0), lane(1)))
    }
}

/// `acc` combined with `lift` of each of `values` in turn, with `O`: one
/// batch of a thread's loads, all issued before this first combine (the axis
/// kernel's folds and the statistics' summaries).
#[inline(always)]
pub(crate) fn fold_in_order<A: Accumulator, O: Operator<A>, V: Copy>(
    acc: A,
    values: [V; 8],
    lift: impl Fn(V) -> A,
) -> A {
    let [v0, v1, v2, v3, v4, v5, v6, v7] = values;
    let mut acc = acc;
    // Named values: an array folded in a loop went to local memory.
    macro_rules! fold {
        ($($v:ident)*) => {$(acc = O::combine(acc, lift($v));)*};
    }
    fold!(v0 v1 v2 v3 v4 v5 v6 v7);
    acc
}

/// One element through the read-only path.
///
/// # Safety
/// `address` is a global address of a readable, element-aligned `T`.
#[inline(always)]
pub(crate) unsafe fn load_element<T: Element>(address: u64) -> T {
    if T::WORDS == 1 {
        T::from_bits(device::load_global_nc_u32(address) as u64)
    } else {
        T::from_bits(device::load_global_nc_u64(address))
    }
}

/// One element through the coherent path: for memory the launch also writes.
///
/// # Safety
/// `address` is a global address of a readable, element-aligned `T`.
#[inline(always)]
pub(crate) unsafe fn load_written_element<T: Element>(address: u64) -> T {
    if T::WORDS == 1 {
        T::from_bits(device::load_global_u32(address) as u64)
    } else {
        T::from_bits(device::load_global_u64(address))
    }
}

/// Writes a reduction's result to global memory, a NaN as the canonical
/// NaN ([`Element::canonical`]): every path (a product's `1.0 * x` that
/// LLVM folds to `x`, the emulator's CPU arithmetic, which keeps payloads)
/// gives the same bits.
///
/// # Safety
/// `address` is a global address of a writable, element-aligned `T`.
#[inline(always)]
pub(crate) unsafe fn store_result<T: Element>(address: u64, value: T) {
    store_element(address, value.canonical())
}

/// Writes one element to global memory.
///
/// # Safety
/// `address` is a global address of a writable, element-aligned `T`.
#[inline(always)]
pub(crate) unsafe fn store_element<T: Element>(address: u64, value: T) {
    if T::WORDS == 1 {
        device::store_global_u32(address, value.to_bits() as u32)
    } else {
        device::store_global_u64(address, value.to_bits())
    }
}

/// Where the values a reduction folds come from: element `i` of the
/// (virtual) input, read as part of a 16-byte vector or on its own, as an
/// accumulator `A` (the element itself, or the element and its index).
pub trait Source<A: Accumulator>: Copy {
    /// Input elements per 16-byte vector of each array read (fewer bytes per
    /// element than `A` when the input is widened as it is read).
    const LANES: u64 = VECTOR_BYTES / size_of::<A>() as u64;

    /// Whether [`for_each_strided`] writes its four loads out (constant
    /// indices) rather than looping over them: for a source whose vector's
    /// address takes enough work that LLVM declines to unroll the loop (an
    /// offset in runs, [`crate::expansion::Runs`]). The loaded words then
    /// went to local memory, a slower path, and one `ptxas` miscompiles for
    /// `f64` words (`reduce-host/build/ptx_stores.rs`). Not every source's:
    /// written out for all, 458 of the 760 functions changed their code.
    const LOADS_WRITTEN_OUT: bool = false;

    /// The byte offset of element 0 within its 16-byte group, if every array
    /// the source reads shares it (then the body is read in vectors).
    fn common_misalignment(&self) -> Option<u64>;

    /// Elements `[index, index + LANES)` as one vector's words, for
    /// [`Source::fold`].
    ///
    /// # Safety
    /// Element `index` starts a 16-byte group of every array, all in range.
    unsafe fn vector(&self, index: u64) -> [u32; 4];

    /// Folds the vector that [`Source::vector`] returned for elements
    /// `[index, index + LANES)` into `acc`.
    fn fold<O: Operator<A> + AnyElement>(&self, acc: A, words: [u32; 4], index: u64) -> A;

    /// Element `index`.
    ///
    /// # Safety
    /// `index` is in range.
    unsafe fn element(&self, index: u64) -> A;

    /// `acc` combined with element `index`: where a source adds one element
    /// more cheaply than its operator combines two accumulators (the exact
    /// sum's expansions), it says how.
    ///
    /// # Safety
    /// `index` is in range.
    #[inline(always)]
    unsafe fn fold_element<O: Operator<A> + AnyElement>(&self, acc: A, index: u64) -> A {
        O::combine(acc, self.element(index))
    }
}

/// The words of a 16-byte vector whose lane `k` is `lane(k)` (the inverse of
/// [`Element::vector_lane`]).
#[inline(always)]
pub(crate) fn pack_lanes<T: Element>(lane: impl Fn(usize) -> T) -> [u32; 4] {
    if T::WORDS == 1 {
        [0, 1, 2, 3].map(|k| lane(k).to_bits() as u32)
    } else {
        let (first, second) = (lane(0).to_bits(), lane(1).to_bits());
        [first as u32, (first >> 32) as u32, second as u32, (second >> 32) as u32]
    }
}

/// One array at a global address, read as the marker `How` says:
/// [`Mapped`] (each element passed through a map) or [`Widened`] (each
/// element converted from a narrower type).
pub struct Array<How> {
    pub input: u64,
    pub how: PhantomData<How>,
}

impl<How> Array<How> {
    pub fn new(input: u64) -> Self {
        Array {
            input,
            how: PhantomData,
        }
    }
}

// Derived `Clone`/`Copy` would require `How: Copy`; it is only a marker.
impl<How> Clone for Array<How> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<How> Copy for Array<How> {}

/// [`Array`]'s marker: each element passed through the map `M` as it is read.
pub struct MapWith<M>(PhantomData<M>);

/// [`Array`]'s marker: elements of `In`, each converted as it is read.
pub struct WidenFrom<In>(PhantomData<In>);

/// One array, each element passed through the map `M` as it is read
/// ([`Identity`](crate::map::Identity) for plain reductions).
pub type Mapped<M> = Array<MapWith<M>>;

/// One array of a narrower type `In` (or one converted to `T`, such as
/// integers to `f64`), each element converted to the accumulator type as it
/// is read ([`Widen`]); with each element's index, argmax's input.
pub type Widened<In> = Array<WidenFrom<In>>;

impl<T: Element, M: ElementMap<T>> Source<T> for Mapped<M> {
    #[inline(always)]
    fn common_misalignment(&self) -> Option<u64> {
        Some(self.input % VECTOR_BYTES)
    }

    #[inline(always)]
    unsafe fn vector(&self, index: u64) -> [u32; 4] {
        let words = device::load_global_nc_v4(self.input + index * size_of::<T>() as u64);
        pack_lanes(|k| M::map(T::vector_lane(words, k)))
    }

    #[inline(always)]
    fn fold<O: Operator<T> + AnyElement>(&self, acc: T, words: [u32; 4], _index: u64) -> T {
        fold_vector::<T, O>(acc, words)
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> T {
        M::map(load_element::<T>(self.input + index * size_of::<T>() as u64))
    }
}

/// The items both of [`Widened`]'s sources share: whole 16-byte vectors of
/// `In`, loaded as they are (each source converts their lanes).
macro_rules! widened_vectors {
    () => {
        const LANES: u64 = VECTOR_BYTES / In::BYTES;

        #[inline(always)]
        fn common_misalignment(&self) -> Option<u64> {
            Some(self.input % VECTOR_BYTES)
        }

        #[inline(always)]
        unsafe fn vector(&self, index: u64) -> [u32; 4] {
            device::load_global_nc_v4(self.input + index * In::BYTES)
        }
    };
}

impl<T: Element, In: Widen<T>> Source<T> for Widened<In> {
    widened_vectors!();

    #[inline(always)]
    fn fold<O: Operator<T> + AnyElement>(&self, acc: T, words: [u32; 4], _index: u64) -> T {
        O::combine(acc, In::fold_vector::<O>(words))
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> T {
        In::load(self.input + index * In::BYTES)
    }
}

/// argmax's and argmin's input ([`crate::indexed`]): each element of one
/// array of `In`, converted as for a widening reduction ([`Widen`]; the
/// identity for the element types), with its index.
impl<T: Element, In: Widen<T>> Source<Indexed<T>> for Widened<In> {
    widened_vectors!();

    /// First the vector's preferred value alone, as cheaply as a plain max
    /// (or min) of its lanes ([`Widen::fold_vector`] with the element
    /// operator); only if that beats `acc` (rare once a thread has seen a few
    /// vectors: ties go to `acc`, whose elements come first) the first lane
    /// holding it.
    #[inline(always)]
    fn fold<O: Operator<Indexed<T>> + AnyElement>(&self, acc: Indexed<T>, words: [u32; 4], index: u64) -> Indexed<T> {
        let best = In::fold_vector::<O>(words);
        let merged = O::combine(acc, Indexed { value: best, index });
        // `acc`'s index is below this vector's (or the identity's u64::MAX).
        if merged.index != index {
            return acc;
        }
        // The first lane holding `best` (any NaN for a NaN; -0.0 equals
        // +0.0, and the lane's own value is kept), searched from the last.
        let holds_best = |value: T| {
            if best.is_nan() {
                value.is_nan()
            } else {
                value.equals(best)
            }
        };
        let mut first = Indexed { value: best, index };
        let mut lane = <Self as Source<Indexed<T>>>::LANES;
        while lane > 0 {
            lane -= 1;
            let value = In::word_to_accumulator(In::lane(words, lane as usize));
            if holds_best(value) {
                first = Indexed {
                    value,
                    index: index + lane,
                };
            }
        }
        first
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> Indexed<T> {
        Indexed {
            value: In::load(self.input + index * In::BYTES),
            index,
        }
    }
}

/// Two arrays combined elementwise by `M` (a dot product's terms, with
/// [`Multiply`](crate::map::Multiply)), computed as the elements are read,
/// without a temporary array.
pub struct Pairs<M> {
    pub a: u64,
    pub b: u64,
    _map: PhantomData<M>,
}

impl<M> Clone for Pairs<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for Pairs<M> {}

impl<M> Pairs<M> {
    /// The pairs of the arrays at `a` and `b` (global addresses).
    #[inline(always)]
    pub fn new(a: u64, b: u64) -> Self {
        Pairs {
            a,
            b,
            _map: PhantomData,
        }
    }
}

impl<T: Element, M: PairMap<T>> Source<T> for Pairs<M> {
    #[inline(always)]
    fn common_misalignment(&self) -> Option<u64> {
        let misalignment = self.a % VECTOR_BYTES;
        (misalignment == self.b % VECTOR_BYTES).then_some(misalignment)
    }

    #[inline(always)]
    unsafe fn vector(&self, index: u64) -> [u32; 4] {
        let offset = index * size_of::<T>() as u64;
        let (a, b) = (
            device::load_global_nc_v4(self.a + offset),
            device::load_global_nc_v4(self.b + offset),
        );
        pack_lanes(|k| M::map(T::vector_lane(a, k), T::vector_lane(b, k)))
    }

    #[inline(always)]
    fn fold<O: Operator<T> + AnyElement>(&self, acc: T, words: [u32; 4], _index: u64) -> T {
        fold_vector::<T, O>(acc, words)
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> T {
        let offset = index * size_of::<T>() as u64;
        M::map(load_element::<T>(self.a + offset), load_element::<T>(self.b + offset))
    }
}

/// Loads the `count` (at most [`VECTORS_PER_THREAD`]) vectors `first + k ·
/// stride` of the body that starts at element `head`, issuing every load
/// before the first use, then passes each to `consume` in order, with the
/// index of its first element.
///
/// # Safety
/// Those vectors are in range of `source`'s body.
#[inline(always)]
pub(crate) unsafe fn for_each_strided<A: Accumulator, S: Source<A>>(
    source: &S,
    head: u64,
    first: u64,
    stride: u64,
    count: u64,
    mut consume: impl FnMut([u32; 4], u64),
) {
    if count == 0 {
        return;
    }
    let index = |k: u64| head + (first + k * stride) * S::LANES;
    let mut loaded = [[0u32; 4]; VECTORS_PER_THREAD as usize];
    if S::LOADS_WRITTEN_OUT {
        let load = |k: u64| if k < count { source.vector(index(k)) } else { [0u32; 4] };
        loaded = [load(0), load(1), load(2), load(3)];
    } else {
        let mut k = 0;
        while k < VECTORS_PER_THREAD as usize {
            if (k as u64) < count {
                loaded[k] = source.vector(index(k as u64));
            }
            k += 1;
        }
    }
    // Constant indices into `loaded` (this pattern also pins
    // VECTORS_PER_THREAD at 4): a loop that LLVM declines to unroll (argmax
    // of half floats has a long fold) keeps `loaded` in local memory.
    let [first_vector, second_vector, third_vector, fourth_vector] = loaded;
    consume(first_vector, index(0));
    if count > 1 {
        consume(second_vector, index(1));
    }
    if count > 2 {
        consume(third_vector, index(2));
    }
    if count > 3 {
        consume(fourth_vector, index(3));
    }
}

/// Folds into `acc` the vectors [`for_each_strided`] loads.
///
/// # Safety
/// As [`for_each_strided`].
#[inline(always)]
unsafe fn fold_strided<A: Accumulator, O: Operator<A> + AnyElement, S: Source<A>>(
    mut acc: A,
    source: &S,
    head: u64,
    first: u64,
    stride: u64,
    count: u64,
) -> A {
    for_each_strided(source, head, first, stride, count, |words, index| {
        acc = source.fold::<O>(acc, words, index)
    });
    acc
}

/// The threads that share one input: `workers` workers of `threads` threads
/// each, this thread being thread `thread` of worker `worker`. A worker is a
/// block for a whole-grid reduction, or a group of lanes (or a block, or one
/// of several blocks) for one segment of a segmented reduction.
#[derive(Clone, Copy)]
pub struct Team {
    pub worker: u64,
    pub workers: u64,
    pub threads: u64,
    pub thread: u64,
}

impl Team {
    /// The whole grid, a block being a worker.
    #[inline(always)]
    pub fn grid() -> Self {
        Team {
            worker: block_idx_x() as u64,
            workers: grid_dim_x() as u64,
            threads: block_dim_x() as u64,
            thread: thread_idx_x() as u64,
        }
    }

    /// This thread alone (a segment's team of one thread).
    #[inline(always)]
    pub fn single() -> Self {
        Team {
            worker: 0,
            workers: 1,
            threads: 1,
            thread: 0,
        }
    }
}

/// This thread's fold of its share of the `len` elements of `source`, read
/// by the threads of `team`.
///
/// # Safety
/// `source` reads `len` readable, element-aligned `T`s from every array, none
/// written during the kernel.
#[inline(always)]
pub unsafe fn accumulate<A: Accumulator, O: Operator<A> + AnyElement, S: Source<A>>(
    source: S,
    len: u64,
    team: Team,
) -> A {
    let lanes = S::LANES;
    // Of the input, which may be narrower than `T`.
    let element_bytes = VECTOR_BYTES / lanes;

    let worker_threads = team.threads;
    let team_threads = worker_threads * team.workers;
    let thread_in_team = team.worker * worker_threads + team.thread;

    let mut acc = O::identity();

    let Some(misalignment) = source.common_misalignment() else {
        // Arrays at different offsets within 16 bytes share no vector
        // alignment: read element by element, team-stride.
        let mut index = thread_in_team;
        while index < len {
            acc = source.fold_element::<O>(acc, index);
            index += team_threads;
        }
        return acc;
    };

    let head = core::cmp::min(len, (VECTOR_BYTES - misalignment) % VECTOR_BYTES / element_bytes);
    let vectors = (len - head) / lanes;
    let tail_start = head + vectors * lanes;
    let tail = len - tail_start;

    let tile_vectors = worker_threads * VECTORS_PER_THREAD;
    // A shift where it can be (every segmented team, and the tuned block
    // sizes): a 64-bit division is a long subroutine, paid once per segment.
    // `checked_div` keeps a panic path (and an unresolved extern) out of the PTX.
    let full_tiles = if tile_vectors.is_power_of_two() {
        vectors >> tile_vectors.trailing_zeros()
    } else {
        vectors.checked_div(tile_vectors).unwrap_or(0)
    };
    let mut tile = team.worker;
    while tile < full_tiles {
        let first = tile * tile_vectors + team.thread;
        acc = fold_strided::<A, O, S>(acc, &source, head, first, worker_threads, VECTORS_PER_THREAD);
        tile += team.workers;
    }

    // The rest: fewer vectors than a tile of one worker, so at most
    // VECTORS_PER_THREAD per thread of the team, loaded all at once too (not
    // one latency each).
    let first = full_tiles * tile_vectors + thread_in_team;
    let mut count = 0;
    while count < VECTORS_PER_THREAD && first + count * team_threads < vectors {
        count += 1;
    }
    acc = fold_strided::<A, O, S>(acc, &source, head, first, team_threads, count);

    // Head and tail, fewer than a vector's worth each: one element per thread
    // (teams smaller than that, a segment's few lanes, take turns).
    let mut index = thread_in_team;
    while index < head + tail {
        let element = if index < head {
            index
        } else {
            tail_start + (index - head)
        };
        acc = source.fold_element::<O>(acc, element);
        index += team_threads;
    }
    acc
}
