//! Names from outside reach the terminal escaped and cut: an imported fio
//! file whose job name retitles the window (`ESC]0;…BEL`), clears the
//! screen (`ESC[2J`), draws over its line (CR) or turns it around
//! (U+202E), or runs to 4 MiB, and whose target path does the same, is
//! shown by `history`, `list`, `compare` and the Markdown and CSV exports
//! without one raw control character and without a line wider than a cut
//! name beside a table's width; the JSON export keeps the name whole.

use crate::common;

use common::{iocurve, ok, text};
use std::path::Path;

const FIO_FIXTURE: &str = "tests/fixtures/fio-3.33-seqread-randwrite.json";

/// The widest a name is shown (`units::escape::NAME_COLUMNS`) and the
/// widest line of a text output (`report::table::WIDTH`).
const NAME_COLUMNS: usize = 200;
const WIDTH: usize = 100;

/// Every way a name tries to command a terminal.
const HOSTILE: &str =
    "seq\u{1b}]0;owned\u{7}\u{1b}[2J\rread\u{202e}daer\u{85}\u{9b}31m\u{2066}x\u{7f}";

/// The 4 MiB job name.
fn huge_name() -> String {
    format!("randwrite{}", "w".repeat(4 << 20))
}

/// The fixture with its first job named [`HOSTILE`], its second
/// [`huge_name`], and both measuring a hostile path.
fn hostile_fio(dir: &Path) -> std::path::PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIO_FIXTURE).unwrap()).unwrap();
    let path = "/nowhere/\u{1b}[2J\u{1b}]0;path\u{7}\rdata\u{202e}.bin";
    let names = [HOSTILE.to_string(), huge_name()];
    for (job, name) in doc["jobs"].as_array_mut().unwrap().iter_mut().zip(names) {
        job["jobname"] = name.clone().into();
        job["job options"]["name"] = name.into();
        job["job options"]["filename"] = path.into();
    }
    let file = dir.join("hostile.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    file
}

/// The characters a terminal obeys, found in `out`: C0 but line breaks and
/// tabs, DEL, C1, and the bidirectional overrides and isolates.
fn raw_controls(out: &str) -> Vec<char> {
    out.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

fn stdout_of(db: &Path, args: &[&str]) -> String {
    text(&ok(iocurve().arg("--db").arg(db).args(args)).stdout)
}

#[test]
fn hostile_names_reach_the_terminal_escaped_and_cut() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let fio = hostile_fio(dir.path());
    for _ in 0..2 {
        let out = ok(iocurve().args(["import"]).arg(&fio).arg("--db").arg(&db));
        assert!(raw_controls(&text(&out.stdout)).is_empty());
    }
    let outputs = [
        (vec!["history"], NAME_COLUMNS + WIDTH),
        (vec!["list"], NAME_COLUMNS + WIDTH),
        (vec!["compare", "1", "2"], NAME_COLUMNS + WIDTH),
        // Markdown spells an escaped character as an entity, and a row
        // holds a cut name beside its figures.
        (
            vec!["export", "1", "--format", "markdown"],
            2 * NAME_COLUMNS + WIDTH,
        ),
        // A CSV row holds several text cells, each cut.
        (
            vec!["export", "1", "--format", "csv"],
            8 * (NAME_COLUMNS + 3) + WIDTH,
        ),
    ];
    for (args, widest) in outputs {
        let out = stdout_of(&db, &args);
        assert!(out.len() < 64 << 10, "{args:?}: {} bytes", out.len());
        let raw = raw_controls(&out);
        assert!(raw.is_empty(), "{args:?} printed {raw:?}:\n{out}");
        let width = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(
            width <= widest,
            "{args:?}: a line of {width} columns:\n{out}"
        );
        // The job names are there, escaped and cut, not dropped (`list`
        // and `compare` name runs and devices, not jobs).
        if ["history", "export"].contains(&args[0]) {
            let escaped = out.contains("seq\\e]0;owned") || out.contains("seq&#92;e&#93;0;owned");
            assert!(escaped, "{args:?}:\n{out}");
            let cut = out.contains("randwriteww") && out.contains('…');
            assert!(cut, "{args:?}:\n{out}");
        }
    }
    // JSON escapes control characters itself and keeps every name whole.
    let json = stdout_of(&db, &["export", "1", "--format", "json"]);
    assert!(raw_controls(&json).is_empty());
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [HOSTILE.to_string(), huge_name()]);
}

#[test]
fn a_hostile_path_in_an_error_is_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir
        .path()
        .join("no\u{1b}[2J\rdir\u{202e}")
        .join("results.db");
    let out = iocurve()
        .arg("--db")
        .arg(&missing)
        .arg("history")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.starts_with("Error: "), "{err}");
    assert!(raw_controls(&err).is_empty(), "{err:?}");
}
