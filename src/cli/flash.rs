//! `iocurve flash ...`: each subcommand's own options, and from them what
//! the flash command runs: which detector, and the validated
//! [`TargetConfig`] of the card (always direct I/O, one thread, the whole
//! medium).
//!
//! One option set: every subcommand takes the card, the output and store
//! options and the write permissions (`--destructive`, `--preserve`,
//! `--journal-dir`); every one that writes generated data takes `--seed`;
//! `--au` is spelled the same where a test works in AUs. `flash align`
//! only reads, and accepts the write permissions as what they are, a
//! permission it never uses (a loop over every flash test with the same
//! flags works), which its help says. `tests/promises/flash_options.rs`
//! walks the clap tree for this rule.

use super::{OutputArgs, StoreArgs, WriteArgs, parse_target};
use crate::vocab::config::TargetConfig;
use crate::vocab::limits;
use crate::vocab::options::FlashTest;
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The flash analyses; each decides, with a confidence.
#[derive(Debug, Subcommand)]
pub enum FlashCommand {
    /// AU and page size from read timing at candidate boundaries (read-only).
    Align(AlignArgs),
    /// How many AUs the card keeps open for writing.
    OpenAu(OpenAuArgs),
    /// Size of the write cache (SLC region), burst and sustained speed.
    Cache(CacheArgs),
    /// Fake-capacity probe; exit code 5 when the card is fake.
    Capacity(CapacityArgs),
    /// PASS/FAIL for each SD speed-class requirement; exit code 5 on a FAIL.
    Class(ClassArgs),
}

/// What every flash test takes: the card, how the result is shown, where
/// it is saved, and the write permissions (`flash align` accepts them
/// like every flash test's, and leaves them unused: it only reads).
#[derive(Debug, Args, Clone)]
pub struct CardArgs {
    /// A block device, a file, or a simulated card (sim:au=4M,...).
    #[arg(value_parser = parse_target)]
    pub target: PathBuf,

    /// Show the raw table.
    #[arg(long, short)]
    pub verbose: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub writes: WriteArgs,
}

/// `--au`, for the tests that work in whole AUs.
#[derive(Debug, Args, Clone)]
pub struct AuArg {
    /// The AU size [default: the kernel's preferred_erase_size, else
    /// detected by `flash align`, else 4 MiB].
    #[arg(long, value_name = "SIZE", value_parser = limits::AU.parser())]
    pub au: Option<u64>,
}

/// `--seed`, for the tests that write generated data.
#[derive(Debug, Args, Clone)]
pub struct SeedArg {
    /// Seed of the generated data, and of positions where the test draws
    /// them [default: from the clock].
    #[arg(long, value_name = "SEED")]
    pub seed: Option<u64>,
}

#[derive(Debug, Args, Clone)]
pub struct AlignArgs {
    #[command(flatten)]
    pub card: CardArgs,
}

#[derive(Debug, Args, Clone)]
pub struct OpenAuArgs {
    #[command(flatten)]
    pub card: CardArgs,
    #[command(flatten)]
    pub au: AuArg,
    #[command(flatten)]
    pub seed: SeedArg,
}

#[derive(Debug, Args, Clone)]
pub struct CacheArgs {
    #[command(flatten)]
    pub card: CardArgs,
    #[command(flatten)]
    pub seed: SeedArg,
}

#[derive(Debug, Args, Clone)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub card: CardArgs,

    /// The most capacity writes between probing and reading back, to get
    /// past a write cache, across the card around its probes [default: as
    /// much as the cache it measures needs, up to 1G; more than beats a
    /// cache as large as the card is shortened to that, and said].
    #[arg(long, value_name = "SIZE", value_parser = limits::FLUSH.parser())]
    pub flush: Option<u64>,

    /// On a fake card, make it usable at its real size: show the MBR
    /// partition table that ends at the last good sector (one FAT32
    /// partition from 1 MiB) and write it to sector 0 with --destructive;
    /// without it, nothing is written and the exit code is 2. A genuine
    /// card is left alone.
    #[arg(long)]
    pub fix: bool,

    #[command(flatten)]
    pub seed: SeedArg,
}

#[derive(Debug, Args, Clone)]
pub struct ClassArgs {
    #[command(flatten)]
    pub card: CardArgs,
    #[command(flatten)]
    pub au: AuArg,

