//! Arguments of `iocurve db`: the results database's own health. The file
//! is the one `--db` names (or the default), like every other command's.

use super::DbArg;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Checks the results database with SQLite's quick_check: prints "ok",
    /// or the problem with exit code 3.
    Check(DbArg),
    /// Moves a damaged results database aside (to NAME.damaged-TIMESTAMP,
    /// in UTC, with its -wal/-shm files), saves the runs that can still be
    /// read into a new one, and says how many; a sound database is left as
    /// it is.
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
