//! `iocurve stream`: requests on a fixed schedule, as a video player or a
//! recorder issues them, and whether each one was done in time.
//!
//! The schedule is fixed before the run: request i is due at
//! `start + i × period`. A request that cannot start on time (the one before
//! it stalled) starts as soon as it can, and its latency is still counted
//! from its *scheduled* start. Counting from the actual start would hide a
//! stall behind the requests that queued up behind it, the error Gil Tene
//! named coordinated omission ("How NOT to Measure Latency", 2013): a load
//! generator that waits for a slow response before sending the next request
//! omits exactly the samples that would have shown the stall. A player cannot
//! wait, so neither does this scheduler.
//!
//! A request misses its deadline when it completes later than its scheduled
//! start plus the deadline (by default one period: the next frame is due).
//! The longest stall is the longest time past a deadline, the longest time a
//! player would have shown a frozen frame.
//!
//! The scheduler is an [`OpSource`] driven by the `sync` engine; it waits
//! through a [`Pacer`] so that a fake clock can replace the wall clock in
//! tests. Nothing in `next` or `completed` allocates, locks or formats.

use crate::engine::sim::{SimDevice, SimEngine};
use crate::engine::sync::SyncEngine;
use crate::engine::{Clock, Engine, EngineSetup, IoError, MonotonicClock, Op, OpKind, OpSource};
use crate::interrupt;
use crate::medium::OpenTarget;
use crate::result::apps::FindMaxReport;
use crate::result::apps::StreamOutcome;
use crate::stats::LatencyHistogram;
use crate::sys::buffer::{AlignedBuf, MIN_ALIGN};
use crate::vocab::Pattern;
use crate::vocab::options::IoMode;
use crate::workload::gauge::Gauge;
use crate::workload::live;
use serde::{Deserialize, Serialize};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Below this much time to wait, the pacer spins instead of sleeping.
const SPIN_NS: u64 = 200_000;

/// Waits until a point on the scheduler's clock.
pub trait Pacer {
    /// Returns once the clock reads at least `t_ns`, with the time then.
    fn wait_until(&mut self, t_ns: u64) -> u64;
}

/// The wall-clock pacer: sleeps most of the wait, spins the last part so the
/// request starts within microseconds of its schedule.
pub struct WallPacer<C: Clock>(pub C);

impl<C: Clock> Pacer for WallPacer<C> {
    fn wait_until(&mut self, t_ns: u64) -> u64 {
        let mut now = self.0.now_ns();
        if t_ns > now + SPIN_NS {
            let nap = t_ns - now - SPIN_NS / 2;
            std::thread::sleep(std::time::Duration::from_nanos(nap));
        }
        while {
            now = self.0.now_ns();
            now < t_ns
        } {
            std::hint::spin_loop();
        }
        now
    }
}

/// One stream to run: what, how often, how long.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct StreamPlan {
    pub kind: OpKindName,
    /// Bytes per request.
    pub chunk: u32,
    /// Time between scheduled starts, ns.
    pub period_ns: u64,
    /// Allowed time from scheduled start to completion, ns.
    pub deadline_ns: u64,
    /// Requests to issue.
    pub requests: u64,
    /// Region the stream walks through sequentially, wrapping at its end.
    pub offset: u64,
    pub span: u64,
}

impl StreamPlan {
    /// A plan of `kind` requests of `chunk` bytes over a region, with no
    /// schedule yet ([`Schedule::plan_at`] gives it one).
    pub fn unscheduled(kind: OpKindName, chunk: u32, offset: u64, span: u64) -> StreamPlan {
        StreamPlan {
            kind,
            chunk,
            period_ns: 0,
            deadline_ns: 0,
            requests: 0,
            offset,
            span,
        }
    }

    /// The rate the schedule asks for, MB/s.
    pub fn rate_mb_s(&self) -> f64 {
        f64::from(self.chunk) / self.period_ns as f64 * 1e3
    }

    /// The byte offset of request `i`.
    fn offset_of(&self, i: u64) -> u64 {
        let slots = (self.span / u64::from(self.chunk).max(1)).max(1);
        self.offset + (i % slots) * u64::from(self.chunk)
    }
}

/// Read or write, as the result names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKindName {
    Read,
    Write,
}

impl OpKindName {
    fn op(self) -> OpKind {
        match self {
            OpKindName::Read => OpKind::Read,
            OpKindName::Write => OpKind::Write,
        }
    }
}

