//! The `profile` plan: CrystalDiskMark's rows (by default SEQ1M Q8T1,
//! SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; the `--preset`s of CrystalDiskMark 8
//! and KDiskMark, or any `--tests`), each read and written, each repeated.
//!
//! Every measurement is bounded by time, not bytes, so a slow SD card and a
//! fast NVMe drive finish in comparable wall time: 24 measurements of
//! 1.5 s plus a 0.25 s warm-up make about 42 s, and the preparation pass that
//! fills the test area is cut off after 15 s (the area shrinks to what was
//! written, never below 64 MiB).
//!
//! Besides the plan, the steps that carry it out on an opened target: the
//! test area, its preparation (or a discarded read pass when nothing may be
//! written) and the rows measured in order.

use crate::error::usage;
use crate::interrupt;
use crate::live::progress;
use crate::medium::OpenTarget;
use crate::result::TargetKind;
use crate::result::{Caveat, RunResult};
use crate::units::format_size;
use crate::vocab::Pattern;
use crate::vocab::Rw;
use crate::vocab::config::{ProfileConfig, choose_engine, resolve_region};
use crate::vocab::options::IoMode;
use crate::vocab::presets::ProfileRow;
use crate::workload::prepare::{PREP_TIME_LIMIT, capped_fill};
use crate::workload::{MeasureSpec, SpecError, SpecRequest};
use anyhow::Result;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Counted time of each measurement unless `--time` says otherwise.
pub const DEFAULT_TIME: Duration = Duration::from_millis(1500);
/// Warm-up before each measurement, as a share of its time (at most 0.25 s).
pub fn ramp_for(time: Duration) -> Duration {
    (time / 6).min(Duration::from_millis(250))
}

/// Wall time the measurements of `rows` will take, for the ETA.
pub fn planned(rows: usize, time: Duration, repeat: u32, with_writes: bool) -> Duration {
    let per = time + ramp_for(time);
    let directions = if with_writes { 2 } else { 1 };
    per * (rows as u32 * directions * repeat)
}

/// The smallest test area: two 1 MiB blocks.
const MIN_AREA: u64 = 2 << 20;

fn stopped() -> bool {
    interrupt::stop_flag().load(Ordering::Relaxed)
}

/// The test area on the opened target, `(offset, span)`: `--span`, else
/// `--size`, else the default area (or the whole target if smaller);
/// refused when too small for the rows or for `--threads`.
pub fn test_area(cfg: &ProfileConfig, target: &OpenTarget, area: u64) -> Result<(u64, u64)> {
    let size = target.info.size_bytes;
    let offset_asked = cfg.target.offset.unwrap_or(0);
    let span_asked = cfg
        .target
        .span
        .or(cfg.size)
        .unwrap_or_else(|| size.saturating_sub(offset_asked).min(area));
    if span_asked < MIN_AREA {
        return Err(usage(format!(
            "the profile's test area is {}, too small: give --span or --size of at least 2 MiB (2M)",
            format_size(span_asked)
        )));
    }
    let (offset, span) = resolve_region(
        cfg.target.offset,
        Some(span_asked),
        size,
        &target.info.path,
        1 << 20,
        u64::from(target.info.logical_block_size),
        target.info.mode == IoMode::Direct,
    )?;
    if let Some(row) = cfg
        .rows
        .iter()
        .find(|r| span / r.block_size < u64::from(r.threads))
    {
        return Err(usage(format!(
            "{row} needs a test area of at least {} (one {} block per job): use fewer threads or a larger --span",
            format_size(row.block_size * u64::from(row.threads)),
            format_size(row.block_size)
        )));
    }
    Ok((offset, span))
}

