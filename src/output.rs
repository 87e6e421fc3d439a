//! The one output step of a measuring command: print the result (the table,
//! JSON, JSON lines, CSV or Markdown; to stdout, to `-o FILE`, or nowhere
//! with `-q`), write the `--export-*` files beside it (each byte for byte
//! what its format prints, as hyperfine writes several exports of one
//! run), save it in the results database, write the `--report` page, and
//! pick the exit code. Everything a run shows passes through here.

use crate::error::{EXIT_INTERRUPTED, EXIT_IO, EXIT_VERIFY};
use crate::report::html::{self, ReportInput};
use crate::report::{Csv, Export, Json, Markdown, Text};
use crate::result::RunResult;
use crate::store::{Settings, Store};
use crate::vocab::output::{Format, OutputChoice};
use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};

mod file;
pub use file::write_output;

/// Where a measuring command's result goes: the format it is printed in,
/// the `--report` page, and the results database. Made once from the
/// command line; nothing about output is decided anywhere else.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// How and where the result is printed.
    pub choice: OutputChoice,
    /// Write the HTML report of the run here (`--report FILE`).
    pub report: Option<PathBuf>,
    /// The results database (`--db`, `--no-save`).
    pub store: Settings,
    /// The text header [`Output::announce`] printed before measuring; the
    /// final text leaves out what it already showed.
    announced: std::cell::OnceCell<String>,
}

impl Output {
    pub fn new(store: &Settings, choice: &OutputChoice, report: Option<&PathBuf>) -> Output {
        Output {
            choice: choice.clone(),
            report: report.cloned(),
            store: store.clone(),
            announced: std::cell::OnceCell::new(),
        }
    }

    /// The output a command with the shared target options asked for
    /// (the output flags, `--report`).
    pub fn for_target(store: &Settings, target: &crate::vocab::config::TargetConfig) -> Output {
        Output::new(store, &target.output, target.report.as_ref())
    }

    /// True when intervals are to be streamed as JSON lines on stdout
    /// while the command runs.
    pub fn streams_json_lines(&self) -> bool {
        self.choice.format == Format::JsonLines && !self.choice.quiet
    }

    /// Says what is about to be measured, before measuring: the text
    /// header (target, device, mode, plan) on stdout, or the `start` line
    /// of JSON lines. `provisional` is the result as made before measuring.
    /// Nothing for other formats, `-o` or `-q`. The final text then begins
    /// where the header left off (see [`Output::show_final`]).
    pub fn announce(&self, provisional: &RunResult) {
        if self.choice.quiet || self.choice.file.is_some() || crate::cluster::is_silent_rank() {
            return;
        }
        match self.choice.format {
            Format::Text => {
                let header = Text::header(provisional);
                print_text(&header);
                let _ = self.announced.set(header);
            }
            Format::JsonLines => {
                print_json(&(crate::report::start_line(provisional) + "\n"));
                crate::live::json_lines::begin_intervals();
            }
            _ => {}
        }
    }

    /// Prints the result, saves it, writes the report, and picks the exit
    /// code.
    pub fn finish(&self, result: &RunResult) -> Result<i32> {
        self.finish_as(result, &Text)
    }

    /// [`Output::finish`] with `table` as the command's own text form.
    fn finish_as(&self, result: &RunResult, table: &dyn Export) -> Result<i32> {
        match crate::cluster::job() {
            Some(job) => self.finish_rank(job, result, table),
            None => self.finish_alone(result, table),
        }
    }

    /// The end of a rank of an MPI job: every rank hands its result to
    /// rank 0, which merges them and finishes the merged result as one run
    /// (printed, saved, reported once); every rank ends with rank 0's code.
    fn finish_rank(
        &self,
        job: &crate::cluster::job::Job,
        result: &RunResult,
        table: &dyn Export,
    ) -> Result<i32> {
        match job.hand_over(result) {
            None => Ok(job.share_exit(None)),
            Some(Ok(merged)) => {
                let finished = self.finish_alone(&merged, table);
                let code = match &finished {
                    Ok(code) => *code,
                    Err(e) => crate::error::exit_code(e),
                };
                job.share_exit(Some(code));
                finished
            }
            Some(Err(why)) => {
                eprintln!(
                    "Error: the ranks' results could not be merged: {}",
                    crate::units::escape::line(&why.to_string())
                );
                Ok(job.share_exit(Some(crate::error::EXIT_INTERNAL)))
            }
        }
    }

    /// [`Output::finish_as`] for a result of this process alone.
    fn finish_alone(&self, result: &RunResult, table: &dyn Export) -> Result<i32> {
        let shown = self.show_final(&self.render(result, table));
        let exported = self.write_exports(|format| Ok(render_as(format, result, table)));
        let code = self.exit_code_of(result)?;
        shown?;
        exported?;
        Ok(code)
    }

