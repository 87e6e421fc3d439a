//! The curve chart: throughput against transfer size on a log2 axis, each
//! point with its min–max whisker, the fitted model as a line in the same
//! colour, one colour per target and pattern, a legend and labelled axes.
//! Unaligned sizes, measured through the page cache, get a panel of their
//! own below, beside their aligned neighbours measured the same way: on the
//! O_DIRECT axes a page cache figure would tower over its neighbours.
//! Drawn with plotters' SVG backend, so it needs no fonts at build time.
//!
//! Two sizes ([`SvgSize`], set up with every other chart in `chart_kit`):
//! the `--svg` file, 960 units wide with plotters' own text sizes, and the
//! HTML report's, narrower with larger text, so the chart scaled to a 400 px
//! wide phone still has text of 11 px or more.

use super::Export;
use super::chart_kit::{self, Area, Fallible, PAGE_WIDTH, SvgSize, Tips};
use crate::result::{CurvePoint, CurveSeries, RunResult};
use crate::units::{format_mbps, format_size};
use plotters::prelude::*;

pub struct Svg;

/// How the curve chart differs between a file and the page.
impl SvgSize {
    /// A series' name: in the report, where the page names the target, the
    /// target only when the chart has several.
    fn series_name(self, s: &CurveSeries, several_targets: bool) -> String {
        match self == SvgSize::Page && !several_targets {
            true => format!("{} · QD {}", s.pattern.name(), s.queue_depth),
            false => format!(
                "{} · {} · QD {}",
                shown_target(s),
                s.pattern.name(),
                s.queue_depth
            ),
        }
    }

    /// A chart's caption, shorter in the report, whose figure caption says
    /// the rest.
    fn caption(self, file: &'static str, page: &'static str) -> &'static str {
        match self {
            SvgSize::File => file,
            SvgSize::Page => page,
        }
    }

    /// Every other key (or fewer) in the report, so that at most five
    /// size labels share its narrower axis.
    fn thin(self, keys: Vec<f64>) -> Vec<f64> {
        match self {
            SvgSize::File => keys,
            SvgSize::Page => {
                let step = keys.len().div_ceil(5).max(1);
                keys.into_iter().step_by(step).collect()
            }
        }
    }

    /// In the report, room above the data for a legend of `entries` lines
    /// (about 30 units each on a plot about 380 units tall), so that the
    /// legend covers no curve; files keep their range.
    fn headroom(self, (x0, x1, top): (f64, f64, f64), entries: usize) -> (f64, f64, f64) {
        match self {
            SvgSize::File => (x0, x1, top),
            SvgSize::Page => {
                let legend_share = ((entries as f64 * 30.0 + 20.0) / 380.0).min(0.6);
                (x0, x1, top / (1.0 - legend_share))
            }
        }
    }
}

impl Svg {
    /// The chart as the HTML report shows it.
    pub fn for_page(r: &RunResult) -> String {
        render_sized(r, SvgSize::Page)
    }
}

/// (width, main chart height, unaligned panel height).
fn dimensions(size: SvgSize) -> (u32, u32, u32) {
    match size {
        SvgSize::File => (960, 600, 420),
        SvgSize::Page => (PAGE_WIDTH, 520, 400),
    }
}

/// The caption of the unaligned panel.
pub const UNALIGNED_CAPTION: &str =
    "Unaligned sizes through the page cache, beside aligned neighbours measured the same way";

impl Export for Svg {
    fn render(&self, r: &RunResult) -> String {
        render_sized(r, SvgSize::File)
    }
}

