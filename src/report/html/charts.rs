//! The report's own charts (the curve, surface and endurance charts are
//! shared with `--svg`): latency percentiles per test, one small history
//! chart per test, and the bars and lines of the application workloads.
//!
//! All are drawn with [`super::svg_kit`]: a viewBox, text sized for a phone,
//! the legend above the plot (never over the data), every row or group
//! labelled in full, and ticks written 10, 100, 1k.

use super::svg_kit::{
    Anchor, Canvas, FONT, Marker, TITLE_FONT, VIEW_WIDTH, decade_ticks, linear_ticks, text_width,
    tick_label,
};
use crate::report::palette::colour;
use crate::result::stored::HistoryPoint;
use crate::stats::LatencySummary;
use crate::units::{format_latency, format_mbps};

/// Picks one percentile out of a summary.
type Pick = fn(&LatencySummary) -> u64;

const QUANTILES: [(&str, Pick); 5] = [
    ("p50", |l| l.p50_ns),
    ("p90", |l| l.p90_ns),
    ("p99", |l| l.p99_ns),
    ("p99.9", |l| l.p99_9_ns),
    ("max", |l| l.max_ns),
];

/// Left and right edges of a plot whose labels sit above its rows.
const ROW_LEFT: f64 = 12.0;
const ROW_RIGHT: f64 = VIEW_WIDTH - 22.0;

/// Height of one labelled bar row: its label line, its bar, a gap.
const ROW_LABEL: f64 = FONT + 4.0;
const BAR: f64 = 14.0;
const ROW_HEIGHT: f64 = ROW_LABEL + BAR + 10.0;

/// A value axis: ticks and how values map onto `from..to` units.
struct Axis {
    ticks: Vec<f64>,
    log: bool,
    from: f64,
    to: f64,
}

impl Axis {
    fn log(lo: f64, hi: f64, from: f64, to: f64) -> Axis {
        Axis {
            ticks: decade_ticks(lo, hi),
            log: true,
            from,
            to,
        }
    }

    fn linear(hi: f64, from: f64, to: f64) -> Axis {
        Axis {
            ticks: linear_ticks(hi),
            log: false,
            from,
            to,
        }
    }

    fn ends(&self) -> (f64, f64) {
        let first = self.ticks.first().copied().unwrap_or(0.0);
        let last = self.ticks.last().copied().unwrap_or(1.0);
        (first, last)
    }

    /// Where `value` lies, clamped to the axis.
    fn at(&self, value: f64) -> f64 {
        let (lo, hi) = self.ends();
        let share = if self.log {
            let v = value.max(lo);
            (v.log10() - lo.log10()) / (hi.log10() - lo.log10()).max(1e-9)
        } else {
            (value - lo) / (hi - lo).max(1e-12)
        };
        self.from + share.clamp(0.0, 1.0) * (self.to - self.from)
    }
}

/// An axis from `ROW_LEFT` to `ROW_RIGHT`, pulled in so that its first
/// and last tick labels, centred on their ticks, stay inside the chart.
fn row_axis(log: bool, lo: f64, hi: f64) -> Axis {
    let mut axis = if log {
        Axis::log(lo, hi, ROW_LEFT, ROW_RIGHT)
    } else {
        Axis::linear(hi, ROW_LEFT, ROW_RIGHT)
    };
    let (first, last) = axis.ends();
    let half = |v: f64| text_width(&tick_label(v), FONT) / 2.0 + 4.0;
    axis.from = ROW_LEFT.max(half(first));
    axis.to = ROW_RIGHT.min(VIEW_WIDTH - half(last));
    axis
}

/// Vertical grid lines and tick labels of a horizontal value axis, drawn
/// from `top` to `bottom`, with `caption` beneath; returns the y below.
fn value_axis_below(c: &mut Canvas, axis: &Axis, top: f64, bottom: f64, caption: &str) -> f64 {
    for &t in &axis.ticks {
        let x = axis.at(t);
        c.line((x, top), (x, bottom), "#d8dde3", 1.0);
        c.text(x, bottom + FONT + 3.0, FONT, Anchor::Middle, &tick_label(t));
    }
    c.line((axis.from, bottom), (axis.to, bottom), "#5d6670", 1.0);
    let below = bottom + 2.0 * FONT + 10.0;
    c.text(VIEW_WIDTH / 2.0, below, FONT, Anchor::Middle, caption);
    c.reach(below + 6.0);
    below + 6.0
}

