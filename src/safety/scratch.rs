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
