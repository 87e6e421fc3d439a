//! The measuring of `--parallel` (for `run` and `profile`): the same
//! workload on several devices, first each alone, then all at once, so the
//! report can say whether they add up or whether a shared bus, hub or
//! controller holds the sum back.
//!
//! Every device's jobs start together at a barrier for each repetition, so
//! the "together" windows overlap; each device's figure is its own, and
//! the aggregate is their sum. Every member is opened, checked and
//! preserved before anything is written to any of them.

use crate::interrupt;
use crate::medium::OpenTarget;
use crate::result::device::{ParallelDevice, ParallelReport, ParallelTest};
use crate::result::{Measurement, RunResult, TestResult};
use crate::vocab::Rw;
use crate::vocab::config::{DEFAULT_AREA, ProfileConfig, RunConfig, TargetConfig, resolve_region};
use crate::vocab::options::IoMode;
use crate::workload::MeasureSpec;
use crate::workload::profile;
use crate::workload::run_spec::{prepare_region, spec_of};
use anyhow::Result;
use indicatif::ProgressBar;
use std::sync::Barrier;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One device of a parallel run.
pub struct Member {
    pub cfg: TargetConfig,
    pub target: OpenTarget,
    /// Region measured.
    pub region: (u64, u64),
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

/// Opens, checks and prepares every target of `run --parallel`, then
/// preserves the regions a writing run touches; returns each member with
/// its spec.
pub fn open_run_members(cfg: &RunConfig) -> Result<(Vec<Member>, Vec<MeasureSpec>)> {
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
    Ok((members, specs))
}

fn open_for_run(cfg: &RunConfig) -> Result<(Member, MeasureSpec)> {
    let writes = cfg.rw.writes();
    let area = cfg.target.offset.unwrap_or(0) + cfg.target.span.unwrap_or(DEFAULT_AREA);
    let mut target = crate::medium::open::open_target(&cfg.target, writes, area)?;
    let (blocks, offset, span) = prepare_region(cfg, &mut target)?;
    let member = Member {
        cfg: cfg.target.clone(),
        target,
        region: (offset, span),
    };
    Ok((member, spec_of(cfg, blocks, offset, span)?))
}

/// Opens every target of `profile --parallel` on a same-sized test area,
/// preserves the areas when writes are asked, and fills them.
pub fn open_profile_members(cfg: &ProfileConfig, writes_asked: bool) -> Result<Vec<Member>> {
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
    Ok(members)
}

fn open_for_profile(cfg: &ProfileConfig, target_cfg: TargetConfig, writes: bool) -> Result<Member> {
    let is_dir = target_cfg.path.is_dir();
    let area = cfg.size.unwrap_or(DEFAULT_AREA);
    let offset = target_cfg.offset.unwrap_or(0);
    let target = crate::medium::open::open_target(&target_cfg, writes || is_dir, offset + area)?;
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
    let plan = crate::workload::prepare::whole_fill(m.region.0, m.region.1, m.cfg.seed);
    crate::workload::prepare::prepare(&mut m.target, plan, writes)?;
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
        err = crate::medium::restore::restore_after_error(&mut m.target, err);
    }
    err
}

/// `run A B ... --parallel`: opens every target, measures the workload on
/// each alone and then on all together, and closes them into one result.
pub fn run_all(
    cfg: &RunConfig,
    started_at: String,
    announce: &dyn Fn(&RunResult),
) -> Result<RunResult> {
    let (members, specs) = open_run_members(cfg)?;
    let payload = crate::result::Payload::Run {
        config: cfg.clone().into(),
        access: None,
        parallel: None,
    };
    let mut result = crate::workload::record::new_result(payload, &members[0].target, started_at);
    announce(&result);
    let bar = crate::live::progress::bar("parallel", crate::live::progress::Goal::Bytes(0));
    let name = crate::units::format_size(specs[0].block_size);
    let mut report = new_report(&members);
    let test = alone_and_together(&members, &specs, &name, cfg.repeat, &bar, &mut result);
    report.tests.push(test);
    bar.finish_and_clear();
    close(members, report, &mut result);
    Ok(result)
}

/// `profile --parallel`: every row of the profile on every target, each
/// alone and then all together; the members' preserved data is put back.
pub fn profile_all(
    cfg: &ProfileConfig,
    started_at: String,
    announce: &dyn Fn(&RunResult),
) -> Result<RunResult> {
    let writes_asked = !cfg.read_only && (cfg.target.destructive || cfg.target.preserve);
    let members = open_profile_members(cfg, writes_asked)?;
    let writes = writes_asked
        || members
            .iter()
            .all(|m| m.target.info.kind == crate::result::TargetKind::Directory);
    let time = cfg.time.unwrap_or(profile::DEFAULT_TIME);
    let config = crate::result::config::ProfileSettings {
        options: cfg.clone(),
        time_per_test_s: time.as_secs_f64(),
        ramp_per_test_s: None,
        test_area_bytes: None,
    }
    .into();
    let payload = crate::result::Payload::Profile {
        config,
        parallel: None,
    };
    let mut result = crate::workload::record::new_result(payload, &members[0].target, started_at);
    announce(&result);
    let total =
        profile::planned(cfg.rows.len(), time, cfg.repeat, writes) * (members.len() as u32 + 1);
    let bar =
        crate::live::progress::bar("parallel profile", crate::live::progress::Goal::Time(total));
    let ticker = crate::live::progress::ClockTicker::start(&bar);
    let report = measure_profile_rows(cfg, &members, (time, writes), &bar, &mut result)?;
    drop(ticker);
    bar.finish_and_clear();
    close(members, report, &mut result);
    Ok(result)
}

