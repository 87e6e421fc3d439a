//! The `uring` engine: io_uring(7) with many I/Os in flight.
//!
//! It follows what makes fio's t/io_uring fast: the file and the buffers are
//! registered once (no per-I/O fd lookup or page pinning), submissions are
//! batched into one system call that also waits for at least one completion,
//! and the clock is read once per submit batch and once per reap batch rather
//! than once per I/O.

use super::buffer::AlignedBuf;
use super::{EngineSetup, IoError, MonotonicClock, Op, OpKind, OpSource};
use io_uring::{IoUring, cqueue, opcode, squeue, types};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Registered-buffer index of the write data pool.
const POOL_INDEX: u16 = 0;
/// Registered-buffer index of the per-slot buffers.
const SLOTS_INDEX: u16 = 1;

#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    submit_ns: u64,
}

pub struct UringEngine<'a> {
    // Declared first so that it is dropped (and the kernel lets go of our
    // buffers) before the buffers below are freed.
    ring: IoUring,
    fd: BorrowedFd<'a>,
    block_size: usize,
    pool: AlignedBuf,
    slot_area: AlignedBuf,
    slots: Vec<Slot>,
    free: Vec<u32>,
    just_queued: Vec<u32>,
    in_flight: usize,
    fixed_buffers: bool,
    fixed_file: bool,
    clock: MonotonicClock,
}

