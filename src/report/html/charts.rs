//! The report's own charts (the curve, surface and endurance charts are
//! shared with `--svg`): latency percentiles per test, one small history
//! chart per test, and the bars and lines of the application workloads.
//!
//! Drawn with plotters like every chart, set up in `chart_kit`: text sized
//! for a phone, the legend above the plot (never over the data), every row
//! labelled in full, ticks written 10, 100, 1k, and a tooltip with its
//! figures on every bar and dot.

use crate::report::chart_kit::{
    self, Area, Axes, Entry, Fallible, INK, Key, PAGE_WIDTH, Plot, Tips, X_AREA, legend_height,
    okabe, page_text, plot, shown, text_width,
};
use crate::report::chart_ticks::{decade_ticks, linear_ticks, tick_label};
use crate::result::stored::HistoryPoint;
use crate::stats::LatencySummary;
use crate::units::{format_latency, format_mbps};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Picks one percentile out of a summary.
type Pick = fn(&LatencySummary) -> u64;

const QUANTILES: [(&str, Pick); 5] = [
    ("p50", |l| l.p50_ns),
    ("p90", |l| l.p90_ns),
    ("p99", |l| l.p99_ns),
    ("p99.9", |l| l.p99_9_ns),
    ("max", |l| l.max_ns),
];

/// Height of one labelled bar row: its label line, its bar, a gap; and
/// where in its row (from its top) the bar lies.
const ROW_HEIGHT: u32 = 58;
const BAR_TOP: f64 = 30.0;
const BAR_BOTTOM: f64 = 50.0;

/// Height of a history or line chart's plot.
const PLOT_HEIGHT: u32 = 240;

/// A value axis of a bar chart: decades on a log scale, or round steps
/// from zero.
struct Scale {
    ticks: Vec<f64>,
    log: bool,
}

impl Scale {
    fn new(log: bool, lo: f64, hi: f64) -> Scale {
        let ticks = match log {
            true => decade_ticks(lo, hi),
            false => linear_ticks(hi),
        };
        Scale { ticks, log }
    }

    /// Where `value` lies on the plot's linear coordinate.
    fn coordinate(&self, value: f64) -> f64 {
        match self.log {
            true => value.max(1e-12).log10(),
            false => value,
        }
    }

    /// The axis's ends on the plot's coordinate.
    fn ends(&self) -> (f64, f64) {
        let first = self.ticks.first().copied().unwrap_or(0.0);
        let last = self.ticks.last().copied().unwrap_or(1.0);
        (self.coordinate(first), self.coordinate(last))
    }

    /// Where `value` lies, clamped to the axis.
    fn at(&self, value: f64) -> f64 {
        let (lo, hi) = self.ends();
        self.coordinate(value).clamp(lo, hi)
    }

    /// The label of the tick at coordinate `x`.
    fn label(&self, x: f64) -> String {
        match self.log {
            true => tick_label(10f64.powi(x.round() as i32)),
            false => tick_label(x),
        }
    }
}

/// One labelled row of a bar chart: its label, its bar's pieces (from,
/// to, colour, in values), and its tooltip.
struct Row {
    label: String,
    pieces: Vec<(f64, f64, RGBColor)>,
    tip: String,
}

/// A chart of labelled horizontal bars, each row's label above its bar.
struct Bars<'s> {
    legend: &'s [Entry],
    rows: &'s [Row],
    scale: Scale,
    caption: &'s str,
    /// A vertical line across every row at this value (a median).
    rule: Option<f64>,
    /// What the chart shows, for screen readers.
    name: &'s str,
}

/// The chart of `c`: its legend, then its rows on a plot as tall as they.
fn bar_chart(c: &Bars<'_>) -> String {
    let legend_h = legend_height(c.legend, PAGE_WIDTH);
    let height = legend_h + 8 + c.rows.len().max(1) as u32 * ROW_HEIGHT + X_AREA;
    let mut tips = Tips::default();
    let svg = chart_kit::render((PAGE_WIDTH, height), |root| {
        let (top, rest) = root.split_vertically(legend_h);
        chart_kit::legend(&top, c.legend)?;
        bar_rows(&rest, c, &mut tips)
    });
    tips.overlay(svg, c.name)
}

