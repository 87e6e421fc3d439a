//! A database's file and the files set beside it: opening an existing one
//! without writing to it, and the names of the copies `db repair` puts
//! beside it. Apart from [`super::repair`] and [`super::fix`], which both
//! use them.

use super::fail::{self, Access};
use super::{BUSY_TIMEOUT, audit};
use anyhow::Result;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// Opens an existing database without creating it, and never writes to it
/// (no migration, no journal-mode change); triggers and views switched
/// off (see [`audit::disarm`]).
pub(super) fn open_existing(path: &Path) -> Result<Connection> {
    super::check_path(path)?;
    let conn = match super::read_only_here(path) {
        Some(why) => super::connect_read_only(path, &why)?,
        None => Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| fail::explain(e.into(), None, path, "open", Access::Read))?,
    };
    audit::disarm(&conn)
        .and_then(|()| conn.busy_timeout(BUSY_TIMEOUT))
        .map_err(|e| fail::explain(e.into(), Some(&conn), path, "open", Access::Read))?;
    Ok(conn)
}

/// The companion files SQLite keeps beside a database.
pub(super) const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// `NAME<what>-<UTC time>` beside `path` (`.damaged`, `.before-repair`),
/// not taken yet, nor any of its companions.
pub(super) fn aside_name(path: &Path, what: &str) -> PathBuf {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let stamp: String = now.chars().filter(|c| *c != '-' && *c != ':').collect();
    let base = with_suffix(path, &format!("{what}-{stamp}"));
    let free = |p: &PathBuf| !p.exists() && COMPANIONS.iter().all(|c| !with_suffix(p, c).exists());
    if free(&base) {
        return base;
    }
    (2..)
        .map(|n| with_suffix(&base, &format!("-{n}")))
        .find(free)
        .expect("some suffix is free")
}
