//! `iocurve curve` end to end: on loop devices and directories, unaligned
//! sizes, the SVG chart, and a crossover between two devices whose shapes
//! are chosen (FUSE fault devices with a fixed cost or a bandwidth limit).

mod common;

use common::faultdev::FaultDevice;
use common::{LoopDevice, iocurve, json, ok_json, skipped};

const MIB: u64 = 1 << 20;

#[test]
fn a_curve_runs_end_to_end_on_a_loop_device() {
    let dev = match LoopDevice::new(64 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let doc = ok_json(iocurve().args([
        "curve",
        dev.path(),
        "--rw",
        "read,randread",
        "--sizes",
        "4k,16k,64k,256k,1M",
        "--time",
        "100ms",
        "--repeat",
        "2",
        "--json",
    ]));
    let series = doc["curve"]["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    for s in series {
        let sizes: Vec<u64> = s["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["size"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, vec![4096, 16384, 65536, 262144, 1 << 20]);
        for p in s["points"].as_array().unwrap() {
            assert_eq!(p["buffered"], false);
            let mbps = &p["mb_per_s"];
            assert!(mbps["min"].as_f64().unwrap() <= mbps["median"].as_f64().unwrap());
            assert_eq!(mbps["count"], 2);
            let test = &doc["tests"][p["test"].as_u64().unwrap() as usize];
            assert_eq!(test["workload"]["block_size"], p["size"]);
        }
        let model = &s["model"];
        assert!(model["bandwidth_mb_s"].as_f64().unwrap() > 0.0, "{model}");
        assert!(
            s["recommendation"]
                .as_str()
                .unwrap()
                .starts_with("use requests of at least")
        );
    }
    // Reads only on a device without --destructive: writes are not in the
    // default, and asking for them skips them with the reason.
    let out = iocurve()
        .args([
            "curve",
            dev.path(),
            "--rw",
            "write",
            "--sizes",
            "4k,64k",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc = json(&out.stdout);
    assert!(
        doc["curve"]["series"][0]["skipped"]
            .as_str()
            .unwrap()
            .contains("--destructive")
    );
}

#[test]
fn unaligned_sizes_are_measured_buffered_in_their_own_section() {
    let dir = tempfile::tempdir().unwrap();
    let doc = ok_json(iocurve().args([
        "curve",
        dir.path().to_str().unwrap(),
        "--span",
        "16M",
        "--rw",
        "write",
        "--sizes",
        "512,768,1280,1636,4k",
        "--time",
        "100ms",
        "--repeat",
        "1",
        "--json",
    ]));
    let s = &doc["curve"]["series"][0];
    let marked = |key: &str| -> Vec<(u64, bool, bool)> {
        s[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["size"].as_u64().unwrap(),
                    p["buffered"].as_bool().unwrap(),
                    p["reference"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    // The O_DIRECT series holds only O_DIRECT points.
    assert_eq!(
        marked("points"),
        vec![(512, false, false), (4096, false, false)]
    );
    // The unaligned section: each size between its aligned neighbours,
    // all through the page cache.
    assert_eq!(
        marked("unaligned"),
        vec![
            (512, true, true),
            (768, true, false),
            (1280, true, false),
            (1636, true, false),
            (4096, true, true)
        ]
    );
    let penalties = s["alignment_penalties"].as_array().unwrap();
    let penalised: Vec<u64> = penalties
        .iter()
        .map(|p| p["size"].as_u64().unwrap())
        .collect();
    assert_eq!(penalised, vec![768, 1280, 1636]);
    for p in penalties {
        assert_eq!(
            (p["lower_neighbour"].as_u64(), p["upper_neighbour"].as_u64()),
            (Some(512), Some(4096))
        );
        assert!(p["slowdown"].as_f64().unwrap() > 0.0);
        // One repetition has no range: no penalty is claimed either way.
        assert_eq!(p["verdict"]["kind"], "single_repetition", "{p}");
    }
    let text = iocurve()
        .args([
            "curve",
            dir.path().to_str().unwrap(),
            "--span",
            "16M",
            "--rw",
            "write",
            "--sizes",
            "512,768,4k",
            "--time",
            "50ms",
            "--repeat",
            "1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("unaligned sizes, through the page cache, beside aligned neighbours measured the same way")
            && !text.contains("768 B †"),
        "{text}"
    );
}

#[test]
fn the_svg_is_xml_with_one_series_per_target_and_pattern() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let svg = a.path().join("chart.svg");
    let (pa, pb) = (a.path().to_str().unwrap(), b.path().to_str().unwrap());
    let out = iocurve()
        .args([
            "curve",
            pa,
            pb,
            "--span",
            "16M",
            "--rw",
            "read,randwrite",
            "--sizes",
            "4k,64k,1M",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--svg",
            svg.to_str().unwrap(),
            "--csv",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the chart is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let labels: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect();
    for target in [pa, pb] {
        for pattern in ["read", "randwrite"] {
            let label = format!("{target} · {pattern} · QD 1");
            assert_eq!(
                labels.iter().filter(|l| **l == label).count(),
                1,
                "legend entry {label}: {labels:?}"
            );
        }
    }
    assert!(
        labels.iter().any(|l| l.contains("MB/s")),
        "axis label with units"
    );
    let polylines = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("polyline")
                && n.attribute("points").is_some_and(|p| !p.trim().is_empty())
        })
        .count();
    assert!(
        polylines >= 4,
        "one line per series at least, found {polylines}"
    );
    // CSV on stdout: a header and 2 targets × 2 patterns × 3 sizes rows.
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.starts_with("target,pattern,size_bytes,"));
    assert_eq!(csv.lines().count(), 1 + 12, "{csv}");
}

#[test]
fn two_devices_with_different_shapes_cross_over() {
    // A: 4 ms fixed cost per request, no bandwidth limit (a seek-bound disk).
    // B: no fixed cost, 10 MB/s (a slow card with a quick controller).
    // Far apart on purpose: the shapes must cross even on a loaded machine.
    let slow_start = match FaultDevice::with_speed(16 * MIB, 4, 0.0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let slow_link = match FaultDevice::with_speed(16 * MIB, 0, 10.0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let (a, b) = (
        slow_start.dev.to_str().unwrap(),
        slow_link.dev.to_str().unwrap(),
    );
    let doc = ok_json(
        iocurve()
            .args([
                "curve",
                a,
                b,
                "--rw",
                "randread",
                "--sizes",
                "4k,16k,512k,2M",
                "--time",
                "150ms",
                "--repeat",
                "1",
                "--json",
            ])
            .timeout(std::time::Duration::from_secs(120)),
    );
    let crossovers = doc["curve"]["crossovers"].as_array().unwrap();
    assert_eq!(crossovers.len(), 1, "{}", doc["curve"]["series"]);
    let x = &crossovers[0];
    assert_eq!(
        x["faster_below"], b,
        "the bandwidth-limited device wins small requests"
    );
    assert_eq!(
        x["faster_above"], a,
        "the fixed-cost device wins large requests"
    );
    let at = x["at_bytes"].as_f64().unwrap();
    assert!((16384.0..=524288.0).contains(&at), "crossing at {at}");
    let text = iocurve()
        .args([
            "curve",
            a,
            b,
            "--rw",
            "randread",
            "--sizes",
            "4k,16k,512k,2M",
            "--time",
            "100ms",
            "--repeat",
            "1",
        ])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("crossover   randread:"));
}

#[test]
fn a_simulated_card_is_swept_with_writes_and_no_preparation() {
    let doc = ok_json(iocurve().args([
        "curve",
        "sim:size=1G,au=4M,open_au=2",
        "--rw",
        "write,randwrite",
        "--sizes",
        "4k,64k,1M",
        "--time",
        "50ms",
        "--repeat",
        "1",
        "--no-save",
        "--json",
    ]));
    let series = doc["curve"]["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    for s in series {
        assert!(s["skipped"].is_null(), "{s}");
        assert_eq!(s["points"].as_array().unwrap().len(), 3);
    }
    // Random 4 KiB writes over a card that keeps two AUs open cost a whole
    // AU copy each: far slower than sequential 4 KiB writes.
    let mbps = |pattern: &str| {
        let s = series.iter().find(|s| s["pattern"] == pattern).unwrap();
        s["points"][0]["mb_per_s"]["median"].as_f64().unwrap()
    };
    assert!(
        mbps("randwrite") * 10.0 < mbps("write"),
        "{} vs {}",
        mbps("randwrite"),
        mbps("write")
    );
}
