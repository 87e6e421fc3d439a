//! Charts of a device across its span and over its life: a surface scan's
//! speed and access time against position, and an endurance run's speeds
//! and bad blocks against cycle. Each is two panels sharing the x axis, so
//! a dip in speed can be read against what happened below it.

use super::Export;
use crate::result::RunResult;
use crate::result::device::{EndureReport, SurfaceReport};
use plotters::coord::Shift;
use plotters::prelude::*;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 720;

type Panel<'a, 'b> = DrawingArea<SVGBackend<'b>, Shift>;
type Fallible = Result<(), Box<dyn std::error::Error>>;
/// A labelled line: legend text, points, colour.
type Series<'a> = (&'a str, Vec<(f64, f64)>, RGBColor);

/// Speed (top) and access time (bottom) against position.
pub struct SurfaceSvg;

/// Write and read speed (top) and bad blocks (bottom) against cycle.
pub struct EndureSvg;

impl Export for SurfaceSvg {
    fn render(&self, r: &RunResult) -> String {
        let mut out = String::new();
        if let Some(s) = r.payload.surface() {
            let _ = draw_surface(&mut out, s, &r.target.path);
        }
        out
    }
}

impl Export for EndureSvg {
    fn render(&self, r: &RunResult) -> String {
        let mut out = String::new();
        if let Some(e) = r.payload.endure() {
            let _ = draw_endure(&mut out, e, &r.target.path);
        }
        out
    }
}

fn top_of(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, f64::max) * 1.1 + 1e-3
}

fn line(
    area: &Panel<'_, '_>,
    title: &str,
    x: (f64, f64, &str),
    y_desc: &str,
    series: &[Series<'_>],
    shade: &[(f64, f64)],
) -> Fallible {
    let top = top_of(series.iter().flat_map(|s| s.1.iter().map(|p| p.1)));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x.0..x.1, 0f64..top)?;
    chart.configure_mesh().x_desc(x.2).y_desc(y_desc).draw()?;
    chart.draw_series(
        shade
            .iter()
            .map(|&(a, b)| Rectangle::new([(a, 0.0), (b, top)], RED.mix(0.15).filled())),
    )?;
    for (label, points, colour) in series {
        let colour = *colour;
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 2, colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

fn draw_surface(out: &mut String, s: &SurfaceReport, path: &str) -> Fallible {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (upper, lower) = root.split_vertically(HEIGHT * 3 / 5);
    let read: Vec<_> = s.samples.iter().map(|p| (p.percent, p.read_mb_s)).collect();
    let write: Vec<_> = s
        .samples
        .iter()
        .filter_map(|p| p.write_mb_s.map(|w| (p.percent, w)))
        .collect();
    let mut speeds = vec![("read", read, BLUE)];
    if !write.is_empty() {
        speeds.push(("write", write, GREEN));
    }
    let slow: Vec<_> = s
        .slow_regions
        .iter()
        .map(|r| (r.start_percent, r.end_percent))
        .collect();
    let x = (0.0, 100.0, "position on the device, % of its size");
    let title = format!("{path}: speed against position (slow regions shaded)");
    line(&upper, &title, x, "MB/s (10^6 B/s)", &speeds, &slow)?;
    let access: Vec<_> = s
        .samples
        .iter()
        .filter_map(|p| p.access_ns.map(|a| (p.percent, a as f64 / 1e6)))
        .collect();
    let lower_series = [("access time (median of random 4 KiB reads)", access, RED)];
    line(&lower, "access time", x, "ms", &lower_series, &slow)?;
    root.present()?;
    Ok(())
}

fn draw_endure(out: &mut String, e: &EndureReport, path: &str) -> Fallible {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (upper, lower) = root.split_vertically(HEIGHT * 3 / 5);
    let last = e.cycles.last().map_or(1.0, |c| f64::from(c.cycle)) + 0.5;
    let x = (0.5, last.max(1.5), "cycle");
    let write: Vec<_> = e
        .cycles
        .iter()
        .map(|c| (f64::from(c.cycle), c.write_mb_s))
        .collect();
    let read: Vec<_> = e
        .cycles
        .iter()
        .filter_map(|c| c.read_mb_s.map(|r| (f64::from(c.cycle), r)))
        .collect();
    let speeds = [("write", write, GREEN), ("read", read, BLUE)];
    let title = format!("{path}: speed against cycle");
    line(&upper, &title, x, "MB/s (10^6 B/s)", &speeds, &[])?;
    let bad: Vec<_> = e
        .cycles
        .iter()
        .map(|c| (f64::from(c.cycle), c.verify.bad() as f64))
        .collect();
    let errors = [("bad blocks (changed, overwritten, corrupted)", bad, RED)];
    line(&lower, "bad blocks per cycle", x, "blocks", &errors, &[])?;
    root.present()?;
    Ok(())
}
