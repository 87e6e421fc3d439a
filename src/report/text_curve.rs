//! The curve part of the text report: per target and pattern, a table of
//! sizes, the model and what it says, and a compact bar chart; then, apart,
//! the unaligned sizes beside aligned neighbours measured the same way
//! (through the page cache), with their own table, chart and verdicts.

use super::curve_words::AdviceWords;
use super::table::Table;
use super::text_files::model_ratio;
use super::text_marks::{UNSTABLE_LEGEND, unstable_mark};
use crate::result::curve::{AlignmentPenalty, FitQuality, MbRange, ModelFit, Penalty};
use crate::result::{CurvePoint, CurveReport, CurveSeries};
use crate::units::{format_iops, format_latency, format_mbps, format_size_figure};
use std::fmt::Write;

/// Width of the terminal bar chart, in characters.
const CHART_WIDTH: f64 = 40.0;

pub fn curve_tables(out: &mut String, curve: &CurveReport) {
    for t in curve.targets.iter().skip(1) {
        let _ = writeln!(
            out,
            "target      {} ({:?}, {}, {:?})",
            super::table::cut(&t.path, crate::units::escape::NAME_COLUMNS),
            t.kind,
            format_size_figure(t.size_bytes),
            t.mode
        );
    }
    for s in &curve.series {
        series_block(out, s);
    }
    for x in &curve.crossovers {
        let _ = writeln!(
            out,
            "crossover   {}: {} is faster below ~{}, {} above (between {} and {})",
            x.pattern.name(),
            x.faster_below,
            format_size_figure(x.at_bytes.round() as u64),
            x.faster_above,
            format_size_figure(x.between.0),
            format_size_figure(x.between.1)
        );
    }
    let shown = || {
        curve
            .series
            .iter()
            .flat_map(|s| s.series_points().chain(s.unaligned_points()))
    };
    if shown().any(|p| p.mb_per_s.is_some_and(|m| m.is_unstable())) {
        let _ = writeln!(out, "{UNSTABLE_LEGEND}");
    }
    if shown().any(|p| p.buffered) {
        let _ = writeln!(
            out,
            "†           measured through the page cache with fdatasync at the end (O_DIRECT cannot do sizes that are not a multiple of the logical block)"
        );
    }
}

fn series_block(out: &mut String, s: &CurveSeries) {
    let _ = writeln!(
        out,
        "\n== {} · {} · QD {} ==",
        s.target,
        s.pattern.name(),
        s.queue_depth
    );
    if let Some(why) = &s.skipped {
        let _ = writeln!(out, "skipped     {}", super::caveats::skipped(why));
        return;
    }
    let points: Vec<&CurvePoint> = s.series_points().collect();
    let columns = PointColumns::for_points(&points);
    let mut headers = vec!["size".to_string()];
    headers.extend(columns.headers());
    headers.push("vs model".into());
    let mut table = Table::new(&headers);
    for p in &points {
        let mark = if p.buffered { " †" } else { "" };
        let mut row = vec![format!("{}{mark}", format_size_figure(p.size))];
        row.extend(columns.cells(p));
        row.push(p.model_ratio.map_or(String::new(), model_ratio));
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}");
    model_lines(out, s);
    for (size, warning) in &s.warnings {
        let _ = writeln!(
            out,
            "WARNING     {}: {}",
            format_size_figure(*size),
            super::caveats::line(warning)
        );
    }
    chart(out, &s.series_points().collect::<Vec<_>>(), |p| {
        format_size_figure(p.size)
    });
    unaligned_section(out, s);
}