    /// The result in the chosen format.
    pub fn render(&self, result: &RunResult, table: &dyn Export) -> String {
        render_as(self.choice.format, result, table)
    }

    /// Writes every `--export-*` file, each with what `render` gives for
    /// its format (the same text its flag prints). All are tried; the
    /// first failure is returned, after the others are written.
    pub fn write_exports(
        &self,
        mut render: impl FnMut(Format) -> std::result::Result<String, String>,
    ) -> Result<()> {
        let mut first_error = None;
        for export in &self.choice.exports {
            let written = render(export.format)
                .map_err(crate::error::usage)
                .and_then(|text| write_output(&export.path, text.as_bytes(), "the export"));
            match written {
                Ok(()) => self.note(format_args!("exported to {}", export.path.display())),
                // The first failure ends the command (and is reported
                // as its error); any later one is said here.
                Err(e) if first_error.is_some() => {
                    eprintln!("Error: {}", crate::error::render(&e))
                }
                Err(e) => first_error = Some(e),
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Puts rendered output where the flags say: the `-o` file, else
    /// stdout unless `-q`.
    pub fn show(&self, text: &str) -> Result<()> {
        match &self.choice.file {
            Some(path) => write_output(path, text.as_bytes(), "the output"),
            None if self.choice.quiet => Ok(()),
            None => {
                match self.choice.format {
                    Format::Json | Format::JsonLines => print_json(text),
                    Format::Text | Format::Markdown => print_fitted(text),
                    Format::Csv => print_text(text),
                }
                Ok(())
            }
        }
    }

    /// [`Output::show`] for the final result: what [`Output::announce`]
    /// already printed is not printed again. The lines the final text
    /// shares with the announced header from its start are left out; from
    /// the first line that differs on, the final text is printed whole, so
    /// a header line that changed while measuring is shown as it ended.
    fn show_final(&self, text: &str) -> Result<()> {
        match self.announced.get() {
            Some(header) => self.show(after_common_lines(header, text)),
            None => self.show(text),
        }
    }

    /// A note for the user on stderr, unless `-q`; a path it names is
    /// shown escaped (see [`crate::units::escape::line`]).
    fn note(&self, text: std::fmt::Arguments) {
        if !self.choice.quiet {
            eprintln!("{}", crate::units::escape::line(&text.to_string()));
        }
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
        let shown = self.show_final(&self.render(result, &Text));
        let exported = self.write_exports(|format| Ok(render_as(format, result, &Text)));
        self.save_progress(result, saved);
        if let Some(id) = saved {
            self.note(format_args!("saved as run {id}"));
        }
        // `--report` of a run saved as it went (endure) is written too.
        self.write_report(result);
        let code = exit_code_unsaved(result)?;
        shown?;
        exported?;
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
            Ok(Some((id, path))) => {
                self.note(format_args!("saved as run {id} in {}", path.display()))
            }
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
            Ok(()) => self.note(format_args!("report written to {}", path.display())),
            Err(e) => eprintln!(
                "warning: the report was not written: {}",
                crate::error::render(&e)
            ),
        }
    }
}

/// `text` from its first line that is not the same line of `shown`; when
/// that line continues a wrapped one (it starts with a space), from the
/// start of the wrapped line, so a changed line is shown whole.
fn after_common_lines<'a>(shown: &str, text: &'a str) -> &'a str {
    let (mut start, mut logical_start) = (0, 0);
    for (old, new) in shown.split_inclusive('\n').zip(text.split_inclusive('\n')) {
        if !new.starts_with(' ') {
            logical_start = start;
        }
        if old != new {
            return &text[logical_start..];
        }
        start += new.len();
    }
    &text[start..]
}

/// `result` in `format`; `table` is the command's own text form.
fn render_as(format: Format, result: &RunResult, table: &dyn Export) -> String {
    match format {
        Format::Text => table.render(result),
        Format::Json => Json.render(result),
        Format::JsonLines => json_line(result),
        Format::Csv => Csv.render(result),
        Format::Markdown => Markdown.render(result),
    }
}

