//! The curve part of the text report: per target and pattern, a table of
//! sizes, the model and what it says, and a compact bar chart.

use super::text::{UNSTABLE_LEGEND, new_table, unstable_mark};
use crate::analysis::curve::{FitQuality, ModelFit};
use crate::result::{CurveReport, CurveSeries};
use crate::units::{format_latency_ns, format_mbps, format_size};
use std::fmt::Write;

/// Width of the terminal bar chart, in characters.
const CHART_WIDTH: f64 = 40.0;

pub fn curve_tables(out: &mut String, curve: &CurveReport) {
    for t in curve.targets.iter().skip(1) {
        let _ = writeln!(
            out,
            "target      {} ({:?}, {}, {:?})",
            t.path,
            t.kind,
            format_size(t.size_bytes),
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
            x.pattern,
            x.faster_below,
            format_size(x.at_bytes.round() as u64),
            x.faster_above,
            format_size(x.between.0),
            format_size(x.between.1)
        );
    }
    let points = || curve.series.iter().flat_map(|s| &s.points);
    if points().any(|p| !p.reference && p.mb_per_s.is_some_and(|m| m.is_unstable())) {
        let _ = writeln!(out, "{UNSTABLE_LEGEND}");
    }
    if points().any(|p| p.buffered) {
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
        s.target, s.pattern, s.queue_depth
    );
    if let Some(why) = &s.skipped {
        let _ = writeln!(out, "skipped     {why}");
        return;
    }
    let mut table = new_table(&[
        "size",
        "MB/s",
        "(min–max)",
        "IOPS",
        "p50 µs",
        "p99 µs",
        "vs model",
    ]);
    for p in s.points.iter().filter(|p| !p.reference) {
        let mark = if p.buffered { " †" } else { "" };
        let (med, range) = p.mb_per_s.map_or(("-".into(), String::new()), |m| {
            (
                format!("{}{}", unstable_mark(&m), format_mbps(m.median)),
                format!("({}–{})", format_mbps(m.min), format_mbps(m.max)),
            )
        });
        table.add_row(vec![
            format!("{}{mark}", format_size(p.size)),
            med,
            range,
            p.iops.map_or("-".into(), |i| format!("{:.0}", i.median)),
            p.p50_ns.map_or("-".into(), |v| format_latency_ns(v as f64)),
            p.p99_ns.map_or("-".into(), |v| format_latency_ns(v as f64)),
            p.model_ratio.map_or(String::new(), |r| format!("{r:.2}×")),
        ]);
    }
    let _ = writeln!(out, "{table}");
    model_lines(out, s);
    for (size, warning) in &s.warnings {
        let _ = writeln!(out, "WARNING     {}: {warning}", format_size(*size));
    }
    chart(out, s);
}

fn model_lines(out: &mut String, s: &CurveSeries) {
    match &s.model {
        Some(m) => {
            let (formula, unit) = match m.unit_bytes {
                Some(u) => (
                    "t(n) = t0 + max(n, U)/B",
                    format!(
                        ", U = {} (every request below {} costs the same: a {} unit)",
                        format_size(u),
                        format_size(u),
                        format_size(u)
                    ),
                ),
                None => ("t(n) = t0 + n/B", String::new()),
            };
            let _ = writeln!(
                out,
                "model       {formula}: t0 = {:.1} µs, B = {} MB/s{unit}; n½ = {}, n90 = {}",
                m.t0_us,
                format_mbps(m.bandwidth_mb_s),
                format_size(m.n_half_bytes.max(0.0).round() as u64),
                format_size(m.n90_bytes.max(0.0).round() as u64),
            );
            fit_line(out, s, m);
        }
        None => {
            let _ = writeln!(
                out,
                "model       no fit: fewer than two aligned points, or the time per request did not grow with size (small requests costing more than large ones, as with flash garbage collection)"
            );
        }
    }
    if let Some(line) = &s.recommendation {
        match (line.strip_prefix("no advice: "), &s.model) {
            (None, _) => {
                let _ = writeln!(out, "advice      {line}");
            }
            (Some(why), Some(_)) => {
                let _ = writeln!(out, "advice      none: {why}");
            }
            (Some(_), None) => {
                let _ = writeln!(out, "advice      none: there is no model to base it on");
            }
        }
    }
    for d in &s.deviations {
        let _ = writeln!(out, "off-model   {}: {}", format_size(d.size), d.note);
    }
    for a in &s.alignment_penalties {
        let _ = writeln!(
            out,
            "alignment   {} is {} than its aligned neighbours ({} and {}) suggest: {} MB/s against {} MB/s",
            format_size(a.size),
            if a.slowdown >= 1.0 {
                format!("{:.1}× slower", a.slowdown)
            } else {
                format!("{:.1}× faster", 1.0 / a.slowdown)
            },
            format_size(a.lower_neighbour),
            format_size(a.upper_neighbour),
            format_mbps(a.measured_mb_s),
            format_mbps(a.expected_mb_s)
        );
    }
    link_lines(out, s);
}

/// The figures the fit is judged by, and the verdict (absent in results
/// stored before fits were judged).
fn fit_line(out: &mut String, s: &CurveSeries, m: &ModelFit) {
    let from = m.unit_bytes.map_or("all sizes".to_string(), |u| {
        format!("from {} up", format_size(u))
    });
    let mut figures = format!(
        "weighted R² = {:.4}, worst point {:.0}% off, line through {} sizes ({from})",
        m.r_squared,
        m.max_relative_error * 100.0,
        m.points_used
    );
    if let (Some(t0), Some(b)) = (m.t0_se_us, m.bandwidth_se_mb_s) {
        let _ = write!(figures, ", t0 ± {:.1} µs, B ± {} MB/s", t0, format_mbps(b));
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
                    format_size(*size),
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

/// One bar per size, scaled to the fastest point of the series.
fn chart(out: &mut String, s: &CurveSeries) {
    let top = s
        .points
        .iter()
        .filter_map(|p| p.mb_per_s.map(|m| m.median))
        .fold(0.0, f64::max);
    if top <= 0.0 {
        return;
    }
    for p in s.points.iter().filter(|p| !p.reference) {
        let Some(m) = p.mb_per_s else { continue };
        let cells = m.median / top * CHART_WIDTH;
        let _ = writeln!(
            out,
            "  {:>9} {} {}",
            format_size(p.size),
            bar(cells),
            format_mbps(m.median)
        );
    }
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
