//! `iocurve flash` end to end: on simulated cards (exact answers through the
//! command line) and on loop devices (no flash geometry to find: every
//! command must run and say so with low confidence, not invent one).

use crate::common;

use common::{LoopDevice, MIB, iocurve, json, skipped};

fn flash(args: &[&str]) -> (i32, serde_json::Value) {
    let out = iocurve()
        .args(["--no-save", "flash"])
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 5,
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, json(&out.stdout))
}

#[test]
fn simulated_fake_card_is_named_with_its_real_size_and_exit_code_5() {
    let (code, doc) = flash(&["capacity", "sim:size=8G,real=1G"]);
    assert_eq!(code, 5);
    assert_eq!(doc["flash"]["details"]["usable"], 1u64 << 30);
    assert_eq!(doc["target"]["kind"], "simulated");
}

#[test]
fn simulated_geometry_comes_back_through_the_command_line() {
    let (_, doc) = flash(&["align", "sim:size=2G,au=2M,page=32k"]);
    assert_eq!(doc["flash"]["details"]["au"], 2 * MIB);
    assert_eq!(doc["flash"]["details"]["page"], 32 * 1024);
    let (_, doc) = flash(&["open-au", "sim:size=1G,au=2M,open_au=5"]);
    assert_eq!(doc["flash"]["details"]["open_aus"], 5);
}

#[test]
fn a_12_mib_au_from_the_sd_specification_is_named() {
    let (_, doc) = flash(&["align", "sim:size=8G,au=12M,page=16k"]);
    assert_eq!(doc["flash"]["details"]["au"], 12 * MIB);
    assert_eq!(doc["flash"]["details"]["au_confidence"], "high");
}

#[test]
fn fakes_that_drop_writes_or_fail_are_found_at_a_size_that_is_not_a_power_of_two() {
    for (spec, real) in [
        ("sim:size=32G,real=31G,fake=zeros", 31u64 << 30),
        ("sim:size=8G,real=3000M,fake=eio", 3000 * MIB),
        ("sim:size=8G,real=6G,fake=stale,cache=64M", 6 << 30),
    ] {
        let (code, doc) = flash(&["capacity", spec, "--seed", "7"]);
        assert_eq!(code, 5, "{spec}");
        let d = &doc["flash"]["details"];
        let usable = d["usable"].as_u64().unwrap();
        let precision = d["precision"].as_u64().unwrap();
        assert!(usable <= real && real <= usable + precision, "{spec}: {d}");
    }
}

#[test]
fn a_cached_slow_card_fails_v30_after_its_cache_is_exhausted() {
    // 512 MiB of cache at 60 MB/s in front of an 8 MB/s card with 12 MiB
    // AUs: the old 64 MiB test passed it at burst speed.
    let spec = "sim:size=8G,au=12M,write=8MB/s,burst=60MB/s,cache=512M";
    let (code, doc) = flash(&["class", spec, "--claim", "V30", "--au", "12M"]);
    assert_eq!(code, 5);
    let d = &doc["flash"]["details"];
    assert_eq!(d["figures"]["pw"]["exhaustion"], "exhausted", "{d}");
    let pw = d["figures"]["pw"]["mean_mb_s"].as_f64().unwrap();
    assert!((pw - 8.0).abs() < 0.5, "{pw}");
    assert_eq!(d["checks"][0]["need"]["SeqWrite"], 30.0);
    assert_eq!(d["checks"][0]["status"], "FAIL");
    assert_eq!(d["checks"][0]["confidence"], "high");
}

