//! The words of a curve's reading: why a fit is poor, what a point off the
//! model suggests, and the advice, made here from the typed result so that
//! the text, HTML and summary lines say the same thing. Runs of earlier
//! releases stored these as words; those are shown as stored.

use crate::analysis::curve::ADVICE_SHARE;
use crate::result::CurveSeries;
use crate::result::curve::{Deviation, DeviationCause, FitQuality, FitReason};
use crate::units::{format_mbps, format_size};
use crate::vocab::Rw;

/// How a pattern reads in a sentence ("random write").
pub fn pattern_words(rw: Rw) -> &'static str {
    match rw.name() {
        "read" => "sequential read",
        "write" => "sequential write",
        "randread" => "random read",
        "randwrite" => "random write",
        other => other,
    }
}

/// Why a fit cannot be trusted, with its figures.
pub fn fit_reason(r: &FitReason) -> String {
    match r {
        FitReason::NoModel => "no model: fewer than two direct sizes, or the time per request did not grow with size (small requests costing more than large ones, as with flash garbage collection)".into(),
        FitReason::TooFewPoints { measured, needed, from_unit_bytes } => {
            let from = from_unit_bytes.map_or("the smallest size".to_string(), |u| {
                format!("the {} unit", format_size(u))
            });
            format!("only {measured} measured sizes at or above {from}; a line needs {needed} to be judged")
        }
        FitReason::PointOffModel { off_pct, allowed_pct } => format!(
            "the curve does not follow the model: a point is {off_pct:.0}% off it (at most {allowed_pct:.0}% allowed)"
        ),
        FitReason::RSquaredLow { r_squared, min } => format!(
            "the curve does not follow the model: weighted R² is {r_squared:.3}, below {min}"
        ),
        FitReason::PlateauNotReached { bandwidth_mb_per_s, best_mb_per_s } => format!(
            "B = {} MB/s is {:.0}% above the best measured {} MB/s: the sweep did not reach the plateau the model assumes",
            format_mbps(*bandwidth_mb_per_s),
            (bandwidth_mb_per_s / best_mb_per_s - 1.0) * 100.0,
            format_mbps(*best_mb_per_s)
        ),
        FitReason::FixedCostCapped { from_bytes, t0_s, t0_se_s, overall_t0_s } => format!(
            "the fixed cost is not the same along the curve: from {} up t0 = {:.1} ± {:.1} µs, against {:.1} µs over all sizes (a ceiling such as a slow link capping large transfers, or extra costs at middle sizes)",
            format_size(*from_bytes),
            t0_s * 1e6,
            t0_se_s * 1e6,
            overall_t0_s * 1e6
        ),
        _ => fit_reason_figure(r),
    }
}

/// The reasons about a figure that is not determined.
fn fit_reason_figure(r: &FitReason) -> String {
    match r {
        FitReason::FixedCostNotPositive { t0_s } => format!(
            "the fixed cost came out at {:.1} µs, not above zero: the time per request does not grow as t0 + n/B",
            t0_s * 1e6
        ),
        FitReason::FixedCostUncertain { t0_s, se_s } => format!(
            "the fixed cost is not determined: t0 = {:.1} ± {:.1} µs",
            t0_s * 1e6,
            se_s * 1e6
        ),
        FitReason::FixedCostSensitive { t0_s, shift_pct } => format!(
            "the fixed cost is not determined: leaving out one size moves t0 = {:.1} µs by {shift_pct:.0}%",
            t0_s * 1e6
        ),
        FitReason::BandwidthUncertain {
            bandwidth_mb_per_s,
            se_mb_per_s,
        } => format!(
            "the bandwidth is not determined: B = {} ± {} MB/s",
            format_mbps(*bandwidth_mb_per_s),
            format_mbps(*se_mb_per_s)
        ),
        FitReason::BandwidthSensitive {
            bandwidth_mb_per_s,
            shift_pct,
        } => format!(
            "the bandwidth is not determined: leaving out one size moves B = {} MB/s by {shift_pct:.0}%",
            format_mbps(*bandwidth_mb_per_s)
        ),
        FitReason::Stored(words) => words.clone(),
        _ => fit_reason(r),
    }
}

