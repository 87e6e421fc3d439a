//! The report's sections, each a function that appends HTML.

use super::charts;
use super::devices::group_by_device;
use super::{ReportInput, esc};
use crate::report::Svg;
use crate::result::{CurvePoint, CurveSeries, Measurement, Payload, RunResult, TestResult};
use crate::units::{LEGEND, format_latency, format_mbps, format_size};
use std::fmt::Write;

/// The page's title: the device, or how many devices.
pub fn title_text(input: &ReportInput) -> String {
    let groups = group_by_device(&input.runs);
    match groups.as_slice() {
        [] => "iocurve report".into(),
        [one] => format!("iocurve report: {}", one.label),
        many => format!("iocurve report: {} devices", many.len()),
    }
}

pub fn title(out: &mut String, input: &ReportInput) {
    let _ = writeln!(out, "<h1>{}</h1>", esc(&title_text(input)));
    let (first, last) = (input.runs.first(), input.runs.last());
    let span = match (first, last) {
        (Some(a), Some(b)) if a.started_at != b.started_at => {
            format!(", {} to {}", a.started_at, b.started_at)
        }
        (Some(a), _) => format!(", {}", a.started_at),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "<p class=\"sub\">{} run(s){}</p>",
        input.runs.len(),
        esc(&span)
    );
}

/// One run in full, collapsed unless it is its device's newest: its
/// figures, its charts, its notes.
pub fn run(out: &mut String, anchor: &str, run: &RunResult, open: bool) {
    let _ = writeln!(
        out,
        "<details class=\"run\" id=\"{anchor}\" data-command=\"{}\"{}>",
        esc(&run.command()),
        if open { " open" } else { "" }
    );
    let mode = format!("{:?}", run.target.mode).to_lowercase();
    let _ = writeln!(
        out,
        "<summary><h3>{} <span class=\"range\">{} · {}</span><span class=\"range key\">{}</span></h3></summary>",
        esc(&run.command()),
        esc(&run.started_at),
        esc(&mode),
        esc(&run.target.path)
    );
    match &run.payload {
        Payload::Profile { .. } => profile_table(out, run),
        Payload::Curve { curve, .. } => curve_section(out, run, &curve.series),
        _ if !run.tests.is_empty() => tests_table(out, run),
        _ => {}
    }
    super::ranks::section(out, run);
    latency_section(out, run);
    match &run.payload {
        Payload::FilesLoad { files_load, .. } => super::apps::files_load(out, files_load),
        Payload::FilesSave { files_save, .. } => super::apps::files_save(out, files_save),
        Payload::Stream { stream, .. } => super::apps::stream(out, stream),
        Payload::Sustain { sustain, .. } => super::sustain::section(out, sustain),
        _ => {}
    }
    life_sections(out, run);
    super::flash::section(out, run);
    notes(out, run);
    let _ = writeln!(out, "</details>");
}

