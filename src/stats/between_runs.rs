//! How far two runs of an unchanged device differ: a two-level model of
//! throughput, within-run spread plus between-run spread.
//!
//! Repetitions inside one run share its host load, page cache and thermal
//! state, so their spread says nothing about what changes between runs; a
//! bootstrap over them alone (see [`super::bootstrap`]) gives an interval
//! that is far too narrow for two runs on different occasions. The model
//! (variance components, Searle, Casella & McCulloch, "Variance
//! Components", 1992, ch. 3) is, on the log scale where a ratio is a
//! difference,
//!
//! ```text
//! ln(mean MB/s of run i) = μ + u_i + e_i,   u_i ~ (0, τ²) between runs,
//!                                           e_i ~ (0, v_i) within run i
//! ```
//!
//! so the log ratio of two runs has variance v_a + v_b + 2τ². The bootstrap
//! interval covers the v parts; [`widen`] adds the 2τ² part in quadrature
//! to each side of it. τ² comes from the device's earlier runs of the same
//! test when there are at least [`MIN_HISTORY`] of them, by DerSimonian
//! and Laird's moment estimator ("Meta-analysis in clinical trials",
//! Controlled Clinical Trials 7, 1986): Q = Σ w_i (y_i − ȳ_w)², w_i = 1/v_i,
//! τ² = max(0, (Q − (k − 1)) / (Σw − Σw²/Σw)). Because τ² from k runs is
//! itself uncertain, the between part is scaled by Student's t with k − 1
//! degrees of freedom instead of the normal quantile, as Hartung and Knapp
//! do for random-effects means (Statistics in Medicine 20, 2001).
//!
//! Few runs give DerSimonian–Laird a Q with few degrees of freedom, and
//! its τ² is truncated at zero as often as not: 8 unchanged runs of one
//! loop device (medians 61.8–75.7 MB/s) got "±0% from 6 earlier runs" and
//! 6 of 28 pairs were called faster by 13–18%. So τ² is never below what
//! the runs' own means show: the sample variance of their log means less
//! their mean within-run variance (the part the bootstrap interval
//! already covers; counting it again in τ² widened a 150 ms loop device's
//! intervals by half again and hid real steps), so that τ² plus a run's
//! own part is at least the spread the stored means have; and τ is never
//! below [`SD_MIN`]. The Student quantile with k − 1 degrees of freedom
//! then makes the between part a prediction for two new runs, the
//! small-sample inflation a spread from a handful of runs needs.
//!
//! One earlier run's mean is itself as noisy as the later one's: on a
//! virtual machine whose runs of one loop device spread by 8%, no interval
//! over a single pair could both keep false alarms under 5% and see a 30%
//! step nine times in ten (with σ known, ±1.96·√2·σ is ±22%, and the step
//! clears it in 86% of pairs). When the device has like runs older than
//! the later one and the earlier run agrees with them (within their 95%
//! prediction interval), the earlier side is their pooled mean instead
//! ([`pooled`]), as a process-control chart judges a new sample against
//! the established level: the later run's log mean minus the pool's has
//! variance σ²(1 + 1/n) rather than 2σ², with σ the spread of the pool's
//! means and Student's t with n − 1 degrees of freedom. Runs that do not
//! agree leave the pair to stand alone: a device that changed before the
//! earlier run is not averaged with what it was.
//!
//! Without history, τ is a floor, [`SD_QUIET`], set from the population
//! test in `tests/alone/compare_noise.rs` (pairs of runs of one unchanged
//! file and loop device on a quiet host). A run that shared its device or
//! CPUs gets no widened interval at all: its figure may be its company's
//! by any factor, and `analysis::compare` says "cannot tell" instead of an
//! interval so wide that no gate could fire.

use serde::Serialize;

/// Earlier runs of the same test needed to estimate the between-run
/// spread (with two, Q has one degree of freedom and τ² is mostly noise).
pub const MIN_HISTORY: usize = 3;

/// The between-run standard deviation of ln(mean MB/s) assumed for a run
/// on a quiet host, without history: ±15%, the spread of back-to-back runs
/// of one file on an otherwise busy two-core machine with no competing
/// I/O on the device.
pub const SD_QUIET: f64 = 0.15;