/// Prepares the test area: fills it when `writes` (cut short on a slow
/// device), else reads through it once to wake the device. Returns the
/// span measured afterwards and the notes for the result.
pub fn prepare_area(
    cfg: &ProfileConfig,
    target: &mut OpenTarget,
    (offset, span): (u64, u64),
    writes: bool,
) -> Result<(u64, Vec<Caveat>)> {
    let fill = capped_fill(offset, span, cfg.target.seed);
    // A simulated card has no medium to fill: its timing does not depend
    // on what its blocks hold, and it has no read pass to wake up from.
    let simulated = target.info.kind == TargetKind::Simulated;
    match crate::workload::prepare::prepare(target, fill, writes && !simulated)? {
        None if simulated => Ok((span, Vec::new())),
        Some(written) if written < span => {
            let span = written / (1 << 20) * (1 << 20);
            Ok((
                span,
                vec![Caveat::AreaCut {
                    span_bytes: span,
                    by: cut_reason(stopped()),
                }],
            ))
        }
        Some(_) => Ok((span, Vec::new())),
        None => {
            // Nothing may be written: a discarded read pass instead wakes the
            // device (spin-up, power saving) before anything is counted.
            let spec = warm_up_spec(cfg, offset, span)?;
            let _ = crate::workload::live::unreported(|| {
                crate::workload::repeat::measure(target, &spec, "preparing (read)", None)
            });
            Ok((span, vec![Caveat::AreaNotWritten]))
        }
    }
}

/// Why the preparation pass wrote less than the test area.
fn cut_reason(interrupted: bool) -> crate::result::CutBy {
    match interrupted {
        true => crate::result::CutBy::Interrupted,
        false => crate::result::CutBy::TimeLimit {
            limit_s: PREP_TIME_LIMIT.as_secs(),
        },
    }
}

/// The discarded read pass of a read-only profile: 1 s of sequential reads.
fn warm_up_spec(cfg: &ProfileConfig, offset: u64, span: u64) -> Result<MeasureSpec, SpecError> {
    MeasureSpec::new(SpecRequest {
        rw: Rw::Read,
        mix_read_percent: 0,
        block_size: 1 << 20,
        queue_depth: 1,
        threads: 1,
        engine: crate::vocab::options::EngineKind::Sync,
        sqpoll: false,
        offset,
        span,
        align: 1 << 20,
        size: None,
        time: Some(Duration::from_secs(1)),
        ramp: None,
        pattern: Pattern::Random,
        seed: cfg.target.seed,
        seed_given: true,
        verify: false,
        io: cfg.target.io_mode,
    })
}

/// The measurement of one row in one direction over the test area.
pub fn row_spec(
    cfg: &ProfileConfig,
    row: &ProfileRow,
    write: bool,
    (offset, span): (u64, u64),
    time: Duration,
) -> Result<MeasureSpec> {
    Ok(MeasureSpec::new(SpecRequest {
        rw: row.rw(write),
        mix_read_percent: 0,
        block_size: row.block_size,
        queue_depth: row.queue_depth,
        threads: row.threads,
        engine: choose_engine(cfg.target.engine, row.queue_depth)?,
        sqpoll: cfg.target.sqpoll,
        offset,
        span,
        align: row.block_size,
        size: None,
        time: Some(time),
        ramp: Some(ramp_for(time)),
        pattern: Pattern::Random,
        seed: cfg.target.seed,
        seed_given: true,
        verify: false,
        io: cfg.target.io_mode,
    })?)
}

/// Measures every row, read then written (a write row is recorded as
/// skipped, with the reason, when writes are not allowed), into `result`;
/// stops at the first I/O failure (the result's error) or a stop request.
pub fn measure_rows(
    cfg: &ProfileConfig,
    target: &OpenTarget,
    area: (u64, u64),
    writes: bool,
    result: &mut RunResult,
) -> Result<()> {
    let time = cfg.time.unwrap_or(DEFAULT_TIME);
    let overall = progress::bar(
        "profile",
        progress::Goal::Time(planned(cfg.rows.len(), time, cfg.repeat, writes)),
    );
    let ticker = progress::ClockTicker::start(&overall);
    let skip_reason = (!writes).then(|| match cfg.read_only {
        true => crate::result::SkipReason::ReadOnly,
        false => crate::medium::open::writes_skipped_because(target),
    });
    'rows: for row in &cfg.rows {
        let name = row.to_string();
        for write in [false, true] {
            let spec = row_spec(cfg, row, write, area, time)?;
            if write && !writes {
                let mut skipped =
                    crate::workload::repeat::test_result(name.clone(), &spec, Vec::new());
                skipped.skipped = skip_reason.clone();
                result.tests.push(skipped);
                continue;
            }
            let (test, error) = crate::workload::repeat::measure_repeated(
                target,
                &spec,
                &name,
                cfg.repeat,
                Some(&overall),
            );
            result.tests.push(test);
            if let Some(e) = error {
                result.error = Some(e);
                break 'rows;
            }
            if stopped() {
                break 'rows;
            }
        }
    }
    drop(ticker);
    overall.finish_and_clear();
    result.interrupted = stopped();
    Ok(())
}

