//! User operators (`reduce::User`): through every place, on every backend,
//! bit for bit what the built-in operator gives where the two coincide (the
//! same kernels, the same tree), exact against a CPU fold where the
//! operator is exact, the identity for empty parts, deterministic where
//! the operator is not associative.

use crate::common;
use common::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use reduce::axes::Strided;
use reduce::user::{Operator, Scalar, Value};
use reduce::{Error, Op, Over, User};

#[derive(Clone, Copy, Debug)]
struct Sum;
impl<T: Scalar + TestElement> Operator<T> for Sum {
    fn identity(&self) -> T {
        T::default()
    }
    fn combine<V: Value<T>>(&self, a: V, b: V) -> V {
        a + b
    }
}

/// `a.max(b)`, with the built-in's identity (`-inf`, `MIN`) and NaN rule.
#[derive(Clone, Copy, Debug)]
struct Max<T>(T);
impl<T: Scalar> Operator<T> for Max<T> {
    fn identity(&self) -> T {
        self.0
    }
    fn combine<V: Value<T>>(&self, a: V, b: V) -> V {
        // NaN wins, as `Op::Max`: `a` where it is NaN (`a != a`).
        V::select(a.compare(reduce::user::Compare::Ne, a), a, a.max(b))
    }
}

/// Σ x², as `Op::SumOfSquares`: a map, then a sum.
#[derive(Clone, Copy, Debug)]
struct SumOfSquares;
impl<T: Scalar + TestElement> Operator<T> for SumOfSquares {
    fn identity(&self) -> T {
        T::default()
    }
    fn combine<V: Value<T>>(&self, a: V, b: V) -> V {
        a + b
    }
    fn map<V: Value<T>>(&self, x: V) -> V {
        x * x
    }
}

/// The element of largest magnitude, with its sign (the first of a tie).
#[derive(Clone, Copy, Debug)]
struct SignedAbsMax;
impl Operator<i64> for SignedAbsMax {
    fn identity(&self) -> i64 {
        0
    }
    fn combine<V: Value<i64>>(&self, a: V, b: V) -> V {
        V::select(b.abs().gt(a.abs()), b, a)
    }
}

/// Not associative, not commutative: `a - 2b`.
#[derive(Clone, Copy, Debug)]
struct Skewed;
impl Operator<f32> for Skewed {
    fn identity(&self) -> f32 {
        0.0
    }
    fn combine<V: Value<f32>>(&self, a: V, b: V) -> V {
        a - b * V::constant(2.0)
    }
}

/// A place a check runs over: the whole input (neither), rows, segments
/// (`offsets`), or axes of a view.
struct Place {
    name: String,
    offsets: Vec<u64>,
    axes: Option<(Strided, Vec<isize>)>,
    rows: Option<(usize, usize)>,
}

/// The places every check runs over, for `n` elements: the whole input,
/// rows, random segments (some empty), and axes of a 3-D view.
fn places(rng: &mut StdRng, n: usize) -> Vec<Place> {
    let place = |name: String, offsets, axes, rows| Place {
        name,
        offsets,
        axes,
        rows,
    };
    let mut places = vec![place("whole".to_string(), vec![], None, None)];
    let len = [1, 7, 64, 1000][rng.gen_range(0..4)].min(n.max(1));
    if n.is_multiple_of(len) {
        places.push(place(format!("rows of {len}"), vec![], None, Some((n / len, len))));
    }
    let mut offsets = vec![0u64];
    while (*offsets.last().unwrap() as usize) < n {
        let next = (*offsets.last().unwrap() as usize + rng.gen_range(0..=300)).min(n);
        offsets.push(next as u64);
    }
    offsets.push(n as u64); // an empty last segment
    places.push(place("segments".to_string(), offsets, None, None));
    if n >= 24 && n.is_multiple_of(4) {
        let dims = [2, n / 8, 4].map(|d| d.max(1));
        if dims.iter().product::<usize>() == n {
            for axes in [vec![1], vec![0, 2], vec![2]] {
                places.push(place(
                    format!("axes {axes:?}"),
                    vec![],
                    Some((Strided::contiguous(&dims).unwrap(), axes)),
                    None,
                ));
            }
        }
    }
    places
}

