//! The table a person reads: a header naming what was measured and how, the
//! figures with fixed units, warnings in capitals, and the units legend.

use super::Export;
use crate::result::{Measurement, Payload, RunResult, TestResult};
use crate::stats::{LatencySummary, Spread};
use crate::target::{IoMode, TargetInfo, TargetKind};
use crate::units::{LEGEND, format_latency_ns, format_mbps, format_size};
use comfy_table::{CellAlignment, Table, presets};
use std::fmt::Write;

pub struct Text;

impl Export for Text {
    fn render(&self, r: &RunResult) -> String {
        let mut out = String::new();
        header(&mut out, r);
        match &r.payload {
            Payload::Curve { curve, .. } => super::text_curve::curve_tables(&mut out, curve),
            Payload::FilesLoad { files_load, .. } => {
                super::text_files::load_table(&mut out, files_load)
            }
            Payload::FilesSave { files_save, .. } => {
                super::text_files::save_table(&mut out, files_save)
            }
            Payload::Stream { stream, .. } => super::text_stream::stream_block(&mut out, stream),
            Payload::Sustain { sustain, .. } => {
                super::text_sustain::sustain_block(&mut out, sustain)
            }
            Payload::Profile { .. } => profile_table(&mut out, r),
            _ => {
                for test in &r.tests {
                    run_tables(&mut out, test);
                }
            }
        }
        super::text_life::sections(&mut out, &r.payload);
        footer(&mut out, r);
        out
    }
}

fn header(out: &mut String, r: &RunResult) {
    let _ = writeln!(
        out,
        "iocurve {} · {} · {} · host {} (Linux {})",
        r.iocurve_version,
        r.command(),
        r.started_at,
        r.host.hostname,
        r.host.kernel
    );
    let t = &r.target;
    let _ = writeln!(out, "target      {}", describe_target(t));
    let _ = writeln!(out, "device      {}", describe_device(t));
    let fs = t
        .filesystem
        .as_ref()
        .map_or("none (raw device)".to_string(), |m| {
            format!(
                "{} on {} (mounted at {})",
                m.fstype, m.source, m.mount_point
            )
        });
    let mode = match t.mode {
        IoMode::Direct => "O_DIRECT (page cache bypassed)",
        IoMode::Buffered => "buffered (page cache evicted before reads, fdatasync after writes)",
    };
    let _ = writeln!(out, "filesystem  {fs}");
    let _ = writeln!(out, "mode        {mode}");
    for note in &t.notes {
        let _ = writeln!(out, "note        {note}");
    }
    if let Some(l) = &r.cpu_load {
        let _ = writeln!(
            out,
            "cpu load    {}% of each of {} CPUs asked, {:.0}% delivered (pinned busy threads){}",
            l.percent,
            l.cpus.len(),
            l.achieved_percent,
            if l.achieved_percent < 0.7 * f64::from(l.percent) {
                "; less than asked: other work on the machine competed for the CPUs"
            } else {
                ""
            }
        );
    }
}

fn describe_target(t: &TargetInfo) -> String {
    match t.kind {
        TargetKind::Directory if t.size_bytes == 0 => format!(
            "{} (directory; working files in {}, removed afterwards)",
            t.path,
            t.scratch_file.as_deref().unwrap_or("?")
        ),
        TargetKind::Directory => format!(
            "{} (directory; scratch file {}, {}, removed afterwards)",
            t.path,
            t.scratch_file.as_deref().unwrap_or("?"),
            format_size(t.size_bytes)
        ),
        TargetKind::File => format!("{} (file, {})", t.path, format_size(t.size_bytes)),
        TargetKind::Simulated => format!("{} (simulated, {})", t.path, format_size(t.size_bytes)),
        TargetKind::BlockDevice => format!(
            "{} (block device, {}, logical block {} B)",
            t.path,
            format_size(t.size_bytes),
            t.logical_block_size
        ),
    }
}

fn describe_device(t: &TargetInfo) -> String {
    if t.kind == TargetKind::Simulated {
        return "none: a simulated flash card on a virtual clock (see its parameters in the configuration)".into();
    }
    let Some(d) = &t.device else {
        return "unknown (no single block device beneath: tmpfs, overlay or network file system); device counters unavailable".into();
    };
    let mut s = format!(
        "{} ({}:{}), {}",
        d.name,
        d.major,
        d.minor,
        format_size(d.size_bytes)
    );
    if let Some(model) = &d.model {
        let _ = write!(s, ", {model}");
    }
    if let Some(rot) = d.rotational {
        s.push_str(if rot {
            ", rotational"
        } else {
            ", non-rotational"
        });
    }
    if let Some(back) = &d.loop_backing_file {
        let _ = write!(s, ", loop over {back}");
    }
    s
}