/// What a point off the model suggests, with how far off it is.
pub fn deviation(d: &Deviation) -> String {
    let direction = if d.ratio < 1.0 { "slower" } else { "faster" };
    let pct = ((d.ratio - 1.0).abs() * 100.0).round();
    match &d.cause {
        DeviationCause::SplitAboveMaxTransfer { max_transfer_bytes } => format!(
            "{pct}% {direction} than the model: above the largest transfer the kernel sends ({}), requests are split",
            format_size(*max_transfer_bytes)
        ),
        DeviationCause::Lone => format!(
            "{pct}% {direction} than the model at this size alone (its neighbours fit): no cause is evident; repeat with a longer --time to confirm it"
        ),
        DeviationCause::Knee => format!(
            "{pct}% {direction} than the model from this size on: a knee (page size, erase-block size or a controller limit)"
        ),
        DeviationCause::CacheHelps => format!(
            "{pct}% {direction} than the model over neighbouring sizes: a cache or read-ahead helps here"
        ),
        DeviationCause::Stored(words) => words.clone(),
    }
}

/// What the advice line says.
#[derive(Debug, Clone, PartialEq)]
pub enum AdviceWords {
    /// A size worth using, in a sentence with its figures.
    Use(String),
    /// No advice, and why (without "no advice: ").
    None(String),
}

/// The advice of a series in words: from its typed reading, or as a run of
/// an earlier release stored it (before fits were judged). `None` when the
/// series has neither (not measured).
pub fn advice(s: &CurveSeries) -> Option<AdviceWords> {
    let Some(quality) = &s.fit_quality else {
        return s
            .recommendation
            .as_ref()
            .map(|line| match line.strip_prefix("no advice: ") {
                Some(why) => AdviceWords::None(why.to_string()),
                None => AdviceWords::Use(line.clone()),
            });
    };
    Some(match (&s.advice, &s.model, quality) {
        (Some(a), Some(fit), _) => AdviceWords::Use(format!(
            "use requests of at least {}: from there up every measured size reaches {:.0}% of the best measured {} speed ({} of {} MB/s, {:.1}%); fixed cost {:.1} µs per request, B = {} MB/s",
            format_size(a.size),
            ADVICE_SHARE * 100.0,
            pattern_words(s.pattern),
            format_mbps(a.mb_per_s),
            format_mbps(a.peak_mb_s),
            a.share_of_peak * 100.0,
            fit.t0_us,
            format_mbps(fit.bandwidth_mb_s)
        )),
        (_, _, FitQuality::Poor { reason, also }) if also.is_empty() => {
            AdviceWords::None(fit_reason(reason))
        }
        (_, _, FitQuality::Poor { reason, also }) => AdviceWords::None(format!(
            "{} (and {} more check{} failed)",
            fit_reason(reason),
            also.len(),
            if also.len() == 1 { "" } else { "s" }
        )),
        _ => AdviceWords::None("no measured size could be named".into()),
    })
}

/// The advice as one line: "use requests of …" or "no advice: why".
pub fn advice_line(s: &CurveSeries) -> Option<String> {
    advice(s).map(|a| match a {
        AdviceWords::Use(line) => line,
        AdviceWords::None(why) => format!("no advice: {why}"),
    })
}

/// The advice for a summary cell: the advised size and its figure, or
/// "no advice" with the check that failed named in a few words.
pub fn advice_cell(s: &CurveSeries) -> Option<String> {
    if let Some(a) = &s.advice {
        return Some(format!(
            "{} and up ({} MB/s, {:.0}% of the best)",
            format_size(a.size),
            format_mbps(a.mb_per_s),
            a.share_of_peak * 100.0
        ));
    }
    match &s.fit_quality {
        Some(FitQuality::Poor { reason, .. }) => Some(format!("no advice ({})", short(reason))),
        Some(FitQuality::Good) => Some("no advice".into()),
        None => s
            .recommendation
            .as_ref()
            .map(|line| match line.starts_with("no advice") {
                true => "no advice".into(),
                false => line.split(':').next().unwrap_or(line).to_string(),
            }),
    }
}

