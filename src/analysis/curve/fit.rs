//! Fitting t(n) = t0 + max(n, U)/B to a curve: every split of the points
//! into a flat head and a rising tail is tried, the line is fitted to the
//! tail (weighted by 1/t²), and a unit U is kept only when it earns its
//! extra parameter (see [the curve module](super) for the method and
//! why). Also the line's standard errors and its sensitivity to one
//! left-out size, which the quality checks read.

use crate::result::curve::ModelFit;
use crate::stats::fit::{LineFit, weighted_line};
use serde::{Deserialize, Serialize};

/// A unit is considered only when the plain line misses a point by more
/// than this share.
pub const UNIT_MIN_MISFIT: f64 = 0.05;
/// ...and only when the drop in squared error it brings is this many
/// times the residual variance left (an F statistic; about 4.7 is the 5%
/// level for 16 points, set higher since U is picked among many sizes).
pub const UNIT_MIN_F: f64 = 10.0;
/// A unit found within this share of a measured size is that size.
pub const UNIT_SNAP: f64 = 0.10;

/// One size of one curve, as the analysis needs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SizePoint {
    pub size: u64,
    /// Median time per request, ns (1 / median IOPS).
    pub time_per_op_ns: f64,
    /// Median MB/s.
    pub mb_per_s: f64,
    /// Measured through the page cache (a size O_DIRECT cannot do).
    pub buffered: bool,
}

/// Fits the plain line t0 + n/B to the direct (not buffered) points, each
/// weighted by 1/t² so relative errors count alike. `None` when fewer than
/// two points or when the fit is unphysical (negative bandwidth); a
/// negative fixed cost is reported as zero. For curves of request sizes
/// use [`read_curve`](super::read_curve), which knows about units.
pub fn fit_model(points: &[SizePoint]) -> Option<ModelFit> {
    let direct = direct_points(points);
    let mut fit = candidate(&direct, 0)?.into_fit(&direct);
    fit.t0_us = fit.t0_us.max(0.0);
    let (half, ninety) = (fit.size_reaching(0.5), fit.size_reaching(0.9));
    fit.n_half_bytes = half;
    fit.n90_bytes = ninety;
    Some(fit)
}

/// The fitted model with U found from the points (see [the curve
/// module](super) for the method). `None` when no candidate gives a line with a positive
/// slope through at least two points.
pub fn fit_unit_model(points: &[SizePoint]) -> Option<ModelFit> {
    let direct = direct_points(points);
    let plain = candidate(&direct, 0);
    let splits: Vec<Candidate> = (1..direct.len())
        .filter_map(|k| candidate(&direct, k))
        .collect();
    // Of splits that fit alike (a unit at a measured size fits the same
    // whether that point is counted flat or on the line), the one with
    // the most points on the line.
    let least = splits.iter().map(|c| c.sse).fold(f64::INFINITY, f64::min);
    let with_unit = splits
        .into_iter()
        .filter(|c| c.sse <= least * 1.01 + 1e-12)
        .max_by_key(|c| c.used);
    let chosen = match (plain, with_unit) {
        (Some(p), Some(u)) if p.worst > UNIT_MIN_MISFIT && unit_earned(&p, &u, direct.len()) => u,
        (Some(p), _) => p,
        (None, Some(u)) => u,
        (None, None) => return None,
    };
    Some(chosen.into_fit(&direct))
}

/// Whether a unit explains the points better than the plain line by more
/// than its extra parameter could by chance: the F statistic of the drop
/// in squared error, (SSE_plain − SSE_unit) / (SSE_unit / (m − 3)), at
/// least [`UNIT_MIN_F`]. A ratio of errors alone would not do: the flat
/// points of random writes scatter (each garbage collection copies what
/// the closed AU lacked), and that scatter is in both models' errors.
fn unit_earned(plain: &Candidate, unit: &Candidate, points: usize) -> bool {
    let gain = plain.sse - unit.sse;
    if points <= 3 || gain <= 0.0 {
        return false;
    }
    let residual = unit.sse / (points - 3) as f64;
    residual == 0.0 || gain / residual >= UNIT_MIN_F
}

/// Direct points as (size, time per request in ns), by size.
pub(super) fn direct_points(points: &[SizePoint]) -> Vec<(f64, f64)> {
    let mut direct: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| !p.buffered && p.time_per_op_ns > 0.0 && p.time_per_op_ns.is_finite())
        .map(|p| (p.size as f64, p.time_per_op_ns))
        .collect();
    direct.sort_by(|a, b| a.0.total_cmp(&b.0));
    direct
}

