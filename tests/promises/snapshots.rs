//! Pins today's outputs of the measuring commands on simulated cards, so
//! that a change to how results are built or rendered cannot alter them
//! silently. A `sim:` card runs on a virtual clock with seeded data: the
//! same command gives the same bytes on any machine, except for the few
//! facts of the moment and the host (time, host name, kernel, version, CPU
//! seconds, temporary paths), which `normalise_text` and `normalise_json`
//! replace with placeholders. Each test first checks that the figures
//! follow from the card's cost law (src/engine/sim.rs), then pins the text
//! table, the JSON document and, where the command draws one, the SVG.
//!
//! After an intended change of output: `cargo insta review` (or
//! `INSTA_UPDATE=always cargo test --test promises snapshots::`) and commit
//! the changed files under tests/promises/snapshots/.

use crate::common;

use common::{MIB, json, run_ok, text};
use serde_json::Value;
use std::path::Path;

/// A card with one speed for reads, one for writes and no cache.
const CARD: &str = "sim:size=256M,write=20MB/s,read=40MB/s,cmd=100us";
/// What every request on `CARD` costs before its bytes move.
const CMD_S: f64 = 100e-6;
/// `CARD`'s read and write speeds in bytes per second.
const READ_B_S: f64 = 40e6;
const WRITE_B_S: f64 = 20e6;

/// MB/s of back-to-back requests of `bytes` on a card costing `cmd_s` a
/// request and moving data at `bytes_per_s`.
fn law_mb_s(bytes: u64, cmd_s: f64, bytes_per_s: f64) -> f64 {
    bytes as f64 / (cmd_s + bytes as f64 / bytes_per_s) / 1e6
}

fn assert_near(got: f64, want: f64, share: f64, what: &str) {
    assert!(
        (got - want).abs() <= share * want.abs(),
        "{what}: {got} is not within {}% of {want}",
        share * 100.0
    );
}

/// Runs `args` twice and returns the stdout of the first, after checking
/// the two agree once normalised: a pinned output must be reproducible.
fn deterministic(args: &[&str], tmp: &Path) -> String {
    // At one width whatever the terminal: the pinned text is laid out
    // for 100 columns, `profile`'s for 80.
    let columns = if args.first() == Some(&"profile") {
        "80"
    } else {
        "100"
    };
    let pinned = || common::ok(common::iocurve().env("COLUMNS", columns).args(args));
    let first = normalise_text(&text(&pinned().stdout), tmp);
    let second = normalise_text(&text(&pinned().stdout), tmp);
    assert_eq!(first, second, "{args:?} printed different bytes twice");
    first
}

