//! Reading sysfs attributes: the trimmed text, a number, the `major:minor`
//! of a `dev` file, with errors that name the file; and the check that a
//! kernel name cannot climb out of `class/block`.

use std::fs;
use std::io;
use std::path::Path;

/// Where sysfs is mounted. The private `*_in` helpers take the root as an
/// argument so that the parsing logic can be tested on a fabricated tree.
pub(super) const SYSFS: &str = "/sys";

pub(super) fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

pub(super) fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The trimmed text of a sysfs attribute.
pub(super) fn read_attr(path: &Path) -> io::Result<String> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| with_path(e, path))
}

pub(super) fn read_num<T: std::str::FromStr>(path: &Path) -> io::Result<T> {
    let s = read_attr(path)?;
    s.parse()
        .map_err(|_| invalid(format!("{}: not a number: {s:?}", path.display())))
}

/// Like `read_num`, but `None` when the attribute is absent or unreadable.
pub(super) fn read_num_opt<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_attr(path).ok()?.parse().ok()
}

/// Parses the `dev` attribute, `major:minor`.
pub(super) fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (maj, min) = text.trim().split_once(':')?;
    Some((maj.parse().ok()?, min.parse().ok()?))
}

pub(super) fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a block device kernel name: {name:?}"),
        ));
    }
    Ok(())
}
