//! `--parallel` for `run` and `profile`: the same workload on several
//! devices, first each alone, then all at once, so the report can say
//! whether they add up (RAID 0 across cards, several disks behind one hub)
//! or whether a shared bus, hub or controller holds the sum back.
//!
//! Every device's jobs start together at a barrier for each repetition, so
//! the "together" windows overlap; each device's figure is its own, and
//! the aggregate is their sum.

use super::common;
use super::run::spec_of;
use crate::cli::config::{
    DEFAULT_AREA, ProfileConfig, RunConfig, TargetConfig, check_layout, choose_engine,
    resolve_region,
};
use crate::cli::options::ReadMethod;
use crate::error::usage;
use crate::report::progress;
use crate::result::config::ProfileSettings;
use crate::result::device::{ParallelDevice, ParallelReport, ParallelTest};
use crate::result::{Measurement, Payload, RunResult, TestResult};
use crate::target::scratch::FillPlan;
use crate::target::{IoMode, OpenTarget};
use crate::workload::profile::{self, ROWS};
use crate::workload::{MeasureSpec, Pattern, SpecRequest, interrupt};
use anyhow::Result;
use indicatif::ProgressBar;
use std::sync::Barrier;
use std::sync::atomic::Ordering;

/// One device of a parallel run.
struct Member {
    cfg: TargetConfig,
    target: OpenTarget,
    /// Region measured.
    region: (u64, u64),
}

