//! Shared helpers for the integration tests: the built binary, scratch
//! block devices (loop devices over files made in the test), and JSON.

#![allow(dead_code)]

pub mod faultdev;

use assert_cmd::Command;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command as Std, Output};

/// Binary size units, as the command line reads them (`1M` is 1 MiB).
pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

/// The binary under test. Results are saved under a data directory of the
/// tests' own, never in the user's.
pub fn iocurve() -> Command {
    let mut cmd = Command::cargo_bin("iocurve").expect("the iocurve binary is built");
    cmd.env(
        "XDG_DATA_HOME",
        std::env::temp_dir().join("iocurve-tests-data"),
    );
    cmd
}

/// Runs the binary with `args`; it must succeed (its stderr is shown when
/// it does not). The whole output, for tests that read stdout and stderr.
pub fn run_ok<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    ok(iocurve().args(args))
}

/// Runs the binary with `args`; it must exit with `code` (both streams are
/// shown when it does not).
pub fn run_fail<I, S>(args: I, code: i32) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    fails(iocurve().args(args), code)
}

/// Runs a prepared command (extra environment, stdin, working directory)
/// that must succeed; its stderr is shown when it does not.
pub fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        text(&out.stderr)
    );
    out
}

/// Runs a prepared command that must exit with `code`.
pub fn fails(cmd: &mut Command, code: i32) -> Output {
    let out = cmd.output().expect("the command runs");
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// Bytes a command printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Prints why a test could not run; the caller returns right after.
pub fn skipped(why: &str) {
    eprintln!("skipped: {why}");
}

/// The JSON document a run printed.
pub fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn sbin(tool: &str) -> String {
    for dir in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        let p = Path::new(dir).join(tool);
        if p.exists() {
            return p.display().to_string();
        }
    }
    tool.to_string()
}

/// Runs a system tool; Err with its stderr when it fails.
pub fn sh(tool: &str, args: &[&str]) -> Result<String, String> {
    let out = Std::new(sbin(tool))
        .args(args)
        .output()
        .map_err(|e| format!("{tool}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{tool} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A loop device over a scratch file filled with random bytes; detached
/// and removed on drop.
pub struct LoopDevice {
    pub dev: PathBuf,
    pub backing: PathBuf,
    pub size: u64,
    mount: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

impl LoopDevice {
    /// Err carries the reason to print as skipped.
    pub fn new(size: u64) -> Result<LoopDevice, String> {
        Self::with_options(size, &[])
    }

    pub fn with_options(size: u64, losetup_args: &[&str]) -> Result<LoopDevice, String> {
        if !is_root() {
            return Err("not root: loop devices need root (CI runs as root)".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let backing = dir.path().join("disk.img");
        let mut data = vec![0u8; size as usize];
        let mut rng = fastrand::Rng::with_seed(size);
        rng.fill(&mut data);
        std::fs::write(&backing, &data).map_err(|e| e.to_string())?;
        let mut args: Vec<&str> = losetup_args.to_vec();
        let backing_str = backing.display().to_string();
        args.extend(["-f", "--show", &backing_str]);
        let dev = sh("losetup", &args).map_err(|e| format!("losetup failed: {e}"))?;
        Ok(LoopDevice {
            dev: PathBuf::from(dev),
            backing,
            size,
            mount: None,
            _dir: dir,
        })
    }

    pub fn path(&self) -> &str {
        self.dev.to_str().expect("device paths are UTF-8")
    }

    /// Kernel name, e.g. `loop3`.
    pub fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// Formats the device as ext4 and mounts it on a fresh directory.
    pub fn mkfs_and_mount(&mut self) -> Result<PathBuf, String> {
        sh("mkfs.ext4", &["-q", "-F", self.path()])?;
        let mnt = self._dir.path().join("mnt");
        std::fs::create_dir_all(&mnt).map_err(|e| e.to_string())?;
        sh("mount", &[self.path(), mnt.to_str().unwrap()])?;
        self.mount = Some(mnt.clone());
        Ok(mnt)
    }

    /// The device's bytes, read through the backing file after a flush.
    pub fn contents(&self) -> Vec<u8> {
        let _ = sh("blockdev", &["--flushbufs", self.path()]);
        std::fs::read(&self.dev).expect("read the loop device")
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if let Some(mnt) = self.mount.take() {
            let _ = sh("umount", &[mnt.to_str().unwrap()]);
        }
        let _ = sh("losetup", &["-d", self.path()]);
    }
}

/// Runs a command that must succeed (its stderr is shown when it does not)
/// and returns the JSON document it printed.
pub fn ok_json(cmd: &mut Command) -> serde_json::Value {
    json(&ok(cmd).stdout)
}

/// A tmpfs mounted on a fresh directory for one test (a file system of its
/// own: read-only, tiny, or apart from the journals); unmounted on drop.
pub struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    /// `options` as for `mount -o`, e.g. `size=3m` or `size=1m,ro`. Err
    /// carries the reason to print as skipped.
    pub fn mount(options: &str) -> Result<Tmpfs, String> {
        if !is_root() {
            return Err("not root: mounting a tmpfs needs root (CI runs as root)".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let at = dir
            .path()
            .to_str()
            .expect("temp paths are UTF-8")
            .to_string();
        sh(
            "mount",
            &["-t", "tmpfs", "-o", options, "iocurve-test", &at],
        )?;
        Ok(Tmpfs(dir))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        if let Some(at) = self.0.path().to_str() {
            let _ = sh("umount", &[at]);
        }
    }
}

/// (size, buffered, reference) of the points under `key` of a curve series
/// (`points`: the series as measured; `unaligned`: its unaligned section).
pub fn marked_points(series: &serde_json::Value, key: &str) -> Vec<(u64, bool, bool)> {
    series[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {series}"))
        .iter()
        .map(|p| {
            (
                p["size"].as_u64().unwrap(),
                p["buffered"].as_bool().unwrap(),
                p["reference"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Every leaf subcommand (its path, space-separated: `flash class`) that
/// `keep` accepts, walked from the clap definition, so that a new command
/// is enumerated by the tests that cover a promise without being listed.
pub fn leaf_commands(keep: impl Fn(&clap::Command) -> bool) -> std::collections::BTreeSet<String> {
    fn walk(
        cmd: &clap::Command,
        prefix: &str,
        keep: &dyn Fn(&clap::Command) -> bool,
        out: &mut std::collections::BTreeSet<String>,
    ) {
        for sub in cmd.get_subcommands() {
            let path = match prefix {
                "" => sub.get_name().to_string(),
                p => format!("{p} {}", sub.get_name()),
            };
            if sub.has_subcommands() {
                walk(sub, &path, keep, out);
            } else if keep(sub) {
                out.insert(path);
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    use clap::CommandFactory;
    walk(&iocurve::cli::Cli::command(), "", &keep, &mut out);
    out
}
