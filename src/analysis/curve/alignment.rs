//! Unaligned request sizes against their aligned neighbours: a size that
//! is not a multiple of the logical block is compared with the
//! interpolation between the nearest aligned sizes, range against range
//! (see [the curve module](super) for why ranges and not medians), and a
//! penalty is told only when the ranges are apart.

use crate::result::curve::{AlignmentPenalty, MbRange, Penalty};
use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
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

    /// The penalties of three sizes, each `(size, min, median, max, reps)`,
    /// on 512-byte blocks.
    fn penalties(rows: [(u64, f64, f64, f64, usize); 3]) -> Vec<AlignmentPenalty> {
        let pts = rows.map(|(size, lo, mid, hi, reps)| point(size, lo, mid, hi, reps));
        alignment_penalties(&pts, 512)
    }

    #[test]
    fn an_unaligned_size_far_outside_its_neighbours_is_slower() {
        let pen = penalties([
            (512, 900.0, 1000.0, 1100.0, 3),
            (768, 29000.0, 30000.0, 31000.0, 3),
            (1024, 1400.0, 1500.0, 1600.0, 3),
        ]);
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
    fn noise_is_no_penalty_and_one_repetition_is_not_judged() {
        let cases = [
            // 1636 B at 1.02× the interpolation, well inside its neighbours'
            // spread: the noise the old report called "1.0× faster".
            (
                [
                    (1536, 1400.0, 1500.0, 1700.0, 3),
                    (1636, 1500.0, 1560.0, 1650.0, 3),
                    (2048, 1800.0, 1900.0, 2100.0, 3),
                ],
                Penalty::NoPenaltySeen,
            ),
            (
                [
                    (512, 1000.0, 1000.0, 1000.0, 1),
                    (768, 9000.0, 9000.0, 9000.0, 1),
                    (1024, 1500.0, 1500.0, 1500.0, 1),
                ],
                Penalty::SingleRepetition,
            ),
        ];
        for (rows, verdict) in cases {
            let pen = penalties(rows);
            assert_eq!(pen[0].verdict, Some(verdict), "{pen:?}");
        }
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
