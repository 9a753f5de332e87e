//! Tracing: an operator run once on [`Traced`] values records what it
//! computes into an [`Expr`], which evaluates on the CPU (to check the
//! trace) and emits as PTX (`ptx.rs`).

use super::value::{Binary, Compare, FloatScalar, Scalar, Unary, Value};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// One step of an expression; operands are earlier steps' indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    /// Argument `n` of the operator.
    Param(u32),
    /// A constant's bits.
    Const(u64),
    Binary(Binary, u32, u32),
    Unary(Unary, u32),
    /// A predicate.
    Compare(Compare, u32, u32),
    /// Predicate, then the values for true and for false.
    Select(u32, u32, u32),
}

/// The steps being recorded on this thread, and which trace they belong to.
struct Tape {
    trace: u64,
    nodes: Vec<Node>,
    /// Set when a value of another trace was used.
    foreign: bool,
}

thread_local! {
    static TAPE: RefCell<Option<Tape>> = const { RefCell::new(None) };
    static TRACES: RefCell<u64> = const { RefCell::new(0) };
}

/// Records `node` on the current tape (values of trace `trace`): its index.
fn record(trace: u64, operands: &[u64], node: Node) -> u32 {
    TAPE.with(|tape| {
        let mut tape = tape.borrow_mut();
        match tape.as_mut() {
            Some(tape) if tape.trace == trace && operands.iter().all(|&t| t == trace) => {
                tape.nodes.push(node);
                u32::try_from(tape.nodes.len().saturating_sub(1)).unwrap_or(u32::MAX)
            }
            Some(tape) => {
                tape.foreign = true;
                0
            }
            // A traced value used after its trace ended: nothing records it.
            None => 0,
        }
    })
}

/// A value of type `T` while an operator is traced: what it was computed from.
#[derive(Clone, Copy, Debug)]
pub struct Traced<T> {
    trace: u64,
    node: u32,
    _type: PhantomData<T>,
}

/// A traced comparison, for [`Value::select`].
#[derive(Clone, Copy, Debug)]
pub struct TracedBool {
    trace: u64,
    node: u32,
}

impl<T: Scalar> Traced<T> {
    fn of(trace: u64, operands: &[u64], node: Node) -> Self {
        Traced {
            trace,
            node: record(trace, operands, node),
            _type: PhantomData,
        }
    }
}

/// Whether a trace is being recorded on this thread.
#[cfg(test)]
pub(crate) fn recording() -> bool {
    TAPE.with(|tape| tape.borrow().is_some())
}

/// The trace values take their constants into: the one being recorded.
fn current_trace() -> u64 {
    TAPE.with(|tape| tape.borrow().as_ref().map_or(0, |tape| tape.trace))
}

impl<T: Scalar> Value<T> for Traced<T> {
    type Bool = TracedBool;

    fn constant(value: T) -> Self {
        let trace = current_trace();
        Traced::of(trace, &[], Node::Const(value.to_bits()))
    }
    fn abs(self) -> Self {
        Traced::of(self.trace, &[], Node::Unary(Unary::Abs, self.node))
    }
    fn compare(self, op: Compare, other: Self) -> TracedBool {
        TracedBool {
            trace: self.trace,
            node: record(self.trace, &[other.trace], Node::Compare(op, self.node, other.node)),
        }
    }
    fn select(condition: TracedBool, if_true: Self, if_false: Self) -> Self {
        Traced::of(
            condition.trace,
            &[if_true.trace, if_false.trace],
            Node::Select(condition.node, if_true.node, if_false.node),
        )
    }
}

macro_rules! traced_binary {
    ($trait:ident, $method:ident, $op:ident, $bound:ident) => {
        impl<T: $bound> $trait for Traced<T> {
            type Output = Self;
            fn $method(self, other: Self) -> Self {
                Traced::of(
                    self.trace,
                    &[other.trace],
                    Node::Binary(Binary::$op, self.node, other.node),
                )
            }
        }
    };
}
traced_binary!(Add, add, Add, Scalar);
traced_binary!(Sub, sub, Sub, Scalar);
traced_binary!(Mul, mul, Mul, Scalar);
traced_binary!(Div, div, Div, FloatScalar);

