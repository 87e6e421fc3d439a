//! A run on many hosts, stored and read back by the commands that read the
//! database: `history`, `list`, `export`, `report` and `compare` each say
//! what the ranks add. The run is `tests/fixtures/mpi-result.json` (4 ranks
//! on 2 hosts, rank 3 a straggler; see `testdata::mpi_result`), saved
//! through the library as rank 0 saves it, since measuring on many hosts
//! needs `mpirun`, which these tests do not.

use crate::common;

use common::{iocurve, ok, text};
use iocurve::result::RunResult;
use iocurve::store::Store;
use std::path::{Path, PathBuf};

fn fixture() -> RunResult {
    let doc = std::fs::read_to_string("tests/fixtures/mpi-result.json").expect("the fixture");
    RunResult::from_json(&doc).expect("an iocurve result")
}

/// A fresh database holding the fixture as run 1 and, as run 2, the same
/// job on its first two ranks (one host).
fn database(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    let mut store = Store::open(&db).expect("a fresh database");
    let whole = fixture();
    assert_eq!(store.save(&whole, "iocurve").unwrap(), 1);
    let mut half = whole.clone();
    let m = half.mpi.as_mut().unwrap();
    m.ranks.truncate(2);
    m.size = 2;
    half.started_at = "2024-03-02T10:00:00Z".into();
    assert_eq!(store.save(&half, "iocurve").unwrap(), 2);
    db
}

fn stdout(db: &Path, args: &[&str]) -> String {
    text(&ok(iocurve().args(["--no-save", "--db"]).arg(db).args(args)).stdout)
}

#[test]
fn history_and_list_say_ranks_and_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let history = stdout(&db, &["history"]);
    // A run's line and the lines its figures wrapped onto, as one line.
    let line = |id: &str| {
        let mut lines = history
            .lines()
            .skip_while(|l| !l.starts_with(&format!("  run    {id}")));
        let first = lines
            .next()
            .unwrap_or_else(|| panic!("no run {id}: {history}"));
        let more =
            lines.take_while(|l| l.starts_with("    ") && !l.trim_start().starts_with("run "));
        std::iter::once(first)
            .chain(more)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        line("1").contains("profile  /scratch/{host} · 4 ranks / 2 hosts"),
        "{history}"
    );
    assert!(line("1").contains("SEQ 1MiB Q8 read 416"), "{history}");
    assert!(line("2").contains("2 ranks / 1 host"), "{history}");
    let list = stdout(&db, &["list"]);
    let words = list.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("4 ranks / 2 hosts, /scratch/{host} · device 1"),
        "{list}"
    );
    let listed: serde_json::Value =
        serde_json::from_str(&stdout(&db, &["list", "--json"])).unwrap();
    assert_eq!(listed["runs"][0]["ranks"]["ranks"], 4);
    assert_eq!(listed["runs"][0]["ranks"]["hosts"], 2);
    // The library reads the ranks back as saved.
    let store = Store::open_to_read(&db).unwrap();
    assert_eq!(store.rank_rows(1).unwrap(), fixture().mpi.unwrap().ranks);
}

#[test]
fn export_gives_each_rank_its_rows_and_the_json_its_section() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let csv = stdout(&db, &["export", "1", "--format", "csv"]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let rank = rows[0].len() - 2;
    assert_eq!(&rows[0][rank..], ["rank", "host"], "{csv}");
    let ranked: Vec<&Vec<&str>> = rows[1..].iter().filter(|r| !r[rank].is_empty()).collect();
    assert_eq!(ranked.len(), 2 * 4, "{csv}");
    // Rank 3 on node-b read at 65.5 MB/s (10 MiB in 160 ms).
    let straggler = ranked
        .iter()
        .find(|r| r[5] == "read" && r[rank] == "3")
        .unwrap();
    assert_eq!(
        (straggler[10], straggler[rank + 1]),
        ("65.536", "node-b"),
        "{csv}"
    );
    let md = stdout(&db, &["export", "1", "--format", "markdown"]);
    assert!(md.contains("| 3 | node-b | 48.2 |"), "{md}");
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&db, &["export", "1", "--json"])).unwrap();
    assert_eq!(doc["mpi"]["size"], 4);
    let bytes: u64 = doc["mpi"]["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["bytes"].as_u64().unwrap())
        .sum();
    let merged: u64 = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["repetitions"][0]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(bytes, merged, "the ranks' bytes add up to the tests'");
}

#[test]
fn the_report_charts_the_ranks_and_names_the_straggler() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let page = dir.path().join("report.html");
    ok(iocurve()
        .args(["--no-save", "--db"])
        .arg(&db)
        .args(["report", "1", "-o"])
        .arg(&page));
    let html = std::fs::read_to_string(&page).unwrap();
    let start = html
        .find("<section data-section=\"ranks\">")
        .expect("a ranks section");
    let end = start + html[start..].find("</section>").unwrap() + "</section>".len();
    let section = roxmltree::Document::parse(&html[start..end]).expect("well-formed");
    let svg = section
        .descendants()
        .find(|n| n.has_tag_name("svg"))
        .expect("the chart");
    let bars = svg
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter(|n| {
            n.children().any(|t| {
                t.has_tag_name("title") && t.text().is_some_and(|x| x.contains(" · rank "))
            })
        })
        .count();
    assert_eq!(bars, 4);
    assert!(
        html.contains("Straggler: rank 3 on node-b (48.2 MB/s, 64% of the median)."),
        "{}",
        &html[start..end]
    );
}

#[test]
fn compare_says_when_the_runs_were_spread_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let compared = stdout(&db, &["compare", "1", "2"]);
    // The caveat as one line, however the terminal width wrapped it.
    let words = compared.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "caveat: the runs were spread over hosts differently (run 1: 4 ranks on 2 hosts, run 2: 2 ranks on 1 host)"
        ),
        "{compared}"
    );
    assert!(words.contains("merged: 4 ranks on 2 hosts"), "{compared}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&db, &["compare", "1", "2", "--json"])).unwrap();
    assert_eq!(json["caveats"].as_array().unwrap().len(), 1, "{json}");
    // The same run twice: no caveat.
    let same = stdout(&db, &["compare", "1", "1"]);
    assert!(!same.contains("caveat"), "{same}");
}
