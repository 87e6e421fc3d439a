//! The measuring commands, each a short sequence: validate, open the target,
//! prepare, measure, assemble one [`RunResult`], print it.

pub mod compare;
pub mod completions;
pub mod copy;
pub mod curve;
pub mod db;
pub mod delete;
pub mod endure;
pub mod export;
pub mod files;
pub mod flash;
pub mod history;
pub mod import;
pub mod man;
pub mod probe;
pub mod profile;
pub mod ranks;
pub mod recover;
pub mod report;
pub mod run;
pub mod stream;
pub mod surface;
pub mod sustain;

use crate::cli::{Cli, Command};
use anyhow::Result;

/// Runs the command; returns the exit code for a run that produced a result
/// (partial results after an I/O failure included).
pub fn dispatch(cli: Cli) -> Result<i32> {
    let asked = cli.store();
    let store = crate::store::Settings {
        db: asked.db,
        no_save: asked.no_save,
    };
    // A --db that can never be a database is refused before anything is
    // measured, not after.
    if let Some(db) = &store.db {
        crate::store::check_path(db)?;
    }
    if let Some(output) = cli.command.output_args() {
        output.one_file_each().map_err(crate::error::usage)?;
    }
    if crate::cluster::job().is_none()
        && let Some(flag) = cli.cluster_args().and_then(|c| c.first_given())
    {
        return Err(crate::error::usage(format!(
            "{flag} is for a run on many hosts: start iocurve (built with --features mpi) under mpirun or srun"
        )));
    }
    if cli.command.output_args().is_some_and(|o| o.quiet) {
        crate::live::progress::silence();
    }
    match cli.command {
        Command::Run(args) => run::run(&args, &store),
        Command::Profile(args) => profile::profile(&args, &store),
        Command::Curve(args) => curve::curve(&args, &store),
        Command::Recover(args) => recover::recover(&args),
        Command::Report(args) => report::report(&args, &store),
        Command::Probe(args) => probe::probe(&args),
        Command::History(args) => history::history(&args, &store),
        Command::List(args) => history::list(&args, &store),
        Command::Compare(args) => compare::compare(&args, &store),
        Command::Delete(args) => delete::delete(&args, &store),
        Command::Export(args) => export::export(&args, &store),
        Command::Import(args) => import::import(&args, &store),
        Command::Files(args) => files::files(&args, &store),
        Command::Stream(args) => stream::stream(&args, &store),
        Command::Sustain(args) => sustain::sustain(&args, &store),
        Command::Flash(cmd) => flash::flash(&cmd, &store),
        Command::Surface(args) => surface::surface(&args, &store),
        Command::Copy(args) => copy::copy(&args, &store),
        Command::Endure(args) => endure::endure(&args, &store),
        Command::Db(cmd) => db::db(&cmd, &store),
        Command::Completions(args) => completions::completions(args.shell),
        Command::Man(args) => man::man(args.pages_dir.as_deref()),
    }
}
