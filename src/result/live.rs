//! One interval of a measurement as it runs: what `--json-lines` prints
//! while `run`, `profile`, `curve`, `stream` and `sustain` measure, before
//! the whole result on the last line. Intervals are not stored; the result
//! holds the figures of the whole measurement.

use serde::Serialize;
use std::borrow::Cow;

/// The figures of one interval. Times are on the measurement's clock (the
/// simulated card's own for `sim:`), from the start of the measured pass;
/// the warm-up is not reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveInterval {
    /// The test measured, as the progress line names it (borrowed when
    /// the name is fixed, so a live interval is made without allocating).
    pub test: Cow<'static, str>,
    /// 0 for the first interval of the test.
    pub index: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Bytes completed in the interval.
    pub bytes: u64,
    /// Requests completed in the interval.
    pub ops: u64,
    /// MB/s (10^6 B/s) over the interval.
    pub mb_per_s: f64,
    pub iops: f64,
    /// Latency quantiles of the interval's requests, within about 3%;
    /// absent when none completed.
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    /// The longest request that completed in the interval.
    pub max_ns: Option<u64>,
}

impl LiveInterval {
    /// Rates of `bytes` and `ops` over `start_ns..end_ns`.
    pub fn rates(bytes: u64, ops: u64, (start_ns, end_ns): (u64, u64)) -> (f64, f64) {
        let ns = end_ns.saturating_sub(start_ns);
        if ns == 0 {
            return (0.0, 0.0);
        }
        (
            crate::units::mb_per_s(bytes, ns),
            ops as f64 * 1e9 / ns as f64,
        )
    }
}

/// p50 and p99 read from coarse buckets, never above the exact maximum:
/// a bucket's midpoint may pass the longest request in it.
pub fn capped_quantiles(
    (p50, p99): (Option<u64>, Option<u64>),
    max_ns: Option<u64>,
) -> (Option<u64>, Option<u64>) {
    let cap = |q: Option<u64>| match max_ns {
        Some(m) => q.map(|q| q.min(m)),
        None => q,
    };
    (cap(p50), cap(p99))
}
