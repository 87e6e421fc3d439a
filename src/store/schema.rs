//! The database schema as a list of migrations, applied in order.
//!
//! `PRAGMA user_version` holds the number of migrations applied; opening a
//! database applies the rest, each in its own transaction, so a database of
//! any earlier version (or an empty file) reaches the current one, also when
//! several processes open a fresh file at once (see [`migrate_to`]). A new
//! migration is appended here, never edited in place once released.

use super::fail::retry_busy;
use super::figures;
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
];

/// The version a fully migrated database has.
pub fn latest() -> u32 {
    MIGRATIONS.len() as u32
}

/// The database's version.
pub fn version(conn: &Connection) -> Result<u32> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Applies migrations until the database has version `target`.
///
/// Each step runs in a `BEGIN IMMEDIATE` transaction, which takes the write
/// lock before reading anything (waiting up to the busy timeout), and reads
/// the version again under that lock: of processes racing on a fresh file,
/// one migrates and the others find it done, none fails.
pub fn migrate_to(conn: &mut Connection, target: u32) -> Result<()> {
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
