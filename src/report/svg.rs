//! The curve chart: throughput against transfer size on a log2 axis, each
//! point with its min–max whisker, the fitted model as a line in the same
//! colour, one colour per target and pattern, a legend and labelled axes.
//! Unaligned sizes, measured through the page cache, get a panel of their
//! own below, beside their aligned neighbours measured the same way: on the
//! O_DIRECT axes a page cache figure would tower over its neighbours.
//! Drawn with plotters' SVG backend, so it needs no fonts at build time.

use super::Export;
use crate::result::{CurvePoint, CurveSeries, RunResult};
use crate::units::format_size;
use plotters::prelude::*;

pub struct Svg;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;
/// Height of the unaligned panel, below the main chart.
const PANEL_HEIGHT: u32 = 420;

/// The caption of the unaligned panel.
pub const UNALIGNED_CAPTION: &str =
    "Unaligned sizes through the page cache, beside aligned neighbours measured the same way";

impl Export for Svg {
    fn render(&self, r: &RunResult) -> String {
        let mut out = String::new();
        let series: Vec<&CurveSeries> = r
            .payload
            .curve()
            .into_iter()
            .flat_map(|c| &c.series)
            .filter(|s| s.skipped.is_none())
            .collect();
        // Drawing into a String cannot fail for I/O reasons; a plotting error
        // leaves an empty chart rather than no file.
        let _ = draw(&mut out, &series);
        out
    }
}

/// (size, median, min, max) of some points.
type Plotted = Vec<(f64, f64, f64, f64)>;

fn bounds<'a>(points: impl Iterator<Item = &'a (f64, f64, f64, f64)> + Clone) -> (f64, f64, f64) {
    let min = points.clone().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let max = points.clone().map(|p| p.0).fold(0.0, f64::max);
    let top = points.map(|p| p.3).fold(0.0, f64::max);
    if min.is_finite() && max > min {
        (min / 1.5, max * 1.5, top * 1.1 + 1e-3)
    } else {
        (256.0, 32.0 * 1048576.0, 1.0)
    }
}

fn draw(out: &mut String, series: &[&CurveSeries]) -> Result<(), Box<dyn std::error::Error>> {
    let direct: Vec<Plotted> = series.iter().map(|s| series_points(s)).collect();
    let unaligned: Vec<Plotted> = series.iter().map(|s| unaligned_points(s)).collect();
    let panel = unaligned.iter().any(|u| !u.is_empty());
    let height = if panel { HEIGHT + PANEL_HEIGHT } else { HEIGHT };
    let root = SVGBackend::with_string(out, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(HEIGHT);
    draw_main(&top, series, &direct)?;
    if panel {
        draw_unaligned(&bottom, series, &unaligned)?;
    }
    root.present()?;
    Ok(())
}

fn draw_main(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    series: &[&CurveSeries],
    direct: &[Plotted],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut chart = axes(
        area,
        "Throughput against transfer size",
        bounds(direct.iter().flatten()),
    )?;
    for (i, (s, points)) in series.iter().zip(direct).enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let label = format!("{} · {} · QD {}", s.target, s.pattern, s.queue_depth);
        let buffered = s.series_points().any(|p| p.buffered);
        draw_points(&mut chart, points, colour, !buffered, label)?;
        draw_model(&mut chart, s, points, colour)?;
    }
    legend(&mut chart)
}

/// The unaligned panel: per series one line through its unaligned sizes
/// and their neighbours (hollow circles), the unaligned sizes marked by a
/// cross.
fn draw_unaligned(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    series: &[&CurveSeries],
    unaligned: &[Plotted],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut chart = axes(area, UNALIGNED_CAPTION, bounds(unaligned.iter().flatten()))?;
    for (i, (s, points)) in series.iter().zip(unaligned).enumerate() {
        if points.is_empty() {
            continue;
        }
        let colour = Palette99::pick(i).to_rgba();
        let label = format!(
            "{} · {} · QD {} · through the page cache",
            s.target, s.pattern, s.queue_depth
        );
        draw_points(&mut chart, points, colour, false, label)?;
        let odd: Vec<(f64, f64)> = s
            .unaligned_points()
            .iter()
            .filter(|p| !p.reference)
            .filter_map(|p| p.mb_per_s.map(|m| (p.size as f64, m.median)))
            .collect();
        chart
            .draw_series(
                odd.into_iter()
                    .map(|p| Cross::new(p, 7, colour.stroke_width(2))),
            )
            .map_err(|e| e.to_string())?
            .label(format!("{} · {} · unaligned sizes", s.target, s.pattern))
            .legend(move |(x, y)| Cross::new((x + 10, y), 5, colour.stroke_width(2)));
    }
    legend(&mut chart)
}

