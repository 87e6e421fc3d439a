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
//! 6 of 28 pairs were called faster by 13–18%. So τ is never below what
//! the runs' own means show: the sample standard deviation of their log
//! means (which holds their within-run part too, and is the spread a new
//! run's mean has about them), and never below [`SD_MIN`]. The Student
//! quantile with k − 1 degrees of freedom then makes the widened interval
//! a prediction interval for the log ratio of two new runs, which is the
//! small-sample inflation a spread from a handful of runs needs.
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

/// The sample variance of the log means (k − 1 in the denominator).
fn spread_of_means(pts: &[(f64, f64)]) -> f64 {
    let k = pts.len() as f64;
    let mean = pts.iter().map(|(y, _)| y).sum::<f64>() / k;
    pts.iter().map(|(y, _)| (y - mean).powi(2)).sum::<f64>() / (k - 1.0)
}

/// τ (standard deviation, log scale) of earlier runs, each given by its
/// repetitions: the larger of DerSimonian–Laird's estimate and the spread
/// of the runs' log means, and at least [`SD_MIN`]; `None` with fewer
/// than [`MIN_HISTORY`] usable runs.
pub fn estimate(runs: &[Vec<f64>]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = runs.iter().filter_map(|r| log_mean(r)).collect();
    if pts.len() < MIN_HISTORY {
        return None;
    }
    let tau2 = dersimonian_laird(&pts).max(spread_of_means(&pts));
    Some(tau2.sqrt().max(SD_MIN))
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
    /// the estimate now keeps at least the spread of the runs' means.
    #[test]
    fn a_handful_of_runs_never_gives_zero() {
        let means = [61.8, 75.7, 66.0, 70.2, 64.5, 72.9];
        let runs: Vec<Vec<f64>> = means.iter().map(|m| vec![m * 0.8, *m, m * 1.2]).collect();
        let pts: Vec<(f64, f64)> = runs.iter().filter_map(|r| log_mean(r)).collect();
        assert_eq!(dersimonian_laird(&pts), 0.0, "the old estimate");
        let tau = estimate(&runs).unwrap();
        assert!((tau - sd_of_logs(&means)).abs() < 1e-9, "{tau}");
        // Runs that agree to the digit: the floor.
        let alike = vec![vec![10.0, 10.0], vec![10.0, 10.0], vec![10.0, 10.0]];
        assert_eq!(estimate(&alike), Some(SD_MIN));
        // A pair from those 8 runs at their extremes is within the noise.
        let b = between(&runs);
        let extreme = (75.7f64 / 61.8).ln();
        assert!(b.log_half_width() > extreme, "{b:?}");
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
