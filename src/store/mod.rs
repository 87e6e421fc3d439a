//! The results database: every run of every measuring command, so a device
//! can be watched over time and compared with others.
//!
//! SQLite through rusqlite: one file, no server, safe for several iocurve
//! processes at once (WAL journal, a busy timeout, one transaction per
//! save). Runs are linked to a device by its key (see
//! [`crate::probe::identity::device_key`]); the whole result is kept as its
//! JSON document, so nothing measured is lost to the schema, and the
//! headline figures are kept beside it for quick listings.

pub mod figures;
pub mod schema;
mod update;

pub use update::save_progress;

use crate::result::RunResult;
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// How long a save waits for another process holding the write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Where results go: `$XDG_DATA_HOME/iocurve/results.db`, else
/// `~/.local/share/iocurve/results.db`.
pub fn default_path() -> Option<PathBuf> {
    let env_dir = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base =
        env_dir("XDG_DATA_HOME").or_else(|| env_dir("HOME").map(|h| h.join(".local/share")))?;
    Some(base.join("iocurve/results.db"))
}

/// The database options of this invocation, set once by the command line.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub db: Option<PathBuf>,
    pub no_save: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Records the database options (first call wins).
pub fn configure(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// The database path of this invocation.
pub fn configured_path() -> Result<PathBuf> {
    SETTINGS
        .get()
        .and_then(|s| s.db.clone())
        .or_else(default_path)
        .context("no place for the results database: set HOME or XDG_DATA_HOME, or pass --db PATH")
}

/// Saves a result unless `--no-save` was given; returns the run id.
pub fn save_configured(result: &RunResult, source: &str) -> Result<Option<(i64, PathBuf)>> {
    if SETTINGS.get().is_some_and(|s| s.no_save) {
        return Ok(None);
    }
    let path = configured_path()?;
    let id = Store::open(&path)?.save(result, source)?;
    Ok(Some((id, path)))
}

/// A device as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceRow {
    pub id: i64,
    pub key: String,
    pub label: String,
    pub first_seen: String,
    pub last_seen: String,
    pub runs: i64,
}

/// A run as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub device_id: i64,
    pub device_label: String,
    pub command: String,
    pub source: String,
    pub started_at: String,
    pub figures: Vec<figures::Figure>,
}

