//! The journal every `preserve` unit test starts from: a file target with
//! random bytes, journalled and then overwritten as a write test would, and
//! the helpers that end its test the way a kill does.

use super::save::{Preserved, new_meta, write_journal};
use crate::safety::identity::Identity;
use crate::safety::journal::Region;
use crate::safety::lock::{self, Lock};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A file target with random bytes, a journal of two regions of it taken
/// with 4 KiB chunks, and the file then overwritten as a test would.
pub(super) struct Setup {
    pub(super) _dir: tempfile::TempDir,
    pub(super) target: PathBuf,
    pub(super) journals: PathBuf,
    pub(super) original: Vec<u8>,
    pub(super) written: Vec<u8>,
    pub(super) journal: PathBuf,
}

pub(super) const SIZE: usize = 40_000;

pub(super) fn setup(seed: u64) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("disk.img");
    let journals = dir.path().join("journals");
    std::fs::create_dir(&journals).unwrap();
    let mut rng = fastrand::Rng::with_seed(seed);
    let original: Vec<u8> = (0..SIZE).map(|_| rng.u8(..)).collect();
    std::fs::write(&target, &original).unwrap();
    let regions = vec![
        Region {
            offset: 4096,
            length: 9000,
        },
        Region {
            offset: 20480,
            length: (SIZE - 20480) as u64,
        },
    ];
    let meta = new_meta(Identity::of_path(&target).unwrap(), regions.clone(), 4096);
    let p = write_journal(
        &opened(&target),
        &target,
        meta,
        &journals,
        &AtomicBool::new(false),
    )
    .unwrap();
    let journal = ended(p);
    let mut written = original.clone();
    for r in &regions {
        written[r.offset as usize..(r.offset + r.length) as usize].fill(0xEE);
    }
    std::fs::write(&target, &written).unwrap();
    Setup {
        _dir: dir,
        target,
        journals,
        original,
        written,
        journal,
    }
}

/// Ends the test that made `p`, as a kill would: its lock is dropped.
/// Another test thread that forks meanwhile holds a copy of the
/// descriptor (and so the lock) until its child execs, so wait for
/// that too: the tests must not depend on the machine's pace.
pub(super) fn ended(p: Preserved) -> PathBuf {
    let journal = p.journal.clone();
    drop(p);
    unlocked(&journal);
    journal
}

/// Waits until no copy of a dropped descriptor holds `path`'s lock.
pub(super) fn unlocked(path: &Path) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let file = File::open(path).unwrap();
        if lock::try_exclusive(&file).unwrap() == Lock::Taken {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The target opened as a test holds it (read-write).
pub(super) fn opened(path: &Path) -> File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap()
}

pub(super) fn contents(s: &Setup) -> Vec<u8> {
    std::fs::read(&s.target).unwrap()
}
