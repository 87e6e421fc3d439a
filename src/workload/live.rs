//! `--json-lines` while a measurement runs: a watcher thread cuts the jobs'
//! [`Gauge`]s into intervals of about a second and prints one line per
//! interval (bytes, MB/s, IOPS, p50/p99/max latency), so a program can
//! follow a long run. The jobs only publish to their gauges; the cutting,
//! the quantiles and the formatting happen on the watcher's thread, off
//! the timed path.
//!
//! An interval ends at the last completion the watcher saw, on the
//! measurement's own clock (the simulated card's for `sim:`), so its rate
//! is what the device did, not how often the watcher woke. When nothing
//! completed since the last cut, no line is printed: the next interval
//! then spans the stall, with its low rate and its long maximum.

use crate::live::json_lines;
use crate::result::live::{LiveInterval, LiveTest, capped_quantiles};
use crate::stats::live_histogram::{BUCKETS, quantile_of_counts};
use crate::workload::gauge::{Gauge, total_bytes};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long an interval lasts on the wall clock the watcher sleeps on.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// How often the watcher looks whether the measurement has ended, so the
/// last line follows the end at once.
const POLL: Duration = Duration::from_millis(20);

thread_local! {
    /// Set while a pass that is not a test runs (a preparation read):
    /// its intervals are not the device's figures for any test.
    static UNREPORTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True when gauges should keep latency for intervals (`--json-lines` on
/// a command that prints them, outside [`unreported`]).
pub fn wanted() -> bool {
    json_lines::intervals_on() && !UNREPORTED.with(std::cell::Cell::get)
}

/// Runs `work` (on this thread) without printing intervals for it.
pub fn unreported<T>(work: impl FnOnce() -> T) -> T {
    let before = UNREPORTED.with(|u| u.replace(true));
    let out = work();
    UNREPORTED.with(|u| u.set(before));
    out
}

/// Runs `work` while a watcher prints the intervals of `gauges` as JSON
/// lines labelled `test`, the last one as soon as `work` returns. Without
/// latency in the gauges (intervals not asked), just runs `work`.
pub fn watch<T>(test: LiveTest, gauges: &[Gauge], work: impl FnOnce() -> T) -> T {
    if gauges.iter().all(|g| g.latency().is_none()) {
        return work();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut cutter = IntervalCutter::new(test, gauges);
            let mut last_cut = Instant::now();
            loop {
                let ended = done.load(Ordering::Acquire);
                if !gauges.iter().any(Gauge::started) {
                    // The warm-up, or the jobs starting: the first interval
                    // begins with the measured pass.
                    last_cut = Instant::now();
                }
                if ended || last_cut.elapsed() >= INTERVAL {
                    if let Some(interval) = cutter.cut() {
                        json_lines::print_line(&json_lines::live_line(&interval));
                    }
                    last_cut = Instant::now();
                }
                if ended {
                    break;
                }
                std::thread::sleep(POLL);
            }
        });
        let out = work();
        done.store(true, Ordering::Release);
        out
    })
}

/// The state between two cuts of one measurement's intervals.
pub struct IntervalCutter<'g> {
    test: LiveTest,
    gauges: &'g [Gauge],
    index: u64,
    /// Bucket counts and bytes at the previous cut.
    counts: Vec<u64>,
    bytes: u64,
    /// Where the previous interval ended (None before the first).
    end_ns: Option<u64>,
    /// Reused for the counts of the current cut.
    scratch: Vec<u64>,
}

impl<'g> IntervalCutter<'g> {
    pub fn new(test: LiveTest, gauges: &'g [Gauge]) -> Self {
        IntervalCutter {
            test,
            gauges,
            index: 0,
            counts: vec![0; BUCKETS],
            bytes: 0,
            end_ns: None,
            scratch: vec![0; BUCKETS],
        }
    }

