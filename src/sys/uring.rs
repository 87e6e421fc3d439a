//! io_uring(7) with buffers the kernel holds: a ring that owns the memory
//! its transfers read from and write into, so no transfer can outlive it.
//!
//! The kernel reads and writes a submitted buffer until the completion is
//! reaped, long after the submitting call returned; Rust's borrows cannot
//! follow that. [`Ring`] keeps the rule instead: it owns the two registered
//! buffers (the write data pool and one block per slot), marks a slot busy
//! from the moment a transfer on it is prepared until its completion is
//! reaped, hands out a slot's bytes only while it is not busy, and frees the
//! buffers only once nothing is in flight, leaking them if the ring fails
//! first. The kernel only ever reads the pool (writes from it), so the pool
//! needs no such tracking.
//!
//! The timed path (prepare, push, submit, reap) allocates nothing and takes
//! no lock: the pending list is sized for the slots up front.

use super::buffer::AlignedBuf;
use io_uring::{IoUring, opcode, squeue, types};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Registered-buffer index of the write data pool.
const POOL_INDEX: u16 = 0;
/// Registered-buffer index of the per-slot area.
const SLOTS_INDEX: u16 = 1;

/// How submitted entries reach the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submission {
    /// Each batch with an `io_uring_enter` (which also waits for
    /// completions).
    Calls,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL):
    /// entries go without a system call while it is awake; waiting for
    /// completions still takes one.
    KernelPolls,
}

/// How long the polling thread spins without work before it sleeps (and
/// the next submission has to wake it with a system call).
const SQPOLL_IDLE_MS: u32 = 1000;

/// What one transfer does, and with which buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    /// Read into the slot's own block.
    ReadIntoSlot,
    /// Write the slot's own block (filled through [`Ring::slot_mut`]).
    WriteFromSlot,
    /// Write from the shared data pool, starting `start` bytes into it.
    WriteFromPool { start: usize },
}

/// An io_uring on one descriptor, with the buffers its transfers use.
pub struct Ring<'fd> {
    ring: IoUring,
    fd: BorrowedFd<'fd>,
    /// The kernel may touch these until every I/O is reaped; they are freed
    /// only after a complete drain, and leaked if the ring fails first.
    pool: ManuallyDrop<AlignedBuf>,
    slot_area: ManuallyDrop<AlignedBuf>,
    slot_len: usize,
    /// True from a slot's preparation until its completion is reaped.
    busy: Vec<bool>,
    /// Entries prepared for the next push, and their slots.
    pending: Vec<(squeue::Entry, u32)>,
    in_flight: usize,
    fixed_buffers: bool,
    fixed_file: bool,
}

