//! `iocurve recover [JOURNAL]`: finishes preserve-mode tests that did not
//! (crash, power loss, kill -9, a device that stopped answering). Each armed
//! journal is checked whole, written back to the medium it came from, read
//! back and verified, then deleted; never-armed and finished ones are
//! removed. A test that journalled more as it ran left several journals:
//! naming any one restores them all, latest first. Running it again finds
//! nothing left to do.

use crate::cli::RecoverArgs;
use crate::error::exit_code;
use crate::safety::preserve::{self, Outcome};
use crate::units::format_size;
use anyhow::Result;
use std::path::PathBuf;

pub fn recover(args: &RecoverArgs) -> Result<i32> {
    let journals = match &args.journal {
        Some(j) => vec![j.clone()],
        None => all_in_dir(args)?,
    };
    let mut code = 0;
    for j in &journals {
        // Restored already with an earlier journal of the same test.
        if args.journal.is_none() && !j.exists() {
            continue;
        }
        match preserve::recover(j) {
            Ok(outcome) => println!("{}", describe(j, &outcome)),
            Err(e) => {
                eprintln!("Error: {}", crate::error::render(&e));
                if code == 0 {
                    code = exit_code(&e);
                }
            }
        }
    }
    Ok(code)
}

fn all_in_dir(args: &RecoverArgs) -> Result<Vec<PathBuf>> {
    let dir = preserve::journal_dir(args.journal_dir.as_deref())?;
    let found = preserve::list(&dir)?;
    if found.is_empty() {
        println!(
            "no unfinished journals in {}: nothing to recover",
            dir.display()
        );
    }
    Ok(found)
}

fn describe(journal: &std::path::Path, outcome: &Outcome) -> String {
    let j = journal.display();
    match outcome {
        Outcome::Restored {
            target,
            bytes,
            journals: 1,
        } => format!(
            "{target}: restored {} from {j}, read back and verified; journal removed",
            format_size(*bytes)
        ),
        Outcome::Restored {
            target,
            bytes,
            journals,
        } => format!(
            "{target}: restored {} from {j} and {} more journal{} of the same test (latest first), read back and verified; journals removed",
            format_size(*bytes),
            journals - 1,
            if *journals > 2 { "s" } else { "" }
        ),
        Outcome::Discarded { target } => format!(
            "{}: {j} was never armed, so the test never wrote; journal removed",
            target.as_deref().unwrap_or("(target unknown)")
        ),
        Outcome::AlreadyDone => format!("{j} was already restored; leftover journal removed"),
    }
}
