//! `iocurve recover`: finishing what a journal started after a crash, for
//! every armed journal of the test it belongs to, and what came of it.
//!
//! The target is opened once and its identity checked on that very
//! descriptor; everything after goes through it. A journal whose file is
//! proven gone (another file took its inode) is set aside, never applied.
//! A journal with a table of what its test wrote is written back block by
//! block (blocks written since are left as found); one without (a test
//! killed mid-run) only when nothing wrote to the target after the test's
//! last heartbeat (see [`super::evidence`]), or with `--force`.

use super::evidence::{Evidence, weigh};
use super::holder::{Opened, is_live_iocurve, open_held};
use super::marker;
use super::medium::{medium_free, open_target, reader_for};
use super::messages::{refusal, restore_failure, written_since};
use super::recover_command::recover_command;
use super::restore::{apply, remove_own};
use super::save::discard;
use super::unfinished::list;
use super::writeback::hash_test_bytes;
use crate::error::{IoFailure, usage};
use crate::safety::identity::{self, Identity};
use crate::safety::journal::{self, EXTENSION, Journal, State};
use crate::safety::lock;
use anyhow::Result;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What `recover` did with one journal.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The original data was written back and verified, from this journal
    /// and the other armed ones of the same test (`journals` in all).
    Restored {
        target: String,
        bytes: u64,
        journals: usize,
        /// Why journals are still there after the verified restore (a
        /// read-only file system), one line each.
        left: Vec<String>,
        /// Bytes written since the test: left as found.
        kept: u64,
        /// What decided which blocks were written back.
        evidence: Evidence,
    },
    /// Never armed: the target was never written; the journal was removed.
    Discarded { target: Option<String> },
    /// Already restored earlier; the leftover file was removed.
    AlreadyDone,
    /// Restored earlier while the journal could not be marked done: the
    /// restore is recorded in `marker`, so it was not applied again; the
    /// journal was removed, or is still there where its file system is
    /// read-only.
    RecordedDone { marker: PathBuf, removed: bool },
    /// The file the journal belongs to is gone (another file took its
    /// inode): never applied; the journals now lie at `kept_at` (renamed
    /// to `….stale` where their directory allowed), for the user to delete.
    SetAside {
        target: String,
        kept_at: Vec<PathBuf>,
    },
    /// A running test holds the journal (its lock, or its pid is a live
    /// iocurve): left alone, since that test restores it itself.
    InUse { pid: Option<u32> },
}

/// Finishes one journal: restores an armed one (after checking that the
/// medium is the same one, the journal is whole and nothing wrote to the
/// medium since, unless `force`), removes a never-armed or finished one,
/// sets aside one whose file is gone, and leaves alone one a running test
/// holds. The journal's lock is taken before anything is read, so a test
/// that is still copying its original data is never mistaken for one that
/// died before arming. An armed journal is restored with the other armed
/// journals of its test, latest first (see [`restore_test`]), so that the
/// one path any message names finishes the whole test.
pub fn recover(path: &Path, force: bool) -> Result<Outcome> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Err(usage(format!(
            "there is no journal at {}: it was already recovered, or the path is wrong (`iocurve recover` without a path finishes every journal in the journal directory)",
            path.display()
        )));
    }
    // Only a journal iocurve could have made, read from the descriptor
    // checked; from here on its real path (no links to swap). Its lock is
    // taken before anything is read: a live test keeps its journals.
    let trusted = match open_held(path)? {
        Opened::Ours(trusted) => trusted,
        Opened::Held(pid) => return Ok(Outcome::InUse { pid }),
    };
    let path = trusted.path.as_path();
    let journal = match Journal::from_open_file(path, trusted.file) {
        Ok(j) => j,
        Err(e) if raw_state(path) == Some(State::Filling) => {
            let _ = e;
            discard(path);
            return Ok(Outcome::Discarded { target: None });
        }
        Err(e) => return Err(refusal(path, &e)),
    };
    if let Some(pid) = journal.meta.as_ref().map(|m| m.pid) {
        if is_live_iocurve(pid) {
            return Ok(Outcome::InUse { pid: Some(pid) });
        }
    }
    match journal.state {
        State::Filling => {
            let target = journal.meta.as_ref().map(|m| m.identity.path.clone());
            let _ = remove_own(&journal);
            Ok(Outcome::Discarded { target })
        }
        State::Done => {
            let _ = remove_own(&journal);
            Ok(Outcome::AlreadyDone)
        }
        State::Armed | State::Written => match marker::find(&journal) {
            Some(marker) => Ok(recorded_done(&journal, marker)),
            None => restore_test(journal, force),
        },
    }
}

