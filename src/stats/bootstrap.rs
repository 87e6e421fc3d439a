//! Did a device change? A bootstrap confidence interval on the ratio of
//! throughput (after / before) between two sets of repetitions, and a
//! verdict that ignores changes smaller than a noise threshold.
//!
//! Why a ratio: throughput is positive, so a slowdown cannot exceed 100%.
//! An interval on the *difference* of means, divided by the earlier mean,
//! can (it printed "slower by 97% (95% CI -108% to -84%)"); an interval on
//! the ratio of two positive means stays above zero, so the percentage
//! change, ratio − 1, stays above −100% by construction.
//!
//! Method (Efron's percentile bootstrap, Efron & Tibshirani, "An
//! Introduction to the Bootstrap", 1993, ch. 13): draw each sample anew
//! with replacement, same size, many times; the spread of the ratio of the
//! resampled centres (means, or medians) stands in for the sampling
//! distribution of the ratio, and its 2.5th and 97.5th percentiles bound
//! the 95% interval. It assumes nothing about the shape of the noise,
//! which for storage is skewed (a garbage-collection pause makes one
//! repetition slow, never fast). The percentiles are taken on the
//! logarithm of the ratios (the percentile interval is invariant under a
//! monotone transform, so this changes nothing but rounding) because on
//! that scale swapping before and after is an exact negation: the interval
//! of before/after is the reciprocal of the interval of after/before.
//!
//! Swap symmetry also needs the random draws not to depend on which side
//! is called "before". Each round draws two sequences of uniform numbers,
//! S1 and S2, and uses them both ways: after resampled with S1 over before
//! resampled with S2, and after with S2 over before with S1. Both are
//! independent resamples of the two sides (S1 and S2 are independent), so
//! each round adds two valid bootstrap ratios, and exchanging the sides
//! exchanges the two pairings, giving exactly the reciprocal ratios. The
//! draws index positions and never look at values, so scaling both samples
//! by one factor (MB/s to MiB/s) leaves the interval unchanged.
//!
//! With few repetitions the interval is optimistic (the bootstrap cannot
//! see variation the few repetitions did not show), so the verdict also
//! demands that the whole interval clear a noise threshold (default 5%)
//! before it calls a change. Fewer than [`MIN_REPETITIONS`] on a side give
//! no verdict: one repetition resamples to itself, so its interval would
//! be a point that claims a certainty nothing measured.
//!
//! That threshold does not cover what changes *between* runs (host load,
//! page cache, other I/O on the device): [`judge_runs`] widens the
//! interval by the run-to-run noise of [`super::between_runs`] before it
//! judges, and `compare` uses it; [`judge`] stays the verdict on
//! repetitions alone.
//!
//! Pure: the random stream comes from a seed, so a comparison printed twice
//! reads the same.

use serde::Serialize;

/// A point estimate and its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Interval {
    /// The point estimate.
    pub estimate: f64,
    /// Lower end of the confidence interval.
    pub low: f64,
    /// Upper end of the confidence interval.
    pub high: f64,
    /// Confidence level, e.g. 0.95.
    pub level: f64,
}

/// Rounds of resampling in the verdict (each gives two ratios).
pub const RESAMPLES: usize = 5_000;

/// The seed of the verdict's resampling: fixed, so output is reproducible.
pub const SEED: u64 = 0x10c0_54e5;

/// Repetitions a side needs for a verdict. With one, the bootstrap has no
/// variation to resample and the interval collapses to a point; with two,
/// the interval spans what the two show, which the noise threshold then
/// guards.
pub const MIN_REPETITIONS: usize = 2;

/// The confidence level of the verdict.
pub const LEVEL: f64 = 0.95;

/// Which centre of the repetitions the ratio compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Centre {
    /// Smooth under resampling even with three repetitions.
    Mean,
    /// Robust to one outlying repetition, but with few repetitions its
    /// resamples take only a handful of values, so the percentiles are
    /// coarse.
    Median,
}

impl Centre {
    /// The centre of `x` (non-empty).
    fn of(self, x: &[f64]) -> f64 {
        match self {
            Centre::Mean => mean(x),
            Centre::Median => super::median(x).unwrap_or(f64::NAN),
        }
    }
}

