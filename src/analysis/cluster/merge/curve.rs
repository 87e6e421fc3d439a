//! A curve run's points refreshed from the merged tests, and the curve
//! read again: each [`CurvePoint`] names its test by index, so its MB/s,
//! IOPS and latency come from the merged test, and the model, advice,
//! deviations, alignment verdicts and crossovers are recomputed by the
//! same pure functions the sweep used ([`crate::analysis::curve_reading`]).

use crate::analysis::curve_reading::{analyse, find_crossovers};
use crate::result::{CurvePoint, CurveSeries, Payload, RunResult, TestResult};

/// Refreshes a curve run's points from `result.tests` and reads every
/// series again; other commands are left as they are. `max_transfer`
/// gives the kernel's largest request for a series' target (the sweep
/// reads it from sysfs; `merge` knows none and passes `|_| None`, which
/// only changes the note of a deviation above that size).
pub fn refresh_curve(result: &mut RunResult, max_transfer: &dyn Fn(&str) -> Option<u64>) {
    let RunResult { tests, payload, .. } = result;
    let Payload::Curve { curve, .. } = payload else {
        return;
    };
    for series in &mut curve.series {
        refresh_series(series, tests);
        if series.skipped.is_none() {
            let max = max_transfer(&series.target);
            analyse(series, max);
        }
    }
    curve.crossovers = find_crossovers(&curve.series);
}

/// Every point's figures from its test, the stale readings cleared (the
/// analysis sets a point's model ratio and the deviations only where a
/// model fits), and the tests' caveats added by size.
fn refresh_series(series: &mut CurveSeries, tests: &[TestResult]) {
    for point in series.points.iter_mut().chain(series.unaligned.iter_mut()) {
        point.model_ratio = None;
        let Some(test) = tests.get(point.test) else {
            continue;
        };
        refresh_point(point, test);
        for w in test.repetitions.iter().flat_map(|m| &m.warnings) {
            let size = point.size;
            if !series.warnings.iter().any(|(s, x)| *s == size && x == w) {
                series.warnings.push((size, w.clone()));
            }
        }
    }
    series.deviations.clear();
}

/// The point's MB/s and IOPS spreads from its test, and its latency from
/// the repetition whose MB/s is nearest the median (the sweep's rule).
fn refresh_point(point: &mut CurvePoint, test: &TestResult) {
    point.mb_per_s = test.mb_per_s;
    point.iops = test.iops;
    let median = test.mb_per_s.map_or(0.0, |s| s.median);
    let nearest = test
        .repetitions
        .iter()
        .filter_map(|m| Some((m.mb_per_s, m.latency?)))
        .min_by(|a, b| (a.0 - median).abs().total_cmp(&(b.0 - median).abs()));
    point.p50_ns = nearest.map(|(_, l)| l.p50_ns);
    point.p99_ns = nearest.map(|(_, l)| l.p99_ns);
}
