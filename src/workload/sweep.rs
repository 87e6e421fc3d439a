//! The measuring of `iocurve curve`: every target, every pattern, every
//! transfer size, each point repeated, in an order that keeps related
//! points close in time.
//!
//! Sizes O_DIRECT cannot transfer (not a multiple of the logical block) are
//! measured through the page cache the way an application would issue them,
//! together with their aligned neighbours measured the same way, so that the
//! alignment penalty compares like with like. They go to a section of their
//! own (`CurveSeries::unaligned`), never into the O_DIRECT series: a page
//! cache figure drawn beside an O_DIRECT one looks many times faster for
//! reasons that have nothing to do with alignment. What the points say is
//! read by [`crate::analysis::curve_reading`].

use crate::analysis::curve as model;
use crate::analysis::curve_reading::analyse;
use crate::interrupt;
use crate::medium::MeasureTarget;
use crate::medium::OpenTarget;
use crate::probe::interface_of;
use crate::result::TargetKind;
use crate::result::{CurvePoint, CurveReport, CurveSeries, RunResult, TestResult};
use crate::units::format_size;
use crate::vocab::config::{
    CurveConfig, DEFAULT_AREA, TargetConfig, default_sizes, resolve_region,
};
use crate::vocab::options::IoMode;
use crate::vocab::{Pattern, Rw};
use crate::workload::prepare::{PREP_TIME_LIMIT, capped_fill};
use crate::workload::{MeasureSpec, SpecError, SpecRequest};
use anyhow::Result;
use indicatif::ProgressBar;
use std::fs::File;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn stopped() -> bool {
    interrupt::stop_flag().load(Ordering::Relaxed)
}

/// One target of the curve, opened, with the region measured on it.
pub struct CurveTarget {
    pub cfg: TargetConfig,
    pub target: OpenTarget,
    pub region: (u64, u64),
}

/// An upper bound for the ETA: every pattern, 16 sizes, each repeated.
pub fn planned_time(cfg: &CurveConfig) -> Duration {
    let sizes = cfg.sizes.as_ref().map_or(16, Vec::len) as u32;
    (cfg.time + cfg.ramp)
        * (sizes * cfg.repeat * cfg.patterns.len() as u32 * cfg.targets.len() as u32)
}

fn writes_allowed(cfg: &CurveConfig, target_cfg: &TargetConfig) -> bool {
    cfg.patterns.iter().any(|p| p.writes()) && crate::medium::open::writes_may_be_asked(target_cfg)
}

/// Opens every target and checks its region before anything is measured,
/// so a typo in the third target costs no measuring time.
pub fn open_all(cfg: &CurveConfig) -> Result<Vec<CurveTarget>> {
    let mut opened = Vec::new();
    for path in &cfg.targets {
        let mut target_cfg = cfg.target.clone();
        target_cfg.path = path.clone();
        let target = open(cfg, &target_cfg)?;
        let region = region_of(cfg, &target_cfg, &target)?;
        opened.push(CurveTarget {
            cfg: target_cfg,
            target,
            region,
        });
    }
    Ok(opened)
}

fn open(cfg: &CurveConfig, target_cfg: &TargetConfig) -> Result<OpenTarget> {
    let area = target_cfg
        .offset
        .unwrap_or(0)
        .saturating_add(target_cfg.span.unwrap_or(DEFAULT_AREA));
    crate::medium::open::open_target(target_cfg, writes_allowed(cfg, target_cfg), area)
}

/// The region measured on a target: `--offset`/`--span`, checked against
/// its size and the smallest size of the sweep.
fn region_of(
    cfg: &CurveConfig,
    target_cfg: &TargetConfig,
    target: &OpenTarget,
) -> Result<(u64, u64)> {
    let lbs = u64::from(target.info.logical_block_size);
    let direct = target.info.mode == IoMode::Direct;
    let sizes = cfg.sizes.clone().unwrap_or_else(|| default_sizes(lbs));
    let smallest = *sizes.first().expect("sizes are never empty");
    let aligned = direct && smallest.is_multiple_of(lbs);
    resolve_region(
        target_cfg.offset,
        target_cfg.span,
        target.info.size_bytes,
        &target.info.path,
        smallest,
        if aligned { lbs } else { 1 },
        aligned,
    )
}