#[test]
fn on_a_loop_device_every_command_runs_and_claims_no_geometry() {
    let dev = match LoopDevice::new(256 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let (_, doc) = flash(&["align", dev.path()]);
    let d = &doc["flash"]["details"];
    assert!(d["au"].is_null() || d["au_confidence"] == "low", "{d}");
    let (_, doc) = flash(&["open-au", dev.path(), "--destructive", "--au", "4M"]);
    let d = &doc["flash"]["details"];
    // Noise on a busy machine can suggest a count, but never with more
    // than low confidence (as for align above).
    assert!(d["open_aus"].is_null() || d["confidence"] == "low", "{d}");
    assert_eq!(d["confidence"], "low", "{d}");
    let (_, doc) = flash(&["cache", dev.path(), "--destructive"]);
    assert_eq!(doc["flash"]["details"]["confidence"], "low");
    let before = dev.contents();
    let (code, doc) = flash(&["capacity", dev.path(), "--preserve", "--flush", "16M"]);
    assert_eq!(code, 0, "a loop device is genuine");
    assert_eq!(doc["flash"]["details"]["genuine"], true);
    assert!(
        dev.contents() == before,
        "--preserve put every overwritten block back"
    );
    let (_, doc) = flash(&["class", dev.path(), "--destructive", "--claim", "C10"]);
    // The measured figures come first, then one finding per requirement,
    // each with its status.
    let findings = doc["flash"]["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["status"].is_string()),
        "{findings:?}"
    );
}

#[test]
fn a_fake_behind_a_cache_larger_than_the_old_fixed_flush_is_found_without_flush() {
    // 300 MiB of cache held every probe past the 128 MiB the flush used
    // to stop at: "genuine". The flush now measures the cache and beats it.
    let spec = "sim:size=16G,real=3G,cache=300M,write=20MB/s,burst=80MB/s,fake=zeros";
    let (code, doc) = flash(&["capacity", spec, "--seed", "3"]);
    assert_eq!(code, 5, "{spec}");
    let d = &doc["flash"]["details"];
    let (usable, precision) = (
        d["usable"].as_u64().unwrap(),
        d["precision"].as_u64().unwrap(),
    );
    assert!(usable <= 3 << 30 && 3 << 30 <= usable + precision, "{d}");
    assert_eq!(d["cache_beaten"], true, "{d}");
    let (_, doc) = flash(&["capacity", spec, "--seed", "3", "--flush", "128M"]);
    // With the old bound the cache is never seen full: the verdict says
    // so, and is not sure.
    let findings = doc["flash"]["findings"].to_string();
    assert!(findings.contains("larger --flush"), "{findings}");
    assert_eq!(
        doc["flash"]["findings"][0]["confidence"], "low",
        "{findings}"
    );
}

/// The checks of one class requirement (`need`: "SeqWrite", "RuRead")
/// in a `flash class --json` document.
fn class_check<'a>(doc: &'a serde_json::Value, need: &str) -> &'a serde_json::Value {
    let checks = doc["flash"]["details"]["checks"].as_array().unwrap();
    checks
        .iter()
        .find(|c| c["need"].get(need).is_some())
        .unwrap_or_else(|| panic!("no {need} check: {doc}"))
}

#[test]
fn class_verdicts_are_no_stronger_than_what_they_assumed_issue_25() {
    // An old 2 GiB card with 16 KiB AUs: no AU found by timing, so the
    // assumed 4 MiB gives 512 KiB RUs; with --au 16K the RU is 16 KiB.
    // The two runs must not give opposite confident verdicts, and the
    // one from the assumed AU names it.
    let card = "sim:size=2147483648,au=16384,page=2048,open_au=3,read=7994631B/s,write=5188415B/s,cmd=4938124ns";
    let (_, assumed) = flash(&["class", card, "--destructive", "--claim", "C4"]);
    let pr = class_check(&assumed, "RuRead");
    assert_eq!(pr["confidence"], "low", "{pr}");
    let note = pr["note"].as_str().unwrap_or_default();
    assert!(note.contains("assumed AU of 4 MiB"), "{note}");
    let (_, given) = flash(&[
        "class",
        card,
        "--destructive",
        "--claim",
        "C4",
        "--au",
        "16K",
    ]);
    let sure = |c: &serde_json::Value| c["confidence"] != "low";
    let pr_given = class_check(&given, "RuRead");
    assert!(
        pr["status"] == pr_given["status"] || !sure(pr) || !sure(pr_given),
        "{pr} vs {pr_given}"
    );

    // A 6 GiB cache on a 256 GiB card outlasts the 16 GiB of writes: a
    // PASS at burst speed is low, naming the cache not ruled out.
    let cached =
        "sim:size=256G,au=64M,open_au=4,cache=6G,write=20MB/s,burst=32MB/s,read=90MB/s,cmd=100us";
    let (_, doc) = flash(&["class", cached, "--destructive", "--claim", "V30"]);
    let pw = class_check(&doc, "SeqWrite");
    assert!(pw["status"] == "FAIL" || pw["confidence"] == "low", "{pw}");
    let note = pw["note"].as_str().unwrap_or_default();
    assert!(
        pw["status"] == "FAIL" || note.contains("is not ruled out"),
        "{note}"
    );

    // A card slower than U3 behind a 3 MB/s link: the link hides it, so
    // "cannot tell", never a confident LINK.
    let linked = "sim:size=8G,au=4M,open_au=4,read=10MB/s,write=8MB/s,link=3MB/s";
    let (_, doc) = flash(&["class", linked, "--destructive", "--claim", "U3"]);
    let pr = class_check(&doc, "RuRead");
    assert_ne!(
        (&pr["status"], &pr["confidence"]),
        (&"LINK".into(), &"high".into())
    );
    if pr["status"] == "LINK" {
        assert_eq!(pr["confidence"], "low", "{pr}");
        let note = pr["note"].as_str().unwrap_or_default();
        assert!(
            note.starts_with("cannot tell: the link caps at 3.0 MB/s"),
            "{note}"
        );
    }
}
/// Every `flash` subcommand, from the clap definition (a new one cannot
/// skip the rule below).
fn flash_subcommands() -> Vec<String> {
    use clap::CommandFactory;
    let mut root = iocurve::cli::Cli::command().disable_help_subcommand(true);
    root.build();
    let flash = root.find_subcommand("flash").unwrap();
    flash
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect()
}

