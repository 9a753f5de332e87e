//! argmax / argmin: the first index of the largest (smallest) element, the
//! first NaN if there is one, signed zeros equal; on the emulator and the GPU,
//! against a CPU reference.

mod common;
use common::*;
use rand::Rng;
use reduce::{Error, Op};

/// The CPU reference: the first index holding the largest (`Op::Max`) or
/// smallest element, or the first NaN.
fn expected_index<T: TestElement + PartialOrd>(data: &[T], op: Op) -> usize {
    if let Some(first_nan) = data.iter().position(|x| x.is_nan()) {
        return first_nan;
    }
    let mut best = 0;
    for (i, x) in data.iter().enumerate().skip(1) {
        let better = match op {
            Op::Max => *x > data[best],
            _ => *x < data[best],
        };
        if better {
            best = i;
        }
    }
    best
}

fn check<T: TestElement + PartialOrd>(backend: &mut Backend, data: &[T], offset: usize, op: Op) -> Result<(), String> {
    let (index, value) = backend.arg(data, offset, op)?;
    let expected = expected_index(data, op);
    let value_ok = value == data[expected] || (value.is_nan() && data[expected].is_nan());
    if index != expected as u64 || !value_ok {
        return Err(format!(
            "got ({index}, {value:?}), expected ({expected}, {:?})",
            data[expected]
        ));
    }
    Ok(())
}

/// Random data with the extreme planted several times (ties), at random
/// lengths and offsets; for floats also NaN, infinities and signed zeros.
fn random_ties<T: TestElement + PartialOrd>(test: &str) {
    let mut rng = rng(test);
    for mut backend in backends(test) {
        let mut failures = Vec::new();
        for &n in &[1usize, 2, 3, 5, 16, 17, 33, 1000, 4097, 50_001, 2_000_003] {
            let n = backend.size(n, 60_000);
            for case in 0..4 {
                for op in [Op::Max, Op::Min] {
                    let mut data: Vec<T> = random_vec::<T>(&mut rng, Op::Sum, n);
                    let extreme = data[rng.gen_range(0..n)];
                    for _ in 0..rng.gen_range(1..4) {
                        let at = rng.gen_range(0..n);
                        data[at] = extreme;
                    }
                    if case == 3 {
                        let at = rng.gen_range(0..n);
                        data[at] = T::special(&mut rng, op);
                    }
                    let offset = rng.gen_range(0..8);
                    if let Err(e) = check(&mut backend, &data, offset, op) {
                        failures.push(format!("{}: {op} n={n} offset={offset}: {e}", backend.name()));
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

macro_rules! random_ties_tests {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() {
            random_ties::<$t>(stringify!($name));
        }
    )*};
}

random_ties_tests! {
    argmax_i32_ties_sizes_offsets: i32;
    argmax_u32_ties_sizes_offsets: u32;
    argmax_i64_ties_sizes_offsets: i64;
    argmax_u64_ties_sizes_offsets: u64;
    argmax_f32_ties_sizes_offsets: f32;
    argmax_f64_ties_sizes_offsets: f64;
}

/// Known answers: the first NaN wins (also before a larger value), ties and
/// signed zeros give the first index, infinities are values; empty is an error.
#[test]
fn argmax_f32_known_answers() {
    for mut backend in backends("argmax_f32_known_answers") {
        let name = backend.name();
        let mut data = vec![1.0f32; 5000];
        data[4000] = f32::NAN;
        data[4321] = f32::NAN;
        data[10] = 7.0;
        for op in [Op::Max, Op::Min] {
            let (index, value) = backend.arg(&data, 1, op).unwrap();
            assert_eq!(index, 4000, "{name}: {op}");
            assert!(value.is_nan(), "{name}: {op}");
        }
        let zeros = [-1.0f32, -0.0, 0.0, -0.0];
        assert_eq!(
            backend.arg(&zeros, 0, Op::Max).unwrap().0,
            1,
            "{name}: -0.0 and +0.0 are equal"
        );
        let infinities = [
            3.0f32,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        assert_eq!(
            backend.arg(&infinities, 2, Op::Max).unwrap(),
            (2, f32::INFINITY),
            "{name}"
        );
        assert_eq!(
            backend.arg(&infinities, 2, Op::Min).unwrap(),
            (1, f32::NEG_INFINITY),
            "{name}"
        );
        let empty: [f32; 0] = [];
        let error = backend.arg(&empty, 0, Op::Max).unwrap_err();
        assert!(error.contains("empty"), "{name}: {error}");
    }
    assert!(matches!(
        reduce::emulated::Emulator::new().argmin::<i64>(&[]),
        Err(Error::Empty { op: Op::Min })
    ));
}

/// Integer bounds and all-equal input.
#[test]
fn argmax_i64_bounds_and_equal() {
    for mut backend in backends("argmax_i64_bounds_and_equal") {
        let name = backend.name();
        let mut data = vec![0i64; 3000];
        data[2999] = i64::MAX;
        data[17] = i64::MIN;
        data[2500] = i64::MAX;
        assert_eq!(backend.arg(&data, 3, Op::Max).unwrap(), (2500, i64::MAX), "{name}");
        assert_eq!(backend.arg(&data, 3, Op::Min).unwrap(), (17, i64::MIN), "{name}");
        let equal = vec![42i64; 777];
        assert_eq!(backend.arg(&equal, 1, Op::Max).unwrap(), (0, 42), "{name}");
        assert_eq!(backend.arg(&equal, 1, Op::Min).unwrap(), (0, 42), "{name}");
    }
}