/// Sweeps the targets one after the other, each preserved before its
/// preparation pass and restored after its sweep; stops at the first I/O
/// failure (the result's error) or a stop request. Returns the series and
/// the targets measured; crossovers are left to the caller.
pub fn sweep_all(
    cfg: &CurveConfig,
    opened: &mut [CurveTarget],
    result: &mut RunResult,
    bar: &ProgressBar,
) -> Result<CurveReport> {
    let mut report = CurveReport::default();
    for one in opened.iter_mut() {
        // Saved before the preparation pass, which writes too.
        if writes_allowed(cfg, &one.cfg) {
            one.target.arm(&[one.region])?;
        }
        let swept = sweep_target(cfg, one, result, &mut report, bar);
        let error = match swept {
            Ok(error) => error,
            Err(e) => {
                return Err(crate::medium::restore::restore_after_error(
                    &mut one.target,
                    e,
                ));
            }
        };
        crate::medium::restore::restore(&mut one.target, result);
        report.targets.push(one.target.info.clone());
        if let Some(e) = error {
            result.error = Some(e);
            break;
        }
        if stopped() {
            break;
        }
    }
    Ok(report)
}

/// The result describes the first target (with the notes that restoring
/// the others added to it).
pub fn adopt_first_target(result: &mut RunResult, report: &CurveReport) {
    if let Some(first) = report.targets.first() {
        let restored: Vec<crate::result::Caveat> = result
            .target
            .notes
            .iter()
            .filter(|n| !first.notes.contains(n))
            .cloned()
            .collect();
        result.target = first.clone();
        result.target.notes.extend(restored);
    }
}

/// Fills the region (cut short on a slow device; returns the span left)
/// and refuses sizes a simulated card cannot transfer.
fn prepare_target(
    cfg: &CurveConfig,
    one: &mut CurveTarget,
    sizes: &[u64],
    smallest: u64,
) -> Result<u64> {
    let (offset, mut span) = one.region;
    let fill = capped_fill(offset, span, one.cfg.seed);
    // A simulated card has no medium to fill; its timing does not depend
    // on what its blocks hold.
    let simulated = one.target.info.kind == TargetKind::Simulated;
    let fill_too = writes_allowed(cfg, &one.cfg) && !simulated;
    if let Some(written) = crate::workload::prepare::prepare(&mut one.target, fill, fill_too)? {
        if written < span {
            span = (written / (1 << 20) * (1 << 20)).max(smallest);
            one.target.info.notes.push(crate::result::Caveat::AreaCut {
                span_bytes: span,
                by: crate::result::CutBy::TimeLimit {
                    limit_s: PREP_TIME_LIMIT.as_secs(),
                },
            });
        }
    }
    if simulated && sizes.iter().any(|s| !s.is_multiple_of(512)) {
        return Err(crate::error::usage(
            "a simulated card transfers whole 512-byte sectors: give --sizes that are multiples of 512",
        ));
    }
    Ok(span)
}

/// Measures every pattern of one target; returns the message of an I/O
/// failure that ended it early.
fn sweep_target(
    cfg: &CurveConfig,
    one: &mut CurveTarget,
    result: &mut RunResult,
    report: &mut CurveReport,
    bar: &ProgressBar,
) -> Result<Option<String>> {
    let lbs = u64::from(one.target.info.logical_block_size);
    let direct = one.target.info.mode == IoMode::Direct;
    let sizes = cfg.sizes.clone().unwrap_or_else(|| default_sizes(lbs));
    let smallest = *sizes.first().expect("sizes are never empty");
    let span = prepare_target(cfg, one, &sizes, smallest)?;
    let target = &one.target;
    let buffered_file = if direct && sizes.iter().any(|s| !s.is_multiple_of(lbs)) {
        Some(target.reopen_buffered()?)
    } else {
        None
    };
    let interface = target.info.device.as_ref().and_then(interface_of);
    let max_transfer = target
        .info
        .device
        .as_ref()
        .and_then(|d| d.max_transfer_bytes());
    let writes = writes_allowed(cfg, &one.cfg);
    let ctx = SweepContext {
        cfg,
        target_cfg: &one.cfg,
        target,
        buffered_file: buffered_file.as_ref(),
        offset: one.region.0,
        span,
        lbs,
        direct,
    };
    for &pattern in &cfg.patterns {
        let mut series = empty_series(target, pattern, cfg.queue_depth, interface.clone());
        if pattern.writes() && !writes {
            series.skipped = Some(crate::medium::open::writes_skipped_because(target));
            report.series.push(series);
            continue;
        }
        let error = measure_series(&ctx, pattern, &sizes, &mut series, result, bar);
        analyse(&mut series, max_transfer);
        report.series.push(series);
        if error.is_some() || stopped() {
            return Ok(error);
        }
    }
    Ok(None)
}

