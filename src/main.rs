//! The `iocurve` binary: parse, run, report errors as one line, exit with a
//! code that tells usage errors (2) from I/O failures (3). A panic is a bug:
//! it is reported on one line, the stack unwinds (so guards still remove
//! scratch files and put preserved data back), and the exit code is 1.

use iocurve::cli::Cli;
use iocurve::{commands, error};
use std::backtrace::{Backtrace, BacktraceStatus};
use std::panic::PanicHookInfo;

fn main() {
    let cli = Cli::from_args();
    std::panic::set_hook(Box::new(report_panic));
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
    eprintln!("Error: internal error (a bug in iocurve): {message} at {location}");
    let trace = Backtrace::capture();
    if trace.status() == BacktraceStatus::Captured {
        eprintln!("{trace}");
    }
    iocurve::workload::interrupt::on_panic();
}
