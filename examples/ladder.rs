//! The seeds' ladder on your GPU: every rung on 100M i32 (the seeds' size) and
//! on 2^28 f32, the block-size experiment (rung 3 with 8 and 32 threads), the
//! production kernel, and on 1M f32 the two dot products of seed 004 beside
//! the production `dot`.
//!
//! Each row: median time of one call (device events, after warm-up), GB/s of
//! input read, % of the device-to-device copy bandwidth measured first, and
//! the speed-up over rung 1. Every result is checked exactly against the CPU
//! (the inputs are small integers, so every sum is exact in any order).
//!
//! Usage: `ladder [--cub CUB_CSV] [--csv OUT_CSV] [--png OUT_PNG]`.
//! `--png` draws the table as a bar chart (GB/s per kernel, one panel per input).
//! `ladder --plot-csv CSV --png OUT_PNG` redraws a saved table, no GPU needed.
//! `ladder --profile` runs rung 2 and rung 3 (256 threads) and rung 3 at 8 and
//! 32 threads once each on the 100M i32 input, for `ncu` (see docs/LADDER.md). With `--cub`, the output of
//! `benches/cub_reduce.cu` from the same machine, the production rows get
//! their ratio to CUB's time for the same type and size. `--csv` also writes
//! the table as CSV (`scripts/plot_ladder.py` draws it).

use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, DeviceBox, DeviceBuffer, DeviceSlice};
use cust::stream::{Stream, StreamFlags};
use reduce::ladder::{self, DotKernel, Ladder, Rung};
use reduce::{Element, Op, Output, Over, Reducer, Scope};
use std::fmt::Write as _;

type BoxError = Box<dyn std::error::Error>;

const WARM_UP: usize = 2;
const TIMED: usize = 11;

struct Timer {
    stream: Stream,
    start: Event,
    stop: Event,
}

impl Timer {
    fn new() -> Result<Self, BoxError> {
        Ok(Timer {
            stream: Stream::new(StreamFlags::NON_BLOCKING, None)?,
            start: Event::new(EventFlags::DEFAULT)?,
            stop: Event::new(EventFlags::DEFAULT)?,
        })
    }

    /// Median µs of `call` (which enqueues on the timer's stream in a scope
    /// of `reducer`), after warm-up.
    fn median_us<'b>(
        &'b self,
        reducer: &mut Reducer,
        mut call: impl FnMut(&mut Scope<'_, 'b>, &'b Stream) -> reduce::Result<()>,
    ) -> Result<f64, BoxError> {
        let mut times = reducer.scope(|scope| {
            let mut times = Vec::with_capacity(TIMED);
            for i in 0..WARM_UP + TIMED {
                self.start.record(&self.stream)?;
                call(scope, &self.stream)?;
                self.stop.record(&self.stream)?;
                self.stop.synchronize()?;
                if i >= WARM_UP {
                    times.push(self.stop.elapsed_time_f32(&self.start)? as f64 * 1e3);
                }
            }
            Ok(times)
        })?;
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}

struct Row {
    dataset: String,
    kernel: String,
    block_threads: u32,
    us: f64,
    bytes: usize,
    cub_us: Option<f64>,
}

/// `n` small integers (-3..=3, not all zero) as `T`, and their exact sum.
fn small_integers<T: Element + From<i8>>(n: usize, seed: u64) -> (Vec<T>, i64) {
    let mut state = seed | 1;
    let mut sum = 0i64;
    let values = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = (state % 7) as i8 - 3;
            sum += v as i64;
            T::from(v)
        })
        .collect();
    (values, sum)
}

fn check_sum<T: Element + Into<f64>>(what: &str, got: T, expected: i64) -> Result<(), BoxError> {
    if got.into() == expected as f64 {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {expected}").into())
    }
}