/// The profile's rows: read and write side by side, median with range.
fn profile_table(out: &mut String, run: &RunResult) {
    let _ = writeln!(
        out,
        "<h4>Headline figures</h4>\n<table class=\"stack headline\">"
    );
    let _ = writeln!(
        out,
        "<thead><tr><th>test</th><th>read MB/s</th><th>read IOPS</th><th>write MB/s</th><th>write IOPS</th></tr></thead><tbody>"
    );
    let mut names: Vec<&str> = Vec::new();
    for t in &run.tests {
        if !names.contains(&t.name.as_str()) {
            names.push(&t.name);
        }
    }
    for name in names {
        let _ = write!(out, "<tr><td data-label=\"test\">{}</td>", esc(name));
        for dir in ["read", "write"] {
            let test = run
                .tests
                .iter()
                .find(|t| t.name == name && t.workload.rw.column() == Some(dir == "write"));
            figure_cells(out, test, &format!("{name} {dir}"), dir);
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody></table>");
}

/// MB/s (with range) and IOPS cells of one test, or why there are none.
fn figure_cells(out: &mut String, test: Option<&TestResult>, key: &str, dir: &str) {
    match test {
        Some(t) if t.skipped.is_some() => {
            let _ = write!(
                out,
                "<td colspan=\"2\" data-label=\"{dir}\" class=\"range\">skipped</td>"
            );
        }
        Some(TestResult {
            mb_per_s: Some(m),
            iops: Some(i),
            ..
        }) => {
            let _ = write!(
                out,
                "<td data-label=\"{dir} MB/s\" data-figure=\"{}\">{}</td><td data-label=\"{dir} IOPS\">{}</td>",
                esc(key),
                mbps_with_range(m.median, m.min, m.max, m.count),
                crate::units::format_iops(i.median)
            );
        }
        _ => {
            let _ = write!(
                out,
                "<td colspan=\"2\" data-label=\"{dir}\" class=\"range\">not measured</td>"
            );
        }
    }
}

pub fn mbps_with_range(median: f64, min: f64, max: f64, count: usize) -> String {
    if count > 1 {
        format!(
            "{} <span class=\"range\">({}–{})</span>",
            format_mbps(median),
            format_mbps(min),
            format_mbps(max)
        )
    } else {
        format_mbps(median)
    }
}

/// Any other command's tests, one row each.
fn tests_table(out: &mut String, run: &RunResult) {
    let _ = writeln!(out, "<h4>Figures</h4>\n<table class=\"stack headline\">");
    let _ = writeln!(
        out,
        "<thead><tr><th>test</th><th>pattern</th><th>block</th><th>QD</th><th>MB/s</th><th>IOPS</th></tr></thead><tbody>"
    );
    for t in &run.tests {
        let w = &t.workload;
        let _ = write!(
            out,
            "<tr><td data-label=\"test\">{}</td><td data-label=\"pattern\">{}</td><td data-label=\"block\">{}</td><td data-label=\"QD\">{}</td>",
            esc(&t.name),
            esc(w.rw.as_str()),
            esc(&format_size(w.block_size)),
            w.queue_depth
        );
        let key = format!("{} {}", t.name, w.rw);
        match (&t.mb_per_s, &t.iops) {
            (Some(m), Some(i)) => {
                let _ = write!(
                    out,
                    "<td data-label=\"MB/s\" data-figure=\"{}\">{}</td><td data-label=\"IOPS\">{}</td>",
                    esc(&key),
                    mbps_with_range(m.median, m.min, m.max, m.count),
                    crate::units::format_iops(i.median)
                );
            }
            _ => {
                let _ = write!(
                    out,
                    "<td colspan=\"2\" data-label=\"MB/s\" class=\"range\">{}</td>",
                    esc(&t
                        .skipped
                        .as_ref()
                        .map_or("not measured".into(), crate::report::caveats::skipped))
                );
            }
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody></table>");
}

/// Throughput against size: the curve chart and, per series, its numbers.
fn curve_section(out: &mut String, run: &RunResult, series: &[CurveSeries]) {
    let _ = writeln!(out, "<h4>Throughput against transfer size</h4>");
    // The chart's own panel title is short at the page's text size; the
    // caption names the panel in full, exactly when it is drawn.
    let panel = series
        .iter()
        .filter(|s| s.skipped.is_none())
        .any(|s| s.unaligned_points().iter().any(|p| p.mb_per_s.is_some()));
    let lower = match panel {
        true => format!(
            " Lower panel: {} (crosses mark the unaligned sizes).",
            crate::report::svg::UNALIGNED_CAPTION
        ),
        false => String::new(),
    };
    let _ = writeln!(
        out,
        "<figure data-chart=\"curve\">{}<figcaption>Medians with min–max whiskers; dashed lines are the fitted t = t0 + n/B models. Hollow markers: through the page cache.{}</figcaption></figure>",
        Svg::for_page(run),
        esc(&lower)
    );
    for s in series.iter().filter(|s| s.skipped.is_none()) {
        let _ = writeln!(
            out,
            "<h4>{} · {} · QD {}</h4>",
            esc(&s.target),
            esc(s.pattern.name()),
            s.queue_depth
        );
        if let Some(m) = &s.model {
            let _ = writeln!(
                out,
                "<p>Model: t0 = {} per request, B = {} MB/s, n½ = {}, n90 = {} (weighted R² {:.4}).</p>",
                format_latency(m.t0_us * 1e3),
                format_mbps(m.bandwidth_mb_s),
                esc(&format_size(m.n_half_bytes.round() as u64)),
                esc(&format_size(m.n90_bytes.round() as u64)),
                m.r_squared
            );
        }
        if let Some(advice) = crate::report::curve_words::advice_line(s) {
            let _ = writeln!(out, "<p><strong>{}</strong></p>", esc(&advice));
        }
        let points: Vec<&CurvePoint> = s.series_points().collect();
        let _ = writeln!(
            out,
            "<div class=\"scroll\"><table><thead><tr><th>size</th><th>MB/s</th><th>IOPS</th><th>p50</th><th>p99</th><th>vs model</th></tr></thead><tbody>"
        );
        for p in points {
            let mark = if p.buffered { " †" } else { "" };
            let mbps = p.mb_per_s.map_or("-".into(), |m| {
                mbps_with_range(m.median, m.min, m.max, m.count)
            });
            let (iops, p50, p99) = point_cells(p);
            let _ = writeln!(
                out,
                "<tr><td>{}{mark}</td><td>{mbps}</td><td>{iops}</td><td>{p50}</td><td>{p99}</td><td>{}</td></tr>",
                esc(&format_size(p.size)),
                p.model_ratio.map_or(String::new(), |r| format!("{r:.2}×"))
            );
        }
        let _ = writeln!(out, "</tbody></table></div>");
        unaligned_section(out, s);
    }
}

/// The IOPS, p50 and p99 cells of a curve point's row, each latency in
/// the unit that suits it.
fn point_cells(p: &CurvePoint) -> (String, String, String) {
    (
        p.iops
            .map_or("-".into(), |i| crate::units::format_iops(i.median)),
        p.p50_ns.map_or("-".into(), |v| format_latency(v as f64)),
        p.p99_ns.map_or("-".into(), |v| format_latency(v as f64)),
    )
}

/// The unaligned sizes between their aligned neighbours, all through the
/// page cache, by size, and one verdict per unaligned size (the text
/// report's sentences).
fn unaligned_section(out: &mut String, s: &CurveSeries) {
    let points = s.unaligned_points();
    if points.is_empty() && s.alignment_penalties.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section data-section=\"unaligned\"><h4>{}</h4>",
        esc(&capitalised(crate::report::text_curve::UNALIGNED_HEADING))
    );
    if !points.is_empty() {
        let _ = writeln!(
            out,
            "<div class=\"scroll\"><table><thead><tr><th>size</th><th></th><th>MB/s</th><th>IOPS</th><th>p50</th><th>p99</th></tr></thead><tbody>"
        );
        for p in &points {
            let kind = if p.reference { "aligned" } else { "unaligned" };
            let mbps = p.mb_per_s.map_or("-".into(), |m| {
                mbps_with_range(m.median, m.min, m.max, m.count)
            });
            let (iops, p50, p99) = point_cells(p);
            let _ = writeln!(
                out,
                "<tr data-kind=\"{kind}\"><td>{}</td><td>{kind}</td><td>{mbps}</td><td>{iops}</td><td>{p50}</td><td>{p99}</td></tr>",
                esc(&crate::report::text_curve::section_size(p)),
            );
        }
        let _ = writeln!(out, "</tbody></table></div>");
    }
    if !s.alignment_penalties.is_empty() {
        let _ = writeln!(out, "<ul>");
        for a in &s.alignment_penalties {
            let _ = writeln!(
                out,
                "<li data-size=\"{}\">{}</li>",
                a.size,
                esc(&crate::report::text_curve::verdict_line(a))
            );
        }
        let _ = writeln!(out, "</ul>");
    }
    let _ = writeln!(out, "</section>");
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Latency percentiles of every test (its median repetition).
fn latency_section(out: &mut String, run: &RunResult) {
    let rows: Vec<(String, crate::stats::LatencySummary)> = run
        .tests
        .iter()
        .filter_map(|t| {
            median_rep(t)
                .and_then(|m| m.latency)
                .map(|l| (format!("{} {}", t.name, t.workload.rw), l))
        })
        .collect();
    if rows.is_empty() || run.payload.curve().is_some() {
        return;
    }
    let _ = writeln!(out, "<h4>Latency percentiles</h4>");
    let _ = writeln!(
        out,
        "<figure data-chart=\"latency\">{}<figcaption>Completion latency per I/O, log scale.</figcaption></figure>",
        charts::latency(&rows)
    );
    let headers: String = ["p50", "p90", "p99", "p99.9", "max"]
        .iter()
        .map(|q| format!("<th>{q}</th>"))
        .collect();
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table><thead><tr><th>test</th>{headers}</tr></thead><tbody>"
    );
    for (name, l) in &rows {
        let cells: String = [l.p50_ns, l.p90_ns, l.p99_ns, l.p99_9_ns, l.max_ns]
            .iter()
            .map(|&ns| format!("<td>{}</td>", format_latency(ns as f64)))
            .collect();
        let _ = writeln!(out, "<tr><td>{}</td>{cells}</tr>", esc(name));
    }
    let _ = writeln!(out, "</tbody></table></div>");
}

/// Surface, parallel, copy and endure: their charts, and their figures as
/// the text report prints them.
fn life_sections(out: &mut String, run: &RunResult) {
    let p = &run.payload;
    if p.surface().is_none() && p.parallel().is_none() && p.copy().is_none() && p.endure().is_none()
    {
        return;
    }
    if p.surface().is_some() {
        let _ = writeln!(
            out,
            "<h4>Speed by position</h4>\n<figure data-chart=\"surface\">{}<figcaption>MB/s against position on the device; shaded: slow regions.</figcaption></figure>",
            crate::report::SurfaceSvg::for_page(run)
        );
    }
    if p.endure().is_some() {
        let _ = writeln!(
            out,
            "<h4>Endurance</h4>\n<figure data-chart=\"endure\">{}<figcaption>Write and read speed and bad blocks, cycle by cycle.</figcaption></figure>",
            crate::report::EndureSvg::for_page(run)
        );
    }
    let mut text = String::new();
    crate::report::text_life::sections(&mut text, p);
    let _ = writeln!(
        out,
        "<details><summary>The figures as the text report prints them</summary><pre data-section=\"figures\">{}</pre></details>",
        esc(&text)
    );
}

/// The repetition whose MB/s is the test's median.
fn median_rep(t: &TestResult) -> Option<&Measurement> {
    let target = t.mb_per_s?.median;
    t.repetitions.iter().min_by(|a, b| {
        (a.mb_per_s - target)
            .abs()
            .total_cmp(&(b.mb_per_s - target).abs())
    })
}

/// A run's notes, warnings and how it ended, each once, with whether it
/// says the figures are not the medium's speed (or not whole), which the
/// page marks.
pub fn note_lines(run: &RunResult) -> Vec<(bool, String)> {
    let mut lines: Vec<(bool, String)> = run
        .target
        .notes
        .iter()
        .map(|c| {
            (
                c.kind().undermines_figure(),
                crate::report::caveats::line(c),
            )
        })
        .collect();
    for t in &run.tests {
        for m in &t.repetitions {
            for w in &m.warnings {
                let line = (
                    w.kind().undermines_figure(),
                    format!("{}: {}", t.name, crate::report::caveats::line(w)),
                );
                if !lines.contains(&line) {
                    lines.push(line);
                }
            }
        }
    }
    if let Some(e) = &run.error {
        lines.push((true, format!("FAILED: {e}; the figures are partial")));
    }
    if run.interrupted {
        let line = "INTERRUPTED: the run was stopped early; the figures are partial";
        lines.push((true, line.into()));
    }
    lines
}

fn notes(out: &mut String, run: &RunResult) {
    let lines = note_lines(run);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h4>Notes</h4>\n<ul>");
    for (alarm, l) in lines {
        let class = if alarm { " class=\"warn\"" } else { "" };
        let _ = writeln!(out, "<li{class}>{}</li>", esc(&l));
    }
    let _ = writeln!(out, "</ul>");
}

/// Units, version, configuration, date and host.
pub fn footer(out: &mut String, input: &ReportInput) {
    let _ = writeln!(out, "<footer>\n<p>{}</p>", esc(LEGEND));
    for run in &input.runs {
        let config = serde_json::to_string_pretty(&run.payload.config_json()).unwrap_or_default();
        let _ = writeln!(
            out,
            "<p>iocurve {} · {} · {} · host {} (Linux {})</p>\n<details><summary>Configuration of this {}</summary><pre>{}</pre></details>",
            esc(&run.iocurve_version),
            esc(&run.command()),
            esc(&run.started_at),
            esc(&run.host.hostname),
            esc(&run.host.kernel),
            esc(&run.command()),
            esc(&config)
        );
    }
    let _ = writeln!(out, "</footer>");
}
