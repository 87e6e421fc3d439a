//! The `files load` and `files save` parts of the text report.

use super::table::Table;
use crate::result::apps::{FilesLoadReport, FilesSaveReport};
use crate::units::{TimeUnit, format_mbps, format_size_exact, format_size_figure, three_figures};
use std::fmt::Write;

pub fn load_table(out: &mut String, r: &FilesLoadReport) {
    if let Some(method) = &r.method {
        let _ = writeln!(
            out,
            "method      each file opened, read whole by {method}, closed"
        );
    }
    let unit = TimeUnit::for_ns(r.points.iter().map(|p| p.median_ns as f64));
    let per_file = unit.header("time/file");
    let mut headers = vec![
        "file size",
        "files",
        per_file.as_str(),
        "MB/s",
        "efficiency",
        "vs model",
    ];
    if r.fps.is_some() {
        headers.extend(["B/frame", "frames/file"]);
    }
    let mut table = Table::new(&headers);
    // Efficiency is over the fastest size (so never above 100%), computed
    // here too so that runs stored when it was over the largest read the same.
    let fastest = r.points.iter().map(|p| p.mb_per_s).fold(0.0, f64::max);
    for p in &r.points {
        let efficiency = if fastest > 0.0 {
            p.mb_per_s / fastest
        } else {
            0.0
        };
        let mut row = vec![
            format_size_figure(p.size),
            p.files.to_string(),
            unit.figure(p.median_ns as f64),
            format_mbps(p.mb_per_s),
            format!("{:.0}%", efficiency * 100.0),
            p.model_ratio.map_or("-".into(), model_ratio),
        ];
        if r.fps.is_some() {
            row.push(p.bytes_per_frame.map_or("-".into(), |b| format!("{b:.0}")));
            row.push(p.frames_per_file.map_or("-".into(), three_figures));
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}");
    if let Some(m) = &r.model {
        let _ = writeln!(
            out,
            "model       t = t0 + n/B: {} µs per file, {} MB/s of data; a file of {} loads at half that speed (R² {:.3})",
            three_figures(m.t0_us),
            format_mbps(m.bandwidth_mb_s),
            format_size_figure(m.n_half_bytes.round() as u64),
            m.r_squared
        );
    }
    if let Some(fps) = r.fps {
        let _ = writeln!(out, "frames      at {fps} frames per second");
    }
    for p in r.points.iter().filter(|p| !p.eviction.proved) {
        let why = p.eviction.problem.as_deref().unwrap_or("unknown");
        let _ = writeln!(
            out,
            "CACHE: eviction of the {} files not proved ({why}); their figures may include memory speed",
            format_size_figure(p.size)
        );
    }
    if r.eviction_proved {
        let _ = writeln!(
            out,
            "eviction    proved by mincore for every file before it was read"
        );
    }
}

pub fn save_table(out: &mut String, r: &FilesSaveReport) {
    let _ = writeln!(
        out,
        "file        {} per write-call size, then fsync and close",
        format_size_figure(r.file_size)
    );
    let unit = TimeUnit::for_ns(r.points.iter().map(|p| p.total_ns as f64));
    let headers = [
        "write call".to_string(),
        "calls".into(),
        unit.header("total"),
        "MB/s".into(),
        unit.header("write"),
        unit.header("fsync"),
        unit.header("close"),
        "requests".into(),
        "avg size".into(),
        "verified".into(),
    ];
    let mut table = Table::new(&headers);
    table.groups(&[("", 7), ("at the device", 2)]);
    let time = |ns: u64| unit.figure(ns as f64);
    for p in &r.points {
        let (reqs, avg) = p.device.as_ref().map_or(("-".into(), "-".into()), |d| {
            (
                d.write_requests.to_string(),
                d.avg_request_bytes
                    .map_or("-".into(), |a| format_size_figure(a.round() as u64)),
            )
        });
        let verified = if p.check.ok() {
            "ok".to_string()
        } else {
            format!("{} B WRONG", p.check.bytes_wrong)
        };
        table.add_row(vec![
            format_size_exact(p.write_size),
            p.times.calls.to_string(),
            time(p.total_ns),
            format_mbps(p.mb_per_s),
            time(p.times.write_ns),
            time(p.times.fsync_ns),
            time(p.times.close_ns),
            reqs,
            avg,
            verified,
        ]);
    }
    let _ = writeln!(out, "{table}");
    let _ = writeln!(
        out,
        "verify      {}",
        if r.all_verified {
            "every byte of every file read back right (from an evicted cache)"
        } else {
            "BAD: some bytes read back differ from what was written"
        }
    );
}

/// Measured over modelled speed, as every table prints it: `1.02×`.
pub(super) fn model_ratio(ratio: f64) -> String {
    format!("{ratio:.2}×")
}
