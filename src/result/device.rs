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
    pub device_bytes: u64,
    /// Bytes read (and written) at each position.
    pub sample_bytes: u64,
    pub block_size: u64,
    pub samples: Vec<SurfaceSample>,
    /// Median read MB/s over the samples.
    pub median_read_mb_s: f64,
    /// A sample below this share (percent) of the median is slow.
    pub threshold_percent: f64,
    pub slow_regions: Vec<SlowRegion>,
    /// Mean read speed of the first tenth of the device over the last
    /// tenth (a disk's outer over its inner tracks).
    pub outer_inner_ratio: Option<f64>,
}

/// One position of a surface scan.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SurfaceSample {
    pub offset: u64,
    /// Offset as a share of the device, 0..100.
    pub percent: f64,
    pub read_mb_s: f64,
    /// Median latency of small random reads near the position.
    pub access_ns: Option<u64>,
    pub write_mb_s: Option<f64>,
    pub error: Option<String>,
}

/// Consecutive slow samples.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SlowRegion {
    /// First byte of the first slow sample.
    pub start: u64,
    /// End of the last slow sample.
    pub end: u64,
    pub start_percent: f64,
    pub end_percent: f64,
    pub samples: usize,
    pub min_mb_s: f64,
}

/// The same workload on several devices alone and all at once.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelReport {
    pub targets: Vec<String>,
    pub tests: Vec<ParallelTest>,
}

/// One workload of a parallel run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelTest {
    pub name: String,
    pub rw: Rw,
    pub devices: Vec<ParallelDevice>,
    /// Sum of the devices' MB/s while all ran together.
    pub aggregate_mb_s: f64,
    /// Sum of the devices' MB/s, each measured alone.
    pub sum_alone_mb_s: f64,
    /// Aggregate over the sum alone (1.0: no shared limit).
    pub efficiency: Option<f64>,
}

/// One device of a parallel workload.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelDevice {
    pub target: String,
    pub alone_mb_s: Option<f64>,
    pub together_mb_s: Option<f64>,
    /// Indexes of its tests in `RunResult::tests`: alone, together.
    pub tests: (usize, usize),
}

/// An image copied onto a device, and each side measured alone.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CopyReport {
    pub source: String,
    pub destination: String,
    pub bytes: u64,
    pub block_size: u64,
    pub sync: CopySync,
    /// The whole copy, final sync included.
    pub elapsed_ns: u64,
    pub mb_per_s: f64,
    /// Time of the final fsync (part of `elapsed_ns`).
    pub sync_ns: u64,
    pub source_read_mb_s: Option<f64>,
    pub destination_write_mb_s: Option<f64>,
    /// What a copy that reads then writes each block would reach.
    pub serial_estimate_mb_s: Option<f64>,
    /// The slower side alone.
    pub bottleneck: Option<Bottleneck>,
    pub verify: Option<CopyVerify>,
}

/// The destination read back and compared with the source.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CopyVerify {
    pub compared_bytes: u64,
    pub mismatched_bytes: u64,
    pub first_mismatch: Option<u64>,
}

/// Write-and-verify cycles over the whole span.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndureReport {
    pub cycles_asked: u32,
    pub offset: u64,
    pub span: u64,
    pub block_size: u64,
    pub cycles: Vec<EndureCycle>,
    /// True when `--stop-on-error` ended the run at a bad cycle.
    pub stopped_at_error: bool,
}

/// One cycle: the span written (stamped blocks), checked, read again timed.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndureCycle {
    /// 1-based.
    pub cycle: u32,
    pub write_mb_s: f64,
    pub read_mb_s: Option<f64>,
    pub write_latency: Option<LatencySummary>,
    pub read_latency: Option<LatencySummary>,
    pub verify: VerifyTally,
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
