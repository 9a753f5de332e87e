//! Which workspace each stream's launches use: the bookkeeping of the GPU
//! backend's stream workspaces, apart from the driver (so that it is
//! tested without a GPU).
//!
//! A workspace (per-block partials and tickets that every launch leaves at
//! zero) must never be used by two launches that can run at once. Launches
//! on one stream run in order, so a workspace is *lent* to one stream (a
//! [`StreamKey`]) and every launch on that stream uses it; it goes back to
//! the *idle* workspaces only once no launch that used it can still run
//! (the caller has waited for them, or an event recorded after them has
//! completed), and only then may another stream have it.

use crate::error::Result;
use std::fmt::Debug;
use std::sync::Arc;
use std::thread::ThreadId;

/// `CU_STREAM_LEGACY`: the handle of the context's legacy default stream,
/// as is the null handle.
pub(crate) const LEGACY_STREAM: usize = 0x1;
/// `CU_STREAM_PER_THREAD`: the handle of the calling host thread's default
/// stream, a different stream on each thread.
pub(crate) const PER_THREAD_STREAM: usize = 0x2;

/// One stream of a context, as launches see it: the stream a handle names
/// depends on the host thread that launches for `CU_STREAM_PER_THREAD`.
/// Launches with one key run in order; launches with two keys may overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamKey {
    /// The context's legacy default stream: the null handle and
    /// `CU_STREAM_LEGACY` alike (it also waits for, and is waited for by,
    /// the other blocking streams; that only adds order).
    Legacy,
    /// The per-thread default stream of one host thread. A thread's id is
    /// never reused, so the key names no other thread's stream, even after
    /// the thread has ended.
    PerThread(ThreadId),
    /// A stream made by `cuStreamCreate` (or a runtime over it), by handle:
    /// whoever lends it a workspace keeps it from being destroyed, and its
    /// handle from being given to a new stream, while the workspace is lent.
    Made(usize),
}

impl StreamKey {
    /// The stream `handle` names when the calling thread launches on it.
    pub(crate) fn on_this_thread(handle: usize) -> Self {
        match handle {
            0 | LEGACY_STREAM => StreamKey::Legacy,
            PER_THREAD_STREAM => StreamKey::PerThread(std::thread::current().id()),
            made => StreamKey::Made(made),
        }
    }

    /// Whether the calling thread reaches this stream by its handle (every
    /// stream but another thread's per-thread stream).
    pub(crate) fn is_reachable_here(self) -> bool {
        match self {
            StreamKey::PerThread(thread) => thread == std::thread::current().id(),
            StreamKey::Legacy | StreamKey::Made(_) => true,
        }
    }
}

/// What keeps a lent workspace's stream alive (the cudarc interop's
/// `Arc<CudaStream>`; a scope borrows its streams instead).
pub(crate) type Hold = Arc<dyn Debug + Send + Sync>;

/// A workspace lent to one stream, which launches enqueued there may
/// still use.
#[derive(Debug)]
pub(crate) struct Lent<W> {
    pub(crate) key: StreamKey,
    /// The handle the launches were enqueued with (`CU_STREAM_PER_THREAD`
    /// for every thread's own).
    pub(crate) handle: usize,
    pub(crate) workspace: W,
    /// Kept for its drop only: let go of when the workspace is taken back.
    _hold: Option<Hold>,
}

/// The workspaces lent to streams, and the idle ones.
#[derive(Debug)]
pub(crate) struct Lending<W> {
    lent: Vec<Lent<W>>,
    idle: Vec<W>,
}

impl<W> Default for Lending<W> {
    fn default() -> Self {
        Lending {
            lent: Vec::new(),
            idle: Vec::new(),
        }
    }
}

impl<W> Lending<W> {
    /// The workspace lent to `key`, if any.
    pub(crate) fn get_mut(&mut self, key: StreamKey) -> Option<&mut W> {
        self.lent
            .iter_mut()
            .find(|lent| lent.key == key)
            .map(|lent| &mut lent.workspace)
    }

    /// The workspace of `key` (whose launches are enqueued with `handle`):
    /// the one lent to it, else an idle one, else a new one (`make`), which
    /// stays lent to `key` until taken back. `hold` is kept while it is
    /// (a workspace already lent keeps the hold it has).
    pub(crate) fn lend(
        &mut self,
        key: StreamKey,
        handle: usize,
        hold: Option<Hold>,
        make: impl FnOnce() -> Result<W>,
    ) -> Result<&mut W> {
        let index = match self.lent.iter().position(|lent| lent.key == key) {
            Some(index) => index,
            None => {
                let workspace = match self.idle.pop() {
                    Some(idle) => idle,
                    None => make()?,
                };
                self.lent.push(Lent {
                    key,
                    handle,
                    workspace,
                    _hold: hold,
                });
                self.lent.len().saturating_sub(1)
            }
        };
        self.lent
            .get_mut(index)
            .map(|lent| &mut lent.workspace)
            .ok_or_else(|| crate::error::Error::internal("a workspace lost from the lending table"))
    }

