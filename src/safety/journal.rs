//! The journal: a crash-proof copy of the bytes a write test will overwrite.
//!
//! The method is write-ahead logging reduced to one transaction. Before the
//! first benchmark write, the original bytes are copied into a journal file
//! on another file system, with a header naming the medium, the regions and a
//! CRC-32C (Castagnoli) checksum per chunk; everything is fsynced, and only
//! then is one header field turned from `FILLING` to `ARMED` and fsynced
//! again. That single small write is the commit point:
//!
//! - no journal, or one still `FILLING`: the medium was never written by the
//!   benchmark, and the journal is simply discarded;
//! - `ARMED`: the medium may hold benchmark data; writing every chunk back
//!   (any number of times: it is the same bytes) restores it;
//! - `DONE`: the restore was written, read back and verified; the file only
//!   waits to be deleted.
//!
//! Layout (little-endian):
//!
//! ```text
//! 0   8  magic "IOCJRNL1"
//! 8   8  state: "FILLING\0" | "ARMED\0\0\0" | "DONE\0\0\0\0"
//! 16  8  length of the metadata
//! 24  8  offset of the data (a multiple of 4096)
//! 32  4  CRC-32C of the metadata
//! 36  4  CRC-32C of bytes 0..8, 16..36 and 40..64 (all but state and itself)
//! 40 24  reserved, zero
//! 64  …  metadata: JSON (identity, regions, chunk size, chunk checksums)
//! data   the chunks, in region order
//! ```
//!
//! Each chunk's checksum covers its target offset and its bytes, so a chunk
//! moved to the wrong place is caught as surely as a flipped bit. The states
//! are whole 8-byte words, so no single damaged byte turns one into another.
//! A reader checks the prefix, the metadata and, before anything is written
//! to the medium, every chunk: a damaged or truncated journal is refused
//! whole and never half applied.

use super::identity::Identity;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"IOCJRNL1";
/// Bytes before the metadata.
pub const PREFIX_LEN: u64 = 64;
const STATE_OFFSET: u64 = 8;
/// Journal files end in this.
pub const EXTENSION: &str = "iocj";
/// A journal being made, before it is locked and named (never looked at
/// by `recover`; a crash right there leaves one behind, empty of data).
pub const MAKING_EXTENSION: &str = "iocj-new";
/// Chunk size of the copy: one checksum per MiB.
pub const CHUNK: u64 = 1 << 20;
/// Data starts at a multiple of this.
const DATA_ALIGN: u64 = 4096;

/// Where a journal is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Being written; the medium has not been touched.
    Filling,
    /// Complete and fsynced; the medium may hold benchmark data.
    Armed,
    /// Restored and verified; waiting to be deleted.
    Done,
}

impl State {
    fn word(self) -> [u8; 8] {
        match self {
            State::Filling => *b"FILLING\0",
            State::Armed => *b"ARMED\0\0\0",
            State::Done => *b"DONE\0\0\0\0",
        }
    }

    fn from_word(word: &[u8]) -> Option<State> {
        [State::Filling, State::Armed, State::Done]
            .into_iter()
            .find(|s| s.word() == word)
    }

    pub fn name(self) -> &'static str {
        match self {
            State::Filling => "filling",
            State::Armed => "armed",
            State::Done => "done",
        }
    }
}

/// A byte range of the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    pub offset: u64,
    pub length: u64,
}

/// The journal's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub format: u32,
    pub iocurve_version: String,
    pub created_at: String,
    pub pid: u32,
    pub identity: Identity,
    pub chunk_size: u64,
    pub regions: Vec<Region>,
    /// One CRC-32C per chunk, in region order.
    pub checksums: Vec<u32>,
    /// Which journal of its test this is: 0 for the first, then one more
    /// for each later extension (regions a detector learned it must write
    /// while running). A test's journals are written back latest first.
    /// Absent, and so 0, in a test's only journal.
    #[serde(default, skip_serializing_if = "is_first")]
    pub part: u32,
}

fn is_first(part: &u32) -> bool {
    *part == 0
}

/// One chunk: where it belongs on the medium and where it is in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub index: usize,
    pub target_offset: u64,
    pub len: u64,
    pub journal_offset: u64,
}

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not an iocurve journal (wrong magic)")]
    NotAJournal,
    #[error("the journal is truncated: {0}")]
    Truncated(String),
    #[error("the journal is damaged: {0}")]
    Corrupt(String),
}

/// The checksum of a chunk: CRC-32C of its target offset, then its bytes.
pub fn chunk_checksum(target_offset: u64, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&target_offset.to_le_bytes()), data)
}