/// The one unit of a latency axis from `lo_ns` to `hi_ns` (nanoseconds),
/// and how many nanoseconds make one: the unit its geometric middle reads
/// best in, so a log axis from 10 µs to 1 s is written 0.01 … 1k ms
/// rather than 10 … 1M µs.
pub fn latency_axis_unit(lo_ns: f64, hi_ns: f64) -> (f64, &'static str) {
    let middle = (lo_ns.max(1.0) * hi_ns.max(lo_ns).max(1.0)).sqrt();
    match crate::units::latency_in_unit(middle).1 {
        "s" => (1e9, "s"),
        "ms" => (1e6, "ms"),
        _ => (1e3, "µs"),
    }
}

/// One row per test and direction, named in full above its bar; the bar
/// is split at p50, p90, p99, p99.9 and max (log scale, one time unit
/// chosen by [`latency_axis_unit`]).
pub fn latency(rows: &[(String, LatencySummary)]) -> String {
    let mut c = Canvas::new();
    let legend: Vec<(String, &str, Marker)> = QUANTILES
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (name.to_string(), colour(i), Marker::Swatch))
        .collect();
    let top = c.legend(4.0, &legend) + 4.0;
    let lo_ns = rows
        .iter()
        .map(|(_, l)| l.p50_ns as f64)
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi_ns = rows
        .iter()
        .map(|(_, l)| l.max_ns as f64)
        .fold(0.0, f64::max);
    let lo_ns = if lo_ns.is_finite() { lo_ns } else { 1e3 };
    let (per_unit, unit) = latency_axis_unit(lo_ns, hi_ns);
    let us = |ns: u64| ns as f64 / per_unit;
    let (lo, hi) = (lo_ns / per_unit, hi_ns / per_unit);
    let axis = row_axis(true, lo, hi);
    let bottom = top + rows.len() as f64 * ROW_HEIGHT;
    for &t in &axis.ticks {
        let x = axis.at(t);
        c.line((x, top), (x, bottom), "#d8dde3", 1.0);
    }
    for (i, (name, l)) in rows.iter().enumerate() {
        let y = top + i as f64 * ROW_HEIGHT;
        c.text(ROW_LEFT, y + FONT, FONT, Anchor::Start, name);
        let summary = QUANTILES
            .iter()
            .map(|(q, pick)| format!("{q} {}", format_latency(pick(l) as f64)))
            .collect::<Vec<_>>()
            .join(", ");
        let mut from = axis.at(axis.ends().0);
        for (q, (_, pick)) in QUANTILES.iter().enumerate() {
            let to = axis.at(us(pick(l)));
            if to > from {
                c.rect(
                    (from, y + ROW_LABEL),
                    (to - from, BAR),
                    colour(q),
                    &format!("{name}: {summary}"),
                );
                from = to;
            }
        }
    }
    let caption = format!("latency, {unit} (log scale)");
    value_axis_below(&mut c, &axis, top, bottom, &caption);
    c.finish("latency percentiles per test")
}

/// One small chart for one test of one device: median MB/s of each
/// direction run by run, with min–max whiskers.
pub fn history(test: &str, points: &[HistoryPoint]) -> String {
    let mut c = Canvas::new();
    c.bold_text(
        8.0,
        TITLE_FONT + 2.0,
        TITLE_FONT,
        &fitted(test, VIEW_WIDTH - 16.0),
    );
    let directions = directions(points);
    let legend: Vec<(String, &str, Marker)> = directions
        .iter()
        .map(|rw| (rw.clone(), direction_colour(rw), direction_marker(rw)))
        .collect();
    let legend_bottom = c.legend(TITLE_FONT + 8.0, &legend);
    let mut runs: Vec<i64> = points.iter().map(|p| p.run_id).collect();
    runs.sort_unstable();
    runs.dedup();
    let hi = points.iter().map(|p| p.max).fold(0.0, f64::max);
    let ticks = linear_ticks(hi);
    let left = 12.0
        + ticks
            .iter()
            .map(|t| text_width(&tick_label(*t), FONT))
            .fold(0.0, f64::max);
    let right = VIEW_WIDTH - 12.0;
    c.text(
        left - 6.0,
        legend_bottom + FONT,
        FONT,
        Anchor::Start,
        "MB/s",
    );
    let top = legend_bottom + FONT + 12.0;
    let bottom = top + 170.0;
    let y_axis = Axis::linear(hi, bottom, top);
    y_grid(&mut c, &y_axis, left, right);
    c.line((left, bottom), (right, bottom), "#5d6670", 1.0);
    let slot = (right - left) / runs.len().max(1) as f64;
    let x_of = |run: i64| {
        let i = runs.iter().position(|r| *r == run).unwrap_or(0);
        left + (i as f64 + 0.5) * slot
    };
    run_labels(&mut c, &runs, slot, &x_of, bottom);
    for rw in &directions {
        history_series(&mut c, points, rw, &x_of, &y_axis);
    }
    let below = bottom + 2.0 * FONT + 10.0;
    c.text(
        (left + right) / 2.0,
        below,
        FONT,
        Anchor::Middle,
        "run, oldest to newest",
    );
    c.reach(below + 6.0);
    c.finish(&format!("{test}: MB/s run by run"))
}

