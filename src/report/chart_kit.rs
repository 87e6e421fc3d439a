//! The one way every chart is drawn: plotters' SVG backend, set up here for
//! the two places a chart is shown ([`SvgSize`]): its size, its text, its
//! colours, a plot on axes with the ticks it is given ([`plot`]), a legend
//! above the plot and the tooltips plotters cannot write.
//! The curve chart (`svg.rs`), the surface and endurance charts
//! (`svg_life.rs`) and the report's own charts (`html/charts.rs`) all start
//! from [`render`] and take their fonts and colours from here, so a change
//! of text size or palette is made once.
//!
//! Tooltips: plotters draws marks but cannot attach a `<title>` to one, so
//! [`Tips`] lays transparent shapes over the marks after plotters is done,
//! at the positions plotters mapped them to, each holding its figures.

use crate::report::chart_ticks::tick_label;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Write;
use std::ops::Range;

/// Text size of the report's charts, in plotters' points: it writes 1/1.24
/// of them as the SVG's font size, 20.2 units of a 640-unit-wide chart,
/// 11.4 px at the 361 px the page has at a 400 px wide window with a
/// classic scroll bar.
pub const PAGE_FONT: u32 = 25;
/// Width of the report's charts.
pub const PAGE_WIDTH: u32 = 640;

/// Where a chart is shown, which decides its size and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvgSize {
    /// A file of its own (`--svg`): wide, plotters' default text.
    File,
    /// Inside the HTML report, scaled to the page: [`PAGE_WIDTH`] units
    /// wide with text of [`PAGE_FONT`] points, 11.4 px at a 400 px window.
    Page,
}

impl SvgSize {
    /// A font for text of this size's charts; None keeps plotters' own.
    pub fn font(self, extra: u32) -> Option<(&'static str, u32)> {
        match self {
            SvgSize::File => None,
            SvgSize::Page => Some(page_font(extra)),
        }
    }

    /// Colour of series `i`: plotters' palette in files (as they always
    /// were), Okabe–Ito in the report, like its other charts.
    pub fn colour(self, i: usize) -> RGBAColor {
        match self {
            SvgSize::File => Palette99::pick(i).to_rgba(),
            SvgSize::Page => okabe(i).to_rgba(),
        }
    }

    /// Room for the tick labels and the axis description: (x, y).
    pub fn label_areas(self, file: (u32, u32)) -> (u32, u32) {
        match self {
            SvgSize::File => file,
            SvgSize::Page => (72, 104),
        }
    }
}

/// The report's font, `extra` points larger than its smallest text.
pub fn page_font(extra: u32) -> (&'static str, u32) {
    ("sans-serif", PAGE_FONT + extra)
}

/// The report's font as a style anchored at `pos`.
pub fn page_text(extra: u32, pos: Pos) -> TextStyle<'static> {
    page_font(extra).into_font().color(&INK).pos(pos)
}

/// Height of one line of the report's text, in chart units.
pub const LINE: i32 = 30;

/// Ink of text, axes and the median line: near black, apart from every
/// palette colour.
pub const INK: RGBColor = RGBColor(0x1d, 0x23, 0x2b);

/// Colour `i` of the Okabe–Ito palette ([`crate::report::palette`]).
pub fn okabe(i: usize) -> RGBColor {
    let (r, g, b) = crate::report::palette::rgb(i);
    RGBColor(r, g, b)
}

/// Rough width of `text` in the report's font, in chart units: enough to
/// lay labels out without measuring fonts (the SVG is drawn by a browser
/// whose font is not known here).
pub fn text_width(text: &str, extra: u32) -> i32 {
    let size = f64::from(PAGE_FONT + extra) / 1.24;
    (text.chars().count() as f64 * size * 0.56).ceil() as i32
}

/// An outside name made safe to draw: unsafe characters shown escaped and
/// the whole cut with an ellipsis to `width` chart units.
pub fn shown(text: &str, width: i32) -> String {
    let per_char = f64::from(PAGE_FONT) / 1.24 * 0.56;
    let columns = (f64::from(width.max(0)) / per_char) as usize;
    crate::units::escape::name(text, columns.max(4))
}

/// The drawing area of a chart being drawn.
pub type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;

/// What a drawing step returns: plotters' errors, boxed.
pub type Fallible = Result<(), Box<dyn std::error::Error>>;

/// A chart `(width, height)` units large on white, drawn by `draw`. A
/// plotting error leaves the chart drawn so far rather than none: drawing
/// into a String cannot fail for I/O reasons.
pub fn render(size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> Fallible) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        let _ = root.fill(&WHITE).map_err(|e| e.to_string());
        let _ = draw(&root);
        let _ = root.present();
    }
    out
}

