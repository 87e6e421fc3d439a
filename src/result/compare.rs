//! What `compare` works on and what it finds: the runs asked for, the key
//! that makes two tests alike, and the verdict on each pair of like tests.
//!
//! These are data only, shared by the three floors that touch a
//! comparison: `store` turns what the user typed into [`Entry`]s,
//! `analysis::compare` fills a [`Comparison`], and `report::compare` prints
//! it. The JSON of `compare --json` is [`Comparison`] serialized as it is.

use super::RunResult;
use crate::stats::bootstrap::{Interval, NoVerdict, Verdict};
use serde::Serialize;

/// One run to compare, with the name it was asked for by.
#[derive(Debug, Clone)]
pub struct Entry {
    /// `run 12`, or a file name.
    pub source: String,
    pub result: RunResult,
}

/// Sequential or random offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Sequential,
    Random,
}

/// What the requests do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::result::variant_keys::describe_variant_keys)]
pub enum Direction {
    Read,
    Write,
    /// Reads and writes, `read_percent` of them reads (`None`: unrecorded).
    Mixed {
        /// Share of the requests that are reads, percent; null when not
        /// recorded.
        #[serde(rename = "read_pct")]
        read_percent: Option<u8>,
    },
}

/// Through the page cache or around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Direct,
    Buffered,
}

/// How `run` reached the data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Pread,
    Mmap,
    Stdio,
    /// A method this version does not know (a newer result file).
    Other(
        /// The method's name as the result file spells it.
        String,
    ),
}

/// Whether the device had the machine to itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::result::variant_keys::describe_variant_keys)]
pub enum Company {
    Alone,
    /// Measured while `devices` devices (itself included) ran at once.
    Together {
        /// Devices that ran at once, itself included.
        devices: usize,
    },
}

/// Everything that makes two tests alike (see
/// [`crate::analysis::compare::matching`] for why each field counts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TestKey {
    /// `sequential` or `random` offsets.
    pub access: Access,
    /// `read`, `write`, or `mixed` with its read share.
    pub direction: Direction,
    /// Transfer size per I/O, bytes.
    pub block_size: u64,
    /// I/Os in flight per job.
    pub queue_depth: u32,
    /// Parallel jobs.
    pub threads: u32,
    /// `direct` (O_DIRECT) or `buffered` (through the page cache).
    pub mode: Mode,
    /// The engine that ran the test.
    pub engine: crate::result::TestEngine,
    /// How `run` reached the data: `pread`, `mmap`, `stdio`, or another
    /// method's name.
    pub method: Method,
    /// Whether the device ran `alone` or `together` with others.
    pub company: Company,
    /// The member's target in a parallel run (its figures are one of
    /// several devices'); `None` in a run of one target.
    pub member: Option<String>,
}

/// Why a run offers nothing to match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum NoTests {
    /// A command whose result is not a set of repeated tests.
    OtherCommand { command: String },
    /// A measuring command that stored no measured test.
    Empty,
}

impl NoTests {
    /// The reason as a sentence, which both the refusal and the list of
    /// runs set apart quote.
    pub fn text(&self) -> String {
        match self {
            NoTests::OtherCommand { command } => {
                format!("a `{command}` run, which measures something other than repeated tests")
            }
            NoTests::Empty => "no measured test".into(),
        }
    }
}

/// One pair of like tests and what changed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TestChange {
    /// The later run.
    pub run: String,
    /// What the tests are, e.g. `4 KiB randread QD32`.
    pub test: String,
    /// What makes the two tests alike.
    pub key: TestKey,
    /// MB/s of the complete repetitions of each side.
    #[serde(rename = "before_mb_per_s")]
    pub before_mb_s: Vec<f64>,
    /// MB/s of the complete repetitions of the later run.
    #[serde(rename = "after_mb_per_s")]
    pub after_mb_s: Vec<f64>,
    /// The one statement of change `compare`, `report` and `history`
    /// make of this pair (see [`ChangeVerdict`]).
    pub change: ChangeVerdict,
    /// The evidence: the bootstrap verdict on the widened interval, or why
    /// there is none.
    #[serde(serialize_with = "verdict_json")]
    #[schemars(schema_with = "verdict_schema")]
    pub verdict: Result<Verdict, NoVerdict>,
    /// The verdict's ratio − 1 (−0.2: 20% slower), never at or below −1.
    #[serde(rename = "change_ratio")]
    pub percent_change: Option<Interval>,
    /// What the machine was doing during the earlier run's repetitions of
    /// this test; absent when that run did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_before: Option<RunConditions>,
    /// The same for the later run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_after: Option<RunConditions>,
    /// What differed between the two runs besides the device (load, other
    /// I/O on the device, page cache), each a possible cause of a change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_differences: Vec<ConditionChange>,
    /// The engines, when the two tests are the same workload run by
    /// different engines (an imported fio job against an iocurve run):
    /// part of any change may be the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engines: Option<EngineDifference>,
}