impl<'fd> Ring<'fd> {
    /// A ring for `slots` transfers in flight of at most `slot_len` bytes
    /// each, writing from `pool` when asked. The file and both buffers are
    /// registered when the kernel allows it; plain ones are used otherwise
    /// (see [`Ring::fixed_buffers`], [`Ring::fixed_file`]). The error is the
    /// kernel's when no ring at all can be made.
    pub fn new(
        fd: BorrowedFd<'fd>,
        slots: usize,
        slot_len: usize,
        align: usize,
        mut pool: AlignedBuf,
        submission: Submission,
    ) -> io::Result<Ring<'fd>> {
        let slots = slots.max(1);
        let entries = slots.next_power_of_two() as u32;
        let ring = build_ring(entries, submission)?;
        let mut slot_area = AlignedBuf::new(slot_len * slots, align);
        let fixed_file = ring.submitter().register_files(&[fd.as_raw_fd()]).is_ok();
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
        // SAFETY: both buffers move into the ring below, which frees them
        // only after every submitted I/O has been reaped (see `Drop`), or
        // leaks them.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Ok(Ring {
            ring,
            fd,
            pool: ManuallyDrop::new(pool),
            slot_area: ManuallyDrop::new(slot_area),
            slot_len,
            busy: vec![false; slots],
            pending: Vec::with_capacity(slots),
            in_flight: 0,
            fixed_buffers,
            fixed_file,
        })
    }

    /// Whether the buffers are registered (no page pinning per I/O).
    pub fn fixed_buffers(&self) -> bool {
        self.fixed_buffers
    }

    /// Whether the file is registered (no descriptor lookup per I/O).
    pub fn fixed_file(&self) -> bool {
        self.fixed_file
    }

    /// Bytes in the write data pool.
    pub fn pool_len(&self) -> usize {
        self.pool.len()
    }

    /// Transfers pushed to the kernel and not yet reaped.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Whether prepared entries wait for [`Ring::push_pending`].
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The first `len` bytes of a slot's block, to fill before a
    /// [`Transfer::WriteFromSlot`]. Panics if the slot is busy (the kernel
    /// may be using it) or `len` exceeds the block.
    pub fn slot_mut(&mut self, slot: u32, len: usize) -> &mut [u8] {
        let start = self.slot_start(slot, len);
        assert!(!self.busy[slot as usize], "slot {slot} is in flight");
        // SAFETY: the range lies inside the slot area (checked by
        // `slot_start`), no transfer uses this slot (not busy), and
        // `&mut self` keeps any other borrow of it out while the slice lives.
        unsafe { std::slice::from_raw_parts_mut(self.slot_area.as_mut_ptr().add(start), len) }
    }

    /// Prepares one transfer of `len` bytes at `offset` on `slot`, to be
    /// pushed by the next [`Ring::push_pending`]; the slot is busy until its
    /// completion is reaped. Panics if the slot is busy or the range falls
    /// outside its buffer.
    pub fn prepare(&mut self, slot: u32, transfer: Transfer, offset: u64, len: u32) {
        let ptr = match transfer {
            Transfer::WriteFromPool { start } => {
                let end = start.checked_add(len as usize);
                assert!(
                    end.is_some_and(|end| end <= self.pool.len()),
                    "write past the data pool"
                );
                // SAFETY: `start + len` is inside the pool (asserted above).
                unsafe { self.pool.as_mut_ptr().add(start) }
            }
            Transfer::ReadIntoSlot | Transfer::WriteFromSlot => {
                let start = self.slot_start(slot, len as usize);
                // SAFETY: `start + len` is inside the slot area (checked by
                // `slot_start`).
                unsafe { self.slot_area.as_mut_ptr().add(start) }
            }
        };
        assert!(!self.busy[slot as usize], "slot {slot} is in flight");
        self.busy[slot as usize] = true;
        let entry = self.entry(transfer, ptr, offset, len);
        self.pending.push((entry.user_data(u64::from(slot)), slot));
    }

    /// Where a slot's block starts in the slot area, checking that `len`
    /// bytes of it fit.
    fn slot_start(&self, slot: u32, len: usize) -> usize {
        assert!((slot as usize) < self.busy.len(), "no slot {slot}");
        assert!(len <= self.slot_len, "{len} bytes exceed a slot");
        slot as usize * self.slot_len
    }

    /// The SQE for one transfer, on the registered file and buffers when
    /// they are registered.
    fn entry(&self, transfer: Transfer, ptr: *mut u8, offset: u64, len: u32) -> squeue::Entry {
        let index = match transfer {
            Transfer::WriteFromPool { .. } => POOL_INDEX,
            _ => SLOTS_INDEX,
        };
        let read = transfer == Transfer::ReadIntoSlot;
        // The same entry for either kind of file reference; the opcodes
        // take a registered index or a plain descriptor alike.
        macro_rules! entry {
            ($fd:expr) => {
                match (read, self.fixed_buffers) {
                    (true, true) => opcode::ReadFixed::new($fd, ptr, len, index)
                        .offset(offset)
                        .build(),
                    (true, false) => opcode::Read::new($fd, ptr, len).offset(offset).build(),
                    (false, true) => opcode::WriteFixed::new($fd, ptr, len, index)
                        .offset(offset)
                        .build(),
                    (false, false) => opcode::Write::new($fd, ptr, len).offset(offset).build(),
                }
            };
        }
        if self.fixed_file {
            entry!(types::Fixed(0))
        } else {
            entry!(types::Fd(self.fd.as_raw_fd()))
        }
    }

    /// Moves the prepared entries into the SQ ring (opened once), calling
    /// `pushed` with each one's slot in the order they go.
    pub fn push_pending(&mut self, mut pushed: impl FnMut(u32)) {
        let mut sq = self.ring.submission();
        for (entry, slot) in self.pending.drain(..) {
            pushed(slot);
            // SAFETY: the entry points into the pool or this slot's block of
            // the slot area, owned by self and freed only once nothing is in
            // flight; the slot stays busy, so we neither hand out nor reuse
            // its block until the completion is reaped. The SQ has room: it
            // holds at least one entry per slot and each slot is used once.
            unsafe {
                sq.push(&entry)
                    .expect("submission queue sized for the slots")
            };
            self.in_flight += 1;
        }
    }

    /// Submits what was pushed and waits for at least `want` completions
    /// (one io_uring_enter).
    pub fn submit_and_wait(&mut self, want: usize) -> io::Result<usize> {
        self.ring.submit_and_wait(want)
    }

    /// Takes every available completion off the CQ ring (opened once),
    /// calling `done` with its slot, its result (bytes, or a negated errno)
    /// and the slot's whole block, which is no longer busy.
    pub fn reap(&mut self, mut done: impl FnMut(u32, i32, &[u8])) {
        let slot_len = self.slot_len;
        let area = self.slot_area.as_mut_ptr();
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as u32;
            self.busy[slot as usize] = false;
            self.in_flight -= 1;
            // SAFETY: `slot` came back from one of our entries, so its block
            // lies inside the slot area; its transfer is complete, so the
            // kernel no longer touches it, and it cannot be reused or handed
            // out mutably while `self` is borrowed here.
            let block =
                unsafe { std::slice::from_raw_parts(area.add(slot as usize * slot_len), slot_len) };
            done(slot, cqe.result(), block);
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
            for cqe in self.ring.completion() {
                self.busy[cqe.user_data() as usize] = false;
                self.in_flight -= 1;
            }
        }
        true
    }
}