impl<T: Scalar> Neg for Traced<T> {
    type Output = Self;
    fn neg(self) -> Self {
        Traced::of(self.trace, &[], Node::Unary(Unary::Neg, self.node))
    }
}

/// What an operator computes from its `params` arguments of type `T`: the
/// steps in order (each operand an earlier step), the last the result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Expr<T> {
    pub(crate) nodes: Vec<Node>,
    pub(crate) params: u32,
    _type: PhantomData<T>,
}

/// Why an operator could not be traced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TraceError(pub(crate) &'static str);

/// Traces `operator` over `N` arguments into its expression; an error if it
/// used a traced value of another trace (one kept from an earlier trace, or
/// a trace inside it).
pub(crate) fn trace<T: Scalar, const N: usize>(
    operator: impl FnOnce([Traced<T>; N]) -> Traced<T>,
) -> Result<Expr<T>, TraceError> {
    let trace = TRACES.with(|count| {
        let mut count = count.borrow_mut();
        *count = count.saturating_add(1);
        *count
    });
    let outer = TAPE.with(|tape| {
        tape.borrow_mut().replace(Tape {
            trace,
            nodes: Vec::new(),
            foreign: false,
        })
    });
    /// Puts the outer tape back even if the operator panics, so that a
    /// caught panic leaves no half-recorded trace on the thread.
    struct Restore(Option<Option<Tape>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                TAPE.with(|tape| *tape.borrow_mut() = outer);
            }
        }
    }
    let mut restore = Restore(Some(outer));
    let params: [Traced<T>; N] = std::array::from_fn(|n| Traced::of(trace, &[], Node::Param(n as u32)));
    let result = operator(params);
    let outer = restore.0.take().unwrap_or(None);
    let tape = TAPE.with(|tape| std::mem::replace(&mut *tape.borrow_mut(), outer));
    let Some(mut tape) = tape else {
        return Err(TraceError("the trace's record went missing"));
    };
    if tape.foreign || result.trace != trace {
        return Err(TraceError(
            "the operator used a value from another trace: keep no traced value between calls",
        ));
    }
    // The result last (it may be an argument or an earlier step).
    let last = tape.nodes.len().checked_sub(1);
    if last != Some(result.node as usize) {
        let node = tape.nodes.get(result.node as usize).copied();
        let Some(node) = node else {
            return Err(TraceError("the operator's result is not one of its values"));
        };
        tape.nodes.push(node);
    }
    Ok(Expr {
        nodes: tape.nodes,
        params: N as u32,
        _type: PhantomData,
    })
}

impl<T: Scalar> Expr<T> {
    /// The expression evaluated on `args` on the CPU, as [`super::Plain`]
    /// computes the operator.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn eval(&self, args: &[T]) -> T {
        let mut values: Vec<u64> = Vec::with_capacity(self.nodes.len());
        let value = |values: &Vec<u64>, n: u32| T::from_bits(values.get(n as usize).copied().unwrap_or(0));
        for node in &self.nodes {
            let bits = match *node {
                Node::Param(n) => args.get(n as usize).map_or(0, |a| a.to_bits()),
                Node::Const(bits) => bits,
                Node::Binary(op, a, b) => T::binary(op, value(&values, a), value(&values, b)).to_bits(),
                Node::Unary(op, a) => T::unary(op, value(&values, a)).to_bits(),
                Node::Compare(op, a, b) => u64::from(T::compare(op, value(&values, a), value(&values, b))),
                Node::Select(p, a, b) => {
                    let chosen = if values.get(p as usize).copied().unwrap_or(0) != 0 {
                        a
                    } else {
                        b
                    };
                    values.get(chosen as usize).copied().unwrap_or(0)
                }
            };
            values.push(bits);
        }
        T::from_bits(values.last().copied().unwrap_or(0))
    }
}