/// The text output with the facts of the moment and the host replaced:
/// the header's version, time, host and kernel, the CPU seconds (host work,
/// not virtual time) and the test's temporary directory.
fn normalise_text(out: &str, tmp: &Path) -> String {
    let tmp = tmp.to_str().expect("temp paths are UTF-8");
    out.lines()
        .map(|line| {
            let line = line.replace(tmp, "[tmp]");
            if is_first_header_line(&line) {
                normalise_header(&line)
            } else if line.starts_with("host        ") {
                "host        [host] ([kernel])".to_string()
            } else if let Some(rest) = line.strip_prefix("cpu ") {
                let pad = rest.len() - rest.trim_start().len();
                format!("cpu {}[cpu seconds]", " ".repeat(pad))
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `iocurve 0.1.0 · run · 2026-…`, the report's first line (the host is
/// on the next, `host        vm (Linux 6.…)`).
fn is_first_header_line(line: &str) -> bool {
    line.starts_with("iocurve ") && line.matches(" · ").count() == 2
}

/// `iocurve 0.1.0 · run · 2026-…`: keeps the command.
fn normalise_header(line: &str) -> String {
    let command = line.split(" · ").nth(1).unwrap_or("?");
    format!("iocurve [version] · {command} · [time]")
}

/// The JSON document with the same facts replaced, by key wherever they
/// appear, and the host name and temporary directory inside strings.
fn normalise_json(mut doc: Value, tmp: &Path) -> Value {
    let host = doc["host"]["hostname"].as_str().unwrap_or("").to_string();
    let tmp = tmp.to_str().expect("temp paths are UTF-8").to_string();
    redact(&mut doc, &host, &tmp);
    doc
}

fn redact(v: &mut Value, host: &str, tmp: &str) {
    match v {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match volatile_placeholder(key) {
                    Some(placeholder) if !field.is_null() => {
                        *field = Value::String(placeholder.into())
                    }
                    _ => redact(field, host, tmp),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|x| redact(x, host, tmp)),
        Value::String(s) => {
            let mut out = s.replace(tmp, "[tmp]");
            if !host.is_empty() {
                // The device key of a path target names the host.
                out = out.replace(&format!(":{host}:"), ":[host]:");
            }
            *s = out;
        }
        _ => {}
    }
}

/// Keys whose values differ from run to run or host to host.
fn volatile_placeholder(key: &str) -> Option<&'static str> {
    Some(match key {
        "started_at" => "[time]",
        "hostname" => "[host]",
        "kernel" => "[kernel]",
        "cpu_model" => "[cpu model]",
        "iocurve_version" => "[version]",
        "user_s" | "system_s" | "cpu_per_gb_s" => "[cpu seconds]",
        _ => return None,
    })
}

/// The JSON document of `args` (which must not hold `--json`), run twice
/// and checked to agree once normalised.
fn deterministic_json(args: &[&str], tmp: &Path) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let first = normalise_json(json(&run_ok(&args).stdout), tmp);
    let second = normalise_json(json(&run_ok(&args).stdout), tmp);
    assert_eq!(first, second, "{args:?} printed different JSON twice");
    first
}

/// The SVG a command drew, after checking it is well-formed and draws
/// something.
fn svg(path: &Path) -> String {
    let svg = std::fs::read_to_string(path).expect("the command wrote its SVG");
    let doc = roxmltree::Document::parse(&svg).expect("the chart is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(
        doc.descendants().any(|n| n.has_tag_name("polyline")
            || n.has_tag_name("path")
            || n.has_tag_name("rect")),
        "nothing drawn"
    );
    svg
}

/// Whether a line of `out` begins with these cells (split at whitespace):
/// a table row, whatever its column widths.
fn row_starts(out: &str, cells: &[&str]) -> bool {
    out.lines().any(|l| {
        l.split_whitespace()
            .take(cells.len())
            .eq(cells.iter().copied())
    })
}

/// Pins the three outputs of one command.
fn pin(name: &str, text: &str, doc: &Value) {
    insta::assert_snapshot!(format!("{name}_text"), text);
    insta::assert_snapshot!(
        format!("{name}_json"),
        serde_json::to_string_pretty(doc).unwrap()
    );
}

/// The test in `doc["tests"]` with this name and direction.
fn profile_test<'a>(doc: &'a Value, name: &str, rw: &str) -> &'a Value {
    doc["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .find(|t| t["name"] == name && t["workload"]["rw"] == rw)
        .unwrap_or_else(|| panic!("no {name} {rw} test"))
}

#[test]
fn run_writes_at_the_cards_write_speed() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "run",
        CARD,
        "--rw",
        "write",
        "--bs",
        "1M",
        "--time",
        "500ms",
        "--ramp",
        "0",
        "--seed",
        "1",
        "--destructive",
        "--no-save",
    ];
    let out = deterministic(&args, tmp.path());
    let doc = deterministic_json(&args, tmp.path());
    let want = law_mb_s(MIB, CMD_S, WRITE_B_S);
    let got = doc["tests"][0]["mb_per_s"]["median"].as_f64().unwrap();
    assert_near(got, want, 0.005, "1 MiB writes");
    assert!(
        row_starts(&out, &["write", "20.0"]),
        "the write row shows 20.0 MB/s: {out}"
    );
    assert!(out.contains("SIMULATED"), "{out}");
    // Writes back to back with no cache: every request costs the same.
    let lat = &doc["tests"][0]["repetitions"][0]["write"]["latency"];
    assert_eq!(lat["stddev_ns"], 0.0, "{lat}");
    pin("run", &out, &doc);
}

