//! The contract between the kernels and the host crate, declared once.
//!
//! Everything both sides must agree on lives here, and nowhere else:
//! - **which kernels exist**: the lists (`for_each_*` macros) of operators,
//!   element types, widenings, argmax/argmin inputs, dot products and ladder
//!   rungs, from which the PTX exports (`lib.rs`), the emulator's dispatch
//!   ([`crate::dispatch`]), the host's kernel lookup and the build script are
//!   all generated;
//! - **their identity**: a [`Kernel`] (family, operator, element type,
//!   schedule), whose [`Kernel::name`] is the PTX entry point, spelled by
//!   [`kernel_name!`](crate::kernel_name) alone;
//! - **their parameters**: one `#[repr(C)]` struct of `u64`s per family
//!   ([`ReduceArgs`], [`SegmentedArgs`], [`AxisArgs`], [`ArgArgs`], [`DotArgs`],
//!   [`LadderArgs`], [`SeedDotArgs`]); an entry point takes the struct's
//!   fields as `.u64` parameters in declaration order, the emulator passes
//!   the struct itself, and the host passes a pointer to each field;
//! - the tiling constants the host's launch shapes are computed from.
//!
//! This module uses nothing from the rest of the crate (only `core`, and
//! `std` in the host-only parts), so the host crate's build script compiles
//! it on its own (`#[path]` to this file, its files found beside it) to
//! learn the names of the entry points it post-processes.
//!
//! One file per part of the contract:
//! - `lists.rs`: which kernels exist, the `for_each_*` lists;
//! - `scalar.rs`: [`Scalar`], the types the kernels read and write;
//! - `operations.rs`: what a kernel computes, [`Op`], [`Statistic`], the
//!   ladder's [`Rung`] and [`SeedDot`];
//! - `plans.rs`: how a launch divides its work and what it writes,
//!   [`SegmentSchedule`], [`ExactSchedule`], [`SegmentPlan`], [`AxisPlan`], [`Finish`];
//! - `kernel.rs`: a kernel's identity, [`Kernel`], its name
//!   ([`kernel_name!`](crate::kernel_name)), its [`Module`], [`KernelMap`];
//! - `args.rs`: the parameters, [`KernelArgs`] and one struct per family;
//! - `tables.rs` (host only): every kernel of the lists with its name
//!   ([`Kernel::all`]);
//! - this file: the constants, and every item of the others, re-exported.
//!
//! The whole-input parameters ([`ReduceArgs`]):
//!
//! | parameter  | meaning                                                       |
//! |------------|---------------------------------------------------------------|
//! | `input`    | device address of the first element (any element-aligned address) |
//! | `len`      | number of elements                                            |
//! | `partials` | workspace: one [`PARTIAL_SLOT_BYTES`] slot per block of the grid |
//! | `ticket`   | workspace: one `u32`, zero before the launch, zero after it   |
//! | `out`      | where the result (one element) is written                     |

// The kernel table, the names and the `Display` impls are for the host (the
// PTX needs none of them, and would compile `core::fmt` calls it cannot
// link): on nvptx the macros that build them go unused.
#![cfg_attr(target_arch = "nvptx64", allow(unused_macros))]

// A `macro_rules!` macro is visible only after the `#[macro_use]` module that
// defines it: the lists first, then the files whose macros the tables (and
// `lib.rs`) expand.
#[macro_use]
mod lists;
#[macro_use]
mod scalar;
mod operations;
mod plans;
#[macro_use]
mod kernel;
#[macro_use]
mod args;
#[cfg(not(target_arch = "nvptx64"))]
mod tables;

pub use args::{
    ArgArgs, AxisArgs, ConvertArgs, DivideArgs, DotArgs, ExactArgs, ExactDotArgs, KernelArgs, LadderArgs, ReduceArgs,
    SeedDotArgs, SegmentedArgs, MAX_KERNEL_WORDS,
};
pub use kernel::Kernel;
#[cfg(not(target_arch = "nvptx64"))]
pub use kernel::{KernelHasher, KernelMap, Module, UserFamily};
pub use operations::{Op, Rung, SeedDot, Statistic};
pub use plans::{AxisPlan, ExactSchedule, Finish, SegmentPlan, SegmentSchedule};
pub use scalar::Scalar;

/// Bytes moved by one vector load (`ld.global.nc.v4.u32`).
pub const VECTOR_BYTES: u64 = 16;

/// Independent vector loads each thread issues before it folds any of them:
/// with 512-thread blocks this keeps 32 KiB of loads in flight per block.
pub const VECTORS_PER_THREAD: u64 = 4;

/// Bytes of workspace each block of a launch needs for its partial result
/// (an element, argmax's element and index, or a statistic's summary: up
/// to 24 bytes, a slot of 32 keeping slots 16-byte aligned).
pub const PARTIAL_SLOT_BYTES: u64 = 32;

/// The value a segmented launch stores in its `status` word when an offset
/// is out of order or past the input's end (it is never cleared by a kernel).
pub const SEGMENTS_INVALID: u32 = 1;

/// [`ExactArgs::form`] of [`Kernel::ExactMerge`] (always): the input is `len` exact states (each
/// `crate::expansion::scratch_words` `u64`s), merged by one block, rather
/// than `len` elements.
pub const EXACT_STATES_IN: u64 = 1;

/// [`ExactArgs::form`] of [`Kernel::ExactState`] (always) and [`Kernel::ExactMerge`]: the output is the exact state (as the states
/// [`EXACT_STATES_IN`] reads), rather than the sum rounded to the element type.
pub const EXACT_STATE_OUT: u64 = 2;

/// [`ExactArgs::form`] of [`Kernel::ExactSum`]: the result is the exact sum
/// rounded, divided by the element count rounded to the element type
/// (`ExactMean`), rather than the rounded sum.
pub const EXACT_MEAN: u64 = 4;

/// [`ExactArgs::form`] of [`Kernel::ExactSum`] of [`Op::SquaredDeviation`]
/// (`ExactVar`): the result is the exact sum of the squared deviations
/// from the mean at `shifts`, rounded, divided by `max(0, len −
/// correction)`, the correction the `f64` whose bits are `finish_param`
/// ([`Finish::Variance`]).
pub const EXACT_VARIANCE: u64 = 8;

/// With [`EXACT_VARIANCE`]: the square root of that (`ExactStd`, [`Finish::Root`]).
pub const EXACT_ROOT: u64 = 16;

/// The finish the whole input's exact kernel applies for its `form`:
/// [`EXACT_MEAN`], [`EXACT_VARIANCE`] (and [`EXACT_ROOT`]), or none.
pub const fn exact_finish(form: u64) -> Finish {
    if form & EXACT_MEAN != 0 {
        Finish::Mean
    } else if form & EXACT_ROOT != 0 {
        Finish::Root
    } else if form & EXACT_VARIANCE != 0 {
        Finish::Variance
    } else {
        Finish::Value
    }
}

/// Loads each thread of an axis launch issues along the reduced axis
/// before it combines any (the host gives each lane of a contiguous reduced
/// axis several times this many elements where the axis is that long).
pub const AXIS_LOADS_IN_FLIGHT: u64 = 8;

/// The most kept axes an axis launch takes ([`AxisPlan`]'s `extent0` … `extent7`).
pub const AXIS_KEPT_DIMS: usize = 8;