/// The rows of `c` on `area`, each bar's pieces with their tooltips.
fn bar_rows(area: &Area<'_>, c: &Bars<'_>, tips: &mut Tips) -> Fallible {
    let (lo, hi) = c.scale.ends();
    let n = c.rows.len().max(1) as f64;
    // Room for half the end labels, which are centred on their ticks.
    let side = |x: f64| (text_width(&c.scale.label(x), 0) / 2 + 8).max(14) as u32;
    let axes = Axes {
        x: (lo, hi),
        x_keys: c
            .scale
            .ticks
            .iter()
            .map(|t| c.scale.coordinate(*t))
            .collect(),
        x_desc: c.caption,
        x_label: &|x| c.scale.label(x),
        y: (0.0, n),
        y_keys: Vec::new(),
        y_desc: "",
        y_area: 0,
        sides: (side(lo), side(hi)),
    };
    let mut chart = plot(area, &axes)?;
    let width = chart.backend_coord(&(hi, 0.0)).0 - chart.backend_coord(&(lo, 0.0)).0;
    let below = |i: usize, from_top: f64| n - i as f64 - from_top / f64::from(ROW_HEIGHT);
    let style = page_text(0, Pos::new(HPos::Left, VPos::Top));
    let min_width = (hi - lo) * 0.004;
    for (i, row) in c.rows.iter().enumerate() {
        let label = shown(&row.label, width);
        chart
            .plotting_area()
            .draw(&Text::new(label, (lo, below(i, 4.0)), &style))?;
        let (top, bottom) = (below(i, BAR_TOP), below(i, BAR_BOTTOM));
        for &(from, to, colour) in &row.pieces {
            let (x0, x1) = (
                c.scale.at(from),
                c.scale.at(to).max(c.scale.at(from) + min_width),
            );
            chart
                .plotting_area()
                .draw(&Rectangle::new([(x0, top), (x1, bottom)], colour.filled()))?;
            let (a, b) = (
                chart.backend_coord(&(x0, top)),
                chart.backend_coord(&(x1, bottom)),
            );
            tips.rect(a, b, &row.tip);
        }
    }
    if let Some(v) = c.rule {
        let x = c.scale.at(v);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, n)],
            INK.stroke_width(2),
        )))?;
    }
    Ok(())
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
    let legend: Vec<Entry> = QUANTILES
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (name.to_string(), okabe(i), Key::Swatch))
        .collect();
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
    let scale = Scale::new(true, lo_ns / per_unit, hi_ns / per_unit);
    let start = scale.ticks.first().copied().unwrap_or(0.0);
    let drawn: Vec<Row> = rows
        .iter()
        .map(|(name, l)| {
            let summary = QUANTILES
                .iter()
                .map(|(q, pick)| format!("{q} {}", format_latency(pick(l) as f64)))
                .collect::<Vec<_>>()
                .join(", ");
            let mut from = start;
            let mut pieces = Vec::new();
            for (q, (_, pick)) in QUANTILES.iter().enumerate() {
                let to = pick(l) as f64 / per_unit;
                if scale.at(to) > scale.at(from) {
                    pieces.push((from, to, okabe(q)));
                    from = to;
                }
            }
            let tip = format!("{name}: {summary}");
            Row {
                label: name.clone(),
                pieces,
                tip,
            }
        })
        .collect();
    bar_chart(&Bars {
        legend: &legend,
        rows: &drawn,
        scale,
        caption: &format!("latency, {unit} (log scale)"),
        rule: None,
        name: "latency percentiles per test",
    })
}

