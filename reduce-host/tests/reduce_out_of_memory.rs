//! Out of device memory: a call that needs a new stream's workspace when the
//! GPU is full gets a typed error, leaves the caller's output untouched, and
//! the next call (after memory is freed) works. Its own test binary, so no
//! other test runs while it fills the GPU.

#[macro_use]
mod common;
use common::*;
use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use reduce::error::CudaError;
use reduce::{Error, Op, Over, Reducer};

#[test]
fn sum_f32_new_stream_workspace_out_of_memory_is_an_error() {
    let test = "sum_f32_new_stream_workspace_out_of_memory_is_an_error";
    if gpu(test).is_none() {
        return;
    }
    let data: Vec<f32> = (1..=1000).map(|i| i as f32).collect();
    let input = DeviceBuffer::from_slice(&data).unwrap();
    let mut out = DeviceBox::new(&f32::poison()).unwrap();
    let mut reducer = Reducer::new().unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();

    // Fill the GPU: 1 GiB chunks, then smaller ones, until nothing more fits.
    let mut hog: Vec<DeviceBuffer<u8>> = Vec::new();
    let mut chunk = 1usize << 30;
    while chunk >= 256 {
        // SAFETY: never read; only held to use up memory.
        match unsafe { DeviceBuffer::<u8>::uninitialized(chunk) } {
            Ok(buffer) => hog.push(buffer),
            Err(_) => chunk /= 2,
        }
    }
    let full = reducer.scope(|s| s.reduce_into(&input, Op::Sum, Over::Whole, &mut out, &stream));
    drop(hog);

    match full {
        Err(Error::Cuda(CudaError::OutOfMemory)) => {}
        other => panic!("reduce_into on a new stream of a full GPU gave {other:?}"),
    }
    let mut untouched = 0.0f32;
    out.copy_to(&mut untouched).unwrap();
    assert_eq!(
        untouched.to_bits(),
        f32::poison().to_bits(),
        "the failed call wrote the output"
    );

    // Memory is back: the same call works.
    reducer
        .scope(|s| s.reduce_into(&input, Op::Sum, Over::Whole, &mut out, &stream))
        .unwrap();
    let mut sum = 0.0f32;
    out.copy_to(&mut sum).unwrap();
    assert_eq!(sum, 500_500.0);
}
