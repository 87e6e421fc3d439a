//! What a database holds beyond what quick_check judges: schema objects
//! iocurve never made, stored documents that no longer parse, and a
//! `user_version` iocurve never writes (`db check` lists them, `db repair`
//! fixes them, and every open looks for the objects that could act).
//!
//! The file is the user's, but anything may have written into it: a
//! trigger planted there (`AFTER INSERT ON runs BEGIN DELETE FROM runs;
//! END`) would run inside every save. So every connection iocurve opens
//! has triggers and views switched off ([`disarm`]): iocurve makes
//! neither, and nothing in the file may act through iocurve's hands. A
//! database that holds one is read, never written, until `db repair` has
//! removed it.

use super::fail::{Access, repair_command};
use crate::error::IoFailure;
use crate::result::RunResult;
use crate::result::stored::{ForeignObject, ObjectKind, UnreadableRun};
use anyhow::Result;
use rusqlite::Connection;
use rusqlite::config::DbConfig;
use rusqlite::types::ValueRef;
use std::path::Path;

/// Switches triggers and views off on `conn`, so that no object in the
/// file runs while iocurve reads or writes it (see the module doc).
pub fn disarm(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    Ok(())
}

fn kind_of(text: &str) -> Option<ObjectKind> {
    match text {
        "trigger" => Some(ObjectKind::Trigger),
        "view" => Some(ObjectKind::View),
        "index" => Some(ObjectKind::Index),
        "table" => Some(ObjectKind::Table),
        _ => None,
    }
}

/// Every schema object of the database but SQLite's own tables and
/// indexes (`sqlite_*`: the sequence, the statistics, the automatic
/// indexes). SQLite makes no trigger or view, so every one is listed,
/// whatever its name (one called `sqlite_*` can only have been written
/// into the schema by hand).
fn objects(conn: &Connection) -> rusqlite::Result<Vec<ForeignObject>> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name FROM sqlite_master
         WHERE type IN ('trigger', 'view') OR name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (kind, name, table) = row?;
        if let Some(kind) = kind_of(&kind) {
            found.push(ForeignObject { kind, name, table });
        }
    }
    Ok(found)
}

/// The objects of the database iocurve did not make, triggers first, then
/// views, indexes and tables (the order `db repair` drops them in).
pub fn foreign(conn: &Connection) -> Result<Vec<ForeignObject>> {
    let known = super::schema::known()?;
    let mut found: Vec<ForeignObject> = objects(conn)?
        .into_iter()
        .filter(|o| {
            !known
                .iter()
                .any(|(k, n)| kind_of(k) == Some(o.kind) && *n == o.name)
        })
        .collect();
    found.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
    Ok(found)
}

/// Whether any of `objects` could act by itself.
pub fn acting(objects: &[ForeignObject]) -> bool {
    objects
        .iter()
        .any(|o| matches!(o.kind, ObjectKind::Trigger | ObjectKind::View))
}

/// The refusal to write into a database holding a trigger or a view
/// iocurve did not make.
pub fn refuse_writing(path: &Path, objects: &[ForeignObject], access: Access) -> anyhow::Error {
    let other = match access {
        Access::Read => "or pass --db FILE",
        Access::Write => "or pass --db FILE / --no-save",
    };
    let named: Vec<String> = objects
        .iter()
        .filter(|o| matches!(o.kind, ObjectKind::Trigger | ObjectKind::View))
        .map(|o| match o.kind {
            ObjectKind::Trigger => format!("trigger {} on {}", o.name, o.table),
            _ => format!("view {}", o.name),
        })
        .collect();
    IoFailure::new(
        format!(
            "the results database {} holds {}, which iocurve did not make and which could change its runs: nothing is written into it; run `{}` to remove it ({other})",
            path.display(),
            named.join(", "),
            repair_command(path)
        ),
        None,
    )
    .into()
}

/// A stored document read back as a result, with the deserializer every
/// reader uses ([`RunResult::from_json`]); why not, when it cannot be.
pub fn parse(value: ValueRef) -> std::result::Result<RunResult, String> {
    let text = match value {
        ValueRef::Text(t) => std::str::from_utf8(t).map_err(|e| format!("not UTF-8: {e}"))?,
        ValueRef::Null => return Err("no document (NULL)".into()),
        ValueRef::Blob(_) => return Err("a blob, not JSON text".into()),
        ValueRef::Integer(_) | ValueRef::Real(_) => return Err("a number, not JSON".into()),
    };
    RunResult::from_json(text).map_err(|e| e.to_string())
}

/// The error of a reading command that met run `id`'s unreadable
/// document: an I/O-class failure of the file, naming the repair.
pub fn unreadable_error(path: &Path, id: i64, why: &str) -> anyhow::Error {
    IoFailure::new(
        format!(
            "run {id} of the results database {} cannot be read ({why}): run `{}` to set it aside",
            path.display(),
            repair_command(path)
        ),
        None,
    )
    .into()
}

/// Every run whose stored document does not parse, by id.
pub fn unreadable(conn: &Connection) -> rusqlite::Result<Vec<UnreadableRun>> {
    let mut stmt = conn.prepare("SELECT id, result_json FROM runs ORDER BY id")?;
    let mut rows = stmt.query([])?;
    let mut found = Vec::new();
    while let Some(row) = rows.next()? {
        if let Err(why) = parse(row.get_ref(1)?) {
            found.push(UnreadableRun {
                id: row.get(0)?,
                why,
            });
        }
    }
    Ok(found)
}

/// The runs whose documents are not JSON at all, which SQLite's JSON
/// functions (the listings') cannot look into.
pub fn not_json(conn: &Connection, device: Option<i64>) -> rusqlite::Result<Option<i64>> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT id FROM runs WHERE NOT json_valid(result_json)
           AND (?1 IS NULL OR device_id = ?1) ORDER BY id LIMIT 1",
        [device],
        |r| r.get(0),
    )
    .optional()
}
