//! The device primitives on the GPU: the only inline PTX of the crate.

use core::arch::{asm, global_asm, nvptx};

// Per-block scratch for the block-wide collectives: one 32-byte slot per warp
// (at most 32 warps in a 1024-thread block) and one 8-byte word.
global_asm!(".shared .align 16 .b8 reduce_warp_slots[1024];");
global_asm!(".shared .align 8 .b8 reduce_block_word[8];");
// The ladder's shared array, sized by the host at launch (dynamic shared memory).
global_asm!(".extern .shared .align 16 .b8 ladder_shared[];");

/// The special registers that place this thread in the launch, under
/// `cuda_std`'s names: each one `mov` from the register.
macro_rules! special_registers {
    ($($(#[$doc:meta])* $name:ident => $read:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            // SAFETY: reading a special register has no preconditions.
            unsafe { nvptx::$read() as u32 }
        }
    )*};
}

special_registers! {
    /// Index of this thread in its block (`%tid.x`).
    thread_idx_x => _thread_idx_x;
    /// Index of this block in the grid (`%ctaid.x`).
    block_idx_x => _block_idx_x;
    /// Threads per block (`%ntid.x`).
    block_dim_x => _block_dim_x;
    /// Blocks in the grid (`%nctaid.x`).
    grid_dim_x => _grid_dim_x;
}

/// Block-wide barrier (`bar.sync 0`); also orders shared-memory accesses.
///
/// # Safety
/// Every thread of the block must reach the same call, or the block hangs.
#[inline(always)]
pub unsafe fn sync_threads() {
    nvptx::_syncthreads()
}

/// `fence.acq_rel.gpu` (CUDA's `__threadfence()`): this thread's earlier
/// writes are ordered before its later ones for every thread of the GPU,
/// so that a block whose thread 0 then releases a ticket publishes the
/// writes of all its threads, not only thread 0's.
///
/// # Safety
/// None beyond being called from a kernel; `unsafe` as the other primitives.
#[inline(always)]
pub unsafe fn thread_fence_gpu() {
    asm!("fence.acq_rel.gpu;", options(nostack, preserves_flags));
}

/// Butterfly shuffle over the full warp: returns `value` of lane `lane ^ lane_mask`.
///
/// # Safety
/// All 32 lanes of the warp must execute the call together (full member mask).
#[inline(always)]
pub unsafe fn shfl_xor_u32(value: u32, lane_mask: u32) -> u32 {
    let result: u32;
    asm!(
        "shfl.sync.bfly.b32 {r}, {v}, {m}, 0x1f, 0xffffffff;",
        r = out(reg32) result,
        v = in(reg32) value,
        m = in(reg32) lane_mask,
        options(nostack, preserves_flags),
    );
    result
}

/// Conversions of one register into another by one instruction,
/// `$instruction`, from a `$from` in a register of class `$in` to a `$to` in
/// one of class `$out`.
macro_rules! convert {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $from:ty) -> $to:ty => $instruction:literal ($in:ident -> $out:ident);)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name($arg: $from) -> $to {
            let converted: $to;
            // SAFETY: one register-to-register instruction; nothing is dereferenced.
            unsafe {
                asm!(
                    concat!($instruction, " {r}, {a};"),
                    r = out($out) converted,
                    a = in($in) $arg,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            converted
        }
    )*};
}

convert! {
    /// Converts a generic address of device memory to the global window.
    to_global(generic: u64) -> u64 => "cvta.to.global.u64" (reg64 -> reg64);
    /// The IEEE half-precision value with bits `bits`, as an `f32` (exact: every
    /// half is an `f32`).
    f16_to_f32(bits: u16) -> f32 => "cvt.f32.f16" (reg16 -> reg32);
}

/// One 16-byte load through the read-only (non-coherent) path.
///
/// # Safety
/// `address` is a 16-byte-aligned global address of 16 readable bytes that no
/// thread writes during the kernel.
#[inline(always)]
pub unsafe fn load_global_nc_v4(address: u64) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    asm!(
        "ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];",
        a = out(reg32) a,
        b = out(reg32) b,
        c = out(reg32) c,
        d = out(reg32) d,
        p = in(reg64) address,
        options(pure, readonly, nostack, preserves_flags),
    );
    [a, b, c, d]
}

/// Loads of one value from a global address: the `ld` instruction
/// `$instruction` into a register of class `$reg` holding a `$r`, returned as
/// a `$t` (PTX has no 8-bit registers: a 1- or 2-byte load zero-extends into
/// a 32-bit one). `$option`s are the `asm!` options: `pure, readonly` only for
/// the read-only path, whose data no thread writes during the kernel, so a
/// load may be merged or moved; a load that sees other threads' writes must
/// run where it stands.
macro_rules! load_global {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $instruction:literal ($reg:ident $r:ty) [$($option:ident),*];)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub unsafe fn $name(address: u64) -> $t {
            let value: $r;
            asm!(
                concat!($instruction, " {v}, [{p}];"),
                v = out($reg) value,
                p = in(reg64) address,
                options($($option),*),
            );
            value as $t
        }
    )*};
}

