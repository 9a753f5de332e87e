//! Where a launch writes its results: in the order it computes them, or
//! placed by a permutation of the kept axes.
//!
//! A reduction over a permuted view runs in memory order (the fastest way
//! to read it), so its results come out in memory order too; the caller
//! wants them in the view's order. Rather than a second launch that
//! transposes them, the host can hand the launch a [`Placement`]: result
//! `o` (in memory order) goes to index [`Placement::index`]`(o)` of the
//! output. The writes are then scattered, which the host only asks for
//! where the results fit the GPU's L2 cache, so that each line is completed
//! there before it is written back.

use core::mem::size_of;

/// Up to 4 axes of results, innermost first: result `o`'s indices along
/// them (row-major over `extents`) times `strides` give its place. `dims`
/// 0: result `o` is at `o`.
#[derive(Clone, Copy)]
pub struct Placement {
    /// Axes in use, 0 (in order) to 4.
    pub dims: u64,
    /// Each axis's length (innermost first); at least 1.
    pub extents: [u64; 4],
    /// Each axis's stride in the output, in results.
    pub strides: [u64; 4],
}

impl Placement {
    /// Each result at its own index.
    pub const IN_ORDER: Placement = Placement {
        dims: 0,
        extents: [1; 4],
        strides: [0; 4],
    };

    /// The index result `o` is written at.
    #[inline(always)]
    // The last axis's quotient is left unread.
    #[allow(unused_assignments)]
    pub fn index(&self, o: u64) -> u64 {
        if self.dims == 0 {
            return o;
        }
        let (mut rest, mut index) = (o, 0);
        // Written out axis by axis, as `axis::Kept::offset`: constant
        // indices keep the arrays in registers.
        macro_rules! axes {
            ($($axis:literal)*) => {$(
                if self.dims > $axis {
                    // The checked forms keep a panic path out of the PTX.
                    let extent = self.extents[$axis];
                    index += rest.checked_rem(extent).unwrap_or(0) * self.strides[$axis];
                    rest = rest.checked_div(extent).unwrap_or(0);
                }
            )*};
        }
        axes!(0 1 2 3);
        index
    }

    /// Whether result `o` is at `o`.
    #[inline(always)]
    pub fn in_order(&self) -> bool {
        self.dims == 0
    }
}

/// A launch's results: an array of them at `base` (a global address),
/// placed as `placement` says where `PLACED`, else in order. The in-order
/// form holds no placement for the code to keep in registers: the
/// segmented kernels run at a capped register count, and a placement kept
/// live through their loops made ptxas spill (24 to 76 bytes where 12 to
/// 28 were spilled, rows of 4 `f32`s 1.7× slower on the H100).
#[derive(Clone, Copy)]
pub struct Results<const PLACED: bool> {
    base: u64,
    placement: Placement,
}

impl Results<false> {
    /// Results in order at `base`.
    #[inline(always)]
    pub fn in_order(base: u64) -> Self {
        Results {
            base,
            placement: Placement::IN_ORDER,
        }
    }
}

impl Results<true> {
    /// Results at `base`, placed as `placement` says.
    #[inline(always)]
    pub fn placed(base: u64, placement: Placement) -> Self {
        Results { base, placement }
    }
}

impl<const PLACED: bool> Results<PLACED> {
    /// The global address of result `o`, an array element of `U`.
    #[inline(always)]
    pub fn at<U>(&self, o: u64) -> u64 {
        let index = if PLACED { self.placement.index(o) } else { o };
        self.base + index * size_of::<U>() as u64
    }

    /// The global address of the results' array.
    #[inline(always)]
    pub fn base(&self) -> u64 {
        self.base
    }
}
