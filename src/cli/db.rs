//! Arguments of `iocurve db`: the results database's own health. The file
//! is the one `--db` names (or the default), like every other command's.

use super::DbArg;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Checks the results database: SQLite's quick_check, every stored run
    /// parsed as iocurve reads it, objects iocurve did not make (triggers,
    /// views, tables, indexes) and the schema stamp; prints "ok", or the
    /// problems, one line each, with exit code 3.
    Check(DbArg),
    /// Moves a damaged results database aside (to NAME.damaged-TIMESTAMP,
    /// in UTC, with its -wal/-shm files), saves the runs that can still be
    /// read into a new one, and says how many; on a sound one, removes the
    /// objects iocurve did not make (triggers first), sets aside the runs
    /// that do not parse (to NAME.unreadable-TIMESTAMP.jsonl) and fixes the
    /// schema stamp, after copying the file to NAME.before-repair-TIMESTAMP.
    Repair(DbArg),
}

impl DbCommand {
    /// The database the subcommand looks at.
    pub fn db_arg(&self) -> &DbArg {
        match self {
            DbCommand::Check(a) | DbCommand::Repair(a) => a,
        }
    }
}
