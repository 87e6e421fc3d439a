//! The lines `iocurve recover` prints: what became of each journal, and
//! that there was nothing to do. Pure builders; the command prints them.

use crate::safety::preserve::{Evidence, Outcome, Unknowable};
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
            kept,
            evidence,
        } => format!(
            "{target}: restored {} from {j}, read back and verified{}; {}",
            format_size(*bytes),
            caveat(*kept, *evidence),
            removal(left, "journal removed")
        ),
        Outcome::Restored {
            target,
            bytes,
            journals,
            left,
            kept,
            evidence,
        } => format!(
            "{target}: restored {} from {j} and {} more journal{} of the same test (latest first), read back and verified{}; {}",
            format_size(*bytes),
            journals - 1,
            if *journals > 2 { "s" } else { "" },
            caveat(*kept, *evidence),
            removal(left, "journals removed")
        ),
        Outcome::RecordedDone { marker, removed } => format!(
            "{j} was already restored (recorded in {}); not applied again; {}",
            marker.display(),
            if *removed {
                "journal removed".to_string()
            } else {
                format!("delete {j} once its file system is writable")
            }
        ),
        Outcome::SetAside { target, kept_at } => format!(
            "{j} belongs to a file that no longer exists ({target} is another file now); nothing was written. Delete {}",
            kept_at
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
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

/// What was not written back, and what told it.
fn caveat(kept: u64, evidence: Evidence) -> String {
    let kept = if kept > 0 {
        format!(
            " ({} written since the test left as found)",
            format_size(kept)
        )
    } else {
        String::new()
    };
    let told = match evidence {
        Evidence::TestHashes | Evidence::Quiet => "",
        Evidence::Forced => " (forced: written back whole)",
        Evidence::Unknown(Unknowable::OtherBoot) => {
            " (whole: the machine restarted since the test, so writes since could not be told)"
        }
        Evidence::Unknown(_) => {
            " (whole: the journal cannot tell whether the target was written since the test)"
        }
    };
    format!("{kept}{told}")
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
            kept: 0,
            evidence: Evidence::TestHashes,
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
