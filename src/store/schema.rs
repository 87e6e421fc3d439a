//! The database schema as a list of migrations, applied in order.
//!
//! `PRAGMA user_version` holds the number of migrations applied; opening a
//! database applies the rest, each in its own transaction, so a database of
//! any earlier version (or an empty file) reaches the current one, also when
//! several processes open a fresh file at once (see [`migrate_to`]). A new
//! migration is appended here, never edited in place once released.
//!
//! A database whose `user_version` was lost (reset to 0 by a tool, or
//! copied table by table) is recognised from its tables ([`recognise`]):
//! when they are exactly those of some version, the stamp is written back
//! and the migrations go on from there; tables of any other make are never
//! built upon, and the open is refused with the fix.

use super::fail::retry_busy;
use super::{figures, ranks};
use crate::result::stored::OddStamp;
use anyhow::{Context, Result};
use rusqlite::{Connection, Transaction, TransactionBehavior};

/// One step of the schema.
pub struct Migration {
    pub sql: &'static str,
    /// Fills new tables from the stored documents, when needed.
    pub backfill: Option<fn(&Transaction) -> Result<()>>,
}

/// Every migration, oldest first; the schema version is their count.
pub const MIGRATIONS: &[Migration] = &[
    // 1: devices and the whole result of each run.
    Migration {
        sql: "CREATE TABLE devices (
                id INTEGER PRIMARY KEY,
                key TEXT NOT NULL UNIQUE,
                label TEXT NOT NULL,
                identity_json TEXT,
                first_seen TEXT NOT NULL,
                last_seen TEXT NOT NULL
              );
              CREATE TABLE runs (
                id INTEGER PRIMARY KEY,
                device_id INTEGER NOT NULL REFERENCES devices(id),
                command TEXT NOT NULL,
                started_at TEXT NOT NULL,
                result_json TEXT NOT NULL
              );
              CREATE INDEX runs_device ON runs(device_id, started_at);",
        backfill: None,
    },
    // 2: where a run came from (iocurve or an imported tool), and the
    // headline figures of each test for history without parsing documents.
    Migration {
        sql: "ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'iocurve';
              CREATE TABLE figures (
                run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                test TEXT NOT NULL,
                rw TEXT NOT NULL,
                median_mb_s REAL NOT NULL,
                min_mb_s REAL NOT NULL,
                max_mb_s REAL NOT NULL,
                repetitions INTEGER NOT NULL
              );
              CREATE INDEX figures_run ON figures(run_id);",
        backfill: Some(figures::backfill),
    },
    // 3: the ranks of a run on many hosts (`mpirun`), one row each, for
    // questions across runs and hosts without parsing documents.
    Migration {
        sql: ranks::MIGRATION,
        backfill: Some(ranks::backfill),
    },
];

/// What a database holds, judged from its stamp and its tables.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// No tables at all: a new file.
    Empty,
    /// `user_version` says this version.
    Stamped(u32),
    /// No stamp, but exactly the tables of this version.
    Unstamped(u32),
    /// No stamp, and tables no version of iocurve makes (their names).
    Foreign(Vec<String>),
    /// A stamp iocurve never writes: negative, or past the latest.
    Odd(OddStamp),
}

impl Found {
    /// The schema version its tables are at (0: none, or not ours).
    pub fn version(&self) -> u32 {
        match self {
            Found::Stamped(v) | Found::Unstamped(v) => *v,
            Found::Odd(odd) => odd.tables_of.unwrap_or(0),
            Found::Empty | Found::Foreign(_) => 0,
        }
    }
}

/// The tables, their columns in order, and the indexes of a database:
/// what must match for two databases to have one schema. Triggers and
/// views are left out: iocurve makes none, and those found are judged on
/// their own (see [`super::audit`]), so that one planted in a database
/// does not hide which version its tables are.
fn layout(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name FROM sqlite_master
         WHERE name NOT LIKE 'sqlite_%' AND type IN ('table', 'index')
         ORDER BY type, name",
    )?;
    let items: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut columns = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    items
        .into_iter()
        .map(|(kind, name, table)| {
            Ok(match kind.as_str() {
                "table" => {
                    let cols: Vec<String> = columns
                        .query_map([&name], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?;
                    format!("table {name}({})", cols.join(", "))
                }
                _ => format!("{kind} {name} on {table}"),
            })
        })
        .collect()
}

