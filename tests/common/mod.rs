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

/// The directory that stands in for the user's home in every iocurve the
/// tests start: HOME and the four XDG base directories point into it, so a
/// run saved without `--db` lands in the tests' own database, and nothing
/// the binary creates by default (database, journals, configuration,
/// cache) reaches the user's. One per test process, under Cargo's scratch
/// directory for integration tests (`target/tmp`), not in a /tmp shared
/// with the user; directories of test processes that have ended are
/// removed when the next one starts.
pub fn test_home() -> &'static Path {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("iocurve-home");
        remove_homes_of_ended_processes(&root);
        let exe = std::env::current_exe().expect("the test binary's path");
        let name = exe
            .file_stem()
            .map_or("tests".into(), |n| n.to_string_lossy());
        let home = root.join(format!("{name}.{}", std::process::id()));
        for sub in XDG_DIRS.iter().map(|(_, sub)| sub) {
            std::fs::create_dir_all(home.join(sub)).expect("create the tests' home");
        }
        home
    })
}

/// The XDG base directories iocurve (or a library it uses) may read, and
/// where each points inside [`test_home`].
const XDG_DIRS: &[(&str, &str)] = &[
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_STATE_HOME", ".local/state"),
];

/// Removes `root/<binary>.<pid>` for every pid that no longer runs (a
/// reused pid keeps its directory: harmless, and removed later).
fn remove_homes_of_ended_processes(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.rsplit('.').next());
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Points HOME and the XDG base directories of `cmd` (and so of whatever
/// it starts) at [`test_home`]. A test may still override one of them
/// afterwards with a temporary directory of its own.
fn isolate(cmd: &mut Std) -> &mut Std {
    let home = test_home();
    cmd.env("HOME", home);
    for (var, sub) in XDG_DIRS {
        cmd.env(var, home.join(sub));
    }
    cmd
}

/// The one place that builds a command starting the binary under test, as
/// a `std::process::Command` (to spawn, signal or read it live). Every
/// other way to start it ([`iocurve`], [`iocurve_wrapped`]) goes through
/// here or [`isolate`]; `write_gate_structure.rs` fails on any test that
/// starts the binary another way.
pub fn iocurve_std() -> Std {
    let mut cmd = Std::new(env!("CARGO_BIN_EXE_iocurve"));
    isolate(&mut cmd);
    cmd
}

/// The binary under test, as an assert_cmd command (to run to completion
/// and assert on).
pub fn iocurve() -> Command {
    Command::from_std(iocurve_std())
}

/// [`iocurve`] with a terminal width wide enough that no line it prints
/// is wrapped: for tests that read a message whole (a path to parse, a
/// sentence to find). How text fits 60, 80 and 120 columns is
/// `promises::text_width`'s to test.
pub fn iocurve_wide() -> Command {
    let mut cmd = iocurve();
    cmd.env("COLUMNS", "1000");
    cmd
}

/// The binary started by another program (`setpriv`, `script`): `wrap`
/// gets the binary's path and builds the wrapper's command line; the
/// wrapper gets the isolated environment, which it passes on.
pub fn iocurve_wrapped(wrap: impl FnOnce(&Path) -> Std) -> Std {
    let mut cmd = wrap(Path::new(env!("CARGO_BIN_EXE_iocurve")));
    isolate(&mut cmd);
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

/// Says why a test could not run; the caller returns right after. The line
/// goes to the process's stderr directly, not through `eprintln!`, which
/// libtest captures and hides for a test that passes: a skip must show
/// where `cargo test` is read. When `IOCURVE_SKIP_LOG` names a file (as
/// `.ci/run` does), the skip is also appended there, one line per skip
/// (test binary, test, reason, tab-separated), for the count at the end.
pub fn skipped(why: &str) {
    use std::io::Write as _;
    let binary = test_binary_name();
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    let why = why.replace(['\n', '\t'], " ");
    let _ = std::io::stderr().write_all(format!("skipped: {binary}::{test}: {why}\n").as_bytes());
    if let Some(log) = std::env::var_os("IOCURVE_SKIP_LOG") {
        let line = format!("{binary}\t{test}\t{why}\n");
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = appended {
            panic!("IOCURVE_SKIP_LOG={}: {e}", Path::new(&log).display());
        }
    }
}

/// The test binary's name as Cargo names the test (`promises`, without
/// the hash Cargo appends to the file).
fn test_binary_name() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let stem = exe.file_stem().unwrap_or_default().to_string_lossy();
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => stem.into_owned(),
    }
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
        let (dir, backing) = Self::backing_file(size)?;
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

    /// A loop device at the given free node (`/dev/loop3`); Err when the
    /// node is taken (another test may have attached it first).
    pub fn at(dev: &str, size: u64) -> Result<LoopDevice, String> {
        let (dir, backing) = Self::backing_file(size)?;
        sh("losetup", &[dev, &backing.display().to_string()])
            .map_err(|e| format!("losetup {dev} failed: {e}"))?;
        Ok(LoopDevice {
            dev: PathBuf::from(dev),
            backing,
            size,
            mount: None,
            _dir: dir,
        })
    }

    /// A temporary file of `size` seeded random bytes to back a device.
    fn backing_file(size: u64) -> Result<(tempfile::TempDir, PathBuf), String> {
        if !is_root() {
            return Err("not root: loop devices need root (CI runs as root)".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let backing = dir.path().join("disk.img");
        let mut data = vec![0u8; size as usize];
        let mut rng = fastrand::Rng::with_seed(size);
        rng.fill(&mut data);
        std::fs::write(&backing, &data).map_err(|e| e.to_string())?;
        Ok((dir, backing))
    }

    /// True while the node is still backed by this device's file: once it
    /// is detached, its number may serve another test's device, which must
    /// not be detached in its place.
    fn still_ours(&self) -> bool {
        let attr = format!("/sys/block/{}/loop/backing_file", self.name());
        let Ok(backed_by) = std::fs::read_to_string(attr) else {
            return false;
        };
        let ours = std::fs::canonicalize(&self.backing).unwrap_or_else(|_| self.backing.clone());
        Path::new(backed_by.trim()) == ours || Path::new(backed_by.trim()) == self.backing
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
        if self.still_ours() {
            let _ = sh("losetup", &["-d", self.path()]);
        }
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
