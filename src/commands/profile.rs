//! `iocurve profile`: the main job. Four CrystalDiskMark-style rows, read
//! and write, each repeated; the test area prepared first; sizes and times
//! adapted so slow cards and fast drives both finish in a minute or two.

use super::common;
use crate::cli::ProfileArgs;
use crate::cli::config::{DEFAULT_AREA, ProfileConfig, choose_engine, resolve_region};
use crate::error::usage;
use crate::report::progress;
use crate::result::Payload;
use crate::result::config::ProfileSettings;
use crate::target::scratch::FillPlan;
use crate::target::{IoMode, TargetKind};
use crate::units::format_size;
use crate::workload::profile::{self, ROWS};
use crate::workload::{MeasureSpec, Pattern, SpecError, SpecRequest, interrupt};
use anyhow::Result;
use std::sync::atomic::Ordering;

/// The smallest test area: two 1 MiB blocks.
const MIN_AREA: u64 = 2 << 20;

pub fn profile(args: &ProfileArgs) -> Result<i32> {
    let cfg = ProfileConfig::from_args(args)?;
    if cfg.parallel {
        return super::parallel::profile(&cfg);
    }
    let started_at = common::now_rfc3339();
    let area = cfg.size.unwrap_or(DEFAULT_AREA);
    // Writes are part of the profile where they are safe (see
    // `writes_may_be_asked`); elsewhere it measures reads and says why.
    let writes = !cfg.read_only && common::writes_may_be_asked(&cfg.target);
    let offset_asked = cfg.target.offset.unwrap_or(0);
    let mut target = common::open_target(&cfg.target, writes, offset_asked.saturating_add(area))?;
    let size = target.info.size_bytes;
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
    let direct = target.info.mode == IoMode::Direct;
    let (offset, span) = resolve_region(
        cfg.target.offset,
        Some(span_asked),
        size,
        &target.info.path,
        1 << 20,
        u64::from(target.info.logical_block_size),
        direct,
    )?;
    if span / (1 << 20) < u64::from(cfg.target.threads) {
        return Err(usage(format!(
            "--threads {} needs a test area of at least {} MiB (one 1 MiB block per sequential job): use fewer threads or a larger --span",
            cfg.target.threads, cfg.target.threads
        )));
    }
    if writes {
        target.arm(&[(offset, span)])?;
    }
    match measure_all(&cfg, &mut target, offset, span, writes, started_at) {
        Ok(mut result) => {
            common::restore(&mut target, &mut result);
            let code = common::finish(&result, cfg.target.json);
            drop(target);
            code
        }
        Err(e) => Err(common::restore_after_error(&mut target, e)),
    }
}

/// Everything after the test area is fixed: preparation, the rows, the
/// result (the caller restores preserved data whatever happens here).
fn measure_all(
    cfg: &ProfileConfig,
    target: &mut crate::target::OpenTarget,
    offset: u64,
    mut span: u64,
    writes: bool,
    started_at: String,
) -> Result<crate::result::RunResult> {
    let mut notes = Vec::new();
    let fill = FillPlan {
        offset,
        bytes: span,
        min_bytes: profile::PREP_MIN_BYTES.min(span),
        time_limit: Some(profile::PREP_TIME_LIMIT),
        pattern: Pattern::Random,
        seed: cfg.target.seed ^ 0x5eed,
    };
    // A simulated card has no medium to fill: its timing does not depend
    // on what its blocks hold, and it has no read pass to wake up from.
    let simulated = target.info.kind == TargetKind::Simulated;
    match common::prepare(target, fill, writes && !simulated)? {
        None if simulated => {}
        Some(written) if written < span => {
            span = written / (1 << 20) * (1 << 20);
            let why = match crate::workload::interrupt::stop_flag()
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                true => "the preparation pass was interrupted".to_string(),
                false => format!(
                    "the preparation pass stopped after {} s on this slow device",
                    profile::PREP_TIME_LIMIT.as_secs()
                ),
            };
            notes.push(format!("test area cut to {}: {why}", format_size(span)));
        }
        Some(_) => {}
        None => {
            // Nothing may be written: a discarded read pass instead wakes the
            // device (spin-up, power saving) before anything is counted.
            let _ = common::measure(
                target,
                &warm_up_spec(cfg, offset, span)?,
                "preparing (read)",
                None,
            );
            notes.push("test area not written first (reads only): an SSD may answer unwritten or trimmed blocks without reading the medium".into());
        }
    }
    let time = cfg.time.unwrap_or(profile::DEFAULT_TIME);
    let ramp = profile::ramp_for(time);
    let config = ProfileSettings {
        options: cfg.clone(),
        time_per_test_s: time.as_secs_f64(),
        ramp_per_test_s: Some(ramp.as_secs_f64()),
        test_area_bytes: Some(span),
    }
    .into();
    let payload = Payload::Profile {
        config,
        parallel: None,
    };
    let mut result = common::new_result(payload, target, started_at);
    result.target.notes.extend(notes);
    let total = profile::planned(time, cfg.repeat, writes);
    let overall = progress::bar("profile", progress::Goal::Time(total));
    let ticker = progress::ClockTicker::start(&overall);
    let skip_reason = (!writes).then(|| {
        if cfg.read_only {
            "write tests skipped (--read-only)".to_string()
        } else {
            common::writes_skipped_because(target)
        }
    });
    'rows: for row in ROWS {
        for write in [false, true] {
            let rw = row.rw(write);
            let spec = MeasureSpec::new(SpecRequest {
                rw,
                mix_read_percent: 0,
                block_size: row.block_size,
                queue_depth: row.queue_depth,
                threads: cfg.target.threads,
                engine: choose_engine(cfg.target.engine, row.queue_depth)?,
                offset,
                span,
                align: row.block_size,
                size: None,
                time: Some(time),
                ramp: Some(ramp),
                pattern: Pattern::Random,
                seed: cfg.target.seed,
                seed_given: true,
                verify: false,
                io: cfg.target.io_mode,
            })?;
            if write && !writes {
                let mut skipped = common::test_result(row.name.to_string(), &spec, Vec::new());
                skipped.skipped = skip_reason.clone();
                result.tests.push(skipped);
                continue;
            }
            let (test, error) =
                common::measure_repeated(target, &spec, row.name, cfg.repeat, Some(&overall));
            result.tests.push(test);
            if let Some(e) = error {
                result.error = Some(e);
                break 'rows;
            }
            if interrupt::stop_flag().load(Ordering::Relaxed) {
                break 'rows;
            }
        }
    }
    drop(ticker);
    overall.finish_and_clear();
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    Ok(result)
}

/// The discarded read pass of a read-only profile: 1 s of sequential reads.
fn warm_up_spec(cfg: &ProfileConfig, offset: u64, span: u64) -> Result<MeasureSpec, SpecError> {
    MeasureSpec::new(SpecRequest {
        rw: crate::workload::Rw::Read,
        mix_read_percent: 0,
        block_size: 1 << 20,
        queue_depth: 1,
        threads: 1,
        engine: crate::engine::EngineKind::Sync,
        offset,
        span,
        align: 1 << 20,
        size: None,
        time: Some(std::time::Duration::from_secs(1)),
        ramp: None,
        pattern: Pattern::Random,
        seed: cfg.target.seed,
        seed_given: true,
        verify: false,
        io: cfg.target.io_mode,
    })
}
