//! Arguments of the commands that read what the results database keeps:
//! `history`, `list`, `delete`, `compare`, `export`, `import` and
//! `report`. The measuring commands' arguments are in the module above.

use super::*;

#[derive(Debug, Args, Clone)]
pub struct HistoryArgs {
    /// A device: id or key from `iocurve list`, a kernel name (sdb), or part
    /// of its name [default: every device].
    #[arg(value_parser = limits::name)]
    pub device: Option<String>,

    /// Print the devices with their runs as one JSON document (each run's
    /// id, date, command, status and headline figures).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args, Clone)]
pub struct DeleteArgs {
    /// Run ids from `iocurve list`; all are deleted or, if one is not
    /// stored, none.
    #[arg(required = true, num_args = 1.., value_name = "RUN")]
    pub runs: Vec<i64>,

    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args, Clone)]
pub struct ListArgs {
    /// Print the devices and runs as one JSON document.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub db: DbArg,
}

/// What `compare --json` prints.
const COMPARE_JSON: &str = "Print the test-by-test comparison as JSON: each pair of like tests with its repetitions, ratio interval and verdict, and the tests set apart with their reasons";
/// What `compare --csv` prints.
const COMPARE_CSV: &str = "Print every compared run's tests as CSV, one row each, as `export --format csv` does (the verdicts are in --json)";

#[derive(Debug, Args, Clone)]
#[command(
    mut_arg("json", |a| a.help(COMPARE_JSON)),
    mut_arg("csv", |a| a.help(COMPARE_CSV)),
    mut_arg("markdown", |a| a.help("Print the comparison as Markdown: the table, then the verdicts as a list"))
)]
pub struct CompareArgs {
    /// Run ids, device names (their latest run), or JSON result files.
    #[arg(required = true, num_args = 1.., value_parser = limits::name)]
    pub runs: Vec<String>,

    /// The first run's test whose kind the table shows [default: its first
    /// test, e.g. SEQ 1MiB Q8]; other runs show their test of that kind.
    #[arg(long)]
    pub test: Option<String>,

    /// Differences smaller than this share (percent) are noise.
    #[arg(long, default_value = "5", value_parser = limits::COMPARE_THRESHOLD.parser())]
    pub threshold: f64,

    /// The run every other is judged against (a run id, device name or JSON
    /// file) [default: the first of RUNS].
    #[arg(long, value_name = "RUN", value_parser = limits::name)]
    pub baseline: Option<String>,

    /// Exit 6 when a test of a later run is slower than the baseline by
    /// more than this share, with a verdict that says slower (for CI, e.g.
    /// 5%); else exit 7 when a pair cannot be told (a run shared its device
    /// or CPUs, or too few repetitions) [default: never fail].
    #[arg(long, value_name = "PERCENT", value_parser = limits::fail_above)]
    pub fail_above: Option<f64>,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args, Clone)]
pub struct ExportArgs {
    /// A run id, a device name (its latest run) or a JSON result file
    /// [default: the latest run].
    #[arg(value_parser = limits::name)]
    pub run: Option<String>,

    /// Output format (--json, --csv and --markdown name one too).
    #[arg(long, value_enum, default_value = "markdown", conflicts_with_all = ["json", "csv", "markdown"])]
    pub format: options::ExportFormat,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args, Clone)]
pub struct ImportArgs {
    /// fio's JSON output.
    #[arg(value_parser = parse_path)]
    pub file: PathBuf,

    /// The device the fio run measured, probed now for its identity
    /// [default: the job's filename or directory, when it exists here].
    #[arg(long, value_name = "PATH", value_parser = parse_path)]
    pub device: Option<PathBuf>,

    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Run ids to include (see `iocurve list`) [default: the latest run].
    #[arg(value_name = "RUN")]
    pub runs: Vec<i64>,

    /// The latest runs of this device (id, key, kernel name or label)
    /// [default: every device].
    #[arg(long, value_name = "NAME", value_parser = limits::name)]
    pub device: Option<String>,

    /// How many of the latest runs to include.
    #[arg(long, value_name = "N", default_value = "1", value_parser = limits::LAST.parser())]
    pub last: u32,

    /// Where to write the page.
    #[arg(
        short,
        long,
        value_name = "FILE",
        default_value = "iocurve-report.html",
        value_parser = parse_path
    )]
    pub output: PathBuf,

    #[command(flatten)]
    pub db: DbArg,
}
