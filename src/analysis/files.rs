//! What `files load` and `files save` measured, as the result reports it.
//!
//! Why a module of its own: the loops of the `files` workload only time
//! files (and hand over [`SizeTimes`] and [`SaveRun`]); reading the times is pure and testable. For `load`, each size's
//! per-file times are condensed into their median, mean and range
//! ([`crate::stats::NsSummary`]), the model t = t0 + n/B is fitted over the
//! medians (the same fit as a transfer-size curve,
//! [`crate::analysis::curve::fit_model`]: t0 is the cost of one file, B the
//! bandwidth of its data), and each size's efficiency is its speed over
//! that of the fastest size. For `save`, every byte read back must match.

use crate::analysis::curve::{SizePoint, fit_model};
use crate::result::apps::{FilesLoadReport, FilesSaveReport, LoadPoint};
use crate::result::measured::{SaveRun, SizeTimes};
use crate::stats::NsSummary;
use crate::units::mb_per_s;
use crate::vocab::options::CopySync;

/// The load report: one point per size that timed at least one file,
/// the model over their medians, and each point's efficiency and distance
/// from the model. `method` says how the files were read.
pub fn load_report(
    measured: Vec<SizeTimes>,
    fps: Option<f64>,
    method: crate::result::apps::LoadMethod,
) -> FilesLoadReport {
    let mut points: Vec<LoadPoint> = measured
        .into_iter()
        .filter_map(|m| load_point(m, fps))
        .collect();
    let model = fit_model(&points.iter().map(size_point).collect::<Vec<_>>());
    // The fastest size, not the largest: a middle size can load faster
    // than the largest (readahead, a file system's extent layout), and an
    // efficiency over 100% says nothing.
    let best = points.iter().map(|p| p.mb_per_s).fold(0.0, f64::max);
    for p in &mut points {
        p.efficiency = if best > 0.0 { p.mb_per_s / best } else { 0.0 };
        p.model_ratio = model.map(|m| p.mb_per_s / m.mb_per_s_at(p.size as f64));
    }
    FilesLoadReport {
        method: Some(method),
        eviction_proved: points.iter().all(|p| p.eviction.proved),
        points,
        model,
        fps,
    }
}

/// A size's point as the model fit reads it.
fn size_point(p: &LoadPoint) -> SizePoint {
    SizePoint {
        size: p.size,
        time_per_op_ns: p.median_ns as f64,
        mb_per_s: p.mb_per_s,
        buffered: false,
    }
}

/// One size's figures from its per-file times (`None` when no file was
/// timed); efficiency and model ratio are filled in by [`load_report`].
fn load_point(m: SizeTimes, fps: Option<f64>) -> Option<LoadPoint> {
    let s = NsSummary::of(&m.times)?;
    let mbps = mb_per_s(m.size, s.median);
    Some(LoadPoint {
        size: m.size,
        files: s.count,
        median_ns: s.median,
        mean_ns: s.mean,
        min_ns: s.min,
        max_ns: s.max,
        mb_per_s: mbps,
        efficiency: 0.0,
        model_ratio: None,
        bytes_per_frame: fps.map(|f| mbps * 1e6 / f),
        frames_per_file: fps.map(|f| s.median as f64 / 1e9 * f),
        eviction: m.eviction,
        device_read_bytes: m.device_read_bytes,
    })
}

/// The save report: whether every file read back right.
pub fn save_report(file_size: u64, sync: CopySync, run: SaveRun) -> FilesSaveReport {
    FilesSaveReport {
        file_size,
        sync,
        all_verified: run.points.iter().all(|p| p.check.ok()),
        points: run.points,
        skipped: run.skipped,
    }
}

/// Bytes read back wrong over every write-call size.
pub fn bytes_wrong(report: &FilesSaveReport) -> u64 {
    report.points.iter().map(|p| p.check.bytes_wrong).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::apps::EvictionProof;

    fn proof(proved: bool) -> EvictionProof {
        EvictionProof {
            files: 1,
            resident_pages: 0,
            total_pages: 1,
            proved,
            problem: None,
        }
    }

    /// Times of files that cost `t0_ns` each plus their bytes at `mb_s`.
    fn sized(size: u64, t0_ns: f64, mb_s: f64, proved: bool) -> SizeTimes {
        let t = (t0_ns + size as f64 / mb_s * 1e3) as u64;
        SizeTimes {
            size,
            times: vec![t, t + 2, t - 2],
            eviction: proof(proved),
            device_read_bytes: None,
        }
    }

    #[test]
    fn the_model_finds_the_fixed_cost_and_the_bandwidth() {
        let measured = [4096, 65536, 1 << 20, 16 << 20]
            .into_iter()
            .map(|s| sized(s, 100_000.0, 100.0, true))
            .collect();
        let r = load_report(measured, None, crate::result::apps::LoadMethod::Read);
        let m = r.model.expect("a model over four sizes");
        assert!((m.t0_us - 100.0).abs() < 1.0, "t0 {}", m.t0_us);
        assert!(
            (m.bandwidth_mb_s - 100.0).abs() < 1.0,
            "B {}",
            m.bandwidth_mb_s
        );
        let largest = r.points.last().unwrap();
        assert_eq!(largest.efficiency, 1.0);
        // 4 KiB: 41 µs of data behind 100 µs of fixed cost, about 0.29 of the best.
        let small = r.points[0].efficiency;
        assert!((0.28..0.30).contains(&small), "{small}");
        assert!(r.eviction_proved);
        assert_eq!(r.method, Some(crate::result::apps::LoadMethod::Read));
    }

    #[test]
    fn a_point_holds_the_median_range_and_frames() {
        let mut m = sized(1 << 20, 0.0, 100.0, false);
        m.times = vec![30_000_000, 10_000_000, 20_000_000];
        let p = load_point(m, Some(50.0)).unwrap();
        assert_eq!(
            (p.files, p.median_ns, p.min_ns, p.max_ns),
            (3, 20_000_000, 10_000_000, 30_000_000)
        );
        assert_eq!(p.frames_per_file, Some(1.0));
        let empty = SizeTimes {
            times: Vec::new(),
            ..sized(4096, 0.0, 1.0, true)
        };
        assert!(load_point(empty, None).is_none());
    }

    #[test]
    fn one_unproved_eviction_makes_the_report_unproved() {
        let measured = vec![
            sized(4096, 1e5, 50.0, true),
            sized(1 << 20, 1e5, 50.0, false),
        ];
        assert!(
            !load_report(measured, None, crate::result::apps::LoadMethod::Mmap).eviction_proved
        );
    }
}
