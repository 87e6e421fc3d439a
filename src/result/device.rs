//! The optional sections of [`RunResult`](super::RunResult) that the
//! position, parallel, copy, endurance and access-method commands add.
//! Each is absent from results that did not measure it, so older results
//! read back unchanged.

use super::Bottleneck;
use super::verify::VerifyTally;
use crate::stats::LatencySummary;
use crate::vocab::Rw;
use crate::vocab::options::{CopySync, ReadMethod};
use serde::{Deserialize, Serialize};

/// Sections beyond the tests; flattened into the result's JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sections {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<SurfaceReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<CopyReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endure: Option<EndureReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessInfo>,
}

/// How `run` read the target: the method and its buffers.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AccessInfo {
    /// How reads reached the data: `pread` (the engines), `mmap` (page faults
    /// on a mapping) or `stdio` (the C library's fread).
    pub method: ReadMethod,
    /// Bytes per library call of `stdio` (`--stdio-bs`).
    pub call_bytes: Option<u64>,
    /// The C library's own buffer of `stdio`.
    pub library_buffer_bytes: Option<u64>,
    /// Transfer size of each timed operation.
    pub block_size: u64,
    /// Where the transfer size came from: `--bs`, or the device's
    /// `max_sectors_kb` for `--bs max`.
    pub block_size_from: BlockSizeFrom,
}

/// Speed against position over the whole device.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SurfaceReport {
    /// Size of the device scanned, bytes.
    pub device_bytes: u64,
    /// Bytes read (and written) at each position.
    pub sample_bytes: u64,
    /// Transfer size of the reads and writes at each position, bytes.
    pub block_size: u64,
    /// One entry per position, in order of offset.
    pub samples: Vec<SurfaceSample>,
    /// Median read MB/s over the samples.
    #[serde(rename = "median_read_mb_per_s", alias = "median_read_mb_s")]
    pub median_read_mb_s: f64,
    /// A sample below this share (percent) of the median is slow.
    #[serde(rename = "threshold_pct", alias = "threshold_percent")]
    pub threshold_percent: f64,
    /// Runs of consecutive samples below `threshold_percent` of the median.
    pub slow_regions: Vec<SlowRegion>,
    /// Mean read speed of the first tenth of the device over the last
    /// tenth (a disk's outer over its inner tracks).
    pub outer_inner_ratio: Option<f64>,
}

/// One position of a surface scan.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SurfaceSample {
    /// Where the sample starts on the device, bytes.
    pub offset: u64,
    /// Offset as a share of the device, 0..100.
    #[serde(rename = "position_pct", alias = "percent")]
    pub percent: f64,
    /// Sequential read speed at the position, MB/s (10^6 bytes per second).
    #[serde(rename = "read_mb_per_s", alias = "read_mb_s")]
    pub read_mb_s: f64,
    /// Median latency of small random reads near the position.
    pub access_ns: Option<u64>,
    /// Sequential write speed at the position, MB/s; null when the scan only
    /// read.
    #[serde(rename = "write_mb_per_s", alias = "write_mb_s")]
    pub write_mb_s: Option<f64>,
    /// The I/O error at this position; null when there was none.
    pub error: Option<String>,
}

/// Consecutive slow samples.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SlowRegion {
    /// First byte of the first slow sample.
    pub start: u64,
    /// End of the last slow sample.
    pub end: u64,
    /// `start` as a share of the device, percent.
    #[serde(rename = "start_pct", alias = "start_percent")]
    pub start_percent: f64,
    /// `end` as a share of the device, percent.
    #[serde(rename = "end_pct", alias = "end_percent")]
    pub end_percent: f64,
    /// Slow samples in the region.
    pub samples: usize,
    /// Slowest read speed in the region, MB/s.
    #[serde(rename = "min_mb_per_s", alias = "min_mb_s")]
    pub min_mb_s: f64,
}

/// The same workload on several devices alone and all at once.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelReport {
    /// Every target, in the order given.
    pub targets: Vec<String>,
    /// One entry per workload.
    pub tests: Vec<ParallelTest>,
}

/// One workload of a parallel run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelTest {
    /// The workload's name, as in the tests (`SEQ1M Q8T1`).
    pub name: String,
    /// Its access pattern.
    pub rw: Rw,
    /// Each target's speed alone and together.
    pub devices: Vec<ParallelDevice>,
    /// Sum of the devices' MB/s while all ran together.
    #[serde(rename = "aggregate_mb_per_s", alias = "aggregate_mb_s")]
    pub aggregate_mb_s: f64,
    /// Sum of the devices' MB/s, each measured alone.
    #[serde(rename = "sum_alone_mb_per_s", alias = "sum_alone_mb_s")]
    pub sum_alone_mb_s: f64,
    /// Aggregate over the sum alone (1.0: no shared limit).
    pub efficiency: Option<f64>,
}

