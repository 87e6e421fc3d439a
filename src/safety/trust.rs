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

use super::journal::EXTENSION;
use crate::error::{IoFailure, usage};
use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, Stat};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// Group- and other-write bits.
const GROUP_OTHER_WRITE: u32 = 0o022;
/// The sticky bit: only an entry's owner may rename or delete it.
const STICKY: u32 = 0o1000;

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

/// The user whose journals are believed (besides root's).
fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// What is wrong with a file of this kind under a journal's name.
fn kind_flaw(kind: FileType) -> Option<Distrust> {
    match kind {
        FileType::RegularFile => None,
        FileType::Symlink => Some(Distrust::Symlink),
        other => Some(Distrust::NotRegular(other)),
    }
}

/// What is wrong with an opened journal, if anything.
fn file_flaw(st: &Stat, me: u32) -> Option<Distrust> {
    let mode = st.st_mode;
    if let Some(flaw) = kind_flaw(FileType::from_raw_mode(st.st_mode)) {
        return Some(flaw);
    }
    if st.st_uid != me && st.st_uid != 0 {
        return Some(Distrust::Owner { uid: st.st_uid, me });
    }
    if mode & GROUP_OTHER_WRITE != 0 {
        return Some(Distrust::Writable { mode });
    }
    if st.st_nlink != 1 {
        return Some(Distrust::HardLinked { links: st.st_nlink });
    }
    None
}

/// What is wrong with a directory at `dir` on the way to a journal.
fn dir_flaw(st: &Stat, dir: &Path, me: u32) -> Option<Distrust> {
    let mode = st.st_mode;
    let dir = dir.to_path_buf();
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Some(Distrust::DirChanged { dir });
    }
    if st.st_uid != me && st.st_uid != 0 {
        return Some(Distrust::DirOwner {
            dir,
            uid: st.st_uid,
            me,
        });
    }
    if mode & GROUP_OTHER_WRITE != 0 && mode & STICKY == 0 {
        return Some(Distrust::DirWritable { dir, mode });
    }
    None
}

fn unreadable(what: &Path, error: impl Into<io::Error>) -> Distrust {
    Distrust::Unreadable {
        what: what.to_path_buf(),
        error: error.into(),
    }
}

/// Opens one directory below `parent` (or `/`) without following a link.
fn open_dir_at(parent: Option<&OwnedFd>, name: &Path, shown: &Path) -> Result<OwnedFd, Distrust> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let opened = match parent {
        Some(fd) => rustix::fs::openat(fd, name, flags, Mode::empty()),
        None => rustix::fs::openat(CWD, name, flags, Mode::empty()),
    };
    opened.map_err(|e| match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => Distrust::DirChanged {
            dir: shown.to_path_buf(),
        },
        e => unreadable(shown, e),
    })
}

/// Resolves `dir`, opens each directory from `/` down to it without
/// following links and checks it; the last one's descriptor and real path.
fn open_trusted_dir(dir: &Path) -> Result<(OwnedFd, PathBuf), Distrust> {
    let real = std::fs::canonicalize(dir).map_err(|e| unreadable(dir, e))?;
    let me = me();
    let mut shown = PathBuf::from("/");
    let mut fd = open_dir_at(None, &shown, &shown)?;
    check_dir_fd(&fd, &shown, me)?;
    for part in real.components() {
        let Component::Normal(name) = part else {
            continue;
        };
        shown.push(name);
        fd = open_dir_at(Some(&fd), Path::new(name), &shown)?;
        check_dir_fd(&fd, &shown, me)?;
    }
    Ok((fd, real))
}

fn check_dir_fd(fd: &OwnedFd, shown: &Path, me: u32) -> Result<(), Distrust> {
    let st = rustix::fs::fstat(fd).map_err(|e| unreadable(shown, e))?;
    dir_flaw(&st, shown, me).map_or(Ok(()), Err)
}

/// Checks that `dir` (which exists) and every directory above it is one a
/// journal may be kept in.
pub fn check_dir(dir: &Path) -> Result<(), Distrust> {
    open_trusted_dir(dir).map(|_| ())
}