load_global! {
    /// One 4-byte load through the read-only path.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 4 bytes at a 4-byte-aligned address.
    load_global_nc_u32: u32 => "ld.global.nc.u32" (reg32 u32) [pure, readonly, nostack, preserves_flags];
    /// One 8-byte load through the read-only path.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 8 bytes at an 8-byte-aligned address.
    load_global_nc_u64: u64 => "ld.global.nc.u64" (reg64 u64) [pure, readonly, nostack, preserves_flags];
    /// One 2-byte load through the read-only path, zero-extended.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 2 bytes at a 2-byte-aligned address.
    load_global_nc_u16: u16 => "ld.global.nc.u16" (reg32 u32) [pure, readonly, nostack, preserves_flags];
    /// One 1-byte load through the read-only path, zero-extended.
    ///
    /// # Safety
    /// As [`load_global_nc_v4`], for 1 byte.
    load_global_nc_u8: u8 => "ld.global.nc.u8" (reg32 u32) [pure, readonly, nostack, preserves_flags];
    /// One 4-byte load through the coherent path (`ld.global`): for memory
    /// the launch also writes, which the read-only path may serve stale.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, readable global address.
    load_global_u32: u32 => "ld.global.u32" (reg32 u32) [nostack, preserves_flags];
    /// One 8-byte load through the coherent path, as [`load_global_u32`].
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, readable global address.
    load_global_u64: u64 => "ld.global.u64" (reg64 u64) [nostack, preserves_flags];
    /// 8-byte load that sees other blocks' writes made visible at GPU scope
    /// (`ld.relaxed.gpu`: never served from a stale L1 line).
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, readable global address.
    load_relaxed_gpu_u64: u64 => "ld.relaxed.gpu.global.u64" (reg64 u64) [nostack, preserves_flags];
}

/// Stores to a global address, and reductions there (which return nothing):
/// the instruction `$instruction` with the value in a register of class
/// `$reg`; `$bits` names the method that gives a float's bits, which is how
/// it goes into the register.
macro_rules! store_global {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $instruction:literal ($reg:ident $($bits:ident)?);)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub unsafe fn $name(address: u64, value: $t) {
            asm!(
                concat!($instruction, " [{p}], {v};"),
                p = in(reg64) address,
                v = in($reg) value$(.$bits())?,
                options(nostack, preserves_flags),
            );
        }
    )*};
}

store_global! {
    /// Plain 1-byte store to global memory.
    ///
    /// # Safety
    /// `address` is a writable global address.
    store_global_u8: u8 => "st.global.u8" (reg16);
    /// Plain 2-byte store to global memory.
    ///
    /// # Safety
    /// `address` is a 2-byte-aligned, writable global address.
    store_global_u16: u16 => "st.global.u16" (reg16);
    /// Plain 4-byte store to global memory.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    store_global_u32: u32 => "st.global.u32" (reg32);
    /// Plain 8-byte store to global memory.
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, writable global address.
    store_global_u64: u64 => "st.global.u64" (reg64);
    /// `st.relaxed.gpu.global.u64`.
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, writable global address.
    store_relaxed_gpu_u64: u64 => "st.relaxed.gpu.global.u64" (reg64);
    /// `st.relaxed.gpu.global.u32`.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    store_relaxed_gpu_u32: u32 => "st.relaxed.gpu.global.u32" (reg32);
    /// `red.global.add.f32`: adds `value` at `address`, returns nothing.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    red_add_f32: f32 => "red.global.add.f32" (reg32 to_bits);
    /// `red.global.add.u32` (also the two's-complement add of `i32` bits).
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    red_add_u32: u32 => "red.global.add.u32" (reg32);
}

/// Plain 16-byte store to global memory.
///
/// # Safety
/// `address` is a 16-byte-aligned global address of 16 writable bytes.
#[inline(always)]
pub unsafe fn store_global_v4(address: u64, words: [u32; 4]) {
    asm!(
        "st.global.v4.u32 [{p}], {{{a}, {b}, {c}, {d}}};",
        p = in(reg64) address,
        a = in(reg32) words[0],
        b = in(reg32) words[1],
        c = in(reg32) words[2],
        d = in(reg32) words[3],
        options(nostack, preserves_flags),
    );
}

