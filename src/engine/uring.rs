//! The `uring` engine: io_uring(7) with many I/Os in flight.
//!
//! It follows what makes fio's t/io_uring fast: the file and the buffers are
//! registered once (no per-I/O fd lookup or page pinning), submissions are
//! batched into one system call that also waits for a batch of completions
//! (a quarter of those in flight, see [`completions_to_wait_for`]), the
//! rings are opened once per batch, and the clock is read once per submit
//! batch and once per reap batch rather than once per I/O. (So a completion
//! is stamped when its batch is reaped: at high queue depth that adds up to
//! the time of the batch's other completions to its latency.)
//!
//! The ring, its registered buffers and the rule that keeps them alive while
//! the kernel uses them are [`crate::sys::uring::Ring`]'s; this file keeps
//! the engine: which slot takes which operation, when to submit, and what
//! each completion means.

use super::{Clock, Engine, EngineSetup, IoError, Op, OpKind, OpSource};
use crate::sys::uring::{Ring, Submission, Transfer};
use std::io;

#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    submit_ns: u64,
}

pub struct UringEngine<'a, C: Clock> {
    ring: Ring<'a>,
    block_size: usize,
    slots: Vec<Slot>,
    free: Vec<u32>,
    clock: C,
}

impl<'a, C: Clock> UringEngine<'a, C> {
    /// An engine on `setup`'s descriptor; with `sqpoll`, a kernel thread
    /// polls the submission queue (an error where the kernel refuses it).
    pub fn new(setup: EngineSetup<'a, C>, sqpoll: bool) -> io::Result<Self> {
        let queue_depth = setup.queue_depth.max(1);
        let submission = match sqpoll {
            true => Submission::KernelPolls,
            false => Submission::Calls,
        };
        let ring = Ring::new(
            setup.fd,
            queue_depth,
            setup.block_size,
            setup.align,
            setup.pool,
            submission,
        )
        .map_err(|e| explain_unavailable(e, submission))?;
        let idle = Slot {
            op: Op {
                kind: OpKind::Read,
                offset: 0,
                len: 0,
                seq: 0,
                counted: false,
            },
            submit_ns: 0,
        };
        Ok(UringEngine {
            ring,
            block_size: setup.block_size,
            slots: vec![idle; queue_depth],
            free: (0..queue_depth as u32).rev().collect(),
            clock: setup.clock,
        })
    }

    /// Prepares a transfer for as many free slots as the source fills.
    fn prepare_batch<S: OpSource>(
        &mut self,
        source: &mut S,
        stamps: bool,
        now: u64,
        exhausted: &mut bool,
    ) {
        while let Some(&slot) = self.free.last() {
            let Some(op) = source.next(now) else {
                *exhausted = true;
                return;
            };
            self.free.pop();
            let transfer = self.transfer_for(slot, &op, source, stamps);
            self.ring.prepare(slot, transfer, op.offset, op.len);
            self.slots[slot as usize].op = op;
        }
    }

    /// Which buffer an operation uses: reads and stamped writes use the
    /// slot's own block (a stamped write filled by the source first), plain
    /// writes the data pool block its sequence number picks.
    fn transfer_for<S: OpSource>(
        &mut self,
        slot: u32,
        op: &Op,
        source: &mut S,
        stamps: bool,
    ) -> Transfer {
        match op.kind {
            OpKind::Read => Transfer::ReadIntoSlot,
            OpKind::Write if !stamps => {
                let bs = self.block_size;
                let blocks = self.ring.pool_len() / bs;
                let start = (op.seq % blocks as u64) as usize * bs;
                Transfer::WriteFromPool { start }
            }
            OpKind::Write => {
                source.fill_write(op, self.ring.slot_mut(slot, op.len as usize));
                Transfer::WriteFromSlot
            }
        }
    }

