//! Reading a throughput-against-size curve.
//!
//! The model is Hockney's (R. W. Hockney, "The communication challenge for
//! MPP", Parallel Computing 20, 1994): a request of n bytes takes
//! t(n) = t0 + n/B, a fixed cost t0 (command, system call, seek) plus the
//! transfer at the asymptotic bandwidth B. Throughput n/t(n) then reaches
//! half of B at n½ = t0·B and 90% of B at 9·n½.
//!
//! Flash breaks it below the unit it programs. A NAND page is written
//! whole, so a write smaller than the page costs a whole page (Arnd
//! Bergmann's flashbench notes, "Optimizing Linux with cheap flash drives",
//! LWN 2011); and a card that keeps only a few allocation units (erase
//! blocks, AUs in the SD Association's simplified physical layer
//! specification) open answers a random write elsewhere by copying a whole
//! AU, so random writes cost the same from the smallest size up to the AU.
//! Fitted through those flat points, the plain line makes up a huge t0 and a
//! B above every measured point. So the model here is
//!
//!   t(n) = t0 + max(n, U)/B,
//!
//! with U the smallest unit a request costs. It is found by splitting the
//! points, sorted by size, into a flat head and a rising tail, every split
//! tried: the line t0 + n/B is fitted to the tail alone (weighted by 1/t²,
//! so every point's relative error counts alike), U is where that line
//! meets the head's level (kept between the last flat and the first rising
//! size, and taken as a measured size when within [`UNIT_SNAP`] of one),
//! and the split with the least weighted squared error over all points
//! wins. Equivalently: detect the flat region and fit from U upward. The
//! line is fitted to the tail only because the flat points are only
//! roughly flat (a garbage collection copies more or less depending on
//! what was written before): they judge a split but do not bend t0 and B.
//! U may fall between measured sizes (an 8 KiB page in a sweep of 4 and
//! 32 KiB): the 4 KiB point then belongs to the head, not to the line.
//! A unit is taken only when the plain line misses some point by more
//! than [`UNIT_MIN_MISFIT`] and the split cuts the squared error by more
//! than its extra parameter would by chance (an F test, [`UNIT_MIN_F`]):
//! an extra parameter always fits noise a little better, and the claim
//! "every request below U costs the same" must be earned. Reads, and
//! writes on anything without such a unit, keep the plain line.
//!
//! A fit is then judged ([`FitQuality`]): at least [`MIN_POINTS_FROM_UNIT`]
//! sizes on the line; no point further than [`MAX_POINT_ERROR`] from the
//! model and a weighted R² of the line of at least [`MIN_R_SQUARED`]; B
//! not above the best measured point by more than [`MAX_B_ABOVE_BEST`]
//! (else the sweep never reached the plateau the model extrapolates to);
//! one fixed cost along the curve (the larger half of the sizes must not
//! show a clearly smaller t0, the mark of a transfer capped by a slow
//! link); t0 above zero; and t0 and B determined: a standard error within
//! [`MAX_T0_RELATIVE_SE`] and [`MAX_B_RELATIVE_SE`], and no single size
//! moving them by more than [`MAX_T0_SENSITIVITY`] and
//! [`MAX_B_SENSITIVITY`] when left out. These limits were set on some 300
//! simulated cards (`sim:`) of random page, AU, command time and speeds,
//! whose small writes pay extra garbage collections of a few percent: a
//! fixed cost that is a quarter of the time of the smallest request on
//! the line moves by a quarter for every 7% such extra, so t0 must be
//! pinned down tightly before it is believed. Advice is given only on a
//! good fit, and names a measured size: the smallest from which every
//! measured size reaches [`ADVICE_SHARE`] of the best measured MB/s.
//!
//! Points far from the model are knees worth explaining (page size, erase
//! block, largest transfer); sizes that are not a multiple of the logical
//! block are compared with the interpolation between their aligned
//! neighbours; two devices' curves are compared for crossovers; and figures
//! are checked against the ceiling of the link the device sits behind.
//!
//! An unaligned size is judged by ranges, not medians: its repetitions'
//! fastest-to-slowest time per request against the interpolation between
//! its neighbours taken end by end (slowest with slowest, fastest with
//! fastest). A penalty is reported only when the two intervals are
//! disjoint, the same rule as reading error bars that do not overlap;
//! overlapping intervals are "no penalty seen", whatever the medians say.

use crate::probe::Interface;
use crate::stats::fit::{LineFit, weighted_line};
use crate::units::{format_mbps, format_size};
use serde::{Deserialize, Serialize};

/// A point beyond this share away from the model is reported.
pub const DEVIATION_THRESHOLD: f64 = 0.25;
/// A plateau within this share of the link's ceiling is the link's.
pub const PLATEAU_SHARE: f64 = 0.85;
/// A figure this far above the link's ceiling cannot have crossed it.
pub const IMPOSSIBLE_MARGIN: f64 = 1.05;

/// A unit is considered only when the plain line misses a point by more
/// than this share.
pub const UNIT_MIN_MISFIT: f64 = 0.05;
/// ...and only when the drop in squared error it brings is this many
/// times the residual variance left (an F statistic; about 4.7 is the 5%
/// level for 16 points, set higher since U is picked among many sizes).
pub const UNIT_MIN_F: f64 = 10.0;
/// A unit found within this share of a measured size is that size.
pub const UNIT_SNAP: f64 = 0.10;
/// Sizes at or above the unit a line needs to be judged (two fix it).
pub const MIN_POINTS_FROM_UNIT: usize = 3;
/// Largest standard error of t0, relative to t0, of a good fit.
pub const MAX_T0_RELATIVE_SE: f64 = 0.025;
/// Largest standard error of B, relative to B, of a good fit.
pub const MAX_B_RELATIVE_SE: f64 = 0.025;
/// Largest relative change of t0 when one point of the line is left out,
/// in a good fit.
pub const MAX_T0_SENSITIVITY: f64 = 0.10;
/// The same for B.
pub const MAX_B_SENSITIVITY: f64 = 0.05;
/// B may exceed the best measured MB/s by this share in a good fit.
pub const MAX_B_ABOVE_BEST: f64 = 0.05;
/// Smallest weighted R² of a good fit.
pub const MIN_R_SQUARED: f64 = 0.98;
/// Largest |measured − model| / model of any point in a good fit.
pub const MAX_POINT_ERROR: f64 = DEVIATION_THRESHOLD;
/// The advice names the smallest size from which every measured size
/// reaches this share of the best measured MB/s.
pub const ADVICE_SHARE: f64 = 0.9;

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

