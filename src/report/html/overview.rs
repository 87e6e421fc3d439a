//! The top of the page and each device's part of it: the summary (every
//! device with its headline figures and verdicts), the device's identity
//! card once, its runs as compact rows, and its history as one small chart
//! per test. A run's full figures follow in a collapsible section each
//! (see [`super::sections`]).

use super::devices::{DeviceGroup, Headline, Headlines, headlines, verdicts};
use super::flash::{self, Mark, Verdict};
use super::{charts, esc, sections};
use crate::report::chart_ticks::tick_label;
use crate::result::RunResult;
use crate::result::stored::HistoryPoint;
use crate::units::{format_mbps, format_size};
use std::fmt::Write;

/// One row per device: the figures people compare devices by.
pub fn summary(out: &mut String, groups: &[DeviceGroup<'_>], earlier: &[RunResult]) {
    let _ = writeln!(
        out,
        "<section data-section=\"summary\"><h2>Summary</h2>\n<table class=\"stack summary\"><thead><tr><th>device</th><th>verdicts</th><th>runs</th><th>seq read MB/s</th><th>seq write MB/s</th><th>4K random read IOPS</th><th>4K random write IOPS</th></tr></thead><tbody>"
    );
    for (i, g) in groups.iter().enumerate() {
        let heads = headlines(&g.runs);
        let flash = flash::of_device(&g.runs);
        let failed = flash.iter().any(|v| v.mark == Mark::Fail);
        // The device's name and the targets measured on it, never the
        // store's key (`model:vda@vm|274877906944|virtio`).
        let _ = write!(
            out,
            "<tr data-device=\"{}\"{}><td data-label=\"device\"><a href=\"#device-{i}\">{}</a> <span class=\"range target\">{}</span></td>",
            esc(&g.key),
            if failed { " class=\"failed\"" } else { "" },
            esc(&g.label),
            esc(&targets_of(g)),
        );
        let lines = verdicts(g, earlier);
        let _ = write!(out, "<td data-label=\"verdicts\" class=\"verdicts\">");
        if lines.is_empty() && flash.is_empty() {
            let _ = write!(out, "<span class=\"range\">none yet</span>");
        } else {
            verdict_list(out, &flash, &lines);
        }
        let _ = write!(
            out,
            "</td><td data-label=\"runs\" class=\"num\">{}</td>",
            g.runs.len()
        );
        headline_cells(out, &heads);
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody></table></section>");
}

/// The targets measured on a device, each once: "/mnt/a, /mnt/b".
fn targets_of(g: &DeviceGroup<'_>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for r in &g.runs {
        if !seen.contains(&r.target.path.as_str()) {
            seen.push(&r.target.path);
        }
    }
    seen.join(", ")
}

/// The flash verdicts, each with its badge, then the other sentences.
fn verdict_list(out: &mut String, flash: &[Verdict], lines: &[String]) {
    let _ = write!(out, "<ul class=\"verdicts\">");
    for v in flash {
        let _ = write!(out, "<li>{}</li>", v.html());
    }
    for l in lines {
        let _ = write!(out, "<li>{}</li>", esc(l));
    }
    let _ = write!(out, "</ul>");
}

/// How a headline figure is written.
type Format = fn(f64) -> String;

/// The four headline cells, each naming the test it comes from.
fn headline_cells(out: &mut String, h: &Headlines) {
    let cells: [(&str, &Option<Headline>, Format); 4] = [
        ("seq read MB/s", &h.seq_read_mb_s, format_mbps),
        ("seq write MB/s", &h.seq_write_mb_s, format_mbps),
        ("4K random read IOPS", &h.rnd4k_read_iops, tick_label),
        ("4K random write IOPS", &h.rnd4k_write_iops, tick_label),
    ];
    for (label, head, format) in cells {
        match head {
            Some(Headline { test, value }) => {
                let _ = write!(
                    out,
                    "<td data-label=\"{label}\" class=\"num\">{} <span class=\"range\">{}</span></td>",
                    format(*value),
                    esc(test)
                );
            }
            None => {
                let _ = write!(
                    out,
                    "<td data-label=\"{label}\" class=\"range\">not measured</td>"
                );
            }
        }
    }
}

/// The stored figures of one device.
fn device_history(history: &[HistoryPoint], key: &str) -> Vec<HistoryPoint> {
    let mut points: Vec<HistoryPoint> = Vec::new();
    for p in history.iter().filter(|p| p.device == key) {
        let seen = points
            .iter()
            .any(|q| q.run_id == p.run_id && q.test == p.test && q.rw == p.rw);
        if !seen {
            points.push(p.clone());
        }
    }
    points
}

/// A device: its card, its runs, its history, then each run in full.
pub fn device(out: &mut String, index: usize, g: &DeviceGroup<'_>, history: &[HistoryPoint]) {
    let _ = writeln!(
        out,
        "<section class=\"device\" id=\"device-{index}\" data-device=\"{}\">\n<h2>{} <span class=\"range target\">{}</span></h2>",
        esc(&g.key),
        esc(&g.label),
        esc(&targets_of(g))
    );
    identity_card(out, g);
    runs_table(out, index, g);
    history_section(out, &device_history(history, &g.key));
    let newest = g.runs.len().saturating_sub(1);
    for (i, run) in g.runs.iter().enumerate() {
        sections::run(out, &run_anchor(index, i), run, i == newest);
    }
    let _ = writeln!(out, "</section>");
}

fn run_anchor(device: usize, run: usize) -> String {
    format!("run-{device}-{run}")
}

fn identity_card(out: &mut String, g: &DeviceGroup<'_>) {
    let _ = writeln!(out, "<dl class=\"card\">");
    let flash = flash::of_device(&g.runs);
    if !flash.is_empty() {
        let _ = write!(out, "<dt>verdicts</dt><dd class=\"verdicts\">");
        verdict_list(out, &flash, &[]);
        let _ = writeln!(out, "</dd>");
    }
    match g.identity {
        Some(id) => {
            for line in crate::report::probe::render(id).lines() {
                let (key, value) = split_field(line);
                let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(key), esc(value));
            }
        }
        None => {
            let t = g.runs.last().map(|r| &r.target);
            if let Some(t) = t {
                let _ = writeln!(out, "<dt>target</dt><dd>{}</dd>", esc(&t.path));
                let _ = writeln!(
                    out,
                    "<dt>size</dt><dd>{}</dd>",
                    esc(&format_size(t.size_bytes))
                );
            }
            let _ = writeln!(out, "<dt>identity</dt><dd>unknown (not probed)</dd>");
        }
    }
    let _ = writeln!(out, "</dl>");
}

