//! The `iocurve` binary: parse, run, report errors as one line, exit with a
//! code that tells usage errors (2) from I/O failures (3). A panic is a bug:
//! it is reported on one line, the stack unwinds (so guards still remove
//! scratch files and put preserved data back), and the exit code is 1.
//!
//! Before anything else the umask loses its group and world write bits:
//! iocurve runs as root and leaves files behind (the results database and
//! SQLite's journals, reports, charts, exports, scratch files, the
//! directories they go in), and none of them may be writable by another
//! user, whatever umask the shell had (`umask 000` in a service unit, say).

use iocurve::cli::Cli;
use iocurve::{commands, error};
use std::backtrace::{Backtrace, BacktraceStatus};
use std::panic::PanicHookInfo;

fn main() {
    keep_files_private();
    std::panic::set_hook(Box::new(report_panic));
    if let Some(code) = commands::ranks::main_if_launched() {
        std::process::exit(code);
    }
    let cli = Cli::from_args();
    let code = match std::panic::catch_unwind(|| commands::dispatch(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(err)) => {
            eprintln!("Error: {}", error::render(&err));
            error::exit_code(&err)
        }
        Err(_) => error::EXIT_INTERNAL,
    };
    std::process::exit(code);
}

/// Adds group and world write to the umask, keeping what it already masks
/// (a stricter umask such as 077 stays). Called first, while the process
/// has one thread, since the umask is the whole process's.
fn keep_files_private() {
    use rustix::fs::Mode;
    let asked = rustix::process::umask(Mode::WGRP | Mode::WOTH);
    rustix::process::umask(asked | Mode::WGRP | Mode::WOTH);
}

/// One line for the user; the backtrace only when RUST_BACKTRACE asks.
fn report_panic(info: &PanicHookInfo) {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    let location = info
        .location()
        .map_or("an unknown place".into(), |l| l.to_string());
    let rank = iocurve::cluster::job().map_or(String::new(), |j| format!("{}: ", j.who()));
    eprintln!("Error: {rank}internal error (a bug in iocurve): {message} at {location}");
    let trace = Backtrace::capture();
    if trace.status() == BacktraceStatus::Captured {
        eprintln!("{trace}");
    }
    iocurve::interrupt::on_panic();
}
