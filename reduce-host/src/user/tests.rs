//! The traced expression of an operator against the operator on plain
//! numbers, bit for bit, on random and special values; trace errors; the
//! emitted PTX assembled by ptxas where it is installed.

use super::ptx;
use super::trace::{trace, Expr, Node, Traced};
use super::value::{Compare, FloatScalar, Plain, Scalar, Value};
use rand::{Rng, SeedableRng};

/// A sign-keeping absolute maximum: the argument of larger magnitude.
fn abs_max<T: Scalar, V: Value<T>>([a, b]: [V; 2]) -> V {
    V::select(b.abs().gt(a.abs()), b, a)
}

/// `(a - b)²`: a squared distance's map of two inputs.
fn squared_distance<T: Scalar, V: Value<T>>([a, b]: [V; 2]) -> V {
    let d = a - b;
    d * d
}

/// A sum clamped at 100 (a saturating sum's combine), through a constant.
fn clamped_sum<T: Scalar, V: Value<T>>([a, b]: [V; 2], limit: T) -> V {
    (a + b).min(V::constant(limit))
}

/// Every operation once: `-`, `abs`, each comparison, select.
fn everything<T: Scalar, V: Value<T>>([a, b, c]: [V; 3]) -> V {
    let x = -(a * b) + c.abs() - a;
    let y = V::select(a.compare(Compare::Ne, b), x, b);
    let z = V::select(a.compare(Compare::Le, c), y, -y);
    let w = V::select(b.compare(Compare::Ge, z), z.max(a), z.min(c));
    V::select(w.compare(Compare::Eq, a), w, w + a)
}

/// `(a + b) / 2` in floats (division needs `V: Div`).
fn midpoint<T: FloatScalar, V: Value<T> + std::ops::Div<Output = V>>([a, b]: [V; 2], two: T) -> V {
    (a + b) / V::constant(two)
}

fn random_f32(rng: &mut rand::rngs::StdRng) -> f32 {
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE / 4.0,
        f32::MAX,
    ];
    if rng.gen_ratio(1, 4) {
        specials[rng.gen_range(0..specials.len())]
    } else {
        f32::from_bits(rng.gen::<u32>())
    }
}

fn random_i64(rng: &mut rand::rngs::StdRng) -> i64 {
    let specials = [0, -1, 1, i64::MIN, i64::MAX];
    if rng.gen_ratio(1, 4) {
        specials[rng.gen_range(0..specials.len())]
    } else {
        rng.gen()
    }
}

/// Whether `x` is NaN (unequal to itself).
fn is_nan<T: Scalar>(x: T) -> bool {
    T::compare(Compare::Ne, x, x)
}

/// `expr` on `args` has the bits of `plain` on them, a NaN's payload
/// apart: Rust does not keep NaN bits through arithmetic (an optimised
/// build computed `0x7fc00000` where the same operation elsewhere gave
/// `0xffc00000`), nor does the GPU (its arithmetic returns one NaN).
fn check<T: Scalar, const N: usize>(
    expr: &Expr<T>,
    plain: impl Fn([Plain<T>; N]) -> Plain<T>,
    args: [T; N],
    what: &str,
) {
    let expected = plain(args.map(Plain)).0;
    let got = expr.eval(&args);
    let same = got.to_bits() == expected.to_bits() || (is_nan(got) && is_nan(expected));
    assert!(same, "{what} of {args:?}: traced {got:?}, plain {expected:?}");
}

