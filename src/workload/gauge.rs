//! What a job publishes while it runs, for whoever watches it: the progress
//! bar (bytes) and `--json-lines` (bytes, latency, time of the last
//! completion). The job writes; a watcher thread reads. Everything here is
//! a relaxed atomic on the job's own cache line, so jobs never slow each
//! other down, and the watcher never takes anything from the timed path
//! but a few stores.

use crate::stats::live_histogram::LiveHistogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One job's published figures.
#[repr(align(64))]
#[derive(Default)]
pub struct Gauge {
    /// Counted bytes completed.
    bytes: AtomicU64,
    /// The start of the measured pass, on the measurement's clock.
    start_ns: AtomicU64,
    /// Set once the measured pass has started (a warm-up does not count).
    started: AtomicBool,
    /// When the last request completed, on the same clock.
    last_ns: AtomicU64,
    /// Latency per interval, kept only when intervals are reported.
    latency: Option<LiveHistogram>,
}

impl Gauge {
    /// A gauge for the progress bar only.
    pub fn bytes_only() -> Gauge {
        Gauge::default()
    }

    /// A gauge that also keeps latency for per-interval figures.
    pub fn with_latency() -> Gauge {
        Gauge {
            latency: Some(LiveHistogram::new()),
            ..Gauge::default()
        }
    }

    /// `n` gauges, with latency when `latency`.
    pub fn many(n: usize, latency: bool) -> Vec<Gauge> {
        (0..n)
            .map(|_| match latency {
                true => Gauge::with_latency(),
                false => Gauge::bytes_only(),
            })
            .collect()
    }

    /// The pass started at `start_ns` (the job's thread, before its I/O).
    pub fn start(&self, start_ns: u64) {
        self.start_ns.store(start_ns, Ordering::Relaxed);
        self.last_ns.store(start_ns, Ordering::Relaxed);
        self.started.store(true, Ordering::Release);
    }

    /// True once the measured pass has started.
    pub fn started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// A request completed at `complete_ns` after `latency_ns`, and the job
    /// has now completed `total_bytes`. Called by the job's thread only.
    #[inline]
    pub fn completed(&self, total_bytes: u64, complete_ns: u64, latency_ns: u64) {
        if let Some(h) = &self.latency {
            h.record(latency_ns);
            self.last_ns.store(complete_ns, Ordering::Relaxed);
        }
        self.bytes.store(total_bytes, Ordering::Relaxed);
    }

    /// Bytes completed so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The pass's start and the last completion, both on the
    /// measurement's clock.
    pub fn times(&self) -> (u64, u64) {
        (
            self.start_ns.load(Ordering::Relaxed),
            self.last_ns.load(Ordering::Relaxed),
        )
    }

    /// The latency histogram, when kept.
    pub fn latency(&self) -> Option<&LiveHistogram> {
        self.latency.as_ref()
    }
}

/// Bytes completed by all of `gauges`.
pub fn total_bytes(gauges: &[Gauge]) -> u64 {
    gauges.iter().map(Gauge::bytes).sum()
}
