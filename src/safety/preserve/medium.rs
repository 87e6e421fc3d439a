//! Reading and writing the medium itself, past the page cache: what the
//! journal copies is what the medium holds, and a restore counts only once
//! read back from it. Also the checks that the descriptor a restore writes
//! through is the medium checked, and that no test is writing there now.

use super::messages::recover_command;
use crate::error::usage;
use crate::safety::identity::Identity;
use crate::safety::lock::{self, Lock};
use crate::sys::buffer::AlignedBuf;
use anyhow::Result;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long `recover` waits for a dying process to let go of a device.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// The unit a refused restore write is retried in: what O_DIRECT takes.
const PIECE: usize = 4096;

/// Opens the medium for reading with O_DIRECT (falling back to the page
/// cache, evicted first, where the file system refuses O_DIRECT).
pub(super) fn open_reader(path: &Path) -> io::Result<File> {
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
pub(super) fn read_medium(
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
pub(super) fn read_scratch(chunk: u64) -> AlignedBuf {
    AlignedBuf::new((chunk as usize).next_multiple_of(4096) + 8192, 4096)
}

/// Opens the medium for writing the restore: O_DIRECT and O_EXCL for a block
/// device (waiting a little while a killed process lets go of it), plain for
/// a file.
pub(super) fn open_writer(path: &Path, block: bool) -> io::Result<File> {
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

fn write_medium(file: &File, data: &[u8], offset: u64) -> io::Result<()> {
    file.write_all_at(data, offset)
}

/// Writes `data` back at `offset`. Where the medium refuses the write, it
/// is tried again 4 KiB at a time, and a piece the medium still refuses is
/// accepted only if it holds the original bytes already (read past the
/// page cache): a fake card's blocks beyond its real size refuse every
/// write, the test's as well, so they were never changed. Anything else is
/// the first error.
pub(super) fn write_back(file: &File, data: &[u8], offset: u64, path: &Path) -> io::Result<()> {
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

/// Checks that the descriptor the restore will write through is the medium
/// whose identity was just checked: the name could have been pointed
/// elsewhere between the check and the open.
pub(super) fn opened_is(writer: &File, checked: &Identity, target: &Path) -> Result<()> {
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

/// Takes the medium's lock (see [`lock`]) for a restore by
/// `recover`: a test writing there now must not have its data replaced
/// under it. A block device is already held exclusively by `open_writer`.
pub(super) fn medium_free(writer: &File, target: &Path, journal: &Path) -> Result<()> {
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
