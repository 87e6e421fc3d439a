//! `iocurve sustain`: one long sequential write, its throughput per interval
//! and per stretch of bytes, and where it dropped (see
//! [`crate::workload::sustain`] and [`crate::analysis::sustain`]).

use crate::analysis::sustain::{self as analysis, Ending};
use crate::cli::apps::SustainArgs;
use crate::cli::config::target_config;
use crate::engine::EngineKind;
use crate::error::usage;
use crate::output::Output;
use crate::report::json_lines;
use crate::result::Payload;
use crate::result::config::SustainSettings;
use crate::store::Settings;
use crate::workload::region::open_region;
use crate::workload::sustain::{self, SustainPlan, SustainTarget};
use crate::workload::{cpuload, interrupt};
use anyhow::Result;
use std::sync::atomic::Ordering;

/// Intervals the live printer may fall behind before lines are dropped.
const LIVE_BACKLOG: usize = 4096;
/// Largest write.
const MAX_BS: u64 = 64 << 20;

pub fn sustain(args: &SustainArgs, store: &Settings) -> Result<i32> {
    let tcfg = target_config(&args.target)?;
    check(args, tcfg.engine, tcfg.threads)?;
    let started_at = crate::probe::record::now_rfc3339();
    let (mut target, offset, span) = open_region(&tcfg, true, args.bytes, args.bs)?;
    let limit = args.bytes.min(span) / args.bs * args.bs;
    target.arm(&[(offset, limit)])?;
    let plan = SustainPlan {
        block_size: args.bs as u32,
        offset,
        bytes: limit,
        time_ns: args.time.map(|t| t.as_nanos() as u64),
        interval_ns: args.interval.as_nanos() as u64,
        mark_bytes: args.mark,
    };
    let (live, printer) = json_lines::start_printer(args.json_lines, LIVE_BACKLOG);
    let load = cpuload::start_if(args.load.cpu_load);
    let stop = interrupt::stop_flag();
    let run = sustain::run(SustainTarget::of(&target), plan, tcfg.seed, stop, live);
    let cpu_load = load.map(cpuload::CpuLoad::stop);
    if let Some(p) = printer {
        let _ = p.join();
    }
    let config = SustainSettings {
        target: tcfg.clone(),
        bytes: args.bytes,
        time_ns: plan.time_ns,
        bs: args.bs,
        interval_ns: plan.interval_ns,
        mark: args.mark,
        offset,
        span,
        cpu_load: args.load.cpu_load,
    }
    .into();
    let interrupted = stop.load(Ordering::Relaxed);
    let error = run.error.as_ref().map(crate::error::io_failure_message);
    let ending = Ending {
        failed: run.error.is_some(),
        interrupted,
        written: run.bytes,
        planned: plan.bytes,
        asked: args.bytes,
        span,
        block: args.bs,
    };
    let sustain = analysis::report(&plan, run, ending.reason());
    let mut result =
        crate::probe::record::new_result(Payload::Sustain { config, sustain }, &target, started_at);
    result.error = error;
    result.interrupted = interrupted;
    result.cpu_load = cpu_load;
    crate::safety::restore::restore(&mut target, &mut result);
    drop(target);
    if args.json_lines {
        json_lines::print_result(&result)?;
        return Output::for_target(store, &tcfg).exit_code_of(&result);
    }
    Output::for_target(store, &tcfg).finish(&result)
}

fn check(args: &SustainArgs, engine: Option<EngineKind>, threads: u32) -> Result<()> {
    if engine == Some(EngineKind::Uring) || threads != 1 {
        return Err(usage(
            "sustain writes one sequential stream: leave --engine at auto and --threads at 1",
        ));
    }
    if args.bs == 0 || args.bs > MAX_BS {
        return Err(usage("--bs must be above 0 and at most 64 MiB"));
    }
    if args.bytes < args.bs {
        return Err(usage("--bytes must hold at least one --bs block"));
    }
    if args.interval.as_millis() < 10 {
        return Err(usage("--interval must be at least 10ms"));
    }
    if args.mark == 0 {
        return Err(usage("--mark must be above 0, such as 1G"));
    }
    Ok(())
}
