//! Other programs writing a file: its data is theirs (a write test would
//! overwrite it, and a `--preserve` restore would undo their writes). Found
//! in `/proc/<pid>/fd` and `fdinfo`.

use super::messages::{FileUse, Opener};
use super::stat_identity;
use crate::medium::storage::FileId;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

/// What `/proc/<pid>/fdinfo/<fd>` says about an open file: its open flags
/// (octal in the file) and, on kernels that show it, its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FdInfo {
    flags: u32,
    ino: Option<u64>,
}

impl FdInfo {
    fn parse(text: &str) -> Option<FdInfo> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        Some(FdInfo {
            flags: u32::from_str_radix(field("flags")?, 8).ok()?,
            ino: field("ino").and_then(|v| v.parse().ok()),
        })
    }

    /// Opened for writing: access mode 1 (write only) or 2 (read and
    /// write); 0 is read only and 3 neither (ioctl-only opens). Said by
    /// number so that reading flags is not mistaken for opening.
    fn writes(&self) -> bool {
        matches!(self.flags & libc::O_ACCMODE as u32, 1 | 2)
    }
}

/// The processes other than this one that hold `file` open for writing,
/// by pid, from `/proc/<pid>/fd` and `fdinfo`. Processes that exit meanwhile
/// or whose `/proc` entries cannot be read are passed over: this names what
/// it can see.
pub(super) fn writers_of(file: FileId) -> Vec<FileUse> {
    let me = std::process::id();
    let mut openers = Vec::new();
    for p in processes().filter(|p| p.pid != me) {
        let Some(fds) = p.fds() else { continue };
        if fds.into_iter().any(|fd| fd_writes(&p.dir, &fd, file)) {
            openers.push(Opener {
                pid: p.pid,
                command: p.command(),
                node: String::new(),
            });
        }
    }
    openers.sort_by_key(|o| o.pid);
    match openers.is_empty() {
        true => Vec::new(),
        false => vec![FileUse::Writers { openers }],
    }
}

/// A process seen in `/proc`.
pub(super) struct Process {
    pub pid: u32,
    /// `/proc/<pid>`.
    pub dir: PathBuf,
}

impl Process {
    /// The names of its descriptors (`/proc/<pid>/fd`); `None` when they
    /// cannot be read (it exited, or it is another user's).
    pub fn fds(&self) -> Option<Vec<OsString>> {
        let fds = fs::read_dir(self.dir.join("fd")).ok()?;
        Some(fds.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
    }

    /// Its command name (`comm`), or `?` when it cannot be read.
    pub fn command(&self) -> String {
        fs::read_to_string(self.dir.join("comm"))
            .map(|c| c.trim_end().to_owned())
            .unwrap_or_else(|_| "?".into())
    }
}

/// The processes in `/proc`, by the directories named by a pid; none when
/// `/proc` cannot be read.
pub(super) fn processes() -> impl Iterator<Item = Process> {
    let entries = fs::read_dir("/proc").into_iter().flatten();
    entries.filter_map(|e| {
        let e = e.ok()?;
        let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
        Some(Process { pid, dir: e.path() })
    })
}

/// Whether descriptor `fd` of the process at `proc_dir` is `file` opened
/// for writing. Cheap tests first: a pipe, socket or anonymous inode has no
/// path; then the open flags and the inode from `fdinfo`; the file itself
/// is looked up (through the descriptor's link) only when those match.
fn fd_writes(proc_dir: &Path, fd: &std::ffi::OsStr, file: FileId) -> bool {
    let link = proc_dir.join("fd").join(fd);
    if !fs::read_link(&link).is_ok_and(|target| target.is_absolute()) {
        return false;
    }
    let Some(info) = fs::read_to_string(proc_dir.join("fdinfo").join(fd))
        .ok()
        .and_then(|t| FdInfo::parse(&t))
    else {
        return false;
    };
    if !info.writes() || info.ino.is_some_and(|ino| ino != file.2) {
        return false;
    }
    link.to_str()
        .and_then(stat_identity)
        .is_some_and(|(id, _)| id == Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::write_rules::why_file_in_use;

    #[test]
    fn fdinfo_tells_writers_from_readers() {
        let rdwr = FdInfo::parse("pos:\t0\nflags:\t02100002\nmnt_id:\t27\nino:\t1234\n");
        assert_eq!(
            rdwr,
            Some(FdInfo {
                flags: 0o2100002,
                ino: Some(1234)
            })
        );
        assert!(rdwr.unwrap().writes());
        let wronly = FdInfo::parse("pos:\t0\nflags:\t0102001\nmnt_id:\t27\n").unwrap();
        assert!(wronly.writes());
        assert_eq!(wronly.ino, None, "older kernels show no inode");
        let rdonly = FdInfo::parse("pos:\t0\nflags:\t0100000\nino:\t9\n").unwrap();
        assert!(!rdonly.writes());
        // O_PATH has access mode 0: it cannot write.
        assert!(!FdInfo::parse("flags:\t012100000\n").unwrap().writes());
        assert_eq!(FdInfo::parse("pos:\t0\n"), None);
    }

    /// `check()`, asked again while its answer names a child of this
    /// process (a fork that has not yet called exec), for at most 5 s.
    fn without_fork_copies(check: impl Fn() -> Option<String>) -> Option<String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let why = check();
            let forked = why.as_deref().and_then(named_pid).is_some_and(is_our_child);
            if !forked || std::time::Instant::now() > deadline {
                return why;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn named_pid(why: &str) -> Option<u32> {
        let rest = why.split("pid ").nth(1)?;
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    }

    fn is_our_child(pid: u32) -> bool {
        let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|p| p.trim().parse::<u32>().ok())
            == Some(std::process::id())
    }

    #[test]
    fn a_file_written_by_another_process_is_in_use_a_file_read_is_not() {
        use std::io::{BufRead, BufReader};
        use std::os::unix::fs::MetadataExt;
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data");
        fs::write(&file, b"data").unwrap();
        let meta = fs::metadata(&file).unwrap();
        let id = (
            rustix::fs::major(meta.dev()),
            rustix::fs::minor(meta.dev()),
            meta.ino(),
        );
        assert_eq!(why_file_in_use(&file, id).unwrap(), None);
        // This process's own descriptors are not another program's. A test
        // thread beside this one may fork a child that holds a copy of them
        // until it calls exec: such copies are waited out, any other holder
        // fails the test.
        let _mine = fs::OpenOptions::new().append(true).open(&file).unwrap();
        assert_eq!(
            without_fork_copies(|| why_file_in_use(&file, id).unwrap()),
            None
        );
        for (redirect, writes) in [("3<", false), ("3>>", true), ("3<>", true)] {
            let mut child = Command::new("sh")
                .arg("-c")
                .arg(format!("exec {redirect}\"$0\"; echo ready; exec sleep 30"))
                .arg(&file)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let why = why_file_in_use(&file, id).unwrap();
            let _ = child.kill();
            let _ = child.wait();
            match writes {
                true => assert!(
                    why.as_deref()
                        .is_some_and(|w| w.contains(&format!("pid {} (", child.id()))),
                    "{redirect}: {why:?}"
                ),
                false => assert_eq!(why, None, "{redirect}"),
            }
        }
    }
}
