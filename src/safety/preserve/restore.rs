//! Restoring: writing an armed journal back, reading the medium back
//! against the journal's checksums, then marking the journal done and
//! removing it; and measuring what a test left on the medium.

use super::hooks::test_delay;
use super::medium::{open_reader, open_writer, read_medium, read_scratch, write_back};
use super::save::Preserved;
use crate::safety::journal::{self, Chunk, Journal, JournalError, State, sync_dir};
use crate::safety::lock;
use crate::sys::buffer::AlignedBuf;
use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a restore did.
#[derive(Debug, Clone)]
pub struct Restored {
    pub bytes: u64,
    pub time: Duration,
    /// Why the journal is still there after a verified restore (its file
    /// system turned read-only, say); `None` when it was removed.
    pub journal_left: Option<String>,
}

/// Why a restore did not finish; the journal is kept (unless it is damaged,
/// it is kept too: nothing is deleted that might still be needed).
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("{0}")]
    Journal(#[from] JournalError),
    #[error("{0}")]
    Medium(String, #[source] io::Error),
}

/// Restores after a test, with the target's own descriptor where it is a
/// block device (held with O_EXCL, so no second exclusive open is possible).
pub fn restore_after_test(
    p: &Preserved,
    block_fd: Option<&File>,
) -> Result<Restored, RestoreError> {
    // Read through the test's own locked descriptor: the bytes it copied,
    // whatever has become of the journal's name or its file system since.
    let mut journal =
        Journal::from_open_file(&p.journal, p.lock.try_clone().map_err(JournalError::Io)?)?;
    let own;
    let writer = match block_fd {
        Some(f) => f,
        None => {
            own = open_writer(&p.target_path, false).map_err(|e| {
                RestoreError::Medium(
                    format!("cannot open {} to restore it: {e}", p.target_path.display()),
                    e,
                )
            })?;
            &own
        }
    };
    apply(&mut journal, writer, &p.target_path)
}

/// Writes an armed journal back, verifies the medium, marks the journal
/// done and deletes it. The whole journal is checked before the first write.
pub fn apply(journal: &mut Journal, writer: &File, path: &Path) -> Result<Restored, RestoreError> {
    let started = Instant::now();
    journal.verify_all()?;
    let chunks = journal.chunks();
    let size = chunks.iter().map(|c| c.len).max().unwrap_or(4096).max(4096) as usize;
    let mut buf = AlignedBuf::new(size.next_multiple_of(4096), 4096);
    for c in &chunks {
        test_delay();
        journal.read_chunk(c, buf.as_mut_slice())?;
        write_back(
            writer,
            &buf.as_slice()[..c.len as usize],
            c.target_offset,
            path,
        )
        .map_err(|e| medium_error("write", c, path, e))?;
    }
    writer.sync_all().map_err(|e| {
        RestoreError::Medium(
            format!(
                "flushing the restored data to {} failed: {e}",
                path.display()
            ),
            e,
        )
    })?;
    read_back(journal, &chunks, path)?;
    let journal_left = finish(journal);
    let bytes = chunks.iter().map(|c| c.len).sum();
    Ok(Restored {
        bytes,
        time: started.elapsed(),
        journal_left,
    })
}

/// Marks a journal whose restore was verified done and removes it; why
/// not, where either failed (the restore stands: the medium was read back).
fn finish(journal: &mut Journal) -> Option<String> {
    let marked = journal.set_state(State::Done);
    let removed = remove_own(journal);
    match (marked, removed) {
        (_, Ok(())) => None,
        (Ok(()), Err(e)) => Some(format!("it is marked done but could not be removed: {e}")),
        (Err(m), Err(e)) => Some(format!(
            "it could not be marked done ({m}) nor removed ({e})"
        )),
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

/// Reads the restored regions back past the page cache and compares them
/// with the journal's checksums.
fn read_back(journal: &Journal, chunks: &[Chunk], path: &Path) -> Result<(), RestoreError> {
    let reader = open_reader(path).map_err(|e| {
        RestoreError::Medium(
            format!("cannot reopen {} to check the restore: {e}", path.display()),
            e,
        )
    })?;
    let meta = journal
        .meta
        .as_ref()
        .expect("an armed journal has metadata");
    let mut scratch = read_scratch(meta.chunk_size);
    let mut buf = vec![0u8; meta.chunk_size as usize];
    for c in chunks {
        let data = &mut buf[..c.len as usize];
        read_medium(&reader, &mut scratch, c.target_offset, data)
            .map_err(|e| medium_error("read-back", c, path, e))?;
        if journal::chunk_checksum(c.target_offset, data) != meta.checksums[c.index] {
            let e = io::Error::other("the bytes read back differ from the original");
            return Err(medium_error("read-back check", c, path, e));
        }
    }
    Ok(())
}

fn medium_error(op: &str, c: &Chunk, path: &Path, e: io::Error) -> RestoreError {
    RestoreError::Medium(
        format!(
            "restoring the original data failed: {op} of {} bytes at offset {} of {}: {e}",
            c.len,
            c.target_offset,
            path.display()
        ),
        e,
    )
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

pub fn changed_bytes(journal: &Journal, path: &Path) -> io::Result<Changes> {
    let meta = journal
        .meta
        .as_ref()
        .ok_or_else(|| io::Error::other("the journal has no metadata"))?;
    let reader = open_reader(path)?;
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