/// The y axis's gridlines from `left` to `right`, each labelled left of
/// the plot.
fn y_grid(c: &mut Canvas, y_axis: &Axis, left: f64, right: f64) {
    for &t in &y_axis.ticks {
        let y = y_axis.at(t);
        c.line((left, y), (right, y), "#d8dde3", 1.0);
        c.text(
            left - 6.0,
            y + FONT * 0.35,
            FONT,
            Anchor::End,
            &tick_label(t),
        );
    }
}

/// One direction's medians run by run, joined by a line, each with its
/// min–max whisker and a tooltip naming the run.
fn history_series(
    c: &mut Canvas,
    points: &[HistoryPoint],
    rw: &str,
    x_of: &dyn Fn(i64) -> f64,
    y_axis: &Axis,
) {
    let (fill, marker) = (direction_colour(rw), direction_marker(rw));
    let mut series: Vec<&HistoryPoint> = points.iter().filter(|p| p.rw == rw).collect();
    series.sort_by_key(|p| p.run_id);
    let line: Vec<(f64, f64)> = series
        .iter()
        .map(|p| (x_of(p.run_id), y_axis.at(p.median)))
        .collect();
    if line.len() > 1 {
        c.polyline(&line, fill);
    }
    for p in &series {
        let x = x_of(p.run_id);
        if p.max > p.min {
            c.line((x, y_axis.at(p.min)), (x, y_axis.at(p.max)), fill, 1.5);
        }
        let title = format!(
            "run {} ({}): {rw} {} MB/s ({}–{})",
            p.run_id,
            p.started_at,
            format_mbps(p.median),
            format_mbps(p.min),
            format_mbps(p.max)
        );
        c.dot((x, y_axis.at(p.median)), fill, marker, &title);
    }
}

/// `text` shortened with an ellipsis to fit `width` units of title text.
fn fitted(text: &str, width: f64) -> String {
    if text_width(text, TITLE_FONT) <= width {
        return text.to_string();
    }
    let keep = (width / (TITLE_FONT * 0.56)) as usize;
    let head: String = text.chars().take(keep.saturating_sub(1)).collect();
    format!("{head}…")
}

/// The run ids under the x axis, thinned so that they do not collide.
fn run_labels(c: &mut Canvas, runs: &[i64], slot: f64, x_of: &dyn Fn(i64) -> f64, bottom: f64) {
    let widest = runs
        .iter()
        .map(|r| text_width(&format!("#{r}"), FONT) + 8.0)
        .fold(0.0, f64::max);
    let every = (widest / slot).ceil().max(1.0) as usize;
    for (i, run) in runs.iter().enumerate() {
        if i % every == 0 {
            c.text(
                x_of(*run),
                bottom + FONT + 3.0,
                FONT,
                Anchor::Middle,
                &format!("#{run}"),
            );
        }
    }
}

/// The directions of some points, reads first, in a stable order.
fn directions(points: &[HistoryPoint]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in points {
        let rw = p.rw.to_string();
        if !out.contains(&rw) {
            out.push(rw);
        }
    }
    out.sort_by_key(|rw| (!rw.contains("read"), rw.clone()));
    out
}

