//! `db repair` of a sound database with findings (see [`super::audit`]):
//! fixed in place, after a copy of the file as it was is taken beside it,
//! so nothing is removed that cannot be had back.
//!
//! The order keeps what the repair removes from acting during it: the
//! connection has triggers and views switched off, and in the one write
//! transaction the triggers are dropped first, then views, indexes and
//! tables iocurve did not make; then the stamp is set back, and the runs
//! whose documents do not parse are written out to a file beside the
//! database and taken out of it (with their figures and ranks, and a
//! device left without runs).

use super::beside::{aside_name, open_existing, with_suffix};
use super::fail::{self, Access, retry_busy};
use super::{audit, schema};
use crate::error::IoFailure;
use crate::result::stored::{Findings, Fixed, ObjectKind};
use anyhow::Result;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Fixes the database at `path` in place; see the module doc.
pub fn fix(path: &Path) -> Result<Fixed> {
    let mut conn = open_existing(path)?;
    let copy = copy_aside(&conn, path)?;
    let explain = |e: anyhow::Error, conn: &Connection| {
        fail::explain(e, Some(conn), path, "repair", Access::Write)
    };
    let done = retry_busy(|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let fixed = fix_in(&tx, path, &copy)?;
        tx.commit()?;
        Ok(fixed)
    });
    done.map_err(|e| explain(e, &conn))
}

/// A copy of the whole database as it is, `NAME.before-repair-<UTC
/// time>`, by `VACUUM INTO`, which only reads the database.
fn copy_aside(conn: &Connection, path: &Path) -> Result<PathBuf> {
    let copy = aside_name(path, ".before-repair");
    let target = copy.to_str().ok_or_else(|| {
        IoFailure::new(
            format!(
                "cannot copy the results database {} before repairing it: its name is not UTF-8; rename it and try again",
                path.display()
            ),
            None,
        )
    })?;
    conn.execute("VACUUM INTO ?1", [target]).map_err(|e| {
        fail::explain(
            e.into(),
            Some(conn),
            path,
            &format!("copy (to {}) before repairing", copy.display()),
            Access::Write,
        )
    })?;
    Ok(copy)
}

/// The repair itself, inside the write transaction `tx`: found again under
/// the lock, since another process may have changed the file since the
/// check.
fn fix_in(tx: &Transaction, path: &Path, copy: &Path) -> Result<Fixed> {
    let foreign = audit::foreign(tx)?;
    for object in &foreign {
        let kind = match object.kind {
            ObjectKind::Trigger => "TRIGGER",
            ObjectKind::View => "VIEW",
            ObjectKind::Index => "INDEX",
            ObjectKind::Table => "TABLE",
        };
        let name = object.name.replace('"', "\"\"");
        tx.execute_batch(&format!("DROP {kind} IF EXISTS \"{name}\""))?;
    }
    let found = schema::recognise(tx)?;
    let stamp = match &found {
        schema::Found::Odd(odd) => Some(odd.clone()),
        _ => None,
    };
    let restamped = stamp.as_ref().and_then(|o| o.tables_of);
    if let Some(v) = restamped {
        tx.pragma_update(None, "user_version", v)?;
    }
    let version = found.version();
    let unreadable = if version == 0 {
        Vec::new()
    } else {
        audit::unreadable(tx)?
    };
    let set_aside = match unreadable.is_empty() {
        true => None,
        false => {
            let ids: Vec<i64> = unreadable.iter().map(|u| u.id).collect();
            let file = write_out(tx, path, &ids)?;
            super::take_out(tx, &ids, version)?;
            Some(file)
        }
    };
    let runs = match version {
        0 => 0,
        _ => tx.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?,
    };
    Ok(Fixed {
        findings: Findings {
            foreign,
            unreadable,
            stamp,
        },
        copy: copy.to_path_buf(),
        set_aside,
        restamped,
        runs,
    })
}

/// Writes runs `ids` as they are stored to `NAME.unreadable-<UTC
/// time>.jsonl` beside the database: one JSON object per line, the
/// document kept as a string (as text, whatever it holds), with the row's
/// id, command and start.
fn write_out(tx: &Transaction, path: &Path, ids: &[i64]) -> Result<PathBuf> {
    let file = with_suffix(&aside_name(path, ".unreadable"), ".jsonl");
    let mut lines = String::new();
    let mut stmt = tx.prepare("SELECT command, started_at, result_json FROM runs WHERE id = ?1")?;
    for &id in ids {
        let (command, started, document): (String, String, Option<String>) =
            stmt.query_row([id], |r| Ok((r.get(0)?, r.get(1)?, as_text(r.get_ref(2)?))))?;
        let line = serde_json::json!({
            "id": id,
            "command": command,
            "started_at": started,
            "document": document,
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    use std::os::unix::fs::OpenOptionsExt;
    // Readable by whoever can read the database's directory, writable by
    // no one else, whatever the umask.
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&file)
        .and_then(|mut f| f.write_all(lines.as_bytes()).and_then(|()| f.sync_all()));
    written.map_err(|e| {
        IoFailure::new(
            format!(
                "cannot write the unreadable runs to {} (nothing was changed)",
                file.display()
            ),
            Some(e),
        )
    })?;
    Ok(file)
}

/// A stored value as text, whatever its type (bytes that are not UTF-8
/// replaced: the copy beside keeps them as they were).
fn as_text(value: rusqlite::types::ValueRef) -> Option<String> {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
    }
}
