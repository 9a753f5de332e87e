//! Work enqueued in a `Scope`: it is done when `Reducer::scope` returns,
//! outputs that overlap another buffer of the call are refused, and the
//! stream workspaces of ended scopes are reused rather than piling up. (That
//! safe code cannot free or touch a scope's buffers before then is checked
//! by the compiler: the `compile_fail` examples in `reduce::scope`.)

#[macro_use]
mod common;
use common::*;
use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use rand::Rng;
use reduce::{ArgMax, Error, Input, MeanVar, Op, Output, Over, Reducer};
use std::sync::Mutex;

/// One test at a time: the workspace test measures free device memory,
/// which the others' buffers would change.
static SERIAL: Mutex<()> = Mutex::new(());

/// Two long reductions on two streams, read back at once after the scope:
/// had the scope not waited for both, the outputs would still hold poison.
#[test]
fn scope_waits_for_every_stream_before_returning() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if gpu("scope_waits_for_every_stream_before_returning").is_none() {
        return;
    }
    let n = 1usize << 26;
    let ones = DeviceBuffer::from_slice(&vec![1.0f32; n]).unwrap();
    let twos = DeviceBuffer::from_slice(&vec![2i64; n]).unwrap();
    let mut sum = DeviceBox::new(&f32::NAN).unwrap();
    let mut max = DeviceBox::new(&i64::MIN).unwrap();
    let streams = [0, 1].map(|_| Stream::new(StreamFlags::NON_BLOCKING, None).unwrap());
    let mut reducer = Reducer::new().unwrap();
    for round in 0..5 {
        sum.copy_from(&f32::NAN).unwrap();
        max.copy_from(&i64::MIN).unwrap();
        reducer
            .scope(|scope| {
                // Sums of ones, then the max, on one stream: they run in order.
                let sum_out = Output::from(&mut sum);
                scope.reduce_into(&ones, Op::Sum, Over::Whole, sum_out, &streams[0])?;
                scope.reduce_into(&ones, Op::Sum, Over::Whole, sum_out, &streams[0])?;
                scope.reduce_into(&twos, Op::Max, Over::Whole, &mut max, &streams[1])
            })
            .unwrap();
        let (mut got_sum, mut got_max) = (0.0f32, 0i64);
        sum.copy_to(&mut got_sum).unwrap();
        max.copy_to(&mut got_max).unwrap();
        assert_eq!((got_sum, got_max), (n as f32, 2), "round {round}");
    }
}

/// An output that overlaps an input or the other output (only views made
/// with `from_view` can) is `Error::Aliasing`, and nothing is written.
#[test]
fn an_output_overlapping_another_buffer_is_aliasing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if gpu("an_output_overlapping_another_buffer_is_aliasing").is_none() {
        return;
    }
    let data = DeviceBuffer::from_slice(&[5u64, 9, 1, 7]).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let mut reducer = Reducer::new().unwrap();
    let (input_view, mut output_view) = (data.index(..), data.index(3..));
    // SAFETY: `data` outlives the scopes, which only read and write it.
    let (input, output) = unsafe { (Input::from_view(&input_view), Output::from_view(&mut output_view)) };
    let refused = reducer.scope(|scope| scope.reduce_into(input, Op::Sum, Over::Whole, output, &stream));
    assert!(
        matches!(
            refused,
            Err(Error::Aliasing {
                output: "out",
                other: "input"
            })
        ),
        "{refused:?}"
    );
    // argmax's index output over the input it reads.
    let refused = reducer.scope(|scope| scope.reduce_into(input, ArgMax, Over::Whole, output, &stream));
    assert!(matches!(refused, Err(Error::Aliasing { .. })), "{refused:?}");
    assert_eq!(data.as_host_vec().unwrap(), [5, 9, 1, 7], "nothing was written");
    // Two outputs of one call that overlap each other: `MeanVar`'s means
    // and variances in the same element (as the old argmax value and index).
    let floats = DeviceBuffer::from_slice(&[2.0f64, 4.0, -1.0, -1.0]).unwrap();
    let (mut means_view, mut variances_view) = (floats.index(2..3), floats.index(2..3));
    // SAFETY: `floats` outlives the scope, which only writes it.
    let (means, variances) = unsafe {
        (
            Output::from_view(&mut means_view),
            Output::from_view(&mut variances_view),
        )
    };
    let refused = reducer.scope(|scope| {
        scope.reduce_into(
            Input::from(&floats).get(..2).unwrap(),
            MeanVar::<f64>::new(1.0)?,
            Over::Whole,
            (means, variances),
            &stream,
        )
    });
    assert!(matches!(refused, Err(Error::Aliasing { .. })), "{refused:?}");
    assert_eq!(
        floats.as_host_vec().unwrap(),
        [2.0, 4.0, -1.0, -1.0],
        "nothing was written"
    );
    // Apart, the same buffers work.
    let refused =
        reducer.scope(|scope| scope.reduce_into(input.get(..3).unwrap(), Op::Sum, Over::Whole, output, &stream));
    assert!(refused.is_ok(), "{refused:?}");
    let mut rest = [0u64; 4];
    data.copy_to(&mut rest[..]).unwrap();
    assert_eq!(rest, [5, 9, 1, 15]);
}

