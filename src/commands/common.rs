//! Steps shared by the measuring commands.

use crate::cli::config::TargetConfig;
use crate::engine::IoError;
use crate::error::{EXIT_INTERRUPTED, EXIT_IO, EXIT_VERIFY};
use crate::report::{Export, Json, Text, progress};
use crate::result::{
    HostInfo, Measurement, Payload, RunResult, SCHEMA_VERSION, TestResult, WorkloadInfo,
};
use crate::stats::Spread;
use crate::target::scratch::{FillPlan, fill_region};
use crate::target::{self, OpenTarget, TargetRequest};
use crate::workload::job::PaddedCounter;
use crate::workload::runner::{self, MeasureFailure, MeasureTarget};
use crate::workload::{MeasureSpec, interrupt};
use anyhow::Result;
use indicatif::ProgressBar;
use std::io::Write;

/// Opens the target of a command after its arguments were validated. The
/// safety rules run here, once, and decide what the target's write gate
/// allows (see [`crate::target::gate`]).
pub fn open_target(cfg: &TargetConfig, want_write: bool, scratch_size: u64) -> Result<OpenTarget> {
    interrupt::install();
    report_to(cfg.report.as_ref());
    target::open(&TargetRequest {
        path: cfg.path.clone(),
        want_write,
        buffered: cfg.buffered(),
        destructive: cfg.destructive,
        preserve: cfg.preserve,
        journal_dir: cfg.journal_dir.clone(),
        scratch_size,
    })
}

/// Refuses a `sim:` target where `what` needs a real file or device (the
/// simulator answers only on its own virtual clock, through the engines).
pub fn refuse_simulated(path: &std::path::Path, what: &str) -> Result<()> {
    match target::is_simulated(path) {
        true => Err(crate::error::usage(format!(
            "{what} needs a real file, directory or device, and {} is a simulated card (its whole identity is the text after sim:): measure it with profile, run, curve, stream, sustain, surface, endure or the flash commands",
            path.display()
        ))),
        false => Ok(()),
    }
}

/// Whether the writes of a test may be asked for on this target at all: in
/// a directory (a scratch file), on a simulated card (nobody's data), or
/// with `--destructive` or `--preserve` (the safety check has the last word).
pub fn writes_may_be_asked(cfg: &TargetConfig) -> bool {
    cfg.path.is_dir() || target::is_simulated(&cfg.path) || cfg.destructive || cfg.preserve
}

/// Why a command that was not allowed to write skipped its write tests, and
/// what would allow them: `--preserve` or `--destructive`, or nothing at all
/// while the device is in use (both would be refused then).
pub fn writes_skipped_because(target: &OpenTarget) -> String {
    let path = &target.info.path;
    let busy = target
        .info
        .device
        .as_ref()
        .filter(|_| target.info.kind == crate::target::TargetKind::BlockDevice)
        .and_then(|d| crate::target::write_rules::why_busy(d).ok().flatten());
    match busy {
        Some(why) => format!(
            "write tests skipped: {why}, so no write test may run on {path}; give a directory on its file system to test writes through a scratch file"
        ),
        None => format!(
            "write tests skipped: {path} is not a scratch file; pass --preserve to let them write and then restore every byte, or --destructive to let them overwrite it"
        ),
    }
}

/// A command's error after which the preserved data was put back: said in
/// that order, the error's kind (usage, I/O) kept for the exit code.
#[derive(Debug)]
struct RestoredAfter(anyhow::Error);

impl std::fmt::Display for RestoredAfter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}; the original data was restored and verified",
            crate::error::render(&self.0)
        )
    }
}

impl std::error::Error for RestoredAfter {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.0.as_ref())
    }
}

/// Puts back the preserved data after a command failed half-way; returns
/// the command's error, with the restore's outcome added.
pub fn restore_after_error(target: &mut OpenTarget, err: anyhow::Error) -> anyhow::Error {
    match target.restore() {
        None => err,
        Some(Ok(_)) => anyhow::Error::new(RestoredAfter(err)),
        Some(Err(e)) => e.context(crate::error::render(&err)),
    }
}

