//! `iocurve endure`: wears a device on purpose. Each cycle writes the whole
//! span with self-describing blocks, checks every block read back (ok,
//! changed, aliased, corrupted), and reads the span again timed, so a
//! card's slowing down and its first failing blocks show against the
//! number of full writes it has taken. The result is saved after every
//! cycle: an interrupted or killed run keeps what it measured.

use crate::cli::EndureArgs;
use crate::cli::endure::EndureConfig;
use crate::interrupt;
use crate::output::Output;
use crate::report::cycle_line;
use crate::result::Payload;
use crate::store::Settings;
use crate::workload::endure::{self, EndurePlan};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn endure(args: &EndureArgs, store: &Settings) -> Result<i32> {
    let started_at = crate::workload::record::now_rfc3339();
    let cfg = EndureConfig::from_args(args)?;
    let (target, offset, span) = endure::open_worn(&cfg.target, args.bs, args.cycles)?;
    let config = cfg.settings(args).into();
    let plan = EndurePlan {
        cycles: args.cycles,
        bs: args.bs,
        region: (offset, span),
        pass_time: args.pass_time,
        seed: cfg.target.seed,
        stop_on_error: args.stop_on_error,
    };
    let endure = plan.empty_report();
    let mut result = crate::workload::record::new_result(
        Payload::Endure { config, endure },
        &target,
        started_at,
    );
    let output = Output::for_target(store, &cfg.target);
    output.announce(&result);
    let mut saved = None;
    endure::run_cycles(&target, &plan, |cycle, stop_here| {
        endure::record(&mut result, cycle, stop_here);
        output.save_progress(&result, &mut saved);
        // Said only once the cycle is saved.
        let last = result.payload.endure().and_then(|e| e.cycles.last());
        eprintln!(
            "{}",
            cycle_line::cycle_done(args.cycles, last.expect("just added"))
        );
    });
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    if let Some(path) = &args.svg {
        crate::output::write_chart(path, &crate::report::EndureSvg, &result)?;
    }
    output.finish_saved(&result, &mut saved)
}
