//! `reduce::multi`: data sharded over the GPUs of this machine, combined
//! through NCCL. Without a GPU or without NCCL only the host-side checks run
//! (the error for a missing NCCL, the unique id's text form); set
//! `REDUCE_TEST_REQUIRE_NCCL=1` to make a missing NCCL fail instead of skip.

#[macro_use]
mod common;
use common::*;
use cust::device::Device;
use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer, DeviceSlice};
use rand::rngs::StdRng;
use rand::Rng;
use reduce::multi::{Combine, Communicator, Group, Shard, UniqueId};
use reduce::{
    Error, ExactDot, ExactLogSumExp, ExactMean, ExactMeanVar, ExactNanSum, ExactStd, ExactSum, ExactSumOfSquares,
    ExactVar, Op, Reduction,
};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The group of every GPU, shared by the tests one at a time (creating one
/// costs NCCL's initialisation); `None`, after saying why, without a GPU or NCCL.
fn all_gpus(test: &str) -> Option<MutexGuard<'static, Group>> {
    gpu(test)?;
    if let Err(e) = reduce::multi::nccl_version() {
        assert!(
            std::env::var("REDUCE_TEST_REQUIRE_NCCL").is_err(),
            "REDUCE_TEST_REQUIRE_NCCL is set but NCCL is not available: {e}"
        );
        skipped(test, &format!("on the GPUs: {e}"));
        return None;
    }
    static GROUP: OnceLock<Mutex<Group>> = OnceLock::new();
    let group = GROUP.get_or_init(|| Mutex::new(Group::all_devices().expect("a group of every GPU")));
    // A test that failed while holding the lock leaves a usable group.
    Some(group.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// `data` split at random points into shards placed on random members,
/// each inside a buffer with poison before and after it, uploaded.
struct Sharded<T: TestElement> {
    /// The buffers, which the slices point into.
    _buffers: Vec<DeviceBuffer<T>>,
    /// `(member, the shard's elements)` per shard, in data order.
    slices: Vec<(usize, DeviceSlice<T>)>,
}

impl<T: TestElement> Sharded<T> {
    fn new(group: &Group, rng: &mut StdRng, data: &[T], shard_count: usize, op: Op) -> Self {
        Self::on_members(group, rng, data, shard_count, op, group.world_size())
    }

    /// As [`Sharded::new`], the shards on members `0..members` only.
    fn on_members(group: &Group, rng: &mut StdRng, data: &[T], shard_count: usize, op: Op, members: usize) -> Self {
        let mut cuts: Vec<usize> = (1..shard_count).map(|_| rng.gen_range(0..=data.len())).collect();
        cuts.sort_unstable();
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cuts)
            .chain(std::iter::once(data.len()))
            .collect();
        let (mut buffers, mut slices) = (Vec::new(), Vec::new());
        for w in bounds.windows(2) {
            let member = rng.gen_range(0..members);
            let offset = rng.gen_range(0..8);
            let mut staged = vec![T::poison_for(op); offset + (w[1] - w[0]) + 4];
            staged[offset..offset + w[1] - w[0]].copy_from_slice(&data[w[0]..w[1]]);
            group.make_current(member).expect("make a member current");
            let buffer = DeviceBuffer::from_slice(&staged).expect("upload a shard");
            slices.push((member, buffer.index(offset..offset + w[1] - w[0])));
            buffers.push(buffer);
        }
        Sharded {
            _buffers: buffers,
            slices,
        }
    }

    fn views(&self) -> Vec<Shard<'_, T>> {
        self.slices
            .iter()
            .map(|(member, slice)| Shard::new(*member, slice))
            .collect()
    }
}