/// The least between-run standard deviation an estimate from history
/// gives: runs that agree to the last digit still differ by a few percent
/// on another day.
pub const SD_MIN: f64 = 0.02;

/// Where the between-run spread of a verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "basis")]
pub enum NoiseBasis {
    /// Estimated from the device's earlier stored runs of the same test.
    History {
        /// Earlier runs the estimate rests on.
        runs: usize,
    },
    /// No estimate (fewer than [`MIN_HISTORY`] earlier runs of the test):
    /// the default floor for runs on a quiet host.
    AssumedQuiet,
    /// Both runs are of simulated cards, timed on a virtual clock no host
    /// load reaches: a rerun gives the same figures, so nothing is added.
    Simulated,
    /// The earlier side is the pooled mean of like runs: the earlier run
    /// and the device's runs before the later one that agree with it.
    Pooled {
        /// Runs in the pool, the earlier run included.
        runs: usize,
    },
}

/// The between-run part of a verdict's interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BetweenRuns {
    /// Standard deviation of ln(mean MB/s) between runs (0.15 ≈ ±15%),
    /// for each side.
    pub sd: f64,
    /// The quantile the between-run part is scaled by (1.96, or Student's
    /// t with k − 1 degrees of freedom for an estimate from k runs).
    pub quantile: f64,
    /// Where the spread comes from.
    #[serde(flatten)]
    pub basis: NoiseBasis,
}

impl BetweenRuns {
    /// Two simulated cards: no noise between runs.
    pub fn simulated() -> BetweenRuns {
        BetweenRuns {
            sd: 0.0,
            quantile: Z975,
            basis: NoiseBasis::Simulated,
        }
    }

    /// The half-width the between-run part adds on the log scale.
    pub fn log_half_width(&self) -> f64 {
        self.quantile * self.sd * std::f64::consts::SQRT_2
    }
}

/// ln(mean) of a run's repetitions and its within-run variance by the
/// delta method, s² / (n · mean²); `None` with fewer than two positive
/// finite values.
pub fn log_mean(reps: &[f64]) -> Option<(f64, f64)> {
    if reps.len() < 2 || !reps.iter().all(|v| v.is_finite() && *v > 0.0) {
        return None;
    }
    let n = reps.len() as f64;
    let mean = reps.iter().sum::<f64>() / n;
    let var = reps.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean.ln(), var / (n * mean * mean)))
}

/// The smallest within-run variance a weight uses: identical repetitions
/// would otherwise weigh infinitely (1e-6 is a 0.1% standard error).
const MIN_WITHIN_VAR: f64 = 1e-6;

/// DerSimonian–Laird τ² of the log means `pts` (each with its within-run
/// variance): Q against the weighted mean, less its expectation.
fn dersimonian_laird(pts: &[(f64, f64)]) -> f64 {
    let k = pts.len() as f64;
    let w: Vec<f64> = pts
        .iter()
        .map(|(_, v)| 1.0 / v.max(MIN_WITHIN_VAR))
        .collect();
    let sw: f64 = w.iter().sum();
    let sw2: f64 = w.iter().map(|x| x * x).sum();
    let ybar = pts.iter().zip(&w).map(|((y, _), w)| w * y).sum::<f64>() / sw;
    let q: f64 = pts
        .iter()
        .zip(&w)
        .map(|((y, _), w)| w * (y - ybar).powi(2))
        .sum();
    let c = sw - sw2 / sw;
    match c > 0.0 {
        true => ((q - (k - 1.0)) / c).max(0.0),
        false => 0.0,
    }
}

/// The sample variance of the log means (k − 1 in the denominator) less
/// their mean within-run variance: the between part of the spread the
/// runs' means show (negative when their repetitions explain it all).
fn spread_of_means_between(pts: &[(f64, f64)]) -> f64 {
    let k = pts.len() as f64;
    let mean = pts.iter().map(|(y, _)| y).sum::<f64>() / k;
    let total = pts.iter().map(|(y, _)| (y - mean).powi(2)).sum::<f64>() / (k - 1.0);
    let within = pts.iter().map(|(_, v)| v).sum::<f64>() / k;
    total - within
}

