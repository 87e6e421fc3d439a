//! Unaligned transfer sizes (issue 14, point 4): on a file system that
//! supports O_DIRECT, sizes O_DIRECT cannot transfer are measured through
//! the page cache in a section of their own, each between its aligned
//! neighbours measured the same way, and a penalty is claimed only when the
//! repetitions' ranges do not overlap the interpolation between the
//! neighbours. Checked on an ext4 image on a loop device, and on ext4 over
//! the FUSE test device (every request delayed) where a write straddling
//! two file system blocks must read both first.

use crate::common;

use common::faultdev::FaultDevice;
use common::{LoopDevice, MIB, iocurve, marked_points, ok, ok_json, skipped};
use serde_json::Value;
use std::path::Path;

const HEADING: &str = "unaligned sizes beside aligned ones, all through the page cache";

/// (fastest, median, slowest) time per request of a point, ns, from the
/// IOPS of its repetitions.
fn times(point: &Value) -> (f64, f64, f64) {
    let iops = &point["iops"];
    let t = |k: &str| 1e9 / iops[k].as_f64().unwrap();
    (t("max"), t("median"), t("min"))
}

/// The verdict the range rule gives, computed here from the section's
/// points: the interpolation between the neighbours end by end, against
/// the unaligned size's range.
fn expected_verdict(section: &[Value], size: u64, lower: u64, upper: u64) -> &'static str {
    let at = |s: u64| {
        section
            .iter()
            .find(|p| p["size"].as_u64() == Some(s))
            .unwrap_or_else(|| panic!("{s} in the section"))
    };
    let (m, lo, hi) = (times(at(size)), times(at(lower)), times(at(upper)));
    let share = (size - lower) as f64 / (upper - lower) as f64;
    let e_min = lo.0 + share * (hi.0 - lo.0);
    let e_max = lo.2 + share * (hi.2 - lo.2);
    if m.0 > e_max * (1.0 + 1e-9) {
        "slower"
    } else if m.2 < e_min * (1.0 - 1e-9) {
        "faster"
    } else {
        "no_penalty_seen"
    }
}

/// Runs a sweep with its text on stdout, saved in `db`, with extra
/// options; returns the text and the stored run's JSON.
/// How the reports word a verdict of the JSON.
fn phrase(verdict: &str) -> &'static str {
    match verdict {
        "no_penalty_seen" => "no penalty seen (the ranges overlap)",
        "slower" => "slower than its aligned neighbours imply",
        "faster" => "faster than its aligned neighbours imply",
        _ => "not judged",
    }
}

fn curve(dir: &Path, sizes: &str, pattern: &str, db: &Path, extra: &[&str]) -> (String, Value) {
    let out = ok(iocurve()
        .args(["curve", dir.to_str().unwrap(), "--span", "16M", "--rw"])
        .args([
            pattern, "--sizes", sizes, "--time", "150ms", "--repeat", "3",
        ])
        .args(["--db", db.to_str().unwrap()])
        .args(extra));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc = ok_json(iocurve().args(["export", "--format", "json", "--db", db.to_str().unwrap()]));
    (text, doc)
}

/// The lines of the unaligned section of a text report, heading excluded.
fn section_lines(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.contains(HEADING))
        .skip(1)
        .take_while(|l| !l.starts_with("units:") && !l.starts_with("=="))
        .collect()
}

