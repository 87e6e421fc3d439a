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

#[cfg(test)]
mod tests {
    use super::*;

    fn restored(journals: usize) -> String {
        let outcome = Outcome::Restored {
            target: "/dev/sdz".into(),
            bytes: 4096,
            journals,
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
