//! What a run on many hosts at once adds to a result: one row per rank,
//! the clocks as measured, and the merged figures of every test.
//!
//! Under `mpirun`/`srun` every rank measures its own target; rank 0 merges
//! the ranks' results into one [`RunResult`](super::RunResult) whose tests
//! hold the exact sums (bytes, operations, latency histogram buckets) and
//! whose [`MpiSection`] keeps what a merge would hide: each rank's figures,
//! when each started and ended on one common clock, and how well the clocks
//! were known. The common clock is rank 0's CLOCK_MONOTONIC; other ranks'
//! timestamps are mapped onto it through offsets measured by ping-pong
//! (Cristian's method: the sample with the shortest round trip, bounded by
//! half of it), never through the hosts' own agreement (IOR issue #431).
//! Every `*_ns` instant here counts from the job's first measured start.

use serde::{Deserialize, Serialize};

/// The many-hosts part of a result (`mpi` in JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MpiSection {
    /// Number of ranks in the job.
    pub size: u32,
    /// One row per rank, by rank.
    pub ranks: Vec<RankRow>,
    /// The merged figures of each test, in the order of `RunResult::tests`.
    pub tests: Vec<MpiTest>,
    /// `--stonewall`: every rank stopped when the first finished.
    pub stonewall: bool,
    /// `--shared-file`: all ranks used one file, rank r at r × span.
    pub shared_file: bool,
    /// `--read-other-host`, when asked for: whom each rank read, or why it
    /// could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_other_host: Option<ReadOtherHost>,
    /// What the reader must know about the merge (e.g. that `sustain`'s
    /// intervals are rank 0's alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<MergeNote>,
    /// For a command whose figures are not tests (`sustain`, `files`): its
    /// figures across the ranks, from each rank's bytes and span (the
    /// stonewall figure assumes each rank moved its bytes at an even rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<MpiRepetition>,
    /// Ranks the job lost before the end (their figures are missing from
    /// the merge, which is then marked interrupted), by rank.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostRank>,
}

/// A rank the job went on without.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LostRank {
    /// The MPI rank, from 0.
    pub rank: u32,
    /// The host it ran on.
    pub host: String,
    /// How it was lost.
    pub why: RankLoss,
    /// How long it had been silent (or had moved no data) when it was
    /// given up, ns (stored as whole milliseconds, `after_ms`, before).
    #[serde(default)]
    pub after_ns: u64,
    /// `after_ns` as runs stored before wrote it; read, never written.
    #[serde(default, rename = "after_ms", skip_serializing)]
    #[schemars(skip)]
    pub legacy_after_ms: Option<u64>,
}

impl LostRank {
    /// How long it had been silent, ns, from either form.
    pub fn silent_ns(&self) -> u64 {
        match self.legacy_after_ms {
            Some(ms) if self.after_ns == 0 => ms.saturating_mul(1_000_000),
            _ => self.after_ns,
        }
    }
}

/// What a reader must know about a merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum MergeNote {
    /// Typed: which note (the renderers word it).
    Typed(MergeNoteKind),
    /// The words of a run stored before the notes were typed, shown as
    /// stored.
    Legacy(String),
}

/// The notes a merge may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeNoteKind {
    /// The command's detail (sustain's intervals, files' sizes) is rank
    /// 0's; each rank's totals are in the rank rows, the job's in `whole`.
    DetailOfRankZero,
}

/// How a rank was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankLoss {
    /// It stopped answering (stopped, hung, or its host unreachable) for
    /// `--rank-timeout`.
    StoppedAnswering,
    /// Its measurement moved no data for `--rank-timeout` (a hung mount or
    /// device).
    Stalled,
    /// It did not answer once the job was being stopped (it died).
    Vanished,
}

/// One rank's totals over the whole command (warm-ups excluded), and its
/// clock as rank 0 measured it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankRow {
    /// The MPI rank, from 0.
    pub rank: u32,
    /// The host the rank ran on.
    pub host: String,
    /// Rank within its host (the launcher's local rank).
    pub local_rank: u32,
    /// The target this rank measured, after `{rank}`, `{host}` and
    /// `{local_rank}` were filled in.
    pub target: String,
    /// This rank's clock minus rank 0's, nanoseconds, measured before the
    /// tests (rank 0 itself: 0).
    pub clock_offset_ns: i64,
    /// How far the true offset can be from `clock_offset_ns`: half the
    /// shortest round trip, and no less than the drift's uncertainty.
    pub clock_offset_bound_ns: u64,
    /// How much the offset moved between the measurements before and after
    /// the tests, in nanoseconds per second of the job.
    #[serde(rename = "clock_drift_ppb", alias = "clock_drift_ns_per_s")]
    pub clock_drift_ns_per_s: f64,
    /// How far the drift may be off: the two offsets' bounds over the time
    /// between them, ns per second (0 in runs stored before, and with one
    /// measurement). A drift within it is noise.
    #[serde(default)]
    #[serde(
        rename = "clock_drift_uncertainty_ppb",
        alias = "clock_drift_uncertainty_ns_per_s"
    )]
    pub clock_drift_uncertainty_ns_per_s: f64,
    /// First measured start and last measured end of this rank, on the
    /// common clock.
    pub start_ns: i64,
    /// Last measured end of this rank, ns from the job's first start (common clock).
    pub end_ns: i64,
    /// Bytes this rank moved in its measurements.
    pub bytes: u64,
    /// I/O operations this rank completed in its measurements.
    pub ops: u64,
    /// This rank's bytes over the time it spent measuring (the sum of its
    /// measurements' elapsed times), 10^6 bytes per second.
    pub mb_per_s: f64,
    /// Latency over every request this rank made in the command.
    pub p50_ns: Option<u64>,
    /// 99th percentile latency over every request of this rank, ns; null
    /// without latency.
    pub p99_ns: Option<u64>,
    /// The largest lateness of this rank's starts and ends over the tests:
    /// how long after the first rank it started, and after the first rank
    /// it finished.
    pub start_skew_ns: u64,
    /// Largest lateness of this rank's end after the first rank's, over the
    /// tests, ns.
    pub end_skew_ns: u64,
}