/// The layout the migrations up to `version` make, built in memory.
fn layout_of(version: u32) -> Result<Vec<String>> {
    let mut conn = Connection::open_in_memory()?;
    migrate_to(&mut conn, version)?;
    Ok(layout(&conn)?)
}

/// What the database behind `conn` holds; reads only.
pub fn recognise(conn: &Connection) -> Result<Found> {
    let stamped = stamp(conn)?;
    if stamped < 0 || stamped > i64::from(latest()) {
        return Ok(Found::Odd(OddStamp {
            stamp: stamped,
            latest: latest(),
            tables_of: tables_of(conn)?,
        }));
    }
    if stamped > 0 {
        return Ok(Found::Stamped(stamped as u32));
    }
    let found = layout(conn)?;
    if found.is_empty() {
        return Ok(Found::Empty);
    }
    for v in (1..=latest()).rev() {
        if layout_of(v)? == found {
            return Ok(Found::Unstamped(v));
        }
    }
    let tables = found
        .iter()
        .filter_map(|l| l.strip_prefix("table "))
        .map(|t| t.split('(').next().unwrap_or(t).to_string())
        .collect();
    Ok(Found::Foreign(tables))
}

/// The version whose tables and indexes the database has, leaving out
/// objects iocurve never makes (see [`known`]): the stamp a
/// database with an odd one should have. `None` when no version matches.
fn tables_of(conn: &Connection) -> Result<Option<u32>> {
    let known = known()?;
    let ours: Vec<String> = layout(conn)?
        .into_iter()
        .filter(|l| known.iter().any(|(_, name)| layout_names(l, name)))
        .collect();
    if ours.is_empty() {
        return Ok(None);
    }
    for v in (1..=latest()).rev() {
        if layout_of(v)? == ours {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// The objects the migrations make (every version's: none is ever
/// dropped), by kind (`table`, `index`) and name; built once, in memory.
pub fn known() -> Result<&'static [(String, String)]> {
    static KNOWN: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    if let Some(k) = KNOWN.get() {
        return Ok(k);
    }
    let mut conn = Connection::open_in_memory()?;
    migrate_to(&mut conn, latest())?;
    let mut stmt = conn.prepare("SELECT type, name FROM sqlite_master")?;
    let made = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(KNOWN.get_or_init(|| made))
}

/// Whether a line of [`layout`] is of the object called `name`.
fn layout_names(line: &str, name: &str) -> bool {
    let rest = line.split_once(' ').map_or("", |(_, r)| r);
    rest.strip_prefix(name)
        .is_some_and(|after| after.starts_with('(') || after.starts_with(' '))
}

/// Whether a database has a `runs` table with the columns a salvage
/// reads (`id`, `result_json`).
pub fn has_runs(conn: &Connection) -> bool {
    let cols: rusqlite::Result<Vec<String>> = conn
        .prepare("SELECT name FROM pragma_table_info('runs')")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect());
    cols.is_ok_and(|c| c.iter().any(|n| n == "id") && c.iter().any(|n| n == "result_json"))
}

/// What `db check` says of a database with tables of another make.
pub fn foreign_problem(tables: &[String]) -> String {
    format!(
        "no schema version, and tables iocurve does not make: {}",
        tables.join(", ")
    )
}

/// The refusal to use a database with tables of another make.
pub fn foreign(path: &std::path::Path, tables: &[String]) -> anyhow::Error {
    crate::error::IoFailure::new(
        format!(
            "the results database {} has {}: pass --db with another file, or run `{}` to move it aside and start a new one",
            path.display(),
            foreign_problem(tables),
            super::fail::repair_command(path)
        ),
        None,
    )
    .into()
}

/// Writes back the stamp of a database recognised from its tables, under
/// the write lock (another process may have done it first). Refuses tables
/// of another make.
fn restamp(conn: &mut Connection, path: &std::path::Path) -> Result<()> {
    retry_busy(|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        match recognise(&tx)? {
            Found::Unstamped(v) => tx.pragma_update(None, "user_version", v)?,
            Found::Foreign(tables) => return Err(foreign(path, &tables)),
            Found::Odd(stamp) => return Err(odd(path, &stamp)),
            Found::Empty | Found::Stamped(_) => {}
        }
        tx.commit()?;
        Ok(())
    })
}

