//! The HTML report in a real browser: headless Chromium opens the file from
//! disk, takes a screenshot, and dumps the page as it rendered it. The test
//! checks that no console message was raised, that every chart's SVG holds
//! its series with non-empty shapes, and that the headline numbers in the
//! page are the ones in the run's JSON.

mod common;

use common::{iocurve, ok, ok_json, skipped};
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Runs headless Chromium on a local file; returns (stdout, stderr).
fn browse(browser: &Path, page: &Path, extra: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2400",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Console messages Chromium logged (console.* calls, uncaught errors).
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// Each `<figure data-chart="NAME">`'s SVG, parsed as XML.
fn charts(dom: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find("data-chart=\"") {
        rest = &rest[i + 12..];
        let name = rest[..rest.find('"').unwrap()].to_string();
        let start = rest.find("<svg").unwrap();
        let end = rest.find("</svg>").unwrap() + 6;
        out.push((name, rest[start..end].to_string()));
        rest = &rest[end..];
    }
    out
}

/// Legend texts and the count of non-empty shapes of one chart.
fn series_of(svg: &str) -> (Vec<String>, usize) {
    let doc =
        roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("chart SVG is not XML: {e}"));
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect();
    let shapes = doc
        .descendants()
        .filter(|n| {
            (n.has_tag_name("polyline")
                && n.attribute("points")
                    .is_some_and(|p| p.split_whitespace().count() >= 2))
                || (n.has_tag_name("path") && n.attribute("d").is_some_and(|d| d.len() > 3))
                || (n.has_tag_name("rect")
                    && n.attribute("height")
                        .and_then(|h| h.parse::<f64>().ok())
                        .is_some_and(|h| h > 0.0))
        })
        .count();
    (texts, shapes)
}

/// The text of `data-figure="KEY"`'s cell, without its range.
fn figure_in_page<'a>(dom: &'a str, key: &str) -> Option<&'a str> {
    let needle = format!("data-figure=\"{key}\">");
    let at = dom.find(&needle)? + needle.len();
    let end = dom[at..].find(['<', ' '])?;
    Some(&dom[at..at + end])
}

