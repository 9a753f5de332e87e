//! The SIMT emulator turns kernel misuse that would hang a GPU or give
//! garbage into a fault naming the kernel, block and thread: small
//! deliberately broken kernels written against the device primitives.

use kernels_gpu::device::{self, block_idx_x, sync_threads, thread_idx_x};
use kernels_gpu::emulator::{self, Buffer, Fault, LaunchConfig};
use std::sync::Mutex;

/// Launches `kernel` on `blocks` × `threads` with `buffers` and 64 bytes of
/// dynamic shared memory, and returns its fault (panics if there is none).
fn fault_of(blocks: u32, threads: u32, buffers: &[Buffer], kernel: &(dyn Fn() + Sync)) -> Fault {
    let config = LaunchConfig {
        kernel: "broken",
        grid_blocks: blocks,
        block_threads: threads,
        dynamic_shared_bytes: 64,
        block_order_seed: 1,
        buffers,
    };
    emulator::launch(&config, kernel).expect_err("the broken kernel ran without a fault")
}

fn assert_mentions(fault: &Fault, words: &[&str]) {
    let text = fault.to_string();
    assert!(text.starts_with("kernel broken, block "), "{text}");
    for word in words {
        assert!(text.contains(word), "fault does not mention {word:?}: {text}");
    }
}

fn read_only(name: &'static str, data: &[u32]) -> Buffer {
    Buffer {
        name,
        address: data.as_ptr() as u64,
        bytes: 4 * data.len() as u64,
        writable: false,
    }
}

#[test]
fn barrier_reached_by_half_the_block_is_a_fault() {
    let fault = fault_of(2, 64, &[], &|| {
        if thread_idx_x() < 32 {
            // SAFETY: deliberately not reached by every thread.
            unsafe { sync_threads() }
        }
    });
    assert_mentions(
        &fault,
        &["deadlock", "wait at the barrier", "have returned", "emulator_faults.rs"],
    );
}

#[test]
fn barriers_at_two_places_are_a_fault() {
    let fault = fault_of(1, 64, &[], &|| {
        let even = thread_idx_x().is_multiple_of(2);
        // SAFETY: deliberately two different barriers (the same bar.sync 0 on
        // a GPU, but undefined behaviour in divergent code).
        unsafe {
            if even {
                sync_threads();
            }
            if !even {
                sync_threads();
            }
        }
    });
    assert_mentions(&fault, &["different barriers"]);
}

#[test]
fn shuffle_reached_by_half_the_warp_is_a_fault() {
    let fault = fault_of(1, 32, &[], &|| {
        if thread_idx_x() < 16 {
            // SAFETY: deliberately not reached by every lane of the mask.
            unsafe { device::shfl_xor_u32(1, 1) };
        }
    });
    assert_mentions(&fault, &["deadlock", "wait at the shuffle"]);
}

#[test]
fn full_mask_shuffle_in_a_partial_warp_is_a_fault() {
    // 48 threads: warp 1 has 16 lanes, but the mask names all 32.
    let fault = fault_of(1, 48, &[], &|| {
        // SAFETY: deliberately a full mask in a partial warp.
        unsafe { device::shfl_xor_u32(1, 1) };
    });
    assert_mentions(&fault, &["lanes that do not exist", "warp 1 has 16 threads"]);
}

#[test]
fn load_past_the_input_is_a_fault() {
    let data = [7u32; 8];
    let buffers = [read_only("input", &data)];
    let end = data.as_ptr() as u64 + 32;
    let fault = fault_of(1, 32, &buffers, &move || {
        if thread_idx_x() == 31 {
            // SAFETY: deliberately one element past the end (the emulator stops it).
            unsafe { device::load_global_nc_u32(end) };
        }
    });
    assert_eq!(fault.thread, 31);
    assert_mentions(&fault, &["outside every buffer", "input ["]);
}

#[test]
fn misaligned_vector_load_is_a_fault() {
    let data = [7u32; 8];
    let buffers = [read_only("input", &data)];
    let inside = data.as_ptr() as u64 + 4;
    let fault = fault_of(1, 32, &buffers, &move || {
        // SAFETY: deliberately 4 bytes off a 16-byte boundary.
        unsafe { device::load_global_nc_v4(inside) };
    });
    assert_mentions(&fault, &["misaligned 16-byte access"]);
}

#[test]
fn store_to_the_input_is_a_fault() {
    let data = [7u32; 8];
    let buffers = [read_only("input", &data)];
    let address = data.as_ptr() as u64;
    let fault = fault_of(1, 32, &buffers, &move || {
        // SAFETY: deliberately a store to a read-only buffer (the emulator stops it first).
        unsafe { device::store_global_u32(address, 0) };
    });
    assert_mentions(&fault, &["read-only buffer input"]);
    assert_eq!(data, [7; 8]);
}

