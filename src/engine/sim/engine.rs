//! The [`Engine`] on a simulated card: the runner's operations carried out
//! one at a time on a [`SimDevice`], timed by its virtual clock, so every
//! workload that runs on a real device runs unchanged on the model.

use super::card::SimDevice;
use crate::engine::{Clock, Engine, IoError, Op, OpKind, OpSource, pool_slice};
use crate::sys::buffer::{AlignedBuf, MIN_ALIGN};

/// An engine on a [`SimDevice`]: executes one operation at a time (a card
/// has one command in flight), whatever the queue depth asked.
pub struct SimEngine<'a> {
    device: &'a SimDevice,
    block_size: usize,
    pool: AlignedBuf,
    buf: AlignedBuf,
}

impl<'a> SimEngine<'a> {
    pub fn new(device: &'a SimDevice, block_size: usize, pool: AlignedBuf) -> SimEngine<'a> {
        SimEngine {
            device,
            block_size,
            buf: AlignedBuf::new(block_size, MIN_ALIGN),
            pool,
        }
    }

    /// The write data pool: writes only ever read it.
    pub fn into_pool(self) -> AlignedBuf {
        self.pool
    }

    fn execute<S: OpSource>(&mut self, source: &mut S, op: &Op) -> Result<(), String> {
        let len = op.len as usize;
        match op.kind {
            OpKind::Read => self
                .device
                .read(op.offset, &mut self.buf.as_mut_slice()[..len])
                .map(drop),
            OpKind::Write => {
                let data = if source.stamps_writes() {
                    source.fill_write(op, &mut self.buf.as_mut_slice()[..len]);
                    &self.buf.as_slice()[..len]
                } else {
                    &pool_slice(&self.pool, self.block_size, op.seq)[..len]
                };
                self.device.write(op.offset, data).map(drop)
            }
        }
    }
}

impl Engine for SimEngine<'_> {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError> {
        let clock = self.device.clock();
        while let Some(op) = source.next(clock.now_ns()) {
            let start = clock.now_ns();
            if let Err(message) = self.execute(source, &op) {
                return Err(IoError {
                    kind: op.kind,
                    offset: op.offset,
                    len: op.len,
                    error: std::io::Error::new(std::io::ErrorKind::InvalidInput, message),
                });
            }
            let end = clock.now_ns();
            source.completed(&op, start, end, &self.buf.as_slice()[..op.len as usize]);
        }
        Ok(())
    }

    fn now_ns(&self) -> u64 {
        self.device.clock().now_ns()
    }
}