/// One device of a parallel workload.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelDevice {
    /// The target, as given.
    pub target: String,
    /// Its MB/s measured alone; null when not measured.
    #[serde(rename = "alone_mb_per_s", alias = "alone_mb_s")]
    pub alone_mb_s: Option<f64>,
    /// Its MB/s while every target ran at once; null when not measured.
    #[serde(rename = "together_mb_per_s", alias = "together_mb_s")]
    pub together_mb_s: Option<f64>,
    /// Indexes of its tests in `RunResult::tests`: alone, together.
    pub tests: (usize, usize),
}

/// An image copied onto a device, and each side measured alone.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CopyReport {
    /// The image read.
    pub source: String,
    /// The file or device written.
    pub destination: String,
    /// Bytes copied.
    pub bytes: u64,
    /// Bytes per read and write.
    pub block_size: u64,
    /// When the data had to be on the medium: `none`, `end`, `each` or
    /// `direct`.
    pub sync: CopySync,
    /// The whole copy, final sync included.
    pub elapsed_ns: u64,
    /// Bytes copied over `elapsed_ns`, MB/s (10^6 bytes per second).
    pub mb_per_s: f64,
    /// Time of the final fsync (part of `elapsed_ns`).
    pub sync_ns: u64,
    /// The source's read speed alone, MB/s; null with `--no-alone`.
    #[serde(rename = "source_read_mb_per_s", alias = "source_read_mb_s")]
    pub source_read_mb_s: Option<f64>,
    /// The destination's write speed alone, MB/s; null with `--no-alone`.
    #[serde(
        rename = "destination_write_mb_per_s",
        alias = "destination_write_mb_s"
    )]
    pub destination_write_mb_s: Option<f64>,
    /// What a copy that reads then writes each block would reach.
    #[serde(rename = "serial_estimate_mb_per_s", alias = "serial_estimate_mb_s")]
    pub serial_estimate_mb_s: Option<f64>,
    /// The slower side alone.
    pub bottleneck: Option<Bottleneck>,
    /// The read-back comparison; null without `--verify`.
    pub verify: Option<CopyVerify>,
}

/// The destination read back and compared with the source.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CopyVerify {
    /// Bytes read back and compared.
    pub compared_bytes: u64,
    /// Bytes that differed from the source.
    pub mismatched_bytes: u64,
    /// Offset of the first differing byte; null when none differed.
    pub first_mismatch: Option<u64>,
}

/// Write-and-verify cycles over the whole span.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndureReport {
    /// Cycles `--cycles` asked for.
    pub cycles_asked: u32,
    /// Start of the region worn, bytes.
    pub offset: u64,
    /// Length of the region worn, bytes.
    pub span: u64,
    /// Transfer size of the writes and reads, bytes.
    pub block_size: u64,
    /// One entry per cycle run.
    pub cycles: Vec<EndureCycle>,
    /// True when `--stop-on-error` ended the run at a bad cycle.
    pub stopped_at_error: bool,
}

/// One cycle: the span written (stamped blocks), checked, read again timed.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndureCycle {
    /// 1-based.
    pub cycle: u32,
    /// Write speed over the span, MB/s (10^6 bytes per second).
    #[serde(rename = "write_mb_per_s", alias = "write_mb_s")]
    pub write_mb_s: f64,
    /// Timed read speed over the span, MB/s; null when the read did not run.
    #[serde(rename = "read_mb_per_s", alias = "read_mb_s")]
    pub read_mb_s: Option<f64>,
    /// Latency of the writes; null when none completed.
    pub write_latency: Option<LatencySummary>,
    /// Latency of the timed reads; null when they did not run.
    pub read_latency: Option<LatencySummary>,
    /// What checking the stamped blocks found.
    pub verify: VerifyTally,
    /// The I/O error that cut the cycle short; null when there was none.
    pub error: Option<String>,
    /// False when the cycle was cut short (interrupt, error).
    pub complete: bool,
}

/// Where a run's transfer size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum BlockSizeFrom {
    /// `--bs` as given.
    #[serde(rename = "--bs")]
    Bs,
    /// `--bs max`: the device's largest request, `queue/max_sectors_kb`.
    #[serde(rename = "max_sectors_kb")]
    MaxSectorsKb,
}

impl std::fmt::Display for BlockSizeFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BlockSizeFrom::Bs => "--bs",
            BlockSizeFrom::MaxSectorsKb => "max_sectors_kb",
        })
    }
}