/// Puts the preserved data back after the test (interrupted or failed ones
/// too), and records in the result what happened; a restore that fails
/// becomes the result's error, naming the journal and the recover command.
pub fn restore(target: &mut OpenTarget, result: &mut RunResult) {
    match target.restore() {
        None => {}
        Some(Ok(done)) => result.target.notes.push(format!(
            "PRESERVED: the original {} of the test region were restored, read back and verified ({:.1} s saving, {:.1} s restoring, not counted in any figure)",
            crate::units::format_size(done.bytes),
            done.save_time.as_secs_f64(),
            done.restore_time.as_secs_f64()
        )),
        Some(Err(e)) => {
            let message = crate::error::render(&e);
            result.error = Some(match result.error.take() {
                Some(first) => format!("{first}; then {message}"),
                None => message,
            });
        }
    }
}

/// The preparation pass: fills the region with random data before anything
/// is measured. A scratch file is always filled; another target only when
/// `writable_too` is set and writes to it are allowed. Returns the bytes
/// written, or `None` when nothing was.
pub fn prepare(target: &mut OpenTarget, plan: FillPlan, writable_too: bool) -> Result<Option<u64>> {
    let bar = progress::bar("preparing test area", progress::Goal::Bytes(plan.bytes));
    let stop = interrupt::stop_flag();
    let stats = if let Some(scratch) = target.scratch() {
        let stats = scratch.fill(&plan, |n| bar.set_position(n), stop)?;
        let size = scratch.size();
        target.set_size(size);
        stats
    } else if writable_too && target.may_write() {
        fill_region(
            target.writer()?.file(),
            &plan,
            |n| bar.set_position(n),
            stop,
        )?
    } else {
        return Ok(None);
    };
    bar.finish_and_clear();
    Ok(Some(stats.bytes))
}

/// Test hook: a deliberate panic right after a measurement (which may have
/// written), so that a test can see the panic path restore `--preserve`
/// data. Read once per measurement, off the timed path.
fn panic_if_asked() {
    if std::env::var_os("IOCURVE_TEST_PANIC_AFTER_MEASURE").is_some() {
        panic!("deliberate test panic after a measurement (IOCURVE_TEST_PANIC_AFTER_MEASURE)");
    }
}

/// Measures, drawing progress on `bar` when given, else on a bar of its own
/// labelled `label`.
pub fn measure(
    target: &OpenTarget,
    spec: &MeasureSpec,
    label: &str,
    bar: Option<&ProgressBar>,
) -> Result<Measurement, Box<MeasureFailure>> {
    measure_on(&target.measure_target(), spec, label, bar)
}

/// [`measure`] on any descriptor of the target (e.g. a buffered one).
pub fn measure_on(
    mt: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    label: &str,
    bar: Option<&ProgressBar>,
) -> Result<Measurement, Box<MeasureFailure>> {
    let counters: Vec<PaddedCounter> = (0..spec.threads)
        .map(|_| PaddedCounter::default())
        .collect();
    let work = || {
        let measured = runner::measure(mt, spec, interrupt::stop_flag(), &counters);
        panic_if_asked();
        measured
    };
    if let Some(bar) = bar {
        bar.set_message(label.to_string());
        return work();
    }
    let goal = match (spec.size, spec.time) {
        (Some(size), None) => progress::Goal::Bytes(size),
        (_, Some(time)) => progress::Goal::Time(time + spec.ramp.unwrap_or_default()),
        (None, None) => progress::Goal::Bytes(spec.span),
    };
    let own = progress::bar(label, goal);
    let result = progress::track(&own, goal, &counters, 0, work);
    own.finish_and_clear();
    result
}

/// Measures `repeat` times, stopping at an I/O failure (whose message is
/// returned beside the test, its partial figures kept) or a stop request.
pub fn measure_repeated(
    target: &OpenTarget,
    spec: &MeasureSpec,
    name: &str,
    repeat: u32,
    bar: Option<&ProgressBar>,
) -> (TestResult, Option<String>) {
    measure_repeated_on(&target.measure_target(), spec, name, repeat, bar)
}

