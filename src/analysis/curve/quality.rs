//! Whether a fitted model can be trusted ([`FitQuality`]), and which
//! measured points lie far from it ([`Deviation`]). The checks and their
//! limits are listed, with how they were set, in [the curve
//! module](super); a failed check is told with its figures, most basic
//! first.

use super::fit::{SizePoint, direct_points, standard_errors, weighted};
use crate::result::curve::{Deviation, DeviationCause, FitQuality, FitReason, ModelFit};
use crate::stats::fit::weighted_line;

/// A point beyond this share away from the model is reported.
pub const DEVIATION_THRESHOLD: f64 = 0.25;
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

/// Judges a fit (see [the curve module](super) for the checks). Failed
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
fn too_few_points(fit: &ModelFit) -> Option<FitReason> {
    (fit.points_used < MIN_POINTS_FROM_UNIT).then_some(FitReason::TooFewPoints {
        measured: fit.points_used,
        needed: MIN_POINTS_FROM_UNIT,
        from_unit_bytes: fit.unit_bytes,
    })
}

/// One point lies too far from the fitted line.
fn point_off_the_model(fit: &ModelFit) -> Option<FitReason> {
    (fit.max_relative_error > MAX_POINT_ERROR).then_some(FitReason::PointOffModel {
        off_pct: fit.max_relative_error * 100.0,
        allowed_pct: MAX_POINT_ERROR * 100.0,
    })
}

/// The line explains too little of the curve as a whole.
fn r_squared_too_low(fit: &ModelFit) -> Option<FitReason> {
    (fit.r_squared < MIN_R_SQUARED).then_some(FitReason::RSquaredLow {
        r_squared: fit.r_squared,
        min: MIN_R_SQUARED,
    })
}

/// The fitted bandwidth is well above anything measured: the sweep stopped
/// before the plateau.
fn plateau_not_reached(fit: &ModelFit) -> Option<FitReason> {
    let best = fit
        .best_measured_mb_s
        .filter(|b| fit.bandwidth_mb_s > b * (1.0 + MAX_B_ABOVE_BEST))?;
    Some(FitReason::PlateauNotReached {
        bandwidth_mb_per_s: fit.bandwidth_mb_s,
        best_mb_per_s: best,
    })
}

/// The larger sizes follow a line with a clearly smaller fixed cost.
fn fixed_cost_capped(fit: &ModelFit, points: &[SizePoint]) -> Option<FitReason> {
    let c = capped_above(points, fit)?;
    Some(FitReason::FixedCostCapped {
        from_bytes: c.from,
        t0_s: c.t0_us * 1e-6,
        t0_se_s: c.t0_se_us * 1e-6,
        overall_t0_s: fit.t0_us * 1e-6,
    })
}

/// The fixed cost is not above zero, or its error or its sensitivity to
/// one left-out size is too large; only the most basic of these is told.
fn fixed_cost_undetermined(fit: &ModelFit) -> Option<FitReason> {
    let t0_s = fit.t0_us * 1e-6;
    if fit.t0_us <= 0.0 {
        return Some(FitReason::FixedCostNotPositive { t0_s });
    }
    if let Some(se) = fit
        .t0_se_us
        .filter(|se| *se > MAX_T0_RELATIVE_SE * fit.t0_us)
    {
        return Some(FitReason::FixedCostUncertain {
            t0_s,
            se_s: se * 1e-6,
        });
    }
    let shift = fit.t0_sensitivity.filter(|s| *s > MAX_T0_SENSITIVITY)?;
    Some(FitReason::FixedCostSensitive {
        t0_s,
        shift_pct: shift * 100.0,
    })
}

