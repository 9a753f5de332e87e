//! Reductions along axes of a strided tensor: one result per position of
//! the kept axes, each the fold of the elements along one reduced axis.
//!
//! The host hands a launch one reduced axis (`reduced` elements,
//! `reduced_stride` apart; several reduced axes take one launch each) and
//! the kept axes as [`Kept`]: result `o` (row-major over the kept axes) is
//! the fold over `r` of element `kept.offset(o) + r · reduced_stride`. A
//! block is a tile of `2^output_lanes_log2` consecutive results by
//! `2^reduce_lanes_log2` lanes along the reduced axis ([`AxisPlan`]), with
//! the results' index fastest: when the kept axes' innermost stride is 1
//! (the reduced axis outermost, a column-wise sum), a warp reads 32
//! consecutive elements of one row. When the reduced axis is the contiguous
//! one, the reduce lanes come first (`reduce_lanes_first`): a result's
//! lanes are consecutive threads and read consecutive elements. Each
//! thread folds its elements in order, several loads in flight; the lanes
//! of one result combine in a fixed tree, within their warp by shuffles
//! where they share one, else through shared memory.
//!
//! The results can also be the segments of a contiguous input, given by
//! offsets (each segment's fold takes its result's lanes, and is never
//! split): a statistic over segments.
//!
//! When the tiles are too few to fill the GPU, each result's reduced axis is
//! split into `splits` parts, one block each; a part's results go to the
//! `partials` slots, and the last of a tile's blocks to finish (a ticket per
//! tile, as [`crate::grid`] does for a whole input) combines them in part
//! order. Every result thus depends only on its elements and the plan, so
//! it is the same on every run.

