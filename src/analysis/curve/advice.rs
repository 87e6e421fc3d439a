//! What a person can act on: the curve read as one [`CurveReading`] (the
//! model, its quality, the unit), and the measured request size worth
//! using, given only on a good fit and always a size that was measured.

use super::fit::{SizePoint, fit_unit_model};
use super::quality::judge;
use crate::result::curve::{Advice, FitQuality, FitReason, ModelFit};
use serde::{Deserialize, Serialize};

/// The advice names the smallest size from which every measured size
/// reaches this share of the best measured MB/s.
pub const ADVICE_SHARE: f64 = 0.9;

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
            quality: FitQuality::poor(FitReason::NoModel),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::curve::test_points::{speed_point, unit_points};
    use proptest::prelude::*;

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
        // The model is flat below the unit: half of B at half the unit.
        assert!((fit.n_half_bytes - 0.5 * (50e-6 * 4e6 + 65536.0)).abs() < 1e-6);
    }

    #[test]
    fn advice_is_the_smallest_size_from_which_every_size_reaches_ninety_percent() {
        let p = speed_point;
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

    /// Every number a reading holds is finite, so its JSON (which has no
    /// infinity and no NaN) reads back as the same reading: ranks send
    /// their readings as JSON to be merged, and a stored run is read back.
    fn assert_round_trips(r: &CurveReading) -> Result<(), TestCaseError> {
        let json = serde_json::to_string(r).unwrap();
        let back: Result<CurveReading, _> = serde_json::from_str(&json);
        prop_assert!(back.is_ok(), "{json}: {back:?}");
        // Microseconds are stored as seconds, so the last bit may move;
        // otherwise what is read back says the same.
        let again = serde_json::to_value(back.unwrap()).unwrap();
        let first: serde_json::Value = serde_json::from_str(&json).unwrap();
        prop_assert!(same_to_rounding(&first, &again), "{first} against {again}");
        Ok(())
    }

    /// Whether two JSON documents differ at most in a number's last bits.
    fn same_to_rounding(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value::{Array, Number, Object};
        match (a, b) {
            (Number(x), Number(y)) => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
            }
            (Array(x), Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_to_rounding(x, y))
            }
            (Object(x), Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| same_to_rounding(v, w)))
            }
            _ => a == b,
        }
    }

    proptest! {
        #[test]
        fn every_reading_of_any_points_reads_back_from_its_json(
            points in prop::collection::vec(
                (9u32..27, 0u32..100, prop_oneof![
                    8 => 1e2f64..1e9,
                    1 => Just(0.0),
                    1 => prop::num::f64::ANY,
                ], any::<bool>()),
                0..12,
            ),
        ) {
            let pts: Vec<SizePoint> = points
                .into_iter()
                .map(|(log2, extra, t, buffered)| {
                    let size = (1u64 << log2) + u64::from(extra) * 512;
                    SizePoint {
                        size,
                        time_per_op_ns: t,
                        mb_per_s: size as f64 / t * 1e3,
                        buffered: buffered && log2 % 3 == 0,
                    }
                })
                .collect();
            assert_round_trips(&read_curve(&pts))?;
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
}