/// The version a fully migrated database has.
pub fn latest() -> u32 {
    MIGRATIONS.len() as u32
}

/// The database's `user_version` as stored: a signed 32-bit number, which
/// a tool may have set to anything.
pub fn stamp(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// The database's version; a negative stamp is refused naming the repair
/// (one past the latest is left to [`migrate_to`], which says which).
pub fn version(conn: &Connection) -> Result<u32> {
    let stamped = stamp(conn)?;
    u32::try_from(stamped).map_err(|_| {
        let path = std::path::PathBuf::from(conn.path().unwrap_or_default());
        odd(
            &path,
            &OddStamp {
                stamp: stamped,
                latest: latest(),
                tables_of: tables_of(conn).ok().flatten(),
            },
        )
    })
}

/// The refusal to use a database with an odd stamp: one line, naming
/// `db repair` when it can set the stamp back (the tables are those of one
/// version); a database of a newer iocurve is left to that iocurve.
pub fn odd(path: &std::path::Path, odd: &OddStamp) -> anyhow::Error {
    let p = path.display();
    let repair = super::fail::repair_command(path);
    let message = match odd.tables_of {
        Some(v) => format!(
            "the results database {p} has schema version {}, which no iocurve writes, and the tables of version {v}: run `{repair}` to set it back",
            odd.stamp
        ),
        None if odd.stamp > 0 => format!(
            "the results database {p} has schema version {}, newer than this iocurve knows ({}): upgrade iocurve, or pass another --db",
            odd.stamp, odd.latest
        ),
        None => format!(
            "the results database {p} has schema version {}, which no iocurve writes, and tables of no version: pass another --db, or run `{repair}` to see what it holds",
            odd.stamp
        ),
    };
    crate::error::IoFailure::new(message, None).into()
}

/// Applies migrations until the database has version `target`.
///
/// Each step runs in a `BEGIN IMMEDIATE` transaction, which takes the write
/// lock before reading anything (waiting up to the busy timeout), and reads
/// the version again under that lock: of processes racing on a fresh file,
/// one migrates and the others find it done, none fails.
pub fn migrate_to(conn: &mut Connection, target: u32) -> Result<()> {
    if version(conn)? == 0 && !layout(conn)?.is_empty() {
        let path = std::path::PathBuf::from(conn.path().unwrap_or_default());
        restamp(conn, &path)?;
    }
    let current = version(conn)?;
    if current > latest() {
        return Err(crate::error::usage(format!(
            "schema version {current}, newer than this iocurve knows ({}): upgrade iocurve or pass another --db",
            latest()
        )));
    }
    for (i, m) in MIGRATIONS
        .iter()
        .enumerate()
        .take(target as usize)
        .skip(current as usize)
    {
        retry_busy(|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // Another process may have migrated since we looked.
            if version(&tx)? > i as u32 {
                return Ok(());
            }
            tx.execute_batch(m.sql)
                .with_context(|| format!("schema migration {}", i + 1))?;
            if let Some(fill) = m.backfill {
                fill(&tx).with_context(|| format!("schema migration {}", i + 1))?;
            }
            tx.pragma_update(None, "user_version", i as u32 + 1)?;
            tx.commit()?;
            Ok(())
        })?;
    }
    Ok(())
}
