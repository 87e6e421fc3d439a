//! `iocurve stream`: a fixed schedule of reads or writes, scored against
//! deadlines (see [`crate::workload::stream`]).

use super::common;
use crate::cli::apps::StreamArgs;
use crate::cli::config::{DEFAULT_AREA, TargetConfig, resolve_region, target_config};
use crate::cli::options::StreamDirection;
use crate::engine::EngineKind;
use crate::error::usage;
use crate::result::Payload;
use crate::result::apps::{FindMaxReport, StreamReport};
use crate::result::config::StreamSettings;
use crate::target::scratch::FillPlan;
use crate::target::{IoMode, OpenTarget};
use crate::workload::stream::{self, OpKindName, StreamOutcome, StreamPlan, StreamTarget};
use crate::workload::{Pattern, cpuload, interrupt};
use anyhow::Result;
use std::sync::atomic::Ordering;

/// Default rate when neither --rate nor --fps is given: 5 MB/s.
const DEFAULT_RATE: f64 = 5e6;
/// Smallest region a directory target's scratch file gets.
const MIN_AREA: u64 = 64 << 20;
/// `--find-max`: most doublings, then bisection steps.
const MAX_DOUBLINGS: u32 = 14;
const REFINE_STEPS: u32 = 5;

pub fn stream(args: &StreamArgs) -> Result<i32> {
    let tcfg = target_config(&args.target)?;
    check_engine(&tcfg)?;
    let (chunk, rate) = chunk_and_rate(args)?;
    let kind = match args.rw {
        StreamDirection::Write => OpKindName::Write,
        StreamDirection::Read => OpKindName::Read,
    };
    let started_at = common::now_rfc3339();
    let area = (rate * args.time.as_secs_f64()).clamp(MIN_AREA as f64, DEFAULT_AREA as f64) as u64;
    let (mut target, offset, span) = open_region(&tcfg, kind == OpKindName::Write, area, chunk)?;
    if kind == OpKindName::Write {
        target.arm(&[(offset, span)])?;
    }
    let base = StreamPlan {
        kind,
        chunk: chunk as u32,
        period_ns: 0,
        deadline_ns: 0,
        requests: 0,
        offset,
        span,
    };
    let load = cpuload::start_if(args.load.cpu_load);
    let trial = |rate: f64| run_at(&target, base, rate, args, tcfg.seed);
    let (outcome, find_max, error) = if args.find_max {
        search(rate, trial)
    } else {
        let (o, e) = trial(rate);
        (o, None, e)
    };
    let cpu_load = load.map(cpuload::CpuLoad::stop);
    let config = StreamSettings {
        target: tcfg.clone(),
        rw: args.rw,
        chunk,
        rate_bytes_per_s: rate,
        fps: args.fps,
        deadline_ns: args.deadline.map(|d| d.as_nanos() as u64),
        time_ns: args.time.as_nanos() as u64,
        find_max: args.find_max,
        offset,
        span,
        cpu_load: args.load.cpu_load,
    }
    .into();
    let stream = StreamReport {
        direction: args.rw.as_str().to_string(),
        fps: args.fps,
        outcome,
        find_max,
    };
    let mut result = common::new_result(Payload::Stream { config, stream }, &target, started_at);
    result.cpu_load = cpu_load;
    result.error = error;
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    common::restore(&mut target, &mut result);
    let code = common::finish(&result, tcfg.json);
    drop(target);
    code
}

/// The stream runs with the `sync` engine only: one request at a time, as a
/// player reads.
fn check_engine(tcfg: &TargetConfig) -> Result<()> {
    if tcfg.engine == Some(EngineKind::Uring) {
        return Err(usage(
            "stream issues one request at a time on a schedule: leave --engine at auto or pass --engine sync",
        ));
    }
    if tcfg.threads != 1 {
        return Err(usage("stream runs one schedule: leave --threads at 1"));
    }
    Ok(())
}

