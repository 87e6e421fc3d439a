//! The HTML report in a real browser: headless Chromium opens the file from
//! disk, takes a screenshot, and dumps the page as it rendered it. The test
//! checks that no console message was raised, that every chart's SVG holds
//! its series with non-empty shapes, and that the headline numbers in the
//! page are the ones in the run's JSON.

use crate::common;

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

/// Legend texts and the count of non-empty shapes of one chart. The
/// tooltips laid over the marks are transparent (`fill-opacity="0"`) and
/// draw nothing, so they are not counted.
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
        .filter(|n| n.attribute("fill-opacity") != Some("0"))
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
    // The device's history comes first, one chart per test (with both its
    // directions named), then the run's latency chart.
    let charts = charts(&dom);
    let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec!["history", "history", "history", "history", "latency"]
    );
    let history_series = [
        ("SEQ1M Q8T1", ["read", "write"]),
        ("SEQ1M Q1T1", ["read", "write"]),
        ("RND4K Q32T1", ["randread", "randwrite"]),
        ("RND4K Q1T1", ["randread", "randwrite"]),
    ];
    for ((name, svg), (test, directions)) in charts.iter().zip(history_series) {
        let (texts, shapes) = series_of(svg);
        assert_eq!(texts.first(), Some(&test.to_string()), "{name}: {texts:?}");
        for series in directions {
            assert!(
                texts.contains(&series.to_string()),
                "{test} chart lacks series {series}: {texts:?}"
            );
        }
        assert!(shapes >= 3, "{test} chart has {shapes} non-empty shapes");
    }
    let (_, latency) = charts.last().unwrap();
    let (texts, shapes) = series_of(latency);
    let expected = [
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "SEQ1M Q8T1 read",
        "SEQ1M Q8T1 write",
        "RND4K Q1T1 randread",
    ];
    for series in expected {
        assert!(
            texts.contains(&series.to_string()),
            "latency chart lacks series {series}: {texts:?}"
        );
    }
    assert!(shapes >= 5, "latency chart has {shapes} non-empty shapes");
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
    // Each point (2 targets × 2 patterns × 3 sizes) has its figures as a
    // tooltip.
    let tips = roxmltree::Document::parse(svg)
        .unwrap()
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter(|n| n.text().is_some_and(|t| t.contains(" MB/s (")))
        .count();
    assert!(tips >= 12, "{tips} tooltips");
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
    // The sustain chart is drawn from a card on its virtual clock: 32 MiB
    // at 40 then 10 MB/s take about two seconds of the card's time, twenty
    // intervals on any machine (on a real directory a fast machine wrote
    // them within one interval, leaving a chart of one point).
    let sustain = dir.path().join("sustain.html");
    iocurve()
        .args([
            "sustain",
            "sim:size=256M,cache=16M,write=10MB/s,burst=40MB/s,cmd=50us",
            "--bytes",
            "32M",
            "--bs",
            "256k",
            "--interval",
            "100ms",
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

/// Measures the page as laid out, from inside the page: opens every
/// `<details>`, then sends the framing page (see [`framed`]) the viewport's
/// width, the page's scroll width, the right edge of the widest element
/// (and what it is), the same of the elements not inside a scrolling box
/// (a wide table scrolls in its wrapper by design), every verdict badge
/// with where it sits, and the smallest SVG text as rendered (its font size
/// times the chart's scale on screen), which the framing page writes into
/// its DOM for `--dump-dom` to carry out.
const PROBE: &str = r#"<script>
document.querySelectorAll('details').forEach(d => { d.open = true; });
const scrolls = el => {
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
  }
  return false;
};
let right = 0, widest = '', outside = 0, outsideWidest = '';
for (const el of document.body.querySelectorAll('*')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  const name = el.tagName + ' ' + el.className + ' ' + (el.textContent || '').slice(0, 50);
  if (r.right > right) { right = r.right; widest = name; }
  if (r.right > outside && !scrolls(el)) { outside = r.right; outsideWidest = name; }
}
const badges = [...document.querySelectorAll('[data-verdict]')].map(b => {
  const r = b.getBoundingClientRect();
  const at = b.closest('[data-section="summary"]') ? 'summary'
    : b.closest('dl.card') ? 'card'
    : b.closest('table.runs') ? 'runs'
    : b.closest('[data-section="flash"]') ? 'flash' : 'other';
  const style = getComputedStyle(b);
  return { at: at, word: b.textContent, left: r.left, right: r.right, width: r.width,
    line: (b.parentElement.textContent || '').slice(0, 120),
    color: style.color, background: style.backgroundColor };
});
let smallest = 1e9, smallestText = '', texts = 0;
for (const t of document.querySelectorAll('svg text')) {
  const m = t.getScreenCTM();
  if (!m || !t.textContent.trim()) continue;
  const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
  texts++;
  if (px < smallest) { smallest = px; smallestText = t.textContent; }
}
const probe = {
  inner_width: window.innerWidth,
  scroll_width: document.documentElement.scrollWidth,
  right: right, widest: widest,
  right_outside_scroll: outside, widest_outside_scroll: outsideWidest,
  badges: badges,
  pre_in_flash: document.querySelectorAll('[data-section="flash"] pre:not(.commands)').length,
  commands_in_flash: document.querySelectorAll('[data-section="flash"] pre.commands').length,
  smallest_text_px: smallest, smallest_text: smallestText, svg_texts: texts,
  svgs: document.querySelectorAll('svg').length,
  svgs_without_view_box: [...document.querySelectorAll('svg')].filter(s => !s.getAttribute('viewBox')).length,
};
parent.postMessage(encodeURIComponent(JSON.stringify(probe)), '*');
</script>"#;

/// A page showing `page` in a frame `width` px wide. Headless Chromium
/// lays out no window narrower than 500 px, but a frame is as narrow as
/// it is told; what the frame's page sends is written into this page.
fn framed(page: &Path, width: u32, height: u32) -> PathBuf {
    let frame = page.with_extension(format!("frame{width}.html"));
    let name = page.file_name().unwrap().to_str().unwrap();
    std::fs::write(
        &frame,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"{name}\" style=\"border:0;display:block;width:{width}px;height:{height}px\"></iframe><script>window.addEventListener('message', e => {{ const p = document.createElement('pre'); p.setAttribute('data-probe', e.data); document.body.appendChild(p); }});</script></body></html>"
        ),
    )
    .unwrap();
    frame
}

