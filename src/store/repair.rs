//! The health of a results database and its repair (`iocurve db check`,
//! `iocurve db repair`).
//!
//! Checking is SQLite's `PRAGMA quick_check` (pages, b-trees and the free
//! list, without comparing indexes to their tables); an error that says
//! "corrupt" or "not a database" while checking is damage too. A database
//! that passes is then looked over (see [`super::audit`]): schema objects
//! iocurve did not make, stored documents that do not parse, a stamp iocurve
//! never writes; those are fixed in place (see [`super::fix`]).
//!
//! Repairing never edits the damaged file: it is moved aside to
//! `NAME.damaged-<UTC time>` with its `-wal`, `-shm` and `-journal` files,
//! read back read-only run by run (scanning the runs table from both ends,
//! then looking up each id in between, so one bad page costs only the runs
//! on it), and every run whose row and document can still be read is saved
//! under its old id into a new database at the old path. The figures and
//! devices are rebuilt from the documents, as a save would. SQLite's
//! recovery extension (behind the shell's `.recover`) is not part of the
//! library rusqlite builds, so nothing is read below the level of table
//! rows: a run whose page is destroyed is lost, and said to be.

use super::beside::{COMPANIONS, aside_name, open_existing, with_suffix};
use super::fail::{self, Access, retry_busy};
use super::{Store, audit, insert_run, leave_untouched, schema};
use crate::result::RunResult;
use crate::result::stored::{Findings, Fixed, Replaced, Sound};
use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::collections::BTreeSet;
use std::path::Path;

/// What quick_check found.
#[derive(Debug, Clone, PartialEq)]
pub enum Health {
    Sound,
    /// The problem, in SQLite's words (the first of them, and how many
    /// more).
    Damaged(String),
}

/// SQLite's quick_check of the database behind `conn`.
pub fn health(conn: &Connection) -> Result<Health> {
    let rows = (|| {
        let mut stmt = conn.prepare("PRAGMA quick_check(20)")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<Vec<String>>>()
    })();
    match rows {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => Ok(Health::Sound),
        Ok(rows) => Ok(Health::Damaged(summary(&rows))),
        Err(e) if fail::is_corrupt(&e) => Ok(Health::Damaged(format!(
            "quick_check: {}",
            fail::detail(&e, Some(conn))
        ))),
        Err(e) => Err(e.into()),
    }
}

/// quick_check's findings on one line: the first, and how many more.
fn summary(rows: &[String]) -> String {
    let first = rows.first().map_or("no answer", |r| r.as_str());
    let first = first
        .trim_start_matches("*** in database main ***")
        .trim()
        .replace('\n', "; ");
    match rows.len() {
        0 | 1 => format!("quick_check: {first}"),
        n if n >= 20 => format!("quick_check: {first}; and 19 or more other problems"),
        n => format!("quick_check: {first}; and {} other problem(s)", n - 1),
    }
}

/// What `db check` found.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    /// Damaged, or not iocurve's: `db repair` moves the whole file aside.
    Damaged(String),
    /// Sound, with what else was found (nothing, when all is well).
    Sound(Sound, Findings),
}

/// `db check`: quick_check of the existing database at `path`, then every
/// schema object, every stored document and the stamp. `Err` is a failure
/// to check at all.
pub fn check(path: &Path) -> Result<Checked> {
    let conn = open_existing(path)?;
    let health = retry_busy(|| health(&conn))
        .map_err(|e| fail::explain(e, Some(&conn), path, "check", Access::Read))?;
    if let Health::Damaged(detail) = health {
        leave_untouched(&conn);
        return Ok(Checked::Damaged(detail));
    }
    let read = |e: anyhow::Error| fail::explain(e, Some(&conn), path, "read", Access::Read);
    let found = retry_busy(|| schema::recognise(&conn)).map_err(read)?;
    let stamp = match &found {
        schema::Found::Foreign(tables) => {
            return Ok(Checked::Damaged(schema::foreign_problem(tables)));
        }
        schema::Found::Odd(odd) if odd.tables_of.is_none() && odd.stamp < 0 => {
            return Ok(Checked::Damaged(format!(
                "schema version {}, which no iocurve writes, and tables of no version",
                odd.stamp
            )));
        }
        schema::Found::Odd(odd) => Some(odd.clone()),
        _ => None,
    };
    let version = found.version();
    let foreign = audit::foreign(&conn).map_err(read)?;
    // A database of a newer iocurve may hold documents this one cannot
    // parse: they are not judged.
    let (runs, unreadable) = if version == 0 {
        (0, Vec::new())
    } else {
        let runs = conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .map_err(|e| read(e.into()))?;
        (runs, audit::unreadable(&conn).map_err(|e| read(e.into()))?)
    };
    Ok(Checked::Sound(
        Sound { runs, version },
        Findings {
            foreign,
            unreadable,
            stamp,
        },
    ))
}