/// `key    value` as printed by the probe, split at the first run of spaces.
fn split_field(line: &str) -> (&str, &str) {
    match line.find("  ") {
        Some(i) => (line[..i].trim(), line[i..].trim()),
        None => (line.trim(), ""),
    }
}

/// One compact row per run, linking to its full figures.
fn runs_table(out: &mut String, index: usize, g: &DeviceGroup<'_>) {
    let _ = writeln!(
        out,
        "<h3>Runs</h3>\n<table class=\"stack runs\"><thead><tr><th>date</th><th>command</th><th>target · mode</th><th>figures</th><th>status</th></tr></thead><tbody>"
    );
    for (i, run) in g.runs.iter().enumerate() {
        let mode = format!("{:?}", run.target.mode).to_lowercase();
        let _ = writeln!(
            out,
            "<tr data-run=\"{i}\"><td data-label=\"date\"><a href=\"#{}\">{}</a></td><td data-label=\"command\">{}</td><td data-label=\"target · mode\">{} · {}</td><td data-label=\"figures\">{}</td><td data-label=\"status\">{}</td></tr>",
            run_anchor(index, i),
            esc(&run.started_at),
            esc(&run.command()),
            esc(&run.target.path),
            esc(&mode),
            run_figures(run),
            status(run)
        );
    }
    let _ = writeln!(out, "</tbody></table>");
}

/// A run's figures in one short line: a flash run's verdicts with their
/// badges, else its headline figures.
fn run_figures(run: &RunResult) -> String {
    let flash = flash::of_run(run);
    if !flash.is_empty() {
        return flash
            .iter()
            .map(|v| v.html())
            .collect::<Vec<_>>()
            .join("<br>");
    }
    esc(&figures_line(run))
}

