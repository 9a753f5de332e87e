//! The host crate's integration tests, in one test binary (issue #41: each
//! binary links the whole crate, and CI builds them twice, release and
//! debug). Each module is what was a test file of its own, so a test is
//! `module::name` (`cargo test --test suite -- axes::` runs one module's).
//!
//! Not here, each still a binary of its own, because its tests need the
//! process or the GPU to themselves: `contexts` (destroys the primary
//! context, which the shared test context here keeps alive),
//! `multi_gpu` (an NCCL group over every GPU), `scope` (measures the GPU's
//! free memory), `reduce_out_of_memory` (fills the GPU) and
//! `reduce_large_offsets` (about 17 GB of GPU memory, with REDUCE_TEST_HUGE=1).
//! And `cudarc` (feature `cudarc`), for build time: scripts/test.sh builds
//! the tests with that feature only for it, and here it would rebuild every
//! module with the feature (in release, about 47 s against 7 s on 2 cores).

// Declared first: its macros (`for_each_backend!`, ...) are for the modules below.
#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod argmax;
mod argument_space;
mod axes;
mod axes_widened_and_arg;
mod canonical_nan;
mod cast;
mod dot;
mod emulator_faults;
mod errors;
mod exact_dot;
mod exact_logsumexp;
mod exact_sum;
mod exact_variance;
mod kernel_sweep;
mod ladder_rungs;
mod matrix;
mod reduce_concurrency;
mod reduce_determinism;
mod reduce_fp_nan_inf;
mod reduce_int_bounds;
mod reduce_random_cases;
mod reduce_sizes;
mod reduce_widened;
mod segmented;
mod statistics;
mod user_ops;