/// A failed check in a few words, for a cell.
fn short(r: &FitReason) -> &'static str {
    match r {
        FitReason::NoModel => "no model",
        FitReason::TooFewPoints { .. } => "too few sizes",
        FitReason::PointOffModel { .. } | FitReason::RSquaredLow { .. } => "off the model",
        FitReason::PlateauNotReached { .. } => "no plateau reached",
        FitReason::FixedCostCapped { .. } => "fixed cost varies",
        FitReason::FixedCostNotPositive { .. }
        | FitReason::FixedCostUncertain { .. }
        | FitReason::FixedCostSensitive { .. } => "fixed cost not determined",
        FitReason::BandwidthUncertain { .. } | FitReason::BandwidthSensitive { .. } => {
            "bandwidth not determined"
        }
        FitReason::Stored(_) => "poor fit",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::curve::read_curve;
    use crate::analysis::curve::test_points::{knee_deviations, short_sweep, unit_points};

    #[test]
    fn each_failed_check_is_told_with_its_figures() {
        let few = FitReason::TooFewPoints {
            measured: 2,
            needed: 3,
            from_unit_bytes: Some(64 << 10),
        };
        assert!(fit_reason(&few).contains("only 2 measured sizes at or above the 64 KiB unit"));
        let se = FitReason::FixedCostUncertain {
            t0_s: 50e-6,
            se_s: 5e-6,
        };
        assert!(fit_reason(&se).contains("t0 = 50.0 ± 5.0 µs"));
        let b = FitReason::BandwidthUncertain {
            bandwidth_mb_per_s: 4.0,
            se_mb_per_s: 0.2,
        };
        assert!(fit_reason(&b).contains("B = 4.00 ± 0.200 MB/s"));
        let r2 = FitReason::RSquaredLow {
            r_squared: 0.9,
            min: 0.98,
        };
        assert!(fit_reason(&r2).contains("R² is 0.900"));
        let above = FitReason::PlateauNotReached {
            bandwidth_mb_per_s: 4.0,
            best_mb_per_s: 3.0,
        };
        assert!(fit_reason(&above).contains("33% above the best measured 3.00 MB/s"));
    }

    #[test]
    fn a_deviation_says_how_far_and_why() {
        let devs = knee_deviations();
        let d = devs.iter().find(|d| d.size == 1 << 20).unwrap();
        let words = deviation(d);
        assert!(words.contains("slower than the model") && words.contains("largest transfer"));
        let lone = Deviation {
            cause: DeviationCause::Lone,
            ..d.clone()
        };
        assert!(deviation(&lone).contains("no cause is evident"));
    }

    fn series_of(reading: crate::analysis::curve::CurveReading, rw: Rw) -> CurveSeries {
        let mut s: CurveSeries = serde_json::from_value(serde_json::json!({
            "target": "t", "pattern": rw.name(), "queue_depth": 1, "logical_block_size": 512,
            "points": [], "model": null, "deviations": [], "alignment_penalties": [],
            "recommendation": null, "interface": null, "ceiling": null,
            "skipped": null, "warnings": []
        }))
        .unwrap();
        s.model = reading.fit;
        s.fit_quality = Some(reading.quality);
        s.advice = reading.advice;
        s
    }

    #[test]
    fn the_advice_names_the_size_and_the_cell_only_its_figure() {
        let r = read_curve(&unit_points(50_000.0, 0.004, 64 << 10, &[0.0]));
        let s = series_of(r, Rw::Write);
        let line = advice_line(&s).unwrap();
        assert!(
            line.starts_with("use requests of at least 64 KiB")
                && line.contains("sequential write"),
            "{line}"
        );
        let cell = advice_cell(&s).unwrap();
        assert!(cell.starts_with("64 KiB and up ("), "{cell}");
        assert!(cell.len() < 50, "{cell}");
    }

    #[test]
    fn no_advice_says_why_and_a_stored_line_is_kept() {
        let pts = short_sweep();
        let s = series_of(read_curve(&pts), Rw::RandRead);
        assert!(advice_line(&s).unwrap().starts_with("no advice: B = "));
        assert_eq!(advice_cell(&s).unwrap(), "no advice (no plateau reached)");
        let mut old = s.clone();
        old.fit_quality = None;
        old.advice = None;
        old.recommendation = Some("no advice: as stored".into());
        assert_eq!(advice(&old), Some(AdviceWords::None("as stored".into())));
        assert_eq!(advice_line(&old).unwrap(), "no advice: as stored");
    }
}