/// 2,000 scopes, each on a stream of its own that is then destroyed: the
/// workspaces of ended scopes are reused (the old reducer kept one per
/// stream handle forever, about 20 KiB each on an H100).
#[test]
fn scopes_on_new_streams_reuse_workspaces() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if gpu("scopes_on_new_streams_reuse_workspaces").is_none() {
        return;
    }
    let data: Vec<i32> = (0..10_000).map(|i| i % 13 - 6).collect();
    let expected: i32 = data.iter().sum();
    let input = DeviceBuffer::from_slice(&data).unwrap();
    let mut out = DeviceBox::new(&0i32).unwrap();
    let mut reducer = Reducer::new().unwrap();
    let free_memory = || cust::memory::mem_get_info().unwrap().0;
    let mut before = 0;
    for scope_number in 0..2_000 {
        if scope_number == 10 {
            before = free_memory();
        }
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
        out.copy_from(&i32::MIN).unwrap();
        reducer
            .scope(|scope| scope.reduce_into(&input, Op::Sum, Over::Whole, &mut out, &stream))
            .unwrap();
        let mut got = 0;
        out.copy_to(&mut got).unwrap();
        assert_eq!(got, expected, "scope {scope_number}");
    }
    let grown = before.saturating_sub(free_memory());
    assert!(grown < 4 << 20, "2,000 scopes on new streams took {grown} more bytes");
}

/// A whole-input result goes to exactly one element: an `Output` of other
/// lengths is `Error::OutputLength`, and a segmented output must have one
/// element per segment; nothing is written.
#[test]
fn outputs_of_the_wrong_length_are_errors() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if gpu("outputs_of_the_wrong_length_are_errors").is_none() {
        return;
    }
    let input = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let mut three = DeviceBuffer::from_slice(&[f32::NAN; 3]).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let mut reducer = Reducer::new().unwrap();
    let refused = reducer.scope(|scope| scope.reduce_into(&input, Op::Sum, Over::Whole, &mut three, &stream));
    assert!(
        matches!(
            refused,
            Err(Error::OutputLength {
                output: "out",
                found: 3,
                expected: 1
            })
        ),
        "{refused:?}"
    );
    let refused =
        reducer.scope(|scope| scope.reduce_into(&input, Op::Sum, Over::Rows { rows: 2, len: 2 }, &mut three, &stream));
    assert!(
        matches!(
            refused,
            Err(Error::OutputLength {
                output: "out",
                found: 3,
                expected: 2
            })
        ),
        "{refused:?}"
    );
    assert!(
        three.as_host_vec().unwrap().iter().all(|x| x.is_nan()),
        "nothing was written"
    );
    let one = Output::from(&mut three).get(1..2).unwrap();
    reducer
        .scope(|scope| scope.reduce_into(&input, Op::Sum, Over::Whole, one, &stream))
        .unwrap();
    let written = three.as_host_vec().unwrap();
    assert!(
        written[0].is_nan() && written[1] == 10.0 && written[2].is_nan(),
        "{written:?}"
    );
}

