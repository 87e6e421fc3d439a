//! Arguments of the application workloads: `files load`, `files save`,
//! `stream`, `sustain`, and the `--cpu-load` option they share with `run`
//! and `curve`. Parsing only; the commands validate the combinations.

use super::{JsonLinesArg, OutputArgs, StoreArgs, TargetArgs, parse_path, parse_target};
use crate::vocab::limits;
use crate::vocab::options::CopySync;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// `--cpu-load PCT`, flattened into every command that takes it.
#[derive(Debug, Args, Clone, Default)]
pub struct CpuLoadArg {
    /// Keep this share of every CPU busy with pinned background threads
    /// while measuring (e.g. 50 or 50%), to see how speed depends on the CPU
    /// left over [default: none].
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub cpu_load: Option<u8>,
}

#[derive(Debug, Args, Clone)]
pub struct FilesArgs {
    #[command(subcommand)]
    pub action: FilesAction,
}

#[derive(Debug, Subcommand, Clone)]
pub enum FilesAction {
    /// Time open + read all + close of many files of each size, from a cold
    /// page cache; fit the per-file cost and the bandwidth.
    Load(FilesLoadArgs),
    /// Write one file with write calls of each size, then fsync, close,
    /// and verify every byte; show what reached the device.
    Save(FilesSaveArgs),
}

/// What both `files` tests do with their result: the report page, the CPU
/// load gauge, the output flags and the results database.
#[derive(Debug, Args, Clone)]
pub struct FilesOutputArgs {
    /// Also write a self-contained HTML report of this run to FILE
    /// [default: no report].
    #[arg(long, value_name = "FILE", value_parser = parse_path)]
    pub report: Option<PathBuf>,

    #[command(flatten)]
    pub load: CpuLoadArg,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub cluster: super::cluster::ClusterArgs,
}

#[derive(Debug, Args, Clone)]
pub struct FilesLoadArgs {
    /// Directory to create the files in (they are removed at the end).
    #[arg(default_value = ".", value_parser = parse_target)]
    pub dir: PathBuf,

    /// File sizes, comma-separated [default: 1.5k,8k,32k,128k,1M,16M].
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = limits::FILE_SIZE.parser())]
    pub sizes: Option<Vec<u64>>,

    /// Files of each size [default: 16 MiB worth, at least 4, at most 200].
    #[arg(long, value_parser = limits::FILE_COUNT.parser())]
    pub count: Option<u32>,

    /// Frames per second: also report bytes per frame and frames per file
    /// [default: none].
    #[arg(long, value_parser = limits::FPS.parser())]
    pub fps: Option<f64>,

    /// Seed for the files' contents [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,

    /// How each file is read: read (read(2) into one buffer), mmap (page
    /// faults on a mapping) or stdio (the C library's fread in --stdio-bs
    /// calls).
    #[arg(long, value_enum, default_value = "read")]
    pub method: crate::vocab::options::FileReadMethod,

    /// Bytes per fread call of --method stdio (1: byte by byte).
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = limits::STDIO_CALL.parser())]
    pub stdio_bs: u64,

    #[command(flatten)]
    pub out: FilesOutputArgs,
}

#[derive(Debug, Args, Clone)]
pub struct FilesSaveArgs {
    /// Directory to write the file in (it is removed at the end).
    #[arg(default_value = ".", value_parser = parse_target)]
    pub dir: PathBuf,

    /// Size of the file written with each write-call size.
    #[arg(long, value_name = "SIZE", default_value = "2M", value_parser = limits::FILE_SIZE.parser())]
    pub size: u64,

    /// Write-call sizes, comma-separated.
    #[arg(
        long,
        value_name = "SIZES",
        value_delimiter = ',',
        value_parser = limits::FILE_SIZE.parser(),
        default_value = "64,256,512,768,1024,1280,1636,2048,4096,32768,65536"
    )]
    pub sizes: Vec<u64>,

    /// When the data must reach the device: none (left in the page cache),
    /// end (one fsync before close, as an application saving a document),
    /// each (O_DSYNC: every write call reaches the device before the next,
    /// as FatFs on a microcontroller without a cache), direct (O_DIRECT;
    /// sizes that are not whole logical blocks are not measured).
    #[arg(long, value_enum, default_value = "end")]
    pub sync: CopySync,

    /// Seed for the data written [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub out: FilesOutputArgs,
}

