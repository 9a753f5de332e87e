//! The block barrier and the warp shuffles: each waits for the threads it
//! names, as the hardware does, and faults where the hardware would hang
//! or give garbage (threads at different barriers, a lane missing from the
//! member mask, a deadlock).

use super::launch::{abort_thread, current, Phase};
use std::panic::Location;

/// The block barrier (`bar.sync 0`) at `site`.
pub(crate) fn barrier(site: &'static Location<'static>) {
    let (ids, launch) = current();
    let mut state = launch.lock();
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
    state.phase[ids.thread as usize] = Phase::AtBarrier(site);
    state.barrier_arrived += 1;
    if state.barrier_arrived == launch.block_threads {
        if let Some(other) = state.phase.iter().position(|&p| p != Phase::AtBarrier(site)) {
            let message = format!(
                "threads wait at different barriers: this one at {site}, thread {other} {}",
                state.phase[other]
            );
            launch.fault_in(state, ids, message);
        }
        state.barrier_arrived = 0;
        state.barrier_generation += 1;
        state.phase.fill(Phase::Running);
        drop(state);
        launch.block_event.notify_all();
        return;
    }
    if let Some(stuck) = state.stuck() {
        launch.fault_in(state, ids, format!("a barrier not every thread reaches: {stuck}"));
    }
    let generation = state.barrier_generation;
    while state.barrier_generation == generation && state.fault.is_none() {
        state = launch.wait(state, &launch.block_event);
    }
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
}

/// `shfl.sync.bfly.b32 d, value, lane_mask, clamp, member_mask` at `site`.
pub(crate) fn shuffle_butterfly(
    value: u32,
    lane_mask: u32,
    clamp: u32,
    member_mask: u32,
    site: &'static Location<'static>,
) -> u32 {
    let (ids, launch) = current();
    let (warp, lane) = ((ids.thread / 32) as usize, ids.thread % 32);
    let lanes_in_warp = (launch.block_threads - 32 * warp as u32).min(32);
    let existing = if lanes_in_warp == 32 {
        u32::MAX
    } else {
        (1 << lanes_in_warp) - 1
    };
    let mut state = launch.lock();
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
    if member_mask & (1 << lane) == 0 {
        let message = format!(
            "shfl.sync at {site} with member mask {member_mask:#010x}, which leaves out the calling lane {lane}"
        );
        launch.fault_in(state, ids, message);
    }
    if member_mask & !existing != 0 {
        let message = format!(
            "shfl.sync at {site} with member mask {member_mask:#010x} names lanes that do not exist: warp {warp} has {lanes_in_warp} threads"
        );
        launch.fault_in(state, ids, message);
    }
    let exchange = &mut state.warps[warp];
    if exchange.arrived != 0 && (exchange.member_mask != member_mask || exchange.site != Some(site)) {
        let message = format!(
            "lanes of warp {warp} disagree: lane {lane} runs the shuffle at {site} with mask {member_mask:#010x}, others the one at {} with mask {:#010x}",
            exchange.site.map_or("?".to_string(), |s| s.to_string()),
            exchange.member_mask
        );
        launch.fault_in(state, ids, message);
    }
    exchange.member_mask = member_mask;
    exchange.site = Some(site);
    exchange.arrived |= 1 << lane;
    exchange.values[lane as usize] = value;
    exchange.lane_masks[lane as usize] = lane_mask;
    exchange.clamps[lane as usize] = clamp;
    state.phase[ids.thread as usize] = Phase::AtShuffle(site);

    let exchange = state.warps[warp];
    if exchange.arrived == member_mask {
        let mut results = [0u32; 32];
        for reader in (0..32).filter(|l| member_mask & (1 << l) != 0) {
            let source = butterfly_source(
                reader,
                exchange.lane_masks[reader as usize],
                exchange.clamps[reader as usize],
            );
            if member_mask & (1 << source) == 0 {
                let message = format!(
                    "shfl.sync at {site}: lane {reader} reads lane {source}, which is not in the member mask {member_mask:#010x} (its value is undefined)"
                );
                launch.fault_in(state, ids, message);
            }
            results[reader as usize] = exchange.values[source as usize];
            state.phase[warp * 32 + reader as usize] = Phase::Running;
        }
        let exchange = &mut state.warps[warp];
        exchange.results = results;
        exchange.arrived = 0;
        exchange.generation += 1;
        let result = results[lane as usize];
        drop(state);
        launch.warp_event[warp].notify_all();
        return result;
    }
    if let Some(stuck) = state.stuck() {
        launch.fault_in(
            state,
            ids,
            format!("a shuffle not every lane of the mask reaches: {stuck}"),
        );
    }
    let generation = state.warps[warp].generation;
    while state.warps[warp].generation == generation && state.fault.is_none() {
        state = launch.wait(state, &launch.warp_event[warp]);
    }
    if state.fault.is_some() {
        drop(state);
        abort_thread();
    }
    state.warps[warp].results[lane as usize]
}

/// The lane a butterfly shuffle reads for `lane`: PTX's `shfl.sync.bfly`
/// with `c = clamp` (segment mask in bits 8..12, clamp in bits 0..4); a
/// source past the segment's last lane means "keep your own value".
fn butterfly_source(lane: u32, lane_mask: u32, clamp: u32) -> u32 {
    let segment_mask = (clamp >> 8) & 0x1f;
    let max_lane = (lane & segment_mask) | (clamp & 0x1f & !segment_mask);
    let source = lane ^ (lane_mask & 0x1f);
    if source <= max_lane {
        source
    } else {
        lane
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn butterfly_source_follows_ptx() {
        assert_eq!(butterfly_source(5, 1, 0x1f), 4);
        assert_eq!(butterfly_source(5, 16, 0x1f), 21);
        // Width 8 (c = 0x1807): lanes stay within their 8-lane segment.
        assert_eq!(butterfly_source(5, 16, 0x1807), 5);
        assert_eq!(butterfly_source(5, 2, 0x1807), 7);
    }
}
