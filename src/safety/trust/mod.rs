//! Which journals `recover` may believe: only ones it could have made.
//!
//! A journal says "write these bytes there", and `recover` is often run by
//! root (at boot, from cron, with sudo). Whoever can put a file where root
//! will look for journals could otherwise make root overwrite any file or
//! device. So, like ssh's StrictModes for `authorized_keys`, a journal is
//! believed only if nobody but the user running `recover` (or root) could
//! have written it or chosen it:
//!
//! - its name is not a symbolic link, and it is a regular file with one
//!   name (a hard link could be someone else's file under a journal's name);
//! - it is owned by the user running `recover` or by root, and neither its
//!   group nor others may write it (iocurve makes journals 0600);
//! - the directory holding it and every directory above it up to `/` is
//!   owned by that user or root, and is not writable by group or others
//!   unless it is sticky (as `/tmp` is), where nobody can rename or delete
//!   another user's file.
//!
//! Ancestors are checked as ssh does, because a directory that someone
//! else may rename entries in lets them swap the whole subtree below it:
//! the journal's own directory would prove nothing. That matters here
//! beyond the one open: the rest of a recovery goes by path (the other
//! journals of the same test are found beside it, a finished one is
//! deleted), and only a chain nobody else controls keeps those paths
//! naming the files that were checked.
//!
//! The checks are made on descriptors, not on paths that could change
//! between the check and the use: symbolic links in the directory part are
//! resolved first (as ssh resolves the real path), then every directory from
//! `/` down is opened without following links and examined with fstat, the
//! journal is opened in the last one with O_NOFOLLOW, and that descriptor is
//! examined and handed to the reader. A file that fails is left exactly as
//! it is: never written, never deleted.
//!
//! `check` holds the checks, made on descriptors, and the listing of a
//! journal directory; `distrust` the reasons a journal or directory is
//! refused, worded with what to do about each.

mod check;
mod distrust;

pub use check::{Listing, check_dir, list_journals, open_journal};
pub use distrust::{Distrust, kind_name};

use std::fs::File;
use std::path::PathBuf;

/// How the trusted journal could be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// For reading and for marking it done.
    ReadWrite,
    /// Its file system is read-only: it can be restored from, not changed
    /// or deleted.
    ReadOnly,
}

/// A journal that passed every check, open on the descriptor checked.
#[derive(Debug)]
pub struct Trusted {
    pub file: File,
    pub access: Access,
    /// Its real path: the directory part with its links resolved.
    pub path: PathBuf,
}
