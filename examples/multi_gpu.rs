//! One array sharded over several GPUs — 4 GiB of `f32` on each by default —
//! summed as a whole with `reduce::multi::Group`, on 1, 2, 4, ... GPUs up to
//! every GPU of the machine: time, aggregate bandwidth and scaling efficiency.
//!
//! ```sh
//! cargo run --release --example multi_gpu [GiB per GPU] [timed runs]
//! ```
//!
//! Every GPU holds the same random values (made once on the host), so the
//! expected sum of k shards is k times the shard's sum, computed on the CPU
//! in `f64`; each result is checked against it.
//!
//! Timing: the host's clock around `Group::reduce`, which returns the result
//! to the host, so a time includes launching on every GPU, the NCCL exchange
//! and the copy back; the median of the timed runs after 3 untimed ones. The
//! single-GPU `Reducer::reduce` of one shard is timed the same way, as the
//! baseline. Efficiency at k GPUs is the aggregate bandwidth over k times the
//! baseline's (each GPU reads the same bytes, so perfect scaling keeps the
//! time at the baseline's), and, apart from the library's multi-GPU overhead,
//! over k times a group of one GPU's. The time `Group::new` took (NCCL's
//! initialisation) is printed too.
//!
//! A second table times the reproducible reductions the same way on the
//! same shards: `ExactSum` (one collective of exact states), `ExactVar`
//! and `ExactLogSumExp` (two collectives each, with the host between
//! them), on one GPU (`Reducer::reduce`) and on each group, and `ExactDot`
//! of each shard with a copy of it on the same GPU (`reduce_pair`: the
//! pairs' exact states, one collective); a group of one must give the
//! single GPU's bits.

use cust::context::Context;
use cust::device::Device;
use cust::memory::{CopyDestination, DeviceBuffer};
use reduce::multi::{Combine, Group, Shard};
use reduce::{ExactDot, ExactLogSumExp, ExactSum, ExactVar, Op, Reducer, Reduction};
use std::time::Instant;

type BoxError = Box<dyn std::error::Error>;

