//! Commands on a simulated card run on its virtual clock, so their figures
//! follow from the card's documented cost law (src/engine/sim.rs) to the
//! precision of the arithmetic, not of a machine's timing.

use crate::common;

use common::{iocurve, ok_json};

/// Median MB/s of the test named `name`, reads or writes.
fn median(doc: &serde_json::Value, name: &str, rw: &str) -> f64 {
    doc["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .find(|t| t["name"] == name && t["workload"]["rw"] == rw)
        .and_then(|t| t["mb_per_s"]["median"].as_f64())
        .unwrap_or_else(|| panic!("no {name} {rw} figure"))
}

#[test]
fn profile_on_a_simulated_card_follows_its_cost_law() {
    // 300 µs a command, reads at 25 MB/s, 32 KiB pages: a 1 MiB read crosses
    // page boundaries (a quarter command more), a 4 KiB one does not.
    let doc = ok_json(iocurve().args([
        "profile",
        "sim:size=2G,read=25MB/s,write=8MB/s,cmd=300us,page=32k",
        "--destructive",
        "--no-save",
        "--json",
    ]));
    let seq = (1u64 << 20) as f64 / (375e-6 + (1u64 << 20) as f64 / 25e6) / 1e6;
    let rnd = 4096.0 / (300e-6 + 4096.0 / 25e6) / 1e6;
    for name in ["SEQ1M Q8T1", "SEQ1M Q1T1"] {
        let got = median(&doc, name, "read");
        assert!((got - seq).abs() / seq < 0.005, "{name}: {got} vs {seq}");
    }
    for name in ["RND4K Q32T1", "RND4K Q1T1"] {
        let got = median(&doc, name, "randread");
        assert!((got - rnd).abs() / rnd < 0.005, "{name}: {got} vs {rnd}");
    }
    // Writes program whole pages at 8 MB/s; garbage collection only slows
    // them, and a random 4 KiB write copies most of a 4 MiB AU.
    let seq_write = median(&doc, "SEQ1M Q1T1", "write");
    assert!(seq_write <= 8.0 && seq_write > 4.0, "{seq_write}");
    let rnd_write = median(&doc, "RND4K Q1T1", "randwrite");
    assert!(rnd_write < 0.05, "{rnd_write}");
    let note = doc["target"]["notes"].to_string();
    assert!(!note.contains("area_not_written"), "{note}");
}

/// The rows a profile measured, in order, with each row's workload as
/// (name, block size, queue depth, threads).
fn profile_rows(args: &[&str]) -> Vec<(String, u64, u64, u64)> {
    let doc = ok_json(
        iocurve()
            .args(["profile", "sim:size=1G,read=200MB/s,write=100MB/s,cmd=50us"])
            .args([
                "--time",
                "100ms",
                "--repeat",
                "1",
                "--read-only",
                "--no-save",
                "--json",
            ])
            .args(args),
    );
    let rows: Vec<_> = doc["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .filter(|t| t["skipped"].is_null())
        .map(|t| {
            let w = &t["workload"];
            let n = |k: &str| w[k].as_u64().unwrap_or_else(|| panic!("{k} in {w}"));
            (
                t["name"].as_str().unwrap().to_string(),
                n("block_size"),
                n("queue_depth"),
                n("threads"),
            )
        })
        .collect();
    let named: Vec<&str> = doc["config"]["rows"]
        .as_array()
        .expect("config.rows")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let measured: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(named, measured, "the config names the rows measured");
    rows
}

#[test]
fn every_profile_preset_measures_its_rows_as_named() {
    let row = |n: &str, bs: u64, q: u64, t: u64| (n.to_string(), bs, q, t);
    let m = 1 << 20;
    let cases = [
        (
            "default",
            vec![
                row("SEQ1M Q8T1", m, 8, 1),
                row("SEQ1M Q1T1", m, 1, 1),
                row("RND4K Q32T1", 4096, 32, 1),
                row("RND4K Q1T1", 4096, 1, 1),
            ],
        ),
        (
            "nvme",
            vec![
                row("SEQ1M Q8T1", m, 8, 1),
                row("SEQ128K Q32T1", 128 << 10, 32, 1),
                row("RND4K Q32T16", 4096, 32, 16),
                row("RND4K Q1T1", 4096, 1, 1),
            ],
        ),
        (
            "peak",
            vec![
                row("SEQ1M Q8T1", m, 8, 1),
                row("RND4K Q32T16", 4096, 32, 16),
            ],
        ),
        (
            "real-world",
            vec![row("SEQ1M Q1T1", m, 1, 1), row("RND4K Q1T1", 4096, 1, 1)],
        ),
    ];
    for (preset, want) in cases {
        assert_eq!(
            profile_rows(&["--preset", preset]),
            want,
            "--preset {preset}"
        );
    }
}

#[test]
fn profile_tests_and_threads_name_the_rows_they_measure() {
    let got = profile_rows(&["--tests", "SEQ64K:Q2T2,rnd8k q4"]);
    assert_eq!(
        got,
        [
            ("SEQ64K Q2T2".to_string(), 64 << 10, 2, 2),
            ("RND8K Q4T1".to_string(), 8192, 4, 1)
        ]
    );
    // --threads 4 gives every row four jobs, and the labels say so.
    let names: Vec<String> = profile_rows(&["--preset", "real-world", "--threads", "4"])
        .into_iter()
        .map(|r| {
            assert_eq!(r.3, 4, "{}", r.0);
            r.0
        })
        .collect();
    assert_eq!(names, ["SEQ1M Q1T4", "RND4K Q1T4"]);
    // --threads 1 lowers a preset's 16 jobs to one, on every row.
    let peak = profile_rows(&["--preset", "peak", "--threads", "1"]);
    let names: Vec<&str> = peak.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["SEQ1M Q8T1", "RND4K Q32T1"]);
    assert!(peak.iter().all(|r| r.3 == 1));
}

#[test]
fn run_repeat_flags_repetitions_that_disagree_in_text_and_json() {
    // No warm-up, and an 8 MiB cache that the first repetition writes into
    // at 80 MB/s while the later ones wait for it to drain at 10 MB/s: the
    // repetitions disagree by more than 30% of their median.
    let repeated_writes = |card: &str| {
        let mut cmd = iocurve();
        cmd.args(["run", card, "--rw", "write", "--bs", "1M", "--repeat", "3"])
            .args(["--time", "300ms", "--ramp", "0", "--seed", "1"])
            .args(["--destructive", "--no-save"]);
        cmd
    };
    let cached = "sim:cache=8M,burst=80MB/s";
    let doc = ok_json(repeated_writes(cached).arg("--json"));
    let m = &doc["tests"][0]["mb_per_s"];
    let (min, max, median) = (
        m["min"].as_f64().unwrap(),
        m["max"].as_f64().unwrap(),
        m["median"].as_f64().unwrap(),
    );
    assert!(max - min > 0.3 * median, "{m}");
    assert_eq!(m["unstable"], true, "{m}");
    let out = repeated_writes(cached).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("median of 3: ~"), "{text}");
    assert!(text.contains("~           unstable: "), "{text}");
    // A card without a cache writes at one speed: nothing flagged.
    let steady = ok_json(repeated_writes("sim:").arg("--json"));
    assert_eq!(steady["tests"][0]["mb_per_s"]["unstable"], false);
}

