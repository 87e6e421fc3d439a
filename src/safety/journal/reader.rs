//! Reading a journal back: the prefix and metadata checked on open, every
//! chunk before anything is written to the medium, so that a damaged or
//! truncated journal is refused whole.

use super::beat::{Beat, last_beat};
use super::hashes::{block_count, read_table, table_end, table_offset, write_table};
use super::writer::set_state;
use super::{
    Chunk, FORMAT, JournalError, MAGIC, Meta, PREFIX_LEN, State, chunk_checksum, chunks,
    prefix_crc, u32_at, u64_at,
};
use rustix::fs::OFlags;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A journal read back and checked (prefix and metadata; chunks on demand).
#[derive(Debug)]
pub struct Journal {
    pub path: PathBuf,
    pub file: File,
    pub state: State,
    /// `None` for a journal that was still `FILLING` before its metadata.
    pub meta: Option<Meta>,
    pub data_offset: u64,
    /// What the test wrote, one hash per 4 KiB block in region order (see
    /// [`super::hashes`]): read and checked in a `WRITTEN` journal, or
    /// just stored by [`Journal::store_hashes`].
    pub test_hashes: Option<Vec<u64>>,
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
    /// checked, see [`crate::safety::trust`], or the test's own locked descriptor,
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
            test_hashes: None,
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
        if state == State::Written {
            let at = table_offset(&meta, data_offset);
            journal.test_hashes = Some(read_table(&journal.file, at, block_count(&meta.regions))?);
        }
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
    /// writable, else through a writable reopen of it (never its name: a
    /// read-only file system is then the error).
    pub fn set_state(&mut self, state: State) -> io::Result<()> {
        match set_state(&self.file, state) {
            Err(e) if e.raw_os_error() == Some(libc::EBADF) => {
                set_state(&self.writable()?, state)?;
            }
            other => other?,
        }
        self.state = state;
        Ok(())
    }

    /// A writable descriptor on this very journal file.
    pub fn writable(&self) -> io::Result<File> {
        crate::sys::reopen::reopen(self.file.as_fd(), OFlags::RDWR)
    }

    /// Stores the table of what the test wrote (fsynced) and turns the
    /// journal `WRITTEN`; the table is kept here either way, for the
    /// restore now (a journal on a read-only file system takes neither).
    pub fn store_hashes(&mut self, table: Vec<u64>) -> io::Result<()> {
        let meta = self
            .meta
            .as_ref()
            .ok_or_else(|| io::Error::other("no metadata"))?;
        let at = table_offset(meta, self.data_offset);
        let stored = self
            .writable()
            .and_then(|f| write_table(&f, at, &table))
            .and_then(|_| self.set_state(State::Written));
        self.test_hashes = Some(table);
        stored
    }

    /// The test's last heartbeat, in a journal that has them.
    pub fn last_beat(&self) -> Option<Beat> {
        let at = self.meta.as_ref()?.beat_offset(self.data_offset)?;
        last_beat(&self.file, at)
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
    if meta.format == 0 || meta.format > FORMAT {
        return Err(JournalError::Corrupt(format!(
            "unknown format {}",
            meta.format
        )));
    }
    // Whole 4 KiB blocks per chunk: the table of hashes counts by block.
    if meta.chunk_size == 0 || meta.chunk_size > 1 << 30 || !meta.chunk_size.is_multiple_of(4096) {
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
    let need = match state {
        State::Written => table_end(meta, data_offset),
        _ => need,
    };
    if state != State::Filling && len < need {
        return Err(JournalError::Truncated(format!(
            "{len} bytes of the {need} it must hold"
        )));
    }
    if meta.format >= 2 && data_offset < PREFIX_LEN + super::BEAT_ROOM {
        return Err(JournalError::Corrupt("no room for its heartbeat".into()));
    }
    Ok(())
}
