//! The measuring commands, each a short sequence: validate, open the target,
//! prepare, measure, assemble one [`RunResult`], print it.

mod common;
pub mod curve;
pub mod profile;
pub mod recover;
pub mod run;

use crate::cli::{Cli, Command};
use anyhow::Result;

/// Runs the command; returns the exit code for a run that produced a result
/// (partial results after an I/O failure included).
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Profile(args) => profile::profile(&args),
        Command::Curve(args) => curve::curve(&args),
        Command::Recover(args) => recover::recover(&args),
    }
}

pub use crate::result::RunResult;