#[test]
fn profile_reads_and_writes_at_the_cards_speeds() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "profile",
        CARD,
        "--time",
        "100ms",
        "--repeat",
        "1",
        "--seed",
        "1",
        "--destructive",
        "--no-save",
    ];
    let out = deterministic(&args, tmp.path());
    let doc = deterministic_json(&args, tmp.path());
    let median = |name, rw| {
        profile_test(&doc, name, rw)["mb_per_s"]["median"]
            .as_f64()
            .unwrap()
    };
    // A 1 MiB read also crosses page boundaries: a little over the law of
    // one command per request, so within 1%.
    let seq_read = law_mb_s(MIB, CMD_S, READ_B_S);
    assert_near(median("SEQ1M Q1T1", "read"), seq_read, 0.01, "SEQ read");
    assert_near(median("SEQ1M Q8T1", "read"), seq_read, 0.01, "SEQ Q8 read");
    let seq_write = law_mb_s(MIB, CMD_S, WRITE_B_S);
    assert_near(median("SEQ1M Q1T1", "write"), seq_write, 0.01, "SEQ write");
    let rnd_read = law_mb_s(4 * common::KIB, CMD_S, READ_B_S);
    assert_near(median("RND4K Q1T1", "randread"), rnd_read, 0.01, "RND read");
    // A random 4 KiB write rewrites most of an AU: far below the law.
    assert!(median("RND4K Q1T1", "randwrite") < 0.1, "{out}");
    assert!(
        row_starts(&out, &["SEQ1M", "Q1T1", "39.8"]),
        "the SEQ Q1 row shows 39.8 MB/s read: {out}"
    );
    pin("profile", &out, &doc);
}

#[test]
fn curve_finds_the_cards_command_cost_and_bandwidth() {
    let tmp = tempfile::tempdir().unwrap();
    let chart = tmp.path().join("curve.svg");
    let chart_arg = chart.to_str().unwrap();
    let args = [
        "curve",
        CARD,
        "--rw",
        "read,write",
        "--sizes",
        "4k,16k,64k,256k,1M",
        "--time",
        "100ms",
        "--repeat",
        "1",
        "--seed",
        "1",
        "--destructive",
        "--no-save",
        "--svg",
        chart_arg,
    ];
    let out = deterministic(&args, tmp.path());
    let drawn = svg(&chart);
    let doc = deterministic_json(&args, tmp.path());
    let series = doc["curve"]["series"].as_array().expect("series");
    let read = series.iter().find(|s| s["pattern"] == "read").unwrap();
    let model = &read["model"];
    assert_near(
        model["bandwidth_mb_per_s"].as_f64().unwrap(),
        READ_B_S / 1e6,
        0.02,
        "read bandwidth",
    );
    assert_near(
        model["t0_s"].as_f64().unwrap() * 1e6,
        CMD_S * 1e6,
        0.05,
        "cost per request",
    );
    for p in read["points"].as_array().unwrap() {
        let size = p["size"].as_u64().unwrap();
        let want = law_mb_s(size, CMD_S, READ_B_S);
        let got = p["mb_per_s"]["median"].as_f64().unwrap();
        assert_near(got, want, 0.03, &format!("read of {size} B"));
    }
    assert!(out.contains("· read · QD 1 =="), "{out}");
    pin("curve", &out, &doc);
    insta::assert_snapshot!("curve_svg", drawn);
}