fn model_lines(out: &mut String, s: &CurveSeries) {
    match &s.model {
        Some(m) => {
            // The unit's meaning on a line of its own, so each line fits.
            let (formula, unit, meaning) = match m.unit_bytes {
                Some(u) => (
                    "t(n) = t0 + max(n, U)/B",
                    format!(", U = {}", format_size_figure(u)),
                    format!(
                        "            every request below {} costs the same: a {} unit\n",
                        format_size_figure(u),
                        format_size_figure(u)
                    ),
                ),
                None => ("t(n) = t0 + n/B", String::new(), String::new()),
            };
            let _ = writeln!(
                out,
                "model       {formula}: t0 = {}, B = {} MB/s{unit}; n½ = {}, n90 = {}",
                format_latency(m.t0_us * 1e3),
                format_mbps(m.bandwidth_mb_s),
                format_size_figure(m.n_half_bytes.max(0.0).round() as u64),
                format_size_figure(m.n90_bytes.max(0.0).round() as u64),
            );
            out.push_str(&meaning);
            fit_line(out, s, m);
        }
        None => {
            let _ = writeln!(
                out,
                "model       no fit: fewer than two aligned points, or the time per request did not grow with size (small requests costing more than large ones, as with flash garbage collection)"
            );
        }
    }
    match (super::curve_words::advice(s), &s.model) {
        (None, _) => {}
        (Some(AdviceWords::Use(line)), _) => {
            let _ = writeln!(out, "advice      {line}");
        }
        (Some(AdviceWords::None(why)), Some(_)) => {
            let _ = writeln!(out, "advice      none: {why}");
        }
        (Some(AdviceWords::None(_)), None) => {
            let _ = writeln!(out, "advice      none: there is no model to base it on");
        }
    }
    for d in &s.deviations {
        let _ = writeln!(
            out,
            "off-model   {}: {}",
            format_size_figure(d.size),
            super::curve_words::deviation(d)
        );
    }
    let unstable = s
        .points
        .iter()
        .filter(|p| p.mb_per_s.is_some_and(|m| m.is_unstable()))
        .count();
    if unstable > 0 {
        let _ = writeln!(
            out,
            "unstable    {unstable} of {} points varied beyond their noise between repetitions: raise --time (no off-model cause is given for them)",
            s.points.len()
        );
    }
    link_lines(out, s);
}

/// The figures the fit is judged by, and the verdict (absent in results
/// stored before fits were judged).
fn fit_line(out: &mut String, s: &CurveSeries, m: &ModelFit) {
    let from = m.unit_bytes.map_or("all sizes".to_string(), |u| {
        format!("from {} up", format_size_figure(u))
    });
    let mut figures = format!(
        "weighted R² = {:.4}, worst point {:.0}% off, line through {} sizes ({from})",
        m.r_squared,
        m.max_relative_error * 100.0,
        m.points_used
    );
    if let (Some(t0), Some(b)) = (m.t0_se_us, m.bandwidth_se_mb_s) {
        let _ = write!(
            figures,
            ", t0 ± {}, B ± {} MB/s",
            format_latency(t0 * 1e3),
            format_mbps(b)
        );
    }
    if let Some(best) = m.best_measured_mb_s.filter(|b| *b > 0.0) {
        let above = (m.bandwidth_mb_s / best - 1.0) * 100.0;
        let _ = write!(
            figures,
            ", B {:.1}% {} the best measured {} MB/s",
            above.abs(),
            if above >= 0.0 { "above" } else { "below" },
            format_mbps(best)
        );
    }
    let verdict = match &s.fit_quality {
        Some(FitQuality::Good) => "good: ",
        Some(FitQuality::Poor { .. }) => "poor: ",
        None => "",
    };
    let _ = writeln!(out, "fit         {verdict}{figures}");
}

fn link_lines(out: &mut String, s: &CurveSeries) {
    match (&s.interface, &s.ceiling) {
        (_, Some(c)) => {
            let _ = writeln!(
                out,
                "link        {} (practical ceiling ≈ {} MB/s)",
                c.interface,
                format_mbps(c.limit_mb_s)
            );
            if c.plateau_is_interface {
                let _ = writeln!(
                    out,
                    "            the plateau is the interface's limit, not the medium's: a faster link could show more"
                );
            }
            for (size, mbps) in &c.impossible {
                let _ = writeln!(
                    out,
                    "IMPOSSIBLE  {}: {} MB/s is more than the link can carry; a cache answered, this is not the device's speed",
                    format_size_figure(*size),
                    format_mbps(*mbps)
                );
            }
        }
        (Some(i), None) => {
            let _ = writeln!(out, "link        {} (no known ceiling)", i.description);
        }
        (None, None) => {
            let _ = writeln!(
                out,
                "link        unknown: no ceiling to check the figures against"
            );
        }
    }
}

/// One bar per size, scaled to the fastest point shown, each labelled by
/// `label`.
fn chart(out: &mut String, points: &[&CurvePoint], label: fn(&CurvePoint) -> String) {
    let top = points
        .iter()
        .filter_map(|p| p.mb_per_s.map(|m| m.median))
        .fold(0.0, f64::max);
    if top <= 0.0 {
        return;
    }
    for p in points {
        let Some(m) = p.mb_per_s else { continue };
        let cells = m.median / top * CHART_WIDTH;
        let _ = writeln!(
            out,
            "  {:>9} {} {}",
            label(p),
            bar(cells),
            format_mbps(m.median)
        );
    }
}