    /// The interval since the previous cut, or `None` when no request
    /// completed in it.
    pub fn cut(&mut self) -> Option<LiveInterval> {
        self.scratch.fill(0);
        for h in self.gauges.iter().filter_map(Gauge::latency) {
            h.add_counts_to(&mut self.scratch);
        }
        let now: u64 = self.scratch.iter().sum();
        let before: u64 = self.counts.iter().sum();
        let ops = now.saturating_sub(before);
        if ops == 0 {
            return None;
        }
        // This interval's own distribution: now minus the previous cut.
        for (d, b) in self.counts.iter_mut().zip(&self.scratch) {
            *d = b.saturating_sub(*d);
        }
        let (p50, p99) = (
            quantile_of_counts(&self.counts, 0.5),
            quantile_of_counts(&self.counts, 0.99),
        );
        std::mem::swap(&mut self.counts, &mut self.scratch);
        let interval = self.interval(ops, p50, p99);
        self.index += 1;
        Some(interval)
    }

    fn interval(&mut self, ops: u64, p50: Option<u64>, p99: Option<u64>) -> LiveInterval {
        let bytes_now = total_bytes(self.gauges);
        let bytes = bytes_now.saturating_sub(self.bytes);
        self.bytes = bytes_now;
        // Jobs share the pass's start; a job not started yet reads 0.
        let origin = self.gauges.iter().map(|g| g.times().0).max().unwrap_or(0);
        let last = self.gauges.iter().map(|g| g.times().1).max().unwrap_or(0);
        let start = self.end_ns.unwrap_or(origin);
        let end = last.max(start);
        self.end_ns = Some(end);
        let max_ns = self
            .gauges
            .iter()
            .filter_map(Gauge::latency)
            .map(|h| h.take_max())
            .max()
            .filter(|&m| m > 0);
        let (p50, p99) = capped_quantiles((p50, p99), max_ns);
        let (mb_per_s, iops) = LiveInterval::rates(bytes, ops, (start, end));
        LiveInterval {
            test: self.test,
            index: self.index,
            start_ns: start.saturating_sub(origin),
            end_ns: end.saturating_sub(origin),
            bytes,
            ops,
            mb_per_s,
            iops,
            p50_ns: p50,
            p99_ns: p99,
            max_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cut_reports_only_its_own_requests() {
        let gauges = Gauge::many(2, true);
        for g in &gauges {
            g.start(1_000);
        }
        let mut cutter = IntervalCutter::new(
            LiveTest::Workload {
                rw: crate::vocab::Rw::RandRead,
                block_size_bytes: 4096,
                queue_depth: 1,
                threads: 1,
            },
            &gauges,
        );
        assert!(cutter.cut().is_none(), "nothing completed yet");
        // First second: 1,000 requests of 4 KiB at 100 µs on each job.
        for (i, g) in gauges.iter().enumerate() {
            for n in 1..=1000u64 {
                g.completed(n * 4096, 1_000 + n * 1_000_000, 100_000 + i as u64);
            }
        }
        let first = cutter.cut().unwrap();
        assert_eq!(
            (first.index, first.ops, first.bytes),
            (0, 2000, 2000 * 4096)
        );
        assert_eq!((first.start_ns, first.end_ns), (0, 1_000_000_000));
        assert!((first.iops - 2000.0).abs() < 1e-6);
        assert!((first.mb_per_s - 8.192).abs() < 1e-9);
        let p50 = first.p50_ns.unwrap();
        assert!((97_000..103_000).contains(&p50), "{p50}");
        assert_eq!(first.max_ns, Some(100_001));
        // Second second: 10 slow requests on one job only.
        for n in 1..=10u64 {
            gauges[0].completed(
                (1000 + n) * 4096,
                1_000_001_000 + n * 100_000_000,
                90_000_000,
            );
        }
        let second = cutter.cut().unwrap();
        assert_eq!((second.index, second.ops, second.bytes), (1, 10, 10 * 4096));
        assert_eq!(second.start_ns, 1_000_000_000);
        assert_eq!(second.end_ns, 2_000_000_000);
        let p99 = second.p99_ns.unwrap();
        assert!((87_000_000..93_000_000).contains(&p99), "{p99}");
        assert_eq!(second.max_ns, Some(90_000_000));
        assert!(cutter.cut().is_none(), "a stall prints nothing");
    }
}