/// The whole result as one line of JSON (the last line of `--json-lines`,
/// tagged `"type":"result"`).
fn json_line(result: &RunResult) -> String {
    crate::report::result_line(result) + "\n"
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a
/// message. The last net before the terminal: a control character a
/// renderer let through is shown escaped (see
/// [`crate::units::escape::text`]); line breaks and tabs stay.
pub fn print_text(text: &str) {
    write_stdout(&crate::units::escape::text(text));
}

/// [`print_text`] for what a person reads (a command's one-line answer,
/// `list`, `history`, a Markdown export): every line wrapped to the
/// terminal's width first (see [`crate::report::table::fitted`]). A
/// Markdown table row is left whole: it cannot wrap and stay a table.
pub fn print_fitted(text: &str) {
    let fitted: String = text
        .split_inclusive('\n')
        .map(|line| match line.starts_with('|') {
            true => line.to_string(),
            false => crate::report::table::fitted(line),
        })
        .collect();
    print_text(&fitted);
}

/// [`print_text`] for a JSON document: its unsafe characters written as
/// JSON escapes, so that it still parses to the same values (see
/// [`crate::units::escape::json`]).
pub fn print_json(text: &str) {
    write_stdout(&crate::units::escape::json(text));
}

fn write_stdout(text: &str) {
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
        Ok(db_path) if db_path.exists() => Store::open_to_read(&db_path)
            .and_then(|db| crate::store::history::points(&db, std::slice::from_ref(result)))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let input = ReportInput {
        runs: vec![result.clone()],
        history,
        earlier: Vec::new(),
    };
    write_output(path, html::render(&input).as_bytes(), "the report")
}

/// Writes a chart of the result (`--svg`) to `path`.
pub fn write_chart(path: &Path, chart: &dyn Export, result: &RunResult) -> Result<()> {
    write_output(path, chart.render(result).as_bytes(), "the chart")
}

/// Exit code of a fake card or a failed class.
use crate::error::EXIT_FLASH_FAIL;

impl Output {
    /// The output step of `iocurve flash`: prints the flash report (text,
    /// `verbose` with every figure, or JSON), saves and reports like any
    /// run, and ends with [`EXIT_FLASH_FAIL`] when the card failed and
    /// nothing worse happened.
    pub fn finish_flash(&self, result: &RunResult, verbose: bool) -> Result<i32> {
        let code = self.finish_as(result, &FlashTable { verbose })?;
        let failed = result.payload.flash().is_some_and(|f| f.failed());
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

/// The text form of a flash result: the verdicts, or every figure.
struct FlashTable {
    verbose: bool,
}

impl Export for FlashTable {
    fn render(&self, result: &RunResult) -> String {
        crate::report::flash::render_text(result, self.verbose)
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

/// Several runs as one CSV (`compare --csv`): the export's rows of each
/// run under one header line.
pub fn runs_csv<'a>(results: impl IntoIterator<Item = &'a RunResult>) -> String {
    let results: Vec<&RunResult> = results.into_iter().collect();
    // One run on many hosts gives every run's rows its `rank` and `host`
    // columns, so that the rows stay under one header.
    let rank_columns = results.iter().any(|r| r.mpi.is_some());
    let mut out = String::new();
    for (i, result) in results.into_iter().enumerate() {
        let csv = Csv::rows(result, rank_columns);
        let rows = match i {
            0 => csv.as_str(),
            _ => csv.split_once('\n').map_or("", |(_, rows)| rows),
        };
        out.push_str(rows);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::after_common_lines;

    #[test]
    fn the_json_lines_result_carries_the_ranks() {
        let line = super::json_line(&crate::testdata::mpi_result());
        assert_eq!(line.matches('\n').count(), 1, "one line");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["mpi"]["size"], 4);
        assert_eq!(
            v["mpi"]["ranks"][2]["clock_offset_ns"],
            4_812_000_000_123_i64
        );
        assert_eq!(
            v["mpi"]["tests"][0]["repetitions"][0]["ranks"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
    }

    #[test]
    fn compare_csv_gives_every_run_the_rank_columns_when_one_has_them() {
        let one = crate::testdata::run(None, "2024-03-01T10:00:00Z", &[20.0], &[10.0]);
        let many = crate::testdata::mpi_result();
        let csv = super::runs_csv([&one, &many]);
        let widths: Vec<usize> = csv.lines().map(|l| l.split(',').count()).collect();
        assert!(widths.iter().all(|w| *w == 23), "{csv}");
        assert_eq!(csv.matches("started_at").count(), 1, "{csv}");
    }

    #[test]
    fn the_final_text_resumes_after_the_lines_already_shown() {
        let shown = "head\nplan x\n";
        assert_eq!(
            after_common_lines(shown, "head\nplan x\nnote\ntable\n"),
            "note\ntable\n"
        );
        // A shown line that changed: from it on, the final text again.
        assert_eq!(
            after_common_lines(shown, "head\nplan y\ntable\n"),
            "plan y\ntable\n"
        );
        assert_eq!(after_common_lines(shown, "other\n"), "other\n");
        // A changed continuation: from the start of its wrapped line.
        let shown = "head\ntarget x (file,\n  16 MiB)\nplan x\n";
        assert_eq!(
            after_common_lines(shown, "head\ntarget x (file,\n  1 MiB)\nplan x\nnote\n"),
            "target x (file,\n  1 MiB)\nplan x\nnote\n"
        );
        assert_eq!(after_common_lines("", "all\n"), "all\n");
    }
}