/// The legend and plot text of plotters' own series labels, the same in
/// every chart: on a nearly opaque white box with a border.
pub fn series_labels<'a, 'b: 'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    size: SvgSize,
    position: Option<SeriesLabelPosition>,
) -> Fallible
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
{
    let mut labels = chart.configure_series_labels();
    labels.background_style(WHITE.mix(0.85)).border_style(BLACK);
    if let Some(p) = position {
        labels.position(p);
    }
    if let Some(font) = size.font(0) {
        labels.label_font(font);
    }
    labels.draw()?;
    Ok(())
}

/// Room under a plot for its tick labels and its axis caption.
pub const X_AREA: u32 = 76;

/// A linear axis with the ticks it is given and no others (a log axis is
/// drawn as the log10 of its values, with a tick per decade).
pub struct Keyed {
    pub range: Range<f64>,
    pub keys: Vec<f64>,
}

impl Ranged for Keyed {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let share = if span.abs() > 1e-12 {
            (value - self.range.start) / span
        } else {
            0.0
        };
        limit.0 + (share * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match hint.weight().allow_light_points() {
            true => Vec::new(),
            false => self.keys.clone(),
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// A plot on two [`Keyed`] axes.
pub type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Keyed, Keyed>>;

/// What a plot's axes show: their ranges, ticks, captions and labels.
pub struct Axes<'s> {
    pub x: (f64, f64),
    pub x_keys: Vec<f64>,
    pub x_desc: &'s str,
    pub x_label: &'s dyn Fn(f64) -> String,
    pub y: (f64, f64),
    pub y_keys: Vec<f64>,
    pub y_desc: &'s str,
    /// Room left of the plot: 0 for none (labels inside the rows).
    pub y_area: u32,
    /// Margins left and right of the plot.
    pub sides: (u32, u32),
}

/// The plot of `axes` on `area`, its grid and labels drawn.
pub fn plot<'a, 'b>(
    area: &'a Area<'b>,
    axes: &Axes<'_>,
) -> Result<Plot<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(area)
        .margin_top(8)
        .margin_left(axes.sides.0)
        .margin_right(axes.sides.1)
        .x_label_area_size(X_AREA)
        .y_label_area_size(axes.y_area)
        .build_cartesian_2d(
            Keyed {
                range: axes.x.0..axes.x.1,
                keys: axes.x_keys.clone(),
            },
            Keyed {
                range: axes.y.0..axes.y.1,
                keys: axes.y_keys.clone(),
            },
        )?;
    let grid = RGBColor(0xd8, 0xdd, 0xe3);
    let (x_label, y_label) = (|x: &f64| (axes.x_label)(*x), |y: &f64| tick_label(*y));
    let mut mesh = chart.configure_mesh();
    mesh.bold_line_style(grid)
        .axis_style(RGBColor(0x5d, 0x66, 0x70))
        .label_style(page_font(0).into_font().color(&INK))
        .axis_desc_style(page_font(0).into_font().color(&INK))
        .x_desc(axes.x_desc)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label);
    if axes.y_area == 0 {
        mesh.disable_y_mesh().disable_y_axis();
    } else {
        mesh.disable_x_mesh().y_desc(axes.y_desc);
    }
    mesh.draw()?;
    Ok(chart)
}

/// How a legend entry is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A filled square: bars.
    Swatch,
    /// A line with a dot: a series of points.
    Line,
    /// A line with a square: a second series, told apart by shape too.
    LineSquare,
}

/// One legend entry: its text, colour and mark.
pub type Entry = (String, RGBColor, Key);

/// Left edge of a legend row and the width one entry takes beyond its text.
const LEGEND_LEFT: i32 = 12;
const KEY_WIDTH: i32 = 34;
const ENTRY_GAP: i32 = 22;

/// Where each entry of a legend `width` units wide goes: (x, row).
fn legend_places(entries: &[Entry], width: i32) -> Vec<(i32, i32)> {
    let mut places = Vec::new();
    let (mut x, mut row) = (LEGEND_LEFT, 0);
    for (label, _, _) in entries {
        let w = KEY_WIDTH + text_width(label, 0) + ENTRY_GAP;
        if x > LEGEND_LEFT && x + w > width - LEGEND_LEFT {
            x = LEGEND_LEFT;
            row += 1;
        }
        places.push((x, row));
        x += w;
    }
    places
}

/// Height of a legend of `entries` wrapped to `width` units.
pub fn legend_height(entries: &[Entry], width: u32) -> u32 {
    let rows = legend_places(entries, width as i32)
        .last()
        .map_or(0, |p| p.1 + 1);
    (rows * LINE + 12) as u32
}

