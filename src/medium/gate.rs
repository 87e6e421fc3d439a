//! The write gate: the one way to a descriptor that can write to a target.
//!
//! A benchmark that may touch the only copy of someone's photos must not
//! depend on every command remembering to journal before it writes. So the
//! safety check in [`super::open()`] decides, once, what a target's writes
//! need, and the writable descriptor lives only inside a [`WriteGuard`]:
//!
//! - a scratch file iocurve created, or a simulated card: writable at once;
//! - `--destructive`: writable at once (the user accepted the loss);
//! - `--preserve`: the writable, exclusive descriptor is opened (so nothing
//!   can claim the device meanwhile) but its permit stays sealed until
//!   [`WriteGate::arm`] has copied every region the test will write into an
//!   armed journal;
//! - anything else: read-only.
//!
//! Until armed, a command only sees the read-only descriptor, so a write it
//! forgot to announce fails with `EBADF` instead of destroying data. The
//! guard restores the journal when the command asks (to record the outcome)
//! and, failing that, when it is dropped: after an early `?`, an error or a
//! panic that unwinds. A SIGKILL leaves the armed journal for `iocurve
//! recover`.
//!
//! Arming may happen more than once: a detector that learns where it must
//! write while running (the capacity search's later rounds) arms again with
//! the new regions, and only the bytes no journal holds yet are copied, into
//! a journal file of their own. Each file is a whole journal with its own
//! commit point, so a crash while the second is filling leaves the first
//! armed and the second discarded, exactly as for a single journal; an
//! append to one file would need a second commit protocol for the same
//! promise. The journals are written back latest first.

use crate::error::{IoFailure, usage};
use crate::interrupt;
use crate::safety::journal::Region;
use crate::safety::preserve::{self, Preserved};
use crate::sys::test_pause::{Moment, pause};
use anyhow::Result;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why writes through a [`WriteGuard`] are allowed.
#[derive(Debug)]
pub enum Permit {
    /// iocurve's own scratch file, removed afterwards.
    Scratch,
    /// A `sim:` card: memory, nobody's data.
    Simulated,
    /// `--destructive`: the user accepted that the data is lost.
    Destructive,
    /// `--preserve`, before the journal: the descriptor is held (nothing
    /// else can claim the device) but permits nothing yet.
    Sealed { journal_dir: PathBuf },
    /// `--preserve`: these regions are in armed journals.
    Preserved {
        journal_dir: PathBuf,
        /// In the order they were armed.
        journals: Vec<Preserved>,
        /// Everything journalled, sorted and merged.
        regions: Vec<Region>,
    },
    /// The journal was written back: the guard is on its way out.
    Restored,
}

/// The only holder of a descriptor that writes to a target.
pub struct WriteGuard {
    file: File,
    permit: Permit,
    /// The name the target was given, for messages only: everything is
    /// done through `file`.
    path: PathBuf,
}

impl WriteGuard {
    /// The writable descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// The writable file (for fills and syncs).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// A second writable descriptor on the same medium, through the page
    /// cache, with `flags` (e.g. O_DSYNC); it shares this guard's permit, so
    /// it must not outlive the guard's use.
    pub fn reopen_cached(&self, flags: i32) -> Result<File> {
        // The object this guard holds, never the name: a name can be given
        // to another file while the test runs.
        let flags = rustix::fs::OFlags::RDWR | rustix::fs::OFlags::from_bits_retain(flags as u32);
        crate::sys::reopen::reopen(self.file.as_fd(), flags).map_err(|e| {
            IoFailure::new(
                format!("cannot open {} for writing: {e}", self.path.display()),
                Some(e),
            )
            .into()
        })
    }

    /// Journals what of `wanted` (sorted and merged) no journal holds yet,
    /// in a journal of its own, and allows writes there once it is armed.
    fn journal(&mut self, wanted: Vec<Region>) -> Result<()> {
        let (dir, part, new) = match &self.permit {
            Permit::Sealed { journal_dir } => (journal_dir.clone(), 0, wanted),
            Permit::Preserved {
                journal_dir,
                journals,
                regions,
            } => (
                journal_dir.clone(),
                u32::try_from(journals.len()).unwrap_or(u32::MAX),
                uncovered(&wanted, regions),
            ),
            _ => return Ok(()),
        };
        if new.is_empty() {
            return Ok(());
        }
        let stop = interrupt::stop_flag();
        let journal = preserve::backup(&self.file, &self.path, new.clone(), &dir, stop, part)?;
        match &mut self.permit {
            Permit::Preserved {
                journals, regions, ..
            } => {
                journals.push(journal);
                *regions = merge([std::mem::take(regions), new].concat());
            }
            _ => {
                interrupt::set_journal(Some(journal.journal.clone()));
                self.permit = Permit::Preserved {
                    journal_dir: dir,
                    journals: vec![journal],
                    regions: new,
                };
            }
        }
        Ok(())
    }