#[test]
fn surface_of_a_uniform_card_is_flat() {
    let tmp = tempfile::tempdir().unwrap();
    let chart = tmp.path().join("surface.svg");
    let args = [
        "surface",
        CARD,
        "--samples",
        "16",
        "--seed",
        "1",
        "--destructive",
        "--no-save",
        "--svg",
        chart.to_str().unwrap(),
    ];
    let out = deterministic(&args, tmp.path());
    let drawn = svg(&chart);
    let doc = deterministic_json(&args, tmp.path());
    let s = &doc["surface"];
    let samples = s["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 16);
    let read = law_mb_s(MIB, CMD_S, READ_B_S);
    for p in samples {
        assert_near(p["read_mb_per_s"].as_f64().unwrap(), read, 0.01, "read");
        assert!(
            p["write_mb_per_s"].as_f64().unwrap() <= WRITE_B_S / 1e6,
            "{p}"
        );
    }
    assert_eq!(s["outer_inner_ratio"], 1.0);
    assert_eq!(s["slow_regions"], serde_json::json!([]), "{s}");
    assert!(
        out.contains("slow        none below 50% of the median"),
        "{out}"
    );
    pin("surface", &out, &doc);
    insta::assert_snapshot!("surface_svg", drawn);
}

#[test]
fn endure_verifies_every_block_of_every_cycle() {
    let tmp = tempfile::tempdir().unwrap();
    let chart = tmp.path().join("endure.svg");
    let args = [
        "endure",
        "sim:size=32M,write=20MB/s,read=40MB/s,cmd=100us",
        "--cycles",
        "2",
        "--seed",
        "1",
        "--destructive",
        "--no-save",
        "--svg",
        chart.to_str().unwrap(),
    ];
    let out = deterministic(&args, tmp.path());
    let drawn = svg(&chart);
    let doc = deterministic_json(&args, tmp.path());
    let cycles = doc["endure"]["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 2);
    for c in cycles {
        // 32 MiB in 1 MiB blocks, all read back intact.
        assert_eq!(c["verify"]["ok"], 32, "{c}");
        for bad in ["changed", "aliased", "corrupted"] {
            assert_eq!(c["verify"][bad], 0, "{c}");
        }
        let write = law_mb_s(MIB, CMD_S, WRITE_B_S);
        assert_near(c["write_mb_per_s"].as_f64().unwrap(), write, 0.01, "write");
        let read = law_mb_s(MIB, CMD_S, READ_B_S);
        assert_near(c["read_mb_per_s"].as_f64().unwrap(), read, 0.01, "read");
    }
    assert!(out.contains("2 of 2 cycles over 32 MiB"), "{out}");
    pin("endure", &out, &doc);
    insta::assert_snapshot!("endure_svg", drawn);
}

#[test]
fn stream_within_the_cards_speed_meets_every_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "stream",
        CARD,
        "--rate",
        "5MB/s",
        "--time",
        "2s",
        "--seed",
        "1",
        "--no-save",
    ];
    let out = deterministic(&args, tmp.path());
    let doc = deterministic_json(&args, tmp.path());
    let o = &doc["stream"]["outcome"];
    // 2 s at 5 MB/s in 64 KiB requests.
    let planned = (2.0 * 5e6 / 65536.0_f64).ceil();
    assert_eq!(o["requests_planned"].as_f64().unwrap(), planned, "{o}");
    assert_eq!(o["requests_done"], o["requests_planned"], "{o}");
    assert_eq!(o["misses"], 0, "{o}");
    // Each read takes a command and 64 KiB at the read speed (and a little
    // for the pages it crosses).
    let one_read_ns = (CMD_S + 65536.0 / READ_B_S) * 1e9;
    let p50 = o["latency"]["p50_ns"].as_f64().unwrap();
    assert!(p50 >= one_read_ns && p50 < 1.1 * one_read_ns, "{p50}");
    assert!(out.contains("deadlines   0 missed"), "{out}");
    pin("stream", &out, &doc);
}

#[test]
fn sustain_drops_to_the_cards_write_speed_where_its_cache_is_full() {
    let tmp = tempfile::tempdir().unwrap();
    let card = "sim:size=256M,cache=16M,burst=60MB/s,write=10MB/s";
    let args = [
        "sustain",
        card,
        "--bytes",
        "64M",
        "--interval",
        "500ms",
        "--seed",
        "1",
        "--destructive",
        "--no-save",
    ];
    let out = deterministic(&args, tmp.path());
    let doc = deterministic_json(&args, tmp.path());
    let drop = &doc["sustain"]["drop"];
    // The cache fills at 60 MB/s while it drains at 10 MB/s: full after
    // 16 MiB × 60 / (60 − 10) = 19.2 MiB written.
    let full_at = 16.0 * MIB as f64 * 60.0 / 50.0;
    let at = drop["bytes_before_drop"].as_f64().unwrap();
    assert!((at - full_at).abs() <= MIB as f64, "{at} vs {full_at}");
    assert!(drop["bytes_low"].as_f64().unwrap() <= full_at, "{drop}");
    assert!(drop["bytes_high"].as_f64().unwrap() >= full_at, "{drop}");
    assert_near(
        drop["after_mb_per_s"].as_f64().unwrap(),
        10.0,
        0.01,
        "after",
    );
    assert_near(
        drop["before_mb_per_s"].as_f64().unwrap(),
        60.0,
        0.02,
        "before",
    );
    assert!(out.contains("DROP        at 19 MiB"), "{out}");
    pin("sustain", &out, &doc);
}
