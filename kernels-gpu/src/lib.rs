//! Reduction kernels for NVIDIA GPUs, written in Rust and compiled to PTX by
//! rustc's NVPTX backend (`nvptx64-nvidia-cuda`, `-Zbuild-std=core`).
//!
//! The host crate (`reduce-host`, library `reduce`) builds this crate from its
//! build script, once per target architecture, and embeds the PTX. On any
//! other target the same kernels compile for the CPU, where [`emulator`] runs
//! them as a SIMT machine would (the host crate's `reduce::emulated`).
//!
//! # Layers
//! Each file is one scope, from the bottom up:
//! - [`device`]: indices, barriers, shuffles, loads, atomics: inline PTX on the
//!   GPU, the emulator's implementation on the CPU;
//! - [`element`], [`op`] and [`map`]: element types, operators (identity +
//!   combine) and the maps applied to elements as they are read; [`indexed`]:
//!   elements paired with their index, which `Max` and `Min` combine into
//!   argmax and argmin;
//! - [`thread`]: one thread folds its share of the input, 16-byte vector
//!   loads; the input is one array, one array of a narrower type converted as
//!   it is read ([`widen`]), or the product of two (dot products);
//! - [`warp`]: 32 lanes combine through `shfl.sync` (or one `redux.sync`);
//! - [`block`]: warps combine through shared memory;
//! - [`grid`]: blocks combine in one launch (last block combines the partials);
//! - [`segment`]: one result per segment (or matrix row), teams of lanes,
//!   warps or blocks per segment, in one launch;
//! - [`ladder`]: the seed tutorials' kernels, built from the same layers;
//! - [`entry`]: the entry points' bodies; the PTX exports one instance per
//!   operator × element type (and per dot product and ladder rung), generated
//!   from [`abi`]'s lists, which the host crate reads too.
// These docs are for the library's maintainers, and link private items:
// `cargo doc -p kernels-gpu --document-private-items` (scripts/lint.sh).
#![allow(rustdoc::private_intra_doc_links)]
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx, asm_experimental_arch))]
#![allow(clippy::missing_safety_doc)]

#[macro_use]
pub mod abi;
pub mod block;
pub mod device;
pub mod element;
#[cfg(not(target_arch = "nvptx64"))]
pub mod emulator;
pub mod entry;
pub mod grid;
pub mod indexed;
pub mod ladder;
pub mod map;
pub mod op;
pub mod segment;
pub mod thread;
pub mod warp;
pub mod widen;

/// The PTX module's exported kernels: one `extern "ptx-kernel"` function per
/// row of [`abi`]'s lists, each an instance of an [`entry`] function.
#[cfg(target_arch = "nvptx64")]
mod ptx_exports {
    use crate::entry;
    use crate::op::{Max, Min, NanMax, NanMin, Product, Sum};
    use crate::widen::{Bf16, F16};

