//! The table a person reads: a header naming what was measured and how, the
//! figures with fixed units, warnings in capitals, and the units legend.

use super::Export;
use super::table::{self, Table};
use super::text_marks::{UNSTABLE_LEGEND, row_label, unstable_mark};
use crate::result::{Measurement, Payload, RunResult, TestResult};
use crate::result::{TargetInfo, TargetKind};
use crate::stats::{LatencySummary, Spread};
use crate::units::{TEXT_LEGEND, format_iops, format_latency, format_mbps, format_size_figure};
use crate::vocab::options::IoMode;
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
        super::text_ranks::ranks_block(&mut out, r);
        super::text_life::sections_of_run(&mut out, &r.payload, run_direction(r));
        footer(&mut out, r);
        table::fitted(&out)
    }
}

impl Text {
    /// The header alone, wrapped as [`Text::render`] wraps it: the lines a
    /// measuring command prints before it measures, which the whole report
    /// then begins with.
    pub fn header(r: &RunResult) -> String {
        let mut out = String::new();
        header(&mut out, r);
        table::fitted(&out)
    }
}

/// The widest host name and kernel release the header shows whole: with
/// the `host` label they fit `profile`'s 80 columns.
const HOST_NAME_WIDTH: usize = 36;
const KERNEL_WIDTH: usize = 22;

/// Text from outside (a path, a model, a mount point, a test's name) as
/// the report shows it: escaped and cut (see [`table::cut`]).
fn shown(text: &str) -> String {
    table::cut(text, crate::units::escape::NAME_COLUMNS)
}

