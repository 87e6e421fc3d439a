//! Where a restore is recorded when its journal cannot be marked done (its
//! file system turned read-only under the test): a small file named after
//! the journal's metadata in iocurve's data directory
//! (`$XDG_DATA_HOME/iocurve/restored`), else under `/run/iocurve/restored`
//! (gone at the next boot, when a file target's ctime still tells, see
//! [`super::evidence`]). `recover` and the next write test's check find it
//! and never apply that journal again: its originals would overwrite
//! whatever was written to the target since.
//!
//! A marker can only stop a journal from being applied, never make one be,
//! so one planted by someone else costs a refusal at worst.

use crate::safety::journal::Journal;
use crate::safety::journal::hashes::block_hash;
use std::path::{Path, PathBuf};

/// The directories markers go in, the first that takes one winning.
fn dirs() -> Vec<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    data.map(|d| d.join("iocurve/restored"))
        .into_iter()
        .chain([PathBuf::from("/run/iocurve/restored")])
        .collect()
}

/// The marker's name: a hash of the journal's metadata (medium, regions,
/// checksums, time and pid of its test), unique to that journal.
fn name(journal: &Journal) -> Option<String> {
    let json = serde_json::to_vec(journal.meta.as_ref()?).ok()?;
    Some(format!(
        "{:016x}.done",
        block_hash(json.len() as u64, &json)
    ))
}

/// Records that `journal` was restored; where, or `None` where no
/// directory took the marker.
pub(super) fn record(journal: &Journal) -> Option<PathBuf> {
    let name = name(journal)?;
    let text = format!("{}\n", journal.path.display());
    dirs().into_iter().find_map(|dir| {
        std::fs::create_dir_all(&dir).ok()?;
        let at = dir.join(&name);
        write_synced(&at, text.as_bytes()).ok()?;
        Some(at)
    })
}

fn write_synced(at: &Path, text: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(at)?;
    f.write_all(text)?;
    f.sync_all()?;
    if let Some(dir) = at.parent() {
        let _ = crate::safety::journal::sync_dir(dir);
    }
    Ok(())
}

/// The marker recording that `journal` was restored, if there is one.
pub(super) fn find(journal: &Journal) -> Option<PathBuf> {
    let name = name(journal)?;
    dirs()
        .into_iter()
        .map(|d| d.join(&name))
        .find(|p| p.is_file())
}

/// Removes the marker once its journal is gone (best effort: a marker
/// without its journal is harmless).
pub(super) fn forget(journal: &Journal) {
    if let Some(at) = find(journal) {
        let _ = std::fs::remove_file(at);
    }
}