/// The fitted model t(n) = t0 + max(n, U)/B (U absent: t0 + n/B).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelFit {
    /// Fixed cost per request, µs. Below zero only in a poor fit.
    pub t0_us: f64,
    /// Asymptotic bandwidth, MB/s (10^6 B/s).
    pub bandwidth_mb_s: f64,
    /// Size reaching half the bandwidth in the model, bytes.
    pub n_half_bytes: f64,
    /// Size reaching 90% of the bandwidth in the model, bytes.
    pub n90_bytes: f64,
    /// Weighted R² (weights 1/t²) of the line over the points it was
    /// fitted to (those at or above U).
    pub r_squared: f64,
    /// Largest |measured − model| / model over the direct points.
    pub max_relative_error: f64,
    /// Points the line t0 + n/B was fitted to (those at or above U).
    pub points_used: usize,
    /// U: every request smaller than this costs as much as one of this
    /// size (a page program, or an erase block for random writes). Absent
    /// when no such unit was found: the plain line.
    #[serde(default)]
    pub unit_bytes: Option<u64>,
    /// Standard error of t0, µs (absent with only two points).
    #[serde(default)]
    pub t0_se_us: Option<f64>,
    /// Standard error of B, MB/s (absent with only two points).
    #[serde(default)]
    pub bandwidth_se_mb_s: Option<f64>,
    /// Largest relative change of t0 when any one point of the line is
    /// left out (absent with only two points).
    #[serde(default)]
    pub t0_sensitivity: Option<f64>,
    /// The same for B.
    #[serde(default)]
    pub bandwidth_sensitivity: Option<f64>,
    /// The best MB/s measured among the direct points.
    #[serde(default)]
    pub best_measured_mb_s: Option<f64>,
}

impl ModelFit {
    /// Model time per request of `size` bytes, ns.
    pub fn time_ns_at(&self, size: f64) -> f64 {
        let charged = self.unit_bytes.map_or(size, |u| size.max(u as f64));
        self.t0_us * 1e3 + charged / (self.bandwidth_mb_s * 1e-3)
    }

    /// Model throughput at `size`, MB/s.
    pub fn mb_per_s_at(&self, size: f64) -> f64 {
        size / self.time_ns_at(size) * 1e3
    }

    /// The size at which the model reaches `share` of B, bytes: on the
    /// line t0 + n/B above U, or on the flat part below it.
    pub fn size_reaching(&self, share: f64) -> f64 {
        let t0_b = self.t0_us.max(0.0) * self.bandwidth_mb_s;
        let on_line = share * t0_b / (1.0 - share);
        match self.unit_bytes.map(|u| u as f64) {
            Some(u) if on_line < u => share * (t0_b + u),
            _ => on_line,
        }
    }
}

/// Fits the plain line t0 + n/B to the direct (not buffered) points, each
/// weighted by 1/t² so relative errors count alike. `None` when fewer than
/// two points or when the fit is unphysical (negative bandwidth); a
/// negative fixed cost is reported as zero. For curves of request sizes
/// use [`read_curve`], which knows about units.
pub fn fit_model(points: &[SizePoint]) -> Option<ModelFit> {
    let direct = direct_points(points);
    let mut fit = candidate(&direct, 0)?.into_fit(&direct);
    fit.t0_us = fit.t0_us.max(0.0);
    let (half, ninety) = (fit.size_reaching(0.5), fit.size_reaching(0.9));
    fit.n_half_bytes = half;
    fit.n90_bytes = ninety;
    Some(fit)
}

/// The fitted model with U found from the points (see the module
/// documentation). `None` when no candidate gives a line with a positive
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
fn direct_points(points: &[SizePoint]) -> Vec<(f64, f64)> {
    let mut direct: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| !p.buffered && p.time_per_op_ns > 0.0 && p.time_per_op_ns.is_finite())
        .map(|p| (p.size as f64, p.time_per_op_ns))
        .collect();
    direct.sort_by(|a, b| a.0.total_cmp(&b.0));
    direct
}

/// The points as (size, time, weight 1/t²) for a line fit.
fn weighted(points: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
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
        worst = (worst.0.max(t0), worst.1.max(b));
    }
    Some(worst)
}

/// |measured − model| / model; infinite when the model is not positive.
fn relative_error(measured: f64, model: f64) -> f64 {
    if model > 0.0 {
        ((measured - model) / model).abs()
    } else {
        f64::INFINITY
    }
}

/// Standard errors of the intercept and slope of a weighted line, from the
/// scatter of its own points about it (weights as relative, so the
/// residual variance is of relative errors). `None` with two points.
fn standard_errors(data: &[(f64, f64, f64)], line: &LineFit) -> Option<(f64, f64)> {
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
    Some(((variance * sxx / det).sqrt(), (variance * s / det).sqrt()))
}

/// Whether a fit can be trusted, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum FitQuality {
    /// Every check passed: t0 and B describe the device.
    Good,
    /// At least one check failed. `reason` is the most basic failure, with
    /// its figures; `also` the other checks that failed, if any.
    Poor {
        reason: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<String>,
    },
}

impl FitQuality {
    pub fn is_good(&self) -> bool {
        matches!(self, FitQuality::Good)
    }

    fn poor(reason: impl Into<String>) -> FitQuality {
        FitQuality::Poor {
            reason: reason.into(),
            also: Vec::new(),
        }
    }
}

/// Judges a fit (see the module documentation for the checks). Failed
/// checks are listed most basic first: too few points, a shape the model
/// does not follow, a plateau never reached, then figures not determined.
pub fn judge(fit: &ModelFit, points: &[SizePoint]) -> FitQuality {
    let mut why = [
        too_few_points(fit),
        point_off_the_model(fit),
        r_squared_too_low(fit),
        plateau_not_reached(fit),
        fixed_cost_capped(fit, points),
        fixed_cost_undetermined(fit),
        bandwidth_undetermined(fit),
    ]
    .into_iter()
    .flatten();
    match why.next() {
        None => FitQuality::Good,
        Some(reason) => FitQuality::Poor {
            reason,
            also: why.collect(),
        },
    }
}

