//! Arguments of the commands that look across a device and over its life:
//! `surface`, `copy` and `endure`.

use super::{TargetArgs, parse_path, parse_target};
use crate::vocab::limits;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args, Clone)]
pub struct SurfaceArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Positions spread evenly from the first to the last byte.
    #[arg(long, default_value = "100", value_parser = limits::SAMPLES.parser())]
    pub samples: u32,

    /// Bytes read (and written) sequentially at each position.
    #[arg(long, value_name = "SIZE", default_value = "2M", value_parser = limits::SAMPLE.parser())]
    pub sample_size: u64,

    /// Transfer size of the sequential reads and writes.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = limits::SAMPLE.parser())]
    pub bs: u64,

    /// Random 4 KiB reads near each position, whose median is its access
    /// time (0: none).
    #[arg(long, default_value = "8", value_parser = limits::ACCESS_READS.parser())]
    pub access_reads: u32,

    /// A position below this share (percent) of the median speed is slow.
    #[arg(long, default_value = "50", value_parser = limits::SLOW_THRESHOLD.parser())]
    pub threshold: f64,

    /// Also write an SVG chart of speed and access time against position
    /// [default: no chart].
    #[arg(long, value_name = "FILE", value_parser = parse_path)]
    pub svg: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct CopyArgs {
    /// The image: a file or a block device.
    #[arg(value_name = "SRC", value_parser = parse_target)]
    pub source: PathBuf,

    /// DST: the file or device written (safety rules of every write test:
    /// --destructive or --preserve for a device or an existing file).
    #[command(flatten)]
    pub target: TargetArgs,

    /// Bytes per read and write, as `dd bs=`.
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = limits::BLOCK.parser())]
    pub bs: u64,

    /// When the data must be on the medium: none (page cache, like `dd`
    /// alone), end (fsync at the end, `dd conv=fsync`, as image writers do),
    /// each (every write synchronous, `oflag=dsync`), direct (O_DIRECT,
    /// `oflag=direct`, then fsync).
    #[arg(long, value_enum, default_value = "end")]
    pub sync: crate::vocab::options::CopySync,

    /// Read the destination back and compare it with the source byte by byte.
    #[arg(long)]
    pub verify: bool,

    /// Skip measuring the source's read speed and the destination's write
    /// speed alone.
    #[arg(long)]
    pub no_alone: bool,
}

#[derive(Debug, Args, Clone)]
pub struct EndureArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Write-and-verify cycles over the whole span.
    #[arg(long, value_parser = limits::CYCLES.parser())]
    pub cycles: u32,

    /// Transfer size of the writes and reads.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = limits::SECTOR_BLOCK.parser())]
    pub bs: u64,

    /// End the run at the first cycle with a bad block or an I/O error.
    #[arg(long)]
    pub stop_on_error: bool,

    /// Longest time for one pass (write or read) of a cycle [default: no
    /// limit].
    #[arg(long, value_name = "DURATION", value_parser = limits::TIME.parser())]
    pub pass_time: Option<Duration>,

    /// Also write an SVG chart of speed and errors against cycle
    /// [default: no chart].
    #[arg(long, value_name = "FILE", value_parser = parse_path)]
    pub svg: Option<PathBuf>,
}

/// `surface --threshold` is a share of the median in percent.
pub fn check_threshold(threshold: f64) -> anyhow::Result<()> {
    if !(1.0..=100.0).contains(&threshold) {
        return Err(crate::error::usage(
            "--threshold is a share of the median in percent: give 1 to 100, e.g. 50",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod threshold_tests {
    use super::check_threshold;

    #[test]
    fn a_threshold_is_a_percentage_from_1_to_100() {
        assert!(check_threshold(1.0).is_ok());
        assert!(check_threshold(100.0).is_ok());
        for bad in [0.5, 0.0, 100.5, -3.0, f64::NAN] {
            let e = check_threshold(bad).unwrap_err().to_string();
            assert!(e.contains("--threshold"), "{bad}: {e}");
        }
    }
}