    /// Takes back each workspace lent to a stream other than `except` whose
    /// launches `done` says have all completed (a check that must not
    /// wait): idle again, for the next streams, and its hold let go of. On
    /// `done`'s first error, returns it, with that workspace and those not
    /// yet asked still lent.
    pub(crate) fn take_back_done(
        &mut self,
        except: Option<StreamKey>,
        mut done: impl FnMut(&mut W) -> Result<bool>,
    ) -> Result<()> {
        let mut index = 0;
        while let Some(lent) = self.lent.get_mut(index) {
            if Some(lent.key) != except && done(&mut lent.workspace)? {
                let lent = self.lent.swap_remove(index);
                self.idle.push(lent.workspace);
            } else {
                index = index.saturating_add(1);
            }
        }
        Ok(())
    }

    /// Takes back every lent workspace: the caller has waited for all their
    /// launches.
    pub(crate) fn take_back_all(&mut self) {
        self.idle.extend(self.lent.drain(..).map(|lent| lent.workspace));
    }

    /// Takes `key`'s workspace out of the lending for good (with its
    /// hold), if it has one.
    pub(crate) fn remove(&mut self, key: StreamKey) -> Option<Lent<W>> {
        let index = self.lent.iter().position(|lent| lent.key == key)?;
        Some(self.lent.swap_remove(index))
    }

    /// The lent workspaces.
    pub(crate) fn lent(&self) -> &[Lent<W>] {
        &self.lent
    }

    /// The idle workspaces.
    pub(crate) fn idle_mut(&mut self) -> &mut [W] {
        &mut self.idle
    }

    /// How many workspaces are lent, and how many idle.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.lent.len(), self.idle.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use rand::{Rng, SeedableRng};
    use std::cell::Cell;

    /// A workspace: its number, and how many launches of the stream it is
    /// lent to are still running (as the stand-in for an event query).
    #[derive(Debug)]
    struct Fake {
        id: usize,
        running: usize,
    }

