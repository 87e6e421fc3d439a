//! The pieces every report chart is built from: a colour-blind-safe
//! palette, tick positions and their labels (10, 100, 1k, 10k), and an SVG
//! canvas that always carries a viewBox, so a chart scales to the page.
//!
//! Why hand-written SVG rather than plotters here: the report needs text
//! sizes chosen for a phone (see [`FONT`]), legends outside the plot, and
//! every group labelled; those are layout decisions a small writer makes
//! exactly, where plotters places labels and legends by its own rules.

use super::esc;
use std::fmt::Write;

/// Width of every report chart in viewBox units. The page shows a chart at
/// most 640 px wide (see style.css), so one unit is at most 1.33 px.
pub const VIEW_WIDTH: f64 = 480.0;

/// Smallest text, in viewBox units. At a 400 px wide window the content is
/// 376 px wide, 361 px beside a classic scroll bar (0.75 px per unit), so
/// 15 units render as 11.3 px or more: above the 11 px floor.
pub const FONT: f64 = 15.0;

/// Text of chart titles.
pub const TITLE_FONT: f64 = 16.0;

/// A number as a tick label: 10, 100, 1k, 10k, 1M; 2.5, 0.1; never
/// `100000.0`.
pub fn tick_label(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, suffix) = if magnitude >= 1e9 {
        (value / 1e9, "G")
    } else if magnitude >= 1e6 {
        (value / 1e6, "M")
    } else if magnitude >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    format!("{}{suffix}", trimmed(scaled))
}

/// Up to three significant figures, without trailing zeros.
fn trimmed(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let digits = (3 - 1 - value.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{value:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Powers of ten from below `lo` to above `hi`: a log axis's ticks.
pub fn decade_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let lo = lo.max(1e-9);
    let first = lo.log10().floor() as i32;
    let last = hi.max(lo * 10.0).log10().ceil() as i32;
    (first..=last).map(|k| 10f64.powi(k)).collect()
}

/// About five round ticks from 0 to at least `hi` (steps of 1, 2 or 5
/// times a power of ten): a linear axis's ticks.
pub fn linear_ticks(hi: f64) -> Vec<f64> {
    let hi = if hi > 0.0 && hi.is_finite() { hi } else { 1.0 };
    let rough = hi / 5.0;
    let power = 10f64.powf(rough.log10().floor());
    let multiple = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * power >= rough)
        .unwrap_or(10.0);
    let step = multiple * power;
    let count = (hi / step).ceil() as usize;
    // Below 1, divide by a whole power of ten: 6 / 10 is 0.6 exactly as
    // printed, where 6 × 0.1 is 0.6000000000000001.
    let at = |i: usize| match power < 1.0 {
        true => i as f64 * multiple / (1.0 / power).round(),
        false => i as f64 * step,
    };
    (0..=count).map(at).collect()
}

/// Rough width of `text` at `size`: enough to keep labels from colliding
/// without measuring fonts.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.56
}

/// An SVG document being written, in viewBox units.
pub struct Canvas {
    body: String,
    height: f64,
}

/// Where a text's anchor is.
#[derive(Debug, Clone, Copy)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn attribute(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// A legend's marker.
#[derive(Debug, Clone, Copy)]
pub enum Marker {
    /// A filled square: bars.
    Swatch,
    /// A line with a dot: a series of points.
    Line,
    /// A line with a square: a second series, told apart by shape too.
    LineSquare,
}

impl Canvas {
    pub fn new() -> Canvas {
        Canvas {
            body: String::new(),
            height: 0.0,
        }
    }

