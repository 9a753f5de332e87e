//! Bad input gets a typed error with a helpful message, not a panic.

use crate::common;
use common::*;
use cust::memory::DeviceBuffer;
use reduce::{Error, Op, Over, Policy};

#[test]
fn max_min_f32_empty_is_an_error() {
    if gpu("max_min_f32_empty_is_an_error").is_none() {
        return;
    }
    let buffer = DeviceBuffer::from_slice(&[1.0f32, 2.0]).unwrap();
    let empty = buffer.index(2..);
    for op in [Op::Max, Op::Min] {
        match reduce::reduce(&empty, op) {
            Err(Error::Empty { op: reported }) => assert_eq!(reported, op),
            other => panic!("{op} of empty gave {other:?}"),
        }
    }
    assert_eq!(reduce::sum(&empty).unwrap(), 0.0);
    assert_eq!(reduce::product(&empty).unwrap(), 1.0);
    // The failed calls left nothing behind: the next one works.
    assert_eq!(reduce::max(&buffer).unwrap(), 2.0);
}

#[test]
fn max_min_i64_empty_is_an_error_on_every_backend() {
    for_each_backend!("max_min_i64_empty_is_an_error_on_every_backend", |backend| {
        for op in [Op::Max, Op::Min] {
            match backend.reduce::<i64>(&[], 0, op) {
                Err(Error::Empty { op: reported }) => assert_eq!(reported, op),
                other => panic!("{}: {op} of empty gave {other:?}", backend.name()),
            }
        }
        assert_eq!(backend.reduce::<i64>(&[], 0, Op::Sum).unwrap(), 0);
        assert_eq!(backend.reduce::<i64>(&[], 0, Op::Product).unwrap(), 1);
        assert_eq!(backend.reduce(&[4i64, -9], 0, Op::Min).unwrap(), -9);
    });
}

#[test]
fn max_abs_i32_is_unsupported_on_every_backend() {
    for_each_backend!("max_abs_i32_is_unsupported_on_every_backend", |backend| {
        match backend.reduce(&[1i32, -2], 0, Op::MaxAbs) {
            Err(Error::UnsupportedOp { op: Op::MaxAbs, .. }) => {}
            other => panic!("{}: max_abs of i32 gave {other:?}", backend.name()),
        }
        assert_eq!(backend.reduce(&[1.0f32, -2.0], 0, Op::MaxAbs).unwrap(), 2.0);
    });
}

/// An op the type lacks is `UnsupportedOp` also for an empty input (it was
/// `Empty` there, while the segmented calls said `UnsupportedOp`).
#[test]
fn max_abs_of_empty_i32_is_unsupported_not_empty_on_every_backend() {
    for_each_backend!(
        "max_abs_of_empty_i32_is_unsupported_not_empty_on_every_backend",
        |backend| {
            for op in [Op::MaxAbs] {
                match backend.reduce::<i32>(&[], 0, op) {
                    Err(Error::UnsupportedOp { op: reported, .. }) => assert_eq!(reported, op),
                    other => panic!("{}: {op} of an empty i32 input gave {other:?}", backend.name()),
                }
            }
        }
    );
}

/// argmax/argmin of half floats return a NaN with the input's own bits
/// (a signalling NaN stays signalling), not the `f32` round trip's quiet NaN.
#[test]
fn argmax_argmin_f16_bf16_return_the_input_nan_bits_on_every_backend() {
    use reduce::half::{bf16, f16};
    for_each_backend!(
        "argmax_argmin_f16_bf16_return_the_input_nan_bits_on_every_backend",
        |backend| {
            for op in [Op::Max, Op::Min] {
                let halves = [f16::ONE, f16::from_bits(0x7C01), f16::from_bits(0xFE03), f16::ONE];
                let (index, value) = backend.arg_with_poison(&halves, 1, f16::ZERO, op).unwrap();
                assert_eq!((index, value.to_bits()), (1, 0x7C01), "{}: {op} f16", backend.name());
                let brains = [bf16::from_bits(0xFF81), bf16::ONE, bf16::from_bits(0x7FC1)];
                let (index, value) = backend.arg_with_poison(&brains, 3, bf16::ZERO, op).unwrap();
                assert_eq!((index, value.to_bits()), (0, 0xFF81), "{}: {op} bf16", backend.name());
            }
        }
    );
}

#[test]
fn nan_max_f32_ladder_is_unsupported_on_every_backend() {
    for_each_backend!("nan_max_f32_ladder_is_unsupported_on_every_backend", |backend| {
        backend.set_ladder(Some(
            reduce::ladder::Ladder::new(reduce::ladder::Rung::WarpShuffle, 64).unwrap(),
        ));
        match backend.reduce(&[1.0f32, f32::NAN], 0, Op::NanMax) {
            Err(Error::UnsupportedStrategy { kernel, .. }) => assert!(kernel.contains("nan_max"), "{kernel}"),
            other => panic!("{}: a ladder rung for nan_max gave {other:?}", backend.name()),
        }
    });
}

