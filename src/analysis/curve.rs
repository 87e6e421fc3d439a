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
    pub measured_mb_s: f64,
    /// MB/s interpolated between the aligned neighbours.
    pub expected_mb_s: f64,
    /// expected / measured: 15 means fifteen times slower than expected.
    pub slowdown: f64,
    pub lower_neighbour: u64,
    pub upper_neighbour: u64,
}

/// For each point whose size is not a multiple of `logical_block`, the
/// penalty against the buffered aligned neighbours on both sides (time per
/// request interpolated linearly in size, as the model is locally linear).
/// Points without neighbours on both sides get none.
pub fn alignment_penalties(points: &[SizePoint], logical_block: u64) -> Vec<AlignmentPenalty> {
    let aligned: Vec<&SizePoint> = points
        .iter()
        .filter(|p| p.buffered && p.size.is_multiple_of(logical_block))
        .collect();
    points
        .iter()
        .filter(|p| !p.size.is_multiple_of(logical_block))
        .filter_map(|p| {
            let lower = aligned
                .iter()
                .filter(|a| a.size < p.size)
                .max_by_key(|a| a.size)?;
            let upper = aligned
                .iter()
                .filter(|a| a.size > p.size)
                .min_by_key(|a| a.size)?;
            let share = (p.size - lower.size) as f64 / (upper.size - lower.size) as f64;
            let t = lower.time_per_op_ns + share * (upper.time_per_op_ns - lower.time_per_op_ns);
            let expected = p.size as f64 / t * 1e3;
            Some(AlignmentPenalty {
                size: p.size,
                measured_mb_s: p.mb_per_s,
                expected_mb_s: expected,
                slowdown: expected / p.mb_per_s,
                lower_neighbour: lower.size,
                upper_neighbour: upper.size,
            })
        })
        .collect()
}

/// The aligned sizes an unaligned size is compared with: the nearest
/// aligned sizes of the sweep below and above it.
pub fn aligned_neighbours(sizes: &[u64], logical_block: u64) -> Vec<u64> {
    let aligned: Vec<u64> = sizes
        .iter()
        .copied()
        .filter(|s| s.is_multiple_of(logical_block))
        .collect();
    let mut out: Vec<u64> = Vec::new();
    for &s in sizes.iter().filter(|s| !s.is_multiple_of(logical_block)) {
        let below = aligned.iter().copied().filter(|&a| a < s).max();
        let above = aligned.iter().copied().filter(|&a| a > s).min();
        out.extend(below.into_iter().chain(above));
    }
    out.sort_unstable();
    out.dedup();
    out
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
    fn unaligned_sizes_are_compared_with_their_buffered_neighbours() {
        let p = |size: u64, t: f64, buffered| SizePoint {
            size,
            time_per_op_ns: t,
            mb_per_s: size as f64 / t * 1e3,
            buffered,
        };
        let pts = [
            p(512, 1000.0, true),
            p(768, 30000.0, true),
            p(1024, 1500.0, true),
            p(512, 900.0, false),
        ];
        let pen = alignment_penalties(&pts, 512);
        assert_eq!(pen.len(), 1);
        assert_eq!(
            (pen[0].lower_neighbour, pen[0].upper_neighbour),
            (512, 1024)
        );
        // Expected 1250 ns for 768 B, measured 30000 ns: 24x slower.
        assert!((pen[0].slowdown - 24.0).abs() < 1e-9, "{pen:?}");
        assert_eq!(
            aligned_neighbours(&[512, 768, 1280, 1636, 4096, 65536], 512),
            vec![512, 4096]
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
