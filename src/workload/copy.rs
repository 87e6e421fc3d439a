//! The copy loop of `iocurve copy`: read a block of the image, write it,
//! as `dd` and image writers do, one block at a time; then the final sync
//! the chosen behaviour asks for. Also the byte-by-byte comparison of
//! `--verify`, and [`run`], the whole measurement: each side alone (so the
//! report can name the side that held the copy back), the copy, the check.
//!
//! The loop allocates nothing and formats nothing: the buffer is made
//! before, progress is an atomic counter another thread draws. It reads
//! the time only through the engine [`Clock`] it is given, as every
//! workload does.

use crate::analysis::copy as analysis;
use crate::engine::{Clock, IoError, MonotonicClock, OpKind};
use crate::error::IoFailure;
use crate::interrupt;
use crate::live::progress;
use crate::medium::OpenTarget;
use crate::result::device::{CopyReport, CopyVerify};
use crate::result::{RunResult, TestResult};
use crate::sys::buffer::AlignedBuf;
use crate::vocab::Rw;
use crate::vocab::options::CopySync;
use crate::vocab::options::IoMode;
use crate::workload::MeasureSpec;
use crate::workload::job::PaddedCounter;
use anyhow::Result;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
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

/// What `iocurve copy` was asked to do.
#[derive(Debug, Clone, Copy)]
pub struct CopyRequest {
    /// Bytes per block as asked (rounded up to whole logical blocks).
    pub bs: u64,
    pub sync: CopySync,
    /// Read the destination back and compare it with the source.
    pub verify: bool,
    /// Measure each side alone first.
    pub alone: bool,
}

/// A finished copy: its report, the alone measurements as tests, and the
/// message of the failure that cut it short, if one did.
pub struct CopyRun {
    pub report: CopyReport,
    pub tests: Vec<TestResult>,
    pub error: Option<String>,
}

impl CopyRun {
    /// Puts the copy into the result: its report, the measurements as
    /// tests, and what cut it short.
    pub fn record(self, result: &mut RunResult) {
        result.tests.extend(self.tests);
        result.error = self.error;
        result.payload.set_copy(self.report);
    }
}

/// The alone measurements, the copy itself, then `--verify`.
pub fn run(req: &CopyRequest, source: &OpenTarget, dst: &OpenTarget) -> Result<CopyRun> {
    let bytes = source.info.size_bytes;
    let lb = u64::from(
        source
            .info
            .logical_block_size
            .max(dst.info.logical_block_size),
    )
    .max(512);
    let bs = analysis::block_size(req.bs, lb);
    let alone = match req.alone {
        true => measure_alone(source, dst, bytes, bs),
        false => Alone::default(),
    };
    let mut error = alone.error;
    let tail_file = dst.reopen_buffered()?;
    let writer = writer(req.sync, dst)?;
    let direct = writer.is_none();
    let io = CopyIo {
        source: source.fd(),
        destination: writer.as_ref().map_or(dst.fd(), |f| f.as_fd()),
        tail: direct.then(|| tail_file.as_fd()),
        logical_block: if direct { lb } else { 1 },
        read_block: lb,
        bytes,
        sync_at_end: req.sync.syncs_at_end(),
    };
    let mut buf = AlignedBuf::new(bs as usize, source.align.max(dst.align));
    let out = copy_with_progress(&io, &mut buf);
    if let Some(e) = &out.error {
        error = Some(crate::engine::io_failure_message(e));
    }
    let verify = match req.verify && out.error.is_none() && out.bytes == bytes {
        true => Some(verify(source, dst, bytes, &mut buf, lb)?),
        false => None,
    };
    let report = CopyReport {
        source: source.info.path.clone(),
        destination: dst.info.path.clone(),
        bytes: out.bytes,
        block_size: bs,
        sync: req.sync,
        elapsed_ns: out.elapsed_ns,
        mb_per_s: crate::units::mb_per_s(out.bytes, out.elapsed_ns),
        sync_ns: out.sync_ns,
        source_read_mb_s: alone.read,
        destination_write_mb_s: alone.write,
        serial_estimate_mb_s: analysis::serial_estimate(alone.read, alone.write),
        bottleneck: analysis::bottleneck(alone.read, alone.write),
        verify,
    };
    Ok(CopyRun {
        report,
        tests: alone.tests,
        error,
    })
}