struct SweepContext<'a> {
    cfg: &'a CurveConfig,
    target_cfg: &'a TargetConfig,
    target: &'a OpenTarget,
    buffered_file: Option<&'a File>,
    offset: u64,
    span: u64,
    lbs: u64,
    direct: bool,
}

fn empty_series(
    target: &OpenTarget,
    pattern: Rw,
    qd: u32,
    interface: Option<crate::probe::Interface>,
) -> CurveSeries {
    CurveSeries {
        interface,
        ..CurveSeries::unread(
            target.info.path.clone(),
            pattern,
            qd,
            target.info.logical_block_size,
            Vec::new(),
        )
    }
}
/// Where a measured size goes, and how it is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A point of the series, measured the way the target is opened.
    Series,
    /// A size O_DIRECT cannot transfer, through the page cache.
    Unaligned,
    /// An aligned neighbour of an unaligned size, through the page cache.
    Neighbour,
}

/// The order of measurement: the series' sizes, then (on an O_DIRECT
/// target) the unaligned section by size, each unaligned size between its
/// neighbours, so that the section's points are measured close in time.
fn measurement_plan(sizes: &[u64], direct: bool, lbs: u64) -> Vec<(u64, Role)> {
    if !direct {
        return sizes.iter().map(|&s| (s, Role::Series)).collect();
    }
    let aligned = |s: &u64| s.is_multiple_of(lbs.max(1));
    let mut section: Vec<(u64, Role)> = sizes
        .iter()
        .filter(|s| !aligned(s))
        .map(|&s| (s, Role::Unaligned))
        .chain(
            model::aligned_neighbours(sizes, lbs)
                .into_iter()
                .map(|s| (s, Role::Neighbour)),
        )
        .collect();
    section.sort_by_key(|&(s, _)| s);
    section.dedup_by_key(|&mut (s, _)| s);
    sizes
        .iter()
        .filter(|s| aligned(s))
        .map(|&s| (s, Role::Series))
        .chain(section)
        .collect()
}

/// Measures the sizes of one pattern, then its unaligned section. Sizes
/// larger than the region are left out.
fn measure_series(
    ctx: &SweepContext<'_>,
    pattern: Rw,
    sizes: &[u64],
    series: &mut CurveSeries,
    result: &mut RunResult,
    bar: &ProgressBar,
) -> Option<String> {
    // (size, seconds per request, buffered) of the last point, to foresee
    // slow ones among points measured the same way.
    let mut last: Option<(u64, f64, bool)> = None;
    for (size, role) in measurement_plan(sizes, ctx.direct, ctx.lbs) {
        if size > ctx.span {
            continue;
        }
        let buffered = !ctx.direct || role != Role::Series;
        let ramp = ramp_for_point(last, size, buffered, ctx.cfg.ramp);
        let spec = match point_spec(ctx, pattern, size, buffered, ramp) {
            Ok(spec) => spec,
            Err(e) => return Some(e.to_string()),
        };
        let name = format!(
            "{} {} {}",
            ctx.target.info.path,
            pattern.name(),
            format_size(size)
        );
        let (test, error) = measure_point(ctx, &spec, &name, bar);
        if let Some(iops) = test.iops.filter(|i| i.median > 0.0) {
            last = Some((size, 1.0 / iops.median, buffered));
        }
        let point = curve_point(
            &test,
            size,
            buffered,
            role == Role::Neighbour,
            result.tests.len(),
        );
        match role {
            Role::Series => series.points.push(point),
            Role::Unaligned | Role::Neighbour => series.unaligned.push(point),
        }
        for w in test.repetitions.iter().flat_map(|m| &m.warnings) {
            if !series.warnings.iter().any(|(s, x)| *s == size && x == w) {
                series.warnings.push((size, w.clone()));
            }
        }
        result.tests.push(test);
        if error.is_some() || interrupt::stop_flag().load(Ordering::Relaxed) {
            return error;
        }
    }
    None
}

/// The warm-up of a point, given the last point measured the same way
/// `(size, seconds per request, buffered)`: none when one request of this
/// size is foreseen to outlast it (on a slow card one 16 MiB request can;
/// a warm-up of one request is only a slower point).
fn ramp_for_point(
    last: Option<(u64, f64, bool)>,
    size: u64,
    buffered: bool,
    ramp: Duration,
) -> Option<Duration> {
    match last.filter(|&(s, _, b)| s < size && b == buffered) {
        Some((prev_size, prev_s, _))
            if prev_s * size as f64 / prev_size as f64 >= ramp.as_secs_f64() =>
        {
            None
        }
        _ => Some(ramp),
    }
}

