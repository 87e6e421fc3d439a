//! Every error is one line that names the problem and the fix, with exit
//! code 2 for usage errors (permission denied among them) and 3 for I/O
//! failures; never a panic. `--help` lists every exit code.

use crate::common;

use common::{LoopDevice, iocurve, is_root, json, sh, skipped};
use std::time::Duration;

fn assert_one_line_error(out: &std::process::Output, code: i32, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    for needle in needles {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
}

#[test]
fn nonexistent_path() {
    let out = iocurve().args(["run", "/no/such/place"]).output().unwrap();
    assert_one_line_error(&out, 2, &["/no/such/place does not exist"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim().lines().count(),
        1
    );
}

#[test]
fn invalid_sizes_name_the_option_and_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &[&str]); 7] = [
        (&["--bs", "4q"], &["--bs", "4q", "4KiB"]),
        (&["--bs", "0"], &["--bs 0"]),
        (&["--size", "0"], &["--size 0"]),
        (&["--time", "fast"], &["--time", "5s"]),
        (&["--rw", "sideways"], &["--rw", "randread"]),
        (&["--qd", "0"], &["--qd"]),
        (&["--pattern", "0xzz"], &["--pattern", "0x00"]),
    ];
    for (args, needles) in cases {
        let mut full = vec!["run", d];
        full.extend_from_slice(args);
        let out = iocurve().args(&full).output().unwrap();
        assert_one_line_error(&out, 2, needles);
    }
    let out = iocurve()
        .args(["run", d, "--engine", "sync", "--qd", "4"])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, &["--engine uring"]);
    let out = iocurve()
        .args(["run", d, "--span", "1M", "--bs", "2M"])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, &["larger than the region"]);
}