#[test]
fn emulator_rejects_an_empty_grid_cap() {
    match reduce::emulated::Emulator::with_shape(Policy::new(64).unwrap(), 0) {
        Err(Error::InvalidPolicy(message)) => assert!(message.contains("max_grid"), "{message}"),
        other => panic!("a grid cap of 0 gave {other:?}"),
    }
}

#[test]
fn sum_f32_without_context_is_no_context() {
    // Runs on a fresh thread, where no context is current, with or without a GPU.
    let result = std::thread::spawn(|| {
        // A dangling slice is never read: the call fails before any launch.
        let slice = unsafe { cust::memory::DeviceSlice::<f32>::from_raw_parts(cust::memory::DevicePointer::null(), 0) };
        reduce::sum(&slice).map_err(|e| e.to_string())
    })
    .join()
    .unwrap();
    let message = result.expect_err("no context must be an error");
    assert!(message.contains("no CUDA context"), "{message}");
}

#[test]
fn policy_rejects_bad_block_sizes() {
    for bad in [0, 31, 100, 1056, 2048] {
        let error = Policy::new(bad).expect_err("invalid block size accepted");
        assert!(error.to_string().contains("multiple of 32"), "{error}");
    }
    assert_eq!(Policy::new(256).unwrap().block_threads(), 256);
    assert!(matches!(
        Policy::for_compute_capability(6, 1),
        Err(Error::UnsupportedDevice { major: 6, minor: 1 })
    ));
    assert_eq!(Policy::for_compute_capability(9, 0).unwrap().block_threads(), 512);
}

#[test]
fn empty_error_message_says_what_to_do() {
    let message = Error::Empty { op: Op::Max }.to_string();
    assert!(message.contains("max of an empty input"), "{message}");
}

#[test]
fn sum_f32_misaligned_input_is_an_error() {
    if gpu("sum_f32_misaligned_input_is_an_error").is_none() {
        return;
    }
    let buffer = DeviceBuffer::from_slice(&[1.0f32; 8]).unwrap();
    // An f32 slice one byte into the buffer: only unsafe code can make one.
    let address = buffer.as_device_ptr().as_raw() + 1;
    let slice =
        unsafe { cust::memory::DeviceSlice::<f32>::from_raw_parts(cust::memory::DevicePointer::from_raw(address), 4) };
    match reduce::sum(&slice) {
        Err(Error::MisalignedInput { align: 4, .. }) => {}
        other => panic!("misaligned input gave {other:?}"),
    }
    // Nothing was launched, so the context is fine: the next call works.
    assert_eq!(reduce::sum(&buffer).unwrap(), 8.0);
}

/// `usize::MAX` rows of no element match an empty matrix, so the shape check
/// passes and the emulator is asked for `usize::MAX` results: a typed error,
/// not an abort on capacity overflow (4cb2489) or a slice over too small an
/// allocation.
#[test]
fn sum_f32_usize_max_empty_rows_on_the_emulator_is_an_error() {
    let empty: [f32; 0] = [];
    let mut emulator = reduce::emulated::Emulator::default();
    // Seeds 0 and 1: the emulator's outputs unshifted, then one element past
    // a 16-byte boundary.
    for seed in [0, 1] {
        emulator.set_block_order_seed(seed);
        let rows = Over::Rows {
            rows: usize::MAX,
            len: 0,
        };
        match emulator.reduce_over(&empty, Op::Sum, rows) {
            Err(Error::InvalidSegments(message)) => assert!(message.contains("do not fit"), "{message}"),
            other => panic!("usize::MAX empty rows gave {:?}", other.map(|r| r.values.len())),
        }
        // Empty outputs are fine, shifted or not.
        let none = Over::Rows { rows: 0, len: 5 };
        assert!(emulator.reduce_over(&empty, Op::Sum, none).unwrap().values.is_empty());
    }
}

/// The launch shape of a segmented reduction whose average segment has more
/// bytes than a `u64` counts is a typed error: the byte count wrapped before
/// (in release; with overflow checks it panicked).
#[test]
fn segmented_launch_shape_of_usize_max_f64_elements_is_an_error() {
    let mut emulator = reduce::emulated::Emulator::default();
    match emulator.segmented_launch_shape::<f64>(Op::Sum, 1, usize::MAX) {
        Err(Error::InvalidPolicy(message)) => assert!(message.contains("overflow 64 bits"), "{message}"),
        other => panic!("usize::MAX f64 elements in one segment gave {other:?}"),
    }
    // Up to `u64::MAX` bytes, there is a shape: a whole grid on the segment.
    let shape = emulator
        .segmented_launch_shape::<f64>(Op::Sum, 1, usize::MAX / 8)
        .unwrap();
    assert_eq!(shape.launch.blocks, reduce::Emulated::DEFAULT_MAX_GRID);
}

/// A unique id is 256 hex digits: `from_str_radix` would also take a `+`.
#[test]
fn unique_id_rejects_signs() {
    let signed = "+1".repeat(128);
    let parsed = signed.parse::<reduce::multi::UniqueId>();
    assert!(matches!(parsed, Err(Error::InvalidGroup(_))), "{parsed:?}");
    let digits = "a1".repeat(128);
    assert_eq!(digits.parse::<reduce::multi::UniqueId>().unwrap().to_string(), digits);
}