/// Everything after the test area is fixed: preparation, the result, the
/// rows (the caller restores preserved data whatever happens here).
/// `announce` is shown the result before the area is prepared (a slow card
/// takes a while to fill it), with the plan it will be measured by.
pub fn measure_all(
    cfg: &ProfileConfig,
    target: &mut OpenTarget,
    (offset, span): (u64, u64),
    writes: bool,
    started_at: String,
    announce: &dyn Fn(&RunResult),
) -> Result<RunResult> {
    let time = cfg.time.unwrap_or(DEFAULT_TIME);
    let mut result =
        crate::workload::record::new_result(payload(cfg, time, span), target, started_at);
    announce(&result);
    let (span, notes) = prepare_area(cfg, target, (offset, span), writes)?;
    result.payload = payload(cfg, time, span);
    result.target.notes.extend(notes);
    if stopped() {
        // Stopped while preparing: nothing measured, and an area cut short
        // may hold no whole row.
        result.interrupted = true;
        return Ok(result);
    }
    measure_rows(cfg, target, (offset, span), writes, &mut result)?;
    Ok(result)
}

/// The payload of a profile over a test area of `span` bytes.
fn payload(cfg: &ProfileConfig, time: Duration, span: u64) -> crate::result::Payload {
    let config = crate::result::config::ProfileSettings {
        options: cfg.clone(),
        time_per_test_s: time.as_secs_f64(),
        ramp_per_test_s: Some(ramp_for(time).as_secs_f64()),
        test_area_bytes: Some(span),
    }
    .into();
    crate::result::Payload::Profile {
        config,
        parallel: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::options::ProfilePreset;
    use crate::vocab::presets::{preset_rows, size_label};

    #[test]
    fn every_row_reads_then_writes_its_own_pattern() {
        let rows = preset_rows(ProfilePreset::Default);
        assert_eq!(rows[0].rw(false), Rw::Read);
        assert_eq!(rows[1].rw(true), Rw::Write);
        assert_eq!(rows[2].rw(false), Rw::RandRead);
        assert_eq!(rows[3].rw(true), Rw::RandWrite);
    }

    #[test]
    fn the_presets_are_crystaldiskmarks_rows() {
        let names = |p| {
            preset_rows(p)
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(ProfilePreset::Default),
            ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]
        );
        assert_eq!(
            names(ProfilePreset::Nvme),
            ["SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q32T16", "RND4K Q1T1"]
        );
        assert_eq!(names(ProfilePreset::Peak), ["SEQ1M Q8T1", "RND4K Q32T16"]);
        assert_eq!(
            names(ProfilePreset::RealWorld),
            ["SEQ1M Q1T1", "RND4K Q1T1"]
        );
    }

    #[test]
    fn a_size_is_named_in_its_largest_whole_binary_unit() {
        assert_eq!(size_label(4096), "4K");
        assert_eq!(size_label(128 << 10), "128K");
        assert_eq!(size_label(1 << 20), "1M");
        assert_eq!(size_label(1536), "1536B");
        assert_eq!(size_label(512), "512B");
        assert_eq!(size_label(3 << 30), "3G");
    }

    #[test]
    fn the_warm_up_is_a_sixth_of_the_time_up_to_a_quarter_second() {
        assert_eq!(
            ramp_for(Duration::from_millis(600)),
            Duration::from_millis(100)
        );
        assert_eq!(ramp_for(DEFAULT_TIME), Duration::from_millis(250));
        assert_eq!(
            ramp_for(Duration::from_secs(10)),
            Duration::from_millis(250)
        );
    }

    #[test]
    fn the_plan_counts_each_row_direction_and_repetition() {
        let per = DEFAULT_TIME + Duration::from_millis(250);
        assert_eq!(planned(4, DEFAULT_TIME, 3, true), per * 24);
        assert_eq!(planned(4, DEFAULT_TIME, 3, false), per * 12);
        assert_eq!(planned(2, DEFAULT_TIME, 1, true), per * 4);
    }

    #[test]
    fn a_cut_preparation_says_whether_it_was_interrupted_or_too_slow() {
        assert_eq!(cut_reason(true), crate::result::CutBy::Interrupted);
        assert_eq!(
            cut_reason(false),
            crate::result::CutBy::TimeLimit { limit_s: 15 }
        );
    }
}