/// Labelled log2-size against MB/s axes on `area`.
fn axes<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    caption: &str,
    (x0, x1, y1): (f64, f64, f64),
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (x0..x1)
                .log_scale()
                .with_key_points(power_of_two_keys(x0, x1)),
            0f64..y1,
        )?;
    chart
        .configure_mesh()
        .x_desc("transfer size (log scale)")
        .y_desc("throughput, MB/s (10^6 B/s)")
        .x_label_formatter(&|x| format_size(x.round() as u64))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    Ok(chart)
}

fn legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>) -> Result<(), Box<dyn std::error::Error>> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<
        plotters::coord::combinators::WithKeyPoints<plotters::coord::combinators::LogCoord<f64>>,
        plotters::coord::types::RangedCoordf64,
    >,
>;

/// Axis ticks at powers of two (every other one when there are many), so
/// sizes read as 4 KiB and 1 MiB rather than 9.77 KiB.
fn power_of_two_keys(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    let step = if b - a > 12 { 2 } else { 1 };
    (a..=b).step_by(step).map(|k| 2f64.powi(k)).collect()
}

/// The fitted model as a dashed line over the measured sizes.
fn draw_model(
    chart: &mut Chart<'_, '_>,
    s: &CurveSeries,
    direct: &[(f64, f64, f64, f64)],
    colour: RGBAColor,
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(fit) = &s.model else { return Ok(()) };
    let (first, last) = (
        direct.first().map_or(512.0, |p| p.0),
        direct.last().map_or(1e7, |p| p.0),
    );
    let line = (0..=64).map(|i| {
        let x = first * (last / first).powf(f64::from(i) / 64.0);
        (x, fit.mb_per_s_at(x))
    });
    chart
        .draw_series(DashedLineSeries::new(line, 6, 4, colour.stroke_width(1)))
        .map_err(|e| e.to_string())?
        .label(format!(
            "model: t0 {:.1} µs, B {:.0} MB/s",
            fit.t0_us, fit.bandwidth_mb_s
        ))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(1)));
    Ok(())
}

/// The points measured the way the series is.
fn series_points(s: &CurveSeries) -> Plotted {
    plotted(s.series_points())
}

/// The unaligned section, by size.
fn unaligned_points(s: &CurveSeries) -> Plotted {
    plotted(s.unaligned_points().into_iter())
}

fn plotted<'a>(points: impl Iterator<Item = &'a CurvePoint>) -> Plotted {
    points
        .filter_map(|p| p.mb_per_s.map(|m| (p.size as f64, m.median, m.min, m.max)))
        .collect()
}

/// One series: a line through the medians, a marker per point (filled for
/// O_DIRECT, hollow for buffered) and a min–max whisker.
fn draw_points(
    chart: &mut Chart<'_, '_>,
    points: &[(f64, f64, f64, f64)],
    colour: RGBAColor,
    filled: bool,
    label: String,
) -> Result<(), Box<dyn std::error::Error>> {
    let style = if filled {
        colour.filled()
    } else {
        colour.stroke_width(2)
    };
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|p| (p.0, p.1)),
            colour.stroke_width(2),
        ))
        .map_err(|e| e.to_string())?
        .label(label)
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, style));
    chart
        .draw_series(points.iter().map(|p| Circle::new((p.0, p.1), 4, style)))
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(
            points
                .iter()
                .map(|p| PathElement::new(vec![(p.0, p.2), (p.0, p.3)], colour.stroke_width(1))),
        )
        .map_err(|e| e.to_string())?;
    Ok(())
}