/// `what` and `reference` over every place of `data` on `backend`: each
/// result's bits must be equal.
fn same_bits<B: TestBackend, T: TestElement + Scalar, O: Operator<T>>(
    tester: &mut Tester<B>,
    rng: &mut StdRng,
    data: &[T],
    what: &User<T, O>,
    reference: Op,
) -> Result<(), String> {
    let staged = B::stage(data, rng.gen_range(0..4), T::default());
    let input = B::slice(&staged);
    let r = &mut tester.reducer;
    let ours = r.reduce(input, what).map_err(|e| format!("whole: {e}"))?;
    let theirs = r
        .reduce(input, reference)
        .map_err(|e| format!("whole ({reference}): {e}"))?;
    if TestElement::to_bits(ours) != TestElement::to_bits(theirs) {
        return Err(format!("whole: {ours:?} where {reference} gives {theirs:?}"));
    }
    for Place {
        name,
        offsets,
        axes,
        rows,
    } in places(rng, data.len())
    {
        let offsets_staged = B::stage(&offsets, 0, 0u64);
        let over = |offsets_slice| match (&axes, rows) {
            (Some((layout, axes)), _) => Over::Axes(layout, axes),
            (None, Some((rows, len))) => Over::Rows { rows, len },
            (None, None) if name == "segments" => Over::Segments(offsets_slice),
            _ => Over::Whole,
        };
        let ours = r
            .reduce_over(input, what, over(B::slice(&offsets_staged)))
            .map_err(|e| format!("{name}: {e}"))?;
        let theirs = r
            .reduce_over(input, reference, over(B::slice(&offsets_staged)))
            .map_err(|e| format!("{name} ({reference}): {e}"))?;
        let (ours, theirs) = (r.host(&ours.values), r.host(&theirs.values));
        if ours.len() != theirs.len() {
            return Err(format!(
                "{name}: {} results where {reference} gives {}",
                ours.len(),
                theirs.len()
            ));
        }
        if let Some(i) = (0..ours.len()).find(|&i| TestElement::to_bits(ours[i]) != TestElement::to_bits(theirs[i])) {
            return Err(format!(
                "{name}: result {i} is {:?} where {reference} gives {:?}",
                ours[i], theirs[i]
            ));
        }
    }
    Ok(())
}

fn user_ops_match_the_built_ins<T: TestElement + Scalar>(lowest: T) {
    let test = format!("user_ops_match_the_built_ins_{}", std::any::type_name::<T>());
    let mut rng = rng(&test);
    let (sum, max, squares) = (
        User::new(Sum).unwrap(),
        User::new(Max(lowest)).unwrap(),
        User::new(SumOfSquares).unwrap(),
    );
    for_each_backend!(&test, |tester| {
        for n in [1, 5, 1000, tester.size(100_000, 20_000), tester.size(1 << 22, 40_000)] {
            let n = n / 8 * 8 + if n < 8 { n } else { 0 };
            let data: Vec<T> = random_vec(&mut rng, Op::Sum, n);
            same_bits(&mut tester, &mut rng, &data, &sum, Op::Sum)
                .unwrap_or_else(|e| panic!("{} {n} × {}: sum by a user operator: {e}", tester.name(), T::NAME));
            same_bits(&mut tester, &mut rng, &data, &squares, Op::SumOfSquares).unwrap_or_else(|e| {
                panic!(
                    "{} {n} × {}: sum of squares by a user operator: {e}",
                    tester.name(),
                    T::NAME
                )
            });
            let data: Vec<T> = random_vec(&mut rng, Op::Max, n);
            same_bits(&mut tester, &mut rng, &data, &max, Op::Max)
                .unwrap_or_else(|e| panic!("{} {n} × {}: max by a user operator: {e}", tester.name(), T::NAME));
        }
    });
}

#[test]
fn user_ops_match_the_built_ins_f32() {
    user_ops_match_the_built_ins::<f32>(f32::NEG_INFINITY);
}

#[test]
fn user_ops_match_the_built_ins_f64() {
    user_ops_match_the_built_ins::<f64>(f64::NEG_INFINITY);
}

