//! The device primitives on the GPU: the only inline PTX of the crate.

use core::arch::{asm, global_asm, nvptx};

// Per-block scratch for the block-wide collectives: one 16-byte slot per warp
// (at most 32 warps in a 1024-thread block) and one 8-byte word.
global_asm!(".shared .align 16 .b8 reduce_warp_slots[512];");
global_asm!(".shared .align 8 .b8 reduce_block_word[8];");
// The ladder's shared array, sized by the host at launch (dynamic shared memory).
global_asm!(".extern .shared .align 16 .b8 ladder_shared[];");

/// Index of this thread in its block (`%tid.x`).
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

/// Index of this block in the grid (`%ctaid.x`).
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_idx_x() as u32 }
}

/// Threads per block (`%ntid.x`).
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_dim_x() as u32 }
}

/// Blocks in the grid (`%nctaid.x`).
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// Block-wide barrier (`bar.sync 0`); also orders shared-memory accesses.
///
/// # Safety
/// Every thread of the block must reach the same call, or the block hangs.
#[inline(always)]
pub unsafe fn sync_threads() {
    nvptx::_syncthreads()
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

/// Converts a generic address of device memory to the global window.
#[inline(always)]
pub fn to_global(generic: u64) -> u64 {
    let global: u64;
    // SAFETY: pure address arithmetic; nothing is dereferenced.
    unsafe {
        asm!(
            "cvta.to.global.u64 {g}, {p};",
            g = out(reg64) global,
            p = in(reg64) generic,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    global
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

/// One 4-byte load through the read-only path.
///
/// # Safety
/// As [`load_global_nc_v4`], for 4 bytes at a 4-byte-aligned address.
#[inline(always)]
pub unsafe fn load_global_nc_u32(address: u64) -> u32 {
    let value: u32;
    asm!(
        "ld.global.nc.u32 {v}, [{p}];",
        v = out(reg32) value,
        p = in(reg64) address,
        options(pure, readonly, nostack, preserves_flags),
    );
    value
}

/// One 8-byte load through the read-only path.
///
/// # Safety
/// As [`load_global_nc_v4`], for 8 bytes at an 8-byte-aligned address.
#[inline(always)]
pub unsafe fn load_global_nc_u64(address: u64) -> u64 {
    let value: u64;
    asm!(
        "ld.global.nc.u64 {v}, [{p}];",
        v = out(reg64) value,
        p = in(reg64) address,
        options(pure, readonly, nostack, preserves_flags),
    );
    value
}

/// One 2-byte load through the read-only path, zero-extended.
///
/// # Safety
/// As [`load_global_nc_v4`], for 2 bytes at a 2-byte-aligned address.
#[inline(always)]
pub unsafe fn load_global_nc_u16(address: u64) -> u16 {
    let value: u32;
    asm!(
        "ld.global.nc.u16 {v}, [{p}];",
        v = out(reg32) value,
        p = in(reg64) address,
        options(pure, readonly, nostack, preserves_flags),
    );
    value as u16
}

/// One 1-byte load through the read-only path, zero-extended.
///
/// # Safety
/// As [`load_global_nc_v4`], for 1 byte.
#[inline(always)]
pub unsafe fn load_global_nc_u8(address: u64) -> u8 {
    let value: u32;
    asm!(
        "ld.global.nc.u8 {v}, [{p}];",
        v = out(reg32) value,
        p = in(reg64) address,
        options(pure, readonly, nostack, preserves_flags),
    );
    value as u8
}

/// The IEEE half-precision value with bits `bits`, as an `f32` (exact: every
/// half is an `f32`).
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    let value: f32;
    // SAFETY: a register-to-register conversion.
    unsafe {
        asm!(
            "cvt.f32.f16 {v}, {h};",
            v = out(reg32) value,
            h = in(reg16) bits,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    value
}

/// Plain 4-byte store to global memory.
///
/// # Safety
/// `address` is a 4-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn store_global_u32(address: u64, value: u32) {
    asm!(
        "st.global.u32 [{p}], {v};",
        p = in(reg64) address,
        v = in(reg32) value,
        options(nostack, preserves_flags),
    );
}

/// Plain 8-byte store to global memory.
///
/// # Safety
/// `address` is an 8-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn store_global_u64(address: u64, value: u64) {
    asm!(
        "st.global.u64 [{p}], {v};",
        p = in(reg64) address,
        v = in(reg64) value,
        options(nostack, preserves_flags),
    );
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

/// 8-byte load that sees other blocks' writes made visible at GPU scope
/// (`ld.relaxed.gpu`: never served from a stale L1 line).
///
/// # Safety
/// `address` is an 8-byte-aligned, readable global address.
#[inline(always)]
pub unsafe fn load_relaxed_gpu_u64(address: u64) -> u64 {
    let value: u64;
    asm!(
        "ld.relaxed.gpu.global.u64 {v}, [{p}];",
        v = out(reg64) value,
        p = in(reg64) address,
        options(nostack, preserves_flags),
    );
    value
}

/// `atom.acq_rel.gpu.global.add.u32`: adds `value`, returns the old value.
/// Release: this thread's earlier writes are visible to whoever acquires the
/// new value; acquire: writes released before the old value are visible here.
///
/// # Safety
/// `address` is a 4-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn atomic_add_acq_rel_gpu_u32(address: u64, value: u32) -> u32 {
    let old: u32;
    asm!(
        "atom.acq_rel.gpu.global.add.u32 {o}, [{p}], {v};",
        o = out(reg32) old,
        p = in(reg64) address,
        v = in(reg32) value,
        options(nostack, preserves_flags),
    );
    old
}

/// `atom.relaxed.gpu.global.add.u64`: adds `value`, returns the old value;
/// orders nothing else (for counters that hand out work, not publish data).
///
/// # Safety
/// `address` is an 8-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn atomic_add_relaxed_gpu_u64(address: u64, value: u64) -> u64 {
    let old: u64;
    asm!(
        "atom.relaxed.gpu.global.add.u64 {o}, [{p}], {v};",
        o = out(reg64) old,
        p = in(reg64) address,
        v = in(reg64) value,
        options(nostack, preserves_flags),
    );
    old
}

/// `st.relaxed.gpu.global.u64`.
///
/// # Safety
/// `address` is an 8-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn store_relaxed_gpu_u64(address: u64, value: u64) {
    asm!(
        "st.relaxed.gpu.global.u64 [{p}], {v};",
        p = in(reg64) address,
        v = in(reg64) value,
        options(nostack, preserves_flags),
    );
}

/// `st.relaxed.gpu.global.u32`.
///
/// # Safety
/// `address` is a 4-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn store_relaxed_gpu_u32(address: u64, value: u32) {
    asm!(
        "st.relaxed.gpu.global.u32 [{p}], {v};",
        p = in(reg64) address,
        v = in(reg32) value,
        options(nostack, preserves_flags),
    );
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

/// Generic address of this block's warp-slot scratch (32 slots of 16 bytes).
#[inline(always)]
pub fn warp_slots() -> *mut [u64; 2] {
    let address: u64;
    // SAFETY: takes the address of a module-scope `.shared` array.
    unsafe {
        asm!(
            "cvta.shared.u64 {a}, reduce_warp_slots;",
            a = out(reg64) address,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    address as *mut [u64; 2]
}

/// Generic address of this block's one 8-byte word in shared memory (for
/// values that thread 0 shares with the block).
#[inline(always)]
pub fn block_word() -> *mut u64 {
    let address: u64;
    // SAFETY: takes the address of a module-scope `.shared` word.
    unsafe {
        asm!(
            "cvta.shared.u64 {a}, reduce_block_word;",
            a = out(reg64) address,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    address as *mut u64
}

/// Generic address of the dynamic shared array (its size is set at launch).
#[inline(always)]
pub fn dynamic_shared() -> *mut u8 {
    let address: u64;
    // SAFETY: takes the address of the module-scope `.extern .shared` array.
    unsafe {
        asm!(
            "cvta.shared.u64 {a}, ladder_shared;",
            a = out(reg64) address,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    address as *mut u8
}

/// `red.global.add.f32`: adds `value` at `address`, returns nothing.
///
/// # Safety
/// `address` is a 4-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn red_add_f32(address: u64, value: f32) {
    asm!(
        "red.global.add.f32 [{p}], {v};",
        p = in(reg64) address,
        v = in(reg32) value.to_bits(),
        options(nostack, preserves_flags),
    );
}

/// `red.global.add.u32` (also the two's-complement add of `i32` bits).
///
/// # Safety
/// `address` is a 4-byte-aligned, writable global address.
#[inline(always)]
pub unsafe fn red_add_u32(address: u64, value: u32) {
    asm!(
        "red.global.add.u32 [{p}], {v};",
        p = in(reg64) address,
        v = in(reg32) value,
        options(nostack, preserves_flags),
    );
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

/// `max.NaN.f32` (sm_80+): the larger operand, or NaN if either is NaN.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub fn max_nan_f32(a: f32, b: f32) -> f32 {
    let r: u32;
    // SAFETY: register-only arithmetic.
    unsafe {
        asm!(
            "max.NaN.f32 {r}, {a}, {b};",
            r = out(reg32) r,
            a = in(reg32) a.to_bits(),
            b = in(reg32) b.to_bits(),
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    f32::from_bits(r)
}

/// `min.NaN.f32` (sm_80+): the smaller operand, or NaN if either is NaN.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub fn min_nan_f32(a: f32, b: f32) -> f32 {
    let r: u32;
    // SAFETY: register-only arithmetic.
    unsafe {
        asm!(
            "min.NaN.f32 {r}, {a}, {b};",
            r = out(reg32) r,
            a = in(reg32) a.to_bits(),
            b = in(reg32) b.to_bits(),
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    f32::from_bits(r)
}