/// The scheduler: hands out requests at their scheduled times and scores
/// each completion against its deadline.
pub struct StreamSource<'a, P: Pacer> {
    plan: StreamPlan,
    pacer: P,
    stop: &'a AtomicBool,
    start_ns: Option<u64>,
    issued: u64,
    tally: Tally,
    /// Where completions are published for `--json-lines`.
    gauge: Option<&'a Gauge>,
}

/// Running figures, updated per completion without allocating.
struct Tally {
    hist: LatencyHistogram,
    done: u64,
    bytes: u64,
    misses: u64,
    late_starts: u64,
    longest_stall_ns: u64,
    longest_gap_ns: u64,
    last_complete_ns: Option<u64>,
    // Welford's running mean and squared deviations of the latency.
    mean: f64,
    m2: f64,
}

impl<'a, P: Pacer> StreamSource<'a, P> {
    pub fn new(plan: StreamPlan, pacer: P, stop: &'a AtomicBool) -> Self {
        StreamSource {
            plan,
            pacer,
            stop,
            start_ns: None,
            issued: 0,
            tally: Tally {
                hist: LatencyHistogram::new(),
                done: 0,
                bytes: 0,
                misses: 0,
                late_starts: 0,
                longest_stall_ns: 0,
                longest_gap_ns: 0,
                last_complete_ns: None,
                mean: 0.0,
                m2: 0.0,
            },
            gauge: None,
        }
    }

    /// Publishes every completion to `gauge` as well.
    pub fn publishing_to(self, gauge: &'a Gauge) -> Self {
        StreamSource {
            gauge: Some(gauge),
            ..self
        }
    }

    fn scheduled(&self, i: u64) -> u64 {
        self.start_ns.unwrap_or(0) + i * self.plan.period_ns
    }

    /// The figures of everything completed so far.
    pub fn outcome(&self) -> StreamOutcome {
        let t = &self.tally;
        let start = self.start_ns.unwrap_or(0);
        let elapsed_ns = t.last_complete_ns.map_or(0, |c| c.saturating_sub(start));
        StreamOutcome {
            rate_mb_s: self.plan.rate_mb_s(),
            chunk: self.plan.chunk,
            period_ns: self.plan.period_ns,
            deadline_ns: self.plan.deadline_ns,
            requests_planned: self.plan.requests,
            requests_done: t.done,
            bytes: t.bytes,
            elapsed_ns,
            achieved_mb_s: crate::units::mb_per_s(t.bytes, elapsed_ns),
            misses: t.misses,
            miss_share: if t.done > 0 {
                t.misses as f64 / t.done as f64
            } else {
                0.0
            },
            longest_stall_ns: t.longest_stall_ns,
            longest_gap_ns: t.longest_gap_ns,
            latency: t.hist.summary(),
            jitter_ns: if t.done > 1 {
                (t.m2 / (t.done - 1) as f64).sqrt()
            } else {
                0.0
            },
            late_starts: t.late_starts,
            warnings: Vec::new(),
        }
    }
}

impl<P: Pacer> OpSource for StreamSource<'_, P> {
    fn next(&mut self, now_ns: u64) -> Option<Op> {
        if self.issued >= self.plan.requests || self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let start = *self.start_ns.get_or_insert_with(|| {
            if let Some(g) = self.gauge {
                g.start(now_ns);
            }
            now_ns
        });
        let due = start + self.issued * self.plan.period_ns;
        if now_ns < due {
            self.pacer.wait_until(due);
        } else if now_ns > due + self.plan.period_ns / 10 {
            self.tally.late_starts += 1;
        }
        let i = self.issued;
        self.issued += 1;
        Some(Op {
            kind: self.plan.kind.op(),
            offset: self.plan.offset_of(i),
            len: self.plan.chunk,
            seq: i,
            counted: true,
        })
    }

    fn completed(&mut self, op: &Op, _submit_ns: u64, complete_ns: u64, _data: &[u8]) {
        let due = self.scheduled(op.seq);
        let latency = complete_ns.saturating_sub(due);
        let t = &mut self.tally;
        t.hist.record(latency);
        t.done += 1;
        t.bytes += u64::from(op.len);
        let delta = latency as f64 - t.mean;
        t.mean += delta / t.done as f64;
        t.m2 += delta * (latency as f64 - t.mean);
        if latency > self.plan.deadline_ns {
            t.misses += 1;
            t.longest_stall_ns = t.longest_stall_ns.max(latency - self.plan.deadline_ns);
        }
        if let Some(last) = t.last_complete_ns {
            t.longest_gap_ns = t.longest_gap_ns.max(complete_ns.saturating_sub(last));
        }
        t.last_complete_ns = Some(complete_ns);
        if let Some(g) = self.gauge {
            g.completed(t.bytes, complete_ns, latency);
        }
    }
}