/// The engines of a pair of tests that differ in engine alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct EngineDifference {
    /// The engine of the earlier run's test.
    pub before: crate::result::TestEngine,
    /// The engine of the later run's test.
    pub after: crate::result::TestEngine,
}

impl EngineDifference {
    /// "engine fio:io_uring vs uring: part of the change may be the
    /// engine's".
    pub fn text(&self) -> String {
        format!(
            "engine {} vs {}: part of the change may be the engine's",
            self.before.as_str(),
            self.after.as_str()
        )
    }
}

/// The schema of [`verdict_json`]'s object: one key, `verdict` or
/// `no_verdict`.
fn verdict_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut verdict = generator.subschema_for::<Verdict>();
    verdict.insert(
        "description".into(),
        "The change beyond noise, or none, with its evidence.".into(),
    );
    let mut none = generator.subschema_for::<NoVerdict>();
    none.insert(
        "description".into(),
        "Why the repetitions allow no verdict.".into(),
    );
    schemars::json_schema!({
        "description": "The verdict (`verdict`), or why there is none (`no_verdict`).",
        "oneOf": [
            { "type": "object", "properties": { "verdict": verdict }, "required": ["verdict"], "additionalProperties": false },
            { "type": "object", "properties": { "no_verdict": none }, "required": ["no_verdict"], "additionalProperties": false }
        ]
    })
}

/// `{"verdict": ...}` or `{"no_verdict": ...}` rather than serde's
/// `Ok`/`Err`.
fn verdict_json<S: serde::Serializer>(
    v: &Result<Verdict, NoVerdict>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    match v {
        Ok(v) => map.serialize_entry("verdict", v)?,
        Err(why) => map.serialize_entry("no_verdict", why)?,
    }
    map.end()
}

/// A test (or a run) set apart, and why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NotCompared {
    /// The run set apart (`run 12`, or a file name).
    pub run: String,
    /// The test, when one test is meant (`None`: the whole run).
    pub test: Option<String>,
    /// Why it was set apart, in words.
    pub reason: String,
}

impl NotCompared {
    /// "run 3's 4 KiB randread QD32: run 1 has no such test", or the run
    /// alone when the whole run is set apart.
    pub fn text(&self) -> String {
        match &self.test {
            Some(t) => format!("{}'s {t}: {}", self.run, self.reason),
            None => format!("{}: {}", self.run, self.reason),
        }
    }
}

/// Every later run against the first, test by test.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The first run, which the others are compared against (`run 12`, or a
    /// file name).
    pub baseline: String,
    /// True when every run is of one device (its key).
    pub same_device: bool,
    /// Each run's target and device, in the order given: two files on one
    /// disk are one device and two targets.
    pub targets: Vec<RunTarget>,
    /// Noise threshold, as a share.
    pub threshold: f64,
    /// Confidence level of the verdicts' intervals, e.g. 0.95.
    pub level: f64,
    /// One entry per pair of like tests.
    pub changes: Vec<TestChange>,
    /// Tests and runs set apart, and why.
    pub not_compared: Vec<NotCompared>,
    /// What a reader must know before trusting the verdicts (runs spread
    /// over hosts differently); absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
    /// Each run's own outcome, side by side, for the runs whose findings
    /// are more than repeated tests (a curve's model, a sustain's drop, a
    /// flash verdict); such outcomes are shown, not tested for change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<RunOutcome>,
}

/// One compared run's own outcome: its command's section as stored.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RunOutcome {
    /// The run (`run 12`, or a file name).
    pub run: String,
    /// The command, its configuration and its findings.
    pub result: super::Payload,
}

/// What one compared run measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RunTarget {
    /// The run (`run 12`, or a file name).
    pub run: String,
    /// The target as given: a file, a directory, a block device, a `sim:`
    /// card.
    pub target: String,
    /// The device's name (`SanDisk SD08G, 7.4 GiB`); null when the run
    /// recorded no identity.
    pub device: Option<String>,
}

