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
//! - the body's last partial tile, one vector per thread, team-stride;
//! - a *tail* of fewer than one vector's worth of elements.
//!
//! No element outside `[0, len)` is ever read; threads with nothing to read
//! contribute the identity. Which thread reads which element depends only on
//! `len`, the input's alignment and the team's shape, so results are
//! deterministic for a given input and launch.

use crate::abi::{VECTORS_PER_THREAD, VECTOR_BYTES};
use crate::device::{self, block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::element::Element;
use crate::map::ElementMap;
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

/// Where the elements a reduction folds come from: element `i` of the
/// (virtual) input, read as part of a 16-byte vector or on its own.
pub trait Source<T: Element>: Copy {
    /// Input elements per 16-byte vector of each array read (fewer bytes per
    /// element than `T` when the input is widened as it is read).
    const LANES: u64 = VECTOR_BYTES / size_of::<T>() as u64;

    /// The byte offset of element 0 within its 16-byte group, if every array
    /// the source reads shares it (then the body is read in vectors).
    fn common_misalignment(&self) -> Option<u64>;

    /// Elements `[index, index + LANES)` as one vector's words, for
    /// [`Source::fold`].
    ///
    /// # Safety
    /// Element `index` starts a 16-byte group of every array, all in range.
    unsafe fn vector(&self, index: u64) -> [u32; 4];

    /// Folds a vector that [`Source::vector`] returned into `acc`.
    #[inline(always)]
    fn fold<O: Operator<T> + AnyElement>(acc: T, words: [u32; 4]) -> T {
        fold_vector::<T, O>(acc, words)
    }

    /// Element `index`.
    ///
    /// # Safety
    /// `index` is in range.
    unsafe fn element(&self, index: u64) -> T;
}

/// The words of a 16-byte vector whose lane `k` is `lane(k)` (the inverse of
/// [`Element::vector_lane`]).
#[inline(always)]
fn pack_lanes<T: Element>(lane: impl Fn(usize) -> T) -> [u32; 4] {
    if T::WORDS == 1 {
        [0, 1, 2, 3].map(|k| lane(k).to_bits() as u32)
    } else {
        let (first, second) = (lane(0).to_bits(), lane(1).to_bits());
        [first as u32, (first >> 32) as u32, second as u32, (second >> 32) as u32]
    }
}

/// One array at a global address, each element passed through the map `M`
/// as it is read ([`Identity`](crate::map::Identity) for plain reductions).
pub struct Mapped<M> {
    pub input: u64,
    pub map: PhantomData<M>,
}

impl<M> Mapped<M> {
    pub fn new(input: u64) -> Self {
        Mapped {
            input,
            map: PhantomData,
        }
    }
}

// Derived `Clone`/`Copy` would require `M: Copy`; the map is only a type.
impl<M> Clone for Mapped<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for Mapped<M> {}

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
    unsafe fn element(&self, index: u64) -> T {
        M::map(load_element::<T>(self.input + index * size_of::<T>() as u64))
    }
}

/// One array of a narrower type `In` (or one converted to `T`, such as
/// integers to `f64`), each element converted to the accumulator type as it
/// is read ([`Widen`]).
pub struct Widened<In> {
    pub input: u64,
    pub element: PhantomData<In>,
}

impl<In> Widened<In> {
    pub fn new(input: u64) -> Self {
        Widened {
            input,
            element: PhantomData,
        }
    }
}

// As for `Mapped`: the input type is only a marker.
impl<In> Clone for Widened<In> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<In> Copy for Widened<In> {}

impl<T: Element, In: Widen<T>> Source<T> for Widened<In> {
    const LANES: u64 = VECTOR_BYTES / In::BYTES;

    #[inline(always)]
    fn common_misalignment(&self) -> Option<u64> {
        Some(self.input % VECTOR_BYTES)
    }

    #[inline(always)]
    unsafe fn vector(&self, index: u64) -> [u32; 4] {
        device::load_global_nc_v4(self.input + index * In::BYTES)
    }