#[test]
fn unaligned_sizes_sit_between_their_neighbours_apart_from_the_direct_series() {
    let mut dev = match LoopDevice::new(64 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mnt = match dev.mkfs_and_mount() {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    let work = tempfile::tempdir().unwrap();
    let (svg, page) = (work.path().join("c.svg"), work.path().join("c.html"));
    let db = work.path().join("r.db");
    let (text, doc) = curve(
        &mnt,
        "512,768,1024,1536,2048,4k",
        "write",
        &db,
        &[
            "--svg",
            svg.to_str().unwrap(),
            "--report",
            page.to_str().unwrap(),
        ],
    );
    let s = &doc["curve"]["series"][0];
    // ext4 on a loop device takes O_DIRECT in 512-byte blocks: the series
    // holds the aligned sizes, all O_DIRECT, and nothing else.
    assert_eq!(s["logical_block_size"], 512);
    assert_eq!(
        marked_points(s, "points"),
        [512, 1024, 1536, 2048, 4096].map(|n| (n, false, false))
    );
    // 768 B in its own section, between 512 B and 1 KiB measured the same
    // way (through the page cache).
    assert_eq!(
        marked_points(s, "unaligned"),
        vec![(512, true, true), (768, true, false), (1024, true, true)]
    );
    let section = s["unaligned"].as_array().unwrap();
    let penalties = s["alignment_penalties"].as_array().unwrap();
    assert_eq!(penalties.len(), 1, "{penalties:?}");
    let p = &penalties[0];
    assert_eq!(
        (
            p["size"].as_u64(),
            p["lower_neighbour"].as_u64(),
            p["upper_neighbour"].as_u64()
        ),
        (Some(768), Some(512), Some(1024))
    );
    let verdict = p["verdict"]["kind"].as_str().unwrap();
    assert_eq!(verdict, expected_verdict(section, 768, 512, 1024), "{p}");
    for range in ["measured_range", "expected_range"] {
        let r = &p[range];
        assert!(
            r["min"].as_f64() <= r["median"].as_f64() && r["median"].as_f64() <= r["max"].as_f64(),
            "{range}: {r}"
        );
    }

    // The text: the O_DIRECT table before the section, 768 B only inside
    // the section, between its neighbours.
    let (before, _) = text.split_once(HEADING).expect("the unaligned section");
    // The header's plan line lists the sizes asked for; the tables follow
    // the blank line after it.
    let (_, before) = before
        .split_once("\n\n")
        .expect("the header, then the tables");
    assert!(
        !before.contains("768 B"),
        "768 B outside its section: {text}"
    );
    let lines = section_lines(&text);
    let row = |needle: &str| {
        lines
            .iter()
            .position(|l| l.trim_start().starts_with(needle))
            .unwrap_or_else(|| panic!("{needle} in the section: {lines:#?}"))
    };
    let (lo, mid, hi) = (row("512 B"), row("768 B"), row("1 KiB"));
    assert!(lo < mid && mid < hi, "{lines:#?}");
    assert!(lines[mid].contains("unaligned") && lines[lo].contains("aligned"));
    let said = phrase(verdict);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("alignment   768 B: ") && l.contains(said)),
        "{lines:#?}"
    );

    // The SVG: the O_DIRECT series and the page cache series are apart,
    // the second in a panel of its own.
    let svg = std::fs::read_to_string(&svg).unwrap();
    let labels = svg_texts(&svg);
    let direct = format!("{} · write · QD 1", mnt.display());
    let cached = format!("{direct} · through the page cache");
    assert_eq!(
        labels.iter().filter(|l| **l == direct).count(),
        1,
        "{labels:?}"
    );
    assert_eq!(
        labels.iter().filter(|l| **l == cached).count(),
        1,
        "{labels:?}"
    );
    assert!(
        labels
            .iter()
            .any(|l| l.starts_with("Unaligned sizes through the page cache")),
        "{labels:?}"
    );
    html_shows_the_section(&page, verdict);
}

