//! Writing an output file the user named: only ever a regular file, never
//! through a symlink at its last component, never waiting on a FIFO.

use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// Writes an output file the user named (`-o`, `--export-*`, `--svg`,
/// `--report`): only ever a regular file, reached without following a
/// symlink at its last component. Anything else is refused (exit 2)
/// without being opened for writing: a block device (an output path is no
/// way to overwrite a disk, and a slip of the tab key must not become
/// one), a FIFO (writing would wait for a reader forever), a socket, a
/// character device, a directory, or a symlink (it could point anywhere,
/// placed there by whoever can write the directory).
///
/// The file is written in place, opened with `O_NOFOLLOW | O_NONBLOCK`
/// and checked again on the descriptor held, rather than written beside
/// and renamed over: a rename would give an existing file a new inode,
/// losing its owner, mode and other hard links, and need write permission
/// on its directory, where `-o` has only ever needed the file's.
pub fn write_output(path: &std::path::Path, bytes: &[u8], what: &str) -> Result<()> {
    let refuse = |kind: String| {
        crate::error::usage(format!(
            "refusing to write {what} to {}: it is {kind}; give the name of a regular file such as out.json",
            path.display()
        ))
    };
    // Looked at first without opening (lstat: a symlink is seen as one).
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if let Some(kind) = not_a_file(&meta, path) {
            return Err(refuse(kind));
        }
    }
    let file = open_regular(path).map_err(|e| match e {
        Opened::Refused(kind) => refuse(kind),
        Opened::Failed(e) => crate::error::IoFailure::new(
            format!("cannot write {what} to {}: {e}", path.display()),
            Some(e),
        )
        .into(),
    })?;
    let written = file
        .set_len(0)
        .and_then(|()| (&file).write_all(bytes))
        .and_then(|()| (&file).flush());
    written.map_err(|e| {
        crate::error::IoFailure::new(
            format!("cannot write {what} to {}: {e}", path.display()),
            Some(e),
        )
        .into()
    })
}

/// What an output path is when it is not a regular file.
fn not_a_file(meta: &std::fs::Metadata, path: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    Some(if t.is_symlink() {
        let to = std::fs::read_link(path)
            .map(|to| format!(" (to {})", to.display()))
            .unwrap_or_default();
        format!("a symbolic link{to}, which is not followed; give the file itself")
    } else if t.is_fifo() {
        "a FIFO (named pipe)".into()
    } else if t.is_socket() {
        "a socket".into()
    } else if t.is_block_device() {
        "a block device".into()
    } else if t.is_char_device() {
        "a character device".into()
    } else if t.is_dir() {
        "a directory".into()
    } else {
        "not a regular file".into()
    })
}

/// Why an output file was not opened.
enum Opened {
    /// What it turned out to be, when not a regular file.
    Refused(String),
    Failed(std::io::Error),
}

/// Opens (creating) an output file for writing, never through a symlink
/// and never waiting on a FIFO, and makes sure the descriptor is a regular
/// file: the path may have changed since it was looked at. Not truncated
/// here: that waits until the descriptor is known to be a file.
fn open_regular(path: &Path) -> std::result::Result<std::fs::File, Opened> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // ELOOP: the last component is a symlink (it appeared since the
            // look); ENXIO: a FIFO with no reader.
            Some(libc::ELOOP) | Some(libc::ENXIO) => std::fs::symlink_metadata(path)
                .ok()
                .and_then(|m| not_a_file(&m, path))
                .map_or(Opened::Failed(e), Opened::Refused),
            _ => Opened::Failed(e),
        })?;
    let meta = file.metadata().map_err(Opened::Failed)?;
    match not_a_file(&meta, path) {
        Some(kind) => Err(Opened::Refused(kind)),
        None => Ok(file),
    }
}
