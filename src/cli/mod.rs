//! The command line: definitions here, the closed sets of values as enums in
//! [`options`], validation into plain configurations in [`config`]. Nothing
//! in this module opens a file or device; that happens only after every
//! argument has been checked.

mod advice;
pub mod apps;
pub mod clap_errors;
pub mod cluster;
pub mod cluster_job;
pub mod config;
pub mod copy;
pub mod db;
pub mod endure;
pub mod files;
pub mod flash;
pub mod more;
pub mod output;
pub mod profile;
pub mod run;
pub mod stored;
pub mod stream;
pub mod surface;
pub mod sustain;

pub use flash::FlashCommand;
pub use more::{CopyArgs, EndureArgs, SurfaceArgs};
pub use output::{DbArg, JsonLinesArg, OutputArgs, StoreArgs};
pub use stored::{
    CompareArgs, DeleteArgs, ExportArgs, HistoryArgs, ImportArgs, ListArgs, ReportArgs,
};

use crate::units;
use crate::vocab::limits;
use crate::vocab::options;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// The text under `iocurve --help`: the units, and every exit code from
/// the one table of them ([`crate::error::EXIT_CODES`]), so a code added
/// there is listed here too.
pub fn after_help() -> String {
    // One code a line, so that a wrap never parts a code from its words.
    let codes: Vec<String> = crate::error::EXIT_CODES
        .iter()
        .map(|(code, meaning)| format!("  {code:>3}  {meaning}"))
        .collect();
    format!(
        "Units: MB/s = 10^6 bytes/s; sizes take k/M/G (1024-based, also KiB/MiB/GiB) or kB/MB/GB (1000-based).\n\nExit codes:\n{}",
        codes.join("\n")
    )
}

/// iocurve: how fast a storage device really is, and why.
#[derive(Debug, Parser)]
#[command(name = "iocurve", version, about, after_help = after_help(), propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    #[command(flatten)]
    pub before_command: EarlyStoreArgs,
}

impl Cli {
    /// The command line of this process. A value an option does not accept
    /// is reported on one line that names the option, the value and what
    /// is accepted, with exit code 2; help, version and the other mistakes
    /// are printed as clap prints them (exit 0 or 2).
    pub fn from_args() -> Cli {
        match Cli::try_parse() {
            Ok(cli) => {
                crate::medium::write_rules::advice::offer(cli.command.offered());
                cli
            }
            Err(err) => match clap_errors::one_line_error(&err) {
                Some(line) => {
                    // The line quotes the value given, which may hold
                    // anything: shown escaped.
                    eprintln!("Error: {}", crate::units::escape::line(&line));
                    std::process::exit(crate::error::EXIT_USAGE);
                }
                None => match clap_errors::plain_usage(&err) {
                    Some(text) => {
                        eprint!("{}", crate::units::escape::text(&text));
                        std::process::exit(crate::error::EXIT_USAGE);
                    }
                    None => err.exit(),
                },
            },
        }
    }
}

/// `iocurve --db PATH CMD` and `iocurve --no-save CMD`: the place these
/// had when they were global, still accepted (unlisted) so scripts keep
/// working; a command they mean nothing to ignores them, as it always has.
#[derive(Debug, Args, Clone, Default)]
pub struct EarlyStoreArgs {
    #[arg(long = "db", id = "early_db", hide = true, value_name = "PATH", value_parser = parse_path)]
    pub db: Option<PathBuf>,

    #[arg(long = "no-save", id = "early_no_save", hide = true)]
    pub no_save: bool,
}

