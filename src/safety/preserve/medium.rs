//! Reading and writing the medium itself, past the page cache: what the
//! journal copies is what the medium holds, and a restore counts only once
//! read back from it. Every read and write goes through the descriptor
//! whose identity was checked, or a reopen of that very object (see
//! [`crate::sys::reopen`]): never by name, which may lead elsewhere by
//! now. Also the check that no test is writing there now.

use super::recover_command::recover_command;
use crate::error::usage;
use crate::safety::lock::{self, Lock};
use crate::sys::buffer::AlignedBuf;
use crate::sys::reopen::reopen;
use anyhow::Result;
use rustix::fs::OFlags;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long `recover` waits for a dying process to let go of a device.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// The unit a refused restore write is retried in: what O_DIRECT takes.
const PIECE: usize = 4096;

/// A reader of the object `target` refers to (never its name), past the
/// page cache: a reopen of it with O_DIRECT, checked to be the same object,
/// or where the file system refuses O_DIRECT (EINVAL) a plain reopen with
/// the cache evicted first.
pub(super) fn reader_for(target: &File) -> io::Result<File> {
    match reopen(target.as_fd(), OFlags::RDONLY | OFlags::DIRECT) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            let f = reopen(target.as_fd(), OFlags::RDONLY)?;
            let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
            Ok(f)
        }
        other => other,
    }
}

/// The descriptor a restore writes through: a block device's own (held
/// exclusively, O_DIRECT), or for a regular file a reopen of it through
/// the page cache (its unaligned tail cannot go through O_DIRECT), fsynced
/// before anything is read back.
pub(super) fn writer_for(target: &File) -> io::Result<File> {
    if target.metadata()?.file_type().is_block_device() {
        return target.try_clone();
    }
    reopen(target.as_fd(), OFlags::RDWR)
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

/// Opens what `path` names for a restore by `recover`, once: first with
/// `O_PATH` (no final symbolic link followed, no driver's open run, no
/// FIFO to block on), refused unless it is a regular file or, when
/// `block`, a block device; then reopened from that descriptor, O_DIRECT
/// and O_EXCL for a block device (waiting a little while a killed process
/// lets go of it), read-write for a file. Its identity is then checked on
/// this very descriptor, and everything after goes through it or reopens
/// of it.
pub(super) fn open_target(path: &Path, block: bool) -> io::Result<File> {
    let held = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    let kind = rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(&held)?.st_mode);
    let expected = match block {
        true => rustix::fs::FileType::BlockDevice,
        false => rustix::fs::FileType::RegularFile,
    };
    if kind != expected {
        return Err(io::Error::other(format!(
            "it is not a {} now",
            if block {
                "block device"
            } else {
                "regular file"
            }
        )));
    }
    if !block {
        return reopen(held.as_fd(), OFlags::RDWR);
    }
    let started = Instant::now();
    loop {
        match reopen(held.as_fd(), OFlags::RDWR | OFlags::DIRECT | OFlags::EXCL) {
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
pub(super) fn write_back(file: &File, data: &[u8], offset: u64, reader: &File) -> io::Result<()> {
    let Err(first) = write_medium(file, data, offset) else {
        return Ok(());
    };
    let mut scratch = read_scratch(PIECE as u64);
    let mut held = vec![0u8; PIECE];
    for (i, piece) in data.chunks(PIECE).enumerate() {
        let at = offset + (i * PIECE) as u64;
        if write_medium(file, piece, at).is_ok() {
            continue;
        }
        let got = &mut held[..piece.len()];
        if read_medium(reader, &mut scratch, at, got).is_err() || got != piece {
            return Err(first);
        }
    }
    Ok(())
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
