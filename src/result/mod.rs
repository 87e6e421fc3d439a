//! The one result type that crosses from measuring to reporting, and the
//! whole of its schema (hyperfine's one result struct as the only link
//! between measuring and output).
//!
//! Every output format is a pure function of [`RunResult`]; nothing printed
//! anywhere is computed outside it. The per-command part is one tagged
//! [`Payload`]; [`config`] records each command's typed configuration,
//! [`apps`], [`device`], [`flash`] and [`verify`] the commands' own
//! sections. Types a pure analysis fills (the curve model in [`curve`], a
//! flash finding's confidence, a sustained write's drop) are defined here,
//! below the analyses, which import them; result imports no layer above it.
//! `schema_version` changes whenever a field changes meaning; older
//! documents still read ([`RunResult::from_json`]).

use crate::probe::Interface;
use crate::stats::{LatencySummary, Spread};
use crate::vocab::Rw;
use serde::{Deserialize, Serialize};

pub mod apps;
pub mod caveat;
pub mod cluster;
pub mod compare;
pub mod config;
pub mod curve;
pub mod device;
pub mod flash;
pub mod host;
pub mod live;
pub mod measured;
pub mod named;
mod payload;
pub mod schema;
pub mod stored;
pub mod target;
mod upgrade;
pub mod variant_keys;
pub mod verify;

pub use caveat::{Caveat, CaveatKind, CutBy, SimulatedCard, SkipReason};
use curve::{Advice, AlignmentPenalty, CeilingVerdict, Crossover, Deviation, FitQuality, ModelFit};
pub use named::{Bottleneck, EndedBy, TestEngine, TestRw};
pub use payload::Payload;
pub use target::{TargetInfo, TargetKind};
use verify::VerifyTally;

/// Version of the JSON layout. 2: the per-command part is one tagged
/// [`Payload`] (`command` names it) instead of a command string and a set
/// of optional sections; version-1 documents still read (see [`payload`]).
/// 3: a flash finding carries its figures (`figure`) beside its words and
/// the flash table is typed cells; closed sets are enums, serialized as the
/// same text. Version-2 documents read with their findings' words and
/// their table as text. 4: seeds are strings of decimal digits (a JSON
/// number above 2^53 is rounded by most readers, so a run could not be
/// repeated from its own JSON), and the JSON Schema of the document is
/// shipped (schema/, see [`schema`]); documents of version 3 and before,
/// whose seeds are numbers, still read. 5: one naming rule for every key
/// (README, "JSON naming"): snake_case, one suffix per unit (`_bytes`,
/// `_ns`, `_s`, `_mb_per_s`, `_iops`, `_pct`, `_ratio`), the seed at
/// `config.seed` for every command; documents of version 4 and before are
/// brought to these keys and units when read ([`upgrade`]).
pub const SCHEMA_VERSION: u32 = 5;

/// Everything one invocation of a measuring command found.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResult {
    /// Version of this layout ([`SCHEMA_VERSION`]): it changes when a field
    /// changes meaning or type, not when an optional field is added.
    pub schema_version: u32,
    /// The iocurve release that measured.
    pub iocurve_version: String,
    /// Start time, RFC 3339 in UTC.
    pub started_at: String,
    /// The machine that measured.
    pub host: HostInfo,
    /// What was measured.
    pub target: TargetInfo,
    /// Each workload measured, with its repetitions (empty for commands
    /// whose figures are their own section, as `sustain`).
    pub tests: Vec<TestResult>,
    /// The background load of `--cpu-load`, as delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_load: Option<apps::CpuLoadInfo>,
    /// True when Ctrl-C or SIGTERM stopped the run early.
    pub interrupted: bool,
    /// The error that ended the run early, if any; the results are partial.
    pub error: Option<String>,
    /// Who the device is (probe), and the key that links its runs.
    #[serde(default)]
    pub device_identity: Option<crate::probe::DeviceIdentity>,
    /// Which command ran, its configuration, and what it found beyond the
    /// tests. Flattened: `command` and the command's own keys sit at the
    /// top level of the JSON.
    #[serde(flatten)]
    pub payload: Payload,
    /// The ranks of a run on many hosts at once (`mpirun`/`srun`); absent
    /// for a run on one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<cluster::MpiSection>,
    /// A rank's span and requests for a command whose figures are not
    /// tests (`sustain`, `files`), sent to rank 0 beside its result so that
    /// the rank rows hold them; never in a printed or saved result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub raw: Option<cluster::RawCounts>,
}

