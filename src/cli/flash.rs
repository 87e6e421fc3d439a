//! From `iocurve flash ...` arguments to what the flash command runs: which
//! detector, and the validated [`TargetConfig`] of the card (always direct
//! I/O, one thread, the whole medium).

use crate::cli::config::TargetConfig;
use crate::cli::{FlashArgs, FlashCommand};
use crate::flash::session::FlashTest;
use anyhow::Result;

/// The detector a flash subcommand names, and its arguments.
pub fn test_of(cmd: &FlashCommand) -> (FlashTest, &FlashArgs) {
    match cmd {
        FlashCommand::Align(a) => (FlashTest::Align, a),
        FlashCommand::OpenAu(a) => (FlashTest::OpenAu, a),
        FlashCommand::Cache(a) => (FlashTest::Cache, a),
        FlashCommand::Capacity(a) => (FlashTest::Capacity, a),
        FlashCommand::Class(a) => (FlashTest::Class, a),
    }
}

/// The target of flash test `name`: refuses a directory (the detectors
/// measure the card itself), then fixes what a flash test always uses.
pub fn target_config(args: &FlashArgs, name: &str) -> Result<TargetConfig> {
    if args.target.is_dir() {
        return Err(crate::error::usage(format!(
            "{} is a directory: flash {name} measures the card itself (a block device such as /dev/sdb), an image file or sim:...",
            args.target.display()
        )));
    }
    Ok(TargetConfig {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn command(args: &[&str]) -> FlashCommand {
        let all = ["iocurve", "flash"].into_iter().chain(args.iter().copied());
        match crate::cli::Cli::try_parse_from(all).unwrap().command {
            crate::cli::Command::Flash(f) => f,
            _ => unreachable!("a flash command line"),
        }
    }

    #[test]
    fn each_subcommand_names_its_detector() {
        for (word, test) in [
            ("align", FlashTest::Align),
            ("open-au", FlashTest::OpenAu),
            ("cache", FlashTest::Cache),
            ("capacity", FlashTest::Capacity),
            ("class", FlashTest::Class),
        ] {
            let cmd = command(&[word, "sim:size=1G"]);
            assert_eq!(test_of(&cmd).0, test, "{word}");
        }
    }

    #[test]
    fn a_card_is_measured_direct_with_one_thread_and_a_directory_is_refused() {
        let cmd = command(&["align", "sim:size=1G", "--seed", "7"]);
        let cfg = target_config(test_of(&cmd).1, "align").unwrap();
        assert_eq!(cfg.io_mode, crate::target::IoMode::Direct);
        assert_eq!((cfg.threads, cfg.seed, cfg.seed_given), (1, 7, true));
        let dir = command(&["align", "."]);
        let e = target_config(test_of(&dir).1, "align").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}