/// What `db repair` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Repair {
    /// The database passed every check; nothing was changed.
    Healthy(Sound),
    /// Damaged: moved aside, what could be read saved into a new one.
    Replaced(Replaced),
    /// Sound, but with findings, fixed in place (see [`super::fix`]).
    Fixed(Fixed),
}

/// `db repair`: leaves a sound database alone, fixes one with findings in
/// place, moves a damaged one aside and salvages what can be read into a
/// new one at `path`. A database of a newer iocurve is left as it is.
pub fn repair(path: &Path) -> Result<Repair> {
    let problem = match check(path)? {
        Checked::Sound(sound, findings) if findings.is_empty() => {
            return Ok(Repair::Healthy(sound));
        }
        Checked::Sound(_, findings) => {
            if let Some(odd) = findings.stamp.as_ref().filter(|o| o.tables_of.is_none()) {
                return Err(schema::odd(path, odd));
            }
            return super::fix::fix(path).map(Repair::Fixed);
        }
        Checked::Damaged(problem) => problem,
    };
    let aside = aside_name(path, ".damaged");
    let p = path.display();
    std::fs::rename(path, &aside).map_err(|e| {
        crate::error::IoFailure::new(
            format!(
                "cannot move the damaged results database {p} aside to {}",
                aside.display()
            ),
            Some(e),
        )
    })?;
    let mut companions = Vec::new();
    for c in COMPANIONS {
        let from = with_suffix(path, c);
        if from.exists() {
            let to = with_suffix(&aside, c);
            std::fs::rename(&from, &to).map_err(|e| {
                crate::error::IoFailure::new(
                    format!(
                        "moved the damaged results database {p} aside to {}, but cannot move {} beside it",
                        aside.display(),
                        from.display()
                    ),
                    Some(e),
                )
            })?;
            companions.push(to);
        }
    }
    let (found, unsalvageable) = match salvage(&aside) {
        Ok(found) => (found, None),
        Err(why) => (
            Salvage {
                runs: Vec::new(),
                unreadable: Vec::new(),
                list_damaged: true,
            },
            Some(why),
        ),
    };
    let salvaged = restore(path, &found.runs).with_context(|| {
        format!(
            "moved the damaged results database aside to {}, but the new one could not be filled",
            aside.display()
        )
    })?;
    Ok(Repair::Replaced(Replaced {
        problem,
        aside,
        companions,
        salvaged,
        unreadable: found.unreadable,
        list_damaged: found.list_damaged,
        unsalvageable,
    }))
}

/// One run read back from a damaged file.
struct Salvaged {
    id: i64,
    json: String,
    source: String,
    result: RunResult,
}

/// The values of `column` in `table` read in `order` until the first
/// error, and whether the end was reached.
fn scan_ids(conn: &Connection, table: &str, column: &str, order: &str) -> (Vec<i64>, bool) {
    let mut ids = Vec::new();
    let sql = format!("SELECT {column} FROM {table} ORDER BY {column} {order}");
    let Ok(mut stmt) = conn.prepare(&sql) else {
        return (ids, false);
    };
    let Ok(mut rows) = stmt.query([]) else {
        return (ids, false);
    };
    loop {
        match rows.next() {
            Ok(Some(row)) => match row.get(0) {
                Ok(id) => ids.push(id),
                Err(_) => return (ids, false),
            },
            Ok(None) => return (ids, true),
            Err(_) => return (ids, false),
        }
    }
}