impl RunResult {
    /// The command as a person types it: `run`, `files load`, `flash class`.
    pub fn command(&self) -> String {
        self.payload.command()
    }

    /// True for `profile` runs (their tests are the fixed profile rows).
    pub fn is_profile(&self) -> bool {
        matches!(self.payload, Payload::Profile { .. })
    }

    /// Reads a result document of any schema version this release knows:
    /// an older document reads as the matching payload and is then a
    /// current result (its figures unchanged).
    pub fn from_json(text: &str) -> serde_json::Result<RunResult> {
        let mut doc: serde_json::Value = serde_json::from_str(text)?;
        upgrade::to_current(&mut doc);
        let mut r: RunResult = serde_json::from_value(doc)?;
        r.schema_version = r.schema_version.max(SCHEMA_VERSION);
        Ok(r)
    }

    /// Blocks that failed verification over every repetition of every test.
    pub fn bad_blocks(&self) -> u64 {
        self.tests
            .iter()
            .flat_map(|t| &t.repetitions)
            .filter_map(|m| m.verify.as_ref())
            .map(|v| v.bad())
            .sum()
    }
}

/// Host facts recorded with every result.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostInfo {
    /// The host name.
    pub hostname: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
}

/// One named workload, measured one or more times.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TestResult {
    /// `SEQ1M Q8T1 read`, or for `run` a description of the workload.
    pub name: String,
    /// The workload as executed.
    pub workload: WorkloadInfo,
    /// Each timed execution, in order (warm-ups excluded).
    pub repetitions: Vec<Measurement>,
    /// Median and range of MB/s over the repetitions.
    pub mb_per_s: Option<Spread>,
    /// Median and range of IOPS over the repetitions.
    pub iops: Option<Spread>,
    /// Why the test was not measured, when it was skipped.
    pub skipped: Option<SkipReason>,
}

impl TestResult {
    /// Recomputes the median and range of MB/s and IOPS from the
    /// repetitions, over the complete ones only (see
    /// [`Measurement::is_complete`]): the one rule every producer of a
    /// test (a repeated measurement, a merge of many ranks) applies.
    pub fn refresh_spreads(&mut self) {
        let complete = || self.repetitions.iter().filter(|m| m.is_complete());
        let mbps: Vec<f64> = complete().map(|m| m.mb_per_s).collect();
        let iops: Vec<f64> = complete().map(|m| m.iops).collect();
        self.mb_per_s = Spread::of(&mbps);
        self.iops = Spread::of(&iops);
    }
}

/// The workload of a test, as executed.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkloadInfo {
    /// Direction and order of the I/Os.
    pub rw: TestRw,
    /// Bytes per I/O.
    pub block_size: u64,
    /// I/Os in flight per job.
    pub queue_depth: u32,
    /// Jobs (threads) running at once.
    pub threads: u32,
    /// The I/O engine.
    pub engine: TestEngine,
    /// Start of the region tested, bytes from the start of the target.
    pub offset: u64,
    /// Length of the region tested, bytes.
    pub span: u64,
    /// Share of reads in a mixed workload, percent; null otherwise.
    #[serde(rename = "mix_read_pct", alias = "mix_read_percent")]
    pub mix_read_percent: Option<u8>,
    /// Seed of offsets, data and verify stamps (pass it again with --seed
    /// to repeat the run). A string of
    /// decimal digits: JSON readers round integers above 2^53.
    #[serde(with = "crate::vocab::wide")]
    #[schemars(schema_with = "crate::vocab::wide::schema")]
    pub seed: u64,
}

