//! The curve chart: throughput against transfer size on a log2 axis, each
//! point with its min–max whisker, the fitted model as a line in the same
//! colour, one colour per target and pattern, a legend and labelled axes.
//! Drawn with plotters' SVG backend, so it needs no fonts at build time.

use super::Export;
use crate::result::{CurveSeries, RunResult};
use crate::units::format_size;
use plotters::prelude::*;

pub struct Svg;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;

impl Export for Svg {
    fn render(&self, r: &RunResult) -> String {
        let mut out = String::new();
        let series: Vec<&CurveSeries> = r
            .curve
            .iter()
            .flat_map(|c| &c.series)
            .filter(|s| s.skipped.is_none())
            .collect();
        // Drawing into a String cannot fail for I/O reasons; a plotting error
        // leaves an empty chart rather than no file.
        let _ = draw(&mut out, &series);
        out
    }
}

fn bounds(series: &[&CurveSeries]) -> (f64, f64, f64) {
    let sizes = series.iter().flat_map(|s| &s.points).map(|p| p.size as f64);
    let min = sizes.clone().fold(f64::INFINITY, f64::min);
    let max = sizes.fold(0.0, f64::max);
    let top = series
        .iter()
        .flat_map(|s| &s.points)
        .filter_map(|p| p.mb_per_s.map(|m| m.max))
        .fold(0.0, f64::max);
    if min.is_finite() && max > min {
        (min / 1.5, max * 1.5, top * 1.1 + 1e-3)
    } else {
        (256.0, 32.0 * 1048576.0, 1.0)
    }
}

fn draw(out: &mut String, series: &[&CurveSeries]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (x0, x1, y1) = bounds(series);
    let mut chart = ChartBuilder::on(&root)
        .caption("Throughput against transfer size", ("sans-serif", 22))
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
    for (i, s) in series.iter().enumerate() {
        draw_series(&mut chart, s, Palette99::pick(i).to_rgba())?;
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

fn draw_series(
    chart: &mut Chart<'_, '_>,
    s: &CurveSeries,
    colour: RGBAColor,
) -> Result<(), Box<dyn std::error::Error>> {
    let label = format!("{} · {} · QD {}", s.target, s.pattern, s.queue_depth);
    let direct = points_of(s, false);
    let buffered = points_of(s, true);
    draw_points(chart, &direct, colour, true, label.clone())?;
    if !buffered.is_empty() {
        draw_points(
            chart,
            &buffered,
            colour.mix(0.6),
            false,
            format!("{label} · through the page cache (†)"),
        )?;
    }
    if let Some(fit) = &s.model {
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
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(1))
            });
    }
    Ok(())
}

/// (size, median, min, max) of the points measured one way.
fn points_of(s: &CurveSeries, buffered: bool) -> Vec<(f64, f64, f64, f64)> {
    s.points
        .iter()
        .filter(|p| !p.reference && p.buffered == buffered)
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
