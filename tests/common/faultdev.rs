//! A loop block device whose reads or writes fail with EIO, or are slowed
//! down, at chosen byte ranges — for testing how iocurve reports device
//! errors and latency.
//!
//! Layers: a backing file in a temporary directory, served by
//! `tests/support/faultfs.py` (a FUSE filesystem, run as a child process)
//! as `<mnt>/disk.img`, with `/dev/loopN` attached over that file. Every
//! request the loop device sends ends up in faultfs, which fails or delays
//! it. Open `dev` with `O_DIRECT` so the block device's own page cache does
//! not answer reads by itself.
//!
//! Needs root, `/dev/fuse`, `losetup`, and Debian's `python3-fusepy` for
//! `/usr/bin/python3`. When any of that is missing, [`FaultDevice::new`]
//! returns `Err(reason)`; callers print `skipped: {reason}` and return.
#![allow(dead_code)]

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const PYTHON: &str = "/usr/bin/python3";
const MOUNT_TIMEOUT: Duration = Duration::from_secs(15);
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);
/// Same lookup as faultfs.py: Debian names the module `fusepy`, PyPI `fuse`.
const PROBE_FUSEPY: &str = "try:\n import fusepy\nexcept ImportError:\n import fuse; fuse.FUSE\n";

/// Behaviour beyond errors and a flat speed: a write cache, one-shot stalls.
#[derive(Debug, Default, Clone)]
struct Extras {
    fast_bytes: u64,
    fast_mb_per_s: f64,
    stalls: Vec<(u64, u32)>,
    eio_write_limit: Option<u32>,
    /// `(start, len, ms)`: requests touching the range wait `ms` more.
    slow: Vec<(u64, u64, u32)>,
    /// Writes cost whole pages of this many bytes (0: by length).
    page: u64,
    /// Bytes that really exist, and what happens beyond them.
    fake: Option<(u64, Fake)>,
    /// The last bytes written read back by address, hiding the fake.
    hide_cache: u64,
    /// Allocation unit; reads across its boundaries cost `cmd_ms` more.
    au: u64,
    cmd_ms: f64,
    /// AUs kept open for writing (0: no garbage-collection cost).
    open_au: u32,
}

/// What a counterfeit device does beyond its real size (the kinds of
/// `sim:...,fake=`; see tests/support/faultfs.py).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fake {
    /// Address mod real: a write lands on a real block.
    Wrap,
    /// Writes are dropped; reads return zeros.
    Zeros,
    /// Writes are dropped; reads return a fixed pattern per sector.
    Stale,
    /// Reads and writes fail with EIO.
    Eio,
}

impl Fake {
    fn name(self) -> &'static str {
        match self {
            Fake::Wrap => "wrap",
            Fake::Zeros => "zeros",
            Fake::Stale => "stale",
            Fake::Eio => "eio",
        }
    }
}

/// A device described option by option, for the flash geometry and fakes:
/// `FaultDevice::spec(size).mbps(20.0).au(3 << 20, 2.0).build()`.
#[derive(Debug, Clone)]
pub struct FaultSpec {
    size: u64,
    delay_ms: u32,
    mb_per_s: f64,
    extras: Extras,
}

impl FaultSpec {
    /// Every request first waits this long (the plain command cost).
    pub fn delay_ms(mut self, ms: u32) -> Self {
        self.delay_ms = ms;
        self
    }

    /// Bandwidth, 10^6 B/s (0 = unlimited); also the garbage-collection
    /// copy speed of [`FaultSpec::open_au`].
    pub fn mbps(mut self, mb_per_s: f64) -> Self {
        self.mb_per_s = mb_per_s;
        self
    }

    /// Writes cost whole pages; reads across a page boundary cost a
    /// quarter of `cmd_ms` (with [`FaultSpec::au`]).
    pub fn page(mut self, page: u64) -> Self {
        self.extras.page = page;
        self
    }

