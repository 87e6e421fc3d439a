//! The result sections of the application workloads (`files load`, `files
//! save`, `stream`, `sustain`) and of `--cpu-load`, each an optional part of
//! [`RunResult`](crate::result::RunResult) like the curve report.

use super::EndedBy;
use crate::result::curve::ModelFit;
use crate::result::flash::Confidence;
use crate::stats::{LatencySummary, Spread};
use crate::vocab::options::{CopySync, StreamDirection};
use serde::{Deserialize, Serialize};

/// `iocurve files load`: time per whole file, by size, from a cold cache.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FilesLoadReport {
    /// One entry per file size, smallest first.
    pub points: Vec<LoadPoint>,
    /// t = t0 + n/B over the per-file medians: t0 is the cost of one file
    /// (open, metadata, close), B the bandwidth of its data.
    pub model: Option<ModelFit>,
    /// `--fps`: frames per second; null when not given.
    pub fps: Option<f64>,
    /// Every size's eviction was shown by mincore.
    pub eviction_proved: bool,
    /// How each file was read (`--method`).
    #[serde(default)]
    pub method: Option<LoadMethod>,
}

/// How `files load` read each file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum LoadMethod {
    /// read(2) into one buffer.
    Read,
    /// mmap page faults.
    Mmap,
    /// stdio fread calls of a set size.
    Stdio {
        /// Bytes per fread call.
        call_bytes: u64,
    },
    /// As a run of an earlier release worded it, shown as stored.
    #[serde(untagged)]
    Stored(String),
}

/// One file size of `files load`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadPoint {
    /// File size, bytes.
    pub size: u64,
    /// Files of this size loaded.
    pub files: u64,
    /// Median time to open, read all of and close one file, ns.
    pub median_ns: u64,
    /// Mean of those per-file times, ns.
    pub mean_ns: f64,
    /// Fastest file, ns.
    pub min_ns: u64,
    /// Slowest file, ns.
    pub max_ns: u64,
    /// Size over the median time, MB/s.
    pub mb_per_s: f64,
    /// MB/s over the fastest size's MB/s (at most 1).
    pub efficiency: f64,
    /// Measured MB/s over the model's.
    pub model_ratio: Option<f64>,
    /// With `--fps`: bytes that arrive per frame, and frames one file takes.
    pub bytes_per_frame: Option<f64>,
    /// Frames one file takes to load at `--fps`; null without `--fps`.
    pub frames_per_file: Option<f64>,
    /// Whether the files were shown out of the page cache before loading.
    pub eviction: EvictionProof,
    /// Bytes the block device read while the files were loaded.
    pub device_read_bytes: Option<u64>,
}

/// `iocurve files save`: one file written with each write-call size.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FilesSaveReport {
    /// Size of the file written with each write-call size, bytes.
    pub file_size: u64,
    /// How each file was made durable (`--sync`; `end` before it existed).
    #[serde(default = "sync_at_end")]
    pub sync: CopySync,
    /// One entry per write-call size measured.
    pub points: Vec<SavePoint>,
    /// Write-call sizes not measured, and why (`--sync direct`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedSave>,
    /// Every byte of every file read back right.
    pub all_verified: bool,
}

fn sync_at_end() -> CopySync {
    CopySync::End
}

/// A write-call size `files save` did not measure.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkippedSave {
    /// The write-call size not measured, bytes.
    pub write_size: u64,
    /// Why it was not measured.
    pub why: SaveSkip,
}

/// Why `files save` did not measure a write-call size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SaveSkip {
    /// O_DIRECT needs write calls and a file size in whole blocks.
    DirectUnaligned {
        /// The block O_DIRECT needs, bytes.
        align_bytes: u64,
    },
    /// As a run of an earlier release worded it, shown as stored.
    #[serde(untagged)]
    Stored(String),
}

/// One write-call size of `files save`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SavePoint {
    /// Bytes per write call.
    pub write_size: u64,
    /// Time of each step of the save.
    pub times: SaveTimes,
    /// Open, writes, fsync and close together, ns.
    pub total_ns: u64,
    /// File size over the total time, MB/s.
    pub mb_per_s: f64,
    /// What reached the block device from open to close (file system
    /// metadata and journal included).
    pub device: Option<SaveDeviceIo>,
    /// What reading the file back found.
    pub check: SaveCheck,
}

