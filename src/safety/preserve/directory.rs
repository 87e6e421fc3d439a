//! Where a test's journal is kept: the directory asked for or iocurve's
//! own, checked before anything is copied into it. A journal on the medium
//! it copies, in memory, without room or where `recover` would not trust it
//! would not survive the crash it is for.

use crate::error::usage;
use crate::probe::sysfs::BlockDevice;
use crate::safety::identity::Identity;
use crate::safety::trust;
use crate::units::format_size;
use anyhow::Result;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Slack kept free beside the journal on its file system.
const SPACE_MARGIN: u64 = 16 << 20;

/// The journal directory: the one asked for, else iocurve's data directory
/// (`$XDG_DATA_HOME/iocurve/journals`, `~/.local/share/iocurve/journals`).
pub fn journal_dir(asked: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = asked {
        return Ok(dir.to_path_buf());
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .ok_or_else(|| {
            usage("neither XDG_DATA_HOME nor HOME is set: give --journal-dir DIR on another file system than the target")
        })?;
    Ok(data.join("iocurve").join("journals"))
}

/// Refuses a journal directory on the target itself, on a file system that
/// does not survive power loss, without room for `bytes`, or one `recover`
/// would not trust (see [`trust`]). One it creates is private (0700).
pub fn check_journal_dir(dir: &Path, target: &Identity, bytes: u64) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| unusable_journal_dir(dir, "create", &e))?;
    trust::check_dir(dir).map_err(|why| why.refuse_journal_dir(dir))?;
    probe_writable(dir).map_err(|e| unusable_journal_dir(dir, "write in", &e))?;
    let st = rustix::fs::stat(dir).map_err(|e| unusable_journal_dir(dir, "examine", &e.into()))?;
    let here = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    if let Some(why) = same_medium(here, target) {
        return Err(usage(format!(
            "the journal directory {} {why}: a crash during the test could lose both the data and its copy. Give --journal-dir DIR on another file system",
            dir.display()
        )));
    }
    let fs = rustix::fs::statfs(dir)?;
    const TMPFS: i64 = 0x0102_1994;
    const RAMFS: i64 = 0x8584_58f6;
    if matches!(fs.f_type as i64, TMPFS | RAMFS) {
        return Err(usage(format!(
            "the journal directory {} is in memory (tmpfs/ramfs), which a power loss empties: give --journal-dir DIR on a disk",
            dir.display()
        )));
    }
    let free = (fs.f_bavail as u64).saturating_mul(fs.f_bsize as u64);
    let need = bytes.saturating_add(SPACE_MARGIN);
    if free < need {
        return Err(usage(format!(
            "the journal directory {} has {} free, but preserving the test region needs {}: free some space, give --journal-dir DIR elsewhere, or a smaller --span",
            dir.display(),
            format_size(free),
            format_size(need)
        )));
    }
    Ok(())
}

/// Writes and syncs a small file in `dir`: a journal directory that cannot
/// take one is refused before anything is copied. The file is unnamed
/// (O_TMPFILE) where the file system allows, so a kill leaves nothing.
fn probe_writable(dir: &Path) -> io::Result<()> {
    use std::io::Write;
    let unnamed = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match unnamed {
        Ok(mut f) => return f.write_all(b"iocurve").and_then(|_| f.sync_all()),
        Err(e)
            if !matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR)
            ) =>
        {
            return Err(e);
        }
        Err(_) => {}
    }
    let probe = dir.join(format!(".iocurve-probe-{}", std::process::id()));
    let written = File::create_new(&probe).and_then(|mut f| {
        f.write_all(b"iocurve")?;
        f.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    written
}

/// A journal directory iocurve cannot use: a refusal (exit 2) that says
/// why in words and how to choose another, with the OS reason once.
fn unusable_journal_dir(dir: &Path, op: &str, e: &io::Error) -> anyhow::Error {
    let name = dir.display();
    let why = match e.raw_os_error() {
        Some(libc::EROFS) => "it is on a read-only file system".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            let owner = rustix::fs::stat(dir)
                .map(|st| {
                    format!(
                        " (owned by uid {}, mode {:o})",
                        st.st_uid,
                        st.st_mode & 0o7777
                    )
                })
                .unwrap_or_default();
            format!("permission denied{owner}")
        }
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => "its file system is full".to_string(),
        Some(libc::ENOTDIR) | Some(libc::EEXIST) => "a file of that name is in the way".to_string(),
        _ => e.to_string(),
    };
    usage(format!(
        "cannot {op} the journal directory {name}: {why}. --preserve keeps its copy there: give --journal-dir DIR on a writable disk other than the target"
    ))
}

/// How the file system at device `here` shares a medium with the target.
fn same_medium(here: (u32, u32), target: &Identity) -> Option<String> {
    if here == (target.major, target.minor) {
        return Some(match target.kind.as_str() {
            "file" => "is on the same file system as the target".into(),
            _ => "is on the target device".into(),
        });
    }
    if target.kind != "block_device" || here.0 == 0 {
        return None;
    }
    let fs_dev = BlockDevice::from_dev_t(here.0, here.1).ok()?;
    let dev = BlockDevice::from_dev_t(target.major, target.minor).ok()?;
    let related = fs_dev.disk == dev.disk && (!fs_dev.partition || !dev.partition);
    related.then(|| format!("is on {}, part of the same disk as the target", fs_dev.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_directory_on_the_target_is_refused() {
        let (dir, f) = crate::safety::scratch::file_holding("t", b"data");
        let id = Identity::of_path(&f).unwrap();
        let e = check_journal_dir(&dir.path().join("j"), &id, 10).unwrap_err();
        assert!(e.to_string().contains("same file system"), "{e}");
        if Path::new("/dev/shm").is_dir() {
            let mut elsewhere = id.clone();
            elsewhere.major = 4095;
            let e = check_journal_dir(Path::new("/dev/shm/iocurve-test-journals"), &elsewhere, 10)
                .unwrap_err();
            assert!(e.to_string().contains("in memory"), "{e}");
            let _ = std::fs::remove_dir("/dev/shm/iocurve-test-journals");
        }
    }

    /// A journal directory `recover` would not trust is refused before
    /// anything is written in it; one created is private.
    #[test]
    fn a_journal_directory_others_control_is_refused() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let (dir, f) = crate::safety::scratch::file_holding("t", b"data");
        let mut elsewhere = Identity::of_path(&f).unwrap();
        elsewhere.major = 4095;
        let made = dir.path().join("made/journals");
        check_journal_dir(&made, &elsewhere, 10).unwrap();
        for d in [&made, &dir.path().join("made")] {
            assert_eq!(std::fs::metadata(d).unwrap().mode() & 0o777, 0o700);
        }
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_journal_dir(&open, &elsewhere, 10).unwrap_err();
        assert!(e.to_string().contains("is not sticky"), "{e}");
        assert!(e.to_string().contains("--journal-dir DIR"), "{e}");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(
            std::fs::read_dir(&open).unwrap().count(),
            0,
            "nothing written"
        );
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&made, Some(65534), None).unwrap();
            let e = check_journal_dir(&made, &elsewhere, 10).unwrap_err();
            assert!(e.to_string().contains("owned by uid 65534"), "{e}");
        }
    }
}