/// `stream` on a simulated card waits on the card's clock: its figures are
/// the cost law's, whatever the host's timing.
fn stream_json(card: &str, extra: &[&str]) -> serde_json::Value {
    let doc = ok_json(
        iocurve()
            .args(["stream", card, "--time", "20s", "--no-save", "--json"])
            .args(extra),
    );
    doc["stream"].clone()
}

#[test]
fn stream_on_a_simulated_card_misses_every_deadline_once_its_cache_is_full() {
    // 64 KiB writes due at 30 MB/s into a 64 MiB cache that drains at
    // 8 MB/s: it fills after 64 MiB / 22 MB/s = 3.05 s, about 1396 of the
    // 9156 requests; from then on each write waits for room and is late.
    let card = "sim:size=1G,cache=64M,write=8MB/s,burst=60MB/s,cmd=200us";
    let s = stream_json(card, &["--rw", "write", "--rate", "30MB/s"]);
    let o = &s["outcome"];
    let planned = o["requests_planned"].as_f64().unwrap();
    let fill_s = (64u64 << 20) as f64 / 22e6;
    let in_time = (fill_s * 30e6 / 65536.0).round();
    let misses = o["misses"].as_f64().unwrap();
    let expected = planned - in_time;
    assert!(
        (misses - expected).abs() / expected < 0.01,
        "{misses} vs {expected}"
    );
    // The first write costs a command and 64 KiB at the burst speed.
    let first = 200e3 + 65536.0 * 1e9 / 60e6;
    let min = o["latency"]["min_ns"].as_f64().unwrap();
    // (The latency histogram keeps three significant digits.)
    assert!((min - first).abs() / first < 0.01, "{min} vs {first}");
}

#[test]
fn stream_find_max_on_a_simulated_card_brackets_its_read_speed() {
    // A 64 KiB read costs 200 µs + 64 KiB at 20 MB/s: at most 18.85 MB/s.
    let s = stream_json("sim:size=1G,read=20MB/s,cmd=200us", &["--find-max"]);
    let limit = 65536.0 / (200e-6 + 65536.0 / 20e6) / 1e6;
    let best = s["find_max"]["max_rate_mb_per_s"].as_f64().unwrap();
    assert!(best <= limit && best > 0.95 * limit, "{best} vs {limit}");
    assert_eq!(s["outcome"]["misses"], 0, "5 MB/s is well within reach");
}

/// What a command does with a `sim:` target.
enum OnSim {
    /// Measures on the card's virtual clock (exit 0, or 5 for a failed
    /// flash verdict) and says the figures are simulated.
    Runs,
    /// Refuses in one line (exit 2) that says the target is a simulated
    /// card and which commands measure one.
    Refuses,
}

