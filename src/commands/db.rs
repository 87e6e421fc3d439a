//! `iocurve db check` and `iocurve db repair`: is the results database
//! sound, and if not, a new one with what could be saved of the old, or
//! the old one rid of what iocurve did not put there. The messages are
//! built in [`crate::report::db`].
//!
//! Exit codes of `db check`: 0 when all is well; 3 when the file is
//! damaged (quick_check), of another make, or holds findings (objects
//! iocurve did not make, unreadable runs, an odd schema stamp: listed on
//! stdout, one line each); 2 when there is no database.

use crate::cli::db::DbCommand;
use crate::error::{IoFailure, usage};
use crate::report::db as text;
use crate::store::{
    self,
    fail::{self, Access},
    repair::{self, Checked, Repair},
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
            Checked::Sound(sound, found) if found.is_empty() => text::check_ok(&path, &sound),
            // The findings on stdout, one line each; the verdict on stderr
            // with exit code 3, as for a damaged file.
            Checked::Sound(sound, found) => {
                crate::output::print_fitted(&text::check_findings(&path, &sound, &found));
                let repair = fail::repair_command(&path);
                return Err(
                    IoFailure::new(text::findings_error(&path, &found, &repair), None).into(),
                );
            }
            Checked::Damaged(problem) => return Err(fail::damaged(&path, &problem, Access::Read)),
        },
        DbCommand::Repair(_) => match repair::repair(&path)? {
            Repair::Healthy(sound) => text::healthy(&path, &sound),
            Repair::Replaced(r) => text::replaced(&path, &r),
            Repair::Fixed(r) => text::fixed(&path, &r),
        },
    };
    crate::output::print_fitted(&message);
    Ok(0)
}
