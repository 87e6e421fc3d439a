//! Curves made from the model itself, shared by the tests of every part
//! of the curve analysis.

use super::SizePoint;

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