    /// Writes the journals back, latest first, and verifies them; `None`
    /// when nothing was journalled. The guard permits nothing afterwards.
    /// The first failure stops: the journals not yet written back stay
    /// armed, and `recover` of the one named finishes them all.
    fn restore(&mut self) -> Option<Result<Restoration>> {
        let permit = std::mem::replace(&mut self.permit, Permit::Restored);
        let Permit::Preserved { journals, .. } = permit else {
            self.permit = permit;
            return None;
        };
        interrupt::set_restoring(true);
        let mut done = Restoration {
            bytes: 0,
            unchanged: 0,
            kept: 0,
            name_moved: false,
            save_time: journals.iter().map(|j| j.save_time).sum(),
            restore_time: Duration::ZERO,
            journal_left: Vec::new(),
        };
        // Every journal's test bytes are hashed before the first is
        // written back (see `preserve::record_test_bytes`).
        for journal in journals.iter().rev() {
            if let Err(e) = preserve::record_test_bytes(journal, &self.file) {
                interrupt::set_restoring(false);
                return Some(Err(preserve::failed_after_test(journal, e)));
            }
        }
        for journal in journals.iter().rev() {
            match preserve::restore_after_test(journal, &self.file) {
                Ok(part) => {
                    done.bytes += part.bytes;
                    done.unchanged += part.unchanged;
                    done.kept += part.kept;
                    done.name_moved |= part.name == preserve::NameNow::Elsewhere;
                    done.restore_time += part.time;
                    done.journal_left.extend(
                        part.journal_left
                            .map(|why| format!("{}: {why}", journal.journal.display())),
                    );
                }
                Err(e) => {
                    interrupt::set_restoring(false);
                    return Some(Err(preserve::failed_after_test(journal, e)));
                }
            }
        }
        interrupt::set_journal(None);
        interrupt::set_restoring(false);
        Some(Ok(done))
    }
}

impl Drop for WriteGuard {
    /// The safety net: a journal nobody restored (an early return, an error,
    /// a panic unwinding) is restored here, and the outcome said on stderr.
    fn drop(&mut self) {
        if let Some(outcome) = self.restore() {
            match outcome {
                Ok(r) => {
                    eprintln!(
                        "the original {} of {} were restored and verified",
                        crate::units::format_size(r.bytes + r.unchanged),
                        self.path.display()
                    );
                    for left in &r.journal_left {
                        eprintln!("{}", preserve::journal_left_note(left));
                    }
                }
                Err(e) => eprintln!("Error: {}", crate::error::render(&e)),
            }
        }
    }
}

/// What a finished restore did.
#[derive(Debug, Clone)]
pub struct Restoration {
    /// Bytes written back (they held the test's bytes).
    pub bytes: u64,
    /// Bytes that held the originals already (the test never wrote them).
    pub unchanged: u64,
    /// Bytes written since the test by someone else, left as they are.
    pub kept: u64,
    /// The name given no longer names the object tested (renamed or
    /// replaced while the test ran); the restore went to the object,
    /// through the descriptor held.
    pub name_moved: bool,
    pub save_time: Duration,
    pub restore_time: Duration,
    /// Journals still there after the verified restore, and why (their
    /// file system turned read-only, say).
    pub journal_left: Vec<String>,
}

/// The state of a target's writes.
pub enum WriteGate {
    /// Opened for reading only.
    Closed,
    /// A writable descriptor is held; its permit says whether it may write
    /// now.
    Held(WriteGuard),
}

impl WriteGate {
    /// A writable descriptor held under `permit` (writes allowed at once
    /// unless it is [`Permit::Sealed`]).
    pub fn new(file: File, permit: Permit, path: &Path) -> WriteGate {
        WriteGate::Held(WriteGuard {
            file,
            permit,
            path: path.to_path_buf(),
        })
    }

    /// The guard, when writes are allowed now.
    pub fn guard(&self) -> Option<&WriteGuard> {
        match self {
            WriteGate::Held(g) if !matches!(g.permit, Permit::Sealed { .. }) => Some(g),
            _ => None,
        }
    }