/// Write requests the device received.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SaveDeviceIo {
    /// Kernel name of the block device (`sda`, `mmcblk0`).
    pub device: String,
    /// Write requests the device completed.
    pub write_requests: u64,
    /// Bytes the device wrote.
    pub write_bytes: u64,
    /// `write_bytes` over `write_requests`, bytes; null when there was no
    /// request.
    pub avg_request_bytes: Option<f64>,
}

/// `iocurve stream`: a fixed schedule and the deadlines it met.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamReport {
    /// `read` (a player) or `write` (a recorder).
    pub direction: StreamDirection,
    /// `--fps`: requests (frames) per second; null when `--rate` set the
    /// schedule.
    pub fps: Option<f64>,
    /// The run at the asked rate (with `find_max`: the last trial).
    pub outcome: StreamOutcome,
    /// The search for the highest rate; null without `--find-max`.
    pub find_max: Option<FindMaxReport>,
}

impl StreamReport {
    /// The section before anything ran (for the header printed first).
    pub fn planned(direction: StreamDirection, fps: Option<f64>) -> StreamReport {
        StreamReport {
            direction,
            fps,
            outcome: StreamOutcome::default(),
            find_max: None,
        }
    }
}

/// `--find-max`: the highest rate that had no miss.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FindMaxReport {
    /// 0 when even the lowest rate tried missed.
    #[serde(rename = "max_rate_mb_per_s", alias = "max_rate_mb_s")]
    pub max_rate_mb_s: f64,
    /// Every rate tried, in order.
    pub trials: Vec<StreamOutcome>,
}

/// `iocurve sustain`: throughput over a long write.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SustainReport {
    /// Bytes per write.
    pub block_size: u32,
    /// Length of one throughput interval, ns.
    pub interval_ns: u64,
    /// A throughput figure is kept for every stretch of this many bytes.
    pub mark_bytes: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Time from the first write to the last completion, ns.
    pub elapsed_ns: u64,
    /// Bytes written over the elapsed time, MB/s (10^6 bytes per second).
    pub mb_per_s: f64,
    /// What ended the write: bytes, time, end of target, interrupt, error.
    pub ended_by: EndedBy,
    /// Throughput interval by interval.
    pub intervals: Vec<IntervalSample>,
    /// Throughput stretch by stretch of `mark_bytes`.
    pub marks: Vec<MarkSample>,
    /// Where the speed dropped, if it did.
    pub drop: Option<SpeedDrop>,
    /// Requests whose completion times were searched for the drop (all of
    /// them up to a cap; 0 in runs stored before the per-request search).
    #[serde(default)]
    pub requests_recorded: u64,
    /// The stretches of one speed the change-point model found in those
    /// requests, in order (one when the speed held; empty in runs stored
    /// before the multi-segment model).
    #[serde(default)]
    pub levels: Vec<SpeedLevel>,
}

/// A stretch of a sustained write at one speed: a segment of the
/// change-point model, after neighbours within noise of each other were
/// joined and stalls too short to be a level were folded into one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpeedLevel {
    /// Index of its first request (0-based).
    pub first_request: u64,
    /// Requests in it.
    pub requests: u64,
    /// Bytes written before it began.
    pub bytes_before: u64,
    /// Bytes it wrote.
    pub bytes: u64,
    /// When it began (the previous request's completion), ns since the
    /// start of the write.
    pub start_ns: u64,
    /// Its length, ns (the sum of its requests' durations).
    pub ns: u64,
    /// Its bytes over its length, MB/s (10^6 bytes per second).
    pub mb_per_s: f64,
}

