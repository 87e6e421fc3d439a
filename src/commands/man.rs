//! `iocurve man [DIR]`: manual pages from the clap definition, one for
//! `iocurve` and one for every subcommand (`iocurve-run.1`,
//! `iocurve-flash-align.1`, ...), so `man iocurve-run` says what
//! `iocurve run --help` says. Without DIR only iocurve.1 is printed, for
//! `iocurve man | man -l -`.

use crate::cli::Cli;
use crate::error::IoFailure;
use anyhow::Result;
use clap::CommandFactory;
use std::path::Path;

/// Prints iocurve.1, or writes every page into `dir` and lists them.
pub fn man(dir: Option<&Path>) -> Result<i32> {
    match dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut page)
                .map_err(|e| IoFailure::new(format!("cannot render the man page: {e}"), Some(e)))?;
            crate::output::print_text(&String::from_utf8_lossy(&page));
        }
        Some(dir) => {
            let written = write_pages(dir)?;
            println!("wrote {written} man pages to {}", dir.display());
        }
    }
    Ok(0)
}

/// Writes the page of every command into `dir` (created when missing);
/// how many.
fn write_pages(dir: &Path) -> Result<usize> {
    let failed = |e: std::io::Error| -> anyhow::Error {
        IoFailure::new(
            format!("cannot write man pages to {}: {e}", dir.display()),
            Some(e),
        )
        .into()
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    clap_mangen::generate_to(Cli::command(), dir).map_err(failed)?;
    Ok(page_names(&Cli::command()).len())
}

/// The page names of a command and all its subcommands, as clap_mangen
/// names them: `iocurve`, `iocurve-run`, `iocurve-flash-align`, ...
pub fn page_names(cmd: &clap::Command) -> Vec<String> {
    fn walk(cmd: &clap::Command, prefix: &str, names: &mut Vec<String>) {
        let name = match prefix.is_empty() {
            true => cmd.get_name().to_string(),
            false => format!("{prefix}-{}", cmd.get_name()),
        };
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, &name, names);
        }
        names.push(name);
    }
    let mut names = Vec::new();
    walk(cmd, "", &mut names);
    names
}