/// Fewer sizes than a line needs at or above the point where the fit starts.
fn too_few_points(fit: &ModelFit) -> Option<String> {
    if fit.points_used >= MIN_POINTS_FROM_UNIT {
        return None;
    }
    let from = fit.unit_bytes.map_or("the smallest size".to_string(), |u| {
        format!("the {} unit", format_size(u))
    });
    Some(format!(
        "only {} measured sizes at or above {from}; a line needs {MIN_POINTS_FROM_UNIT} to be judged",
        fit.points_used
    ))
}

/// One point lies too far from the fitted line.
fn point_off_the_model(fit: &ModelFit) -> Option<String> {
    (fit.max_relative_error > MAX_POINT_ERROR).then(|| {
        format!(
            "the curve does not follow the model: a point is {:.0}% off it (at most {:.0}% allowed)",
            fit.max_relative_error * 100.0,
            MAX_POINT_ERROR * 100.0
        )
    })
}

/// The line explains too little of the curve as a whole.
fn r_squared_too_low(fit: &ModelFit) -> Option<String> {
    (fit.r_squared < MIN_R_SQUARED).then(|| {
        format!(
            "the curve does not follow the model: weighted R² is {:.3}, below {MIN_R_SQUARED}",
            fit.r_squared
        )
    })
}

/// The fitted bandwidth is well above anything measured: the sweep stopped
/// before the plateau.
fn plateau_not_reached(fit: &ModelFit) -> Option<String> {
    let best = fit
        .best_measured_mb_s
        .filter(|b| fit.bandwidth_mb_s > b * (1.0 + MAX_B_ABOVE_BEST))?;
    Some(format!(
        "B = {} MB/s is {:.0}% above the best measured {} MB/s: the sweep did not reach the plateau the model assumes",
        format_mbps(fit.bandwidth_mb_s),
        (fit.bandwidth_mb_s / best - 1.0) * 100.0,
        format_mbps(best)
    ))
}

/// The larger sizes follow a line with a clearly smaller fixed cost.
fn fixed_cost_capped(fit: &ModelFit, points: &[SizePoint]) -> Option<String> {
    let c = capped_above(points, fit)?;
    Some(format!(
        "the fixed cost is not the same along the curve: from {} up t0 = {:.1} ± {:.1} µs, against {:.1} µs over all sizes (a ceiling such as a slow link capping large transfers, or extra costs at middle sizes)",
        format_size(c.from),
        c.t0_us,
        c.t0_se_us,
        fit.t0_us
    ))
}

/// The fixed cost is not above zero, or its error or its sensitivity to
/// one left-out size is too large; only the most basic of these is told.
fn fixed_cost_undetermined(fit: &ModelFit) -> Option<String> {
    if fit.t0_us <= 0.0 {
        return Some(format!(
            "the fixed cost came out at {:.1} µs, not above zero: the time per request does not grow as t0 + n/B",
            fit.t0_us
        ));
    }
    if let Some(se) = fit
        .t0_se_us
        .filter(|se| *se > MAX_T0_RELATIVE_SE * fit.t0_us)
    {
        return Some(format!(
            "the fixed cost is not determined: t0 = {:.1} ± {:.1} µs",
            fit.t0_us, se
        ));
    }
    let shift = fit.t0_sensitivity.filter(|s| *s > MAX_T0_SENSITIVITY)?;
    Some(format!(
        "the fixed cost is not determined: leaving out one size moves t0 = {:.1} µs by {:.0}%",
        fit.t0_us,
        shift * 100.0
    ))
}

/// The bandwidth's error or its sensitivity to one left-out size is too
/// large; only the first is told when both are.
fn bandwidth_undetermined(fit: &ModelFit) -> Option<String> {
    if let Some(se) = fit
        .bandwidth_se_mb_s
        .filter(|se| *se > MAX_B_RELATIVE_SE * fit.bandwidth_mb_s)
    {
        return Some(format!(
            "the bandwidth is not determined: B = {} ± {} MB/s",
            format_mbps(fit.bandwidth_mb_s),
            format_mbps(se)
        ));
    }
    let shift = fit
        .bandwidth_sensitivity
        .filter(|s| *s > MAX_B_SENSITIVITY)?;
    Some(format!(
        "the bandwidth is not determined: leaving out one size moves B = {} MB/s by {:.0}%",
        format_mbps(fit.bandwidth_mb_s),
        shift * 100.0
    ))
}

/// The line through the larger half of the fitted points, when its fixed
/// cost is clearly below half the whole line's.
struct Capped {
    from: u64,
    t0_us: f64,
    t0_se_us: f64,
}

/// A transfer capped by a ceiling (a link slower than the medium) takes
/// max(t0 + n/B, n/L): above the hinge the time is n/L with no fixed cost
/// at all, and the line through all points, bent to pass near both parts,
/// makes up a B that is the link's. Extra costs at middle sizes (garbage
/// collections that small requests pay more often) bend the line the same
/// way. The larger half of the sizes (at least three, from at least six
/// fitted) is fitted alone; when its t0 plus two standard errors is below
/// half the overall t0, the fixed cost is not one figure and the curve is
/// not Hockney's. On a noisy device the large sizes cannot pin t0 down (it
/// is a sliver of their time), the standard error is wide, and this does
/// not fire by chance. The other way (t0 higher at large sizes) is not
/// judged: a read crossing an erase block pays a second command, which
/// moves t0 little where it matters.
fn capped_above(points: &[SizePoint], fit: &ModelFit) -> Option<Capped> {
    let direct = direct_points(points);
    let fitted = &direct[direct.len().saturating_sub(fit.points_used)..];
    if fitted.len() < 6 || fit.t0_us <= 0.0 {
        return None;
    }
    let upper = weighted(&fitted[fitted.len() / 2..]);
    let line = weighted_line(&upper)?;
    let (se, _) = standard_errors(&upper, &line)?;
    let (t0_us, t0_se_us) = (line.intercept / 1e3, se / 1e3);
    (line.slope > 0.0 && t0_us + 2.0 * t0_se_us < 0.5 * fit.t0_us).then(|| Capped {
        from: upper[0].0 as u64,
        t0_us,
        t0_se_us,
    })
}

/// A request size worth using, among those measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// The smallest measured size from which every measured size reaches
    /// [`ADVICE_SHARE`] of the peak.
    pub size: u64,
    /// Measured MB/s at `size`.
    pub mb_per_s: f64,
    /// The peak: the best measured MB/s among the direct points.
    pub peak_mb_s: f64,
    /// `mb_per_s / peak_mb_s`.
    pub share_of_peak: f64,
}