/// Opens the journal at `path` if it is one `recover` could have made (see
/// the module doc): read-write, or read-only where its file system is.
pub fn open_journal(path: &Path) -> Result<Trusted, Distrust> {
    let name = path
        .file_name()
        .ok_or_else(|| unreadable(path, io::Error::other("not a file name")))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (dir, real_dir) = open_trusted_dir(parent)?;
    // Its kind before opening: a FIFO or device is refused unopened (an
    // open alone can block or act on a device).
    let seen = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| unreadable(path, e))?;
    if let Some(flaw) = kind_flaw(FileType::from_raw_mode(seen.st_mode)) {
        return Err(flaw);
    }
    let (fd, access) = open_file_at(&dir, Path::new(name), path)?;
    let st = rustix::fs::fstat(&fd).map_err(|e| unreadable(path, e))?;
    if let Some(flaw) = file_flaw(&st, me()) {
        return Err(flaw);
    }
    // O_NONBLOCK only guarded the open; reads and writes are plain.
    let flags = rustix::fs::fcntl_getfl(&fd).map_err(|e| unreadable(path, e))?;
    rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK).map_err(|e| unreadable(path, e))?;
    Ok(Trusted {
        file: File::from(fd),
        access,
        path: real_dir.join(name),
    })
}

/// Opens `name` in `dir` without following a link: read-write, else
/// read-only where the file system is read-only.
fn open_file_at(dir: &OwnedFd, name: &Path, shown: &Path) -> Result<(OwnedFd, Access), Distrust> {
    let base = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    let open = |mode: OFlags| rustix::fs::openat(dir, name, base | mode, Mode::empty());
    let opened = match open(OFlags::RDWR) {
        Err(rustix::io::Errno::ROFS) => open(OFlags::RDONLY).map(|fd| (fd, Access::ReadOnly)),
        other => other.map(|fd| (fd, Access::ReadWrite)),
    };
    opened.map_err(|e| match e {
        rustix::io::Errno::LOOP => Distrust::Symlink,
        rustix::io::Errno::ISDIR => Distrust::NotRegular(FileType::Directory),
        e => unreadable(shown, e),
    })
}

/// The journal names in a directory, sorted, split by what they are seen
/// to be without following links: regular files (checked again when
/// opened), and the rest, refused without being opened.
#[derive(Debug, Default)]
pub struct Listing {
    pub files: Vec<PathBuf>,
    pub refused: Vec<(PathBuf, Distrust)>,
}

