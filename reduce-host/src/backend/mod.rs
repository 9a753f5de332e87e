//! Where kernels run: the [`Backend`] a [`Reducer`](crate::Reducer) launches
//! through. Every operation is written once, in [`crate::reducer`],
//! [`crate::segmented`] and [`crate::ladder`], over this interface:
//! - [`Cuda`] (feature `cust`): a GPU through the CUDA driver, over cust's
//!   buffers; `gpu`, the same over raw views, is what the cudarc interop
//!   uses. Both load the kernels' modules into the current context as they
//!   are first used (`images`), through the driver calls of `driver`, which
//!   load `libcuda` at run time;
//! - [`Emulated`]: the same kernels on the CPU, under the SIMT emulator that
//!   checks every access ([`crate::emulated`]).
//!
//! A backend allocates the launch's workspace (per-block partials and
//! tickets), launches a kernel by its identity (`abi::Kernel`) with the typed
//! argument struct of its family, and reads results back. Each launch also
//! lists the caller's buffers it reads and writes (`launcher::Access`): the emulator
//! checks every access against them.

#[cfg(feature = "cust")]
mod cuda;
#[cfg(any(feature = "cust", feature = "cudarc"))]
pub(crate) mod driver;
mod emulated;
#[cfg(any(feature = "cust", feature = "cudarc"))]
pub(crate) mod gpu;
#[cfg(any(feature = "cust", feature = "cudarc"))]
mod images;
pub(crate) mod launcher;
// Pure bookkeeping: its tests run in every configuration. (Some of it is
// the cudarc interop's only, and cust's scopes use the rest.)
#[cfg(any(feature = "cust", feature = "cudarc", test))]
#[cfg_attr(not(all(feature = "cust", feature = "cudarc")), allow(dead_code))]
pub(crate) mod lending;

#[cfg(feature = "cust")]
pub use cuda::Cuda;
pub use emulated::{Emulated, HostBuffer};

/// A place to run the library's kernels: [`Cuda`] or [`Emulated`].
///
/// Sealed: the operations rely on what each backend guarantees.
///
/// Code written once over `Reducer<B>` runs on either backend; `B::Slice<T>`
/// is a `cust` `DeviceSlice<T>` for `Cuda` and a `[T]` for [`Emulated`].
/// ```
/// # fn main() -> Result<(), reduce::Error> {
/// use reduce::{emulated::Emulator, Backend, Op, Reducer};
/// fn spread<B: Backend>(r: &mut Reducer<B>, x: &B::Slice<i32>) -> reduce::Result<i32> {
///     Ok(r.reduce(x, Op::Max)? - r.reduce(x, Op::Min)?)
/// }
/// assert_eq!(spread(&mut Emulator::default(), &[4, -3, 9])?, 12);
/// # Ok(()) }
/// ```
pub trait Backend: launcher::Launcher {}

impl<B: launcher::Launcher> Backend for B {}
