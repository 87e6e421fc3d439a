//! Who holds a journal: the process with its lock, or a live iocurve that
//! made it. A journal a running test holds is that test's to restore, and
//! nobody else's to touch.

use crate::safety::lock::{self, Lock};
use crate::safety::trust;
use anyhow::Result;
use std::path::Path;

/// Who holds the lock of the journal at `path`, when someone does.
pub(super) fn held_by(path: &Path) -> Option<String> {
    match open_held(path).ok()? {
        Opened::Ours(_) => None,
        Opened::Held(pid) => Some(lock::holder_name(pid)),
    }
}

/// A journal opened through [`trust`], with its lock taken, or the pid
/// of whoever holds that lock (from `/proc/locks`, else the journal's
/// name).
pub(super) enum Opened {
    Ours(trust::Trusted),
    Held(Option<u32>),
}

pub(super) fn open_held(path: &Path) -> Result<Opened> {
    let trusted = trust::open_journal(path).map_err(|why| why.refuse_journal(path))?;
    Ok(match lock::try_exclusive(&trusted.file)? {
        Lock::Taken => Opened::Ours(trusted),
        Lock::Held(pid) => Opened::Held(pid.or_else(|| pid_in_name(path))),
    })
}

/// The pid in a journal's name (`…-<pid>.iocj`), for a lock whose holder
/// `/proc/locks` did not show.
pub(super) fn pid_in_name(path: &Path) -> Option<u32> {
    let stem = path.file_stem()?.to_str()?;
    stem.rsplit('-').next()?.parse().ok()
}

/// Whether a process with this pid exists (any program).
pub(super) fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether `pid` is another running iocurve (the owner of a journal).
pub(super) fn is_live_iocurve(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // Field 3, after the parenthesised name: Z is a zombie, already dead.
    let alive = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'));
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    alive && comm.trim() == "iocurve"
}