#[test]
fn traced_operators_compute_the_plain_bits() {
    let seed: u64 = rand::random();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let f32_abs_max = trace(abs_max::<f32, _>).unwrap();
    let f32_distance = trace(squared_distance::<f32, _>).unwrap();
    let f32_clamped = trace(|args| clamped_sum::<f32, _>(args, 100.0)).unwrap();
    let f32_everything = trace(everything::<f32, _>).unwrap();
    let f32_midpoint = trace(|args| midpoint::<f32, _>(args, 2.0)).unwrap();
    let f64_everything = trace(everything::<f64, _>).unwrap();
    let i64_everything = trace(everything::<i64, _>).unwrap();
    let u32_clamped = trace(|args| clamped_sum::<u32, _>(args, 100)).unwrap();
    let i32_distance = trace(squared_distance::<i32, _>).unwrap();
    for _ in 0..20_000 {
        let [a, b, c] = [(); 3].map(|_| random_f32(&mut rng));
        check(&f32_abs_max, abs_max, [a, b], &format!("seed {seed}: abs_max"));
        check(
            &f32_distance,
            squared_distance,
            [a, b],
            &format!("seed {seed}: distance"),
        );
        check(
            &f32_clamped,
            |x| clamped_sum(x, 100.0),
            [a, b],
            &format!("seed {seed}: clamped"),
        );
        check(
            &f32_everything,
            everything,
            [a, b, c],
            &format!("seed {seed}: everything f32"),
        );
        check(
            &f32_midpoint,
            |x| midpoint(x, 2.0),
            [a, b],
            &format!("seed {seed}: midpoint"),
        );
        let wide = [a, b, c].map(f64::from);
        check(
            &f64_everything,
            everything,
            wide,
            &format!("seed {seed}: everything f64"),
        );
        let [i, j, k] = [(); 3].map(|_| random_i64(&mut rng));
        check(
            &i64_everything,
            everything,
            [i, j, k],
            &format!("seed {seed}: everything i64"),
        );
        check(
            &u32_clamped,
            |x| clamped_sum(x, 100),
            [i as u32, j as u32],
            &format!("seed {seed}: clamped u32"),
        );
        check(
            &i32_distance,
            squared_distance,
            [i as i32, k as i32],
            &format!("seed {seed}: distance i32"),
        );
    }
    // The sign-keeping maximum keeps the sign; the clamp clamps.
    assert_eq!(f32_abs_max.eval(&[-3.0, 2.0]), -3.0);
    assert_eq!(f32_clamped.eval(&[70.0, 50.0]), 100.0);
    assert_eq!(u32_clamped.eval(&[u32::MAX, 2]), 1, "wrapping, then the clamp");
}

#[test]
fn an_argument_or_a_constant_alone_is_an_expression() {
    let first = trace(|[a, _b]: [Traced<f64>; 2]| a).unwrap();
    assert_eq!(first.eval(&[1.5, 2.5]), 1.5);
    let seven = trace(|[_a]: [Traced<i32>; 1]| Traced::constant(7)).unwrap();
    assert_eq!(seven.eval(&[1]), 7);
    assert!(matches!(seven.nodes.last(), Some(Node::Const(7))));
}

#[test]
fn a_value_kept_from_another_trace_is_an_error() {
    let mut kept = None;
    trace(|[a]: [Traced<f32>; 1]| {
        kept = Some(a);
        a
    })
    .unwrap();
    let stale = kept.unwrap();
    let err = trace(|[a]: [Traced<f32>; 1]| a + stale).unwrap_err();
    assert!(err.0.contains("another trace"), "{err:?}");
    // Returned as is, too.
    assert!(trace(|[_a]: [Traced<f32>; 1]| stale).is_err());
    // A trace inside a trace: the inner one's values are foreign outside it.
    let err = trace(|[a]: [Traced<f32>; 1]| {
        let inner = trace(|[b]: [Traced<f32>; 1]| b * b).unwrap();
        assert_eq!(inner.eval(&[3.0]), 9.0);
        a
    });
    assert!(err.is_ok(), "an inner trace that keeps nothing is fine: {err:?}");
}

#[test]
fn a_panic_in_a_traced_operator_leaves_no_trace_behind() {
    let panicked = std::panic::catch_unwind(|| {
        trace(|[a]: [Traced<f32>; 1]| -> Traced<f32> {
            let _ = a * a;
            panic!("the operator's own panic")
        })
    });
    assert!(panicked.is_err());
    assert!(
        !super::trace::recording(),
        "the panicked trace's tape is still recording"
    );
    // The next trace starts from nothing: its first step is its argument.
    let expr = trace(|[a]: [Traced<f32>; 1]| a + a).unwrap();
    assert_eq!(expr.nodes.first(), Some(&Node::Param(0)), "{expr:?}");
    assert_eq!(expr.eval(&[2.0]), 4.0);
}

#[test]
fn the_ptx_spells_each_operation_with_its_rounding_and_ordering() {
    let f = trace(everything::<f32, _>).unwrap();
    let ptx = ptx::device_function(&f, "user_op");
    for needle in [
        ".func (.param .b32 user_op_result) user_op(",
        "mul.rn.f32",
        "add.rn.f32",
        "sub.rn.f32",
        "xor.b32",
        "0x80000000",
        "and.b32",
        "0x7FFFFFFF",
        "setp.neu.f32",
        "setp.le.f32",
        "selp.b32",
        "st.param.b32 [user_op_result]",
    ] {
        assert!(ptx.contains(needle), "no {needle} in\n{ptx}");
    }
    let i = ptx::device_function(&trace(everything::<i64, _>).unwrap(), "user_op");
    for needle in [
        "mul.lo.s64",
        "neg.s64",
        "abs.s64",
        "setp.ne.s64",
        "selp.b64",
        ".reg .b64",
    ] {
        assert!(i.contains(needle), "no {needle} in\n{i}");
    }
    let u = ptx::device_function(&trace(|args| clamped_sum::<u32, _>(args, 100)).unwrap(), "clamp");
    assert!(
        u.contains("setp.lt.u32") && u.contains("mov.b32 %v3, 0x00000064;"),
        "{u}"
    );
}

