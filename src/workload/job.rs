//! One job's stream of operations and its record of what completed.
//!
//! A job decides the next offset (sequential with wrap-around, or uniformly
//! random at the alignment granularity), the phase (warm-up, counted, done)
//! and when to stop (bytes, time, or a stop request), all from the engine's
//! clock. Everything it touches per I/O is preallocated.

use super::spec::{MeasureSpec, Rw};
use super::verify::{self, VerifyTally};
use crate::engine::{Op, OpKind, OpSource};
use crate::stats::LatencyHistogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A counter on its own cache line, so jobs publishing progress do not
/// slow each other down.
#[repr(align(64))]
#[derive(Default)]
pub struct PaddedCounter(pub AtomicU64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    NotStarted,
    Ramp,
    Counted,
    Done,
}

/// What one job measured.
#[derive(Clone, Default)]
pub struct JobRecord {
    pub read_latency: LatencyHistogram,
    pub write_latency: LatencyHistogram,
    pub read_bytes: u64,
    pub read_ops: u64,
    pub write_bytes: u64,
    pub write_ops: u64,
    pub ramp_ops: u64,
    pub ramp_read_bytes: u64,
    pub ramp_write_bytes: u64,
    pub ramp_start_ns: Option<u64>,
    pub counted_start_ns: Option<u64>,
    pub last_complete_ns: u64,
    /// This job's thread CPU (user, system) when counting began.
    pub cpu_at_count_start: Option<(f64, f64)>,
    /// CPU seconds (user, system) the counted phase used.
    pub cpu_counted: (f64, f64),
}

/// Where verification stands for this job.
pub struct VerifyState {
    pub seed: u64,
    pub tally: VerifyTally,
    /// One bit per block of the region: set once a stamped block was written.
    pub written: Vec<u64>,
}

/// The operation stream of one job over its region.
pub struct Job<'a> {
    rw: Rw,
    mix_read_percent: u8,
    block_size: u64,
    region_start: u64,
    region_len: u64,
    random_slots: u64,
    align: u64,
    cursor: u64,
    rng: fastrand::Rng,
    ramp_ns: u64,
    time_ns: u64,
    budget: u64,
    issued_counted: u64,
    deadline_ns: u64,
    seq: u64,
    phase: Phase,
    stop: &'a AtomicBool,
    abort: &'a AtomicBool,
    progress: &'a PaddedCounter,
    pub record: JobRecord,
    pub verify: Option<VerifyState>,
}