/// τ (standard deviation, log scale) of earlier runs, each given by its
/// repetitions: the larger of DerSimonian–Laird's estimate and the between
/// part of the spread of the runs' log means, and at least [`SD_MIN`];
/// `None` with fewer than [`MIN_HISTORY`] usable runs.
pub fn estimate(runs: &[Vec<f64>]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = runs.iter().filter_map(|r| log_mean(r)).collect();
    if pts.len() < MIN_HISTORY {
        return None;
    }
    let tau2 = dersimonian_laird(&pts).max(spread_of_means_between(&pts));
    Some(tau2.sqrt().max(SD_MIN))
}

/// The earlier side of a comparison as the pooled mean of like runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// Mean of the runs' ln(mean MB/s).
    pub log_level: f64,
    /// Standard deviation of one run's ln(mean MB/s) about it, at least
    /// [`SD_MIN`].
    pub sd: f64,
    /// Mean within-run variance of the runs' log means (the part of `sd²`
    /// a run's own repetitions show).
    pub within: f64,
    /// Runs in the pool.
    pub runs: usize,
}

impl Pooled {
    /// The pool with its spread at least `sd`: the spread of all the
    /// device's like runs, later ones included, so that a device whose
    /// speed wanders over a series (a virtual disk did, by 10% over a
    /// dozen runs) is not judged by the older runs' tighter spread alone.
    pub fn spread_at_least(self, sd: Option<f64>) -> Pooled {
        Pooled {
            sd: self.sd.max(sd.unwrap_or(0.0)),
            ..self
        }
    }

    /// The 95% half-width, on the log scale, of a later run (its log mean
    /// and within-run variance `(y, v)`) against the pool: Student's t with
    /// n − 1 degrees of freedom times √(σ²/n + σ_later²), where a later
    /// run noisier within than the pool's runs counts its own part.
    pub fn log_half_width(&self, later_within: f64) -> f64 {
        let n = self.runs as f64;
        let var = self.sd * self.sd;
        let between = (var - self.within).max(SD_MIN * SD_MIN);
        let later = var.max(between + later_within);
        t975(self.runs - 1) * (var / n + later).sqrt()
    }

    /// As the between-run part of a verdict, for its evidence and words.
    pub fn as_between(&self) -> BetweenRuns {
        BetweenRuns {
            sd: self.sd,
            quantile: t975(self.runs - 1),
            basis: NoiseBasis::Pooled { runs: self.runs },
        }
    }
}

/// The sample standard deviation of the log means of `runs` (each by its
/// repetitions), their within-run part included; `None` with fewer than
/// [`MIN_HISTORY`] usable runs.
pub fn spread_of_runs(runs: &[Vec<f64>]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = runs.iter().filter_map(|r| log_mean(r)).collect();
    (pts.len() >= MIN_HISTORY).then(|| mean_and_sd(&pts).1)
}

/// Mean and sample standard deviation of log means.
fn mean_and_sd(pts: &[(f64, f64)]) -> (f64, f64) {
    let k = pts.len() as f64;
    let mean = pts.iter().map(|(y, _)| y).sum::<f64>() / k;
    let var = pts.iter().map(|(y, _)| (y - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (mean, var.sqrt())
}

/// `before` (repetitions) pooled with `earlier` (like runs older than the
/// later run, by their repetitions) when there are at least
/// [`MIN_HISTORY`] of those and `before`'s log mean lies within their 95%
/// prediction interval; `None` otherwise, and the pair stands alone.
pub fn pooled(before: &[f64], earlier: &[Vec<f64>]) -> Option<Pooled> {
    let first = log_mean(before)?;
    let mut pts: Vec<(f64, f64)> = earlier.iter().filter_map(|r| log_mean(r)).collect();
    if pts.len() < MIN_HISTORY {
        return None;
    }
    let (mean, sd) = mean_and_sd(&pts);
    let k = pts.len() as f64;
    let reach = t975(pts.len() - 1) * sd.max(SD_MIN) * (1.0 + 1.0 / k).sqrt();
    if (first.0 - mean).abs() > reach {
        return None;
    }
    pts.push(first);
    let (log_level, sd) = mean_and_sd(&pts);
    let within = pts.iter().map(|(_, v)| v).sum::<f64>() / pts.len() as f64;
    Some(Pooled {
        log_level,
        sd: sd.max(SD_MIN),
        within,
        runs: pts.len(),
    })
}

/// Student's t quantile for a two-sided 95% interval with `df` degrees of
/// freedom (tabulated; 1.96 beyond 30).
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => T[d - 1],
        _ => 1.96,
    }
}