fn run_tables(out: &mut String, test: &TestResult) {
    let w = &test.workload;
    let mix = w
        .mix_read_percent
        .map(|m| format!(" ({m}% reads)"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "workload    {}{mix}, {} blocks, QD {} × {} job{}, engine {}, region {} at offset {}, seed {}",
        w.rw,
        format_size(w.block_size),
        w.queue_depth,
        w.threads,
        if w.threads == 1 { "" } else { "s" },
        w.engine,
        format_size(w.span),
        w.offset,
        w.seed
    );
    if let Some(why) = &test.skipped {
        let _ = writeln!(out, "skipped     {why}");
        return;
    }
    let mut table = new_table(&[
        "", "MB/s", "IOPS", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max",
    ]);
    let many = test.repetitions.len() > 1;
    for (i, m) in test.repetitions.iter().enumerate() {
        let label = |dir: &str| {
            if many {
                format!("{dir} #{}", i + 1)
            } else {
                dir.to_string()
            }
        };
        for (dir, d) in [("read", &m.read), ("write", &m.write)] {
            if let Some(d) = d {
                table.add_row(latency_row(&label(dir), d.mb_per_s, d.iops, &d.latency));
            }
        }
    }
    let _ = writeln!(out, "{table}");
    if let (Some(mbps), Some(iops)) = (&test.mb_per_s, &test.iops) {
        if many {
            let _ = writeln!(
                out,
                "median of {}: {}{} MB/s ({}–{}), {} IOPS",
                mbps.count,
                unstable_mark(mbps),
                format_mbps(mbps.median),
                format_mbps(mbps.min),
                format_mbps(mbps.max),
                format_iops(iops.median)
            );
            if mbps.is_unstable() {
                let _ = writeln!(out, "{UNSTABLE_LEGEND}");
            }
        }
    }
    for m in &test.repetitions {
        measurement_details(out, m);
    }
}

fn latency_row(label: &str, mbps: f64, iops: f64, l: &LatencySummary) -> Vec<String> {
    vec![
        label.to_string(),
        format_mbps(mbps),
        format_iops(iops),
        format_latency_ns(l.mean_ns),
        format_latency_ns(l.p50_ns as f64),
        format_latency_ns(l.p90_ns as f64),
        format_latency_ns(l.p99_ns as f64),
        format_latency_ns(l.p99_9_ns as f64),
        format_latency_ns(l.p99_99_ns as f64),
        format_latency_ns(l.max_ns as f64),
    ]
}

fn measurement_details(out: &mut String, m: &Measurement) {
    let _ = writeln!(
        out,
        "moved       {} in {:.3} s ({} I/Os{}); warm-up {} in {:.2} s not counted",
        format_size(m.bytes),
        m.elapsed_ns as f64 / 1e9,
        m.ops,
        if m.sync_ns > 0 {
            format!(", final fdatasync {:.3} s included", m.sync_ns as f64 / 1e9)
        } else {
            String::new()
        },
        format_size(m.ramp.bytes),
        m.ramp.elapsed_ns as f64 / 1e9
    );
    let _ = writeln!(
        out,
        "cpu         user {:.2} s, system {:.2} s: {:.2} CPU-s per GB moved",
        m.cpu.user_s, m.cpu.system_s, m.cpu.cpu_s_per_gb
    );
    if let Some(d) = &m.device_io {
        let avg = |v: Option<f64>| v.map_or("-".to_string(), |b| format_size(b.round() as u64));
        let _ = writeln!(
            out,
            "device      {} saw {} read requests (avg {}, {} merged), {} write requests (avg {}, {} merged), busy {} ms (warm-up included)",
            d.device,
            d.read_requests,
            avg(d.avg_read_request_bytes),
            d.read_merges,
            d.write_requests,
            avg(d.avg_write_request_bytes),
            d.write_merges,
            d.busy_ms
        );
    }
    if let Some(v) = &m.verify {
        let _ = writeln!(
            out,
            "verify      {} blocks ok, {} changed, {} overwritten, {} corrupted",
            v.ok, v.changed, v.overwritten, v.corrupted
        );
        for bad in &v.first_bad {
            let _ = writeln!(
                out,
                "  BAD BLOCK at offset {} ({}): {:?}",
                bad.offset,
                format_size(bad.offset),
                bad.verdict
            );
        }
    }
    if m.interrupted {
        let _ = writeln!(out, "INTERRUPTED: partial result, stopped by the user");
    }
    for w in &m.warnings {
        let _ = writeln!(out, "WARNING     {w}");
    }
}

fn profile_table(out: &mut String, r: &RunResult) {
    let reps = r
        .tests
        .iter()
        .map(|t| t.repetitions.len())
        .max()
        .unwrap_or(0);
    let time = r
        .payload
        .config_json()
        .get("time_per_test_s")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    let area = r.tests.first().map_or(0, |t| t.workload.span);
    let _ = writeln!(
        out,
        "test area   {} · each figure the median of {reps} runs of {time:.1} s, (min–max); warm-up excluded",
        format_size(area)
    );
    let engines: Vec<String> = r
        .tests
        .iter()
        .filter(|t| t.skipped.is_none())
        .map(|t| format!("{} at Q{}", t.workload.engine, t.workload.queue_depth))
        .fold(Vec::new(), |mut acc, e| {
            if !acc.contains(&e) {
                acc.push(e);
            }
            acc
        });
    let threads = r.tests.first().map_or(1, |t| t.workload.threads);
    let jobs = if r.tests.iter().any(|t| t.workload.threads != threads) {
        "jobs per test as each row's T".to_string()
    } else {
        format!(
            "{threads} job{} per test",
            if threads == 1 { "" } else { "s" }
        )
    };
    let _ = writeln!(out, "engine      {} ({jobs})", engines.join(", "));
    let mut table = new_table(&[
        "test",
        "read MB/s",
        "(min–max)",
        "read IOPS",
        "write MB/s",
        "(min–max)",
        "write IOPS",
    ]);
    let mut names: Vec<&str> = Vec::new();
    for t in &r.tests {
        if !names.contains(&t.name.as_str()) {
            names.push(&t.name);
        }
    }
    for name in names {
        let find = |rw: &str| {
            r.tests
                .iter()
                .find(|t| t.name == name && t.workload.rw.ends_with(rw))
        };
        let mut row = vec![name.to_string()];
        for test in [find("read"), find("write")] {
            row.extend(profile_cells(test));
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}");
    if r.tests
        .iter()
        .any(|t| t.skipped.is_none() && t.mb_per_s.is_some_and(|m| m.is_unstable()))
    {
        let _ = writeln!(out, "{UNSTABLE_LEGEND}");
    }
    for t in &r.tests {
        for m in &t.repetitions {
            for w in &m.warnings {
                let _ = writeln!(out, "WARNING     {} {}: {w}", t.name, t.workload.rw);
            }
        }
    }
}

fn profile_cells(test: Option<&TestResult>) -> [String; 3] {
    match test {
        None => ["-".into(), String::new(), String::new()],
        Some(t) if t.skipped.is_some() => ["skipped".into(), String::new(), String::new()],
        Some(t) => match (&t.mb_per_s, &t.iops) {
            (Some(m), Some(i)) => [
                format!("{}{}", unstable_mark(m), format_mbps(m.median)),
                range(m),
                format_iops(i.median),
            ],
            _ => ["not measured".into(), String::new(), String::new()],
        },
    }
}

/// The marker of a figure whose repetitions disagree ([`Spread::is_unstable`]).
pub(super) fn unstable_mark(s: &Spread) -> &'static str {
    if s.is_unstable() { "~" } else { "" }
}

/// The line explaining [`unstable_mark`], printed once below a table that has one.
pub(super) const UNSTABLE_LEGEND: &str = "~           unstable: the repetitions' range (min–max) is more than 30% of their median, the figure would not come out the same again (measure longer, --time, or more often, --repeat)";

fn range(s: &Spread) -> String {
    format!("({}–{})", format_mbps(s.min), format_mbps(s.max))
}

fn format_iops(iops: f64) -> String {
    if iops >= 10_000.0 {
        format!("{:.1}k", iops / 1000.0)
    } else {
        format!("{iops:.0}")
    }
}

pub(super) fn new_table(headers: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_HORIZONTAL_ONLY)
        .set_header(headers.to_vec());
    for i in 1..headers.len() {
        if let Some(col) = table.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

fn footer(out: &mut String, r: &RunResult) {
    let skipped: Vec<_> = r
        .tests
        .iter()
        .filter_map(|t| t.skipped.as_ref().map(|s| (t, s)))
        .collect();
    if r.is_profile() {
        if let Some((_, why)) = skipped.first() {
            let _ = writeln!(out, "skipped     {why}");
        }
    }
    if r.interrupted {
        let _ = writeln!(
            out,
            "INTERRUPTED: the run was stopped early; the figures above are partial"
        );
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "FAILED: {e}; the figures above are partial");
    }
    let _ = writeln!(out, "{LEGEND}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn unstable_figures_are_marked_in_profile_and_run_tables() {
        // Writes 12.2, 17.1 and 15.0 MB/s: a range of 33% of the median.
        let mut r = testdata::run(
            None,
            "2024-03-01T10:00:00Z",
            &[20.1, 19.9, 20.2],
            &[12.2, 17.1, 15.0],
        );
        let text = Text.render(&r);
        assert!(text.contains("~15.0"), "{text}");
        assert!(!text.contains("~20.1"), "{text}");
        assert_eq!(text.matches(UNSTABLE_LEGEND).count(), 1, "{text}");
        r = crate::testdata::as_run(r);
        let text = Text.render(&r);
        assert!(
            text.contains("median of 3: ~15.0 MB/s (12.2–17.1)"),
            "{text}"
        );
        assert!(text.contains("median of 3: 20.1 MB/s"), "{text}");
        assert_eq!(text.matches(UNSTABLE_LEGEND).count(), 1, "{text}");
        // Steady figures: no marker and no legend.
        let steady = testdata::run(None, "2024-03-01T10:00:00Z", &[20.1, 19.9], &[15.0, 15.2]);
        let text = Text.render(&steady);
        assert!(
            !text.contains(UNSTABLE_LEGEND) && !text.contains('~'),
            "{text}"
        );
    }
}
