//! The one SQLite call rusqlite does not wrap: the OS error behind a failed
//! open or I/O, so a database error can name its cause (EROFS, ENOSPC…).

/// The OS error number behind SQLite's last I/O or open error on `conn`.
pub fn sqlite_system_errno(conn: &rusqlite::Connection) -> i32 {
    // SAFETY: the handle is valid for as long as `conn` is borrowed, and
    // sqlite3_system_errno only reads a field of it.
    unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) }
}
