//! More than 2³² elements (about 17 GB of u32). Opt-in: set REDUCE_TEST_HUGE=1.

#[macro_use]
mod common;
use common::*;
use cust::memory::{CopyDestination, DeviceBuffer};
use reduce::Op;

#[test]
fn sum_max_min_argmax_u32_more_than_2_pow_32_elements() {
    let test = "sum_max_min_argmax_u32_more_than_2_pow_32_elements";
    if std::env::var("REDUCE_TEST_HUGE").as_deref() != Ok("1") {
        println!("skipped {test}: set REDUCE_TEST_HUGE=1 to run it (needs ~17 GB of GPU memory)");
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
}