/// The chunks of `regions`, split at `chunk_size`, laid out from `data_offset`.
pub fn chunks(regions: &[Region], chunk_size: u64, data_offset: u64) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut journal_offset = data_offset;
    for r in regions {
        let mut done = 0;
        while done < r.length {
            let len = chunk_size.min(r.length - done);
            out.push(Chunk {
                index: out.len(),
                target_offset: r.offset + done,
                len,
                journal_offset,
            });
            journal_offset += len;
            done += len;
        }
    }
    out
}

impl Meta {
    pub fn total_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.length).sum()
    }

    pub fn chunk_count(&self) -> usize {
        chunks(&self.regions, self.chunk_size, 0).len()
    }

    /// Where the data starts: after the longest metadata these regions can
    /// have (every checksum at its widest), rounded up to 4096.
    pub fn data_offset(&self) -> u64 {
        let mut widest = self.clone();
        widest.checksums = vec![u32::MAX; self.chunk_count()];
        let len = serde_json::to_vec(&widest).map_or(0, |v| v.len() as u64);
        (PREFIX_LEN + len + 1).div_ceil(DATA_ALIGN) * DATA_ALIGN
    }
}

fn prefix(state: State, meta_len: u64, data_offset: u64, meta_crc: u32) -> [u8; 64] {
    let mut p = [0u8; 64];
    p[0..8].copy_from_slice(MAGIC);
    p[8..16].copy_from_slice(&state.word());
    p[16..24].copy_from_slice(&meta_len.to_le_bytes());
    p[24..32].copy_from_slice(&data_offset.to_le_bytes());
    p[32..36].copy_from_slice(&meta_crc.to_le_bytes());
    let crc = prefix_crc(&p);
    p[36..40].copy_from_slice(&crc.to_le_bytes());
    p
}

/// The checksum of the prefix, state word and checksum field left out.
fn prefix_crc(p: &[u8]) -> u32 {
    let head = crc32c::crc32c_append(crc32c::crc32c(&p[0..8]), &p[16..36]);
    crc32c::crc32c_append(head, &p[40..64])
}

fn u64_at(p: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(p[at..at + 4].try_into().expect("4 bytes"))
}

/// Flushes a directory, so that a file created or removed in it stays so.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A journal being written.
pub struct JournalWriter {
    pub path: PathBuf,
    file: File,
    /// A read-only descriptor holding the journal's lock (see
    /// [`super::lock`]) from before the file had its name; the test keeps
    /// it until the journal is gone.
    lock: File,
    data_offset: u64,
}

impl JournalWriter {
    /// Creates the file (it must not exist) with a `FILLING` prefix and
    /// fsyncs it and its directory, so that even a journal that never got
    /// its data is found and discarded later. The file is made under a
    /// name `recover` does not look at, locked, and only then renamed into
    /// place, so no `recover` ever sees it unlocked while this test lives.
    pub fn create(path: &Path, data_offset: u64) -> io::Result<JournalWriter> {
        use std::os::unix::fs::OpenOptionsExt;
        let making = path.with_extension(MAKING_EXTENSION);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&making)?;
        let made = Self::lock_and_name(&file, &making, path, data_offset);
        match made {
            Ok(lock) => Ok(JournalWriter {
                path: path.to_path_buf(),
                file,
                lock,
                data_offset,
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&making);
                Err(e)
            }
        }
    }

    fn lock_and_name(
        file: &File,
        making: &Path,
        path: &Path,
        data_offset: u64,
    ) -> io::Result<File> {
        let lock = File::open(making)?;
        if super::lock::try_exclusive(&lock)? != super::lock::Lock::Taken {
            return Err(io::Error::other("a new journal was locked by someone else"));
        }
        file.write_all_at(&prefix(State::Filling, 0, data_offset, 0), 0)?;
        file.sync_all()?;
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            making,
            rustix::fs::CWD,
            path,
            rustix::fs::RenameFlags::NOREPLACE,
        )?;
        if let Some(dir) = path.parent() {
            sync_dir(dir)?;
        }
        Ok(lock)
    }

    /// The descriptor that holds the lock, for the test to keep once the
    /// journal is armed (the writable one is closed then, so the journal's
    /// file system can still be remounted read-only under a running test).
    pub fn into_lock(self) -> File {
        self.lock
    }

    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    pub fn write_chunk(&self, chunk: &Chunk, data: &[u8]) -> io::Result<()> {
        self.file.write_all_at(data, chunk.journal_offset)
    }

    /// Writes the metadata (still `FILLING`) and fsyncs data and metadata.
    pub fn seal(&self, meta: &Meta) -> io::Result<()> {
        let json = serde_json::to_vec(meta).map_err(io::Error::other)?;
        let len = json.len() as u64;
        if PREFIX_LEN + len > self.data_offset {
            return Err(io::Error::other("journal metadata outgrew its room"));
        }
        self.file.write_all_at(&json, PREFIX_LEN)?;
        let p = prefix(State::Filling, len, self.data_offset, crc32c::crc32c(&json));
        self.file.write_all_at(&p, 0)?;
        self.file.sync_all()
    }

    /// The commit point: from here on the medium may be written.
    pub fn arm(&self) -> io::Result<()> {
        set_state(&self.file, State::Armed)
    }
}

