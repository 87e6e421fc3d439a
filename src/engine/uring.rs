//! The `uring` engine: io_uring(7) with many I/Os in flight.
//!
//! It follows what makes fio's t/io_uring fast: the file and the buffers are
//! registered once (no per-I/O fd lookup or page pinning), submissions are
//! batched into one system call that also waits for at least one completion,
//! the rings are opened once per batch, and the clock is read once per submit
//! batch and once per reap batch rather than once per I/O. (So a completion
//! is stamped when its batch is reaped; at high queue depth that adds up to
//! one batch's processing time to its latency.)

use super::{Clock, Engine, EngineSetup, IoError, Op, OpKind, OpSource};
use crate::sys::buffer::AlignedBuf;
use io_uring::{IoUring, opcode, squeue, types};
use std::io;
use std::mem::ManuallyDrop;
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

pub struct UringEngine<'a, C: Clock> {
    ring: IoUring,
    fd: BorrowedFd<'a>,
    block_size: usize,
    /// The kernel may write into these until every I/O is reaped; they are
    /// freed only after a complete drain, and leaked if the ring fails first.
    pool: ManuallyDrop<AlignedBuf>,
    slot_area: ManuallyDrop<AlignedBuf>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Entries prepared for the next submission, and their slots.
    pending: Vec<(squeue::Entry, u32)>,
    in_flight: usize,
    fixed_buffers: bool,
    fixed_file: bool,
    clock: C,
}

impl<'a, C: Clock> UringEngine<'a, C> {
    pub fn new(setup: EngineSetup<'a, C>) -> io::Result<Self> {
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
        // SAFETY: both buffers are owned by the engine and are freed only
        // after every submitted I/O has been reaped (see `Drop`), or leaked.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
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
            fd: setup.fd,
            block_size: setup.block_size,
            pool: ManuallyDrop::new(pool),
            slot_area: ManuallyDrop::new(slot_area),
            slots: vec![idle; queue_depth],
            free: (0..queue_depth as u32).rev().collect(),
            pending: Vec::with_capacity(queue_depth),
            in_flight: 0,
            fixed_buffers,
            fixed_file,
            clock: setup.clock,
        })
    }

    /// Prepares SQEs for as many free slots as the source fills.
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
            let entry = self.entry_for(slot, &op, source, stamps);
            self.slots[slot as usize].op = op;
            self.pending.push((entry, slot));
        }
    }

    /// Moves the prepared entries into the SQ ring (opened once) and stamps
    /// their submit time.
    fn push_pending(&mut self, submit_ns: u64) {
        let mut sq = self.ring.submission();
        for (entry, slot) in self.pending.drain(..) {
            self.slots[slot as usize].submit_ns = submit_ns;
            // SAFETY: the entry points into `pool` or this slot's part of
            // `slot_area`, which stay allocated and untouched by us until
            // the completion for `slot` is reaped. The SQ has room: it holds
            // at least `queue_depth` entries and each slot is used once.
            unsafe {
                sq.push(&entry)
                    .expect("submission queue sized for the queue depth")
            };
            self.in_flight += 1;
        }
    }

    fn entry_for<S: OpSource>(
        &mut self,
        slot: u32,
        op: &Op,
        source: &mut S,
        stamps: bool,
    ) -> squeue::Entry {
        let bs = self.block_size;
        let slot_start = slot as usize * bs;
        let (ptr, index): (*mut u8, u16) = match op.kind {
            OpKind::Write if !stamps => {
                let blocks = self.pool.len() / bs;
                let start = (op.seq % blocks as u64) as usize * bs;
                // SAFETY: start + bs <= pool.len() by construction.
                (unsafe { self.pool.as_mut_ptr().add(start) }, POOL_INDEX)
            }
            kind => {
                if kind == OpKind::Write {
                    let buf = &mut self.slot_area.as_mut_slice()
                        [slot_start..slot_start + op.len as usize];
                    source.fill_write(op, buf);
                }
                // SAFETY: slot_start + bs <= slot_area.len(): one block per slot.
                (
                    unsafe { self.slot_area.as_mut_ptr().add(slot_start) },
                    SLOTS_INDEX,
                )
            }
        };
        // The same entry for either kind of file reference; the opcodes
        // take a registered index or a plain descriptor alike.
        macro_rules! entry {
            ($fd:expr) => {
                match (op.kind, self.fixed_buffers) {
                    (OpKind::Read, true) => opcode::ReadFixed::new($fd, ptr, op.len, index)
                        .offset(op.offset)
                        .build(),
                    (OpKind::Read, false) => opcode::Read::new($fd, ptr, op.len)
                        .offset(op.offset)
                        .build(),
                    (OpKind::Write, true) => opcode::WriteFixed::new($fd, ptr, op.len, index)
                        .offset(op.offset)
                        .build(),
                    (OpKind::Write, false) => opcode::Write::new($fd, ptr, op.len)
                        .offset(op.offset)
                        .build(),
                }
            };
        }
        let entry = if self.fixed_file {
            entry!(types::Fixed(0))
        } else {
            entry!(types::Fd(self.fd.as_raw_fd()))
        };
        entry.user_data(u64::from(slot))
    }

    /// Takes every available completion off the CQ ring (opened once).
    fn reap<S: OpSource>(&mut self, source: &mut S, now: u64, failure: &mut Option<IoError>) {
        let bs = self.block_size;
        let cq = self.ring.completion();
        for cqe in cq {
            let slot = cqe.user_data() as u32;
            let Slot { op, submit_ns } = self.slots[slot as usize];
            self.free.push(slot);
            self.in_flight -= 1;
            let res = cqe.result();
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
                let start = slot as usize * bs;
                let data = &self.slot_area.as_slice()[start..start + op.len as usize];
                source.completed(&op, submit_ns, now, data);
            }
        }
    }

    /// Waits until the kernel has finished every I/O in flight. Returns
    /// false when the ring failed with I/O still in flight.
    fn drain(&mut self) -> bool {
        while self.in_flight > 0 {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(_) => return false,
            }
            for _ in self.ring.completion() {
                self.in_flight -= 1;
            }
        }
        true
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
}

impl<C: Clock> Engine for UringEngine<'_, C> {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn note(&self) -> Option<String> {
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
            if !self.pending.is_empty() {
                let submit_ns = self.clock.now_ns();
                self.push_pending(submit_ns);
            }
            if self.in_flight == 0 {
                break;
            }
            if let Err(err) = self.ring.submit_and_wait(1) {
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

impl<C: Clock> Drop for UringEngine<'_, C> {
    fn drop(&mut self) {
        if self.drain() {
            // SAFETY: nothing is in flight, so the kernel holds no reference
            // into the buffers except the registration, which dies with the
            // ring; each buffer is dropped exactly once, here.
            unsafe {
                ManuallyDrop::drop(&mut self.pool);
                ManuallyDrop::drop(&mut self.slot_area);
            }
        }
        // Otherwise the buffers are leaked on purpose: the kernel may still
        // write into them.
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