/// The smallest measured direct size from which every larger measured
/// direct size reaches [`ADVICE_SHARE`] of the best measured MB/s.
pub fn advise(points: &[SizePoint]) -> Option<Advice> {
    let mut direct: Vec<&SizePoint> = points
        .iter()
        .filter(|p| !p.buffered && p.mb_per_s.is_finite())
        .collect();
    direct.sort_by_key(|p| p.size);
    let peak = direct.iter().map(|p| p.mb_per_s).reduce(f64::max)?;
    if peak <= 0.0 {
        return None;
    }
    let from = direct
        .iter()
        .rev()
        .take_while(|p| p.mb_per_s >= ADVICE_SHARE * peak)
        .last()?;
    Some(Advice {
        size: from.size,
        mb_per_s: from.mb_per_s,
        peak_mb_s: peak,
        share_of_peak: from.mb_per_s / peak,
    })
}

/// What a curve says: the model, whether it can be trusted, the unit, and
/// the advice (only on a good fit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveReading {
    pub fit: Option<ModelFit>,
    pub quality: FitQuality,
    pub advice: Option<Advice>,
    /// Every request smaller than this costs as much as one of this size.
    pub unit: Option<u64>,
}

/// Reads a curve of direct (and buffered, ignored) points: fits
/// t0 + max(n, U)/B, judges it, and advises a measured size when the fit
/// is good. Pure: the same points give the same reading.
pub fn read_curve(points: &[SizePoint]) -> CurveReading {
    let Some(fit) = fit_unit_model(points) else {
        return CurveReading {
            fit: None,
            quality: FitQuality::poor(NO_FIT),
            advice: None,
            unit: None,
        };
    };
    let quality = judge(&fit, points);
    let advice = quality.is_good().then(|| advise(points)).flatten();
    CurveReading {
        fit: Some(fit),
        quality,
        advice,
        unit: fit.unit_bytes,
    }
}

/// Why there is no model at all.
pub const NO_FIT: &str = "no model: fewer than two direct sizes, or the time per request did not grow with size (small requests costing more than large ones, as with flash garbage collection)";

/// A point far from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deviation {
    pub size: u64,
    /// Measured MB/s over model MB/s.
    pub ratio: f64,
    pub note: String,
}

/// Direct points whose throughput is more than [`DEVIATION_THRESHOLD`] away
/// from the model, with the likeliest reason. `max_transfer` is the
/// kernel's largest request (max_sectors_kb) when known. Sizes where a
/// (poor) model with a negative t0 takes no time at all are left out.
pub fn deviations(
    points: &[SizePoint],
    fit: &ModelFit,
    max_transfer: Option<u64>,
) -> Vec<Deviation> {
    points
        .iter()
        .filter(|p| !p.buffered && fit.time_ns_at(p.size as f64) > 0.0)
        .filter_map(|p| {
            let ratio = p.mb_per_s / fit.mb_per_s_at(p.size as f64);
            ((ratio - 1.0).abs() > DEVIATION_THRESHOLD).then(|| Deviation {
                size: p.size,
                ratio,
                note: deviation_note(p.size, ratio, max_transfer),
            })
        })
        .collect()
}

fn deviation_note(size: u64, ratio: f64, max_transfer: Option<u64>) -> String {
    let direction = if ratio < 1.0 { "slower" } else { "faster" };
    let pct = ((ratio - 1.0).abs() * 100.0).round();
    match max_transfer {
        Some(max) if size > max && ratio < 1.0 => format!(
            "{pct}% {direction} than the model: above the largest transfer the kernel sends ({}), requests are split",
            format_size(max)
        ),
        _ if ratio < 1.0 => format!(
            "{pct}% {direction} than the model: a knee (page size, erase-block size or a controller limit)"
        ),
        _ => format!("{pct}% {direction} than the model: a cache or read-ahead helps at this size"),
    }
}

/// How much slower an unaligned size is than its aligned neighbours imply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignmentPenalty {
    pub size: u64,
    /// Median MB/s over the repetitions.
    pub measured_mb_s: f64,
    /// MB/s interpolated between the aligned neighbours' medians.
    pub expected_mb_s: f64,
    /// expected / measured (medians): 15 means fifteen times slower than
    /// expected. Only a finding when `verdict` says so.
    pub slowdown: f64,
    pub lower_neighbour: u64,
    pub upper_neighbour: u64,
    /// MB/s over the repetitions of the unaligned size. Absent in runs
    /// stored before ranges were compared.
    #[serde(default)]
    pub measured_range: Option<MbRange>,
    /// MB/s the neighbours imply, interpolated from their slowest and their
    /// fastest repetitions alike.
    #[serde(default)]
    pub expected_range: Option<MbRange>,
    /// Whether the ranges say there is a penalty.
    #[serde(default)]
    pub verdict: Option<Penalty>,
}

/// The lowest, median and highest MB/s of a size over its repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MbRange {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// What an unaligned size's repetitions say against its neighbours'.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Penalty {
    /// Every repetition was slower than anything the neighbours imply.
    /// `factor` compares medians, `at_least` the nearest ends of the ranges.
    Slower { factor: f64, at_least: f64 },
    /// The ranges overlap: the difference is within the noise.
    NoPenaltySeen,
    /// Every repetition was faster than anything the neighbours imply.
    Faster { factor: f64, at_least: f64 },
    /// A point measured once has no range to judge by.
    SingleRepetition,
}

/// For each point whose size is not a multiple of `logical_block`, the
/// verdict against the nearest aligned points on both sides. `points` must
/// all have been measured the same way (through the page cache, for an
/// O_DIRECT target's unaligned section). Points without neighbours on both
/// sides get none.
pub fn alignment_penalties(points: &[RangedPoint], logical_block: u64) -> Vec<AlignmentPenalty> {
    let block = logical_block.max(1);
    let aligned: Vec<&RangedPoint> = points
        .iter()
        .filter(|p| p.size.is_multiple_of(block))
        .collect();
    points
        .iter()
        .filter(|p| !p.size.is_multiple_of(block))
        .filter_map(|p| {
            let lower = aligned
                .iter()
                .filter(|a| a.size < p.size)
                .max_by_key(|a| a.size)?;
            let upper = aligned
                .iter()
                .filter(|a| a.size > p.size)
                .min_by_key(|a| a.size)?;
            penalty_between(p, lower, upper)
        })
        .collect()
}