/// Looking up ids one by one is cheap, but not without end.
const MAX_PROBES: i64 = 1_000_000;

/// What could be read of a damaged file.
struct Salvage {
    runs: Vec<Salvaged>,
    /// Runs known to exist whose row or document could not be read.
    unreadable: Vec<i64>,
    /// The runs table could not be read through: runs may exist that
    /// nothing names.
    list_damaged: bool,
}

/// Every run of the damaged file at `aside` that can be read, or why
/// nothing can.
fn salvage(aside: &Path) -> std::result::Result<Salvage, String> {
    // Read-only: SQLite reads the moved -wal too, and writes nothing.
    let conn = Connection::open_with_flags(
        aside,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| fail::detail(&e, None))?;
    audit::disarm(&conn).map_err(|e| fail::detail(&e, None))?;
    let version = match schema::recognise(&conn).map_err(|e| format!("{e:#}"))? {
        // Tables of unknown make: the runs are read if they have the
        // columns of version 1's, and looked at no further.
        schema::Found::Foreign(_) => u32::from(schema::has_runs(&conn)),
        schema::Found::Odd(odd) if odd.tables_of.is_none() => u32::from(schema::has_runs(&conn)),
        found => found.version(),
    };
    if version == 0 {
        return Ok(Salvage {
            runs: Vec::new(),
            unreadable: Vec::new(),
            list_damaged: false,
        });
    }
    // The runs table from both ends; a bad page stops a scan, and ids
    // between what the scans reached (or that the figures name) are looked
    // up one by one.
    let (forward, complete) = scan_ids(&conn, "runs", "id", "ASC");
    let mut ids: BTreeSet<i64> = forward.into_iter().collect();
    ids.extend(scan_ids(&conn, "runs", "id", "DESC").0);
    if version >= 2 {
        ids.extend(scan_ids(&conn, "figures", "run_id", "ASC").0);
        ids.extend(scan_ids(&conn, "figures", "run_id", "DESC").0);
    }
    let last = conn
        .query_row("SELECT max(id) FROM runs", [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .ok()
        .flatten()
        .into_iter()
        .chain(ids.last().copied())
        .max()
        .unwrap_or(0);
    let source = if version >= 2 { "source" } else { "'iocurve'" };
    let query = format!("SELECT result_json, {source} FROM runs WHERE id = ?1");
    let mut runs = Vec::new();
    let mut unreadable = Vec::new();
    for id in 1..=last.min(MAX_PROBES) {
        let row = conn
            .query_row(&query, [id], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))
            .optional();
        match row {
            Ok(None) => {}
            Ok(Some((json, source))) => match RunResult::from_json(&json) {
                Ok(result) => runs.push(Salvaged {
                    id,
                    json,
                    source,
                    result,
                }),
                Err(_) => unreadable.push(id),
            },
            Err(_) => unreadable.push(id),
        }
    }
    Ok(Salvage {
        runs,
        unreadable,
        list_damaged: !complete,
    })
}

/// Saves the salvaged runs into a new database at `path`, under their old
/// ids (a run a concurrent save already took the id of gets a new one).
fn restore(path: &Path, runs: &[Salvaged]) -> Result<Vec<i64>> {
    let mut store = Store::open(path)?;
    store.write("save the salvaged runs in", |tx| {
        let mut ids = Vec::with_capacity(runs.len());
        for run in runs {
            let taken = tx
                .query_row("SELECT 1 FROM runs WHERE id = ?1", [run.id], |_| Ok(()))
                .optional()?
                .is_some();
            let id = (!taken).then_some(run.id);
            ids.push(insert_run(tx, &run.result, &run.json, &run.source, id)?);
        }
        Ok(ids)
    })
}