/// Bytes per request and bytes per second from --fps/--frame or
/// --rate/--chunk.
fn chunk_and_rate(args: &StreamArgs) -> Result<(u64, f64)> {
    let (chunk, rate) = match (args.fps, args.frame) {
        (Some(fps), Some(frame)) => {
            if !(fps > 0.0 && fps.is_finite()) {
                return Err(usage("--fps must be a positive number such as 60"));
            }
            (frame, frame as f64 * fps)
        }
        (None, Some(_)) => return Err(usage("--frame needs --fps: e.g. --fps 60 --frame 25KiB")),
        _ => (args.chunk, args.rate.unwrap_or(DEFAULT_RATE)),
    };
    if chunk == 0 || chunk > u64::from(u32::MAX / 2) {
        return Err(usage("--chunk/--frame must be above 0 and below 1 GiB"));
    }
    if args.time.is_zero() {
        return Err(usage(
            "--time 0 streams nothing: give a duration such as 10s",
        ));
    }
    Ok((chunk, rate))
}

/// Opens the target, fills a scratch file, and resolves the region.
pub(super) fn open_region(
    tcfg: &TargetConfig,
    want_write: bool,
    area: u64,
    block: u64,
) -> Result<(OpenTarget, u64, u64)> {
    let scratch_size = tcfg
        .offset
        .unwrap_or(0)
        .saturating_add(tcfg.span.unwrap_or(area));
    let mut target = common::open_target(tcfg, want_write, scratch_size)?;
    let direct = target.info.mode == IoMode::Direct;
    if target.scratch().is_some() && !want_write {
        let fill = FillPlan {
            offset: 0,
            bytes: scratch_size,
            min_bytes: scratch_size,
            time_limit: None,
            pattern: Pattern::Random,
            seed: tcfg.seed ^ 0x5eed,
        };
        common::prepare(&mut target, fill, false)?;
    }
    let (offset, span) = resolve_region(
        tcfg.offset,
        tcfg.span,
        target.info.size_bytes,
        &target.info.path,
        block,
        u64::from(target.info.logical_block_size),
        direct,
    )?;
    Ok((target, offset, span))
}

/// One stream at `rate` bytes per second; the error message when a
/// transfer failed.
fn run_at(
    target: &OpenTarget,
    base: StreamPlan,
    rate: f64,
    args: &StreamArgs,
    seed: u64,
) -> (StreamOutcome, Option<String>) {
    let period_ns = ((f64::from(base.chunk) / rate * 1e9) as u64).max(1);
    let plan = StreamPlan {
        period_ns,
        deadline_ns: args.deadline.map_or(period_ns, |d| d.as_nanos() as u64),
        requests: (args.time.as_nanos() as u64).div_ceil(period_ns).max(1),
        ..base
    };
    if target.info.mode == IoMode::Buffered && base.kind == OpKindName::Read {
        // A buffered stream must start from the device, not from pages an
        // earlier trial (or the preparation pass) left in memory.
        let mut warnings = Vec::new();
        crate::workload::runner::evict_region(target.fd(), base.offset, base.span, &mut warnings);
        for w in warnings {
            eprintln!("warning: {w}");
        }
    }
    let on = match target.sim() {
        Some(device) => StreamTarget::Sim(device),
        None => StreamTarget::Fd {
            fd: target.fd(),
            align: target.align,
        },
    };
    let (outcome, error) = stream::run(on, plan, seed, interrupt::stop_flag());
    (outcome, error.map(|e| common::io_failure_message(&e)))
}

type Trial<'a> = dyn Fn(f64) -> (StreamOutcome, Option<String>) + 'a;

/// `--find-max`: the first trial is the asked rate, reported as the outcome.
fn search(
    rate: f64,
    trial: impl Fn(f64) -> (StreamOutcome, Option<String>),
) -> (StreamOutcome, Option<FindMaxReport>, Option<String>) {
    let trial: &Trial = &trial;
    let mut trials: Vec<StreamOutcome> = Vec::new();
    let mut error = None;
    let (best, _) = stream::find_max(rate, MAX_DOUBLINGS, REFINE_STEPS, |r| {
        if error.is_some() || interrupt::stop_flag().load(Ordering::Relaxed) {
            return None;
        }
        let (o, e) = trial(r);
        let clean = o.misses == 0 && o.requests_done == o.requests_planned;
        trials.push(o);
        error = e;
        Some(clean && error.is_none())
    });
    let outcome = trials.first().cloned().unwrap_or_else(|| trial(rate).0);
    let report = FindMaxReport {
        max_rate_mb_s: best / 1e6,
        trials,
    };
    (outcome, Some(report), error)
}
