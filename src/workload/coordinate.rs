//! The one place a measurement meets other processes: under MPI every rank
//! holds at the start of each counted pass until all ranks are there, and
//! may be stopped when the first rank finishes (`--stonewall`).
//!
//! The workload floor cannot know MPI (the cluster floor sits beside it and
//! imports it), so the cluster installs a [`Coordinator`] here once, before
//! any measurement; without one every measurement runs alone, as it always
//! did, at the cost of one load of a `OnceLock` per measurement.

use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;

/// What a counted pass looks like to the other ranks.
pub trait Coordinator: Send + Sync {
    /// Called once per measurement by every rank, right before its counted
    /// pass (also when that pass will not run, so that no rank waits for
    /// one that never comes); returns when every rank has arrived.
    fn before_counted(&self, label: &str);

    /// Runs the counted pass (`pass`, which says whether this rank's
    /// measurement failed), watching the other ranks meanwhile. `pass`
    /// calls the `ready` it is given exactly once, when everything is
    /// built and the clock is about to start (from any thread): every rank
    /// is held there until all are, and leaves at one scheduled instant.
    /// The coordinator sets `stop` when the pass must end early because of
    /// the other ranks (a failure on any rank, `--stonewall` once another
    /// rank finished); the pass stops on the user's signal by itself, as
    /// it does alone, so a job of one rank needs no watcher.
    /// `moved` reads this rank's bytes so far. Returns the bytes this rank
    /// had moved when it learned that the first rank finished (its own
    /// total when it finished first).
    fn during_counted(
        &self,
        label: &str,
        stop: &AtomicBool,
        moved: &(dyn Fn() -> u64 + Sync),
        pass: &mut dyn FnMut(&(dyn Fn() + Sync)) -> bool,
    ) -> u64;
}

static COORDINATOR: OnceLock<&'static dyn Coordinator> = OnceLock::new();

/// Installs the coordinator for the rest of the process (the first call
/// wins).
pub fn install(coordinator: &'static dyn Coordinator) {
    let _ = COORDINATOR.set(coordinator);
}

/// The installed coordinator, if this process is a rank of a job.
pub fn current() -> Option<&'static dyn Coordinator> {
    COORDINATOR.get().copied()
}