/// The points as (size, time, weight 1/t²) for a line fit.
pub(super) fn weighted(points: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
    points.iter().map(|&(n, t)| (n, t, 1.0 / (t * t))).collect()
}

/// One way to split the points: the first `k` flat at the cost of a unit
/// U, the line t0 + n/B through the rest, and how that does over all.
struct Candidate {
    /// None for the plain line (k = 0).
    unit: Option<f64>,
    line: LineFit,
    /// Standard errors of intercept and slope (None with two points).
    se: Option<(f64, f64)>,
    /// Largest relative change of t0 and of B when any one point of the
    /// line is left out (None with two points).
    sensitivity: Option<(f64, f64)>,
    used: usize,
    /// Σ ((t − model) / t)² over every direct point.
    sse: f64,
    /// Largest |t − model| / model over every direct point.
    worst: f64,
}

impl Candidate {
    fn into_fit(self, direct: &[(f64, f64)]) -> ModelFit {
        let slope = self.line.slope;
        let mut fit = ModelFit {
            t0_us: self.line.intercept / 1e3,
            bandwidth_mb_s: 1e3 / slope,
            n_half_bytes: 0.0,
            n90_bytes: 0.0,
            r_squared: self.line.r_squared,
            max_relative_error: self.worst,
            points_used: self.used,
            unit_bytes: self.unit.map(|u| u.round() as u64),
            t0_se_us: self.se.map(|(a, _)| a / 1e3),
            // B = 1/slope, so se(B) ≈ se(slope)/slope² (delta method).
            bandwidth_se_mb_s: self.se.map(|(_, b)| b / (slope * slope) * 1e3),
            t0_sensitivity: self.sensitivity.map(|s| s.0),
            bandwidth_sensitivity: self.sensitivity.map(|s| s.1),
            best_measured_mb_s: direct.iter().map(|&(n, t)| n / t * 1e3).reduce(f64::max),
        };
        fit.n_half_bytes = fit.size_reaching(0.5);
        fit.n90_bytes = fit.size_reaching(0.9);
        fit
    }
}

/// The points (by size) split after the first `k`: the line through the
/// rest, and for k > 0 the unit U at which the line meets the flat level
/// of the first k (their weighted mean time), kept between the last flat
/// size and the first line size, since a unit between two measured sizes
/// (an 8 KiB page in a sweep of 4 and 32 KiB) is as likely as one at a
/// measured size. `None` for fewer than two line points or a slope ≤ 0.
fn candidate(direct: &[(f64, f64)], k: usize) -> Option<Candidate> {
    let data = weighted(direct.get(k..)?);
    let line = weighted_line(&data)?;
    if line.slope <= 0.0 || !line.slope.is_finite() {
        return None;
    }
    let unit = (k > 0).then(|| {
        let flat = &direct[..k];
        // The level c minimising Σ ((t − c) / t)².
        let level = flat.iter().map(|p| 1.0 / p.1).sum::<f64>()
            / flat.iter().map(|p| 1.0 / (p.1 * p.1)).sum::<f64>();
        let (below, above) = (direct[k - 1].0, direct[k].0);
        let u = ((level - line.intercept) / line.slope).clamp(below, above);
        // Within a tenth of a measured size it is that size: the estimate
        // carries the scatter of the flat points.
        if u <= below * (1.0 + UNIT_SNAP) {
            below
        } else if u >= above * (1.0 - UNIT_SNAP) {
            above
        } else {
            u
        }
    });
    if unit == Some(direct[0].0) {
        // A unit at the smallest size is the plain line, less one point.
        return None;
    }
    let model = |n: f64| line.at(unit.map_or(n, |u| n.max(u)));
    let sse = direct
        .iter()
        .map(|&(n, t)| ((t - model(n)) / t).powi(2))
        .sum();
    let worst = direct
        .iter()
        .map(|&(n, t)| relative_error(t, model(n)))
        .fold(0.0, f64::max);
    Some(Candidate {
        unit,
        se: standard_errors(&data, &line),
        sensitivity: leave_one_out(&data, &line),
        used: data.len(),
        line,
        sse,
        worst,
    })
}