/// The drop found in a sustained write.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpeedDrop {
    /// Index of the interval the first slow request completed in (the
    /// chart's resolution); filled by the caller that has the intervals.
    #[serde(default)]
    pub at_interval: usize,
    /// Bytes written before the first slow request.
    pub bytes_before_drop: u64,
    /// Seconds from the start to the end of the last fast request.
    #[serde(rename = "before_drop_s", alias = "seconds_before_drop")]
    pub seconds_before_drop: f64,
    /// MB/s of the requests before and after the split (their bytes over
    /// their time).
    #[serde(rename = "before_mb_per_s", alias = "mb_per_s_before")]
    pub mb_per_s_before: f64,
    /// MB/s of the requests after the split.
    #[serde(rename = "after_mb_per_s", alias = "mb_per_s_after")]
    pub mb_per_s_after: f64,
    /// After over before.
    pub ratio: f64,
    /// Index of the first slow request (0-based) and the number of requests
    /// searched; 0 and 0 in runs stored before the per-request search.
    #[serde(default)]
    pub at_request: u64,
    /// Requests searched (0 in runs stored before the per-request search).
    #[serde(default)]
    pub requests: u64,
    /// The plausible range of `bytes_before_drop`: the support set widened
    /// by one request each side (see the sustain analysis for the method).
    #[serde(default)]
    pub bytes_low: u64,
    /// Upper end of the plausible range of `bytes_before_drop`, bytes.
    #[serde(default)]
    pub bytes_high: u64,
    /// Bytes written before the fast stretch that ends at the drop began:
    /// 0 when it began with the write, more after a slow start (a FAT
    /// area, a busy controller), which `mb_per_s_before` leaves out.
    #[serde(default)]
    pub fast_from_bytes: u64,
    /// MB/s of the slow start, the requests before `fast_from_bytes` (0
    /// when there was none).
    #[serde(default, rename = "start_mb_per_s", alias = "mb_per_s_start")]
    pub mb_per_s_start: f64,
    /// The speed before, stretch by stretch: the requests from
    /// `fast_from_bytes` to the drop cut into up to 16 stretches of equal
    /// length, each its bytes over its time, MB/s (absent in runs stored
    /// before it).
    #[serde(default)]
    pub before_spread: Option<Spread>,
    /// The speed after, stretch by stretch, as `before_spread`.
    #[serde(default)]
    pub after_spread: Option<Spread>,
    /// How sure the drop is: capped by whether the write around it was
    /// long enough to have shown a periodic per-request cost of the request
    /// size (absent in runs stored before it).
    #[serde(default)]
    pub confidence: Option<Confidence>,
}

impl SpeedDrop {
    /// Whether the drop was located per request (runs stored before were
    /// located per interval and carry no uncertainty).
    pub fn per_request(&self) -> bool {
        self.requests > 0
    }

    /// The larger distance from the estimate to either end of its range.
    pub fn uncertainty_bytes(&self) -> u64 {
        let below = self.bytes_before_drop.saturating_sub(self.bytes_low);
        let above = self.bytes_high.saturating_sub(self.bytes_before_drop);
        below.max(above)
    }
}

/// What mincore said after the eviction of a set of files.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvictionProof {
    /// Files checked.
    pub files: u64,
    /// Pages still in the page cache after eviction.
    pub resident_pages: u64,
    /// Pages of all the files together (the system's page size, usually 4 KiB).
    pub total_pages: u64,
    /// True when every page of every file was shown absent.
    pub proved: bool,
    /// Why it could not be shown, when it could not.
    pub problem: Option<EvictionProblem>,
}

/// Why the eviction of a set of files could not be shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum EvictionProblem {
    /// A file could not be evicted or checked.
    Failed {
        /// The file.
        path: String,
        /// The OS's error text.
        os_error: String,
    },
    /// Pages stayed in the page cache (tmpfs and some network file systems
    /// keep them); the counts are the proof's own.
    PagesStayed,
    /// As a run of an earlier release worded it, shown as stored.
    #[serde(untagged)]
    Stored(String),
}

/// Times of one `save` with one write-call size.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SaveTimes {
    /// Time of open(2), ns.
    pub open_ns: u64,
    /// All write calls together.
    pub write_ns: u64,
    /// Time of the fsync (0 when `sync` is `none` or `each`), ns.
    pub fsync_ns: u64,
    /// Time of close(2), ns.
    pub close_ns: u64,
    /// Write calls made.
    pub calls: u64,
}

