//! Saving: copying what a write test will overwrite into a new journal,
//! sealing and arming it, so that the test may write.

use super::directory::check_journal_dir;
use super::heart::{Beater, Heart};
use super::hooks::{LATER_ARMED_DELAY_ENV, LATER_PART_DELAY_ENV, test_delay, test_sleep};
use super::medium::{read_medium, read_scratch, reader_for};
use super::recover_command::recover_command;
use crate::error::{Interrupted, IoFailure};
use crate::safety::identity::Identity;
use crate::safety::journal::{self, CHUNK, EXTENSION, JournalWriter, Meta, Region, sync_dir};
use crate::safety::lock;
use anyhow::Result;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The regions to journal for a write test on `offset..offset + span`:
/// widened to 4 KiB boundaries (what O_DIRECT may touch), within the size.
pub fn regions_for(offset: u64, span: u64, size: u64) -> Vec<Region> {
    let start = offset / 4096 * 4096;
    let end = offset
        .saturating_add(span)
        .div_ceil(4096)
        .saturating_mul(4096)
        .min(size);
    if end <= start {
        return Vec::new();
    }
    vec![Region {
        offset: start,
        length: end - start,
    }]
}

/// Time spent saving and restoring, for the notes (never in the figures).
#[derive(Debug, Default, Clone, Copy)]
pub struct Timing {
    pub save: Duration,
    pub restore: Duration,
}

/// An armed journal: the test may write.
#[derive(Debug)]
pub struct Preserved {
    pub journal: PathBuf,
    pub bytes: u64,
    pub save_time: Duration,
    /// The target's name when the test began, for messages only.
    pub(super) name: PathBuf,
    /// A duplicate of the descriptor the test writes through, for the
    /// messages that measure what a failed restore left.
    pub(super) target: File,
    /// Holds the journal's lock (see [`lock`]) until this is
    /// dropped, after the journal is gone; the restore reads through it.
    pub(super) lock: File,
    /// Beats while the test runs (see [`super::heart`]); `None` for a
    /// format-1 journal or where no beat could be set up.
    pub(super) heart: Option<Heart>,
}

impl Preserved {
    pub fn recover_command(&self) -> String {
        recover_command(&self.journal)
    }
}

/// Copies `regions` of the object open on `target` (the descriptor the
/// test will write through, read through a reopen of it, never by name)
/// into a new journal in `dir`, fsyncs it and arms it; `name` is the
/// target's name, recorded for `recover` and used in messages only. `part`
/// numbers it among the journals of the same test (0 for the first).
/// `stop` (Ctrl-C) abandons the copy: the journal is removed and nothing
/// more has been written to the medium. Once armed, a heartbeat thread
/// records in the journal how far the target has been changed, until the
/// restore begins.
pub fn backup(
    target: &File,
    name: &Path,
    regions: Vec<Region>,
    dir: &Path,
    stop: &AtomicBool,
    part: u32,
) -> Result<Preserved> {
    let identity = Identity::of_file(target, name)
        .map_err(|e| IoFailure::new(format!("cannot examine {}: {e}", name.display()), Some(e)))?;
    let mut meta = new_meta(identity, regions, CHUNK);
    meta.part = part;
    check_journal_dir(dir, &meta.identity, meta.data_offset() + meta.total_bytes())?;
    write_journal(target, name, meta, dir, stop)
}

/// Writes, seals and arms a journal of `meta.regions` (the directory
/// already checked).
pub(super) fn write_journal(
    target: &File,
    name: &Path,
    mut meta: Meta,
    dir: &Path,
    stop: &AtomicBool,
) -> Result<Preserved> {
    let started = Instant::now();
    let own_target = target.try_clone()?;
    let data_offset = meta.data_offset();
    let journal_path = dir.join(journal_name(&meta.identity));
    let writer = JournalWriter::create(&journal_path, data_offset)
        .map_err(|e| journal_write_failed(&journal_path, "create", e, meta.part))?;
    if meta.part > 0 {
        test_sleep(LATER_PART_DELAY_ENV);
    }
    if let Err(e) = fill(&writer, &mut meta, target, name, stop) {
        discard(&journal_path);
        return Err(e);
    }
    if let Err(e) = writer.seal(&meta).and_then(|_| writer.arm()) {
        discard(&journal_path);
        return Err(journal_write_failed(&journal_path, "finish", e, meta.part));
    }
    let lock = writer.into_lock();
    still_named(&journal_path, &lock)?;
    let heart = meta
        .beat_offset(data_offset)
        .and_then(|room| Beater::new(&lock, room, target).ok())
        .map(Heart::start);
    if meta.part > 0 {
        test_sleep(LATER_ARMED_DELAY_ENV);
    }
    Ok(Preserved {
        journal: journal_path,
        bytes: meta.total_bytes(),
        save_time: started.elapsed(),
        name: name.to_path_buf(),
        target: own_target,
        lock,
        heart,
    })
}

