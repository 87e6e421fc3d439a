//! The copy loop of `iocurve copy`: read a block of the image, write it,
//! as `dd` and image writers do, one block at a time; then the final sync
//! the chosen behaviour asks for. Also the byte-by-byte comparison of
//! `--verify`.
//!
//! The loop allocates nothing and formats nothing: the buffer is made
//! before, progress is an atomic counter another thread draws. It reads
//! the time only through the engine [`Clock`] it is given, as every
//! workload does.

use crate::engine::buffer::AlignedBuf;
use crate::engine::{Clock, IoError, OpKind};
use crate::workload::job::PaddedCounter;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// The descriptors and sizes of one copy.
pub struct CopyIo<'a> {
    pub source: BorrowedFd<'a>,
    pub destination: BorrowedFd<'a>,
    /// A descriptor for a last block O_DIRECT cannot write (not a whole
    /// number of logical blocks), when `destination` is O_DIRECT.
    pub tail: Option<BorrowedFd<'a>>,
    /// Logical block of an O_DIRECT destination (1 otherwise).
    pub logical_block: u64,
    /// Granularity of the source's reads (its O_DIRECT logical block).
    pub read_block: u64,
    pub bytes: u64,
    /// fsync the destination after the last block (timed).
    pub sync_at_end: bool,
}

/// What the copy did.
#[derive(Debug)]
pub struct CopyOutcome {
    pub bytes: u64,
    /// The whole copy, final sync included.
    pub elapsed_ns: u64,
    pub sync_ns: u64,
    pub error: Option<IoError>,
}

fn failure(kind: OpKind, offset: u64, len: usize, error: std::io::Error) -> IoError {
    IoError {
        kind,
        offset,
        len: len as u32,
        error,
    }
}

/// Reads exactly `buf.len()` bytes at `offset` (short only at the end of
/// the source).
fn read_full(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> Result<usize, IoError> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(fd, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) => return Err(failure(OpKind::Read, offset, buf.len(), e.into())),
        }
    }
    Ok(done)
}

fn write_full(fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> Result<(), IoError> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pwrite(fd, &buf[done..], offset + done as u64) {
            Ok(0) => {
                let e = std::io::Error::new(std::io::ErrorKind::WriteZero, "wrote nothing");
                return Err(failure(OpKind::Write, offset, buf.len(), e));
            }
            Ok(n) => done += n,
            Err(e) => return Err(failure(OpKind::Write, offset, buf.len(), e.into())),
        }
    }
    Ok(())
}

/// One block: read it, write it (through the tail descriptor when O_DIRECT
/// cannot take its length).
fn copy_block(io: &CopyIo<'_>, buf: &mut AlignedBuf, offset: u64) -> Result<u64, IoError> {
    let want = (io.bytes - offset).min(buf.len() as u64) as usize;
    // Granularities of 0 (never planned) count as 1, not as a division
    // by zero.
    let lb = (io.logical_block as usize).max(1);
    let rb = (io.read_block as usize).max(1);
    let read_len = want.div_ceil(rb) * rb;
    let got = read_full(io.source, &mut buf.as_mut_slice()[..read_len], offset)?;
    if got < want {
        let e = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the source ended early");
        return Err(failure(OpKind::Read, offset, want, e));
    }
    let data = &buf.as_slice()[..want];
    match io.tail {
        Some(tail) if !want.is_multiple_of(lb) => write_full(tail, data, offset)?,
        _ => write_full(io.destination, data, offset)?,
    }
    Ok(want as u64)
}

/// Copies `io.bytes` bytes in blocks of `buf.len()`, then syncs when asked;
/// timed on `clock`.
pub fn copy(
    io: &CopyIo<'_>,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    progress: &PaddedCounter,
    clock: impl Clock,
) -> CopyOutcome {
    let start = clock.now_ns();
    let mut done = 0;
    let mut error = None;
    while done < io.bytes && !stop.load(Ordering::Relaxed) {
        match copy_block(io, buf, done) {
            Ok(n) => done += n,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        progress.0.store(done, Ordering::Relaxed);
    }
    let sync_start = clock.now_ns();
    if io.sync_at_end && error.is_none() {
        for fd in std::iter::once(io.destination).chain(io.tail) {
            if let Err(e) = rustix::fs::fsync(fd) {
                error = Some(failure(OpKind::Write, 0, 0, e.into()));
            }
        }
    }
    let end = clock.now_ns();
    CopyOutcome {
        bytes: done,
        elapsed_ns: end.saturating_sub(start),
        sync_ns: end.saturating_sub(sync_start),
        error,
    }
}

/// Bytes that differ between `a` and `b` over `bytes`, and the first such
/// offset; both read in blocks of `bufs.0.len()`.
pub fn compare(
    a: BorrowedFd<'_>,
    b: BorrowedFd<'_>,
    bytes: u64,
    bufs: (&mut AlignedBuf, &mut AlignedBuf),
    logical_block: u64,
) -> Result<(u64, Option<u64>), IoError> {
    let (x, y) = bufs;
    let mut mismatched = 0;
    let mut first = None;
    let mut offset = 0;
    let lb = (logical_block as usize).max(1);
    while offset < bytes {
        let want = (bytes - offset).min(x.len() as u64) as usize;
        let len = want.div_ceil(lb) * lb;
        let got_a = read_full(a, &mut x.as_mut_slice()[..len], offset)?;
        let got_b = read_full(b, &mut y.as_mut_slice()[..len], offset)?;
        for i in 0..want {
            let differ = i >= got_a || i >= got_b || x.as_slice()[i] != y.as_slice()[i];
            if differ {
                mismatched += 1;
                first.get_or_insert(offset + i as u64);
            }
        }
        offset += want as u64;
    }
    Ok((mismatched, first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn copies_every_byte_including_a_short_tail_and_finds_a_changed_one() {
        let mut data = vec![0u8; 100_000];
        fastrand::Rng::with_seed(3).fill(&mut data);
        let mut src = tempfile::tempfile().unwrap();
        src.write_all(&data).unwrap();
        let dst = tempfile::tempfile().unwrap();
        let io = CopyIo {
            source: src.as_fd(),
            destination: dst.as_fd(),
            tail: None,
            logical_block: 1,
            read_block: 1,
            bytes: data.len() as u64,
            sync_at_end: true,
        };
        let mut buf = AlignedBuf::new(8192, 4096);
        let out = copy(
            &io,
            &mut buf,
            &AtomicBool::new(false),
            &PaddedCounter::default(),
            crate::engine::MonotonicClock::new(),
        );
        assert!(out.error.is_none());
        assert_eq!(out.bytes, 100_000);
        let mut other = AlignedBuf::new(8192, 4096);
        let bufs = (&mut buf, &mut other);
        assert_eq!(
            compare(src.as_fd(), dst.as_fd(), 100_000, bufs, 1).unwrap(),
            (0, None)
        );
        rustix::io::pwrite(dst.as_fd(), &[!data[77_777]], 77_777).unwrap();
        let bufs = (&mut buf, &mut other);
        let (bad, first) = compare(src.as_fd(), dst.as_fd(), 100_000, bufs, 1).unwrap();
        assert_eq!((bad, first), (1, Some(77_777)));
    }
}
