//! `--preserve`: copy what a write test will overwrite, put it back after,
//! and finish the job after a crash (`iocurve recover`).
//!
//! The sequence, each step fsynced before the next (see [`super::journal`]):
//! check the journal directory (another file system than the target, one
//! that survives power loss, with room for the copy); copy the regions into
//! a `FILLING` journal with per-chunk checksums; arm it; run the test; check
//! the whole journal, write it back, fsync, read the medium back with
//! O_DIRECT and compare with the checksums; mark the journal `DONE`; delete
//! it. None of this is timed: the commands call it outside the measurements.
//!
//! A test that learns where it must write while running (the capacity
//! search) journals each new set of regions the same way, in a journal of
//! its own numbered after the first (`part` in the metadata). The parts are
//! written back latest first, after the test or by `recover`, which
//! finishes every armed part of a test whichever one it is given.
//!
//! f3probe keeps its backup in memory, which a crash loses; iocurve's lives
//! in a file that `recover` can replay any number of times.

use super::identity::Identity;
use super::journal::{
    self, CHUNK, Chunk, EXTENSION, Journal, JournalError, JournalWriter, Meta, Region, State,
    sync_dir,
};
use super::lock::{self, Lock};
use super::trust;
use crate::error::{Interrupted, IoFailure, usage};
use crate::probe::sysfs::BlockDevice;
use crate::sys::buffer::AlignedBuf;
use crate::units::format_size;
use anyhow::Result;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Slack kept free beside the journal on its file system.
const SPACE_MARGIN: u64 = 16 << 20;
/// How long `recover` waits for a dying process to let go of a device.
const BUSY_WAIT: Duration = Duration::from_secs(10);
/// The unit a refused restore write is retried in: what O_DIRECT takes.
const PIECE: usize = 4096;
/// Test hook: sleep this many milliseconds per chunk copied or restored, so
/// that a test can kill the process in the middle of either.
const DELAY_ENV: &str = "IOCURVE_TEST_JOURNAL_DELAY_MS";
/// Test hook: sleep this many milliseconds once before copying into a
/// test's later journal (part 1 on), which is often one chunk long, so
/// that a test can signal the process while that journal is filling.
const LATER_PART_DELAY_ENV: &str = "IOCURVE_TEST_LATER_JOURNAL_DELAY_MS";

/// The journal directory: the one asked for, else iocurve's data directory
/// (`$XDG_DATA_HOME/iocurve/journals`, `~/.local/share/iocurve/journals`).
pub fn journal_dir(asked: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = asked {
        return Ok(dir.to_path_buf());
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .ok_or_else(|| {
            usage("neither XDG_DATA_HOME nor HOME is set: give --journal-dir DIR on another file system than the target")
        })?;
    Ok(data.join("iocurve").join("journals"))
}

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

/// Refuses a journal directory on the target itself, on a file system that
/// does not survive power loss, without room for `bytes`, or one `recover`
/// would not trust (see [`trust`]). One it creates is private (0700).
pub fn check_journal_dir(dir: &Path, target: &Identity, bytes: u64) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| unusable_journal_dir(dir, "create", &e))?;
    trust::check_dir(dir).map_err(|why| why.refuse_journal_dir(dir))?;
    probe_writable(dir).map_err(|e| unusable_journal_dir(dir, "write in", &e))?;
    let st = rustix::fs::stat(dir).map_err(|e| unusable_journal_dir(dir, "examine", &e.into()))?;
    let here = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    if let Some(why) = same_medium(here, target) {
        return Err(usage(format!(
            "the journal directory {} {why}: a crash during the test could lose both the data and its copy. Give --journal-dir DIR on another file system",
            dir.display()
        )));
    }
    let fs = rustix::fs::statfs(dir)?;
    const TMPFS: i64 = 0x0102_1994;
    const RAMFS: i64 = 0x8584_58f6;
    if matches!(fs.f_type as i64, TMPFS | RAMFS) {
        return Err(usage(format!(
            "the journal directory {} is in memory (tmpfs/ramfs), which a power loss empties: give --journal-dir DIR on a disk",
            dir.display()
        )));
    }
    let free = (fs.f_bavail as u64).saturating_mul(fs.f_bsize as u64);
    let need = bytes.saturating_add(SPACE_MARGIN);
    if free < need {
        return Err(usage(format!(
            "the journal directory {} has {} free, but preserving the test region needs {}: free some space, give --journal-dir DIR elsewhere, or a smaller --span",
            dir.display(),
            format_size(free),
            format_size(need)
        )));
    }
    Ok(())
}

/// Writes and syncs a small file in `dir`: a journal directory that cannot
/// take one is refused before anything is copied. The file is unnamed
/// (O_TMPFILE) where the file system allows, so a kill leaves nothing.
fn probe_writable(dir: &Path) -> io::Result<()> {
    use std::io::Write;
    let unnamed = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match unnamed {
        Ok(mut f) => return f.write_all(b"iocurve").and_then(|_| f.sync_all()),
        Err(e)
            if !matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR)
            ) =>
        {
            return Err(e);
        }
        Err(_) => {}
    }
    let probe = dir.join(format!(".iocurve-probe-{}", std::process::id()));
    let written = File::create_new(&probe).and_then(|mut f| {
        f.write_all(b"iocurve")?;
        f.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    written
}

/// A journal directory iocurve cannot use: a refusal (exit 2) that says
/// why in words and how to choose another, with the OS reason once.
fn unusable_journal_dir(dir: &Path, op: &str, e: &io::Error) -> anyhow::Error {
    let name = dir.display();
    let why = match e.raw_os_error() {
        Some(libc::EROFS) => "it is on a read-only file system".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            let owner = rustix::fs::stat(dir)
                .map(|st| {
                    format!(
                        " (owned by uid {}, mode {:o})",
                        st.st_uid,
                        st.st_mode & 0o7777
                    )
                })
                .unwrap_or_default();
            format!("permission denied{owner}")
        }
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => "its file system is full".to_string(),
        Some(libc::ENOTDIR) | Some(libc::EEXIST) => "a file of that name is in the way".to_string(),
        _ => e.to_string(),
    };
    usage(format!(
        "cannot {op} the journal directory {name}: {why}. --preserve keeps its copy there: give --journal-dir DIR on a writable disk other than the target"
    ))
}

