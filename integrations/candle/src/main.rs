//! candle's tensors reduced through the library, as a candle user writes it:
//! the blocking call on a tensor's storage and layout, and a candle
//! `CustomOp1` that enqueues the reduction on candle's own stream. Every
//! result is checked against candle's own reduction and a CPU reference, for
//! contiguous, narrowed, transposed and permuted `f32`/`f16`/`bf16` tensors,
//! on candle's default device (the per-thread default stream) and on one
//! with its own stream. Then a few reductions are timed side by side with
//! candle's (CUDA events on candle's stream, median of 20 after 3 warm-ups).
//!
//! Exits non-zero on any wrong value. `scripts/candle.sh` builds it.

mod op;

use candle_core::cuda_backend::cudarc;
use candle_core::{DType, Device, Tensor};
use op::{Kind, ReduceDims};
use rand::{Rng, SeedableRng};
use std::sync::{Arc, Mutex};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let seed: u64 = std::env::var("REDUCE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    println!("seed {seed} (REDUCE_TEST_SEED reproduces a run)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut failures = 0;
    let mut cases = 0;
    let mut unsupported = 0;
    for (device_name, device) in [
        ("new_cuda (per-thread default stream)", Device::new_cuda(0)?),
        ("new_cuda_with_stream", Device::new_cuda_with_stream(0)?),
    ] {
        let Device::Cuda(cuda) = &device else {
            return Err("not a CUDA device".into());
        };
        let context = cuda.cuda_stream().context().clone();
        let reducer = Arc::new(Mutex::new(reduce::cudarc::Reducer::new(&context)?));
        for dtype in [DType::F32, DType::F16, DType::BF16] {
            // Small integers: every sum, max, min and position is exact in
            // each dtype, so those results are compared bit for bit.
            let shape = [
                6 + rng.gen_range(0..5),
                37 + rng.gen_range(0..40),
                5 + rng.gen_range(0..9),
            ];
            let n = shape.iter().product::<usize>();
            let values: Vec<f32> = (0..n).map(|_| rng.gen_range(-8..=8) as f32).collect();
            let x = Tensor::from_vec(values, &shape[..], &device)?.to_dtype(dtype)?;
            let views = [
                ("contiguous", x.clone()),
                ("narrowed", x.narrow(1, 3, shape[1] - 7)?),
                ("transposed(0,2)", x.transpose(0, 2)?),
                ("permuted(1,2,0)", x.permute((1, 2, 0))?),
            ];
            for (view_name, view) in &views {
                for kind in Kind::ALL {
                    for dim in 0..3 {
                        for form in ["blocking", "CustomOp1"] {
                            if kind == Kind::Var && dtype != DType::F32 {
                                // The library's variance takes f32 and f64 only.
                                unsupported += 1;
                                continue;
                            }
                            cases += 1;
                            let case = format!("{device_name} {dtype:?} {view_name} {kind:?} dim {dim} {form}");
                            match check(view, kind, dim, form, &reducer) {
                                Ok(()) => {}
                                Err(why) => {
                                    failures += 1;
                                    println!("FAIL {case}: {why}");
                                }
                            }
                        }
                    }
                }
            }
        }
        device.synchronize()?;
    }
    println!(
        "checks: {cases} cases, {failures} wrong; {unsupported} not run (variance of f16/bf16: the library has none)"
    );
    if failures > 0 {
        return Err(format!("{failures} of {cases} cases wrong").into());
    }
    timing(&mut rng)?;
    Ok(())
}

