//! Did a device change? A bootstrap confidence interval on the difference
//! of mean throughput between two sets of repetitions, and a verdict that
//! ignores differences smaller than a noise threshold.
//!
//! Method (Efron's percentile bootstrap, Efron & Tibshirani, "An
//! Introduction to the Bootstrap", 1993, ch. 13): draw each sample anew
//! with replacement, same size, many times; the spread of the difference of
//! the resampled means stands in for the sampling distribution of the
//! difference, and its 2.5th and 97.5th percentiles bound the 95% interval.
//! It assumes nothing about the shape of the noise, which for storage is
//! skewed (a garbage-collection pause makes one repetition slow, never
//! fast). With three repetitions a side the interval is optimistic (the
//! bootstrap cannot see variation the few repetitions did not show), so
//! the verdict also demands that the whole interval clear a noise threshold
//! (default 5%) before it calls a change: noise is not called a change,
//! and a card that lost a fifth of its speed is.
//!
//! Pure: the random stream comes from a seed, so a comparison printed twice
//! reads the same.

use serde::Serialize;

/// A point estimate and its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Confidence level, e.g. 0.95.
    pub level: f64,
}

/// Resamples drawn by [`diff_of_means`] in the verdict.
pub const RESAMPLES: usize = 10_000;

/// The seed of the verdict's resampling: fixed, so output is reproducible.
pub const SEED: u64 = 0x10c0_54e5;

/// Arithmetic mean of a non-empty slice.
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// The mean of one resample of `x` drawn with `rng`.
fn resample_mean(x: &[f64], rng: &mut fastrand::Rng) -> f64 {
    let sum: f64 = (0..x.len()).map(|_| x[rng.usize(..x.len())]).sum();
    sum / x.len() as f64
}

/// Bootstrap interval of `mean(after) - mean(before)`. `None` unless both
/// samples are non-empty, finite, and `resamples` > 0.
pub fn diff_of_means(
    before: &[f64],
    after: &[f64],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Option<Interval> {
    let finite = |x: &[f64]| !x.is_empty() && x.iter().all(|v| v.is_finite());
    if !finite(before) || !finite(after) || resamples == 0 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut diffs: Vec<f64> = (0..resamples)
        .map(|_| {
            let b = resample_mean(before, &mut rng);
            resample_mean(after, &mut rng) - b
        })
        .collect();
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        estimate: mean(after) - mean(before),
        low: super::quantile_of_sorted(&diffs, tail)?,
        high: super::quantile_of_sorted(&diffs, 1.0 - tail)?,
        level,
    })
}

/// What happened between two sets of repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Faster,
    Slower,
    NoChange,
}

impl Change {
    pub fn word(self) -> &'static str {
        match self {
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::NoChange => "no change",
        }
    }
}

/// A change and its evidence, relative to the earlier mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Verdict {
    pub change: Change,
    /// The difference as a share of the earlier mean (0.1 = 10% faster).
    pub relative: Interval,
    /// The noise threshold used, as a share.
    pub threshold: f64,
}

/// Judges `after` against `before` (MB/s of repetitions; higher is
/// faster). `None` with fewer than two repetitions on either side or a
/// zero earlier mean.
pub fn judge(before: &[f64], after: &[f64], threshold: f64) -> Option<Verdict> {
    if before.len() < 2 || after.len() < 2 {
        return None;
    }
    let base = mean(before);
    if base <= 0.0 {
        return None;
    }
    let abs = diff_of_means(before, after, RESAMPLES, 0.95, SEED)?;
    let relative = Interval {
        estimate: abs.estimate / base,
        low: abs.low / base,
        high: abs.high / base,
        level: abs.level,
    };
    let change = if relative.low > threshold {
        Change::Faster
    } else if relative.high < -threshold {
        Change::Slower
    } else {
        Change::NoChange
    };
    Some(Verdict {
        change,
        relative,
        threshold,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_card_that_lost_a_fifth_is_slower() {
        let v = judge(&[17.1, 16.8, 17.3], &[13.6, 13.9, 13.4], 0.05).unwrap();
        assert_eq!(v.change, Change::Slower);
        assert!(v.relative.high < -0.15, "{v:?}");
    }

    #[test]
    fn noise_is_no_change() {
        let v = judge(&[17.1, 16.2, 17.9], &[16.9, 17.6, 16.4], 0.05).unwrap();
        assert_eq!(v.change, Change::NoChange);
        let v = judge(&[100.0, 101.0, 99.0], &[103.0, 104.0, 102.0], 0.05).unwrap();
        assert_eq!(v.change, Change::NoChange, "3% is inside the threshold");
    }

    #[test]
    fn a_clear_gain_is_faster_and_one_repetition_gets_no_verdict() {
        let v = judge(&[40.0, 41.0, 39.5], &[88.0, 90.0, 87.0], 0.05).unwrap();
        assert_eq!(v.change, Change::Faster);
        assert!(judge(&[40.0], &[88.0, 90.0], 0.05).is_none());
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(0.1f64..5000.0, 1..12)
    }

    proptest! {
        #[test]
        fn interval_is_ordered_and_within_the_possible(a in sample(), b in sample(), seed in any::<u64>()) {
            let i = diff_of_means(&a, &b, 500, 0.95, seed).unwrap();
            let lo = b.iter().copied().fold(f64::INFINITY, f64::min) - a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let hi = b.iter().copied().fold(f64::NEG_INFINITY, f64::max) - a.iter().copied().fold(f64::INFINITY, f64::min);
            prop_assert!(i.low <= i.high);
            prop_assert!(lo - 1e-9 <= i.low && i.high <= hi + 1e-9);
        }

        #[test]
        fn shifting_the_later_sample_shifts_the_interval(a in sample(), b in sample(), c in -100f64..100.0, seed in any::<u64>()) {
            let i = diff_of_means(&a, &b, 300, 0.9, seed).unwrap();
            let shifted: Vec<f64> = b.iter().map(|v| v + c).collect();
            let j = diff_of_means(&a, &shifted, 300, 0.9, seed).unwrap();
            prop_assert!((j.low - i.low - c).abs() < 1e-6);
            prop_assert!((j.high - i.high - c).abs() < 1e-6);
            prop_assert!((j.estimate - i.estimate - c).abs() < 1e-6);
        }

        #[test]
        fn same_seed_same_interval(a in sample(), b in sample(), seed in any::<u64>()) {
            prop_assert_eq!(diff_of_means(&a, &b, 200, 0.95, seed), diff_of_means(&a, &b, 200, 0.95, seed));
        }

        #[test]
        fn constant_samples_give_a_point(x in 0.1f64..1000.0, y in 0.1f64..1000.0, n in 1usize..8) {
            let i = diff_of_means(&vec![x; n], &vec![y; n], 100, 0.95, 1).unwrap();
            prop_assert!((i.low - (y - x)).abs() < 1e-9 && (i.high - (y - x)).abs() < 1e-9);
        }

        #[test]
        fn identical_samples_are_never_a_change(a in prop::collection::vec(1f64..1000.0, 2..10)) {
            prop_assert_eq!(judge(&a, &a, 0.05).unwrap().change, Change::NoChange);
        }
    }
}