/// A journal whose restore a marker records: removed where it can be.
fn recorded_done(journal: &Journal, marker: PathBuf) -> Outcome {
    let removed = remove_own(journal).is_ok();
    if removed {
        marker::forget(journal);
    }
    Outcome::RecordedDone { marker, removed }
}

fn unfinished(state: State) -> bool {
    matches!(state, State::Armed | State::Written)
}
/// Opens another journal of a test through [`trust`] and takes its lock;
/// refused while a live process holds it.
fn open_part(path: &Path) -> Result<Journal> {
    match open_held(path)? {
        Opened::Ours(trusted) => {
            Journal::from_open_file(&trusted.path, trusted.file).map_err(|e| refusal(path, &e))
        }
        Opened::Held(pid) => Err(usage(format!(
            "{} is held by {}, which is still running: let it finish, then run `{}` again",
            path.display(),
            lock::holder_name(pid),
            recover_command(path)
        ))),
    }
}

/// Restores every armed journal of the test `journal` belongs to (same
/// process, same medium, same directory), the latest part first. Order
/// matters where the medium aliases addresses (a wrapping fake card): a
/// later journal may have copied bytes an earlier part's writes had
/// already changed, and the earlier journal, written back last, puts the
/// originals over them. The first failure stops: earlier parts stay armed.
fn restore_test(journal: Journal, force: bool) -> Result<Outcome> {
    let parts = parts_of_test(&journal)?;
    let count = parts.len();
    let mut open = Vec::new();
    let mut given = Some(journal);
    for path in &parts {
        let part = match given.take_if(|j| &j.path == path) {
            Some(j) => j,
            None => open_part(path)?,
        };
        if unfinished(part.state) && marker::find(&part).is_none() {
            open.push(part);
        }
    }
    let Some(first) = open.first() else {
        return Ok(Outcome::AlreadyDone);
    };
    let (target, located) = match open_checked(first)? {
        Checked::Stale(shown) => {
            drop(open);
            let kept_at = parts.iter().map(|p| set_aside(p)).collect();
            return Ok(Outcome::SetAside {
                target: shown,
                kept_at,
            });
        }
        Checked::Ready(target, located) => (target, located),
    };
    medium_free(&target, &located, &first.path)?;
    // Every part is checked and judged before the first byte is written:
    // the parts written back first change the target for the later ones.
    let mut verdicts = Vec::new();
    for part in &open {
        part.verify_all().map_err(|e| refusal(&part.path, &e))?;
        verdicts.push(judge(part, &target, &located, force)?);
    }
    let (mut bytes, mut kept, mut left) = (0, 0, Vec::new());
    for part in &mut open {
        let done = write_part(part, &target, &located, force)?;
        bytes += done.bytes;
        kept += done.kept;
        let why = done.journal_left;
        left.extend(why.map(|why| format!("{}: {why}", part.path.display())));
    }
    Ok(Outcome::Restored {
        target: located.display().to_string(),
        bytes,
        journals: count,
        left,
        kept,
        evidence: verdicts[0],
    })
}

/// Renames a journal whose file is gone to `<name>.stale` (never over
/// another file), where it no longer counts as unfinished; where it is
/// now.
fn set_aside(path: &Path) -> PathBuf {
    let mut stale = path.as_os_str().to_owned();
    stale.push(".stale");
    let stale = PathBuf::from(stale);
    let renamed = rustix::fs::renameat_with(
        rustix::fs::CWD,
        path,
        rustix::fs::CWD,
        &stale,
        rustix::fs::RenameFlags::NOREPLACE,
    );
    match renamed {
        Ok(()) => {
            if let Some(dir) = path.parent() {
                let _ = journal::sync_dir(dir);
            }
            stale
        }
        Err(_) => path.to_path_buf(),
    }
}