/// The largest relative change of the intercept and of 1/slope when any
/// one point is left out of the line. One point can carry a whole fit (an
/// extra garbage collection at the smallest size moves t0 by a quarter
/// while the standard error, spread over all points, barely moves); this
/// shows it. `None` with fewer than three points.
fn leave_one_out(data: &[(f64, f64, f64)], line: &LineFit) -> Option<(f64, f64)> {
    if data.len() < 3 {
        return None;
    }
    let mut worst = (0.0f64, 0.0f64);
    for i in 0..data.len() {
        let rest: Vec<(f64, f64, f64)> = data
            .iter()
            .enumerate()
            .filter_map(|(j, p)| (j != i).then_some(*p))
            .collect();
        let Some(other) = weighted_line(&rest) else {
            continue;
        };
        let t0 = ((other.intercept - line.intercept) / line.intercept).abs();
        let b = (line.slope / other.slope - 1.0).abs();
        // A zero intercept or slope has no relative change; the checks of
        // a fixed cost at or below zero and of the slope say what is wrong.
        worst = (finite_max(worst.0, t0), finite_max(worst.1, b));
    }
    Some(worst)
}

/// The larger of `worst` and `x`, where `x` counts only when finite.
fn finite_max(worst: f64, x: f64) -> f64 {
    if x.is_finite() { worst.max(x) } else { worst }
}

/// |measured − model| / model; zero (nothing to state) where the model is
/// not positive: the line gives no time there only when its fixed cost is
/// below zero, which its own check reports. A stated error is finite, as
/// every number a result holds (JSON has no infinity).
fn relative_error(measured: f64, model: f64) -> f64 {
    if model > 0.0 {
        finite_max(0.0, ((measured - model) / model).abs())
    } else {
        0.0
    }
}

