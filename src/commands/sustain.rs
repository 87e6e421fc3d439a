//! `iocurve sustain`: one long sequential write, its throughput per interval
//! and per stretch of bytes, and where it dropped (see
//! [`crate::workload::sustain`] and [`crate::analysis::sustain`]).

use crate::analysis::sustain::{self as analysis, Ending};
use crate::cli::apps::SustainArgs;
use crate::cli::sustain::SustainConfig;
use crate::interrupt;
use crate::live::json_lines;
use crate::output::Output;
use crate::store::Settings;
use crate::workload::cpuload;
use crate::workload::region::open_region;
use crate::workload::sustain::{self, SustainTarget};
use anyhow::Result;
use std::sync::atomic::Ordering;

/// Intervals the live printer may fall behind before lines are dropped.
const LIVE_BACKLOG: usize = 4096;

pub fn sustain(args: &SustainArgs, store: &Settings) -> Result<i32> {
    let cfg = SustainConfig::from_args(args)?;
    let started_at = crate::workload::record::now_rfc3339();
    let (mut target, offset, span) = open_region(&cfg.target, true, args.bytes, args.bs)?;
    let settings = cfg.settings(args, offset, span);
    let plan = SustainConfig::plan(&settings);
    target.arm(&[(offset, plan.bytes)])?;
    let output = Output::for_target(store, &cfg.target);
    let planned = SustainConfig::payload(settings.clone(), Default::default());
    let mut result = crate::workload::record::new_result(planned, &target, started_at);
    output.announce(&result);
    let (live, printer) = json_lines::start_printer(output.streams_json_lines(), LIVE_BACKLOG);
    let load = cpuload::start_if(args.load.cpu_load);
    let stop = interrupt::stop_flag();
    let run = sustain::run(
        SustainTarget::of(&target),
        plan,
        cfg.target.seed,
        stop,
        live,
    );
    let cpu_load = load.map(cpuload::CpuLoad::stop);
    json_lines::wait_for(printer);
    let ending = Ending::of(&settings, &plan, &run, stop.load(Ordering::Relaxed));
    let error = run.error.as_ref().map(crate::engine::io_failure_message);
    let sustain = analysis::report(&plan, run, ending.reason());
    result.payload = SustainConfig::payload(settings, sustain);
    result.target = target.info.clone();
    result.error = error;
    result.interrupted = ending.interrupted;
    result.cpu_load = cpu_load;
    result.raw = super::ranks::span_for_merge(&result);
    crate::medium::restore::restore(&mut target, &mut result);
    drop(target);
    output.finish(&result)
}