/// A ring of `entries` entries. Called: one thread submits and reaps, so
/// completions can wait for our next io_uring_enter instead of interrupting
/// us (Linux 6.1+), and older kernels get a plain ring. Polled: the polling
/// thread is asked for and its refusal is the error (deferred task work
/// cannot go with it).
fn build_ring(entries: u32, submission: Submission) -> io::Result<IoUring> {
    match submission {
        Submission::Calls => IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
            .or_else(|_| IoUring::new(entries)),
        Submission::KernelPolls => IoUring::builder()
            .setup_sqpoll(SQPOLL_IDLE_MS)
            .setup_single_issuer()
            .build(entries)
            .or_else(|_| {
                IoUring::builder()
                    .setup_sqpoll(SQPOLL_IDLE_MS)
                    .build(entries)
            }),
    }
}

impl Drop for Ring<'_> {
    fn drop(&mut self) {
        let drained = self.drain();
        // The kernel tears a ring down after its descriptor closes, later
        // (a polled ring's thread first has to stop): until then it holds
        // the registered file, and the next exclusive open of the device,
        // a second run's, failed as "in use". Unregistering waits for that.
        if drained && self.fixed_file {
            let _ = self.ring.submitter().unregister_files();
        }
        if drained {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileExt;

    /// A ring on `file`, or None where this kernel or sandbox has none.
    fn ring_on(file: &std::fs::File, slots: usize, pool: AlignedBuf) -> Option<Ring<'_>> {
        ring_with(file, slots, pool, Submission::Calls)
    }

    fn ring_with(
        file: &std::fs::File,
        slots: usize,
        pool: AlignedBuf,
        submission: Submission,
    ) -> Option<Ring<'_>> {
        match Ring::new(file.as_fd(), slots, 4096, 4096, pool, submission) {
            Ok(ring) => Some(ring),
            Err(e) => {
                eprintln!("no io_uring here: {e}");
                None
            }
        }
    }

    /// Pushes what is prepared and reaps until nothing is in flight,
    /// returning (slot, result, first byte of the block) per completion.
    fn run(ring: &mut Ring<'_>) -> Vec<(u32, i32, u8)> {
        ring.push_pending(|_| {});
        let mut done = Vec::new();
        while ring.in_flight() > 0 {
            ring.submit_and_wait(1).unwrap();
            ring.reap(|slot, res, block| done.push((slot, res, block[0])));
        }
        done.sort();
        done
    }

    #[test]
    fn reads_into_slots_and_writes_from_pool_and_slot() {
        reads_and_writes_through(Submission::Calls);
    }

    #[test]
    fn a_polled_ring_reads_and_writes_the_same() {
        reads_and_writes_through(Submission::KernelPolls);
    }

    fn reads_and_writes_through(submission: Submission) {
        let mut f = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..4 * 4096u32).map(|i| (i / 4096) as u8 + 1).collect();
        f.write_all(&bytes).unwrap();
        let mut pool = AlignedBuf::new(2 * 4096, 4096);
        pool.as_mut_slice()[4096..].fill(0xAA);
        let Some(mut ring) = ring_with(&f, 2, pool, submission) else {
            return;
        };
        ring.prepare(0, Transfer::ReadIntoSlot, 2 * 4096, 4096);
        ring.prepare(1, Transfer::ReadIntoSlot, 3 * 4096, 4096);
        assert_eq!(run(&mut ring), vec![(0, 4096, 3), (1, 4096, 4)]);

        ring.prepare(0, Transfer::WriteFromPool { start: 4096 }, 0, 4096);
        ring.slot_mut(1, 4096).fill(0xBB);
        ring.prepare(1, Transfer::WriteFromSlot, 4096, 4096);
        assert_eq!(run(&mut ring).len(), 2);
        let mut back = [0u8; 2];
        f.read_exact_at(&mut back[..1], 0).unwrap();
        f.read_exact_at(&mut back[1..], 4096).unwrap();
        assert_eq!(back, [0xAA, 0xBB]);
    }

    #[test]
    #[should_panic(expected = "in flight")]
    fn a_busy_slot_is_not_handed_out() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(4096).unwrap();
        let Some(mut ring) = ring_on(&f, 1, AlignedBuf::new(4096, 4096)) else {
            panic!("in flight (no io_uring here to test with)");
        };
        ring.prepare(0, Transfer::ReadIntoSlot, 0, 4096);
        ring.slot_mut(0, 4096);
    }

    #[test]
    #[should_panic(expected = "write past the data pool")]
    fn a_pool_range_outside_the_pool_is_refused() {
        let f = tempfile::tempfile().unwrap();
        let Some(mut ring) = ring_on(&f, 1, AlignedBuf::new(4096, 4096)) else {
            panic!("write past the data pool (no io_uring here to test with)");
        };
        ring.prepare(0, Transfer::WriteFromPool { start: 512 }, 0, 4096);
    }
}
