//! Reduction kernels for NVIDIA GPUs, written in Rust and compiled to PTX by
//! rustc's NVPTX backend (`nvptx64-nvidia-cuda`, `-Zbuild-std=core`).
//!
//! The host crate (`reduce-host`, library `reduce`) builds this crate from its
//! build script, once per target architecture, and embeds the PTX. Nothing here
//! is meant to be called from the host directly.
//!
//! # Layers
//! Each file is one scope, from the bottom up:
//! - [`device`]: the only inline PTX (indices, barriers, shuffles, loads, atomics);
//! - [`element`] and [`op`]: element types and operators (identity + combine);
//! - [`thread`]: one thread folds its share of the input, 16-byte vector
//!   loads; the input is one array, or the product of two (dot products);
//! - [`warp`]: 32 lanes combine through `shfl.sync`;
//! - [`block`]: warps combine through shared memory;
//! - [`grid`]: blocks combine in one launch (last block combines the partials);
//! - [`ladder`]: the seed tutorials' kernels, built from the same layers;
//! - the entry points below, one per operator × element type (and per dot
//!   product and ladder rung), generated from [`abi`]'s lists, which the host
//!   crate reads too.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch)]
#![allow(clippy::missing_safety_doc)]

#[macro_use]
pub mod abi;
pub mod block;
pub mod device;
pub mod element;
pub mod grid;
pub mod ladder;
pub mod op;
pub mod thread;
pub mod warp;

use op::{Max, Min, Product, Sum};

macro_rules! reduce_entry_points {
    ($(($name:ident, $op:ident, $t:ty)),* $(,)?) => {$(
        /// Entry point; see [`grid::reduce`] for the contract.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(input: *const $t, len: u64, partials: *mut u64, ticket: *mut u32, out: *mut $t) {
            // SAFETY: the host launches this with the parameters `abi` documents.
            unsafe {
                let source = thread::Single { input: device::to_global(input as u64) };
                grid::reduce::<$t, $op, _>(source, len, partials, ticket, out)
            }
        }
    )*};
}
for_each_reduce_kernel!(reduce_entry_points);

macro_rules! production_dot_entry_points {
    ($(($name:ident, $t:ty)),* $(,)?) => {$(
        /// Dot product entry point: the sum of `a[i] * b[i]`; see [`grid::reduce`].
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(
            a: *const $t,
            b: *const $t,
            len: u64,
            partials: *mut u64,
            ticket: *mut u32,
            out: *mut $t,
        ) {
            // SAFETY: the host launches this with the parameters `abi` documents.
            unsafe {
                let source = thread::Product { a: device::to_global(a as u64), b: device::to_global(b as u64) };
                grid::reduce::<$t, Sum, _>(source, len, partials, ticket, out)
            }
        }
    )*};
}
for_each_dot_kernel!(production_dot_entry_points);

macro_rules! ladder_entry_points {
    ($(($number:literal, $stem:ident, $load:ty, $tree:ty)),* $(,)?) => {$(
        ladder_entry_points!(@rung $stem, $load, $tree; Sum sum, Max max, Min min, Product product);
    )*};
    (@rung $stem:ident, $load:ty, $tree:ty; $($op:ident $op_name:ident),*) => {$(
        ladder_entry_points!(@op $stem, $load, $tree, $op, $op_name; i32 f32);
    )*};
    (@op $stem:ident, $load:ty, $tree:ty, $op:ident, $op_name:ident; $($t:ident)*) => {$(
        const _: () = {
            use $crate::ladder::load::*;
            use $crate::ladder::tree::*;
            /// Ladder entry point; see [`ladder::rung`].
            #[export_name = concat!("ladder_", stringify!($stem), "_", stringify!($op_name), "_", stringify!($t))]
            pub unsafe extern "ptx-kernel" fn entry(input: *const $t, len: u64, out: *mut $t) {
                // SAFETY: the host launches this with the parameters `abi` documents.
                unsafe { $crate::ladder::rung::<$t, $op, $load, $tree>(input, len, out) }
            }
        };
    )*};
}
for_each_ladder_rung!(ladder_entry_points);

macro_rules! dot_entry_points {
    ($($t:ident)*) => {$(
        const _: () = {
            /// Seed 004's naive dot product; see [`ladder::dot::atomic_per_element`].
            #[export_name = concat!("ladder_dot_atomic_per_element_", stringify!($t))]
            pub unsafe extern "ptx-kernel" fn entry(a: *const $t, b: *const $t, len: u64, out: *mut $t) {
                // SAFETY: the host launches this with the parameters `abi` documents.
                unsafe { ladder::dot::atomic_per_element::<$t>(a, b, len, out) }
            }
        };
        const _: () = {
            /// Seed 004's block-tree dot product; see [`ladder::dot::block_tree`].
            #[export_name = concat!("ladder_dot_block_tree_", stringify!($t))]
            pub unsafe extern "ptx-kernel" fn entry(a: *const $t, b: *const $t, len: u64, out: *mut $t) {
                // SAFETY: the host launches this with the parameters `abi` documents.
                unsafe { ladder::dot::block_tree::<$t>(a, b, len, out) }
            }
        };
    )*};
}
dot_entry_points!(i32 f32);

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Unreachable by construction (the build rejects PTX with unresolved
    // externs, which any reachable panic would leave); trap if it ever runs.
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