/// What a command may say about the results database: `--db` and
/// `--no-save` where it saves, `--db` where it only reads, nothing where
/// it has no use for it.
#[derive(Debug, Clone, Copy)]
pub enum StoreUse<'a> {
    Saves(&'a StoreArgs),
    Reads(&'a DbArg),
    None,
}

impl Cli {
    /// The results database settings of the command, with the ones given
    /// before the command name merged in (the command's own win).
    pub fn store(&self) -> StoreArgs {
        let early = &self.before_command;
        let mut merged = match self.command.store_use() {
            StoreUse::Saves(own) => own.clone(),
            StoreUse::Reads(own) => StoreArgs::from(own),
            StoreUse::None => StoreArgs::default(),
        };
        merged.db = merged.db.or_else(|| early.db.clone());
        merged.no_save |= early.no_save;
        merged
    }
}

impl Command {
    /// What the command does with the results database.
    pub fn store_use(&self) -> StoreUse<'_> {
        match self {
            Command::Profile(a) => StoreUse::Saves(&a.target.store),
            Command::Run(a) => StoreUse::Saves(&a.target.store),
            Command::Curve(a) => StoreUse::Saves(&a.target.store),
            Command::Stream(a) => StoreUse::Saves(&a.target.store),
            Command::Sustain(a) => StoreUse::Saves(&a.target.store),
            Command::Surface(a) => StoreUse::Saves(&a.target.store),
            Command::Copy(a) => StoreUse::Saves(&a.target.store),
            Command::Endure(a) => StoreUse::Saves(&a.target.store),
            Command::Files(a) => StoreUse::Saves(a.action.store()),
            Command::Flash(f) => StoreUse::Saves(&f.card().store),
            Command::Report(a) => StoreUse::Reads(&a.db),
            Command::History(a) => StoreUse::Reads(&a.db),
            Command::List(a) => StoreUse::Reads(&a.db),
            Command::Compare(a) => StoreUse::Reads(&a.db),
            Command::Delete(a) => StoreUse::Reads(&a.db),
            Command::Export(a) => StoreUse::Reads(&a.db),
            Command::Import(a) => StoreUse::Reads(&a.db),
            Command::Db(d) => StoreUse::Reads(d.db_arg()),
            Command::Recover(_) | Command::Probe(_) | Command::Completions(_) | Command::Man(_) => {
                StoreUse::None
            }
        }
    }

    /// The output flags of a command that prints a result.
    pub fn output_args(&self) -> Option<&OutputArgs> {
        match self {
            Command::Profile(a) => Some(&a.target.output),
            Command::Run(a) => Some(&a.target.output),
            Command::Curve(a) => Some(&a.target.output),
            Command::Stream(a) => Some(&a.target.output),
            Command::Sustain(a) => Some(&a.target.output),
            Command::Surface(a) => Some(&a.target.output),
            Command::Copy(a) => Some(&a.target.output),
            Command::Endure(a) => Some(&a.target.output),
            Command::Files(a) => Some(a.action.output()),
            Command::Flash(f) => Some(&f.card().output),
            Command::Compare(a) => Some(&a.output),
            Command::Export(a) => Some(&a.output),
            _ => None,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The main job: sequential and random reads and writes at high and low
    /// queue depth, each repeated, CrystalDiskMark-style.
    Profile(ProfileArgs),
    /// One workload, exactly as specified (like a fio job).
    Run(RunArgs),
    /// Throughput against transfer size, with the t = t0 + n/B model: the
    /// fixed cost per request, the bandwidth, and the size worth using.
    Curve(CurveArgs),
    /// A self-contained HTML report of stored runs (charts, tables, history).
    Report(ReportArgs),
    /// Put back the original data of a preserve-mode write test that did not
    /// finish (crash, power loss, kill -9), and verify it.
    Recover(RecoverArgs),
    /// Who the device beneath a target is, and what it sits behind.
    Probe(ProbeArgs),
    /// A device's runs over time with their headline figures.
    History(HistoryArgs),
    /// The devices and runs in the results database.
    List(ListArgs),
    /// Runs side by side; two runs of one device get a verdict.
    Compare(CompareArgs),
    /// Deletes stored runs (and a device left without runs).
    Delete(DeleteArgs),
    /// A stored run (or result file) as JSON, CSV or Markdown.
    Export(ExportArgs),
    /// Saves fio's JSON output (fio --output-format=json) as a run.
    Import(ImportArgs),
    /// Whole files as applications use them: `files load` (time per file
    /// by size, cold cache) and `files save` (time by write-call size).
    Files(apps::FilesArgs),
    /// Requests on a fixed schedule (a player or recorder): deadline
    /// misses, stalls and latency from the scheduled start.
    Stream(apps::StreamArgs),
    /// One long write: throughput per interval, and where a cache fills or
    /// the device throttles.
    Sustain(apps::SustainArgs),
    /// Flash cards and sticks: erase-block geometry, open AUs, write cache,
    /// fake capacity, speed-class verdicts.
    #[command(subcommand)]
    Flash(FlashCommand),
    /// Speed and access time against position over the whole device, like
    /// a disk-surface scan; slow regions and the outer/inner ratio.
    Surface(SurfaceArgs),
    /// Writes an image onto a card or disk as imaging tools do, timed, with
    /// each side measured alone and the bottleneck named.
    Copy(CopyArgs),
    /// Wears a device: writes the whole span and reads it back verified,
    /// cycle after cycle (destroys its data).
    Endure(EndureArgs),
    /// The results database itself: `db check` (SQLite's quick_check) and
    /// `db repair` (move a damaged one aside, keep the runs still readable).
    #[command(subcommand)]
    Db(db::DbCommand),
    /// Prints the completion script of a shell; e.g. for bash:
    /// `iocurve completions bash > ~/.local/share/bash-completion/completions/iocurve`.
    Completions(CompletionsArgs),
    /// Man pages: without DIR prints iocurve.1 (try `iocurve man | man -l -`);
    /// with DIR writes iocurve.1 and one page per subcommand
    /// (iocurve-run.1, iocurve-flash-align.1, ...) into it.
    Man(ManArgs),
}

#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    /// The shell whose completion script to print.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// Directory to write every page into (created when missing)
    /// [default: none: print iocurve.1 to stdout].
    #[arg(value_name = "DIR", value_parser = parse_path)]
    pub pages_dir: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct ProbeArgs {
    /// A directory, file or block device.
    #[arg(default_value = ".", value_parser = parse_target)]
    pub target: PathBuf,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The permissions of a test that writes: destroy, or journal and restore.
/// Shared by every measuring command and the flash tests that write.
#[derive(Debug, Args, Clone, Default)]
pub struct WriteArgs {
    /// Allow writes that destroy data: to an existing file, or to an
    /// unmounted block device.
    #[arg(long)]
    pub destructive: bool,

    /// Let a write test use a device or file that holds data: the region it
    /// may overwrite is first copied to a journal on another file system,
    /// and written back, read back and verified afterwards (`iocurve
    /// recover` finishes the job after a crash).
    #[arg(long)]
    pub preserve: bool,

    /// Where --preserve keeps its journals [default:
    /// $XDG_DATA_HOME/iocurve/journals]; must be on another file system than
    /// the target.
    #[arg(long, value_name = "DIR", value_parser = parse_dir)]
    pub journal_dir: Option<PathBuf>,
}

/// Where to measure and how to open it; shared by every measuring command.
#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    /// A directory (measured through a scratch file iocurve creates and
    /// removes), a regular file, or a block device such as /dev/sdb.
    #[arg(default_value = ".", value_parser = parse_target)]
    pub target: PathBuf,

    /// Go through the page cache instead of O_DIRECT (for file systems that
    /// refuse O_DIRECT); the cache is evicted before reads and writes end
    /// with fdatasync.
    #[arg(long)]
    pub buffered: bool,

    #[command(flatten)]
    pub writes: WriteArgs,

    /// Start of the measured region [default: 0].
    #[arg(long, value_name = "SIZE", value_parser = limits::OFFSET.parser())]
    pub offset: Option<u64>,

    /// Length of the measured region [default: the rest of the target; for a
    /// directory, the scratch file size, 1 GiB].
    #[arg(long, value_name = "SIZE", value_parser = limits::SPAN.parser())]
    pub span: Option<u64>,

    /// I/O engine: sync (pread/pwrite), uring (io_uring), or auto (uring when
    /// --qd > 1).
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: options::EngineChoice,

    /// io_uring with a kernel thread polling its submission queue
    /// (IORING_SETUP_SQPOLL): submitting takes no system call, and the
    /// thread keeps a CPU busy while the run lasts. Implies --engine uring.
    #[arg(long)]
    pub sqpoll: bool,

    /// Parallel jobs, each with its own queue [default: 1; profile: each
    /// row's own].
    #[arg(long, value_parser = limits::THREADS.parser())]
    pub threads: Option<u32>,

    /// Seed for random offsets and data [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,

    /// Also write a self-contained HTML report of this run to FILE
    /// [default: no report].
    #[arg(long, value_name = "FILE", value_parser = parse_path)]
    pub report: Option<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub cluster: cluster::ClusterArgs,

    /// Access pattern: read, write, randread, randwrite, rw, randrw.
    #[arg(long, value_enum, default_value = "read")]
    pub rw: crate::vocab::Rw,

    /// Read share of a mixed (rw, randrw) workload, in percent.
    #[arg(long, default_value = "50", value_parser = parse_mix)]
    pub mix: u8,

    /// Transfer size per I/O (e.g. 512, 4k, 1M, 64kB), or `max`: the
    /// device's largest request (max_sectors_kb).
    #[arg(long, default_value = "4k", value_name = "SIZE", value_parser = options::parse_block_size)]
    pub bs: options::BlockSize,

    /// How reads reach the data: pread (the engines), mmap (page faults on a
    /// mapping), stdio (the C library's buffered fread in --stdio-bs calls).
    #[arg(long, value_enum, default_value = "pread")]
    pub method: options::ReadMethod,

    /// Bytes per fread call of --method stdio (1: byte by byte).
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = limits::STDIO_CALL.parser())]
    pub stdio_bs: u64,

    /// More targets, run at the same time as the first with --parallel
    /// [default: none].
    #[arg(value_name = "MORE_TARGETS", value_parser = parse_target)]
    pub more_targets: Vec<PathBuf>,

    /// Run the same workload on every target at once (and each alone), and
    /// report the aggregate against the sum of each alone.
    #[arg(long)]
    pub parallel: bool,

    /// I/Os in flight per job (1..1024); above 1 uses io_uring.
    #[arg(long, default_value = "1", value_parser = limits::QUEUE_DEPTH.parser())]
    pub qd: u32,

    /// Bytes to move in the counted phase [default: the span, at most 10 s].
    #[arg(long, value_name = "SIZE", value_parser = limits::BYTES.parser())]
    pub size: Option<u64>,

    /// Duration of the counted phase (e.g. 5s, 500ms) [default: with
    /// --size, until that many bytes moved; without, at most 10 s].
    #[arg(long, value_name = "DURATION", value_parser = limits::TIME.parser())]
    pub time: Option<Duration>,

    /// Warm-up before counting (executed, then discarded).
    #[arg(long, value_name = "DURATION", value_parser = limits::RAMP.parser(), default_value = "1s")]
    pub ramp: Duration,

    /// Offset granularity of random I/O [default: --bs].
    #[arg(long, value_name = "SIZE", value_parser = limits::ALIGN.parser())]
    pub align: Option<u64>,

    /// Write data: random (incompressible), zeros, or a byte such as 0xa5.
    #[arg(long, default_value = "random")]
    pub pattern: String,

    /// Write self-describing blocks and check them on reading: finds lost,
    /// changed and wrapped-around (fake capacity) blocks. With a read
    /// workload, checks blocks an earlier `--verify` write left.
    #[arg(long)]
    pub verify: bool,

    /// Repetitions of the measurement (median and range are reported).
    #[arg(long, default_value = "1", value_parser = limits::REPEAT_RUN.parser())]
    pub repeat: u32,

    #[command(flatten)]
    pub load: apps::CpuLoadArg,

    #[command(flatten)]
    pub live: JsonLinesArg,
}