impl SaveTimes {
    pub fn total_ns(&self) -> u64 {
        self.open_ns + self.write_ns + self.fsync_ns + self.close_ns
    }
}

/// What the read-back of a saved file found.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SaveCheck {
    /// Bytes compared (the file's length).
    pub bytes_checked: u64,
    /// Bytes that differ from what was written (a length difference counts
    /// every missing or extra byte).
    pub bytes_wrong: u64,
    /// Offset of the first wrong byte in the file; null when every byte was
    /// right.
    pub first_wrong_offset: Option<u64>,
    /// The read-back came from the device, not the page cache.
    pub eviction: EvictionProof,
}

impl SaveCheck {
    pub fn ok(&self) -> bool {
        self.bytes_wrong == 0
    }
}

/// What one run of a stream found.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamOutcome {
    /// The rate the schedule asked for, MB/s.
    #[serde(rename = "rate_mb_per_s", alias = "rate_mb_s")]
    pub rate_mb_s: f64,
    /// Bytes per request.
    pub chunk: u32,
    /// Time between two scheduled request starts, ns.
    pub period_ns: u64,
    /// Time from a request's scheduled start to its deadline, ns.
    pub deadline_ns: u64,
    /// Requests the schedule holds.
    pub requests_planned: u64,
    /// Requests completed.
    pub requests_done: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// From the first scheduled start to the last completion.
    pub elapsed_ns: u64,
    /// The rate delivered, MB/s.
    #[serde(rename = "achieved_mb_per_s", alias = "achieved_mb_s")]
    pub achieved_mb_s: f64,
    /// Requests that completed after their deadline.
    pub misses: u64,
    /// `misses / requests_done`.
    pub miss_share: f64,
    /// Longest time past a deadline, ns (0 when none was missed).
    pub longest_stall_ns: u64,
    /// Longest time between two completions, ns.
    pub longest_gap_ns: u64,
    /// Latency from the scheduled start to completion.
    pub latency: Option<LatencySummary>,
    /// Standard deviation of that latency, ns.
    pub jitter_ns: f64,
    /// Requests that started later than their schedule (behind a slow one).
    pub late_starts: u64,
    /// What the eviction before a buffered read stream could not do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<super::Caveat>,
}

/// Throughput over one interval of time.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalSample {
    /// Position of the interval, from 0.
    pub index: u64,
    /// Since the start of the write, ns.
    pub start_ns: u64,
    /// Since the start of the write, ns.
    pub end_ns: u64,
    /// Bytes written before the interval began.
    pub bytes_before: u64,
    /// Bytes written in the interval.
    pub bytes: u64,
    /// Bytes over the interval's length, MB/s (10^6 bytes per second).
    pub mb_per_s: f64,
    /// Longest single write in the interval, ns.
    pub max_write_ns: u64,
}

/// Throughput over one stretch of `mark_bytes` bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MarkSample {
    /// Bytes written when the stretch ended.
    pub bytes_end: u64,
    /// When the stretch ended, ns since the start of the write.
    pub end_ns: u64,
    /// Bytes of the stretch over its time, MB/s (10^6 bytes per second).
    pub mb_per_s: f64,
}

/// What the result records about the background load.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuLoadInfo {
    /// The share of every CPU asked for, percent.
    #[serde(rename = "asked_pct", alias = "percent")]
    pub percent: u8,
    /// CPUs loaded (one pinned thread each).
    pub cpus: Vec<usize>,
    /// Threads that could not be pinned (they still ran, unpinned).
    pub unpinned: usize,
    /// Length of one busy-then-idle cycle of each load thread, µs (written
    /// as ns, `period_ns`).
    #[serde(rename = "period_ns", with = "crate::units::wire::us_as_ns")]
    #[schemars(with = "u64")]
    pub period_us: u64,
    /// Wall time the load ran, seconds.
    pub wall_s: f64,
    /// CPU seconds the load threads burned, all CPUs together.
    pub busy_cpu_s: f64,
    /// `busy_cpu_s` over `wall_s × cpus`, percent: the load delivered.
    #[serde(rename = "achieved_pct", alias = "achieved_percent")]
    pub achieved_percent: f64,
}
