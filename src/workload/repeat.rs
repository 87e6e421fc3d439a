//! One workload measured `--repeat` times: each repetition timed by
//! [`runner::measure`](crate::workload::runner::measure) with its own
//! progress, stopped by an I/O failure or a stop request, then condensed
//! into a test with its median and range.

use crate::interrupt;
use crate::live::progress;
use crate::medium::MeasureTarget;
use crate::medium::OpenTarget;
use crate::result::{Measurement, TestResult, WorkloadInfo};
use crate::workload::MeasureSpec;
use crate::workload::gauge::{Gauge, total_bytes};
use crate::workload::live;
use crate::workload::runner;
use crate::workload::runner::MeasureFailure;
use indicatif::ProgressBar;

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
    let gauges = Gauge::many(spec.threads as usize, live::wanted());
    let work = || {
        let test = crate::result::live::LiveTest::Workload {
            rw: spec.rw,
            block_size_bytes: spec.block_size,
            queue_depth: spec.queue_depth,
            threads: spec.threads,
        };
        let measured = live::watch(test, &gauges, || {
            runner::measure(mt, spec, interrupt::stop_flag(), &gauges)
        });
        panic_if_asked();
        measured
    };
    let moved = || total_bytes(&gauges);
    let live = progress::Live {
        label,
        block: spec.block_size,
    };
    if let Some(bar) = bar {
        bar.set_message(label.to_string());
        let goal = progress::Goal::Time(std::time::Duration::ZERO);
        return progress::track(bar, goal, &moved, (live, false), work);
    }
    let goal = match (spec.size, spec.time) {
        (Some(size), None) => progress::Goal::Bytes(size),
        (_, Some(time)) => progress::Goal::Time(time + spec.ramp.unwrap_or_default()),
        (None, None) => progress::Goal::Bytes(spec.span),
    };
    let own = progress::bar(label, goal);
    let result = progress::track(&own, goal, &moved, (live, true), work);
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
                error = Some(crate::engine::io_failure_message(&failure.error));
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
        rw: spec.rw.into(),
        block_size: spec.block_size,
        queue_depth: spec.queue_depth,
        threads: spec.threads,
        engine: match spec.sqpoll {
            true => crate::result::TestEngine::UringPolled,
            false => spec.engine.into(),
        },
        offset: spec.offset,
        span: spec.span,
        mix_read_percent: spec.rw.is_mixed().then_some(spec.mix_read_percent),
        seed: spec.seed,
    }
}

/// A test from its repetitions, with median and range.
pub fn test_result(name: String, spec: &MeasureSpec, repetitions: Vec<Measurement>) -> TestResult {
    let mut test = TestResult {
        name,
        workload: workload_info(spec),
        mb_per_s: None,
        iops: None,
        repetitions,
        skipped: None,
    };
    test.refresh_spreads();
    test
}