/// How the file system at device `here` shares a medium with the target.
fn same_medium(here: (u32, u32), target: &Identity) -> Option<String> {
    if here == (target.major, target.minor) {
        return Some(match target.kind.as_str() {
            "file" => "is on the same file system as the target".into(),
            _ => "is on the target device".into(),
        });
    }
    if target.kind != "block_device" || here.0 == 0 {
        return None;
    }
    let fs_dev = BlockDevice::from_dev_t(here.0, here.1).ok()?;
    let dev = BlockDevice::from_dev_t(target.major, target.minor).ok()?;
    let related = fs_dev.disk == dev.disk && (!fs_dev.partition || !dev.partition);
    related.then(|| format!("is on {}, part of the same disk as the target", fs_dev.name))
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
    target_path: PathBuf,
    /// Holds the journal's lock (see [`super::lock`]) until this is
    /// dropped, after the journal is gone; the restore reads through it.
    lock: File,
}

impl Preserved {
    pub fn recover_command(&self) -> String {
        recover_command(&self.journal)
    }
}

/// The command that finishes what a journal started.
pub fn recover_command(journal: &Path) -> String {
    format!("iocurve recover {}", journal.display())
}

/// Copies `regions` of the medium at `path` into a new journal in `dir`,
/// fsyncs it and arms it; `part` numbers it among the journals of the same
/// test (0 for the first). `stop` (Ctrl-C) abandons the copy: the journal
/// is removed and nothing more has been written to the medium.
pub fn backup(
    path: &Path,
    regions: Vec<Region>,
    dir: &Path,
    stop: &AtomicBool,
    part: u32,
) -> Result<Preserved> {
    let mut meta = new_meta(Identity::of_path(path)?, regions, CHUNK);
    meta.part = part;
    check_journal_dir(dir, &meta.identity, meta.data_offset() + meta.total_bytes())?;
    write_journal(path, meta, dir, stop)
}

