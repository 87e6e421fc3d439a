//! `iocurve flash ...`: open the target, decide what may be written (the
//! usual rules: `--preserve` journals and restores, `--destructive` allows
//! loss, a `sim:` card holds nothing), run one detector
//! ([`crate::flash::session`]), turn its figures into a [`FlashReport`]
//! ([`crate::flash::findings`]) inside the one [`RunResult`], complete
//! before anything is worded, then print and save.
//!
//!
//! `flash capacity --fix` then writes the partition table that makes a
//! fake card usable at its real size ([`crate::flash::partition`]), from
//! the verdict just measured (never from an assumed size), through the
//! same write gate, and only with `--destructive`: without it the table is
//! shown and the exit code is 2, a refusal to write like every other.
//!
//! [`FlashReport`]: crate::result::flash::FlashReport
//! [`RunResult`]: crate::result::RunResult

use crate::cli::FlashCommand;
use crate::cli::flash::{target_config, test_of};
use crate::flash::findings;
use crate::flash::partition::{self, Mbr};
use crate::flash::session::{self, Figures, FlashOptions, Measured};
use crate::medium::OpenTarget;
use crate::output::Output;
use crate::result::Payload;
use crate::result::config::FlashSettings;
use crate::result::flash::FixOutcome;
use crate::store::Settings;
use anyhow::Result;

use crate::error::EXIT_FLASH_FAIL;

pub fn flash(cmd: &FlashCommand, store: &Settings) -> Result<i32> {
    let (test, args) = test_of(cmd);
    let name = test.name();
    let cfg = target_config(&args, name)?;
    let mut target = crate::medium::open::open_target(&cfg, test.writes(), 0)?;
    let started_at = crate::workload::record::now_rfc3339();
    let identity = crate::probe::identify(std::path::Path::new(&target.info.path));
    let options = FlashOptions {
        au: args.au,
        flush: args.flush,
        claim: args.claim.clone(),
        seed: cfg.seed,
    };
    let planned = session::plan(test, &options, &mut target, &identity)?;
    let measured = session::measure(planned, &mut target)
        .map_err(|e| crate::medium::restore::restore_after_error(&mut target, e))?;
    let mut flash = findings::build(&measured, &args.target.display().to_string());
    let mut fix_shown_only = false;
    if args.fix {
        let outcome = fix(&measured, &mut target, args.writes.destructive, cfg.seed)
            .map_err(|e| crate::medium::restore::restore_after_error(&mut target, e))?;
        fix_shown_only = outcome == FixOutcome::NotWritten;
        flash.findings.push(findings::fixed(outcome));
    }
    let config = FlashSettings {
        test,
        target: args.target.clone(),
        seed: cfg.seed,
    }
    .into();
    let payload = Payload::Flash { config, flash };
    let mut result = crate::workload::record::new_result_identified(
        payload,
        target.info.clone(),
        started_at,
        identity,
    );
    crate::medium::restore::restore(&mut target, &mut result);
    let code = Output::for_target(store, &cfg).finish_flash(&result, args.verbose)?;
    Ok(
        match fix_shown_only && matches!(code, 0 | EXIT_FLASH_FAIL) {
            true => crate::error::EXIT_USAGE,
            false => code,
        },
    )
}

/// `--fix`: the partition table of a fake card's real size, written with
/// `--destructive` (the seed gives the disk signature).
fn fix(
    measured: &Measured,
    target: &mut OpenTarget,
    destructive: bool,
    seed: u64,
) -> Result<FixOutcome> {
    let Figures::Capacity { result, kernel_au } = &measured.figures else {
        return Ok(FixOutcome::Genuine);
    };
    let Some(last) = result.last_good_sector else {
        return Ok(FixOutcome::Genuine);
    };
    let Some(repair) = partition::repair(last, *kernel_au) else {
        return Ok(FixOutcome::NoRoom);
    };
    if !destructive {
        return Ok(FixOutcome::NotWritten);
    }
    session::write_partition_table(target, &Mbr::new(&repair, seed as u32))?;
    Ok(FixOutcome::Written)
}
