//! `iocurve sustain`: one long sequential write, with the throughput of every
//! interval kept, to see where a fast cache fills or the device throttles.
//!
//! Short benchmarks measure the cache in front of a flash medium (an SLC
//! region, a DRAM buffer): a camera that records for an hour meets the medium
//! behind it. The writer is an [`OpSource`] driven by the `sync` engine; at
//! each interval boundary it closes a sample into a vector reserved up front
//! and offers a copy to a bounded channel without waiting, so a printer thread
//! can stream JSON lines while the timed thread never formats, locks or
//! allocates. [`crate::analysis::sustain`] finds the drop afterwards.

use crate::engine::buffer::AlignedBuf;
use crate::engine::sync::SyncEngine;
use crate::engine::{Engine, EngineSetup, IoError, MonotonicClock, Op, OpKind, OpSource};
use crate::workload::Pattern;
use serde::{Deserialize, Serialize};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;

/// Interval samples reserved up front (a day at one per second).
const RESERVED_INTERVALS: usize = 86_400;
/// Mark samples reserved up front (a 64 TiB write at 1 GiB marks).
const RESERVED_MARKS: usize = 65_536;

/// The write to run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SustainPlan {
    pub block_size: u32,
    pub offset: u64,
    /// Bytes to write at most (also bounded by the target's end).
    pub bytes: u64,
    /// Time to write at most, ns.
    pub time_ns: Option<u64>,
    /// Length of one throughput interval, ns.
    pub interval_ns: u64,
    /// A throughput figure is also kept every this many bytes.
    pub mark_bytes: u64,
}

/// Throughput over one interval of time.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct IntervalSample {
    pub index: u64,
    /// Since the start of the write, ns.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Bytes written before the interval began.
    pub bytes_before: u64,
    pub bytes: u64,
    pub mb_per_s: f64,
    /// Longest single write in the interval, ns.
    pub max_write_ns: u64,
}

/// Throughput over one stretch of `mark_bytes` bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct MarkSample {
    /// Bytes written when the stretch ended.
    pub bytes_end: u64,
    pub end_ns: u64,
    pub mb_per_s: f64,
}

/// The sequential writer and its running figures.
pub struct SustainSource<'a> {
    plan: SustainPlan,
    stop: &'a AtomicBool,
    live: Option<SyncSender<IntervalSample>>,
    start_ns: Option<u64>,
    issued_bytes: u64,
    written: u64,
    seq: u64,
    open: IntervalSample,
    last_mark: (u64, u64),
    pub intervals: Vec<IntervalSample>,
    pub marks: Vec<MarkSample>,
}

impl<'a> SustainSource<'a> {
    pub fn new(
        plan: SustainPlan,
        stop: &'a AtomicBool,
        live: Option<SyncSender<IntervalSample>>,
    ) -> Self {
        SustainSource {
            plan,
            stop,
            live,
            start_ns: None,
            issued_bytes: 0,
            written: 0,
            seq: 0,
            open: empty_interval(0, 0, 0),
            last_mark: (0, 0),
            intervals: Vec::with_capacity(RESERVED_INTERVALS),
            marks: Vec::with_capacity(RESERVED_MARKS),
        }
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
        if let Some(live) = &self.live {
            // A slow reader loses lines, never stalls the writer.
            let _ = live.try_send(s);
        }
        self.open = empty_interval(s.index + 1, end_ns, self.written);
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
        self.open.bytes += u64::from(op.len);
        self.open.end_ns = t;
        self.open.max_write_ns = self.open.max_write_ns.max(complete_ns - submit_ns);
        if t >= self.open.start_ns + self.plan.interval_ns {
            self.close_interval(t);
        }
        self.record_mark(t);
    }
}

/// The whole write's figures.
pub struct SustainRun {
    pub intervals: Vec<IntervalSample>,
    pub marks: Vec<MarkSample>,
    pub bytes: u64,
    /// Wall time of the write, ns (the final sync included).
    pub elapsed_ns: u64,
    pub error: Option<IoError>,
}