fn header(out: &mut String, r: &RunResult) {
    // The host on a line of its own: a host name is as long as its owner
    // made it, and the first line must fit whatever it is.
    let _ = writeln!(
        out,
        "iocurve {} · {} · {}",
        shown(&r.iocurve_version),
        shown(&r.command()),
        shown(&r.started_at)
    );
    let _ = writeln!(
        out,
        "host        {} (Linux {})",
        table::cut(&r.host.hostname, HOST_NAME_WIDTH),
        table::cut(&r.host.kernel, KERNEL_WIDTH)
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
                shown(&m.fstype),
                shown(&m.source),
                shown(&m.mount_point)
            )
        });
    let mode = match t.mode {
        IoMode::Direct => "O_DIRECT (page cache bypassed)",
        IoMode::Buffered => "buffered (page cache evicted before reads, fdatasync after writes)",
    };
    let _ = writeln!(out, "filesystem  {fs}");
    let _ = writeln!(out, "mode        {mode}");
    // Before the notes: a note or the CPU load may be known only after
    // measuring, and the header printed before it must be the start of
    // the final one.
    if let Some(plan) = super::text_plan::plan(r) {
        let _ = writeln!(out, "plan        {plan}");
    }
    for note in &t.notes {
        let _ = writeln!(out, "note        {}", super::caveats::line(note));
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
            shown(&t.path),
            shown(t.scratch_file.as_deref().unwrap_or("?"))
        ),
        TargetKind::Directory => format!(
            "{} (directory; scratch file {}, {}, removed afterwards)",
            shown(&t.path),
            shown(t.scratch_file.as_deref().unwrap_or("?")),
            format_size_figure(t.size_bytes)
        ),
        TargetKind::File => format!(
            "{} (file, {})",
            shown(&t.path),
            format_size_figure(t.size_bytes)
        ),
        TargetKind::Simulated => format!(
            "{} (simulated, {})",
            shown(&t.path),
            format_size_figure(t.size_bytes)
        ),
        TargetKind::BlockDevice => format!(
            "{} (block device, {}, logical block {} B)",
            shown(&t.path),
            format_size_figure(t.size_bytes),
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
        shown(&d.name),
        d.major,
        d.minor,
        format_size_figure(d.size_bytes)
    );
    if let Some(model) = &d.model {
        let _ = write!(s, ", {}", shown(model));
    }
    if let Some(rot) = d.rotational {
        s.push_str(if rot {
            ", rotational"
        } else {
            ", non-rotational"
        });
    }
    if let Some(back) = &d.loop_backing_file {
        let _ = write!(s, ", loop over {}", shown(back));
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
        format_size_figure(w.block_size),
        w.queue_depth,
        w.threads,
        if w.threads == 1 { "" } else { "s" },
        w.engine,
        format_size_figure(w.span),
        w.offset,
        w.seed
    );
    if let Some(why) = &test.skipped {
        let _ = writeln!(out, "skipped     {}", super::caveats::skipped(why));
        return;
    }
    let many = test.repetitions.len() > 1;
    let mut rows: Vec<(String, &crate::result::DirectionResult)> = Vec::new();
    for (i, m) in test.repetitions.iter().enumerate() {
        for (dir, d) in [("read", &m.read), ("write", &m.write)] {
            if let Some(d) = d {
                let label = if many {
                    format!("{dir} #{}", i + 1)
                } else {
                    dir.to_string()
                };
                rows.push((label, d));
            }
        }
    }
    let mut headers = vec!["".to_string(), "MB/s".into(), "IOPS".into()];
    headers.extend(LATENCY_COLUMNS.map(String::from));
    let mut table = Table::new(&headers);
    for (label, d) in &rows {
        table.add_row(latency_row(label, d.mb_per_s, d.iops, &d.latency));
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

/// The latency columns of `run`'s table; each cell names its own unit.
const LATENCY_COLUMNS: [&str; 7] = ["mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"];

fn latency_row(label: &str, mbps: f64, iops: f64, l: &LatencySummary) -> Vec<String> {
    let mut row = vec![label.to_string(), format_mbps(mbps), format_iops(iops)];
    row.extend(
        [
            l.mean_ns,
            l.p50_ns as f64,
            l.p90_ns as f64,
            l.p99_ns as f64,
            l.p99_9_ns as f64,
            l.p99_99_ns as f64,
            l.max_ns as f64,
        ]
        .map(format_latency),
    );
    row
}

/// What a run's tests do to the target: reads only, writes only, or both
/// (names the call an access method uses, `pread` or `pwrite`).
fn run_direction(r: &RunResult) -> super::text_life::Direction {
    use super::text_life::Direction;
    let reads = r.tests.iter().any(|t| t.workload.rw.reads());
    let writes = r.tests.iter().any(|t| t.workload.rw.writes());
    match (reads, writes) {
        (false, true) => Direction::Writes,
        (true, true) => Direction::Both,
        _ => Direction::Reads,
    }
}

fn measurement_details(out: &mut String, m: &Measurement) {
    let _ = writeln!(
        out,
        "moved       {} in {:.3} s ({} I/Os{}); warm-up {} in {:.2} s not counted",
        format_size_figure(m.bytes),
        m.elapsed_ns as f64 / 1e9,
        m.ops,
        if m.sync_ns > 0 {
            format!(", final fdatasync {:.3} s included", m.sync_ns as f64 / 1e9)
        } else {
            String::new()
        },
        format_size_figure(m.ramp.bytes),
        m.ramp.elapsed_ns as f64 / 1e9
    );
    let _ = writeln!(
        out,
        "cpu         user {:.2} s, system {:.2} s: {:.2} CPU-s per GB moved",
        m.cpu.user_s, m.cpu.system_s, m.cpu.cpu_s_per_gb
    );
    if let Some(d) = &m.device_io {
        let avg =
            |v: Option<f64>| v.map_or("-".to_string(), |b| format_size_figure(b.round() as u64));
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
            "verify      {} blocks ok, {} changed, {} aliased, {} corrupted",
            v.ok, v.changed, v.aliased, v.corrupted
        );
        for bad in &v.first_bad {
            let _ = writeln!(
                out,
                "  BAD BLOCK at offset {} ({}): {:?}",
                bad.offset,
                format_size_figure(bad.offset),
                bad.verdict
            );
        }
    }
    // An interrupted measurement is said once, for the whole run, at the
    // end of the report (a stop ends every measurement at once).
    for w in &m.warnings {
        let _ = writeln!(out, "WARNING     {}", super::caveats::line(w));
    }
}

/// `profile`'s report: how it measured, the throughput and latency
/// tables, then what to mind reading them.
fn profile_table(out: &mut String, r: &RunResult) {
    let reps = profile_method(out, r);
    let names = profile_rows(r);
    profile_throughput_table(out, &names, reps > 1);
    profile_latency_table(out, &names);
    profile_notes(out, r);
}

/// The lines that say how `profile` measured (area, repetitions, engine,
/// jobs); returns the most repetitions of a test.
fn profile_method(out: &mut String, r: &RunResult) -> usize {
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
        "test area   {} · {}; warm-up excluded",
        format_size_figure(area),
        if reps > 1 {
            format!("each figure the median of {reps} runs of {time:.1} s, (min–max)")
        } else {
            format!("each figure one run of {time:.1} s")
        }
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
    reps
}

