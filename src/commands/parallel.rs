//! `--parallel` for `run` and `profile`: the same workload on several
//! devices, first each alone, then all at once (measured in
//! [`crate::workload::parallel`]), so the report can say whether they add
//! up (RAID 0 across cards, several disks behind one hub) or whether a
//! shared bus, hub or controller holds the sum back.

use super::common;
use crate::cli::config::{ProfileConfig, RunConfig};
use crate::cli::options::ReadMethod;
use crate::error::usage;
use crate::report::progress;
use crate::result::device::ParallelReport;
use crate::result::{Payload, RunResult};
use crate::workload::parallel::{self as measuring, Member, stopped};
use crate::workload::profile;
use anyhow::Result;

/// `iocurve run A B ... --parallel`.
pub fn run(cfg: &RunConfig) -> Result<i32> {
    if cfg.method != ReadMethod::Pread {
        return Err(usage(
            "--method mmap or stdio measures one target at a time: leave out --parallel",
        ));
    }
    let started_at = common::now_rfc3339();
    let (members, specs) = measuring::open_run_members(cfg)?;
    let config = serde_json::to_value(cfg)?;
    let payload = Payload::Run {
        config,
        access: None,
        parallel: None,
    };
    let mut result = common::new_result(payload, &members[0].target, started_at);
    let bar = progress::bar("parallel", progress::Goal::Bytes(0));
    let name = crate::units::format_size(specs[0].block_size);
    let mut report = measuring::new_report(&members);
    let test =
        measuring::alone_and_together(&members, &specs, &name, cfg.repeat, &bar, &mut result);
    report.tests.push(test);
    bar.finish_and_clear();
    end(members, report, result, cfg.target.json)
}

/// `iocurve profile A B ... --parallel`: every row of the profile, each
/// alone and together, on the same-sized test area of every target.
pub fn profile(cfg: &ProfileConfig) -> Result<i32> {
    let started_at = common::now_rfc3339();
    let writes_asked = !cfg.read_only && (cfg.target.destructive || cfg.target.preserve);
    let members = measuring::open_profile_members(cfg, writes_asked)?;
    let writes = writes_asked
        || members
            .iter()
            .all(|m| m.target.info.kind == crate::target::TargetKind::Directory);
    let time = cfg.time.unwrap_or(profile::DEFAULT_TIME);
    let mut config = serde_json::to_value(cfg)?;
    config["time_per_test_s"] = serde_json::json!(time.as_secs_f64());
    let payload = Payload::Profile {
        config,
        parallel: None,
    };
    let mut result = common::new_result(payload, &members[0].target, started_at);
    let total = profile::planned(time, cfg.repeat, writes) * (members.len() as u32 + 1);
    let bar = progress::bar("parallel profile", progress::Goal::Time(total));
    let ticker = progress::ClockTicker::start(&bar);
    let report = measuring::measure_profile_rows(cfg, &members, (time, writes), &bar, &mut result)?;
    drop(ticker);
    bar.finish_and_clear();
    end(members, report, result, cfg.target.json)
}

/// Restores every preserved member, prints and saves.
fn end(
    members: Vec<Member>,
    report: ParallelReport,
    mut result: RunResult,
    json: bool,
) -> Result<i32> {
    result.payload.set_parallel(report);
    result.interrupted = stopped();
    for m in &members[1..] {
        result.target.notes.push(format!(
            "also measured at the same time: {}",
            m.target.info.path
        ));
    }
    for mut m in members {
        common::restore(&mut m.target, &mut result);
    }
    common::finish(&result, json)
}