impl FilesAction {
    /// Where the run is saved.
    pub fn store(&self) -> &StoreArgs {
        &self.out().store
    }

    /// How the result is printed.
    pub fn output(&self) -> &OutputArgs {
        &self.out().output
    }

    fn out(&self) -> &FilesOutputArgs {
        match self {
            FilesAction::Load(a) => &a.out,
            FilesAction::Save(a) => &a.out,
        }
    }
}

#[derive(Debug, Args, Clone)]
pub struct StreamArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Direction: read (a player) or write (a recorder).
    #[arg(long, value_enum, default_value = "read")]
    pub rw: crate::vocab::options::StreamDirection,

    /// Data rate of the schedule, e.g. 5MB/s or 20MiB/s [default: 5MB/s
    /// unless --fps is given].
    #[arg(long, value_name = "RATE", value_parser = limits::rate, conflicts_with = "fps")]
    pub rate: Option<f64>,

    /// Bytes per request with --rate.
    #[arg(long, value_name = "SIZE", default_value = "64k", value_parser = limits::BLOCK.parser())]
    pub chunk: u64,

    /// Requests per second (video frames), with --frame bytes each
    /// [default: none: --rate sets the schedule].
    #[arg(long, requires = "frame", value_parser = limits::FPS.parser())]
    pub fps: Option<f64>,

    /// Bytes per frame with --fps [default: none; required by --fps].
    #[arg(long, value_name = "SIZE", value_parser = limits::BLOCK.parser())]
    pub frame: Option<u64>,

    /// Time from a request's scheduled start to its deadline [default: one
    /// period, when the next request is due].
    #[arg(long, value_name = "DURATION", value_parser = limits::DEADLINE.parser())]
    pub deadline: Option<Duration>,

    /// Length of the stream (of each trial with --find-max).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = limits::TIME.parser())]
    pub time: Duration,

    /// Search for the highest rate with no missed deadline: double from the
    /// given rate until a miss, then bisect.
    #[arg(long)]
    pub find_max: bool,

    #[command(flatten)]
    pub load: CpuLoadArg,

    #[command(flatten)]
    pub live: JsonLinesArg,
}

#[derive(Debug, Args, Clone)]
pub struct SustainArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub cluster: super::cluster::ClusterArgs,

    /// Bytes to write at most (the target's end also stops it).
    #[arg(long, value_name = "SIZE", default_value = "8G", value_parser = limits::BYTES.parser())]
    pub bytes: u64,

    /// Time to write at most [default: no limit: --bytes or the target's
    /// end stops it].
    #[arg(long, value_name = "DURATION", value_parser = limits::TIME.parser())]
    pub time: Option<Duration>,

    /// Bytes per write.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = limits::SUSTAIN_BLOCK.parser())]
    pub bs: u64,

    /// Length of one throughput interval.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = limits::INTERVAL.parser())]
    pub interval: Duration,

    /// Also report the throughput of every stretch of this many bytes.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = limits::BYTES.parser())]
    pub mark: u64,

    /// --json-lines here prints one JSON object per interval while writing
    /// (for live plots), then the whole result as the last line.
    #[command(flatten)]
    pub live: JsonLinesArg,

    #[command(flatten)]
    pub load: CpuLoadArg,
}

fn parse_percent(text: &str) -> Result<u8, String> {
    let number = text.trim().trim_end_matches('%');
    match number.parse::<u8>() {
        Ok(p) if p <= 100 => Ok(p),
        _ => Err(format!("'{text}' is not a share of the CPU from 0 to 100")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_takes_a_sign_and_refuses_too_much() {
        assert_eq!(parse_percent("50"), Ok(50));
        assert_eq!(parse_percent("75%"), Ok(75));
        assert!(parse_percent("101").is_err());
        assert!(parse_percent("half").is_err());
    }
}