fn render_sized(r: &RunResult, size: SvgSize) -> String {
    let series: Vec<&CurveSeries> = r
        .payload
        .curve()
        .into_iter()
        .flat_map(|c| &c.series)
        .filter(|s| s.skipped.is_none())
        .collect();
    let direct: Vec<Plotted> = series.iter().map(|s| series_points(s)).collect();
    let unaligned: Vec<Plotted> = series.iter().map(|s| unaligned_points(s)).collect();
    let panel = unaligned.iter().any(|u| !u.is_empty());
    let (width, main_height, panel_height) = dimensions(size);
    let height = main_height + if panel { panel_height } else { 0 };
    let mut tips = Tips::default();
    let svg = chart_kit::render((width, height), |root| {
        let (top, bottom) = root.split_vertically(main_height);
        draw_main(&top, &series, &direct, size, &mut tips)?;
        if panel {
            draw_unaligned(&bottom, &series, &unaligned, size, &mut tips)?;
        }
        Ok(())
    });
    // Files stay as plotters wrote them; the page gets each point's
    // figures as a tooltip, like its other charts.
    match size {
        SvgSize::File => svg,
        SvgSize::Page => tips.overlay(svg, "throughput against transfer size"),
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

fn draw_main(
    area: &Area<'_>,
    series: &[&CurveSeries],
    direct: &[Plotted],
    size: SvgSize,
    tips: &mut Tips,
) -> Fallible {
    let mut chart = axes(
        area,
        "Throughput against transfer size",
        size.headroom(bounds(direct.iter().flatten()), 2 * series.len()),
        size,
    )?;
    let several = several_targets(series);
    for (i, (s, points)) in series.iter().zip(direct).enumerate() {
        let colour = size.colour(i);
        let label = size.series_name(s, several);
        let buffered = s.series_points().any(|p| p.buffered);
        draw_points(&mut chart, points, colour, !buffered, label, tips)?;
        draw_model(&mut chart, s, points, colour)?;
    }
    chart_kit::series_labels(&mut chart, size, Some(SeriesLabelPosition::UpperLeft))
}

/// The unaligned panel: per series one line through its unaligned sizes
/// and their neighbours (hollow circles), the unaligned sizes marked by a
/// cross.
fn draw_unaligned(
    area: &Area<'_>,
    series: &[&CurveSeries],
    unaligned: &[Plotted],
    size: SvgSize,
    tips: &mut Tips,
) -> Fallible {
    let mut chart = axes(
        area,
        size.caption(UNALIGNED_CAPTION, "Unaligned sizes, through the page cache"),
        size.headroom(bounds(unaligned.iter().flatten()), 2 * series.len()),
        size,
    )?;
    let several = several_targets(series);
    for (i, (s, points)) in series.iter().zip(unaligned).enumerate() {
        if points.is_empty() {
            continue;
        }
        let colour = size.colour(i);
        let label = format!("{} · through the page cache", size.series_name(s, several));
        draw_points(&mut chart, points, colour, false, label, tips)?;
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
            .label(match size {
                SvgSize::File => {
                    format!(
                        "{} · {} · unaligned sizes",
                        shown_target(s),
                        s.pattern.name()
                    )
                }
                SvgSize::Page => format!("{} · unaligned sizes", s.pattern.name()),
            })
            .legend(move |(x, y)| Cross::new((x + 10, y), 5, colour.stroke_width(2)));
    }
    chart_kit::series_labels(&mut chart, size, Some(SeriesLabelPosition::UpperLeft))
}

/// A series' target path as a legend shows it: escaped and cut, since an
/// XML file may not hold control characters and a legend has one line.
fn shown_target(s: &CurveSeries) -> String {
    super::table::cut(&s.target, LEGEND_COLUMNS)
}

/// The widest target path a legend shows.
const LEGEND_COLUMNS: usize = 60;

/// True when the series were measured on more than one target.
fn several_targets(series: &[&CurveSeries]) -> bool {
    series.iter().any(|s| s.target != series[0].target)
}

/// Labelled log2-size against MB/s axes on `area`.
fn axes<'a, 'b>(
    area: &'a Area<'b>,
    caption: &str,
    (x0, x1, y1): (f64, f64, f64),
    size: SvgSize,
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let (x_area, y_area) = size.label_areas((48, 72));
    let mut chart = ChartBuilder::on(area)
        .caption(caption, size.font(2).unwrap_or(("sans-serif", 22)))
        .margin(16)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(
            (x0..x1)
                .log_scale()
                .with_key_points(size.thin(power_of_two_keys(x0, x1))),
            0f64..y1,
        )?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc("transfer size (log scale)")
        .y_desc("throughput, MB/s (10^6 B/s)")
        .x_label_formatter(&|x| format_size(x.round() as u64))
        .y_label_formatter(&|y| format!("{y:.0}"));
    if let Some(font) = size.font(0) {
        mesh.label_style(font).axis_desc_style(font);
    }
    mesh.draw()?;
    Ok(chart)
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
) -> Fallible {
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
            "model: t0 {}, B {:.0} MB/s",
            crate::units::format_latency(fit.t0_us * 1e3),
            fit.bandwidth_mb_s
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
    tips: &mut Tips,
) -> Fallible {
    let style = if filled {
        colour.filled()
    } else {
        colour.stroke_width(2)
    };
    for p in points {
        let tip = format!(
            "{label}: {} at {} MB/s ({}–{})",
            format_size(p.0.round() as u64),
            format_mbps(p.1),
            format_mbps(p.2),
            format_mbps(p.3)
        );
        tips.dot(chart.backend_coord(&(p.0, p.1)), &tip);
    }
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
