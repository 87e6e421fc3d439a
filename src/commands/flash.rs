//! `iocurve flash ...`: open the target, decide what may be written (the
//! usual rules: `--preserve` journals and restores, `--destructive` allows
//! loss, a `sim:` card holds nothing), run one detector
//! ([`crate::flash::session`]), turn its figures into a [`FlashReport`]
//! ([`crate::report::flash_verdicts`]) inside the one [`RunResult`], print,
//! save.
//!
//! [`FlashReport`]: crate::flash::FlashReport

use crate::cli::config::TargetConfig;
use crate::cli::{FlashArgs, FlashCommand};
use crate::flash::session::{self, FlashOptions, FlashTest};
use crate::output::Output;
use crate::report::{Export, Json, flash_verdicts};
use crate::result::config::FlashSettings;
use crate::result::{Payload, RunResult};
use crate::store::Settings;
use anyhow::Result;
use std::io::Write;

/// Exit code of a fake card or a failed class.
pub const EXIT_FLASH_FAIL: i32 = 5;

pub fn flash(cmd: &FlashCommand, store: &Settings) -> Result<i32> {
    let (test, args) = test_of(cmd);
    let name = test.name();
    if args.target.is_dir() {
        return Err(crate::error::usage(format!(
            "{} is a directory: flash {name} measures the card itself (a block device such as /dev/sdb), an image file or sim:...",
            args.target.display()
        )));
    }
    let cfg = target_config(args);
    let mut target = crate::target::open::open_target(&cfg, test.writes(), 0)?;
    let started_at = crate::probe::record::now_rfc3339();
    let identity = crate::probe::identify(std::path::Path::new(&target.info.path));
    let options = FlashOptions {
        au: args.au,
        flush: args.flush,
        claim: args.claim.clone(),
        seed: cfg.seed,
    };
    let planned = session::plan(test, &options, &mut target, &identity)?;
    let measured = session::measure(planned, &mut target)
        .map_err(|e| crate::safety::restore::restore_after_error(&mut target, e))?;
    let flash = flash_verdicts::build(&measured);
    let config = FlashSettings {
        test: name.to_string(),
        target: args.target.clone(),
    }
    .into();
    let mut result =
        crate::probe::record::new_result(Payload::Flash { config, flash }, &target, started_at);
    crate::safety::restore::restore(&mut target, &mut result);
    print(&result, args, store)
}

fn test_of(cmd: &FlashCommand) -> (FlashTest, &FlashArgs) {
    match cmd {
        FlashCommand::Align(a) => (FlashTest::Align, a),
        FlashCommand::OpenAu(a) => (FlashTest::OpenAu, a),
        FlashCommand::Cache(a) => (FlashTest::Cache, a),
        FlashCommand::Capacity(a) => (FlashTest::Capacity, a),
        FlashCommand::Class(a) => (FlashTest::Class, a),
    }
}

fn target_config(args: &FlashArgs) -> TargetConfig {
    TargetConfig {
        path: args.target.clone(),
        io_mode: crate::target::IoMode::Direct,
        destructive: args.destructive,
        preserve: args.preserve,
        journal_dir: args.journal_dir.clone(),
        offset: None,
        span: None,
        threads: 1,
        seed: args.seed.unwrap_or_else(|| fastrand::u64(..)),
        seed_given: args.seed.is_some(),
        json: args.json,
        report: None,
        engine: None,
    }
}

fn print(result: &RunResult, args: &FlashArgs, store: &Settings) -> Result<i32> {
    let text = match args.json {
        true => Json.render(result),
        false => crate::report::flash::render(result, args.verbose),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    let code = Output::new(store, args.json, None).exit_code_of(result)?;
    let failed = result.payload.flash().is_some_and(|f| f.failed);
    Ok(if code == 0 && failed {
        EXIT_FLASH_FAIL
    } else {
        code
    })
}
