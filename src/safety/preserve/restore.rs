//! Restoring after a test: the heartbeat stopped, what the test wrote
//! hashed block by block and stored in the journal (fsynced, `WRITTEN`)
//! before anything is written back, then the journal written back block by
//! block (see [`super::writeback`]), read back and verified, marked done
//! and removed; all through the descriptor the test held, never the
//! target's name. Also what a test left on the medium, for the messages.

use super::hooks::before_restore;
use super::marker;
use super::medium::{read_medium, read_scratch, reader_for, writer_for};
use super::restore_error::RestoreError;
use super::save::Preserved;
use super::writeback::{hash_test_bytes, read_back, write_blocks};
use crate::safety::journal::{self, Journal, JournalError, State, sync_dir};
use crate::safety::lock;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a restore did.
#[derive(Debug, Clone)]
pub struct Restored {
    /// Bytes written back.
    pub bytes: u64,
    /// Bytes that held the originals already (the test never wrote them,
    /// or an earlier restore did).
    pub unchanged: u64,
    /// Bytes written since the test (neither the test's bytes nor the
    /// originals): left as found, never overwritten.
    pub kept: u64,
    pub time: Duration,
    /// Why the journal is still there after a verified restore (its file
    /// system turned read-only, say); `None` when it was removed.
    pub journal_left: Option<String>,
    /// Whether the target's name still leads to the object restored.
    pub name: NameNow,
}

/// What the target's name leads to after the restore, which always goes
/// to the object the test wrote, through the descriptor it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameNow {
    /// The object restored.
    Same,
    /// Another object, or nothing: the name was moved during the test.
    Elsewhere,
}

/// Stops `p`'s heartbeat and records, in its journal, the hashes of what
/// the test wrote, before anything of any journal is written back: a test
/// that armed several journals (the capacity search) has every one of them
/// proved before the first restore, so a kill between two restores leaves
/// no journal that cannot tell the test's bytes from newer ones.
pub fn record_test_bytes(p: &Preserved, target: &File) -> Result<(), RestoreError> {
    proved_journal(p, target).map(|_| ())
}

/// Restores after a test through `target`, the descriptor the test wrote
/// through (for files and block devices alike: nothing is opened by name).
pub fn restore_after_test(p: &Preserved, target: &File) -> Result<Restored, RestoreError> {
    let mut journal = proved_journal(p, target)?;
    let mut done = apply(&mut journal, target, &p.name, false)?;
    done.name = name_now(&p.name, target);
    Ok(done)
}

/// `p`'s journal, checked whole, with its table of the test's bytes: read
/// from the journal where [`record_test_bytes`] stored it, else hashed now
/// through `target` (and stored where the journal's file system takes it;
/// in memory else, for this restore: see `finish` for what a later recover
/// then knows). The heartbeat stops first: the test has ended.
fn proved_journal(p: &Preserved, target: &File) -> Result<Journal, RestoreError> {
    if let Some(heart) = &p.heart {
        heart.stop();
    }
    before_restore();
    // Read through the test's own locked descriptor: the bytes it copied,
    // whatever has become of the journal's name or its file system since.
    let mut journal =
        Journal::from_open_file(&p.journal, p.lock.try_clone().map_err(JournalError::Io)?)?;
    journal.verify_all()?;
    if journal.test_hashes.is_some() {
        return Ok(journal);
    }
    let reader = reader_for(target).map_err(|e| cannot_reopen(&p.name, e))?;
    let table = hash_test_bytes(&journal, &reader).map_err(|e| {
        let msg = format!(
            "reading back what the test wrote to {} failed: {e}",
            p.name.display()
        );
        RestoreError::Medium(msg, e)
    })?;
    let _ = journal.store_hashes(table);
    Ok(journal)
}