/// Writes with the `sync` engine; `live` receives each interval as it closes.
pub fn run(
    fd: BorrowedFd<'_>,
    align: usize,
    plan: SustainPlan,
    seed: u64,
    stop: &AtomicBool,
    live: Option<SyncSender<IntervalSample>>,
) -> SustainRun {
    if plan.block_size == 0 {
        // The command never plans this; empty writes would never end.
        return SustainRun {
            intervals: Vec::new(),
            marks: Vec::new(),
            bytes: 0,
            elapsed_ns: 0,
            error: Some(IoError {
                kind: OpKind::Write,
                offset: plan.offset,
                len: 0,
                error: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a sustained write needs blocks of at least 1 byte",
                ),
            }),
        };
    }
    // A pool of 8 blocks of random data: incompressible, never the same
    // block twice in a row.
    let bs = plan.block_size as usize;
    let mut pool = AlignedBuf::new(bs * 8, align);
    Pattern::Random.fill(pool.as_mut_slice(), seed);
    let clock = MonotonicClock::new();
    let mut engine = SyncEngine::new(EngineSetup {
        fd,
        block_size: bs,
        queue_depth: 1,
        align,
        pool,
        clock,
    });
    let mut source = SustainSource::new(plan, stop, live);
    let mut error = engine.run(&mut source).err();
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
    let elapsed_ns = engine.now_ns();
    source.finish();
    SustainRun {
        bytes: source.written(),
        intervals: std::mem::take(&mut source.intervals),
        marks: std::mem::take(&mut source.marks),
        elapsed_ns,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> SustainPlan {
        SustainPlan {
            block_size: 1 << 20,
            offset: 0,
            bytes: 64 << 20,
            time_ns: None,
            interval_ns: 100_000_000,
            mark_bytes: 16 << 20,
        }
    }

    /// Drives the writer on a fake clock: 10 ms per MiB for the first 32
    /// MiB, then 40 ms per MiB.
    #[test]
    fn intervals_and_marks_follow_the_fake_device() {
        let stop = AtomicBool::new(false);
        let (tx, rx) = std::sync::mpsc::sync_channel(1024);
        let mut src = SustainSource::new(plan(), &stop, Some(tx));
        let mut now = 0u64;
        while let Some(op) = src.next(now) {
            let cost = if op.offset < (32 << 20) { 10 } else { 40 };
            let start = now;
            now += cost * 1_000_000;
            src.completed(&op, start, now, &[]);
        }
        src.finish();
        assert_eq!(src.written(), 64 << 20);
        let total: u64 = src.intervals.iter().map(|i| i.bytes).sum();
        assert_eq!(total, 64 << 20);
        assert_eq!(rx.try_iter().count(), src.intervals.len());
        assert_eq!(src.marks.len(), 4);
        assert!(src.marks[0].mb_per_s > 3.0 * src.marks[3].mb_per_s);
        let series: Vec<_> = src
            .intervals
            .iter()
            .map(|i| crate::analysis::sustain::Interval {
                bytes_before: i.bytes_before,
                start_ns: i.start_ns,
                mb_per_s: i.mb_per_s,
            })
            .collect();
        let drop = crate::analysis::sustain::find_drop(&series).expect("a drop");
        // The interval that straddles the change holds both speeds.
        assert!(
            (30 << 20..=34 << 20).contains(&drop.bytes_before_drop),
            "{drop:?}"
        );
    }

    #[test]
    fn time_limit_ends_the_write() {
        let stop = AtomicBool::new(false);
        let mut p = plan();
        p.time_ns = Some(50_000_000);
        let mut src = SustainSource::new(p, &stop, None);
        let mut now = 0;
        let mut n = 0;
        while let Some(op) = src.next(now) {
            now += 10_000_000;
            src.completed(&op, now - 10_000_000, now, &[]);
            n += 1;
        }
        assert_eq!(n, 5);
    }
}