impl<'a> UringEngine<'a> {
    pub fn new(setup: EngineSetup<'a>) -> io::Result<Self> {
        let queue_depth = setup.queue_depth.max(1);
        let entries = queue_depth.next_power_of_two() as u32;
        // One thread submits and reaps, so completions can wait for our next
        // io_uring_enter instead of interrupting us (Linux 6.1+); older
        // kernels get a plain ring.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
            .or_else(|_| IoUring::new(entries))
            .map_err(explain_unavailable)?;
        let mut slot_area = AlignedBuf::new(setup.block_size * queue_depth, setup.align);
        let mut pool = setup.pool;
        let fixed_file = ring
            .submitter()
            .register_files(&[setup.fd.as_raw_fd()])
            .is_ok();
        let iovecs = [
            libc::iovec {
                iov_base: pool.as_mut_ptr().cast(),
                iov_len: pool.len(),
            },
            libc::iovec {
                iov_base: slot_area.as_mut_ptr().cast(),
                iov_len: slot_area.len(),
            },
        ];
        // SAFETY: both buffers are owned by the engine and outlive the ring:
        // `ring` is dropped first (field order) and every I/O is reaped before
        // `run` returns, so the kernel never touches freed memory.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let placeholder = Slot {
            op: Op {
                kind: OpKind::Read,
                offset: 0,
                len: 0,
                seq: 0,
                counted: false,
            },
            submit_ns: 0,
        };
        let slots = (0..queue_depth).map(|_| Slot { ..placeholder }).collect();
        Ok(UringEngine {
            ring,
            fd: setup.fd,
            block_size: setup.block_size,
            pool,
            slot_area,
            slots,
            free: (0..queue_depth as u32).rev().collect(),
            just_queued: Vec::with_capacity(queue_depth),
            in_flight: 0,
            fixed_buffers,
            fixed_file,
            clock: setup.clock,
        })
    }

    pub fn note(&self) -> Option<String> {
        match (self.fixed_buffers, self.fixed_file) {
            (true, true) => None,
            (false, true) => Some(
                "io_uring could not register buffers (memlock limit?); using plain buffers".into(),
            ),
            (true, false) => {
                Some("io_uring could not register the file; using a plain descriptor".into())
            }
            (false, false) => {
                Some("io_uring could not register buffers or file; using plain ones".into())
            }
        }
    }

    pub fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError> {
        let stamps = source.stamps_writes();
        let mut exhausted = false;
        let mut failure: Option<IoError> = None;
        let mut now = self.clock.now_ns();
        loop {
            if failure.is_none() && !exhausted {
                self.queue_batch(source, stamps, now, &mut exhausted);
            }
            if self.in_flight == 0 {
                break;
            }
            let submit_ns = self.clock.now_ns();
            for &slot in &self.just_queued {
                self.slots[slot as usize].submit_ns = submit_ns;
            }
            self.just_queued.clear();
            if let Err(err) = self.ring.submit_and_wait(1) {
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // The ring itself failed: nothing more can be reaped reliably,
                // so wait for everything in flight before reporting.
                self.drain_blocking();
                return Err(IoError {
                    kind: OpKind::Read,
                    offset: 0,
                    len: 0,
                    error: err,
                });
            }
            now = self.clock.now_ns();
            self.reap(source, now, &mut failure);
        }
        match failure {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    /// Fills free slots with new operations and places them in the SQ ring.
    fn queue_batch<S: OpSource>(
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
            let entry = self.prepare(slot, &op, source, stamps);
            self.slots[slot as usize].op = op;
            // SAFETY: the entry points into `pool` or this slot's part of
            // `slot_area`, which stay allocated and untouched by us until
            // the completion for `slot` is reaped. The SQ has room: it holds
            // at least `queue_depth` entries and each free slot is one of them.
            unsafe {
                self.ring
                    .submission()
                    .push(&entry)
                    .expect("submission queue sized for the queue depth");
            }
            self.just_queued.push(slot);
            self.in_flight += 1;
        }
    }

    fn prepare<S: OpSource>(
        &mut self,
        slot: u32,
        op: &Op,
        source: &mut S,
        stamps: bool,
    ) -> squeue::Entry {
        let bs = self.block_size;
        let slot_start = slot as usize * bs;
        let len = op.len;
        let (ptr, index): (*mut u8, u16) = match op.kind {
            OpKind::Read => (self.slot_buf_ptr(slot_start), SLOTS_INDEX),
            OpKind::Write if stamps => {
                let buf = &mut self.slot_area.as_mut_slice()[slot_start..slot_start + len as usize];
                source.fill_write(op, buf);
                (self.slot_buf_ptr(slot_start), SLOTS_INDEX)
            }
            OpKind::Write => {
                let blocks = self.pool.len() / bs;
                let start = (op.seq % blocks as u64) as usize * bs;
                // SAFETY: start + bs <= pool.len() by construction.
                (unsafe { self.pool.as_mut_ptr().add(start) }, POOL_INDEX)
            }
        };
        let entry = match (op.kind, self.fixed_buffers, self.fixed_file) {
            (OpKind::Read, true, true) => opcode::ReadFixed::new(types::Fixed(0), ptr, len, index)
                .offset(op.offset)
                .build(),
            (OpKind::Read, true, false) => opcode::ReadFixed::new(self.raw_fd(), ptr, len, index)
                .offset(op.offset)
                .build(),
            (OpKind::Read, false, true) => opcode::Read::new(types::Fixed(0), ptr, len)
                .offset(op.offset)
                .build(),
            (OpKind::Read, false, false) => opcode::Read::new(self.raw_fd(), ptr, len)
                .offset(op.offset)
                .build(),
            (OpKind::Write, true, true) => {
                opcode::WriteFixed::new(types::Fixed(0), ptr, len, index)
                    .offset(op.offset)
                    .build()
            }
            (OpKind::Write, true, false) => opcode::WriteFixed::new(self.raw_fd(), ptr, len, index)
                .offset(op.offset)
                .build(),
            (OpKind::Write, false, true) => opcode::Write::new(types::Fixed(0), ptr, len)
                .offset(op.offset)
                .build(),
            (OpKind::Write, false, false) => opcode::Write::new(self.raw_fd(), ptr, len)
                .offset(op.offset)
                .build(),
        };
        entry.user_data(slot as u64)
    }

    fn slot_buf_ptr(&mut self, slot_start: usize) -> *mut u8 {
        // SAFETY: slot_start + block_size <= slot_area.len() (one block per slot).
        unsafe { self.slot_area.as_mut_ptr().add(slot_start) }
    }

    fn raw_fd(&self) -> types::Fd {
        types::Fd(self.fd.as_raw_fd())
    }

    /// Takes every available completion off the CQ ring.
    fn reap<S: OpSource>(&mut self, source: &mut S, now: u64, failure: &mut Option<IoError>) {
        let bs = self.block_size;
        // Collecting first would allocate; instead pop one entry at a time.
        loop {
            let cqe: Option<cqueue::Entry> = self.ring.completion().next();
            let Some(cqe) = cqe else { break };
            let slot = cqe.user_data() as u32;
            let Slot { op, submit_ns } = self.slots[slot as usize];
            self.free.push(slot);
            self.in_flight -= 1;
            let res = cqe.result();
            if res < 0 {
                failure.get_or_insert(IoError {
                    kind: op.kind,
                    offset: op.offset,
                    len: op.len,
                    error: io::Error::from_raw_os_error(-res),
                });
                continue;
            }
            if res as u32 != op.len {
                failure.get_or_insert(super::sync::short_transfer(
                    op.kind,
                    op.offset,
                    op.len,
                    res as usize,
                ));
                continue;
            }
            let start = slot as usize * bs;
            let data = &self.slot_area.as_slice()[start..start + op.len as usize];
            source.completed(&op, submit_ns, now, data);
        }
    }

    /// Waits until the kernel has finished every I/O in flight.
    fn drain_blocking(&mut self) {
        while self.in_flight > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                // The ring is unusable; dropping it makes the kernel cancel
                // and finish the remaining requests before it lets go of the
                // registered buffers.
                return;
            }
            while self.ring.completion().next().is_some() {
                self.in_flight -= 1;
            }
        }
    }
}

impl Drop for UringEngine<'_> {
    fn drop(&mut self) {
        self.drain_blocking();
    }
}

fn explain_unavailable(err: io::Error) -> io::Error {
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