impl<'a> Job<'a> {
    /// A job over `[region_start, region_start + region_len)` moving at most
    /// `budget` counted bytes. `index` makes its random stream and its
    /// sequence numbers distinct from the other jobs'.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        spec: &MeasureSpec,
        index: u32,
        region_start: u64,
        region_len: u64,
        budget: Option<u64>,
        stop: &'a AtomicBool,
        abort: &'a AtomicBool,
        progress: &'a PaddedCounter,
    ) -> Job<'a> {
        let bs = spec.block_size;
        let align = spec.align.max(1);
        let verify = spec.verify.then(|| VerifyState {
            seed: spec.seed,
            tally: VerifyTally::default(),
            written: vec![0u64; (region_len / bs).div_ceil(64) as usize],
        });
        Job {
            rw: spec.rw,
            mix_read_percent: spec.mix_read_percent,
            block_size: bs,
            region_start,
            region_len,
            random_slots: (region_len - bs) / align + 1,
            align,
            cursor: 0,
            rng: fastrand::Rng::with_seed(
                spec.seed ^ (u64::from(index) << 40) ^ 0x9e37_79b9_7f4a_7c15,
            ),
            ramp_ns: spec.ramp.map_or(0, |d| d.as_nanos() as u64),
            time_ns: spec.time.map_or(u64::MAX, |d| d.as_nanos() as u64),
            budget: budget.unwrap_or(u64::MAX),
            issued_counted: 0,
            deadline_ns: u64::MAX,
            seq: u64::from(index) << 48,
            phase: Phase::NotStarted,
            stop,
            abort,
            progress,
            record: JobRecord::default(),
            verify,
        }
    }

    /// Closes the CPU account of the counted phase; call on the job's thread
    /// after the engine returns.
    pub fn finish_cpu(&mut self) {
        if let Some((user, system)) = self.record.cpu_at_count_start {
            let (u, s) = crate::engine::sys::thread_cpu_seconds();
            self.record.cpu_counted = (u - user, s - system);
        }
    }

    /// Bytes the counted phase has completed so far.
    pub fn counted_bytes(&self) -> u64 {
        self.record.read_bytes + self.record.write_bytes
    }

    fn advance_phase(&mut self, now: u64) {
        if self.phase == Phase::NotStarted {
            self.record.ramp_start_ns = Some(now);
            self.phase = Phase::Ramp;
        }
        if self.phase == Phase::Ramp {
            let started = self.record.ramp_start_ns.unwrap_or(now);
            if now.saturating_sub(started) >= self.ramp_ns {
                self.phase = Phase::Counted;
                // One system call at the phase change, not per I/O.
                self.record.cpu_at_count_start = Some(crate::engine::sys::thread_cpu_seconds());
                self.record.counted_start_ns = Some(now);
                self.deadline_ns = now.saturating_add(self.time_ns);
            }
        }
        if self.phase == Phase::Counted
            && (self.issued_counted >= self.budget || now >= self.deadline_ns)
        {
            self.phase = Phase::Done;
        }
    }

    fn next_offset(&mut self) -> u64 {
        if self.rw.is_random() {
            self.region_start + self.rng.u64(0..self.random_slots) * self.align
        } else {
            if self.cursor + self.block_size > self.region_len {
                self.cursor = 0;
            }
            let offset = self.region_start + self.cursor;
            self.cursor += self.block_size;
            offset
        }
    }

    fn next_kind(&mut self) -> OpKind {
        match self.rw {
            Rw::Read | Rw::RandRead => OpKind::Read,
            Rw::Write | Rw::RandWrite => OpKind::Write,
            Rw::Rw | Rw::RandRw => {
                if self.rng.u8(0..100) < self.mix_read_percent {
                    OpKind::Read
                } else {
                    OpKind::Write
                }
            }
        }
    }
}

impl OpSource for Job<'_> {
    #[inline]
    fn next(&mut self, now_ns: u64) -> Option<Op> {
        if self.stop.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed) {
            self.phase = Phase::Done;
        }
        self.advance_phase(now_ns);
        let counted = match self.phase {
            Phase::Done => return None,
            Phase::Counted => true,
            _ => false,
        };
        let op = Op {
            kind: self.next_kind(),
            offset: self.next_offset(),
            len: self.block_size as u32,
            seq: self.seq,
            counted,
        };
        self.seq += 1;
        if counted {
            self.issued_counted += self.block_size;
        }
        Some(op)
    }

    #[inline]
    fn completed(&mut self, op: &Op, submit_ns: u64, complete_ns: u64, data: &[u8]) {
        let r = &mut self.record;
        let len = u64::from(op.len);
        r.last_complete_ns = r.last_complete_ns.max(complete_ns);
        match (op.counted, op.kind) {
            (true, OpKind::Read) => {
                r.read_latency.record(complete_ns - submit_ns);
                r.read_bytes += len;
                r.read_ops += 1;
            }
            (true, OpKind::Write) => {
                r.write_latency.record(complete_ns - submit_ns);
                r.write_bytes += len;
                r.write_ops += 1;
            }
            (false, kind) => {
                r.ramp_ops += 1;
                match kind {
                    OpKind::Read => r.ramp_read_bytes += len,
                    OpKind::Write => r.ramp_write_bytes += len,
                }
            }
        }
        let total = r.read_bytes + r.write_bytes + r.ramp_read_bytes + r.ramp_write_bytes;
        self.progress.0.store(total, Ordering::Relaxed);
        if op.kind == OpKind::Read {
            if let Some(v) = self.verify.as_mut() {
                v.tally
                    .record(op.offset, verify::check(data, op.offset, v.seed));
            }
        }
    }

    fn stamps_writes(&self) -> bool {
        self.verify.is_some()
    }

    fn fill_write(&mut self, op: &Op, buf: &mut [u8]) {
        if let Some(v) = self.verify.as_mut() {
            verify::stamp(buf, op.offset, v.seed, op.seq);
            let block = (op.offset - self.region_start) / self.block_size;
            v.written[(block / 64) as usize] |= 1 << (block % 64);
        }
    }
}
