//! The messages after a failure or a refusal: what happened, what the
//! target holds now, where the original data is kept and the command that
//! puts it back. Kept together so that every one names the same command.

use super::evidence::Seen;
use super::recover_command::recover_command;
use super::restore::{Changes, changed_bytes};
use super::restore_error::RestoreError;
use super::save::Preserved;
use crate::error::{IoFailure, usage};
use crate::safety::journal::{Journal, JournalError};
use crate::units::format_size;
use std::path::Path;

/// What to do about a journal left behind after a verified restore:
/// `left` names it and says why it stayed (and where its restore is
/// recorded, so that no `recover` applies it again).
pub fn journal_left_note(left: &str) -> String {
    format!(
        "the journal was not removed after the verified restore ({left}); delete it once its file system is writable"
    )
}

/// The error for a restore that failed after a test: what failed, what the
/// test left on the target (measured against the journal, not assumed),
/// where the original is and the command that puts it back.
pub fn failed_after_test(p: &Preserved, e: RestoreError) -> anyhow::Error {
    let (what, source, fix) = match e {
        RestoreError::Journal(j) => (
            format!(
                "the journal {} cannot be read back: {j}",
                p.journal.display()
            ),
            None,
            "once it can be read",
        ),
        RestoreError::Medium(msg, source) => (msg, Some(source), "once the device answers again"),
    };
    IoFailure::new(
        format!(
            "{what}. {} The original data is kept in {}: {fix}, run `{}`",
            target_state(p),
            p.journal.display(),
            recover_command(&p.journal)
        ),
        source,
    )
    .into()
}

/// What the test left on its target, in a sentence, compared with the
/// journal's checksums.
fn target_state(p: &Preserved) -> String {
    let target = p.name.display();
    let measured = p
        .lock
        .try_clone()
        .map_err(JournalError::Io)
        .and_then(|f| Journal::from_open_file(&p.journal, f))
        .map_err(|e| e.to_string())
        .and_then(|j| changed_bytes(&j, &p.target).map_err(|e| e.to_string()));
    match measured {
        Ok(Changes {
            changed: 0,
            unreadable: 0,
            total,
        }) => format!(
            "{target} reads back as the original in all {} journalled.",
            format_size(total)
        ),
        Ok(seen) => {
            let unreadable = if seen.unreadable > 0 {
                format!(
                    ", and {} could not be read back",
                    format_size(seen.unreadable)
                )
            } else {
                String::new()
            };
            format!(
                "The test wrote to {target}: {} of the {} journalled differ from the original now{unreadable} (compared in 1 MiB pieces with the journal's checksums).",
                format_size(seen.changed),
                format_size(seen.total)
            )
        }
        Err(why) => format!(
            "The test may have written to {target}: comparing it with the journal failed ({why})."
        ),
    }
}

/// The error for a failed restore: what failed, and that the journal waits.
pub fn restore_failure(journal: &Path, e: RestoreError) -> anyhow::Error {
    match e {
        RestoreError::Journal(j) => refusal(journal, &j),
        RestoreError::Medium(msg, source) => IoFailure::new(
            format!(
                "{msg}. The original data is kept in {}: once the device answers again, run `{}`",
                journal.display(),
                recover_command(journal)
            ),
            Some(source),
        )
        .into(),
    }
}

/// `recover` will not use a journal: it writes nothing, and keeps it.
pub(super) fn refusal(path: &Path, e: &JournalError) -> anyhow::Error {
    IoFailure::new(
        format!("refusing to use the journal {}: {e}. recover wrote nothing to the target; the journal is kept for inspection", path.display()),
        None,
    )
    .into()
}

/// `recover` will not write a journal back over data written since its
/// test: what was seen, and the command that does it anyway.
pub(super) fn written_since(journal: &Path, target: &Path, seen: Seen) -> anyhow::Error {
    let what = match seen {
        Seen::ChangedAfter(d) => format!(
            "it was changed {:.1} s after the test's last heartbeat",
            d.as_secs_f64()
        ),
        Seen::SectorsWritten { sectors, allowed } => format!(
            "{} were written to it after the test's last heartbeat, more than the {} the test could have",
            format_size(sectors * 512),
            format_size(allowed * 512)
        ),
    };
    usage(format!(
        "refusing to restore {} onto {}: {what}, so it holds newer data the originals would overwrite; the journal is kept. `iocurve recover --force {}` puts the originals back anyway",
        journal.display(),
        target.display(),
        journal.display()
    ))
}
