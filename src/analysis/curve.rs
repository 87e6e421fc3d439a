//! Reading a throughput-against-size curve.
//!
//! The model is Hockney's: a request of n bytes takes t(n) = t0 + n/B, a
//! fixed cost t0 (command, system call, seek, page program) plus the
//! transfer at the asymptotic bandwidth B. Throughput n/t(n) then reaches
//! half of B at n½ = t0·B and 90% of B at 9·n½. Points far from the model
//! are knees worth explaining (page size, erase block, largest transfer);
//! sizes that are not a multiple of the logical block are compared with
//! the interpolation between their aligned neighbours; two devices' curves
//! are compared for crossovers; and figures are checked against the ceiling
//! of the link the device sits behind.
//!
//! An unaligned size is judged by ranges, not medians: its repetitions'
//! fastest-to-slowest time per request against the interpolation between
//! its neighbours taken end by end (slowest with slowest, fastest with
//! fastest). A penalty is reported only when the two intervals are
//! disjoint, the same rule as reading error bars that do not overlap;
//! overlapping intervals are "no penalty seen", whatever the medians say.

use crate::probe::Interface;
use crate::stats::fit::weighted_line;
use crate::units::format_size;
use serde::{Deserialize, Serialize};

/// A point beyond this share away from the model is reported.
pub const DEVIATION_THRESHOLD: f64 = 0.25;
/// A plateau within this share of the link's ceiling is the link's.
pub const PLATEAU_SHARE: f64 = 0.85;
/// A figure this far above the link's ceiling cannot have crossed it.
pub const IMPOSSIBLE_MARGIN: f64 = 1.05;

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

/// The fitted model t(n) = t0 + n/B.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelFit {
    /// Fixed cost per request, µs.
    pub t0_us: f64,
    /// Asymptotic bandwidth, MB/s (10^6 B/s).
    pub bandwidth_mb_s: f64,
    /// Size reaching half the bandwidth, bytes.
    pub n_half_bytes: f64,
    /// Size reaching 90% of the bandwidth, bytes.
    pub n90_bytes: f64,
    /// Weighted R² of the fit in time per request.
    pub r_squared: f64,
    /// Largest |measured − model| / model over the fitted points.
    pub max_relative_error: f64,
    pub points_used: usize,
}

impl ModelFit {
    /// Model throughput at `size`, MB/s.
    pub fn mb_per_s_at(&self, size: f64) -> f64 {
        let t_ns = self.t0_us * 1e3 + size / (self.bandwidth_mb_s * 1e-3);
        size / t_ns * 1e3
    }
}

/// Fits the model to the direct (not buffered) points, each weighted by
/// 1/t² so relative errors count alike. `None` when fewer than two points
/// or when the fit is unphysical (negative bandwidth).
pub fn fit_model(points: &[SizePoint]) -> Option<ModelFit> {
    let data: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|p| !p.buffered && p.time_per_op_ns > 0.0)
        .map(|p| {
            (
                p.size as f64,
                p.time_per_op_ns,
                1.0 / (p.time_per_op_ns * p.time_per_op_ns),
            )
        })
        .collect();
    let line = weighted_line(&data)?;
    if line.slope <= 0.0 {
        return None;
    }
    let t0_ns = line.intercept.max(0.0);
    let bandwidth_bytes_per_ns = 1.0 / line.slope;
    let n_half = t0_ns * bandwidth_bytes_per_ns;
    let max_relative_error = data
        .iter()
        .map(|&(x, y, _)| ((y - line.at(x)) / line.at(x)).abs())
        .fold(0.0, f64::max);
    Some(ModelFit {
        t0_us: t0_ns / 1e3,
        bandwidth_mb_s: bandwidth_bytes_per_ns * 1e3,
        n_half_bytes: n_half,
        n90_bytes: 9.0 * n_half,
        r_squared: line.r_squared,
        max_relative_error,
        points_used: data.len(),
    })
}

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
/// kernel's largest request (max_sectors_kb) when known.
pub fn deviations(
    points: &[SizePoint],
    fit: &ModelFit,
    max_transfer: Option<u64>,
) -> Vec<Deviation> {
    points
        .iter()
        .filter(|p| !p.buffered)
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

/// One line a person can act on.
pub fn recommendation(fit: &ModelFit, pattern: &str) -> String {
    let n90 = fit.n90_bytes.max(512.0);
    let pow2 = (n90.log2().ceil() as u32).min(40);
    format!(
        "use requests of at least {} to get 90% of peak {pattern} ({:.0} MB/s; fixed cost {:.1} µs per request, half speed at {})",
        format_size(1u64 << pow2),
        fit.bandwidth_mb_s,
        fit.t0_us,
        format_size(fit.n_half_bytes.round() as u64)
    )
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
