//! User-defined operators (issue #47), the part that needs no GPU: an
//! operator written once in plain Rust, generic over [`value::Value`], runs
//! on plain numbers ([`value::Plain`]: the CPU and the emulator) and is
//! traced once ([`trace::trace`]) into an [`trace::Expr`] that evaluates on
//! the CPU and becomes a PTX device function ([`ptx::device_function`]) for
//! the driver to compile into the library's kernels. What a traced operator can express is
//! arithmetic on its arguments: no memory access.
//!
//! Not public yet: the kernels that call the function and the *what* that
//! carries an operator through every place are the next step of the issue;
//! until then only the tests use this module.
#![allow(dead_code)]

pub(crate) mod ptx;
pub(crate) mod trace;
pub(crate) mod value;

#[cfg(test)]
mod tests;