/// The simulated card's pacer: waiting is idle time on the card's own
/// clock (its write cache drains meanwhile), so a ten-minute stream takes
/// the milliseconds needed to simulate its requests.
pub struct SimPacer<'a>(pub &'a SimDevice);

impl Pacer for SimPacer<'_> {
    fn wait_until(&mut self, t_ns: u64) -> u64 {
        let now = self.0.clock().now_ns();
        if t_ns > now {
            self.0.idle(t_ns - now);
        }
        self.0.clock().now_ns()
    }
}

/// What a stream runs on.
#[derive(Clone, Copy)]
pub enum StreamTarget<'a> {
    /// A descriptor, with the `sync` engine on the wall clock.
    Fd { fd: BorrowedFd<'a>, align: usize },
    /// A simulated card, on its virtual clock.
    Sim(&'a SimDevice),
}

/// Runs one stream, one request at a time on its schedule. A failed
/// transfer ends it; the figures up to then come with the error.
pub fn run(
    target: StreamTarget<'_>,
    plan: StreamPlan,
    seed: u64,
    stop: &AtomicBool,
    gauge: &Gauge,
) -> (StreamOutcome, Option<IoError>) {
    if plan.chunk == 0 || plan.period_ns == 0 {
        // The command never plans this; a schedule of empty requests, or
        // of infinitely many, is refused rather than run.
        let source = StreamSource::new(plan, WallPacer(MonotonicClock::new()), stop);
        let error = IoError::refused(
            OpKind::Read,
            plan.offset,
            "a stream needs requests of at least 1 byte, at least 1 ns apart",
        );
        return (source.outcome(), Some(error));
    }
    let chunk = plan.chunk as usize;
    let align = match target {
        StreamTarget::Fd { align, .. } => align,
        StreamTarget::Sim(_) => MIN_ALIGN,
    };
    let mut pool = AlignedBuf::new(chunk, align);
    if plan.kind == OpKindName::Write {
        Pattern::Random.fill(pool.as_mut_slice(), seed);
    }
    match target {
        StreamTarget::Fd { fd, align } => run_on_fd(fd, align, pool, plan, (stop, gauge)),
        StreamTarget::Sim(device) => {
            let mut engine = SimEngine::new(device, chunk, pool);
            let mut source = StreamSource::new(plan, SimPacer(device), stop).publishing_to(gauge);
            let error = engine.run(&mut source).err();
            (source.outcome(), error)
        }
    }
}

fn run_on_fd(
    fd: BorrowedFd<'_>,
    align: usize,
    pool: AlignedBuf,
    plan: StreamPlan,
    (stop, gauge): (&AtomicBool, &Gauge),
) -> (StreamOutcome, Option<IoError>) {
    let chunk = plan.chunk as usize;
    let clock = MonotonicClock::new();
    let mut engine = SyncEngine::new(EngineSetup {
        fd,
        block_size: chunk,
        queue_depth: 1,
        align,
        pool,
        clock,
    });
    let mut source = StreamSource::new(plan, WallPacer(clock), stop).publishing_to(gauge);
    let error = engine.run(&mut source).err();
    (source.outcome(), error)
}

/// The rates `--find-max` tries: doubling from `start` until a trial misses,
/// then halving the interval between the best clean rate and the first
/// missing one `refine` times. `trial` returns true when a rate had no miss.
/// Returns the highest clean rate (0 when even the first missed) and each
/// trial's rate and verdict, in order.
pub fn find_max(
    start: f64,
    max_doublings: u32,
    refine: u32,
    mut trial: impl FnMut(f64) -> Option<bool>,
) -> (f64, Vec<(f64, bool)>) {
    let mut tried = Vec::new();
    let (mut good, mut bad) = (0.0, None);
    let mut rate = start;
    for _ in 0..=max_doublings {
        let Some(ok) = trial(rate) else {
            return (good, tried);
        };
        tried.push((rate, ok));
        if !ok {
            bad = Some(rate);
            break;
        }
        good = rate;
        rate *= 2.0;
    }
    let Some(mut bad) = bad else {
        return (good, tried);
    };
    for _ in 0..refine {
        let mid = if good > 0.0 {
            (good + bad) / 2.0
        } else {
            bad / 2.0
        };
        let Some(ok) = trial(mid) else { break };
        tried.push((mid, ok));
        if ok { good = mid } else { bad = mid }
    }
    (good, tried)
}

/// `--find-max`: most doublings of the rate, then bisection steps.
pub const MAX_DOUBLINGS: u32 = 14;
pub const REFINE_STEPS: u32 = 5;

/// A stream's schedule apart from its rate: the region and request size
/// (`base`), the deadline (one period when not given) and how long it runs.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub base: StreamPlan,
    pub deadline: Option<Duration>,
    pub time: Duration,
    pub seed: u64,
}

