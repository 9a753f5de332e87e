//! An operator made ready to run: traced once into PTX device functions
//! for the GPU, and wrapped for the emulator, which calls it on plain
//! values. [`Program`] is what a backend needs of it.

use super::trace::{trace, TraceError, Traced};
use super::value::{Plain, Scalar, Value};
use super::{ptx, Operator};
use kernels_gpu::device::UserFunctions;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Arc;

/// A user operator as the backends run it: the PTX `.func`s the GPU
/// kernels of `Op::User` call (spliced into their modules), and the same
/// functions on the CPU for the emulator.
#[derive(Clone)]
pub struct Program {
    /// The definitions of `user_op_identity_<t>`, `user_op_combine_<t>`,
    /// `user_op_map_<t>` and `user_op_map_pair_<t>`, `<t>` the element type.
    pub(crate) ptx: Arc<str>,
    /// A hash of `ptx`: the backends' caches key the operator's kernels by
    /// it (and compare `ptx` where it matches).
    pub(crate) fingerprint: u64,
    /// The operator on the CPU, on values' bits.
    pub(crate) functions: Arc<dyn UserFunctions>,
    /// Each function by name, as PTX inlined at a call of it: from its
    /// arguments (registers or immediates) and the register of its result.
    #[cfg_attr(not(any(feature = "cust", feature = "cudarc")), allow(dead_code))]
    inliners: Arc<[(String, Inliner)]>,
}

/// A function of the operator as inlined PTX ([`ptx::inlined`]).
type Inliner = Box<dyn Fn(&[String], &str) -> String + Send + Sync>;

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint))
            .field("ptx_bytes", &self.ptx.len())
            .finish()
    }
}

/// The operator on the CPU: each function called on [`Plain`] values.
pub(crate) struct OnTheCpu<T, O> {
    pub(crate) operator: O,
    _type: PhantomData<fn(T) -> T>,
}

impl<T: Scalar, O: Operator<T>> UserFunctions for OnTheCpu<T, O> {
    fn identity(&self) -> u64 {
        self.operator.identity().to_bits()
    }
    fn combine(&self, a: u64, b: u64) -> u64 {
        let (a, b) = (Plain(T::from_bits(a)), Plain(T::from_bits(b)));
        self.operator.combine(a, b).0.to_bits()
    }
    fn map(&self, x: u64) -> u64 {
        self.operator.map(Plain(T::from_bits(x))).0.to_bits()
    }
    fn map_pair(&self, a: u64, b: u64) -> u64 {
        let (a, b) = (Plain(T::from_bits(a)), Plain(T::from_bits(b)));
        self.operator.map_pair(a, b).0.to_bits()
    }
}

/// `operator` traced and emitted, and wrapped for the CPU.
pub(crate) fn compile<T: Scalar, O: Operator<T>>(operator: O) -> Result<(Program, Arc<OnTheCpu<T, O>>), TraceError> {
    let identity = operator.identity();
    let identity = trace::<T, 0>(|[]| Traced::constant(identity))?;
    let combine = trace::<T, 2>(|[a, b]| operator.combine(a, b))?;
    let map = trace::<T, 1>(|[x]| operator.map(x))?;
    let map_pair = trace::<T, 2>(|[a, b]| operator.map_pair(a, b))?;
    let name = T::NAME;
    let functions = [
        (format!("user_op_identity_{name}"), identity),
        (format!("user_op_combine_{name}"), combine),
        (format!("user_op_map_{name}"), map),
        (format!("user_op_map_pair_{name}"), map_pair),
    ];
    let text: String = functions
        .iter()
        .map(|(name, expr)| ptx::device_function(expr, name))
        .collect();
    let inliners: Vec<(String, Inliner)> = functions
        .into_iter()
        .map(|(name, expr)| {
            let inliner: Inliner =
                Box::new(move |arguments: &[String], result: &str| ptx::inlined(&expr, arguments, result));
            (name, inliner)
        })
        .collect();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    let on_the_cpu = Arc::new(OnTheCpu {
        operator,
        _type: PhantomData,
    });
    let program = Program {
        ptx: text.into(),
        fingerprint: hasher.finish(),
        functions: on_the_cpu.clone(),
        inliners: inliners.into(),
    };
    Ok((program, on_the_cpu))
}