/// `%XX` decoding, enough for what `encodeURIComponent` writes.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The page laid out `width` px wide, measured by [`PROBE`].
fn layout_at(browser: &Path, page: &Path, width: u32) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let probed = page.with_extension(format!("probe{width}.html"));
    std::fs::write(&probed, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let frame = framed(&probed, width, 2000);
    let (dom, stderr) = browse(
        browser,
        &frame,
        &["--dump-dom", "--virtual-time-budget=5000"],
    );
    assert!(console_lines(&stderr).is_empty(), "{stderr}");
    let at = dom
        .find("data-probe=\"")
        .unwrap_or_else(|| panic!("the probe ran: {dom} {stderr}"))
        + 12;
    let end = at + dom[at..].find('"').unwrap();
    serde_json::from_str(&percent_decode(&dom[at..end])).unwrap()
}

/// Screenshots for people to look at, `width` px wide (in a frame, as for
/// [`layout_at`]): kept in `IOCURVE_SCREENSHOTS` when set, and checked to
/// be real pictures either way.
fn screenshot(browser: &Path, page: &Path, width: u32, height: u32) {
    let frame = framed(page, width, height);
    let shot = page.with_extension(format!("{width}.png"));
    let size = format!("--window-size={},{height}", width.max(500));
    let (_, stderr) = browse(
        browser,
        &frame,
        &[
            &size,
            "--hide-scrollbars",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(console_lines(&stderr).is_empty(), "{stderr}");
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot at {width} px of {} bytes",
        png.len()
    );
    if let Some(dir) = std::env::var_os("IOCURVE_SCREENSHOTS") {
        let stem = page.file_stem().unwrap().to_str().unwrap();
        let kept = Path::new(&dir).join(format!("{stem}-{width}.png"));
        std::fs::copy(&shot, &kept).unwrap();
        std::fs::copy(page, Path::new(&dir).join(page.file_name().unwrap())).unwrap();
    }
}

/// Measures two simulated cards with several commands, some repeatedly,
/// into one database; returns the database's path.
fn two_devices(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    let db_s = db.to_str().unwrap();
    let slow = "sim:size=1G,read=25MB/s,write=8MB/s,cmd=300us,page=32k";
    let fast = "sim:size=1G,read=80MB/s,write=40MB/s,cmd=50us,cache=16M";
    let measure = |args: &[&str]| {
        ok(iocurve().args(args).args(["--destructive", "--db", db_s]));
    };
    for _ in 0..3 {
        measure(&["profile", slow, "--repeat", "2", "--time", "100ms"]);
    }
    for _ in 0..2 {
        measure(&["profile", fast, "--repeat", "2", "--time", "100ms"]);
    }
    measure(&[
        "run",
        slow,
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--time",
        "100ms",
    ]);
    measure(&[
        "curve",
        fast,
        "--sizes",
        "4k,64k,1M",
        "--rw",
        "read,write",
        "--time",
        "60ms",
        "--repeat",
        "2",
    ]);
    measure(&["sustain", fast, "--bytes", "64M", "--interval", "20ms"]);
    measure(&["surface", slow]);
    db
}

#[test]
fn a_report_of_two_devices_fits_a_phone_and_names_everything() {
    let Some(browser) = chromium() else {
        return skipped("chromium is not installed (.ci/run installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let db = two_devices(dir.path());
    let page = dir.path().join("report.html");
    ok(iocurve().args([
        "report",
        "--db",
        db.to_str().unwrap(),
        "--last",
        "20",
        "-o",
        page.to_str().unwrap(),
    ]));
    let html = std::fs::read_to_string(&page).unwrap();

    // One card per device, the runs grouped under it.
    assert_eq!(html.matches("<section class=\"device\"").count(), 2);
    assert_eq!(html.matches("<dl class=\"card\">").count(), 2);
    assert_eq!(
        html.matches("<tr data-run=").count(),
        9,
        "one compact row per run"
    );
    let summary = &html[html.find("data-section=\"summary\"").unwrap()..];
    let summary = &summary[..summary.find("</section>").unwrap()];
    assert_eq!(summary.matches("<tr data-device=").count(), 2);
    assert!(summary.contains("SEQ1M Q8T1"), "{summary}");
    assert!(summary.contains("RND4K Q32T1"), "{summary}");

    // History: one chart per test of each device, named by its test.
    let (dom, stderr) = browse(&browser, &page, &["--dump-dom"]);
    assert!(console_lines(&stderr).is_empty(), "{stderr}");
    let all = charts(&dom);
    let history: Vec<&String> = all
        .iter()
        .filter(|(n, _)| n == "history")
        .map(|(_, svg)| svg)
        .collect();
    assert!(history.len() >= 8, "{} history charts", history.len());
    for svg in &history {
        let (texts, shapes) = series_of(svg);
        let directions = texts
            .iter()
            .filter(|t| t.contains("read") || t.contains("write"))
            .count();
        assert!(
            directions >= 1,
            "a history chart names its series: {texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.starts_with("#")),
            "runs named: {texts:?}"
        );
        assert!(shapes >= 2, "{shapes} shapes: a line and the background");
        for t in &texts {
            assert!(!t.contains(".0k") && !t.ends_with(".0"), "tick {t}");
        }
    }
    let titles: Vec<String> = history
        .iter()
        .map(|svg| series_of(svg).0[0].clone())
        .collect();
    for test in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] {
        assert_eq!(
            titles.iter().filter(|t| *t == test).count(),
            2,
            "{test}: one chart per device: {titles:?}"
        );
    }
    // Latency: every row named in full, reads and writes alike.
    let (_, latency) = all.iter().find(|(n, _)| n == "latency").unwrap();
    let (texts, _) = series_of(latency);
    for row in [
        "SEQ1M Q8T1 read",
        "SEQ1M Q8T1 write",
        "RND4K Q1T1 randwrite",
    ] {
        assert!(texts.iter().any(|t| t == row), "{row}: {texts:?}");
    }
    // Its ticks are decades written short, never `100000.0`.
    let decades = ["1", "10", "100", "1k", "10k", "100k", "1M", "10M"];
    let ticks = texts
        .iter()
        .filter(|t| decades.contains(&t.as_str()))
        .count();
    assert!(ticks >= 3, "decade ticks: {texts:?}");
    assert!(texts.iter().all(|t| !t.contains(".0")), "{texts:?}");

    // Laid out in a browser: nothing wider than the window, text readable.
    for width in [1280u32, 400] {
        let probe = layout_at(&browser, &page, width);
        let number = |k: &str| probe[k].as_f64().unwrap_or_else(|| panic!("{k}: {probe}"));
        assert_eq!(number("inner_width"), f64::from(width), "{probe}");
        assert!(number("scroll_width") <= f64::from(width), "{probe}");
        assert!(
            number("right_outside_scroll") <= f64::from(width) + 0.5,
            "{probe}"
        );
        assert!(number("svgs") >= 12.0, "{probe}");
        assert_eq!(number("svgs_without_view_box"), 0.0, "{probe}");
        assert!(number("svg_texts") > 100.0, "{probe}");
        assert!(
            number("smallest_text_px") >= 11.0,
            "SVG text at {width} px: {probe}"
        );
    }
    screenshot(&browser, &page, 1280, 2400);
    screenshot(&browser, &page, 400, 2400);
}

/// A fake card (`flash capacity`), a card that fails its class (`flash
/// class --claim C10` on a card that writes just under 10 MB/s) and a
/// profile of a directory, in one database; returns its path.
fn fake_class_and_profile(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    let db_s = db.to_str().unwrap();
    let target = dir.join("t");
    std::fs::create_dir(&target).unwrap();
    let flash = |args: &[&str]| {
        iocurve()
            .arg("flash")
            .args(args)
            .args(["--destructive", "--seed", "1", "--db", db_s])
            .assert()
            .code(5);
    };
    flash(&["capacity", "sim:size=8G,real=2G"]);
    flash(&[
        "class",
        "sim:size=8G,au=4M,open_au=4,read=20MB/s,write=10MB/s",
        "--claim",
        "C10",
    ]);
    ok(iocurve().args([
        "profile",
        target.to_str().unwrap(),
        "--size",
        "16M",
        "--time",
        "100ms",
        "--repeat",
        "2",
        "--db",
        db_s,
    ]));
    db
}

#[test]
fn a_fake_card_and_a_failed_class_lead_the_report_at_any_width() {
    let Some(browser) = chromium() else {
        return skipped("chromium is not installed (.ci/run installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let db = fake_class_and_profile(dir.path());
    let page = dir.path().join("flash.html");
    ok(iocurve().args([
        "report",
        "--db",
        db.to_str().unwrap(),
        "--last",
        "3",
        "-o",
        page.to_str().unwrap(),
    ]));
    let html = std::fs::read_to_string(&page).unwrap();
    let summary = &html[html.find("data-section=\"summary\"").unwrap()..];
    let summary = &summary[..summary.find("</section>").unwrap()];
    // Only the profiled directory's device has no verdict yet.
    assert_eq!(summary.matches("none yet").count(), 1, "{summary}");
    assert!(
        summary.contains("FAKE</span> claims 8 GiB, really holds 2 GiB"),
        "{summary}"
    );
    assert!(summary.contains("FAIL</span> C10: Pw "), "{summary}");
    assert_eq!(html.matches("<section data-section=\"flash\">").count(), 2);
    assert!(
        !html.contains("see the details"),
        "every run row has its figures"
    );

    for width in [400u32, 1280] {
        let probe = layout_at(&browser, &page, width);
        let number = |k: &str| probe[k].as_f64().unwrap_or_else(|| panic!("{k}: {probe}"));
        assert_eq!(number("inner_width"), f64::from(width), "{probe}");
        assert!(number("scroll_width") <= f64::from(width), "{probe}");
        assert!(
            number("right_outside_scroll") <= f64::from(width) + 0.5,
            "{probe}"
        );
        // Words in the page's type, not preformatted; only the fake card's
        // repair commands are a block to copy.
        assert_eq!(number("pre_in_flash"), 0.0, "{probe}");
        assert_eq!(number("commands_in_flash"), 1.0, "{probe}");
        let badges = probe["badges"].as_array().unwrap();
        for (at, word) in [
            ("summary", "FAKE"),
            ("summary", "FAIL"),
            ("card", "FAKE"),
            ("card", "FAIL"),
            ("runs", "FAKE"),
            ("runs", "FAIL"),
            ("flash", "FAKE"),
            ("flash", "FAIL"),
        ] {
            let seen = badges.iter().find(|b| b["at"] == at && b["word"] == word);
            let b = seen
                .unwrap_or_else(|| panic!("no {word} badge in the {at} at {width} px: {probe}"));
            let (left, right) = (b["left"].as_f64().unwrap(), b["right"].as_f64().unwrap());
            assert!(
                left >= 0.0 && right <= f64::from(width) && right > left,
                "{word} in the {at} laid out within the page at {width} px: {b}"
            );
            // Marked by a filled box as well as by its word.
            assert_ne!(b["background"], "rgba(0, 0, 0, 0)", "{b}");
        }
    }
    screenshot(&browser, &page, 1280, 3000);
    screenshot(&browser, &page, 400, 3000);
}
