//! Making a journal: created under a name `recover` ignores, locked, named,
//! filled chunk by chunk, sealed with its metadata and armed, each step
//! fsynced before the next.

use super::{Chunk, MAKING_EXTENSION, Meta, PREFIX_LEN, STATE_OFFSET, State, prefix};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Flushes a directory, so that a file created or removed in it stays so.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A journal being written.
pub struct JournalWriter {
    pub path: PathBuf,
    file: File,
    /// A read-only descriptor holding the journal's lock (see
    /// [`crate::safety::lock`]) from before the file had its name; the test keeps
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
        if crate::safety::lock::try_exclusive(&lock)? != crate::safety::lock::Lock::Taken {
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
        let room = meta
            .beat_offset(self.data_offset)
            .unwrap_or(self.data_offset);
        if PREFIX_LEN + len > room {
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
