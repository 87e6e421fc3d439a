//! `iocurve endure`: wears a device on purpose. Each cycle writes the whole
//! span with self-describing blocks, checks every block read back (ok,
//! changed, overwritten, corrupted), and reads the span again timed, so a
//! card's slowing down and its first failing blocks show against the
//! number of full writes it has taken. The result is saved after every
//! cycle: an interrupted or killed run keeps what it measured.

use super::common;
use super::surface::plain_spec;
use crate::cli::EndureArgs;
use crate::cli::config::{DEFAULT_AREA, TargetConfig, resolve_region, target_config_of};
use crate::error::{EXIT_VERIFY, usage};
use crate::report::{Export, Json, Text, progress};
use crate::result::Payload;
use crate::result::RunResult;
use crate::result::config::EndureSettings;
use crate::result::device::{EndureCycle, EndureReport};
use crate::target::{IoMode, OpenTarget};
use crate::units::format_size;
use crate::workload::{MeasureSpec, Rw, SpecError, SpecRequest, interrupt};
use anyhow::Result;
use indicatif::ProgressBar;
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

pub fn endure(args: &EndureArgs) -> Result<i32> {
    let started_at = common::now_rfc3339();
    let cfg = target_config_of(&args.target)?;
    refuse(&cfg, args.cycles)?;
    let area = cfg.span.unwrap_or(DEFAULT_AREA);
    let mut target = common::open_target(&cfg, true, area)?;
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
    let config = EndureSettings {
        target: cfg.clone(),
        cycles: args.cycles,
        block_size: args.bs,
        stop_on_error: args.stop_on_error,
    }
    .into();
    let endure = EndureReport {
        cycles_asked: args.cycles,
        offset,
        span,
        block_size: args.bs,
        cycles: Vec::new(),
        stopped_at_error: false,
    };
    let mut result = common::new_result(Payload::Endure { config, endure }, &target, started_at);
    let mut saved = None;
    run_cycles(args, &cfg, &target, (offset, span), &mut result, &mut saved);
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    finish(args, &cfg, &mut result, &mut saved)
}

fn run_cycles(
    args: &EndureArgs,
    cfg: &TargetConfig,
    target: &OpenTarget,
    region: (u64, u64),
    result: &mut RunResult,
    saved: &mut Option<i64>,
) {
    let goal = progress::Goal::Bytes(u64::from(args.cycles));
    let bar = progress::bar("endure", goal);
    for n in 1..=args.cycles {
        let cycle = one_cycle(args, cfg, target, region, n, &bar);
        let bad = cycle.verify.bad() > 0 || cycle.error.is_some();
        if let Some(e) = &cycle.error {
            result.error.get_or_insert_with(|| e.clone());
        }
        let report = result.payload.endure_mut().expect("set above");
        report.cycles.push(cycle);
        report.stopped_at_error = bad && args.stop_on_error;
        save(result, saved);
        // Said only once the cycle is saved.
        let last = &report_cycles(result)[n as usize - 1];
        eprintln!(
            "cycle {n}/{} done: write {:.1} MB/s, read {} MB/s, {} bad block(s){}",
            args.cycles,
            last.write_mb_s,
            last.read_mb_s.map_or("-".into(), |r| format!("{r:.1}")),
            last.verify.bad(),
            if last.complete { "" } else { " (cut short)" }
        );
        bar.set_position(u64::from(n));
        if interrupt::stop_flag().load(Ordering::Relaxed) || (bad && args.stop_on_error) {
            break;
        }
    }
    bar.finish_and_clear();
}

fn report_cycles(result: &RunResult) -> &[EndureCycle] {
    result.payload.endure().map_or(&[], |e| &e.cycles)
}

fn save(result: &RunResult, saved: &mut Option<i64>) {
    if let Err(e) = crate::store::save_progress(&common::settings(), result, saved) {
        eprintln!(
            "warning: the cycles so far were not saved: {}",
            crate::error::render(&e)
        );
    }
}

/// The write pass of a cycle: stamped blocks, read back and checked.
fn write_spec(args: &EndureArgs, region: (u64, u64), seed: u64) -> Result<MeasureSpec, SpecError> {
    let plain = plain_spec(Rw::Write, args.bs, region, region.1, seed)?;
    MeasureSpec::new(SpecRequest {
        verify: true,
        time: args.pass_time,
        ..plain.request()
    })
}

/// The read pass of a cycle, as long as the write pass may be.
fn read_spec(args: &EndureArgs, region: (u64, u64), seed: u64) -> Result<MeasureSpec, SpecError> {
    let plain = plain_spec(Rw::Read, args.bs, region, region.1, seed)?;
    MeasureSpec::new(SpecRequest {
        time: args.pass_time,
        ..plain.request()
    })
}

fn one_cycle(
    args: &EndureArgs,
    cfg: &TargetConfig,
    target: &OpenTarget,
    region: (u64, u64),
    n: u32,
    bar: &ProgressBar,
) -> EndureCycle {
    let seed = cfg.seed.wrapping_add(u64::from(n));
    let mut cycle = EndureCycle {
        cycle: n,
        write_mb_s: 0.0,
        read_mb_s: None,
        write_latency: None,
        read_latency: None,
        verify: Default::default(),
        error: None,
        complete: false,
    };
    let (write_spec, read_spec) = match (
        write_spec(args, region, seed),
        read_spec(args, region, seed),
    ) {
        (Ok(w), Ok(r)) => (w, r),
        (Err(e), _) | (_, Err(e)) => {
            cycle.error = Some(e.to_string());
            return cycle;
        }
    };
    let written = common::measure(target, &write_spec, "endure write", Some(bar));
    let write = written.unwrap_or_else(|f| {
        cycle.error = Some(common::io_failure_message(&f.error));
        f.partial
    });
    cycle.write_mb_s = write.mb_per_s;
    cycle.write_latency = write.latency;
    cycle.verify = write.verify.unwrap_or_default();
    if cycle.error.is_some() || write.interrupted {
        return cycle;
    }
    match common::measure(target, &read_spec, "endure read", Some(bar)) {
        Ok(m) => {
            cycle.read_mb_s = Some(m.mb_per_s);
            cycle.read_latency = m.latency;
            cycle.complete = !m.interrupted;
        }
        Err(f) => cycle.error = Some(common::io_failure_message(&f.error)),
    }
    cycle
}

fn finish(
    args: &EndureArgs,
    cfg: &TargetConfig,
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
    save(result, saved);
    if let Some(id) = saved {
        eprintln!("saved as run {id}");
    }
    let code = common::exit_code_unsaved(result)?;
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
