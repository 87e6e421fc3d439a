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
//! Without history, τ is a default floor, one for a run whose host was
//! quiet and a larger one for a run that shared its device or CPUs
//! ([`SD_QUIET`], [`SD_DISTURBED`]): both were set from the population
//! test in `tests/alone/compare_noise.rs`, pairs of runs of one unchanged
//! file on a host whose load changes between runs, so that at most 5% of
//! the pairs are called a change at the default threshold. A run's
//! disturbance also raises a history's estimate to its floor: the history
//! may come from quiet runs.

use serde::Serialize;

/// Earlier runs of the same test needed to estimate the between-run
/// spread (with two, Q has one degree of freedom and τ² is mostly noise).
pub const MIN_HISTORY: usize = 3;

/// The between-run standard deviation of ln(mean MB/s) assumed for a run
/// on a quiet host, without history: ±15%, the spread of back-to-back runs
/// of one file on an otherwise busy two-core machine with no competing
/// I/O on the device.
pub const SD_QUIET: f64 = 0.15;

/// The same for a run whose device served other I/O, or whose CPUs were
/// stolen, during the measurement. In the population test a file on a
/// virtual disk ran 2 to 10 times slower beside a writer syncing 8 MiB
/// chunks to the same disk and busy loops on every CPU; the root mean
/// square of those runs' log distance from the quiet runs' level was 1.2,
/// so a disturbed run is one standard deviation from its quiet level at a
/// factor of e^1.2 ≈ 3.3. A verdict against such a run needs a change of
/// about tenfold: honest, since its company can cost that much.
pub const SD_DISTURBED: f64 = 1.2;

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
    /// A run shared its device or CPUs while it measured: the floor for a
    /// disturbed run (or the history's estimate, when larger).
    Disturbed,
    /// Both runs are of simulated cards, timed on a virtual clock no host
    /// load reaches: a rerun gives the same figures, so nothing is added.
    Simulated,
}

