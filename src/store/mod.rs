//! The results database: every run of every measuring command, so a device
//! can be watched over time and compared with others.
//!
//! SQLite through rusqlite: one file, no server. Runs are linked to a device
//! by its key (see [`crate::probe::identity::device_key`]); the whole result
//! is kept as its JSON document, so nothing measured is lost to the schema,
//! and the headline figures are kept beside it for quick listings.
//!
//! # Safe with several processes, and never writing into damage
//!
//! - Journal: WAL (write-ahead log) rather than the rollback journal. A
//!   save appends its pages to the log and fsyncs it once
//!   (`synchronous = FULL`, so a committed run survives a power cut), and
//!   readers (`list` while an `endure` saves every cycle) neither wait for
//!   the writer nor make it wait, where the rollback journal makes them
//!   take turns. The cost: `-wal` and `-shm` files beside the database
//!   (folded back in and removed when the last connection closes cleanly;
//!   after a crash the `-wal` holds the last commits until the next open,
//!   which is why `db repair` moves it along), and a file system with
//!   working shared memory, i.e. a local one, where the database belongs
//!   anyway (SQLite's locks are not reliable on network file systems).
//!   When SQLite declines WAL, it keeps the rollback journal, which is just
//!   as safe.
//! - Locks: a busy timeout ([`BUSY_TIMEOUT`]) for every lock, and every
//!   write (schema migration, save, update) in a `BEGIN IMMEDIATE`
//!   transaction, which takes the write lock before reading, so two writers
//!   never deadlock on upgrading a read lock; what still comes back busy is
//!   tried again ([`fail::retry_busy`]). Migrations read the schema version
//!   again under the lock (see [`schema::migrate_to`]).
//! - Damage: every open runs `PRAGMA quick_check` before anything could
//!   write, and any SQLite "corrupt" or "not a database" error later is
//!   treated the same: the file is left as it is, saving is refused with a
//!   message naming the file and `iocurve db repair` ([`repair`]), and the
//!   reading commands fail (exit 3) with that message.
//! - Every error leaving the store names the operation and the file, and
//!   says "disk full" when it is (see [`fail::explain`]).

pub mod audit;
mod beside;
pub mod fail;
pub mod figures;
mod fix;
pub mod history;
mod open;
pub mod ranks;
pub mod repair;
pub mod schema;
pub mod select;
mod update;

pub use open::check_path;
use open::{connect, connect_read_only, leave_untouched, read_only_here};
pub use update::save_progress;

use crate::error::IoFailure;
use crate::result::RunResult;
use crate::result::stored::{DeviceRow, Figure, RunRow, RunStatus};
use anyhow::{Context, Result};
use fail::{Access, retry_busy};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one try waits for another process holding a lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

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

/// The database options of this invocation (`--db`, `--no-save`), made
/// once from the command line and handed to the command that needs them.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub db: Option<PathBuf>,
    pub no_save: bool,
}

impl Settings {
    /// The database path of this invocation.
    pub fn path(&self) -> Result<PathBuf> {
        self.db.clone().or_else(default_path).context(
            "no place for the results database: set HOME or XDG_DATA_HOME, or pass --db PATH",
        )
    }

    /// Saves a result unless `--no-save` was given; returns the run id.
    pub fn save(&self, result: &RunResult, source: &str) -> Result<Option<(i64, PathBuf)>> {
        if self.no_save {
            return Ok(None);
        }
        let path = self.path()?;
        let id = Store::open(&path)?.save(result, source)?;
        Ok(Some((id, path)))
    }
}

/// Why a database is only read: the file cannot be written here, or it
/// holds objects iocurve did not make that could act on a write.
enum Unwritable {
    Here,
    Foreign(Vec<crate::result::stored::ForeignObject>),
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    access: Access,
}