/// ptxas from `scripts/build_kernels.sh`'s environment (`.ptxas/`), if
/// installed.
pub(crate) fn ptxas() -> Option<std::path::PathBuf> {
    let lib = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ptxas/lib");
    std::fs::read_dir(lib).ok()?.flatten().find_map(|python| {
        let ptxas = python.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas");
        ptxas.is_file().then_some(ptxas)
    })
}

/// A module with `function` and an entry point `check(in, out, n)` whose
/// thread `i < n` calls it on the `params` values at `in[i · params ..]` and
/// stores the result at `out[i]`, as the kernels will call an operator.
fn module_calling(function: &str, name: &str, bits: u32, params: u32) -> String {
    let bytes = bits / 8;
    let mut ptx = format!(".version 7.0\n.target sm_70\n.address_size 64\n\n{function}\n");
    ptx += ".visible .entry check(.param .u64 check_in, .param .u64 check_out, .param .u32 check_n)\n{\n";
    ptx += &format!(
        "    .reg .b64 %a<4>;\n    .reg .b32 %i<5>;\n    .reg .pred %q;\n    .reg .b{bits} %x<{}>;\n",
        params + 1
    );
    ptx += "    mov.u32 %i0, %tid.x;\n    mov.u32 %i1, %ctaid.x;\n    mov.u32 %i2, %ntid.x;\n";
    ptx += "    mad.lo.u32 %i3, %i1, %i2, %i0;\n    ld.param.u32 %i4, [check_n];\n";
    ptx += "    setp.ge.u32 %q, %i3, %i4;\n    @%q ret;\n";
    ptx += "    ld.param.u64 %a0, [check_in];\n    cvta.to.global.u64 %a0, %a0;\n";
    ptx += "    ld.param.u64 %a1, [check_out];\n    cvta.to.global.u64 %a1, %a1;\n";
    ptx += &format!(
        "    mul.wide.u32 %a2, %i3, {};\n    add.u64 %a0, %a0, %a2;\n",
        params * bytes
    );
    ptx += &format!("    mul.wide.u32 %a3, %i3, {bytes};\n    add.u64 %a1, %a1, %a3;\n");
    for n in 0..params {
        ptx += &format!("    ld.global.b{bits} %x{n}, [%a0+{}];\n", n * bytes);
    }
    ptx += "    {\n";
    ptx += &format!("        .param .b{bits} r;\n");
    let args: Vec<String> = (0..params).map(|n| format!("p{n}")).collect();
    for (n, arg) in args.iter().enumerate() {
        ptx += &format!("        .param .b{bits} {arg};\n        st.param.b{bits} [{arg}], %x{n};\n");
    }
    ptx += &format!("        call (r), {name}, ({});\n", args.join(", "));
    ptx += &format!("        ld.param.b{bits} %x{params}, [r];\n    }}\n");
    ptx += &format!("    st.global.b{bits} [%a1], %x{params};\n    ret;\n}}\n");
    ptx
}

