//! What goes wrong with the results database, said in the user's terms:
//! which file, what happened, what to do. Every SQLite or OS error leaving
//! the store passes through [`explain`], which names the operation and the
//! path once and gives the OS's reason once.
//!
//! Also the retry of an operation that met another process's lock
//! ([`retry_busy`]).

use crate::error::IoFailure;
use rusqlite::{Connection, ErrorCode};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long an operation is tried again after SQLite said busy. Each try
/// already waits up to the busy timeout for the lock; the retry covers the
/// cases where SQLite gives up at once (a read snapshot that became stale).
const RETRY_FOR: Duration = Duration::from_secs(25);

/// Whether a command reads the database or saves in it: the advice differs
/// (`--no-save` means nothing to `list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The SQLite error in an error's chain, if any.
pub fn sqlite_error(err: &anyhow::Error) -> Option<&rusqlite::Error> {
    err.chain()
        .find_map(|e| e.downcast_ref::<rusqlite::Error>())
}

fn code_of(err: &rusqlite::Error) -> Option<ErrorCode> {
    err.sqlite_error_code()
}

/// Busy or locked: another connection holds what we need.
pub fn is_busy(err: &anyhow::Error) -> bool {
    sqlite_error(err)
        .and_then(code_of)
        .is_some_and(|c| matches!(c, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// The file is not a sound SQLite database.
pub fn is_corrupt(err: &rusqlite::Error) -> bool {
    code_of(err).is_some_and(|c| matches!(c, ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase))
}

/// Runs `f` until it succeeds, fails otherwise than busy, or
/// `RETRY_FOR` has passed; waits a few random milliseconds between tries
/// so racing processes do not meet again in step.
pub fn retry_busy<T>(mut f: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let start = Instant::now();
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < RETRY_FOR => {
                std::thread::sleep(Duration::from_millis(fastrand::u64(5..60)));
            }
            other => return other,
        }
    }
}

/// The OS error number behind SQLite's last I/O or open error on `conn`.
fn system_errno(conn: &Connection) -> i32 {
    crate::sys::sqlite_system_errno(conn)
}

/// SQLite's words for an error, with the OS's reason when SQLite had one
/// (once: SQLite's own text is not repeated after its code).
pub fn detail(err: &rusqlite::Error, conn: Option<&Connection>) -> String {
    let rusqlite::Error::SqliteFailure(e, msg) = err else {
        return err.to_string();
    };
    let text = msg
        .clone()
        .unwrap_or_else(|| rusqlite::ffi::code_to_str(e.extended_code).to_string());
    let errno = match (e.code, conn) {
        (ErrorCode::SystemIoFailure | ErrorCode::CannotOpen, Some(c)) => system_errno(c),
        _ => 0,
    };
    if errno > 0 {
        format!("{text}: {}", std::io::Error::from_raw_os_error(errno))
    } else {
        text
    }
}

/// Whether an error means the file system has no room left.
fn is_full(err: &rusqlite::Error, conn: Option<&Connection>) -> bool {
    match code_of(err) {
        Some(ErrorCode::DiskFull) => true,
        Some(ErrorCode::SystemIoFailure | ErrorCode::CannotOpen) => conn
            .map(system_errno)
            .is_some_and(|n| n == libc::ENOSPC || n == libc::EDQUOT),
        _ => false,
    }
}

/// The command that repairs `path`: `--db` is spelled out unless it is the
/// default database.
pub fn repair_command(path: &Path) -> String {
    if super::default_path().is_some_and(|d| d == path) {
        "iocurve db repair".to_string()
    } else {
        format!("iocurve db repair --db {}", path.display())
    }
}

/// The message for a damaged database.
pub fn damaged(path: &Path, detail: &str, access: Access) -> anyhow::Error {
    let other = match access {
        Access::Read => "or pass --db FILE",
        Access::Write => "or pass --db FILE / --no-save",
    };
    IoFailure::new(
        format!(
            "the results database {} is damaged ({detail}): run `{}` to move it aside and start a new one ({other})",
            path.display(),
            repair_command(path)
        ),
        None,
    )
    .into()
}

/// Turns an error met while doing `what` (e.g. "save the run in") to the
/// database at `path` into one line naming both, the cause and the fix.
/// Errors that did not come from SQLite keep their own text after the
/// operation and path.
pub fn explain(
    err: anyhow::Error,
    conn: Option<&Connection>,
    path: &Path,
    what: &str,
    access: Access,
) -> anyhow::Error {
    // Already explained (a nested operation of the store).
    if err.chain().any(|e| e.is::<IoFailure>()) {
        return err;
    }
    let p = path.display();
    let Some(sql) = sqlite_error(&err) else {
        return err.context(format!("cannot {what} the results database {p}"));
    };
    let detail = detail(sql, conn);
    let message = if is_corrupt(sql) {
        return damaged(path, &detail, access);
    } else if is_full(sql, conn) {
        let other = match access {
            Access::Read => "",
            Access::Write => " (or --no-save)",
        };
        format!(
            "disk full: cannot {what} the results database {p} ({detail}): free some space on its file system, or pass --db FILE on another one{other}"
        )
    } else if is_busy(&err) {
        format!(
            "cannot {what} the results database {p}: another process kept it locked for too long ({detail}); try again when that process is done"
        )
    } else if code_of(sql) == Some(ErrorCode::ReadOnly) {
        format!(
            "cannot {what} the results database {p}: the file or its directory is read-only ({detail}): pass --db FILE on a writable file system"
        )
    } else {
        // What the store was doing inside the operation (a schema migration).
        let steps: String = err
            .chain()
            .take_while(|e| !e.is::<rusqlite::Error>())
            .map(|e| format!("{e}: "))
            .collect();
        format!("cannot {what} the results database {p}: {steps}{detail}")
    };
    IoFailure::new(message, None).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32, msg: Option<&str>) -> anyhow::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), msg.map(String::from))
            .into()
    }

    fn said(err: anyhow::Error, access: Access) -> String {
        format!(
            "{:#}",
            explain(
                err,
                None,
                Path::new("some/results.db"),
                "save the run in",
                access
            )
        )
    }

    #[test]
    fn corruption_names_the_file_and_the_repair() {
        let s = said(
            failure(
                rusqlite::ffi::SQLITE_CORRUPT,
                Some("database disk image is malformed"),
            ),
            Access::Write,
        );
        assert_eq!(
            s,
            "the results database some/results.db is damaged (database disk image is malformed): \
             run `iocurve db repair --db some/results.db` to move it aside and start a new one \
             (or pass --db FILE / --no-save)"
        );
        let s = said(failure(rusqlite::ffi::SQLITE_NOTADB, None), Access::Read);
        assert!(s.contains("is damaged (file is not a database)"), "{s}");
        assert!(s.ends_with("(or pass --db FILE)"), "{s}");
    }

    #[test]
    fn a_full_disk_says_so_once() {
        let s = said(
            failure(rusqlite::ffi::SQLITE_FULL, Some("database or disk is full")),
            Access::Write,
        );
        assert!(s.starts_with("disk full: cannot save the run in the results database some/results.db (database or disk is full): free some space"), "{s}");
        assert_eq!(s.matches("disk is full").count(), 1, "{s}");
    }

    #[test]
    fn other_errors_keep_their_cause_once() {
        let s = said(
            failure(rusqlite::ffi::SQLITE_IOERR, Some("disk I/O error")),
            Access::Write,
        );
        assert_eq!(
            s,
            "cannot save the run in the results database some/results.db: disk I/O error"
        );
        let s = said(anyhow::anyhow!("not JSON"), Access::Write);
        assert_eq!(
            s,
            "cannot save the run in the results database some/results.db: not JSON"
        );
        assert_eq!(
            crate::error::exit_code(&explain(
                failure(rusqlite::ffi::SQLITE_CORRUPT, None),
                None,
                Path::new("x.db"),
                "read",
                Access::Read
            )),
            crate::error::EXIT_IO
        );
    }

    #[test]
    fn busy_is_retried_and_other_errors_are_not() {
        let mut tries = 0;
        let r: anyhow::Result<u32> = retry_busy(|| {
            tries += 1;
            if tries < 3 {
                Err(failure(rusqlite::ffi::SQLITE_BUSY, None))
            } else {
                Ok(7)
            }
        });
        assert_eq!((r.unwrap(), tries), (7, 3));
        let mut tries = 0;
        let r: anyhow::Result<u32> = retry_busy(|| {
            tries += 1;
            Err(failure(rusqlite::ffi::SQLITE_CORRUPT, None))
        });
        assert!(r.is_err());
        assert_eq!(tries, 1);
    }
}