/// One timed execution of a workload (warm-up excluded).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measurement {
    /// Bytes moved in the counted phase.
    pub bytes: u64,
    /// I/Os completed in the counted phase.
    pub ops: u64,
    /// Wall time of the counted phase, nanoseconds (includes the final
    /// fdatasync of buffered writes).
    pub elapsed_ns: u64,
    /// 10^6 bytes per second.
    pub mb_per_s: f64,
    /// 2^20 bytes per second; not written (MB/s is the one rate unit of
    /// the JSON), zero when read back.
    #[serde(skip_serializing, default)]
    #[schemars(skip)]
    pub mib_per_s: f64,
    /// I/Os completed per second.
    pub iops: f64,
    /// The reads of the measurement; null when it did not read.
    pub read: Option<DirectionResult>,
    /// The writes of the measurement; null when it did not write.
    pub write: Option<DirectionResult>,
    /// Completion latency of all counted I/Os.
    pub latency: Option<LatencySummary>,
    /// CPU time the process used while counting.
    pub cpu: CpuUsage,
    /// What reached the block device, from its stat counters.
    pub device_io: Option<DeviceIo>,
    /// What the machine was doing besides this measurement (load, CPU
    /// steal, other I/O on the device, page cache), at its start and end;
    /// absent in results stored before it was recorded and for imported
    /// or merged figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<host::HostConditions>,
    /// The warm-up that was run before counting and then discarded.
    pub ramp: RampInfo,
    /// Time spent in the final fdatasync of a buffered write run.
    pub sync_ns: u64,
    /// What reading back the written blocks found; null without --verify.
    pub verify: Option<VerifyTally>,
    /// Things the reader must know about this figure (cache, bus limits).
    pub warnings: Vec<Caveat>,
    /// Ctrl-C or SIGTERM cut this measurement short.
    pub interrupted: bool,
    /// Only while an MPI job's ranks hand their results to rank 0: what an
    /// exact merge needs (see [`cluster::RawCounts`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<cluster::RawCounts>,
}

impl Measurement {
    /// Counts towards its test's median and range: not cut short by
    /// Ctrl-C, and at least one operation done.
    pub fn is_complete(&self) -> bool {
        !self.interrupted && self.ops > 0
    }
}

/// Figures for one direction of a (possibly mixed) run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DirectionResult {
    /// Bytes moved in this direction.
    pub bytes: u64,
    /// I/Os completed in this direction.
    pub ops: u64,
    /// MB/s (10^6 B/s) in this direction.
    pub mb_per_s: f64,
    /// I/Os per second in this direction.
    pub iops: f64,
    /// Completion latency of this direction's I/Os.
    pub latency: LatencySummary,
}

impl DirectionResult {
    /// `bytes` and `ops` of one direction with their rates over
    /// `elapsed_ns`.
    pub fn over(bytes: u64, ops: u64, elapsed_ns: u64, latency: LatencySummary) -> Self {
        DirectionResult {
            bytes,
            ops,
            mb_per_s: crate::units::mb_per_s(bytes, elapsed_ns),
            iops: crate::units::per_second(ops, elapsed_ns),
            latency,
        }
    }
}

/// CPU time used by the whole process during the counted phase.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuUsage {
    /// CPU time in user mode, seconds.
    pub user_s: f64,
    /// CPU time in the kernel, seconds.
    pub system_s: f64,
    /// CPU seconds per 10^9 bytes moved.
    #[serde(rename = "cpu_per_gb_s", alias = "cpu_s_per_gb")]
    pub cpu_s_per_gb: f64,
}

impl CpuUsage {
    /// `user_s` and `system_s` with their share per 10^9 of `bytes` (0
    /// when nothing moved).
    pub fn of(user_s: f64, system_s: f64, bytes: u64) -> Self {
        CpuUsage {
            user_s,
            system_s,
            cpu_s_per_gb: if bytes == 0 {
                0.0
            } else {
                (user_s + system_s) / (bytes as f64 / 1e9)
            },
        }
    }
}