/// Every rung (256 threads), rung 3 at 8 and 32 threads, and the production kernel.
fn ladder_rows<T: Element + From<i8> + Into<f64>>(
    dataset: &str,
    n: usize,
    cub_us: Option<f64>,
    timer: &Timer,
    rows: &mut Vec<Row>,
) -> Result<(), BoxError> {
    let (host, expected) = small_integers::<T>(n, 0x5eed_0001 ^ n as u64);
    let input = DeviceBuffer::from_slice(&host)?;
    drop(host);
    let mut out = DeviceBox::new(&T::from(0))?;
    let mut reducer = Reducer::new()?;
    // `None`: the production kernel.
    let mut configurations: Vec<(String, Option<Ladder>, u32)> = Rung::ALL
        .iter()
        .map(|&r| Ok((r.to_string(), Some(Ladder::new(r, 256)?), 256)))
        .collect::<Result<_, reduce::Error>>()?;
    for threads in [8, 32] {
        let strategy = Some(Ladder::new(Rung::SequentialAddressing, threads)?);
        configurations.push((
            format!("{} (block-size experiment)", Rung::SequentialAddressing),
            strategy,
            threads,
        ));
    }
    configurations.push((
        "production".into(),
        None,
        reducer.launch_shape::<T>(Op::Sum, n)?.threads_per_block,
    ));
    for (kernel, strategy, block_threads) in configurations {
        let out_of_calls = Output::from(&mut out);
        let us = timer.median_us(&mut reducer, |scope, stream| match strategy {
            Some(rung) => ladder::reduce_into(scope, &input, Op::Sum, rung, out_of_calls, stream),
            None => scope.reduce_into(&input, Op::Sum, Over::Whole, out_of_calls, stream),
        })?;
        let mut got = T::from(0);
        cust::memory::CopyDestination::copy_to(&out, &mut got)?;
        check_sum(&format!("{dataset} {kernel}"), got, expected)?;
        let cub_us = strategy.is_none().then_some(cub_us).flatten();
        rows.push(Row {
            dataset: dataset.into(),
            kernel,
            block_threads,
            us,
            bytes: n * std::mem::size_of::<T>(),
            cub_us,
        });
    }
    Ok(())
}

fn dot_rows(timer: &Timer, rows: &mut Vec<Row>) -> Result<(), BoxError> {
    const N: usize = 1 << 20;
    let (a, _) = small_integers::<f32>(N, 11);
    let (b, _) = small_integers::<f32>(N, 12);
    let expected: i64 = a.iter().zip(&b).map(|(x, y)| (*x as i64) * (*y as i64)).sum();
    let (da, db) = (DeviceBuffer::from_slice(&a)?, DeviceBuffer::from_slice(&b)?);
    let mut reducer = Reducer::new()?;
    let mut out = DeviceBox::new(&0.0f32)?;
    let kernels = [Some(DotKernel::AtomicPerElement), Some(DotKernel::BlockTree), None];
    for kernel in kernels {
        let out_of_calls = Output::from(&mut out);
        let us = timer.median_us(&mut reducer, |scope, stream| match kernel {
            Some(kernel) => ladder::dot_into(scope, &da, &db, kernel, out_of_calls, stream),
            None => scope.dot_into(&da, &db, out_of_calls, stream),
        })?;
        let name = kernel.map_or("dot production".to_string(), |k| format!("dot {k:?}"));
        let mut got = 0.0f32;
        cust::memory::CopyDestination::copy_to(&out, &mut got)?;
        check_sum(&name, got, expected)?;
        let block_threads = match kernel {
            Some(_) => 256,
            None => reducer.launch_shape::<f32>(Op::Sum, N)?.threads_per_block,
        };
        rows.push(Row {
            dataset: "1M f32 dot".into(),
            kernel: name,
            block_threads,
            us,
            bytes: 2 * N * 4,
            cub_us: None,
        });
    }
    Ok(())
}