/// The between-run part of a verdict's interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BetweenRuns {
    /// Standard deviation of ln(mean MB/s) between runs, before side
    /// (0.15 ≈ ±15%; 1.2 is a factor of e^1.2 ≈ 3.3).
    pub sd_before: f64,
    /// The same for the later side.
    pub sd_after: f64,
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
            sd_before: 0.0,
            sd_after: 0.0,
            quantile: Z975,
            basis: NoiseBasis::Simulated,
        }
    }

    /// The half-width the between-run part adds on the log scale.
    pub fn log_half_width(&self) -> f64 {
        self.quantile * (self.sd_before.powi(2) + self.sd_after.powi(2)).sqrt()
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

/// DerSimonian–Laird τ (standard deviation, log scale) of earlier runs,
/// each given by its repetitions; `None` with fewer than [`MIN_HISTORY`]
/// usable runs.
pub fn estimate(runs: &[Vec<f64>]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = runs.iter().filter_map(|r| log_mean(r)).collect();
    let k = pts.len();
    if k < MIN_HISTORY {
        return None;
    }
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
    let tau2 = if c > 0.0 {
        ((q - (k as f64 - 1.0)) / c).max(0.0)
    } else {
        0.0
    };
    Some(tau2.sqrt())
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
/// floor; a disturbed side takes at least [`SD_DISTURBED`].
pub fn between(history: &[Vec<f64>], disturbed_before: bool, disturbed_after: bool) -> BetweenRuns {
    let usable = history.iter().filter(|r| log_mean(r).is_some()).count();
    let (sd, quantile, mut basis) = match estimate(history) {
        Some(tau) => (tau, t975(usable - 1), NoiseBasis::History { runs: usable }),
        None => (SD_QUIET, Z975, NoiseBasis::AssumedQuiet),
    };
    let side = |disturbed: bool| match disturbed {
        true => sd.max(SD_DISTURBED),
        false => sd,
    };
    let (sd_before, sd_after) = (side(disturbed_before), side(disturbed_after));
    if (sd_before, sd_after) != (sd, sd) {
        basis = NoiseBasis::Disturbed;
    }
    BetweenRuns {
        sd_before,
        sd_after,
        // A disturbed side's floor is not an estimate: the normal quantile.
        quantile: if basis == NoiseBasis::Disturbed {
            Z975
        } else {
            quantile
        },
        basis,
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

    /// Runs whose means spread by far more than their repetitions do:
    /// τ close to the spread of the log means.
    #[test]
    fn dersimonian_laird_finds_the_spread_between_runs() {
        let runs: Vec<Vec<f64>> = [50.0, 60.0, 45.0, 70.0, 55.0]
            .iter()
            .map(|m: &f64| vec![m * 0.99, *m, m * 1.01])
            .collect();
        let tau = estimate(&runs).unwrap();
        let logs: Vec<f64> = [50.0f64, 60.0, 45.0, 70.0, 55.0]
            .iter()
            .map(|m| m.ln())
            .collect();
        let mean = logs.iter().sum::<f64>() / 5.0;
        let sd = (logs.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!((tau - sd).abs() < 0.02 * sd, "{tau} vs {sd}");
        // Runs that agree within their own noise: no between-run part.
        let alike = vec![
            vec![9.0, 10.0, 11.0],
            vec![10.5, 9.5, 10.0],
            vec![10.2, 9.8, 10.0],
        ];
        assert_eq!(estimate(&alike), Some(0.0));
        assert_eq!(estimate(&runs[..2]), None, "two runs are too few");
    }

    #[test]
    fn the_basis_says_where_the_spread_came_from() {
        let b = between(&[], false, false);
        assert_eq!(
            (b.basis, b.sd_before, b.quantile),
            (NoiseBasis::AssumedQuiet, SD_QUIET, Z975)
        );
        let b = between(&[], false, true);
        assert_eq!(
            (b.basis, b.sd_before, b.sd_after),
            (NoiseBasis::Disturbed, SD_QUIET, SD_DISTURBED)
        );
        let hist: Vec<Vec<f64>> = (0..4)
            .map(|i| vec![50.0 + i as f64, 51.0 + i as f64])
            .collect();
        let b = between(&hist, false, false);
        assert_eq!(b.basis, NoiseBasis::History { runs: 4 });
        assert_eq!(b.quantile, t975(3));
        assert!(b.sd_before < SD_QUIET);
    }

    /// The case of the issue: 3 vs 3 repetitions 45% apart with a tight
    /// bootstrap interval (34%–54%) is no longer a change once two runs'
    /// worth of between-run noise is added; a fivefold drop still is.
    #[test]
    fn widening_turns_the_issues_slowdown_into_no_clear_change() {
        let boot = Interval {
            estimate: 0.55,
            low: 0.46,
            high: 0.66,
            level: 0.95,
        };
        let quiet = between(&[], false, false);
        let w = widen(boot, &quiet);
        assert!(w.low < boot.low && w.high > boot.high, "{w:?}");
        assert!(w.high < 0.95, "both quiet: still slower, {w:?}");
        let disturbed = between(&[], false, true);
        let w = widen(boot, &disturbed);
        assert!(w.high > 1.05, "one side disturbed: no clear change, {w:?}");
        let fivefold = Interval {
            estimate: 0.05,
            low: 0.04,
            high: 0.06,
            level: 0.95,
        };
        assert!(widen(fivefold, &disturbed).high < 0.95);
        // Swapping the sides inverts the widened interval.
        let swapped = Interval {
            estimate: 1.0 / 0.55,
            low: 1.0 / 0.66,
            high: 1.0 / 0.46,
            level: 0.95,
        };
        let s = widen(swapped, &quiet);
        let w = widen(boot, &quiet);
        assert!((s.low - 1.0 / w.high).abs() < 1e-12 && (s.high - 1.0 / w.low).abs() < 1e-12);
    }
}