#[test]
fn a_profile_report_renders_in_chromium_with_its_numbers_and_charts() {
    let Some(browser) = chromium() else {
        return skipped("chromium is not installed (.ci/run installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let page = dir.path().join("report.html");
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let (db_s, page_s, target_s) = (
        db.to_str().unwrap(),
        page.to_str().unwrap(),
        target.to_str().unwrap(),
    );
    // Two runs, so the device has a history.
    iocurve()
        .args([
            "profile", target_s, "--size", "16M", "--time", "100ms", "--repeat", "2", "--db", db_s,
        ])
        .assert()
        .success();
    let run = ok_json(iocurve().args([
        "profile", target_s, "--size", "16M", "--time", "100ms", "--repeat", "2", "--db", db_s,
        "--report", page_s, "--json",
    ]));

    let shot = dir.path().join("shot.png");
    let (_, stderr) = browse(
        &browser,
        &page,
        &[&format!("--screenshot={}", shot.display())],
    );
    assert!(
        console_lines(&stderr).is_empty(),
        "console messages: {:?}",
        console_lines(&stderr)
    );
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "screenshot of {} bytes",
        png.len()
    );

    let (dom, stderr) = browse(&browser, &page, &["--dump-dom"]);
    assert!(console_lines(&stderr).is_empty(), "{stderr}");
    for t in run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["skipped"].is_null())
    {
        let dir = if t["workload"]["rw"].as_str().unwrap().ends_with("read") {
            "read"
        } else {
            "write"
        };
        let key = format!("{} {dir}", t["name"].as_str().unwrap());
        let expected = iocurve::units::format_mbps(t["mb_per_s"]["median"].as_f64().unwrap());
        assert_eq!(figure_in_page(&dom, &key), Some(expected.as_str()), "{key}");
    }
    let charts = charts(&dom);
    let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["latency", "history"]);
    for (name, svg) in &charts {
        let (texts, shapes) = series_of(svg);
        let expected: Vec<String> = match name.as_str() {
            "latency" => ["p50", "p90", "p99", "p99.9", "max"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            _ => ["SEQ1M Q8T1 read", "SEQ1M Q8T1 write", "RND4K Q1T1 randread"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        for series in expected {
            assert!(
                texts.contains(&series),
                "{name} chart lacks series {series}: {texts:?}"
            );
        }
        assert!(shapes >= 5, "{name} chart has {shapes} non-empty shapes");
    }
    assert!(dom.contains("units: MB/s = 10^6 bytes/s"));
}

#[test]
fn a_curve_report_overlays_its_series() {
    let Some(browser) = chromium() else {
        return skipped("chromium is not installed (.ci/run installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("curve.html");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let db = dir.path().join("r.db");
    ok(iocurve()
        .args([
            "curve",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--span",
            "16M",
            "--rw",
            "read,randwrite",
            "--sizes",
            "4k,64k,1M",
            "--time",
            "60ms",
            "--repeat",
            "1",
        ])
        .args([
            "--db",
            db.to_str().unwrap(),
            "--report",
            page.to_str().unwrap(),
        ]));
    let (dom, stderr) = browse(&browser, &page, &["--dump-dom"]);
    assert!(console_lines(&stderr).is_empty(), "{stderr}");
    let charts = charts(&dom);
    let (_, svg) = charts
        .iter()
        .find(|(n, _)| n == "curve")
        .expect("a curve chart");
    let (texts, shapes) = series_of(svg);
    for target in [&a, &b] {
        for pattern in ["read", "randwrite"] {
            let label = format!("{} · {pattern} · QD 1", target.display());
            assert!(texts.contains(&label), "missing series {label}: {texts:?}");
        }
    }
    assert!(
        texts.iter().any(|t| t.starts_with("model: t0")),
        "model lines in the legend"
    );
    assert!(shapes >= 8, "{shapes} shapes");
}

#[test]
fn the_console_check_does_catch_errors() {
    // The detector itself: a page that logs and throws must be caught.
    let Some(browser) = chromium() else {
        return skipped("chromium is not installed (.ci/run installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(&page, "<!DOCTYPE html><html><body><script>console.error('planted'); throw new Error('planted too');</script></body></html>").unwrap();
    let (_, stderr) = browse(&browser, &page, &["--dump-dom"]);
    let lines = console_lines(&stderr);
    assert!(lines.iter().any(|l| l.contains("planted")), "{stderr}");
    assert!(
        lines.iter().any(|l| l.contains("Uncaught Error")),
        "{stderr}"
    );
}

#[test]
fn application_workloads_get_their_sections() {
    let Some(browser) = chromium() else {
        return skipped("chromium is not installed (.ci/run installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (db_s, d) = (db.to_str().unwrap(), dir.path().to_str().unwrap());
    let load = dir.path().join("load.html");
    iocurve()
        .args([
            "files",
            "load",
            d,
            "--sizes",
            "4k,64k,1M",
            "--count",
            "4",
            "--db",
            db_s,
            "--report",
            load.to_str().unwrap(),
        ])
        .assert()
        .success();
    let sustain = dir.path().join("sustain.html");
    iocurve()
        .args([
            "sustain",
            d,
            "--bytes",
            "32M",
            "--interval",
            "20ms",
            "--db",
            db_s,
            "--report",
            sustain.to_str().unwrap(),
        ])
        .assert()
        .success();
    for (page, chart, series) in [
        (&load, "files-load", "time per file"),
        (&sustain, "sustain", "write speed"),
    ] {
        let (dom, stderr) = browse(&browser, page, &["--dump-dom"]);
        assert!(console_lines(&stderr).is_empty(), "{stderr}");
        let charts = charts(&dom);
        let (_, svg) = charts
            .iter()
            .find(|(n, _)| n == chart)
            .unwrap_or_else(|| panic!("no {chart} chart"));
        let (texts, shapes) = series_of(svg);
        assert!(texts.contains(&series.to_string()), "{chart}: {texts:?}");
        assert!(shapes >= 2, "{chart}: {shapes} shapes");
    }
}
