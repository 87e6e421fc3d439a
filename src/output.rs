//! The one output step of a measuring command: print the result (text or
//! JSON), save it in the results database, write the `--report` page, and
//! pick the exit code. Everything a run shows passes through here.

use crate::error::{EXIT_INTERRUPTED, EXIT_IO, EXIT_VERIFY};
use crate::report::html::{self, ReportInput};
use crate::report::{Export, Json, Text};
use crate::result::RunResult;
use crate::store::Store;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// Saves the result in the results database. A failure is a warning: the
/// result is already printed and the exit code stays the run's.
pub fn save(result: &RunResult) {
    match crate::store::save_configured(result, "iocurve") {
        Ok(Some((id, path))) => eprintln!("saved as run {id} in {}", path.display()),
        Ok(None) => {}
        Err(e) => eprintln!(
            "warning: the result was not saved: {}",
            crate::error::render(&e)
        ),
    }
}

/// Prints the result, saves it, and picks the exit code.
pub fn finish(result: &RunResult, json: bool) -> Result<i32> {
    let text = if json {
        Json.render(result)
    } else {
        Text.render(result)
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    exit_code_of(result)
}

/// Where `--report FILE` asked for the HTML report of this run.
static REPORT_PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Asks for the HTML report of this run to be written to `path` when it
/// ends (`--report FILE`).
pub fn report_to(path: Option<&std::path::PathBuf>) {
    if let Some(path) = path {
        let _ = REPORT_PATH.set(path.clone());
    }
}

/// Writes the `--report` page when one was asked for; a failure is a
/// warning, like a failed save.
fn write_report(result: &RunResult) {
    let Some(path) = REPORT_PATH.get() else {
        return;
    };
    match write_report_page(result, path) {
        Ok(()) => eprintln!("report written to {}", path.display()),
        Err(e) => eprintln!(
            "warning: the report was not written: {}",
            crate::error::render(&e)
        ),
    }
}

/// The exit code a printed result ends with; says why on stderr.
pub fn exit_code_of(result: &RunResult) -> Result<i32> {
    save(result);
    write_report(result);
    exit_code_unsaved(result)
}

/// The exit code of a result that saved itself (see
/// [`crate::store::save_progress`]); says why on stderr.
pub fn exit_code_unsaved(result: &RunResult) -> Result<i32> {
    if let Some(e) = &result.error {
        eprintln!("Error: {e}");
        return Ok(EXIT_IO);
    }
    if result.interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    let bad = result.bad_blocks();
    if bad > 0 {
        eprintln!("Error: verification found {bad} bad block(s); see the list above");
        return Ok(EXIT_VERIFY);
    }
    Ok(0)
}

/// The page for a run that just ended, with its device's stored history
/// when the database has one.
fn write_report_page(result: &RunResult, path: &Path) -> Result<()> {
    let history = match crate::store::configured_path() {
        Ok(db_path) if db_path.exists() => Store::open(&db_path)
            .and_then(|db| crate::store::history::points(&db, std::slice::from_ref(result)))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let input = ReportInput {
        runs: vec![result.clone()],
        history,
    };
    write_output(path, html::render(&input).as_bytes(), "the report")
}

/// Writes an output file the user named (`--svg`, `--report`, `-o`). A
/// block device is refused: an output path is no way to overwrite a disk,
/// and a slip of the tab key must not become one.
pub fn write_output(path: &std::path::Path, bytes: &[u8], what: &str) -> Result<()> {
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
