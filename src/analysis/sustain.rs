//! Where a long write slows down: the bytes written before a fast cache
//! (SLC cache, DRAM buffer, host memory) filled or the device throttled, and
//! the speeds before and after.
//!
//! The method is a single change point in the mean (the least-squares step
//! fit, as in Hinkley's "Inference about the change-point in a sequence of
//! random variables", Biometrika 1970): every split of the per-interval
//! throughput series is tried, and the one whose two segment means leave the
//! smallest sum of squared residuals wins. The split counts as a drop only
//! when the median after it is below [`DROP_RATIO`] of the median before it,
//! so noise around a flat curve is not reported as a cache.

use crate::stats::median;
use serde::{Deserialize, Serialize};

/// A drop is reported when the later speed is below this share of the
/// earlier one.
pub const DROP_RATIO: f64 = 0.7;
/// Fewest intervals on each side of a split.
pub const MIN_SEGMENT: usize = 2;

/// One interval of a sustained write, as the analysis needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Bytes written before the interval began.
    pub bytes_before: u64,
    /// Time before the interval began, ns since the start.
    pub start_ns: u64,
    pub mb_per_s: f64,
}

/// The drop found in a series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpeedDrop {
    /// Index of the first slow interval.
    pub at_interval: usize,
    /// Bytes written before the first slow interval.
    pub bytes_before_drop: u64,
    /// Seconds from the start to the first slow interval.
    pub seconds_before_drop: f64,
    /// Median MB/s before and after.
    pub mb_per_s_before: f64,
    pub mb_per_s_after: f64,
    /// After over before.
    pub ratio: f64,
}

/// The best single split of the series, if it is a drop.
pub fn find_drop(series: &[Interval]) -> Option<SpeedDrop> {
    let k = best_split(series)?;
    let speeds: Vec<f64> = series.iter().map(|i| i.mb_per_s).collect();
    let before = median(&speeds[..k]).unwrap_or(0.0);
    let after = median(&speeds[k..]).unwrap_or(0.0);
    if before <= 0.0 || after >= before * DROP_RATIO {
        return None;
    }
    Some(SpeedDrop {
        at_interval: k,
        bytes_before_drop: series[k].bytes_before,
        seconds_before_drop: series[k].start_ns as f64 / 1e9,
        mb_per_s_before: before,
        mb_per_s_after: after,
        ratio: after / before,
    })
}

/// The split index k (left = [..k]) minimising the two-segment sum of
/// squared residuals, over prefix sums in O(n).
fn best_split(series: &[Interval]) -> Option<usize> {
    let n = series.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    let (mut sum, mut sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, x) in series.iter().enumerate() {
        sum[i + 1] = sum[i] + x.mb_per_s;
        sq[i + 1] = sq[i] + x.mb_per_s * x.mb_per_s;
    }
    let sse = |a: usize, b: usize| {
        let len = (b - a) as f64;
        let s = sum[b] - sum[a];
        (sq[b] - sq[a]) - s * s / len
    };
    (MIN_SEGMENT..=n - MIN_SEGMENT).min_by(|&a, &b| {
        let (ca, cb) = (sse(0, a) + sse(a, n), sse(0, b) + sse(b, n));
        ca.total_cmp(&cb)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn series(speeds: &[f64]) -> Vec<Interval> {
        let mut bytes = 0;
        speeds
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let it = Interval {
                    bytes_before: bytes,
                    start_ns: i as u64 * 1_000_000_000,
                    mb_per_s: s,
                };
                bytes += (s * 1e6) as u64;
                it
            })
            .collect()
    }

    #[test]
    fn finds_a_cache_filling() {
        let mut speeds = vec![400.0, 410.0, 395.0, 405.0, 400.0];
        speeds.extend([80.0, 85.0, 78.0, 82.0, 80.0, 81.0]);
        let d = find_drop(&series(&speeds)).expect("a drop");
        assert_eq!(d.at_interval, 5);
        assert_eq!(
            d.bytes_before_drop,
            (400.0e6 + 410e6 + 395e6 + 405e6 + 400e6) as u64
        );
        assert!((d.mb_per_s_before - 400.0).abs() < 1.0);
        assert!((d.mb_per_s_after - 80.5).abs() < 1.0);
    }

    #[test]
    fn flat_noise_is_no_drop() {
        let speeds = [100.0, 90.0, 110.0, 95.0, 105.0, 100.0, 92.0, 108.0];
        assert_eq!(find_drop(&series(&speeds)), None);
    }

    #[test]
    fn a_rise_is_no_drop() {
        let speeds = [50.0, 50.0, 50.0, 200.0, 200.0, 200.0];
        assert_eq!(find_drop(&series(&speeds)), None);
    }

    #[test]
    fn too_short_a_series_says_nothing() {
        assert_eq!(find_drop(&series(&[100.0, 10.0, 10.0])), None);
    }

    proptest! {
        #[test]
        fn a_clear_step_is_found_where_it_is(
            k in 2usize..20, extra in 2usize..20, high in 50.0f64..1000.0, share in 0.05f64..0.5
        ) {
            let mut speeds = vec![high; k];
            speeds.extend(vec![high * share; extra]);
            let d = find_drop(&series(&speeds)).expect("a drop");
            prop_assert_eq!(d.at_interval, k);
            prop_assert!((d.ratio - share).abs() < 1e-9);
        }
    }
}