/// Checks `op` over `data`, sharded at random across the group's GPUs,
/// three ways: `Group::reduce` against the CPU reference; `all_reduce_into`,
/// whose output on every GPU must equal it bitwise; and the single-GPU
/// reduction of the whole input, which it must equal bitwise where the op is
/// exact (integers, max/min and their NaN-ignoring forms).
fn check_sharded<T: TestElement>(group: &mut Group, rng: &mut StdRng, data: &[T], op: Op) -> Result<(), String> {
    let shard_count = rng.gen_range(1..=2 * group.world_size() + 2);
    let sharded = Sharded::new(group, rng, data, shard_count, op);
    let layout: Vec<(usize, usize)> = sharded.slices.iter().map(|(m, s)| (*m, s.len())).collect();
    let context =
        |e: &dyn std::fmt::Display| format!("{op} of {} over shards (member, length) {layout:?}: {e}", data.len());
    let views = sharded.views();

    let got = group.reduce(&views, op).map_err(|e| context(&e))?;
    T::check(got, data, op).map_err(|e| context(&e))?;

    let mut outs = (0..group.world_size())
        .map(|member| {
            group.make_current(member)?;
            DeviceBox::new(&T::poison()).map_err(Error::from)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| context(&e))?;
    group.all_reduce_into(&views, op, &mut outs).map_err(|e| context(&e))?;
    group.synchronize().map_err(|e| context(&e))?;
    for (member, out) in outs.iter().enumerate() {
        group.make_current(member).map_err(|e| context(&e))?;
        let mut on_member = T::poison();
        out.copy_to(&mut on_member).map_err(|e| context(&e))?;
        if on_member.to_bits() != got.to_bits() {
            return Err(context(&format!(
                "all_reduce_into left {on_member:?} on member {member}, reduce gave {got:?}"
            )));
        }
    }

    let exact = !matches!(T::TYPE, reduce::ElementType::F32 | reduce::ElementType::F64)
        || matches!(op, Op::Max | Op::Min | Op::NanMax | Op::NanMin | Op::MaxAbs);
    if exact && !data.is_empty() {
        group.make_current(0).map_err(|e| context(&e))?;
        let whole = DeviceBuffer::from_slice(data).map_err(|e| context(&e))?;
        let single = reduce::reduce(&whole, op).map_err(|e| context(&e))?;
        if !(single == got || single.is_nan() && got.is_nan()) {
            return Err(context(&format!("one GPU gives {single:?}, the group {got:?}")));
        }
    }
    Ok(())
}

/// Random inputs for every op of `T`: lengths from empty to a few million,
/// with NaN, infinities and signed zeros sprinkled into some of them.
fn all_ops_sharded<T: TestElement>(test: &str) {
    let Some(mut group) = all_gpus(test) else { return };
    let mut rng = rng(test);
    let mut failures = Vec::new();
    for op in ops_for::<T>() {
        for case in 0..12 {
            let n = match case {
                0 => 0,
                1..=4 => rng.gen_range(1..100),
                5..=9 => rng.gen_range(100..300_000),
                _ => rng.gen_range(1_000_000..5_000_000),
            };
            if n == 0 && !op.defined_on_empty() {
                continue;
            }
            let mut data = random_vec::<T>(&mut rng, op, n);
            if case % 3 == 2 {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..n);
                    data[at] = T::special(&mut rng, op);
                }
            }
            if let Err(e) = check_sharded(&mut group, &mut rng, &data, op) {
                failures.push(e);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

macro_rules! all_ops_sharded_tests {
    ($($name:ident: $t:ty;)*) => {$(
        #[test]
        fn $name() {
            all_ops_sharded::<$t>(stringify!($name));
        }
    )*};
}

all_ops_sharded_tests! {
    all_ops_i32_sharded_across_gpus: i32;
    all_ops_u32_sharded_across_gpus: u32;
    all_ops_i64_sharded_across_gpus: i64;
    all_ops_u64_sharded_across_gpus: u64;
    all_ops_f32_sharded_across_gpus: f32;
    all_ops_f64_sharded_across_gpus: f64;
}

/// Values for the exact sum's tests, of kind `kind`: typical (the kernel's
/// fast path), over a wide range of exponents (its exact pass), or with
/// specials and huge cancelling pairs.
fn exact_sum_values(rng: &mut StdRng, kind: usize, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let unit: f64 = rng.gen_range(-1.0..1.0);
            match kind {
                0 => unit,
                1 => unit * 2f64.powi(rng.gen_range(-140..120)),
                _ => [unit, 1e30, -1e30, -0.0, unit * 1e-20][rng.gen_range(0..5)],
            }
        })
        .collect()
}

/// One poisoned output per member, on its GPU, for `all_reduce_into`.
fn poisoned_outs<T: TestElement>(group: &Group) -> Vec<DeviceBox<T>> {
    (0..group.world_size())
        .map(|member| {
            group.make_current(member).unwrap();
            DeviceBox::new(&T::poison()).unwrap()
        })
        .collect()
}

/// The values of `outs`, one per member.
fn values_on_members<T: TestElement>(group: &Group, outs: &[DeviceBox<T>]) -> Vec<T> {
    outs.iter()
        .enumerate()
        .map(|(member, out)| {
            group.make_current(member).unwrap();
            out.as_host_value().unwrap()
        })
        .collect()
}

/// Case `case`'s values for the exact reductions across GPUs: empty to a
/// few million, of `exact_sum_values`' kinds, an infinity in one case, and
/// with `nans` NaNs (either sign) at random places, a whole shard's worth
/// at times.
fn sharded_case_values<T>(rng: &mut StdRng, case: usize, of: fn(f64) -> T, nans: bool) -> Vec<T> {
    let n = match case % 6 {
        0 => rng.gen_range(0..10),
        1 | 2 => rng.gen_range(10..100_000),
        _ => rng.gen_range(100_000..3_000_000),
    };
    let mut data: Vec<T> = exact_sum_values(rng, case % 3, n).into_iter().map(of).collect();
    if case == 5 && n > 0 {
        data[rng.gen_range(0..n)] = of(f64::INFINITY);
    }
    if nans {
        let every = [2, 7, 1000][case % 3];
        for x in data.iter_mut() {
            if rng.gen_range(0..every) == 0 {
                *x = of(if rng.gen() { f64::NAN } else { -f64::NAN });
            }
        }
    }
    data
}

/// [`ExactSum`] (or [`ExactNanSum`], on data with NaNs, or
/// [`ExactSumOfSquares`], or a reduction in passes: [`ExactMean`],
/// [`ExactVar`], [`ExactStd`], [`ExactLogSumExp`]) across GPUs: the
/// same bits as its `fold` and as one GPU's sum of the whole, whatever the
/// cuts, however many GPUs the shards are on (all on member 0, or
/// anywhere), on every member. `nans`: NaNs among the data.
fn exact_sums_sharded<T, W>(test: &str, of: fn(f64) -> T, what: W, fold: fn(&[T]) -> T, nans: bool)
where
    T: TestElement + reduce::FloatElement,
    W: Combine<T, Output = T> + Reduction<T, Value = T>,
{
    let Some(mut group) = all_gpus(test) else { return };
    let mut rng = rng(test);
    let mut failures = Vec::new();
    for case in 0..18 {
        let data = sharded_case_values(&mut rng, case, of, nans);
        let n = data.len();
        let expected = fold(&data);
        let single = if data.is_empty() {
            expected
        } else {
            group.make_current(0).unwrap();
            reduce::reduce(&DeviceBuffer::from_slice(&data).unwrap(), what).unwrap()
        };
        for members in [1, group.world_size()] {
            let shard_count = rng.gen_range(1..=2 * members + 2);
            let sharded = Sharded::on_members(&group, &mut rng, &data, shard_count, Op::Sum, members);
            let layout: Vec<(usize, usize)> = sharded.slices.iter().map(|(m, s)| (*m, s.len())).collect();
            let views = sharded.views();
            let got = group.reduce(&views, what).unwrap();
            let mut outs = poisoned_outs::<T>(&group);
            group.all_reduce_into(&views, what, &mut outs).unwrap();
            let on_members = values_on_members(&group, &outs);
            let bits = |x: T| x.to_bits();
            if bits(got) != bits(expected)
                || bits(single) != bits(expected)
                || on_members.iter().any(|&x| bits(x) != bits(expected))
            {
                failures.push(format!(
                    "{n} values of kind {}, shards (member, length) {layout:?}: fold {expected:?}, one GPU {single:?}, \
                     group {got:?}, all_reduce_into {on_members:?}",
                    case % 3
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn exact_sums_f32_bitwise_over_any_cuts_and_gpus() {
    let test = "exact_sums_f32_bitwise_over_any_cuts_and_gpus";
    exact_sums_sharded(test, |x| x as f32, ExactSum, ExactSum::fold, false);
}

#[test]
fn exact_sums_f64_bitwise_over_any_cuts_and_gpus() {
    let test = "exact_sums_f64_bitwise_over_any_cuts_and_gpus";
    exact_sums_sharded(test, |x| x, ExactSum, ExactSum::fold, false);
}

#[test]
fn exact_nan_sums_bitwise_over_any_cuts_and_gpus() {
    let test = "exact_nan_sums_bitwise_over_any_cuts_and_gpus";
    exact_sums_sharded(test, |x| x as f32, ExactNanSum, ExactNanSum::fold, true);
    exact_sums_sharded(test, |x| x, ExactNanSum, ExactNanSum::fold, true);
}

/// The NaN rules across GPUs: one NaN anywhere makes `max` NaN, `nan_max`
/// skips it, and an all-NaN input gives NaN for both.
#[test]
fn max_f32_nan_on_one_gpu_known_answers() {
    let Some(mut group) = all_gpus("max_f32_nan_on_one_gpu_known_answers") else {
        return;
    };
    let last = group.world_size() - 1;
    let upload = |group: &Group, member: usize, data: &[f32]| {
        group.make_current(member).unwrap();
        DeviceBuffer::from_slice(data).unwrap()
    };
    let (a, b) = (
        upload(&group, 0, &[1.0, -3.0, 7.5]),
        upload(&group, last, &[f32::NAN, 2.0]),
    );
    let shards = [Shard::new(0, &a), Shard::new(last, &b)];
    assert!(group.reduce(&shards, Op::Max).unwrap().is_nan());
    assert!(group.reduce(&shards, Op::Min).unwrap().is_nan());
    assert_eq!(group.reduce(&shards, Op::NanMax).unwrap(), 7.5);
    assert_eq!(group.reduce(&shards, Op::NanMin).unwrap(), -3.0);
    assert_eq!(group.reduce(&shards, Op::NanSum).unwrap(), 7.5);
    let (c, d) = (
        upload(&group, 0, &[f32::NAN]),
        upload(&group, last, &[f32::NAN, f32::NAN]),
    );
    let all_nan = [Shard::new(0, &c), Shard::new(last, &d)];
    assert!(group.reduce(&all_nan, Op::NanMax).unwrap().is_nan());
    assert!(group.reduce(&all_nan, Op::NanMin).unwrap().is_nan());
    // A partial `nan_sum` that is NaN came from inf + -inf: it must survive.
    let (e, f) = (
        upload(&group, 0, &[f32::INFINITY, 1.0]),
        upload(&group, last, &[f32::NEG_INFINITY, f32::NAN]),
    );
    let cancelling = [Shard::new(0, &e), Shard::new(last, &f)];
    assert!(group.reduce(&cancelling, Op::NanSum).unwrap().is_nan());
    assert_eq!(group.reduce(&cancelling, Op::NanMax).unwrap(), f32::INFINITY);
}

/// Empty shards contribute nothing; every shard empty is `Err(Empty)` for
/// the ops without an identity and the identity for the others.
#[test]
fn max_i64_empty_shards() {
    let Some(mut group) = all_gpus("max_i64_empty_shards") else {
        return;
    };
    let last = group.world_size() - 1;
    group.make_current(last).unwrap();
    let values = DeviceBuffer::from_slice(&[i64::MIN, -5]).unwrap();
    group.make_current(0).unwrap();
    let empty = DeviceBuffer::from_slice(&[7i64]).unwrap();
    let nothing = empty.index(..0);
    let shards = [Shard::new(0, &nothing), Shard::new(last, &values)];
    assert_eq!(group.reduce(&shards, Op::Max).unwrap(), -5);
    assert_eq!(group.reduce(&shards, Op::Min).unwrap(), i64::MIN);
    assert_eq!(group.reduce(&shards, Op::Product).unwrap(), i64::MIN.wrapping_mul(-5));
    let all_empty = [Shard::new(0, &nothing), Shard::new(last, &nothing)];
    assert!(matches!(
        group.reduce(&all_empty, Op::Max),
        Err(Error::Empty { op: Op::Max })
    ));
    assert!(matches!(
        group.reduce::<i64, _>(&[], Op::Min),
        Err(Error::Empty { op: Op::Min })
    ));
    assert_eq!(group.reduce(&all_empty, Op::Sum).unwrap(), 0);
    assert_eq!(group.reduce(&all_empty, Op::Product).unwrap(), 1);
    let mut outs: Vec<DeviceBox<i64>> = (0..group.world_size())
        .map(|m| {
            group.make_current(m).unwrap();
            DeviceBox::new(&0).unwrap()
        })
        .collect();
    assert!(matches!(
        group.all_reduce_into(&all_empty, Op::Max, &mut outs),
        Err(Error::Empty { .. })
    ));
}

/// 1 to 4 shards on one GPU, in a group of that GPU alone (NCCL with one
/// rank): NCCL cannot put two ranks on one GPU, so this is how shards that
/// share a GPU are reduced, and a group that lists a GPU twice is refused.
#[test]
fn sum_u64_shards_on_one_gpu() {
    let test = "sum_u64_shards_on_one_gpu";
    let Some(_all) = all_gpus(test) else { return };
    let mut group = Group::new(&[0]).unwrap();
    let mut rng = rng(test);
    for shard_count in 1..=4 {
        for op in [Op::Sum, Op::Max, Op::Min, Op::Product] {
            let n = rng.gen_range(1..200_000);
            let data = random_vec::<u64>(&mut rng, op, n);
            check_sharded(&mut group, &mut rng, &data, op).unwrap_or_else(|e| panic!("{shard_count} shards: {e}"));
        }
    }
    let twice = Group::new(&[0, 0]).unwrap_err();
    assert!(matches!(twice, Error::InvalidGroup(_)), "{twice}");
    assert!(twice.to_string().contains("listed twice"), "{twice}");
}

/// Calls that do not fit the group are refused before anything runs.
#[test]
fn sum_f64_invalid_calls() {
    let Some(mut group) = all_gpus("sum_f64_invalid_calls") else {
        return;
    };
    let size = group.world_size();
    group.make_current(0).unwrap();
    let data = DeviceBuffer::from_slice(&[1.0f64, 2.0]).unwrap();
    let beyond = [Shard::new(size, &data)];
    assert!(matches!(group.reduce(&beyond, Op::Sum), Err(Error::InvalidGroup(_))));
    let on_zero = [Shard::new(0, &data)];
    let mut too_few: Vec<DeviceBox<f64>> = Vec::new();
    assert!(matches!(
        group.all_reduce_into(&on_zero, Op::Sum, &mut too_few),
        Err(Error::InvalidGroup(_))
    ));
    assert!(matches!(group.reduce(&on_zero, Op::MaxAbs), Ok(2.0)));
    let ints = DeviceBuffer::from_slice(&[1i32]).unwrap();
    assert!(matches!(
        group.reduce(&[Shard::new(0, &ints)], Op::MaxAbs),
        Err(Error::UnsupportedOp { .. })
    ));
    assert!(matches!(group.make_current(size), Err(Error::InvalidGroup(_))));
    if size > 1 {
        // Member 1's buffer called member 0's shard, and member 0's output
        // given for member 1: refused before any kernel could fault on them.
        group.make_current(1).unwrap();
        let elsewhere = DeviceBuffer::from_slice(&[1.0f64, 2.0]).unwrap();
        let mislabelled = [Shard::new(0, &elsewhere)];
        let error = group.reduce(&mislabelled, Op::Sum).unwrap_err();
        assert!(error.to_string().contains("own GPU's memory"), "{error}");
        let mut swapped: Vec<DeviceBox<f64>> = (0..size)
            .map(|m| {
                group.make_current((m + 1) % size).unwrap();
                DeviceBox::new(&0.0).unwrap()
            })
            .collect();
        assert!(matches!(
            group.all_reduce_into(&on_zero, Op::Sum, &mut swapped),
            Err(Error::InvalidGroup(_))
        ));
        assert_eq!(group.reduce(&on_zero, Op::Sum).unwrap(), 3.0, "the group still works");
    }
    let count = Device::num_devices().unwrap();
    assert!(matches!(Group::new(&[count]), Err(Error::InvalidGroup(_))));
    assert!(matches!(Group::new(&[]), Err(Error::InvalidGroup(_))));
}

/// The multi-process form, one rank per thread and GPU (NCCL allows a
/// thread per rank too): every rank returns the same result, which matches
/// the CPU reference; all-empty max is `Err(Empty)` on every rank.
#[test]
fn sum_i64_communicator_ranks() {
    let test = "sum_i64_communicator_ranks";
    let Some(all) = all_gpus(test) else { return };
    let world = all.world_size() as u32;
    let mut rng = rng(test);
    let shards: Vec<Vec<i64>> = (0..world)
        .map(|_| {
            let n = rng.gen_range(0..300_000);
            random_vec::<i64>(&mut rng, Op::Sum, n)
        })
        .collect();
    let id = UniqueId::new().unwrap();
    type RankResults = (i64, i64, Result<i64, Error>, u64, u64, [u64; 8]);
    let results: Vec<RankResults> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..world)
            .map(|rank| {
                let data = &shards[rank as usize];
                scope.spawn(move || {
                    let mut comm = Communicator::new(&id, world, rank, rank).unwrap();
                    assert_eq!((comm.rank(), comm.world_size()), (rank, world));
                    let buffer = DeviceBuffer::from_slice(data).unwrap();
                    let sum = comm.reduce(&[&*buffer], Op::Sum).unwrap();
                    let mut out = DeviceBox::new(&i64::poison()).unwrap();
                    comm.all_reduce_into(&[&*buffer, &*buffer], Op::Max, &mut out).unwrap();
                    comm.stream().synchronize().unwrap();
                    let mut max = 0;
                    out.copy_to(&mut max).unwrap();
                    let empty = comm.reduce(&[&buffer.index(..0)], Op::Max);
                    // The exact sum of every rank's values as floats, two ways.
                    let floats: Vec<f64> = data.iter().map(|&x| x as f64 * 1e-3).collect();
                    let floats = DeviceBuffer::from_slice(&floats).unwrap();
                    let exact = comm
                        .reduce(
                            &[&floats.index(..floats.len() / 3), &floats.index(floats.len() / 3..)],
                            ExactSum,
                        )
                        .unwrap();
                    let mut exact_out = DeviceBox::new(&f64::NAN).unwrap();
                    comm.all_reduce_into(&[&*floats], ExactSum, &mut exact_out).unwrap();
                    let exact_out = exact_out.as_host_value().unwrap();
                    // The reductions in passes, both ways.
                    let halves = [&floats.index(..floats.len() / 2), &floats.index(floats.len() / 2..)];
                    let var = comm.reduce(&halves, ExactVar::new(1.0).unwrap()).unwrap();
                    let (mean, mean_var) = comm.reduce(&halves, ExactMeanVar::new(1.0).unwrap()).unwrap();
                    // The dot of the floats with themselves: as halves, and whole.
                    let dot = comm.reduce_pair(&halves, &halves, ExactDot).unwrap();
                    let mut dot_out = DeviceBox::new(&f64::NAN).unwrap();
                    comm.all_reduce_pair_into(&[&*floats], &[&*floats], ExactDot, &mut dot_out)
                        .unwrap();
                    let lse = comm.reduce(&[&*floats], ExactLogSumExp).unwrap();
                    let mut var_out = DeviceBox::new(&f64::NAN).unwrap();
                    comm.all_reduce_into(&[&*floats], ExactVar::new(1.0).unwrap(), &mut var_out)
                        .unwrap();
                    let mut lse_out = DeviceBox::new(&f64::NAN).unwrap();
                    comm.all_reduce_into(&halves, ExactLogSumExp, &mut lse_out).unwrap();
                    let passes = [
                        var,
                        var_out.as_host_value().unwrap(),
                        lse,
                        lse_out.as_host_value().unwrap(),
                        mean,
                        mean_var,
                        dot,
                        dot_out.as_host_value().unwrap(),
                    ];
                    (
                        sum,
                        max,
                        empty,
                        exact.to_bits(),
                        exact_out.to_bits(),
                        passes.map(f64::to_bits),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all_data: Vec<i64> = shards.concat();
    let expected_sum = all_data.iter().fold(0i64, |a, &b| a.wrapping_add(b));
    let expected_max = all_data.iter().copied().max();
    let floats: Vec<f64> = all_data.iter().map(|&x| x as f64 * 1e-3).collect();
    let expected_exact = ExactSum::fold(&floats).to_bits();
    let (var, lse) = (ExactVar::new(1.0).unwrap().fold(&floats), ExactLogSumExp::fold(&floats));
    let (mean, _) = ExactMeanVar::new(1.0).unwrap().fold(&floats);
    let dot = ExactDot::fold(&floats, &floats).unwrap();
    let expected_passes = [var, var, lse, lse, mean, var, dot, dot].map(f64::to_bits);
    for (rank, (sum, max, empty, exact, exact_out, passes)) in results.into_iter().enumerate() {
        assert_eq!(sum, expected_sum, "rank {rank}");
        assert_eq!((exact, exact_out), (expected_exact, expected_exact), "rank {rank}");
        assert_eq!(
            passes, expected_passes,
            "rank {rank}: var, var into, lse, lse into, ExactMeanVar's mean and variance, dot, dot into"
        );
        if let Some(expected_max) = expected_max {
            assert_eq!(max, expected_max, "rank {rank}");
        }
        assert!(
            matches!(empty, Err(Error::Empty { op: Op::Max })),
            "rank {rank}: {empty:?}"
        );
    }
}

/// Without NCCL every multi-GPU entry point says so, and how to fix it,
/// before touching CUDA (so this runs on machines without a GPU too).
#[test]
fn sum_i32_without_nccl_is_a_clear_error() {
    match reduce::multi::nccl_version() {
        Ok(version) => {
            println!("NCCL {version:?} is available: checking its version only");
            assert!(version >= (2, 13, 0), "{version:?}");
        }
        Err(e) => {
            println!("{e}");
            assert!(matches!(e, Error::NcclUnavailable { .. }), "{e}");
            assert!(e.to_string().contains("LD_LIBRARY_PATH"), "{e}");
            assert!(matches!(Group::new(&[0]), Err(Error::NcclUnavailable { .. })));
            assert!(matches!(UniqueId::new(), Err(Error::NcclUnavailable { .. })));
            let id = UniqueId::from_bytes([1; 128]);
            assert!(matches!(
                Communicator::new(&id, 2, 0, 0),
                Err(Error::NcclUnavailable { .. })
            ));
        }
    }
}

/// A unique id survives its text form (how it travels between processes).
#[test]
fn unique_id_hex_round_trip() {
    let mut rng = rng("unique_id_hex_round_trip");
    let bytes: [u8; 128] = std::array::from_fn(|_| rng.gen());
    let id = UniqueId::from_bytes(bytes);
    let text = id.to_string();
    assert_eq!(text.len(), 256);
    assert_eq!(text.parse::<UniqueId>().unwrap(), id);
    assert_eq!(format!(" {text}\n").parse::<UniqueId>().unwrap(), id);
    assert!(matches!(text[2..].parse::<UniqueId>(), Err(Error::InvalidGroup(_))));
    assert!(matches!(
        format!("zz{}", &text[2..]).parse::<UniqueId>(),
        Err(Error::InvalidGroup(_))
    ));
    assert!(matches!(
        format!("é{}", &text[2..]).parse::<UniqueId>(),
        Err(Error::InvalidGroup(_))
    ));
}

/// A user operator (`&reduce::User`) over shards: `Group::reduce`,
/// `all_reduce_into` and a communicator of one rank give the built-in
/// sum's bits over the same shards (the same kernels and tree), and an
/// exact operator (`i64` signed absmax) the CPU fold's value.
#[test]
fn a_user_operator_over_shards() {
    use reduce::user::{Operator, Value};
    #[derive(Clone, Copy, Debug)]
    struct Sum;
    impl Operator<f32> for Sum {
        fn identity(&self) -> f32 {
            0.0
        }
        fn combine<V: Value<f32>>(&self, a: V, b: V) -> V {
            a + b
        }
    }
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
    let test = "a_user_operator_over_shards";
    let Some(mut group) = all_gpus(test) else { return };
    let mut rng = rng(test);
    let (sum, peak) = (
        reduce::User::new(Sum).unwrap(),
        reduce::User::new(SignedAbsMax).unwrap(),
    );
    for n in [0usize, 1, 1000, 1 << 20] {
        let data: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
        let shard_count = rng.gen_range(1..=2 * group.world_size() + 2);
        let sharded = Sharded::new(&group, &mut rng, &data, shard_count, Op::Sum);
        let views = sharded.views();
        let ours = group.reduce(&views, &sum).unwrap();
        let theirs = group.reduce(&views, Op::Sum).unwrap();
        assert_eq!(ours.to_bits(), theirs.to_bits(), "n = {n}: {ours} against {theirs}");
        let mut outs = (0..group.world_size())
            .map(|member| {
                group.make_current(member).unwrap();
                DeviceBox::new(&f32::NAN).unwrap()
            })
            .collect::<Vec<_>>();
        group.all_reduce_into(&views, &sum, &mut outs).unwrap();
        for (member, out) in outs.iter().enumerate() {
            group.make_current(member).unwrap();
            assert_eq!(
                out.as_host_value().unwrap().to_bits(),
                theirs.to_bits(),
                "member {member}"
            );
        }
        // Distinct magnitudes: the signed absmax does not depend on the order.
        let mut ints: Vec<i64> = (1..=n as i64).map(|m| if rng.gen() { m } else { -m }).collect();
        rand::seq::SliceRandom::shuffle(&mut ints[..], &mut rng);
        let sharded = Sharded::new(&group, &mut rng, &ints, shard_count, Op::Max);
        assert_eq!(
            group.reduce(&sharded.views(), &peak).unwrap(),
            peak.fold(&ints),
            "n = {n}"
        );
    }
}

#[test]
fn exact_sums_of_squares_bitwise_over_any_cuts_and_gpus() {
    let test = "exact_sums_of_squares_bitwise_over_any_cuts_and_gpus";
    exact_sums_sharded(test, |x| x as f32, ExactSumOfSquares, ExactSumOfSquares::fold, false);
    exact_sums_sharded(test, |x| x, ExactSumOfSquares, ExactSumOfSquares::fold, false);
}

/// The reductions in passes (the total count, then a division; a mean,
/// then the deviations from it; a maximum, then the exponentials scaled
/// by it), with NaNs among the data at times.
#[test]
fn exact_means_variances_and_logsumexps_bitwise_over_any_cuts_and_gpus() {
    let test = "exact_means_variances_and_logsumexps_bitwise_over_any_cuts_and_gpus";
    for nans in [false, true] {
        exact_sums_sharded(test, |x| x as f32, ExactMean, ExactMean::fold, nans);
        exact_sums_sharded(test, |x| x, ExactMean, ExactMean::fold, nans);
        let sample = ExactVar::new(1.0).unwrap();
        exact_sums_sharded(
            test,
            |x| x as f32,
            sample,
            |v| ExactVar::new(1.0).unwrap().fold(v),
            nans,
        );
        let population = ExactVar::new(0.0).unwrap();
        exact_sums_sharded(test, |x| x, population, |v| ExactVar::new(0.0).unwrap().fold(v), nans);
        let std = ExactStd::new(1.0).unwrap();
        exact_sums_sharded(test, |x| x as f32, std, |v| ExactStd::new(1.0).unwrap().fold(v), nans);
        exact_sums_sharded(test, |x| x, std, |v| ExactStd::new(1.0).unwrap().fold(v), nans);
        exact_sums_sharded(test, |x| x as f32, ExactLogSumExp, ExactLogSumExp::fold, nans);
        exact_sums_sharded(test, |x| x, ExactLogSumExp, ExactLogSumExp::fold, nans);
    }
}

/// [`ExactMeanVar`] across GPUs: the pair [`Group::reduce`] gives is its
/// fold's and one GPU's, bit for bit, whatever the cuts and GPUs (as
/// `exact_sums_sharded`'s cases; it has no `all_reduce_into`, which leaves
/// one value per GPU).
fn exact_mean_vars_sharded<T>(test: &str, of: fn(f64) -> T, correction: f64, nans: bool)
where
    T: TestElement + reduce::FloatElement,
    ExactMeanVar: Combine<T, Output = (T, T)> + Reduction<T, Value = (T, T)>,
{
    let Some(mut group) = all_gpus(test) else { return };
    let mut rng = rng(test);
    let what = ExactMeanVar::new(correction).unwrap();
    let mut failures = Vec::new();
    for case in 0..18 {
        let data = sharded_case_values(&mut rng, case, of, nans);
        let expected = what.fold(&data);
        let single = if data.is_empty() {
            expected
        } else {
            group.make_current(0).unwrap();
            reduce::reduce(&DeviceBuffer::from_slice(&data).unwrap(), what).unwrap()
        };
        for members in [1, group.world_size()] {
            let shard_count = rng.gen_range(1..=2 * members + 2);
            let sharded = Sharded::on_members(&group, &mut rng, &data, shard_count, Op::Sum, members);
            let layout: Vec<(usize, usize)> = sharded.slices.iter().map(|(m, s)| (*m, s.len())).collect();
            let got = group.reduce(&sharded.views(), what).unwrap();
            let bits = |(mean, variance): (T, T)| (mean.to_bits(), variance.to_bits());
            if bits(got) != bits(expected) || bits(single) != bits(expected) {
                failures.push(format!(
                    "{} values of kind {}, shards (member, length) {layout:?}: fold {expected:?}, one GPU {single:?}, \
                     group {got:?}",
                    data.len(),
                    case % 3
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// [`ExactDot`] across GPUs: [`Group::reduce_pair`] and
/// `all_reduce_pair_into` (on every member) give the bits of
/// [`ExactDot::fold`] and of one GPU's `ExactDot` of the joined vectors,
/// whatever the cuts (random, the same for both vectors) and GPUs, with
/// values of `exact_sum_values`' kinds (wide ranges: the kernels' exact
/// pass), an infinity or NaNs in some cases.
fn exact_dots_sharded<T>(test: &str, of: fn(f64) -> T)
where
    T: TestElement + reduce::FloatElement,
    ExactDot: reduce::PairReduction<T>,
{
    let Some(mut group) = all_gpus(test) else { return };
    let mut rng = rng(test);
    let mut failures = Vec::new();
    for case in 0..18 {
        let a = sharded_case_values(&mut rng, case, of, case % 4 == 3);
        let b: Vec<T> = exact_sum_values(&mut rng, (case + 1) % 3, a.len())
            .into_iter()
            .map(of)
            .collect();
        let expected = ExactDot::fold(&a, &b).unwrap();
        let single = if a.is_empty() {
            expected
        } else {
            group.make_current(0).unwrap();
            let (a, b) = (
                DeviceBuffer::from_slice(&a).unwrap(),
                DeviceBuffer::from_slice(&b).unwrap(),
            );
            reduce::reduce_pair(&a, &b, ExactDot).unwrap()
        };
        for members in [1, group.world_size()] {
            let shard_count = rng.gen_range(1..=2 * members + 2);
            // The same cuts, members and offsets for both vectors.
            let mut twin = rng.clone();
            let sharded_a = Sharded::on_members(&group, &mut rng, &a, shard_count, Op::Sum, members);
            let sharded_b = Sharded::on_members(&group, &mut twin, &b, shard_count, Op::Sum, members);
            let layout: Vec<(usize, usize)> = sharded_a.slices.iter().map(|(m, s)| (*m, s.len())).collect();
            let (views_a, views_b) = (sharded_a.views(), sharded_b.views());
            let got = group.reduce_pair(&views_a, &views_b, ExactDot).unwrap();
            let mut outs = poisoned_outs::<T>(&group);
            group
                .all_reduce_pair_into(&views_a, &views_b, ExactDot, &mut outs)
                .unwrap();
            let on_members = values_on_members(&group, &outs);
            let bits = |x: T| x.to_bits();
            if bits(got) != bits(expected)
                || bits(single) != bits(expected)
                || on_members.iter().any(|&x| bits(x) != bits(expected))
            {
                failures.push(format!(
                    "{} pairs, case {case}, shards (member, length) {layout:?}: fold {expected:?}, one GPU {single:?}, \
                     group {got:?}, all_reduce_pair_into {on_members:?}",
                    a.len()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn exact_dots_bitwise_over_any_cuts_and_gpus() {
    let test = "exact_dots_bitwise_over_any_cuts_and_gpus";
    exact_dots_sharded(test, |x| x as f32);
    exact_dots_sharded(test, |x| x);
}

/// `reduce_pair`'s pairing: `a` and `b` with different shard counts, a
/// pair on two members, a pair of two lengths, a member that does not
/// exist: each its error, before anything runs; no pairs give `+0.0`.
#[test]
fn reduce_pair_checks_its_pairs() {
    let test = "reduce_pair_checks_its_pairs";
    let Some(mut group) = all_gpus(test) else { return };
    group.make_current(0).unwrap();
    let (x, y) = (
        DeviceBuffer::from_slice(&[1.0f32, 2.0]).unwrap(),
        DeviceBuffer::from_slice(&[3.0f32]).unwrap(),
    );
    let (a, b) = ([Shard::new(0, &x)], [Shard::new(0, &x), Shard::new(0, &x)]);
    let counts = group.reduce_pair(&a, &b, ExactDot);
    assert!(matches!(counts, Err(Error::InvalidGroup(_))), "{counts:?}");
    let lengths = group.reduce_pair(&[Shard::new(0, &x)], &[Shard::new(0, &y)], ExactDot);
    assert!(
        matches!(lengths, Err(Error::LengthMismatch { left: 2, right: 1 })),
        "{lengths:?}"
    );
    let nowhere = group.world_size();
    let missing = group.reduce_pair(&[Shard::new(nowhere, &x)], &[Shard::new(nowhere, &x)], ExactDot);
    assert!(matches!(missing, Err(Error::InvalidGroup(_))), "{missing:?}");
    if group.world_size() > 1 {
        // `x` is on GPU 0: named on member 1 too, it is not in that GPU's memory.
        let apart = group.reduce_pair(&[Shard::new(0, &x)], &[Shard::new(1, &x)], ExactDot);
        assert!(matches!(apart, Err(Error::InvalidGroup(_))), "{apart:?}");
        let elsewhere = group.reduce_pair(&[Shard::new(1, &x)], &[Shard::new(1, &x)], ExactDot);
        assert!(matches!(elsewhere, Err(Error::InvalidGroup(_))), "{elsewhere:?}");
    }
    let none: [Shard<'_, f32>; 0] = [];
    assert_eq!(group.reduce_pair(&none, &none, ExactDot).unwrap().to_bits(), 0);
    // The group still works after the errors.
    assert_eq!(
        group
            .reduce_pair(&[Shard::new(0, &x)], &[Shard::new(0, &x)], ExactDot)
            .unwrap(),
        5.0
    );
}

#[test]
fn exact_mean_variances_bitwise_over_any_cuts_and_gpus() {
    let test = "exact_mean_variances_bitwise_over_any_cuts_and_gpus";
    for nans in [false, true] {
        exact_mean_vars_sharded(test, |x| x as f32, 1.0, nans);
        exact_mean_vars_sharded(test, |x| x, 0.0, nans);
    }
}