/// The armed journals of `journal`'s test beside it, itself included,
/// latest part first. A damaged one named after the same device and
/// process refuses them all: it may be a later part, whose place in the
/// order is unknown (one that never got past filling is no part).
fn parts_of_test(journal: &Journal) -> Result<Vec<PathBuf>> {
    let Some(meta) = journal.meta.as_ref() else {
        return Ok(vec![journal.path.clone()]);
    };
    let dir = journal.path.parent().unwrap_or(Path::new("."));
    let own = format!("-{}_{}-", meta.identity.major, meta.identity.minor);
    let pid = format!("-{}.{EXTENSION}", meta.pid);
    let mut parts = vec![(meta.part, journal.path.clone())];
    for p in list(dir).unwrap_or_default() {
        if p == journal.path {
            continue;
        }
        let other = match Journal::peek(&p) {
            Ok(other) => other,
            Err(e) => {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                let sibling = name.is_some_and(|n| n.contains(&own) && n.ends_with(&pid));
                if sibling && raw_state(&p) != Some(State::Filling) {
                    return Err(refusal(&p, &e));
                }
                continue;
            }
        };
        if let Some(m) = other
            .meta
            .as_ref()
            .filter(|m| unfinished(other.state) && m.pid == meta.pid && m.identity == meta.identity)
        {
            parts.push((m.part, p));
        }
    }
    parts.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    Ok(parts.into_iter().map(|(_, p)| p).collect())
}

/// The target of a journal, opened once and checked on that descriptor.
enum Checked {
    /// The medium the journal was taken from, and where it was found.
    Ready(File, PathBuf),
    /// Its file is gone (another took its inode): never to be applied.
    Stale(String),
}

/// Finds the medium `journal` was taken from, opens it once and checks
/// its identity on that descriptor.
fn open_checked(journal: &Journal) -> Result<Checked> {
    let meta = journal
        .meta
        .as_ref()
        .expect("an armed journal has metadata");
    let located = identity::locate(&meta.identity).map_err(|e| {
        IoFailure::new(
            format!("cannot find {} to restore it: {e}; the journal {} is kept: reconnect the device and run `{}` again", meta.identity.path, journal.path.display(), recover_command(&journal.path)),
            None,
        )
    })?;
    let target = open_target(&located, meta.identity.kind == "block_device").map_err(|e| {
        let msg = format!("cannot open {} to restore it: {e}", located.display());
        IoFailure::new(msg, Some(e))
    })?;
    let now = Identity::of_file(&target, &located).map_err(|e| {
        IoFailure::new(
            format!(
                "cannot examine {} to restore it: {e}; the journal {} is kept",
                located.display(),
                journal.path.display()
            ),
            None,
        )
    })?;
    if meta.identity.replaced_by(&now) {
        return Ok(Checked::Stale(located.display().to_string()));
    }
    if !meta.identity.is_same_medium(&now) {
        let why = meta.identity.mismatch(&now).unwrap_or_default();
        return Err(usage(format!(
            "refusing to restore {} onto {}: it is not the medium the journal was taken from ({why}). The journal is kept",
            journal.path.display(),
            located.display()
        )));
    }
    Ok(Checked::Ready(target, located))
}

/// What decides the write-back: the journal's table of what the test
/// wrote, or (a test killed mid-run) its last heartbeat against the target
/// now. Refused where the target was written since the test.
fn judge(journal: &Journal, target: &File, name: &Path, force: bool) -> Result<Evidence> {
    if force {
        return Ok(Evidence::Forced);
    }
    if journal.state == State::Written {
        return Ok(Evidence::TestHashes);
    }
    weigh(journal.last_beat().as_ref(), target)
        .map_err(|seen| written_since(&journal.path, name, seen))
}

/// Writes one journal back. One without a table first gets it, from the
/// target as it is now (judged to hold only the test's writes), stored
/// before anything is written, so that a recover killed half-way is
/// finished block by block.
fn write_part(
    journal: &mut Journal,
    target: &File,
    name: &Path,
    force: bool,
) -> Result<super::restore::Restored> {
    if journal.state == State::Armed && !force {
        let table = reader_for(target)
            .and_then(|r| hash_test_bytes(journal, &r))
            .map_err(|e| {
                let msg = format!("cannot read {} before restoring it: {e}", name.display());
                IoFailure::new(msg, Some(e))
            })?;
        let _ = journal.store_hashes(table);
    }
    apply(journal, target, name, force).map_err(|e| restore_failure(&journal.path, e))
}

/// The state word of a journal whose rest may be damaged.
fn raw_state(path: &Path) -> Option<State> {
    let journal = Journal::peek(path);
    if let Ok(j) = journal {
        return Some(j.state);
    }
    let f = File::open(path).ok()?;
    let mut p = [0u8; 16];
    f.read_exact_at(&mut p, 0).ok()?;
    (&p[0..8] == journal::MAGIC && p[8..16] == *b"FILLING\0").then_some(State::Filling)
}

#[cfg(test)]
#[path = "recover/tests.rs"]
mod tests;