use crate::abi::{AxisPlan, Finish, AXIS_LOADS_IN_FLIGHT as LOADS_IN_FLIGHT, PARTIAL_SLOT_BYTES};
use crate::block::{self, Slot};
use crate::device::{self, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::exact::Exact;
use crate::expansion::{ExactElement, ExactFinish, ExactMap, FastAcc, FastAccumulator, FastExact};
use crate::grid;
use crate::indexed::Indexed;
use crate::map::ElementMap;
use crate::op::Operator;
use crate::segment::Segments;
use crate::statistic::{self, Output, Statistic};
use crate::thread;
use crate::warp;
use crate::widen::Widen;
use core::marker::PhantomData;
use core::mem::size_of;

/// The kept axes of a launch, innermost first: result `o` is at element
/// offset `Σ (o's index along axis d) · strides[d]`, its indices taken
/// row-major over `extents` (extent 1 past `dims`).
#[derive(Clone, Copy)]
pub struct Kept {
    /// Axes in use, 1 to 8.
    pub dims: u64,
    /// Each axis's length (innermost first).
    pub extents: [u64; 8],
    /// Each axis's stride, in elements.
    pub strides: [u64; 8],
}

impl Kept {
    /// The element offset of result `o`'s first element.
    #[inline(always)]
    // The last axis's quotient is left unread.
    #[allow(unused_assignments)]
    fn offset(&self, o: u64) -> u64 {
        if self.dims == 1 {
            return o * self.strides[0];
        }
        let (mut rest, mut offset) = (o, 0);
        // Written out axis by axis: constant indices keep the arrays in
        // registers (a loop over them put them in local memory).
        macro_rules! axes {
            ($($axis:literal)*) => {$(
                if self.dims > $axis {
                    // Extents are at least 1 (the host launches no axis of
                    // none); the checked forms keep a panic path out of the PTX.
                    let extent = self.extents[$axis];
                    offset += rest.checked_rem(extent).unwrap_or(0) * self.strides[$axis];
                    rest = rest.checked_div(extent).unwrap_or(0);
                }
            )*};
        }
        axes!(0 1 2 3 4 5 6 7);
        offset
    }

    /// Position `o`'s index along each of the first `D` kept axes,
    /// innermost first: the outermost's unbounded (past the last position
    /// it is the extent or more), 0 past `D`; each as a `W` (the caller's
    /// choice where they fit).
    #[inline(always)]
    // The last inner axis's quotient is left unread.
    #[allow(unused_assignments)]
    fn digits<const D: usize, W: Digit>(&self, o: u64) -> [W; 8] {
        let (mut digits, mut rest) = ([W::of(0); 8], o);
        macro_rules! axes {
            ($($axis:literal)*) => {$(
                if D > $axis + 1 {
                    let extent = self.extents[$axis];
                    digits[$axis] = W::of(rest.checked_rem(extent).unwrap_or(0));
                    rest = rest.checked_div(extent).unwrap_or(0);
                } else if D == $axis + 1 {
                    digits[$axis] = W::of(rest);
                }
            )*};
        }
        axes!(0 1 2 3 4 5 6 7);
        digits
    }

    /// The element offset of the position whose indices along the first
    /// `D` kept axes are `digits`.
    #[inline(always)]
    fn offset_at<const D: usize, W: Digit>(&self, digits: &[W; 8]) -> u64 {
        let mut offset = 0;
        macro_rules! axes {
            ($($axis:literal)*) => {$(
                if D > $axis {
                    offset += digits[$axis].wide() * self.strides[$axis];
                }
            )*};
        }
        axes!(0 1 2 3 4 5 6 7);
        offset
    }

    /// The indices (as [`Kept::digits`]) of the position `step` (given by
    /// its digits) after `digits`: added axis by axis with a carry, as
    /// numbers are, so that no division is needed. An inner digit and
    /// step are below the extent, so one subtraction wraps their sum; the
    /// outermost wraps only past the last position, which is not read.
    #[inline(always)]
    // The last inner axis's carry is left unread.
    #[allow(unused_assignments)]
    fn advance<const D: usize, W: Digit>(&self, digits: [W; 8], step: &[W; 8]) -> [W; 8] {
        let (mut next, mut carry) = (digits, W::of(0));
        macro_rules! axes {
            ($($axis:literal)*) => {$(
                if D > $axis + 1 {
                    let extent = W::of(self.extents[$axis]);
                    let sum = digits[$axis].plus(step[$axis]).plus(carry);
                    carry = W::of((sum >= extent) as u64);
                    next[$axis] = if sum >= extent { sum.minus(extent) } else { sum };
                } else if D == $axis + 1 {
                    next[$axis] = digits[$axis].plus(step[$axis]).plus(carry);
                }
            )*};
        }
        axes!(0 1 2 3 4 5 6 7);
        next
    }
}

/// The integer a gather counts positions along an axis in: `u32` where
/// every sum of two digits fits one (a view of at most 2^31 elements: half
/// the instructions of `u64` arithmetic), else `u64`.
trait Digit: Copy + PartialOrd {
    /// `value` truncated (the caller knows it fits).
    fn of(value: u64) -> Self;
    fn wide(self) -> u64;
    /// Wrapping: past the last position, only the outermost digit wraps,
    /// and the walk reads nothing there.
    fn plus(self, other: Self) -> Self;
    fn minus(self, other: Self) -> Self;
}

macro_rules! digit {
    ($($t:ty),*) => {$(
        impl Digit for $t {
            #[inline(always)]
            fn of(value: u64) -> Self {
                value as $t
            }
            #[inline(always)]
            fn wide(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn minus(self, other: Self) -> Self {
                self.wrapping_sub(other)
            }
        }
    )*};
}
digit!(u32, u64);

/// A view copied in the order of its kept axes ([`crate::abi::Kernel::Gather`]):
/// for each `o < outputs` (row-major over the kept axes), the `T` at
/// element offset `kept.offset(o)` from `input` stored at `out[o]`. The exact
/// sum gathers a view whose reduced axes do not merge into one so, each
/// result's elements then a row.
///
/// A grid-stride loop: each thread's positions lie the grid's thread count
/// apart, so a warp reads and writes neighbours. Their indices along the
/// kept axes are advanced by the grid's digits ([`Kept::advance`]), not
/// divided out per element, and [`LOADS_IN_FLIGHT`] loads are issued before
/// the first store: a copy has no work per element to hide either behind.
///
/// # Safety
/// Every element `kept.offset(o)` for `o < outputs` is a readable `T` at
/// `input`, not written during the launch; `out` has room for `outputs`
/// `T`s, which nothing else reads or writes during the launch; the axes
/// past `kept.dims` have extent 1.
#[inline(always)]
pub unsafe fn gather<T: Element>(input: u64, outputs: u64, kept: Kept, out: u64) {
    // The walk written for each count of axes up to 4 (no test of the
    // count per element); more take the walk over 8, through the host's
    // axes of extent 1 past `dims`, which carry straight through. Digits
    // in `u32` where no sum of two can pass 2^32 (every extent, and so
    // every digit, below 2^31; the grid's thread count is far below).
    let narrow = outputs <= 1 << 31;
    match (kept.dims, narrow) {
        (1, true) => gather_over::<T, 1, u32>(input, outputs, kept, out),
        (2, true) => gather_over::<T, 2, u32>(input, outputs, kept, out),
        (3, true) => gather_over::<T, 3, u32>(input, outputs, kept, out),
        (4, true) => gather_over::<T, 4, u32>(input, outputs, kept, out),
        (_, true) => gather_over::<T, 8, u32>(input, outputs, kept, out),
        (_, false) => gather_over::<T, 8, u64>(input, outputs, kept, out),
    }
}

/// [`gather`] over the first `D` kept axes, with digits of `W`.
///
/// # Safety
/// As [`gather`].
#[inline(always)]
unsafe fn gather_over<T: Element, const D: usize, W: Digit>(input: u64, outputs: u64, kept: Kept, out: u64) {
    let threads = grid_dim_x() as u64 * device::block_dim_x() as u64;
    let step = kept.digits::<D, W>(threads);
    let mut o = device::index_1d();
    let mut at = kept.digits::<D, W>(o);
    let (input, out) = (device::to_global(input), device::to_global(out));
    let bytes = size_of::<T>() as u64;
    while o < outputs {
        let first = o;
        // The loads as named values, all issued before the stores (a batch
        // built in a loop went to local memory, see `fold`).
        macro_rules! next {
            () => {
                if o < outputs {
                    let value = thread::load_element::<T>(input + kept.offset_at::<D, W>(&at) * bytes);
                    at = kept.advance::<D, W>(at, &step);
                    o = o.saturating_add(threads);
                    Some(value)
                } else {
                    None
                }
            };
        }
        let (v0, v1, v2, v3, v4, v5, v6, v7) = (next!(), next!(), next!(), next!(), next!(), next!(), next!(), next!());
        let mut target = first;
        macro_rules! store {
            ($($v:ident)*) => {$(
                if let Some(value) = $v {
                    thread::store_element(out + target * bytes, value);
                }
                target = target.wrapping_add(threads);
            )*};
        }
        store!(v0 v1 v2 v3 v4 v5 v6 v7);
    }
}

/// What an axis launch folds: how it reads an element of the tensor, folds
/// a batch of them into its accumulator, merges accumulators, and writes a
/// result. [`Plain`] for an [`crate::abi::Op`]; [`FromElements`] and
/// [`FromStates`] for a [`Statistic`].
pub trait AxisFold {
    /// What a load gives.
    type Value: Copy;
    /// What a load of result `o`'s elements maps them with: `()` but for
    /// the exact variance's and logsumexp's terms, whose mean or maximum is
    /// the result's ([`AxisFold::map_for`]).
    type Map: Copy;
    /// What a thread accumulates, and the collectives carry.
    type Acc: Accumulator;
    /// Merges two accumulators.
    type Merge: Operator<Self::Acc>;
    /// Bytes per element of the tensor (its strides count these).
    const BYTES: u64;
    /// Whether a thread issues two batches of loads before it folds them:
    /// for a fold whose registers leave few threads per SM, so that each
    /// keeps twice the bytes in flight.
    const TWO_BATCHES: bool = false;

    /// The map of result `o`'s elements.
    ///
    /// # Safety
    /// `o` is a result of the launch; `output` is the launch's.
    unsafe fn map_for(output: &Output, o: u64) -> Self::Map;

    /// The element at `address`, at `position` along the reduced axis
    /// (which only argmax and argmin use), through `map` where the fold
    /// maps as it loads.
    ///
    /// # Safety
    /// `address` is the global address of a readable element, not written during the launch.
    unsafe fn load(map: Self::Map, address: u64, position: u64) -> Self::Value;

    /// `acc` with a full batch of `values` folded in, in order, through
    /// `map` where the load did not map them.
    ///
    /// # Safety
    /// Each value is one [`AxisFold::load`] gave (which may defer the read).
    unsafe fn fold_batch(map: Self::Map, acc: Self::Acc, values: [Self::Value; 8]) -> Self::Acc;

    /// `acc` with one value folded in (the short last batch, value by value).
    ///
    /// # Safety
    /// As [`AxisFold::fold_batch`].
    unsafe fn fold_one(map: Self::Map, acc: Self::Acc, value: Self::Value) -> Self::Acc;

    /// Writes result `o`, whose elements are `elements` (which only the
    /// exact sum reads again, where its accumulator cannot give the result).
    ///
    /// # Safety
    /// `output` has room for result `o` as this fold writes it; `elements`
    /// are readable, not written during the launch.
    unsafe fn write(map: Self::Map, acc: Self::Acc, output: &Output, o: u64, elements: Elements);
}

/// `M` then `O` over elements of `In`, each converted to `T` as it is read
/// (`In` = `T` but for a widened reduction), each result a `T` at `out`.
pub struct Plain<In, T, M, O>(PhantomData<(In, T, M, O)>);

impl<In: Widen<T>, T: Element, M: ElementMap<T>, O: Operator<T>> AxisFold for Plain<In, T, M, O> {
    type Map = ();
    type Value = T;
    type Acc = T;
    type Merge = O;
    const BYTES: u64 = In::BYTES;

    #[inline(always)]
    unsafe fn map_for(_: &Output, _: u64) {}

    #[inline(always)]
    unsafe fn load(_: (), address: u64, _: u64) -> T {
        In::load(address)
    }

    #[inline(always)]
    unsafe fn fold_batch(_: (), acc: T, values: [T; 8]) -> T {
        thread::fold_in_order::<T, O, T>(acc, values, M::map)
    }

    #[inline(always)]
    unsafe fn fold_one(_: (), acc: T, value: T) -> T {
        O::combine(acc, M::map(value))
    }

    #[inline(always)]
    unsafe fn write(_: (), acc: T, output: &Output, o: u64, _: Elements) {
        thread::store_result(output.at::<T>(output.out, o), acc)
    }
}

/// Where a result's elements lie: `count` of them, the first at global
/// address `first`, each `stride` bytes after the one before.
#[derive(Clone, Copy)]
pub struct Elements {
    pub first: u64,
    pub count: u64,
    pub stride: u64,
}

/// The exact sum of `T`s (each mapped by `M`: NaN as zero for the
/// NaN-ignoring sum, squares for the sum of squares, the squared deviations
/// from the result's mean or the scaled exponentials of the result's
/// maximum: their means and maxima at `output.means`, one per result, in
/// order) rounded once ([`crate::expansion`]): each lane's elements added
/// to the map's fast accumulator ([`ExactMap::Fast`]), the lanes' and
/// parts' accumulators merged exactly; a result whose total is not exact
/// (values over a very wide range, an infinity or NaN) is summed again by
/// the thread that writes it, with an [`Exact`] accumulator: correct, at
/// one thread's speed. Each result is finished as the launch's `finish`
/// says ([`ExactFinish`]: divided by its count for [`Finish::Mean`], by its
/// count less the correction in `finish_param` for the variance's).
pub struct ExactAlong<T, M>(PhantomData<(T, M)>);

impl<T: ExactElement, M: ExactMap<T>> ExactAlong<T, M> {
    /// Whether a load maps its element: the short maps (the sums', without
    /// per-result values, and the variance's), else the batch's values are
    /// mapped where they are added, after all their loads are in flight
    /// ([`ExactMap::MAPS_AS_LOADED`]): logsumexp's `exp`, with its
    /// branches, mapped as loaded made each load wait for the last's `exp`
    /// (the columns' exact logsumexp took 4.6-5.3x `LogSumExp`, H200).
    const MAPS_AS_LOADED: bool = M::MAPS_AS_LOADED || !M::READS_SHIFTS;
}

impl<T: ExactElement + Widen<T>, M: ExactMap<T>> AxisFold for ExactAlong<T, M> {
    type Map = M;
    type Value = T;
    type Acc = FastAcc<T, M>;
    type Merge = M::Fast;
    const BYTES: u64 = size_of::<T>() as u64;
    // Even capped at 64 registers (`Tuning::exact_axis_max_registers`,
    // two 512-thread blocks an SM, as the sum's 56 fit) the fold keeps
    // two batches in flight: with one, the columns' exact sums took 4–17%
    // longer (H200, 2026-12-01).
    const TWO_BATCHES: bool = true;

    #[inline(always)]
    unsafe fn map_for(output: &Output, o: u64) -> M {
        // SAFETY: a map that reads per-result values reads result `o`'s at
        // `means`, where the host puts one per result (the caller's `o` is
        // a result); the others read nothing.
        unsafe { M::of_part(output.means, o) }
    }

    /// Mapped as loaded ([`ExactAlong::MAPS_AS_LOADED`]), or where the
    /// batch is added.
    #[inline(always)]
    unsafe fn load(map: M, address: u64, _: u64) -> T {
        let value = <T as Widen<T>>::load(address);
        if Self::MAPS_AS_LOADED {
            map.apply(value)
        } else {
            value
        }
    }

    #[inline(always)]
    unsafe fn fold_batch(map: M, acc: FastAcc<T, M>, values: [T; 8]) -> FastAcc<T, M> {
        let values = if Self::MAPS_AS_LOADED {
            values
        } else {
            values.map(|value| map.apply(value))
        };
        M::Fast::add_eight(acc, values)
    }

    #[inline(always)]
    unsafe fn fold_one(map: M, acc: FastAcc<T, M>, value: T) -> FastAcc<T, M> {
        let value = if Self::MAPS_AS_LOADED { value } else { map.apply(value) };
        M::Fast::add_element(acc, value)
    }

    #[inline(always)]
    unsafe fn write(map: M, acc: FastAcc<T, M>, output: &Output, o: u64, elements: Elements) {
        let sum = if acc.is_exact() {
            M::Fast::round(acc)
        } else {
            sum_exactly_along::<T, M>(map, elements)
        };
        // The variance's finish reads its correction; the others' is a
        // constant of the launch.
        let finish = ExactFinish {
            finish: output.finish,
            correction: if M::READS_SHIFTS {
                f64::from_bits(output.finish_param)
            } else {
                0.0
            },
        };
        let result = finish.of::<T, M>(map, sum, elements.count);
        thread::store_result(output.at::<T>(output.out, o), result)
    }
}

/// The exact sum of `elements` (each mapped by `map`), rounded once, by one thread.
///
/// # Safety
/// `elements` are readable, not written during the launch.
#[inline(never)]
unsafe fn sum_exactly_along<T: ExactElement, M: ExactMap<T>>(map: M, elements: Elements) -> T {
    let mut exact = Exact::<T>::new();
    let mut address = elements.first;
    for _ in 0..elements.count {
        exact.add(map.apply(thread::load_element::<T>(address)));
        address += elements.stride;
    }
    exact.round()
}

/// The statistic `S` of elements of `In`, each converted to `S::Value` as it is read.
pub struct FromElements<In, S>(PhantomData<(In, S)>);

impl<In: Widen<S::Value>, S: Statistic> AxisFold for FromElements<In, S> {
    type Map = ();
    type Value = S::Value;
    type Acc = S::Summary;
    type Merge = S::Merge;
    const BYTES: u64 = In::BYTES;

    #[inline(always)]
    unsafe fn map_for(_: &Output, _: u64) {}

    #[inline(always)]
    unsafe fn load(_: (), address: u64, _: u64) -> S::Value {
        In::load(address)
    }

    #[inline(always)]
    unsafe fn fold_batch(_: (), acc: S::Summary, values: [S::Value; 8]) -> S::Summary {
        S::fold_batch(acc, values)
    }

    #[inline(always)]
    unsafe fn fold_one(_: (), acc: S::Summary, value: S::Value) -> S::Summary {
        S::Merge::combine(acc, S::lift(value))
    }

    #[inline(always)]
    unsafe fn write(_: (), acc: S::Summary, output: &Output, o: u64, _: Elements) {
        S::finish(acc, output, o)
    }
}

/// The statistic `S`, merging summaries an earlier launch stored. A load
/// gives a summary's address; the summaries are read as they are merged,
/// four at a time: eight of the 24-byte moments in registers at once took
/// ptxas to 168 registers, more than a block of 512 threads may use.
pub struct FromStates<S>(PhantomData<S>);

impl<S: Statistic> AxisFold for FromStates<S> {
    type Map = ();
    type Value = u64;
    type Acc = S::Summary;
    type Merge = S::Merge;
    const BYTES: u64 = 8 * <S::Summary as Accumulator>::HALVES as u64;

    #[inline(always)]
    unsafe fn map_for(_: &Output, _: u64) {}

    #[inline(always)]
    unsafe fn load(_: (), address: u64, _: u64) -> u64 {
        address
    }

    #[inline(always)]
    unsafe fn fold_batch(_: (), acc: S::Summary, addresses: [u64; 8]) -> S::Summary {
        let [a0, a1, a2, a3, a4, a5, a6, a7] = addresses;
        let mut acc = acc;
        macro_rules! merge_four {
            ($($a:ident)*) => {{
                let states = ($(statistic::load_state::<S::Summary>($a)),*);
                let (s0, s1, s2, s3) = states;
                acc = S::Merge::combine(acc, s0);
                acc = S::Merge::combine(acc, s1);
                acc = S::Merge::combine(acc, s2);
                acc = S::Merge::combine(acc, s3);
            }};
        }
        merge_four!(a0 a1 a2 a3);
        merge_four!(a4 a5 a6 a7);
        acc
    }

    #[inline(always)]
    unsafe fn fold_one(_: (), acc: S::Summary, address: u64) -> S::Summary {
        S::Merge::combine(acc, statistic::load_state(address))
    }

    #[inline(always)]
    unsafe fn write(_: (), acc: S::Summary, output: &Output, o: u64, _: Elements) {
        S::finish(acc, output, o)
    }
}

/// argmax (`O` = [`crate::op::Max`]) or argmin (`Min`) along the reduced
/// axis of elements of `In`, compared as `A` (converted exactly): each
/// result the position (a `u64`) of the preferred element, the first
/// among equal ones ([`crate::indexed`]'s rules).
pub struct ArgAlong<In, A, O>(PhantomData<(In, A, O)>);

impl<In: Widen<A>, A: Element, O: Operator<Indexed<A>>> AxisFold for ArgAlong<In, A, O> {
    type Map = ();
    type Value = Indexed<A>;
    type Acc = Indexed<A>;
    type Merge = O;
    const BYTES: u64 = In::BYTES;

    #[inline(always)]
    unsafe fn map_for(_: &Output, _: u64) {}

    #[inline(always)]
    unsafe fn load(_: (), address: u64, position: u64) -> Indexed<A> {
        Indexed {
            value: In::load(address),
            index: position,
        }
    }

    #[inline(always)]
    unsafe fn fold_batch(_: (), acc: Indexed<A>, values: [Indexed<A>; 8]) -> Indexed<A> {
        thread::fold_in_order::<_, O, _>(acc, values, |value| value)
    }

    #[inline(always)]
    unsafe fn fold_one(_: (), acc: Indexed<A>, value: Indexed<A>) -> Indexed<A> {
        O::combine(acc, value)
    }

    #[inline(always)]
    unsafe fn write(_: (), acc: Indexed<A>, output: &Output, o: u64, _: Elements) {
        thread::store_element(output.at::<u64>(output.out, o), acc.index)
    }
}

/// The body of the axis entry points: `outputs` results of `F` along the
/// reduced axis, written in order as `F` writes them (see the module docs).
///
/// # Safety
/// - every element `kept.offset(o) + r · reduced_stride` (of `F::BYTES`)
///   for `o < launch.outputs` and `r < launch.reduced` is readable at
///   `launch.input`, not written during the launch; `output` has room for
///   `outputs` results;
/// - the block has `2^(output_lanes_log2 + reduce_lanes_log2)` threads, a
///   multiple of 32, and `PARTIAL_SLOT_BYTES` of dynamic shared memory per
///   thread;
/// - with `splits > 1`: `partials` has a writable slot per thread of every
///   tile's parts (`tiles · splits · 2^output_lanes_log2`), and `tickets`
///   a zero `u32` per tile, which no other launch uses concurrently.
#[inline(always)]
pub unsafe fn reduce<F: AxisFold>(launch: Launch, kept: Kept, output: Output) {
    reduce_results::<F>(launch, |o| (kept.offset(o), launch.reduced), |_| output)
}

/// [`reduce`] over the segments of a contiguous input in place of kept
/// axes: result `o` folds segment `o`'s elements (clamped into the input's
/// `segments.len`, which is `launch.reduced`). A launch of its own (entry
/// points of their own), so that the axis kernels carry no branch for it.
///
/// # Safety
/// As [`reduce`], with `launch.reduced_stride` 1 and `splits` 1 in place of
/// the kept axes' elements, and the offsets and status word as
/// [`Segments::bounds`] requires.
#[inline(always)]
pub unsafe fn reduce_segments<F: AxisFold>(launch: Launch, segments: Segments, output: Output) {
    reduce_results::<F>(
        launch,
        |o| {
            let (first, end) = segments.bounds(o);
            (first, end - first)
        },
        // A segment's `all` counts its own elements.
        |length| match output.finish {
            Finish::All => Output {
                finish_param: length,
                ..output
            },
            _ => output,
        },
    )
}

/// The parameters of an axis launch but its kept axes (or segments) and
/// its output (see [`crate::abi::AxisArgs`]).
#[derive(Clone, Copy)]
pub struct Launch {
    pub input: u64,
    pub outputs: u64,
    /// The reduced axis's length (with segments: the input's).
    pub reduced: u64,
    pub reduced_stride: u64,
    pub plan: AxisPlan,
    pub partials: u64,
    pub tickets: u64,
}

/// [`reduce`]'s loop over the tiles (and parts) of results: result `o`'s
/// first element and element count are `bounds(o)`, and it is written as
/// `output_for(its count)` says.
///
/// # Safety
/// As [`reduce`], `bounds` giving only elements it may read.
#[inline(always)]
unsafe fn reduce_results<F: AxisFold>(
    launch: Launch,
    bounds: impl Fn(u64) -> (u64, u64),
    output_for: impl Fn(u64) -> Output,
) {
    let Launch {
        input,
        outputs,
        reduced,
        reduced_stride,
        plan,
        partials,
        tickets,
    } = launch;
    let output_lanes = 1u64 << plan.output_lanes_log2;
    let reduce_lanes = 1u64 << plan.reduce_lanes_log2;
    let splits = plan.splits as u64;
    let (lane_o, lane_r) = plan.lanes(thread_idx_x() as u64);
    // Lane counts are powers of two, `splits` at least 1 (the checked forms
    // keep a panic path out of the PTX).
    let tiles = (outputs + output_lanes - 1) >> plan.output_lanes_log2;
    let rounds = (reduced + reduce_lanes - 1) >> plan.reduce_lanes_log2;
    // Each part a whole number of rounds of the lanes.
    let part = (rounds + splits - 1).checked_div(splits).unwrap_or(0) << plan.reduce_lanes_log2;
    let step = reduced_stride * F::BYTES;

    let mut unit = block_idx_x() as u64;
    while unit < tiles * splits {
        let (tile, split) = if splits == 1 {
            (unit, 0)
        } else {
            (
                unit.checked_div(splits).unwrap_or(0),
                unit.checked_rem(splits).unwrap_or(0),
            )
        };
        let o = tile * output_lanes + lane_o;
        let begin = split * part + lane_r;
        let mut acc = F::Merge::identity();
        // Result `o`'s first element and how many it folds.
        let (base, length) = if o < outputs { bounds(o) } else { (0, 0) };
        // A lane past the last result folds nothing: the last result's map.
        let map = F::map_for(&output_for(length), core::cmp::min(o, outputs.saturating_sub(1)));
        let end = core::cmp::min((split + 1) * part, length);
        if begin < end {
            let first = input + (base + begin * reduced_stride) * F::BYTES;
            let count = (end - begin + reduce_lanes - 1) >> plan.reduce_lanes_log2;
            let stride = Stride {
                bytes: step << plan.reduce_lanes_log2,
                positions: reduce_lanes,
            };
            acc = fold::<F>(map, first, begin, count, stride);
        }
        let total = combine_lanes::<F::Acc, F::Merge>(acc, plan);
        let result = if splits == 1 {
            Some(total)
        } else {
            combine_parts::<F::Acc, F::Merge>(total, tile, split, plan, partials, tickets)
        };
        if let Some(result) = result {
            if lane_r == 0 && o < outputs {
                let elements = Elements {
                    first: input + base * F::BYTES,
                    count: length,
                    stride: step,
                };
                F::write(map, result, &output_for(length), o, elements);
            }
        }
        unit += grid_dim_x() as u64;
    }
}

/// How far apart one thread's elements lie: in bytes, and in positions
/// along the reduced axis.
#[derive(Clone, Copy)]
struct Stride {
    bytes: u64,
    positions: u64,
}

/// The fold `F` over `count` elements read through `map`, the first at
/// `first` (position `position` along the reduced axis), each `stride`
/// after the last, [`LOADS_IN_FLIGHT`] loads at a time.
///
/// # Safety
/// Every element read is readable, not written during the launch.
#[inline(always)]
unsafe fn fold<F: AxisFold>(map: F::Map, first: u64, position: u64, count: u64, stride: Stride) -> F::Acc {
    let mut acc = F::Merge::identity();
    let (mut address, mut position) = (device::to_global(first), position);
    let mut left = count;
    // Every load of a batch is issued before its first combine. Written
    // out, and folded from named values: a batch built or folded in a loop
    // went to local memory.
    while F::TWO_BATCHES && left >= 2 * LOADS_IN_FLIGHT {
        let load = |k: u64| F::load(map, address + k * stride.bytes, position + k * stride.positions);
        let first = [load(0), load(1), load(2), load(3), load(4), load(5), load(6), load(7)];
        let second = [
            load(8),
            load(9),
            load(10),
            load(11),
            load(12),
            load(13),
            load(14),
            load(15),
        ];
        acc = F::fold_batch(map, F::fold_batch(map, acc, first), second);
        address += 2 * LOADS_IN_FLIGHT * stride.bytes;
        position += 2 * LOADS_IN_FLIGHT * stride.positions;
        left -= 2 * LOADS_IN_FLIGHT;
    }
    while left >= LOADS_IN_FLIGHT {
        let load = |k: u64| F::load(map, address + k * stride.bytes, position + k * stride.positions);
        let values = [load(0), load(1), load(2), load(3), load(4), load(5), load(6), load(7)];
        acc = F::fold_batch(map, acc, values);
        address += LOADS_IN_FLIGHT * stride.bytes;
        position += LOADS_IN_FLIGHT * stride.positions;
        left -= LOADS_IN_FLIGHT;
    }
    if left > 0 {
        // The short last batch: only the loads in range, each folded alone.
        let load =
            |k: u64| (k < left).then(|| F::load(map, address + k * stride.bytes, position + k * stride.positions));
        let (v0, v1, v2, v3, v4, v5, v6, v7) = (load(0), load(1), load(2), load(3), load(4), load(5), load(6), load(7));
        macro_rules! fold {
            ($($v:ident)*) => {$(if let Some(value) = $v {
                acc = F::fold_one(map, acc, value);
            })*};
        }
        fold!(v0 v1 v2 v3 v4 v5 v6 v7);
    }
    acc
}

/// Combines the values of each result's lanes along the reduced axis in a
/// fixed tree; the result is valid in lane 0 (the threads of `lane_r ==
/// 0`). With `reduce_lanes_first`, up to 32 lanes combine in their warp
/// (shuffles), and the warps of a result through shared memory; else the
/// lanes through shared memory. Ends with a barrier when it uses shared
/// memory, so the block may call it again at once.
///
/// # Safety
/// Every thread of the block calls it together; the block has the dynamic
/// shared memory [`reduce`] requires.
#[inline(always)]
unsafe fn combine_lanes<A: Accumulator, O: Operator<A>>(value: A, plan: AxisPlan) -> A {
    if plan.reduce_lanes_log2 == 0 {
        return value;
    }
    let thread = thread_idx_x() as usize;
    if !plan.reduce_lanes_first {
        // Lane `lane_r` of a result is slot `thread`; the next lane's is
        // `2^output_lanes_log2` slots on.
        return combine_in_shared::<A, O>(value, thread, true, plan.output_lanes_log2, plan.reduce_lanes_log2);
    }
    const WARP_LOG2: u32 = 5;
    let in_warp = core::cmp::min(plan.reduce_lanes_log2, WARP_LOG2);
    let value = warp::reduce_groups::<A, O>(value, 1 << in_warp);
    if plan.reduce_lanes_log2 <= WARP_LOG2 {
        return value;
    }
    // A result's warps are consecutive; warp `w`'s total, valid in its
    // lane 0, is slot `w`. The result is valid in the result's first warp,
    // whose lane 0 is `lane_r == 0`.
    let warps_log2 = plan.reduce_lanes_log2 - WARP_LOG2;
    let leader = thread & ((1 << WARP_LOG2) - 1) == 0;
    combine_in_shared::<A, O>(value, thread >> WARP_LOG2, leader, 0, warps_log2)
}

/// Combines the values of `2^count_log2` members of each group in a fixed
/// tree through shared memory: the calling thread's slot is `slot`, that of
/// member `k` of its group `slot + (k − member) · 2^stride_log2`; the
/// threads that are not `leader` (other lanes of a warp whose total the
/// leader holds) share their leader's slot and only read. The result is
/// valid in the group's member 0. Ends with a barrier.
///
/// # Safety
/// Every thread of the block calls it together, with the same counts; one
/// leader per slot; the slots lie in the block's dynamic shared memory.
#[inline(always)]
unsafe fn combine_in_shared<A: Accumulator, O: Operator<A>>(
    value: A,
    slot: usize,
    leader: bool,
    stride_log2: u32,
    count_log2: u32,
) -> A {
    let slots = device::dynamic_shared() as *mut Slot;
    let member = (slot >> stride_log2) & ((1 << count_log2) - 1);
    if leader {
        block::store_slot(slots.add(slot), value);
    }
    let mut half = 1usize << count_log2 >> 1;
    while half > 0 {
        sync_threads();
        if leader && member < half {
            let mine = block::load_slot::<A>(slots.add(slot));
            let other = block::load_slot::<A>(slots.add(slot + (half << stride_log2)));
            block::store_slot(slots.add(slot), O::combine(mine, other));
        }
        half >>= 1;
    }
    sync_threads();
    let total = block::load_slot::<A>(slots.add(slot));
    // Nobody writes the slots again before every thread has read its own.
    sync_threads();
    total
}

/// A split launch's part `split` of `tile`: publishes this block's results
/// (valid in lane 0) and, in the last of the tile's blocks to finish,
/// returns each result combined over the parts in part order (valid in
/// lane 0; `None` in the other blocks).
///
/// # Safety
/// As [`reduce`] with `splits > 1`; every thread of the block calls it together.
#[inline(always)]
unsafe fn combine_parts<A: Accumulator, O: Operator<A>>(
    total: A,
    tile: u64,
    split: u64,
    plan: AxisPlan,
    partials: u64,
    tickets: u64,
) -> Option<A> {
    let output_lanes = 1u64 << plan.output_lanes_log2;
    let splits = plan.splits as u64;
    let thread = thread_idx_x() as u64;
    let (lane_o, lane_r) = plan.lanes(thread);
    let partials = device::to_global(partials);
    let slot = |part: u64| partials + ((tile * splits + part) * output_lanes + lane_o) * PARTIAL_SLOT_BYTES;
    if lane_r == 0 {
        grid::store_partial(slot(split), total);
        // Thread 0 releases the ticket for the whole block: every writer's
        // stores are ordered before it at GPU scope first.
        device::thread_fence_gpu();
    }
    sync_threads();
    let ticket = device::to_global(tickets) + tile * size_of::<u32>() as u64;
    // Thread 0's partial slot is already written: `finished_last`'s own store
    // goes to a scratch word of the block's (the slot of part `split`,
    // rewritten with the same value).
    if !grid::finished_last(slot(split), ticket, plan.splits, total) {
        return None;
    }
    let mut acc = O::identity();
    let lanes = 1u64 << plan.reduce_lanes_log2;
    let mut part = lane_r;
    while part < splits {
        // Four slots' loads in flight before the first combine, in part order.
        let load = |k: u64| {
            let part = part + k * lanes;
            (part < splits).then(|| grid::load_partial::<A>(slot(part)))
        };
        let (p0, p1, p2, p3) = (load(0), load(1), load(2), load(3));
        macro_rules! combine {
            ($($p:ident)*) => {$(
                if let Some(value) = $p {
                    acc = O::combine(acc, value);
                }
            )*};
        }
        combine!(p0 p1 p2 p3);
        part += 4 * lanes;
    }
    let result = combine_lanes::<A, O>(acc, plan);
    if thread == 0 {
        device::store_relaxed_gpu_u32(ticket, 0);
    }
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 mixed bits of `i` (SplitMix64's finaliser).
    fn hash(i: u64) -> u64 {
        let mut z = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z ^ (z >> 31)
    }

    /// Kept axes of `dims` random extents and strides, extent 1 past them.
    fn random_kept(seed: u64, dims: usize) -> Kept {
        let mut kept = Kept {
            dims: dims as u64,
            extents: [1; 8],
            strides: [0; 8],
        };
        for axis in 0..dims {
            let h = hash(seed * 16 + axis as u64);
            kept.extents[axis] = 1 + h % 7 + (h >> 8) % 2 * (h >> 16) % 40;
            kept.strides[axis] = (h >> 24) % 5000;
        }
        kept
    }

    /// The walk of `D` axes in `W` digits from `first` by `step` visits
    /// what [`Kept::offset`] (divisions) gives for each position (the
    /// first 5000).
    fn walk_matches_offsets<const D: usize, W: Digit>(kept: &Kept, first: u64, step: u64) {
        let outputs = kept.extents.iter().product::<u64>();
        let steps = kept.digits::<D, W>(step);
        let mut at = kept.digits::<D, W>(first);
        let mut o = first;
        while o < core::cmp::min(outputs, first + 5000 * step) {
            assert_eq!(
                kept.offset_at::<D, W>(&at),
                kept.offset(o),
                "position {o} of {outputs}, step {step}"
            );
            at = kept.advance::<D, W>(at, &steps);
            o += step;
        }
    }

    #[test]
    fn the_gathers_walk_visits_the_offsets_divisions_give() {
        for seed in 0..300u64 {
            let dims = 1 + (seed % 8) as usize;
            let kept = random_kept(seed, dims);
            let outputs = kept.extents.iter().product::<u64>();
            // Steps of one thread (1), a warp, a grid larger than the view.
            for step in [1, 3, 32, outputs / 3 + 1, outputs + 5] {
                let first = hash(seed ^ step) % core::cmp::min(step, outputs);
                walk_matches_offsets::<8, u64>(&kept, first, step);
                walk_matches_offsets::<8, u32>(&kept, first, step);
                match dims {
                    1 => walk_matches_offsets::<1, u32>(&kept, first, step),
                    2 => walk_matches_offsets::<2, u32>(&kept, first, step),
                    3 => walk_matches_offsets::<3, u32>(&kept, first, step),
                    4 => walk_matches_offsets::<4, u32>(&kept, first, step),
                    _ => {}
                }
            }
        }
    }
}