/// Runs `f` as a host function on `stream` (the calling thread's own for
/// `CU_STREAM_PER_THREAD`), after the work enqueued there so far.
fn host_function(stream: usize, f: Box<dyn FnOnce() + Send>) {
    unsafe extern "C" fn run(data: *mut std::ffi::c_void) {
        // SAFETY: the box leaked below for this call; `f` makes no CUDA call.
        let f = unsafe { Box::from_raw(data.cast::<Box<dyn FnOnce() + Send>>()) };
        f();
    }
    let data = Box::into_raw(Box::new(f));
    // SAFETY: a live stream of the current context; `run` takes the box.
    let status = unsafe { cudarc::driver::sys::cuLaunchHostFunc(stream as _, Some(run), data.cast()) };
    if status != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        // SAFETY: not launched, so still ours.
        drop(unsafe { Box::from_raw(data) });
        panic!("cuLaunchHostFunc: {status:?}");
    }
}

/// The per-thread default stream (`ScopeStream::from_raw(0x2)`) of two
/// threads in one scope: each launches on its own stream, with a workspace
/// of its own, held back by a host function until a timer opens the gate
/// (then the two threads' kernels run together); the scope, ended on this
/// thread, whose per-thread stream is neither, waits for both: the host
/// function after each thread's launches has run when `scope` returns.
#[test]
fn per_thread_streams_of_several_threads_in_one_scope() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Condvar};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(context) = gpu("per_thread_streams_of_several_threads_in_one_scope") else {
        return;
    };
    let mut rng = rng("per_thread_streams_of_several_threads_in_one_scope");
    const PER_THREAD: usize = 0x2;
    let threads = 2;
    let mut inputs = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..threads {
        let data: Vec<i64> = (0..rng.gen_range(1 << 22..1 << 24))
            .map(|_| rng.gen_range(-100..=100))
            .collect();
        expected.push(data.iter().sum::<i64>());
        inputs.push(DeviceBuffer::from_slice(&data).unwrap());
    }
    let mut outs: Vec<_> = (0..threads)
        .map(|_| DeviceBuffer::from_slice(&[i64::MIN; 3]).unwrap())
        .collect();
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let done: Vec<_> = (0..threads).map(|_| Arc::new(AtomicBool::new(false))).collect();
    let mut reducer = Reducer::new().unwrap();
    reducer
        .scope(|scope| {
            for ((input, out), done) in inputs.iter().zip(outs.iter_mut()).zip(&done) {
                let gate = Arc::clone(&gate);
                let done = Arc::clone(done);
                std::thread::scope(|s| {
                    s.spawn(|| {
                        cust::context::CurrentContext::set_current(context).unwrap();
                        host_function(
                            PER_THREAD,
                            Box::new(move || {
                                let (open, opened) = &*gate;
                                let open = open.lock().unwrap();
                                let timeout = std::time::Duration::from_secs(20);
                                let _ = opened.wait_timeout_while(open, timeout, |open| !*open).unwrap();
                            }),
                        );
                        let out = Output::from(out);
                        for slot in 0..3 {
                            // SAFETY: this thread's per-thread default stream,
                            // of the current context, lives past the scope.
                            let stream = unsafe { reduce::ScopeStream::from_raw(PER_THREAD as _) };
                            let slot = out.get(slot..slot + 1).unwrap();
                            scope.reduce_into(input, Op::Sum, Over::Whole, slot, stream)?;
                        }
                        host_function(PER_THREAD, Box::new(move || done.store(true, Ordering::SeqCst)));
                        Ok::<_, Error>(())
                    })
                    .join()
                    .unwrap()
                })?;
            }
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                *gate.0.lock().unwrap() = true;
                gate.1.notify_all();
            });
            Ok(())
        })
        .unwrap();
    for (thread, done) in done.iter().enumerate() {
        assert!(
            done.load(Ordering::SeqCst),
            "thread {thread}'s stream waited for by the scope"
        );
    }
    for (thread, (out, expected)) in outs.iter().zip(&expected).enumerate() {
        assert_eq!(out.as_host_vec().unwrap(), [*expected; 3], "thread {thread}");
    }
}
