//! One job's stream of operations and its record of what completed.
//!
//! A job decides the next offset (sequential with wrap-around, or uniformly
//! random at the alignment granularity) and when to stop (its byte budget,
//! the shared deadline, or a stop request), all from the engine's clock.
//! Everything it touches per I/O is preallocated. The warm-up is a separate
//! pass of jobs whose figures are kept apart (see the runner).

use super::gauge::Gauge;
use super::spec::MeasureSpec;
use super::verify;
use crate::engine::{Op, OpKind, OpSource};
use crate::stats::LatencyHistogram;
use crate::vocab::Rw;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A counter on its own cache line, so jobs publishing progress do not
/// slow each other down.
#[repr(align(64))]
#[derive(Default)]
pub struct PaddedCounter(pub AtomicU64);

/// What one job measured.
#[derive(Clone, Default)]
pub struct JobRecord {
    pub read_latency: LatencyHistogram,
    pub write_latency: LatencyHistogram,
    pub read_bytes: u64,
    pub read_ops: u64,
    pub write_bytes: u64,
    pub write_ops: u64,
    /// The shared start of the pass, on the engines' clock.
    pub start_ns: Option<u64>,
    pub last_complete_ns: u64,
    /// CPU seconds (user, system) this job's thread used in the pass.
    pub cpu: (f64, f64),
}

impl JobRecord {
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    pub fn ops(&self) -> u64 {
        self.read_ops + self.write_ops
    }
}

/// Shared stop conditions of a pass.
#[derive(Clone, Copy)]
pub struct Stops<'a> {
    /// The user's Ctrl-C.
    pub user: &'a AtomicBool,
    /// Another job failed.
    pub abort: &'a AtomicBool,
}

/// The operation stream of one job over its region.
pub struct Job<'a> {
    rw: Rw,
    mix_read_percent: u8,
    block_size: u64,
    /// Start of the whole measured region (verify bitmap origin).
    measured_start: u64,
    region_start: u64,
    region_len: u64,
    random_slots: u64,
    align: u64,
    cursor: u64,
    rng: fastrand::Rng,
    time_ns: u64,
    budget: u64,
    issued: u64,
    deadline_ns: u64,
    seq: u64,
    counted: bool,
    done: bool,
    stops: Stops<'a>,
    /// Where completions are published for the progress bar and the
    /// live intervals.
    gauge: &'a Gauge,
    /// Verify: the seed stamped into blocks and the shared bitmap of
    /// blocks written (one bit per block of the measured region).
    stamp: Option<(u64, &'a [AtomicU64])>,
    cpu_at_start: (f64, f64),
    pub record: JobRecord,
}

/// Where a job works and how much it may do.
#[derive(Debug, Clone, Copy)]
pub struct JobPlan {
    pub index: u32,
    pub region_start: u64,
    pub region_len: u64,
    /// Bytes this job moves at most.
    pub budget: Option<u64>,
    /// Duration of the pass.
    pub time_ns: Option<u64>,
    /// False for the warm-up pass.
    pub counted: bool,
}

impl<'a> Job<'a> {
    pub fn new(
        spec: &MeasureSpec,
        plan: JobPlan,
        stops: Stops<'a>,
        gauge: &'a Gauge,
        written: Option<&'a [AtomicU64]>,
    ) -> Job<'a> {
        let bs = spec.block_size;
        let align = spec.align.max(1);
        let stamp = written
            .filter(|_| spec.verify && spec.rw.writes())
            .map(|bits| (spec.seed, bits));
        // Distinct streams per job and per pass.
        let stream = u64::from(plan.index) << 40 | u64::from(plan.counted) << 39;
        Job {
            rw: spec.rw,
            mix_read_percent: spec.mix_read_percent,
            block_size: bs,
            measured_start: spec.offset,
            region_start: plan.region_start,
            region_len: plan.region_len,
            // The runner refuses a block larger than the region; a job
            // handed one anyway stays at the region's start.
            random_slots: plan.region_len.saturating_sub(bs) / align + 1,
            align,
            cursor: 0,
            rng: fastrand::Rng::with_seed(spec.seed ^ stream ^ 0x9e37_79b9_7f4a_7c15),
            time_ns: plan.time_ns.unwrap_or(u64::MAX),
            budget: plan.budget.unwrap_or(u64::MAX),
            issued: 0,
            deadline_ns: u64::MAX,
            seq: stream,
            counted: plan.counted,
            done: false,
            stops,
            gauge,
            stamp,
            cpu_at_start: (0.0, 0.0),
            record: JobRecord::default(),
        }
    }

    /// Starts the pass at the instant shared by all jobs.
    pub fn start_at(&mut self, start_ns: u64) {
        self.record.start_ns = Some(start_ns);
        self.record.last_complete_ns = start_ns;
        self.deadline_ns = start_ns.saturating_add(self.time_ns);
        self.gauge.start(start_ns);
        self.cpu_at_start = crate::sys::thread_cpu_seconds();
    }

    /// Closes the CPU account; call on the job's thread after the engine
    /// returns.
    pub fn finish(&mut self) {
        let (u, s) = crate::sys::thread_cpu_seconds();
        self.record.cpu = (u - self.cpu_at_start.0, s - self.cpu_at_start.1);
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
        if self.done
            || self.stops.user.load(Ordering::Relaxed)
            || self.stops.abort.load(Ordering::Relaxed)
            || self.issued >= self.budget
            || now_ns >= self.deadline_ns
        {
            self.done = true;
            return None;
        }
        let op = Op {
            kind: self.next_kind(),
            offset: self.next_offset(),
            len: self.block_size as u32,
            seq: self.seq,
            counted: self.counted,
        };
        self.seq += 1;
        self.issued += self.block_size;
        Some(op)
    }

    #[inline]
    fn completed(&mut self, op: &Op, submit_ns: u64, complete_ns: u64, _data: &[u8]) {
        let r = &mut self.record;
        let len = u64::from(op.len);
        let latency = complete_ns - submit_ns;
        r.last_complete_ns = r.last_complete_ns.max(complete_ns);
        match op.kind {
            OpKind::Read => {
                r.read_latency.record(latency);
                r.read_bytes += len;
                r.read_ops += 1;
            }
            OpKind::Write => {
                r.write_latency.record(latency);
                r.write_bytes += len;
                r.write_ops += 1;
            }
        }
        self.gauge
            .completed(r.read_bytes + r.write_bytes, complete_ns, latency);
    }

    fn stamps_writes(&self) -> bool {
        self.stamp.is_some()
    }

    fn fill_write(&mut self, op: &Op, buf: &mut [u8]) {
        if let Some((seed, written)) = self.stamp {
            verify::stamp(buf, op.offset, seed, op.seq);
            let block = (op.offset - self.measured_start) / self.block_size;
            written[(block / 64) as usize].fetch_or(1 << (block % 64), Ordering::Relaxed);
        }
    }
}