#[test]
fn every_flash_command_on_a_card_failing_beyond_its_real_size_says_where_and_what_next() {
    // Issue 25: align, open-au, cache and class ended in a bare "I/O
    // error". Each names the failing offset and `flash capacity` (exit 3),
    // or answers: capacity names the fake (exit 5).
    let spec = "sim:size=8G,real=1G,fake=eio";
    let subs = flash_subcommands();
    assert!(subs.len() >= 5, "{subs:?}");
    for sub in subs {
        let out = iocurve()
            .args(["--no-save", "flash", &sub, spec, "--destructive"])
            .output()
            .unwrap();
        let code = out.status.code().unwrap_or(-1);
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        match code {
            5 => assert_eq!(sub, "capacity", "{sub}: exit 5 is a fake's"),
            0 => assert!(!out.stdout.is_empty(), "{sub}: answered nothing"),
            3 => {
                assert_eq!(lines.len(), 1, "{sub}: one line, not {err}");
                let want = format!(
                    "of a card that claims 8 GiB — it may be a fake: run 'iocurve flash capacity {spec} --destructive' first"
                );
                assert!(
                    lines[0].contains("I/O error at offset ") && lines[0].contains(&want),
                    "{sub}: {err}"
                );
                let byte: u64 = lines[0]
                    .split("(byte ")
                    .nth(1)
                    .and_then(|t| t.split(')').next())
                    .and_then(|b| b.parse().ok())
                    .unwrap_or_else(|| panic!("{sub}: no byte offset in {err}"));
                assert!(
                    byte >= 1 << 30,
                    "{sub}: failed at {byte}, below the real size"
                );
            }
            other => panic!("{sub}: exit {other}: {err}"),
        }
    }
}

#[test]
fn capacity_issue_cases_say_what_they_did() {
    // A --flush beyond any cache of the card is shortened, and said; the
    // cache larger than the old flush room is beaten.
    let (code, doc) = flash(&[
        "capacity",
        "sim:size=32M,real=16M,cache=8M,fake=zeros",
        "--destructive",
        "--flush",
        "1G",
    ]);
    assert_eq!(code, 5, "{doc}");
    let d = &doc["flash"]["details"];
    let (lo, hi) = (
        d["lower_bound"].as_u64().unwrap(),
        d["upper_bound"].as_u64().unwrap(),
    );
    assert!(lo <= 16 << 20 && 16 << 20 <= hi, "{d}");
    assert_eq!(d["flush_asked"], 1u64 << 30);
    let said = doc["flash"]["findings"].to_string();
    assert!(said.contains("flush_shortened"), "{said}");
    // The fake's headline is its interval, never a point outside it.
    let (code, doc) = flash(&[
        "capacity",
        "sim:size=16G,real=2G,cache=1200M,fake=stale",
        "--destructive",
        "--flush",
        "8G",
    ]);
    assert_eq!(code, 5);
    let d = &doc["flash"]["details"];
    let (lo, hi) = (
        d["lower_bound"].as_u64().unwrap(),
        d["upper_bound"].as_u64().unwrap(),
    );
    assert!(lo <= 2 << 30 && 2 << 30 <= hi && hi - lo <= 8192, "{d}");
    let (code, doc) = flash(&[
        "capacity",
        "sim:size=8192M,real=1024M,cache=2G",
        "--destructive",
        "--flush",
        "4G",
    ]);
    assert_eq!(code, 5);
    assert_eq!(doc["flash"]["details"]["usable"], 1u64 << 30);
    assert_eq!(doc["flash"]["details"]["upper_bound"], 1u64 << 30);
}