/// `kind` of `view` along `dim` through `form`, against candle's own result
/// and a CPU reference (f64 over the same values).
fn check(
    view: &Tensor,
    kind: Kind,
    dim: usize,
    form: &str,
    reducer: &Arc<Mutex<reduce::cudarc::Reducer>>,
) -> Result<()> {
    let ours = match form {
        "blocking" => op::blocking(view, kind, dim)?,
        _ => view.apply_op1_no_bwd(&ReduceDims {
            kind,
            dims: vec![dim],
            reducer: Arc::clone(reducer),
        })?,
    };
    let candle = kind.candle(view, dim)?;
    if ours.dims() != candle.dims() || ours.dtype() != candle.dtype() {
        return Err(format!(
            "shape/dtype {:?} {:?}, candle's {:?} {:?}",
            ours.dims(),
            ours.dtype(),
            candle.dims(),
            candle.dtype()
        )
        .into());
    }
    let reference = kind.reference(view, dim)?;
    let ours = as_f64(&ours)?;
    let theirs = as_f64(&candle)?;
    let tolerance = kind.tolerance(view.dtype());
    for (i, ((&o, &c), &r)) in ours.iter().zip(&theirs).zip(&reference).enumerate() {
        let close = |a: f64, b: f64| (a - b).abs() <= tolerance * b.abs().max(1.0);
        if !close(o, r) {
            return Err(format!("result {i}: {o}, reference {r} (candle {c})").into());
        }
        if !close(o, c) && !matches!(kind, Kind::ArgMax | Kind::ArgMin) {
            return Err(format!("result {i}: {o}, candle's {c} (reference {r})").into());
        }
    }
    Ok(())
}

fn as_f64(t: &Tensor) -> Result<Vec<f64>> {
    Ok(t.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?)
}

/// Times a few reductions of a 128 MiB f32 tensor and its transpose against
/// candle's own, on candle's stream.
fn timing(rng: &mut rand::rngs::StdRng) -> Result<()> {
    let device = Device::new_cuda_with_stream(0)?;
    let Device::Cuda(cuda) = &device else {
        return Err("not a CUDA device".into());
    };
    let stream = cuda.cuda_stream();
    let shape = [512usize, 1024, 64];
    let n = shape.iter().product::<usize>();
    let values: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let x = Tensor::from_vec(values, &shape[..], &device)?;
    let t = x.transpose(0, 2)?;
    let reducer = Arc::new(Mutex::new(reduce::cudarc::Reducer::new(stream.context())?));
    println!("\n| case | candle ms | reduce ms | candle / reduce |\n|---|---|---|---|");
    let cases: [(&str, &Tensor, Kind, Vec<usize>); 6] = [
        ("sum all, X [512,1024,64]", &x, Kind::Sum, vec![0, 1, 2]),
        ("sum all, X.transpose(0,2)", &t, Kind::Sum, vec![0, 1, 2]),
        ("mean dims [0,2], X.transpose(0,2)", &t, Kind::Mean, vec![0, 2]),
        ("argmax dim 2, X.transpose(0,2)", &t, Kind::ArgMax, vec![2]),
        ("argmax dim 2, X", &x, Kind::ArgMax, vec![2]),
        ("max dim 1, X.transpose(0,2)", &t, Kind::Max, vec![1]),
    ];
    for (name, tensor, kind, dims) in cases {
        let candle = median_ms(&stream, || kind.candle_dims(tensor, &dims).map(drop))?;
        let ours = median_ms(&stream, || {
            tensor
                .apply_op1_no_bwd(&ReduceDims {
                    kind,
                    dims: dims.clone(),
                    reducer: Arc::clone(&reducer),
                })
                .map(drop)
        })?;
        println!("| {name} | {candle:.3} | {ours:.3} | {:.2} |", candle / ours);
    }
    Ok(())
}

/// The median of 20 timings of `run` (after 3 warm-ups), by events on `stream`.
fn median_ms(
    stream: &Arc<cudarc::driver::CudaStream>,
    mut run: impl FnMut() -> candle_core::Result<()>,
) -> Result<f64> {
    for _ in 0..3 {
        run()?;
    }
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        run()?;
        let end = stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        end.synchronize()?;
        times.push(start.elapsed_ms(&end)? as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