/// The bandwidth's error or its sensitivity to one left-out size is too
/// large; only the first is told when both are.
fn bandwidth_undetermined(fit: &ModelFit) -> Option<FitReason> {
    if let Some(se) = fit
        .bandwidth_se_mb_s
        .filter(|se| *se > MAX_B_RELATIVE_SE * fit.bandwidth_mb_s)
    {
        return Some(FitReason::BandwidthUncertain {
            bandwidth_mb_per_s: fit.bandwidth_mb_s,
            se_mb_per_s: se,
        });
    }
    let shift = fit
        .bandwidth_sensitivity
        .filter(|s| *s > MAX_B_SENSITIVITY)?;
    Some(FitReason::BandwidthSensitive {
        bandwidth_mb_per_s: fit.bandwidth_mb_s,
        shift_pct: shift * 100.0,
    })
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

/// Direct points whose throughput is more than [`DEVIATION_THRESHOLD`] away
/// from the model, with a reason only where the data shows one. `max_transfer`
/// is the kernel's largest request (max_sectors_kb) when known. Sizes where a
/// (poor) model with a negative t0 takes no time at all are left out.
///
/// A knee (page, erase block, controller limit) changes the cost of every
/// larger request, so a slower point is called one only when every larger
/// point is slower too; a cache or read-ahead helps a range of sizes, so a
/// faster point is credited to one only when a neighbour is faster as well.
/// One point off the line with its neighbours on it is stated as such, with
/// no cause: hardware does not explain a lone outlier, noise can.
pub fn deviations(
    points: &[SizePoint],
    fit: &ModelFit,
    max_transfer: Option<u64>,
) -> Vec<Deviation> {
    let mut judged: Vec<&SizePoint> = points
        .iter()
        .filter(|p| !p.buffered && fit.time_ns_at(p.size as f64) > 0.0)
        .collect();
    judged.sort_by_key(|p| p.size);
    let ratios: Vec<f64> = judged
        .iter()
        .map(|p| p.mb_per_s / fit.mb_per_s_at(p.size as f64))
        .collect();
    (0..judged.len())
        .filter(|&i| (ratios[i] - 1.0).abs() > DEVIATION_THRESHOLD)
        .map(|i| Deviation {
            size: judged[i].size,
            ratio: ratios[i],
            cause: deviation_cause(judged[i].size, &ratios, i, max_transfer),
        })
        .collect()
}

/// Whether point `i` of `ratios` is off the model in a shape a cause
/// explains (see [`deviations`]).
fn shape_of(ratios: &[f64], i: usize) -> Shape {
    let off = |r: f64, slower: bool| match slower {
        true => r < 1.0 - DEVIATION_THRESHOLD / 2.0,
        false => r > 1.0 + DEVIATION_THRESHOLD / 2.0,
    };
    let slower = ratios[i] < 1.0;
    let later = &ratios[i + 1..];
    let neighbour = |j: Option<usize>| {
        j.and_then(|j| ratios.get(j))
            .is_some_and(|&r| off(r, slower))
    };
    match slower {
        true if !later.is_empty() && later.iter().all(|&r| off(r, true)) => Shape::Persistent,
        false if neighbour(i.checked_sub(1)) || neighbour(Some(i + 1)) => Shape::Persistent,
        _ => Shape::Lone,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// The deviation continues over the sizes a cause would affect.
    Persistent,
    /// The point alone is off; its neighbours fit the model.
    Lone,
}

fn deviation_cause(
    size: u64,
    ratios: &[f64],
    i: usize,
    max_transfer: Option<u64>,
) -> DeviationCause {
    let ratio = ratios[i];
    match (max_transfer, shape_of(ratios, i)) {
        (Some(max), _) if size > max && ratio < 1.0 => DeviationCause::SplitAboveMaxTransfer {
            max_transfer_bytes: max,
        },
        (_, Shape::Lone) => DeviationCause::Lone,
        _ if ratio < 1.0 => DeviationCause::Knee,
        _ => DeviationCause::CacheHelps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::curve::test_points::{
        knee_deviations, model_points, short_sweep, unit_points,
    };
    use crate::analysis::curve::{fit_model, read_curve};

    #[test]
    fn a_sweep_that_stops_before_the_plateau_gets_no_advice() {
        let pts = short_sweep();
        let r = read_curve(&pts);
        assert!(r.fit.is_some());
        let FitQuality::Poor { reason, .. } = &r.quality else {
            panic!("{:?}", r.quality)
        };
        assert!(
            matches!(reason, FitReason::PlateauNotReached { .. }),
            "{reason:?}"
        );
        assert!(r.advice.is_none());
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
        assert_eq!(
            poor(few),
            FitReason::TooFewPoints {
                measured: 2,
                needed: 3,
                from_unit_bytes: Some(64 << 10)
            }
        );
        assert!(matches!(
            poor(ModelFit { t0_us: -3.0, ..good }),
            FitReason::FixedCostNotPositive { t0_s } if t0_s < 0.0
        ));
        assert!(matches!(
            poor(ModelFit { t0_se_us: Some(5.0), ..good }),
            FitReason::FixedCostUncertain { t0_s, se_s }
                if (t0_s - 50e-6).abs() < 1e-12 && (se_s - 5e-6).abs() < 1e-12
        ));
        assert!(matches!(
            poor(ModelFit { bandwidth_se_mb_s: Some(0.2), ..good }),
            FitReason::BandwidthUncertain { se_mb_per_s, .. } if se_mb_per_s == 0.2
        ));
        assert!(matches!(
            poor(ModelFit { r_squared: 0.9, ..good }),
            FitReason::RSquaredLow { r_squared, .. } if r_squared == 0.9
        ));
        assert!(matches!(
            poor(ModelFit { max_relative_error: 0.4, ..good }),
            FitReason::PointOffModel { off_pct, .. } if (off_pct - 40.0).abs() < 1e-9
        ));
        let above = ModelFit {
            best_measured_mb_s: Some(3.0),
            ..good
        };
        assert!(matches!(
            poor(above),
            FitReason::PlateauNotReached { best_mb_per_s, .. } if best_mb_per_s == 3.0
        ));
        // The most basic failure first, the others after it.
        let both = ModelFit {
            points_used: 2,
            t0_us: -1.0,
            ..good
        };
        let FitQuality::Poor { reason, also } = judge(&both, &[]) else {
            panic!()
        };
        assert!(
            matches!(reason, FitReason::TooFewPoints { .. }),
            "{reason:?}"
        );
        assert_eq!(also.len(), 1, "{also:?}");
    }

    #[test]
    fn a_knee_is_reported_as_a_deviation() {
        let devs = knee_deviations();
        assert!(
            devs.iter().any(|d| d.size == 1 << 20
                && d.ratio < 0.5
                && d.cause
                    == DeviationCause::SplitAboveMaxTransfer {
                        max_transfer_bytes: 512 << 10
                    }),
            "{devs:?}"
        );
    }

    #[test]
    fn a_cause_is_named_only_where_the_data_shows_its_shape() {
        let model = model_points(100_000.0, 0.05, &[0.0]);
        let at = |pts: &[SizePoint], size: u64| pts.iter().position(|p| p.size == size).unwrap();
        let slow = |p: &mut SizePoint, by: f64| {
            p.time_per_op_ns *= by;
            p.mb_per_s /= by;
        };
        // One point slower, its neighbours on the line: no cause.
        let mut lone = model.clone();
        let i = at(&lone, 64 << 10);
        slow(&mut lone[i], 3.0);
        let fit = fit_model(&lone).unwrap();
        let devs = deviations(&lone, &fit, None);
        let d = devs
            .iter()
            .find(|d| d.size == 64 << 10)
            .expect("the lone dip");
        assert_eq!(d.cause, DeviationCause::Lone);
        // Every size from 64 KiB on slower: a knee.
        let mut knee = model.clone();
        let from = at(&knee, 64 << 10);
        knee[from..].iter_mut().for_each(|p| slow(p, 2.0));
        let fit = fit_model(&model).unwrap();
        let devs = deviations(&knee, &fit, None);
        let d = devs.iter().find(|d| d.size == 64 << 10).expect("the knee");
        assert_eq!(d.cause, DeviationCause::Knee);
    }
}
