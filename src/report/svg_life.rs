//! Charts of a device across its span and over its life: a surface scan's
//! speed and access time against position, and an endurance run's speeds
//! and bad blocks against cycle. Each is two panels sharing the x axis, so
//! a dip in speed can be read against what happened below it. Like the
//! curve chart, each comes in a file size and a page size ([`SvgSize`]).

use super::Export;
use super::chart_kit::{self, Area, Fallible, PAGE_WIDTH, SvgSize, okabe};
use crate::result::RunResult;
use crate::result::device::{EndureReport, SurfaceReport};
use plotters::prelude::*;

/// (width, height) of both panels together.
fn dimensions(size: SvgSize) -> (u32, u32) {
    match size {
        SvgSize::File => (960, 720),
        SvgSize::Page => (PAGE_WIDTH, 680),
    }
}

/// A labelled line: legend text, points, colour.
type Series<'a> = (&'a str, Vec<(f64, f64)>, RGBColor);

/// Height of the upper panel: three fifths, half in the report, where the
/// larger text leaves the lower panel little room otherwise.
fn upper_share(size: SvgSize, height: u32) -> u32 {
    match size {
        SvgSize::File => height * 3 / 5,
        SvgSize::Page => height / 2,
    }
}

/// The three colours of a life chart: reads, writes, trouble. Files keep
/// plotters' pure colours; the report uses Okabe–Ito's blue, bluish green
/// and vermillion, which stay apart for colour-blind readers.
fn colours(size: SvgSize) -> (RGBColor, RGBColor, RGBColor) {
    match size {
        SvgSize::File => (BLUE, GREEN, RED),
        SvgSize::Page => (okabe(0), okabe(2), okabe(1)),
    }
}

/// Speed (top) and access time (bottom) against position.
pub struct SurfaceSvg;

/// Write and read speed (top) and bad blocks (bottom) against cycle.
pub struct EndureSvg;

impl Export for SurfaceSvg {
    fn render(&self, r: &RunResult) -> String {
        surface_sized(r, SvgSize::File)
    }
}

impl SurfaceSvg {
    /// The chart as the HTML report shows it.
    pub fn for_page(r: &RunResult) -> String {
        surface_sized(r, SvgSize::Page)
    }
}

fn surface_sized(r: &RunResult, size: SvgSize) -> String {
    match r.payload.surface() {
        Some(s) => chart_kit::render(dimensions(size), |root| {
            draw_surface(root, s, &r.target.path, size)
        }),
        None => String::new(),
    }
}

impl Export for EndureSvg {
    fn render(&self, r: &RunResult) -> String {
        endure_sized(r, SvgSize::File)
    }
}

impl EndureSvg {
    /// The chart as the HTML report shows it.
    pub fn for_page(r: &RunResult) -> String {
        endure_sized(r, SvgSize::Page)
    }
}

fn endure_sized(r: &RunResult, size: SvgSize) -> String {
    match r.payload.endure() {
        Some(e) => chart_kit::render(dimensions(size), |root| {
            draw_endure(root, e, &r.target.path, size)
        }),
        None => String::new(),
    }
}

fn top_of(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, f64::max) * 1.1 + 1e-3
}

fn line(
    area: &Area<'_>,
    title: &str,
    x: (f64, f64, &str),
    y_desc: &str,
    series: &[Series<'_>],
    shade: &[(f64, f64)],
    size: SvgSize,
) -> Fallible {
    let top = top_of(series.iter().flat_map(|s| s.1.iter().map(|p| p.1)));
    let (x_area, y_area) = size.label_areas((40, 64));
    let mut chart = ChartBuilder::on(area)
        .caption(title, size.font(0).unwrap_or(("sans-serif", 20)))
        .margin(12)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x.0..x.1, 0f64..top)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x.2).y_desc(y_desc);
    let short = |v: &f64| crate::report::chart_ticks::tick_label(*v);
    if let Some(font) = size.font(0) {
        // Larger text has room for fewer labels, written short (10, not 10.0).
        mesh.label_style(font)
            .axis_desc_style(font)
            .x_labels(6)
            .y_labels(5)
            .x_label_formatter(&short)
            .y_label_formatter(&short);
    }
    mesh.draw()?;
    chart.draw_series(
        shade.iter().map(|&(a, b)| {
            Rectangle::new([(a, 0.0), (b, top)], colours(size).2.mix(0.15).filled())
        }),
    )?;
    for (label, points, colour) in series {
        let colour = *colour;
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 2, colour.filled())))?;
    }
    chart_kit::series_labels(&mut chart, size, None)
}

fn draw_surface(root: &Area<'_>, s: &SurfaceReport, path: &str, size: SvgSize) -> Fallible {
    let height = dimensions(size).1;
    let (upper, lower) = root.split_vertically(upper_share(size, height));
    let read: Vec<_> = s.samples.iter().map(|p| (p.percent, p.read_mb_s)).collect();
    let write: Vec<_> = s
        .samples
        .iter()
        .filter_map(|p| p.write_mb_s.map(|w| (p.percent, w)))
        .collect();
    let (blue, green, red) = colours(size);
    let mut speeds = vec![("read", read, blue)];
    if !write.is_empty() {
        speeds.push(("write", write, green));
    }
    let slow: Vec<_> = s
        .slow_regions
        .iter()
        .map(|r| (r.start_percent, r.end_percent))
        .collect();
    let x = (0.0, 100.0, "position on the device, % of its size");
    let title = match size {
        SvgSize::File => format!("{path}: speed against position (slow regions shaded)"),
        SvgSize::Page => "speed against position".to_string(),
    };
    line(&upper, &title, x, "MB/s (10^6 B/s)", &speeds, &slow, size)?;
    let access: Vec<_> = s
        .samples
        .iter()
        .filter_map(|p| p.access_ns.map(|a| (p.percent, a as f64 / 1e6)))
        .collect();
    let access_name = match size {
        SvgSize::File => "access time (median of random 4 KiB reads)",
        SvgSize::Page => "access time (random 4 KiB)",
    };
    let lower_series = [(access_name, access, red)];
    line(&lower, "access time", x, "ms", &lower_series, &slow, size)?;
    Ok(())
}

fn draw_endure(root: &Area<'_>, e: &EndureReport, path: &str, size: SvgSize) -> Fallible {
    let height = dimensions(size).1;
    let (upper, lower) = root.split_vertically(upper_share(size, height));
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
    let (blue, green, red) = colours(size);
    let speeds = [("write", write, green), ("read", read, blue)];
    let title = match size {
        SvgSize::File => format!("{path}: speed against cycle"),
        SvgSize::Page => "speed against cycle".to_string(),
    };
    line(&upper, &title, x, "MB/s (10^6 B/s)", &speeds, &[], size)?;
    let bad: Vec<_> = e
        .cycles
        .iter()
        .map(|c| (f64::from(c.cycle), c.verify.bad() as f64))
        .collect();
    let errors_name = match size {
        SvgSize::File => "bad blocks (changed, aliased, corrupted)",
        SvgSize::Page => "bad blocks",
    };
    let errors = [(errors_name, bad, red)];
    line(
        &lower,
        "bad blocks per cycle",
        x,
        "blocks",
        &errors,
        &[],
        size,
    )?;
    Ok(())
}