/// Atomic read-modify-writes of a global address that return the old value:
/// the `atom` instruction `$instruction`, with the operand and the old value
/// in registers of class `$reg`.
macro_rules! atomic_global {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $instruction:literal ($reg:ident);)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub unsafe fn $name(address: u64, value: $t) -> $t {
            let old: $t;
            asm!(
                concat!($instruction, " {o}, [{p}], {v};"),
                o = out($reg) old,
                p = in(reg64) address,
                v = in($reg) value,
                options(nostack, preserves_flags),
            );
            old
        }
    )*};
}

atomic_global! {
    /// `atom.acq_rel.gpu.global.add.u32`: adds `value`, returns the old value.
    /// Release: this thread's earlier writes are visible to whoever acquires the
    /// new value; acquire: writes released before the old value are visible here.
    ///
    /// # Safety
    /// `address` is a 4-byte-aligned, writable global address.
    atomic_add_acq_rel_gpu_u32: u32 => "atom.acq_rel.gpu.global.add.u32" (reg32);
    /// `atom.relaxed.gpu.global.add.u64`: adds `value`, returns the old value;
    /// orders nothing else (for counters that hand out work, not publish data).
    ///
    /// # Safety
    /// `address` is an 8-byte-aligned, writable global address.
    atomic_add_relaxed_gpu_u64: u64 => "atom.relaxed.gpu.global.add.u64" (reg64);
}

/// Reads a value from shared memory.
///
/// # Safety
/// `address` points into one of this block's shared arrays, aligned for `T`,
/// and every thread that wrote it has passed a barrier since.
#[inline(always)]
pub unsafe fn load_shared<T: Copy>(address: *const T) -> T {
    address.read_volatile()
}

/// Writes a value to shared memory.
///
/// # Safety
/// `address` points into one of this block's shared arrays, aligned for `T`,
/// and every thread that read or wrote it before has passed a barrier since.
#[inline(always)]
pub unsafe fn store_shared<T: Copy>(address: *mut T, value: T) {
    address.write_volatile(value)
}

/// Generic addresses of the module-scope shared arrays declared at the top
/// of this file: `cvta.shared` of the array's symbol `$symbol`, as a `$t`.
macro_rules! shared_arrays {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $symbol:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> $t {
            let address: u64;
            // SAFETY: takes the address of a module-scope `.shared` array
            // (declared by `global_asm!` above); nothing is dereferenced.
            unsafe {
                asm!(
                    concat!("cvta.shared.u64 {a}, ", $symbol, ";"),
                    a = out(reg64) address,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            address as $t
        }
    )*};
}

shared_arrays! {
    /// Generic address of this block's warp-slot scratch (32 slots of `abi::PARTIAL_SLOT_BYTES`).
    warp_slots: *mut [u64; 4] => "reduce_warp_slots";
    /// Generic address of this block's one 8-byte word in shared memory (for
    /// values that thread 0 shares with the block).
    block_word: *mut u64 => "reduce_block_word";
    /// Generic address of the dynamic shared array (its size is set at launch).
    dynamic_shared: *mut u8 => "ladder_shared";
}

/// `redux.sync` over all 32 lanes of the warp (sm_80+): one instruction where
/// a shuffle tree takes five steps. Every lane receives the result.
macro_rules! redux_sync {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $instruction:literal;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// All 32 lanes of the warp must execute the call together (full member mask).
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub unsafe fn $name(value: $t) -> $t {
            let result: $t;
            asm!(
                concat!($instruction, " {r}, {v}, 0xffffffff;"),
                r = out(reg32) result,
                v = in(reg32) value,
                options(nostack, preserves_flags),
            );
            result
        }
    )*};
}

redux_sync! {
    /// The wrapping sum of the lanes' values (the same bits for `i32`).
    redux_add_u32: u32 => "redux.sync.add.u32";
    /// The largest of the lanes' values, signed.
    redux_max_s32: i32 => "redux.sync.max.s32";
    /// The smallest of the lanes' values, signed.
    redux_min_s32: i32 => "redux.sync.min.s32";
    /// The largest of the lanes' values, unsigned.
    redux_max_u32: u32 => "redux.sync.max.u32";
    /// The smallest of the lanes' values, unsigned.
    redux_min_u32: u32 => "redux.sync.min.u32";
}

