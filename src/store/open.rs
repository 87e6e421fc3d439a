//! Opening the results database file: the checks on its path (a regular
//! file iocurve may use, never a device or a link planted for root), and the
//! connection itself, read-write, or read-only where the file or its folder
//! cannot be written, so that reading stored runs never needs write access.

use super::fail::{self, Access};
use crate::error::IoFailure;
use anyhow::Result;
use rusqlite::Connection;
use std::path::Path;

/// Refuses a database path that is not a regular file (or a symlink to
/// one) and where none could be created: SQLite would open a device or a
/// FIFO as given and put its journal beside it (`/dev/null-journal`, with
/// the device's mode). A path that does not exist yet is left to
/// [`connect`], which creates it.
pub fn check_path(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_file() {
        return Ok(());
    }
    let link = std::fs::read_link(path)
        .map(|to| format!(" (a symlink to {})", to.display()))
        .unwrap_or_default();
    Err(crate::error::usage(format!(
        "the results database {}{link} is {}, not a file: pass --db with the path of a regular file, one that exists or can be created (such as ./results.db)",
        path.display(),
        crate::safety::trust::kind_name(rustix::fs::FileType::from_raw_mode(
            std::os::unix::fs::MetadataExt::mode(&meta)
        ))
    )))
}

/// Whether `path` (an existing file) can only be read here: the file, or
/// the directory where SQLite puts its journal and WAL files, refuses
/// writing (a read-only file system, or permissions).
pub(super) fn read_only_here(path: &Path) -> Option<std::io::Error> {
    use rustix::fs::{Access as Can, access};
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    [path, dir]
        .into_iter()
        .find_map(|p| access(p, Can::WRITE_OK).err())
        .map(std::io::Error::from)
}

/// Opens an existing database that cannot be written here, read-only:
/// SQLite then reads a WAL-mode file without creating its `-shm`. When no
/// `-wal` file is left, the file is all there is, and `immutable` reads it
/// even where SQLite could not take a lock.
pub(super) fn connect_read_only(path: &Path, why: &std::io::Error) -> Result<Connection> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let plain = Connection::open_with_flags(path, flags);
    let usable = |c: &Connection| c.query_row("PRAGMA schema_version", [], |_| Ok(())).is_ok();
    match plain {
        Ok(conn) if usable(&conn) => return Ok(conn),
        _ => {}
    }
    let wal = super::beside::with_suffix(path, "-wal");
    let wal_empty = std::fs::metadata(&wal).map_or(true, |m| m.len() == 0);
    let failed = |e: Option<rusqlite::Error>| -> anyhow::Error {
        IoFailure::new(
            format!(
                "cannot read the results database {}: it cannot be written here ({why}), and SQLite could not read it read-only{}: copy it to a writable place and pass --db with the copy",
                path.display(),
                e.map(|e| format!(" ({})", fail::detail(&e, None)))
                    .unwrap_or_default()
            ),
            None,
        )
        .into()
    };
    if !wal_empty {
        return Err(failed(None));
    }
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            b => uri.push(char::from(*b)),
        }
    }
    uri.push_str("?immutable=1");
    let conn = Connection::open_with_flags(&uri, flags).map_err(|e| failed(Some(e)))?;
    Ok(conn)
}

/// Opens the file (creating it and its directory if needed). SQLite says
/// only "unable to open database file"; the OS is asked why.
pub(super) fn connect(path: &Path, access: Access) -> Result<Connection> {
    check_path(path)?;
    if path.exists() {
        if let Some(why) = read_only_here(path) {
            return match access {
                Access::Read => connect_read_only(path, &why),
                Access::Write => Err(IoFailure::new(
                    format!(
                        "cannot save in the results database {}: it cannot be written here ({why}): pass --db FILE on a writable file system (or --no-save)",
                        path.display()
                    ),
                    None,
                )
                .into()),
            };
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            IoFailure::new(
                format!(
                    "cannot create the directory {} for the results database",
                    dir.display()
                ),
                Some(e),
            )
        })?;
    }
    Connection::open(path).map_err(|e| {
        let os = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .err();
        match os {
            Some(os) => IoFailure::new(
                format!("cannot open the results database {}", path.display()),
                Some(os),
            )
            .into(),
            None => fail::explain(e.into(), None, path, "open", access),
        }
    })
}

/// Makes sure a connection to a damaged file writes nothing more into it,
/// not even the checkpoint SQLite does when the last connection closes.
pub(super) fn leave_untouched(conn: &Connection) {
    let _ = conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    );
}