#[test]
fn user_ops_match_the_built_ins_i32() {
    user_ops_match_the_built_ins::<i32>(i32::MIN);
}

#[test]
fn user_ops_match_the_built_ins_u64() {
    user_ops_match_the_built_ins::<u64>(u64::MIN);
}

/// An operator with no built-in twin, exact: against the CPU fold of the
/// same operator, over the whole input and rows; empty parts give its identity.
#[test]
fn signed_abs_max_is_exact_and_empty_parts_give_the_identity() {
    let test = "signed_abs_max_is_exact_and_empty_parts_give_the_identity";
    let mut rng = rng(test);
    let what = User::new(SignedAbsMax).unwrap();
    for_each_backend!(test, |tester| {
        signed_abs_max_on(&mut tester, &mut rng, &what);
    });
}

fn signed_abs_max_on<B: TestBackend>(tester: &mut Tester<B>, rng: &mut StdRng, what: &User<i64, SignedAbsMax>) {
    let n = tester.size(300_000, 30_000) / 100 * 100;
    // Distinct magnitudes, random signs: the result does not depend on the order.
    let mut data: Vec<i64> = (1..=n as i64).map(|m| if rng.gen() { m } else { -m }).collect();
    data.shuffle(rng);
    let staged = B::stage(&data, 1, 0i64);
    let name = tester.name();
    let r = &mut tester.reducer;
    let whole = r.reduce(B::slice(&staged), what).unwrap();
    assert_eq!(whole, what.fold(&data), "{name}: whole");
    let rows = r
        .reduce_over(
            B::slice(&staged),
            what,
            Over::Rows {
                rows: n / 100,
                len: 100,
            },
        )
        .unwrap();
    let expected: Vec<i64> = data.chunks(100).map(|row| what.fold(row)).collect();
    assert_eq!(r.host(&rows.values), expected, "{name}: rows");
    let empty = B::stage(&[] as &[i64], 0, 0i64);
    assert_eq!(r.reduce(B::slice(&empty), what).unwrap(), 0, "{name}: empty input");
    let rows = r
        .reduce_over(B::slice(&empty), what, Over::Rows { rows: 3, len: 0 })
        .unwrap();
    assert_eq!(r.host(&rows.values), vec![0; 3], "{name}: rows of 0");
}

/// An operator that is neither associative nor commutative gives a
/// result of the kernels' tree, the same bits on every run.
#[test]
fn a_non_associative_operator_is_deterministic() {
    let test = "a_non_associative_operator_is_deterministic";
    let mut rng = rng(test);
    let what = User::new(Skewed).unwrap();
    for_each_backend!(test, |tester| {
        let n = tester.size(1 << 20, 20_000);
        let data: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        deterministic_on(&mut tester, &data, &what);
    });
}

fn deterministic_on<B: TestBackend>(tester: &mut Tester<B>, data: &[f32], what: &User<f32, Skewed>) {
    let staged = B::stage(data, 0, 0.0f32);
    let first = tester.reducer.reduce(B::slice(&staged), what).unwrap();
    for _ in 0..3 {
        let again = tester.reducer.reduce(B::slice(&staged), what).unwrap();
        assert_eq!(again.to_bits(), first.to_bits(), "{}", tester.name());
    }
}

/// On the GPU, an operator that is neither associative nor commutative
/// gives the emulator's bits under the same launch shape: the GPU code
/// computes exactly what the operator computes on the CPU, argument order
/// included, in the same tree. (Small inputs, whose grid is below every
/// kernel's cap, so the built-in sum's shape is the user kernel's too.)
#[test]
fn a_non_commutative_operator_gives_the_emulators_bits_on_the_gpu() {
    let test = "a_non_commutative_operator_gives_the_emulators_bits_on_the_gpu";
    let Some(mut gpu) = Tester::<reduce::Cuda>::new(test) else {
        return;
    };
    let mut rng = rng(test);
    let what = User::new(Skewed).unwrap();
    for n in [1usize, 31, 1000, 4099, 40_000] {
        let offset = rng.gen_range(0..4);
        let data: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let staged = <reduce::Cuda as TestBackend>::stage(&data, offset, 0.0f32);
        let on_gpu = gpu
            .reducer
            .reduce(<reduce::Cuda as TestBackend>::slice(&staged), &what)
            .unwrap();
        let shape = gpu.reducer.launch_shape::<f32>(Op::Sum, n).unwrap();
        let policy = reduce::Policy::new(shape.threads_per_block).unwrap();
        let mut emulator = reduce::emulated::Emulator::with_shape(policy, shape.blocks).unwrap();
        let staged = <reduce::Emulated as TestBackend>::stage(&data, offset, 0.0f32);
        let emulated = emulator
            .reduce(<reduce::Emulated as TestBackend>::slice(&staged), &what)
            .unwrap();
        assert_eq!(
            on_gpu.to_bits(),
            emulated.to_bits(),
            "n = {n}, offset {offset}, {shape:?}: GPU {on_gpu:e}, emulator {emulated:e}"
        );
    }
}

