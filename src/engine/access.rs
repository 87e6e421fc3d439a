//! Two more ways to read a file or device, beside pread: page faults on a
//! memory mapping, and small calls into the C library's buffered `FILE`.
//!
//! Programs load data in all three ways, and a device can look very
//! different through each: a mapping reads ahead in the kernel's fault-around
//! window, and stdio turns a loop of one-byte `fread`s into reads of the
//! library's buffer size. Measuring them with the same jobs, clock and
//! histograms as pread shows what the access method itself costs.
//!
//! Both engines only read: writing through a mapping or stdio leaves the
//! moment the data reaches the device to the kernel's writeback, which no
//! per-I/O latency could describe.

use super::{Clock, Engine, EngineSetup, IoError, OpKind, OpSource};
use crate::sys::buffer::AlignedBuf;
use crate::sys::mmap::Mapping;
use crate::sys::stdio::Stream;
use std::io;
use std::os::fd::BorrowedFd;

fn io_error(kind: OpKind, offset: u64, len: u32, error: io::Error) -> IoError {
    IoError {
        kind,
        offset,
        len,
        error,
    }
}

fn refuse_write(offset: u64, len: u32, method: &str) -> IoError {
    io_error(
        OpKind::Write,
        offset,
        len,
        io::Error::new(
            io::ErrorKind::Unsupported,
            format!("--method {method} only reads: use --method pread for writes"),
        ),
    )
}

/// How one of these engines makes one read; the rest of the engine (the
/// buffer, the clock, the timed loop, the refusal of writes) is shared.
pub trait ReadInto {
    /// The access method's name, as results and `--method` name it.
    const METHOD: &'static str;

    /// Fills `dst` with the bytes at `offset`.
    fn read_into(&mut self, offset: u64, dst: &mut [u8]) -> io::Result<()>;
}

/// An engine that only reads, each read made by `R`.
pub struct ReadEngine<C: Clock, R: ReadInto> {
    reader: R,
    buf: AlignedBuf,
    clock: C,
}

impl<C: Clock, R: ReadInto> ReadEngine<C, R> {
    fn with(setup: EngineSetup<'_, C>, reader: R) -> Self {
        ReadEngine {
            reader,
            buf: AlignedBuf::new(setup.block_size, setup.align),
            clock: setup.clock,
        }
    }
}

/// The loop both engines run: writes are refused, and each read is timed
/// and handed back to the source.
impl<C: Clock, R: ReadInto> Engine for ReadEngine<C, R> {
    fn name(&self) -> &'static str {
        R::METHOD
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError> {
        let mut now = self.clock.now_ns();
        while let Some(op) = source.next(now) {
            let len = op.len as usize;
            if op.kind == OpKind::Write {
                return Err(refuse_write(op.offset, op.len, R::METHOD));
            }
            let start = self.clock.now_ns();
            let result = self
                .reader
                .read_into(op.offset, &mut self.buf.as_mut_slice()[..len]);
            let end = self.clock.now_ns();
            if let Err(e) = result {
                return Err(io_error(op.kind, op.offset, op.len, e));
            }
            source.completed(&op, start, end, &self.buf.as_slice()[..len]);
            now = end;
        }
        Ok(())
    }
}

/// Reads by copying out of a mapping of the whole target: every first
/// touch of a page is a page fault the kernel serves from the device.
pub type MmapEngine<C> = ReadEngine<C, Mapping>;

impl ReadInto for Mapping {
    const METHOD: &'static str = "mmap";

    fn read_into(&mut self, offset: u64, dst: &mut [u8]) -> io::Result<()> {
        self.read_at(offset, dst)
    }
}

impl<C: Clock> MmapEngine<C> {
    pub fn new(setup: EngineSetup<'_, C>) -> io::Result<Self> {
        let map = Mapping::whole(setup.fd)?;
        Ok(ReadEngine::with(setup, map))
    }
}

/// Fills `dst` with `fread` calls of at most `call` bytes each.
fn read_in_calls(stream: &mut Stream, dst: &mut [u8], call: usize) -> io::Result<()> {
    let mut done = 0;
    while done < dst.len() {
        let want = call.min(dst.len() - done);
        done += stream.read(&mut dst[done..done + want])?;
    }
    Ok(())
}

/// How a whole file is read by `files load`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRead {
    /// `read(2)` calls into one buffer.
    Read,
    /// Page faults on a read-only mapping of the file.
    Mmap,
    /// `fread` calls of this many bytes through the C library's buffer.
    Stdio(usize),
}

/// Reads all `len` bytes of `file` into `dst[..len]` the chosen way; the
/// caller times it. Returns the bytes read.
pub fn read_whole_file(
    file: &std::fs::File,
    len: usize,
    dst: &mut [u8],
    how: FileRead,
) -> io::Result<usize> {
    use std::io::Read;
    let dst = &mut dst[..len];
    match how {
        FileRead::Read => {
            let mut f = file;
            let mut got = 0;
            while got < len {
                match f.read(&mut dst[got..])? {
                    0 => break,
                    n => got += n,
                }
            }
            Ok(got)
        }
        FileRead::Mmap => {
            let map = Mapping::whole(std::os::fd::AsFd::as_fd(file))?;
            let n = len.min(map.len());
            map.read_at(0, &mut dst[..n])?;
            Ok(n)
        }
        FileRead::Stdio(call) => {
            let mut stream = Stream::open(std::os::fd::AsFd::as_fd(file))?;
            read_in_calls(&mut stream, dst, call.max(1))?;
            Ok(len)
        }
    }
}

