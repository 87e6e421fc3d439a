//! `compare`'s two errors under the law of the noise it models: run means
//! lognormal about a level (between-run spread σ), repetitions lognormal
//! about their run's mean (within-run spread), and, because a host's speed
//! wanders over a series, a drift of the level from run to run. The
//! decision is `compare`'s own for a pair of runs with the device's other
//! runs as history ([`super::noise_from`], then [`verdict::judge`]): the
//! earlier run pooled with the like runs older than the later one when it
//! agrees with them (their spread floored by all the runs'), else the pair
//! alone with the spread of all. Truth is the law's, not a replay of the
//! method: a pair of an unchanged series is a false alarm when called
//! changed; a run after a 30% step is a detection when called slower.

use super::{noise_from, verdict};
use crate::result::compare::ChangeVerdict;
use crate::stats::bootstrap::Change;

/// The noise of one population of series.
#[derive(Debug, Clone, Copy)]
struct Law {
    /// Standard deviation of a run's ln(mean) about the level.
    sd_between: f64,
    /// Standard deviation of a repetition's ln about its run's mean.
    sd_within: f64,
    /// Change of the level's ln from one run to the next.
    drift: f64,
}

const RUNS: usize = 12;
const LATER_RUNS: usize = 4;
const REPETITIONS: usize = 3;
const THRESHOLD: f64 = 0.05;
/// A 30% slowdown.
const STEP: f64 = 0.7;

fn normal(rng: &mut fastrand::Rng) -> f64 {
    // Box–Muller.
    let (u, v) = (rng.f64().max(1e-12), rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// A run at level `ln_level`: its repetitions, MB/s.
fn run(law: Law, ln_level: f64, rng: &mut fastrand::Rng) -> Vec<f64> {
    let mean = ln_level + law.sd_between * normal(rng);
    (0..REPETITIONS)
        .map(|_| (mean + law.sd_within * normal(rng)).exp())
        .collect()
}

/// `compare`'s statement on `before` then `after`, with `older` the runs
/// older than `after` and `all` every other run of the device (quiet hosts
/// on both sides: the law has no disturbance).
fn statement(before: &[f64], after: &[f64], older: &[Vec<f64>], all: &[Vec<f64>]) -> Change {
    let noise = noise_from(before, older, all);
    match verdict::judge(before, after, THRESHOLD, noise, (None, None)).0 {
        ChangeVerdict::Faster { .. } => Change::Faster,
        ChangeVerdict::Slower { .. } => Change::Slower,
        _ => Change::NoChange,
    }
}

/// False alarms among every pair of one unchanged series, and detections
/// among its runs against runs after a 30% step (the series' other runs as
/// history, all older than the later run): (false, pairs, detected, pairs).
fn series(law: Law, rng: &mut fastrand::Rng) -> (usize, usize, usize, usize) {
    let level = |i: usize| 3.0 + law.drift * i as f64;
    let runs: Vec<Vec<f64>> = (0..RUNS).map(|i| run(law, level(i), rng)).collect();
    let later: Vec<Vec<f64>> = (RUNS..RUNS + LATER_RUNS)
        .map(|i| run(law, level(i) + STEP.ln(), rng))
        .collect();
    let others = |skip: &[usize]| -> Vec<Vec<f64>> {
        (0..RUNS)
            .filter(|k| !skip.contains(k))
            .map(|k| runs[k].clone())
            .collect()
    };
    let (mut false_alarms, mut pairs) = (0, 0);
    for i in 0..RUNS {
        for j in i + 1..RUNS {
            let older: Vec<Vec<f64>> = (0..j)
                .filter(|&k| k != i)
                .map(|k| runs[k].clone())
                .collect();
            let said = statement(&runs[i], &runs[j], &older, &others(&[i, j]));
            false_alarms += (said != Change::NoChange) as usize;
            pairs += 1;
        }
    }
    let (mut detected, mut steps) = (0, 0);
    for (i, before) in runs.iter().enumerate() {
        let history = others(&[i]);
        for after in &later {
            detected += (statement(before, after, &history, &history) == Change::Slower) as usize;
            steps += 1;
        }
    }
    (false_alarms, pairs, detected, steps)
}

/// Rates over `n` series of `law`.
fn rates(law: Law, n: usize, seed: u64) -> (f64, f64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut f, mut p, mut d, mut s) = (0, 0, 0, 0);
    for _ in 0..n {
        let (a, b, c, e) = series(law, &mut rng);
        (f, p, d, s) = (f + a, p + b, d + c, s + e);
    }
    (f as f64 / p as f64, d as f64 / s as f64)
}

/// Issue 36's bounds: at most 5% false alarms under every law (a level
/// that wanders included), and a 30% step detected in at least 90% of
/// pairs where runs spread by up to 6% about a steady level (the loop
/// device and the file of `tests/alone/compare_noise.rs` spread by 3–9%
/// on a virtual machine). With 8% the step is seen in about 86%: printed,
/// as the drifting laws' detection, whose step is smaller than 30% against
/// the earliest runs.
#[test]
fn both_errors_under_the_law_of_run_to_run_noise() {
    for (sd_between, drift) in [
        (0.03, 0.0),
        (0.06, 0.0),
        (0.08, 0.0),
        (0.06, 0.005),
        (0.08, 0.01),
    ] {
        let law = Law {
            sd_between,
            sd_within: 0.03,
            drift,
        };
        let (false_rate, detected) = rates(law, 30, 36);
        eprintln!(
            "σ between {:.0}%, drift {:.1}%/run: false alarms {:.1}%, 30% step detected {:.1}%",
            sd_between * 100.0,
            drift * 100.0,
            false_rate * 100.0,
            detected * 100.0
        );
        assert!(false_rate <= 0.05, "{law:?}: {false_rate}");
        if drift == 0.0 && sd_between <= 0.06 {
            assert!(detected >= 0.90, "{law:?}: {detected}");
        }
    }
}

/// One run slowed by 15% by its host (a shared CI machine's disk gave
/// one such run among eleven of 17.7–19.7 K IOPS, with no sign in the host
/// state), taken as the earlier side: an ordinary later run must not be
/// called faster than it. The odd run does not pool with its history, and
/// the pair stands alone with a spread between runs that counts it.
#[test]
fn an_odd_earlier_run_does_not_make_an_ordinary_later_run_changed() {
    let law = Law {
        sd_between: 0.04,
        sd_within: 0.03,
        drift: 0.0,
    };
    let mut rng = fastrand::Rng::with_seed(37);
    let (mut called, mut pairs) = (0, 0);
    for _ in 0..400 {
        let history: Vec<Vec<f64>> = (0..10).map(|_| run(law, 3.0, &mut rng)).collect();
        let odd = run(law, 3.0 + 0.85f64.ln(), &mut rng);
        let after = run(law, 3.0, &mut rng);
        called += (statement(&odd, &after, &history, &history) != Change::NoChange) as usize;
        pairs += 1;
    }
    let rate = called as f64 / pairs as f64;
    eprintln!(
        "ordinary runs called changed after a 15% slow one: {:.1}%",
        rate * 100.0
    );
    assert!(rate <= 0.05, "{rate}");
}
