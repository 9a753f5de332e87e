//! The buffers the free functions take: [`DeviceInput`].

use crate::axes::Reduced;
use crate::element::DeviceValue;
use crate::error::Result;
use crate::over::Over;
use crate::reduction::Reduction;
use cust_core::DeviceCopy;

pub(crate) mod sealed {
    /// Only the buffer kinds this crate knows how to read.
    pub trait Sealed {}
}

/// A device buffer of `T`s the free functions ([`crate::reduce()`],
/// [`crate::reduce_over`], [`crate::sum`], …) reduce: cust's
/// `DeviceBuffer<T>` and `DeviceSlice<T>` (`buf.index(3..)`), and with the
/// `cudarc` feature cudarc's `CudaSlice<T>`, `CudaView<T>` and
/// `CudaViewMut<T>` (of half 2's `f16`/`bf16` too). Sealed.
///
/// Each kind is reduced by a reducer of its own runtime, cached per thread:
/// for cust buffers, the one for the context current on the thread; for
/// cudarc buffers, the one for the context of the buffer's stream (whose
/// earlier work is waited for first). The results of
/// [`crate::reduce_over`] come back in the input's kind of buffer
/// ([`DeviceInput::Buffer`]).
///
/// ```no_run
/// # fn main() -> Result<(), reduce::Error> {
/// use cust::prelude::*;
/// let _ctx = cust::quick_init()?;
/// let buf = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?;
/// assert_eq!(reduce::sum(&buf)?, 6.0); // a DeviceBuffer
/// assert_eq!(reduce::sum(&buf.index(1..))?, 5.0); // a DeviceSlice
/// # Ok(()) }
/// ```
pub trait DeviceInput<T>: sealed::Sealed {
    /// The type the kernels read `T` as: `T` itself, or half 1.8's
    /// `f16`/`bf16` (this crate's [`crate::half`]) for half 2's (cudarc's).
    type Kernel: DeviceCopy + 'static;
    /// The buffers [`crate::reduce_over`] returns results in:
    /// `DeviceBuffer<U>` for cust inputs, `CudaSlice<U>` for cudarc's
    /// (of half 2's `f16`/`bf16` for half 1.8's).
    type Buffer<U: DeviceValue>;
    /// How the offsets of [`Over::Segments`] are held, borrowed for `'o`: a
    /// cust `DeviceSlice<u64>` (`&offsets` of a `DeviceBuffer<u64>`
    /// converts), or any cudarc buffer or view of `u64`s
    /// (`dyn DevicePtr<u64> + 'o`: a `CudaSlice`, or a `CudaView` or
    /// `CudaViewMut` of any lifetime).
    type Offsets<'o>: ?Sized;

    /// `value`, of the kernels' type, as a `T` (the same bits).
    #[doc(hidden)]
    fn from_kernel(value: Self::Kernel) -> T;

    /// [`crate::reduce()`] of this buffer.
    #[doc(hidden)]
    fn reduce_whole<R: Reduction<Self::Kernel>>(&self, what: R) -> Result<R::Value>;

    /// [`crate::reduce_over`] of this buffer.
    #[doc(hidden)]
    #[allow(clippy::type_complexity)]
    fn reduce_over<'o, R: Reduction<Self::Kernel>>(
        &self,
        what: R,
        over: Over<'o, &'o Self::Offsets<'o>>,
    ) -> Result<Reduced<R::Results<Self::Buffer<R::Output>>>>;

    /// [`crate::dot`] of this buffer and `other`.
    #[doc(hidden)]
    fn dot(&self, other: &Self) -> Result<Self::Kernel>
    where
        Self::Kernel: crate::Element;

    /// [`crate::reduce_pair`] of this buffer and `other`.
    #[doc(hidden)]
    fn reduce_pair<W: crate::PairReduction<Self::Kernel>>(&self, other: &Self, what: W) -> Result<Self::Kernel>;
}

/// cust's buffers, reduced by this thread's reducer for the current context.
#[cfg(feature = "cust")]
mod cust_buffers {
    use super::*;
    use crate::backend::driver;
    use crate::error::Error;
    use crate::reducer::Reducer;
    use cust::memory::{DeviceBuffer, DeviceSlice};
    use std::cell::RefCell;
    /// `DeviceInput` for a cust buffer kind, through its `DeviceSlice`
    /// (`$slice`, of `$this`).
    macro_rules! cust_input {
        ($(#[$doc:meta])* $buffer:ident, |$this:ident| $slice:expr) => {
            const _: () = {
                fn slice<T: DeviceCopy>($this: &$buffer<T>) -> &DeviceSlice<T> {
                    $slice
                }

                impl<T: DeviceCopy + 'static> sealed::Sealed for $buffer<T> {}

                $(#[$doc])*
                impl<T: DeviceCopy + 'static> DeviceInput<T> for $buffer<T> {
                    type Kernel = T;
                    type Buffer<U: DeviceValue> = DeviceBuffer<U>;
                    type Offsets<'o> = DeviceSlice<u64>;

                    fn from_kernel(value: T) -> T {
                        value
                    }

                    fn reduce_whole<R: Reduction<T>>(&self, what: R) -> Result<R::Value> {
                        with_thread_reducer(|r| r.reduce(slice(self), what))
                    }

                    fn reduce_over<'o, R: Reduction<T>>(
                        &self,
                        what: R,
                        over: Over<'o, &'o DeviceSlice<u64>>,
                    ) -> Result<Reduced<R::Results<DeviceBuffer<R::Output>>>> {
                        with_thread_reducer(|r| r.reduce_over(slice(self), what, over))
                    }

                    fn dot(&self, other: &Self) -> Result<T>
                    where
                        T: crate::Element,
                    {
                        with_thread_reducer(|r| r.dot(slice(self), slice(other)))
                    }

                    fn reduce_pair<W: crate::PairReduction<T>>(&self, other: &Self, what: W) -> Result<T> {
                        with_thread_reducer(|r| r.reduce_pair(slice(self), slice(other), what))
                    }
                }
            };
        };
    }

    cust_input!(DeviceSlice, |slice| slice);
    cust_input!(
        /// A whole `DeviceBuffer`, as its `DeviceSlice`.
        DeviceBuffer,
        |buffer| buffer
    );

    thread_local! {
        /// This thread's reducer, for the context that was current when it
        /// was made. Dropping one whose context is gone leaks its host side
        /// (see `Cuda`'s `Drop`).
        static THREAD_REDUCER: RefCell<Option<Reducer>> = const { RefCell::new(None) };
    }

    /// Runs `f` with this thread's reducer for the current context, made anew
    /// when the context is another one, or a new one that got a destroyed
    /// context's handle.
    fn with_thread_reducer<R>(f: impl FnOnce(&mut Reducer) -> Result<R>) -> Result<R> {
        let context = driver::current_context()?;
        THREAD_REDUCER.with(|cell| {
            let mut cached = cell.borrow_mut();
            if !cached.as_ref().is_some_and(|r| r.backend.gpu.is_alive_in(context)) {
                // Let go of the old reducer (and its module) before loading a new one.
                *cached = None;
                *cached = Some(Reducer::new()?);
            }
            match cached.as_mut() {
                Some(reducer) => f(reducer),
                None => Err(Error::NoContext),
            }
        })
    }
}