fn point_spec(
    ctx: &SweepContext<'_>,
    rw: Rw,
    size: u64,
    buffered: bool,
    ramp: Option<Duration>,
) -> Result<MeasureSpec, SpecError> {
    // Buffered reads must not wrap around the region: the second lap would
    // come from the page cache.
    let cap = if buffered && rw.reads() {
        ctx.cfg.point_bytes.min(ctx.span)
    } else {
        ctx.cfg.point_bytes
    };
    let budget = (cap.max(size) / size) * size;
    MeasureSpec::new(SpecRequest {
        rw,
        mix_read_percent: 0,
        block_size: size,
        queue_depth: ctx.cfg.queue_depth,
        threads: ctx.target_cfg.threads,
        engine: ctx.cfg.engine,
        sqpoll: ctx.target_cfg.sqpoll,
        offset: ctx.offset,
        span: ctx.span,
        align: size,
        size: Some(budget),
        time: Some(ctx.cfg.time),
        ramp,
        pattern: Pattern::Random,
        seed: ctx.target_cfg.seed,
        seed_given: true,
        verify: false,
        io: match buffered {
            true => IoMode::Buffered,
            false => IoMode::Direct,
        },
    })
}

/// Measures one point through the O_DIRECT descriptor or the buffered one.
fn measure_point(
    ctx: &SweepContext<'_>,
    spec: &MeasureSpec,
    name: &str,
    bar: &ProgressBar,
) -> (TestResult, Option<String>) {
    match (spec.buffered() && ctx.direct, ctx.buffered_file) {
        (true, Some(file)) => {
            let mt = MeasureTarget {
                fd: file.as_fd(),
                align: ctx.target.align,
                device: ctx.target.info.device.as_ref(),
                sim: None,
            };
            crate::workload::repeat::measure_repeated_on(&mt, spec, name, ctx.cfg.repeat, Some(bar))
        }
        _ => crate::workload::repeat::measure_repeated(
            ctx.target,
            spec,
            name,
            ctx.cfg.repeat,
            Some(bar),
        ),
    }
}

fn curve_point(
    test: &TestResult,
    size: u64,
    buffered: bool,
    reference: bool,
    index: usize,
) -> CurvePoint {
    let median_rep = test
        .repetitions
        .iter()
        .filter_map(|m| m.latency.map(|l| (m.mb_per_s, l)))
        .min_by(|a, b| {
            let target = test.mb_per_s.map_or(0.0, |s| s.median);
            (a.0 - target).abs().total_cmp(&(b.0 - target).abs())
        });
    CurvePoint {
        size,
        buffered,
        reference,
        mb_per_s: test.mb_per_s,
        iops: test.iops,
        p50_ns: median_rep.map(|(_, l)| l.p50_ns),
        p99_ns: median_rep.map(|(_, l)| l.p99_ns),
        model_ratio: None,
        test: index,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unaligned_sizes_are_measured_apart_between_their_neighbours() {
        let plan = measurement_plan(&[512, 768, 1024, 1280, 2048, 4096], true, 512);
        assert_eq!(
            plan,
            vec![
                (512, Role::Series),
                (1024, Role::Series),
                (2048, Role::Series),
                (4096, Role::Series),
                (512, Role::Neighbour),
                (768, Role::Unaligned),
                (1024, Role::Neighbour),
                (1280, Role::Unaligned),
                (2048, Role::Neighbour),
            ]
        );
        // Through the page cache everything is one series already.
        assert!(
            measurement_plan(&[512, 768, 1024], false, 512)
                .iter()
                .all(|&(_, r)| r == Role::Series)
        );
    }

    #[test]
    fn a_point_whose_one_request_outlasts_the_warm_up_has_none() {
        let ramp = Duration::from_millis(500);
        // 4 KiB took 0.1 s: 64 KiB is foreseen at 1.6 s, past the warm-up.
        let last = Some((4096, 0.1, false));
        assert_eq!(ramp_for_point(last, 65536, false, ramp), None);
        // 8 KiB is foreseen at 0.2 s: it keeps its warm-up.
        assert_eq!(ramp_for_point(last, 8192, false, ramp), Some(ramp));
        // A point measured another way, or a smaller one, foresees nothing.
        assert_eq!(ramp_for_point(last, 65536, true, ramp), Some(ramp));
        assert_eq!(ramp_for_point(last, 2048, false, ramp), Some(ramp));
        assert_eq!(ramp_for_point(None, 65536, false, ramp), Some(ramp));
    }
}
