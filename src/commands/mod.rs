//! The measuring commands, each a short sequence: validate, open the target,
//! prepare, measure, assemble one [`RunResult`], print it.

pub(crate) mod common;
pub mod compare;
pub mod copy;
pub mod curve;
pub mod db;
pub mod endure;
pub mod export;
pub mod files;
pub mod flash;
pub mod history;
pub mod import;
pub mod probe;
pub mod profile;
pub mod recover;
pub mod report;
pub mod run;
mod select;
pub mod stream;
pub mod surface;
pub mod sustain;

use crate::cli::{Cli, Command};
use anyhow::Result;

/// Runs the command; returns the exit code for a run that produced a result
/// (partial results after an I/O failure included).
pub fn dispatch(cli: Cli) -> Result<i32> {
    crate::store::configure(crate::store::Settings {
        db: cli.store.db.clone(),
        no_save: cli.store.no_save,
    });
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Profile(args) => profile::profile(&args),
        Command::Curve(args) => curve::curve(&args),
        Command::Recover(args) => recover::recover(&args),
        Command::Report(args) => report::report(&args),
        Command::Probe(args) => probe::probe(&args),
        Command::History(args) => history::history(&args),
        Command::List => history::list(),
        Command::Compare(args) => compare::compare(&args),
        Command::Export(args) => export::export(&args),
        Command::Import(args) => import::import(&args),
        Command::Files(args) => files::files(&args),
        Command::Stream(args) => stream::stream(&args),
        Command::Sustain(args) => sustain::sustain(&args),
        Command::Flash(cmd) => flash::flash(&cmd),
        Command::Surface(args) => surface::surface(&args),
        Command::Copy(args) => copy::copy(&args),
        Command::Endure(args) => endure::endure(&args),
        Command::Db(cmd) => db::db(&cmd),
    }
}

pub use crate::result::RunResult;

/// Writes a chart of the result to `path`.
fn write_chart(
    path: &std::path::Path,
    chart: &dyn crate::report::Export,
    result: &RunResult,
) -> Result<()> {
    write_output(path, chart.render(result).as_bytes(), "the chart")
}

/// Writes an output file the user named (`--svg`, `--report`, `-o`). A
/// block device is refused: an output path is no way to overwrite a disk,
/// and a slip of the tab key must not become one.
pub(crate) fn write_output(path: &std::path::Path, bytes: &[u8], what: &str) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device()) {
        return Err(crate::error::usage(format!(
            "refusing to write {what} to {}: it is a block device; give a file name such as out.svg",
            path.display()
        )));
    }
    std::fs::write(path, bytes).map_err(|e| {
        crate::error::IoFailure::new(
            format!("cannot write {what} to {}: {e}", path.display()),
            Some(e),
        )
        .into()
    })
}