/// One test's figures across the ranks, for its median repetition's
/// formulas stated once: `mb_per_s` is the merged test's own (total bytes
/// over last end minus first start on the common clock).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MpiTest {
    /// The test's name, as in `tests`.
    pub name: String,
    /// Per repetition, in the order of the test's repetitions.
    pub repetitions: Vec<MpiRepetition>,
}

/// One repetition of one test over every rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MpiRepetition {
    /// Total bytes over (last end − first start), 10^6 B/s.
    pub aggregate_mb_per_s: f64,
    /// Bytes every rank had moved when the first rank finished, over the
    /// time from the first start to that finish (elbencho's "first done").
    pub stonewall_mb_per_s: f64,
    /// The sum of each rank's own rate (its bytes over its own elapsed
    /// time); above the aggregate when ranks did not overlap.
    pub sum_of_rank_mb_per_s: f64,
    /// First and last start, first and last end, on the common clock.
    pub first_start_ns: i64,
    /// Last rank's start, ns from the job's first start (common clock).
    pub last_start_ns: i64,
    /// First rank's end, ns from the job's first start (common clock).
    pub first_end_ns: i64,
    /// Last rank's end, ns from the job's first start (common clock).
    pub last_end_ns: i64,
    /// Each rank's start, end, bytes, ops and rate in this repetition, by
    /// rank.
    pub ranks: Vec<RankSpan>,
}

impl MpiRepetition {
    /// How far apart the ranks started.
    pub fn start_skew_ns(&self) -> u64 {
        self.last_start_ns.abs_diff(self.first_start_ns)
    }

    /// How far apart the ranks finished.
    pub fn end_skew_ns(&self) -> u64 {
        self.last_end_ns.abs_diff(self.first_end_ns)
    }
}

/// One rank's share of one repetition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankSpan {
    /// The MPI rank, from 0.
    pub rank: u32,
    /// The rank's start, ns from the job's first start (common clock).
    pub start_ns: i64,
    /// The rank's end, ns from the job's first start (common clock).
    pub end_ns: i64,
    /// Bytes the rank moved.
    pub bytes: u64,
    /// I/O operations the rank completed.
    pub ops: u64,
    /// The rank's bytes over its own elapsed time, MB/s (10^6 bytes per
    /// second).
    pub mb_per_s: f64,
    /// Bytes this rank had moved when it learned the first rank finished
    /// (its own total when it was the first).
    pub bytes_at_first_done: u64,
}

/// Where each rank's reads came from under `--read-other-host`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadOtherHost {
    /// True when every rank read what a rank on another host wrote.
    pub done: bool,
    /// Why not, when `done` is false (e.g. every rank is on one host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<NoPartner>,
    /// For each rank, by rank: the rank whose data it read.
    pub read_from: Vec<u32>,
}

/// Why no rank could read another host's data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum NoPartner {
    /// Typed: why.
    Typed(NoPartnerKind),
    /// The words of a run stored before the reasons were typed.
    Legacy(String),
}

/// The reasons a rank has no partner on another host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::result::variant_keys::describe_variant_keys)]
pub enum NoPartnerKind {
    /// Every rank ran on one host (named: a name from outside).
    OneHost {
        /// The one host.
        host: String,
        /// Ranks on it.
        ranks: u32,
    },
    /// The job had no ranks.
    NoRanks,
}

/// What one rank hands rank 0 beside each measurement so that the merge is
/// exact: its latency histograms bucket by bucket and its start and end on
/// its own CLOCK_MONOTONIC. Present only while an MPI job's ranks send their
/// results to rank 0; never in a printed or saved result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RawCounts {
    /// Read latencies: (a value in the bucket, count), every non-empty bucket.
    pub read_buckets: Vec<(u64, u64)>,
    /// Write latencies, the same way.
    pub write_buckets: Vec<(u64, u64)>,
    /// The counted pass's first start and last end (sync included), on
    /// this rank's CLOCK_MONOTONIC, nanoseconds.
    pub start_mono_ns: u64,
    /// The counted pass's last end, on this rank's CLOCK_MONOTONIC, ns.
    pub end_mono_ns: u64,
    /// Bytes this rank had moved when it learned that the first rank had
    /// finished (its own total when it finished first).
    pub bytes_at_first_done: u64,
    /// Requests this rank completed, for a command whose figures are not
    /// tests (a measurement's own `ops` counts them otherwise).
    #[serde(default)]
    pub ops: u64,
}

/// What each rank says about itself before anything is opened; rank 0
/// stops the job when the ranks' builds, kernels or file systems differ.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankIdentity {
    pub rank: u32,
    pub host: String,
    pub local_rank: u32,
    /// `CARGO_PKG_VERSION` of the binary.
    pub version: String,
    /// A checksum of the running executable's bytes: two builds of one
    /// version differ here.
    pub build: String,
    /// `uname -r`.
    pub kernel: String,
    /// The file system under the rank's target (its name, e.g. `ext4`), or
    /// `block device`.
    pub file_system: String,
    /// The rank's target after its placeholders were filled in.
    pub target: String,
}
