//! Commands on a simulated card run on its virtual clock, so their figures
//! follow from the card's documented cost law (src/engine/sim.rs) to the
//! precision of the arithmetic, not of a machine's timing.

mod common;

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
    for name in ["SEQ 1MiB Q8", "SEQ 1MiB Q1"] {
        let got = median(&doc, name, "read");
        assert!((got - seq).abs() / seq < 0.005, "{name}: {got} vs {seq}");
    }
    for name in ["RND 4KiB Q32", "RND 4KiB Q1"] {
        let got = median(&doc, name, "randread");
        assert!((got - rnd).abs() / rnd < 0.005, "{name}: {got} vs {rnd}");
    }
    // Writes program whole pages at 8 MB/s; garbage collection only slows
    // them, and a random 4 KiB write copies most of a 4 MiB AU.
    let seq_write = median(&doc, "SEQ 1MiB Q1", "write");
    assert!(seq_write <= 8.0 && seq_write > 4.0, "{seq_write}");
    let rnd_write = median(&doc, "RND 4KiB Q1", "randwrite");
    assert!(rnd_write < 0.05, "{rnd_write}");
    let note = doc["target"]["notes"].to_string();
    assert!(!note.contains("not written first"), "{note}");
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
