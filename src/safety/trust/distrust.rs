//! Why a journal, or a directory to keep journals in, is not believed, in
//! words: each reason says what was seen and what to do about it, so that a
//! refusal is one line the user can act on.

use crate::error::{IoFailure, usage};
use rustix::fs::FileType;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a journal, or a directory to keep journals in, is not believed.
#[derive(Debug)]
pub enum Distrust {
    /// The journal's name is a symbolic link.
    Symlink,
    /// Not a regular file (a directory, FIFO, device or socket).
    NotRegular(FileType),
    /// Owned by another user than the one running iocurve, and not root.
    Owner { uid: u32, me: u32 },
    /// Its group or others may write it.
    Writable { mode: u32 },
    /// It has more than one name.
    HardLinked { links: u64 },
    /// A directory on the way is owned by another user, and not root.
    DirOwner { dir: PathBuf, uid: u32, me: u32 },
    /// A directory on the way may be written by group or others and is not
    /// sticky.
    DirWritable { dir: PathBuf, mode: u32 },
    /// A directory on the way turned into something else (a link, a file)
    /// after its path was resolved.
    DirChanged { dir: PathBuf },
    /// It could not be opened or examined at all.
    Unreadable { what: PathBuf, error: io::Error },
}

impl fmt::Display for Distrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distrust::Symlink => write!(f, "it is a symbolic link"),
            Distrust::NotRegular(kind) => {
                write!(f, "it is {}, not a regular file", kind_name(*kind))
            }
            Distrust::Owner { uid, me } => {
                write!(f, "it is owned by uid {uid}, not by you (uid {me}) or root")
            }
            Distrust::Writable { mode } => write!(
                f,
                "its mode {:04o} lets group or others write it",
                mode & 0o7777
            ),
            Distrust::HardLinked { links } => {
                write!(
                    f,
                    "it has {links} names (hard links), so it may be another file"
                )
            }
            Distrust::DirOwner { dir, uid, me } => write!(
                f,
                "the directory {} is owned by uid {uid}, not by you (uid {me}) or root, so that user can put or swap files in it",
                dir.display()
            ),
            Distrust::DirWritable { dir, mode } => write!(
                f,
                "the directory {} (mode {:04o}) may be written by group or others and is not sticky, so they can put or swap files in it",
                dir.display(),
                mode & 0o7777
            ),
            Distrust::DirChanged { dir } => write!(
                f,
                "{} stopped being a directory while it was checked",
                dir.display()
            ),
            Distrust::Unreadable { what, error } => {
                write!(f, "cannot examine {}: {error}", what.display())
            }
        }
    }
}

impl Distrust {
    /// What to do about a journal refused for this reason.
    fn journal_fix(&self) -> String {
        match self {
            Distrust::Symlink => "a journal iocurve made is a regular file: remove the link, or name the journal it points to if that one is yours".into(),
            Distrust::NotRegular(_) => "a journal iocurve made is a regular file: remove it".into(),
            Distrust::Owner { uid, .. } => format!(
                "a journal iocurve made belongs to whoever ran the test: remove it if you did not make it, or run recover as uid {uid} if that user did"
            ),
            Distrust::Writable { .. } => "iocurve makes journals 0600: `chmod 600` it if nobody else could have written it, else remove it".into(),
            Distrust::HardLinked { .. } => "iocurve makes journals with one name: remove this name if you did not make it (the other names keep the file)".into(),
            Distrust::DirOwner { dir, me, .. } => format!(
                "`chown {me} {}` if the directory is yours, else move the journals you made into a directory of your own and recover them there",
                dir.display()
            ),
            Distrust::DirWritable { dir, .. } => format!(
                "`chmod go-w {}` if nobody else could have written there, else move the journals you made into a directory of your own and recover them there",
                dir.display()
            ),
            Distrust::DirChanged { .. } => "run recover again once nothing is moving its directories".into(),
            Distrust::Unreadable { .. } => "check its permissions, or run recover as the user who ran the test".into(),
        }
    }

    /// The error `recover` gives for `journal`: a refusal (exit 2) with the
    /// reason and the fix, or an I/O failure (exit 3) where it could not
    /// even look.
    pub fn refuse_journal(&self, journal: &Path) -> anyhow::Error {
        let line = format!(
            "refusing to use the journal {}: {self}; {}. Nothing was written to the target, and the journal is left as it is",
            journal.display(),
            self.journal_fix()
        );
        match self {
            Distrust::Unreadable { .. } => IoFailure::new(line, None).into(),
            _ => usage(line),
        }
    }

    /// The refusal of `dir` as the place to keep a test's journal (exit 2).
    pub fn refuse_journal_dir(&self, dir: &Path) -> anyhow::Error {
        let fix = match self {
            Distrust::DirWritable { dir, .. } => format!("`chmod go-w {}`, or ", dir.display()),
            _ => String::new(),
        };
        usage(format!(
            "refusing to keep the journal in {}: {self}, and recover would not trust a journal there. {fix}give --journal-dir DIR that only you (or root) can write",
            dir.display()
        ))
    }
}

/// A short name for a kind of file ("a directory", "a FIFO", ...).
pub fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "of an unknown kind",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_one_line_with_a_fix_and_exit_codes_tell_them_apart() {
        let p = Path::new("/j/a.iocj");
        let cases = [
            Distrust::Symlink,
            Distrust::NotRegular(FileType::Fifo),
            Distrust::Owner { uid: 7, me: 0 },
            Distrust::Writable { mode: 0o100666 },
            Distrust::HardLinked { links: 3 },
            Distrust::DirOwner {
                dir: "/j".into(),
                uid: 7,
                me: 0,
            },
            Distrust::DirWritable {
                dir: "/j".into(),
                mode: 0o40777,
            },
            Distrust::DirChanged { dir: "/j".into() },
        ];
        for why in &cases {
            let e = why.refuse_journal(p);
            let line = crate::error::render(&e);
            assert!(!line.contains('\n'), "{line}");
            assert!(line.starts_with("refusing to use the journal /j/a.iocj: "));
            assert!(line.ends_with("the journal is left as it is"), "{line}");
            assert_eq!(crate::error::exit_code(&e), 2, "{line}");
        }
        let io = Distrust::Unreadable {
            what: p.into(),
            error: io::Error::from_raw_os_error(libc::EACCES),
        };
        assert_eq!(crate::error::exit_code(&io.refuse_journal(p)), 3);
        assert!(cases[3].to_string().contains("mode 0666"), "{}", cases[3]);
    }
}
