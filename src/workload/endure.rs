//! The cycles of `iocurve endure`: each writes the whole region with
//! self-describing (stamped) blocks, checks every block read back, then
//! reads the region again timed. The caller hears of each cycle as it ends,
//! to save it before the next one starts: a run killed half-way keeps every
//! finished cycle.

use crate::error::usage;
use crate::interrupt;
use crate::live::progress;
use crate::medium::OpenTarget;
use crate::result::RunResult;
use crate::result::device::{EndureCycle, EndureReport};
use crate::units::format_size;
use crate::vocab::Rw;
use crate::vocab::config::{DEFAULT_AREA, TargetConfig, resolve_region};
use crate::vocab::options::IoMode;
use crate::workload::{MeasureSpec, SpecError, SpecRequest};
use indicatif::ProgressBar;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The wear to run.
#[derive(Debug, Clone, Copy)]
pub struct EndurePlan {
    pub cycles: u32,
    /// Bytes per request (a multiple of the 512-byte stamped sector).
    pub bs: u64,
    /// Offset and span written every cycle.
    pub region: (u64, u64),
    /// Longest each pass may take; None: the whole region.
    pub pass_time: Option<Duration>,
    pub seed: u64,
    /// Stop after a cycle that found a bad block or failed.
    pub stop_on_error: bool,
}

impl EndurePlan {
    /// The report before the first cycle.
    pub fn empty_report(&self) -> EndureReport {
        EndureReport {
            cycles_asked: self.cycles,
            offset: self.region.0,
            span: self.region.1,
            block_size: self.bs,
            cycles: Vec::new(),
            stopped_at_error: false,
        }
    }

    /// The write pass of a cycle: stamped blocks, read back and checked.
    fn write_spec(&self, seed: u64) -> Result<MeasureSpec, SpecError> {
        let plain = MeasureSpec::plain(Rw::Write, self.bs, self.region, self.region.1, seed)?;
        MeasureSpec::new(SpecRequest {
            verify: true,
            time: self.pass_time,
            ..plain.request()
        })
    }

    /// The read pass of a cycle, as long as the write pass may be.
    fn read_spec(&self, seed: u64) -> Result<MeasureSpec, SpecError> {
        let plain = MeasureSpec::plain(Rw::Read, self.bs, self.region, self.region.1, seed)?;
        MeasureSpec::new(SpecRequest {
            time: self.pass_time,
            ..plain.request()
        })
    }
}

/// Opens the target for wearing, resolves the region and journals it, and
/// warns on stderr what is about to be destroyed.
pub fn open_worn(
    cfg: &TargetConfig,
    bs: u64,
    cycles: u32,
) -> anyhow::Result<(OpenTarget, u64, u64)> {
    let area = cfg.span.unwrap_or(DEFAULT_AREA);
    let mut target = crate::medium::open::open_target(cfg, true, area)?;
    let (offset, span) = resolve_region(
        cfg.offset,
        cfg.span,
        target.info.size_bytes,
        &target.info.path,
        bs,
        u64::from(target.info.logical_block_size),
        target.info.mode == IoMode::Direct,
    )?;
    if !bs.is_multiple_of(512) {
        return Err(usage(
            "endure checks 512-byte stamped sectors: give a --bs that is a multiple of 512",
        ));
    }
    target.arm(&[(offset, span)])?;
    eprintln!(
        "WARNING: endure writes {} of {} {} time(s); its data is destroyed and the medium wears",
        format_size(span),
        target.info.path,
        cycles
    );
    Ok((target, offset, span))
}

/// Adds a finished cycle to the result; its error, if the first, becomes
/// the run's.
pub fn record(result: &mut RunResult, cycle: EndureCycle, stop_here: bool) {
    if let Some(e) = &cycle.error {
        result.error.get_or_insert_with(|| e.clone());
    }
    let report = result.payload.endure_mut().expect("an endure result");
    report.cycles.push(cycle);
    report.stopped_at_error = stop_here;
}

/// Runs the cycles in order; after each, `on_cycle` gets it and whether the
/// run stops there for `--stop-on-error`. Ctrl-C stops after the cycle.
pub fn run_cycles(
    target: &OpenTarget,
    plan: &EndurePlan,
    mut on_cycle: impl FnMut(EndureCycle, bool),
) {
    let bar = progress::bar("endure", progress::Goal::Bytes(u64::from(plan.cycles)));
    for n in 1..=plan.cycles {
        let cycle = one_cycle(target, plan, n, &bar);
        let bad = cycle.verify.bad() > 0 || cycle.error.is_some();
        let stop_here = bad && plan.stop_on_error;
        on_cycle(cycle, stop_here);
        bar.set_position(u64::from(n));
        if interrupt::stop_flag().load(Ordering::Relaxed) || stop_here {
            break;
        }
    }
    bar.finish_and_clear();
}

/// Cycle `n`: the write pass, then (when it went through) the read pass.
fn one_cycle(target: &OpenTarget, plan: &EndurePlan, n: u32, bar: &ProgressBar) -> EndureCycle {
    let seed = plan.seed.wrapping_add(u64::from(n));
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
    let (write_spec, read_spec) = match (plan.write_spec(seed), plan.read_spec(seed)) {
        (Ok(w), Ok(r)) => (w, r),
        (Err(e), _) | (_, Err(e)) => {
            cycle.error = Some(e.to_string());
            return cycle;
        }
    };
    let written = crate::workload::repeat::measure(target, &write_spec, "endure write", Some(bar));
    let write = written.unwrap_or_else(|f| {
        cycle.error = Some(crate::engine::io_failure_message(&f.error));
        f.partial
    });
    cycle.write_mb_s = write.mb_per_s;
    cycle.write_latency = write.latency;
    cycle.verify = write.verify.unwrap_or_default();
    if cycle.error.is_some() || write.interrupted {
        return cycle;
    }
    match crate::workload::repeat::measure(target, &read_spec, "endure read", Some(bar)) {
        Ok(m) => {
            cycle.read_mb_s = Some(m.mb_per_s);
            cycle.read_latency = m.latency;
            cycle.complete = !m.interrupted;
        }
        Err(f) => cycle.error = Some(crate::engine::io_failure_message(&f.error)),
    }
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> EndurePlan {
        EndurePlan {
            cycles: 3,
            bs: 1 << 20,
            region: (1 << 20, 64 << 20),
            pass_time: Some(Duration::from_secs(5)),
            seed: 9,
            stop_on_error: false,
        }
    }

    #[test]
    fn a_cycle_writes_checked_stamps_then_reads_the_same_region() {
        let (w, r) = (
            plan().write_spec(10).unwrap(),
            plan().read_spec(10).unwrap(),
        );
        assert_eq!((w.rw, r.rw), (Rw::Write, Rw::Read));
        assert!(w.verify && !r.verify);
        assert_eq!(
            (w.offset, w.span, w.size),
            (1 << 20, 64 << 20, Some(64 << 20))
        );
        assert_eq!((r.offset, r.span, r.size), (w.offset, w.span, w.size));
        assert_eq!((w.time, r.time), (plan().pass_time, plan().pass_time));
        assert_eq!((w.seed, r.seed), (10, 10));
    }

    #[test]
    fn the_report_starts_empty_with_the_plan() {
        let r = plan().empty_report();
        assert_eq!(
            (r.cycles_asked, r.offset, r.span, r.block_size),
            (3, 1 << 20, 64 << 20, 1 << 20)
        );
        assert!(r.cycles.is_empty() && !r.stopped_at_error);
    }
}