    /// Whether a write test may run once armed.
    pub fn may_write(&self) -> bool {
        !matches!(self, WriteGate::Closed)
    }

    /// Journals `regions` (offset, length) of a `--preserve` target and
    /// opens the gate; does nothing where writes need no journal. A later
    /// call journals, before it returns, what no earlier one did (nothing
    /// when everything is covered already).
    pub fn arm(&mut self, regions: &[(u64, u64)], size: u64) -> Result<()> {
        let WriteGate::Held(guard) = self else {
            return Err(usage(
                "this target was opened for reading only: pass --preserve or --destructive to allow a write test",
            ));
        };
        pause(Moment::Opened);
        guard.journal(merge(journal_regions(regions, size)))?;
        pause(Moment::Armed);
        Ok(())
    }

    /// Whether a write of `len` bytes at `offset` is allowed now: anywhere
    /// on a scratch file, a simulated card or a `--destructive` target;
    /// inside the journalled regions of a `--preserve` one; nowhere else.
    pub fn allows(&self, offset: u64, len: u64) -> bool {
        match self {
            WriteGate::Held(g) => match &g.permit {
                Permit::Scratch | Permit::Simulated | Permit::Destructive => true,
                Permit::Preserved { regions, .. } => covered(offset, len, regions),
                Permit::Sealed { .. } | Permit::Restored => false,
            },
            WriteGate::Closed => false,
        }
    }

    /// Restores an armed journal; `None` when there is none. The writable
    /// descriptor is closed afterwards.
    pub fn restore(&mut self) -> Option<Result<Restoration>> {
        let WriteGate::Held(guard) = self else {
            return None;
        };
        if !matches!(guard.permit, Permit::Preserved { .. }) {
            return None;
        }
        pause(Moment::BeforeRestore);
        let outcome = guard.restore();
        *self = WriteGate::Closed;
        outcome
    }
}

/// `regions` widened to what O_DIRECT may touch and cut to the size.
fn journal_regions(regions: &[(u64, u64)], size: u64) -> Vec<Region> {
    regions
        .iter()
        .flat_map(|&(offset, length)| preserve::regions_for(offset, length, size))
        .collect()
}

/// `regions` sorted, with overlapping and touching ones joined.
fn merge(mut regions: Vec<Region>) -> Vec<Region> {
    regions.sort_unstable_by_key(|r| r.offset);
    let mut out: Vec<Region> = Vec::with_capacity(regions.len());
    for r in regions.into_iter().filter(|r| r.length > 0) {
        match out.last_mut() {
            Some(last) if r.offset <= end(last) => {
                last.length = end(last).max(end(&r)) - last.offset;
            }
            _ => out.push(r),
        }
    }
    out
}

fn end(r: &Region) -> u64 {
    r.offset.saturating_add(r.length)
}

/// The parts of `wanted` that `have` (sorted and merged) does not hold.
fn uncovered(wanted: &[Region], have: &[Region]) -> Vec<Region> {
    let mut out = Vec::new();
    for w in wanted {
        let mut at = w.offset;
        let stop = end(w);
        // The first held region that ends beyond `at`, then each after it.
        let first = have.partition_point(|h| end(h) <= at);
        for h in &have[first..] {
            if h.offset >= stop {
                break;
            }
            if h.offset > at {
                out.push(Region {
                    offset: at,
                    length: h.offset - at,
                });
            }
            at = at.max(end(h));
        }
        if at < stop {
            out.push(Region {
                offset: at,
                length: stop - at,
            });
        }
    }
    out
}