/// Deltas of the block device's stat counters over the whole measurement
/// (warm-up included, since the device cannot tell the two apart).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceIo {
    /// Kernel name of the block device counted (`sda`, `mmcblk0`).
    pub device: String,
    /// Read requests the device completed.
    pub read_requests: u64,
    /// Write requests the device completed.
    pub write_requests: u64,
    /// Read requests merged into others before reaching the device.
    pub read_merges: u64,
    /// Write requests merged into others before reaching the device.
    pub write_merges: u64,
    /// Bytes the device read.
    pub read_bytes: u64,
    /// Bytes the device wrote.
    pub write_bytes: u64,
    /// Time the device had requests in flight, ms (written as ns,
    /// `busy_ns`).
    #[serde(rename = "busy_ns", with = "crate::units::wire::ms_as_ns")]
    #[schemars(with = "u64")]
    pub busy_ms: u64,
    /// Mean size of a read request at the device, bytes; null without reads.
    pub avg_read_request_bytes: Option<f64>,
    /// Mean size of a write request at the device, bytes; null without
    /// writes.
    pub avg_write_request_bytes: Option<f64>,
    /// Bytes iocurve read (warm-up included) over this period, for comparison.
    pub iocurve_read_bytes: u64,
    /// Bytes iocurve wrote (warm-up included) over this period.
    pub iocurve_write_bytes: u64,
    /// Share of iocurve's reads the device did not see: a cache served them.
    pub cache_served_fraction: f64,
}

/// The discarded warm-up.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RampInfo {
    /// I/Os of the warm-up.
    pub ops: u64,
    /// Bytes of the warm-up.
    pub bytes: u64,
    /// Wall time of the warm-up, ns.
    pub elapsed_ns: u64,
}

/// Every curve of one `iocurve curve` call, and how they compare.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CurveReport {
    /// Each target measured, in order (the first is also `RunResult::target`).
    pub targets: Vec<TargetInfo>,
    /// One curve per target and pattern.
    pub series: Vec<CurveSeries>,
    /// Sizes where one target overtakes another, per pattern.
    pub crossovers: Vec<Crossover>,
}

/// Throughput against transfer size for one target and one pattern.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CurveSeries {
    /// The target, as given.
    pub target: String,
    /// The access pattern: `read`, `write`, `randread` or `randwrite`.
    pub pattern: Rw,
    /// I/Os in flight per job.
    pub queue_depth: u32,
    /// The target's logical block size, bytes.
    pub logical_block_size: u32,
    /// One entry per transfer size, smallest first.
    pub points: Vec<CurvePoint>,
    /// t(n) = t0 + max(n, U)/B fitted to the direct points.
    pub model: Option<ModelFit>,
    /// Whether the model can be trusted, and why not (absent in results
    /// stored before it was judged).
    #[serde(default)]
    pub fit_quality: Option<FitQuality>,
    /// The measured size worth using; only on a good fit.
    #[serde(default)]
    pub advice: Option<Advice>,
    /// Points far from the model.
    pub deviations: Vec<Deviation>,
    /// Unaligned sizes against their aligned neighbours.
    pub alignment_penalties: Vec<AlignmentPenalty>,
    /// Runs of earlier releases only: the advice as they worded it, or
    /// "no advice: " and why (now worded in `report` from `fit_quality`
    /// and `advice`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
    /// The link the device sits behind, when the probe knows it.
    pub interface: Option<Interface>,
    /// The curve against what the link can carry; null when the link is not
    /// known.
    pub ceiling: Option<CeilingVerdict>,
    /// Why the pattern was not measured.
    pub skipped: Option<SkipReason>,
    /// Warnings of the points' measurements (cache, eviction), by size.
    pub warnings: Vec<(u64, Caveat)>,
    /// On an O_DIRECT target: the sizes O_DIRECT cannot transfer, measured
    /// through the page cache beside their aligned neighbours measured the
    /// same way, by size. `points` then holds only O_DIRECT points.
    #[serde(default)]
    pub unaligned: Vec<CurvePoint>,
}