#[derive(Debug, Args, Clone)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub cluster: cluster::ClusterArgs,

    /// The rows, as CrystalDiskMark 8 and KDiskMark define them: default
    /// (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1), nvme (SEQ1M Q8T1,
    /// SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1), peak (SEQ1M Q8T1, RND4K
    /// Q32T16), real-world (SEQ1M Q1T1, RND4K Q1T1). --threads N gives
    /// every row N jobs.
    #[arg(long, value_enum, default_value = "default", conflicts_with = "tests")]
    pub preset: options::ProfilePreset,

    /// Any rows instead of a preset, comma-separated: SEQ or RND, a size
    /// (512B, 4K, 128K, 1M), then Q<depth>T<jobs>, e.g.
    /// "SEQ1M:Q8T1,RND4K:Q32T16" [default: the preset's rows].
    #[arg(long, value_name = "ROWS", value_parser = profile::parse_rows)]
    pub tests: Option<profile::ProfileRows>,

    /// Counted duration of each measurement [default: chosen so the whole
    /// profile fits in about a minute].
    #[arg(long, value_name = "DURATION", value_parser = limits::TIME.parser())]
    pub time: Option<Duration>,

    /// Size of the test area [default: 1 GiB, less on slow or small targets].
    #[arg(long, value_name = "SIZE", value_parser = limits::PROFILE_AREA.parser())]
    pub size: Option<u64>,

    /// Repetitions of each test.
    #[arg(long, default_value = "3", value_parser = limits::REPEAT.parser())]
    pub repeat: u32,

    /// Skip the write tests even where they are allowed.
    #[arg(long)]
    pub read_only: bool,

    /// More targets, profiled at the same time as the first with
    /// --parallel [default: none].
    #[arg(value_name = "MORE_TARGETS", value_parser = parse_target)]
    pub more_targets: Vec<PathBuf>,

    /// Run each test on every target at once (and each alone), and report
    /// the aggregate against the sum of each alone.
    #[arg(long)]
    pub parallel: bool,

    #[command(flatten)]
    pub live: JsonLinesArg,
}

