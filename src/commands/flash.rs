//! `iocurve flash ...`: open the target, decide what may be written (the
//! usual rules: `--preserve` journals and restores, `--destructive` allows
//! loss, a `sim:` card holds nothing), run one detector
//! ([`crate::flash::session`]), turn its figures into a [`FlashReport`]
//! ([`crate::report::flash_verdicts`]) inside the one [`RunResult`], print,
//! save.
//!
//! [`FlashReport`]: crate::flash::FlashReport
//! [`RunResult`]: crate::result::RunResult

use crate::cli::FlashCommand;
use crate::cli::flash::{target_config, test_of};
use crate::flash::session::{self, FlashOptions};
use crate::output::Output;
use crate::report::flash_verdicts;
use crate::result::Payload;
use crate::result::config::FlashSettings;
use crate::store::Settings;
use anyhow::Result;

pub use crate::output::EXIT_FLASH_FAIL;

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
    let flash = flash_verdicts::build(&measured);
    let config = FlashSettings {
        test,
        target: args.target.clone(),
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
    Output::for_target(store, &cfg).finish_flash(&result, args.verbose)
}
