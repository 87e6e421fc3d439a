//! `iocurve run` and `profile` on directories and regular files.

use crate::common;

use common::{iocurve, json, ok_json, run_fail, run_ok};

fn scratch_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".iocurve-scratch"))
        .collect()
}

#[test]
fn bytes_moved_equal_the_requested_size_and_scratch_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let doc = ok_json(iocurve().args([
        "run",
        dir.path().to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "8M",
        "--span",
        "16M",
        "--ramp",
        "0",
        "--json",
    ]));
    let m = &doc["tests"][0]["repetitions"][0];
    assert_eq!(m["bytes"], 8 << 20);
    assert_eq!(m["ops"], 128);
    assert_eq!(m["write"]["ops"], 128);
    assert_eq!(doc["target"]["kind"], "directory");
    assert_eq!(doc["target"]["mode"], "direct");
    assert_eq!(doc["schema_version"], 5);
    assert!(m["latency"]["p50_ns"].as_u64().unwrap() > 0);
    assert!(
        scratch_files(dir.path()).is_empty(),
        "scratch file left behind"
    );
}

#[test]
fn threads_and_queue_depth_still_move_exactly_the_size() {
    let dir = tempfile::tempdir().unwrap();
    for extra in [
        &["--threads", "3"][..],
        &["--qd", "16"][..],
        &["--qd", "4", "--threads", "2"][..],
    ] {
        let mut args = vec![
            "run",
            dir.path().to_str().unwrap(),
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "12M",
            "--span",
            "16M",
            "--ramp",
            "0",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = run_ok(&args);
        let doc = json(&out.stdout);
        let m = &doc["tests"][0]["repetitions"][0];
        assert_eq!(m["bytes"], 12 << 20, "{extra:?}");
        assert_eq!(m["read"]["latency"]["count"], 3072, "{extra:?}");
        let engine = doc["tests"][0]["workload"]["engine"].as_str().unwrap();
        assert_eq!(engine == "uring", extra.contains(&"--qd"), "{extra:?}");
    }
}

#[test]
fn buffered_mode_is_recorded_and_eviction_is_proved() {
    let dir = tempfile::tempdir().unwrap();
    let doc = ok_json(iocurve().args([
        "run",
        dir.path().to_str().unwrap(),
        "--rw",
        "read",
        "--bs",
        "128k",
        "--size",
        "8M",
        "--span",
        "8M",
        "--ramp",
        "0",
        "--buffered",
        "--json",
    ]));
    assert_eq!(doc["target"]["mode"], "buffered");
    let warnings = doc["tests"][0]["repetitions"][0]["warnings"]
        .as_array()
        .unwrap();
    assert!(
        warnings
            .iter()
            .all(|w| !w.as_str().unwrap().contains("stayed in the page cache")),
        "{warnings:?}"
    );
}

#[test]
fn existing_file_is_read_but_not_written_without_destructive() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    let original: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&file, &original).unwrap();
    let path = file.to_str().unwrap();

    let out = run_ok([
        "run", path, "--rw", "read", "--bs", "64k", "--size", "4M", "--ramp", "0", "--json",
    ]);
    assert_eq!(
        json(&out.stdout)["tests"][0]["repetitions"][0]["bytes"],
        4 << 20
    );

    let out = run_fail(
        ["run", path, "--rw", "write", "--bs", "64k", "--size", "4M"],
        2,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--destructive"), "{err}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        original,
        "file changed by a refused write"
    );

    run_ok([
        "run",
        path,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "4M",
        "--ramp",
        "0",
        "--destructive",
    ]);
    assert_ne!(
        std::fs::read(&file).unwrap(),
        original,
        "--destructive write did not reach the file"
    );
}

#[test]
fn profile_runs_every_row_with_three_repetitions() {
    let dir = tempfile::tempdir().unwrap();
    let doc = ok_json(iocurve().args([
        "profile",
        dir.path().to_str().unwrap(),
        "--size",
        "32M",
        "--time",
        "150ms",
        "--json",
    ]));
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 8);
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for row in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] {
        assert_eq!(names.iter().filter(|n| **n == row).count(), 2, "{row}");
    }
    for t in tests {
        assert_eq!(
            t["repetitions"].as_array().unwrap().len(),
            3,
            "{}",
            t["name"]
        );
        let spread = &t["mb_per_s"];
        let (min, med, max) = (
            spread["min"].as_f64().unwrap(),
            spread["median"].as_f64().unwrap(),
            spread["max"].as_f64().unwrap(),
        );
        assert!(min <= med && med <= max && min > 0.0, "{t}");
    }
    assert!(scratch_files(dir.path()).is_empty());

    let text = iocurve()
        .args([
            "profile",
            dir.path().to_str().unwrap(),
            "--size",
            "32M",
            "--time",
            "100ms",
            "--repeat",
            "1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    for needle in [
        "SEQ1M Q8T1",
        "RND4K Q1T1",
        "units: MB/s = 10^6 bytes/s",
        "O_DIRECT",
        "iocurve 0.1.0",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn verify_round_trip_through_a_file_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_ok([
        "run",
        dir.path().to_str().unwrap(),
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--size",
        "4M",
        "--span",
        "8M",
        "--ramp",
        "0",
        "--verify",
        "--json",
    ]);
    let v = &json(&out.stdout)["tests"][0]["repetitions"][0]["verify"];
    assert!(v["ok"].as_u64().unwrap() > 0);
    assert_eq!(v["corrupted"], 0);
    assert_eq!(v["changed"], 0);
    assert_eq!(v["aliased"], 0);
}