/// Whether `offset..offset + len` lies inside `regions` (sorted and
/// merged, so inside one of them).
fn covered(offset: u64, len: u64, regions: &[Region]) -> bool {
    let i = regions.partition_point(|r| r.offset <= offset);
    i > 0 && offset.saturating_add(len) <= end(&regions[i - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(offset: u64, length: u64) -> Region {
        Region { offset, length }
    }

    #[test]
    fn covered_needs_the_whole_write_inside() {
        let journal = merge(vec![
            region(16384, 4096),
            region(0, 8192),
            region(8192, 4096),
        ]);
        assert_eq!(journal, [region(0, 12288), region(16384, 4096)]);
        assert!(covered(4096, 8192, &journal), "across two joined regions");
        assert!(!covered(4096, 16384, &journal), "over the gap");
        assert!(!covered(20480, 1, &journal));
        assert!(covered(16384, 4096, &journal));
        assert!(!covered(u64::MAX, 4096, &journal));
    }

    #[test]
    fn only_what_no_journal_holds_is_journalled_again() {
        let have = [region(4096, 4096), region(16384, 8192)];
        let wanted = [region(0, 32768), region(40960, 4096), region(18432, 1024)];
        assert_eq!(
            uncovered(&wanted, &have),
            [
                region(0, 4096),
                region(8192, 8192),
                region(24576, 8192),
                region(40960, 4096)
            ]
        );
        assert!(uncovered(&have, &have).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn uncovered_and_held_are_disjoint_and_together_hold_all(
            have in proptest::collection::vec((0u64..64, 1u64..8), 0..6),
            wanted in proptest::collection::vec((0u64..64, 1u64..8), 0..6),
        ) {
            let to = |v: &Vec<(u64, u64)>| merge(v.iter().map(|&(o, l)| region(o * 512, l * 512)).collect());
            let (have, wanted) = (to(&have), to(&wanted));
            let new = uncovered(&wanted, &have);
            for sector in 0..80u64 {
                let at = sector * 512;
                let want = covered(at, 512, &wanted);
                let held = covered(at, 512, &have);
                let added = new.iter().any(|r| covered(at, 512, std::slice::from_ref(r)));
                proptest::prop_assert!(!(held && added), "journalled twice at {}", at);
                proptest::prop_assert_eq!(want && !held, added, "at {}", at);
            }
        }
    }

    #[test]
    fn a_second_arm_journals_the_rest_and_both_are_written_back() {
        // The journal must be on another file system than the target, and
        // not in memory: the target goes to a tmpfs, the journal to disk.
        let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
            return eprintln!("skipped: no /dev/shm to hold a target apart from the journal");
        };
        let path = dir.path().join("disk.img");
        let original: Vec<u8> = (0..256 * 1024u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &original).unwrap();
        let journals = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let sealed = Permit::Sealed {
            journal_dir: journals.path().to_path_buf(),
        };
        let mut gate = WriteGate::new(file, sealed, &path);
        let size = original.len() as u64;
        assert!(!gate.allows(8192, 4096), "sealed: nothing yet");
        if let Err(e) = gate.arm(&[(8192, 8192)], size) {
            // A temporary directory in memory is no place for a journal.
            assert!(e.to_string().contains("in memory"), "{e}");
            return eprintln!("skipped: the temporary directory is in memory");
        }
        assert!(gate.allows(8192, 8192) && !gate.allows(8192, 8193));
        gate.arm(&[(12288, 12288), (100_000, 10)], size).unwrap();
        gate.arm(&[(8192, 16384)], size).unwrap();
        let files = preserve::list(journals.path()).unwrap();
        assert_eq!(files.len(), 2, "the third arm held nothing new");
        let second = crate::safety::journal::Journal::peek(&files[1]).unwrap();
        let meta = second.meta.unwrap();
        assert_eq!(meta.part, 1);
        assert_eq!(meta.regions, [region(16384, 8192), region(98304, 4096)]);
        assert!(gate.allows(8192, 16384) && gate.allows(98304, 4096));
        assert!(!gate.allows(24576, 1));
        {
            use std::os::unix::fs::FileExt;
            let g = gate.guard().unwrap();
            g.file().write_all_at(&[0xEE; 16384], 8192).unwrap();
            g.file().write_all_at(&[0xEE; 4096], 98304).unwrap();
        }
        let done = gate.restore().unwrap().unwrap();
        assert_eq!(done.bytes, 8192 + 8192 + 4096);
        assert_eq!(std::fs::read(&path).unwrap(), original);
        assert!(preserve::list(journals.path()).unwrap().is_empty());
    }

    #[test]
    fn a_closed_gate_refuses_to_arm() {
        let mut gate = WriteGate::Closed;
        let err = gate.arm(&[(0, 4096)], 1 << 20).unwrap_err();
        assert_eq!(crate::error::exit_code(&err), crate::error::EXIT_USAGE);
        assert!(gate.guard().is_none());
    }

    #[test]
    fn a_destructive_gate_is_open_without_a_journal() {
        let file = tempfile::tempfile().unwrap();
        let mut gate = WriteGate::new(file, Permit::Destructive, Path::new("x"));
        gate.arm(&[(0, 4096)], 1 << 20).unwrap();
        assert!(gate.guard().is_some());
        assert!(gate.restore().is_none());
        assert!(gate.guard().is_some(), "nothing to restore: stays open");
    }
}