/// Arithmetic mean of a non-empty slice.
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// `x` resampled with replacement, positions chosen by the uniforms `u`
/// (at least as many as `x` has values).
fn resample(x: &[f64], u: &[f64], into: &mut Vec<f64>) {
    into.clear();
    let n = x.len();
    into.extend(
        u[..n]
            .iter()
            .map(|&u| x[((u * n as f64) as usize).min(n - 1)]),
    );
}

/// True when every value is finite and above zero (throughput measured).
fn all_positive(x: &[f64]) -> bool {
    !x.is_empty() && x.iter().all(|v| v.is_finite() && *v > 0.0)
}

/// The natural logarithms of the bootstrap ratios `centre(after*) /
/// centre(before*)`, two per round (see the module doc), sorted.
fn log_ratios(before: &[f64], after: &[f64], centre: Centre, rounds: usize, seed: u64) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let width = before.len().max(after.len());
    let (mut s1, mut s2) = (vec![0.0; width], vec![0.0; width]);
    let mut buf = Vec::with_capacity(width);
    let mut logs = Vec::with_capacity(rounds * 2);
    let log_centre = |x: &[f64], u: &[f64], buf: &mut Vec<f64>| {
        resample(x, u, buf);
        centre.of(buf).ln()
    };
    for _ in 0..rounds {
        s1.iter_mut().for_each(|u| *u = rng.f64());
        s2.iter_mut().for_each(|u| *u = rng.f64());
        let (a1, b2) = (
            log_centre(after, &s1, &mut buf),
            log_centre(before, &s2, &mut buf),
        );
        let (a2, b1) = (
            log_centre(after, &s2, &mut buf),
            log_centre(before, &s1, &mut buf),
        );
        logs.push(a1 - b2);
        logs.push(a2 - b1);
    }
    logs.sort_by(f64::total_cmp);
    logs
}

/// Percentile bootstrap interval of `centre(after) / centre(before)`.
/// `None` unless both samples are non-empty with every value finite and
/// positive, `rounds` > 0 and `level` in (0, 1).
pub fn ratio(
    before: &[f64],
    after: &[f64],
    centre: Centre,
    rounds: usize,
    level: f64,
    seed: u64,
) -> Option<Interval> {
    if !all_positive(before) || !all_positive(after) || rounds == 0 {
        return None;
    }
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let logs = log_ratios(before, after, centre, rounds, seed);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        estimate: centre.of(after) / centre.of(before),
        low: super::quantile_of_sorted(&logs, tail)?.exp(),
        high: super::quantile_of_sorted(&logs, 1.0 - tail)?.exp(),
        level,
    })
}

/// What happened between two sets of repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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

/// A change and its evidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Verdict {
    /// `faster`, `slower` or `no_change`.
    pub change: Change,
    /// After over before, of the mean MB/s (0.8 = 20% slower): the
    /// interval the verdict rests on (widened by `between_runs` when
    /// present).
    pub ratio: Interval,
    /// The bootstrap interval of the repetitions alone, before the
    /// between-run noise widened it; absent when nothing widened it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_runs: Option<Interval>,
    /// The run-to-run noise added to the repetitions' own (see
    /// [`super::between_runs`]); absent for a verdict on repetitions alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_runs: Option<super::between_runs::BetweenRuns>,
    /// The noise threshold used, as a share.
    pub threshold: f64,
    /// Repetitions the verdict rests on.
    pub before_repetitions: usize,
    /// Repetitions of the later run the verdict rests on.
    pub after_repetitions: usize,
}

impl Verdict {
    /// The change as a share, ratio − 1 (−0.2 = 20% slower); never at or
    /// below −1.
    pub fn percent_change(&self) -> Interval {
        Interval {
            estimate: self.ratio.estimate - 1.0,
            low: self.ratio.low - 1.0,
            high: self.ratio.high - 1.0,
            level: self.ratio.level,
        }
    }
}

/// Why two sets of repetitions get no verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum NoVerdict {
    /// A side has fewer than [`MIN_REPETITIONS`] complete repetitions.
    TooFewRepetitions {
        /// Complete repetitions of the earlier run.
        before: usize,
        /// Complete repetitions of the later run.
        after: usize,
    },
    /// A repetition moved nothing (zero or non-finite MB/s).
    NotPositive,
}

