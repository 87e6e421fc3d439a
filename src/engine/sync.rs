//! The `sync` engine: one pread(2)/pwrite(2) at a time, timed around the call.
//!
//! This is the same work as the simplest loop a user could write, plus two
//! clock reads and a histogram increment per I/O.

use super::{Clock, Engine, EngineSetup, IoError, OpKind, OpSource, pool_slice};
use crate::sys::buffer::AlignedBuf;
use std::io;
use std::os::fd::BorrowedFd;

pub struct SyncEngine<'a, C: Clock> {
    fd: BorrowedFd<'a>,
    block_size: usize,
    pool: AlignedBuf,
    buf: AlignedBuf,
    clock: C,
}

impl<'a, C: Clock> SyncEngine<'a, C> {
    pub fn new(setup: EngineSetup<'a, C>) -> Self {
        SyncEngine {
            fd: setup.fd,
            block_size: setup.block_size,
            buf: AlignedBuf::new(setup.block_size, setup.align),
            pool: setup.pool,
            clock: setup.clock,
        }
    }

    /// The write data pool: writes only ever read it.
    pub fn into_pool(self) -> AlignedBuf {
        self.pool
    }
}

impl<C: Clock> Engine for SyncEngine<'_, C> {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError> {
        let stamps = source.stamps_writes();
        let mut now = self.clock.now_ns();
        while let Some(op) = source.next(now) {
            let len = op.len as usize;
            let (start, result) = match op.kind {
                OpKind::Read => {
                    let buf = &mut self.buf.as_mut_slice()[..len];
                    let start = self.clock.now_ns();
                    (start, rustix::io::pread(self.fd, buf, op.offset))
                }
                OpKind::Write => {
                    let data: &[u8] = if stamps {
                        source.fill_write(&op, &mut self.buf.as_mut_slice()[..len]);
                        &self.buf.as_slice()[..len]
                    } else {
                        pool_slice(&self.pool, self.block_size, op.seq)
                    };
                    let start = self.clock.now_ns();
                    (start, rustix::io::pwrite(self.fd, &data[..len], op.offset))
                }
            };
            let end = self.clock.now_ns();
            match result {
                Ok(n) if n == len => {}
                Ok(n) => return Err(short_transfer(op.kind, op.offset, op.len, n)),
                Err(errno) => {
                    return Err(IoError {
                        kind: op.kind,
                        offset: op.offset,
                        len: op.len,
                        error: errno.into(),
                    });
                }
            }
            source.completed(&op, start, end, &self.buf.as_slice()[..len]);
            now = end;
        }
        Ok(())
    }
}

pub(crate) fn short_transfer(kind: OpKind, offset: u64, len: u32, done: usize) -> IoError {
    IoError {
        kind,
        offset,
        len,
        error: io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("short {kind}: {done} of {len} bytes (end of device or file?)"),
        ),
    }
}