/// Checks, once armed and before the first write, that the journal's name
/// still leads to the file this test wrote: a journal removed or replaced
/// by someone else would leave the test writing with no copy that
/// `recover` can find.
fn still_named(journal: &Path, lock: &File) -> Result<()> {
    let named = std::fs::symlink_metadata(journal);
    let ours = lock.metadata()?;
    if named.is_ok_and(|m| lock::same_file(&m, &ours)) {
        return Ok(());
    }
    Err(IoFailure::new(
        format!(
            "the journal {} was removed or replaced by another process before the test wrote anything; nothing was written to the target. Keep other programs out of the journal directory, or give --journal-dir DIR of your own",
            journal.display()
        ),
        None,
    )
    .into())
}

/// The journal could not be written: the test's writes stop here.
fn journal_write_failed(journal: &Path, op: &str, e: io::Error, part: u32) -> anyhow::Error {
    IoFailure::new(
        format!(
            "cannot {op} the journal {}: {e}; {}. Give --journal-dir DIR on another writable disk",
            journal.display(),
            untouched(part)
        ),
        None,
    )
    .into()
}

/// What a test had written when journalling part `part` failed. The first
/// journal is made while the write gate is still sealed (the test holds no
/// writable descriptor), so nothing can have been written; a later part
/// follows writes its earlier parts cover.
fn untouched(part: u32) -> &'static str {
    if part == 0 {
        "nothing was written to the target"
    } else {
        "the test wrote nothing beyond what its earlier journals hold"
    }
}

pub(super) fn new_meta(identity: Identity, regions: Vec<Region>, chunk_size: u64) -> Meta {
    Meta {
        format: journal::FORMAT,
        iocurve_version: env!("CARGO_PKG_VERSION").to_string(),
        created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        pid: std::process::id(),
        identity,
        chunk_size,
        regions,
        checksums: Vec::new(),
        part: 0,
    }
}

/// `loop3-7_3-<nanoseconds>-<pid>.iocj`: unique, and names its device.
fn journal_name(id: &Identity) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{}_{}-{nanos}-{}.{EXTENSION}",
        id.short_name(),
        id.major,
        id.minor,
        std::process::id()
    )
}

pub(super) fn discard(journal: &Path) {
    let _ = std::fs::remove_file(journal);
    if let Some(dir) = journal.parent() {
        let _ = sync_dir(dir);
    }
}

fn fill(
    writer: &JournalWriter,
    meta: &mut Meta,
    target: &File,
    name: &Path,
    stop: &AtomicBool,
) -> Result<()> {
    let reader = reader_for(target).map_err(|e| {
        let msg = format!("cannot reopen {} to save its data: {e}", name.display());
        IoFailure::new(msg, Some(e))
    })?;
    let mut scratch = read_scratch(meta.chunk_size);
    let mut buf = vec![0u8; meta.chunk_size as usize];
    for c in journal::chunks(&meta.regions, meta.chunk_size, writer.data_offset()) {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted(format!(
                "interrupted while saving the original data: {}",
                untouched(meta.part)
            ))
            .into());
        }
        test_delay();
        let data = &mut buf[..c.len as usize];
        read_medium(&reader, &mut scratch, c.target_offset, data).map_err(|e| {
            IoFailure::new(
                format!(
                    "saving the original data failed: read of {} bytes at offset {} of {}: {e}; {}",
                    c.len,
                    c.target_offset,
                    name.display(),
                    untouched(meta.part)
                ),
                Some(e),
            )
        })?;
        meta.checksums
            .push(journal::chunk_checksum(c.target_offset, data));
        writer.write_chunk(&c, data).map_err(|e| {
            IoFailure::new(
                format!(
                    "writing the journal {} failed: {e}; {}",
                    writer.path.display(),
                    untouched(meta.part)
                ),
                Some(e),
            )
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_widen_to_4k_within_the_size() {
        assert_eq!(
            regions_for(5000, 100, 1 << 20),
            [Region {
                offset: 4096,
                length: 4096
            }]
        );
        assert_eq!(
            regions_for(0, 10_000, 9000),
            [Region {
                offset: 0,
                length: 9000
            }]
        );
        assert_eq!(
            regions_for(9000, 10, 9000),
            [Region {
                offset: 8192,
                length: 808
            }]
        );
        assert!(regions_for(9000, 10, 8192).is_empty());
    }
}
