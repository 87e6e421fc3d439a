//! A coarse latency histogram that a measuring thread records into while
//! another thread reads it, for the per-interval figures of `--json-lines`.
//!
//! The exact histogram ([`super::LatencyHistogram`]) belongs to its job
//! until the pass ends; reading it meanwhile would need a lock on the timed
//! path. This one keeps counts in atomics instead, in log-linear buckets
//! (16 per power of two, so a bucket is at most 1/16 of its value wide and
//! its midpoint is within about 3% of any value in it). The reader takes a
//! snapshot every interval and subtracts the previous one: the difference
//! is the interval's own distribution, from which p50 and p99 are read.
//!
//! One thread writes each histogram, so a count is bumped with a plain
//! load and store, not a locked read-modify-write: the timed path pays a
//! few instructions, never a bus lock.

use std::sync::atomic::{AtomicU64, Ordering};

/// Buckets per power of two, as a shift: 2^4 = 16.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Largest latency kept apart: 2^42 ns, about 73 minutes; longer ones
/// share the last bucket.
const TOP_BIT: u32 = 42;
/// Number of buckets covering 0 to 2^42 ns.
pub const BUCKETS: usize = ((TOP_BIT - SUB_BITS + 1) as usize) * SUB as usize;

/// The bucket a latency of `ns` falls in: values below 16 ns one each,
/// then 16 buckets per power of two.
pub fn bucket_of(ns: u64) -> usize {
    let ns = ns.min((1 << TOP_BIT) - 1);
    if ns < SUB {
        return ns as usize;
    }
    let top = 63 - ns.leading_zeros();
    let sub = (ns >> (top - SUB_BITS)) & (SUB - 1);
    ((top - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The smallest latency in bucket `i`, and the first of the next.
pub fn bucket_bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, i + 1);
    }
    let top = i / SUB + u64::from(SUB_BITS) - 1;
    let sub = i % SUB;
    let width = 1u64 << (top - u64::from(SUB_BITS));
    let low = (SUB + sub) * width;
    (low, low + width)
}

/// The middle of bucket `i`: the figure reported for a quantile in it.
fn bucket_mid(i: usize) -> u64 {
    let (low, high) = bucket_bounds(i);
    low + (high - low) / 2
}

/// Counts per bucket, written by one thread, read by any.
pub struct LiveHistogram {
    counts: Box<[AtomicU64]>,
    /// Longest latency since the reader last took it.
    max_ns: AtomicU64,
}

impl Default for LiveHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LiveHistogram {
    pub fn new() -> Self {
        LiveHistogram {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            max_ns: AtomicU64::new(0),
        }
    }

    /// Records one latency. Only the owning thread may call this: the count
    /// is not bumped atomically (see the module doc).
    #[inline]
    pub fn record(&self, ns: u64) {
        let count = &self.counts[bucket_of(ns)];
        count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        if ns > self.max_ns.load(Ordering::Relaxed) {
            self.max_ns.store(ns, Ordering::Relaxed);
        }
    }

    /// Adds every bucket's count to `into` (one slot per bucket).
    pub fn add_counts_to(&self, into: &mut [u64]) {
        for (sum, count) in into.iter_mut().zip(self.counts.iter()) {
            *sum += count.load(Ordering::Relaxed);
        }
    }

    /// The longest latency since the last call, and starts a new one. A
    /// latency recorded while this runs may land in either interval: the
    /// two are adjacent, and which side of the boundary it completed on is
    /// not knowable without a lock anyway.
    pub fn take_max(&self) -> u64 {
        self.max_ns.swap(0, Ordering::Relaxed)
    }
}

/// The quantile `q` (0 to 1) of a distribution given as bucket counts, as
/// the midpoint of the bucket holding it; `None` when the counts are empty.
pub fn quantile_of_counts(counts: &[u64], q: f64) -> Option<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    // The rank of the quantile, 1-based: the smallest value with at least
    // q of the counts at or below it.
    let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return Some(bucket_mid(i));
        }
    }
    counts.iter().rposition(|&c| c > 0).map(bucket_mid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_tile_the_range_without_gaps() {
        for i in 0..BUCKETS - 1 {
            assert_eq!(bucket_bounds(i).1, bucket_bounds(i + 1).0, "bucket {i}");
        }
        assert_eq!(bucket_bounds(0).0, 0);
        assert_eq!(bucket_bounds(BUCKETS - 1).1, 1 << TOP_BIT);
    }

    proptest! {
        #[test]
        fn every_latency_lands_in_the_bucket_that_holds_it(ns in 0u64..(1 << TOP_BIT)) {
            let (low, high) = bucket_bounds(bucket_of(ns));
            prop_assert!(low <= ns && ns < high);
            // The midpoint reported stands within 1/32 of the value.
            let mid = bucket_mid(bucket_of(ns)) as f64;
            prop_assert!((mid - ns as f64).abs() <= ns as f64 / 32.0 + 1.0);
        }

        #[test]
        fn any_latency_is_recorded_without_panicking(ns in any::<u64>()) {
            let h = LiveHistogram::new();
            h.record(ns);
            let mut counts = vec![0; BUCKETS];
            h.add_counts_to(&mut counts);
            prop_assert_eq!(counts.iter().sum::<u64>(), 1);
            prop_assert_eq!(h.take_max(), ns);
            prop_assert_eq!(h.take_max(), 0);
        }
    }

    #[test]
    fn quantiles_of_a_known_spread() {
        let h = LiveHistogram::new();
        // 98 requests of 100 µs, two of 50 ms: p50 is 100 µs, p99 50 ms.
        for _ in 0..98 {
            h.record(100_000);
        }
        h.record(50_000_000);
        h.record(50_000_000);
        let mut counts = vec![0; BUCKETS];
        h.add_counts_to(&mut counts);
        let p50 = quantile_of_counts(&counts, 0.5).unwrap();
        let p99 = quantile_of_counts(&counts, 0.99).unwrap();
        assert!((p50 as f64 / 100_000.0 - 1.0).abs() < 0.04, "{p50}");
        assert!((p99 as f64 / 50_000_000.0 - 1.0).abs() < 0.04, "{p99}");
        assert_eq!(quantile_of_counts(&[0; 4], 0.5), None);
    }
}
