//! Many host threads, and many streams of one `Reducer`, at once.

use crate::common;
use common::*;
use cust::context::CurrentContext;
use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reduce::{Op, Over, Reducer};
use std::sync::Mutex;

/// One call with random data: through the free function or through the
/// thread's own `Reducer` on the thread's own stream.
fn one_call<T: TestElement>(rng: &mut StdRng, reducer: &mut Reducer, stream: &Stream) -> Result<(), String> {
    let ops = ops_for::<T>();
    let op = ops[rng.gen_range(0..ops.len())];
    let n = if rng.gen() {
        rng.gen_range(1..5_000)
    } else {
        rng.gen_range(1..300_000)
    };
    let data = random_vec::<T>(rng, op, n);
    let buffer = DeviceBuffer::from_slice(&data).map_err(|e| e.to_string())?;
    let got = if rng.gen() {
        reduce::reduce(&buffer, op).map_err(|e| e.to_string())?
    } else {
        let mut out = DeviceBox::new(&T::poison()).map_err(|e| e.to_string())?;
        reducer
            .scope(|s| s.reduce_into(&buffer, op, Over::Whole, &mut out, stream))
            .map_err(|e| e.to_string())?;
        let mut got = T::poison();
        out.copy_to(&mut got).map_err(|e| e.to_string())?;
        got
    };
    T::check(got, &data, op).map_err(|e| format!("{op} of {n} {}: {e}", std::any::type_name::<T>()))
}

#[test]
fn all_ops_i32_u64_f32_f64_8_threads_500_calls_each() {
    let test = "all_ops_i32_u64_f32_f64_8_threads_500_calls_each";
    let Some(context) = gpu(test) else {
        return;
    };
    let mut rng = rng(test);
    let seeds: Vec<u64> = (0..8).map(|_| rng.gen()).collect();
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for (thread, seed) in seeds.into_iter().enumerate() {
            let failures = &failures;
            scope.spawn(move || {
                let fail = |e: String| failures.lock().unwrap().push(format!("thread {thread}: {e}"));
                if let Err(e) = CurrentContext::set_current(context) {
                    return fail(e.to_string());
                }
                let mut rng = StdRng::seed_from_u64(seed);
                let (mut reducer, stream) = match (Reducer::new(), Stream::new(StreamFlags::NON_BLOCKING, None)) {
                    (Ok(reducer), Ok(stream)) => (reducer, stream),
                    (reducer, stream) => return fail(format!("{:?} {:?}", reducer.err(), stream.err())),
                };
                for call in 0..500 {
                    let result = match call % 4 {
                        0 => one_call::<i32>(&mut rng, &mut reducer, &stream),
                        1 => one_call::<u64>(&mut rng, &mut reducer, &stream),
                        2 => one_call::<f32>(&mut rng, &mut reducer, &stream),
                        _ => one_call::<f64>(&mut rng, &mut reducer, &stream),
                    };
                    if let Err(e) = result {
                        fail(format!("call {call}: {e}"));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Calls of one `Reducer` queued on 4 streams with no host synchronisation
/// between them (so they overlap on the GPU) each land in their own output:
/// each stream has its own workspace.
fn streams_without_sync(test: &str) {
    if gpu(test).is_none() {
        return;
    }
    let mut rng = rng(test);
    let mut reducer = Reducer::new().unwrap();
    const STREAMS: usize = 4;
    const CALLS: usize = 50;
    let streams: Vec<Stream> = (0..STREAMS)
        .map(|_| Stream::new(StreamFlags::NON_BLOCKING, None).unwrap())
        .collect();
    // Small integers: every sum is exact, so each output is checked exactly.
    let inputs: Vec<(Vec<f32>, DeviceBuffer<f32>)> = (0..STREAMS)
        .map(|_| {
            let n = rng.gen_range(2_000_000..4_000_000);
            let data = random_exact_sum_vec::<f32>(&mut rng, n);
            let buffer = DeviceBuffer::from_slice(&data).unwrap();
            (data, buffer)
        })
        .collect();
    let mut outputs: Vec<DeviceBox<f32>> = (0..STREAMS * CALLS)
        .map(|_| DeviceBox::new(&f32::poison()).unwrap())
        .collect();
    reducer
        .scope(|scope| {
            for (index, out) in outputs.iter_mut().enumerate() {
                let s = index % STREAMS;
                scope.reduce_into(&inputs[s].1, Op::Sum, Over::Whole, out, &streams[s])?;
            }
            Ok(())
        })
        .unwrap();
    let mut failures = Vec::new();
    for (index, out) in outputs.iter().enumerate() {
        let mut got = f32::poison();
        out.copy_to(&mut got).unwrap();
        let (data, _) = &inputs[index % STREAMS];
        if let Err(e) = f32::check(got, data, Op::Sum) {
            failures.push(format!("call {} on stream {}: {e}", index / STREAMS, index % STREAMS));
        }
    }
    assert!(failures.is_empty(), "{test}:\n{}", failures.join("\n"));
}

#[test]
fn sum_f32_reduce_into_on_4_streams_without_sync() {
    streams_without_sync("sum_f32_reduce_into_on_4_streams_without_sync");
}