/// Judges `after` against `before` (MB/s of repetitions; higher is
/// faster): slower when the whole ratio interval lies below
/// 1 − threshold, faster when it lies above 1 + threshold.
pub fn judge(before: &[f64], after: &[f64], threshold: f64) -> Result<Verdict, NoVerdict> {
    if before.len() < MIN_REPETITIONS || after.len() < MIN_REPETITIONS {
        return Err(NoVerdict::TooFewRepetitions {
            before: before.len(),
            after: after.len(),
        });
    }
    let ratio =
        ratio(before, after, Centre::Mean, RESAMPLES, LEVEL, SEED).ok_or(NoVerdict::NotPositive)?;
    Ok(verdict_on(ratio, threshold, before.len(), after.len()))
}

/// [`judge`] for two runs made on different occasions: the repetitions'
/// interval widened by the run-to-run noise `between` (see
/// [`super::between_runs`]), and the verdict drawn from the wider one.
pub fn judge_runs(
    before: &[f64],
    after: &[f64],
    threshold: f64,
    between: super::between_runs::BetweenRuns,
) -> Result<Verdict, NoVerdict> {
    let within = judge(before, after, threshold)?.ratio;
    let wide = widen(within, &between);
    let mut v = verdict_on(wide, threshold, before.len(), after.len());
    v.within_runs = Some(within);
    v.between_runs = Some(between);
    Ok(v)
}

/// [`judge`] against a pool of like runs (see
/// [`super::between_runs::pooled`]): after's mean over the pool's, with
/// the pool's interval; the bootstrap interval of the two runs alone is
/// kept as the evidence.
pub fn judge_pooled(
    before: &[f64],
    after: &[f64],
    threshold: f64,
    pool: super::between_runs::Pooled,
) -> Result<Verdict, NoVerdict> {
    let within = judge(before, after, threshold)?.ratio;
    let (y, v) = super::between_runs::log_mean(after).ok_or(NoVerdict::NotPositive)?;
    let e = y - pool.log_level;
    let h = pool.log_half_width(v);
    let ratio = Interval {
        estimate: e.exp(),
        low: (e - h).exp(),
        high: (e + h).exp(),
        level: LEVEL,
    };
    let mut verdict = verdict_on(ratio, threshold, before.len(), after.len());
    verdict.within_runs = Some(within);
    verdict.between_runs = Some(pool.as_between());
    Ok(verdict)
}

/// The verdict of an interval: slower when it lies wholly below
/// 1 − threshold, faster when wholly above 1 + threshold.
fn verdict_on(ratio: Interval, threshold: f64, before: usize, after: usize) -> Verdict {
    let change = if ratio.low > 1.0 + threshold {
        Change::Faster
    } else if ratio.high < 1.0 - threshold {
        Change::Slower
    } else {
        Change::NoChange
    };
    Verdict {
        change,
        ratio,
        within_runs: None,
        between_runs: None,
        threshold,
        before_repetitions: before,
        after_repetitions: after,
    }
}

