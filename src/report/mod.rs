//! Results into bytes: one file per format, each a pure function of
//! [`RunResult`](crate::result::RunResult) behind the one-method [`Export`]
//! trait (JSON, CSV, Markdown, the text table), the side-by-side comparison
//! of several runs, plus the progress bar shown while measuring.

pub mod caveats;
mod cells;
mod chart_kit;
mod chart_ticks;
pub mod compare;
mod csv;
pub mod curve_words;
pub mod cycle_line;
pub mod db;
pub mod flash;
pub mod flash_rows;
pub mod flash_verdicts;
pub mod history;
pub mod html;
mod json;
mod markdown;
mod markdown_escape;
pub mod outcome;
mod palette;
pub mod probe;
pub mod recover;
mod svg;
mod svg_life;
pub mod table;
mod text;
pub(crate) mod text_curve;
mod text_files;
pub(crate) mod text_life;
mod text_marks;
pub mod text_plan;
mod text_ranks;
mod text_stream;
pub(crate) mod text_sustain;
pub mod width;

pub use csv::Csv;
pub use json::{Json, result_line, start_line};
pub use markdown::Markdown;
pub use svg::Svg;
pub use svg_life::{EndureSvg, SurfaceSvg};
pub use text::Text;

use crate::result::RunResult;

/// One output format.
pub trait Export {
    /// Renders a result; never fails, never does I/O.
    fn render(&self, result: &RunResult) -> String;
}