#[derive(Debug, Args, Clone)]
pub struct CurveArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub cluster: cluster::ClusterArgs,

    /// More targets, measured in turn and overlaid (crossovers reported)
    /// [default: none].
    #[arg(value_name = "MORE_TARGETS", value_parser = parse_target)]
    pub more_targets: Vec<PathBuf>,

    /// Patterns to sweep, comma-separated: read, write, randread, randwrite.
    /// Writes run only where allowed (scratch files, or --destructive).
    #[arg(long, default_value = "read,write,randread,randwrite")]
    pub rw: String,

    /// Transfer sizes, comma-separated (e.g. 512,768,1280,1636,4k,64k)
    /// [default: the logical block size up to 16 MiB in powers of two].
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = limits::BLOCK.parser())]
    pub sizes: Option<Vec<u64>>,

    /// I/Os in flight per job; above 1 uses io_uring.
    #[arg(long, default_value = "1", value_parser = limits::QUEUE_DEPTH.parser())]
    pub qd: u32,

    /// Repetitions of each point (median and range are reported).
    #[arg(long, default_value = "3", value_parser = limits::REPEAT.parser())]
    pub repeat: u32,

    /// Counted time of each point (a 0.2 s warm-up comes first).
    #[arg(long, value_name = "DURATION", default_value = "800ms", value_parser = limits::TIME.parser())]
    pub time: Duration,

    /// Most bytes moved by one point, whichever of this and --time ends first.
    #[arg(long, value_name = "SIZE", default_value = "512M", value_parser = limits::BYTES.parser())]
    pub point_bytes: u64,

    /// Also write an SVG chart of the curves to FILE [default: no chart].
    #[arg(long, value_name = "FILE", value_parser = parse_path)]
    pub svg: Option<PathBuf>,

    #[command(flatten)]
    pub load: apps::CpuLoadArg,

    #[command(flatten)]
    pub live: JsonLinesArg,
}