    /// The first `fast_bytes` written go at `fast_mb_per_s`.
    pub fn write_cache(mut self, fast_bytes: u64, fast_mb_per_s: f64) -> Self {
        self.extras.fast_bytes = fast_bytes;
        self.extras.fast_mb_per_s = fast_mb_per_s;
        self
    }

    /// A counterfeit: only `real` bytes (whole sectors) exist.
    pub fn fake(mut self, real: u64, kind: Fake) -> Self {
        self.extras.fake = Some((real, kind));
        self
    }

    /// The last `bytes` written read back by logical address, hiding the
    /// fake from an immediate check.
    pub fn hide_cache(mut self, bytes: u64) -> Self {
        self.extras.hide_cache = bytes;
        self
    }

    /// An allocation unit of `au` bytes: a read across its boundary costs
    /// `cmd_ms` more.
    pub fn au(mut self, au: u64, cmd_ms: f64) -> Self {
        self.extras.au = au;
        self.extras.cmd_ms = cmd_ms;
        self
    }

    /// `n` AUs open for writing; closing one copies its unwritten rest at
    /// [`FaultSpec::mbps`].
    pub fn open_au(mut self, n: u32) -> Self {
        self.extras.open_au = n;
        self
    }

    pub fn build(self) -> Result<FaultDevice, String> {
        FaultDevice::build_with(
            self.size,
            &[],
            &[],
            self.delay_ms,
            self.mb_per_s,
            &self.extras,
        )
    }
}

/// A `/dev/loopN` with injected faults. Everything is torn down on drop.
pub struct FaultDevice {
    /// The loop device, e.g. `/dev/loop3`.
    pub dev: PathBuf,
    /// Size of the device in bytes (claimed, for a counterfeit).
    pub size: u64,
    /// Bytes that really exist (`size` unless counterfeit).
    pub real: u64,
    /// The backing file holding the device's contents (bypasses faultfs).
    pub backing: PathBuf,
    mountpoint: PathBuf,
    log_path: PathBuf,
    fuse: Option<Child>,
    /// Held open; closing it tells faultfs (`--exit-on-stdin-eof`) to
    /// unmount and exit. If the test process dies, the kernel closes it.
    fuse_stdin: Option<ChildStdin>,
    loop_attached: bool,
    dir: Option<tempfile::TempDir>,
}

impl FaultDevice {
    /// A device of `size` bytes with no faults yet; add them option by
    /// option and call [`FaultSpec::build`].
    pub fn spec(size: u64) -> FaultSpec {
        FaultSpec {
            size,
            delay_ms: 0,
            mb_per_s: 0.0,
            extras: Extras::default(),
        }
    }

    /// Byte the backing file holds at `offset` when the device is created:
    /// never zero, and different in every 4 KiB block at the same position.
    pub fn pattern_at(offset: u64) -> u8 {
        (offset % 251) as u8 + 1
    }

    /// Build a device of `size` bytes. Reads touching any `(start, len)` in
    /// `eio_read` and writes touching any range in `eio_write` fail with
    /// EIO; every request to faultfs (at most 128 KiB each) is first delayed
    /// by `delay_ms`. `Err` gives the reason the device could not be made.
    pub fn new(
        size: u64,
        eio_read: &[(u64, u64)],
        eio_write: &[(u64, u64)],
        delay_ms: u32,
    ) -> Result<FaultDevice, String> {
        Self::build(size, eio_read, eio_write, delay_ms, 0.0, None)
    }

    /// A device with no errors whose every request costs `delay_ms` plus
    /// its length at `mb_per_s` (10^6 B/s; 0 = unlimited): a chosen fixed
    /// cost and a chosen bandwidth, for curves with known shapes.
    pub fn with_speed(size: u64, delay_ms: u32, mb_per_s: f64) -> Result<FaultDevice, String> {
        Self::build(size, &[], &[], delay_ms, mb_per_s, None)
    }