/// Headless Chromium renders the report: the unaligned section with its
/// rows in order and the verdict, and the chart's page cache panel.
fn html_shows_the_section(page: &Path, verdict: &str) {
    let Some(browser) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
    else {
        return skipped("chromium is not installed (.ci/run installs it)");
    };
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", &format!("file://{}", page.display())])
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let at = dom
        .find("data-section=\"unaligned\"")
        .unwrap_or_else(|| panic!("no unaligned section in the page: {dom}"));
    let section = &dom[at..at + dom[at..].find("</section>").expect("section closed")];
    assert!(
        section.contains("Unaligned sizes beside aligned ones, all through the page cache"),
        "{section}"
    );
    let kinds: Vec<&str> = section
        .split("<tr data-kind=\"")
        .skip(1)
        .map(|r| &r[..r.find('"').unwrap()])
        .collect();
    assert_eq!(kinds, ["aligned", "unaligned", "aligned"], "{section}");
    let rows: Vec<usize> = ["512 B", "768 B", "1 KiB"]
        .iter()
        .map(|size| {
            section
                .find(&format!("<td>{size}</td>"))
                .unwrap_or(usize::MAX)
        })
        .collect();
    assert!(
        rows[0] < rows[1] && rows[1] < rows[2] && rows[2] != usize::MAX,
        "{section}"
    );
    let item = section
        .split("<li data-size=\"768\">")
        .nth(1)
        .map(|rest| &rest[..rest.find("</li>").unwrap_or(rest.len())])
        .unwrap_or_else(|| panic!("no verdict for 768 B: {section}"));
    assert!(
        item.starts_with("768 B: ") && item.contains(phrase(verdict)),
        "{item}"
    );
    assert!(
        dom.contains("Unaligned sizes through the page cache, beside aligned neighbours"),
        "the chart's panel"
    );
}

fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the chart is well-formed XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect()
}

/// An ext4 file system on a device, unmounted on drop (before the device).
struct Mounted(tempfile::TempDir);

impl Mounted {
    fn on(dev: &Path) -> Result<Mounted, String> {
        let dev = dev.to_str().expect("device paths are UTF-8");
        common::sh("mkfs.ext4", &["-q", "-F", dev])?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        common::sh("mount", &[dev, dir.path().to_str().unwrap()])?;
        Ok(Mounted(dir))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = common::sh("umount", &[self.0.path().to_str().unwrap()]);
    }
}

#[test]
fn through_the_kernel_a_write_straddling_two_blocks_is_judged_by_its_ranges() {
    // Every request to the device waits 2 ms (a parameter the simulator
    // tests do not use). Random 4100-byte writes each cover parts of two
    // 4 KiB ext4 blocks, which the page cache must read before it can
    // write them back, where 4 KiB and 8 KiB writes cover whole blocks.
    let dev = match FaultDevice::with_speed(64 * MIB, 2, 0.0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mnt = match Mounted::on(&dev.dev) {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("r.db");
    let (text, doc) = curve(mnt.0.path(), "4k,4100,8k", "randwrite", &db, &[]);
    let s = &doc["curve"]["series"][0];
    assert_eq!(
        marked_points(s, "points"),
        vec![(4096, false, false), (8192, false, false)]
    );
    assert_eq!(
        marked_points(s, "unaligned"),
        vec![(4096, true, true), (4100, true, false), (8192, true, true)]
    );
    let p = &s["alignment_penalties"][0];
    let verdict = p["verdict"]["kind"].as_str().unwrap();
    let section = s["unaligned"].as_array().unwrap();
    assert_eq!(verdict, expected_verdict(section, 4100, 4096, 8192), "{p}");
    let lines = section_lines(&text);
    let row = lines
        .iter()
        .position(|l| l.trim_start().starts_with("4100 B"));
    let neighbours = (
        lines
            .iter()
            .position(|l| l.trim_start().starts_with("4 KiB")),
        lines
            .iter()
            .position(|l| l.trim_start().starts_with("8 KiB")),
    );
    assert!(
        matches!((neighbours.0, row, neighbours.1), (Some(a), Some(b), Some(c)) if a < b && b < c),
        "{lines:#?}"
    );
    let said = lines
        .iter()
        .find(|l| l.starts_with("alignment   4100 B:"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(said.contains(phrase(verdict)), "{verdict}: {said}");
    // Reading two blocks before writing them back never makes a write
    // faster than writing whole blocks.
    assert_ne!(verdict, "faster", "{said}");
}
