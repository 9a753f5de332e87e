//! The device primitives on the CPU, for the SIMT emulator
//! ([`crate::emulator`]): the same signatures and contracts as the PTX ones.
//!
//! Indices come from the emulated thread that calls; barriers and shuffles
//! wait for the other emulated threads as the hardware would, and report
//! misuse (a barrier or shuffle some threads never reach, a lane missing from
//! the member mask) as a fault instead of hanging; every global access is
//! checked against the launch's buffers, its alignment and its access rights
//! before it is made.

use crate::emulator::{self, Access, SharedAccess, SharedArray};
use core::mem::size_of;
use core::panic::Location;
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// The indices that place this thread in the launch, under `cuda_std`'s
/// names: each the field `$field` of the calling emulated thread's.
macro_rules! special_registers {
    ($($(#[$doc:meta])* $name:ident => $field:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            emulator::with_thread(|t| t.$field)
        }
    )*};
}

special_registers! {
    /// Index of this thread in its block.
    thread_idx_x => thread;
    /// Index of this block in the grid.
    block_idx_x => block;
    /// Threads per block.
    block_dim_x => block_threads;
    /// Blocks in the grid.
    grid_dim_x => grid_blocks;
}

/// Block-wide barrier.
///
/// # Safety
/// Every thread of the block must reach the same call; if one cannot, the
/// emulator reports a fault naming the threads and where they wait.
#[inline(always)]
#[track_caller]
pub unsafe fn sync_threads() {
    emulator::barrier(Location::caller())
}

/// `fence.acq_rel.gpu`: a sequentially consistent fence between the
/// emulated threads (which are OS threads).
///
/// # Safety
/// None; `unsafe` as on the GPU.
#[inline(always)]
pub unsafe fn thread_fence_gpu() {
    core::sync::atomic::fence(Ordering::SeqCst)
}

/// Butterfly shuffle over the full warp: returns `value` of lane `lane ^ lane_mask`.
///
/// # Safety
/// All 32 lanes of the warp must execute the call together (full member mask).
#[inline(always)]
#[track_caller]
pub unsafe fn shfl_xor_u32(value: u32, lane_mask: u32) -> u32 {
    emulator::shuffle_butterfly(value, lane_mask, 0x1f, u32::MAX, Location::caller())
}

/// Host memory has one address space: the global window is the generic one.
#[inline(always)]
pub fn to_global(generic: u64) -> u64 {
    generic
}

/// Loads through the read-only (non-coherent) path: one `$t` read at
/// `address` once [`emulator::check_access`] has allowed it. A plain read, not
/// an atomic one: the contract is that no thread writes these bytes during
/// the kernel, and the check faults a load from a buffer the launch writes.
macro_rules! load_global_nc {
    ($($(#[$doc:meta])* $name:ident -> $t:ty;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(address: u64) -> $t {
            emulator::check_access(address, size_of::<$t>() as u64, Access::NonCoherentLoad);
            (address as *const $t).read()
        }
    )*};
}

load_global_nc! {
    /// One 16-byte load through the read-only (non-coherent) path.
    ///
    /// # Safety
    /// `address` is a 16-byte-aligned global address of 16 readable bytes that no
    /// thread writes during the kernel.
    load_global_nc_v4 -> [u32; 4];
    /// One 4-byte load through the read-only path.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 4 bytes at a 4-byte-aligned address.
    load_global_nc_u32 -> u32;
    /// One 8-byte load through the read-only path.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 8 bytes at an 8-byte-aligned address.
    load_global_nc_u64 -> u64;
    /// One 2-byte load through the read-only path.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 2 bytes at a 2-byte-aligned address.
    load_global_nc_u16 -> u16;
    /// One 1-byte load through the read-only path.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 1 byte.
    load_global_nc_u8 -> u8;
}

/// The IEEE half-precision value with bits `bits`, as an `f32` (`cvt.f32.f16`
/// on the GPU; exact, so both give the same bits, NaN payloads aside).
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = ((bits as u32) & 0x8000) << 16;
    let exponent = ((bits >> 10) & 0x1f) as u32;
    let mantissa = (bits & 0x3ff) as u32;
    let magnitude = match exponent {
        // Zero or subnormal: mantissa · 2^-24, exact in f32.
        0 => (mantissa as f32 * (1.0 / 16_777_216.0)).to_bits(),
        // Infinity or NaN (quiet, payload kept).
        0x1f => 0x7f80_0000 | mantissa << 13 | if mantissa != 0 { 0x0040_0000 } else { 0 },
        _ => (exponent + 127 - 15) << 23 | mantissa << 13,
    };
    f32::from_bits(sign | magnitude)
}

