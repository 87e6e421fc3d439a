//! A counted pass on every rank at once: held until all are at it, then
//! watched, on a thread of its own, for a rank that finished (the
//! stonewall and the "first done" figure), a rank that failed, and this
//! rank's own measurement standing still (a hung mount: the one silence
//! the beat thread cannot see).

use super::job::Job;
use super::wire::Tag;
use crate::interrupt;
use crate::workload::coordinate::Coordinator;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the watcher looks for a finished rank. It shares a core with
/// the measuring thread when the launcher binds a rank to one (Open MPI
/// does by default): waking every 200 µs cost 13% of 400k IOPS there,
/// every 1 ms 4%, every 5 ms nothing measurable. A rank that finishes
/// sends its `Done` at once, so `--stonewall` and the first-done figure
/// are late by one look at most, plus the scheduler's wake-up: measured
/// on two loaded cores, a median 4.0 ms, at most 18 ms (README).
const WATCH_EVERY: Duration = Duration::from_millis(3);

/// What the watcher learned while the pass ran.
struct Watched {
    /// Which ranks said they finished, by rank.
    done: Mutex<Vec<bool>>,
    at_first_done: AtomicU64,
    peer_failed: AtomicBool,
}

impl Job {
    /// Tells every other rank this one finished its counted pass (and
    /// whether it failed).
    fn say_done(&self, failed: bool) {
        for rank in (0..self.size()).filter(|r| *r != self.rank()) {
            self.send(rank, Tag::Done, &[u8::from(failed)]);
        }
    }

    /// Waits until every rank not heard yet (nor lost) said it finished.
    /// True when any rank failed.
    fn await_done(&self, watched: &Watched) -> bool {
        let mut any_failed = watched.peer_failed.load(Ordering::Relaxed);
        for rank in (0..self.size()).filter(|r| *r != self.rank()) {
            if watched.done.lock().unwrap()[rank as usize] {
                continue;
            }
            match self.receive(Some(rank), Tag::Done) {
                Some((_, bytes)) => any_failed |= bytes.first() == Some(&1),
                None if self.live.is_lost(rank) => continue,
                None => break,
            }
        }
        any_failed
    }

    /// One look of the watcher: a `Done` from another rank (the first
    /// stops this rank's pass under `--stonewall`, any failure stops it).
    fn look_for_done(&self, watched: &Watched, stop: &AtomicBool, moved: &dyn Fn() -> u64) {
        if self.heed_end() {
            stop.store(true, Ordering::Relaxed);
        }
        let Some((from, bytes)) = self.wire.try_receive(None, Tag::Done) else {
            return;
        };
        watched.done.lock().unwrap()[from as usize] = true;
        let _ = watched.at_first_done.compare_exchange(
            u64::MAX,
            moved(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        let failed = bytes.first() == Some(&1);
        watched.peer_failed.fetch_or(failed, Ordering::Relaxed);
        if self.options().stonewall || failed {
            stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Whether this rank's measurement stands still: bytes moved once, then
/// none for the rank timeout.
struct Stall {
    last: u64,
    since: Instant,
    reported: bool,
}

impl Stall {
    fn new() -> Stall {
        Stall {
            last: 0,
            since: Instant::now(),
            reported: false,
        }
    }

    /// True once, when the pass has stood still for `timeout`.
    fn check(&mut self, moved: u64, timeout: Duration) -> Option<Duration> {
        if moved != self.last || moved == 0 {
            // Nothing moved yet may be a command that does not count
            // here (`sustain`); a stall is told only after a start.
            self.last = moved;
            self.since = Instant::now();
            return None;
        }
        let still = self.since.elapsed();
        if self.reported || still < timeout {
            return None;
        }
        self.reported = true;
        Some(still)
    }
}

impl Coordinator for Job {
    fn before_counted(&self, label: &str) {
        self.arrive(label);
    }

    fn during_counted(
        &self,
        label: &str,
        stop: &AtomicBool,
        moved: &(dyn Fn() -> u64 + Sync),
        pass: &mut dyn FnMut(&(dyn Fn() + Sync)) -> bool,
    ) -> u64 {
        if self.abandoned() || self.size() == 1 {
            // No one to wait or watch for (and, alone, no watcher thread
            // to take time from the measuring one); a signal reaches the
            // pass through its own flag.
            pass(&|| {});
            return moved();
        }
        // Until `ready` has run, the step is in progress on the thread
        // that called it; the watcher looks only after.
        let armed = AtomicBool::new(false);
        let called = AtomicBool::new(false);
        let ready = || {
            if !called.swap(true, Ordering::AcqRel) {
                self.arrive_then(label, true);
                armed.store(true, Ordering::Release);
            }
        };
        let over = AtomicBool::new(false);
        let watched = Watched {
            done: Mutex::new(vec![false; self.size() as usize]),
            at_first_done: AtomicU64::new(u64::MAX),
            peer_failed: AtomicBool::new(false),
        };
        let failed = std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut stall = Stall::new();
                while !over.load(Ordering::Acquire) {
                    if !self.abandoned() && armed.load(Ordering::Acquire) {
                        self.look_for_done(&watched, stop, moved);
                        if let Some(after) = stall.check(moved(), self.live.timeout()) {
                            self.report_stall(after);
                        }
                    }
                    std::thread::sleep(WATCH_EVERY);
                }
            });
            let failed = pass(&ready);
            // At once, not after the watcher's next look: the others'
            // stonewall is late by as little as can be.
            if armed.load(Ordering::Acquire) {
                self.say_done(failed);
            }
            over.store(true, Ordering::Release);
            failed
        });
        // A pass that never got as far keeps the ranks in step all the same.
        if !armed.load(Ordering::Acquire) {
            ready();
            self.say_done(failed);
        }
        let first = match watched.at_first_done.load(Ordering::Relaxed) {
            u64::MAX => moved(),
            seen => seen,
        };
        if self.await_done(&watched) || failed {
            // A rank failed: every rank ends its command as if stopped, so
            // that all of them reach the end together and rank 0 reports
            // the failure.
            interrupt::stop_flag().store(true, Ordering::SeqCst);
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_told_once_after_bytes_moved_then_stood_still() {
        let timeout = Duration::from_millis(30);
        let mut stall = Stall::new();
        // Nothing moved yet (a command that does not count here): never.
        std::thread::sleep(timeout * 2);
        assert_eq!(stall.check(0, timeout), None);
        assert_eq!(stall.check(4096, timeout), None);
        std::thread::sleep(timeout / 3);
        assert_eq!(stall.check(8192, timeout), None, "still moving");
        std::thread::sleep(timeout + Duration::from_millis(5));
        let told = stall.check(8192, timeout).expect("stood still");
        assert!(told >= timeout, "{told:?}");
        assert_eq!(stall.check(8192, timeout), None, "told once");
    }
}
