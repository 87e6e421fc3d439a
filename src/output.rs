//! The one output step of a measuring command: print the result (text or
//! JSON), save it in the results database, write the `--report` page, and
//! pick the exit code. Everything a run shows passes through here.

use crate::error::{EXIT_INTERRUPTED, EXIT_IO, EXIT_VERIFY};
use crate::report::html::{self, ReportInput};
use crate::report::{Export, Json, Text};
use crate::result::RunResult;
use crate::store::{Settings, Store};
use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a measuring command's result goes: the format it is printed in,
/// the `--report` page, and the results database. Made once from the
/// command line; nothing about output is decided anywhere else.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Print JSON instead of the text tables.
    pub json: bool,
    /// Write the HTML report of the run here (`--report FILE`).
    pub report: Option<PathBuf>,
    /// The results database (`--db`, `--no-save`).
    pub store: Settings,
}

impl Output {
    pub fn new(store: &Settings, json: bool, report: Option<&PathBuf>) -> Output {
        Output {
            json,
            report: report.cloned(),
            store: store.clone(),
        }
    }

    /// The output a command with the shared target options asked for
    /// (`--json`, `--report`).
    pub fn for_target(store: &Settings, target: &crate::cli::config::TargetConfig) -> Output {
        Output::new(store, target.json, target.report.as_ref())
    }

    /// Prints the result, saves it, writes the report, and picks the exit
    /// code.
    pub fn finish(&self, result: &RunResult) -> Result<i32> {
        let text = if self.json {
            Json.render(result)
        } else {
            Text.render(result)
        };
        print_text(&text);
        self.exit_code_of(result)
    }

    /// [`Output::finish`], or, when the intervals were streamed as JSON
    /// lines, the whole result as the last line.
    pub fn finish_live(&self, result: &RunResult, json_lines: bool) -> Result<i32> {
        if !json_lines {
            return self.finish(result);
        }
        crate::report::json_lines::print_result(result)?;
        self.exit_code_of(result)
    }

    /// Saves and reports a result printed some other way; the exit code it
    /// ends with, and why on stderr.
    pub fn exit_code_of(&self, result: &RunResult) -> Result<i32> {
        self.save(result);
        self.write_report(result);
        exit_code_unsaved(result)
    }

    /// Saves a result that is still growing (endure's cycles) under one id,
    /// a new row the first time and the same row after. A failure is a
    /// warning: the run goes on.
    pub fn save_progress(&self, result: &RunResult, saved: &mut Option<i64>) {
        if let Err(e) = crate::store::save_progress(&self.store, result, saved) {
            eprintln!(
                "warning: the cycles so far were not saved: {}",
                crate::error::render(&e)
            );
        }
    }

    /// Prints a result saved as it went (see [`Output::save_progress`]),
    /// saves its last state under the same id, and picks the exit code:
    /// bad blocks found over endure's cycles end it with the verify code.
    pub fn finish_saved(&self, result: &RunResult, saved: &mut Option<i64>) -> Result<i32> {
        let text = if self.json {
            Json.render(result)
        } else {
            Text.render(result)
        };
        print_text(&text);
        self.save_progress(result, saved);
        if let Some(id) = saved {
            eprintln!("saved as run {id}");
        }
        let code = exit_code_unsaved(result)?;
        let bad: u64 = result
            .payload
            .endure()
            .into_iter()
            .flat_map(|e| &e.cycles)
            .map(|c| c.verify.bad())
            .sum();
        if code == 0 && bad > 0 {
            eprintln!("Error: {bad} bad block(s) over the cycles; see BAD above");
            return Ok(EXIT_VERIFY);
        }
        Ok(code)
    }

    /// Saves the result in the results database. A failure is a warning:
    /// the result is already printed and the exit code stays the run's.
    pub fn save(&self, result: &RunResult) {
        match self.store.save(result, "iocurve") {
            Ok(Some((id, path))) => eprintln!("saved as run {id} in {}", path.display()),
            Ok(None) => {}
            Err(e) => eprintln!(
                "warning: the result was not saved: {}",
                crate::error::render(&e)
            ),
        }
    }

    /// Writes the `--report` page when one was asked for; a failure is a
    /// warning, like a failed save.
    fn write_report(&self, result: &RunResult) {
        let Some(path) = &self.report else {
            return;
        };
        match write_report_page(result, path, &self.store) {
            Ok(()) => eprintln!("report written to {}", path.display()),
            Err(e) => eprintln!(
                "warning: the report was not written: {}",
                crate::error::render(&e)
            ),
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a
/// message.
pub fn print_text(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
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
fn write_report_page(result: &RunResult, path: &Path, store: &Settings) -> Result<()> {
    let history = match store.path() {
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

/// Writes a chart of the result (`--svg`) to `path`.
pub fn write_chart(path: &Path, chart: &dyn Export, result: &RunResult) -> Result<()> {
    write_output(path, chart.render(result).as_bytes(), "the chart")
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

/// Exit code of a fake card or a failed class.
pub const EXIT_FLASH_FAIL: i32 = 5;

impl Output {
    /// The output step of `iocurve flash`: prints the flash report (text,
    /// `verbose` with every figure, or JSON), saves and reports like any
    /// run, and ends with [`EXIT_FLASH_FAIL`] when the card failed and
    /// nothing worse happened.
    pub fn finish_flash(&self, result: &RunResult, verbose: bool) -> Result<i32> {
        let text = match self.json {
            true => Json.render(result),
            false => crate::report::flash::render_text(result, verbose),
        };
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
        drop(stdout);
        let code = self.exit_code_of(result)?;
        let failed = result.payload.flash().is_some_and(|f| f.failed);
        Ok(if code == 0 && failed {
            EXIT_FLASH_FAIL
        } else {
            code
        })
    }
}

impl Output {
    /// The output step of `iocurve files save`: like [`Output::finish`],
    /// but ends with [`EXIT_VERIFY`] when `bad` bytes read back differed
    /// from what was written and nothing worse happened.
    pub fn finish_files_save(&self, result: &RunResult, bad: u64) -> Result<i32> {
        let code = self.finish(result)?;
        if code == 0 && bad > 0 {
            eprintln!("Error: {bad} byte(s) read back differ from what was written");
            return Ok(EXIT_VERIFY);
        }
        Ok(code)
    }

    /// [`Output::finish`] for a copy: exit 4 when `--verify` found the
    /// destination different from the source, though the copy ran.
    pub fn finish_copy(&self, result: &RunResult) -> Result<i32> {
        let code = self.finish(result)?;
        let verify = result.payload.copy().and_then(|c| c.verify.as_ref());
        if code == 0 && verify.is_some_and(|v| v.mismatched_bytes > 0) {
            eprintln!("Error: the destination differs from the source; see MISMATCH above");
            return Ok(EXIT_VERIFY);
        }
        Ok(code)
    }
}

/// A surface scan's exit code: the run's, or 3 when a position failed.
pub fn surface_exit_code(code: i32, result: &RunResult) -> i32 {
    let surface = result.payload.surface();
    let unread = surface.map_or(0, |s| {
        crate::analysis::surface::failed_positions(&s.samples)
    });
    if code == 0 && unread > 0 {
        eprintln!("Error: {unread} position(s) failed; see the table above");
        return crate::error::EXIT_IO;
    }
    code
}