/// `ratio` (a within-run interval of after/before) widened by the
/// between-run part: each side's log distance from the estimate combined
/// in quadrature with `b`'s half-width. Symmetric under swapping the
/// sides and unchanged by scaling both, as the bootstrap interval is.
pub fn widen(ratio: Interval, b: &super::between_runs::BetweenRuns) -> Interval {
    let h = b.log_half_width();
    let e = ratio.estimate.ln();
    let below = (e - ratio.low.ln()).max(0.0);
    let above = (ratio.high.ln() - e).max(0.0);
    Interval {
        estimate: ratio.estimate,
        low: (e - below.hypot(h)).exp(),
        high: (e + above.hypot(h)).exp(),
        level: ratio.level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_card_that_lost_a_fifth_is_slower() {
        let v = judge(&[17.1, 16.8, 17.3], &[13.6, 13.9, 13.4], 0.05).unwrap();
        assert_eq!(v.change, Change::Slower);
        assert!(v.ratio.high < 0.85, "{v:?}");
        assert_eq!((v.before_repetitions, v.after_repetitions), (3, 3));
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
        assert_eq!(
            judge(&[40.0], &[88.0, 90.0], 0.05),
            Err(NoVerdict::TooFewRepetitions {
                before: 1,
                after: 2
            })
        );
    }

    /// The case of the issue: a 97% drop. The old difference interval
    /// reached −108%; the ratio interval stays above zero.
    #[test]
    fn a_near_total_loss_stays_above_minus_100_percent() {
        let v = judge(&[300.0, 420.0, 150.0], &[9.0, 11.0, 10.5], 0.05).unwrap();
        assert_eq!(v.change, Change::Slower);
        assert!(v.percent_change().low > -1.0, "{v:?}");
        assert!(v.ratio.low > 0.0 && v.ratio.high < 0.1, "{v:?}");
    }

    #[test]
    fn a_zero_repetition_is_no_verdict() {
        assert_eq!(
            judge(&[0.0, 10.0], &[10.0, 10.0], 0.05),
            Err(NoVerdict::NotPositive)
        );
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(0.1f64..5000.0, 1..12)
    }

    fn centre() -> impl Strategy<Value = Centre> {
        prop_oneof![Just(Centre::Mean), Just(Centre::Median)]
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
    }

    proptest! {
        #[test]
        fn interval_is_ordered_and_the_change_above_minus_100(a in sample(), b in sample(), c in centre(), seed in any::<u64>()) {
            let i = ratio(&a, &b, c, 300, 0.95, seed).unwrap();
            prop_assert!(i.low <= i.high, "{:?}", i);
            prop_assert!(i.low > 0.0 && i.low - 1.0 > -1.0, "{:?}", i);
            // Within what any resample could give: extreme over extreme.
            let min = |x: &[f64]| x.iter().copied().fold(f64::INFINITY, f64::min);
            let max = |x: &[f64]| x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            prop_assert!(i.low >= min(&b) / max(&a) * (1.0 - 1e-9));
            prop_assert!(i.high <= max(&b) / min(&a) * (1.0 + 1e-9));
        }

        #[test]
        fn swapping_the_sides_inverts_the_interval(a in sample(), b in sample(), c in centre(), seed in any::<u64>()) {
            let i = ratio(&a, &b, c, 300, 0.95, seed).unwrap();
            let j = ratio(&b, &a, c, 300, 0.95, seed).unwrap();
            prop_assert!(close(j.low, 1.0 / i.high), "{:?} {:?}", i, j);
            prop_assert!(close(j.high, 1.0 / i.low), "{:?} {:?}", i, j);
            prop_assert!(close(j.estimate, 1.0 / i.estimate));
        }

        #[test]
        fn scaling_both_sides_changes_nothing(a in sample(), b in sample(), k in 0.001f64..1000.0, c in centre(), seed in any::<u64>()) {
            let i = ratio(&a, &b, c, 300, 0.9, seed).unwrap();
            let scale = |x: &[f64]| x.iter().map(|v| v * k).collect::<Vec<_>>();
            let j = ratio(&scale(&a), &scale(&b), c, 300, 0.9, seed).unwrap();
            prop_assert!(close(i.low, j.low) && close(i.high, j.high), "{:?} {:?}", i, j);
            prop_assert!(close(i.estimate, j.estimate));
        }

        #[test]
        fn same_seed_same_interval(a in sample(), b in sample(), c in centre(), seed in any::<u64>()) {
            prop_assert_eq!(ratio(&a, &b, c, 200, 0.95, seed), ratio(&a, &b, c, 200, 0.95, seed));
        }

        #[test]
        fn constant_samples_give_a_point(x in 0.1f64..1000.0, y in 0.1f64..1000.0, n in 1usize..8, c in centre()) {
            let i = ratio(&vec![x; n], &vec![y; n], c, 100, 0.95, 1).unwrap();
            prop_assert!(close(i.low, y / x) && close(i.high, y / x), "{:?}", i);
        }

        #[test]
        fn identical_samples_are_never_a_change(a in prop::collection::vec(1f64..1000.0, 2..10)) {
            prop_assert_eq!(judge(&a, &a, 0.05).unwrap().change, Change::NoChange);
        }

        #[test]
        fn judge_never_panics(a in prop::collection::vec(any::<f64>(), 0..6), b in prop::collection::vec(any::<f64>(), 0..6), t in any::<f64>()) {
            let _ = judge(&a, &b, t);
        }
    }
}