/// Lists the `.iocj` entries of `dir` (none if it does not exist).
pub fn list_journals(dir: &Path) -> io::Result<Listing> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Listing::default()),
        Err(e) => return Err(e),
    };
    let mut listing = Listing::default();
    for entry in entries.filter_map(|e| e.ok()) {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != EXTENSION) {
            continue;
        }
        // DirEntry::metadata never follows a link.
        let flaw = entry
            .metadata()
            .ok()
            .map(|m| FileType::from_raw_mode(std::os::unix::fs::MetadataExt::mode(&m)))
            .and_then(kind_flaw);
        match flaw {
            None => listing.files.push(path),
            Some(flaw) => listing.refused.push((path, flaw)),
        }
    }
    listing.files.sort();
    listing.refused.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt, chown, symlink};

    const NOBODY: u32 = 65534;

    fn is_root() -> bool {
        rustix::process::geteuid().is_root()
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A private directory (0700) with a journal-like file (0600) in it.
    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o700);
        let journal = dir.path().join("a.iocj");
        std::fs::write(&journal, b"IOCJRNL1 journal bytes").unwrap();
        chmod(&journal, 0o600);
        (dir, journal)
    }

    /// `open_journal` refuses `path`, and the file is as it was.
    fn refused(path: &Path) -> Distrust {
        let before = std::fs::symlink_metadata(path).unwrap();
        let bytes = std::fs::read(path).ok();
        let why = open_journal(path).expect_err("refused");
        let after = std::fs::symlink_metadata(path).unwrap();
        assert_eq!(before.mode(), after.mode(), "{why}");
        assert_eq!(std::fs::read(path).ok(), bytes, "left alone: {why}");
        why
    }

    #[test]
    fn a_private_journal_is_opened_read_write_on_its_real_path() {
        let (dir, journal) = setup();
        let t = open_journal(&journal).unwrap();
        assert_eq!(t.access, Access::ReadWrite);
        assert_eq!(t.path, std::fs::canonicalize(&journal).unwrap());
        let st = rustix::fs::fstat(&t.file).unwrap();
        assert_eq!(st.st_ino, std::fs::metadata(&journal).unwrap().ino());
        let flags = rustix::fs::fcntl_getfl(&t.file).unwrap();
        assert!(!flags.contains(OFlags::NONBLOCK));
        assert!(check_dir(dir.path()).is_ok());
    }

    /// Runs `mount` with `args`; whether it worked.
    fn mount(args: &[&str]) -> bool {
        std::process::Command::new("mount")
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    }

    #[test]
    fn a_journal_on_a_read_only_file_system_is_opened_read_only() {
        if !is_root() {
            return eprintln!("skipped: not root, cannot mount");
        }
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().to_str().unwrap();
        if !mount(&[
            "-t",
            "tmpfs",
            "-o",
            "size=1m,mode=0700",
            "iocurve-trust",
            at,
        ]) {
            return eprintln!("skipped: cannot mount a tmpfs");
        }
        let journal = dir.path().join("a.iocj");
        std::fs::write(&journal, b"IOCJRNL1").unwrap();
        chmod(&journal, 0o600);
        let read_only = mount(&["-o", "remount,ro", at]);
        // Read and closed before unmounting (an open file keeps it busy).
        let seen = read_only.then(|| {
            open_journal(&journal).map(|t| {
                let mut head = [0u8; 8];
                let read = std::os::unix::fs::FileExt::read_exact_at(&t.file, &mut head, 0);
                (t.access, read.map(|_| head).ok())
            })
        });
        let _ = std::process::Command::new("umount").arg(at).status();
        let (access, head) = seen.expect("remounted read-only").unwrap();
        assert_eq!(access, Access::ReadOnly);
        assert_eq!(head, Some(*b"IOCJRNL1"));
    }

    #[test]
    fn a_journal_others_may_write_is_refused() {
        let (_dir, journal) = setup();
        for mode in [0o666, 0o664, 0o620, 0o602] {
            chmod(&journal, mode);
            let why = refused(&journal);
            assert!(
                matches!(why, Distrust::Writable { mode: m } if m & 0o777 == mode),
                "{mode:o}: {why}"
            );
            assert!(why.to_string().contains("lets group or others write it"));
        }
        chmod(&journal, 0o600);
        assert!(open_journal(&journal).is_ok());
        chmod(&journal, 0o400);
        assert!(open_journal(&journal).is_ok(), "read-only mode is fine");
    }

    #[test]
    fn a_journal_owned_by_another_user_is_refused() {
        if !is_root() {
            return eprintln!("skipped: not root, cannot chown");
        }
        let (_dir, journal) = setup();
        chown(&journal, Some(NOBODY), None).unwrap();
        let why = refused(&journal);
        assert!(
            matches!(why, Distrust::Owner { uid: NOBODY, me: 0 }),
            "{why}"
        );
        let line = why.refuse_journal(&journal).to_string();
        assert!(
            line.contains("owned by uid 65534, not by you (uid 0) or root"),
            "{line}"
        );
        assert!(line.contains("remove it if you did not make it"), "{line}");
        assert_eq!(std::fs::metadata(&journal).unwrap().uid(), NOBODY);
    }

    #[test]
    fn a_symlink_to_a_real_journal_is_refused_unfollowed() {
        let (dir, journal) = setup();
        let elsewhere = tempfile::tempdir().unwrap();
        let link = elsewhere.path().join("b.iocj");
        symlink(&journal, &link).unwrap();
        let why = refused(&link);
        assert!(matches!(why, Distrust::Symlink), "{why}");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        let listing = list_journals(elsewhere.path()).unwrap();
        assert!(listing.files.is_empty());
        assert_eq!(listing.refused.len(), 1);
        assert!(matches!(listing.refused[0].1, Distrust::Symlink));
        // The directory part may hold links: it is resolved first.
        let dir_link = elsewhere.path().join("dirlink");
        symlink(dir.path(), &dir_link).unwrap();
        let t = open_journal(&dir_link.join("a.iocj")).unwrap();
        assert_eq!(t.path, std::fs::canonicalize(&journal).unwrap());
    }

    #[test]
    fn a_hard_link_is_refused_under_either_name() {
        let (dir, journal) = setup();
        let other = dir.path().join("other");
        std::fs::hard_link(&journal, &other).unwrap();
        for name in [&journal, &other] {
            let why = refused(name);
            assert!(matches!(why, Distrust::HardLinked { links: 2 }), "{why}");
        }
        std::fs::remove_file(&other).unwrap();
        assert!(open_journal(&journal).is_ok());
    }

    #[test]
    fn fifos_and_directories_are_refused_unopened() {
        let (dir, _journal) = setup();
        let fifo = dir.path().join("f.iocj");
        rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        // A FIFO opened for reading would block: statat refuses it first.
        assert!(matches!(
            open_journal(&fifo),
            Err(Distrust::NotRegular(FileType::Fifo))
        ));
        let sub = dir.path().join("d.iocj");
        std::fs::create_dir(&sub).unwrap();
        assert!(matches!(
            open_journal(&sub),
            Err(Distrust::NotRegular(FileType::Directory))
        ));
        let listing = list_journals(dir.path()).unwrap();
        assert_eq!(listing.files, [dir.path().join("a.iocj")]);
        let kinds: Vec<String> = listing.refused.iter().map(|r| r.1.to_string()).collect();
        assert_eq!(
            kinds,
            [
                "it is a directory, not a regular file",
                "it is a FIFO, not a regular file"
            ]
        );
    }

    #[test]
    fn a_world_writable_directory_is_refused_unless_sticky() {
        let (dir, journal) = setup();
        for mode in [0o777, 0o770, 0o702] {
            chmod(dir.path(), mode);
            let why = refused(&journal);
            assert!(
                matches!(&why, Distrust::DirWritable { dir: d, .. } if d == &std::fs::canonicalize(dir.path()).unwrap()),
                "{mode:o}: {why}"
            );
            assert!(check_dir(dir.path()).is_err());
        }
        chmod(dir.path(), 0o1777);
        assert!(open_journal(&journal).is_ok(), "sticky and ours");
        assert!(check_dir(dir.path()).is_ok());
    }

    #[test]
    fn a_directory_owned_by_another_user_is_refused_sticky_or_not() {
        if !is_root() {
            return eprintln!("skipped: not root, cannot chown");
        }
        let (dir, journal) = setup();
        chown(dir.path(), Some(NOBODY), None).unwrap();
        for mode in [0o700, 0o1777] {
            chmod(dir.path(), mode);
            let why = refused(&journal);
            assert!(
                matches!(why, Distrust::DirOwner { uid: NOBODY, .. }),
                "{mode:o}: {why}"
            );
            let line = why.refuse_journal_dir(dir.path()).to_string();
            assert!(line.contains("--journal-dir DIR"), "{line}");
            assert!(matches!(
                check_dir(dir.path()),
                Err(Distrust::DirOwner { .. })
            ));
        }
        chown(dir.path(), Some(0), None).unwrap();
        assert!(open_journal(&journal).is_ok());
    }

    #[test]
    fn an_ancestor_others_may_write_is_refused_and_a_sticky_one_is_not() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("journals");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o700);
        let journal = dir.join("a.iocj");
        std::fs::write(&journal, b"x").unwrap();
        chmod(&journal, 0o600);
        chmod(top.path(), 0o777);
        let why = refused(&journal);
        let top_real = std::fs::canonicalize(top.path()).unwrap();
        assert!(
            matches!(&why, Distrust::DirWritable { dir: d, .. } if d == &top_real),
            "{why}"
        );
        chmod(top.path(), 0o1777);
        assert!(open_journal(&journal).is_ok());
        chmod(top.path(), 0o700);
    }

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
