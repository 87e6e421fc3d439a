//! Prints the calibration table of iocurve's analyses over a seeded
//! population of simulated cards: how many each one answered, how many of
//! the answers were right and wrong, how many it declined. Run through
//! `bench/calibrate.sh`, which builds the release binary this drives.
//!
//! Usage: calibrate [--cards N] [--seed S] [--threads T] [--only class]
//!
//! `--only class` scores `flash class` alone (in-process: no binary needed).

#[path = "calibration/mod.rs"]
mod calibration;

use std::path::PathBuf;

struct Options {
    cards: usize,
    seed: u64,
    threads: usize,
    /// One analysis only (`class`), or all.
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
            "--only" if value == "class" => o.only = Some(value),
            _ => {
                return Err(format!(
                    "unknown option {flag} {value}; usage: calibrate [--cards N] [--seed S] [--threads T] [--only class]"
                ));
            }
        }
    }
    Ok(o)
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

fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("calibrate: {e}");
            std::process::exit(2);
        }
    };
    let class = || {
        calibration::flash::split(
            o.seed,
            o.cards,
            o.threads,
            calibration::class::calibrate_class,
        )
    };
    if o.only.is_some() {
        println!("{} cards, seed {}\n", o.cards, o.seed);
        let r = class();
        print!(
            "{}",
            calibration::flash::confidence_table(std::slice::from_ref(&r))
        );
        for e in &r.tally.wrong_examples {
            println!("\nwrong ({}): {e}", r.tally.analysis);
        }
        return;
    }
    let binary = iocurve_binary();
    let tallies = calibration::calibrate_all(&binary, o.seed, o.cards, o.threads);
    println!("{} cards per analysis, seed {}\n", o.cards, o.seed);
    print!("{}", calibration::table(&tallies));
    let flash = [
        calibration::flash::split(
            o.seed,
            o.cards,
            o.threads,
            calibration::flash::calibrate_align,
        ),
        calibration::flash::split(
            o.seed,
            o.cards,
            o.threads,
            calibration::flash::calibrate_capacity,
        ),
        class(),
    ];
    println!("\nflash verdicts by confidence:\n");
    print!("{}", calibration::flash::confidence_table(&flash));
    let all = tallies.iter().chain(flash.iter().map(|f| &f.tally));
    for t in all {
        for e in &t.wrong_examples {
            println!("\nwrong ({}): {e}", t.analysis);
        }
    }
}
