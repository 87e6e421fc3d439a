//! The result sections of the application workloads (`files load`, `files
//! save`, `stream`, `sustain`) and of `--cpu-load`, each an optional part of
//! [`RunResult`](crate::result::RunResult) like the curve report.

use crate::analysis::curve::ModelFit;
use crate::analysis::sustain::SpeedDrop;
use crate::workload::files::{EvictionProof, SaveCheck, SaveTimes};
use crate::workload::stream::StreamOutcome;
use crate::workload::sustain::{IntervalSample, MarkSample};
use serde::{Deserialize, Serialize};

pub use crate::workload::cpuload::CpuLoadInfo;

/// `iocurve files load`: time per whole file, by size, from a cold cache.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FilesLoadReport {
    pub points: Vec<LoadPoint>,
    /// t = t0 + n/B over the per-file medians: t0 is the cost of one file
    /// (open, metadata, close), B the bandwidth of its data.
    pub model: Option<ModelFit>,
    pub fps: Option<f64>,
    /// Every size's eviction was shown by mincore.
    pub eviction_proved: bool,
    /// How each file was read (`--method`).
    #[serde(default)]
    pub method: Option<String>,
}

/// One file size of `files load`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadPoint {
    pub size: u64,
    pub files: u64,
    pub median_ns: u64,
    pub mean_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Size over the median time, MB/s.
    pub mb_per_s: f64,
    /// MB/s over the largest size's MB/s.
    pub efficiency: f64,
    /// Measured MB/s over the model's.
    pub model_ratio: Option<f64>,
    /// With `--fps`: bytes that arrive per frame, and frames one file takes.
    pub bytes_per_frame: Option<f64>,
    pub frames_per_file: Option<f64>,
    pub eviction: EvictionProof,
    /// Bytes the block device read while the files were loaded.
    pub device_read_bytes: Option<u64>,
}

/// `iocurve files save`: one file written with each write-call size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FilesSaveReport {
    pub file_size: u64,
    pub points: Vec<SavePoint>,
    /// Every byte of every file read back right.
    pub all_verified: bool,
}

/// One write-call size of `files save`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavePoint {
    pub write_size: u64,
    pub times: SaveTimes,
    pub total_ns: u64,
    /// File size over the total time, MB/s.
    pub mb_per_s: f64,
    /// What reached the block device from open to close (file system
    /// metadata and journal included).
    pub device: Option<SaveDeviceIo>,
    pub check: SaveCheck,
}

/// Write requests the device received.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SaveDeviceIo {
    pub device: String,
    pub write_requests: u64,
    pub write_bytes: u64,
    pub avg_request_bytes: Option<f64>,
}

/// `iocurve stream`: a fixed schedule and the deadlines it met.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamReport {
    pub direction: String,
    pub fps: Option<f64>,
    pub outcome: StreamOutcome,
    pub find_max: Option<FindMaxReport>,
}

/// `--find-max`: the highest rate that had no miss.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindMaxReport {
    /// 0 when even the lowest rate tried missed.
    pub max_rate_mb_s: f64,
    pub trials: Vec<StreamOutcome>,
}

/// `iocurve sustain`: throughput over a long write.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SustainReport {
    pub block_size: u32,
    pub interval_ns: u64,
    pub mark_bytes: u64,
    pub bytes: u64,
    pub elapsed_ns: u64,
    pub mb_per_s: f64,
    /// What ended the write: bytes, time, end of target, interrupt, error.
    pub ended_by: String,
    pub intervals: Vec<IntervalSample>,
    pub marks: Vec<MarkSample>,
    /// Where the speed dropped, if it did.
    pub drop: Option<SpeedDrop>,
    /// Requests whose completion times were searched for the drop (all of
    /// them up to a cap; 0 in runs stored before the per-request search).
    #[serde(default)]
    pub requests_recorded: u64,
}
