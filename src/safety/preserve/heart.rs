//! The heartbeat of a running test (see [`crate::safety::journal::beat`]):
//! a thread started when the journal is armed beats every
//! [`PERIOD`], off the timed path, until the test's restore begins. Each
//! beat reopens the journal for writing through the descriptor that holds
//! its lock and closes it again, so that no writable descriptor stays open
//! on the journal's file system (which may be remounted read-only under a
//! running test).

use crate::safety::birth::{Stamp, ctime_of};
use crate::safety::journal::Beat;
use crate::safety::journal::beat::write_beat;
use crate::sys::reopen::reopen;
use rustix::fs::OFlags;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a running test beats.
pub(super) const PERIOD: Duration = Duration::from_millis(50);

/// What one beat reads and where it writes.
pub(super) struct Beater {
    journal: File,
    room: u64,
    target: File,
    /// A block device's `/sys/dev/block/M:m/stat`.
    counter: Option<PathBuf>,
    boot_id: Option<String>,
    seq: u64,
    prev: Option<(Stamp, Option<u64>)>,
    peak_rate: Option<u64>,
}

impl Beater {
    /// A beater for the journal open on `journal` (its heartbeat block at
    /// `room`) and the target open on `target`; both are duplicated.
    pub(super) fn new(journal: &File, room: u64, target: &File) -> io::Result<Beater> {
        let meta = target.metadata()?;
        let counter = meta.file_type().is_block_device().then(|| {
            let (major, minor) = (
                rustix::fs::major(meta.rdev()),
                rustix::fs::minor(meta.rdev()),
            );
            PathBuf::from(format!("/sys/dev/block/{major}:{minor}/stat"))
        });
        Ok(Beater {
            journal: journal.try_clone()?,
            room,
            target: target.try_clone()?,
            counter,
            boot_id: boot_id(),
            seq: 0,
            prev: None,
            peak_rate: None,
        })
    }

    /// Writes one beat: now, and how far the target has been changed.
    pub(super) fn beat(&mut self) -> io::Result<()> {
        self.seq += 1;
        let wall = Stamp::now();
        let sectors = self.counter.as_ref().and_then(|c| sectors_written(c));
        if let (Some(now), Some((then, Some(before)))) = (sectors, self.prev) {
            let secs = (wall.nanos() - then.nanos()).max(1) as f64 / 1e9;
            let rate = (now.saturating_sub(before) as f64 / secs) as u64;
            self.peak_rate = Some(self.peak_rate.unwrap_or(0).max(rate));
        }
        let beat = Beat {
            seq: self.seq,
            wall,
            ctime: if self.counter.is_none() {
                ctime_of(&self.target)
            } else {
                None
            },
            sectors,
            prev_wall: self.prev.map(|p| p.0),
            prev_sectors: self.prev.and_then(|p| p.1),
            peak_rate: self.peak_rate,
            boot_id: self.boot_id.clone(),
        };
        self.prev = Some((wall, sectors));
        let writable = reopen(self.journal.as_fd(), OFlags::WRONLY)?;
        write_beat(&writable, self.room, &beat)
    }
}

/// The thread that beats while a test runs; stopped (and joined) by
/// [`Heart::stop`] or when dropped.
#[derive(Debug)]
pub(super) struct Heart {
    stop: Arc<AtomicBool>,
    thread: std::sync::Mutex<Option<JoinHandle<()>>>,
}

impl Heart {
    /// Beats once now (the journal is armed: a test killed before the next
    /// beat still has one), then every [`PERIOD`] on a thread of its own.
    pub(super) fn start(mut beater: Beater) -> Heart {
        let _ = beater.beat();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("iocurve-heartbeat".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::park_timeout(PERIOD);
                    if !flag.load(Ordering::Relaxed) {
                        let _ = beater.beat();
                    }
                }
            })
            .ok();
        Heart {
            stop,
            thread: std::sync::Mutex::new(thread),
        }
    }

    /// Stops the beats and waits for the thread: the test is over.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let handle = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(h) = handle {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for Heart {
    fn drop(&mut self) {
        self.stop();
    }
}

/// This boot's id: counters since boot compare only within one.
pub(super) fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
}

/// Sectors written since boot, field 7 of a block device's `stat`.
pub(super) fn sectors_written(stat: &std::path::Path) -> Option<u64> {
    std::fs::read_to_string(stat)
        .ok()?
        .split_whitespace()
        .nth(6)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::journal::beat::last_beat;

    #[test]
    fn beats_follow_the_target_and_stop_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let (j, t) = (dir.path().join("j"), dir.path().join("t"));
        std::fs::write(&j, vec![0u8; 8192]).unwrap();
        std::fs::write(&t, b"target").unwrap();
        let (journal, target) = (File::open(&j).unwrap(), File::open(&t).unwrap());
        let heart = Heart::start(Beater::new(&journal, 4096, &target).unwrap());
        std::thread::sleep(PERIOD * 2);
        heart.stop();
        let last = last_beat(&journal, 4096).unwrap();
        assert!(last.seq >= 2, "{last:?}");
        assert_eq!(last.ctime, ctime_of(&target));
        assert!(last.prev_wall.is_some_and(|p| p < last.wall));
        std::thread::sleep(PERIOD * 2);
        assert_eq!(last_beat(&journal, 4096).unwrap().seq, last.seq, "stopped");
    }
}