    /// Like [`FaultDevice::new`], but only the first `eio_write_limit`
    /// writes touching an `eio_write` range fail (a transient fault); later
    /// writes there succeed.
    pub fn with_write_limit(
        size: u64,
        eio_read: &[(u64, u64)],
        eio_write: &[(u64, u64)],
        delay_ms: u32,
        eio_write_limit: Option<u32>,
    ) -> Result<FaultDevice, String> {
        Self::build(size, eio_read, eio_write, delay_ms, 0.0, eio_write_limit)
    }

    /// A device with a write cache: the first `fast_bytes` written go at
    /// `fast_mb_per_s` (0 = unlimited), every later write at `mb_per_s`.
    pub fn with_cache(
        size: u64,
        fast_bytes: u64,
        fast_mb_per_s: f64,
        mb_per_s: f64,
    ) -> Result<FaultDevice, String> {
        let extras = Extras {
            fast_bytes,
            fast_mb_per_s,
            ..Extras::default()
        };
        Self::build_with(size, &[], &[], 0, mb_per_s, &extras)
    }

    /// A device like [`FaultDevice::with_speed`] whose writes cost whole
    /// pages of `page` bytes, as flash programs them: a write smaller than
    /// a page takes as long as one page.
    pub fn with_pages(
        size: u64,
        delay_ms: u32,
        mb_per_s: f64,
        page: u64,
    ) -> Result<FaultDevice, String> {
        let extras = Extras {
            page,
            ..Extras::default()
        };
        Self::build_with(size, &[], &[], delay_ms, mb_per_s, &extras)
    }

    /// A device with no errors where every request waits `delay_ms`, and
    /// requests touching a `(start, len, ms)` range wait `ms` milliseconds
    /// more: a slow stretch hidden in an otherwise even medium. The common
    /// delay gives every request a floor far above the machine's own jitter,
    /// so that how much slower the stretch is does not depend on the load.
    pub fn with_slow_ranges(
        size: u64,
        delay_ms: u32,
        slow: &[(u64, u64, u32)],
    ) -> Result<FaultDevice, String> {
        let extras = Extras {
            slow: slow.to_vec(),
            ..Extras::default()
        };
        Self::build_with(size, &[], &[], delay_ms, 0.0, &extras)
    }

    /// A device that stalls once at each `(offset, ms)`: the first request
    /// touching `offset` waits `ms` milliseconds.
    pub fn with_stalls(size: u64, stalls: &[(u64, u32)]) -> Result<FaultDevice, String> {
        let extras = Extras {
            stalls: stalls.to_vec(),
            ..Extras::default()
        };
        Self::build_with(size, &[], &[], 0, 0.0, &extras)
    }

    fn build(
        size: u64,
        eio_read: &[(u64, u64)],
        eio_write: &[(u64, u64)],
        delay_ms: u32,
        mb_per_s: f64,
        eio_write_limit: Option<u32>,
    ) -> Result<FaultDevice, String> {
        let extras = Extras {
            eio_write_limit,
            ..Extras::default()
        };
        Self::build_with(size, eio_read, eio_write, delay_ms, mb_per_s, &extras)
    }