/// `module`'s PTX (as the library ships it, without the user functions)
/// with `program`'s: their definitions after the preamble's
/// `.address_size`, and every call of one that LLVM wrote as its usual
/// call sequence replaced by the function's code ([`inline_calls`]).
/// `None` if the module has no `.address_size` line.
#[cfg_attr(not(any(feature = "cust", feature = "cudarc")), allow(dead_code))]
pub(crate) fn splice(module: &str, program: &Program) -> Option<String> {
    let line = module.find(".address_size")?;
    let (preamble, rest) = match module.get(line..)?.split_once('\n') {
        Some((directive, rest)) => (module.get(..line)?.to_string() + directive, rest),
        None => (module.to_string(), ""),
    };
    Some(format!("{preamble}\n\n{}{}", program.ptx, inline_calls(rest, program)))
}

/// `ptx` with each call sequence of one of `program`'s functions
/// (`{ // callseq` … `} // callseq`: its parameters stored, the call, its
/// result loaded) replaced by the function's code; a sequence of another
/// shape stays a call (of the definition [`splice`] adds).
#[cfg_attr(not(any(feature = "cust", feature = "cudarc")), allow(dead_code))]
fn inline_calls(ptx: &str, program: &Program) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        if !line.trim_start().starts_with("{ // callseq") {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut block = vec![line];
        for line in lines.by_ref() {
            block.push(line);
            if line.trim_start().starts_with("} // callseq") {
                break;
            }
        }
        match inlined_call(&block, program) {
            Some(code) => out.push_str(&code),
            None => block.iter().for_each(|line| {
                out.push_str(line);
                out.push('\n');
            }),
        }
        out.push('\n');
    }
    out
}

/// The call sequence `block` as inlined code, if it calls one of
/// `program`'s functions in the shape LLVM writes: `st.param.b<N>
/// [param<k>], <source>;` for each argument, `call.uni (retval0), <name>,
/// (param0, …);` and `ld.param.b<N> <destination>, [retval0];` (none where
/// the result is unused).
#[cfg_attr(not(any(feature = "cust", feature = "cudarc")), allow(dead_code))]
fn inlined_call(block: &[&str], program: &Program) -> Option<String> {
    let mut arguments: Vec<Option<String>> = Vec::new();
    let (mut callee, mut result) = (None, None);
    for line in block.iter().map(|line| line.trim()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some(store) if store.starts_with("st.param.") => {
                let slot: usize = words.get(1)?.strip_prefix("[param")?.strip_suffix("],")?.parse().ok()?;
                let source = words.get(2)?.strip_suffix(';')?;
                // A float immediate (`0f…`, `0d…`) as the same bits in hex.
                let source = match source.get(..2) {
                    Some("0f" | "0d") => format!("0x{}", source.get(2..)?),
                    _ => source.to_string(),
                };
                if arguments.len() <= slot {
                    arguments.resize(slot.checked_add(1)?, None);
                }
                *arguments.get_mut(slot)? = Some(source);
            }
            Some(call) if call.starts_with("call") => {
                let name = line.split(',').nth(1)?.trim();
                callee = Some(name.to_string());
            }
            Some(load) if load.starts_with("ld.param.") => {
                if words.get(2) != Some(&"[retval0];") {
                    return None;
                }
                result = Some(words.get(1)?.strip_suffix(',')?.to_string());
            }
            _ => {}
        }
    }
    let callee = callee?;
    let (_, inliner) = program.inliners.iter().find(|(name, _)| *name == callee)?;
    let arguments: Vec<String> = arguments.into_iter().collect::<Option<_>>()?;
    match result {
        Some(result) => Some(format!("\t{}", inliner(&arguments, &result))),
        // Its result unused (LLVM cannot know the function is pure, so it
        // kept the call): arithmetic alone, nothing to do.
        None => Some(format!("\t// {callee}: result unused")),
    }
}