/// The normal quantile of a two-sided 95% interval.
pub const Z975: f64 = 1.959_964;

/// The between-run part of a comparison: from `history` (earlier runs of
/// the test, by their repetitions) when it has enough runs, else the
/// quiet floor.
pub fn between(history: &[Vec<f64>]) -> BetweenRuns {
    let usable = history.iter().filter(|r| log_mean(r).is_some()).count();
    match estimate(history) {
        Some(tau) => BetweenRuns {
            sd: tau,
            quantile: t975(usable - 1),
            basis: NoiseBasis::History { runs: usable },
        },
        None => BetweenRuns {
            sd: SD_QUIET,
            quantile: Z975,
            basis: NoiseBasis::AssumedQuiet,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::bootstrap::{Interval, widen};

    #[test]
    fn the_log_mean_and_its_within_run_variance() {
        let (y, v) = log_mean(&[9.0, 10.0, 11.0]).unwrap();
        assert!((y - 10f64.ln()).abs() < 1e-12);
        // s² = 1, n = 3, mean 10: 1 / 300.
        assert!((v - 1.0 / 300.0).abs() < 1e-12);
        assert_eq!(log_mean(&[10.0]), None);
        assert_eq!(log_mean(&[10.0, 0.0]), None);
    }

    fn sd_of_logs(means: &[f64]) -> f64 {
        let logs: Vec<f64> = means.iter().map(|m| m.ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let var = logs.iter().map(|y| (y - mean).powi(2)).sum::<f64>();
        (var / (logs.len() - 1) as f64).sqrt()
    }

    /// Runs whose means spread by far more than their repetitions do:
    /// τ close to the spread of the log means.
    #[test]
    fn the_spread_between_runs_is_found() {
        let means = [50.0, 60.0, 45.0, 70.0, 55.0];
        let runs: Vec<Vec<f64>> = means.iter().map(|m| vec![m * 0.99, *m, m * 1.01]).collect();
        let tau = estimate(&runs).unwrap();
        let sd = sd_of_logs(&means);
        assert!((tau - sd).abs() < 0.05 * sd, "{tau} vs {sd}");
        assert_eq!(estimate(&runs[..2]), None, "two runs are too few");
    }

    /// The issue's case: 8 unchanged runs of one loop device, medians
    /// 61.8–75.7 MB/s, 3 repetitions each with a wide within-run spread.
    /// DerSimonian–Laird alone gave τ = 0 ("±0% from 6 earlier runs");
    /// the estimate is never zero, and the pair at the extremes, judged
    /// with its own repetitions, is no change.
    #[test]
    fn a_handful_of_runs_never_gives_zero() {
        let means = [61.8, 75.7, 66.0, 70.2, 64.5, 72.9];
        let runs: Vec<Vec<f64>> = means.iter().map(|m| vec![m * 0.8, *m, m * 1.2]).collect();
        let pts: Vec<(f64, f64)> = runs.iter().filter_map(|r| log_mean(r)).collect();
        assert_eq!(dersimonian_laird(&pts), 0.0, "the old estimate");
        assert_eq!(
            estimate(&runs),
            Some(SD_MIN),
            "the repetitions explain it all"
        );
        let alike = vec![vec![10.0, 10.0], vec![10.0, 10.0], vec![10.0, 10.0]];
        assert_eq!(estimate(&alike), Some(SD_MIN));
        let (lo, hi) = (&runs[0], &runs[1]);
        let v = crate::stats::bootstrap::judge_runs(lo, hi, 0.05, between(&runs[2..])).unwrap();
        assert_eq!(v.change, crate::stats::bootstrap::Change::NoChange, "{v:?}");
    }

    proptest::proptest! {
        /// Whatever the runs, τ² plus their mean within-run part is at
        /// least the variance their log means show: the estimate never
        /// says the runs agree better than they did.
        #[test]
        fn never_below_the_spread_of_the_means(
            runs in proptest::collection::vec(
                proptest::collection::vec(1.0f64..1000.0, 2..5), 3..12)
        ) {
            let pts: Vec<(f64, f64)> = runs.iter().filter_map(|r| log_mean(r)).collect();
            let k = pts.len() as f64;
            let mean = pts.iter().map(|(y, _)| y).sum::<f64>() / k;
            let total = pts.iter().map(|(y, _)| (y - mean).powi(2)).sum::<f64>() / (k - 1.0);
            let within = pts.iter().map(|(_, v)| v).sum::<f64>() / k;
            let tau = estimate(&runs).unwrap();
            proptest::prop_assert!(tau >= SD_MIN);
            proptest::prop_assert!(tau * tau + within >= total * (1.0 - 1e-9), "{tau} {within} {total}");
        }
    }

    /// A pool's earlier run that agrees with the older runs joins them; one
    /// far from them (the device changed before it) does not.
    #[test]
    fn an_earlier_run_joins_the_pool_only_when_it_agrees() {
        let older: Vec<Vec<f64>> = [100.0, 104.0, 97.0, 101.0, 99.0]
            .iter()
            .map(|m| vec![m * 0.97, *m, m * 1.03])
            .collect();
        let p = pooled(&[98.0, 101.0, 103.0], &older).unwrap();
        assert_eq!(p.runs, 6);
        assert!((p.log_level.exp() - 100.0).abs() < 2.0, "{p:?}");
        assert_eq!(
            pooled(&[60.0, 61.0, 62.0], &older),
            None,
            "a changed device"
        );
        assert_eq!(
            pooled(&[98.0, 101.0], &older[..2]),
            None,
            "too few older runs"
        );
        // A later run 30% slower is outside the pool's interval; one 3%
        // slower is inside it.
        let (y, v) = log_mean(&[70.0, 71.0, 69.0]).unwrap();
        assert!(y - p.log_level < -p.log_half_width(v), "{p:?}");
        let (y, v) = log_mean(&[97.0, 98.0, 96.0]).unwrap();
        assert!(y - p.log_level > -p.log_half_width(v));
        assert_eq!(p.as_between().basis, NoiseBasis::Pooled { runs: 6 });
    }

    proptest::proptest! {
        /// The interval against a pool is never narrower than the pool's
        /// own spread of one run about its mean allows.
        #[test]
        fn the_pool_interval_covers_a_runs_spread(
            runs in proptest::collection::vec(
                proptest::collection::vec(1.0f64..1000.0, 2..5), 4..12),
            later_within in 0.0f64..0.5,
        ) {
            if let Some(p) = pooled(&runs[0], &runs[1..]) {
                let h = p.log_half_width(later_within);
                proptest::prop_assert!(h >= 1.96 * p.sd, "{h} {p:?}");
            }
        }
    }

    #[test]
    fn the_basis_says_where_the_spread_came_from() {
        let b = between(&[]);
        assert_eq!(
            (b.basis, b.sd, b.quantile),
            (NoiseBasis::AssumedQuiet, SD_QUIET, Z975)
        );
        let hist: Vec<Vec<f64>> = (0..4)
            .map(|i| vec![50.0 + i as f64, 51.0 + i as f64])
            .collect();
        let b = between(&hist);
        assert_eq!(b.basis, NoiseBasis::History { runs: 4 });
        assert_eq!(b.quantile, t975(3));
        assert!(b.sd < SD_QUIET && b.sd >= SD_MIN);
    }

    /// 3 vs 3 repetitions 45% apart with a tight bootstrap interval stay a
    /// slowdown once two quiet runs' worth of noise is added; swapping the
    /// sides inverts the widened interval.
    #[test]
    fn widening_is_symmetric_and_keeps_a_large_slowdown() {
        let boot = Interval {
            estimate: 0.55,
            low: 0.46,
            high: 0.66,
            level: 0.95,
        };
        let quiet = between(&[]);
        let w = widen(boot, &quiet);
        assert!(w.low < boot.low && w.high > boot.high, "{w:?}");
        assert!(w.high < 0.95, "both quiet: still slower, {w:?}");
        let swapped = Interval {
            estimate: 1.0 / 0.55,
            low: 1.0 / 0.66,
            high: 1.0 / 0.46,
            level: 0.95,
        };
        let s = widen(swapped, &quiet);
        assert!((s.low - 1.0 / w.high).abs() < 1e-12 && (s.high - 1.0 / w.low).abs() < 1e-12);
    }
}
