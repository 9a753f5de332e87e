//! Contexts that come and go, and buffers of the wrong context: the free
//! functions' cached reducer follows the current context, and a buffer that
//! is not the reducer's context's memory is a typed error before any launch
//! (a kernel reading it would fault and kill the context).
//!
//! Each test makes its own contexts; none uses the shared test context, whose
//! retain would keep the primary context alive.

#[macro_use]
mod common;
use common::skipped;
use cust::context::legacy::{Context as OwnContext, ContextFlags};
use cust::device::Device;
use cust::memory::DeviceBuffer;
use reduce::{Error, Op, Over, Reducer};
use std::sync::Mutex;

/// One test at a time: another test's retain of the primary context would
/// keep it alive when the first test drops its own.
static SERIAL: Mutex<()> = Mutex::new(());

/// Whether there is a GPU; prints that `test` was skipped if not.
fn has_gpu(test: &str) -> bool {
    let found = cust::init(cust::CudaFlags::empty()).is_ok() && Device::num_devices().is_ok_and(|n| n > 0);
    if !found {
        skipped(test, "on the GPU: no CUDA device");
    }
    found
}

/// Drops the context (the last retain of the primary context, so it is
/// destroyed) and makes a new one on the same thread, three times: the
/// cached reducer of the dead context must not be used (the driver may give
/// the new context the old handle), and must not be dropped through its
/// dangling handles either.
#[test]
fn free_functions_work_after_the_context_is_recreated() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !has_gpu("free_functions_work_after_the_context_is_recreated") {
        return;
    }
    for round in 0..3u8 {
        let context = cust::quick_init().unwrap();
        let values = DeviceBuffer::from_slice(&[1.0f32, 2.0, 4.0, f32::from(round)]).unwrap();
        assert_eq!(reduce::sum(&values).unwrap(), 7.0 + f32::from(round), "round {round}");
        assert_eq!(
            reduce::argmax(&values).unwrap().1,
            4.0f32.max(f32::from(round)),
            "round {round}"
        );
        drop(values);
        drop(context);
    }
}

/// A buffer of another context on the same device: `ForeignBuffer` from
/// the blocking call (nothing launched: the reducer's context still works),
/// and the call works from the buffer's own context.
#[test]
fn a_buffer_of_another_context_is_a_foreign_buffer() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !has_gpu("a_buffer_of_another_context_is_a_foreign_buffer") {
        return;
    }
    let device = Device::get_device(0).unwrap();
    let first = OwnContext::create_and_push(ContextFlags::SCHED_AUTO, device).unwrap();
    let theirs = DeviceBuffer::from_slice(&[3i64, 5, 7]).unwrap();
    let second = OwnContext::create_and_push(ContextFlags::SCHED_AUTO, device).unwrap();
    let ours = DeviceBuffer::from_slice(&[1i64, 2]).unwrap();
    let mut reducer = Reducer::new().unwrap();
    match reducer.reduce(&theirs, Op::Sum) {
        Err(Error::ForeignBuffer { buffer: "input", .. }) => {}
        other => panic!("a buffer of another context gave {other:?}"),
    }
    match reducer.dot(&ours, &theirs.index(..2)) {
        Err(Error::ForeignBuffer { buffer: "b", .. }) => {}
        other => panic!("a dot with another context's buffer gave {other:?}"),
    }
    assert_eq!(
        reducer.reduce(&ours, Op::Sum).unwrap(),
        3,
        "the reducer's context still works"
    );
    assert_eq!(reduce::sum(&ours).unwrap(), 3);
    drop((reducer, ours));
    drop(second);
    // `first` is current again: its buffer is its own memory.
    assert_eq!(reduce::sum(&theirs).unwrap(), 15);
    drop(theirs);
    drop(first);
}

/// A view of a freed buffer (cust's `DeviceSlice::index` does not borrow
/// the buffer) is no CUDA memory any more: `ForeignBuffer`, not a read of
/// freed memory.
#[test]
fn a_view_of_a_freed_buffer_is_a_foreign_buffer() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !has_gpu("a_view_of_a_freed_buffer_is_a_foreign_buffer") {
        return;
    }
    let _context = cust::quick_init().unwrap();
    let mut reducer = Reducer::new().unwrap();
    let view = {
        let freed = DeviceBuffer::from_slice(&[1.0f64; 1 << 20]).unwrap();
        freed.index(16..)
    };
    match reducer.reduce(&view, Op::Max) {
        Err(Error::ForeignBuffer { buffer: "input", .. }) => {}
        other => panic!("a freed buffer's view gave {other:?}"),
    }
}

/// A `Reducer` that outlives its context (cust lets it) must not free its
/// memory when dropped: a context made since may hold the same addresses.
/// The second reducer, made the same way in the new context, most likely
/// got exactly the first one's addresses; it and a buffer of the new
/// context must work after the first reducer is dropped.
#[test]
fn a_reducer_that_outlives_its_context_frees_nothing_of_the_next() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !has_gpu("a_reducer_that_outlives_its_context_frees_nothing_of_the_next") {
        return;
    }
    let values: Vec<u64> = (1..=1u64 << 16).collect();
    let expected = values.iter().sum::<u64>();
    let offsets = [0u64, 1 << 10, 1 << 16];
    let context = cust::quick_init().unwrap();
    let mut outlived = Reducer::new().unwrap();
    {
        let (data, offsets) = (
            DeviceBuffer::from_slice(&values).unwrap(),
            DeviceBuffer::from_slice(&offsets).unwrap(),
        );
        assert_eq!(outlived.reduce(&data, Op::Sum).unwrap(), expected);
        outlived.reduce_over(&data, Op::Max, Over::Segments(&offsets)).unwrap();
    }
    drop(context);
    let _context = cust::quick_init().unwrap();
    let mut reducer = Reducer::new().unwrap();
    let (data, offsets) = (
        DeviceBuffer::from_slice(&values).unwrap(),
        DeviceBuffer::from_slice(&offsets).unwrap(),
    );
    assert_eq!(reducer.reduce(&data, Op::Sum).unwrap(), expected);
    drop(outlived);
    for round in 0..3 {
        assert_eq!(reducer.reduce(&data, Op::Sum).unwrap(), expected, "round {round}");
        let maxima = reducer.reduce_over(&data, Op::Max, Over::Segments(&offsets)).unwrap();
        assert_eq!(
            maxima.values.as_host_vec().unwrap(),
            [1 << 10, 1 << 16],
            "round {round}"
        );
        assert_eq!(data.as_host_vec().unwrap(), values, "round {round}");
    }
}
