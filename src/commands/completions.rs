//! `iocurve completions SHELL`: the completion script of a shell, printed
//! so the user (or a package) puts it where that shell looks. Generated
//! from the same clap definition the parser uses, so it never offers an
//! option the binary would refuse.

use crate::cli::Cli;
use anyhow::Result;
use clap::CommandFactory;

/// Prints the completion script for `shell` to stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "iocurve", &mut script);
    crate::output::print_text(&String::from_utf8_lossy(&script));
    Ok(0)
}
