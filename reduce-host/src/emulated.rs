//! The library's kernels on the CPU: the same Rust source as the PTX, run by a
//! SIMT emulator, over ordinary slices. No GPU, driver or CUDA context needed.
//!
//! It exists so that the kernels themselves are tested where there is no GPU
//! (CI, most laptops): an [`Emulator`] is a [`Reducer`]
//! whose backend is the emulator ([`Emulated`]): every operation runs the
//! same host code, launches the same kernels with the same launch shapes and
//! passes as on a GPU, and returns the same results. It is slow (every GPU thread is an OS thread),
//! so use it for testing and for trying the library out, not for work.
//!
//! ```
//! # fn main() -> Result<(), reduce::Error> {
//! use reduce::{emulated::Emulator, ArgMax, Op, Over};
//! let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
//! let mut emulator = Emulator::default(); // a `Reducer` over host slices
//! assert_eq!(emulator.reduce(&data, Op::Sum)?, 500_500.0);
//! assert_eq!(emulator.reduce(&data, ArgMax)?, (999, 1000.0));
//! let maxima = emulator.reduce_over(&data, Op::Max, Over::Segments(&[0u64, 2, 1000][..]))?;
//! assert_eq!(maxima.values.to_vec(), [2.0, 1000.0]);
//! # Ok(()) }
//! ```
//!
//! # What the emulator checks
//! - Every thread of a block is a real thread, so barriers really wait and
//!   shared memory is really shared; warps of 32 lanes exchange values through
//!   `shfl.sync` with PTX's rules.
//! - Blocks run one at a time in a shuffled order (a fresh order per launch,
//!   from a seed that an [`Error::EmulatedFault`](crate::error::Error::EmulatedFault)
//!   names, so the library's tests can replay it), so a kernel that depends
//!   on block order gives wrong or varying results.
//! - A barrier or shuffle that not every thread reaches, a global access
//!   outside the launch's buffers (the input slice, the workspace, the output)
//!   or misaligned, a shared array written past its end, or a panic, stops
//!   the launch with [`Error::EmulatedFault`](crate::error::Error::EmulatedFault) naming the kernel, block and
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
//! [`Emulator::default`] launches 64-thread blocks (two warps) and at most 6
//! blocks, so that small inputs already use several blocks, grid-stride
//! loops and the last-block combine. The library's tests also emulate a
//! GPU's launch shape: with the same shape, float results are bitwise those
//! of the GPU.

use crate::backend::Emulated;
pub use crate::backend::HostBuffer;
use crate::error::Result;
use crate::policy::Policy;
use crate::reducer::Reducer;

/// A [`Reducer`] that runs the kernels on the CPU (see the [module docs](self)).
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, ArgMin, Op};
/// let mut emulator = Emulator::default();
/// let data = [3i32, -7, 12, 5];
/// assert_eq!(emulator.reduce(&data, Op::Max)?, 12);
/// assert_eq!(emulator.reduce(&data, ArgMin)?, (1, -7));
/// assert_eq!(emulator.reduce(&data[2..], Op::Sum)?, 17); // any sub-slice
/// # Ok(()) }
/// ```
pub type Emulator = Reducer<Emulated>;

impl Default for Reducer<Emulated> {
    /// An emulator with the default small launch shape (64-thread blocks, at
    /// most [`Emulated::DEFAULT_MAX_GRID`] of them) and a block order seeded
    /// from the clock.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, shape::LaunchShape, Op};
    /// let shape = Emulator::default().launch_shape::<f32>(Op::Sum, 1 << 20)?;
    /// assert_eq!(shape, LaunchShape { blocks: 6, threads_per_block: 64 });
    /// # Ok(()) }
    /// ```
    fn default() -> Self {
        Reducer {
            backend: Emulated::with_default_shape(),
        }
    }
}

impl Reducer<Emulated> {
    #[doc(hidden)]
    /// An emulator that launches with `policy`'s threads per block and at
    /// most `max_grid` blocks, as a GPU with that policy and grid cap would.
    /// Errors: [`Error::InvalidPolicy`](crate::Error::InvalidPolicy) if
    /// `max_grid` is 0.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, shape::LaunchShape, Error, Op, Policy};
    /// let mut emulator = Emulator::with_shape(Policy::new(256)?, 100)?;
    /// let shape = emulator.launch_shape::<f32>(Op::Sum, 1 << 20)?;
    /// assert_eq!(shape, LaunchShape { blocks: 100, threads_per_block: 256 });
    /// assert_eq!(emulator.reduce(&[1.0f32; 5000], Op::Sum)?, 5000.0);
    /// assert!(matches!(Emulator::with_shape(Policy::new(256)?, 0), Err(Error::InvalidPolicy(_))));
    /// # Ok(()) }
    /// ```
    pub fn with_shape(policy: Policy, max_grid: u32) -> Result<Self> {
        Ok(Reducer {
            backend: Emulated::new(policy, max_grid)?,
        })
    }

    #[doc(hidden)]
    /// Fixes the block order of the next launches (each launch takes the next
    /// seed of a sequence starting here), e.g. to replay a fault, whose error
    /// names the seed of its launch.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{emulated::Emulator, Op};
    /// let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
    /// let mut emulator = Emulator::default();
    /// // For example the `block_order_seed` of an `Error::EmulatedFault`:
    /// emulator.set_block_order_seed(12345);
    /// assert_eq!(emulator.reduce(&data, Op::Sum)?, 500_500.0);
    /// # Ok(()) }
    /// ```
    pub fn set_block_order_seed(&mut self, seed: u64) {
        self.backend.set_block_order_seed(seed);
    }
}
