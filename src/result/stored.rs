//! The rows the results database hands out, shared by `store`, which
//! fills them, and `report`, which prints them: a device, a run as listed,
//! its headline figures, a device's history, and what `db check` and
//! `db repair` found. Data only; neither side owns them, so neither imports
//! the other.

use std::path::PathBuf;

/// A device as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct DeviceRow {
    /// The device's number in the database (`history N`).
    pub id: i64,
    /// The key that links the device's runs (model and serial where the
    /// device has them; a path on a host where it has none).
    pub key: String,
    /// What the device is called in tables: `SanDisk Ultra, 29.7 GiB`.
    pub label: String,
    /// Start of its first stored run, RFC 3339 in UTC.
    pub first_seen: String,
    /// Start of its latest stored run, RFC 3339 in UTC.
    pub last_seen: String,
    /// How many runs of it are stored.
    pub runs: i64,
}

/// A run as listed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct RunRow {
    /// The run's number in the database (`export N`, `compare N M`).
    pub id: i64,
    /// The number of the device it measured.
    pub device_id: i64,
    /// That device's label.
    pub device_label: String,
    /// The target the run measured, as given (a file, a directory, a block
    /// device, a `sim:` card); null when its document records none.
    pub target: Option<String>,
    /// The command that made it: `profile`, `flash class`, `fio`.
    pub command: String,
    /// Who measured it: `iocurve`, or `fio` for an import.
    pub source: String,
    /// When it started, RFC 3339 in UTC (an import keeps fio's time).
    pub started_at: String,
    /// Whether the run finished, was stopped, or ended by an error.
    pub status: RunStatus,
    /// Each test's headline figure.
    pub figures: Vec<Figure>,
    /// A run on many hosts: how many ranks on how many hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RankCount>,
}

/// How a run on many hosts was spread, as `history` and `list` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct RankCount {
    /// MPI ranks in the job.
    pub ranks: u32,
    /// Distinct hosts they ran on.
    pub hosts: u32,
}

/// How a stored run ended; its figures are partial unless complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// It ran to its end.
    Complete,
    /// Ctrl-C or SIGTERM stopped it.
    Interrupted,
    /// An I/O error ended it.
    Failed,
}

impl RunStatus {
    /// From the stored document's `error` and `interrupted`; an error
    /// outranks an interruption (the error is why it stopped).
    pub fn of(failed: bool, interrupted: bool) -> RunStatus {
        match (failed, interrupted) {
            (true, _) => RunStatus::Failed,
            (false, true) => RunStatus::Interrupted,
            (false, false) => RunStatus::Complete,
        }
    }

    /// The mark a listing shows after the command (none when complete).
    pub fn mark(self) -> &'static str {
        match self {
            RunStatus::Complete => "",
            RunStatus::Interrupted => "INTERRUPTED",
            RunStatus::Failed => "FAILED",
        }
    }
}

/// One test's headline figure: its median MB/s and range, as kept in the
/// `figures` table for history and list.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Figure {
    /// The test's name: `SEQ1M Q8T1 read`, or a run's workload.
    pub test: String,
    /// Its access pattern and direction.
    pub rw: crate::result::TestRw,
    /// Median MB/s (10^6 B/s) of its repetitions.
    pub median: f64,
    /// Lowest MB/s of its repetitions.
    pub min: f64,
    /// Highest MB/s of its repetitions.
    pub max: f64,
    /// How many repetitions the figures rest on.
    pub repetitions: usize,
}

/// What `list --json` prints: every device, then every run by number.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Listing {
    /// Every device, most recently seen last.
    pub devices: Vec<DeviceRow>,
    /// Every run, by number (the order they were saved).
    pub runs: Vec<RunRow>,
}

/// What `history --json` prints: each device asked for, with its runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Histories {
    /// One entry per device.
    pub devices: Vec<DeviceHistory>,
}

/// One device and its runs, oldest first.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct DeviceHistory {
    /// The device.
    pub device: DeviceRow,
    /// Its runs, by start time.
    pub runs: Vec<RunRow>,
}

/// A stored run's headline figure, for the history of a device.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPoint {
    /// The device's key (see [`crate::probe::identity::device_key`]).
    pub device: String,
    pub run_id: i64,
    pub started_at: String,
    pub test: String,
    pub rw: crate::result::TestRw,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// A database found sound, with what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Sound {
    pub runs: i64,
    pub version: u32,
}

/// A damaged database moved aside and a new one started.
#[derive(Debug, Clone, PartialEq)]
pub struct Replaced {
    /// What quick_check said.
    pub problem: String,
    /// Where the damaged file is now.
    pub aside: PathBuf,
    /// Its companion files moved with it (`-wal`, `-shm`, `-journal`).
    pub companions: Vec<PathBuf>,
    /// Ids of the runs saved into the new database.
    pub salvaged: Vec<i64>,
    /// Ids of runs whose row or document could not be read.
    pub unreadable: Vec<i64>,
    /// The runs table could not be read through, so runs may be lost that
    /// nothing names (beyond `unreadable`).
    pub list_damaged: bool,
    /// Why nothing could be read at all, when so.
    pub unsalvageable: Option<String>,
}

/// What `db check` finds in a database that passed quick_check, and
/// `db repair` fixes in place. Empty when there is nothing to say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Findings {
    /// Schema objects iocurve does not make (triggers first).
    pub foreign: Vec<ForeignObject>,
    /// Runs whose stored document does not parse as a result.
    pub unreadable: Vec<UnreadableRun>,
    /// A `user_version` iocurve never writes.
    pub stamp: Option<OddStamp>,
}

impl Findings {
    pub fn is_empty(&self) -> bool {
        self.foreign.is_empty() && self.unreadable.is_empty() && self.stamp.is_none()
    }

    /// Whether the database holds an object that could act on its own (a
    /// trigger fires on a save; a view runs whatever it says when read).
    pub fn blocks_writing(&self) -> bool {
        self.foreign
            .iter()
            .any(|o| matches!(o.kind, ObjectKind::Trigger | ObjectKind::View))
    }
}

/// The kinds of schema object SQLite keeps in `sqlite_schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ObjectKind {
    Trigger,
    View,
    Index,
    Table,
}

/// A schema object iocurve did not make.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignObject {
    pub kind: ObjectKind,
    pub name: String,
    /// The table it belongs to (a trigger's or an index's); its own name
    /// for a table or a view.
    pub table: String,
}

/// A run whose stored document cannot be read back as a result.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadableRun {
    pub id: i64,
    /// The parser's reason (or what the column holds instead of text).
    pub why: String,
}

/// A `user_version` outside what iocurve writes (0 to the latest).
#[derive(Debug, Clone, PartialEq)]
pub struct OddStamp {
    /// The stamp as stored (signed 32-bit in the file).
    pub stamp: i64,
    /// The latest version this iocurve knows.
    pub latest: u32,
    /// The version whose tables the database has, when it has exactly
    /// those of one: the stamp `db repair` writes back.
    pub tables_of: Option<u32>,
}

/// A sound database whose findings were fixed in place.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixed {
    /// What was found.
    pub findings: Findings,
    /// A copy of the database as it was, taken before anything changed.
    pub copy: PathBuf,
    /// The unreadable runs' documents, written out before they were
    /// taken out of the database.
    pub set_aside: Option<PathBuf>,
    /// The stamp written back, when one was.
    pub restamped: Option<u32>,
    /// Runs left in the database.
    pub runs: i64,
}