/// The copy loop on the wall clock, with a progress bar over its bytes.
fn copy_with_progress(io: &CopyIo<'_>, buf: &mut AlignedBuf) -> CopyOutcome {
    let counter = PaddedCounter::default();
    let goal = progress::Goal::Bytes(io.bytes);
    let bar = progress::bar("copy", goal);
    let live = progress::Live {
        label: "copy",
        block: buf.len() as u64,
    };
    let moved = || counter.0.load(Ordering::Relaxed);
    let out = progress::track(&bar, goal, &moved, (live, true), || {
        copy(
            io,
            buf,
            interrupt::stop_flag(),
            &counter,
            MonotonicClock::new(),
        )
    });
    bar.finish_and_clear();
    out
}

/// The descriptor the copy writes through, as `--sync` asks: the page
/// cache (none, end), synchronous writes (each), or O_DIRECT (direct).
fn writer(sync: CopySync, dst: &OpenTarget) -> Result<Option<File>> {
    if sync == CopySync::Direct && dst.info.mode == IoMode::Direct {
        return Ok(None);
    }
    Ok(Some(dst.writer()?.reopen_cached(sync.open_flags())?))
}

/// Each side measured alone: speeds (None when not measured or failed),
/// the measurements, and the message of a failure.
#[derive(Default)]
struct Alone {
    read: Option<f64>,
    write: Option<f64>,
    tests: Vec<TestResult>,
    error: Option<String>,
}

/// Reads the source and writes the destination, each alone, over the
/// image's whole blocks (O_DIRECT where the target allows it).
fn measure_alone(source: &OpenTarget, dst: &OpenTarget, bytes: u64, bs: u64) -> Alone {
    let mut alone = Alone::default();
    let whole = bytes / bs * bs;
    if whole == 0 {
        return alone;
    }
    let mut speeds = [None, None];
    for (i, (target, rw, name)) in [
        (source, Rw::Read, "source read alone"),
        (dst, Rw::Write, "destination write alone"),
    ]
    .into_iter()
    .enumerate()
    {
        let spec = match MeasureSpec::plain(rw, bs, (0, whole), whole, 0x1ace) {
            Ok(spec) => spec,
            Err(e) => {
                alone.error = Some(e.to_string());
                break;
            }
        };
        let (test, error) = crate::workload::repeat::measure_repeated(target, &spec, name, 1, None);
        speeds[i] = test.mb_per_s.map(|s| s.median).filter(|_| error.is_none());
        alone.tests.push(test);
        if error.is_some() || interrupt::stop_flag().load(Ordering::Relaxed) {
            alone.error = alone.error.take().or(error);
            break;
        }
    }
    [alone.read, alone.write] = speeds;
    alone
}

/// The destination read back past the page cache and compared byte by byte.
fn verify(
    source: &OpenTarget,
    dst: &OpenTarget,
    bytes: u64,
    buf: &mut AlignedBuf,
    lb: u64,
) -> Result<CopyVerify> {
    if dst.info.mode == IoMode::Buffered {
        let _ = rustix::fs::fdatasync(dst.fd());
        let _ = rustix::fs::fadvise(dst.fd(), 0, None, rustix::fs::Advice::DontNeed);
    }
    let mut other = AlignedBuf::new(buf.len(), source.align.max(dst.align));
    let (mismatched, first) = compare(source.fd(), dst.fd(), bytes, (buf, &mut other), lb)
        .map_err(|e| IoFailure::new(format!("verify: {e}"), None))?;
    Ok(CopyVerify {
        compared_bytes: bytes,
        mismatched_bytes: mismatched,
        first_mismatch: first,
    })
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