impl Schedule {
    /// The plan at `rate` bytes per second: the period one request lasts at
    /// that rate, and enough requests to fill the time.
    pub fn plan_at(&self, rate: f64) -> StreamPlan {
        let period_ns = ((f64::from(self.base.chunk) / rate * 1e9) as u64).max(1);
        StreamPlan {
            period_ns,
            deadline_ns: self.deadline.map_or(period_ns, |d| d.as_nanos() as u64),
            requests: (self.time.as_nanos() as u64).div_ceil(period_ns).max(1),
            ..self.base
        }
    }
}

/// One stream at `rate` bytes per second on `target`; the error message
/// when a transfer failed.
pub fn run_at(
    target: &OpenTarget,
    schedule: &Schedule,
    rate: f64,
) -> (StreamOutcome, Option<String>) {
    let plan = schedule.plan_at(rate);
    let base = schedule.base;
    let mut warnings = Vec::new();
    if target.info.mode == IoMode::Buffered && base.kind == OpKindName::Read {
        // A buffered stream must start from the device, not from pages an
        // earlier trial (or the preparation pass) left in memory.
        crate::workload::runner::cache::evict_region(
            target.fd(),
            base.offset,
            base.span,
            &mut warnings,
        );
    }
    let on = match target.sim() {
        Some(device) => StreamTarget::Sim(device),
        None => StreamTarget::Fd {
            fd: target.fd(),
            align: target.align,
        },
    };
    let gauges = Gauge::many(1, live::wanted());
    let test = crate::result::live::LiveTest::Stream {
        direction: match base.kind {
            OpKindName::Read => crate::vocab::options::StreamDirection::Read,
            OpKindName::Write => crate::vocab::options::StreamDirection::Write,
        },
        rate_mb_per_s: rate / 1e6,
        chunk_bytes: plan.chunk,
    };
    let (mut outcome, error) = live::watch(test, &gauges, || {
        run(on, plan, schedule.seed, interrupt::stop_flag(), &gauges[0])
    });
    outcome.warnings = warnings;
    (
        outcome,
        error.map(|e| crate::engine::io_failure_message(&e)),
    )
}

type Trial<'a> = dyn Fn(f64) -> (StreamOutcome, Option<String>) + 'a;

/// `--find-max` over [`find_max`]: each trial a whole stream, a clean one
/// with no miss and every request done. The first trial is the asked rate,
/// reported as the outcome; a failed transfer or Ctrl-C ends the search.
pub fn search(
    rate: f64,
    trial: impl Fn(f64) -> (StreamOutcome, Option<String>),
) -> (StreamOutcome, Option<FindMaxReport>, Option<String>) {
    let trial: &Trial = &trial;
    let mut trials: Vec<StreamOutcome> = Vec::new();
    let mut error = None;
    let (best, _) = find_max(rate, MAX_DOUBLINGS, REFINE_STEPS, |r| {
        if error.is_some() || interrupt::stop_flag().load(Ordering::Relaxed) {
            return None;
        }
        let (o, e) = trial(r);
        let clean = o.misses == 0 && o.requests_done == o.requests_planned;
        trials.push(o);
        error = e;
        Some(clean && error.is_none())
    });
    let outcome = trials.first().cloned().unwrap_or_else(|| trial(rate).0);
    let report = FindMaxReport {
        max_rate_mb_s: best / 1e6,
        trials,
    };
    (outcome, Some(report), error)
}

#[cfg(test)]
mod tests;
