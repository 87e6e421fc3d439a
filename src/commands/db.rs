//! `iocurve db check` and `iocurve db repair`: is the results database
//! sound, and if not, a new one with what could be saved of the old. The
//! messages are built in [`crate::report::db`].

use crate::cli::db::DbCommand;
use crate::error::usage;
use crate::report::db as text;
use crate::store::{
    self,
    fail::{self, Access},
    repair::{self, Repair},
};
use anyhow::Result;

pub fn db(cmd: &DbCommand, settings: &store::Settings) -> Result<i32> {
    let path = settings.path()?;
    if !path.exists() {
        return Err(usage(format!(
            "no results database at {}: nothing to check (pass --db PATH for another file)",
            path.display()
        )));
    }
    let message = match cmd {
        DbCommand::Check(_) => match repair::check(&path)? {
            Ok(sound) => text::check_ok(&path, &sound),
            Err(problem) => return Err(fail::damaged(&path, &problem, Access::Read)),
        },
        DbCommand::Repair(_) => match repair::repair(&path)? {
            Repair::Healthy(sound) => text::healthy(&path, &sound),
            Repair::Replaced(r) => text::replaced(&path, &r),
        },
    };
    crate::output::print_text(&message);
    Ok(0)
}