/// Writes the state word and fsyncs.
pub fn set_state(file: &File, state: State) -> io::Result<()> {
    file.write_all_at(&state.word(), STATE_OFFSET)?;
    file.sync_all()
}

/// A journal read back and checked (prefix and metadata; chunks on demand).
#[derive(Debug)]
pub struct Journal {
    pub path: PathBuf,
    pub file: File,
    pub state: State,
    /// `None` for a journal that was still `FILLING` before its metadata.
    pub meta: Option<Meta>,
    pub data_offset: u64,
}

impl Journal {
    /// Opens `path` (never through a symlink) and checks its prefix and
    /// metadata: read-write, or read-only where its file system is (a
    /// journal can still be written back from there; only its state word
    /// cannot change, see [`Journal::set_state`]).
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        Self::from_file(path, open_file(path)?)
    }

    /// Opens `path` read-only (to look, not to change).
    pub fn peek(path: &Path) -> Result<Journal, JournalError> {
        Self::from_file(path, File::open(path)?)
    }

    /// Reads the journal from `file`, already opened as `path` (and
    /// checked, see [`super::trust`], or the test's own locked descriptor,
    /// which still reads the journal if its name was removed or replaced
    /// meanwhile): what is read is what was checked, with no second open by
    /// path in between.
    pub fn from_open_file(path: &Path, file: File) -> Result<Journal, JournalError> {
        Self::from_file(path, file)
    }

    fn from_file(path: &Path, file: File) -> Result<Journal, JournalError> {
        let len = file.metadata()?.len();
        let mut p = [0u8; PREFIX_LEN as usize];
        if len < PREFIX_LEN {
            return Err(JournalError::Truncated(format!(
                "{len} bytes, shorter than its header"
            )));
        }
        file.read_exact_at(&mut p, 0)?;
        if &p[0..8] != MAGIC {
            return Err(JournalError::NotAJournal);
        }
        if prefix_crc(&p) != u32_at(&p, 36) {
            return Err(JournalError::Corrupt("header checksum mismatch".into()));
        }
        let state = State::from_word(&p[8..16])
            .ok_or_else(|| JournalError::Corrupt("unknown state field".into()))?;
        let (meta_len, data_offset) = (u64_at(&p, 16), u64_at(&p, 24));
        let mut journal = Journal {
            path: path.to_path_buf(),
            file,
            state,
            meta: None,
            data_offset,
        };
        if meta_len == 0 {
            if state != State::Filling {
                return Err(JournalError::Corrupt(format!(
                    "{} without metadata",
                    state.name()
                )));
            }
            return Ok(journal);
        }
        if PREFIX_LEN + meta_len > data_offset || len < PREFIX_LEN + meta_len {
            return Err(JournalError::Truncated("metadata cut short".into()));
        }
        let mut json = vec![0u8; meta_len as usize];
        journal.file.read_exact_at(&mut json, PREFIX_LEN)?;
        if crc32c::crc32c(&json) != u32_at(&p, 32) {
            return Err(JournalError::Corrupt("metadata checksum mismatch".into()));
        }
        let meta: Meta = serde_json::from_slice(&json)
            .map_err(|e| JournalError::Corrupt(format!("metadata unreadable: {e}")))?;
        check_meta(&meta, data_offset, len, state)?;
        journal.meta = Some(meta);
        Ok(journal)
    }

    /// The chunks, with their places in the journal.
    pub fn chunks(&self) -> Vec<Chunk> {
        self.meta
            .as_ref()
            .map(|m| chunks(&m.regions, m.chunk_size, self.data_offset))
            .unwrap_or_default()
    }

    /// Reads chunk `c` into `buf` (at least `c.len` long) and checks it.
    pub fn read_chunk(&self, c: &Chunk, buf: &mut [u8]) -> Result<(), JournalError> {
        let buf = &mut buf[..c.len as usize];
        self.file.read_exact_at(buf, c.journal_offset)?;
        let want = self.meta.as_ref().map(|m| m.checksums[c.index]);
        if Some(chunk_checksum(c.target_offset, buf)) != want {
            return Err(JournalError::Corrupt(format!(
                "chunk {} (medium offset {}, {} bytes) fails its checksum",
                c.index, c.target_offset, c.len
            )));
        }
        Ok(())
    }

    /// Reads and checks every chunk; nothing is written.
    pub fn verify_all(&self) -> Result<(), JournalError> {
        let mut buf = vec![0u8; self.meta.as_ref().map_or(0, |m| m.chunk_size as usize)];
        for c in self.chunks() {
            self.read_chunk(&c, &mut buf)?;
        }
        Ok(())
    }

    /// Writes the state word, through this descriptor where it is
    /// writable, else through the journal's name, if that still names this
    /// very file (a read-only descriptor, or a read-only file system, which
    /// is then the error).
    pub fn set_state(&mut self, state: State) -> io::Result<()> {
        match set_state(&self.file, state) {
            Err(e) if e.raw_os_error() == Some(libc::EBADF) => {
                let named = open_writable(&self.path)?;
                if !super::lock::same_file(&named.metadata()?, &self.file.metadata()?) {
                    return Err(io::Error::other("its name now belongs to another file"));
                }
                set_state(&named, state)?;
            }
            other => other?,
        }
        self.state = state;
        Ok(())
    }
}