#[test]
fn ptxas_assembles_the_functions_called_from_a_kernel() {
    let Some(ptxas) = ptxas() else {
        println!("skipped ptxas_assembles_the_functions_called_from_a_kernel: no ptxas in .ptxas/ (scripts/build_kernels.sh installs it)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("reduce-user-op-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            ptx::device_function(&trace(everything::<f32, _>).unwrap(), "op_f32"),
            "op_f32",
            32,
            3,
        ),
        (
            ptx::device_function(&trace(everything::<f64, _>).unwrap(), "op_f64"),
            "op_f64",
            64,
            3,
        ),
        (
            ptx::device_function(&trace(everything::<i64, _>).unwrap(), "op_i64"),
            "op_i64",
            64,
            3,
        ),
        (
            ptx::device_function(&trace(|a| clamped_sum::<u32, _>(a, 100)).unwrap(), "op_u32"),
            "op_u32",
            32,
            2,
        ),
        (
            ptx::device_function(&trace(|a| midpoint::<f64, _>(a, 2.0)).unwrap(), "op_mid"),
            "op_mid",
            64,
            2,
        ),
        (
            ptx::device_function(&trace(|[a, _b]: [Traced<f32>; 2]| a).unwrap(), "op_arg"),
            "op_arg",
            32,
            2,
        ),
    ];
    for (function, name, bits, params) in cases {
        let path = dir.join(format!("{name}.ptx"));
        std::fs::write(&path, module_calling(&function, name, bits, params)).unwrap();
        let output = std::process::Command::new(&ptxas)
            .args(["-arch=sm_70", "-o", "/dev/null"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "ptxas refused {name}:\n{}\n{function}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The emitted function run on the GPU (thread `i` on `args[i]`) gives the
/// bits of the operator on plain numbers, but for NaN payloads: the GPU's
/// arithmetic returns its canonical NaN where the CPU keeps an operand's.
#[cfg(feature = "cust")]
fn check_on_gpu<T: Scalar + cust::memory::DeviceCopy, const N: usize>(
    expr: &Expr<T>,
    plain: impl Fn([Plain<T>; N]) -> Plain<T>,
    args: &[[T; N]],
    name: &str,
) {
    use cust::memory::{CopyDestination, DeviceBuffer};
    use cust::stream::{Stream, StreamFlags};
    let function = ptx::device_function(expr, name);
    let ptx = module_calling(&function, name, T::BITS, N as u32);
    let module = cust::module::Module::from_ptx(&ptx, &[]).unwrap_or_else(|e| panic!("{name}: {e}\n{ptx}"));
    let check = module.get_function("check").unwrap();
    let flat: Vec<T> = args.iter().flatten().copied().collect();
    let input = DeviceBuffer::from_slice(&flat).unwrap();
    let out = DeviceBuffer::from_slice(&flat[..args.len()]).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let n = args.len() as u32;
    // SAFETY: `check` reads `N` values per thread below `n` from `input`
    // (`n · N` of them) and writes one to `out` (`n` of them).
    unsafe {
        cust::launch!(check<<<n.div_ceil(256), 256, 0, stream>>>(input.as_device_ptr(), out.as_device_ptr(), n))
            .unwrap();
    }
    stream.synchronize().unwrap();
    let mut got = flat[..args.len()].to_vec();
    out.copy_to(&mut got[..]).unwrap();
    for (arg, got) in args.iter().zip(got) {
        let expected = plain(arg.map(Plain)).0;
        let same = got.to_bits() == expected.to_bits() || (is_nan(got) && is_nan(expected));
        assert!(same, "{name} of {arg:?}: GPU {got:?}, CPU {expected:?}");
    }
}

#[cfg(feature = "cust")]
#[test]
fn the_gpu_computes_the_plain_bits() {
    let Ok(_context) = cust::quick_init() else {
        println!("skipped the_gpu_computes_the_plain_bits (no GPU)");
        if let Ok(path) = std::env::var("REDUCE_TEST_SKIP_LOG") {
            use std::io::Write;
            let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
            file.and_then(|mut f| f.write_all(b"the_gpu_computes_the_plain_bits (no GPU)\n"))
                .unwrap();
        }
        return;
    };
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let f32s: Vec<[f32; 3]> = (0..100_000).map(|_| [(); 3].map(|_| random_f32(&mut rng))).collect();
    let f64s: Vec<[f64; 3]> = f32s.iter().map(|a| a.map(f64::from)).collect();
    let i64s: Vec<[i64; 3]> = (0..100_000).map(|_| [(); 3].map(|_| random_i64(&mut rng))).collect();
    let u32s: Vec<[u32; 2]> = i64s.iter().map(|a| [a[0] as u32, a[1] as u32]).collect();
    let pairs: Vec<[f32; 2]> = f32s.iter().map(|a| [a[0], a[1]]).collect();
    check_on_gpu(
        &trace(everything::<f32, _>).unwrap(),
        everything,
        &f32s,
        "everything_f32",
    );
    check_on_gpu(
        &trace(everything::<f64, _>).unwrap(),
        everything,
        &f64s,
        "everything_f64",
    );
    check_on_gpu(
        &trace(everything::<i64, _>).unwrap(),
        everything,
        &i64s,
        "everything_i64",
    );
    check_on_gpu(&trace(abs_max::<f32, _>).unwrap(), abs_max, &pairs, "abs_max_f32");
    check_on_gpu(
        &trace(squared_distance::<f32, _>).unwrap(),
        squared_distance,
        &pairs,
        "distance_f32",
    );
    let midpoint_f32 = trace(|a| midpoint::<f32, _>(a, 2.0)).unwrap();
    check_on_gpu(&midpoint_f32, |a| midpoint(a, 2.0), &pairs, "midpoint_f32");
    let clamp = trace(|a| clamped_sum::<u32, _>(a, 100)).unwrap();
    check_on_gpu(&clamp, |a| clamped_sum(a, 100), &u32s, "clamped_u32");
}
