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
use reduce::{Error, Op, Reducer};
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
