//! `iocurve endure`: wears a device on purpose. Each cycle writes the whole
//! span with self-describing blocks, checks every block read back (ok,
//! changed, overwritten, corrupted), and reads the span again timed, so a
//! card's slowing down and its first failing blocks show against the
//! number of full writes it has taken. The result is saved after every
//! cycle: an interrupted or killed run keeps what it measured.

use crate::cli::EndureArgs;
use crate::cli::config::{DEFAULT_AREA, TargetConfig, resolve_region, target_config_of};
use crate::error::{EXIT_VERIFY, usage};
use crate::report::{Export, Json, Text, cycle_line};
use crate::result::Payload;
use crate::result::RunResult;
use crate::result::config::EndureSettings;
use crate::result::device::EndureCycle;
use crate::store::Settings;
use crate::target::{IoMode, OpenTarget};
use crate::units::format_size;
use crate::workload::endure::{self, EndurePlan};
use crate::workload::interrupt;
use anyhow::Result;
use std::io::Write;
use std::sync::atomic::Ordering;

fn refuse(cfg: &TargetConfig, cycles: u32) -> Result<()> {
    if cfg.preserve {
        return Err(usage(
            "endure cannot be undone with --preserve: restoring the data does not restore the wear. Pass --destructive if the device may be erased and worn",
        ));
    }
    if !cfg.destructive {
        return Err(usage(format!(
            "endure writes the whole span of {} {cycles} time(s): everything on it is DESTROYED and a flash device WEARS with every cycle. Pass --destructive to confirm (--preserve cannot undo wear, so endure does not take it)",
            cfg.path.display()
        )));
    }
    Ok(())
}

/// Opens the target, resolves the region and journals it, and warns.
fn open(args: &EndureArgs, cfg: &TargetConfig) -> Result<(OpenTarget, u64, u64)> {
    let area = cfg.span.unwrap_or(DEFAULT_AREA);
    let mut target = crate::target::open::open_target(cfg, true, area)?;
    let (offset, span) = resolve_region(
        cfg.offset,
        cfg.span,
        target.info.size_bytes,
        &target.info.path,
        args.bs,
        u64::from(target.info.logical_block_size),
        target.info.mode == IoMode::Direct,
    )?;
    if !args.bs.is_multiple_of(512) {
        return Err(usage(
            "endure checks 512-byte stamped sectors: give a --bs that is a multiple of 512",
        ));
    }
    target.arm(&[(offset, span)])?;
    eprintln!(
        "WARNING: endure writes {} of {} {} time(s); its data is destroyed and the medium wears",
        format_size(span),
        target.info.path,
        args.cycles
    );
    Ok((target, offset, span))
}

pub fn endure(args: &EndureArgs, store: &Settings) -> Result<i32> {
    let started_at = crate::probe::record::now_rfc3339();
    let cfg = target_config_of(&args.target)?;
    refuse(&cfg, args.cycles)?;
    let (target, offset, span) = open(args, &cfg)?;
    let config = EndureSettings {
        target: cfg.clone(),
        cycles: args.cycles,
        block_size: args.bs,
        stop_on_error: args.stop_on_error,
    }
    .into();
    let plan = EndurePlan {
        cycles: args.cycles,
        bs: args.bs,
        region: (offset, span),
        pass_time: args.pass_time,
        seed: cfg.seed,
        stop_on_error: args.stop_on_error,
    };
    let endure = plan.empty_report();
    let mut result =
        crate::probe::record::new_result(Payload::Endure { config, endure }, &target, started_at);
    let mut saved = None;
    endure::run_cycles(&target, &plan, |cycle, stop_here| {
        record(&mut result, cycle, stop_here);
        save(store, &result, &mut saved);
        // Said only once the cycle is saved.
        let last = result.payload.endure().and_then(|e| e.cycles.last());
        eprintln!(
            "{}",
            cycle_line::cycle_done(args.cycles, last.expect("just added"))
        );
    });
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    finish(args, &cfg, store, &mut result, &mut saved)
}

/// Adds a finished cycle to the result; its error, if the first, becomes
/// the run's.
fn record(result: &mut RunResult, cycle: EndureCycle, stop_here: bool) {
    if let Some(e) = &cycle.error {
        result.error.get_or_insert_with(|| e.clone());
    }
    let report = result.payload.endure_mut().expect("set above");
    report.cycles.push(cycle);
    report.stopped_at_error = stop_here;
}

fn save(store: &Settings, result: &RunResult, saved: &mut Option<i64>) {
    if let Err(e) = crate::store::save_progress(store, result, saved) {
        eprintln!(
            "warning: the cycles so far were not saved: {}",
            crate::error::render(&e)
        );
    }
}

fn finish(
    args: &EndureArgs,
    cfg: &TargetConfig,
    store: &Settings,
    result: &mut RunResult,
    saved: &mut Option<i64>,
) -> Result<i32> {
    if let Some(path) = &args.svg {
        super::write_chart(path, &crate::report::EndureSvg, result)?;
    }
    let text = match cfg.json {
        true => Json.render(result),
        false => Text.render(result),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    save(store, result, saved);
    if let Some(id) = saved {
        eprintln!("saved as run {id}");
    }
    let code = crate::output::exit_code_unsaved(result)?;
    let bad: u64 = result
        .payload
        .endure()
        .into_iter()
        .flat_map(|e| &e.cycles)
        .map(|c| c.verify.bad())
        .sum();
    if code == 0 && bad > 0 {
        eprintln!("Error: {bad} bad block(s) over the cycles; see BAD above");
        return Ok(EXIT_VERIFY);
    }
    Ok(code)
}