/// One labelled horizontal bar per value, on a log or linear scale; the
/// legend names the series, the caption under the axis the values.
pub fn bars(points: &[(String, f64)], value_desc: &str, series: &str, log: bool) -> String {
    let hi = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let lo = points
        .iter()
        .map(|p| p.1)
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let scale = Scale::new(log, if lo.is_finite() { lo } else { 1.0 }, hi);
    let start = scale.ticks.first().copied().unwrap_or(0.0);
    let rows: Vec<Row> = points
        .iter()
        .map(|(label, value)| {
            let text = format!("{label}: {}", tick_label(*value));
            Row {
                label: text.clone(),
                pieces: vec![(start, *value, okabe(0))],
                tip: text,
            }
        })
        .collect();
    bar_chart(&Bars {
        legend: &[(series.to_string(), okabe(0), Key::Swatch)],
        rows: &rows,
        scale,
        caption: value_desc,
        rule: None,
        name: series,
    })
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
    let legend = [
        ("rank MB/s".to_string(), okabe(0), Key::Swatch),
        ("straggler".to_string(), okabe(1), Key::Swatch),
        ("median rank".to_string(), INK, Key::Line),
    ];
    let hi = bars.iter().map(|b| b.mb_per_s).fold(median, f64::max);
    let rows: Vec<Row> = bars
        .iter()
        .map(|b| {
            let mark = if b.straggler { " (straggler)" } else { "" };
            let text = format!("{}: {} MB/s{mark}", b.label, format_mbps(b.mb_per_s));
            Row {
                label: text.clone(),
                pieces: vec![(0.0, b.mb_per_s, okabe(usize::from(b.straggler)))],
                tip: text,
            }
        })
        .collect();
    bar_chart(&Bars {
        legend: &legend,
        rows: &rows,
        scale: Scale::new(false, 0.0, hi),
        caption: "MB/s (10^6 bytes/s) per rank",
        rule: Some(median),
        name: "MB/s per rank",
    })
}

/// Room left of a plot for its y tick labels and its rotated caption.
fn y_area(ticks: &[f64]) -> u32 {
    let widest = ticks
        .iter()
        .map(|t| text_width(&tick_label(*t), 0))
        .max()
        .unwrap_or(0);
    (widest + 48) as u32
}

/// One small chart for one test of one device: median MB/s of each
/// direction run by run, with min–max whiskers, a marker shape per
/// direction and the runs named under the axis.
pub fn history(test: &str, points: &[HistoryPoint]) -> String {
    let directions = directions(points);
    let legend: Vec<Entry> = directions
        .iter()
        .map(|rw| (rw.clone(), direction_colour(rw), direction_key(rw)))
        .collect();
    let mut runs: Vec<i64> = points.iter().map(|p| p.run_id).collect();
    runs.sort_unstable();
    runs.dedup();
    let legend_h = legend_height(&legend, PAGE_WIDTH);
    const TITLE: u32 = 44;
    let mut tips = Tips::default();
    let size = (PAGE_WIDTH, TITLE + legend_h + PLOT_HEIGHT + X_AREA);
    let svg = chart_kit::render(size, |root| {
        let bold = (
            FontFamily::SansSerif,
            chart_kit::PAGE_FONT + 2,
            FontStyle::Bold,
        );
        let title = shown(test, PAGE_WIDTH as i32 - 24);
        root.draw(&Text::new(title, (12, 10), bold.into_font().color(&INK)))?;
        let (_, rest) = root.split_vertically(TITLE);
        let (top, area) = rest.split_vertically(legend_h);
        chart_kit::legend(&top, &legend)?;
        let hi = points.iter().map(|p| p.max).fold(0.0, f64::max);
        let y_keys = linear_ticks(hi);
        let label = |x: f64| {
            let run = runs.get(x.round().max(0.0) as usize);
            run.map_or(String::new(), |r| format!("#{r}"))
        };
        let axes = Axes {
            x: (-0.5, runs.len() as f64 - 0.5),
            x_keys: thinned_runs(&runs),
            x_desc: "run, oldest to newest",
            x_label: &label,
            y: (0.0, y_keys.last().copied().unwrap_or(1.0)),
            y_area: y_area(&y_keys),
            y_keys,
            y_desc: "MB/s",
            sides: (8, 20),
        };
        let mut chart = plot(&area, &axes)?;
        for rw in &directions {
            history_series(&mut chart, points, rw, &runs, &mut tips)?;
        }
        Ok(())
    });
    tips.overlay(svg, &format!("{test}: MB/s run by run"))
}

