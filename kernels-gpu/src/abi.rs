//! The contract between the kernels and the host crate.
//!
//! The host crate reads this module (its constants, and its lists through the
//! exported macros) from the kernel crate compiled for the host, so the list
//! of entry points, their parameter layout and the per-thread tiling constant
//! exist exactly once.
//!
//! Every reduction entry point has the same parameters:
//!
//! | parameter  | PTX type | meaning                                                       |
//! |------------|----------|---------------------------------------------------------------|
//! | `input`    | `.u64`   | device address of the first element (any element-aligned address) |
//! | `len`      | `.u64`   | number of elements                                            |
//! | `partials` | `.u64`   | workspace: one 8-byte slot per block of the grid              |
//! | `ticket`   | `.u64`   | workspace: one `u32`, zero before the launch, zero after it   |
//! | `out`      | `.u64`   | where the result (one element) is written                     |

/// Bytes moved by one vector load (`ld.global.nc.v4.u32`).
pub const VECTOR_BYTES: u64 = 16;

/// Independent vector loads each thread issues before it folds any of them:
/// with 512-thread blocks this keeps 32 KiB of loads in flight per block.
pub const VECTORS_PER_THREAD: u64 = 4;

/// Bytes of workspace each block of a launch needs for its partial result.
pub const PARTIAL_SLOT_BYTES: u64 = 8;

/// Calls `$callback! { (entry_point, Operator, element_type), ... }` with every
/// reduction kernel the PTX module contains. The kernel crate turns each tuple
/// into an entry point; the host crate turns each into a row of its kernel table.
#[macro_export]
macro_rules! for_each_reduce_kernel {
    ($callback:ident) => {
        $callback! {
            (reduce_sum_i32, Sum, i32),
            (reduce_sum_u32, Sum, u32),
            (reduce_sum_i64, Sum, i64),
            (reduce_sum_u64, Sum, u64),
            (reduce_sum_f32, Sum, f32),
            (reduce_sum_f64, Sum, f64),
            (reduce_max_i32, Max, i32),
            (reduce_max_u32, Max, u32),
            (reduce_max_i64, Max, i64),
            (reduce_max_u64, Max, u64),
            (reduce_max_f32, Max, f32),
            (reduce_max_f64, Max, f64),
            (reduce_min_i32, Min, i32),
            (reduce_min_u32, Min, u32),
            (reduce_min_i64, Min, i64),
            (reduce_min_u64, Min, u64),
            (reduce_min_f32, Min, f32),
            (reduce_min_f64, Min, f64),
            (reduce_product_i32, Product, i32),
            (reduce_product_u32, Product, u32),
            (reduce_product_i64, Product, i64),
            (reduce_product_u64, Product, u64),
            (reduce_product_f32, Product, f32),
            (reduce_product_f64, Product, f64),
        }
    };
}

/// Calls `$callback! { (entry_point, element_type), ... }` with every
/// production dot-product kernel: parameters `(a, b, len, partials, ticket,
/// out)`, the same as the reduction kernels with two inputs in place of one.
#[macro_export]
macro_rules! for_each_dot_kernel {
    ($callback:ident) => {
        $callback! {
            (reduce_dot_i32, i32),
            (reduce_dot_u32, u32),
            (reduce_dot_i64, i64),
            (reduce_dot_u64, u64),
            (reduce_dot_f32, f32),
            (reduce_dot_f64, f64),
        }
    };
}

/// Calls `$callback! { (rung number, kernel-name stem, load shape, tree shape), ... }`
/// with every rung of the ladder. Its kernels are named
/// `ladder_<stem>_<op>_<type>` for op in sum/max/min/product and type in
/// i32/f32, with parameters `(input: .u64, len: .u64, out: .u64)` (one result
/// per block in `out`) and dynamic shared memory sized by the host. The dot
/// products are `ladder_dot_atomic_per_element_<type>` and
/// `ladder_dot_block_tree_<type>`, parameters `(a, b, len, out)`.
#[macro_export]
macro_rules! for_each_ladder_rung {
    ($callback:ident) => {
        $callback! {
            (1, interleaved_divergent, Strided<1>, InterleavedDivergent),
            (2, interleaved_strided, Strided<1>, InterleavedStrided),
            (3, sequential_addressing, Strided<1>, Sequential),
            (4, first_add_during_load, Strided<2>, Sequential),
            (5, vector_via_shared, Vector<true>, Sequential),
            (6, coarsened_vector, Vector<false>, Sequential),
            (7, warp_shuffle, Vector<false>, Shuffle),
        }
    };
}