    /// Pushes the prepared transfers to the kernel and stamps their submit
    /// time.
    fn push_pending(&mut self, submit_ns: u64) {
        let slots = &mut self.slots;
        self.ring
            .push_pending(|slot| slots[slot as usize].submit_ns = submit_ns);
    }

    /// Hands every available completion to the source, or keeps the first
    /// failure.
    fn reap<S: OpSource>(&mut self, source: &mut S, now: u64, failure: &mut Option<IoError>) {
        let (slots, free) = (&self.slots, &mut self.free);
        self.ring.reap(|slot, res, block| {
            let Slot { op, submit_ns } = slots[slot as usize];
            free.push(slot);
            if res < 0 {
                let error = io::Error::from_raw_os_error(-res);
                failure.get_or_insert(IoError {
                    kind: op.kind,
                    offset: op.offset,
                    len: op.len,
                    error,
                });
            } else if res as u32 != op.len {
                failure.get_or_insert(super::sync::short_transfer(
                    op.kind,
                    op.offset,
                    op.len,
                    res as usize,
                ));
            } else {
                source.completed(&op, submit_ns, now, &block[..op.len as usize]);
            }
        });
    }

    pub fn note(&self) -> Option<super::Registered> {
        match (self.ring.fixed_buffers(), self.ring.fixed_file()) {
            (true, true) => None,
            (buffers, file) => Some(super::Registered { buffers, file }),
        }
    }
}

impl<C: Clock> Engine for UringEngine<'_, C> {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn note(&self) -> Option<super::Registered> {
        UringEngine::note(self)
    }

    fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError> {
        let stamps = source.stamps_writes();
        let mut exhausted = false;
        let mut failure: Option<IoError> = None;
        let mut now = self.clock.now_ns();
        loop {
            if failure.is_none() && !exhausted {
                self.prepare_batch(source, stamps, now, &mut exhausted);
            }
            if self.ring.has_pending() {
                let submit_ns = self.clock.now_ns();
                self.push_pending(submit_ns);
            }
            if self.ring.in_flight() == 0 {
                break;
            }
            let want = completions_to_wait_for(self.ring.in_flight());
            if let Err(err) = self.ring.submit_and_wait(want) {
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                let error = IoError {
                    kind: OpKind::Read,
                    offset: 0,
                    len: 0,
                    error: err,
                };
                return Err(failure.unwrap_or(error));
            }
            now = self.clock.now_ns();
            self.reap(source, now, &mut failure);
        }
        match failure {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }
}

/// Waiting for one completion at a time costs a wake-up, and where the
/// device completes on another thread (io_uring's workers, as for zram,
/// which cannot take requests without blocking) a context switch per I/O:
/// on one CPU at QD32, 4 KiB random reads of zram through iocurve went
/// from 176 K IOPS waiting for one to 365 K waiting for a quarter of those
/// in flight (`bench/qd_sweep.sh`). A bare loop on the same ring gave
/// 376 K for a quarter and 416 K for a half; a quarter keeps the queue at
/// least three quarters full between refills. With the ring's deferred
/// task work the kernel wakes the engine once the batch is there. At QD 1
/// to 7 this is one.
fn completions_to_wait_for(in_flight: usize) -> usize {
    (in_flight / 4).max(1)
}

fn explain_unavailable(err: io::Error, submission: Submission) -> io::Error {
    if submission == Submission::KernelPolls {
        return io::Error::new(
            err.kind(),
            format!(
                "io_uring with a polling thread could not be set up ({err}); leave out --sqpoll"
            ),
        );
    }
    let why = match err.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no io_uring",
        Some(libc::EPERM) | Some(libc::EACCES) => {
            "io_uring is disabled here (kernel.io_uring_disabled or a seccomp policy)"
        }
        Some(libc::ENOMEM) => "the kernel refused the memory for an io_uring ring (memlock limit)",
        _ => "io_uring could not be set up",
    };
    io::Error::new(
        err.kind(),
        format!("{why} ({err}); use --engine sync with --qd 1, and --threads N for parallel I/O"),
    )
}