/// The positions of the runs whose ids are written under the axis: every
/// one, or every few when they would collide.
fn thinned_runs(runs: &[i64]) -> Vec<f64> {
    let widest = runs
        .iter()
        .map(|r| text_width(&format!("#{r}"), 0) + 14)
        .max()
        .unwrap_or(1);
    let slot = (PAGE_WIDTH as i32 - 120) / runs.len().max(1) as i32;
    let every = (widest as f64 / f64::from(slot.max(1))).ceil().max(1.0) as usize;
    (0..runs.len()).step_by(every).map(|i| i as f64).collect()
}

/// One direction's medians run by run, joined by a line, each with its
/// min–max whisker and a tooltip naming the run.
fn history_series(
    chart: &mut Plot<'_, '_>,
    points: &[HistoryPoint],
    rw: &str,
    runs: &[i64],
    tips: &mut Tips,
) -> Fallible {
    let (colour, key) = (direction_colour(rw), direction_key(rw));
    let mut series: Vec<&HistoryPoint> = points.iter().filter(|p| p.rw == rw).collect();
    series.sort_by_key(|p| p.run_id);
    let x_of = |run: i64| runs.iter().position(|r| *r == run).unwrap_or(0) as f64;
    if series.len() > 1 {
        let line = series.iter().map(|p| (x_of(p.run_id), p.median));
        chart.draw_series(LineSeries::new(line, colour.stroke_width(2)))?;
    }
    for p in &series {
        let x = x_of(p.run_id);
        if p.max > p.min {
            let whisker = vec![(x, p.min), (x, p.max)];
            chart.draw_series(std::iter::once(PathElement::new(
                whisker,
                colour.stroke_width(2),
            )))?;
        }
        chart_kit::marker(chart.plotting_area(), (x, p.median), colour, key)?;
        let title = format!(
            "run {} ({}): {rw} {} MB/s ({}–{})",
            p.run_id,
            p.started_at,
            format_mbps(p.median),
            format_mbps(p.min),
            format_mbps(p.max)
        );
        tips.dot(chart.backend_coord(&(x, p.median)), &title);
    }
    Ok(())
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
fn direction_colour(rw: &str) -> RGBColor {
    match (rw.contains("read"), rw.contains("write")) {
        (true, false) => okabe(0),
        (false, true) => okabe(1),
        _ => okabe(2),
    }
}

/// Writes get squares as well as their colour, for print in grey.
fn direction_key(rw: &str) -> Key {
    if rw.contains("write") && !rw.contains("read") {
        Key::LineSquare
    } else {
        Key::Line
    }
}

/// One line of (x, y) points, both axes linear from zero.
pub fn line(points: &[(f64, f64)], x_desc: &str, y_desc: &str, series: &str) -> String {
    let legend = [(series.to_string(), okabe(0), Key::Line)];
    let legend_h = legend_height(&legend, PAGE_WIDTH);
    let mut tips = Tips::default();
    let size = (PAGE_WIDTH, legend_h + PLOT_HEIGHT + X_AREA);
    let svg = chart_kit::render(size, |root| {
        let (top, area) = root.split_vertically(legend_h);
        chart_kit::legend(&top, &legend)?;
        let hi_y = points.iter().map(|p| p.1).fold(0.0, f64::max);
        let hi_x = points.iter().map(|p| p.0).fold(0.0, f64::max);
        let (x_keys, y_keys) = (linear_ticks(hi_x), linear_ticks(hi_y));
        let axes = Axes {
            x: (0.0, x_keys.last().copied().unwrap_or(1.0)),
            x_keys,
            x_desc,
            x_label: &tick_label,
            y: (0.0, y_keys.last().copied().unwrap_or(1.0)),
            y_area: y_area(&y_keys),
            y_keys,
            y_desc,
            sides: (8, 24),
        };
        let mut chart = plot(&area, &axes)?;
        chart.draw_series(LineSeries::new(
            points.iter().copied(),
            okabe(0).stroke_width(2),
        ))?;
        // Dots only where they can be told apart.
        if points.len() <= 60 {
            for &(x, y) in points {
                chart_kit::marker(chart.plotting_area(), (x, y), okabe(0), Key::Line)?;
                let title = format!("{}: {}", tick_label(x), tick_label(y));
                tips.dot(chart.backend_coord(&(x, y)), &title);
            }
        }
        Ok(())
    });
    tips.overlay(svg, series)
}

#[cfg(test)]
#[path = "charts_tests.rs"]
mod tests;
