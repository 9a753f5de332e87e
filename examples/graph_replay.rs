//! `Scope::reduce_into` inside a CUDA graph: captured once, replayed many
//! times, and timed against direct calls at small sizes, where launch cost
//! dominates.
//!
//! A whole-input `reduce_into` enqueues one kernel and nothing else (no allocation once
//! `Scope::prepare` gave the stream its workspace, no host synchronization, no
//! memset: the kernel leaves its ticket at zero for the next launch), so
//! stream capture records exactly one kernel node. The graph's replays run
//! long after any closure would end, so the scope is the `unsafe`
//! `Reducer::scope_unsynchronized`, kept alive (with the buffers it borrows)
//! until the last replay is waited for. cust 0.3.2
//! has no wrappers for capture, instantiation or graph launch, so this example
//! makes those driver calls itself.
//!
//! Each replay's result is checked: the output is poisoned (outside the graph)
//! before a replay and compared with the exact sum after it.
//!
//! Output: one line per size with the median of direct calls and of graph
//! replays, each timed with device events around a single call.

use cust::context::CurrentContext;
use cust::event::{Event, EventFlags};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use cust::sys::{self, cudaError_enum, CUgraph, CUgraphExec, CUstreamCaptureMode_enum};
use reduce::{Op, Output, Over, Reducer, Scope};

type BoxError = Box<dyn std::error::Error>;

/// Turns a raw driver status into an error naming the call.
fn check(status: cudaError_enum, call: &str) -> Result<(), BoxError> {
    if status == cudaError_enum::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{call} failed: {status:?}").into())
    }
}

/// An instantiated graph holding one captured `reduce_into`.
struct CapturedReduction {
    graph: CUgraph,
    exec: CUgraphExec,
}

impl CapturedReduction {
    fn capture<'b>(
        scope: &mut Scope<'_, 'b>,
        input: &'b DeviceBuffer<i32>,
        out: Output<'b, i32>,
        stream: &'b Stream,
    ) -> Result<Self, BoxError> {
        let mut graph: CUgraph = std::ptr::null_mut();
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: plain driver calls on a live stream; the graph and its
        // executable are destroyed in Drop.
        unsafe {
            check(
                sys::cuStreamBeginCapture_v2(
                    stream.as_inner(),
                    CUstreamCaptureMode_enum::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                ),
                "cuStreamBeginCapture",
            )?;
            let enqueued = scope.reduce_into(input, Op::Sum, Over::Whole, out, stream);
            check(
                sys::cuStreamEndCapture(stream.as_inner(), &mut graph),
                "cuStreamEndCapture",
            )?;
            enqueued?;
            check(
                sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
                "cuGraphInstantiateWithFlags",
            )?;
        }
        Ok(CapturedReduction { graph, exec })
    }

    fn launch(&self, stream: &Stream) -> Result<(), BoxError> {
        // SAFETY: `exec` is a live executable graph.
        unsafe { check(sys::cuGraphLaunch(self.exec, stream.as_inner()), "cuGraphLaunch") }
    }
}

impl Drop for CapturedReduction {
    fn drop(&mut self) {
        // SAFETY: both handles were created by `capture` and are not used after this.
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}

fn median_us(mut times_ms: Vec<f32>) -> f64 {
    times_ms.sort_by(f32::total_cmp);
    times_ms[times_ms.len() / 2] as f64 * 1e3
}

fn main() -> Result<(), BoxError> {
    let _context = cust::quick_init().map_err(|e| format!("graph_replay needs a CUDA GPU: {e}"))?;
    let mut reducer = Reducer::new()?;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let (start, stop) = (Event::new(EventFlags::DEFAULT)?, Event::new(EventFlags::DEFAULT)?);
    const CALLS: usize = 500;
    const POISON: i32 = 0x5A5A_5A5A;
    println!(
        "{:>9} {:>12} {:>12}   (i32 sum, median of {CALLS} single calls, device events)",
        "n", "direct µs", "graph µs"
    );
    for log2 in [10, 12, 14, 16, 18, 20] {
        let n = 1usize << log2;
        let host: Vec<i32> = (0..n as i32).map(|i| (i % 7) - 3 + (i & 1)).collect();
        let expected = host.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        let input = DeviceBuffer::from_slice(&host)?;
        let mut out = DeviceBuffer::from_slice(&[POISON])?;
        let mut out_view = out.index(..);
        // SAFETY: `out` outlives the scope below, and the host touches it
        // only between calls and replays, after waiting for each.
        let out_of_calls = unsafe { Output::from_view(&mut out_view) };
        // SAFETY: every call and replay enqueued through `scope` is waited
        // for (`stop.synchronize()`) before the host touches its buffers, and
        // before `scope` is dropped (after `graph`, declared later).
        let mut scope = unsafe { reducer.scope_unsynchronized() };
        scope.prepare(&stream)?;

        let mut direct = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            start.record(&stream)?;
            scope.reduce_into(&input, Op::Sum, Over::Whole, out_of_calls, &stream)?;
            stop.record(&stream)?;
            stop.synchronize()?;
            direct.push(stop.elapsed_time_f32(&start)?);
        }

        let mut got = [POISON];
        out.copy_to(&mut got[..])?;
        if got[0] != expected {
            return Err(format!("n={n} direct call: got {}, expected {expected}", got[0]).into());
        }

        let graph = CapturedReduction::capture(&mut scope, &input, out_of_calls, &stream)?;
        let mut replayed = Vec::with_capacity(CALLS);
        for call in 0..CALLS {
            out.copy_from(&[POISON][..])?;
            // A copy from pageable memory may return before its DMA lands, and
            // `stream` does not wait for the legacy stream: wait here.
            CurrentContext::synchronize()?;
            start.record(&stream)?;
            graph.launch(&stream)?;
            stop.record(&stream)?;
            stop.synchronize()?;
            replayed.push(stop.elapsed_time_f32(&start)?);
            let mut got = [POISON];
            out.copy_to(&mut got[..])?;
            if got[0] != expected {
                return Err(format!("n={n} replay {call}: got {}, expected {expected}", got[0]).into());
            }
        }
        println!("{n:>9} {:>12.2} {:>12.2}", median_us(direct), median_us(replayed));
    }
    println!("every replay wrote the exact sum");
    Ok(())
}