/// The global accesses that other threads may make to the same bytes during
/// the kernel (stores, coherent loads, read-modify-writes): `$method` of the
/// `$atomic` at `address`, with `$ordering`, once [`emulator::check_access`]
/// has allowed `$access` to its bytes. Atomics even for the plain ones, as
/// the emulated threads are OS threads: where the GPU defines what such
/// accesses see, a data race on the CPU would be undefined behaviour.
macro_rules! atomic_global {
    ($($(#[$doc:meta])* $name:ident($($value:ident: $t:ty)?) $(-> $r:ty)? = $atomic:ident::$method:ident($ordering:ident) as $access:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(address: u64 $(, $value: $t)?) $(-> $r)? {
            emulator::check_access(address, size_of::<$atomic>() as u64, Access::$access);
            $atomic::from_ptr(address as *mut _).$method($($value,)? Ordering::$ordering)
        }
    )*};
}

atomic_global! {
    /// Plain 1-byte store to global memory.
    ///
    /// # Safety
    /// `address` is a writable global address.
    store_global_u8(value: u8) = AtomicU8::store(Relaxed) as Store;
    /// Plain 2-byte store to global memory.
    ///
    /// # Safety
    /// `address` is a 2-byte-aligned, writable global address.
    store_global_u16(value: u16) = AtomicU16::store(Relaxed) as Store;
    /// Plain 4-byte store to global memory.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    store_global_u32(value: u32) = AtomicU32::store(Relaxed) as Store;
    /// Plain 8-byte store to global memory.
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, writable global address.
    store_global_u64(value: u64) = AtomicU64::store(Relaxed) as Store;
    /// Plain 4-byte load through the coherent path.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, readable global address.
    load_global_u32() -> u32 = AtomicU32::load(Relaxed) as Load;
    /// Plain 8-byte load through the coherent path.
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, readable global address.
    load_global_u64() -> u64 = AtomicU64::load(Relaxed) as Load;
    /// 8-byte load that sees other blocks' writes made visible at GPU scope.
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, readable global address.
    load_relaxed_gpu_u64() -> u64 = AtomicU64::load(Relaxed) as Load;
    /// Atomic add with acquire-release ordering; returns the old value.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    atomic_add_acq_rel_gpu_u32(value: u32) -> u32 = AtomicU32::fetch_add(AcqRel) as Atomic;
    /// Relaxed atomic 8-byte add; returns the old value.
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, writable global address.
    atomic_add_relaxed_gpu_u64(value: u64) -> u64 = AtomicU64::fetch_add(Relaxed) as Atomic;
    /// Relaxed 8-byte store.
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, writable global address.
    store_relaxed_gpu_u64(value: u64) = AtomicU64::store(Relaxed) as Store;
    /// Relaxed 4-byte store.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    store_relaxed_gpu_u32(value: u32) = AtomicU32::store(Relaxed) as Store;
}

/// Plain 16-byte store to global memory.
///
/// # Safety
/// `address` is a 16-byte-aligned global address of 16 writable bytes.
#[inline(always)]
#[track_caller]
pub unsafe fn store_global_v4(address: u64, words: [u32; 4]) {
    emulator::check_access(address, 16, Access::Store);
    for (k, word) in words.into_iter().enumerate() {
        AtomicU32::from_ptr((address as *mut u32).add(k)).store(word, Ordering::Relaxed)
    }
}

/// Reads a value from shared memory.
///
/// # Safety
/// `address` points into one of this block's shared arrays, aligned for `T`,
/// and every thread that wrote it has passed a barrier since (the emulator
/// reports a fault otherwise, and for memory no thread has written).
#[inline(always)]
#[track_caller]
pub unsafe fn load_shared<T: Copy>(address: *const T) -> T {
    emulator::check_shared(address as u64, size_of::<T>() as u64, SharedAccess::Read);
    address.read_volatile()
}

/// Writes a value to shared memory.
///
/// # Safety
/// `address` points into one of this block's shared arrays, aligned for `T`,
/// and every thread that read or wrote it before has passed a barrier since
/// (the emulator reports a fault otherwise).
#[inline(always)]
#[track_caller]
pub unsafe fn store_shared<T: Copy>(address: *mut T, value: T) {
    emulator::check_shared(address as u64, size_of::<T>() as u64, SharedAccess::Write);
    address.write_volatile(value)
}

/// This block's warp-slot scratch (32 slots of `abi::PARTIAL_SLOT_BYTES`).
#[inline(always)]
pub fn warp_slots() -> *mut [u64; 4] {
    emulator::shared_array(SharedArray::WarpSlots) as *mut [u64; 4]
}

