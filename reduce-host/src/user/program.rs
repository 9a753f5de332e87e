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
    /// The definitions of `user_op_identity_<t>`, `user_op_combine_<t>`
    /// and `user_op_map_<t>`, `<t>` the element type.
    pub(crate) ptx: Arc<str>,
    /// A hash of `ptx`: the backends' caches key the operator's kernels by
    /// it (and compare `ptx` where it matches).
    pub(crate) fingerprint: u64,
    /// The operator on the CPU, on values' bits.
    pub(crate) functions: Arc<dyn UserFunctions>,
}

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
}

/// `operator` traced and emitted, and wrapped for the CPU.
pub(crate) fn compile<T: Scalar, O: Operator<T>>(operator: O) -> Result<(Program, Arc<OnTheCpu<T, O>>), TraceError> {
    let identity = operator.identity();
    let identity = trace::<T, 0>(|[]| Traced::constant(identity))?;
    let combine = trace::<T, 2>(|[a, b]| operator.combine(a, b))?;
    let map = trace::<T, 1>(|[x]| operator.map(x))?;
    let name = T::NAME;
    let text = [
        ptx::device_function(&identity, &format!("user_op_identity_{name}")),
        ptx::device_function(&combine, &format!("user_op_combine_{name}")),
        ptx::device_function(&map, &format!("user_op_map_{name}")),
    ]
    .concat();
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
    };
    Ok((program, on_the_cpu))
}

/// `module`'s PTX (as the library ships it, without the user functions)
/// with `program`'s definitions after the preamble's `.address_size`, where
/// every kernel that calls them can see them; `None` if it has no such line.
pub(crate) fn splice(module: &str, program: &Program) -> Option<String> {
    let line = module.find(".address_size")?;
    let end = module[line..].find('\n').map_or(module.len(), |n| line + n + 1);
    let mut spliced = String::with_capacity(module.len() + program.ptx.len() + 2);
    spliced.push_str(&module[..end]);
    spliced.push('\n');
    spliced.push_str(&program.ptx);
    spliced.push_str(&module[end..]);
    Some(spliced)
}