/// A measuring run's headline figures in one short line.
fn figures_line(run: &RunResult) -> String {
    let h = headlines(&[run]);
    let pair = |a: &Option<Headline>, b: &Option<Headline>, format: Format| match (a, b) {
        (None, None) => None,
        _ => Some(format!(
            "{} / {}",
            a.as_ref().map_or("-".into(), |h| format(h.value)),
            b.as_ref().map_or("-".into(), |h| format(h.value))
        )),
    };
    let mut parts = Vec::new();
    if let Some(seq) = pair(&h.seq_read_mb_s, &h.seq_write_mb_s, format_mbps) {
        parts.push(format!("seq {seq} MB/s"));
    }
    if let Some(rnd) = pair(&h.rnd4k_read_iops, &h.rnd4k_write_iops, tick_label) {
        parts.push(format!("4K {rnd} IOPS"));
    }
    if !parts.is_empty() {
        return format!("{} (read / write)", parts.join(" · "));
    }
    if let Some(c) = run.payload.curve() {
        return format!("{} curve series", c.series.len());
    }
    if let Some(s) = run.payload.sustain() {
        return format!(
            "{} MB/s over {}",
            format_mbps(s.mb_per_s),
            format_size(s.bytes)
        );
    }
    run.tests
        .iter()
        .find_map(|t| {
            t.mb_per_s.map(|m| {
                format!(
                    "{} {} {} MB/s",
                    t.name,
                    t.workload.rw,
                    format_mbps(m.median)
                )
            })
        })
        .unwrap_or_else(|| "see the details".into())
}

/// Complete, interrupted or failed, and how many notes to read.
fn status(run: &RunResult) -> String {
    let state = if let Some(e) = &run.error {
        format!("<span class=\"warn\">failed</span>: {}", esc(e))
    } else if run.interrupted {
        "<span class=\"warn\">interrupted</span>".to_string()
    } else {
        "complete".to_string()
    };
    let state = match run.payload.flash() {
        Some(f) if f.failed() => format!(
            "{state} · {} {}",
            flash::badge(Mark::Fail, "FAILED"),
            match f.test {
                crate::vocab::options::FlashTest::Capacity => "verdict: a fake card",
                _ => "verdict: a requirement failed",
            }
        ),
        _ => state,
    };
    let notes = sections::note_lines(run).len();
    if notes > 0 {
        format!("{state} · {notes} note(s)")
    } else {
        state
    }
}

/// One small chart per test, side by side where the page is wide, and the
/// same figures as a table for those who want the numbers.
fn history_section(out: &mut String, points: &[HistoryPoint]) {
    if points.is_empty() {
        return;
    }
    // A test measured in one run only has no history to draw; its figure
    // stays in the table below.
    let mut tests: Vec<&str> = Vec::new();
    for p in points {
        let runs = points
            .iter()
            .filter(|q| q.test == p.test)
            .map(|q| q.run_id)
            .collect::<std::collections::BTreeSet<i64>>()
            .len();
        if runs > 1 && !tests.contains(&p.test.as_str()) {
            tests.push(&p.test);
        }
    }
    let _ = writeln!(
        out,
        "<h3>History</h3>\n<p class=\"sub\">Median MB/s of each stored run of this device, one chart per test measured more than once; whiskers span the repetitions.</p>\n<div class=\"multiples\">"
    );
    for test in &tests {
        let of_test: Vec<HistoryPoint> =
            points.iter().filter(|p| p.test == *test).cloned().collect();
        let _ = writeln!(
            out,
            "<figure data-chart=\"history\" data-test=\"{}\">{}</figure>",
            esc(test),
            charts::history(test, &of_test)
        );
    }
    let _ = writeln!(out, "</div>");
    history_table(out, points);
}

/// The history's numbers: one row per run and test, so it stays narrow.
fn history_table(out: &mut String, points: &[HistoryPoint]) {
    let _ = writeln!(
        out,
        "<details><summary>History as a table</summary>\n<table class=\"history\"><thead><tr><th>run</th><th>date</th><th>test</th><th>MB/s</th></tr></thead><tbody>"
    );
    let mut sorted: Vec<&HistoryPoint> = points.iter().collect();
    sorted.sort_by_key(|p| p.run_id);
    for p in sorted {
        let _ = writeln!(
            out,
            "<tr><td data-label=\"run\">{}</td><td data-label=\"date\">{}</td><td data-label=\"test\">{} {}</td><td data-label=\"MB/s\">{}</td></tr>",
            p.run_id,
            esc(&p.started_at),
            esc(&p.test),
            esc(p.rw.as_str()),
            sections::mbps_with_range(p.median, p.min, p.max, if p.max > p.min { 2 } else { 1 })
        );
    }
    let _ = writeln!(out, "</tbody></table></details>");
}