/// Reads through a C library stream in calls of `call` bytes
/// (`--stdio-bs`); the library refills its own buffer from the device.
pub type StdioEngine<C> = ReadEngine<C, StdioReader>;

/// A C library stream, and where it stands.
pub struct StdioReader {
    stream: Stream,
    /// Where the stream stands, so sequential reads do not seek.
    position: u64,
    call: usize,
}

impl ReadInto for StdioReader {
    const METHOD: &'static str = "stdio";

    fn read_into(&mut self, offset: u64, dst: &mut [u8]) -> io::Result<()> {
        let mut result = Ok(());
        if offset != self.position {
            result = self.stream.seek(offset);
        }
        if result.is_ok() {
            result = read_in_calls(&mut self.stream, dst, self.call);
        }
        // After a failure the stream's place is unknown: seek next time.
        self.position = match result {
            Ok(()) => offset + dst.len() as u64,
            Err(_) => u64::MAX,
        };
        result
    }
}

impl<C: Clock> StdioEngine<C> {
    pub fn new(setup: EngineSetup<'_, C>, call: u32) -> io::Result<Self> {
        let mut stream = Stream::open(setup.fd)?;
        stream.seek(0)?;
        let reader = StdioReader {
            stream,
            position: 0,
            call: call.max(1) as usize,
        };
        Ok(ReadEngine::with(setup, reader))
    }
}

/// The C library's buffer for a stream on `fd`: glibc sizes it by the
/// descriptor's `st_blksize`.
pub fn stdio_buffer_bytes(fd: BorrowedFd<'_>) -> u64 {
    rustix::fs::fstat(fd).map_or(4096, |st| st.st_blksize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MonotonicClock, Op};
    use std::io::Write;
    use std::os::fd::AsFd;

    /// Collects what was read, in order.
    struct Collect {
        ops: Vec<Op>,
        next: usize,
        data: Vec<u8>,
    }

    impl OpSource for Collect {
        fn next(&mut self, _now: u64) -> Option<Op> {
            let op = self.ops.get(self.next).copied();
            self.next += 1;
            op
        }
        fn completed(&mut self, _op: &Op, _s: u64, _e: u64, data: &[u8]) {
            self.data.extend_from_slice(data);
        }
    }

    fn file_with(bytes: &[u8]) -> std::fs::File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    fn ops(offsets: &[u64], len: u32) -> Vec<Op> {
        offsets
            .iter()
            .enumerate()
            .map(|(i, &offset)| Op {
                kind: OpKind::Read,
                offset,
                len,
                seq: i as u64,
                counted: true,
            })
            .collect()
    }

    fn setup(fd: BorrowedFd<'_>, bs: usize) -> EngineSetup<'_, MonotonicClock> {
        EngineSetup {
            fd,
            block_size: bs,
            queue_depth: 1,
            align: 4096,
            pool: AlignedBuf::new(bs, 4096),
            clock: MonotonicClock::new(),
        }
    }

    fn expected(bytes: &[u8], offsets: &[u64], len: usize) -> Vec<u8> {
        offsets
            .iter()
            .flat_map(|&o| bytes[o as usize..o as usize + len].to_vec())
            .collect()
    }

    #[test]
    fn mmap_and_stdio_read_what_pread_reads() {
        let mut bytes = vec![0u8; 64 << 10];
        fastrand::Rng::with_seed(7).fill(&mut bytes);
        let f = file_with(&bytes);
        let offsets = [0, 4096, 8192, 40960, 12288];
        for call in [1u32, 7, 4096] {
            let mut src = Collect {
                ops: ops(&offsets, 4096),
                next: 0,
                data: Vec::new(),
            };
            let mut e = StdioEngine::new(setup(f.as_fd(), 4096), call).unwrap();
            e.run(&mut src).unwrap();
            assert_eq!(src.data, expected(&bytes, &offsets, 4096), "call {call}");
        }
        let mut src = Collect {
            ops: ops(&offsets, 4096),
            next: 0,
            data: Vec::new(),
        };
        let mut e = MmapEngine::new(setup(f.as_fd(), 4096)).unwrap();
        e.run(&mut src).unwrap();
        assert_eq!(src.data, expected(&bytes, &offsets, 4096));
    }

    #[test]
    fn reads_past_the_end_fail_without_a_signal() {
        let f = file_with(&[1u8; 8192]);
        let mut src = Collect {
            ops: ops(&[8192], 4096),
            next: 0,
            data: Vec::new(),
        };
        let mut e = MmapEngine::new(setup(f.as_fd(), 4096)).unwrap();
        assert!(e.run(&mut src).is_err());
        let mut src = Collect {
            ops: ops(&[8192], 4096),
            next: 0,
            data: Vec::new(),
        };
        let mut e = StdioEngine::new(setup(f.as_fd(), 4096), 512).unwrap();
        assert!(e.run(&mut src).is_err());
    }
}