/// Device-to-device copy of 1 GiB: bytes read + written per second.
fn copy_gbps(timer: &Timer) -> Result<f64, BoxError> {
    let n = 1usize << 28;
    let source = DeviceBuffer::from_slice(&vec![1.0f32; n])?;
    let mut target = DeviceBuffer::<f32>::zeroed(n)?;
    // The timer runs its calls in a reducer's scope; this call is a plain copy.
    let mut reducer = Reducer::new()?;
    let us = timer.median_us(&mut reducer, |_, stream| {
        let target: &mut DeviceSlice<f32> = &mut target;
        // SAFETY: both buffers outlive the synchronized call.
        unsafe { target.async_copy_from(&*source, stream)? };
        Ok(())
    })?;
    Ok(2.0 * (n * 4) as f64 / us / 1e3)
}

/// One call each of the configurations docs/LADDER.md profiles with ncu.
fn profile_once() -> Result<(), BoxError> {
    let (host, expected) = small_integers::<i32>(100_000_000, 7);
    let input = DeviceBuffer::from_slice(&host)?;
    let mut reducer = Reducer::new()?;
    for (rung, threads) in [
        (Rung::InterleavedStrided, 256),
        (Rung::SequentialAddressing, 256),
        (Rung::SequentialAddressing, 8),
        (Rung::SequentialAddressing, 32),
    ] {
        check_sum(
            &format!("{rung} at {threads} threads"),
            ladder::reduce(&mut reducer, &input, Op::Sum, Ladder::new(rung, threads)?)?,
            expected,
        )?;
        println!("ran {rung} at {threads} threads");
    }
    Ok(())
}

/// CUB's median µs for `type,sum,n` from a `cub_reduce.cu` CSV.
fn cub_time(csv: &str, typ: &str, n: usize) -> Option<f64> {
    csv.lines().find_map(|line| {
        let cells: Vec<&str> = line.split(',').collect();
        (cells.len() == 6 && cells[0] == "cub" && cells[1] == typ && cells[2] == "sum" && cells[3] == n.to_string())
            .then(|| cells[4].parse().ok())
            .flatten()
    })
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let cub_csv = flag("--cub")
        .map(std::fs::read_to_string)
        .transpose()?
        .unwrap_or_default();
    if let Some(csv) = flag("--plot-csv") {
        let png = flag("--png").ok_or("--plot-csv needs --png OUT_PNG")?;
        let (bars, copy) = bars_from_csv(&std::fs::read_to_string(csv)?)?;
        return draw_chart(&png, &bars, copy);
    }
    let _context = cust::quick_init().map_err(|e| format!("ladder needs a CUDA GPU: {e}"))?;
    println!("device: {}", cust::device::Device::get_device(0)?.name()?);
    if args.iter().any(|a| a == "--profile") {
        return profile_once();
    }

    let timer = Timer::new()?;
    let copy = copy_gbps(&timer)?;
    println!("device-to-device copy: {copy:.0} GB/s (read + write)\n");

    let mut rows = Vec::new();
    ladder_rows::<i32>(
        "100M i32",
        100_000_000,
        cub_time(&cub_csv, "i32", 100_000_000),
        &timer,
        &mut rows,
    )?;
    ladder_rows::<f32>(
        "2^28 f32",
        1 << 28,
        cub_time(&cub_csv, "f32", 1 << 28),
        &timer,
        &mut rows,
    )?;
    dot_rows(&timer, &mut rows)?;

    let mut csv =
        String::from("dataset,kernel,block_threads,median_us,gbps,percent_of_copy,speedup_over_rung_1,cub_us\n");
    println!(
        "{:<11} {:<42} {:>7} {:>11} {:>8} {:>8} {:>9} {:>10}",
        "input", "kernel", "threads", "median µs", "GB/s", "% copy", "× rung 1", "÷ CUB"
    );
    for row in &rows {
        let rung_1 = rows.iter().find(|r| r.dataset == row.dataset).map_or(row.us, |r| r.us);
        let gbps = row.bytes as f64 / row.us / 1e3;
        let (percent_of_copy, speedup) = (100.0 * gbps / copy, rung_1 / row.us);
        let ratio = row.cub_us.map_or("-".to_string(), |c| format!("{:.3}", row.us / c));
        println!(
            "{:<11} {:<42} {:>7} {:>11.1} {:>8.0} {:>7.1}% {:>9.1} {:>10}",
            row.dataset, row.kernel, row.block_threads, row.us, gbps, percent_of_copy, speedup, ratio
        );
        writeln!(
            csv,
            "{},{},{},{:.2},{:.1},{:.1},{:.2},{}",
            row.dataset,
            row.kernel,
            row.block_threads,
            row.us,
            gbps,
            percent_of_copy,
            speedup,
            row.cub_us.map_or(String::new(), |c| format!("{c:.2}"))
        )?;
    }
    println!("\nevery result matched the exact CPU sum");
    if let Some(path) = flag("--png") {
        let (bars, copy) = bars_from_csv(&csv)?;
        draw_chart(&path, &bars, copy)?;
        println!("wrote {path}");
    }
    if let Some(path) = flag("--csv") {
        std::fs::write(&path, csv)?;
        println!("wrote {path}");
    }
    Ok(())
}

