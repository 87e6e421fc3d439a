//! `iocurve stream`: a fixed schedule of reads or writes, scored against
//! deadlines (see [`crate::workload::stream`]).

use crate::cli::apps::StreamArgs;
use crate::cli::config::{DEFAULT_AREA, TargetConfig, target_config};
use crate::cli::options::StreamDirection;
use crate::engine::EngineKind;
use crate::error::usage;
use crate::output::Output;
use crate::result::Payload;
use crate::result::apps::StreamReport;
use crate::result::config::StreamSettings;
use crate::store::Settings;
use crate::workload::region::open_region;
use crate::workload::stream::{self, OpKindName, Schedule, StreamPlan};
use crate::workload::{cpuload, interrupt};
use anyhow::Result;
use std::sync::atomic::Ordering;

/// Default rate when neither --rate nor --fps is given: 5 MB/s.
const DEFAULT_RATE: f64 = 5e6;
/// Smallest region a directory target's scratch file gets.
const MIN_AREA: u64 = 64 << 20;

pub fn stream(args: &StreamArgs, store: &Settings) -> Result<i32> {
    let tcfg = target_config(&args.target)?;
    check_engine(&tcfg)?;
    let (chunk, rate) = chunk_and_rate(args)?;
    let kind = match args.rw {
        StreamDirection::Write => OpKindName::Write,
        StreamDirection::Read => OpKindName::Read,
    };
    let started_at = crate::probe::record::now_rfc3339();
    let area = (rate * args.time.as_secs_f64()).clamp(MIN_AREA as f64, DEFAULT_AREA as f64) as u64;
    let (mut target, offset, span) = open_region(&tcfg, kind == OpKindName::Write, area, chunk)?;
    if kind == OpKindName::Write {
        target.arm(&[(offset, span)])?;
    }
    let schedule = Schedule {
        base: StreamPlan::unscheduled(kind, chunk as u32, offset, span),
        deadline: args.deadline,
        time: args.time,
        seed: tcfg.seed,
    };
    let load = cpuload::start_if(args.load.cpu_load);
    let trial = |rate: f64| stream::run_at(&target, &schedule, rate);
    let (outcome, find_max, error) = if args.find_max {
        stream::search(rate, trial)
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
    let mut result =
        crate::probe::record::new_result(Payload::Stream { config, stream }, &target, started_at);
    result.cpu_load = cpu_load;
    result.error = error;
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    crate::safety::restore::restore(&mut target, &mut result);
    let code = Output::for_target(store, &tcfg).finish(&result);
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