/// The aligned sizes an unaligned size is compared with: the nearest
/// aligned sizes of the sweep below and above it.
pub fn aligned_neighbours(sizes: &[u64], logical_block: u64) -> Vec<u64> {
    let block = logical_block.max(1);
    let aligned: Vec<u64> = sizes
        .iter()
        .copied()
        .filter(|s| s.is_multiple_of(block))
        .collect();
    let mut out: Vec<u64> = Vec::new();
    for &s in sizes.iter().filter(|s| !s.is_multiple_of(block)) {
        let below = aligned.iter().copied().filter(|&a| a < s).max();
        let above = aligned.iter().copied().filter(|&a| a > s).min();
        out.extend(below.into_iter().chain(above));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// A size's time per request over its repetitions, ns: the fastest
/// repetition's, the median and the slowest's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeRange {
    pub min_ns: f64,
    pub median_ns: f64,
    pub max_ns: f64,
    pub repetitions: usize,
}

impl TimeRange {
    /// From the IOPS of the repetitions (median, lowest, highest); `None`
    /// when any is not a positive finite number.
    pub fn from_iops(median: f64, min: f64, max: f64, repetitions: usize) -> Option<TimeRange> {
        let usable = |v: f64| v.is_finite() && v > 0.0;
        (usable(median) && usable(min) && usable(max)).then(|| TimeRange {
            min_ns: 1e9 / max.max(median),
            median_ns: 1e9 / median,
            max_ns: 1e9 / min.min(median),
            repetitions,
        })
    }

    /// MB/s at `size` bytes per request (the slowest time gives the min).
    fn mb_range(&self, size: u64) -> MbRange {
        let n = size as f64;
        MbRange {
            min: n / self.max_ns * 1e3,
            median: n / self.median_ns * 1e3,
            max: n / self.min_ns * 1e3,
        }
    }
}

/// One size measured with its repetitions' spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RangedPoint {
    pub size: u64,
    pub time: TimeRange,
}

/// Time per request expected at `size` between two neighbours: linear in
/// size (the model t0 + n/B is locally linear), end by end, so the slowest
/// repetitions of both give the slowest expectation and the fastest the
/// fastest.
pub fn interpolate(size: u64, lower: &RangedPoint, upper: &RangedPoint) -> Option<TimeRange> {
    if !(lower.size < size && size < upper.size) {
        return None;
    }
    let share = (size - lower.size) as f64 / (upper.size - lower.size) as f64;
    let at = |a: f64, b: f64| a + share * (b - a);
    Some(TimeRange {
        min_ns: at(lower.time.min_ns, upper.time.min_ns),
        median_ns: at(lower.time.median_ns, upper.time.median_ns),
        max_ns: at(lower.time.max_ns, upper.time.max_ns),
        repetitions: lower.time.repetitions.min(upper.time.repetitions),
    })
}

/// The verdict of a measured time range against the expected one: a
/// penalty only when the ranges do not overlap, since any value inside
/// both could be either size's noise.
pub fn judge_penalty(measured: &TimeRange, expected: &TimeRange) -> Penalty {
    if measured.repetitions < 2 || expected.repetitions < 2 {
        return Penalty::SingleRepetition;
    }
    if measured.min_ns > expected.max_ns {
        Penalty::Slower {
            factor: measured.median_ns / expected.median_ns,
            at_least: measured.min_ns / expected.max_ns,
        }
    } else if measured.max_ns < expected.min_ns {
        Penalty::Faster {
            factor: expected.median_ns / measured.median_ns,
            at_least: expected.min_ns / measured.max_ns,
        }
    } else {
        Penalty::NoPenaltySeen
    }
}

fn penalty_between(
    p: &RangedPoint,
    lower: &RangedPoint,
    upper: &RangedPoint,
) -> Option<AlignmentPenalty> {
    let expected = interpolate(p.size, lower, upper)?;
    let measured = p.time.mb_range(p.size);
    let implied = expected.mb_range(p.size);
    Some(AlignmentPenalty {
        size: p.size,
        measured_mb_s: measured.median,
        expected_mb_s: implied.median,
        slowdown: p.time.median_ns / expected.median_ns,
        lower_neighbour: lower.size,
        upper_neighbour: upper.size,
        measured_range: Some(measured),
        expected_range: Some(implied),
        verdict: Some(judge_penalty(&p.time, &expected)),
    })
}

/// Where one curve overtakes another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    pub pattern: String,
    /// Faster below the crossing.
    pub faster_below: String,
    /// Faster above the crossing.
    pub faster_above: String,
    pub between: (u64, u64),
    /// Estimated size of the crossing (log-size interpolation), bytes.
    pub at_bytes: f64,
}

/// Crossovers between two curves of one pattern over the sizes both
/// measured directly.
pub fn crossovers(
    pattern: &str,
    a: (&str, &[SizePoint]),
    b: (&str, &[SizePoint]),
) -> Vec<Crossover> {
    let common: Vec<(u64, f64, f64)> =
        a.1.iter()
            .filter(|p| !p.buffered)
            .filter_map(|pa| {
                b.1.iter()
                    .find(|pb| pb.size == pa.size && !pb.buffered)
                    .map(|pb| (pa.size, pa.mb_per_s, pb.mb_per_s))
            })
            .collect();
    common
        .windows(2)
        .filter_map(|w| {
            let (s0, a0, b0) = w[0];
            let (s1, a1, b1) = w[1];
            let (d0, d1) = (a0 - b0, a1 - b1);
            if d0 == 0.0 || d1 == 0.0 || (d0 > 0.0) == (d1 > 0.0) {
                return None;
            }
            let share = d0 / (d0 - d1);
            let at =
                ((s0 as f64).log2() + share * ((s1 as f64).log2() - (s0 as f64).log2())).exp2();
            let (below, above) = if d0 > 0.0 { (a.0, b.0) } else { (b.0, a.0) };
            Some(Crossover {
                pattern: pattern.to_string(),
                faster_below: below.to_string(),
                faster_above: above.to_string(),
                between: (s0, s1),
                at_bytes: at,
            })
        })
        .collect()
}

/// What the link says about the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CeilingVerdict {
    pub interface: String,
    pub limit_mb_s: f64,
    /// The plateau sits at the link's ceiling: the link, not the medium,
    /// limits this curve.
    pub plateau_is_interface: bool,
    /// Sizes whose MB/s exceed the ceiling: a cache answered.
    pub impossible: Vec<(u64, f64)>,
}

