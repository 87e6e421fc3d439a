//! `--preserve` and `iocurve recover` on real loop devices: the original
//! bytes come back after a normal run, after Ctrl-C and SIGTERM, after
//! kill -9 at any moment (followed by `recover`), and after an I/O error;
//! a damaged journal is refused; a device that holds a file system is
//! refused without --preserve or --destructive and left untouched.

use crate::common;

use common::{LoopDevice, MIB, fails, iocurve_wide as iocurve, json, run_fail, skipped};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn hash(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

fn journals(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// The state word of a journal file ("FILLING", "ARMED", "DONE").
fn state_of(journal: &Path) -> String {
    let bytes = std::fs::read(journal).unwrap_or_default();
    let word = bytes.get(8..16).unwrap_or_default();
    String::from_utf8_lossy(word)
        .trim_end_matches('\0')
        .to_string()
}

fn spawn_preserve_run(dev: &str, journal_dir: &Path, extra: &[&str], delay_ms: u32) -> Child {
    common::iocurve_std()
        .args(["run", dev, "--preserve", "--journal-dir"])
        .arg(journal_dir)
        .args(["--ramp", "0", "--json"])
        .args(extra)
        .env("IOCURVE_TEST_JOURNAL_DELAY_MS", delay_ms.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: rustix::process::Signal) {
    let _ = rustix::process::kill_process(rustix::process::Pid::from_child(child), sig);
}

fn recover_all(journal_dir: &Path) -> std::process::Output {
    iocurve()
        .args(["recover", "--journal-dir"])
        .arg(journal_dir)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

#[test]
fn a_preserve_run_leaves_the_device_as_it_was() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let jdir = tempfile::tempdir().unwrap();
    let before = hash(&dev.contents());
    let out = iocurve()
        .args([
            "run",
            dev.path(),
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "8",
        ])
        .args([
            "--span", "8M", "--offset", "4M", "--size", "8M", "--ramp", "0", "--json",
        ])
        .args(["--preserve", "--journal-dir", jdir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out.stdout);
    let m = &doc["tests"][0]["repetitions"][0];
    assert_eq!(m["bytes"], 8 * MIB, "the test really wrote");
    assert_eq!(
        m["device_io"]["write_bytes"],
        8 * MIB,
        "saving and restoring are not counted"
    );
    let notes = doc["target"]["notes"].to_string();
    assert!(notes.contains("\"caveat\":\"preserved\""), "{notes}");
    assert_eq!(hash(&dev.contents()), before);
    assert!(journals(jdir.path()).is_empty(), "journal removed");
}

#[test]
fn kill_9_at_25_moments_then_recover_gives_back_every_byte() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let jdir = tempfile::tempdir().unwrap();
    let original = hash(&dev.contents());
    // 10 ms per 1 MiB chunk: ~160 ms saving, 400 ms writing, ~160 ms
    // restoring; the kills span all of it and the time after the exit.
    let delays_ms = [
        3, 8, 15, 25, 40, 60, 80, 100, 130, 160, 200, 260, 330, 420, 500, 600, 680, 740, 790, 840,
        880, 920, 960, 1000, 1100,
    ];
    let mut seen: std::collections::BTreeMap<String, u32> = Default::default();
    let mut changed_before_recover = 0;
    for (i, delay) in delays_ms.iter().enumerate() {
        let extra: &[&str] = match i % 3 {
            0 => &["--rw", "randwrite", "--bs", "4k", "--time", "400ms"],
            1 => &["--rw", "write", "--bs", "64k", "--time", "400ms"],
            _ => &[
                "--rw", "randrw", "--bs", "16k", "--qd", "4", "--time", "400ms",
            ],
        };
        let mut child = spawn_preserve_run(dev.path(), jdir.path(), extra, 10);
        std::thread::sleep(Duration::from_millis(*delay));
        signal(&child, rustix::process::Signal::KILL);
        let status = child.wait().unwrap();
        let left: Vec<String> = journals(jdir.path()).iter().map(|j| state_of(j)).collect();
        let phase = match (status.code(), left.as_slice()) {
            (Some(_), []) => "finished".to_string(),
            (_, []) => "killed, no journal".to_string(),
            (_, states) => format!("killed, journal {}", states.join("+")),
        };
        *seen.entry(phase.clone()).or_default() += 1;
        if hash(&dev.contents()) != original {
            changed_before_recover += 1;
        }
        let out = recover_all(jdir.path());
        assert_eq!(
            out.status.code(),
            Some(0),
            "kill at {delay} ms ({phase}): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            hash(&dev.contents()),
            original,
            "kill at {delay} ms ({phase})"
        );
        assert!(journals(jdir.path()).is_empty(), "recover left a journal");
        // Twice is safe.
        assert_eq!(recover_all(jdir.path()).status.code(), Some(0));
    }
    println!(
        "kill -9 moments: {seen:?}; device changed before recover in {changed_before_recover}"
    );
    assert!(
        seen.get("killed, journal ARMED").copied().unwrap_or(0) >= 5,
        "{seen:?}"
    );
    assert!(
        seen.get("killed, journal FILLING").copied().unwrap_or(0) >= 2,
        "{seen:?}"
    );
    assert!(
        changed_before_recover >= 3,
        "the kills hit the test's writes"
    );
}

#[test]
fn an_unfinished_journal_blocks_writes_and_a_damaged_one_is_refused() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let jdir = tempfile::tempdir().unwrap();
    let original = dev.contents();
    let mut child = spawn_preserve_run(
        dev.path(),
        jdir.path(),
        &["--rw", "randwrite", "--time", "20s"],
        0,
    );
    let start = Instant::now();
    while !journals(jdir.path()).iter().any(|j| state_of(j) == "ARMED") {
        assert!(start.elapsed() < Duration::from_secs(20), "never armed");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Past the job setup (a 16 MiB random write pool), into the writing.
    std::thread::sleep(Duration::from_millis(1200));
    signal(&child, rustix::process::Signal::KILL);
    child.wait().unwrap();
    let journal = journals(jdir.path()).pop().unwrap();
    let written = dev.contents();
    assert_ne!(
        hash(&written),
        hash(&original),
        "the test wrote before the kill"
    );

    // Another write test on the device is refused, naming the command.
    let out = fails(
        iocurve()
            .args([
                "run",
                dev.path(),
                "--rw",
                "write",
                "--size",
                "1M",
                "--destructive",
            ])
            .args(["--journal-dir", jdir.path().to_str().unwrap()]),
        2,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let command = format!("iocurve recover {}", journal.display());
    assert!(err.contains(&command), "{err}");
    assert_eq!(dev.contents(), written);

    // A damaged journal is refused whole: the device keeps the test's data.
    let pristine = std::fs::read(&journal).unwrap();
    let mut bad = pristine.clone();
    let at = bad.len() - 3 * MIB as usize / 2;
    bad[at] ^= 0x40;
    std::fs::write(&journal, &bad).unwrap();
    let out = fails(iocurve().args(["recover"]).arg(&journal), 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("damaged") && err.contains("checksum"), "{err}");
    assert_eq!(dev.contents(), written, "a damaged journal was applied");
    let mut cut = pristine.clone();
    cut.truncate(pristine.len() - 4096);
    std::fs::write(&journal, &cut).unwrap();
    let out = fails(iocurve().args(["recover"]).arg(&journal), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));
    assert_eq!(dev.contents(), written, "a truncated journal was applied");

    // The intact journal restores; the command written in the refusal works.
    std::fs::write(&journal, &pristine).unwrap();
    let out = iocurve().args(["recover"]).arg(&journal).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("read back and verified"));
    assert_eq!(dev.contents(), original);
}

#[test]
fn sigint_and_sigterm_restore_before_exiting() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let jdir = tempfile::tempdir().unwrap();
    let original = hash(&dev.contents());
    for sig in [rustix::process::Signal::INT, rustix::process::Signal::TERM] {
        let child = spawn_preserve_run(
            dev.path(),
            jdir.path(),
            &["--rw", "randwrite", "--time", "30s"],
            0,
        );
        let start = Instant::now();
        while !journals(jdir.path()).iter().any(|j| state_of(j) == "ARMED") {
            assert!(start.elapsed() < Duration::from_secs(20), "never armed");
            std::thread::sleep(Duration::from_millis(10));
        }
        // Past the job setup (a 16 MiB random write pool), into the writing.
        std::thread::sleep(Duration::from_millis(1200));
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{sig:?}");
        let doc = json(&out.stdout);
        assert_eq!(doc["interrupted"], true);
        assert!(doc["tests"][0]["repetitions"][0]["ops"].as_u64().unwrap() > 0);
        assert!(
            doc["target"]["notes"]
                .to_string()
                .contains("\"caveat\":\"preserved\""),
            "{sig:?}"
        );
        assert_eq!(hash(&dev.contents()), original, "{sig:?}");
        assert!(journals(jdir.path()).is_empty());
    }
}

#[test]
fn a_file_system_signature_refuses_writes_without_the_flags() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    if let Err(why) = common::sh("mkfs.ext4", &["-q", "-F", dev.path()]) {
        return skipped(&format!("mkfs.ext4: {why}"));
    }
    let before = dev.contents();
    let out = run_fail(["run", dev.path(), "--rw", "write", "--size", "1M"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "ext4 signature",
        "--preserve",
        "--destructive",
        "iocurve recover",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert_eq!(dev.contents(), before, "a refused write changed the device");

    // With --preserve the profile writes, and the file system comes back.
    let jdir = tempfile::tempdir().unwrap();
    let out = iocurve()
        .args([
            "profile",
            dev.path(),
            "--size",
            "4M",
            "--time",
            "100ms",
            "--repeat",
            "1",
        ])
        .args([
            "--json",
            "--preserve",
            "--journal-dir",
            jdir.path().to_str().unwrap(),
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out.stdout);
    let wrote = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["skipped"].is_null() && t["workload"]["rw"].as_str().unwrap().contains("write")
        })
        .count();
    assert_eq!(wrote, 4, "all four write rows ran");
    assert_eq!(
        dev.contents(),
        before,
        "profile --preserve restored the file system"
    );
    let fsck = common::sh("e2fsck", &["-n", "-f", dev.path()]);
    assert!(fsck.is_ok(), "{fsck:?}");
}

#[test]
fn eio_during_a_preserve_write_reports_keeps_results_and_restores() {
    let fault_at = 5 * MIB;
    let dev = match common::faultdev::FaultDevice::with_write_limit(
        8 * MIB,
        &[],
        &[(fault_at, 4096)],
        0,
        Some(1),
    ) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let path = dev.dev.to_str().unwrap();
    let original = std::fs::read(&dev.backing).unwrap();
    let jdir = tempfile::tempdir().unwrap();
    let out = iocurve()
        .args([
            "run", path, "--rw", "write", "--bs", "64k", "--size", "8M", "--ramp", "0",
        ])
        .args([
            "--json",
            "--preserve",
            "--journal-dir",
            jdir.path().to_str().unwrap(),
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("write of 65536 bytes at offset 5242880 failed"),
        "{err}"
    );
    assert!(err.contains("Input/output error"), "{err}");
    let doc = json(&out.stdout);
    assert_eq!(
        doc["tests"][0]["repetitions"][0]["bytes"], fault_at,
        "partial result kept"
    );
    assert!(
        doc["target"]["notes"]
            .to_string()
            .contains("\"caveat\":\"preserved\"")
    );
    assert_eq!(
        std::fs::read(&dev.backing).unwrap(),
        original,
        "data restored"
    );
    assert!(journals(jdir.path()).is_empty());
    assert!(
        dev.log().contains("EIO write offset=5242880"),
        "{}",
        dev.log()
    );
}

#[test]
fn a_device_that_stays_broken_keeps_the_journal_and_names_the_command() {
    let dev = match common::faultdev::FaultDevice::new(8 * MIB, &[], &[(2 * MIB, 4096)], 0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let path = dev.dev.to_str().unwrap();
    let jdir = tempfile::tempdir().unwrap();
    let mut child = spawn_preserve_run(
        path,
        jdir.path(),
        &["--rw", "write", "--bs", "1M", "--size", "8M"],
        50,
    );
    let start = Instant::now();
    while !journals(jdir.path()).iter().any(|j| state_of(j) == "ARMED") {
        assert!(start.elapsed() < Duration::from_secs(20), "never armed");
        std::thread::sleep(Duration::from_millis(2));
    }
    // Bytes that landed at 2 MiB before the device broke there: a write
    // that only confirms the original (the medium refusing a write it
    // never took) would pass, these must be written back and cannot be.
    {
        use std::os::unix::fs::FileExt;
        let backing = std::fs::OpenOptions::new()
            .write(true)
            .open(&dev.backing)
            .unwrap();
        backing.write_all_at(&[0x5A; 4096], 2 * MIB).unwrap();
    }
    let _ = child.try_wait();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let left = journals(jdir.path());
    assert_eq!(left.len(), 1, "the journal is kept: {err}");
    // What the test wrote is in its table: unfinished, for `recover`.
    assert_eq!(state_of(&left[0]), "WRITTEN");
    assert!(
        err.contains(&format!("iocurve recover {}", left[0].display())),
        "{err}"
    );
    // What the test left on the device is measured, not assumed.
    assert!(
        err.contains("The test wrote to") && err.contains("differ from the original now"),
        "{err}"
    );
    assert!(!err.contains("othing was written"), "{err}");
}

#[test]
fn a_region_the_device_refuses_to_write_but_never_changed_is_restored() {
    // Writes at 2 MiB fail with EIO (the test's as well as the restore's);
    // the bytes there are the original ones, so the restore is complete.
    let dev = match common::faultdev::FaultDevice::new(8 * MIB, &[], &[(2 * MIB, 4096)], 0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let original = std::fs::read(&dev.backing).unwrap();
    let jdir = tempfile::tempdir().unwrap();
    let out = iocurve()
        .args([
            "run",
            dev.dev.to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "1M",
        ])
        .args(["--size", "8M", "--ramp", "0", "--preserve", "--journal-dir"])
        .arg(jdir.path())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(3), "the test's write failed: {err}");
    // The note is wrapped to the terminal: compare it as words.
    let words = err.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("restored, read back and verified"), "{err}");
    assert_eq!(std::fs::read(&dev.backing).unwrap(), original);
    assert!(journals(jdir.path()).is_empty(), "{err}");
}

#[test]
fn a_second_ctrl_c_waits_for_the_restore_and_a_third_names_recover() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let jdir = tempfile::tempdir().unwrap();
    let original = hash(&dev.contents());
    for signals in [2, 3] {
        // 60 ms per chunk: saving and restoring take about a second each.
        let child = spawn_preserve_run(
            dev.path(),
            jdir.path(),
            &["--rw", "randwrite", "--time", "30s"],
            60,
        );
        let start = Instant::now();
        while !journals(jdir.path()).iter().any(|j| state_of(j) == "ARMED") {
            assert!(start.elapsed() < Duration::from_secs(20), "never armed");
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(200));
        for _ in 0..signals {
            signal(&child, rustix::process::Signal::INT);
            std::thread::sleep(Duration::from_millis(250));
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("restoring the original data, please wait"),
            "{err}"
        );
        if signals == 2 {
            assert!(journals(jdir.path()).is_empty(), "{err}");
            assert_eq!(hash(&dev.contents()), original);
        } else {
            let left = journals(jdir.path());
            assert_eq!(left.len(), 1, "{err}");
            assert!(err.contains("NOT restored"), "{err}");
            assert!(
                err.contains(&format!("iocurve recover {}", left[0].display())),
                "{err}"
            );
            assert_eq!(recover_all(jdir.path()).status.code(), Some(0));
            assert_eq!(hash(&dev.contents()), original);
        }
    }
}

/// The fake card for the capacity tests: 64 MiB claimed, and every write
/// beyond `real` fails with EIO while reads there give back the old bytes
/// (f3's "I/O errors beyond the real size"), over FUSE and a loop device.
const FAKE_SIZE: u64 = 64 * MIB;
const FAKE_REAL: u64 = 40 * MIB + 12 * 1024;

fn eio_fake() -> Result<common::faultdev::FaultDevice, String> {
    common::faultdev::FaultDevice::new(FAKE_SIZE, &[], &[(FAKE_REAL, FAKE_SIZE - FAKE_REAL)], 0)
}

/// `flash capacity` on `dev` with a fixed flush (no timing decides where
/// the search goes) and seed, and `mode` (the safety flags).
fn capacity_args(dev: &str, mode: &[&str]) -> Vec<String> {
    ["--no-save", "flash", "capacity", dev]
        .iter()
        .chain(&["--flush", "4M", "--seed", "7", "--json"])
        .chain(mode)
        .map(|s| s.to_string())
        .collect()
}

/// A `--preserve` capacity run that waits `later_ms` before it copies
/// into each later round's journal and `armed_ms` once that journal is
/// armed (windows to signal it in), and 5 ms per chunk saved or restored
/// (so that restoring takes a while too).
fn spawn_capacity(dev: &str, journal_dir: &Path, later_ms: u32, armed_ms: u32) -> Child {
    let jdir = journal_dir.to_str().unwrap();
    common::iocurve_std()
        .args(capacity_args(dev, &["--preserve", "--journal-dir", jdir]))
        .env("IOCURVE_TEST_LATER_JOURNAL_DELAY_MS", later_ms.to_string())
        .env("IOCURVE_TEST_LATER_ARMED_DELAY_MS", armed_ms.to_string())
        .env("IOCURVE_TEST_JOURNAL_DELAY_MS", "5")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until a later round's journal (the second or after) is in
/// `state`; false when the run ended first or a minute went by.
fn wait_for_later_journal(child: &mut Child, journal_dir: &Path, state: &str) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        let mut found = journals(journal_dir);
        found.sort();
        if found.len() >= 2 && found.last().is_some_and(|j| state_of(j) == state) {
            return true;
        }
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

/// (usable, precision, rounds) from a capacity verdict.
fn found(doc: &serde_json::Value) -> (u64, u64, u64) {
    let d = &doc["flash"];
    let n = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k} in {d}"));
    let real = n("real_bytes");
    let at_most = d["at_most_bytes"].as_u64().unwrap_or(real);
    (real, at_most - real, n("rounds"))
}

#[test]
fn capacity_with_preserve_searches_to_the_block_and_puts_every_byte_back() {
    let dev = match eio_fake() {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let path = dev.dev.to_str().unwrap();
    let jdir = tempfile::tempdir().unwrap();
    let original = hash(&std::fs::read(&dev.backing).unwrap());
    let jdir_arg = jdir.path().to_str().unwrap();
    let started = Instant::now();
    let out = iocurve()
        .args(capacity_args(
            path,
            &["--preserve", "--journal-dir", jdir_arg],
        ))
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "a fake: {err}");
    let doc = json(&out.stdout);
    let (usable, precision, rounds) = found(&doc);
    println!(
        "--preserve: real {FAKE_REAL}, found {usable} +{precision} in {rounds} rounds, {:?}",
        started.elapsed()
    );
    assert!(
        usable <= FAKE_REAL && FAKE_REAL <= usable + precision,
        "{usable} +{precision}"
    );
    // The first round alone spaces its probes size/255 apart (~250 KiB).
    assert!(precision <= 8192, "searched to the block: {precision}");
    assert!(rounds > 1, "later rounds ran under --preserve");
    let notes = doc["target"]["notes"].to_string();
    assert!(notes.contains("\"caveat\":\"preserved\""), "{notes}");
    assert_eq!(
        hash(&std::fs::read(&dev.backing).unwrap()),
        original,
        "every byte put back"
    );
    assert!(journals(jdir.path()).is_empty(), "journals removed");

    let started = Instant::now();
    let out = fails(
        iocurve()
            .args(capacity_args(path, &["--destructive"]))
            .timeout(Duration::from_secs(300)),
        5,
    );
    let destructive = found(&json(&out.stdout));
    println!("--destructive: {destructive:?}, {:?}", started.elapsed());
    assert_eq!(
        (usable, precision, rounds),
        destructive,
        "--preserve searches as far as --destructive"
    );
}

#[test]
fn kill_9_in_a_later_capacity_round_then_recover_gives_back_every_byte() {
    let dev = match eio_fake() {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let path = dev.dev.to_str().unwrap();
    let jdir = tempfile::tempdir().unwrap();
    let original = hash(&std::fs::read(&dev.backing).unwrap());
    // While the later journal fills (that round has written nothing yet),
    // once it is armed (the run pauses 300 ms there, before that round's
    // writes), and later (its blocks written, the search going on, or the
    // journals being written back).
    for (state, after_ms) in [("FILLING", 100), ("ARMED", 5), ("ARMED", 450)] {
        let mut child = spawn_capacity(path, jdir.path(), 300, 300);
        let reached = wait_for_later_journal(&mut child, jdir.path(), state);
        std::thread::sleep(Duration::from_millis(after_ms));
        signal(&child, rustix::process::Signal::KILL);
        let out = child.wait_with_output().unwrap();
        let moment = format!("a later journal {state} +{after_ms} ms");
        assert!(
            reached && out.status.code().is_none(),
            "{moment}: not reached, or finished first: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut left = journals(jdir.path());
        left.sort();
        let states: Vec<String> = left.iter().map(|j| state_of(j)).collect();
        let armed = states.iter().filter(|s| *s == "ARMED").count();
        if state == "FILLING" {
            assert_eq!(
                states.last().map(String::as_str),
                Some("FILLING"),
                "{moment}"
            );
        }
        if after_ms < 300 && state == "ARMED" {
            assert!(
                armed >= 2,
                "{moment}: the kill came in the pause, yet {states:?}"
            );
        }
        assert_ne!(
            hash(&std::fs::read(&dev.backing).unwrap()),
            original,
            "{moment}: the first round wrote before the kill"
        );
        let recovered = recover_all(jdir.path());
        let said = String::from_utf8_lossy(&recovered.stdout);
        assert_eq!(
            recovered.status.code(),
            Some(0),
            "{moment}: {said}{}",
            String::from_utf8_lossy(&recovered.stderr)
        );
        if armed >= 2 {
            assert!(said.contains("more journal"), "{moment}: {said}");
        }
        assert_eq!(
            hash(&std::fs::read(&dev.backing).unwrap()),
            original,
            "killed with {moment} ({states:?}), then recovered"
        );
        assert!(journals(jdir.path()).is_empty(), "recover left a journal");
    }
}

#[test]
fn ctrl_c_while_a_later_round_is_journalled_writes_nothing_more_and_restores() {
    let dev = match eio_fake() {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let path = dev.dev.to_str().unwrap();
    let jdir = tempfile::tempdir().unwrap();
    let original = hash(&std::fs::read(&dev.backing).unwrap());
    let mut child = spawn_capacity(path, jdir.path(), 1000, 0);
    assert!(wait_for_later_journal(&mut child, jdir.path(), "FILLING"));
    signal(&child, rustix::process::Signal::INT);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted while saving") && err.contains("restored and verified"),
        "{err}"
    );
    assert_eq!(
        hash(&std::fs::read(&dev.backing).unwrap()),
        original,
        "the first journal put every byte back"
    );
    assert!(journals(jdir.path()).is_empty(), "{err}");
}
