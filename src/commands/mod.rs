//! The measuring commands, each a short sequence: validate, open the target,
//! prepare, measure, assemble one [`RunResult`], print it.

mod common;
pub mod curve;
pub mod files;
pub mod profile;
pub mod run;
pub mod stream;
pub mod sustain;

use crate::cli::{Cli, Command};
use anyhow::Result;

/// Runs the command; returns the exit code for a run that produced a result
/// (partial results after an I/O failure included).
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Profile(args) => profile::profile(&args),
        Command::Curve(args) => curve::curve(&args),
        Command::Files(args) => files::files(&args),
        Command::Stream(args) => stream::stream(&args),
        Command::Sustain(args) => sustain::sustain(&args),
    }
}

pub use crate::result::RunResult;