impl Store {
    /// Opens for saving (creating it and its directory if needed): refuses
    /// a damaged file, then migrates.
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_as(path, Access::Write)
    }

    /// Opens for reading (`list`, `history`, `compare`...): the same
    /// checks, with advice for a reader.
    pub fn open_to_read(path: &Path) -> Result<Store> {
        Self::open_as(path, Access::Read)
    }

    fn open_as(path: &Path, access: Access) -> Result<Store> {
        let conn = connect(path, access)?;
        Self::prepare(conn, path, access, schema::latest())
    }

    /// Wraps a connection, migrated to schema version `version` (tests
    /// build earlier versions this way).
    pub fn from_connection(conn: Connection, version: u32) -> Result<Store> {
        let path = PathBuf::from(conn.path().filter(|p| !p.is_empty()).unwrap_or(":memory:"));
        Self::prepare(conn, &path, Access::Write, version)
    }

    /// Checks, sets up and migrates a new connection, in the order that
    /// keeps a damaged file untouched: nothing is written before
    /// `quick_check` has passed.
    fn prepare(mut conn: Connection, path: &Path, access: Access, version: u32) -> Result<Store> {
        let explain = |e: anyhow::Error, conn: &Connection, what: &str| {
            fail::explain(e, Some(conn), path, what, access)
        };
        audit::disarm(&conn).map_err(|e| explain(e.into(), &conn, "open"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| explain(e.into(), &conn, "open"))?;
        match retry_busy(|| repair::health(&conn)) {
            Ok(repair::Health::Sound) => {}
            Ok(repair::Health::Damaged(detail)) => {
                leave_untouched(&conn);
                return Err(fail::damaged(path, &detail, access));
            }
            Err(e) => {
                leave_untouched(&conn);
                return Err(explain(e, &conn, "open"));
            }
        }
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Self::read_only(conn, path, access, version, Unwritable::Here);
        }
        // A trigger or view iocurve did not make: read (with them
        // switched off), never written, not even the journal mode.
        let foreign =
            retry_busy(|| audit::foreign(&conn)).map_err(|e| explain(e, &conn, "open"))?;
        if audit::acting(&foreign) {
            leave_untouched(&conn);
            return match access {
                Access::Write => Err(audit::refuse_writing(path, &foreign, access)),
                Access::Read => {
                    Self::read_only(conn, path, access, version, Unwritable::Foreign(foreign))
                }
            };
        }
        // Tables of another make, or a stamp iocurve never writes, are
        // refused before anything is written.
        match retry_busy(|| schema::recognise(&conn)).map_err(|e| explain(e, &conn, "open"))? {
            schema::Found::Foreign(tables) => return Err(schema::foreign(path, &tables)),
            schema::Found::Odd(odd) => return Err(schema::odd(path, &odd)),
            _ => {}
        }
        retry_busy(|| {
            // The mode SQLite settles on is its answer; a file system that
            // cannot do WAL keeps the rollback journal.
            conn.pragma_update_and_check(None, "journal_mode", "wal", |r| r.get::<_, String>(0))?;
            conn.pragma_update(None, "synchronous", "full")?;
            conn.pragma_update(None, "foreign_keys", "on")?;
            Ok(())
        })
        .map_err(|e| explain(e, &conn, "open"))?;
        if let Err(e) = schema::migrate_to(&mut conn, version) {
            if fail::sqlite_error(&e).is_some_and(fail::is_corrupt) {
                leave_untouched(&conn);
            }
            return Err(explain(e, &conn, "update the schema of"));
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            access,
        })
    }

    /// A connection that must not write (see [`connect_read_only`], and
    /// [`Unwritable`]): usable for reading when its schema is the one
    /// wanted, stamped or recognised; nothing is set up or migrated, since
    /// nothing may be written.
    fn read_only(
        conn: Connection,
        path: &Path,
        access: Access,
        version: u32,
        why: Unwritable,
    ) -> Result<Store> {
        let found = schema::recognise(&conn)
            .map_err(|e| fail::explain(e, Some(&conn), path, "read", access))?;
        match found {
            schema::Found::Stamped(v) | schema::Found::Unstamped(v) if v == version => Ok(Store {
                conn,
                path: path.to_path_buf(),
                access,
            }),
            schema::Found::Foreign(tables) => Err(schema::foreign(path, &tables)),
            schema::Found::Odd(odd) => Err(schema::odd(path, &odd)),
            other => Err(match why {
                Unwritable::Here => IoFailure::new(
                    format!(
                        "cannot read the results database {}: it has schema version {} and cannot be written here to update it to {version}: copy it to a writable place and pass --db with the copy",
                        path.display(),
                        other.version()
                    ),
                    None,
                )
                .into(),
                Unwritable::Foreign(objects) => audit::refuse_writing(path, &objects, access),
            }),
        }
    }

    /// The underlying connection (for tests and migrations).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The file this store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// An error of this store's connection, explained (see
    /// [`fail::explain`]); a damaged file is left alone from then on.
    fn fail(&self, e: anyhow::Error, what: &str) -> anyhow::Error {
        if fail::sqlite_error(&e).is_some_and(fail::is_corrupt) {
            leave_untouched(&self.conn);
        }
        fail::explain(e, Some(&self.conn), &self.path, what, self.access)
    }

    /// Runs `f` on the connection, its errors explained.
    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        f(&self.conn).map_err(|e| self.fail(e.into(), "read"))
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, tried again while
    /// another process holds the lock; its errors explained.
    fn write<T>(&mut self, what: &str, mut f: impl FnMut(&Transaction) -> Result<T>) -> Result<T> {
        let conn = &mut self.conn;
        let done = retry_busy(|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        });
        done.map_err(|e| self.fail(e, what))
    }

    /// Saves a result in one transaction; returns its run id.
    pub fn save(&mut self, result: &RunResult, source: &str) -> Result<i64> {
        let json = serde_json::to_string(result)?;
        self.write("save the run in", |tx| {
            insert_run(tx, result, &json, source, None)
        })
    }

    /// Every device, most recently seen last.
    pub fn devices(&self) -> Result<Vec<DeviceRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
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
            rows.collect()
        })
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
            many => Err(crate::error::usage(format!(
                "{name:?} matches {} devices ({}): give more of the name, or a device id from `iocurve list`",
                many.len(),
                many.iter()
                    .map(|d| d.label.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ))),
        }
    }

    /// The device whose latest run was on kernel device `name` (or its
    /// `/dev/` path); a run on the device itself before one on a device
    /// stacked over it (`vda` is not `loop0`, whose medium it is).
    fn device_by_kernel_name(&self, name: &str) -> Result<Option<i64>> {
        let name = name.strip_prefix("/dev/").unwrap_or(name);
        self.all_json(None)?;
        self.read(|conn| {
            conn.query_row(
                "SELECT device_id FROM runs
                 WHERE json_extract(result_json, '$.device_identity.device') = ?1
                    OR json_extract(result_json, '$.device_identity.block.name') = ?1
                 ORDER BY coalesce(json_extract(result_json, '$.device_identity.device') = ?1, 0) DESC,
                          started_at DESC, id DESC LIMIT 1",
                [name],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Runs, oldest first; of one device when `device` is given.
    pub fn runs(&self, device: Option<i64>) -> Result<Vec<RunRow>> {
        self.all_json(device)?;
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT r.id, r.device_id, d.label, r.command, r.source, r.started_at,
                        json_extract(r.result_json, '$.error') IS NOT NULL,
                        coalesce(json_extract(r.result_json, '$.interrupted'), 0),
                        json_extract(r.result_json, '$.target.path')
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
                        status: RunStatus::of(r.get(6)?, r.get(7)?),
                        // A path is text; anything else stored there is no target.
                        target: r.get::<_, Option<String>>(8).unwrap_or(None),
                        figures: Vec::new(),
                        ranks: None,
                    })
                })?
                .collect::<Result<_, _>>()?;
            rows.into_iter()
                .map(|mut row| {
                    row.figures = figures_of(conn, row.id)?;
                    row.ranks = ranks::count(conn, row.id)?;
                    Ok(row)
                })
                .collect()
        })
    }

    /// The stored result of run `id`; a document that does not parse is a
    /// failure of the file, naming `db repair`.
    pub fn load(&self, id: i64) -> Result<Option<RunResult>> {
        let doc = self.read(|conn| {
            conn.query_row("SELECT result_json FROM runs WHERE id = ?1", [id], |r| {
                Ok(audit::parse(r.get_ref(0)?))
            })
            .optional()
        })?;
        match doc {
            None => Ok(None),
            Some(Ok(result)) => Ok(Some(result)),
            Some(Err(why)) => Err(audit::unreadable_error(&self.path, id, &why)),
        }
    }

    /// Refuses to list runs (of `device`, or all) when one's document is
    /// not JSON at all: SQLite's JSON functions, which the listings use,
    /// fail on it with words that name neither the run nor the fix.
    fn all_json(&self, device: Option<i64>) -> Result<()> {
        match self.read(|conn| audit::not_json(conn, device))? {
            Some(id) => Err(audit::unreadable_error(&self.path, id, "not JSON")),
            None => Ok(()),
        }
    }

    /// Deletes the runs `ids` (and their figures and ranks) in one transaction, then
    /// any device left without a run; all or nothing: an id that is not
    /// stored deletes nothing and is named in the error.
    pub fn delete(&mut self, ids: &[i64]) -> Result<()> {
        for &id in ids {
            let stored: bool = self.read(|conn| {
                conn.query_row("SELECT count(*) FROM runs WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
            })?;
            if !stored {
                return Err(crate::error::usage(format!(
                    "no run {id} in {}: see `iocurve list`; nothing was deleted",
                    self.path.display()
                )));
            }
        }
        self.write("delete runs from", |tx| {
            take_out(tx, ids, schema::latest())?;
            Ok(())
        })
    }

    /// The latest run of device `device_id`.
    pub fn latest_run(&self, device_id: i64) -> Result<Option<i64>> {
        self.read(|conn| {
            conn.query_row(
                "SELECT id FROM runs WHERE device_id = ?1 ORDER BY started_at DESC, id DESC LIMIT 1",
                [device_id],
                |r| r.get(0),
            )
            .optional()
        })
    }
}

