//! The one set of output flags every command that prints a result takes
//! (`--json`, `--csv`, `--markdown`, `-o FILE`, `-q`), `--json-lines` for
//! the measuring commands that can stream, and where results are kept
//! (`--db`, `--no-save`) for the commands that save or read them. Each is
//! one clap struct, flattened where it means something and nowhere else;
//! what is printed is decided from them in [`crate::output`].

use super::parse_path;
use crate::vocab::output::{Format, OutputChoice};
use clap::Args;
use std::path::PathBuf;

/// How a result is printed, and where.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Print one JSON document instead of the table.
    #[arg(help_heading = "Output", long, conflicts_with_all = ["csv", "markdown"])]
    pub json: bool,

    /// Print CSV (one row per test; for a curve one row per point), as
    /// `export --format csv` does.
    #[arg(help_heading = "Output", long, conflicts_with = "markdown")]
    pub csv: bool,

    /// Print a Markdown table, as `export --format markdown` does.
    #[arg(help_heading = "Output", long)]
    pub markdown: bool,

    /// Write the chosen format to FILE instead of stdout [default: stdout].
    #[arg(help_heading = "Output", short = 'o', long = "output", value_name = "FILE", value_parser = parse_path)]
    pub output_file: Option<PathBuf>,

    /// Print nothing on stdout and no progress on stderr; the exit code,
    /// errors, warnings and a file named by -o stay.
    #[arg(help_heading = "Output", short, long)]
    pub quiet: bool,
}

impl OutputArgs {
    /// The format the flags name (the table when none does).
    pub fn format(&self) -> Format {
        match (self.json, self.csv, self.markdown) {
            (true, _, _) => Format::Json,
            (_, true, _) => Format::Csv,
            (_, _, true) => Format::Markdown,
            _ => Format::Text,
        }
    }

    /// The plain choice [`crate::output::Output`] acts on.
    pub fn choice(&self) -> OutputChoice {
        OutputChoice {
            format: self.format(),
            file: self.output_file.clone(),
            quiet: self.quiet,
        }
    }
}

/// `--json-lines`, on the measuring commands whose result can be followed
/// as it runs.
#[derive(Debug, Args, Clone, Default)]
pub struct JsonLinesArg {
    /// Print JSON lines on stdout: one object per interval of about a
    /// second while it measures (bytes, MB/s, IOPS, p50/p99/max latency;
    /// warm-ups and preparation left out), then the whole result as the
    /// last line.
    #[arg(help_heading = "Output", long, conflicts_with_all = ["json", "csv", "markdown", "output_file"])]
    pub json_lines: bool,
}

impl JsonLinesArg {
    /// The output choice with `--json-lines` applied.
    pub fn apply(&self, mut choice: OutputChoice) -> OutputChoice {
        if self.json_lines {
            choice.format = Format::JsonLines;
        }
        choice
    }
}

/// `--db` and `--no-save`, on the commands that save a run.
#[derive(Debug, Args, Clone, Default)]
pub struct StoreArgs {
    /// The results database [default: $XDG_DATA_HOME/iocurve/results.db,
    /// else ~/.local/share/iocurve/results.db].
    #[arg(help_heading = "Results database", long, value_name = "PATH", value_parser = parse_path)]
    pub db: Option<PathBuf>,

    /// Do not save this run in the results database.
    #[arg(help_heading = "Results database", long)]
    pub no_save: bool,
}

/// `--db` alone, on the commands that read the results database (or add
/// to it whatever they are given, as `import`).
#[derive(Debug, Args, Clone, Default)]
pub struct DbArg {
    /// The results database [default: $XDG_DATA_HOME/iocurve/results.db,
    /// else ~/.local/share/iocurve/results.db].
    #[arg(help_heading = "Results database", long, value_name = "PATH", value_parser = parse_path)]
    pub db: Option<PathBuf>,
}

impl From<&DbArg> for StoreArgs {
    fn from(arg: &DbArg) -> StoreArgs {
        StoreArgs {
            db: arg.db.clone(),
            no_save: false,
        }
    }
}
