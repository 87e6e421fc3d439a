//! The checks themselves, made on descriptors rather than paths that could
//! change between the check and the use: every directory from `/` down,
//! then the journal opened in the last one without following a link; and
//! the listing of a journal directory, which refuses what is not a regular
//! file without opening it.

use super::{Access, Distrust, Trusted};
use crate::safety::journal::EXTENSION;
use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, Stat};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// Group- and other-write bits.
const GROUP_OTHER_WRITE: u32 = 0o022;
/// The sticky bit: only an entry's owner may rename or delete it.
const STICKY: u32 = 0o1000;

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
}