impl CurveSeries {
    /// A series of `points` not yet read: no model, advice, ceiling or
    /// warnings; the analysis fills those in.
    pub fn unread(
        target: String,
        pattern: Rw,
        queue_depth: u32,
        logical_block_size: u32,
        points: Vec<CurvePoint>,
    ) -> Self {
        CurveSeries {
            target,
            pattern,
            queue_depth,
            logical_block_size,
            points,
            model: None,
            fit_quality: None,
            advice: None,
            deviations: Vec::new(),
            alignment_penalties: Vec::new(),
            recommendation: None,
            interface: None,
            ceiling: None,
            skipped: None,
            warnings: Vec::new(),
            unaligned: Vec::new(),
        }
    }

    /// The points measured the way the series is: O_DIRECT ones when there
    /// are any, else all (a buffered target). Runs stored before the
    /// unaligned section existed kept buffered points in `points`; they are
    /// left out here and shown by [`CurveSeries::unaligned_points`].
    pub fn series_points(&self) -> impl Iterator<Item = &CurvePoint> {
        let direct = self.points.iter().any(|p| !p.buffered);
        // On a direct target a buffered point is an old run's unaligned one.
        let measured_otherwise = move |p: &CurvePoint| p.reference || (direct && p.buffered);
        self.points.iter().filter(move |p| !measured_otherwise(p))
    }

    /// The unaligned section, by size: unaligned sizes and their aligned
    /// neighbours, all through the page cache. Empty on a buffered target,
    /// whose own points already sit beside each other.
    pub fn unaligned_points(&self) -> Vec<&CurvePoint> {
        let mut out: Vec<&CurvePoint> = if self.unaligned.is_empty() {
            let direct = self.points.iter().any(|p| !p.buffered);
            self.points
                .iter()
                .filter(|p| direct && p.buffered)
                .collect()
        } else {
            self.unaligned.iter().collect()
        };
        out.sort_by_key(|p| p.size);
        out
    }
}

/// One size of a curve.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CurvePoint {
    /// Transfer size, bytes.
    pub size: u64,
    /// Measured through the page cache: O_DIRECT cannot do this size, or a
    /// buffered reference for an unaligned neighbour.
    pub buffered: bool,
    /// Measured only as the aligned neighbour of an unaligned size, in the
    /// unaligned section.
    pub reference: bool,
    /// Throughput over the repetitions, MB/s (10^6 bytes per second); null when
    /// nothing was measured.
    pub mb_per_s: Option<Spread>,
    /// I/O operations per second over the repetitions; null when nothing was
    /// measured.
    pub iops: Option<Spread>,
    /// Median latency of the repetition nearest the median MB/s, ns; null
    /// without latency.
    pub p50_ns: Option<u64>,
    /// 99th percentile latency of that repetition, ns; null without latency.
    pub p99_ns: Option<u64>,
    /// Measured MB/s over the model's.
    pub model_ratio: Option<f64>,
    /// Index of the point's test in `RunResult::tests`.
    pub test: usize,
}

#[cfg(test)]
mod tests {
    #[test]
    fn spreads_count_only_complete_repetitions() {
        let mut t = crate::testdata::test("SEQ 1MiB", "read", &[10.0, 20.0, 30.0, 40.0]);
        t.repetitions[0].interrupted = true;
        t.repetitions[3].ops = 0;
        t.refresh_spreads();
        let s = t.mb_per_s.unwrap();
        assert_eq!((s.median, s.min, s.max, s.count), (25.0, 20.0, 30.0, 2));
        assert_eq!(t.iops.unwrap().count, 2);
        t.repetitions.clear();
        t.refresh_spreads();
        assert!(t.mb_per_s.is_none() && t.iops.is_none());
    }
}
