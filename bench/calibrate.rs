//! Prints the calibration table of iocurve's analyses over a seeded
//! population of simulated cards: how many each one answered, how many of
//! the answers were right and wrong, how many it declined. Run through
//! `bench/calibrate.sh`, which builds the release binary this drives.
//!
//! Usage: calibrate [--cards N] [--seed S] [--threads T] [--only NAME]
//!
//! `--only` runs one analysis: `curve`, `sustain` (both through the
//! binary), or one of the flash verdicts (`align`, `capacity`, `open-au`,
//! `open-au-detected`, `cache`, `class`), or `real`: the real cards of
//! `bench/real_cards.tsv` scored against their published facts (the same
//! cards whatever `--cards` and `--seed` say).

#[path = "calibration/mod.rs"]
mod calibration;

use calibration::flash::{self, FlashCalibration};
use std::path::PathBuf;

const USAGE: &str = "usage: calibrate [--cards N] [--seed S] [--threads T] [--only NAME]";

/// One flash analysis over a number of cards from a seed.
type FlashWork = fn(u64, usize) -> FlashCalibration;

/// The flash analyses, by the name `--only` takes.
const FLASH: [(&str, FlashWork); 6] = [
    ("align", flash::calibrate_align),
    ("capacity", flash::calibrate_capacity),
    ("open-au", flash::calibrate_open_au),
    ("open-au-detected", flash::calibrate_open_au_detected),
    ("cache", flash::calibrate_cache),
    ("class", calibration::class::calibrate_class),
];

struct Options {
    cards: usize,
    seed: u64,
    threads: usize,
    only: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        cards: 2000,
        seed: 1,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag} {v}: not a whole number"))
        };
        match flag.as_str() {
            "--cards" => o.cards = number(&value)? as usize,
            "--seed" => o.seed = number(&value)?,
            "--threads" => o.threads = number(&value)?.max(1) as usize,
            "--only" => o.only = Some(value),
            _ => return Err(format!("unknown option {flag}; {USAGE}")),
        }
    }
    let known =
        |n: &str| ["curve", "sustain", "real"].contains(&n) || FLASH.iter().any(|f| f.0 == n);
    match &o.only {
        Some(n) if !known(n) => Err(format!("--only {n}: no such analysis; {USAGE}")),
        _ => Ok(o),
    }
}

/// The release binary beside this example (target/release/examples/..).
fn iocurve_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe
        .parent()
        .and_then(|p| p.parent())
        .map(PathBuf::from)
        .unwrap_or_default();
    dir.join("iocurve")
}

/// Whether `name` is to run.
fn wanted(o: &Options, name: &str) -> bool {
    o.only.as_deref().is_none_or(|n| n == name)
}

fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("calibrate: {e}");
            std::process::exit(2);
        }
    };
    if o.only.as_deref() != Some("real") {
        println!("{} cards per analysis, seed {}\n", o.cards, o.seed);
    }
    let mut tallies = Vec::new();
    if wanted(&o, "curve") || wanted(&o, "sustain") {
        let binary = iocurve_binary();
        let iocurve = move || std::process::Command::new(&binary);
        tallies = calibration::calibrate_all(&iocurve, o.seed, o.cards, o.threads);
        print!("{}", calibration::table(&tallies));
    }
    let flash: Vec<FlashCalibration> = FLASH
        .iter()
        .filter(|(name, _)| wanted(&o, name))
        .map(|(_, work)| flash::split(o.seed, o.cards, o.threads, *work))
        .collect();
    if !flash.is_empty() {
        println!("\nflash verdicts by confidence:\n");
        print!("{}", flash::confidence_table(&flash));
    }
    for t in tallies.iter().chain(flash.iter().map(|f| &f.tally)) {
        for e in &t.wrong_examples {
            println!("\nwrong ({}): {e}", t.analysis);
        }
        for e in &t.declined_examples {
            println!("\ndeclined ({}): {e}", t.analysis);
        }
    }
    if wanted(&o, "real") {
        print_real();
    }
}

/// The real-card calibration's table and the examples behind it.
fn print_real() {
    let results = match calibration::real::calibrate_real() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("calibrate: bench/real_cards.tsv: {e}");
            std::process::exit(1);
        }
    };
    println!("\nreal cards of bench/real_cards.tsv, scored against their published facts\n");
    print!("{}", flash::confidence_table(&results));
    for t in results.iter().map(|r| &r.tally) {
        for e in &t.wrong_examples {
            println!("\nwrong ({}): {e}", t.analysis);
        }
        for e in &t.declined_examples {
            println!("\ndeclined ({}): {e}", t.analysis);
        }
    }
}
