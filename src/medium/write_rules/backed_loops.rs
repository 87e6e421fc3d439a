//! The loop devices a regular file backs, and what uses each: where
//! [`super::loops`] (what backs a loop device) meets [`super::device`] (what
//! uses a block device), apart from both so that neither names the other.

use super::device::uses_of;
use super::loops::{backing_context, loop_backings};
use super::messages::backing_sentence;
use crate::medium::storage::FileId;
use crate::probe::sysfs::BlockDevice;
use std::io;
use std::path::Path;

/// One sentence per loop device backed by `file` (see [`super::why_file_busy`]).
pub(super) fn loop_sentences(path: &Path, file: FileId) -> io::Result<Vec<String>> {
    let context = |e| backing_context(path, e);
    let mut found = Vec::new();
    for backing in loop_backings().map_err(context)? {
        if backing.file != Some(file) {
            continue;
        }
        let dev = match BlockDevice::from_name(&backing.name) {
            Ok(d) => d,
            // Detached between the listing and the lookup: it uses nothing.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(context(e)),
        };
        let uses = uses_of(&dev).map_err(context)?;
        found.push(backing_sentence(
            &dev.dev_path().display().to_string(),
            &uses,
        ));
    }
    Ok(found)
}
