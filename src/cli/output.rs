//! The one set of output flags every command that prints a result takes
//! (`--json`, `--csv`, `--markdown`, `-o FILE`, `-q`, and the files written
//! beside them, `--export-json FILE`, `--export-csv FILE`,
//! `--export-markdown FILE`, as hyperfine writes its exports), `--json-lines` for
//! the measuring commands that can stream, and where results are kept
//! (`--db`, `--no-save`) for the commands that save or read them. Each is
//! one clap struct, flattened where it means something and nowhere else;
//! what is printed is decided from them in [`crate::output`].

use super::parse_path;
use crate::vocab::output::{ExportFile, Format, OutputChoice};
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

    /// Also write the result as JSON (what --json prints) to FILE, beside
    /// the output above [default: none].
    #[arg(help_heading = "Output", long, value_name = "FILE", value_parser = parse_export_path)]
    pub export_json: Option<PathBuf>,

    /// Also write the result as CSV (what --csv prints) to FILE [default:
    /// none].
    #[arg(help_heading = "Output", long, value_name = "FILE", value_parser = parse_export_path)]
    pub export_csv: Option<PathBuf>,

    /// Also write the result as Markdown (what --markdown prints) to FILE
    /// [default: none].
    #[arg(help_heading = "Output", long, value_name = "FILE", value_parser = parse_export_path)]
    pub export_markdown: Option<PathBuf>,
}

/// An `--export-*` path, refused at once when the file could not be
/// written, so that a long measurement never ends in a lost export: `-`
/// (stdout already carries the printed format; use --json, --csv or
/// --markdown there), a directory, a block device, a directory that does
/// not exist, or a read-only file. Only looked at, never opened: the
/// command line opens nothing.
fn parse_export_path(text: &str) -> Result<PathBuf, String> {
    let path = parse_path(text)?;
    if text == "-" {
        return Err(
            "- is stdout, which the printed output already uses; give a file name, or print the format with --json, --csv or --markdown".into(),
        );
    }
    export_path_problem(&path).map_or(Ok(path), Err)
}

/// Why a file could not be written at `path`, found by looking only.
fn export_path_problem(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    if let Ok(m) = std::fs::metadata(path) {
        let kind = m.file_type();
        if m.is_dir() {
            return Some("a directory: give a file name such as result.json".into());
        }
        if kind.is_block_device() {
            return Some("a block device: give a file name such as result.json".into());
        }
        if m.is_file() && m.permissions().readonly() {
            return Some("the file is read-only".into());
        }
        return None;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() && m.permissions().readonly() => {
            Some(format!("the directory {} is read-only", parent.display()))
        }
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(format!("{} is not a directory", parent.display())),
        Err(e) => Some(format!("the directory {}: {e}", parent.display())),
    }
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
            exports: self.exports(),
        }
    }

    /// Two outputs naming one file would leave only the last one written:
    /// refused before anything opens, naming the flags. Paths are compared
    /// as given and, where they exist, as the files they name.
    pub fn one_file_each(&self) -> Result<(), String> {
        let mut named: Vec<(&str, &std::path::Path)> = Vec::new();
        if let Some(o) = &self.output_file {
            named.push(("-o", o));
        }
        for (flag, path) in [
            ("--export-json", &self.export_json),
            ("--export-csv", &self.export_csv),
            ("--export-markdown", &self.export_markdown),
        ] {
            if let Some(p) = path {
                named.push((flag, p));
            }
        }
        for (i, (a, pa)) in named.iter().enumerate() {
            for (b, pb) in &named[i + 1..] {
                if same_file(pa, pb) {
                    return Err(format!(
                        "{a} and {b} both name {}: give each output its own file",
                        pb.display()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The `--export-*` files, in the order JSON, CSV, Markdown.
    pub fn exports(&self) -> Vec<ExportFile> {
        [
            (Format::Json, &self.export_json),
            (Format::Csv, &self.export_csv),
            (Format::Markdown, &self.export_markdown),
        ]
        .into_iter()
        .filter_map(|(format, path)| path.clone().map(|path| ExportFile { format, path }))
        .collect()
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

/// True when `a` and `b` are one path, or name one existing file.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    if a == b {
        return true;
    }
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}
