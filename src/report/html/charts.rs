//! The report's own charts (the curve chart is shared with `--svg`): bars
//! of latency percentiles on a log scale, and a device's figures over runs.
//! Each series is a `<g>`-free plotters drawing with a legend entry named
//! after the series, which the browser test looks for.

use super::HistoryPoint;
use crate::stats::LatencySummary;
use plotters::prelude::*;

/// Picks one percentile out of a summary.
type Pick = fn(&LatencySummary) -> u64;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 440;

/// One bar group per test: p50, p90, p99, p99.9 and max, µs, log scale.
pub fn latency(rows: &[(String, LatencySummary)]) -> String {
    let mut out = String::new();
    let _ = draw_latency(&mut out, rows);
    out
}

fn draw_latency(
    out: &mut String,
    rows: &[(String, LatencySummary)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    // Headroom above the tallest bar for the legend.
    let top = rows
        .iter()
        .map(|(_, l)| l.max_ns as f64 / 1e3)
        .fold(1.0, f64::max)
        * 40.0;
    let bottom = rows
        .iter()
        .map(|(_, l)| l.p50_ns as f64 / 1e3)
        .fold(f64::INFINITY, f64::min)
        .max(0.01)
        / 2.0;
    let n = rows.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..n, (bottom..top).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rows.len().max(1))
        .x_label_formatter(&|x| {
            rows.get(x.floor() as usize)
                .map_or(String::new(), |r| short(&r.0))
        })
        .y_desc("latency, µs (log scale)")
        .draw()?;
    let quantiles: [(&str, Pick); 5] = [
        ("p50", |l| l.p50_ns),
        ("p90", |l| l.p90_ns),
        ("p99", |l| l.p99_ns),
        ("p99.9", |l| l.p99_9_ns),
        ("max", |l| l.max_ns),
    ];
    for (q, (name, pick)) in quantiles.iter().enumerate() {
        let colour = Palette99::pick(q).to_rgba();
        let width = 0.8 / quantiles.len() as f64;
        let bars = rows.iter().enumerate().map(move |(i, (_, l))| {
            let x0 = i as f64 + 0.1 + q as f64 * width;
            Rectangle::new(
                [(x0, bottom), (x0 + width * 0.9, pick(l) as f64 / 1e3)],
                colour.filled(),
            )
        });
        chart
            .draw_series(bars)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 10, y + 4)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

fn short(name: &str) -> String {
    let s: String = name.chars().take(18).collect();
    if name.chars().count() > 18 {
        format!("{s}…")
    } else {
        s
    }
}

/// One line per test (and direction): median MB/s against run order.
pub fn history(points: &[HistoryPoint]) -> String {
    let mut out = String::new();
    let _ = draw_history(&mut out, points);
    out
}

fn draw_history(
    out: &mut String,
    points: &[HistoryPoint],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut runs: Vec<i64> = points.iter().map(|p| p.run_id).collect();
    runs.sort_unstable();
    runs.dedup();
    let top = points.iter().map(|p| p.max).fold(0.0, f64::max) * 1.15 + 1e-3;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..(runs.len() as f64 - 0.5).max(0.5), 0f64..top)?;
    chart
        .configure_mesh()
        .x_labels(runs.len().clamp(1, 12))
        .x_label_formatter(&|x| {
            runs.get(x.round().max(0.0) as usize)
                .map_or(String::new(), |id| format!("run {id}"))
        })
        .y_desc("MB/s (10^6 B/s)")
        .draw()?;
    let mut keys: Vec<(String, String)> = points
        .iter()
        .map(|p| (p.test.clone(), p.rw.clone()))
        .collect();
    keys.sort();
    keys.dedup();
    for (i, (test, rw)) in keys.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let line: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| &p.test == test && &p.rw == rw)
            .filter_map(|p| {
                runs.iter()
                    .position(|r| *r == p.run_id)
                    .map(|x| (x as f64, p.median))
            })
            .collect();
        chart
            .draw_series(LineSeries::new(
                line.iter().copied(),
                colour.stroke_width(2),
            ))?
            .label(format!("{test} {rw}"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart.draw_series(line.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

/// One bar per labelled value, optionally on a log scale.
pub fn bars(points: &[(String, f64)], y_desc: &str, series: &str, log: bool) -> String {
    let mut out = String::new();
    let _ = draw_bars(&mut out, points, y_desc, series, log);
    out
}

fn draw_bars(
    out: &mut String,
    points: &[(String, f64)],
    y_desc: &str,
    series: &str,
    log: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let top = points.iter().map(|p| p.1).fold(1e-3, f64::max);
    let bottom = points
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .max(1e-3)
        / 2.0;
    let n = points.len() as f64;
    let colour = Palette99::pick(0).to_rgba();
    let labels = |x: &f64| {
        points
            .get(x.floor() as usize)
            .map_or(String::new(), |p| p.0.clone())
    };
    let bar = move |(i, p): (usize, &(String, f64)), base: f64| {
        Rectangle::new(
            [(i as f64 + 0.15, base), (i as f64 + 0.85, p.1)],
            colour.filled(),
        )
    };
    // The two scales differ only in their y range and where bars start;
    // plotters gives each range its own type, hence the macro.
    macro_rules! draw {
        ($y_range:expr, $base:expr) => {{
            let mut chart = ChartBuilder::on(&root)
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(64)
                .build_cartesian_2d(0f64..n, $y_range)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(points.len().max(1))
                .x_label_formatter(&labels)
                .y_desc(y_desc)
                .draw()?;
            chart
                .draw_series(points.iter().enumerate().map(|p| bar(p, $base)))?
                .label(series)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 4), (x + 10, y + 4)], colour.filled())
                });
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()?;
        }};
    }
    if log {
        draw!((bottom..top * 10.0).log_scale(), bottom);
    } else {
        draw!(0f64..top * 1.2, 0.0);
    }
    root.present()?;
    Ok(())
}

/// One line of (x, y) points.
pub fn line(points: &[(f64, f64)], x_desc: &str, y_desc: &str, series: &str) -> String {
    let mut out = String::new();
    let _ = draw_line(&mut out, points, x_desc, y_desc, series);
    out
}

fn draw_line(
    out: &mut String,
    points: &[(f64, f64)],
    x_desc: &str,
    y_desc: &str,
    series: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let right = points.iter().map(|p| p.0).fold(1e-6, f64::max);
    let top = points.iter().map(|p| p.1).fold(1e-3, f64::max) * 1.2;
    let colour = Palette99::pick(0).to_rgba();
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..right, 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            points.iter().copied(),
            colour.stroke_width(2),
        ))?
        .label(series)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
    chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