/// What the machine was doing over one test's repetitions, from what each
/// measurement recorded (see [`crate::result::host`]).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunConditions {
    /// Mean one-minute load average over the repetitions' starts and ends.
    pub load: Option<f64>,
    /// Mean share of all CPUs' time that was busy.
    pub cpu_busy_share: Option<f64>,
    /// Mean share of all CPUs' time stolen by a hypervisor.
    pub cpu_steal_share: Option<f64>,
    /// Mean share of the time some task waited for a CPU (PSI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_share: Option<f64>,
    /// Bytes the device moved for others over the repetitions.
    pub other_io_bytes: Option<u64>,
    /// Bytes iocurve itself moved over the repetitions (warm-ups included).
    pub own_io_bytes: Option<u64>,
    /// Largest dirty-page backlog seen at a start or end, bytes.
    pub dirty_bytes: Option<u64>,
    /// Mean share of the measured region in the page cache at the starts
    /// (buffered I/O only).
    pub target_resident_share: Option<f64>,
    /// Share of the layer beneath the target (a loop device's backing
    /// file) resident in the page cache at the starts; absent when the
    /// target has no such layer or it was not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_resident_share: Option<f64>,
    /// True when the run shared its device with other I/O (at least a
    /// tenth of its own), lost CPU to a hypervisor (5% or more), or ran on
    /// CPUs kept busy all along: its figure may say more about its company
    /// than about the device.
    pub disturbed: bool,
    /// What disturbed it (empty when `disturbed` is false).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbances: Vec<Disturbance>,
}

/// What made a run's figure its company's as much as the device's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Disturbance {
    /// Other I/O on the device, at least a tenth of iocurve's own.
    OtherIo,
    /// A hypervisor stole 5% or more of the CPUs.
    CpuSteal,
    /// Tasks waited for a CPU a quarter of the time or more (others' work
    /// kept the CPUs busy); without PSI, the CPUs were busy nearly all
    /// along.
    CpuBusy,
}

/// The statement of change of one pair of like tests: the single typed
/// outcome every output words (`compare`, `report`, `history`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "outcome")]
#[schemars(transform = crate::result::variant_keys::describe_variant_keys)]
pub enum ChangeVerdict {
    /// Faster beyond the run-to-run noise and the threshold.
    Faster {
        /// After / before − 1 with its interval (0.3: 30% faster).
        #[serde(rename = "change_ratio")]
        percent: Interval,
    },
    /// Slower beyond the run-to-run noise and the threshold.
    Slower {
        /// After / before − 1 with its interval (−0.3: 30% slower).
        #[serde(rename = "change_ratio")]
        percent: Interval,
    },
    /// The whole interval lies within the threshold: no change.
    NoChange {
        /// After / before − 1 with its interval.
        #[serde(rename = "change_ratio")]
        percent: Interval,
    },
    /// The interval reaches past the threshold on one side at least but
    /// not wholly: neither a change nor its absence is shown.
    NoClearChange {
        /// After / before − 1 with its interval.
        #[serde(rename = "change_ratio")]
        percent: Interval,
    },
    /// No statement can be made, and why.
    CannotTell {
        /// Why not.
        why: CannotTell,
        /// What the repetitions alone show (after / before − 1), when they
        /// show anything; not a verdict.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        measured: Option<Interval>,
    },
}

/// Why a pair of runs allows no statement of change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "reason")]
#[schemars(transform = crate::result::variant_keys::describe_variant_keys)]
pub enum CannotTell {
    /// A run shared its device or CPUs while it measured: its figure may
    /// be its company's.
    Disturbed {
        /// Which run (or both).
        sides: Sides,
        /// What disturbed them, each once.
        causes: Vec<Disturbance>,
    },
    /// A side has fewer complete repetitions than an interval needs.
    TooFewRepetitions {
        /// Complete repetitions of the earlier run.
        before: usize,
        /// Complete repetitions of the later run.
        after: usize,
    },
    /// A repetition moved nothing (zero or non-finite MB/s).
    NotPositive,
}

/// Which runs of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sides {
    Before,
    After,
    Both,
}

/// Which run of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Before,
    After,
}

/// One way the two runs' machines differed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "what")]
pub enum ConditionChange {
    /// The one-minute load average.
    Load {
        /// Earlier run.
        before: f64,
        /// Later run.
        after: f64,
    },
    /// The busy share of all CPUs.
    CpuBusy {
        /// Earlier run.
        before: f64,
        /// Later run.
        after: f64,
    },
    /// The share of CPU time a hypervisor stole.
    CpuSteal {
        /// Earlier run.
        before: f64,
        /// Later run.
        after: f64,
    },
    /// Other I/O on the device during one run.
    OtherIo {
        /// The run it happened in.
        side: Side,
        /// Bytes moved for others.
        bytes: u64,
    },
    /// The dirty-page backlog.
    Dirty {
        /// Earlier run, bytes.
        before: u64,
        /// Later run, bytes.
        after: u64,
    },
    /// The share of the measured region already in the page cache.
    Resident {
        /// Earlier run.
        before: f64,
        /// Later run.
        after: f64,
    },
    /// Share of the layer beneath the target (a loop device's backing
    /// file) already in the page cache: reads of a stacked device served
    /// from memory beneath it.
    BackingResident {
        /// Earlier run.
        before: f64,
        /// Later run.
        after: f64,
    },
}
