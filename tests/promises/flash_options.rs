//! One flash option set: every `flash` subcommand takes the write
//! permissions (align only reads and says so), every one that writes
//! generated data takes `--seed`, and a long option means one thing across
//! them (the same value name and help heading). The man pages end with
//! EXAMPLES that are README's and parse, and with EXIT STATUS from the one
//! table of exit codes. Walked from the clap definition, so a new
//! subcommand or option cannot skip the rule.

use clap::{CommandFactory, Parser};
use iocurve::cli::Cli;
use iocurve::vocab::options::FlashTest;
use std::collections::BTreeMap;

const TESTS: [FlashTest; 5] = [
    FlashTest::Align,
    FlashTest::OpenAu,
    FlashTest::Cache,
    FlashTest::Capacity,
    FlashTest::Class,
];

fn flash() -> clap::Command {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    root.find_subcommand("flash").unwrap().clone()
}

fn long_names(cmd: &clap::Command) -> Vec<String> {
    cmd.get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

#[test]
fn every_flash_subcommand_that_writes_takes_seed_and_destructive() {
    let flash = flash();
    let subs: Vec<&str> = flash.get_subcommands().map(|s| s.get_name()).collect();
    let names: Vec<&str> = TESTS.iter().map(|t| t.name()).collect();
    assert_eq!(subs, names, "one subcommand per flash test");
    for test in TESTS {
        let cmd = flash.find_subcommand(test.name()).unwrap();
        let longs = long_names(cmd);
        let has = |o: &str| longs.iter().any(|l| l == o);
        for permission in ["destructive", "preserve", "journal-dir"] {
            assert!(
                has(permission),
                "flash {} lacks --{permission}",
                test.name()
            );
        }
        assert_eq!(
            has("seed"),
            test.writes(),
            "flash {}: --seed exactly where generated data is written",
            test.name()
        );
    }
}

#[test]
fn a_long_option_means_one_thing_across_the_flash_subcommands() {
    let flash = flash();
    // Long name -> (value names, heading, help) as the first subcommand has it.
    let mut seen: BTreeMap<String, (String, Option<String>, String, String)> = BTreeMap::new();
    for sub in flash.get_subcommands() {
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let values = format!("{:?}", arg.get_value_names());
            let heading = arg.get_help_heading().map(str::to_string);
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let mine = (values, heading, help, sub.get_name().to_string());
            match seen.get(long) {
                None => {
                    seen.insert(long.to_string(), mine);
                }
                Some(first) => assert_eq!(
                    (&first.0, &first.1, &first.2),
                    (&mine.0, &mine.1, &mine.2),
                    "--{long} differs between flash {} and flash {}",
                    first.3,
                    mine.3
                ),
            }
        }
    }
    assert!(seen.contains_key("seed") && seen.contains_key("au"));
}

#[test]
fn align_takes_the_write_permissions_and_writes_nothing() {
    let out = crate::common::run_ok([
        "flash",
        "align",
        "sim:size=64M",
        "--destructive",
        "--no-save",
    ]);
    assert!(crate::common::text(&out.stdout).contains("AU"));
}

#[test]
fn the_man_examples_are_readme_lines_that_parse() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let examples = iocurve::commands::man::examples();
    assert!(examples.len() >= 40, "{} examples", examples.len());
    assert!(
        examples
            .iter()
            .any(|e| e.line.starts_with("iocurve flash capacity"))
    );
    for e in &examples {
        assert!(readme.contains(&e.line), "not in README: {}", e.line);
        let argv: Vec<String> = e
            .line
            .split_whitespace()
            .map(|w| w.trim_matches('"').to_string())
            .collect();
        if let Err(err) = Cli::try_parse_from(&argv) {
            panic!("README example does not parse: {}\n{err}", e.line);
        }
    }
}

#[test]
fn man_pages_end_with_examples_and_every_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::run_ok(["man".as_ref(), dir.path().as_os_str()]);
    let said = crate::common::text(&out.stdout);
    assert!(said.contains("man -l "), "{said}");
    let page = std::fs::read_to_string(dir.path().join("iocurve-flash-capacity.1")).unwrap();
    assert!(page.contains(".SH EXAMPLES"), "{page}");
    assert!(page.contains("\\-\\-fix"), "{page}");
    for (code, _) in iocurve::error::EXIT_CODES {
        assert!(page.contains(&format!("\\fB{code}\\fR")), "exit {code}");
    }
    let main = std::fs::read_to_string(dir.path().join("iocurve.1")).unwrap();
    assert!(main.contains(".SH \"EXIT STATUS\"") && main.contains(".SH EXAMPLES"));
}