#[test]
fn out_of_space_is_an_io_failure_with_a_fix() {
    if !is_root() {
        return skipped("not root: mounting a small tmpfs needs root");
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().to_str().unwrap();
    if let Err(why) = sh("mount", &["-t", "tmpfs", "-o", "size=24M", "tmpfs", mnt]) {
        return skipped(&why);
    }
    std::fs::write(dir.path().join("filler"), vec![1u8; 20 << 20]).unwrap();
    let out = iocurve()
        .args(["run", mnt, "--rw", "write", "--size", "1M"])
        .output()
        .unwrap();
    let _ = sh("umount", &[mnt]);
    assert_one_line_error(&out, 3, &["out of space", "free"]);
}

#[test]
fn permission_denied_names_the_fix() {
    let dev = match LoopDevice::new(4 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let out = common::iocurve_wrapped(|bin| {
        let mut setpriv = std::process::Command::new("setpriv");
        setpriv
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin);
        setpriv
    })
    .args(["run", dev.path(), "--size", "1M"])
    .output();
    let Ok(out) = out else {
        return skipped("setpriv is not installed");
    };
    // Who runs it must change, not the device: a usage error (2), as
    // `--help` says.
    assert_one_line_error(&out, 2, &["permission denied", "root"]);
}

#[test]
fn eio_in_the_middle_of_a_run_keeps_the_partial_result() {
    const MIB: u64 = 1 << 20;
    let dev = match common::faultdev::FaultDevice::new(8 * MIB, &[(3 * MIB, 4096)], &[], 0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let path = dev.dev.to_str().unwrap();
    let out = iocurve()
        .args([
            "run", path, "--rw", "read", "--bs", "4k", "--size", "8M", "--ramp", "0", "--json",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_one_line_error(
        &out,
        3,
        &[
            "read of 4096 bytes at offset 3145728 failed",
            "Input/output error",
            "dmesg",
        ],
    );
    let doc = json(&out.stdout);
    assert!(doc["error"].as_str().unwrap().contains("offset 3145728"));
    let m = &doc["tests"][0]["repetitions"][0];
    assert_eq!(
        m["bytes"],
        3 * MIB,
        "everything before the bad block was measured and kept"
    );

    // 16 blocks around the bad one and 256 random reads: it is hit for
    // certain in practice ((15/16)^256 < 1e-7).
    let out = iocurve()
        .args([
            "run", path, "--rw", "randread", "--qd", "16", "--bs", "4k", "--size", "1M", "--span",
            "64k", "--offset", "3040k", "--ramp", "0",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    // The loop device reads its FUSE backing file through the page cache,
    // which asks FUSE for several pages at once: with 16 reads in flight a
    // neighbour sharing that request with the bad block can fail first.
    // Either way the failure is reported at a block of that request.
    assert_one_line_error(&out, 3, &["failed", "Input/output error"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let at = failed_offset(&err).expect("the error names the offset");
    assert!(
        (3 * MIB - 64 * 1024..3 * MIB + 4096).contains(&at),
        "failed at {at}, not in the bad block's request: {err}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("FAILED"),
        "partial table printed"
    );
}

/// The offset in "... at offset N failed".
fn failed_offset(err: &str) -> Option<u64> {
    let rest = &err[err.find("at offset ")? + "at offset ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn read_only_file_system_says_to_measure_reads() {
    let mut dev = match LoopDevice::new(32 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mnt = match dev.mkfs_and_mount() {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    sh("mount", &["-o", "remount,ro", mnt.to_str().unwrap()]).unwrap();
    let out = iocurve()
        .args([
            "run",
            mnt.to_str().unwrap(),
            "--rw",
            "write",
            "--span",
            "4M",
            "--size",
            "1M",
        ])
        .output()
        .unwrap();
    assert_one_line_error(&out, 3, &["read-only file system"]);
}

#[test]
fn empty_file_is_refused_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty");
    std::fs::write(&file, b"").unwrap();
    let out = iocurve()
        .args(["run", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_one_line_error(&out, 2, &["is empty"]);
}

#[test]
fn more_invalid_combinations_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["run", d, "--rw", "randrw", "--verify"],
            &["--verify", "one direction"],
        ),
        (
            &["run", d, "--buffered", "--verify", "--bs", "1000"],
            &["--bs must be a multiple of 512"],
        ),
        (
            &["run", d, "--span", "4194304T", "--offset", "4k"],
            &["--offset + --span"],
        ),
        (
            &["profile", d, "--span", "512k"],
            &["--span or --size", "2 MiB"],
        ),
    ];
    for (args, needles) in cases {
        let out = iocurve().args(args).output().unwrap();
        assert_one_line_error(&out, 2, needles);
    }
}

#[test]
fn values_out_of_range_are_refused_on_one_line_naming_option_value_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let sim = "sim:size=64M";
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["flash", "class", sim, "--au", "511"],
            vec!["--au 511", "16 KiB to 64 GiB"],
        ),
        (vec!["flash", "class", sim, "--au", "0"], vec!["--au 0"]),
        (vec!["flash", "class", sim, "--au", "3k"], vec!["--au 3k"]),
        (vec!["flash", "open-au", sim, "--au", "0"], vec!["--au 0"]),
        (
            vec!["flash", "class", sim, "--claim", "C11"],
            vec!["--claim C11", "U3"],
        ),
        (vec!["flash", "align", d], vec!["is a directory"]),
        (
            vec!["run", d, "--time", "nan"],
            vec!["--time nan", "above 0"],
        ),
        (vec!["run", d, "--time", "0"], vec!["--time 0", "above 0"]),
        (
            vec!["run", d, "--qd", "1025"],
            vec!["--qd 1025", "1 to 1024"],
        ),
        (vec!["run", d, "--bs", "2G"], vec!["--bs 2G", "1 GiB"]),
        (
            vec!["run", d, "--size", "16777216T"],
            vec!["--size 16777216T", "too large"],
        ),
        (
            vec!["surface", d, "--threshold", "inf"],
            vec!["--threshold inf", "1 to 100"],
        ),
        (
            vec!["compare", "1", "--threshold=-1"],
            vec!["--threshold -1", "percent"],
        ),
        (vec!["stream", d, "--rate", "0MB/s"], vec!["--rate 0MB/s"]),
        (
            vec!["sustain", d, "--interval", "1ms"],
            vec!["--interval 1ms", "10ms"],
        ),
        (vec!["history", ""], vec!["empty name"]),
    ];
    for (args, needles) in cases {
        let out = iocurve().arg("--no-save").args(&args).output().unwrap();
        assert_one_line_error(&out, 2, &needles);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// What a not-storage case set up, undone when dropped: mounts are
/// unmounted, files made in shared places removed, the rest (temporary
/// directories, a listening socket, a loop device) dropped.
#[derive(Default)]
struct Undo {
    unmount: Vec<String>,
    remove: Vec<std::path::PathBuf>,
    keep: Vec<Box<dyn std::any::Any>>,
}

impl Drop for Undo {
    fn drop(&mut self) {
        for file in self.remove.drain(..) {
            let _ = std::fs::remove_file(file);
        }
        while let Some(at) = self.unmount.pop() {
            if let Err(e) = sh("umount", &[&at]) {
                eprintln!("cleanup: {e}");
            }
        }
    }
}

impl Undo {
    /// A fresh temporary directory that lives as long as this.
    fn dir(&mut self) -> std::path::PathBuf {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        self.keep.push(Box::new(dir));
        path
    }

    /// A fresh mount of file system `fstype` on a temporary directory.
    fn mount(&mut self, fstype: &str) -> Result<std::path::PathBuf, String> {
        let at = self.dir();
        let at_str = at.to_str().unwrap().to_string();
        sh("mount", &["-t", fstype, "none", &at_str])?;
        self.unmount.push(at_str);
        Ok(at)
    }
}

/// Where a file system of type `fstype` is mounted in this namespace.
fn mounted_at(fstype: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let sep = fields.iter().position(|f| *f == "-")?;
        (fields.get(sep + 1) == Some(&fstype)).then(|| fields[4].replace("\\040", " "))
    })
}

/// A regular file nobody may write somewhere under `dir` (breadth first, a
/// few levels): should the refusal fail, writing it changes nothing.
fn some_file_under(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut level = vec![dir.to_path_buf()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for d in level {
            for entry in std::fs::read_dir(&d).ok()?.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_file() && meta.permissions().mode() & 0o222 == 0 {
                    return Some(entry.path());
                }
                let ft = meta.file_type();
                if ft.is_dir() {
                    next.push(entry.path());
                }
            }
        }
        level = next;
    }
    None
}

/// Every kind of not-storage target this machine can offer: (path, what
/// the refusal must call it). Kinds that cannot be set up here are named
/// as skipped.
fn not_storage_targets(undo: &mut Undo) -> Vec<(String, &'static str)> {
    let mut kinds = vec![
        ("/proc/version".to_string(), "a file on proc"),
        ("/proc/sys".to_string(), "a directory on proc"),
        ("/dev/null".to_string(), "a character device"),
        ("/dev/zero".to_string(), "a character device"),
    ];
    let dir = undo.dir();
    let fifo = dir.join("fifo");
    match sh("mkfifo", &[fifo.to_str().unwrap()]) {
        Ok(_) => kinds.push((fifo.display().to_string(), "a FIFO")),
        Err(why) => skipped(&format!("the FIFO case: {why}")),
    }
    // A symlink is followed (users pass /dev/disk/by-id names), and what it
    // leads to is judged.
    let link = dir.join("link to a kernel file");
    std::os::unix::fs::symlink("/proc/version", &link).unwrap();
    kinds.push((link.display().to_string(), "a file on proc"));
    let socket = dir.join("socket");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    undo.keep.push(Box::new(listener));
    kinds.push((socket.display().to_string(), "a socket"));
    if !is_root() {
        skipped("the sysfs, debugfs, cgroup2 and devtmpfs cases: not root");
        return kinds;
    }
    match undo.mount("debugfs").map(|at| some_file_under(&at)) {
        Ok(Some(file)) => kinds.push((file.display().to_string(), "a file on debugfs")),
        Ok(None) => skipped("the debugfs case: no file in a fresh debugfs"),
        Err(why) => skipped(&format!("the debugfs case: {why}")),
    }
    let cgroup2 = match mounted_at("cgroup2") {
        Some(at) => Ok(std::path::PathBuf::from(at)),
        None => undo.mount("cgroup2"),
    };
    match cgroup2 {
        // Read-only in every cgroup: the refusal is tested, not a write.
        Ok(at) => kinds.push((
            at.join("cgroup.controllers").display().to_string(),
            "a file on cgroup2",
        )),
        Err(why) => skipped(&format!("the cgroup2 case: {why}")),
    }
    match mounted_at("devtmpfs") {
        Some(at) => {
            let file =
                std::path::Path::new(&at).join(format!("iocurve-test-{}", std::process::id()));
            std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
            undo.remove.push(file.clone());
            kinds.push((file.display().to_string(), "a file on devtmpfs"));
            kinds.push((at, "a directory on devtmpfs"));
        }
        None => skipped("the devtmpfs case: no devtmpfs mounted"),
    }
    kinds
}

#[test]
fn only_storage_is_a_target() {
    let mut undo = Undo::default();
    let mut kinds = not_storage_targets(&mut undo);
    // A kernel setting of a loop device's queue: the case that changed one.
    let lo = LoopDevice::new(4 << 20);
    let read_ahead = match &lo {
        Ok(dev) => {
            let file = format!("/sys/block/{}/queue/read_ahead_kb", dev.name());
            kinds.push((file.clone(), "a file on sysfs"));
            Some((file.clone(), std::fs::read_to_string(&file).unwrap()))
        }
        Err(why) => {
            skipped(&format!("the sysfs case: {why}"));
            None
        }
    };
    for (path, what) in &kinds {
        let read: &[&str] = &["--rw", "read"];
        let write: &[&str] = &["--rw", "write", "--destructive"];
        for flags in [read, write] {
            let out = iocurve()
                .args(["run", path, "--size", "1M", "--ramp", "0", "--no-save"])
                .args(flags)
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            let refusal = format!("{path} is not storage: it is {what}");
            assert_one_line_error(&out, 2, &[&refusal, "give a file or directory"]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.trim().lines().count(), 1, "{path} {flags:?}: {err}");
        }
    }
    // The very command of the report: refused, and the setting stays.
    if let Some((file, before)) = read_ahead {
        let out = iocurve()
            .args(["run", &file, "--rw", "write", "--destructive", "--buffered"])
            .args([
                "--pattern",
                "0x31",
                "--bs",
                "3",
                "--span",
                "3",
                "--size",
                "3",
            ])
            .args(["--no-save"])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert_one_line_error(&out, 2, &["is not storage: it is a file on sysfs"]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    }
    eprintln!("refused {} kinds of target", kinds.len());

    // Storage behind a symlink stays a target.
    let dir = undo.dir();
    let file = dir.join("data");
    std::fs::write(&file, vec![5u8; 1 << 20]).unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    common::ok(
        iocurve()
            .arg("run")
            .arg(&link)
            .args(["--rw", "read", "--size", "1M", "--ramp", "0", "--no-save"])
            .args(["--buffered"])
            .timeout(Duration::from_secs(60)),
    );
}

/// Every option of every command whose value is a size, a duration or a
/// rate (by its value name in the definition), with a value like the one
/// the user meant but with a blank inside.
fn options_taking_units() -> Vec<(Vec<String>, String, &'static str)> {
    use clap::CommandFactory;
    fn walk(
        cmd: &clap::Command,
        words: &[String],
        out: &mut Vec<(Vec<String>, String, &'static str)>,
    ) {
        for arg in cmd.get_arguments() {
            let (Some(long), Some(names)) = (arg.get_long(), arg.get_value_names()) else {
                continue;
            };
            let spaced = match names[0].as_str() {
                "SIZE" | "SIZES" => "4 k",
                "DURATION" => "5 s",
                "RATE" => "5 MB/s",
                _ => continue,
            };
            out.push((words.to_vec(), format!("--{long}"), spaced));
        }
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut w = words.to_vec();
            w.push(sub.get_name().to_string());
            walk(sub, &w, out);
        }
    }
    let mut root = iocurve::cli::Cli::command();
    root.build();
    let mut out = Vec::new();
    walk(&root, &[], &mut out);
    out
}

#[test]
fn a_blank_inside_any_size_duration_or_rate_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let options = options_taking_units();
    // The enumeration found the options it is about.
    for (words, option) in [("run", "--bs"), ("run", "--time"), ("stream", "--rate")] {
        assert!(
            options
                .iter()
                .any(|(w, o, _)| w.join(" ") == words && o == option),
            "{words} {option} not enumerated"
        );
    }
    assert!(options.len() >= 30, "{} options", options.len());
    for (words, option, spaced) in &options {
        let out = iocurve()
            .args(words)
            .arg(d)
            .arg(option)
            .arg(spaced)
            .output()
            .unwrap();
        let shown = format!("{option} {spaced:?}: ");
        assert_one_line_error(&out, 2, &[&shown, "space inside"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{words:?} {option}: {err}");
    }
}

#[test]
fn odd_simulated_cards_are_refused_naming_the_key() {
    let cases: [(&str, &[&str]); 8] = [
        ("sim:size=1G,size=2G", &["sim option size is given twice"]),
        ("sim:size=1X", &["sim option size=1X", "not a byte count"]),
        ("sim:size=0", &["sim option size is 0 bytes"]),
        ("sim:size=1G,real=2G", &["sim option real=2 GiB", "at most"]),
        ("sim:au=24k,page=16k", &["sim option au=24 KiB", "pages"]),
        (
            "sim:size=4G,au=64G",
            &["sim option au=64 GiB", "larger than the card"],
        ),
        ("sim:size=4 G", &["sim option size=4 G", "space inside"]),
        (
            "sim:size=64M,write=5 MB/s",
            &["sim option write=5 MB/s", "space inside"],
        ),
    ];
    for (card, needles) in cases {
        let out = iocurve()
            .args(["run", card, "--time", "50ms", "--no-save"])
            .output()
            .unwrap();
        assert_one_line_error(&out, 2, needles);
    }
}

/// Every command's long options, mistyped (the last two letters swapped,
/// close enough that clap suggests the right one), are refused with exit 2
/// and the command's own usage line: `[OPTIONS]`, never the suggested
/// option written as if it were required.
#[test]
fn a_mistyped_option_shows_the_commands_own_usage() {
    let cases: Vec<(Vec<String>, String)> = crate::output_flags::leaves()
        .into_iter()
        .filter_map(|(name, cmd)| {
            let long = cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|a| a.get_long())
                .find(|l| l.len() >= 4 && *l != "help" && *l != "version")?
                .to_string();
            Some((name.split(' ').map(String::from).collect(), long))
        })
        .collect();
    assert!(cases.len() >= 20, "{} commands", cases.len());
    for (words, long) in cases {
        let mut typo: Vec<char> = long.chars().collect();
        let n = typo.len();
        typo.swap(n - 1, n - 2);
        let typo: String = typo.into_iter().collect();
        if typo == long {
            continue;
        }
        let out = iocurve()
            .args(&words)
            .arg(format!("--{typo}"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{words:?} --{typo}: {err}");
        let usage = err
            .lines()
            .find(|l| l.starts_with("Usage: "))
            .unwrap_or_else(|| panic!("{words:?} --{typo}: no usage line in {err}"));
        let expected = format!("Usage: iocurve {} [OPTIONS]", words.join(" "));
        assert!(usage.starts_with(&expected), "{words:?} --{typo}: {usage}");
        assert!(!usage.contains(&format!("--{long}")), "{words:?}: {usage}");
    }
}

#[test]
fn help_lists_every_exit_code() {
    let help = common::text(&common::run_ok(["--help"]).stdout);
    for (code, meaning) in iocurve::error::EXIT_CODES {
        // Each code on a line of its own, its meaning beside it.
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{code}  ")))
            .unwrap_or_else(|| panic!("exit code {code} missing:\n{help}"));
        let first = meaning.split(' ').next().unwrap();
        assert!(line.contains(first), "{meaning:?} missing:\n{help}");
    }
    assert!(help.contains("6  compare --fail-above"), "{help}");
    assert!(
        help.contains("7  compare --fail-above: cannot tell"),
        "{help}"
    );
}