/// Writes, seals and arms a journal of `meta.regions` (the directory
/// already checked).
fn write_journal(path: &Path, mut meta: Meta, dir: &Path, stop: &AtomicBool) -> Result<Preserved> {
    let started = Instant::now();
    let data_offset = meta.data_offset();
    let journal_path = dir.join(journal_name(&meta.identity));
    let writer = JournalWriter::create(&journal_path, data_offset)
        .map_err(|e| journal_write_failed(&journal_path, "create", e, meta.part))?;
    if meta.part > 0 {
        test_sleep(LATER_PART_DELAY_ENV);
    }
    if let Err(e) = fill(&writer, &mut meta, path, stop) {
        discard(&journal_path);
        return Err(e);
    }
    if let Err(e) = writer.seal(&meta).and_then(|_| writer.arm()) {
        discard(&journal_path);
        return Err(journal_write_failed(&journal_path, "finish", e, meta.part));
    }
    let lock = writer.into_lock();
    still_named(&journal_path, &lock)?;
    Ok(Preserved {
        journal: journal_path,
        bytes: meta.total_bytes(),
        save_time: started.elapsed(),
        target_path: path.to_path_buf(),
        lock,
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

fn new_meta(identity: Identity, regions: Vec<Region>, chunk_size: u64) -> Meta {
    Meta {
        format: 1,
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

fn discard(journal: &Path) {
    let _ = std::fs::remove_file(journal);
    if let Some(dir) = journal.parent() {
        let _ = sync_dir(dir);
    }
}

fn fill(writer: &JournalWriter, meta: &mut Meta, path: &Path, stop: &AtomicBool) -> Result<()> {
    let reader = open_reader(path)?;
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
                    path.display(),
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

fn test_delay() {
    test_sleep(DELAY_ENV);
}

fn test_sleep(env: &str) {
    if let Some(ms) = std::env::var(env).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// Opens the medium for reading with O_DIRECT (falling back to the page
/// cache, evicted first, where the file system refuses O_DIRECT).
fn open_reader(path: &Path) -> io::Result<File> {
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            let f = File::open(path)?;
            let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
            Ok(f)
        }
        other => other,
    }
}

/// Reads `out.len()` bytes at `offset` through `scratch`, asking for whole
/// aligned 4 KiB blocks around them, as O_DIRECT needs (a file's unaligned
/// tail included: the read just comes back short there).
fn read_medium(
    file: &File,
    scratch: &mut AlignedBuf,
    offset: u64,
    out: &mut [u8],
) -> io::Result<()> {
    let start = offset / 4096 * 4096;
    let skip = (offset - start) as usize;
    let want = skip + out.len();
    let ask = want.next_multiple_of(4096).min(scratch.len());
    let buf = &mut scratch.as_mut_slice()[..ask];
    let mut got = 0;
    while got < want {
        match file.read_at(&mut buf[got..], start + got as u64) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the medium ended early",
                ));
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out.copy_from_slice(&buf[skip..want]);
    Ok(())
}

/// A scratch buffer for [`read_medium`] of chunks up to `chunk` bytes.
fn read_scratch(chunk: u64) -> AlignedBuf {
    AlignedBuf::new((chunk as usize).next_multiple_of(4096) + 8192, 4096)
}

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
fn remove_own(journal: &Journal) -> io::Result<()> {
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

fn write_medium(file: &File, data: &[u8], offset: u64) -> io::Result<()> {
    file.write_all_at(data, offset)
}

/// Writes `data` back at `offset`. Where the medium refuses the write, it
/// is tried again 4 KiB at a time, and a piece the medium still refuses is
/// accepted only if it holds the original bytes already (read past the
/// page cache): a fake card's blocks beyond its real size refuse every
/// write, the test's as well, so they were never changed. Anything else is
/// the first error.
fn write_back(file: &File, data: &[u8], offset: u64, path: &Path) -> io::Result<()> {
    let Err(first) = write_medium(file, data, offset) else {
        return Ok(());
    };
    let Ok(reader) = open_reader(path) else {
        return Err(first);
    };
    let mut scratch = read_scratch(PIECE as u64);
    let mut held = vec![0u8; PIECE];
    for (i, piece) in data.chunks(PIECE).enumerate() {
        let at = offset + (i * PIECE) as u64;
        if write_medium(file, piece, at).is_ok() {
            continue;
        }
        let got = &mut held[..piece.len()];
        if read_medium(&reader, &mut scratch, at, got).is_err() || got != piece {
            return Err(first);
        }
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

/// Opens the medium for writing the restore: O_DIRECT and O_EXCL for a block
/// device (waiting a little while a killed process lets go of it), plain for
/// a file.
fn open_writer(path: &Path, block: bool) -> io::Result<File> {
    if !block {
        return OpenOptions::new().read(true).write(true).open(path);
    }
    let started = Instant::now();
    loop {
        let r = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT | libc::O_EXCL)
            .open(path);
        match r {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && started.elapsed() < BUSY_WAIT => {
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// The journals in `dir` that are regular files, oldest name first; links
/// and other kinds are not followed (`recover` reports them as refused,
/// see [`trust::list_journals`]).
pub fn list(dir: &Path) -> io::Result<Vec<PathBuf>> {
    Ok(trust::list_journals(dir)?.files)
}

/// The journal directory (`--journal-dir`, or the default) and the
/// journals left in it, oldest name first: what `recover` with no journal
/// named works through.
pub fn unfinished(asked: Option<&Path>) -> Result<(PathBuf, Vec<PathBuf>)> {
    let dir = journal_dir(asked)?;
    sweep_unnamed(&dir);
    let found = list(&dir)?;
    Ok((dir, found))
}

/// Removes journals that never got their name (`*.iocj-new`: a kill
/// between creating and naming one) once the process that made them is
/// gone. Such a file never held data for a test that wrote: a journal is
/// armed only after it is named.
fn sweep_unnamed(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        let making = path
            .extension()
            .is_some_and(|x| x == journal::MAKING_EXTENSION);
        let maker_gone = pid_in_name(&path).is_some_and(|pid| !process_exists(pid));
        let own_kind = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if making && maker_gone && own_kind {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Whether a process with this pid exists (any program).
fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Refuses a write test on `path` while `dir` holds an unfinished journal
/// of it (armed, or too damaged to tell but named after its device).
pub fn refuse_if_unfinished(dir: &Path, path: &Path) -> Result<()> {
    let Ok(now) = Identity::of_path(path) else {
        return Ok(());
    };
    let tag = format!("-{}_{}-", now.major, now.minor);
    for j in list(dir).unwrap_or_default() {
        let blocks = match Journal::peek(&j) {
            Ok(found) => {
                found.state == State::Armed
                    && found
                        .meta
                        .as_ref()
                        .is_some_and(|m| m.identity.is_same_medium(&now))
            }
            Err(_) => j
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains(&tag)),
        };
        if blocks && let Some(holder) = held_by(&j) {
            return Err(usage(format!(
                "refusing to write to {}: the journal {} of a preserve-mode test on it is in use by {holder}, which is still running (a test restoring it, or a recover): wait for it to end",
                path.display(),
                j.display()
            )));
        }
        if blocks {
            return Err(usage(format!(
                "refusing to write to {}: an earlier preserve-mode test did not finish restoring its original data, which is kept in the journal {}. Run `{}` first",
                path.display(),
                j.display(),
                recover_command(&j)
            )));
        }
    }
    Ok(())
}

/// Who holds the lock of the journal at `path`, when someone does.
fn held_by(path: &Path) -> Option<String> {
    match open_held(path).ok()? {
        Opened::Ours(_) => None,
        Opened::Held(pid) => Some(lock::holder_name(pid)),
    }
}

/// A journal opened through [`trust`], with its lock taken, or the pid
/// of whoever holds that lock (from `/proc/locks`, else the journal's
/// name).
enum Opened {
    Ours(trust::Trusted),
    Held(Option<u32>),
}

fn open_held(path: &Path) -> Result<Opened> {
    let trusted = trust::open_journal(path).map_err(|why| why.refuse_journal(path))?;
    Ok(match lock::try_exclusive(&trusted.file)? {
        Lock::Taken => Opened::Ours(trusted),
        Lock::Held(pid) => Opened::Held(pid.or_else(|| pid_in_name(path))),
    })
}

/// What `recover` did with one journal.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The original data was written back and verified, from this journal
    /// and the other armed ones of the same test (`journals` in all).
    Restored {
        target: String,
        bytes: u64,
        journals: usize,
        /// Why journals are still there after the verified restore (a
        /// read-only file system), one line each.
        left: Vec<String>,
    },
    /// Never armed: the target was never written; the journal was removed.
    Discarded { target: Option<String> },
    /// Already restored earlier; the leftover file was removed.
    AlreadyDone,
    /// A running test holds the journal (its lock, or its pid is a live
    /// iocurve): left alone, since that test restores it itself.
    InUse { pid: Option<u32> },
}

/// Finishes one journal: restores an armed one (after checking that the
/// medium is the same one and the journal is whole), removes a never-armed
/// or finished one, and leaves alone one a running test holds. The
/// journal's lock is taken before anything is read, so a test that is
/// still copying its original data is never mistaken for one that died
/// before arming. An armed journal is restored with the other armed
/// journals of its test, latest first (see [`restore_test`]), so that the
/// one path any message names finishes the whole test.
pub fn recover(path: &Path) -> Result<Outcome> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Err(usage(format!(
            "there is no journal at {}: it was already recovered, or the path is wrong (`iocurve recover` without a path finishes every journal in the journal directory)",
            path.display()
        )));
    }
    // Only a journal iocurve could have made, read from the descriptor
    // checked; from here on its real path (no links to swap). Its lock is
    // taken before anything is read: a live test keeps its journals.
    let trusted = match open_held(path)? {
        Opened::Ours(trusted) => trusted,
        Opened::Held(pid) => return Ok(Outcome::InUse { pid }),
    };
    let path = trusted.path.as_path();
    let journal = match Journal::from_open_file(path, trusted.file) {
        Ok(j) => j,
        Err(e) if raw_state(path) == Some(State::Filling) => {
            let _ = e;
            discard(path);
            return Ok(Outcome::Discarded { target: None });
        }
        Err(e) => return Err(refusal(path, &e)),
    };
    if let Some(pid) = journal.meta.as_ref().map(|m| m.pid) {
        if is_live_iocurve(pid) {
            return Ok(Outcome::InUse { pid: Some(pid) });
        }
    }
    match journal.state {
        State::Filling => {
            let target = journal.meta.as_ref().map(|m| m.identity.path.clone());
            let _ = remove_own(&journal);
            Ok(Outcome::Discarded { target })
        }
        State::Done => {
            let _ = remove_own(&journal);
            Ok(Outcome::AlreadyDone)
        }
        State::Armed => restore_test(journal),
    }
}

/// The pid in a journal's name (`…-<pid>.iocj`), for a lock whose holder
/// `/proc/locks` did not show.
fn pid_in_name(path: &Path) -> Option<u32> {
    let stem = path.file_stem()?.to_str()?;
    stem.rsplit('-').next()?.parse().ok()
}

/// Opens another journal of a test through [`trust`] and takes its lock;
/// refused while a live process holds it.
fn open_part(path: &Path) -> Result<Journal> {
    match open_held(path)? {
        Opened::Ours(trusted) => {
            Journal::from_open_file(&trusted.path, trusted.file).map_err(|e| refusal(path, &e))
        }
        Opened::Held(pid) => Err(usage(format!(
            "{} is held by {}, which is still running: let it finish, then run `{}` again",
            path.display(),
            lock::holder_name(pid),
            recover_command(path)
        ))),
    }
}

/// Restores every armed journal of the test `journal` belongs to (same
/// process, same medium, same directory), the latest part first. Order
/// matters where the medium aliases addresses (a wrapping fake card): a
/// later journal may have copied bytes an earlier part's writes had
/// already changed, and the earlier journal, written back last, puts the
/// originals over them. The first failure stops: earlier parts stay armed.
fn restore_test(journal: Journal) -> Result<Outcome> {
    let parts = parts_of_test(&journal)?;
    let count = parts.len();
    let (mut target, mut bytes, mut left) = (String::new(), 0, Vec::new());
    let mut given = Some(journal);
    for path in &parts {
        let mut part = match given.take_if(|j| &j.path == path) {
            Some(j) => j,
            None => open_part(path)?,
        };
        if part.state != State::Armed {
            continue;
        }
        let (t, b, l) = restore_armed(&mut part)?;
        target = t;
        bytes += b;
        left.extend(l.map(|why| format!("{}: {why}", path.display())));
    }
    Ok(Outcome::Restored {
        target,
        bytes,
        journals: count,
        left,
    })
}

/// The armed journals of `journal`'s test beside it, itself included,
/// latest part first. A damaged one named after the same device and
/// process refuses them all: it may be a later part, whose place in the
/// order is unknown (one that never got past filling is no part).
fn parts_of_test(journal: &Journal) -> Result<Vec<PathBuf>> {
    let Some(meta) = journal.meta.as_ref() else {
        return Ok(vec![journal.path.clone()]);
    };
    let dir = journal.path.parent().unwrap_or(Path::new("."));
    let own = format!("-{}_{}-", meta.identity.major, meta.identity.minor);
    let pid = format!("-{}.{EXTENSION}", meta.pid);
    let mut parts = vec![(meta.part, journal.path.clone())];
    for p in list(dir).unwrap_or_default() {
        if p == journal.path {
            continue;
        }
        let other = match Journal::peek(&p) {
            Ok(other) => other,
            Err(e) => {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                let sibling = name.is_some_and(|n| n.contains(&own) && n.ends_with(&pid));
                if sibling && raw_state(&p) != Some(State::Filling) {
                    return Err(refusal(&p, &e));
                }
                continue;
            }
        };
        if let Some(m) = other.meta.as_ref().filter(|m| {
            other.state == State::Armed && m.pid == meta.pid && m.identity == meta.identity
        }) {
            parts.push((m.part, p));
        }
    }
    parts.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    Ok(parts.into_iter().map(|(_, p)| p).collect())
}

/// Writes one armed journal back; the target and the bytes restored.
fn restore_armed(journal: &mut Journal) -> Result<(String, u64, Option<String>)> {
    let meta = journal.meta.clone().expect("an armed journal has metadata");
    let target = super::identity::locate(&meta.identity).map_err(|e| {
        IoFailure::new(
            format!("cannot find {} to restore it: {e}; the journal {} is kept: reconnect the device and run `{}` again", meta.identity.path, journal.path.display(), recover_command(&journal.path)),
            None,
        )
    })?;
    let now = Identity::of_path(&target).map_err(|e| {
        IoFailure::new(
            format!(
                "cannot examine {} to restore it: {e}; the journal {} is kept",
                target.display(),
                journal.path.display()
            ),
            None,
        )
    })?;
    if !meta.identity.is_same_medium(&now) {
        let why = meta.identity.mismatch(&now).unwrap_or_default();
        return Err(usage(format!(
            "refusing to restore {} onto {}: it is not the medium the journal was taken from ({why}). The journal is kept",
            journal.path.display(),
            target.display()
        )));
    }
    journal
        .verify_all()
        .map_err(|e| refusal(&journal.path, &e))?;
    let writer = open_writer(&target, meta.identity.kind == "block_device").map_err(|e| {
        IoFailure::new(
            format!("cannot open {} to restore it: {e}", target.display()),
            Some(e),
        )
    })?;
    opened_is(&writer, &now, &target)?;
    medium_free(&writer, &target, &journal.path)?;
    let done = apply(journal, &writer, &target).map_err(|e| restore_failure(&journal.path, e))?;
    Ok((target.display().to_string(), done.bytes, done.journal_left))
}

/// Checks that the descriptor the restore will write through is the medium
/// whose identity was just checked: the name could have been pointed
/// elsewhere between the check and the open.
fn opened_is(writer: &File, checked: &Identity, target: &Path) -> Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = writer.metadata()?;
    let same = if meta.file_type().is_block_device() {
        (
            rustix::fs::major(meta.rdev()),
            rustix::fs::minor(meta.rdev()),
        ) == (checked.major, checked.minor)
    } else {
        meta.is_file()
            && (rustix::fs::major(meta.dev()), rustix::fs::minor(meta.dev()))
                == (checked.major, checked.minor)
            && Some(meta.ino()) == checked.inode
    };
    if same {
        return Ok(());
    }
    Err(usage(format!(
        "refusing to restore onto {}: it changed while it was being opened (another file or device now has that name); nothing was written. Run recover again",
        target.display()
    )))
}

/// Takes the medium's lock (see [`super::lock`]) for a restore by
/// `recover`: a test writing there now must not have its data replaced
/// under it. A block device is already held exclusively by `open_writer`.
fn medium_free(writer: &File, target: &Path, journal: &Path) -> Result<()> {
    match lock::try_exclusive(writer)? {
        Lock::Taken => Ok(()),
        Lock::Held(pid) => Err(usage(format!(
            "{} is being written by {} now: the journal {} is kept; run `{}` once that test has ended",
            target.display(),
            lock::holder_name(pid),
            journal.display(),
            recover_command(journal)
        ))),
    }
}

/// What to do about a journal left behind after a verified restore:
/// `left` names it and says why it stayed. It still reads as armed, so a
/// later `recover` would write the same original bytes again, over
/// anything written to the target since.
pub fn journal_left_note(left: &str) -> String {
    format!(
        "the journal was not removed after the verified restore ({left}); delete it once its file system is writable, before writing to the target again: `recover` would put back the bytes it holds"
    )
}

/// The error for a restore that failed after a test: what failed, what the
/// test left on the target (measured against the journal, not assumed),
/// where the original is and the command that puts it back.
pub fn failed_after_test(p: &Preserved, e: RestoreError) -> anyhow::Error {
    let (what, source, fix) = match e {
        RestoreError::Journal(j) => (
            format!(
                "the journal {} cannot be read back: {j}",
                p.journal.display()
            ),
            None,
            "once it can be read",
        ),
        RestoreError::Medium(msg, source) => (msg, Some(source), "once the device answers again"),
    };
    IoFailure::new(
        format!(
            "{what}. {} The original data is kept in {}: {fix}, run `{}`",
            target_state(p),
            p.journal.display(),
            recover_command(&p.journal)
        ),
        source,
    )
    .into()
}

/// What the test left on its target, in a sentence, compared with the
/// journal's checksums.
fn target_state(p: &Preserved) -> String {
    let target = p.target_path.display();
    let measured = p
        .lock
        .try_clone()
        .map_err(JournalError::Io)
        .and_then(|f| Journal::from_open_file(&p.journal, f))
        .map_err(|e| e.to_string())
        .and_then(|j| changed_bytes(&j, &p.target_path).map_err(|e| e.to_string()));
    match measured {
        Ok(Changes {
            changed: 0,
            unreadable: 0,
            total,
        }) => format!(
            "{target} reads back as the original in all {} journalled.",
            format_size(total)
        ),
        Ok(seen) => {
            let unreadable = if seen.unreadable > 0 {
                format!(
                    ", and {} could not be read back",
                    format_size(seen.unreadable)
                )
            } else {
                String::new()
            };
            format!(
                "The test wrote to {target}: {} of the {} journalled differ from the original now{unreadable} (compared in 1 MiB pieces with the journal's checksums).",
                format_size(seen.changed),
                format_size(seen.total)
            )
        }
        Err(why) => format!(
            "The test may have written to {target}: comparing it with the journal failed ({why})."
        ),
    }
}

/// The error for a failed restore: what failed, and that the journal waits.
pub fn restore_failure(journal: &Path, e: RestoreError) -> anyhow::Error {
    match e {
        RestoreError::Journal(j) => refusal(journal, &j),
        RestoreError::Medium(msg, source) => IoFailure::new(
            format!(
                "{msg}. The original data is kept in {}: once the device answers again, run `{}`",
                journal.display(),
                recover_command(journal)
            ),
            Some(source),
        )
        .into(),
    }
}

/// `recover` will not use a journal: it writes nothing, and keeps it.
fn refusal(path: &Path, e: &JournalError) -> anyhow::Error {
    IoFailure::new(
        format!("refusing to use the journal {}: {e}. recover wrote nothing to the target; the journal is kept for inspection", path.display()),
        None,
    )
    .into()
}

/// The state word of a journal whose rest may be damaged.
fn raw_state(path: &Path) -> Option<State> {
    let journal = Journal::peek(path);
    if let Ok(j) = journal {
        return Some(j.state);
    }
    let f = File::open(path).ok()?;
    let mut p = [0u8; 16];
    f.read_exact_at(&mut p, 0).ok()?;
    (&p[0..8] == journal::MAGIC && p[8..16] == *b"FILLING\0").then_some(State::Filling)
}

/// Whether `pid` is another running iocurve (the owner of a journal).
fn is_live_iocurve(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // Field 3, after the parenthesised name: Z is a zombie, already dead.
    let alive = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'));
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    alive && comm.trim() == "iocurve"
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A file target with random bytes, a journal of two regions of it taken
    /// with 4 KiB chunks, and the file then overwritten as a test would.
    struct Setup {
        _dir: tempfile::TempDir,
        target: PathBuf,
        journals: PathBuf,
        original: Vec<u8>,
        written: Vec<u8>,
        journal: PathBuf,
    }

    const SIZE: usize = 40_000;

    fn setup(seed: u64) -> Setup {
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
        let p = write_journal(&target, meta, &journals, &AtomicBool::new(false)).unwrap();
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
    fn ended(p: Preserved) -> PathBuf {
        let journal = p.journal.clone();
        drop(p);
        unlocked(&journal);
        journal
    }

    /// Waits until no copy of a dropped descriptor holds `path`'s lock.
    fn unlocked(path: &Path) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            let file = File::open(path).unwrap();
            if lock::try_exclusive(&file).unwrap() == Lock::Taken {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn contents(s: &Setup) -> Vec<u8> {
        std::fs::read(&s.target).unwrap()
    }

    #[test]
    fn recover_restores_and_a_second_run_finds_nothing() {
        let s = setup(1);
        assert_eq!(Journal::peek(&s.journal).unwrap().state, State::Armed);
        let out = recover(&s.journal).unwrap();
        assert_eq!(
            out,
            Outcome::Restored {
                target: s.target.display().to_string(),
                bytes: 9000 + (SIZE as u64 - 20480),
                journals: 1,
                left: Vec::new(),
            }
        );
        assert_eq!(contents(&s), s.original);
        assert!(list(&s.journals).unwrap().is_empty());
        let again = recover(&s.journal).unwrap_err();
        assert!(again.to_string().contains("already recovered"), "{again}");
        assert_eq!(contents(&s), s.original);
    }

    /// A second journal of the same test over bytes the first part's writes
    /// had changed (what an aliasing fake card gives): written back first,
    /// so that the first part's originals end up on the medium.
    #[test]
    fn the_journals_of_one_test_are_restored_together_latest_first() {
        for named in [0, 1] {
            let s = setup(10 + named);
            let later = Region {
                offset: 4096,
                length: 8192,
            };
            let mut meta = new_meta(Identity::of_path(&s.target).unwrap(), vec![later], 4096);
            meta.part = 1;
            // Dropped at once: its test is over (its lock gone), as after a kill.
            let p1 = ended(
                write_journal(&s.target, meta, &s.journals, &AtomicBool::new(false)).unwrap(),
            );
            let mut now = s.written.clone();
            now[4096..12288].fill(0xDD);
            std::fs::write(&s.target, &now).unwrap();
            let path = [&s.journal, &p1][named as usize];
            let out = recover(path).unwrap();
            assert!(
                matches!(out, Outcome::Restored { journals: 2, .. }),
                "{out:?}"
            );
            assert_eq!(contents(&s), s.original, "naming part {named}");
            assert!(list(&s.journals).unwrap().is_empty());
        }
    }

    #[test]
    fn a_damaged_journal_of_the_same_test_holds_back_the_others() {
        // Its header (unreadable, known by its name) or its data.
        for (seed, header) in [(12, true), (13, false)] {
            let s = setup(seed);
            let later = Region {
                offset: 20480,
                length: 4096,
            };
            let mut meta = new_meta(Identity::of_path(&s.target).unwrap(), vec![later], 4096);
            meta.part = 1;
            // Dropped at once: its test is over (its lock gone), as after a kill.
            let p1 = ended(
                write_journal(&s.target, meta, &s.journals, &AtomicBool::new(false)).unwrap(),
            );
            let mut bytes = std::fs::read(&p1).unwrap();
            let at = if header { 16 } else { bytes.len() - 1 };
            bytes[at] ^= 0x10;
            std::fs::write(&p1, &bytes).unwrap();
            let e = recover(&s.journal).unwrap_err();
            assert!(e.to_string().contains("refusing to use the journal"), "{e}");
            assert_eq!(contents(&s), s.written, "nothing was written back");
            assert!(s.journal.exists() && p1.exists());
        }
    }

    #[test]
    fn an_interrupted_restore_is_finished_and_a_done_journal_removed() {
        let s = setup(2);
        // A restore that died half-way: the journal is still armed.
        std::fs::write(
            &s.target,
            [&s.original[..10_000], &s.written[10_000..]].concat(),
        )
        .unwrap();
        assert!(matches!(
            recover(&s.journal).unwrap(),
            Outcome::Restored { .. }
        ));
        assert_eq!(contents(&s), s.original);

        // One that died after marking the journal done, before deleting it.
        let s = setup(3);
        let mut j = Journal::open(&s.journal).unwrap();
        j.set_state(State::Done).unwrap();
        assert_eq!(recover(&s.journal).unwrap(), Outcome::AlreadyDone);
        assert_eq!(
            contents(&s),
            s.written,
            "a done journal is not applied again"
        );
        assert!(!s.journal.exists());
    }

    #[test]
    fn a_never_armed_journal_is_discarded_without_writing() {
        let s = setup(4);
        let j = Journal::open(&s.journal).unwrap();
        journal::set_state(&j.file, State::Filling).unwrap();
        let out = recover(&s.journal).unwrap();
        assert!(matches!(out, Outcome::Discarded { .. }), "{out:?}");
        assert_eq!(contents(&s), s.written);
        assert!(!s.journal.exists());
    }

    #[test]
    fn a_journal_its_test_still_holds_is_left_alone_in_every_state() {
        for state in [State::Filling, State::Armed, State::Done] {
            let s = setup(40);
            let j = Journal::open(&s.journal).unwrap();
            journal::set_state(&j.file, state).unwrap();
            // The test is alive: it holds the journal's lock.
            let held = File::open(&s.journal).unwrap();
            assert_eq!(lock::try_exclusive(&held).unwrap(), Lock::Taken);
            let out = recover(&s.journal).unwrap();
            assert!(matches!(out, Outcome::InUse { .. }), "{state:?}: {out:?}");
            assert_eq!(contents(&s), s.written, "{state:?}: nothing written");
            assert!(s.journal.exists(), "{state:?}: journal kept");
            drop(held);
            unlocked(&s.journal);
            let out = recover(&s.journal).unwrap();
            assert!(!matches!(out, Outcome::InUse { .. }), "{state:?}: {out:?}");
        }
    }

    #[test]
    fn a_journal_being_made_is_locked_before_it_has_its_name() {
        let s = setup(41);
        let path = s.journals.join("new.iocj");
        let writer = JournalWriter::create(&path, 4096).unwrap();
        assert!(!path.with_extension(journal::MAKING_EXTENSION).exists());
        let out = recover(&path).unwrap();
        assert!(matches!(out, Outcome::InUse { .. }), "{out:?}");
        assert!(path.exists());
        drop(writer);
        unlocked(&path);
        let out = recover(&path).unwrap();
        assert_eq!(out, Outcome::Discarded { target: None });
        assert!(!path.exists());
    }

    #[test]
    fn unnamed_journals_are_swept_only_once_their_maker_is_gone() {
        let s = setup(42);
        let gone = s.journals.join("disk.img-1_2-3-999999999.iocj-new");
        let alive = s
            .journals
            .join(format!("disk.img-1_2-3-{}.iocj-new", std::process::id()));
        std::fs::write(&gone, b"").unwrap();
        std::fs::write(&alive, b"").unwrap();
        let (_, found) = unfinished(Some(&s.journals)).unwrap();
        assert_eq!(found, vec![s.journal.clone()], "never listed as journals");
        assert!(!gone.exists(), "a dead maker's file is swept");
        assert!(alive.exists(), "a live maker's file is left");
    }

    #[test]
    fn two_recovers_at_once_restore_once_and_the_other_stands_aside() {
        for seed in 50..58 {
            let s = setup(seed);
            let outcomes: Vec<Result<Outcome>> = std::thread::scope(|scope| {
                let a = scope.spawn(|| recover(&s.journal));
                let b = scope.spawn(|| recover(&s.journal));
                vec![a.join().unwrap(), b.join().unwrap()]
            });
            let restored = outcomes
                .iter()
                .filter(|o| matches!(o, Ok(Outcome::Restored { .. })))
                .count();
            assert_eq!(restored, 1, "seed {seed}: {outcomes:?}");
            for o in &outcomes {
                match o {
                    // Met it held, or met it done after the first let go.
                    Ok(Outcome::Restored { .. } | Outcome::InUse { .. } | Outcome::AlreadyDone) => {
                    }
                    // The first had finished and removed it already.
                    Err(e) => {
                        let e = format!("{e:#}");
                        assert!(
                            e.contains("there is no journal") || e.contains("No such file"),
                            "seed {seed}: {e}"
                        );
                    }
                    Ok(other) => panic!("seed {seed}: {other:?}"),
                }
            }
            assert_eq!(contents(&s), s.original, "seed {seed}");
            assert!(!s.journal.exists());
        }
    }

    #[test]
    fn another_medium_is_refused() {
        let s = setup(5);
        let other = s.target.with_extension("new");
        std::fs::write(&other, &s.written).unwrap();
        std::fs::rename(&other, &s.target).unwrap();
        let e = recover(&s.journal).unwrap_err();
        assert!(e.to_string().contains("not the medium"), "{e}");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(contents(&s), s.written);
        assert!(s.journal.exists(), "the journal is kept");
    }

    /// The structural points of an armed journal: every prefix field, the
    /// metadata's first, middle and last bytes, each chunk's first and last.
    fn structural_points(j: &Path) -> Vec<u64> {
        let journal = Journal::peek(j).unwrap();
        let meta_len = serde_json::to_vec(journal.meta.as_ref().unwrap())
            .unwrap()
            .len() as u64;
        let mut points: Vec<u64> = vec![0, 7, 8, 15, 16, 23, 24, 31, 32, 35, 36, 39, 40, 63];
        points.extend([64, 64 + meta_len / 2, 64 + meta_len - 1]);
        for c in journal.chunks() {
            points.extend([c.journal_offset, c.journal_offset + c.len - 1]);
        }
        points
    }

    fn assert_refused_untouched(s: &Setup, what: &str) {
        let before = std::fs::read(&s.journal).unwrap();
        match recover(&s.journal) {
            Err(e) => assert!(
                e.to_string().contains("refusing to use the journal"),
                "{what}: {e}"
            ),
            Ok(out) => panic!("{what}: accepted ({out:?})"),
        }
        assert_eq!(contents(s), s.written, "{what}: the target was written");
        assert_eq!(
            std::fs::read(&s.journal).unwrap(),
            before,
            "{what}: journal changed"
        );
    }

    #[test]
    fn a_flipped_byte_anywhere_structural_is_refused_whole() {
        let s = setup(6);
        let pristine = std::fs::read(&s.journal).unwrap();
        for at in structural_points(&s.journal) {
            let mut bad = pristine.clone();
            bad[at as usize] ^= 0x01;
            std::fs::write(&s.journal, &bad).unwrap();
            assert_refused_untouched(&s, &format!("flip at {at}"));
        }
    }

    #[test]
    fn a_truncated_journal_is_refused_whole() {
        let s = setup(7);
        let pristine = std::fs::read(&s.journal).unwrap();
        let mut cuts: Vec<u64> = structural_points(&s.journal);
        cuts.push(pristine.len() as u64 - 1);
        for cut in cuts {
            std::fs::write(&s.journal, &pristine[..cut as usize]).unwrap();
            assert_refused_untouched(&s, &format!("cut at {cut}"));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn any_damage_outside_padding_is_caught(pos in 0.0f64..1.0, xor in 1u8..=255, seed in 0u64..4) {
            let s = setup(100 + seed);
            let mut bytes = std::fs::read(&s.journal).unwrap();
            let journal = Journal::peek(&s.journal).unwrap();
            let meta_end = 64 + serde_json::to_vec(journal.meta.as_ref().unwrap()).unwrap().len();
            // Covered bytes: the prefix but the state word, the metadata, the data.
            let covered: Vec<usize> = (0..8).chain(16..meta_end).chain(journal.data_offset as usize..bytes.len()).collect();
            let at = covered[((covered.len() - 1) as f64 * pos) as usize];
            bytes[at] ^= xor;
            std::fs::write(&s.journal, &bytes).unwrap();
            let out = recover(&s.journal);
            prop_assert!(out.is_err(), "damage at {} accepted: {:?}", at, out);
            prop_assert_eq!(contents(&s), s.written.clone());
        }
    }

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

    #[test]
    fn a_journal_directory_on_the_target_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t");
        std::fs::write(&f, b"data").unwrap();
        let id = Identity::of_path(&f).unwrap();
        let e = check_journal_dir(&dir.path().join("j"), &id, 10).unwrap_err();
        assert!(e.to_string().contains("same file system"), "{e}");
        if Path::new("/dev/shm").is_dir() {
            let mut elsewhere = id.clone();
            elsewhere.major = 4095;
            let e = check_journal_dir(Path::new("/dev/shm/iocurve-test-journals"), &elsewhere, 10)
                .unwrap_err();
            assert!(e.to_string().contains("in memory"), "{e}");
            let _ = std::fs::remove_dir("/dev/shm/iocurve-test-journals");
        }
    }

    /// A journal directory `recover` would not trust is refused before
    /// anything is written in it; one created is private.
    #[test]
    fn a_journal_directory_others_control_is_refused() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t");
        std::fs::write(&f, b"data").unwrap();
        let mut elsewhere = Identity::of_path(&f).unwrap();
        elsewhere.major = 4095;
        let made = dir.path().join("made/journals");
        check_journal_dir(&made, &elsewhere, 10).unwrap();
        for d in [&made, &dir.path().join("made")] {
            assert_eq!(std::fs::metadata(d).unwrap().mode() & 0o777, 0o700);
        }
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_journal_dir(&open, &elsewhere, 10).unwrap_err();
        assert!(e.to_string().contains("is not sticky"), "{e}");
        assert!(e.to_string().contains("--journal-dir DIR"), "{e}");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(
            std::fs::read_dir(&open).unwrap().count(),
            0,
            "nothing written"
        );
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&made, Some(65534), None).unwrap();
            let e = check_journal_dir(&made, &elsewhere, 10).unwrap_err();
            assert!(e.to_string().contains("owned by uid 65534"), "{e}");
        }
    }
}