/// Standard errors of the intercept and slope of a weighted line, from the
/// scatter of its own points about it (weights as relative, so the
/// residual variance is of relative errors). `None` with two points.
pub(super) fn standard_errors(data: &[(f64, f64, f64)], line: &LineFit) -> Option<(f64, f64)> {
    let m = data.len();
    if m < 3 {
        return None;
    }
    let s: f64 = data.iter().map(|p| p.2).sum();
    let sx: f64 = data.iter().map(|p| p.2 * p.0).sum();
    let sxx: f64 = data.iter().map(|p| p.2 * p.0 * p.0).sum();
    let det = s * sxx - sx * sx;
    if det <= 0.0 {
        return None;
    }
    let ss: f64 = data
        .iter()
        .map(|&(x, y, w)| w * (y - line.at(x)).powi(2))
        .sum();
    let variance = ss / (m - 2) as f64;
    // Weights of times far beyond any device's (1/t² underflowing) leave
    // no error to state: none, rather than a NaN no JSON can carry.
    Some(((variance * sxx / det).sqrt(), (variance * s / det).sqrt()))
        .filter(|(a, b)| a.is_finite() && b.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::curve::read_curve;
    use crate::analysis::curve::test_points::{model_points, unit_points};
    use proptest::prelude::*;

    #[test]
    fn recovers_an_sd_card_like_model() {
        // 200 µs per request, 20 MB/s (0.02 bytes/ns).
        let fit = fit_model(&model_points(200_000.0, 0.02, &[0.0])).unwrap();
        assert!((fit.t0_us - 200.0).abs() < 1e-6, "{fit:?}");
        assert!((fit.bandwidth_mb_s - 20.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.n_half_bytes - 4000.0).abs() < 1e-3);
        assert!((fit.n90_bytes - 36000.0).abs() < 1e-2);
    }

    proptest! {
        #[test]
        fn recovers_t0_and_bandwidth_within_one_percent_under_noise(
            t0_us in 5.0f64..5000.0,
            log2_n_half in 12.0f64..20.0,
            noise in prop::collection::vec(-0.004f64..0.004, 16),
        ) {
            // t0 and B can be told apart only when the sweep (512 B to 16 MiB)
            // spans the knee: n½ = t0·B from 4 KiB to 1 MiB covers SD cards
            // (200 µs, 20 MB/s: 4 KB) to NVMe drives (10 µs, 3 GB/s: 30 KB).
            let bw_mb_s = log2_n_half.exp2() / t0_us;
            let fit = fit_model(&model_points(t0_us * 1e3, bw_mb_s * 1e-3, &noise)).unwrap();
            prop_assert!((fit.t0_us / t0_us - 1.0).abs() < 0.01, "t0 {} vs {}", fit.t0_us, t0_us);
            prop_assert!((fit.bandwidth_mb_s / bw_mb_s - 1.0).abs() < 0.01, "B {} vs {}", fit.bandwidth_mb_s, bw_mb_s);
        }

        #[test]
        fn model_throughput_never_exceeds_bandwidth(t0 in 1.0f64..1e6, bw in 0.001f64..10.0, n in 1.0f64..1e9) {
            let fit = fit_model(&model_points(t0, bw, &[0.0])).unwrap();
            prop_assert!(fit.mb_per_s_at(n) <= fit.bandwidth_mb_s * (1.0 + 1e-9));
        }
    }

    #[test]
    fn random_writes_flat_up_to_the_erase_block_fit_from_the_erase_block_up() {
        // Each random write below the 4 MiB AU costs a garbage collection
        // of the whole AU, more or less (±15%: what the closed AU held).
        let noise = [
            0.15, -0.1, 0.05, -0.15, 0.12, -0.05, 0.0, 0.08, -0.12, 0.1, -0.08, 0.0,
        ];
        let mut pts = unit_points(200_000.0, 0.01, 4 << 20, &noise);
        for p in pts.iter_mut().filter(|p| p.size >= 4 << 20) {
            p.time_per_op_ns = 200_000.0 + p.size as f64 / 0.01;
            p.mb_per_s = p.size as f64 / p.time_per_op_ns * 1e3;
        }
        let r = read_curve(&pts);
        let fit = r.fit.unwrap();
        assert_eq!(r.unit, Some(4 << 20));
        assert_eq!(fit.points_used, 3);
        assert!((fit.t0_us - 200.0).abs() < 1e-3, "{fit:?}");
        assert!((fit.bandwidth_mb_s - 10.0).abs() < 1e-6, "{fit:?}");
        // The flat points are 15% off at worst: judged, not fitted.
        assert!((fit.max_relative_error - 0.15).abs() < 1e-3, "{fit:?}");
        assert!(r.quality.is_good(), "{:?}", r.quality);
        assert_eq!(r.advice.unwrap().size, 4 << 20);
    }

    #[test]
    fn reads_keep_the_plain_line() {
        let noise = [0.01, -0.01, 0.005, 0.0, -0.005];
        let r = read_curve(&model_points(200_000.0, 0.02, &noise));
        assert_eq!(r.unit, None);
        let fit = r.fit.unwrap();
        assert_eq!(fit.points_used, 16);
        assert!((fit.t0_us / 200.0 - 1.0).abs() < 0.02, "{fit:?}");
        assert!(r.quality.is_good(), "{:?}", r.quality);
    }

    proptest! {
        #[test]
        fn a_unit_is_recovered_with_t0_and_bandwidth(
            t0_us in 20.0f64..2000.0,
            bw_mb_s in 2.0f64..100.0,
            log2_unit in 11u32..17,
            noise in prop::collection::vec(-0.003f64..0.003, 16),
        ) {
            // Writes: pages of 2 to 64 KiB whose program time is at least
            // half the fixed cost (else the flat part is hard to tell from a
            // line that starts high, and need not be).
            let unit = 1u64 << log2_unit;
            prop_assume!(unit as f64 / bw_mb_s > 0.5 * t0_us);
            // t0 is claimed to 10% only where it is at least 1/16 of the
            // unit's transfer time: below that, 0.3% noise on the points
            // moves it by more (a 737 µs t0 under a 20 ms unit came out at
            // 662 µs), and the bandwidth and unit are what the fit is for.
            let t0_resolvable = t0_us >= unit as f64 / bw_mb_s / 16.0;
            let r = read_curve(&unit_points(t0_us * 1e3, bw_mb_s * 1e-3, unit, &noise));
            let fit = r.fit.unwrap();
            prop_assert_eq!(r.unit, Some(unit));
            prop_assert!((fit.bandwidth_mb_s / bw_mb_s - 1.0).abs() < 0.01, "B {} vs {}", fit.bandwidth_mb_s, bw_mb_s);
            if r.quality.is_good() && t0_resolvable {
                prop_assert!((fit.t0_us / t0_us - 1.0).abs() < 0.10, "t0 {} vs {}", fit.t0_us, t0_us);
            }
        }

    }
}