    fn made(count: &Cell<usize>) -> impl FnOnce() -> Result<Fake> + '_ {
        move || {
            let id = count.get();
            count.set(id + 1);
            Ok(Fake { id, running: 0 })
        }
    }

    #[test]
    fn a_stream_keeps_its_workspace_while_busy_and_no_other_gets_it() {
        let count = Cell::new(0);
        let mut lending = Lending::default();
        let (a, b) = (StreamKey::Made(0x1000), StreamKey::Made(0x2000));
        let first = lending.lend(a, 0x1000, None, made(&count)).unwrap();
        first.running = 1;
        let id = first.id;
        // Same stream: the same workspace, busy or not, and nothing made.
        assert_eq!(lending.lend(a, 0x1000, None, made(&count)).unwrap().id, id);
        assert_eq!(count.get(), 1);
        // Another stream while `a` is busy: a new workspace.
        lending.take_back_done(Some(b), |w| Ok(w.running == 0)).unwrap();
        let other = lending.lend(b, 0x2000, None, made(&count)).unwrap().id;
        assert_ne!(other, id);
        assert_eq!(lending.counts(), (2, 0));
        // Once `a`'s launches are done, a third stream gets its workspace.
        lending.get_mut(a).unwrap().running = 0;
        lending.get_mut(b).unwrap().running = 1;
        let c = StreamKey::Made(0x3000);
        lending.take_back_done(Some(c), |w| Ok(w.running == 0)).unwrap();
        assert_eq!(lending.lend(c, 0x3000, None, made(&count)).unwrap().id, id);
        assert_eq!(count.get(), 2);
        assert_eq!(lending.counts(), (2, 0));
    }

    #[test]
    fn the_stream_being_lent_is_not_taken_back() {
        let count = Cell::new(0);
        let mut lending = Lending::default();
        let a = StreamKey::Made(0x1000);
        lending.lend(a, 0x1000, None, made(&count)).unwrap();
        lending.take_back_done(Some(a), |_| Ok(true)).unwrap();
        assert_eq!(lending.counts(), (1, 0));
        lending.take_back_done(None, |_| Ok(true)).unwrap();
        assert_eq!(lending.counts(), (0, 1));
    }

    #[test]
    fn a_hold_is_let_go_of_when_its_workspace_is_taken_back() {
        let count = Cell::new(0);
        let mut lending = Lending::default();
        let stream = Arc::new(7u32);
        let hold: Hold = stream.clone();
        lending
            .lend(StreamKey::Made(0x1000), 0x1000, Some(hold), made(&count))
            .unwrap()
            .running = 1;
        lending.take_back_done(None, |w| Ok(w.running == 0)).unwrap();
        assert_eq!(Arc::strong_count(&stream), 2, "held while busy");
        lending.take_back_done(None, |_| Ok(true)).unwrap();
        assert_eq!(Arc::strong_count(&stream), 1, "let go of once done");
    }

    #[test]
    fn an_error_leaves_the_workspaces_not_yet_asked_lent() {
        let count = Cell::new(0);
        let mut lending = Lending::default();
        for handle in [0x1000, 0x2000, 0x3000] {
            lending
                .lend(StreamKey::Made(handle), handle, None, made(&count))
                .unwrap();
        }
        let refused = lending.take_back_done(None, |_| Err(Error::internal("refused")));
        assert!(refused.is_err());
        assert_eq!(lending.counts(), (3, 0));
    }

    #[test]
    fn default_streams_are_keyed_by_what_they_are() {
        assert_eq!(StreamKey::on_this_thread(0), StreamKey::Legacy);
        assert_eq!(StreamKey::on_this_thread(LEGACY_STREAM), StreamKey::Legacy);
        assert_eq!(StreamKey::on_this_thread(0x7f00_1000), StreamKey::Made(0x7f00_1000));
        let here = StreamKey::on_this_thread(PER_THREAD_STREAM);
        assert_eq!(here, StreamKey::on_this_thread(PER_THREAD_STREAM));
        assert!(here.is_reachable_here());
        let there = std::thread::spawn(|| StreamKey::on_this_thread(PER_THREAD_STREAM))
            .join()
            .unwrap();
        assert_ne!(here, there, "each thread's per-thread stream is its own");
        assert!(!there.is_reachable_here());
        assert!(StreamKey::Legacy.is_reachable_here());
    }

    #[test]
    fn per_thread_streams_of_two_threads_get_two_workspaces() {
        let count = Cell::new(0);
        let mut lending = Lending::default();
        let here = StreamKey::on_this_thread(PER_THREAD_STREAM);
        let there = std::thread::spawn(|| StreamKey::on_this_thread(PER_THREAD_STREAM))
            .join()
            .unwrap();
        lending
            .lend(here, PER_THREAD_STREAM, None, made(&count))
            .unwrap()
            .running = 1;
        lending.take_back_done(Some(there), |w| Ok(w.running == 0)).unwrap();
        lending.lend(there, PER_THREAD_STREAM, None, made(&count)).unwrap();
        assert_eq!(count.get(), 2);
    }

    /// Random streams launching and finishing: no workspace is ever lent to
    /// two streams, none goes to another stream while a launch that used it
    /// runs, a stream keeps its workspace while it has work, and there are
    /// never more workspaces than the most streams with work at once.
    #[test]
    fn random_launches_never_share_a_busy_workspace_and_stay_bounded() {
        let seed: u64 = rand::random();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let count = Cell::new(0);
        let mut lending: Lending<Fake> = Lending::default();
        // Per workspace: the stream whose launches may still use it.
        let mut user: Vec<Option<usize>> = Vec::new();
        let mut most_busy = 0;
        for step in 0..20_000 {
            if rng.gen_bool(0.7) {
                // A launch on a random stream (a lend, as each `_into` call's).
                let stream = rng.gen_range(0..24usize);
                let key = StreamKey::Made(0x1000 * (stream + 1));
                lending.take_back_done(Some(key), |w| Ok(w.running == 0)).unwrap();
                let had = lending.get_mut(key).map(|w| w.id);
                let w = lending.lend(key, 0x1000, None, made(&count)).unwrap();
                if let Some(id) = had {
                    assert_eq!(w.id, id, "step {step}: a stream keeps its workspace (seed {seed})");
                }
                user.resize(count.get(), None);
                if let Some(other) = user[w.id].filter(|&s| s != stream) {
                    panic!(
                        "step {step}: workspace {} of busy stream {other} lent to {stream} (seed {seed})",
                        w.id
                    );
                }
                w.running += 1;
                user[w.id] = Some(stream);
            } else {
                // A random busy stream's launches complete.
                let busy: Vec<usize> = lending
                    .lent()
                    .iter()
                    .filter(|l| l.workspace.running > 0)
                    .map(|l| l.workspace.id)
                    .collect();
                if let Some(&id) = busy.get(rng.gen_range(0..busy.len().max(1))) {
                    let lent = lending.lent.iter_mut().find(|l| l.workspace.id == id).unwrap();
                    lent.workspace.running = 0;
                    user[id] = None;
                }
            }
            let busy = lending.lent().iter().filter(|l| l.workspace.running > 0).count();
            most_busy = most_busy.max(busy);
            let (lent, idle) = lending.counts();
            assert!(
                lent + idle <= most_busy.max(1),
                "step {step}: {lent} lent and {idle} idle workspaces, at most {most_busy} streams busy at once (seed {seed})"
            );
            let mut keys: Vec<_> = lending.lent().iter().map(|l| format!("{:?}", l.key)).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(
                keys.len(),
                lent,
                "step {step}: a stream lent two workspaces (seed {seed})"
            );
        }
        assert!(most_busy > 8, "the run kept more streams busy than the old limit of 8");
    }
}