/// The figures of run `run_id`.
fn figures_of(conn: &Connection, run_id: i64) -> rusqlite::Result<Vec<Figure>> {
    let mut stmt = conn.prepare_cached(
        "SELECT test, rw, median_mb_s, min_mb_s, max_mb_s, repetitions
         FROM figures WHERE run_id = ?1 ORDER BY rowid",
    )?;
    let rows = stmt.query_map([run_id], |r| {
        Ok(Figure {
            test: r.get(0)?,
            rw: crate::result::TestRw::parse(&r.get::<_, String>(1)?),
            median: r.get(2)?,
            min: r.get(3)?,
            max: r.get(4)?,
            repetitions: r.get::<_, i64>(5)? as usize,
        })
    })?;
    rows.collect()
}

/// Inserts a run (as run `id` when given) and its device, figures and
/// ranks.
fn insert_run(
    tx: &Transaction,
    result: &RunResult,
    json: &str,
    source: &str,
    id: Option<i64>,
) -> Result<i64> {
    let (key, label, identity) = match &result.device_identity {
        Some(d) => (
            d.key.clone(),
            d.label.clone(),
            Some(serde_json::to_string(d)?),
        ),
        None => ("unknown".to_string(), "unknown device".to_string(), None),
    };
    let when = &result.started_at;
    tx.execute(
        "INSERT INTO devices (key, label, identity_json, first_seen, last_seen)
         VALUES (?1, ?2, ?3, ?4, ?4)
         ON CONFLICT(key) DO UPDATE SET label = excluded.label,
           identity_json = coalesce(excluded.identity_json, identity_json),
           first_seen = min(first_seen, excluded.first_seen),
           last_seen = max(last_seen, excluded.last_seen)",
        params![key, label, identity, when],
    )?;
    let device_id: i64 = tx.query_row("SELECT id FROM devices WHERE key = ?1", [&key], |r| {
        r.get(0)
    })?;
    tx.execute(
        "INSERT INTO runs (id, device_id, command, started_at, result_json, source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id, device_id, result.command(), when, json, source],
    )?;
    let run_id = tx.last_insert_rowid();
    figures::insert(tx, run_id, result)?;
    ranks::insert(tx, run_id, result)?;
    Ok(run_id)
}