    /// The class to check (C10, U1, U3, V6..V90, A1, A2) [default: what the
    /// card's SSR claims, else every class].
    #[arg(long, value_parser = claimed_class)]
    pub claim: Option<String>,

    #[command(flatten)]
    pub seed: SeedArg,
}

/// One flash test's request, whichever subcommand named it: the options a
/// test does not take are at their "not given" value.
#[derive(Debug, Clone)]
pub struct FlashArgs {
    pub target: PathBuf,
    pub writes: WriteArgs,
    pub au: Option<u64>,
    pub claim: Option<String>,
    pub flush: Option<u64>,
    pub seed: Option<u64>,
    /// `capacity --fix`: write a partition table that ends at the real size.
    pub fix: bool,
    pub verbose: bool,
    pub output: OutputArgs,
    pub store: StoreArgs,
}

impl FlashCommand {
    /// The options every subcommand shares.
    pub fn card(&self) -> &CardArgs {
        match self {
            FlashCommand::Align(a) => &a.card,
            FlashCommand::OpenAu(a) => &a.card,
            FlashCommand::Cache(a) => &a.card,
            FlashCommand::Capacity(a) => &a.card,
            FlashCommand::Class(a) => &a.card,
        }
    }
}

/// The detector a flash subcommand names, and its request.
pub fn test_of(cmd: &FlashCommand) -> (FlashTest, FlashArgs) {
    let card = cmd.card();
    let mut args = FlashArgs {
        target: card.target.clone(),
        writes: card.writes.clone(),
        au: None,
        claim: None,
        flush: None,
        seed: None,
        fix: false,
        verbose: card.verbose,
        output: card.output.clone(),
        store: card.store.clone(),
    };
    let test = match cmd {
        FlashCommand::Align(_) => FlashTest::Align,
        FlashCommand::OpenAu(a) => {
            args.au = a.au.au;
            args.seed = a.seed.seed;
            FlashTest::OpenAu
        }
        FlashCommand::Cache(a) => {
            args.seed = a.seed.seed;
            FlashTest::Cache
        }
        FlashCommand::Capacity(a) => {
            args.flush = a.flush;
            args.seed = a.seed.seed;
            args.fix = a.fix;
            FlashTest::Capacity
        }
        FlashCommand::Class(a) => {
            args.au = a.au.au;
            args.claim = a.claim.clone();
            args.seed = a.seed.seed;
            FlashTest::Class
        }
    };
    (test, args)
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
    let output = args.output.choice();
    Ok(TargetConfig {
        path: args.target.clone(),
        io_mode: crate::vocab::options::IoMode::Direct,
        destructive: args.writes.destructive,
        preserve: args.writes.preserve,
        journal_dir: args.writes.journal_dir.clone(),
        offset: None,
        span: None,
        threads: 1,
        seed: args.seed.unwrap_or_else(crate::vocab::config::default_seed),
        seed_given: args.seed.is_some(),
        json: output.format == crate::vocab::output::Format::Json,
        report: None,
        engine: None,
        sqpoll: false,
        output,
    })
}

/// `--claim`: a class the flash class test knows.
fn claimed_class(text: &str) -> Result<String, String> {
    match crate::analysis::flash::class::requirements(text) {
        Some(_) => Ok(text.trim().to_string()),
        None => Err(format!(
            "not a class iocurve checks: give one of {} or A2",
            crate::analysis::flash::class::CLASSES.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_names_a_class_iocurve_checks() {
        assert_eq!(claimed_class("U3"), Ok("U3".into()));
        assert!(claimed_class("nan").is_err() && claimed_class("").is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_claim_is_answered_without_panicking(s in "\\PC{0,16}") {
            let _ = claimed_class(&s);
        }
    }

    fn command(args: &[&str]) -> FlashCommand {
        match crate::cli::command_of(&[&["flash"], args]) {
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
        let cmd = command(&["class", "sim:size=1G", "--seed", "7"]);
        let cfg = target_config(&test_of(&cmd).1, "align").unwrap();
        assert_eq!(cfg.io_mode, crate::vocab::options::IoMode::Direct);
        assert_eq!((cfg.threads, cfg.seed, cfg.seed_given), (1, 7, true));
        let dir = command(&["align", "."]);
        let e = target_config(&test_of(&dir).1, "align").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}
