//! `iocurve sustain`: one long sequential write, with the throughput of every
//! interval kept, to see where a fast cache fills or the device throttles.
//!
//! Short benchmarks measure the cache in front of a flash medium (an SLC
//! region, a DRAM buffer): a camera that records for an hour meets the medium
//! behind it. The writer is an [`OpSource`] driven by the `sync` engine; at
//! each interval boundary it closes a sample into a vector reserved up front
//! and offers a copy to a bounded channel without waiting, so a printer thread
//! can stream JSON lines while the timed thread never formats, locks or
//! allocates. Every request's completion time also goes into a vector
//! sized (and its pages touched) before the write starts, up to
//! [`MAX_RECORDED_REQUESTS`]; [`crate::analysis::sustain`] finds the drop in
//! it afterwards, to the request.
//!
//! On a simulated card (`sim:`) the writer is driven by the simulator's
//! engine on the card's virtual clock, with no final sync (the card has no
//! host cache).

use crate::analysis::sustain::drop_in;
use crate::engine::sim::{SimDevice, SimEngine};
use crate::engine::sync::SyncEngine;
use crate::engine::{Engine, EngineSetup, IoError, MonotonicClock, Op, OpKind, OpSource};
use crate::result::apps::{IntervalSample, MarkSample, SpeedDrop};
use crate::result::config::SustainPlan;
use crate::result::live::{LiveInterval, capped_quantiles};
use crate::result::measured::SustainRun;
use crate::stats::live_histogram::{BUCKETS, bucket_of, quantile_of_counts};
use crate::sys::buffer::{AlignedBuf, MIN_ALIGN};
use crate::vocab::Pattern;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;

/// Interval samples reserved up front (a day at one per second).
const RESERVED_INTERVALS: usize = 86_400;
/// Mark samples reserved up front (a 64 TiB write at 1 GiB marks).
const RESERVED_MARKS: usize = 65_536;
/// Completion times recorded at most: 2^24 requests, 128 MiB of timestamps
/// (16 GiB written in 1 KiB requests, 16 TiB in 1 MiB ones). Later requests
/// are written and counted but not searched for the drop.
pub const MAX_RECORDED_REQUESTS: usize = 1 << 24;

/// The sequential writer and its running figures.
pub struct SustainSource<'a> {
    plan: SustainPlan,
    stop: &'a AtomicBool,
    /// Under MPI: set when the other ranks end the write (a failure).
    peers_stop: Option<&'a AtomicBool>,
    live: Option<SyncSender<LiveInterval>>,
    /// Requests of the open interval per latency bucket, kept only when
    /// intervals go out live (for their p50 and p99).
    live_latency: Option<Box<[u64]>>,
    start_ns: Option<u64>,
    issued_bytes: u64,
    written: u64,
    seq: u64,
    open: IntervalSample,
    last_mark: (u64, u64),
    pub intervals: Vec<IntervalSample>,
    pub marks: Vec<MarkSample>,
    /// Completion time of request `i`, ns since the start, for `i <
    /// recorded`; zero-filled up front so the timed path only stores.
    completions: Vec<u64>,
    recorded: usize,
}

impl<'a> SustainSource<'a> {
    pub fn new(
        plan: SustainPlan,
        stop: &'a AtomicBool,
        live: Option<SyncSender<LiveInterval>>,
    ) -> Self {
        SustainSource {
            plan,
            stop,
            peers_stop: None,
            live_latency: live.as_ref().map(|_| vec![0; BUCKETS].into_boxed_slice()),
            live,
            start_ns: None,
            issued_bytes: 0,
            written: 0,
            seq: 0,
            open: empty_interval(0, 0, 0),
            last_mark: (0, 0),
            intervals: Vec::with_capacity(RESERVED_INTERVALS),
            marks: Vec::with_capacity(RESERVED_MARKS),
            completions: touched_zeros(planned_requests(&plan)),
            recorded: 0,
        }
    }

    /// Completion times of the requests recorded, ns since the start.
    pub fn completions(&self) -> &[u64] {
        &self.completions[..self.recorded]
    }

    /// Hands over the recorded completion times.
    pub fn take_completions(&mut self) -> Vec<u64> {
        let mut all = std::mem::take(&mut self.completions);
        all.truncate(self.recorded);
        all
    }

    /// Bytes completed so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Closes the interval in progress, if anything was written in it.
    pub fn finish(&mut self) {
        if self.open.bytes > 0 {
            self.close_interval(self.open.end_ns);
        }
    }

    fn close_interval(&mut self, end_ns: u64) {
        let mut s = self.open;
        s.end_ns = end_ns;
        s.mb_per_s = crate::units::mb_per_s(s.bytes, end_ns.saturating_sub(s.start_ns));
        if self.intervals.len() < self.intervals.capacity() {
            self.intervals.push(s);
        }
        if self.live.is_some() {
            let interval = self.live_interval(&s);
            if let Some(live) = &self.live {
                // A slow reader loses lines, never stalls the writer.
                let _ = live.try_send(interval);
            }
        }
        self.open = empty_interval(s.index + 1, end_ns, self.written);
    }