/// The NaN-propagating `f32` minimum and maximum (sm_80+): `$instruction`,
/// register-only arithmetic on the operands' bits.
macro_rules! nan_f32 {
    ($($(#[$doc:meta])* $name:ident => $instruction:literal;)*) => {$(
        $(#[$doc])*
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub fn $name(a: f32, b: f32) -> f32 {
            let r: u32;
            // SAFETY: register-only arithmetic.
            unsafe {
                asm!(
                    concat!($instruction, " {r}, {a}, {b};"),
                    r = out(reg32) r,
                    a = in(reg32) a.to_bits(),
                    b = in(reg32) b.to_bits(),
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            f32::from_bits(r)
        }
    )*};
}

/// `sqrt.rn.f32`: the square root, correctly rounded (IEEE 754).
#[inline(always)]
pub fn sqrt_f32(x: f32) -> f32 {
    let r: u32;
    // SAFETY: arithmetic on registers only.
    unsafe {
        asm!("sqrt.rn.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x.to_bits(),
            options(pure, nomem, nostack, preserves_flags));
    }
    f32::from_bits(r)
}

/// `fma.rn.f32`: `a·b + c`, rounded once (IEEE 754's fusedMultiplyAdd).
#[inline(always)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    let r: u32;
    // SAFETY: arithmetic on registers only.
    unsafe {
        asm!("fma.rn.f32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a.to_bits(),
            b = in(reg32) b.to_bits(), c = in(reg32) c.to_bits(), options(pure, nomem, nostack, preserves_flags));
    }
    f32::from_bits(r)
}

/// `fma.rn.f64`: `a·b + c`, rounded once (IEEE 754's fusedMultiplyAdd).
#[inline(always)]
pub fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    let r: u64;
    // SAFETY: arithmetic on registers only.
    unsafe {
        asm!("fma.rn.f64 {r}, {a}, {b}, {c};", r = out(reg64) r, a = in(reg64) a.to_bits(),
            b = in(reg64) b.to_bits(), c = in(reg64) c.to_bits(), options(pure, nomem, nostack, preserves_flags));
    }
    f64::from_bits(r)
}

/// `sqrt.rn.f64`: the square root, correctly rounded (IEEE 754).
#[inline(always)]
pub fn sqrt_f64(x: f64) -> f64 {
    let r: u64;
    // SAFETY: arithmetic on registers only.
    unsafe {
        asm!("sqrt.rn.f64 {r}, {x};", r = out(reg64) r, x = in(reg64) x.to_bits(),
            options(pure, nomem, nostack, preserves_flags));
    }
    f64::from_bits(r)
}

nan_f32! {
    /// `max.NaN.f32` (sm_80+): the larger operand, or NaN if either is NaN.
    max_nan_f32 => "max.NaN.f32";
    /// `min.NaN.f32` (sm_80+): the smaller operand, or NaN if either is NaN.
    min_nan_f32 => "min.NaN.f32";
}

/// The user operator's functions (`crate::user`): declared here, defined by
/// the host, which splices PTX `.func`s of these names, generated from the
/// operator, into the module before the driver compiles it (a module without
/// them does not load). Bits in, bits out: the functions work on registers
/// of the type's width, whatever the type.
macro_rules! user_functions {
    ($($t:ty: $bits:ty, $identity:ident, $combine:ident, $map:ident, $map_pair:ident;)*) => {
        extern "C" {
            $(
                fn $identity() -> $bits;
                fn $combine(a: $bits, b: $bits) -> $bits;
                fn $map(x: $bits) -> $bits;
                fn $map_pair(a: $bits, b: $bits) -> $bits;
            )*
        }
        use crate::element::Element;
        $(
            impl super::UserScalar for $t {
                #[inline(always)]
                fn user_identity() -> Self {
                    // SAFETY: the host defines it as arithmetic on registers,
                    // no memory access (`reduce-host/src/user_op/ptx.rs`).
                    <$t as Element>::from_bits(unsafe { $identity() } as u64)
                }
                #[inline(always)]
                fn user_combine(a: Self, b: Self) -> Self {
                    // SAFETY: as `user_identity`.
                    <$t as Element>::from_bits(unsafe { $combine(a.to_bits() as $bits, b.to_bits() as $bits) } as u64)
                }
                #[inline(always)]
                fn user_map(x: Self) -> Self {
                    // SAFETY: as `user_identity`.
                    <$t as Element>::from_bits(unsafe { $map(x.to_bits() as $bits) } as u64)
                }
                #[inline(always)]
                fn user_map_pair(a: Self, b: Self) -> Self {
                    // SAFETY: as `user_identity`.
                    <$t as Element>::from_bits(unsafe { $map_pair(a.to_bits() as $bits, b.to_bits() as $bits) } as u64)
                }
            }
        )*
    };
}
user_functions! {
    i32: u32, user_op_identity_i32, user_op_combine_i32, user_op_map_i32, user_op_map_pair_i32;
    u32: u32, user_op_identity_u32, user_op_combine_u32, user_op_map_u32, user_op_map_pair_u32;
    i64: u64, user_op_identity_i64, user_op_combine_i64, user_op_map_i64, user_op_map_pair_i64;
    u64: u64, user_op_identity_u64, user_op_combine_u64, user_op_map_u64, user_op_map_pair_u64;
    f32: u32, user_op_identity_f32, user_op_combine_f32, user_op_map_f32, user_op_map_pair_f32;
    f64: u64, user_op_identity_f64, user_op_combine_f64, user_op_map_f64, user_op_map_pair_f64;
}
