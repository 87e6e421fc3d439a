//! Journals left behind: the ones `recover` with no path works through,
//! the unnamed ones a kill leaves while a journal is made, and the refusal
//! of a write test on a medium whose last test was never restored.

use super::directory::journal_dir;
use super::holder::{held_by, pid_in_name, process_exists};
use super::marker;
use super::recover_command::recover_command;
use crate::error::usage;
use crate::safety::identity::Identity;
use crate::safety::journal::{self, Journal, State};
use crate::safety::trust;
use anyhow::Result;
use std::io;
use std::path::{Path, PathBuf};

/// The journals in `dir` that are regular files, oldest name first; links
/// and other kinds are not followed (`recover` reports them as refused,
/// see [`trust::list_journals`]).
pub fn list(dir: &Path) -> io::Result<Vec<PathBuf>> {
    Ok(trust::list_journals(dir)?.files)
}

/// The journal directory (`--journal-dir`, or the default) and the
/// journals left in it, oldest name first: what `recover` with no journal
/// named works through.
pub fn unfinished(asked: Option<&Path>) -> Result<(PathBuf, Vec<PathBuf>)> {
    let dir = journal_dir(asked)?;
    sweep_unnamed(&dir);
    let found = list(&dir)?;
    Ok((dir, found))
}

/// Removes journals that never got their name (`*.iocj-new`: a kill
/// between creating and naming one) once the process that made them is
/// gone. Such a file never held data for a test that wrote: a journal is
/// armed only after it is named.
fn sweep_unnamed(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        let making = path
            .extension()
            .is_some_and(|x| x == journal::MAKING_EXTENSION);
        let maker_gone = pid_in_name(&path).is_some_and(|pid| !process_exists(pid));
        let own_kind = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if making && maker_gone && own_kind {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Refuses a write test on `path` while `dir` holds an unfinished journal
/// of it (armed or written, or too damaged to tell but named after its
/// device); not one whose restore a marker records (see [`marker`]).
pub fn refuse_if_unfinished(dir: &Path, path: &Path) -> Result<()> {
    let Ok(now) = Identity::of_path(path) else {
        return Ok(());
    };
    let tag = format!("-{}_{}-", now.major, now.minor);
    for j in list(dir).unwrap_or_default() {
        let blocks = match Journal::peek(&j) {
            Ok(found) => {
                matches!(found.state, State::Armed | State::Written)
                    && found
                        .meta
                        .as_ref()
                        .is_some_and(|m| m.identity.is_same_medium(&now))
                    && marker::find(&found).is_none()
            }
            Err(_) => j
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains(&tag)),
        };
        if blocks && let Some(holder) = held_by(&j) {
            return Err(usage(format!(
                "refusing to write to {}: the journal {} of a preserve-mode test on it is in use by {holder}, which is still running (a test restoring it, or a recover): wait for it to end",
                path.display(),
                j.display()
            )));
        }
        if blocks {
            return Err(usage(format!(
                "refusing to write to {}: an earlier preserve-mode test did not finish restoring its original data, which is kept in the journal {}. Run `{}` first",
                path.display(),
                j.display(),
                recover_command(&j)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::preserve::fixture::setup;

    #[test]
    fn unnamed_journals_are_swept_only_once_their_maker_is_gone() {
        let s = setup(42);
        let gone = s.journals.join("disk.img-1_2-3-999999999.iocj-new");
        let alive = s
            .journals
            .join(format!("disk.img-1_2-3-{}.iocj-new", std::process::id()));
        std::fs::write(&gone, b"").unwrap();
        std::fs::write(&alive, b"").unwrap();
        let (_, found) = unfinished(Some(&s.journals)).unwrap();
        assert_eq!(found, vec![s.journal.clone()], "never listed as journals");
        assert!(!gone.exists(), "a dead maker's file is swept");
        assert!(alive.exists(), "a live maker's file is left");
    }
}
