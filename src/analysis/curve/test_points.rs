//! Curves made from the model itself, shared by the tests of every part
//! of the curve analysis.

use super::{SizePoint, deviations, fit_model};
use crate::result::curve::Deviation;

/// Points of t(n) = t0 + n/B from 512 B to 16 MiB, times scaled by
/// 1 + noise (cycled).
pub fn model_points(t0_ns: f64, bw_bytes_per_ns: f64, noise: &[f64]) -> Vec<SizePoint> {
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

/// Points of t(n) = t0 + max(n, unit)/B from 512 B to 16 MiB, times
/// scaled by 1 + noise (cycled).
pub fn unit_points(t0_ns: f64, bw_bytes_per_ns: f64, unit: u64, noise: &[f64]) -> Vec<SizePoint> {
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

/// A direct point of `size` bytes at `mbps` MB/s.
pub fn speed_point(size: u64, mbps: f64) -> SizePoint {
    SizePoint {
        size,
        time_per_op_ns: size as f64 / mbps * 1e3,
        mb_per_s: mbps,
        buffered: false,
    }
}

/// The deviations of a model curve whose 1 MiB point is three times slower,
/// above a largest transfer of 512 KiB (a knee where requests split).
pub fn knee_deviations() -> Vec<Deviation> {
    let mut pts = model_points(100_000.0, 0.05, &[0.0]);
    let i = pts.iter().position(|p| p.size == 1 << 20).unwrap();
    pts[i].time_per_op_ns *= 3.0;
    pts[i].mb_per_s /= 3.0;
    let fit = fit_model(&pts).unwrap();
    deviations(&pts, &fit, Some(512 << 10))
}

/// A sweep that stops at 256 KiB, far below its plateau (n½ = 1 ms ·
/// 1 GB/s = 1 MB).
pub fn short_sweep() -> Vec<SizePoint> {
    model_points(1_000_000.0, 1.0, &[0.0])
        .into_iter()
        .filter(|p| p.size <= 256 << 10)
        .collect()
}