#[test]
fn shared_memory_read_without_barrier_is_a_race() {
    let fault = fault_of(1, 16, &[], &|| {
        let shared = device::dynamic_shared() as *mut u32;
        let me = thread_idx_x() as usize;
        // SAFETY: inside the 64-byte dynamic array; deliberately no barrier
        // between the neighbour's write and this read.
        unsafe {
            device::store_shared(shared.add(me), 1);
            device::load_shared(shared.add((me + 1) % 16));
        }
    });
    // Either the neighbour has written (a race) or not yet (unwritten memory).
    let text = fault.to_string();
    assert!(
        text.contains("shared-memory race"),
        "not reported as a shared-memory race: {text}"
    );
}

#[test]
fn shared_memory_write_after_other_threads_read_is_a_race() {
    let fault = fault_of(1, 32, &[], &|| {
        let shared = device::dynamic_shared() as *mut u32;
        // SAFETY: inside the 64-byte dynamic array; thread 0 writes word 0
        // again with no barrier after the others read it.
        unsafe {
            if thread_idx_x() == 0 {
                device::store_shared(shared, 1);
            }
            sync_threads();
            let value = device::load_shared(shared);
            sync_threads();
            if thread_idx_x() == 0 {
                device::store_shared(shared, value + 1);
            }
            device::load_shared(shared);
        }
    });
    assert_mentions(&fault, &["shared-memory race"]);
}

#[test]
fn shared_memory_past_the_dynamic_array_is_a_fault() {
    let fault = fault_of(1, 32, &[], &|| {
        let shared = device::dynamic_shared() as *mut u32;
        // SAFETY: deliberately one word past the 64-byte array (the emulator stops it).
        unsafe { device::store_shared(shared.add(16 + thread_idx_x() as usize), 1) };
    });
    assert_mentions(&fault, &["outside every shared array"]);
}

#[test]
fn panic_in_kernel_code_is_a_fault() {
    let fault = fault_of(3, 32, &[], &|| {
        if block_idx_x() == 2 && thread_idx_x() == 5 {
            panic!("deliberate");
        }
    });
    assert_eq!((fault.block, fault.thread), (2, 5));
    assert_mentions(&fault, &["panicked: deliberate"]);
}

#[test]
fn blocks_run_in_a_shuffled_order_and_threads_concurrently() {
    let run = |seed: u64| {
        let order = Mutex::new(Vec::new());
        let config = LaunchConfig {
            kernel: "order",
            grid_blocks: 16,
            block_threads: 64,
            dynamic_shared_bytes: 0,
            block_order_seed: seed,
            buffers: &[],
        };
        emulator::launch(&config, &|| {
            // A barrier every thread reaches: it returns only because all 64
            // run at once.
            // SAFETY: reached by every thread of the block.
            unsafe { sync_threads() };
            if thread_idx_x() == 0 {
                order.lock().unwrap().push(block_idx_x());
            }
        })
        .unwrap();
        order.into_inner().unwrap()
    };
    let (first, second) = (run(1), run(2));
    assert_ne!(first, second, "two seeds gave the same block order");
    let mut sorted = first.clone();
    sorted.sort();
    assert_eq!(sorted, (0..16).collect::<Vec<_>>());
    assert_ne!(first, sorted, "blocks ran in index order");
}

#[test]
fn fault_after_the_first_block_ends_the_launch() {
    // A fault early in a later block, while threads of the block before may
    // not have woken from its end yet: those must still run this block (it
    // waits for all of them). The emulator once let them see the new fault
    // and leave, and the launch never ended; hence the time limit.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let data = [7u32; 4];
        let buffers = [read_only("input", &data)];
        let end = data.as_ptr() as u64 + 16;
        for seed in 1..=20 {
            let config = LaunchConfig {
                kernel: "broken",
                grid_blocks: 8,
                block_threads: 256,
                dynamic_shared_bytes: 0,
                block_order_seed: seed,
                buffers: &buffers,
            };
            let fault = emulator::launch(&config, &move || {
                if block_idx_x() == 5 && thread_idx_x() == 0 {
                    // SAFETY: deliberately past the end (the emulator stops it).
                    unsafe { device::load_global_nc_u32(end) };
                }
            })
            .expect_err("the broken kernel ran without a fault");
            assert_eq!((fault.block, fault.thread), (5, 0));
        }
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("a launch with a fault after its first block did not end within 120 s");
}