/// This block's one 8-byte word in shared memory (for values that thread 0
/// shares with the block).
#[inline(always)]
pub fn block_word() -> *mut u64 {
    emulator::shared_array(SharedArray::BlockWord) as *mut u64
}

/// The dynamic shared array (its size is set at launch).
#[inline(always)]
pub fn dynamic_shared() -> *mut u8 {
    emulator::shared_array(SharedArray::Dynamic)
}

/// Atomically adds `value` at `address`, returns nothing.
///
/// # Safety
/// `address` is a 4-byte-aligned, writable global address.
#[inline(always)]
#[track_caller]
pub unsafe fn red_add_f32(address: u64, value: f32) {
    emulator::check_access(address, 4, Access::Atomic);
    let word = AtomicU32::from_ptr(address as *mut u32);
    let mut old = word.load(Ordering::Relaxed);
    while let Err(seen) = word.compare_exchange_weak(
        old,
        (f32::from_bits(old) + value).to_bits(),
        Ordering::Relaxed,
        Ordering::Relaxed,
    ) {
        old = seen;
    }
}

/// Atomically adds `value` at `address` (also the two's-complement add of `i32` bits).
///
/// # Safety
/// `address` is a 4-byte-aligned, writable global address.
#[inline(always)]
#[track_caller]
pub unsafe fn red_add_u32(address: u64, value: u32) {
    emulator::check_access(address, 4, Access::Atomic);
    AtomicU32::from_ptr(address as *mut u32).fetch_add(value, Ordering::Relaxed);
}

/// The square root, correctly rounded (IEEE 754), as `sqrt.rn.f32`.
#[inline(always)]
pub fn sqrt_f32(x: f32) -> f32 {
    x.sqrt()
}

/// `a·b + c`, rounded once (IEEE 754's fusedMultiplyAdd), as `fma.rn.f32`.
#[inline(always)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// `a·b + c`, rounded once (IEEE 754's fusedMultiplyAdd), as `fma.rn.f64`.
#[inline(always)]
pub fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

/// The square root, correctly rounded (IEEE 754), as `sqrt.rn.f64`.
#[inline(always)]
pub fn sqrt_f64(x: f64) -> f64 {
    x.sqrt()
}

/// A user operator on the CPU: what the emulated kernels of `Op::User` call
/// where the GPU's call the functions the host splices in. Bits in the low
/// bits of a `u64`, as [`Element::to_bits`](crate::element::Element::to_bits).
pub trait UserFunctions: Send + Sync {
    /// The identity.
    fn identity(&self) -> u64;
    /// `a` combined with `b`.
    fn combine(&self, a: u64, b: u64) -> u64;
    /// The map of an input element.
    fn map(&self, x: u64) -> u64;
    /// The map of a pair of two inputs' elements.
    fn map_pair(&self, a: u64, b: u64) -> u64;
}

std::thread_local! {
    static USER_FUNCTIONS: core::cell::RefCell<Option<std::sync::Arc<dyn UserFunctions>>> =
        const { core::cell::RefCell::new(None) };
}

/// `run()` with `functions` as the user operator of this OS thread (each
/// emulated thread's kernel body calls it), restored afterwards.
pub fn with_user_functions<R>(functions: std::sync::Arc<dyn UserFunctions>, run: impl FnOnce() -> R) -> R {
    struct Restore(Option<std::sync::Arc<dyn UserFunctions>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            USER_FUNCTIONS.with(|slot| *slot.borrow_mut() = previous);
        }
    }
    let _restore = Restore(USER_FUNCTIONS.with(|slot| slot.borrow_mut().replace(functions)));
    run()
}

/// `f` of this thread's user operator.
///
/// # Panics
/// Where a kernel of `Op::User` runs without one (a panic in kernel code is
/// the launch's fault).
fn user_functions<R>(f: impl FnOnce(&dyn UserFunctions) -> R) -> R {
    let functions = USER_FUNCTIONS.with(|slot| slot.borrow().clone());
    match functions {
        Some(functions) => f(&*functions),
        None => panic!("a user operator's kernel ran without the operator"),
    }
}

impl<T: crate::element::Element> super::UserScalar for T {
    fn user_identity() -> Self {
        T::from_bits(user_functions(|f| f.identity()))
    }
    fn user_combine(a: Self, b: Self) -> Self {
        T::from_bits(user_functions(|f| f.combine(a.to_bits(), b.to_bits())))
    }
    fn user_map(x: Self) -> Self {
        T::from_bits(user_functions(|f| f.map(x.to_bits())))
    }
    fn user_map_pair(a: Self, b: Self) -> Self {
        T::from_bits(user_functions(|f| f.map_pair(a.to_bits(), b.to_bits())))
    }
}
