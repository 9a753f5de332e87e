//! More than 2³² elements (about 17 GB of u32): whole-input, argmax/argmin
//! with the extreme past 2³² and near the end, segments and rows crossing
//! 2³². Opt-in: set REDUCE_TEST_HUGE=1.

#[macro_use]
mod common;
use common::*;
use cust::memory::{CopyDestination, DeviceBuffer};
use reduce::{Op, Over};

#[test]
fn sum_max_min_argmax_u32_more_than_2_pow_32_elements() {
    let test = "sum_max_min_argmax_u32_more_than_2_pow_32_elements";
    if std::env::var("REDUCE_TEST_HUGE").as_deref() != Ok("1") {
        skipped(test, "(set REDUCE_TEST_HUGE=1 to run it: needs ~17 GB of GPU memory)");
        return;
    }
    if gpu(test).is_none() {
        return;
    }
    let n: usize = (1 << 32) + (1 << 20) + 3;
    let mut buffer = DeviceBuffer::<u32>::zeroed(n).unwrap();
    buffer.set_32(1).unwrap();
    // A 0 below 2³² and a 7 as the very last element: max and min must see
    // both ends. A first 7 above 2³²: argmax's index needs all 64 bits.
    let first_seven = (1usize << 32) + 5;
    buffer.index(1000..1001).copy_from(&[0u32]).unwrap();
    buffer.index(first_seven..first_seven + 1).copy_from(&[7u32]).unwrap();
    buffer.index(n - 1..n).copy_from(&[7u32]).unwrap();

    // n - 3 ones, a 0 and two 7s, wrapped to 32 bits.
    let expected_sum = ((n as u64 - 3) + 14) as u32;
    assert_eq!(reduce::reduce(&buffer, Op::Sum).unwrap(), expected_sum);
    assert_eq!(reduce::reduce(&buffer, Op::Max).unwrap(), 7);
    assert_eq!(reduce::reduce(&buffer, Op::Min).unwrap(), 0);
    assert_eq!(reduce::argmax(&buffer).unwrap(), (first_seven as u64, 7));
    assert_eq!(reduce::argmin(&buffer).unwrap(), (1000, 0));
    // The same through an unaligned sub-slice that still holds more than 2³² elements.
    let tail = buffer.index(1001..);
    assert_eq!(reduce::reduce(&tail, Op::Min).unwrap(), 1);
    assert_eq!(
        reduce::reduce(&tail, Op::Sum).unwrap(),
        ((n as u64 - 1001 - 2) + 14) as u32
    );
    assert_eq!(reduce::argmax(&tail).unwrap(), ((first_seven - 1001) as u64, 7));

    // A 0 near the very end: argmin of the tail must find it past 2³².
    buffer.index(n - 2..n - 1).copy_from(&[0u32]).unwrap();
    assert_eq!(reduce::argmin(&tail).unwrap(), ((n - 2 - 1001) as u64, 0));

    // Segments, the last crossing 2³²: [0, 1000) of ones, [1000, 2³² − 7)
    // with the 0 at 1000, [2³² − 7, n) with 7, 0, 7 (at 2³² + 5, n − 2, n − 1).
    let offsets = DeviceBuffer::from_slice(&[0u64, 1000, (1 << 32) - 7, n as u64]).unwrap();
    let long = (1u64 << 32) - 7 - 1000;
    let last = n as u64 - ((1 << 32) - 7);
    let per_segment = |op: Op| {
        reduce::reduce_over(&buffer, op, Over::Segments(&offsets))
            .unwrap()
            .values
            .as_host_vec()
            .unwrap()
    };
    assert_eq!(per_segment(Op::Sum), [1000, (long - 1) as u32, (last - 3 + 14) as u32]);
    assert_eq!(per_segment(Op::Max), [1, 1, 7]);
    assert_eq!(per_segment(Op::Min), [1, 0, 0]);

    // Two rows of 2³¹ + 2¹⁹ elements (the first 2³² + 2²⁰), the second
    // crossing 2³²: the 0 at 1000 in the first, the 7 at 2³² + 5 in the second.
    let row_len = (1usize << 31) + (1 << 19);
    let matrix = buffer.index(..2 * row_len);
    let per_row = |op: Op| {
        reduce::reduce_over(&matrix, op, Over::Rows { rows: 2, len: row_len })
            .unwrap()
            .values
            .as_host_vec()
            .unwrap()
    };
    assert_eq!(per_row(Op::Sum), [(row_len - 1) as u32, (row_len + 6) as u32]);
    assert_eq!(per_row(Op::Max), [1, 7]);
    assert_eq!(per_row(Op::Min), [0, 1]);
}