    /// The live line's figures of a closed interval; its latency counts
    /// start again for the next.
    fn live_interval(&mut self, s: &IntervalSample) -> LiveInterval {
        let counts = self.live_latency.as_deref_mut().unwrap_or_default();
        let ops = s.bytes / u64::from(self.plan.block_size.max(1));
        let (mb_per_s, iops) = LiveInterval::rates(s.bytes, ops, (s.start_ns, s.end_ns));
        let max_ns = (s.max_write_ns > 0).then_some(s.max_write_ns);
        let quantiles = (
            quantile_of_counts(counts, 0.5),
            quantile_of_counts(counts, 0.99),
        );
        let (p50_ns, p99_ns) = capped_quantiles(quantiles, max_ns);
        let interval = LiveInterval {
            test: crate::result::live::LiveTest::Sustain {
                block_size_bytes: self.plan.block_size,
            },
            index: s.index,
            start_ns: s.start_ns,
            end_ns: s.end_ns,
            bytes: s.bytes,
            ops,
            mb_per_s,
            iops,
            p50_ns,
            p99_ns,
            max_ns,
        };
        counts.fill(0);
        interval
    }

    fn record_mark(&mut self, now_ns: u64) {
        let (bytes0, t0) = self.last_mark;
        if self.written - bytes0 >= self.plan.mark_bytes {
            if self.marks.len() < self.marks.capacity() {
                self.marks.push(MarkSample {
                    bytes_end: self.written,
                    end_ns: now_ns,
                    mb_per_s: crate::units::mb_per_s(self.written - bytes0, now_ns - t0),
                });
            }
            self.last_mark = (self.written, now_ns);
        }
    }
}

/// Requests the plan can issue, capped at [`MAX_RECORDED_REQUESTS`].
fn planned_requests(plan: &SustainPlan) -> usize {
    let requests = plan
        .bytes
        .checked_div(u64::from(plan.block_size))
        .unwrap_or(0);
    usize::try_from(requests).map_or(MAX_RECORDED_REQUESTS, |r| r.min(MAX_RECORDED_REQUESTS))
}

/// `n` zeros written one by one (a memset, not a zeroed allocation the
/// kernel would map lazily), so storing into them later faults no page in.
// `vec![0; n]` would ask for zeroed pages, mapped in on first store: in the
// timed loop.
#[allow(clippy::slow_vector_initialization)]
fn touched_zeros(n: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0);
    v
}

fn empty_interval(index: u64, start_ns: u64, bytes_before: u64) -> IntervalSample {
    IntervalSample {
        index,
        start_ns,
        end_ns: start_ns,
        bytes_before,
        bytes: 0,
        mb_per_s: 0.0,
        max_write_ns: 0,
    }
}

impl OpSource for SustainSource<'_> {
    fn next(&mut self, now_ns: u64) -> Option<Op> {
        let start = *self.start_ns.get_or_insert(now_ns);
        let out_of_time = self
            .plan
            .time_ns
            .is_some_and(|t| now_ns.saturating_sub(start) >= t);
        let bs = u64::from(self.plan.block_size);
        if out_of_time
            || bs == 0
            || self.issued_bytes + bs > self.plan.bytes
            || self.stop.load(Ordering::Relaxed)
            || self.peers_stop.is_some_and(|p| p.load(Ordering::Relaxed))
        {
            return None;
        }
        let op = Op {
            kind: OpKind::Write,
            offset: self.plan.offset + self.issued_bytes,
            len: self.plan.block_size,
            seq: self.seq,
            counted: true,
        };
        self.issued_bytes += bs;
        self.seq += 1;
        Some(op)
    }

    fn completed(&mut self, op: &Op, submit_ns: u64, complete_ns: u64, _data: &[u8]) {
        let start = self.start_ns.unwrap_or(0);
        let t = complete_ns.saturating_sub(start);
        self.written += u64::from(op.len);
        if let Some(slot) = self.completions.get_mut(self.recorded) {
            *slot = t;
            self.recorded += 1;
        }
        self.open.bytes += u64::from(op.len);
        self.open.end_ns = t;
        let latency = complete_ns - submit_ns;
        self.open.max_write_ns = self.open.max_write_ns.max(latency);
        if let Some(counts) = &mut self.live_latency {
            counts[bucket_of(latency)] += 1;
        }
        if t >= self.open.start_ns + self.plan.interval_ns {
            self.close_interval(t);
        }
        self.record_mark(t);
    }
}

