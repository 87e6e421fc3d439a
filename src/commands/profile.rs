//! `iocurve profile`: the main job. Four CrystalDiskMark-style rows, read
//! and write, each repeated; the test area prepared first; sizes and times
//! adapted so slow cards and fast drives both finish in a minute or two.
//! The plan and its measuring live in [`crate::workload::profile`].

use crate::cli::ProfileArgs;
use crate::cli::config::{DEFAULT_AREA, ProfileConfig};
use crate::output::Output;
use crate::report::progress;
use crate::result::config::ProfileSettings;
use crate::result::{Payload, RunResult};
use crate::store::Settings;
use crate::target::{OpenTarget, TargetKind};
use crate::workload::{parallel, profile};
use anyhow::Result;

pub fn profile(args: &ProfileArgs, store: &Settings) -> Result<i32> {
    let cfg = ProfileConfig::from_args(args)?;
    if cfg.parallel {
        return profile_parallel(&cfg, store);
    }
    let started_at = crate::probe::record::now_rfc3339();
    let area = cfg.size.unwrap_or(DEFAULT_AREA);
    // Writes are part of the profile where they are safe (see
    // `writes_may_be_asked`); elsewhere it measures reads and says why.
    let writes = !cfg.read_only && crate::target::open::writes_may_be_asked(&cfg.target);
    let offset_asked = cfg.target.offset.unwrap_or(0);
    let mut target =
        crate::target::open::open_target(&cfg.target, writes, offset_asked.saturating_add(area))?;
    let (offset, span) = profile::test_area(&cfg, &target, area)?;
    if writes {
        target.arm(&[(offset, span)])?;
    }
    match measure_all(&cfg, &mut target, (offset, span), writes, started_at) {
        Ok(mut result) => {
            crate::safety::restore::restore(&mut target, &mut result);
            let code = Output::for_target(store, &cfg.target).finish(&result);
            drop(target);
            code
        }
        Err(e) => Err(crate::safety::restore::restore_after_error(&mut target, e)),
    }
}

/// Everything after the test area is fixed: preparation, the result, the
/// rows (the caller restores preserved data whatever happens here).
fn measure_all(
    cfg: &ProfileConfig,
    target: &mut OpenTarget,
    (offset, span): (u64, u64),
    writes: bool,
    started_at: String,
) -> Result<RunResult> {
    let (span, notes) = profile::prepare_area(cfg, target, (offset, span), writes)?;
    let time = cfg.time.unwrap_or(profile::DEFAULT_TIME);
    let config = ProfileSettings {
        options: cfg.clone(),
        time_per_test_s: time.as_secs_f64(),
        ramp_per_test_s: Some(profile::ramp_for(time).as_secs_f64()),
        test_area_bytes: Some(span),
    }
    .into();
    let payload = Payload::Profile {
        config,
        parallel: None,
    };
    let mut result = crate::probe::record::new_result(payload, target, started_at);
    result.target.notes.extend(notes);
    profile::measure_rows(cfg, target, (offset, span), writes, &mut result)?;
    Ok(result)
}

/// `iocurve profile A B ... --parallel`: every row of the profile, each
/// alone and together, on the same-sized test area of every target.
fn profile_parallel(cfg: &ProfileConfig, store: &Settings) -> Result<i32> {
    let started_at = crate::probe::record::now_rfc3339();
    let writes_asked = !cfg.read_only && (cfg.target.destructive || cfg.target.preserve);
    let members = parallel::open_profile_members(cfg, writes_asked)?;
    let writes = writes_asked
        || members
            .iter()
            .all(|m| m.target.info.kind == TargetKind::Directory);
    let time = cfg.time.unwrap_or(profile::DEFAULT_TIME);
    let config = ProfileSettings {
        options: cfg.clone(),
        time_per_test_s: time.as_secs_f64(),
        ramp_per_test_s: None,
        test_area_bytes: None,
    }
    .into();
    let payload = Payload::Profile {
        config,
        parallel: None,
    };
    let mut result = crate::probe::record::new_result(payload, &members[0].target, started_at);
    let total = profile::planned(time, cfg.repeat, writes) * (members.len() as u32 + 1);
    let bar = progress::bar("parallel profile", progress::Goal::Time(total));
    let ticker = progress::ClockTicker::start(&bar);
    let report = parallel::measure_profile_rows(cfg, &members, (time, writes), &bar, &mut result)?;
    drop(ticker);
    bar.finish_and_clear();
    parallel::close(members, report, &mut result);
    Output::for_target(store, &cfg.target).finish(&result)
}
