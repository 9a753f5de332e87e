//! The multi-process form of `reduce::multi`: one process per GPU, each a
//! rank of an NCCL communicator (`Communicator`), as jobs on a cluster run.
//!
//! ```sh
//! cargo run --release --example multi_process [ranks]   # default: one per GPU
//! ```
//!
//! Run without rank variables, the program is the launcher: it makes the NCCL
//! unique id, starts `ranks` copies of itself with `REDUCE_RANK`,
//! `REDUCE_WORLD_SIZE` and `REDUCE_NCCL_ID` (the id as 256 hex digits) in
//! their environment, and checks that every rank printed the same results,
//! equal to the CPU's. Each rank makes its own shard (1M `i64` and 1M `f64`,
//! from its rank number), then reduces the whole with `Communicator::reduce`
//! and `Communicator::all_reduce_into`, and takes the floats' exact sum,
//! sample variance and logsumexp (`reduce::ExactSum`, `ExactVar`,
//! `ExactLogSumExp`, whose bits must equal their `fold` of every rank's
//! values on the CPU, however many ranks there are).
//!
//! To run the ranks over NCCL's network transport, as ranks on two nodes
//! would talk, set `NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`.
//!
//! Across nodes the ranks are the same program, started by the job launcher
//! (`srun`, `mpirun`) with global rank numbers; rank 0 makes the id and the
//! others receive it out of band, e.g. through a file on a shared file
//! system. NCCL then needs to know which network to use
//! (`NCCL_SOCKET_IFNAME`, and its InfiniBand or other network plugins); the
//! library itself does not change. Only the single-node form has been run.

use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer};
use reduce::multi::{Communicator, UniqueId};
use reduce::{ExactLogSumExp, ExactSum, ExactVar, Op};
use std::process::{Command, Stdio};

type BoxError = Box<dyn std::error::Error>;

const SHARD_LEN: usize = 1 << 20;

/// Rank `rank`'s shard: pseudo-random values from a splitmix64 of the rank
/// and the index, the same in the launcher and in the rank.
fn shard(rank: u32) -> (Vec<i64>, Vec<f64>) {
    let mix = |i: usize| {
        let mut z = ((rank as u64) << 40 | i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let ints = (0..SHARD_LEN).map(|i| mix(i) as i64 >> 4).collect();
    let floats = (0..SHARD_LEN)
        .map(|i| (mix(i) >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
        .collect();
    (ints, floats)
}

fn main() -> Result<(), BoxError> {
    match std::env::var("REDUCE_RANK") {
        Ok(rank) => run_rank(rank.parse()?),
        Err(_) => launch(),
    }
}

/// One rank: reduce every rank's shard and print what it got.
fn run_rank(rank: u32) -> Result<(), BoxError> {
    let world_size: u32 = std::env::var("REDUCE_WORLD_SIZE")?.parse()?;
    let id: UniqueId = std::env::var("REDUCE_NCCL_ID")?.parse()?;
    cust::init(cust::CudaFlags::empty())?;
    let device = rank % cust::device::Device::num_devices()?;
    let mut comm = Communicator::new(&id, world_size, rank, device)?;
    let (ints, floats) = shard(rank);
    let (ints, floats) = (DeviceBuffer::from_slice(&ints)?, DeviceBuffer::from_slice(&floats)?);
    let sum = comm.reduce(&[&ints], Op::Sum)?;
    let max = comm.reduce(&[&ints], Op::Max)?;
    // The all-reduce form: the result stays on this rank's GPU.
    let mut float_sum = DeviceBox::new(&f64::NAN)?;
    comm.all_reduce_into(&[&floats], Op::Sum, &mut float_sum)?;
    comm.stream().synchronize()?;
    let mut float_sum_host = f64::NAN;
    float_sum.copy_to(&mut float_sum_host)?;
    // The exact sum's shards cut unevenly: the cut changes nothing.
    let (low, high) = (
        floats.index(..rank as usize * 1000),
        floats.index(rank as usize * 1000..),
    );
    let exact = comm.reduce(&[&low, &high], ExactSum)?;
    // Two passes each (the mean, the maximum), over the same cut.
    let var = comm.reduce(&[&low, &high], ExactVar::new(1.0)?)?;
    let lse = comm.reduce(&[&low, &high], ExactLogSumExp)?;
    println!(
        "sum={sum} max={max} exact_bits={:#x} var_bits={:#x} lse_bits={:#x} float_sum_bits={:#x}",
        exact.to_bits(),
        var.to_bits(),
        lse.to_bits(),
        float_sum_host.to_bits()
    );
    Ok(())
}

/// The launcher: start the ranks, collect and check their lines.
fn launch() -> Result<(), BoxError> {
    cust::init(cust::CudaFlags::empty())?;
    let default_ranks = cust::device::Device::num_devices()?;
    let world_size: u32 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(default_ranks);
    // The id holds the address where this process (not rank 0's) listens for
    // the ranks to meet, so the launcher stays alive until they are done.
    let id = UniqueId::new()?;
    let ranks = (0..world_size)
        .map(|rank| {
            Command::new(std::env::current_exe()?)
                .env("REDUCE_RANK", rank.to_string())
                .env("REDUCE_WORLD_SIZE", world_size.to_string())
                .env("REDUCE_NCCL_ID", id.to_string())
                .stdout(Stdio::piped())
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut lines = Vec::new();
    for (rank, child) in ranks.into_iter().enumerate() {
        let output = child.wait_with_output()?;
        let line = String::from_utf8(output.stdout)?.trim().to_string();
        println!("rank {rank}: {line}");
        if !output.status.success() {
            return Err(format!("rank {rank} failed ({})", output.status).into());
        }
        lines.push(line);
    }

    let (mut sum, mut max, mut float_sum, mut float_abs) = (0i64, i64::MIN, 0.0f64, 0.0f64);
    let mut all_floats = Vec::new();
    for rank in 0..world_size {
        let (ints, floats) = shard(rank);
        all_floats.extend_from_slice(&floats);
        sum = ints.iter().fold(sum, |s, &x| s.wrapping_add(x));
        max = ints.iter().copied().fold(max, i64::max);
        float_sum += floats.iter().sum::<f64>();
        float_abs += floats.iter().map(|x| x.abs()).sum::<f64>();
    }
    let exact = ExactSum::fold(&all_floats);
    let (var, lse) = (ExactVar::new(1.0)?.fold(&all_floats), ExactLogSumExp::fold(&all_floats));
    let expected = format!(
        "sum={sum} max={max} exact_bits={:#x} var_bits={:#x} lse_bits={:#x} ",
        exact.to_bits(),
        var.to_bits(),
        lse.to_bits()
    );
    if lines.iter().any(|line| !line.starts_with(&expected)) {
        return Err(format!("expected every rank to print {expected}...").into());
    }
    if lines.iter().any(|line| line != &lines[0]) {
        return Err("the ranks' float sums differ".into());
    }
    let bits = lines[0].rsplit("0x").next().ok_or("no float sum")?;
    let got = f64::from_bits(u64::from_str_radix(bits, 16)?);
    let bound = (world_size as usize * SHARD_LEN) as f64 * f64::EPSILON * float_abs;
    if (got - float_sum).abs() > bound {
        return Err(format!("float sum {got} is not {float_sum} ± {bound}").into());
    }
    println!(
        "{world_size} ranks agree, and match the CPU: sum {sum}, max {max}, exact sum {exact}, variance {var}, \
         logsumexp {lse} (bitwise), float sum {got} (CPU {float_sum})"
    );
    Ok(())
}
