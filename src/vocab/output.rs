//! What the output flags chose, as plain values: the format a result is
//! printed in and where it goes. `cli` fills them; the live output and the
//! final output step act on them.

use std::path::PathBuf;

/// The format a result is printed in (`--json`, `--json-lines`, `--csv`,
/// `--markdown`, else the command's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    /// One JSON object per line; the whole result is the last line.
    JsonLines,
    Csv,
    Markdown,
}

/// What the output flags asked for: the format, where it goes, and
/// whether anything is shown at all.
#[derive(Debug, Clone, Default)]
pub struct OutputChoice {
    pub format: Format,
    /// `-o FILE`: the output goes there instead of stdout.
    pub file: Option<PathBuf>,
    /// `-q`: nothing on stdout, no progress, no notes on stderr.
    pub quiet: bool,
    /// `--export-json FILE`, `--export-csv FILE`, `--export-markdown
    /// FILE`: more copies of the result, each in its format, written when
    /// the result exists, beside whatever is printed.
    pub exports: Vec<ExportFile>,
}

/// One `--export-*` file: the format and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFile {
    /// [`Format::Json`], [`Format::Csv`] or [`Format::Markdown`].
    pub format: Format,
    pub path: PathBuf,
}
