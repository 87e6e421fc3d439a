//! Errors keep their cause: each names the operation, the path and the fix,
//! says the OS reason at most once, and exits 2 for a refusal or 3 for an
//! I/O failure. Each case is one a user met.

use crate::common;

use common::{LoopDevice, Tmpfs, iocurve, is_root, ok, sh, skipped};
use std::path::Path;

/// Exit code and stderr.
fn fails(args: &[&str]) -> (Option<i32>, String) {
    // Before the command name: taken by every command, saving or not.
    let out = iocurve().arg("--no-save").args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code(), err)
}

/// The OS text at most once on the error line.
fn said_once(err: &str) {
    let line = err.lines().find(|l| l.starts_with("Error:")).unwrap_or(err);
    if let Some(start) = line.find("(os error") {
        let token = &line[start
            ..line[start..]
                .find(')')
                .map_or(line.len(), |e| start + e + 1)];
        assert_eq!(line.matches(token).count(), 1, "said twice: {line}");
    }
}

#[test]
fn a_read_only_journal_directory_is_refused_with_the_fix() {
    let dev = match LoopDevice::new(8 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let ro = match Tmpfs::mount("size=1m,ro") {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    for dir in [ro.path().to_path_buf(), ro.path().join("journals")] {
        let (code, err) = fails(&[
            "run",
            dev.path(),
            "--rw",
            "write",
            "--size",
            "1M",
            "--preserve",
            "--journal-dir",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("read-only file system"), "{err}");
        assert!(
            err.contains(dir.to_str().unwrap()),
            "names the directory: {err}"
        );
        assert!(err.contains("--journal-dir"), "names the fix: {err}");
        said_once(&err);
    }
}

#[test]
fn a_journal_directory_the_user_may_not_write_is_refused_with_the_owner() {
    if !is_root() {
        return skipped("not root: the test switches to an unprivileged user");
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(setpriv) = setpriv else {
        return skipped("setpriv (util-linux) is not installed");
    };
    // A target the unprivileged user owns, on another file system than the
    // root-owned journal directory.
    let area = match Tmpfs::mount("size=8m,mode=0777") {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    let target = area.path().join("disk.img");
    std::fs::write(&target, vec![7u8; 1 << 20]).unwrap();
    sh("chown", &["65534", target.to_str().unwrap()]).unwrap();
    let journals = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        journals.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = common::iocurve_wrapped(|bin| {
        let mut cmd = std::process::Command::new(setpriv);
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin);
        cmd
    })
    .args(["run"])
    .arg(&target)
    .args([
        "--rw",
        "write",
        "--size",
        "64k",
        "--buffered",
        "--no-save",
        "--preserve",
    ])
    .arg("--journal-dir")
    .arg(journals.path())
    .env("HOME", area.path())
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("permission denied (owned by uid 0"), "{err}");
    assert!(err.contains("--journal-dir"), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), vec![7u8; 1 << 20]);
}

#[test]
fn an_immutable_file_says_so_even_to_root() {
    if !is_root() {
        return skipped("not root");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("photo.raw");
    std::fs::write(&file, vec![3u8; 1 << 20]).unwrap();
    let name = file.to_str().unwrap();
    if sh("chattr", &["+i", name]).is_err() {
        return skipped("chattr +i is not supported here");
    }
    let (code, err) = fails(&[
        "run",
        name,
        "--rw",
        "write",
        "--size",
        "64k",
        "--destructive",
    ]);
    let _ = sh("chattr", &["-i", name]);
    // Refused before any I/O, with what lifts it: exit 2, as permission
    // denied is (README, "Exit codes").
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("immutable") && err.contains("chattr -i"),
        "{err}"
    );
    assert!(!err.contains("run as root"), "{err}");
    said_once(&err);
}

#[test]
fn sim_targets_are_refused_where_a_real_medium_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("image.bin");
    std::fs::write(&image, vec![1u8; 1 << 20]).unwrap();
    let image = image.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["copy", image, "sim:size=64M"],
        &["copy", "sim:size=64M", image],
        &["probe", "sim:size=64M"],
        &["files", "load", "sim:size=64M"],
        &["run", "sim:size=64M", "--method", "mmap"],
    ];
    for args in cases {
        let (code, err) = fails(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("simulated card"), "{args:?}: {err}");
    }
    assert!(
        !Path::new("sim:size=64M").exists(),
        "copy made a file named after the sim: target"
    );
}

#[test]
fn files_save_on_a_full_disk_prints_what_it_measured_and_names_the_fix() {
    let small = match Tmpfs::mount("size=3m") {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    ok(iocurve().args(["files", "save"]).arg(small.path()).args([
        "--size",
        "1M",
        "--sizes",
        "4k,64k",
        "--json",
        "--no-save",
    ]));
    // Leave room for less than one file.
    std::fs::write(small.path().join("fill"), vec![0u8; 2600 << 10]).unwrap();
    let out = iocurve()
        .args(["files", "save"])
        .arg(small.path())
        .args(["--size", "1M", "--sizes", "4k,64k", "--json", "--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("file system is full"), "{err}");
    let doc = common::json(&out.stdout);
    assert!(
        doc["error"].as_str().unwrap().contains("No space left"),
        "{doc}"
    );
    assert!(
        doc["files_save"].is_object(),
        "the partial result is printed: {doc}"
    );
}

#[test]
fn curve_writes_on_a_mounted_device_say_why_and_never_suggest_a_refused_flag() {
    let mut dev = match LoopDevice::new(64 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    if let Err(why) = dev.mkfs_and_mount() {
        return skipped(&why);
    }
    let out = ok(iocurve()
        .args([
            "curve",
            dev.path(),
            "--rw",
            "write",
            "--sizes",
            "4k",
            "--repeat",
            "1",
        ])
        .args(["--time", "50ms", "--no-save"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mounted"), "says it is mounted: {text}");
    assert!(!text.contains("pass --destructive"), "{text}");
    let (code, err) = fails(&["curve", dev.path(), "--rw", "write", "--preserve"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("mounted"), "{err}");
}

#[test]
fn an_output_path_that_names_a_block_device_is_refused() {
    let dev = match LoopDevice::new(8 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let before = dev.contents();
    let (code, err) = fails(&[
        "curve",
        "sim:size=64M",
        "--rw",
        "read",
        "--sizes",
        "4k",
        "--repeat",
        "1",
        "--time",
        "50ms",
        "--svg",
        dev.path(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("block device"), "{err}");
    assert_eq!(dev.contents(), before, "the device was not written");
}