    fn build_with(
        size: u64,
        eio_read: &[(u64, u64)],
        eio_write: &[(u64, u64)],
        delay_ms: u32,
        mb_per_s: f64,
        extras: &Extras,
    ) -> Result<FaultDevice, String> {
        preflight()?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/faultfs.py");
        if !script.is_file() {
            return Err(format!("{} not found", script.display()));
        }

        let dir = tempfile::Builder::new()
            .prefix("iocurve-faultdev-")
            .tempdir()
            .map_err(|e| format!("cannot create temp dir: {e}"))?;
        let root = dir
            .path()
            .canonicalize()
            .map_err(|e| format!("temp dir: {e}"))?;
        let backing = root.join("backing.img");
        let mountpoint = root.join("mnt");
        let log_path = root.join("faultfs.log");

        // From here on, `dev` is dropped on every early return and tears
        // down whatever part has been set up.
        let real = extras.fake.map_or(size, |(real, _)| real);
        let mut dev = FaultDevice {
            dev: PathBuf::new(),
            size,
            real,
            backing,
            mountpoint,
            log_path,
            fuse: None,
            fuse_stdin: None,
            loop_attached: false,
            dir: Some(dir),
        };

        write_pattern(&dev.backing, size, real)
            .map_err(|e| format!("cannot write backing file: {e}"))?;
        fs::create_dir(&dev.mountpoint).map_err(|e| format!("cannot create mountpoint: {e}"))?;
        let log = File::create(&dev.log_path).map_err(|e| format!("cannot create log: {e}"))?;
        let log2 = log
            .try_clone()
            .map_err(|e| format!("cannot clone log fd: {e}"))?;

        let mut cmd = Command::new(PYTHON);
        cmd.arg(&script)
            .arg(&dev.backing)
            .arg(&dev.mountpoint)
            .arg("--exit-on-stdin-eof")
            .arg("--delay-ms")
            .arg(delay_ms.to_string())
            .arg("--mbps")
            .arg(mb_per_s.to_string());
        if let Some(n) = extras.eio_write_limit {
            cmd.arg("--eio-write-limit").arg(n.to_string());
        }
        if extras.fast_bytes > 0 {
            cmd.arg("--fast-bytes")
                .arg(extras.fast_bytes.to_string())
                .arg("--fast-mbps")
                .arg(extras.fast_mb_per_s.to_string());
        }
        for &(offset, ms) in &extras.stalls {
            cmd.arg("--stall-at").arg(format!("{offset}:{ms}"));
        }
        for &(start, len, ms) in &extras.slow {
            cmd.arg("--slow-range").arg(format!("{start}:{len}:{ms}"));
        }
        if extras.page > 0 {
            cmd.arg("--page").arg(extras.page.to_string());
        }
        flash_args(&mut cmd, extras);
        for (flag, ranges) in [("--eio-read", eio_read), ("--eio-write", eio_write)] {
            for &(start, len) in ranges {
                cmd.arg(flag).arg(format!("{start}:{len}"));
            }
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log2))
            .spawn()
            .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
        dev.fuse_stdin = child.stdin.take();
        dev.fuse = Some(child);

        dev.wait_for_mount()?;

        // Direct I/O: the loop device passes every request to the FUSE
        // file as it comes, with no page cache between, as a card reader
        // does; iocurve caps geometry found through a cache.
        let out = Command::new(tool("losetup"))
            .arg("-f")
            .arg("--show")
            .arg("--direct-io=on")
            .arg(dev.mountpoint.join("disk.img"))
            .output()
            .map_err(|e| format!("cannot run losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !name.starts_with("/dev/") {
            return Err(format!("losetup printed no device: {name:?}"));
        }
        dev.dev = PathBuf::from(name);
        dev.loop_attached = true;
        Ok(dev)
    }