    /// Makes sure the drawing is at least `y` units tall.
    pub fn reach(&mut self, y: f64) {
        self.height = self.height.max(y);
    }

    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: Anchor, text: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{size}\" text-anchor=\"{}\">{}</text>",
            anchor.attribute(),
            esc(text)
        );
    }

    pub fn bold_text(&mut self, x: f64, y: f64, size: f64, text: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{size}\" font-weight=\"600\">{}</text>",
            esc(text)
        );
    }

    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>"
        );
    }

    /// A filled rectangle; `title` becomes its tooltip.
    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str, title: &str) {
        let _ = write!(
            self.body,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\">"
        );
        if title.is_empty() {
            let _ = writeln!(self.body, "</rect>");
        } else {
            let _ = writeln!(self.body, "<title>{}</title></rect>", esc(title));
        }
    }

    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str) {
        let list: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            self.body,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"2\"/>",
            list.join(" ")
        );
    }

    /// A point's marker: a circle, or a square for [`Marker::LineSquare`].
    pub fn dot(&mut self, (x, y): (f64, f64), fill: &str, marker: Marker, title: &str) {
        let shape = match marker {
            Marker::LineSquare => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"{fill}\">",
                x - 4.0,
                y - 4.0
            ),
            _ => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"{fill}\">"),
        };
        let close = match marker {
            Marker::LineSquare => "</rect>",
            _ => "</circle>",
        };
        let _ = writeln!(self.body, "{shape}<title>{}</title>{close}", esc(title));
    }

    /// A legend row (wrapping when it runs out of width) from `y`; returns
    /// the y below it. Legends sit above the plot, never over the data.
    pub fn legend(&mut self, y: f64, entries: &[(String, &str, Marker)]) -> f64 {
        let (left, right) = (8.0, VIEW_WIDTH - 8.0);
        let mut x = left;
        let mut baseline = y + FONT;
        for (label, colour, marker) in entries {
            let width = 26.0 + text_width(label, FONT) + 16.0;
            if x > left && x + width > right {
                x = left;
                baseline += FONT * 1.5;
            }
            let mid = baseline - FONT * 0.35;
            match marker {
                Marker::Swatch => self.rect((x, mid - 6.0), (18.0, 12.0), colour, ""),
                Marker::Line | Marker::LineSquare => {
                    self.line((x, mid), (x + 20.0, mid), colour, 2.0);
                    self.dot((x + 10.0, mid), colour, *marker, label);
                }
            }
            self.text(x + 26.0, baseline, FONT, Anchor::Start, label);
            x += width;
        }
        let below = baseline + FONT * 0.6;
        self.reach(below);
        below
    }

    /// The finished `<svg>`: a viewBox and no fixed size, so CSS scales it.
    pub fn finish(self, label: &str) -> String {
        format!(
            "<svg viewBox=\"0 0 {VIEW_WIDTH} {:.0}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"{}\" font-family=\"system-ui, 'DejaVu Sans', sans-serif\" fill=\"#1d232b\">\n<rect x=\"0\" y=\"0\" width=\"{VIEW_WIDTH}\" height=\"{:.0}\" fill=\"#ffffff\"/>\n{}</svg>",
            self.height.ceil(),
            esc(label),
            self.height.ceil(),
            self.body
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_read_as_people_write_them() {
        let labels: Vec<String> = [10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 2.5e3, 0.1, 1.0, 12.5]
            .iter()
            .map(|v| tick_label(*v))
            .collect();
        assert_eq!(
            labels,
            [
                "10", "100", "1k", "10k", "100k", "1M", "2.5k", "0.1", "1", "12.5"
            ]
        );
        assert_eq!(tick_label(0.0), "0");
        assert!(!tick_label(100000.0).contains('.'));
    }

    #[test]
    fn decades_cover_the_range() {
        assert_eq!(decade_ticks(42.0, 5300.0), vec![10.0, 100.0, 1e3, 1e4]);
        assert_eq!(decade_ticks(100.0, 100.0), vec![100.0, 1e3]);
    }

    #[test]
    fn linear_ticks_are_round_and_reach_the_top() {
        assert_eq!(linear_ticks(24.8), vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0]);
        assert_eq!(linear_ticks(7.98), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(linear_ticks(0.0), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    }

    #[test]
    fn a_canvas_has_a_view_box_and_no_fixed_size() {
        let mut c = Canvas::new();
        c.text(1.0, 20.0, FONT, Anchor::Start, "a <b>");
        c.reach(40.0);
        let svg = c.finish("chart");
        assert!(svg.starts_with("<svg viewBox=\"0 0 480 40\""), "{svg}");
        let open = &svg[..svg.find('>').unwrap()];
        assert!(!open.contains("width="), "{open}");
        assert!(svg.contains("a &lt;b&gt;"));
    }
}