/// `count` pseudo-random `f32` in [0, 1), from a xorshift generator (fast
/// enough for a billion values).
fn random_values(count: usize, mut state: u64) -> Vec<f32> {
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// The median of `runs` timed calls of `call` after 3 untimed ones, in seconds.
fn median_seconds(runs: usize, mut call: impl FnMut() -> Result<(), BoxError>) -> Result<f64, BoxError> {
    for _ in 0..3 {
        call()?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        call()?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let gib: f64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(4.0);
    let runs: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(20);
    let (major, minor, patch) = reduce::multi::nccl_version()?;
    cust::init(cust::CudaFlags::empty())?;
    let devices = Device::num_devices()?;
    println!(
        "NCCL {major}.{minor}.{patch}; {devices} GPU(s): {}",
        Device::get_device(0)?.name()?
    );

    let count = (gib * (1u64 << 30) as f64) as usize / std::mem::size_of::<f32>();
    let host = random_values(count, 0x9E37_79B9_7F4A_7C15);
    let shard_sum: f64 = host.iter().map(|&x| x as f64).sum();
    // One shard per GPU, in that GPU's primary context (which `Group` uses).
    let mut shards = Vec::new();
    let mut contexts = Vec::new();
    for ordinal in 0..devices {
        let context = Context::new(Device::get_device(ordinal)?)?;
        shards.push(DeviceBuffer::from_slice(&host)?);
        contexts.push(context);
    }
    drop(host);
    let bytes = (count * std::mem::size_of::<f32>()) as f64;

    cust::context::CurrentContext::set_current(&contexts[0])?;
    let mut reducer = Reducer::new()?;
    let single = median_seconds(runs, || {
        let got: f32 = reducer.reduce(&shards[0], Op::Sum)?;
        check(got, shard_sum)
    })?;
    println!("{gib} GiB ({count} f32) per GPU; {runs} timed runs; median of the host's clock");
    println!(
        "single GPU, Reducer::reduce: {:.3} ms, {:.3} TB/s\n",
        single * 1e3,
        bytes / single / 1e12
    );
    println!("| GPUs | data | median time | aggregate bandwidth | efficiency vs k × single GPU | vs k × group of 1 | Group::new |");
    println!("|---|---|---|---|---|---|---|");
    let mut one_gpu = None;
    let mut groups = Vec::new();
    let mut k = 1;
    while k <= devices {
        let ordinals: Vec<u32> = (0..k).collect();
        let start = Instant::now();
        let mut group = Group::new(&ordinals)?;
        let setup = start.elapsed().as_secs_f64();
        let views: Vec<Shard<'_, f32>> = (0..k as usize).map(|m| Shard::new(m, &shards[m])).collect();
        let time = median_seconds(runs, || {
            let got = group.reduce(&views, Op::Sum)?;
            check(got, shard_sum * k as f64)
        })?;
        let reference = *one_gpu.get_or_insert(time);
        println!(
            "| {k} | {} GiB | {:.3} ms | {:.2} TB/s | {:.1}% | {:.1}% | {:.0} ms |",
            gib * k as f64,
            time * 1e3,
            bytes * k as f64 / time / 1e12,
            100.0 * single / time,
            100.0 * reference / time,
            setup * 1e3
        );
        drop(views);
        groups.push((k as usize, group));
        k = if k * 2 > devices && k < devices { devices } else { k * 2 };
    }

    let sizes: Vec<String> = groups.iter().map(|(k, _)| format!("{k} GPU(s)")).collect();
    println!("\n| reproducible | one GPU | {} |", sizes.join(" | "));
    println!("|---|---|{}", "---|".repeat(groups.len()));
    exact_row("ExactSum", ExactSum, &mut reducer, &mut groups, &shards, runs)?;
    exact_row(
        "ExactVar (sample)",
        ExactVar::new(1.0)?,
        &mut reducer,
        &mut groups,
        &shards,
        runs,
    )?;
    exact_row(
        "ExactLogSumExp",
        ExactLogSumExp,
        &mut reducer,
        &mut groups,
        &shards,
        runs,
    )?;
    // A second vector on every GPU, a copy of its shard (so the dot reads
    // twice the bytes of the rows above).
    let mut copies = Vec::new();
    for (ordinal, context) in contexts.iter().enumerate() {
        cust::context::CurrentContext::set_current(context)?;
        let mut copy = DeviceBuffer::<f32>::zeroed(count)?;
        copy.copy_from(&shards[ordinal])?;
        copies.push(copy);
    }
    cust::context::CurrentContext::set_current(&contexts[0])?;
    exact_dot_row(&mut reducer, &mut groups, &shards, &copies, runs)?;
    Ok(())
}

/// The table's `ExactDot` row: each shard with its copy, on one GPU
/// (`Reducer::reduce_pair`), then on each group of `k` (`reduce_pair` of
/// the first `k` pairs), in ms; a group of one must give the single GPU's
/// bits.
fn exact_dot_row(
    reducer: &mut Reducer,
    groups: &mut [(usize, Group)],
    shards: &[DeviceBuffer<f32>],
    copies: &[DeviceBuffer<f32>],
    runs: usize,
) -> Result<(), BoxError> {
    let pair = |reducer: &mut Reducer| reducer.reduce_pair(&shards[0], &copies[0], ExactDot);
    let single_value = pair(reducer)?;
    let single = median_seconds(runs, || pair(reducer).map(drop).map_err(Into::into))?;
    let mut cells = Vec::new();
    for (k, group) in groups.iter_mut() {
        let a: Vec<Shard<'_, f32>> = (0..*k).map(|m| Shard::new(m, &shards[m])).collect();
        let b: Vec<Shard<'_, f32>> = (0..*k).map(|m| Shard::new(m, &copies[m])).collect();
        let value = group.reduce_pair(&a, &b, ExactDot)?;
        if *k == 1 && value.to_bits() != single_value.to_bits() {
            return Err(format!("ExactDot: a group of one gives {value}, one GPU {single_value}").into());
        }
        let time = median_seconds(runs, || {
            group.reduce_pair(&a, &b, ExactDot).map(drop).map_err(Into::into)
        })?;
        cells.push(format!("{:.3} ms", time * 1e3));
    }
    println!("| ExactDot (pairs) | {:.3} ms | {} |", single * 1e3, cells.join(" | "));
    Ok(())
}

/// One row of the reproducible reductions' table: `what` over one shard on
/// one GPU, then over the first `k` shards on each group of `k`, in ms; a
/// group of one must give the single GPU's bits.
fn exact_row<W>(
    name: &str,
    what: W,
    reducer: &mut Reducer,
    groups: &mut [(usize, Group)],
    shards: &[DeviceBuffer<f32>],
    runs: usize,
) -> Result<(), BoxError>
where
    W: Combine<f32, Output = f32> + Reduction<f32, Value = f32>,
{
    let single_value: f32 = reducer.reduce(&shards[0], what)?;
    let single = median_seconds(runs, || reducer.reduce(&shards[0], what).map(drop).map_err(Into::into))?;
    let mut cells = Vec::new();
    for (k, group) in groups.iter_mut() {
        let views: Vec<Shard<'_, f32>> = (0..*k).map(|m| Shard::new(m, &shards[m])).collect();
        let value = group.reduce(&views, what)?;
        if *k == 1 && value.to_bits() != single_value.to_bits() {
            return Err(format!("{name}: a group of one gives {value}, one GPU {single_value}").into());
        }
        let time = median_seconds(runs, || group.reduce(&views, what).map(drop).map_err(Into::into))?;
        cells.push(format!("{:.3} ms", time * 1e3));
    }
    println!("| {name} | {:.3} ms | {} |", single * 1e3, cells.join(" | "));
    Ok(())
}

/// The sum within 0.1% of the expected one: a shard left out or counted
/// twice is off by at least 1/k, while `f32` accumulation stays far inside
/// (each thread adds at most a few thousand values in sequence).
fn check(got: f32, expected: f64) -> Result<(), BoxError> {
    if (got as f64 - expected).abs() > 1e-3 * expected {
        return Err(format!("sum is {got}, expected {expected} within 0.1%").into());
    }
    Ok(())
}
