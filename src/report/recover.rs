//! The lines `iocurve recover` prints: what became of each journal, and
//! that there was nothing to do. Pure builders; the command prints them.

use crate::safety::preserve::Outcome;
use crate::units::format_size;
use std::path::Path;

/// Said when the journal directory holds nothing unfinished.
pub fn nothing_to_recover(dir: &Path) -> String {
    format!(
        "no unfinished journals in {}: nothing to recover",
        dir.display()
    )
}

/// What `recover` did with one journal.
pub fn describe(journal: &Path, outcome: &Outcome) -> String {
    let j = journal.display();
    match outcome {
        Outcome::Restored {
            target,
            bytes,
            journals: 1,
            left,
        } => format!(
            "{target}: restored {} from {j}, read back and verified; {}",
            format_size(*bytes),
            removal(left, "journal removed")
        ),
        Outcome::Restored {
            target,
            bytes,
            journals,
            left,
        } => format!(
            "{target}: restored {} from {j} and {} more journal{} of the same test (latest first), read back and verified; {}",
            format_size(*bytes),
            journals - 1,
            if *journals > 2 { "s" } else { "" },
            removal(left, "journals removed")
        ),
        Outcome::InUse { pid } => format!(
            "{j}: left alone, in use by {} (a test still saving, writing or restoring, or another recover); that process finishes it",
            crate::safety::lock::holder_name(*pid)
        ),
        Outcome::Discarded { target } => format!(
            "{}: {j} was never armed, so the test never wrote; journal removed",
            target.as_deref().unwrap_or("(target unknown)")
        ),
        Outcome::AlreadyDone => format!("{j} was already restored; leftover journal removed"),
    }
}

/// What became of the journals after a verified restore: removed, or
/// left (a read-only file system), with what to do about them.
fn removal(left: &[String], removed: &str) -> String {
    if left.is_empty() {
        return removed.to_string();
    }
    let each: Vec<String> = left
        .iter()
        .map(|l| crate::safety::preserve::journal_left_note(l))
        .collect();
    each.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn restored(journals: usize) -> String {
        let outcome = Outcome::Restored {
            target: "/dev/sdz".into(),
            bytes: 4096,
            journals,
            left: Vec::new(),
        };
        describe(Path::new("j.iojournal"), &outcome)
    }

    #[test]
    fn one_journal_is_named_alone() {
        let text = restored(1);
        assert!(text.starts_with("/dev/sdz: restored "), "{text}");
        assert!(text.ends_with("from j.iojournal, read back and verified; journal removed"));
    }

    #[test]
    fn more_journals_are_counted_with_the_right_plural() {
        assert!(restored(2).contains(" and 1 more journal of the same test"));
        assert!(restored(3).contains(" and 2 more journals of the same test"));
    }

    #[test]
    fn discarded_and_finished_journals_say_why_they_went() {
        let unknown = describe(Path::new("j"), &Outcome::Discarded { target: None });
        assert_eq!(
            unknown,
            "(target unknown): j was never armed, so the test never wrote; journal removed"
        );
        assert_eq!(
            describe(Path::new("j"), &Outcome::AlreadyDone),
            "j was already restored; leftover journal removed"
        );
        assert_eq!(
            nothing_to_recover(Path::new("d")),
            "no unfinished journals in d: nothing to recover"
        );
    }
}