/// Deletes runs `ids`, their figures and ranks (the tables schema version
/// `version` has), and any device left without a run.
fn take_out(tx: &Transaction, ids: &[i64], version: u32) -> rusqlite::Result<()> {
    for &id in ids {
        if version >= 2 {
            tx.execute("DELETE FROM figures WHERE run_id = ?1", [id])?;
        }
        if version >= 3 {
            tx.execute("DELETE FROM mpi_ranks WHERE run_id = ?1", [id])?;
        }
        tx.execute("DELETE FROM runs WHERE id = ?1", [id])?;
    }
    tx.execute(
        "DELETE FROM devices WHERE id NOT IN (SELECT device_id FROM runs)",
        [],
    )?;
    Ok(())
}

/// A migration's backfill: `insert` for each run `select` (of `id,
/// result_json`) returns. A document this version cannot read keeps its
/// run without the new rows.
fn backfill_runs(
    tx: &Transaction,
    select: &str,
    insert: fn(&Transaction, i64, &RunResult) -> rusqlite::Result<()>,
) -> Result<()> {
    let docs: Vec<(i64, String)> = {
        let mut stmt = tx.prepare(select)?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    for (id, json) in docs {
        if let Ok(result) = RunResult::from_json(&json) {
            insert(tx, id, &result)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