/// One bar of the chart: input, kernel label, GB/s.
struct Bar {
    dataset: String,
    label: String,
    gbps: f64,
}

/// The bars and the copy bandwidth from the table's CSV.
fn bars_from_csv(csv: &str) -> Result<(Vec<Bar>, f64), BoxError> {
    let mut bars = Vec::new();
    let mut copy = 0.0;
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() < 6 {
            continue;
        }
        let (gbps, percent): (f64, f64) = (cells[4].parse()?, cells[5].parse()?);
        copy = gbps / (percent / 100.0);
        let label = format!(
            "{} ({} thr)",
            cells[1].replace(" (block-size experiment)", ""),
            cells[2]
        );
        bars.push(Bar {
            dataset: cells[0].to_string(),
            label,
            gbps,
        });
    }
    Ok((bars, copy))
}

/// Horizontal bars of GB/s per kernel, one panel per input, with the
/// device-to-device copy bandwidth as a reference line.
fn draw_chart(path: &str, bars: &[Bar], copy_gbps: f64) -> Result<(), BoxError> {
    use plotters::prelude::*;
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded DejaVu font did not load")?;
    let mut datasets: Vec<&str> = Vec::new();
    for bar in bars {
        if !datasets.contains(&bar.dataset.as_str()) {
            datasets.push(&bar.dataset);
        }
    }
    let root = BitMapBackend::new(path, (1500, 260 * datasets.len() as u32 + 60)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(50);
    title.titled(
        "reduce: the seeds' ladder on one GPU, GB/s of input read (median of one call, device events); black line: device-to-device copy",
        ("sans-serif", 22),
    )?;
    let x_max = copy_gbps.max(bars.iter().map(|b| b.gbps).fold(0.0, f64::max)) * 1.1;
    for (panel, dataset) in body.split_evenly((datasets.len(), 1)).iter().zip(&datasets) {
        let rows: Vec<&Bar> = bars.iter().filter(|b| b.dataset == *dataset).collect();
        let mut chart = ChartBuilder::on(panel)
            .caption(*dataset, ("sans-serif", 20))
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(380)
            .build_cartesian_2d(0.0..x_max, (0..rows.len()).into_segmented())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows.len())
            .y_label_formatter(&|value| match value {
                SegmentValue::CenterOf(i) => rows.get(*i).map_or(String::new(), |r| r.label.clone()),
                _ => String::new(),
            })
            .x_desc("GB/s")
            .label_style(("sans-serif", 14))
            .draw()?;
        chart.draw_series(rows.iter().enumerate().map(|(i, row)| {
            let color = if row.label.contains("production") { RED } else { BLUE };
            Rectangle::new(
                [(0.0, SegmentValue::Exact(i)), (row.gbps, SegmentValue::Exact(i + 1))],
                color.mix(0.7).filled(),
            )
        }))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![
                (copy_gbps, SegmentValue::Exact(0)),
                (copy_gbps, SegmentValue::Exact(rows.len())),
            ],
            BLACK.stroke_width(2),
        )))?;
    }
    root.present()?;
    Ok(())
}
