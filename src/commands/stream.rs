//! `iocurve stream`: a fixed schedule of reads or writes, scored against
//! deadlines (see [`crate::workload::stream`]).

use crate::cli::apps::StreamArgs;
use crate::cli::stream::StreamConfig;
use crate::interrupt;
use crate::output::Output;
use crate::result::apps::StreamReport;
use crate::store::Settings;
use crate::vocab::options::StreamDirection;
use crate::workload::cpuload;
use crate::workload::region::open_region;
use crate::workload::stream::{self, OpKindName, Schedule, StreamPlan};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn stream(args: &StreamArgs, store: &Settings) -> Result<i32> {
    let cfg = StreamConfig::from_args(args)?;
    let kind = match args.rw {
        StreamDirection::Write => OpKindName::Write,
        StreamDirection::Read => OpKindName::Read,
    };
    let started_at = crate::workload::record::now_rfc3339();
    let writes = kind == OpKindName::Write;
    let (mut target, offset, span) = open_region(&cfg.target, writes, cfg.area(args), cfg.chunk)?;
    if writes {
        target.arm(&[(offset, span)])?;
    }
    let schedule = Schedule {
        base: StreamPlan::unscheduled(kind, cfg.chunk as u32, offset, span),
        deadline: args.deadline,
        time: args.time,
        seed: cfg.target.seed,
    };
    let settings = cfg.settings(args, offset, span);
    let planned = StreamConfig::payload(settings.clone(), StreamReport::planned(args.rw, args.fps));
    let mut result = crate::workload::record::new_result(planned, &target, started_at);
    let output = Output::for_target(store, &cfg.target);
    output.announce(&result);
    let load = cpuload::start_if(args.load.cpu_load);
    let trial = |rate: f64| stream::run_at(&target, &schedule, rate);
    let (outcome, find_max, error) = if args.find_max {
        stream::search(cfg.rate, trial)
    } else {
        let (o, e) = trial(cfg.rate);
        (o, None, e)
    };
    result.cpu_load = load.map(cpuload::CpuLoad::stop);
    let stream = StreamConfig::report(args, outcome, find_max);
    result.payload = StreamConfig::payload(settings, stream);
    result.target = target.info.clone();
    result.error = error;
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    crate::medium::restore::restore(&mut target, &mut result);
    let code = output.finish(&result);
    drop(target);
    code
}