    /// What faultfs has logged so far: one line per injected EIO, giving
    /// the operation, offset and length of the failed FUSE request.
    pub fn log(&self) -> String {
        fs::read(&self.log_path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    fn wait_for_mount(&mut self) -> Result<(), String> {
        let image = self.mountpoint.join("disk.img");
        let start = Instant::now();
        loop {
            if let Ok(m) = fs::metadata(&image)
                && m.is_file()
                && m.len() == self.size
            {
                return Ok(());
            }
            let child = self.fuse.as_mut().expect("faultfs child");
            if let Ok(Some(status)) = child.try_wait() {
                self.fuse = None;
                return Err(format!("faultfs exited ({status}): {}", self.log().trim()));
            }
            if start.elapsed() > MOUNT_TIMEOUT {
                return Err(format!(
                    "faultfs did not mount within {MOUNT_TIMEOUT:?}: {}",
                    self.log().trim()
                ));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for FaultDevice {
    fn drop(&mut self) {
        // 1. Detach the loop device while faultfs can still serve its last
        //    requests (a flush on release).
        if self.loop_attached {
            let _ = Command::new(tool("losetup"))
                .arg("-d")
                .arg(&self.dev)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        // 2. Stop faultfs: closing its stdin makes it unmount and exit.
        drop(self.fuse_stdin.take());
        if let Some(mut child) = self.fuse.take() {
            let start = Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if start.elapsed() < EXIT_TIMEOUT => {
                        thread::sleep(Duration::from_millis(10))
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
        // 3. Unmount if faultfs did not (it was killed, or never got going).
        if is_mounted(&self.mountpoint) {
            for (prog, args) in [
                ("umount", &["-l"][..]),
                ("fusermount3", &["-u", "-z"][..]),
                ("fusermount", &["-u", "-z"][..]),
            ] {
                let ok = Command::new(tool(prog))
                    .args(args)
                    .arg(&self.mountpoint)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .map(|s| s.success())
                    .unwrap_or(false);
                if ok {
                    break;
                }
            }
        }
        // 4. Remove the temp dir, but never recurse into a live mount.
        if let Some(dir) = self.dir.take()
            && is_mounted(&self.mountpoint)
        {
            eprintln!(
                "faultdev: {} is still mounted; leaving {}",
                self.mountpoint.display(),
                dir.path().display()
            );
            let _ = dir.keep();
        }
    }
}

/// Cheap checks that give a clear reason before anything is set up.
fn preflight() -> Result<(), String> {
    match fs::metadata("/proc/self") {
        Ok(m) if m.uid() == 0 => {}
        Ok(_) => return Err("not running as root".into()),
        Err(e) => return Err(format!("cannot stat /proc/self: {e}")),
    }
    if !Path::new("/dev/fuse").exists() {
        return Err("no /dev/fuse".into());
    }
    if !Path::new("/dev/loop-control").exists() && !Path::new("/dev/loop0").exists() {
        return Err("no loop device support (/dev/loop-control missing)".into());
    }
    let probe = Command::new(PYTHON)
        .args(["-c", PROBE_FUSEPY])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => Err(format!(
            "python fusepy missing for {PYTHON} (apt-get install python3-fusepy)"
        )),
        Err(e) => Err(format!("cannot run {PYTHON}: {e}")),
    }
}

/// `name` from the usual system directories, so that a PATH without
/// /usr/sbin (common for non-login shells) does not hide losetup.
fn tool(name: &str) -> PathBuf {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// The faultfs options of the flash model: fake, hiding cache, AU timing.
fn flash_args(cmd: &mut Command, extras: &Extras) {
    if let Some((real, kind)) = extras.fake {
        cmd.arg("--real")
            .arg(real.to_string())
            .arg("--fake")
            .arg(kind.name());
    }
    if extras.hide_cache > 0 {
        cmd.arg("--hide-cache").arg(extras.hide_cache.to_string());
    }
    if extras.au > 0 {
        cmd.arg("--au")
            .arg(extras.au.to_string())
            .arg("--cmd-ms")
            .arg(extras.cmd_ms.to_string());
    }
    if extras.open_au > 0 {
        cmd.arg("--open-au").arg(extras.open_au.to_string());
    }
}

/// Fills the first `real` bytes with the pattern; the rest of `size` (only
/// claimed by a counterfeit, never read) stays a hole and costs no disk.
fn write_pattern(path: &Path, size: u64, real: u64) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < real {
        let n = (real - off).min(buf.len() as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = FaultDevice::pattern_at(off + i as u64);
        }
        f.write_all(&buf[..n])?;
        off += n as u64;
    }
    f.set_len(size)?;
    f.sync_all()
}

/// Whether `path` (canonical, no characters that mountinfo escapes) is a
/// mount point of this mount namespace.
fn is_mounted(path: &Path) -> bool {
    let mut s = String::new();
    if File::open("/proc/self/mountinfo")
        .and_then(|mut f| f.read_to_string(&mut s))
        .is_err()
    {
        return false;
    }
    let want = path.to_string_lossy();
    s.lines().any(|l| l.split(' ').nth(4) == Some(&*want))
}