/// Every leaf command that takes a target (`TARGET`, `DIR`, `SRC`), with
/// how it is called on a small simulated card; `{}` is the card.
fn sim_cases() -> Vec<(&'static str, Vec<&'static str>, OnSim)> {
    use OnSim::*;
    let quick = ["--no-save"];
    let cases: Vec<(&str, &[&str], OnSim)> = vec![
        ("profile", &["--time", "100ms", "--repeat", "1"], Runs),
        ("run", &["--time", "100ms"], Runs),
        ("curve", &["--time", "100ms"], Runs),
        ("stream", &["--time", "1s"], Runs),
        ("sustain", &["--bytes", "8M"], Runs),
        ("surface", &[], Runs),
        ("endure", &["--cycles", "1", "--destructive"], Runs),
        ("flash align", &[], Runs),
        ("flash open-au", &["--au", "1M"], Runs),
        ("flash cache", &[], Runs),
        ("flash capacity", &[], Runs),
        ("flash class", &["--au", "1M"], Runs),
        ("probe", &[], Refuses),
        ("files load", &[], Refuses),
        ("files save", &[], Refuses),
        ("copy", &[], Refuses),
    ];
    cases
        .into_iter()
        .map(|(leaf, extra, on)| {
            let mut args: Vec<&str> = leaf.split(' ').collect();
            if leaf == "copy" {
                args.push("Cargo.toml");
            }
            args.push("{}");
            args.extend(extra);
            // probe saves nothing, so it takes no --no-save.
            if leaf != "probe" {
                args.extend(quick);
            }
            (leaf, args, on)
        })
        .collect()
}

/// Every leaf subcommand with a positional target, from the clap definition.
fn commands_with_a_target() -> std::collections::BTreeSet<String> {
    common::leaf_commands(|sub| {
        sub.get_positionals()
            .any(|a| matches!(a.get_id().as_str(), "target" | "dir" | "source"))
    })
}

#[test]
fn every_command_that_takes_a_target_runs_on_a_simulated_card_or_refuses_it_in_one_line() {
    let cases = sim_cases();
    let listed: std::collections::BTreeSet<String> =
        cases.iter().map(|(leaf, ..)| leaf.to_string()).collect();
    let found = commands_with_a_target();
    assert!(found.len() >= 12, "the walk found {found:?}");
    assert_eq!(
        listed, found,
        "every command taking a target needs a sim: case"
    );
    let card = "sim:size=256M,au=1M,page=16k,cmd=100us";
    for (leaf, args, on) in cases {
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "{}" { card } else { a })
            .collect();
        let out = iocurve().args(&args).output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let code = out.status.code();
        match on {
            OnSim::Runs => {
                let verdict_failed = leaf.starts_with("flash") && code == Some(5);
                assert!(
                    code == Some(0) || verdict_failed,
                    "{leaf} on {card}: exit {code:?}\n{stdout}\n{stderr}"
                );
                assert!(
                    stdout.contains("SIMULATED"),
                    "{leaf}: the output must say the figures are simulated:\n{stdout}"
                );
            }
            OnSim::Refuses => {
                assert_eq!(code, Some(2), "{leaf}: {stdout}\n{stderr}");
                let line = stderr.trim();
                assert_eq!(line.lines().count(), 1, "{leaf}: one line, got {line}");
                assert!(
                    line.contains("is a simulated card") && line.contains("profile, run"),
                    "{leaf}: {line}"
                );
            }
        }
    }
}

/// The outcome of `flash class --json` on a simulated card.
fn class_outcome(card: &str, claim: &[&str]) -> serde_json::Value {
    let out = iocurve()
        .args(["flash", "class", card, "--no-save", "--json"])
        .args(claim)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["flash"].clone()
}

#[test]
fn a_class_met_before_any_cache_was_ruled_out_is_not_called_certain() {
    // No fall in speed within two passes over a 4 GiB card (7.4 GiB) at
    // 4× its limit: that fills a cache as large as the card (a dynamic one
    // takes the free space) that could hide a speed below C10's, so the
    // PASS is medium (not high: the cache law is the field's, not this
    // card's), and the reason says why.
    let f = class_outcome(
        "sim:size=4G,write=40MB/s,read=80MB/s,cmd=50us",
        &["--claim", "C10"],
    );
    assert_eq!(f["families"][0]["highest"], "C10", "{f}");
    let w = &f["weakest"];
    assert_eq!(
        (&w["class"], &w["need"]),
        (&"C10".into(), &"seq_write".into()),
        "{f}"
    );
    assert_eq!(w["confidence"], "medium", "{f}");
    assert_eq!(w["reason"]["reason"], "no_fall_covered", "{f}");
    assert_eq!(w["reason"]["largest_cache_bytes"], 4u64 << 30, "{f}");
    // The same card at 64 GiB: the writes stop at 16 GiB, short of a
    // cache as large as the card, so it is not ruled out and the PASS is
    // low.
    let f = class_outcome(
        "sim:size=64G,au=4M,write=40MB/s,read=80MB/s,cmd=50us",
        &["--claim", "C10"],
    );
    assert_eq!(f["families"][0]["highest"], "C10", "{f}");
    assert_eq!(f["weakest"]["confidence"], "low", "{f}");
    assert_eq!(f["weakest"]["reason"]["reason"], "no_fall_open", "{f}");
}