/// Reads are blue and writes vermillion in every chart, so a reader
/// learns the colours once.
fn direction_colour(rw: &str) -> &'static str {
    match (rw.contains("read"), rw.contains("write")) {
        (true, false) => colour(0),
        (false, true) => colour(1),
        _ => colour(2),
    }
}

/// Writes get squares as well as their colour, for print in grey.
fn direction_marker(rw: &str) -> Marker {
    if rw.contains("write") && !rw.contains("read") {
        Marker::LineSquare
    } else {
        Marker::Line
    }
}

/// One labelled horizontal bar per value, on a log or linear scale; the
/// legend names the series, the caption under the axis the values.
pub fn bars(points: &[(String, f64)], value_desc: &str, series: &str, log: bool) -> String {
    let mut c = Canvas::new();
    let top = c.legend(4.0, &[(series.to_string(), colour(0), Marker::Swatch)]) + 4.0;
    let hi = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let axis = if log {
        let lo = points
            .iter()
            .map(|p| p.1)
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let lo = if lo.is_finite() { lo } else { 1.0 };
        row_axis(true, lo, hi)
    } else {
        row_axis(false, 0.0, hi)
    };
    let bottom = top + points.len() as f64 * ROW_HEIGHT;
    for &t in &axis.ticks {
        let x = axis.at(t);
        c.line((x, top), (x, bottom), "#d8dde3", 1.0);
    }
    let start = axis.at(axis.ends().0);
    for (i, (label, value)) in points.iter().enumerate() {
        let y = top + i as f64 * ROW_HEIGHT;
        let text = format!("{label}: {}", tick_label(*value));
        c.text(ROW_LEFT, y + FONT, FONT, Anchor::Start, &text);
        let end = axis.at(*value).max(start + 1.0);
        c.rect((start, y + ROW_LABEL), (end - start, BAR), colour(0), &text);
    }
    value_axis_below(&mut c, &axis, top, bottom, value_desc);
    c.finish(series)
}

/// One bar of [`rank_bars`]: its label (host and rank), MB/s, and whether
/// it is a straggler.
pub struct RankBar {
    pub label: String,
    pub mb_per_s: f64,
    pub straggler: bool,
}

/// MB/s per rank: one labelled horizontal bar per rank (by rank, so the
/// ranks of one host sit together as the launcher placed them), a line at
/// the median rank's MB/s, stragglers in the second colour and named in
/// their bar's label, so that the chart reads in grey print too.
pub fn rank_bars(bars: &[RankBar], median: f64) -> String {
    let mut c = Canvas::new();
    let legend = [
        ("rank MB/s".to_string(), colour(0), Marker::Swatch),
        ("straggler".to_string(), colour(1), Marker::Swatch),
        ("median rank".to_string(), MEDIAN_INK, Marker::Line),
    ];
    let top = c.legend(4.0, &legend) + 4.0;
    let hi = bars.iter().map(|b| b.mb_per_s).fold(median, f64::max);
    let axis = row_axis(false, 0.0, hi);
    let bottom = top + bars.len() as f64 * ROW_HEIGHT;
    for &t in &axis.ticks {
        let x = axis.at(t);
        c.line((x, top), (x, bottom), "#d8dde3", 1.0);
    }
    let start = axis.at(axis.ends().0);
    for (i, b) in bars.iter().enumerate() {
        let y = top + i as f64 * ROW_HEIGHT;
        let mark = if b.straggler { " (straggler)" } else { "" };
        let text = format!("{}: {} MB/s{mark}", b.label, format_mbps(b.mb_per_s));
        c.text(ROW_LEFT, y + FONT, FONT, Anchor::Start, &text);
        let end = axis.at(b.mb_per_s).max(start + 1.0);
        let fill = colour(usize::from(b.straggler));
        c.rect((start, y + ROW_LABEL), (end - start, BAR), fill, &text);
    }
    let x = axis.at(median);
    c.line((x, top), (x, bottom), MEDIAN_INK, 2.0);
    value_axis_below(&mut c, &axis, top, bottom, "MB/s (10^6 bytes/s) per rank");
    c.finish("MB/s per rank")
}

/// The median line's ink: the axes' dark grey, apart from every bar.
const MEDIAN_INK: &str = "#1d232b";

