//! An [`Expr`] as a PTX device function (`.func`), each step one
//! instruction with the semantics of [`Scalar`]'s plain operations: float
//! arithmetic rounded to nearest (`.rn`, which also keeps ptxas from fusing
//! a multiply and an add), wrapping integer arithmetic, the sign bit
//! flipped or cleared by bit operations (as Rust's `-x` and `abs`, NaN
//! included), comparisons ordered as Rust's (`!=` of floats unordered).
//! Registers are bit-typed (`.b32`/`.b64`), which PTX lets every
//! instruction of their size use.

use super::trace::{Expr, Node};
use super::value::{Binary, Compare, Scalar, Unary};
use std::fmt::Write;

/// The PTX of `expr` as `.func (.param .bN <name>_result) <name>(.param
/// .bN <name>_a0, …)`, `N` being `T`'s bits. `name` is an identifier the
/// caller chose (letters, digits, `_`).
pub(crate) fn device_function<T: Scalar>(expr: &Expr<T>, name: &str) -> String {
    let bits = T::BITS;
    let mut ptx = String::new();
    // `write!` to a `String` cannot fail.
    let _ = write!(ptx, ".func (.param .b{bits} {name}_result) {name}(");
    for n in 0..expr.params {
        let comma = if n.saturating_add(1) < expr.params { "," } else { "" };
        let _ = write!(ptx, "\n    .param .b{bits} {name}_a{n}{comma}");
    }
    let steps = expr.nodes.len().max(1);
    let _ = write!(
        ptx,
        "\n)\n{{\n    .reg .b{bits} %v<{steps}>;\n    .reg .pred %p<{steps}>;\n"
    );
    for (index, node) in expr.nodes.iter().enumerate() {
        let _ = writeln!(
            ptx,
            "    {}",
            instruction::<T>(*node, index, ("%v", "%p"), &Arguments::Parameters(name))
        );
    }
    let last = expr.nodes.len().saturating_sub(1);
    let _ = write!(ptx, "    st.param.b{bits} [{name}_result], %v{last};\n    ret;\n}}\n");
    ptx
}

/// The PTX of `expr` inlined where a call of its function was: a block
/// with registers of its own (`%uop_v<i>`, `%uop_p<i>`, which no LLVM
/// register is named) that reads `arguments` (registers or immediates of
/// `T`'s bits) and moves the result into `result`. ptxas does not always
/// inline a `.func`, and a call per element costs a memory-bound loop a
/// fifth of its bandwidth (measured on an H200, 2026-11-28).
pub(crate) fn inlined<T: Scalar>(expr: &Expr<T>, arguments: &[String], result: &str) -> String {
    let bits = T::BITS;
    let steps = expr.nodes.len().max(1);
    let mut ptx = format!("{{\n\t.reg .b{bits} %uop_v<{steps}>;\n\t.reg .pred %uop_p<{steps}>;\n");
    for (index, node) in expr.nodes.iter().enumerate() {
        let step = instruction::<T>(*node, index, ("%uop_v", "%uop_p"), &Arguments::Registers(arguments));
        let _ = writeln!(ptx, "\t{step}");
    }
    let last = expr.nodes.len().saturating_sub(1);
    let _ = write!(ptx, "\tmov.b{bits} {result}, %uop_v{last};\n\t}}");
    ptx
}

/// Where an expression's steps find their arguments: a function's
/// parameters (`<name>_a<n>`), or registers of the code it is inlined into.
enum Arguments<'a> {
    Parameters(&'a str),
    Registers(&'a [String]),
}

/// The instruction of step `index`, `node`: values in registers `{v}<i>`,
/// predicates in `{p}<i>`.
fn instruction<T: Scalar>(node: Node, index: usize, (v, p): (&str, &str), arguments: &Arguments<'_>) -> String {
    let (bits, ty) = (T::BITS, T::PTX);
    let sign = 1u64.checked_shl(bits.saturating_sub(1)).unwrap_or(0);
    let hex = |value: u64| {
        if bits == 32 {
            format!("0x{value:08X}")
        } else {
            format!("0x{value:016X}")
        }
    };
    match node {
        Node::Param(n) => match arguments {
            Arguments::Parameters(name) => format!("ld.param.b{bits} {v}{index}, [{name}_a{n}];"),
            Arguments::Registers(registers) => {
                let register = registers.get(n as usize).map_or("0", String::as_str);
                // LLVM may pass the low half of a 64-bit register (`%rd`) as
                // a 32-bit argument, which `st.param.b32` truncates and `mov` refuses.
                match bits == 32 && register.starts_with("%rd") {
                    true => format!("cvt.u32.u64 {v}{index}, {register};"),
                    false => format!("mov.b{bits} {v}{index}, {register};"),
                }
            }
        },
        Node::Const(value) => format!("mov.b{bits} {v}{index}, {};", hex(value)),
        Node::Binary(op, a, b) => {
            let opcode = match (op, T::FLOAT) {
                (Binary::Add, true) => format!("add.rn.{ty}"),
                (Binary::Sub, true) => format!("sub.rn.{ty}"),
                (Binary::Mul, true) => format!("mul.rn.{ty}"),
                (Binary::Div, true) => format!("div.rn.{ty}"),
                (Binary::Add, false) => format!("add.{ty}"),
                (Binary::Sub, false) => format!("sub.{ty}"),
                (Binary::Mul | Binary::Div, false) => format!("mul.lo.{ty}"),
            };
            format!("{opcode} {v}{index}, {v}{a}, {v}{b};")
        }
        Node::Unary(op, a) => match (op, T::FLOAT, ty.starts_with('u')) {
            (Unary::Neg, true, _) => format!("xor.b{bits} {v}{index}, {v}{a}, {};", hex(sign)),
            (Unary::Abs, true, _) => format!("and.b{bits} {v}{index}, {v}{a}, {};", hex(sign.wrapping_sub(1))),
            // Two's complement negation: the same bits for unsigned types.
            (Unary::Neg, false, _) => format!("neg.s{bits} {v}{index}, {v}{a};"),
            (Unary::Abs, false, false) => format!("abs.{ty} {v}{index}, {v}{a};"),
            (Unary::Abs, false, true) => format!("mov.b{bits} {v}{index}, {v}{a};"),
        },
        Node::Compare(op, a, b) => {
            let test = match (op, T::FLOAT) {
                (Compare::Lt, _) => "lt",
                (Compare::Le, _) => "le",
                (Compare::Gt, _) => "gt",
                (Compare::Ge, _) => "ge",
                (Compare::Eq, _) => "eq",
                // Rust's `!=` holds where either float is NaN: unordered.
                (Compare::Ne, true) => "neu",
                (Compare::Ne, false) => "ne",
            };
            format!("setp.{test}.{ty} {p}{index}, {v}{a}, {v}{b};")
        }
        Node::Select(condition, a, b) => format!("selp.b{bits} {v}{index}, {v}{a}, {v}{b}, {p}{condition};"),
    }
}
