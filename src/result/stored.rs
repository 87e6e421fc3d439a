//! The rows the results database hands out, shared by `store`, which
//! fills them, and `report`, which prints them: a device, a run as listed,
//! its headline figures, a device's history, and what `db check` and
//! `db repair` found. Data only; neither side owns them, so neither imports
//! the other.

use std::path::PathBuf;

/// A device as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct DeviceRow {
    pub id: i64,
    pub key: String,
    pub label: String,
    pub first_seen: String,
    pub last_seen: String,
    pub runs: i64,
}

/// A run as listed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct RunRow {
    pub id: i64,
    pub device_id: i64,
    pub device_label: String,
    pub command: String,
    pub source: String,
    pub started_at: String,
    /// Whether the run finished, was stopped, or ended by an error.
    pub status: RunStatus,
    pub figures: Vec<Figure>,
    /// A run on many hosts: how many ranks on how many hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RankCount>,
}

/// How a run on many hosts was spread, as `history` and `list` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct RankCount {
    pub ranks: u32,
    pub hosts: u32,
}

/// How a stored run ended; its figures are partial unless complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
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
    pub test: String,
    pub rw: crate::result::TestRw,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub repetitions: usize,
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