    macro_rules! reduce_exports {
        ($(($host_op:ident, $stem:ident, $map:ident, $op:ident, [$($t:ident)*])),* $(,)?) => {$($(
            const _: () = {
                use crate::map::*;
                /// Entry point; see [`entry::reduce`].
                #[export_name = concat!("reduce_", stringify!($stem), "_", stringify!($t))]
                pub unsafe extern "ptx-kernel" fn export(
                    input: *const $t,
                    len: u64,
                    partials: *mut u64,
                    ticket: *mut u32,
                    out: *mut $t,
                ) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe { entry::reduce::<$t, $map, $op>(input, len, partials, ticket, out) }
                }
            };
        )*)*};
    }
    for_each_reduce_kernel!(reduce_exports);

    macro_rules! segmented_exports {
        ($prefix:literal, $schedule:ident; $(($host_op:ident, $stem:ident, $map:ident, $op:ident, [$($t:ident)*])),* $(,)?) => {$($(
            const _: () = {
                use crate::map::*;
                /// Segmented entry point; see [`entry::segmented`].
                #[export_name = concat!($prefix, stringify!($stem), "_", stringify!($t))]
                pub unsafe extern "ptx-kernel" fn export(
                    input: *const $t,
                    len: u64,
                    offsets: *const u64,
                    segments: u64,
                    row_len: u64,
                    plan: u64,
                    partials: *mut u64,
                    tickets: *mut u32,
                    status: *mut u32,
                    out: *mut $t,
                ) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe {
                        entry::segmented::<$t, $map, $op, { crate::abi::SegmentSchedule::$schedule as u8 }>(
                            input, len, offsets, segments, row_len, plan, partials, tickets, status, out,
                        )
                    }
                }
            };
        )*)*};
    }
    // Each reduction has a segmented entry point per schedule (the host's
    // kernel table names them the same way).
    macro_rules! fixed_order_segmented_exports {
        ($($list:tt)*) => { segmented_exports!("segmented_", FixedOrder; $($list)*); };
    }
    macro_rules! warps_take_segmented_exports {
        ($($list:tt)*) => { segmented_exports!("segmented_balanced_", WarpsTake; $($list)*); };
    }
    macro_rules! blocks_take_segmented_exports {
        ($($list:tt)*) => { segmented_exports!("segmented_block_balanced_", BlocksTake; $($list)*); };
    }
    for_each_reduce_kernel!(fixed_order_segmented_exports);
    for_each_reduce_kernel!(warps_take_segmented_exports);
    for_each_reduce_kernel!(blocks_take_segmented_exports);

    macro_rules! widened_exports {
        ($(($input:ident, $input_name:ident, $acc:ident, [$(($host_op:ident, $stem:ident, $op:ident))*])),* $(,)?) => {$($(
            const _: () = {
                /// Widening entry point; see [`entry::reduce_widened`].
                #[export_name = concat!("reduce_", stringify!($stem), "_", stringify!($input_name), "_as_", stringify!($acc))]
                pub unsafe extern "ptx-kernel" fn export(
                    input: *const $input,
                    len: u64,
                    partials: *mut u64,
                    ticket: *mut u32,
                    out: *mut $acc,
                ) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe { entry::reduce_widened::<$input, $acc, $op>(input, len, partials, ticket, out) }
                }
            };
        )*)*};
    }
    for_each_widened_kernel!(widened_exports);

    macro_rules! dot_exports {
        ($(($name:ident, $t:ty)),* $(,)?) => {$(
            /// Dot product entry point; see [`entry::dot`].
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
                unsafe { entry::dot::<$t>(a, b, len, partials, ticket, out) }
            }
        )*};
    }
    for_each_dot_kernel!(dot_exports);

    macro_rules! arg_exports {
        ($(($input:ident, $name:ident, $acc:ident)),* $(,)?) => {$(
            arg_export!(argmax, $input, $name, $acc, Max);
            arg_export!(argmin, $input, $name, $acc, Min);
        )*};
    }
    macro_rules! arg_export {
        ($stem:ident, $input:ident, $name:ident, $acc:ident, $op:ident) => {
            const _: () = {
                /// argmax/argmin entry point; see [`entry::arg`].
                #[export_name = concat!(stringify!($stem), "_", stringify!($name))]
                pub unsafe extern "ptx-kernel" fn export(
                    input: *const $input,
                    len: u64,
                    partials: *mut u64,
                    ticket: *mut u32,
                    value_out: *mut $acc,
                    index_out: *mut u64,
                ) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe { entry::arg::<$input, $acc, $op>(input, len, partials, ticket, value_out, index_out) }
                }
            };
        };
    }
    for_each_arg_kernel!(arg_exports);

    macro_rules! ladder_exports {
        ($(($number:literal, $stem:ident, $load:ty, $tree:ty)),* $(,)?) => {$(
            ladder_exports!(@rung $stem, $load, $tree; Sum sum, Max max, Min min, Product product);
        )*};
        (@rung $stem:ident, $load:ty, $tree:ty; $($op:ident $op_name:ident),*) => {$(
            ladder_exports!(@op $stem, $load, $tree, $op, $op_name; i32 f32);
        )*};
        (@op $stem:ident, $load:ty, $tree:ty, $op:ident, $op_name:ident; $($t:ident)*) => {$(
            const _: () = {
                use crate::ladder::load::*;
                use crate::ladder::tree::*;
                /// Ladder entry point; see [`entry::ladder`].
                #[export_name = concat!("ladder_", stringify!($stem), "_", stringify!($op_name), "_", stringify!($t))]
                pub unsafe extern "ptx-kernel" fn export(input: *const $t, len: u64, out: *mut $t) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe { entry::ladder::<$t, $op, $load, $tree>(input, len, out) }
                }
            };
        )*};
    }
    for_each_ladder_rung!(ladder_exports);

    macro_rules! seed_dot_exports {
        ($($t:ident)*) => {$(
            const _: () = {
                /// Seed 004's naive dot product; see [`entry::dot_atomic_per_element`].
                #[export_name = concat!("ladder_dot_atomic_per_element_", stringify!($t))]
                pub unsafe extern "ptx-kernel" fn export(a: *const $t, b: *const $t, len: u64, out: *mut $t) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe { entry::dot_atomic_per_element::<$t>(a, b, len, out) }
                }
            };
            const _: () = {
                /// Seed 004's block-tree dot product; see [`entry::dot_block_tree`].
                #[export_name = concat!("ladder_dot_block_tree_", stringify!($t))]
                pub unsafe extern "ptx-kernel" fn export(a: *const $t, b: *const $t, len: u64, out: *mut $t) {
                    // SAFETY: the host launches this with the parameters `abi` documents.
                    unsafe { entry::dot_block_tree::<$t>(a, b, len, out) }
                }
            };
        )*};
    }
    seed_dot_exports!(i32 f32);
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Unreachable by construction (the build rejects PTX with unresolved
    // externs, which any reachable panic would leave); trap if it ever runs.
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