/// Σ (a - b)² of two inputs (`map_pair`).
#[derive(Clone, Copy, Debug)]
struct SquaredDistance;
impl<T: Scalar + TestElement> Operator<T> for SquaredDistance {
    fn identity(&self) -> T {
        T::default()
    }
    fn combine<V: Value<T>>(&self, a: V, b: V) -> V {
        a + b
    }
    fn map_pair<V: Value<T>>(&self, a: V, b: V) -> V {
        (a - b) * (a - b)
    }
}

/// Two inputs: a user sum over the default `map_pair` (the product) gives
/// `dot`'s bits (the same kernel body and tree), and the squared distance
/// of integer-valued data its exact value; lengths that differ are refused.
#[test]
fn user_operators_over_two_inputs() {
    let test = "user_operators_over_two_inputs";
    let mut rng = rng(test);
    let (sum, distance) = (User::new(Sum).unwrap(), User::<f64, _>::new(SquaredDistance).unwrap());
    for_each_backend!(test, |tester| {
        for n in [0, 1, 1000, tester.size(1 << 22, 30_000)] {
            let a: Vec<f32> = (0..n).map(|_| rng.gen_range(-100..100) as f32).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.gen_range(-100..100) as f32).collect();
            two_inputs_on(&mut tester, &mut rng, &a, &b, &sum, &distance);
        }
    });
}

fn two_inputs_on<B: TestBackend>(
    tester: &mut Tester<B>,
    rng: &mut StdRng,
    a: &[f32],
    b: &[f32],
    sum: &User<f32, Sum>,
    distance: &User<f64, SquaredDistance>,
) {
    let name = tester.name();
    let (sa, sb) = (
        B::stage(a, rng.gen_range(0..4), f32::NAN),
        B::stage(b, rng.gen_range(0..4), f32::NAN),
    );
    let r = &mut tester.reducer;
    let (a_slice, b_slice) = (B::slice(&sa), B::slice(&sb));
    let ours = r.reduce_pair(a_slice, b_slice, sum).unwrap();
    let dot = r.dot(a_slice, b_slice).unwrap();
    assert_eq!(
        ours.to_bits(),
        dot.to_bits(),
        "{name} {}: {ours} where dot gives {dot}",
        a.len()
    );
    // In f64 every partial sum is an integer below 2^53: exact in any order.
    let (a, b): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|&x| f64::from(x)).collect(),
        b.iter().map(|&x| f64::from(x)).collect(),
    );
    let expected: f64 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
    let (sa, sb) = (
        B::stage(&a, rng.gen_range(0..4), f64::NAN),
        B::stage(&b, rng.gen_range(0..4), f64::NAN),
    );
    let (a_slice, b_slice) = (B::slice(&sa), B::slice(&sb));
    let got = r.reduce_pair(a_slice, b_slice, distance).unwrap();
    assert_eq!(got, expected, "{name} {}: squared distance", a.len());
    assert_eq!(got, distance.fold_pairs(&a, &b), "{name}: the CPU fold");
    if !a.is_empty() {
        let short = B::stage(&b[1..], 0, f64::NAN);
        let refused = r.reduce_pair(a_slice, B::slice(&short), distance);
        assert!(
            matches!(refused, Err(Error::LengthMismatch { .. })),
            "{name}: {refused:?}"
        );
    }
}