/// One line of (x, y) points, both axes linear from zero.
pub fn line(points: &[(f64, f64)], x_desc: &str, y_desc: &str, series: &str) -> String {
    let mut c = Canvas::new();
    let legend_bottom = c.legend(4.0, &[(series.to_string(), colour(0), Marker::Line)]);
    let hi_y = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let hi_x = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let y_ticks = linear_ticks(hi_y);
    let left = 12.0
        + y_ticks
            .iter()
            .map(|t| text_width(&tick_label(*t), FONT))
            .fold(0.0, f64::max);
    let right = VIEW_WIDTH - 16.0;
    c.text(
        left - 6.0,
        legend_bottom + FONT,
        FONT,
        Anchor::Start,
        y_desc,
    );
    let top = legend_bottom + FONT + 12.0;
    let bottom = top + 200.0;
    let y_axis = Axis::linear(hi_y, bottom, top);
    y_grid(&mut c, &y_axis, left, right);
    let x_axis = Axis::linear(hi_x, left, right);
    let drawn: Vec<(f64, f64)> = points
        .iter()
        .map(|&(x, y)| (x_axis.at(x), y_axis.at(y)))
        .collect();
    if drawn.len() > 1 {
        c.polyline(&drawn, colour(0));
    }
    // Dots only where they can be told apart.
    if drawn.len() <= 60 {
        for (&(x, y), p) in drawn.iter().zip(points) {
            let title = format!("{}: {}", tick_label(p.0), tick_label(p.1));
            c.dot((x, y), colour(0), Marker::Line, &title);
        }
    }
    value_axis_below(&mut c, &x_axis, bottom, bottom, x_desc);
    c.finish(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(p50: u64, max: u64) -> LatencySummary {
        LatencySummary {
            p50_ns: p50,
            p90_ns: p50 * 2,
            p99_ns: p50 * 4,
            p99_9_ns: p50 * 8,
            p99_99_ns: p50 * 9,
            max_ns: max,
            count: 1,
            min_ns: p50,
            mean_ns: p50 as f64,
            stddev_ns: 0.0,
        }
    }

    #[test]
    fn latency_names_every_row_and_ticks_in_short_form() {
        let rows: Vec<(String, LatencySummary)> = ["read", "write", "randread", "randwrite"]
            .iter()
            .map(|rw| (format!("RND 4KiB Q32 {rw}"), summary(80_000, 900_000_000)))
            .collect();
        let svg = latency(&rows);
        for (name, _) in &rows {
            assert!(svg.contains(&format!(">{name}</text>")), "{name}");
        }
        // 80 µs to 900 ms: the middle is milliseconds, so are the ticks.
        for tick in [
            ">0.01</text>",
            ">0.1</text>",
            ">1</text>",
            ">10</text>",
            ">100</text>",
            ">1k</text>",
            ">latency, ms (log scale)</text>",
        ] {
            assert!(svg.contains(tick), "{tick} missing");
        }
        assert!(svg.contains("p50 80.0 µs, p90 160 µs"), "{svg}");
        assert!(!svg.contains("00000.0"));
        assert!(svg.starts_with("<svg viewBox="));
    }

    #[test]
    fn latency_axes_take_the_unit_of_their_middle() {
        assert_eq!(latency_axis_unit(20e3, 900e3), (1e3, "µs"));
        assert_eq!(latency_axis_unit(80e3, 900e6), (1e6, "ms"));
        assert_eq!(latency_axis_unit(50e6, 30e9), (1e9, "s"));
        assert_eq!(latency_axis_unit(0.0, 0.0), (1e3, "µs"));
    }

    #[test]
    fn history_draws_one_test_with_both_directions() {
        let points: Vec<HistoryPoint> = [(1, "read", 20.0), (1, "write", 8.0), (2, "read", 21.0)]
            .iter()
            .map(|&(run_id, rw, median)| HistoryPoint {
                device: "k".into(),
                run_id,
                started_at: "2026".into(),
                test: "SEQ 1MiB Q8".into(),
                rw: rw.into(),
                median,
                min: median - 1.0,
                max: median + 1.0,
            })
            .collect();
        let svg = history("SEQ 1MiB Q8", &points);
        assert!(svg.contains(">SEQ 1MiB Q8</text>"));
        assert!(svg.contains(">read</text>") && svg.contains(">write</text>"));
        assert!(svg.contains(">#1</text>") && svg.contains(">#2</text>"));
        assert_eq!(svg.matches("<polyline").count(), 1, "one line: reads");
    }
}