/// The heading of the unaligned section, as the reports print it.
/// Short enough for an 80-column terminal with its `-- ` marks.
pub const UNALIGNED_HEADING: &str =
    "unaligned sizes beside aligned ones, all through the page cache";

/// The unaligned sizes between their aligned neighbours, all measured
/// through the page cache, by size; then one verdict per unaligned size.
/// On a buffered target the series itself is measured that way, so only
/// the verdicts are printed.
fn unaligned_section(out: &mut String, s: &CurveSeries) {
    let points = s.unaligned_points();
    if !points.is_empty() {
        let _ = writeln!(out, "\n-- {UNALIGNED_HEADING} --");
        let columns = PointColumns::for_points(&points);
        let mut headers = vec!["size".to_string(), String::new()];
        headers.extend(columns.headers());
        let mut table = Table::new(&headers);
        table.align(1, super::table::Align::Left);
        for p in &points {
            let mut row = vec![
                section_size(p),
                if p.reference { "aligned" } else { "unaligned" }.to_string(),
            ];
            row.extend(columns.cells(p));
            table.add_row(row);
        }
        let _ = writeln!(out, "{table}");
        chart(out, &points, section_size);
    }
    for a in &s.alignment_penalties {
        let _ = writeln!(out, "alignment   {}", verdict_line(a));
    }
}

/// A size in the unaligned section: unaligned ones to the byte.
pub fn section_size(p: &CurvePoint) -> String {
    if p.reference {
        format_size_figure(p.size)
    } else {
        exact_size(p.size)
    }
}

/// A size to the byte below 1 MiB: an unaligned size is about its odd
/// bytes, and 4100 B printed as "4.00 KiB" would hide them.
fn exact_size(size: u64) -> String {
    if size < 1 << 20 {
        format!("{size} B")
    } else {
        format_size_figure(size)
    }
}

/// The figures of a table of curve points: MB/s, its range when the
/// points were repeated, IOPS, and p50 and p99, each cell in its own unit.
struct PointColumns {
    ranges: bool,
}

impl PointColumns {
    fn for_points(points: &[&CurvePoint]) -> PointColumns {
        PointColumns {
            // One repetition has no range: (2230–2230) would only repeat it.
            ranges: points
                .iter()
                .any(|p| p.mb_per_s.is_some_and(|m| m.count > 1)),
        }
    }

    fn headers(&self) -> Vec<String> {
        let mut h = vec!["MB/s".to_string()];
        if self.ranges {
            h.push("(min–max)".into());
        }
        h.push("IOPS".into());
        h.push("p50".into());
        h.push("p99".into());
        h
    }

    fn cells(&self, p: &CurvePoint) -> Vec<String> {
        let mut cells = vec![p.mb_per_s.map_or("-".into(), |m| {
            format!("{}{}", unstable_mark(&m), format_mbps(m.median))
        })];
        if self.ranges {
            cells.push(p.mb_per_s.map_or(String::new(), |m| {
                format!("({}–{})", format_mbps(m.min), format_mbps(m.max))
            }));
        }
        cells.push(p.iops.map_or("-".into(), |i| format_iops(i.median)));
        let time = |ns: Option<u64>| ns.map_or("-".into(), |v| format_latency(v as f64));
        cells.push(time(p.p50_ns));
        cells.push(time(p.p99_ns));
        cells
    }
}

/// One sentence per unaligned size: the verdict first, then the ranges it
/// rests on.
pub fn verdict_line(a: &AlignmentPenalty) -> String {
    let size = exact_size(a.size);
    let between = format!(
        "between {} and {}",
        format_size_figure(a.lower_neighbour),
        format_size_figure(a.upper_neighbour)
    );
    let ranges = match (a.measured_range, a.expected_range) {
        (Some(m), Some(e)) => format!(
            "{} MB/s measured, {} MB/s interpolated {between}",
            mb_range(m),
            mb_range(e)
        ),
        _ => format!(
            "{} MB/s measured, {} MB/s interpolated {between}",
            format_mbps(a.measured_mb_s),
            format_mbps(a.expected_mb_s)
        ),
    };
    match a.verdict {
        Some(Penalty::Slower { factor, at_least }) => format!(
            "{size}: {factor:.1}× slower than its aligned neighbours imply (at least {at_least:.1}×; the ranges do not overlap): {ranges}"
        ),
        Some(Penalty::Faster { factor, at_least }) => format!(
            "{size}: {factor:.1}× faster than its aligned neighbours imply (at least {at_least:.1}×; the ranges do not overlap): {ranges}"
        ),
        Some(Penalty::NoPenaltySeen) => {
            format!("{size}: no penalty seen (the ranges overlap): {ranges}")
        }
        Some(Penalty::SingleRepetition) => format!(
            "{size}: not judged, one repetition gives no range (use --repeat 3 or more): {ranges}"
        ),
        None => format!(
            "{size}: not judged (stored by an iocurve that compared medians only): {ranges}"
        ),
    }
}

