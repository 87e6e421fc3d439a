//! Putting preserved data back after a command, whatever ended it, and
//! saying so: in the result's notes, or in the error that ended the run.

use crate::medium::OpenTarget;
use crate::result::RunResult;

/// A command's error after which the preserved data was put back: said in
/// that order, the error's kind (usage, I/O) kept for the exit code.
#[derive(Debug)]
struct RestoredAfter(anyhow::Error);

impl std::fmt::Display for RestoredAfter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}; the original data was restored and verified",
            crate::error::render(&self.0)
        )
    }
}

impl std::error::Error for RestoredAfter {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.0.as_ref())
    }
}

/// Puts back the preserved data after a command failed half-way; returns
/// the command's error, with the restore's outcome added.
pub fn restore_after_error(target: &mut OpenTarget, err: anyhow::Error) -> anyhow::Error {
    match target.restore() {
        None => err,
        Some(Ok(_)) => anyhow::Error::new(RestoredAfter(err)),
        Some(Err(e)) => e.context(crate::error::render(&err)),
    }
}

/// Puts the preserved data back after the test (interrupted or failed ones
/// too), and records in the result what happened; a restore that fails
/// becomes the result's error, naming the journal and the recover command.
pub fn restore(target: &mut OpenTarget, result: &mut RunResult) {
    let outcome = target.restore();
    match outcome {
        None => {}
        Some(Ok(done)) => {
            if done.name_moved {
                result.target.notes.push(crate::result::Caveat::NameMoved {
                    path: result.target.path.clone(),
                });
            }
            for left in &done.journal_left {
                result
                    .target
                    .notes
                    .push(crate::result::Caveat::JournalLeft {
                        safety_words: left.clone(),
                    });
            }
            result.target.notes.push(crate::result::Caveat::Preserved {
                bytes: done.bytes + done.unchanged,
                save_s: done.save_time.as_secs_f64(),
                restore_s: done.restore_time.as_secs_f64(),
                kept_bytes: done.kept,
            });
        }
        Some(Err(e)) => {
            let message = crate::error::render(&e);
            result.error = Some(match result.error.take() {
                Some(first) => format!("{first}; then {message}"),
                None => message,
            });
        }
    }
}
