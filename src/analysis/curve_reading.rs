//! Reading the measured series of `iocurve curve`: the t = t0 + n/B model
//! fitted to each series, every point's ratio to it, the deviations, the
//! alignment penalties, the advice and the link's verdict; and between
//! targets, the sizes where one overtakes the other. Pure functions over
//! [`CurveSeries`]; the numbers themselves come from [`super::curve`].

use super::curve::{self as model, SizePoint};
use crate::result::{CurvePoint, CurveSeries};

/// Fits the model and reads the curve: its quality, deviations, alignment
/// penalties, the advice line and the link's verdict.
pub fn analyse(series: &mut CurveSeries, max_transfer: Option<u64>) {
    let points = size_points(series);
    let reading = model::read_curve(&points);
    series.model = reading.fit;
    if let Some(fit) = &series.model {
        for p in series.points.iter_mut().filter(|p| !p.buffered) {
            let size = p.size as f64;
            p.model_ratio = p
                .mb_per_s
                .filter(|_| fit.time_ns_at(size) > 0.0)
                .map(|s| s.median / fit.mb_per_s_at(size));
        }
        // Only points that repeat within their noise can be off the model:
        // an unstable point's median says nothing about page or erase-block
        // sizes (the text says "unstable: raise --time" instead).
        let stable = points_where(series, |p| p.mb_per_s.is_some_and(|m| !m.is_unstable()));
        series.deviations = model::deviations(&stable, fit, max_transfer);
    }
    series.fit_quality = Some(reading.quality);
    series.advice = reading.advice;
    series.alignment_penalties = unaligned_verdicts(series);
    series.ceiling = model::ceiling_verdict(&points, series.interface.as_ref());
}

/// Each unaligned size against its aligned neighbours measured the same
/// way: the unaligned section on an O_DIRECT target, the series itself on
/// a buffered one.
fn unaligned_verdicts(series: &CurveSeries) -> Vec<crate::result::curve::AlignmentPenalty> {
    let same_way: Vec<&CurvePoint> = if series.unaligned.is_empty() {
        series.points.iter().collect()
    } else {
        series.unaligned.iter().collect()
    };
    let ranged: Vec<model::RangedPoint> = same_way
        .into_iter()
        .filter_map(|p| {
            let iops = p.iops?;
            Some(model::RangedPoint {
                size: p.size,
                time: model::TimeRange::from_iops(iops.median, iops.min, iops.max, iops.count)?,
            })
        })
        .collect();
    model::alignment_penalties(&ranged, u64::from(series.logical_block_size))
}

fn size_points(series: &CurveSeries) -> Vec<SizePoint> {
    points_where(series, |_| true)
}

/// The measured points that `keep` accepts, as the model needs them.
fn points_where(series: &CurveSeries, keep: impl Fn(&CurvePoint) -> bool) -> Vec<SizePoint> {
    series
        .points
        .iter()
        .filter(|p| keep(p))
        .filter_map(|p| {
            let iops = p.iops?.median;
            let mbps = p.mb_per_s?.median;
            (iops > 0.0).then(|| SizePoint {
                size: p.size,
                time_per_op_ns: 1e9 / iops,
                mb_per_s: mbps,
                buffered: p.buffered,
            })
        })
        .collect()
}

/// Crossovers between every pair of targets, pattern by pattern.
pub fn find_crossovers(series: &[CurveSeries]) -> Vec<crate::result::curve::Crossover> {
    let mut out = Vec::new();
    for (i, a) in series.iter().enumerate() {
        for b in series
            .iter()
            .skip(i + 1)
            .filter(|b| b.pattern == a.pattern && b.target != a.target)
        {
            let (pa, pb) = (size_points(a), size_points(b));
            out.extend(model::crossovers(
                a.pattern,
                (&a.target, &pa),
                (&b.target, &pb),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Spread;

    fn spread(median: f64) -> Spread {
        Spread {
            median,
            min: median,
            max: median,
            count: 1,
            unstable: false,
        }
    }

    /// A point of `mb_per_s` at `size`, its IOPS derived from both.
    fn point(size: u64, mb_per_s: f64) -> CurvePoint {
        CurvePoint {
            size,
            buffered: false,
            reference: false,
            mb_per_s: Some(spread(mb_per_s)),
            iops: Some(spread(mb_per_s * 1e6 / size as f64)),
            p50_ns: None,
            p99_ns: None,
            model_ratio: None,
            test: 0,
        }
    }

    fn series(target: &str, pattern: &str, points: Vec<CurvePoint>) -> CurveSeries {
        let pattern = crate::vocab::Rw::parse(pattern).expect("a direction");
        CurveSeries::unread(target.into(), pattern, 1, 512, points)
    }

    #[test]
    fn size_points_keep_measured_points_with_their_time_per_request() {
        let mut unmeasured = point(8192, 1.0);
        unmeasured.iops = None;
        let s = series("a", "read", vec![point(4096, 40.96), unmeasured]);
        let points = size_points(&s);
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].size, 4096);
        // 10,000 requests a second: 100 µs each.
        assert!((points[0].time_per_op_ns - 100_000.0).abs() < 1e-6);
        assert_eq!(points[0].mb_per_s, 40.96);
    }

    #[test]
    fn crossovers_are_found_between_targets_of_one_pattern_only() {
        let fast_small = vec![point(4096, 20.0), point(1 << 20, 50.0)];
        let fast_large = vec![point(4096, 10.0), point(1 << 20, 90.0)];
        let all = [
            series("a", "read", fast_small.clone()),
            series("b", "read", fast_large.clone()),
            series("c", "write", fast_large),
            series("a", "write", fast_small),
        ];
        let found = find_crossovers(&all);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].pattern, crate::vocab::Rw::Read);
        assert_eq!(found[0].faster_below, "a");
        assert_eq!(found[0].faster_above, "b");
        assert_eq!(found[1].pattern, crate::vocab::Rw::Write);
        assert_eq!(found[1].faster_below, "a");
        assert_eq!(found[1].faster_above, "c");
    }

    #[test]
    fn unstable_points_get_no_off_model_cause() {
        // t = 100 µs + n / (100 MB/s), with two points 40% below the model:
        // one repeated within its noise, one that did not.
        let sizes: Vec<u64> = (12..=22).map(|k| 1u64 << k).collect();
        let model = |n: u64| n as f64 / (100e-6 + n as f64 / 100e6) / 1e6;
        let mut points: Vec<CurvePoint> = sizes.iter().map(|&n| point(n, model(n))).collect();
        for i in [5, 7] {
            points[i] = point(sizes[i], 0.6 * model(sizes[i]));
        }
        let noisy = points[7].mb_per_s.as_mut().unwrap();
        (noisy.min, noisy.max, noisy.count) = (0.3 * noisy.median, 1.5 * noisy.median, 3);
        let mut s = series("a", "read", points);
        analyse(&mut s, None);
        assert!(s.model.is_some());
        let off: Vec<u64> = s.deviations.iter().map(|d| d.size).collect();
        assert!(off.contains(&sizes[5]), "{off:?}");
        assert!(
            !off.contains(&sizes[7]),
            "an unstable point blamed: {off:?}"
        );
    }

    #[test]
    fn a_series_without_points_reads_as_no_model() {
        let mut s = series("a", "randread", Vec::new());
        analyse(&mut s, None);
        assert!(s.model.is_none());
        assert!(s.deviations.is_empty());
        assert!(s.alignment_penalties.is_empty());
        assert!(s.fit_quality.is_some() && s.recommendation.is_none());
    }
}
