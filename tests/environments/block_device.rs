//! `iocurve run` on real block devices: loop devices over scratch files.

use crate::common;

use common::{LoopDevice, MIB, iocurve, json, ok_json, run_fail, run_ok, skipped};

#[test]
fn device_counters_agree_with_the_bytes_moved() {
    let dev = match LoopDevice::new(32 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let doc = ok_json(iocurve().args([
        "run",
        dev.path(),
        "--rw",
        "read",
        "--bs",
        "128k",
        "--size",
        "16M",
        "--ramp",
        "0",
        "--json",
    ]));
    assert_eq!(doc["target"]["kind"], "block_device");
    assert_eq!(doc["target"]["device"]["name"], dev.name());
    let m = &doc["tests"][0]["repetitions"][0];
    assert_eq!(m["bytes"], 16 * MIB);
    let io = &m["device_io"];
    // The loop device received exactly what iocurve read: O_DIRECT, no cache.
    assert_eq!(io["read_bytes"], 16 * MIB, "{io}");
    assert_eq!(io["iocurve_read_bytes"], 16 * MIB);
    assert_eq!(io["cache_served_fraction"], 0.0);
    assert!(io["read_requests"].as_u64().unwrap() >= 128, "{io}");

    let out = run_ok([
        "run",
        dev.path(),
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "8M",
        "--ramp",
        "0",
        "--destructive",
        "--qd",
        "8",
        "--json",
    ]);
    let m = &json(&out.stdout)["tests"][0]["repetitions"][0];
    assert_eq!(m["bytes"], 8 * MIB);
    assert_eq!(m["device_io"]["write_bytes"], 8 * MIB, "{}", m["device_io"]);
}

#[test]
fn writes_need_destructive_and_say_so() {
    let dev = match LoopDevice::new(8 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let before = dev.contents();
    let out = run_fail(["run", dev.path(), "--rw", "write", "--size", "1M"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--destructive") && err.contains("destroys its data"),
        "{err}"
    );
    assert_eq!(dev.contents(), before, "a refused write changed the device");
}

#[test]
fn writes_to_a_mounted_device_are_refused_and_its_data_untouched() {
    let mut dev = match LoopDevice::new(32 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mnt = match dev.mkfs_and_mount() {
        Ok(m) => m,
        Err(why) => return skipped(&format!("cannot make a file system: {why}")),
    };
    std::fs::write(mnt.join("keep.txt"), b"precious").unwrap();
    common::sh("sync", &[]).unwrap();
    let before = std::fs::read(&dev.backing).unwrap();
    let out = run_fail(
        [
            "run",
            dev.path(),
            "--rw",
            "write",
            "--size",
            "1M",
            "--destructive",
        ],
        2,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mounted") && err.contains(mnt.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&dev.backing).unwrap(),
        before,
        "the mounted device was written"
    );
    assert_eq!(std::fs::read(mnt.join("keep.txt")).unwrap(), b"precious");

    // Reading a mounted device is harmless and allowed.
    run_ok([
        "run",
        dev.path(),
        "--rw",
        "randread",
        "--size",
        "1M",
        "--ramp",
        "0",
    ]);
}

#[test]
fn unmounted_device_with_a_file_system_is_named_in_the_refusal() {
    let mut dev = match LoopDevice::new(32 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    if let Err(why) = common::sh("mkfs.ext4", &["-q", "-F", dev.path()]) {
        return skipped(&format!("mkfs.ext4: {why}"));
    }
    let _ = &mut dev;
    let out = run_fail(["run", dev.path(), "--rw", "write", "--size", "1M"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ext4"), "{err}");
}

#[test]
fn verify_finds_a_block_corrupted_behind_its_back() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let write = run_ok([
        "run",
        dev.path(),
        "--rw",
        "write",
        "--bs",
        "4k",
        "--size",
        "16M",
        "--ramp",
        "0",
        "--destructive",
        "--verify",
        "--seed",
        "77",
        "--json",
    ]);
    let v = &json(&write.stdout)["tests"][0]["repetitions"][0]["verify"];
    assert_eq!(v["ok"], 4096, "{v}");

    // Behind iocurve's back: flip one bit in the block at 1 MiB, overwrite
    // the block at 2 MiB with a copy of the block at 3 MiB (wrap-around),
    // and zero the block at 4 MiB.
    let mut disk = dev.contents();
    disk[(MIB + 100) as usize] ^= 0x10;
    let copy = disk[(3 * MIB) as usize..(3 * MIB + 4096) as usize].to_vec();
    disk[(2 * MIB) as usize..(2 * MIB + 4096) as usize].copy_from_slice(&copy);
    disk[(4 * MIB) as usize..(4 * MIB + 4096) as usize].fill(0);
    std::fs::write(&dev.dev, &disk).unwrap();
    common::sh("blockdev", &["--flushbufs", dev.path()]).unwrap();

    let read = iocurve()
        .args([
            "run",
            dev.path(),
            "--rw",
            "read",
            "--bs",
            "4k",
            "--size",
            "16M",
            "--ramp",
            "0",
            "--verify",
            "--seed",
            "77",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        read.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let v = &json(&read.stdout)["tests"][0]["repetitions"][0]["verify"];
    assert_eq!(v["ok"], 4093, "{v}");
    assert_eq!(v["changed"], 1, "{v}");
    assert_eq!(v["aliased"], 1, "{v}");
    assert_eq!(v["corrupted"], 1, "{v}");
    let bad: Vec<u64> = v["first_bad"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(bad, vec![MIB, 2 * MIB, 4 * MIB]);
    assert_eq!(v["first_bad"][1]["verdict"]["found_offset"], 3 * MIB);

    let text = iocurve()
        .args([
            "run",
            dev.path(),
            "--rw",
            "read",
            "--bs",
            "4k",
            "--size",
            "16M",
            "--ramp",
            "0",
            "--verify",
            "--seed",
            "77",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("BAD BLOCK at offset 1048576"), "{text}");
}

#[test]
fn read_only_device_refuses_writes_with_a_clear_message() {
    let dev = match LoopDevice::with_options(8 * MIB, &["-r"]) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let out = iocurve()
        .args([
            "run",
            dev.path(),
            "--rw",
            "write",
            "--size",
            "1M",
            "--destructive",
        ])
        .output()
        .unwrap();
    // A refusal, like every other safety refusal: exit 2.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("read-only"), "{err}");
}

#[test]
fn o_direct_alignment_and_size_errors_name_the_option() {
    let dev = match LoopDevice::new(8 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let cases: [(&[&str], &str); 4] = [
        (&["--bs", "768"], "logical block size"),
        (&["--span", "16M"], "exceeds the size"),
        (&["--bs", "1M", "--span", "512k"], "larger than the region"),
        (&["--offset", "9M"], "beyond the end"),
    ];
    for (args, needle) in cases {
        let mut full = vec!["run", dev.path(), "--time", "100ms", "--ramp", "0"];
        full.extend_from_slice(args);
        let out = run_fail(&full, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle) && err.starts_with("Error: "),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn a_loop_device_stacked_on_the_target_blocks_writes() {
    let dev = match LoopDevice::new(8 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let upper = match common::sh("losetup", &["-f", "--show", dev.path()]) {
        Ok(u) => u,
        Err(why) => return skipped(&why),
    };
    let before = std::fs::read(&dev.backing).unwrap();
    let out = iocurve()
        .args([
            "run",
            dev.path(),
            "--rw",
            "write",
            "--size",
            "1M",
            "--destructive",
        ])
        .output()
        .unwrap();
    let _ = common::sh("losetup", &["-d", &upper]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let upper_name = upper.trim_start_matches("/dev/");
    assert!(
        err.contains("loop devices set up over it") && err.contains(upper_name),
        "{err}"
    );
    assert_eq!(std::fs::read(&dev.backing).unwrap(), before);
}

#[test]
fn verify_read_finds_the_seed_in_the_blocks_and_counts_each_block_once() {
    let dev = match LoopDevice::new(4 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let write = run_ok([
        "run",
        dev.path(),
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "8M",
        "--threads",
        "2",
        "--ramp",
        "0",
        "--destructive",
        "--verify",
        "--json",
    ]);
    let v = &json(&write.stdout)["tests"][0]["repetitions"][0]["verify"];
    let written = v["ok"].as_u64().unwrap();
    assert!(
        written > 0 && written <= 1024,
        "each block counted once: {v}"
    );
    assert_eq!(v["corrupted"], 0, "{v}");

    // No --seed: the read takes it from the blocks; blocks never written
    // by the random writes hold the loop file's random bytes.
    let read = iocurve()
        .args([
            "run",
            dev.path(),
            "--rw",
            "read",
            "--bs",
            "4k",
            "--time",
            "300ms",
            "--ramp",
            "0",
            "--verify",
            "--json",
        ])
        .output()
        .unwrap();
    let v = &json(&read.stdout)["tests"][0]["repetitions"][0]["verify"];
    assert_eq!(v["ok"].as_u64().unwrap(), written, "{v}");
    assert_eq!(
        v["ok"].as_u64().unwrap() + v["corrupted"].as_u64().unwrap(),
        1024,
        "{v}"
    );
}

/// `--sqpoll`: the same bytes reach the device through a ring whose
/// submission queue a kernel thread polls, and the run says it was asked.
#[test]
fn a_polled_ring_moves_the_same_bytes_as_system_calls() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let args = |polled: bool| {
        let mut a = vec![
            "run",
            dev.path(),
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "8M",
            "--ramp",
            "0",
            "--qd",
            "8",
            "--destructive",
            "--verify",
            "--seed",
            "5",
            "--json",
        ];
        if polled {
            a.push("--sqpoll");
        }
        a
    };
    let out = iocurve().args(args(true)).output().expect("iocurve runs");
    let said = String::from_utf8_lossy(&out.stderr);
    if said.contains("leave out --sqpoll") {
        return skipped(&format!("no io_uring polling thread here: {said}"));
    }
    let polled = json(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(polled["config"]["target"]["sqpoll"], true);
    // Compared only with runs made the same way.
    assert_eq!(polled["tests"][0]["workload"]["engine"], "uring-sqpoll");
    let m = &polled["tests"][0]["repetitions"][0];
    assert_eq!(m["bytes"], 8 * MIB);
    assert_eq!(m["device_io"]["write_bytes"], 8 * MIB, "{}", m["device_io"]);
    assert_eq!(m["verify"]["ok"], 128, "{}", m["verify"]);
    let called = json(&run_ok(args(false)).stdout);
    assert_eq!(called["config"]["target"]["sqpoll"], false);
    assert_eq!(called["tests"][0]["workload"]["engine"], "uring");
    assert_eq!(called["tests"][0]["repetitions"][0]["bytes"], 8 * MIB);
}