/// What the write goes to: a descriptor through the `sync` engine, or a
/// simulated card through its own engine and virtual clock.
#[derive(Clone, Copy)]
pub enum SustainTarget<'a> {
    Fd { fd: BorrowedFd<'a>, align: usize },
    Sim(&'a SimDevice),
}

impl<'a> SustainTarget<'a> {
    /// What an open target writes through: its simulated card, or its
    /// descriptor.
    pub fn of(target: &'a crate::medium::OpenTarget) -> SustainTarget<'a> {
        match target.sim() {
            Some(device) => SustainTarget::Sim(device),
            None => SustainTarget::Fd {
                fd: target.fd(),
                align: target.align,
            },
        }
    }
}

/// Writes the plan; `live` receives each interval as it closes.
pub fn run(
    target: SustainTarget<'_>,
    plan: SustainPlan,
    seed: u64,
    stop: &AtomicBool,
    live: Option<SyncSender<LiveInterval>>,
) -> SustainRun {
    if plan.block_size == 0 {
        // The command never plans this; empty writes would never end.
        return SustainRun::failed(IoError::refused(
            OpKind::Write,
            plan.offset,
            "a sustained write needs blocks of at least 1 byte",
        ));
    }
    let align = match target {
        SustainTarget::Fd { align, .. } => align,
        SustainTarget::Sim(_) => MIN_ALIGN,
    };
    // A pool of 8 blocks of random data: incompressible, never the same
    // block twice in a row.
    let bs = plan.block_size as usize;
    let mut pool = AlignedBuf::new(bs * 8, align);
    Pattern::Random.fill(pool.as_mut_slice(), seed);
    // Under MPI every rank starts its write together, and a failure on
    // one stops the others (see workload::coordinate); alone, as asked.
    let wall = AtomicBool::new(false);
    let coordinator = super::coordinate::current();
    let mut source = SustainSource::new(plan, stop, live);
    if coordinator.is_some() {
        source.peers_stop = Some(&wall);
    }
    let mut pool = Some(pool);
    let mut write = || match (target, pool.take()) {
        (SustainTarget::Fd { fd, align }, Some(pool)) => write_to_fd(fd, align, pool, &mut source),
        (SustainTarget::Sim(device), Some(pool)) => write_to_sim(device, pool, &mut source),
        (_, None) => (None, 0),
    };
    let (error, elapsed_ns) = match coordinator {
        None => write(),
        Some(c) => {
            let mut outcome = (None, 0);
            c.during_counted("sustain", &wall, &|| 0, &mut |ready| {
                ready();
                outcome = write();
                outcome.0.is_some()
            });
            outcome
        }
    };
    source.finish();
    SustainRun {
        bytes: source.written(),
        completions_ns: source.take_completions(),
        intervals: std::mem::take(&mut source.intervals),
        marks: std::mem::take(&mut source.marks),
        elapsed_ns,
        error,
    }
}

/// The write through the `sync` engine and its final `fdatasync`; the
/// error, if any, and the wall time.
fn write_to_fd(
    fd: BorrowedFd<'_>,
    align: usize,
    pool: AlignedBuf,
    source: &mut SustainSource<'_>,
) -> (Option<IoError>, u64) {
    let block_size = source.plan.block_size as usize;
    let mut engine = SyncEngine::new(EngineSetup {
        fd,
        block_size,
        queue_depth: 1,
        align,
        pool,
        clock: MonotonicClock::new(),
    });
    let mut error = engine.run(source).err();
    if error.is_none() {
        if let Err(e) = rustix::fs::fdatasync(fd) {
            error = Some(IoError {
                kind: OpKind::Write,
                offset: 0,
                len: 0,
                error: e.into(),
            });
        }
    }
    (error, engine.now_ns())
}

/// The write on a simulated card, timed on its virtual clock.
fn write_to_sim(
    device: &SimDevice,
    pool: AlignedBuf,
    source: &mut SustainSource<'_>,
) -> (Option<IoError>, u64) {
    let mut engine = SimEngine::new(device, source.plan.block_size as usize, pool);
    let started = engine.now_ns();
    let error = engine.run(source).err();
    (error, engine.now_ns().saturating_sub(started))
}

/// Runs a sustained write of `bytes` in requests of `block_size` from the
/// start of a simulated card and returns where it found the drop: the
/// workload and analysis of `iocurve sustain`, without a command around
/// them, for calibration over many simulated cards. Give it a card from
/// [`SimDevice::timing_only`] for long writes.
pub fn drop_on_sim(
    device: &SimDevice,
    block_size: u32,
    bytes: u64,
) -> Result<Option<SpeedDrop>, IoError> {
    let plan = SustainPlan {
        block_size,
        offset: 0,
        bytes: bytes.min(device.params().size),
        time_ns: None,
        interval_ns: 1_000_000_000,
        mark_bytes: u64::MAX,
    };
    let stop = AtomicBool::new(false);
    let mut run = run(SustainTarget::Sim(device), plan, 0x5u64, &stop, None);
    match run.error.take() {
        Some(e) => Err(e),
        None => Ok(drop_in(&run, block_size)),
    }
}

#[cfg(test)]
mod tests;