/// An open results database.
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (creating it and its directory if needed) and migrates.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the results database {}", path.display()))?;
        Self::from_connection(conn, schema::latest())
    }

    /// Wraps a connection, migrated to schema version `version` (tests
    /// build earlier versions this way).
    pub fn from_connection(mut conn: Connection, version: u32) -> Result<Store> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "journal_mode", "wal")?;
        conn.pragma_update(None, "foreign_keys", "on")?;
        schema::migrate_to(&mut conn, version)?;
        Ok(Store { conn })
    }

    /// The underlying connection (for tests and migrations).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Saves a result in one transaction; returns its run id.
    pub fn save(&mut self, result: &RunResult, source: &str) -> Result<i64> {
        let (key, label, identity) = match &result.device_identity {
            Some(d) => (
                d.key.clone(),
                d.label.clone(),
                Some(serde_json::to_string(d)?),
            ),
            None => ("unknown".to_string(), "unknown device".to_string(), None),
        };
        let json = serde_json::to_string(result)?;
        let when = &result.started_at;
        // IMMEDIATE takes the write lock up front, so the busy timeout
        // applies instead of a deadlock error on upgrade.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO devices (key, label, identity_json, first_seen, last_seen)
             VALUES (?1, ?2, ?3, ?4, ?4)
             ON CONFLICT(key) DO UPDATE SET label = excluded.label,
               identity_json = coalesce(excluded.identity_json, identity_json),
               first_seen = min(first_seen, excluded.first_seen),
               last_seen = max(last_seen, excluded.last_seen)",
            params![key, label, identity, when],
        )?;
        let device_id: i64 =
            tx.query_row("SELECT id FROM devices WHERE key = ?1", [&key], |r| {
                r.get(0)
            })?;
        tx.execute(
            "INSERT INTO runs (device_id, command, started_at, result_json, source)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![device_id, result.command, when, json, source],
        )?;
        let run_id = tx.last_insert_rowid();
        figures::insert(&tx, run_id, result)?;
        tx.commit()?;
        Ok(run_id)
    }

    /// Every device, most recently seen last.
    pub fn devices(&self) -> Result<Vec<DeviceRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT d.id, d.key, d.label, d.first_seen, d.last_seen,
                    (SELECT count(*) FROM runs r WHERE r.device_id = d.id)
             FROM devices d ORDER BY d.last_seen, d.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(DeviceRow {
                id: r.get(0)?,
                key: r.get(1)?,
                label: r.get(2)?,
                first_seen: r.get(3)?,
                last_seen: r.get(4)?,
                runs: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The device a name stands for: a device id, an exact key, a kernel
    /// name its latest run was on (`sdb`), or a piece of its label. `None`
    /// when nothing matches; an error when several labels do.
    pub fn find_device(&self, name: &str) -> Result<Option<DeviceRow>> {
        let devices = self.devices()?;
        let exact = devices
            .iter()
            .find(|d| d.key == name || d.id.to_string() == name || d.label == name);
        if let Some(d) = exact {
            return Ok(Some(d.clone()));
        }
        if let Some(id) = self.device_by_kernel_name(name)? {
            return Ok(devices.into_iter().find(|d| d.id == id));
        }
        let lower = name.to_lowercase();
        let matches: Vec<&DeviceRow> = devices
            .iter()
            .filter(|d| d.label.to_lowercase().contains(&lower))
            .collect();
        match matches.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some((*one).clone())),
            many => anyhow::bail!(
                "{name:?} matches {} devices ({}): give more of the name, or a device id from `iocurve list`",
                many.len(),
                many.iter()
                    .map(|d| d.label.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }
    }

    /// The device whose latest run was on kernel device `name` (or its
    /// `/dev/` path).
    fn device_by_kernel_name(&self, name: &str) -> Result<Option<i64>> {
        let name = name.strip_prefix("/dev/").unwrap_or(name);
        Ok(self
            .conn
            .query_row(
                "SELECT device_id FROM runs
                 WHERE json_extract(result_json, '$.device_identity.device') = ?1
                    OR json_extract(result_json, '$.device_identity.block.name') = ?1
                 ORDER BY started_at DESC, id DESC LIMIT 1",
                [name],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Runs, oldest first; of one device when `device` is given.
    pub fn runs(&self, device: Option<i64>) -> Result<Vec<RunRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.device_id, d.label, r.command, r.source, r.started_at
             FROM runs r JOIN devices d ON d.id = r.device_id
             WHERE ?1 IS NULL OR r.device_id = ?1
             ORDER BY r.started_at, r.id",
        )?;
        let rows: Vec<RunRow> = stmt
            .query_map([device], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    device_id: r.get(1)?,
                    device_label: r.get(2)?,
                    command: r.get(3)?,
                    source: r.get(4)?,
                    started_at: r.get(5)?,
                    figures: Vec::new(),
                })
            })?
            .collect::<Result<_, _>>()?;
        rows.into_iter()
            .map(|mut row| {
                row.figures = self.figures(row.id)?;
                Ok(row)
            })
            .collect()
    }

    fn figures(&self, run_id: i64) -> Result<Vec<figures::Figure>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT test, rw, median_mb_s, min_mb_s, max_mb_s, repetitions
             FROM figures WHERE run_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok(figures::Figure {
                test: r.get(0)?,
                rw: r.get(1)?,
                median: r.get(2)?,
                min: r.get(3)?,
                max: r.get(4)?,
                repetitions: r.get::<_, i64>(5)? as usize,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The stored result of run `id`.
    pub fn load(&self, id: i64) -> Result<Option<RunResult>> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT result_json FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        json.map(|j| {
            serde_json::from_str(&j)
                .with_context(|| format!("run {id}: stored document unreadable"))
        })
        .transpose()
    }

    /// The latest run of device `device_id`.
    pub fn latest_run(&self, device_id: i64) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE device_id = ?1 ORDER BY started_at DESC, id DESC LIMIT 1",
                [device_id],
                |r| r.get(0),
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests;
