//! `iocurve curve`: throughput against transfer size for each pattern and
//! target, the t = t0 + n/B model fitted to it, and what the curve says.
//! The sweeps live in [`crate::workload::sweep`] (which also says how
//! unaligned sizes are measured), the reading of the series and the
//! crossovers between targets in [`crate::analysis::curve_reading`].

use crate::analysis::curve_reading::find_crossovers;
use crate::cli::CurveArgs;
use crate::interrupt;
use crate::live::progress;
use crate::output::Output;
use crate::result::Payload;
use crate::store::Settings;
use crate::vocab::config::CurveConfig;
use crate::workload::{cpuload, sweep};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn curve(args: &CurveArgs, store: &Settings) -> Result<i32> {
    let cfg = CurveConfig::from_args(args)?;
    let started_at = crate::workload::record::now_rfc3339();
    let planned = sweep::planned_time(&cfg);
    let bar = progress::bar("curve", progress::Goal::Time(planned));
    let ticker = progress::ClockTicker::start(&bar);
    let mut opened = sweep::open_all(&cfg)?;
    let payload = Payload::Curve {
        config: cfg.clone().into(),
        curve: Default::default(),
    };
    let mut result = crate::workload::record::new_result(payload, &opened[0].target, started_at);
    let output = Output::for_target(store, &cfg.target);
    bar.suspend(|| output.announce(&result));
    let load = cpuload::start_if(args.load.cpu_load);
    let mut report = sweep::sweep_all(&cfg, &mut opened, &mut result, &bar)?;
    result.cpu_load = load.map(cpuload::CpuLoad::stop);
    drop(ticker);
    bar.finish_and_clear();
    report.crossovers = find_crossovers(&report.series);
    sweep::adopt_first_target(&mut result, &report);
    if let Payload::Curve { curve, .. } = &mut result.payload {
        *curve = report;
    }
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    if let Some(path) = &cfg.svg {
        crate::output::write_chart(path, &crate::report::Svg, &result)?;
    }
    output.finish(&result)
}