    #[inline(always)]
    fn fold<O: Operator<T> + AnyElement>(acc: T, words: [u32; 4]) -> T {
        O::combine(acc, In::fold_vector::<O>(words))
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> T {
        In::load(self.input + index * In::BYTES)
    }
}

/// The index of the first element equal to a target (NaN matches NaN), as
/// a `u64` to be combined with `Min`: each element contributes its index if it
/// matches and `u64::MAX` (`Min`'s identity) if not. The second pass of
/// argmax/argmin, whose first pass found the target.
#[derive(Clone, Copy)]
pub struct IndexOf<T> {
    pub input: u64,
    pub target: T,
}

impl<T: Element> IndexOf<T> {
    /// `index` if `value` is the target, `u64::MAX` if not.
    #[inline(always)]
    fn candidate(&self, value: T, index: u64) -> u64 {
        let matches = if self.target.is_nan() {
            value.is_nan()
        } else {
            value.equals(self.target)
        };
        if matches {
            index
        } else {
            u64::MAX
        }
    }
}

impl<T: Element> Source<u64> for IndexOf<T> {
    const LANES: u64 = VECTOR_BYTES / size_of::<T>() as u64;

    #[inline(always)]
    fn common_misalignment(&self) -> Option<u64> {
        Some(self.input % VECTOR_BYTES)
    }

    /// The smallest matching index among the vector's lanes, as the first of
    /// two `u64` lanes (the second is `u64::MAX`), for the default fold.
    #[inline(always)]
    unsafe fn vector(&self, index: u64) -> [u32; 4] {
        let words = device::load_global_nc_v4(self.input + index * size_of::<T>() as u64);
        let lanes = Self::LANES as usize;
        let mut first = u64::MAX;
        let mut k = 0;
        while k < lanes {
            first = Ord::min(first, self.candidate(T::vector_lane(words, k), index + k as u64));
            k += 1;
        }
        [first as u32, (first >> 32) as u32, u32::MAX, u32::MAX]
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> u64 {
        self.candidate(load_element::<T>(self.input + index * size_of::<T>() as u64), index)
    }
}

/// The elementwise product of two arrays (a dot product's terms), computed
/// as the elements are read, without a temporary array.
#[derive(Clone, Copy)]
pub struct Product {
    pub a: u64,
    pub b: u64,
}

impl<T: Element> Source<T> for Product {
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
        pack_lanes(|k| T::vector_lane(a, k).mul(T::vector_lane(b, k)))
    }

    #[inline(always)]
    unsafe fn element(&self, index: u64) -> T {
        let offset = index * size_of::<T>() as u64;
        load_element::<T>(self.a + offset).mul(load_element::<T>(self.b + offset))
    }
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
}

/// This thread's fold of its share of the `len` elements of `source`, read
/// by the threads of `team`.
///
/// # Safety
/// `source` reads `len` readable, element-aligned `T`s from every array, none
/// written during the kernel.
#[inline(always)]
pub unsafe fn accumulate<T: Element, O: Operator<T> + AnyElement, S: Source<T>>(source: S, len: u64, team: Team) -> T {
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
            acc = O::combine(acc, source.element(index));
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
        let mut loaded = [[0u32; 4]; VECTORS_PER_THREAD as usize];
        let mut k = 0;
        while k < VECTORS_PER_THREAD as usize {
            loaded[k] = source.vector(head + (first + k as u64 * worker_threads) * lanes);
            k += 1;
        }
        let mut k = 0;
        while k < VECTORS_PER_THREAD as usize {
            acc = S::fold::<O>(acc, loaded[k]);
            k += 1;
        }
        tile += team.workers;
    }

    let mut vector = full_tiles * tile_vectors + thread_in_team;
    while vector < vectors {
        acc = S::fold::<O>(acc, source.vector(head + vector * lanes));
        vector += team_threads;
    }

    // Head and tail, fewer than a vector's worth each: one element per thread
    // (teams smaller than that, a segment's few lanes, take turns).
    let mut index = thread_in_team;
    while index < head + tail {
        let element = if index < head {
            index
        } else {
            tail_start + (index - head)
        };
        acc = O::combine(acc, source.element(element));
        index += team_threads;
    }
    acc
}