/// [`measure_repeated`] on any descriptor of the target.
pub fn measure_repeated_on(
    mt: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    name: &str,
    repeat: u32,
    bar: Option<&ProgressBar>,
) -> (TestResult, Option<String>) {
    let mut reps = Vec::new();
    let mut error = None;
    for rep in 0..repeat {
        let label = match repeat {
            1 => format!("{name} {}", spec.rw.name()),
            _ => format!("{name} {} {}/{repeat}", spec.rw.name(), rep + 1),
        };
        match measure_on(mt, spec, &label, bar) {
            Ok(m) => reps.push(m),
            Err(failure) => {
                reps.push(failure.partial);
                error = Some(io_failure_message(&failure.error));
                break;
            }
        }
        if interrupt::stop_flag().load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    (test_result(name.to_string(), spec, reps), error)
}

/// Describes a spec for the result.
pub fn workload_info(spec: &MeasureSpec) -> WorkloadInfo {
    WorkloadInfo {
        rw: spec.rw.name().to_string(),
        block_size: spec.block_size,
        queue_depth: spec.queue_depth,
        threads: spec.threads,
        engine: spec.engine.name().to_string(),
        offset: spec.offset,
        span: spec.span,
        mix_read_percent: spec.rw.is_mixed().then_some(spec.mix_read_percent),
        seed: spec.seed,
    }
}

/// A test from its repetitions, with median and range.
pub fn test_result(name: String, spec: &MeasureSpec, repetitions: Vec<Measurement>) -> TestResult {
    let complete: Vec<&Measurement> = repetitions
        .iter()
        .filter(|m| !m.interrupted && m.ops > 0)
        .collect();
    let mbps: Vec<f64> = complete.iter().map(|m| m.mb_per_s).collect();
    let iops: Vec<f64> = complete.iter().map(|m| m.iops).collect();
    TestResult {
        name,
        workload: workload_info(spec),
        mb_per_s: Spread::of(&mbps),
        iops: Spread::of(&iops),
        repetitions,
        skipped: None,
    }
}

/// Host name and kernel release.
pub fn host_info() -> HostInfo {
    let uname = rustix::system::uname();
    HostInfo {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
    }
}

/// Now, as RFC 3339 UTC to the second.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Starts a result of the command `payload` names; tests are added by the
/// command.
pub fn new_result(payload: Payload, target: &OpenTarget, started_at: String) -> RunResult {
    new_result_for(payload, target.info.clone(), started_at)
}

/// [`new_result`] for a target described without opening it (a directory
/// the command works in itself).
pub fn new_result_for(
    payload: Payload,
    target: crate::target::TargetInfo,
    started_at: String,
) -> RunResult {
    let identity = crate::probe::identify(std::path::Path::new(&target.path));
    RunResult {
        schema_version: SCHEMA_VERSION,
        iocurve_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        host: host_info(),
        target,
        tests: Vec::new(),
        cpu_load: None,
        interrupted: false,
        error: None,
        device_identity: Some(identity),
        payload,
    }
}

/// The message of an I/O failure in the middle of a run, with the fix.
pub fn io_failure_message(e: &IoError) -> String {
    let hint = match e.error.raw_os_error() {
        Some(libc::EIO) => {
            "the device reported an error: check `dmesg`; the medium or its connection may be failing"
        }
        Some(libc::ENOSPC) => "out of space: free some space or measure a smaller --span",
        Some(libc::EINVAL) => {
            "the kernel refused the transfer (alignment or size): try --buffered or a multiple of the logical block size"
        }
        Some(libc::ENODEV) | Some(libc::ENXIO) => "the device disappeared (unplugged or reset)",
        Some(libc::EROFS) => {
            "the device became read-only (write-protect, or the kernel remounted it after errors)"
        }
        _ => "the device or the system refused the transfer",
    };
    format!("{}: {hint}", e)
}

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
    match super::report::write_for(result, path) {
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