/// Judges a curve against the link's practical ceiling, when one is known.
pub fn ceiling_verdict(
    points: &[SizePoint],
    interface: Option<&Interface>,
) -> Option<CeilingVerdict> {
    let interface = interface?;
    let limit = interface.practical_limit_mb_s?;
    let best = points.iter().map(|p| p.mb_per_s).fold(0.0, f64::max);
    let impossible = points
        .iter()
        .filter(|p| p.mb_per_s > limit * IMPOSSIBLE_MARGIN)
        .map(|p| (p.size, p.mb_per_s))
        .collect();
    Some(CeilingVerdict {
        interface: interface.description.clone(),
        limit_mb_s: limit,
        plateau_is_interface: best >= limit * PLATEAU_SHARE && best <= limit * IMPOSSIBLE_MARGIN,
        impossible,
    })
}

/// One line a person can act on: the advice, or that there is none and
/// why. `pattern` is how the pattern reads in a sentence ("random write").
pub fn recommendation(reading: &CurveReading, pattern: &str) -> String {
    match (&reading.advice, &reading.fit, &reading.quality) {
        (Some(a), Some(fit), _) => format!(
            "use requests of at least {}: from there up every measured size reaches {:.0}% of the best measured {pattern} speed ({} of {} MB/s, {:.1}%); fixed cost {:.1} µs per request, B = {} MB/s",
            format_size(a.size),
            ADVICE_SHARE * 100.0,
            format_mbps(a.mb_per_s),
            format_mbps(a.peak_mb_s),
            a.share_of_peak * 100.0,
            fit.t0_us,
            format_mbps(fit.bandwidth_mb_s)
        ),
        (_, _, FitQuality::Poor { reason, also }) if also.is_empty() => {
            format!("no advice: {reason}")
        }
        (_, _, FitQuality::Poor { reason, also }) => format!(
            "no advice: {reason} (and {} more check{} failed)",
            also.len(),
            if also.len() == 1 { "" } else { "s" }
        ),
        _ => "no advice: no measured size could be named".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn model_points(t0_ns: f64, bw_bytes_per_ns: f64, noise: &[f64]) -> Vec<SizePoint> {
        (9..=24)
            .zip(noise.iter().cycle())
            .map(|(k, e)| {
                let n = (1u64 << k) as f64;
                let t = (t0_ns + n / bw_bytes_per_ns) * (1.0 + e);
                SizePoint {
                    size: 1 << k,
                    time_per_op_ns: t,
                    mb_per_s: n / t * 1e3,
                    buffered: false,
                }
            })
            .collect()
    }

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

    /// Points of t(n) = t0 + max(n, unit)/B from 512 B to 16 MiB, times
    /// scaled by 1 + noise (cycled).
    fn unit_points(t0_ns: f64, bw_bytes_per_ns: f64, unit: u64, noise: &[f64]) -> Vec<SizePoint> {
        (9..=24)
            .zip(noise.iter().cycle())
            .map(|(k, e)| {
                let n = 1u64 << k;
                let t = (t0_ns + n.max(unit) as f64 / bw_bytes_per_ns) * (1.0 + e);
                SizePoint {
                    size: n,
                    time_per_op_ns: t,
                    mb_per_s: n as f64 / t * 1e3,
                    buffered: false,
                }
            })
            .collect()
    }

    #[test]
    fn a_card_whose_page_is_64_kib_has_a_64_kib_unit_and_is_advised_64_kib() {
        // The card of issue 14: 50 µs per command, 4 MB/s, 64 KiB pages.
        // The plain line made t0 12.9 ms, B above every point and advised
        // 1 MiB; 64 KiB already gives 99.7% of the peak.
        let r = read_curve(&unit_points(50_000.0, 0.004, 64 << 10, &[0.0]));
        let fit = r.fit.unwrap();
        assert_eq!(r.unit, Some(64 << 10));
        assert!((fit.t0_us - 50.0).abs() < 1e-6, "{fit:?}");
        assert!((fit.bandwidth_mb_s - 4.0).abs() < 1e-9, "{fit:?}");
        assert_eq!(fit.points_used, 9);
        assert!(fit.max_relative_error < 1e-9);
        assert_eq!(r.quality, FitQuality::Good);
        let advice = r.advice.unwrap();
        assert_eq!(advice.size, 64 << 10);
        assert!((advice.share_of_peak - 0.997).abs() < 0.001, "{advice:?}");
        let line = recommendation(&r, "sequential write");
        assert!(
            line.starts_with("use requests of at least 64 KiB"),
            "{line}"
        );
        // The model is flat below the unit: half of B at half the unit.
        assert!((fit.n_half_bytes - 0.5 * (50e-6 * 4e6 + 65536.0)).abs() < 1e-6);
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

    #[test]
    fn a_sweep_that_stops_before_the_plateau_gets_no_advice() {
        // n½ = 1 ms · 1 GB/s = 1 MB, the sweep stops at 256 KiB.
        let pts: Vec<SizePoint> = model_points(1_000_000.0, 1.0, &[0.0])
            .into_iter()
            .filter(|p| p.size <= 256 << 10)
            .collect();
        let r = read_curve(&pts);
        assert!(r.fit.is_some());
        let FitQuality::Poor { reason, .. } = &r.quality else {
            panic!("{:?}", r.quality)
        };
        assert!(reason.contains("did not reach the plateau"), "{reason}");
        assert!(r.advice.is_none());
        let line = recommendation(&r, "random read");
        assert!(line.starts_with("no advice: B = "), "{line}");
    }

    #[test]
    fn the_judgement_names_each_failed_check() {
        let good = read_curve(&unit_points(50_000.0, 0.004, 64 << 10, &[0.0]))
            .fit
            .unwrap();
        assert_eq!(judge(&good, &[]), FitQuality::Good);
        let poor = |f: ModelFit| match judge(&f, &[]) {
            FitQuality::Poor { reason, .. } => reason,
            FitQuality::Good => panic!("{f:?} judged good"),
        };
        let few = ModelFit {
            points_used: 2,
            t0_se_us: None,
            bandwidth_se_mb_s: None,
            ..good
        };
        assert!(poor(few).contains("only 2 measured sizes at or above the 64 KiB unit"));
        assert!(
            poor(ModelFit {
                t0_us: -3.0,
                ..good
            })
            .contains("not above zero")
        );
        assert!(
            poor(ModelFit {
                t0_se_us: Some(5.0),
                ..good
            })
            .contains("t0 = 50.0 ± 5.0 µs")
        );
        assert!(
            poor(ModelFit {
                bandwidth_se_mb_s: Some(0.2),
                ..good
            })
            .contains("B = 4.00 ± 0.200 MB/s")
        );
        assert!(
            poor(ModelFit {
                r_squared: 0.9,
                ..good
            })
            .contains("R² is 0.900")
        );
        assert!(
            poor(ModelFit {
                max_relative_error: 0.4,
                ..good
            })
            .contains("a point is 40% off")
        );
        let above = ModelFit {
            best_measured_mb_s: Some(3.0),
            ..good
        };
        assert!(poor(above).contains("33% above the best measured 3.00 MB/s"));
        // The most basic failure first, the others after it.
        let both = ModelFit {
            points_used: 2,
            t0_us: -1.0,
            ..good
        };
        let FitQuality::Poor { reason, also } = judge(&both, &[]) else {
            panic!()
        };
        assert!(reason.starts_with("only 2"), "{reason}");
        assert_eq!(also.len(), 1, "{also:?}");
    }

    #[test]
    fn advice_is_the_smallest_size_from_which_every_size_reaches_ninety_percent() {
        let p = |size: u64, mbps: f64| SizePoint {
            size,
            time_per_op_ns: size as f64 / mbps * 1e3,
            mb_per_s: mbps,
            buffered: false,
        };
        // 64 KiB reaches 92% once, but 128 KiB falls back to 80%.
        let pts = [
            p(4096, 2.0),
            p(65536, 9.2),
            p(131072, 8.0),
            p(262144, 9.5),
            p(524288, 10.0),
        ];
        let a = advise(&pts).unwrap();
        assert_eq!((a.size, a.peak_mb_s), (262144, 10.0));
        assert!((a.share_of_peak - 0.95).abs() < 1e-12);
        // Buffered points are neither advised nor the peak.
        let mut with_buffered = pts.to_vec();
        with_buffered.push(SizePoint {
            buffered: true,
            ..p(1536, 50.0)
        });
        assert_eq!(advise(&with_buffered), Some(a));
        assert!(advise(&[]).is_none());
    }

    #[test]
    fn old_fits_and_qualities_load() {
        let old: ModelFit = serde_json::from_str(
            r#"{"t0_us":200.0,"bandwidth_mb_s":20.0,"n_half_bytes":4000.0,"n90_bytes":36000.0,"r_squared":0.99,"max_relative_error":0.01,"points_used":16}"#,
        )
        .unwrap();
        assert_eq!(old.unit_bytes, None);
        assert!((old.mb_per_s_at(4000.0) - 10.0).abs() < 1e-9);
        let q = serde_json::to_value(FitQuality::poor("why")).unwrap();
        assert_eq!(q, serde_json::json!({"verdict": "poor", "reason": "why"}));
        assert_eq!(
            serde_json::to_value(FitQuality::Good).unwrap(),
            serde_json::json!({"verdict": "good"})
        );
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

        #[test]
        fn advice_only_names_a_measured_size(
            t0_us in 1.0f64..5000.0,
            bw_mb_s in 1.0f64..3000.0,
            log2_unit in 9u32..24,
            noise in prop::collection::vec(-0.2f64..0.2, 16),
            keep in prop::collection::vec(any::<bool>(), 16),
        ) {
            let pts: Vec<SizePoint> = unit_points(t0_us * 1e3, bw_mb_s * 1e-3, 1 << log2_unit, &noise)
                .into_iter()
                .zip(keep)
                .filter_map(|(p, k)| k.then_some(p))
                .collect();
            let r = read_curve(&pts);
            if let Some(a) = r.advice {
                prop_assert!(r.quality.is_good());
                prop_assert!(pts.iter().any(|p| p.size == a.size));
            }
            if let Some(u) = r.unit {
                let sizes = || pts.iter().map(|p| p.size);
                prop_assert!(sizes().min().unwrap() < u && u <= sizes().max().unwrap());
            }
        }
    }

    #[test]
    fn a_knee_is_reported_as_a_deviation() {
        let mut pts = model_points(100_000.0, 0.05, &[0.0]);
        let i = pts.iter().position(|p| p.size == 1 << 20).unwrap();
        pts[i].time_per_op_ns *= 3.0;
        pts[i].mb_per_s /= 3.0;
        let fit = fit_model(&pts).unwrap();
        let devs = deviations(&pts, &fit, Some(512 << 10));
        assert!(
            devs.iter()
                .any(|d| d.size == 1 << 20 && d.ratio < 0.5 && d.note.contains("largest transfer")),
            "{devs:?}"
        );
    }

    #[test]
    fn crossovers_are_found_between_sizes() {
        let p = |size: u64, mbps: f64| SizePoint {
            size,
            time_per_op_ns: size as f64 / mbps * 1e3,
            mb_per_s: mbps,
            buffered: false,
        };
        let cf = [p(512, 2.0), p(4096, 10.0), p(65536, 20.0), p(1 << 20, 25.0)];
        let hd = [p(512, 0.1), p(4096, 0.8), p(65536, 12.0), p(1 << 20, 60.0)];
        let x = crossovers("randread", ("cf", &cf), ("hd", &hd));
        assert_eq!(x.len(), 1);
        assert_eq!(x[0].between, (65536, 1 << 20));
        assert_eq!(
            (x[0].faster_below.as_str(), x[0].faster_above.as_str()),
            ("cf", "hd")
        );
        assert!(x[0].at_bytes > 65536.0 && x[0].at_bytes < (1 << 20) as f64);
    }

    #[test]
    fn figures_above_the_link_are_impossible() {
        let usb2 = Interface {
            kind: "usb".into(),
            description: "USB 2.0".into(),
            link_mbit_s: Some(480.0),
            practical_limit_mb_s: Some(40.0),
        };
        let p = |size: u64, mbps: f64| SizePoint {
            size,
            time_per_op_ns: 1.0,
            mb_per_s: mbps,
            buffered: false,
        };
        let v = ceiling_verdict(&[p(4096, 10.0), p(1 << 20, 38.0)], Some(&usb2)).unwrap();
        assert!(v.plateau_is_interface && v.impossible.is_empty());
        let v = ceiling_verdict(&[p(4096, 10.0), p(1 << 20, 500.0)], Some(&usb2)).unwrap();
        assert_eq!(v.impossible, vec![(1 << 20, 500.0)]);
        assert!(!v.plateau_is_interface);
    }
}

#[cfg(test)]
mod alignment_tests {
    use super::*;
    use proptest::prelude::*;

    fn point(size: u64, min_ns: f64, median_ns: f64, max_ns: f64, reps: usize) -> RangedPoint {
        RangedPoint {
            size,
            time: TimeRange {
                min_ns,
                median_ns,
                max_ns,
                repetitions: reps,
            },
        }
    }

    #[test]
    fn an_unaligned_size_far_outside_its_neighbours_is_slower() {
        let pts = [
            point(512, 900.0, 1000.0, 1100.0, 3),
            point(768, 29000.0, 30000.0, 31000.0, 3),
            point(1024, 1400.0, 1500.0, 1600.0, 3),
        ];
        let pen = alignment_penalties(&pts, 512);
        assert_eq!(pen.len(), 1);
        assert_eq!(
            (pen[0].lower_neighbour, pen[0].upper_neighbour),
            (512, 1024)
        );
        // Expected 1250 ns (1150–1350) for 768 B, measured 30000 ns.
        assert!((pen[0].slowdown - 24.0).abs() < 1e-9, "{pen:?}");
        match pen[0].verdict {
            Some(Penalty::Slower { factor, at_least }) => {
                assert!((factor - 24.0).abs() < 1e-9);
                assert!((at_least - 29000.0 / 1350.0).abs() < 1e-9);
            }
            other => panic!("{other:?}"),
        }
        let r = pen[0].expected_range.unwrap();
        assert!(r.min < r.median && r.median < r.max, "{r:?}");
    }

    #[test]
    fn a_small_difference_inside_the_noise_is_no_penalty() {
        // 1636 B at 1.02× the interpolation, well inside its neighbours'
        // spread: the noise the old report called "1.0× faster".
        let pts = [
            point(1536, 1400.0, 1500.0, 1700.0, 3),
            point(1636, 1500.0, 1560.0, 1650.0, 3),
            point(2048, 1800.0, 1900.0, 2100.0, 3),
        ];
        let pen = alignment_penalties(&pts, 512);
        assert_eq!(pen[0].verdict, Some(Penalty::NoPenaltySeen), "{pen:?}");
    }

    #[test]
    fn one_repetition_is_not_judged() {
        let pts = [
            point(512, 1000.0, 1000.0, 1000.0, 1),
            point(768, 9000.0, 9000.0, 9000.0, 1),
            point(1024, 1500.0, 1500.0, 1500.0, 1),
        ];
        let pen = alignment_penalties(&pts, 512);
        assert_eq!(pen[0].verdict, Some(Penalty::SingleRepetition));
    }

    #[test]
    fn neighbours_are_the_nearest_aligned_sizes() {
        assert_eq!(
            aligned_neighbours(&[512, 768, 1280, 1636, 4096, 65536], 512),
            vec![512, 4096]
        );
        assert_eq!(
            aligned_neighbours(&[512, 768, 1024, 1536, 2048, 4096], 512),
            vec![512, 1024]
        );
        // A zero block (never a real device) neither panics nor invents any.
        assert!(aligned_neighbours(&[512, 768], 0).is_empty());
        assert!(TimeRange::from_iops(0.0, 0.0, 1.0, 3).is_none());
    }

    fn range() -> impl Strategy<Value = TimeRange> {
        (1.0f64..1e7, 0.0f64..1.0, 0.0f64..1.0, 2usize..6).prop_map(|(lo, a, b, n)| {
            let (mid, hi) = (lo * (1.0 + a), lo * (1.0 + a) * (1.0 + b));
            TimeRange {
                min_ns: lo,
                median_ns: mid,
                max_ns: hi,
                repetitions: n,
            }
        })
    }

    proptest! {
        #[test]
        fn overlapping_ranges_never_give_a_penalty(m in range(), e in range()) {
            let overlap = m.min_ns <= e.max_ns && e.min_ns <= m.max_ns;
            let verdict = judge_penalty(&m, &e);
            prop_assert_eq!(overlap, verdict == Penalty::NoPenaltySeen, "{:?}", verdict);
        }

        #[test]
        fn scaling_every_time_leaves_the_verdict_unchanged(
            m in range(), e in range(), k in 0.001f64..1000.0,
        ) {
            let scale = |r: TimeRange| TimeRange {
                min_ns: r.min_ns * k,
                median_ns: r.median_ns * k,
                max_ns: r.max_ns * k,
                ..r
            };
            let same = |a: Penalty, b: Penalty| match (a, b) {
                (Penalty::Slower { factor: x, .. }, Penalty::Slower { factor: y, .. })
                | (Penalty::Faster { factor: x, .. }, Penalty::Faster { factor: y, .. }) => {
                    (x / y - 1.0).abs() < 1e-9
                }
                (a, b) => a == b,
            };
            let before = judge_penalty(&m, &e);
            let after = judge_penalty(&scale(m), &scale(e));
            // Scaling can move an end by one rounding step; only a tie at
            // the boundary could flip, so ties are left out.
            prop_assume!((m.min_ns - e.max_ns).abs() > 1e-6 * m.min_ns);
            prop_assume!((m.max_ns - e.min_ns).abs() > 1e-6 * m.max_ns);
            prop_assert!(same(before, after), "{:?} vs {:?}", before, after);
        }

        #[test]
        fn a_penalty_factor_is_above_one_and_never_below_its_bound(m in range(), e in range()) {
            match judge_penalty(&m, &e) {
                Penalty::Slower { factor, at_least } | Penalty::Faster { factor, at_least } => {
                    prop_assert!(at_least > 1.0 && factor >= at_least * (1.0 - 1e-12));
                }
                Penalty::NoPenaltySeen | Penalty::SingleRepetition => {}
            }
        }

        #[test]
        fn the_interpolation_lies_between_the_neighbours(
            a in range(), b in range(), lo in 1u64..1 << 20, gap in 2u64..1 << 20, at in 0.0f64..1.0,
        ) {
            let hi = lo + gap;
            let size = (lo + 1 + ((gap - 2) as f64 * at) as u64).min(hi - 1);
            let e = interpolate(size, &RangedPoint { size: lo, time: a }, &RangedPoint { size: hi, time: b }).unwrap();
            prop_assert!(e.min_ns <= e.median_ns * (1.0 + 1e-12) && e.median_ns <= e.max_ns * (1.0 + 1e-12));
            prop_assert!(e.min_ns >= a.min_ns.min(b.min_ns) * (1.0 - 1e-12));
            prop_assert!(e.max_ns <= a.max_ns.max(b.max_ns) * (1.0 + 1e-12));
        }
    }
}
