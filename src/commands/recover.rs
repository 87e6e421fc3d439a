//! `iocurve recover [JOURNAL]`: finishes preserve-mode tests that did not
//! (crash, power loss, kill -9, a device that stopped answering). Each armed
//! journal is checked whole, written back to the medium it came from, read
//! back and verified, then deleted; never-armed and finished ones are
//! removed. A test that journalled more as it ran left several journals:
//! naming any one restores them all, latest first. Running it again finds
//! nothing left to do. A journal iocurve could not have made (a link, a
//! file someone else owns or may write, in a directory others control) is
//! refused with the reason and left alone, and the others are still done.
//! Blocks written after the test are left as found; a journal of a test
//! killed mid-run is refused where the target was written since (`--force`
//! puts the originals back anyway), and one whose file is gone is set aside.

use crate::cli::RecoverArgs;
use crate::error::exit_code;
use crate::report::recover::{describe, nothing_to_recover};
use crate::safety::{preserve, trust};
use anyhow::Result;

pub fn recover(args: &RecoverArgs) -> Result<i32> {
    // Entries under a journal's name that are not regular files: refused
    // unopened, after the journals that can be done are done.
    let mut refused = Vec::new();
    let journals = match &args.journal {
        Some(j) => vec![j.clone()],
        None => {
            let (dir, found) = preserve::unfinished(args.journal_dir.as_deref())?;
            refused = trust::list_journals(&dir)?.refused;
            if found.is_empty() && refused.is_empty() {
                crate::output::print_fitted(&format!("{}\n", nothing_to_recover(&dir)));
            }
            found
        }
    };
    let mut code = 0;
    for j in &journals {
        // Restored already with an earlier journal of the same test.
        if args.journal.is_none() && !j.exists() {
            continue;
        }
        match preserve::recover(j, args.force) {
            // The line names the journal's paths: printed through the
            // output step, which escapes what a terminal would obey.
            Ok(outcome) => crate::output::print_fitted(&format!("{}\n", describe(j, &outcome))),
            // Found in the listing, gone since: its own test finished it.
            Err(_) if args.journal.is_none() && !j.exists() => {}
            Err(e) => report(&e, &mut code),
        }
    }
    for (path, why) in &refused {
        report(&why.refuse_journal(path), &mut code);
    }
    Ok(code)
}

/// Prints a journal's error and keeps the first one's exit code.
fn report(e: &anyhow::Error, code: &mut i32) {
    eprintln!("Error: {}", crate::error::render(e));
    if *code == 0 {
        *code = exit_code(e);
    }
}
