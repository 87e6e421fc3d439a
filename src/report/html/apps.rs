//! Report sections of the application workloads: file-load times, the
//! write-call sweep of `files save`, and stream deadlines, each a chart
//! beside its table (a sustained write's is in `sustain.rs`).

use super::{charts, esc};
use crate::result::apps::{FilesLoadReport, FilesSaveReport, StreamReport};
use crate::units::{format_latency, format_mbps, format_size};
use std::fmt::Write;

/// The one time unit of a chart of `times_ns`, see
/// [`charts::latency_axis_unit`].
fn axis_unit(times_ns: &[f64]) -> (f64, &'static str) {
    let positive = times_ns.iter().copied().filter(|t| *t > 0.0);
    let lo = positive.clone().fold(f64::INFINITY, f64::min);
    let hi = positive.fold(0.0, f64::max);
    charts::latency_axis_unit(if lo.is_finite() { lo } else { hi }, hi)
}

pub fn files_load(out: &mut String, r: &FilesLoadReport) {
    let _ = writeln!(out, "<h4>Whole-file load times</h4>");
    if !r.eviction_proved {
        let _ = writeln!(
            out,
            "<p class=\"warn\">CACHE: the page-cache eviction could not be proved for every size; those times may come from memory.</p>"
        );
    }
    let times: Vec<f64> = r.points.iter().map(|p| p.median_ns as f64).collect();
    let (per_unit, unit) = axis_unit(&times);
    let points: Vec<(String, f64)> = r
        .points
        .iter()
        .map(|p| (format_size(p.size), p.median_ns as f64 / per_unit))
        .collect();
    let _ = writeln!(
        out,
        "<figure data-chart=\"files-load\">{}<figcaption>Median time to open, read and close one file, {unit} (log scale).</figcaption></figure>",
        charts::bars(
            &points,
            &format!("time per file, {unit} (log scale)"),
            "time per file",
            true
        )
    );
    if let Some(m) = &r.model {
        let _ = writeln!(
            out,
            "<p>Per file: t0 = {} of fixed cost, then {} MB/s.</p>",
            format_latency(m.t0_us * 1e3),
            format_mbps(m.bandwidth_mb_s)
        );
    }
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table><thead><tr><th>file size</th><th>files</th><th>median</th><th>MB/s</th><th>efficiency</th><th>bytes/frame</th><th>frames/file</th></tr></thead><tbody>"
    );
    for p in &r.points {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td data-figure=\"files-load {}\">{}</td><td>{}</td><td>{:.0}%</td><td>{}</td><td>{}</td></tr>",
            esc(&format_size(p.size)),
            p.files,
            p.size,
            format_latency(p.median_ns as f64),
            format_mbps(p.mb_per_s),
            p.efficiency * 100.0,
            p.bytes_per_frame.map_or("-".into(), |b| format!("{b:.0}")),
            p.frames_per_file.map_or("-".into(), |f| format!("{f:.2}"))
        );
    }
    let _ = writeln!(out, "</tbody></table></div>");
}

pub fn files_save(out: &mut String, r: &FilesSaveReport) {
    let _ = writeln!(
        out,
        "<h4>Writing a {} file by write-call size</h4>",
        esc(&format_size(r.file_size))
    );
    let points: Vec<(String, f64)> = r
        .points
        .iter()
        .map(|p| (format_size(p.write_size), p.mb_per_s))
        .collect();
    let _ = writeln!(
        out,
        "<figure data-chart=\"files-save\">{}<figcaption>MB/s including fsync and close.</figcaption></figure>",
        charts::bars(&points, "MB/s (10^6 B/s)", "throughput", false)
    );
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table><thead><tr><th>write call</th><th>total</th><th>MB/s</th><th>device requests</th><th>avg request</th></tr></thead><tbody>"
    );
    for p in &r.points {
        let (reqs, avg) = p.device.as_ref().map_or(("-".into(), "-".into()), |d| {
            (
                d.write_requests.to_string(),
                d.avg_request_bytes
                    .map_or("-".into(), |a| format_size(a.round() as u64)),
            )
        });
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{reqs}</td><td>{}</td></tr>",
            esc(&format_size(p.write_size)),
            format_latency(p.total_ns as f64),
            format_mbps(p.mb_per_s),
            esc(&avg)
        );
    }
    let _ = writeln!(out, "</tbody></table></div>");
    if !r.all_verified {
        let _ = writeln!(
            out,
            "<p class=\"warn\">VERIFY: some bytes read back differently from what was written.</p>"
        );
    }
}

pub fn stream(out: &mut String, r: &StreamReport) {
    let o = &r.outcome;
    let _ = writeln!(
        out,
        "<h4>Streaming on a fixed schedule ({})</h4>",
        esc(r.direction.as_str())
    );
    let rows = [
        (
            "rate asked",
            format!(
                "{} MB/s in {} requests",
                format_mbps(o.rate_mb_s),
                format_size(u64::from(o.chunk))
            ),
        ),
        (
            "rate delivered",
            format!("{} MB/s", format_mbps(o.achieved_mb_s)),
        ),
        (
            "deadline misses",
            format!(
                "{} of {} ({:.1}%)",
                o.misses,
                o.requests_done,
                o.miss_share * 100.0
            ),
        ),
        ("longest stall", format_latency(o.longest_stall_ns as f64)),
        ("jitter", format_latency(o.jitter_ns)),
    ];
    let _ = writeln!(out, "<div class=\"scroll\"><table><tbody>");
    for (k, v) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{k}</td><td data-figure=\"stream {k}\">{}</td></tr>",
            esc(&v)
        );
    }
    let _ = writeln!(out, "</tbody></table></div>");
    if let Some(l) = &o.latency {
        let ns = [
            ("p50", l.p50_ns),
            ("p90", l.p90_ns),
            ("p99", l.p99_ns),
            ("p99.9", l.p99_9_ns),
            ("max", l.max_ns),
        ];
        let (per_unit, unit) = axis_unit(&ns.map(|(_, v)| v as f64));
        let points: Vec<(String, f64)> = ns
            .iter()
            .map(|(q, v)| (q.to_string(), *v as f64 / per_unit))
            .collect();
        let _ = writeln!(
            out,
            "<figure data-chart=\"stream\">{}<figcaption>Latency from each request's scheduled start, {unit} (log scale); the deadline is {}.</figcaption></figure>",
            charts::bars(
                &points,
                &format!("latency, {unit} (log scale)"),
                "latency",
                true
            ),
            format_latency(o.deadline_ns as f64)
        );
    }
}