/// Short name of a member for test names: the device or file name.
fn short(m: &Member) -> String {
    m.cfg.path.file_name().map_or_else(
        || m.target.info.path.clone(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn stopped() -> bool {
    interrupt::stop_flag().load(Ordering::Relaxed)
}

/// `iocurve run A B ... --parallel`.
pub fn run(cfg: &RunConfig) -> Result<i32> {
    if cfg.method != ReadMethod::Pread {
        return Err(usage(
            "--method mmap or stdio measures one target at a time: leave out --parallel",
        ));
    }
    let started_at = common::now_rfc3339();
    let mut members = Vec::new();
    let mut specs = Vec::new();
    for path in &cfg.targets {
        let mut one = cfg.clone();
        one.target.path = path.clone();
        let (member, spec) = open_for_run(&one)?;
        members.push(member);
        specs.push(spec);
    }
    preserve_all(&mut members, |_| cfg.rw.writes())?;
    let config = cfg.clone().into();
    let payload = Payload::Run {
        config,
        access: None,
        parallel: None,
    };
    let mut result = common::new_result(payload, &members[0].target, started_at);
    let bar = progress::bar("parallel", progress::Goal::Bytes(0));
    let name = crate::units::format_size(specs[0].block_size);
    let mut report = new_report(&members);
    let test = alone_and_together(&members, &specs, &name, cfg.repeat, &bar, &mut result);
    report.tests.push(test);
    bar.finish_and_clear();
    end(members, report, result, cfg.target.json)
}

fn new_report(members: &[Member]) -> ParallelReport {
    ParallelReport {
        targets: members.iter().map(|m| m.target.info.path.clone()).collect(),
        tests: Vec::new(),
    }
}

/// Restores every preserved member, prints and saves.
fn end(
    members: Vec<Member>,
    report: ParallelReport,
    mut result: RunResult,
    json: bool,
) -> Result<i32> {
    result.payload.set_parallel(report);
    result.interrupted = stopped();
    for m in &members[1..] {
        result.target.notes.push(format!(
            "also measured at the same time: {}",
            m.target.info.path
        ));
    }
    for mut m in members {
        common::restore(&mut m.target, &mut result);
    }
    common::finish(&result, json)
}

fn open_for_run(cfg: &RunConfig) -> Result<(Member, MeasureSpec)> {
    let writes = cfg.rw.writes();
    let area = cfg.target.offset.unwrap_or(0) + cfg.target.span.unwrap_or(DEFAULT_AREA);
    let mut target = common::open_target(&cfg.target, writes, area)?;
    let blocks = super::run::resolve_blocks(cfg, &target)?;
    let direct = target.info.mode == IoMode::Direct;
    let lb = u64::from(target.info.logical_block_size);
    let (offset, span) = resolve_region(
        cfg.target.offset,
        cfg.target.span,
        target.info.size_bytes,
        &target.info.path,
        blocks.block_size,
        lb,
        direct,
    )?;
    check_layout(cfg, blocks, span, lb, direct)?;
    let fill = FillPlan {
        offset: 0,
        bytes: offset + span,
        min_bytes: offset + span,
        time_limit: None,
        pattern: Pattern::Random,
        seed: cfg.target.seed ^ 0x5eed,
    };
    common::prepare(&mut target, fill, false)?;
    let member = Member {
        cfg: cfg.target.clone(),
        target,
        region: (offset, span),
    };
    Ok((member, spec_of(cfg, blocks, offset, span)?))
}

/// Measures `specs[i]` on `members[i]` each alone, then all at once;
/// pushes the tests into the result and returns their comparison. The
/// first I/O failure becomes the result's error.
fn alone_and_together(
    members: &[Member],
    specs: &[MeasureSpec],
    name: &str,
    repeat: u32,
    bar: &ProgressBar,
    result: &mut RunResult,
) -> ParallelTest {
    let mut alone = Vec::new();
    for (m, spec) in members.iter().zip(specs) {
        if stopped() || result.error.is_some() {
            break;
        }
        let label = format!("{name} · alone · {}", short(m));
        let (test, error) = common::measure_repeated(&m.target, spec, &label, repeat, Some(bar));
        result.error = result.error.take().or(error);
        alone.push(result.tests.len());
        result.tests.push(test);
    }
    let mut together = Vec::new();
    if !stopped() && result.error.is_none() {
        let reps = together_reps(members, specs, repeat, bar, result);
        for ((m, spec), reps) in members.iter().zip(specs).zip(reps) {
            let label = format!("{name} · together · {}", short(m));
            together.push(result.tests.len());
            result.tests.push(common::test_result(label, spec, reps));
        }
    }
    compare(
        members,
        name,
        specs[0].rw.name(),
        &alone,
        &together,
        &result.tests,
    )
}

/// Repetitions of all members at once; each repetition starts them at one
/// barrier.
fn together_reps(
    members: &[Member],
    specs: &[MeasureSpec],
    repeat: u32,
    bar: &ProgressBar,
    result: &mut RunResult,
) -> Vec<Vec<Measurement>> {
    let mut reps: Vec<Vec<Measurement>> = members.iter().map(|_| Vec::new()).collect();
    for _ in 0..repeat {
        let barrier = Barrier::new(members.len());
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = members
                .iter()
                .zip(specs)
                .map(|(m, spec)| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        common::measure(&m.target, spec, "together", Some(bar))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect()
        });
        for (i, outcome) in outcomes.into_iter().enumerate() {
            match outcome {
                Ok(Ok(m)) => reps[i].push(m),
                Ok(Err(f)) => {
                    reps[i].push(f.partial);
                    let message = common::io_failure_message(&f.error);
                    result.error.get_or_insert(message);
                }
                Err(_) => {
                    let message = "internal error: a measuring thread panicked; please report this";
                    result.error.get_or_insert(message.into());
                }
            }
        }
        if stopped() || result.error.is_some() {
            break;
        }
    }
    reps
}

fn median(tests: &[TestResult], index: Option<&usize>) -> Option<f64> {
    index.and_then(|&i| tests[i].mb_per_s).map(|s| s.median)
}

fn compare(
    members: &[Member],
    name: &str,
    rw: &str,
    alone: &[usize],
    together: &[usize],
    tests: &[TestResult],
) -> ParallelTest {
    let devices: Vec<ParallelDevice> = members
        .iter()
        .enumerate()
        .map(|(i, m)| ParallelDevice {
            target: m.target.info.path.clone(),
            alone_mb_s: median(tests, alone.get(i)),
            together_mb_s: median(tests, together.get(i)),
            tests: (
                alone.get(i).copied().unwrap_or(usize::MAX),
                together.get(i).copied().unwrap_or(usize::MAX),
            ),
        })
        .collect();
    let aggregate: f64 = devices.iter().filter_map(|d| d.together_mb_s).sum();
    let sum_alone: f64 = devices.iter().filter_map(|d| d.alone_mb_s).sum();
    let complete = devices
        .iter()
        .all(|d| d.alone_mb_s.is_some() && d.together_mb_s.is_some());
    ParallelTest {
        name: name.to_string(),
        rw: rw.to_string(),
        devices,
        aggregate_mb_s: aggregate,
        sum_alone_mb_s: sum_alone,
        efficiency: (complete && sum_alone > 0.0).then(|| aggregate / sum_alone),
    }
}

/// `iocurve profile A B ... --parallel`: every row of the profile, each
/// alone and together, on the same-sized test area of every target.
pub fn profile(cfg: &ProfileConfig) -> Result<i32> {
    let started_at = common::now_rfc3339();
    let writes_asked = !cfg.read_only && (cfg.target.destructive || cfg.target.preserve);
    let mut members = Vec::new();
    for path in &cfg.targets {
        let mut one = cfg.target.clone();
        one.path = path.clone();
        members.push(open_for_profile(cfg, one, writes_asked)?);
    }
    preserve_all(&mut members, |_| writes_asked)?;
    for i in 0..members.len() {
        if let Err(e) = fill(&mut members[i], writes_asked) {
            return Err(restore_all(members, e));
        }
    }
    let writes = writes_asked
        || members
            .iter()
            .all(|m| m.target.info.kind == crate::target::TargetKind::Directory);
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
    let mut result = common::new_result(payload, &members[0].target, started_at);
    let total = profile::planned(time, cfg.repeat, writes) * (members.len() as u32 + 1);
    let bar = progress::bar("parallel profile", progress::Goal::Time(total));
    let ticker = progress::ClockTicker::start(&bar);
    let mut report = new_report(&members);
    'rows: for row in ROWS {
        for write in [false, true] {
            if write && !writes {
                continue;
            }
            let specs: Vec<MeasureSpec> = members
                .iter()
                .map(|m| profile_spec(cfg, &row, write, m.region, time))
                .collect::<Result<_>>()?;
            let test =
                alone_and_together(&members, &specs, row.name, cfg.repeat, &bar, &mut result);
            report.tests.push(test);
            if stopped() || result.error.is_some() {
                break 'rows;
            }
        }
    }
    drop(ticker);
    bar.finish_and_clear();
    end(members, report, result, cfg.target.json)
}

fn profile_spec(
    cfg: &ProfileConfig,
    row: &profile::ProfileRow,
    write: bool,
    region: (u64, u64),
    time: std::time::Duration,
) -> Result<MeasureSpec> {
    Ok(MeasureSpec::new(SpecRequest {
        rw: row.rw(write),
        mix_read_percent: 0,
        block_size: row.block_size,
        queue_depth: row.queue_depth,
        threads: cfg.target.threads,
        engine: choose_engine(cfg.target.engine, row.queue_depth)?,
        offset: region.0,
        span: region.1,
        align: row.block_size,
        size: None,
        time: Some(time),
        ramp: Some(profile::ramp_for(time)),
        pattern: Pattern::Random,
        seed: cfg.target.seed,
        seed_given: true,
        verify: false,
        io: cfg.target.io_mode,
    })?)
}

fn open_for_profile(cfg: &ProfileConfig, target_cfg: TargetConfig, writes: bool) -> Result<Member> {
    let is_dir = target_cfg.path.is_dir();
    let area = cfg.size.unwrap_or(DEFAULT_AREA);
    let offset = target_cfg.offset.unwrap_or(0);
    let target = common::open_target(&target_cfg, writes || is_dir, offset + area)?;
    let span = target_cfg
        .span
        .or(cfg.size)
        .unwrap_or(area)
        .min(target.info.size_bytes.saturating_sub(offset))
        / (1 << 20)
        * (1 << 20);
    let (offset, span) = resolve_region(
        target_cfg.offset,
        Some(span.max(1 << 20)),
        target.info.size_bytes,
        &target.info.path,
        1 << 20,
        u64::from(target.info.logical_block_size),
        target.info.mode == IoMode::Direct,
    )?;
    Ok(Member {
        cfg: target_cfg,
        target,
        region: (offset, span),
    })
}

/// The preparation pass of a profile member (scratch files always; other
/// targets when writes are allowed).
fn fill(m: &mut Member, writes: bool) -> Result<()> {
    let plan = FillPlan {
        offset: m.region.0,
        bytes: m.region.1,
        min_bytes: m.region.1,
        time_limit: None,
        pattern: Pattern::Random,
        seed: m.cfg.seed ^ 0x5eed,
    };
    common::prepare(&mut m.target, plan, writes)?;
    Ok(())
}

/// Journals the region of every member `wants` before anything is written
/// to any; a failure puts back the journals already made.
fn preserve_all(members: &mut Vec<Member>, wants: impl Fn(&Member) -> bool) -> Result<()> {
    for i in 0..members.len() {
        if !wants(&members[i]) {
            continue;
        }
        let region = members[i].region;
        if let Err(e) = members[i].target.arm(&[region]) {
            return Err(restore_all(std::mem::take(members), e));
        }
    }
    Ok(())
}

/// Puts back every member's preserved data after `err` ended the command.
fn restore_all(members: Vec<Member>, mut err: anyhow::Error) -> anyhow::Error {
    for mut m in members {
        err = common::restore_after_error(&mut m.target, err);
    }
    err
}