#[derive(Debug, Args, Clone)]
pub struct RecoverArgs {
    /// A journal file [default: every unfinished journal in the journal
    /// directory].
    #[arg(value_name = "JOURNAL", value_parser = parse_dir)]
    pub journal: Option<PathBuf>,

    /// The journal directory [default: $XDG_DATA_HOME/iocurve/journals].
    #[arg(long, value_name = "DIR", value_parser = parse_dir)]
    pub journal_dir: Option<PathBuf>,

    /// Put the originals back whole even where the target was written
    /// after the test (those newer bytes are lost).
    #[arg(long)]
    pub force: bool,
}

fn parse_target(text: &str) -> Result<PathBuf, String> {
    units::parse_target(text).map_err(|e| e.0)
}

fn parse_dir(text: &str) -> Result<PathBuf, String> {
    if text.trim().is_empty() {
        return Err("an empty path: give a directory or file such as /var/tmp/iocurve".into());
    }
    Ok(PathBuf::from(text))
}

/// A file to read or write: any path that is not blank.
fn parse_path(text: &str) -> Result<PathBuf, String> {
    match text.trim().is_empty() {
        true => Err("an empty path: give a file name such as out.html".into()),
        false => Ok(PathBuf::from(text)),
    }
}

fn parse_mix(text: &str) -> Result<u8, String> {
    // PERCENT stops at 100, so the conversion cannot fail.
    limits::PERCENT
        .check(text)
        .map(|p| u8::try_from(p).unwrap_or(100))
}

/// For the tests of each command's options: the command `words` (joined)
/// name, parsed as after `iocurve`.
#[cfg(test)]
pub(crate) fn command_of(words: &[&[&str]]) -> Command {
    let all = std::iter::once("iocurve").chain(words.concat());
    <Cli as clap::Parser>::try_parse_from(all).unwrap().command
}

/// For the tests of each command's options: the refusal, or "" for none.
#[cfg(test)]
pub(crate) fn refusal<T>(checked: anyhow::Result<T>) -> String {
    checked.err().map(|e| e.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests;
