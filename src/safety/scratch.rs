//! One real file on a real file system, for the tests of this module: an
//! identity, a birth time, a lock or a journal directory is only a fact of
//! a file that exists, so each test starts from one.

use std::path::PathBuf;

/// A file `name` holding `bytes` in a new temporary directory; the
/// directory goes when the returned guard is dropped.
pub(crate) fn file_holding(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// An empty file `name`, open to read and write, in a new temporary
/// directory (gone when the returned guard is dropped).
pub(crate) fn empty_open(name: &str) -> (tempfile::TempDir, std::fs::File) {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join(name))
        .unwrap();
    (dir, file)
}