/// Opens a journal read-write, not through a symlink.
fn open_writable(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Opens a journal read-write, or read-only where its file system is
/// read-only; never through a symlink.
pub fn open_file(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    match open_writable(path) {
        Err(e) if e.raw_os_error() == Some(libc::EROFS) => std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path),
        other => other,
    }
}

fn check_meta(meta: &Meta, data_offset: u64, len: u64, state: State) -> Result<(), JournalError> {
    if meta.format != 1 {
        return Err(JournalError::Corrupt(format!(
            "unknown format {}",
            meta.format
        )));
    }
    if meta.chunk_size == 0 || meta.chunk_size > 1 << 30 {
        return Err(JournalError::Corrupt(format!(
            "chunk size {}",
            meta.chunk_size
        )));
    }
    let ends: Option<Vec<u64>> = meta
        .regions
        .iter()
        .map(|r| r.offset.checked_add(r.length))
        .collect();
    let total = meta
        .regions
        .iter()
        .try_fold(0u64, |a, r| a.checked_add(r.length));
    if ends.is_none() || total.is_none() || meta.regions.iter().any(|r| r.length == 0) {
        return Err(JournalError::Corrupt("impossible regions".into()));
    }
    if meta.checksums.len() != meta.chunk_count() {
        return Err(JournalError::Corrupt(format!(
            "{} checksums for {} chunks",
            meta.checksums.len(),
            meta.chunk_count()
        )));
    }
    let need = data_offset.saturating_add(total.unwrap_or(0));
    if state != State::Filling && len < need {
        return Err(JournalError::Truncated(format!(
            "{len} bytes of the {need} it must hold"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample_meta(regions: Vec<Region>, chunk_size: u64) -> Meta {
        let identity = Identity {
            path: "/dev/loop9".into(),
            kind: "block_device".into(),
            major: 7,
            minor: 9,
            inode: None,
            size: 64 << 20,
            model: None,
            serial: Some("S1".into()),
            loop_backing_file: Some("/tmp/x.img".into()),
            cid: None,
        };
        Meta {
            format: 1,
            iocurve_version: "0.1.0".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            pid: 1,
            identity,
            chunk_size,
            regions,
            checksums: Vec::new(),
            part: 0,
        }
    }

    #[test]
    fn chunks_split_regions_and_follow_each_other() {
        let regions = [
            Region {
                offset: 4096,
                length: 10_000,
            },
            Region {
                offset: 1 << 20,
                length: 4096,
            },
        ];
        let c = chunks(&regions, 4096, 8192);
        let summary: Vec<(u64, u64, u64)> = c
            .iter()
            .map(|c| (c.target_offset, c.len, c.journal_offset))
            .collect();
        assert_eq!(
            summary,
            [
                (4096, 4096, 8192),
                (8192, 4096, 12288),
                (12288, 1808, 16384),
                (1 << 20, 4096, 18192)
            ]
        );
    }

    #[test]
    fn states_differ_in_every_byte_that_matters() {
        for a in [State::Filling, State::Armed, State::Done] {
            for b in [State::Filling, State::Armed, State::Done] {
                let diff = a
                    .word()
                    .iter()
                    .zip(b.word())
                    .filter(|(x, y)| **x != *y)
                    .count();
                assert!(a == b || diff >= 2, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn data_offset_leaves_room_for_any_checksums() {
        let meta = sample_meta(
            vec![Region {
                offset: 0,
                length: 1 << 30,
            }],
            CHUNK,
        );
        let off = meta.data_offset();
        assert_eq!(off % 4096, 0);
        let mut full = meta.clone();
        full.checksums = vec![4_000_000_000; 1024];
        assert!(PREFIX_LEN + serde_json::to_vec(&full).unwrap().len() as u64 <= off);
    }
}