/// The read and write throughput of each row, with (min–max) when a test
/// was repeated.
fn profile_throughput_table(out: &mut String, names: &[ProfileRow<'_>], ranges: bool) {
    let mut table = Table::new(&throughput_headers(ranges));
    table.groups(&[
        ("", 1),
        ("read", if ranges { 3 } else { 2 }),
        ("write", if ranges { 3 } else { 2 }),
    ]);
    for (label, read, write) in names {
        let mut row = vec![label.clone()];
        for test in [read, write] {
            row.extend(profile_cells(*test, ranges));
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}");
}

/// The unstable legend when it applies, and each repetition's warnings.
fn profile_notes(out: &mut String, r: &RunResult) {
    if r.tests
        .iter()
        .any(|t| t.skipped.is_none() && t.mb_per_s.is_some_and(|m| m.is_unstable()))
    {
        let _ = writeln!(out, "{UNSTABLE_LEGEND}");
    }
    for t in &r.tests {
        for m in &t.repetitions {
            for w in &m.warnings {
                let _ = writeln!(
                    out,
                    "WARNING     {} {}: {}",
                    shown(&t.name),
                    shown(t.workload.rw.as_str()),
                    super::caveats::line(w)
                );
            }
        }
    }
}

/// One row of `profile`: its label and its read and write tests.
type ProfileRow<'a> = (String, Option<&'a TestResult>, Option<&'a TestResult>);

/// The rows of `profile` in the order measured, each labelled with its
/// queue depth and threads (`SEQ 1MiB Q8T1`).
fn profile_rows(r: &RunResult) -> Vec<ProfileRow<'_>> {
    let mut names: Vec<&str> = Vec::new();
    for t in &r.tests {
        if !names.contains(&t.name.as_str()) {
            names.push(&t.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let find = |write: bool| {
                r.tests
                    .iter()
                    .find(|t| t.name == name && t.workload.rw.column() == Some(write))
            };
            let (read, write) = (find(false), find(true));
            let label = read.or(write).map_or(name.to_string(), row_label);
            (label, read, write)
        })
        .collect()
}

fn throughput_headers(ranges: bool) -> Vec<&'static str> {
    let mut headers = vec!["test"];
    for _ in 0..2 {
        headers.push("MB/s");
        if ranges {
            headers.push("(min–max)");
        }
        headers.push("IOPS");
    }
    headers
}

/// `profile`'s second block: the median p50 and p99 latency of each test,
/// each cell in the unit that suits it.
fn profile_latency_table(out: &mut String, rows: &[ProfileRow<'_>]) {
    let latency =
        |t: Option<&TestResult>| t.filter(|t| t.skipped.is_none()).and_then(median_latency);
    let all: Vec<(u64, u64)> = rows
        .iter()
        .flat_map(|(_, r, w)| [latency(*r), latency(*w)])
        .flatten()
        .collect();
    if all.is_empty() {
        return;
    }
    let mut table = Table::new(&["latency", "p50", "p99", "p50", "p99"]);
    table.groups(&[("", 1), ("read", 2), ("write", 2)]);
    for (label, read, write) in rows {
        let mut row = vec![label.clone()];
        for test in [read, write] {
            match latency(*test) {
                Some((p50, p99)) => {
                    row.push(format_latency(p50 as f64));
                    row.push(format_latency(p99 as f64));
                }
                None => row.extend(["-".to_string(), "-".to_string()]),
            }
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "\n{table}");
}

/// The p50 and p99 of the repetition whose throughput is the median (the
/// one the table's MB/s stands for).
fn median_latency(t: &TestResult) -> Option<(u64, u64)> {
    let mut reps: Vec<&crate::result::DirectionResult> = t
        .repetitions
        .iter()
        .filter_map(|m| m.read.as_ref().or(m.write.as_ref()))
        .collect();
    reps.sort_by(|a, b| a.mb_per_s.total_cmp(&b.mb_per_s));
    reps.get(reps.len() / 2)
        .map(|d| (d.latency.p50_ns, d.latency.p99_ns))
}

fn profile_cells(test: Option<&TestResult>, ranges: bool) -> Vec<String> {
    let blank = |first: &str| {
        let mut cells = vec![first.to_string(), String::new()];
        if ranges {
            cells.push(String::new());
        }
        cells
    };
    match test {
        None => blank("-"),
        Some(t) if t.skipped.is_some() => blank("skipped"),
        Some(t) => match (&t.mb_per_s, &t.iops) {
            (Some(m), Some(i)) => {
                let mut cells = vec![format!("{}{}", unstable_mark(m), format_mbps(m.median))];
                if ranges {
                    cells.push(range(m));
                }
                cells.push(format_iops(i.median));
                cells
            }
            _ => blank("not measured"),
        },
    }
}

fn range(s: &Spread) -> String {
    format!("({}–{})", format_mbps(s.min), format_mbps(s.max))
}

fn footer(out: &mut String, r: &RunResult) {
    let skipped: Vec<_> = r
        .tests
        .iter()
        .filter_map(|t| t.skipped.as_ref().map(|s| (t, s)))
        .collect();
    if r.is_profile() {
        if let Some((_, why)) = skipped.first() {
            let _ = writeln!(out, "skipped     {}", super::caveats::skipped(why));
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
    let _ = writeln!(out, "{TEXT_LEGEND}");
}

#[cfg(test)]
mod tests;