/// Writes a checked journal back through `target` (block by block against
/// its table of hashes, or whole where it has none or `whole` asks),
/// verifies the medium, marks the journal done and deletes it.
pub(super) fn apply(
    journal: &mut Journal,
    target: &File,
    name: &Path,
    whole: bool,
) -> Result<Restored, RestoreError> {
    let started = Instant::now();
    journal.verify_all()?;
    let writer = writer_for(target).map_err(|e| cannot_reopen(name, e))?;
    let reader = reader_for(target).map_err(|e| cannot_reopen(name, e))?;
    let hashes = journal.test_hashes.clone().filter(|_| !whole);
    let tally = write_blocks(journal, &writer, &reader, name, hashes.as_deref())?;
    crate::sys::test_pause::pause(crate::sys::test_pause::Moment::BeforeReadBack);
    read_back(journal, &reader, name, &tally.kept_blocks)?;
    let journal_left = finish(journal);
    Ok(Restored {
        bytes: tally.written,
        unchanged: tally.unchanged,
        kept: tally.kept,
        time: started.elapsed(),
        journal_left,
        name: NameNow::Same,
    })
}

fn cannot_reopen(name: &Path, e: io::Error) -> RestoreError {
    RestoreError::Medium(
        format!("cannot reopen {} to restore it: {e}", name.display()),
        e,
    )
}

/// Whether `name` still leads to the object open on `target`.
/// (A stat, never an open: the name may lead to anything by now.)
fn name_now(name: &Path, target: &File) -> NameNow {
    let same = match (rustix::fs::stat(name), rustix::fs::fstat(target.as_fd())) {
        (Ok(a), Ok(b)) => (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev),
        _ => false,
    };
    if same {
        NameNow::Same
    } else {
        NameNow::Elsewhere
    }
}

/// Marks a journal whose restore was verified done and removes it; why
/// not, where either failed (the restore stands: the medium was read back).
/// A journal that could be neither (a read-only file system) still reads
/// as unfinished, so the restore is recorded beside it (see [`marker`]).
fn finish(journal: &mut Journal) -> Option<String> {
    let marked = journal.set_state(State::Done);
    let removed = remove_own(journal);
    match (marked, removed) {
        (_, Ok(())) => {
            marker::forget(journal);
            None
        }
        (Ok(()), Err(e)) => Some(format!("it is marked done but could not be removed: {e}")),
        (Err(m), Err(e)) => Some(match marker::record(journal) {
            Some(at) => format!(
                "it could not be marked done ({m}) nor removed ({e}); its restore is recorded in {}, so no recover applies it again",
                at.display()
            ),
            None => format!(
                "it could not be marked done ({m}) nor removed ({e}), nor its restore recorded elsewhere; a recover checks the target for writes since the test and refuses if it finds any"
            ),
        }),
    }
}

/// Removes the journal's name if it still names this journal's file
/// (never a file someone put in its place); a name already gone is fine.
pub(super) fn remove_own(journal: &Journal) -> io::Result<()> {
    let named = match std::fs::symlink_metadata(&journal.path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        other => other?,
    };
    if !lock::same_file(&named, &journal.file.metadata()?) {
        return Ok(());
    }
    std::fs::remove_file(&journal.path)?;
    if let Some(dir) = journal.path.parent() {
        let _ = sync_dir(dir);
    }
    Ok(())
}

/// What a write test left on its medium, measured against the chunks
/// `journal` holds (read past the page cache, as the restore's check).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Changes {
    /// Bytes in chunks that no longer match their original checksums.
    pub changed: u64,
    /// Bytes in chunks the medium would not give back.
    pub unreadable: u64,
    /// Bytes journalled in all.
    pub total: u64,
}

/// What the test left on the object open on `target`.
pub fn changed_bytes(journal: &Journal, target: &File) -> io::Result<Changes> {
    let meta = journal
        .meta
        .as_ref()
        .ok_or_else(|| io::Error::other("the journal has no metadata"))?;
    let reader = reader_for(target)?;
    let mut scratch = read_scratch(meta.chunk_size);
    let mut buf = vec![0u8; meta.chunk_size as usize];
    let mut seen = Changes {
        changed: 0,
        unreadable: 0,
        total: 0,
    };
    for c in journal.chunks() {
        let data = &mut buf[..c.len as usize];
        seen.total += c.len;
        if read_medium(&reader, &mut scratch, c.target_offset, data).is_err() {
            seen.unreadable += c.len;
        } else if journal::chunk_checksum(c.target_offset, data) != meta.checksums[c.index] {
            seen.changed += c.len;
        }
    }
    Ok(seen)
}