/// A legend in rows across `area`, above the plot so it never covers
/// data.
pub fn legend(area: &Area<'_>, entries: &[Entry]) -> Fallible {
    let width = area.dim_in_pixel().0 as i32;
    let style = page_text(0, Pos::new(HPos::Left, VPos::Center));
    for ((label, colour, key), (x, row)) in entries.iter().zip(legend_places(entries, width)) {
        let mid = 6 + row * LINE + LINE / 2;
        match key {
            Key::Swatch => {
                area.draw(&Rectangle::new(
                    [(x, mid - 8), (x + 22, mid + 8)],
                    colour.filled(),
                ))?;
            }
            Key::Line | Key::LineSquare => {
                area.draw(&PathElement::new(
                    vec![(x, mid), (x + 24, mid)],
                    colour.stroke_width(2),
                ))?;
                marker(area, (x + 12, mid), *colour, *key)?;
            }
        }
        let text = shown(label, width - x - KEY_WIDTH);
        area.draw(&Text::new(text, (x + KEY_WIDTH, mid), &style))?;
    }
    Ok(())
}

/// A point's marker at `at`, in `area`'s coordinates: a dot, or a
/// square for [`Key::LineSquare`], the same size at any scale.
pub fn marker<C>(
    area: &DrawingArea<SVGBackend<'_>, C>,
    at: C::From,
    colour: RGBColor,
    key: Key,
) -> Fallible
where
    C: plotters::coord::CoordTranslate,
{
    let point = EmptyElement::at(at);
    match key {
        Key::LineSquare => {
            area.draw(&(point + Rectangle::new([(-6, -6), (6, 6)], colour.filled())))?
        }
        _ => area.draw(&(point + Circle::new((0, 0), 6, colour.filled())))?,
    }
    Ok(())
}

/// Transparent marks laid over a chart, each with a `<title>` a browser
/// shows as a tooltip: plotters draws the marks, these carry their figures.
#[derive(Default)]
pub struct Tips {
    marks: String,
}

impl Tips {
    /// A tooltip over the box between two backend corners.
    pub fn rect(&mut self, a: (i32, i32), b: (i32, i32), title: &str) {
        let (x, y) = (a.0.min(b.0), a.1.min(b.1));
        let (w, h) = ((a.0 - b.0).abs().max(2), (a.1 - b.1).abs().max(2));
        let _ = writeln!(
            self.marks,
            "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"#000\" fill-opacity=\"0\"><title>{}</title></rect>",
            xml(title)
        );
    }

    /// A tooltip over a dot at backend position `at`.
    pub fn dot(&mut self, (x, y): (i32, i32), title: &str) {
        let _ = writeln!(
            self.marks,
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"9\" fill=\"#000\" fill-opacity=\"0\"><title>{}</title></circle>",
            xml(title)
        );
    }

    /// `svg` with the tooltips laid over it (last, so they are on top) and
    /// named for screen readers by `label`.
    pub fn overlay(self, mut svg: String, label: &str) -> String {
        if let Some(at) = svg.rfind("</svg>") {
            svg.insert_str(at, &format!("<g class=\"tips\">\n{}</g>\n", self.marks));
        }
        if let Some(at) = svg.find("<svg ") {
            let named = format!("<svg role=\"img\" aria-label=\"{}\" ", xml(label));
            svg.replace_range(at..at + 5, &named);
        }
        svg
    }
}

/// `text` as XML character data or an attribute value: markup escaped,
/// and characters XML may not hold shown escaped.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if crate::units::escape::is_unsafe(c) => {
                crate::units::escape::push_escaped(&mut out, c)
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tips_lie_over_the_chart_and_are_escaped() {
        let mut tips = Tips::default();
        tips.rect((10, 20), (4, 30), "a <b> & \u{1b}");
        tips.dot((5, 6), "c");
        let svg = render((100, 50), |_| Ok(()));
        let svg = tips.overlay(svg, "chart \"x\"");
        assert!(svg.starts_with("<svg role=\"img\" aria-label=\"chart &quot;x&quot;\" "));
        assert!(svg.contains("viewBox=\"0 0 100 50\""), "{svg}");
        let tips_at = svg.find("<g class=\"tips\">").unwrap();
        assert!(tips_at > svg.find("<rect").unwrap(), "on top of the chart");
        assert!(svg.contains("<rect x=\"4\" y=\"20\" width=\"6\" height=\"10\""));
        assert!(
            svg.contains("<title>a &lt;b&gt; &amp; \\e</title>"),
            "{svg}"
        );
        roxmltree::Document::parse(&svg).unwrap();
    }

    #[test]
    fn legends_wrap_within_their_width() {
        let entry = |s: &str| (s.to_string(), okabe(0), Key::Swatch);
        let one = [entry("p50"), entry("p90")];
        assert_eq!(legend_height(&one, PAGE_WIDTH), 42);
        let many: Vec<Entry> = (0..12).map(|i| entry(&format!("series {i}"))).collect();
        assert!(legend_height(&many, PAGE_WIDTH) >= 3 * 30);
        for (x, _) in legend_places(&many, PAGE_WIDTH as i32) {
            assert!(x + KEY_WIDTH + text_width("series 0", 0) <= PAGE_WIDTH as i32);
        }
    }
}