/// Records the comparison in the result, names the other members in its
/// notes and puts back every member's preserved data.
pub fn close(members: Vec<Member>, report: ParallelReport, result: &mut RunResult) {
    result.payload.set_parallel(report);
    result.interrupted = stopped();
    for m in &members[1..] {
        result
            .target
            .notes
            .push(crate::result::Caveat::AlsoMeasured {
                path: m.target.info.path.clone(),
            });
    }
    for mut m in members {
        crate::medium::restore::restore(&mut m.target, result);
    }
}

/// An empty comparison naming every member.
pub fn new_report(members: &[Member]) -> ParallelReport {
    ParallelReport {
        targets: members.iter().map(|m| m.target.info.path.clone()).collect(),
        tests: Vec::new(),
    }
}

/// Every row of the profile, read then (when `writes`) written, each alone
/// and together on every member; stops at a failure or a stop request.
pub fn measure_profile_rows(
    cfg: &ProfileConfig,
    members: &[Member],
    (time, writes): (Duration, bool),
    bar: &ProgressBar,
    result: &mut RunResult,
) -> Result<ParallelReport> {
    let mut report = new_report(members);
    for row in &cfg.rows {
        let name = row.to_string();
        for write in [false, true] {
            if write && !writes {
                continue;
            }
            let specs: Vec<MeasureSpec> = members
                .iter()
                .map(|m| profile::row_spec(cfg, row, write, m.region, time))
                .collect::<Result<_>>()?;
            let test = alone_and_together(members, &specs, &name, cfg.repeat, bar, result);
            report.tests.push(test);
            if stopped() || result.error.is_some() {
                return Ok(report);
            }
        }
    }
    Ok(report)
}

/// Measures `specs[i]` on `members[i]` each alone, then all at once;
/// pushes the tests into the result and returns their comparison. The
/// first I/O failure becomes the result's error.
pub fn alone_and_together(
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
        let (test, error) =
            crate::workload::repeat::measure_repeated(&m.target, spec, &label, repeat, Some(bar));
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
            result
                .tests
                .push(crate::workload::repeat::test_result(label, spec, reps));
        }
    }
    let paths: Vec<&str> = members
        .iter()
        .map(|m| m.target.info.path.as_str())
        .collect();
    compare(
        &paths,
        name,
        specs[0].rw,
        &indexed(&result.tests, &alone),
        &indexed(&result.tests, &together),
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
                        crate::workload::repeat::measure(&m.target, spec, "together", Some(bar))
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
                    let message = crate::engine::io_failure_message(&f.error);
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

/// A test's index in the result and its median MB/s.
type Indexed = (usize, Option<f64>);

fn indexed(tests: &[TestResult], indices: &[usize]) -> Vec<Indexed> {
    indices
        .iter()
        .map(|&i| (i, tests[i].mb_per_s.map(|s| s.median)))
        .collect()
}

/// Each device's median alone and together, their sums and the
/// efficiency: the aggregate over the sum alone, only when every device
/// has both figures. A device without a test gets index `usize::MAX`.
fn compare(
    paths: &[&str],
    name: &str,
    rw: Rw,
    alone: &[Indexed],
    together: &[Indexed],
) -> ParallelTest {
    let devices: Vec<ParallelDevice> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| ParallelDevice {
            target: path.to_string(),
            alone_mb_s: alone.get(i).and_then(|a| a.1),
            together_mb_s: together.get(i).and_then(|t| t.1),
            tests: (
                alone.get(i).map_or(usize::MAX, |a| a.0),
                together.get(i).map_or(usize::MAX, |t| t.0),
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
        rw,
        devices,
        aggregate_mb_s: aggregate,
        sum_alone_mb_s: sum_alone,
        efficiency: (complete && sum_alone > 0.0).then(|| aggregate / sum_alone),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Targets `a` and `b` read alone at 40 and 60 MB/s (tests 0 and 1),
    /// then `together`.
    fn a_and_b(together: &[Indexed]) -> ParallelTest {
        let alone = [(0, Some(40.0)), (1, Some(60.0))];
        compare(&["a", "b"], "1M", Rw::Read, &alone, together)
    }

    #[test]
    fn two_devices_that_add_up_have_an_efficiency_of_their_sum() {
        let t = a_and_b(&[(2, Some(30.0)), (3, Some(50.0))]);
        assert_eq!(t.aggregate_mb_s, 80.0);
        assert_eq!(t.sum_alone_mb_s, 100.0);
        assert_eq!(t.efficiency, Some(0.8));
        assert_eq!(t.devices[1].tests, (1, 3));
        assert_eq!(t.devices[0].target, "a");
    }

    #[test]
    fn a_device_not_measured_together_leaves_no_efficiency() {
        let t = a_and_b(&[]);
        assert_eq!(t.efficiency, None);
        assert_eq!(t.aggregate_mb_s, 0.0);
        assert_eq!(t.devices[0].tests, (0, usize::MAX));
        assert_eq!(t.devices[0].together_mb_s, None);
    }
}
