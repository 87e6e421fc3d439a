//! The write gate: the one way to a descriptor that can write to a target.
//!
//! A benchmark that may touch the only copy of someone's photos must not
//! depend on every command remembering to journal before it writes. So the
//! safety check in [`super::open`] decides, once, what a target's writes
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

use crate::error::{IoFailure, usage};
use crate::safety::journal::Region;
use crate::safety::preserve::{self, Preserved};
use crate::workload::interrupt;
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
    /// `--preserve`: these regions are in an armed journal.
    Preserved {
        journal: Preserved,
        regions: Vec<Region>,
    },
    /// The journal was written back: the guard is on its way out.
    Restored,
}

/// The only holder of a descriptor that writes to a target.
pub struct WriteGuard {
    file: File,
    permit: Permit,
    /// The medium, for a restore that must open it again (a regular file).
    path: PathBuf,
    /// A block device restores through this (exclusive) descriptor.
    block: bool,
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
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(&self.path)
            .map_err(|e| {
                IoFailure::new(
                    format!("cannot open {} for writing: {e}", self.path.display()),
                    Some(e),
                )
                .into()
            })
    }

    /// Writes the journal back and verifies it; `None` when nothing was
    /// journalled. The guard permits nothing afterwards.
    fn restore(&mut self) -> Option<Result<Restoration>> {
        let permit = std::mem::replace(&mut self.permit, Permit::Restored);
        let Permit::Preserved { journal, .. } = permit else {
            self.permit = permit;
            return None;
        };
        interrupt::set_restoring(true);
        let block_fd = self.block.then_some(&self.file);
        let outcome = match preserve::restore_after_test(&journal, block_fd) {
            Ok(done) => {
                interrupt::set_journal(None);
                Ok(Restoration {
                    bytes: done.bytes,
                    save_time: journal.save_time,
                    restore_time: done.time,
                })
            }
            Err(e) => Err(preserve::restore_failure(&journal.journal, e)),
        };
        interrupt::set_restoring(false);
        Some(outcome)
    }
}

impl Drop for WriteGuard {
    /// The safety net: a journal nobody restored (an early return, an error,
    /// a panic unwinding) is restored here, and the outcome said on stderr.
    fn drop(&mut self) {
        if let Some(outcome) = self.restore() {
            match outcome {
                Ok(r) => eprintln!(
                    "the original {} of {} were restored and verified",
                    crate::units::format_size(r.bytes),
                    self.path.display()
                ),
                Err(e) => eprintln!("Error: {}", crate::error::render(&e)),
            }
        }
    }
}

/// What a finished restore did.
#[derive(Debug, Clone, Copy)]
pub struct Restoration {
    pub bytes: u64,
    pub save_time: Duration,
    pub restore_time: Duration,
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
    pub fn new(file: File, permit: Permit, path: &Path, block: bool) -> WriteGate {
        WriteGate::Held(WriteGuard {
            file,
            permit,
            path: path.to_path_buf(),
            block,
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
    /// opens the gate; does nothing where writes need no journal. A second
    /// call must stay within what the first journalled.
    pub fn arm(&mut self, regions: &[(u64, u64)], size: u64) -> Result<()> {
        let WriteGate::Held(guard) = self else {
            return Err(usage(
                "this target was opened for reading only: pass --preserve or --destructive to allow a write test",
            ));
        };
        let wanted = journal_regions(regions, size);
        match &guard.permit {
            Permit::Sealed { journal_dir } if !wanted.is_empty() => {
                let journal = preserve::backup(
                    &guard.path,
                    wanted.clone(),
                    journal_dir,
                    interrupt::stop_flag(),
                )?;
                interrupt::set_journal(Some(journal.journal.clone()));
                guard.permit = Permit::Preserved {
                    journal,
                    regions: wanted,
                };
                Ok(())
            }
            Permit::Preserved { regions, .. } => match wanted.iter().find(|w| !covered(w, regions)) {
                Some(w) => Err(IoFailure::new(
                    format!(
                        "internal error: a write to {} bytes at offset {} was not journalled by --preserve; nothing there was written. Please report this",
                        w.length, w.offset
                    ),
                    None,
                )
                .into()),
                None => Ok(()),
            },
            _ => Ok(()),
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

/// Whether `r` lies inside one of `regions`.
fn covered(r: &Region, regions: &[Region]) -> bool {
    let end = r.offset.saturating_add(r.length);
    regions
        .iter()
        .any(|j| j.offset <= r.offset && end <= j.offset.saturating_add(j.length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_needs_one_region_holding_all_of_it() {
        let journal = [
            Region {
                offset: 0,
                length: 8192,
            },
            Region {
                offset: 16384,
                length: 4096,
            },
        ];
        let inside = Region {
            offset: 4096,
            length: 4096,
        };
        let across = Region {
            offset: 4096,
            length: 16384,
        };
        assert!(covered(&inside, &journal));
        assert!(!covered(&across, &journal));
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
        let mut gate = WriteGate::new(file, Permit::Destructive, Path::new("x"), false);
        gate.arm(&[(0, 4096)], 1 << 20).unwrap();
        assert!(gate.guard().is_some());
        assert!(gate.restore().is_none());
        assert!(gate.guard().is_some(), "nothing to restore: stays open");
    }
}
