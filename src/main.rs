//! The `iocurve` binary: parse, run, report errors as one line, exit with a
//! code that tells usage errors (2) from I/O failures (3).

use clap::Parser;
use iocurve::cli::Cli;
use iocurve::{commands, error};

fn main() {
    let cli = Cli::parse();
    let code = match commands::dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("Error: {}", error::render(&err));
            error::exit_code(&err)
        }
    };
    std::process::exit(code);
}