fn mb_range(r: MbRange) -> String {
    format!("{}–{}", format_mbps(r.min), format_mbps(r.max))
}

/// A horizontal bar in eighths of a character.
fn bar(cells: f64) -> String {
    const PARTS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
    let eighths = (cells * 8.0).round().max(1.0) as usize;
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[eighths % 8 - 1]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A series as iocurve stored it before the unaligned section: the
    /// buffered points in `points`, the penalty without ranges or verdict.
    fn legacy_series() -> CurveSeries {
        let point = |size: u64, buffered: bool, reference: bool, mbps: f64| {
            serde_json::json!({
                "size": size, "buffered": buffered, "reference": reference,
                "mb_per_s": {"median": mbps, "min": mbps, "max": mbps, "count": 1},
                "iops": {"median": mbps * 1e6 / size as f64, "min": 1.0, "max": 1.0, "count": 1},
                "p50_ns": 1000, "p99_ns": 2000, "model_ratio": null, "test": 0
            })
        };
        serde_json::from_value(serde_json::json!({
            "target": "/mnt", "pattern": "write", "queue_depth": 1,
            "logical_block_size": 512,
            "points": [
                point(512, false, false, 21.2),
                point(768, true, false, 207.0),
                point(4096, false, false, 150.0),
                point(512, true, true, 400.0),
                point(4096, true, true, 900.0)
            ],
            "model": null, "deviations": [],
            "alignment_penalties": [{
                "size": 768, "measured_mb_s": 207.0, "expected_mb_s": 414.0,
                "slowdown": 2.0, "lower_neighbour": 512, "upper_neighbour": 4096
            }],
            "recommendation": null, "interface": null, "ceiling": null,
            "skipped": null, "warnings": []
        }))
        .expect("a run stored before the unaligned section still loads")
    }

    #[test]
    fn an_old_run_shows_its_buffered_points_apart_and_unjudged() {
        let s = legacy_series();
        let direct: Vec<u64> = s.series_points().map(|p| p.size).collect();
        assert_eq!(direct, vec![512, 4096]);
        let section: Vec<(u64, bool)> = s
            .unaligned_points()
            .iter()
            .map(|p| (p.size, p.reference))
            .collect();
        assert_eq!(section, vec![(512, true), (768, false), (4096, true)]);
        let mut out = String::new();
        series_block(&mut out, &s);
        let (main, section) = out.split_once(UNALIGNED_HEADING).unwrap();
        assert!(!main.contains("768") && !main.contains('†'), "{out}");
        assert!(section.contains("768 B"), "{out}");
        assert!(
            section.contains("768 B: not judged (stored by an iocurve that compared medians only)"),
            "{out}"
        );
    }

    #[test]
    fn each_verdict_has_its_sentence() {
        let mut a = legacy_series().alignment_penalties.remove(0);
        let range = MbRange {
            min: 1.0,
            median: 2.0,
            max: 3.0,
        };
        a.measured_range = Some(range);
        a.expected_range = Some(range);
        for (verdict, words) in [
            (
                Penalty::Slower {
                    factor: 2.0,
                    at_least: 1.5,
                },
                "768 B: 2.0× slower than its aligned neighbours imply (at least 1.5×",
            ),
            (
                Penalty::Faster {
                    factor: 3.0,
                    at_least: 1.2,
                },
                "768 B: 3.0× faster",
            ),
            (Penalty::NoPenaltySeen, "768 B: no penalty seen"),
            (
                Penalty::SingleRepetition,
                "768 B: not judged, one repetition",
            ),
        ] {
            a.verdict = Some(verdict);
            let line = verdict_line(&a);
            assert!(line.starts_with(words), "{line}");
            assert!(line.contains("1.00–3.00 MB/s measured"), "{line}");
        }
    }
}
