//! Launch policy: how many threads per block. The tuned value per compute
//! capability is data ([`crate::tuning`]); a [`Policy`] overrides it for one
//! [`Reducer`](crate::Reducer) (or emulator).

use crate::error::{Error, Result};
use crate::tuning::{self, Tuning};

/// Threads per block for the production and segmented kernels.
///
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, Op, Policy};
/// // On a GPU: `reduce::Reducer::with_policy(Policy::new(128)?)?`.
/// let mut emulator = Emulator::with_shape(Policy::new(128)?, 4)?;
/// assert_eq!(emulator.launch_shape::<i32>(Op::Sum, 1 << 20)?.threads_per_block, 128);
/// assert_eq!(emulator.reduce(&[2i32; 3000], Op::Sum)?, 6000);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    block_threads: u32,
}

impl Policy {
    /// The emulator's default ([`crate::emulated::Emulator::default`]): two
    /// warps per block, so the block reduction combines across warps.
    pub(crate) const EMULATOR_DEFAULT: Policy = Policy { block_threads: 64 };

    /// A policy with `block_threads` threads per block: a multiple of 32 from 32 to 1024.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{Error, Policy};
    /// assert_eq!(Policy::new(96)?.block_threads(), 96);
    /// assert!(matches!(Policy::new(100), Err(Error::InvalidPolicy(_)))); // not a multiple of 32
    /// assert!(matches!(Policy::new(2048), Err(Error::InvalidPolicy(_))));
    /// # Ok(()) }
    /// ```
    pub fn new(block_threads: u32) -> Result<Self> {
        if !(32..=1024).contains(&block_threads) || !block_threads.is_multiple_of(32) {
            return Err(Error::InvalidPolicy(format!(
                "block_threads must be a multiple of 32 between 32 and 1024, got {block_threads}"
            )));
        }
        Ok(Policy { block_threads })
    }

    /// The tuned policy for a device of compute capability `major.minor`
    /// ([`crate::tuning`]); [`Error::UnsupportedDevice`] before 7.0.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// use reduce::{Error, Policy};
    /// assert_eq!(Policy::for_compute_capability(9, 0)?.block_threads(), 512); // H100, H200
    /// assert_eq!(Policy::for_compute_capability(8, 6)?.block_threads(), 256);
    /// let pascal = Policy::for_compute_capability(6, 1);
    /// assert!(matches!(pascal, Err(Error::UnsupportedDevice { major: 6, minor: 1 })));
    /// # Ok(()) }
    /// ```
    pub fn for_compute_capability(major: u32, minor: u32) -> Result<Self> {
        Ok(Policy {
            block_threads: Self::tuning_for(major, minor)?.block_threads,
        })
    }

    /// The tuning row of compute capability `major.minor`.
    pub(crate) fn tuning_for(major: u32, minor: u32) -> Result<Tuning> {
        let cc = major.saturating_mul(10).saturating_add(minor);
        tuning::for_compute_capability(cc).ok_or(Error::UnsupportedDevice { major, minor })
    }

    /// Threads per block.
    ///
    /// ```
    /// # fn main() -> Result<(), reduce::Error> {
    /// assert_eq!(reduce::Policy::new(256)?.block_threads(), 256);
    /// # Ok(()) }
    /// ```
    pub fn block_threads(self) -> u32 {
        self.block_threads
    }
}
