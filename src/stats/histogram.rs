//! Per-I/O completion latency with at most 1% relative error.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Largest latency kept exactly: one hour in nanoseconds. Longer values are
/// clamped to it (and such a run has worse problems than precision).
const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;

/// Two significant decimal digits: every value is kept to within 1%.
const SIGNIFICANT_DIGITS: u8 = 2;

/// A latency histogram in nanoseconds. Recording never allocates, so it may
/// sit on the timed path.
#[derive(Clone)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS)
            .expect("constant histogram bounds are valid");
        Self { inner }
    }

    /// Records one latency. Allocation-free: the bucket array is sized for
    /// the whole trackable range up front.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let clamped = ns.clamp(1, MAX_TRACKABLE_NS);
        // Cannot fail: the value is clamped into the trackable range.
        let _ = self.inner.record(clamped);
    }

    /// Adds every count of `other` (histograms of parallel jobs merge exactly).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.inner
            .add(&other.inner)
            .expect("histograms with identical bounds always merge");
    }

    /// Every non-empty bucket as (a value inside it, count): what another
    /// process needs to merge this histogram exactly (an MPI rank sends
    /// these to rank 0). Off the timed path: it allocates.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.inner
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// Adds counts given as [`LatencyHistogram::buckets`] gave them: each
    /// value falls in the bucket it came from, so merging another
    /// process's buckets equals merging its histogram.
    pub fn add_buckets(&mut self, buckets: &[(u64, u64)]) {
        for &(value, count) in buckets {
            // Cannot fail: the value is clamped into the trackable range.
            let _ = self.inner.record_n(value.clamp(1, MAX_TRACKABLE_NS), count);
        }
    }

    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    /// The summary, or `None` when nothing was recorded.
    pub fn summary(&self) -> Option<LatencySummary> {
        if self.inner.is_empty() {
            return None;
        }
        let h = &self.inner;
        Some(LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            stddev_ns: h.stdev(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p99_9_ns: h.value_at_quantile(0.999),
            p99_99_ns: h.value_at_quantile(0.9999),
            max_ns: h.max(),
        })
    }
}

/// Latency figures of one set of I/Os, in nanoseconds, each within 1% of
/// the exact value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    /// I/Os measured.
    pub count: u64,
    /// Shortest completion latency, ns.
    pub min_ns: u64,
    /// Mean completion latency, ns.
    pub mean_ns: f64,
    /// Standard deviation of the completion latency, ns.
    pub stddev_ns: f64,
    /// Median completion latency, ns.
    pub p50_ns: u64,
    /// 90th percentile completion latency, ns.
    pub p90_ns: u64,
    /// 99th percentile completion latency, ns.
    pub p99_ns: u64,
    /// 99.9th percentile completion latency, ns.
    pub p99_9_ns: u64,
    /// 99.99th percentile completion latency, ns.
    pub p99_99_ns: u64,
    /// Longest completion latency, ns.
    pub max_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    proptest! {
        #[test]
        fn quantiles_within_one_percent(values in prop::collection::vec(1u64..10_000_000_000, 1..400)) {
            let mut h = LatencyHistogram::new();
            for &v in &values { h.record(v); }
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let s = h.summary().unwrap();
            for (q, got) in [(0.5, s.p50_ns), (0.9, s.p90_ns), (0.99, s.p99_ns)] {
                let exact = exact_quantile(&sorted, q) as f64;
                prop_assert!((got as f64 - exact).abs() <= exact * 0.01 + 1.0,
                    "q{} got {} exact {}", q, got, exact);
            }
            prop_assert!((s.max_ns as f64 - *sorted.last().unwrap() as f64).abs() <= *sorted.last().unwrap() as f64 * 0.01 + 1.0);
            prop_assert_eq!(s.count, values.len() as u64);
        }

        #[test]
        fn merge_equals_recording_everything(a in prop::collection::vec(1u64..1_000_000_000, 0..100),
                                             b in prop::collection::vec(1u64..1_000_000_000, 0..100)) {
            let (mut ha, mut hb, mut all) = (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
            for &v in &a { ha.record(v); all.record(v); }
            for &v in &b { hb.record(v); all.record(v); }
            ha.merge(&hb);
            prop_assert_eq!(ha.summary(), all.summary());
        }

        #[test]
        fn buckets_sent_elsewhere_merge_exactly(parts in prop::collection::vec(
            prop::collection::vec(1u64..MAX_TRACKABLE_NS, 0..60), 1..6)) {
            // Each part is one rank's histogram, sent as buckets; the merge
            // must equal one histogram of every request.
            let mut all = LatencyHistogram::new();
            let mut merged = LatencyHistogram::new();
            for part in &parts {
                let mut rank = LatencyHistogram::new();
                for &v in part { rank.record(v); all.record(v); }
                merged.add_buckets(&rank.buckets());
            }
            prop_assert_eq!(merged.count(), all.count());
            prop_assert_eq!(merged.summary(), all.summary());
            prop_assert_eq!(merged.buckets(), all.buckets());
        }
    }

    #[test]
    fn empty_has_no_summary() {
        assert!(LatencyHistogram::new().summary().is_none());
    }

    #[test]
    fn zero_and_huge_values_are_clamped_not_lost() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.count(), 2);
    }
}
