//! Runs side by side, in the style people post in forums, and what changed
//! between them, test by test, as text, Markdown or JSON.
//!
//! The table has one row per run: read and write MB/s of one kind of test,
//! the device's identity, notes. Which test is named above the table (the
//! first test of the first run, or `--test`), and every other run shows the
//! figures of its test *of the same kind* (see
//! [`matching`](crate::analysis::compare::matching): pattern, size, queue
//! depth, threads, mode, engine, method, company), or `-` when it has none:
//! a profile's `SEQ1M Q8T1` is never set beside a 4 KiB QD32 `run`. Every
//! figure is the median of the repetitions; one whose repetitions spread by
//! more than 10% carries its range too (`15 (12–17)`, see
//! [`cells`](super::cells)), so the table never claims more precision than
//! the device gave.
//!
//! Below the table come the verdicts [`crate::analysis::compare`] reached,
//! every later run against the first, and the tests it set apart with the
//! reason. Runs of different devices are compared too (a new card against
//! an old one is a fair question), and the heading says that the verdicts
//! are differences between devices, not changes of one.

mod verdicts;

pub use verdicts::{regression_line, verdict_text};

use super::cells::{RANGE_SPREAD, figure_text, identity_text};
use super::table::{self, Align, Table};
use crate::analysis::compare::matching;
use crate::analysis::compare::{compare, repetitions};
use crate::result::compare::{Direction, Entry, TestKey};
use crate::result::{RunResult, TestResult};
use crate::units::format_mbps;

/// How to lay the table out.
#[derive(Debug, Clone)]
pub struct Options {
    /// The name of the first run's test the table shows.
    pub test: Option<String>,
    /// Noise threshold as a share (0.05).
    pub threshold: f64,
    pub markdown: bool,
    /// The device's earlier runs, none of those compared: their spread
    /// sets the run-to-run noise of the verdicts (empty: a floor).
    pub history: Vec<RunResult>,
}

/// The kind of test the table shows: the first run's test named `name`
/// (any direction), else its first test.
fn table_key(entries: &[Entry], name: Option<&str>) -> Result<TestKey, String> {
    let first = entries.first().ok_or("no runs to compare")?;
    let tests = matching::tests_of(&first.result)
        .map_err(|why| format!("{} has nothing to compare: {}", first.source, why.text()))?;
    let chosen = match name {
        Some(n) => tests.iter().find(|k| k.test.name == n).ok_or_else(|| {
            let names: Vec<&str> = tests.iter().map(|k| k.test.name.as_str()).collect();
            format!(
                "{} has no test named {n:?} (its tests: {})",
                first.source,
                names.join(", ")
            )
        })?,
        None => &tests[0],
    };
    Ok(chosen.key.clone())
}

/// `key` turned to `direction`, when it is a read or a write.
fn with_direction(key: &TestKey, direction: Direction) -> Option<TestKey> {
    if matches!(key.direction, Direction::Mixed { .. }) {
        return None;
    }
    Some(TestKey {
        direction,
        ..key.clone()
    })
}

/// The test of `r` whose key is `key`, else one that differs from it in
/// engine alone (an imported fio job beside an iocurve run; the row's
/// notes name its engine).
fn find<'a>(r: &'a RunResult, key: Option<&TestKey>) -> Option<&'a TestResult> {
    let key = key?;
    let tests = matching::tests_of(r).ok()?;
    tests
        .iter()
        .find(|k| &k.key == key)
        .or_else(|| {
            tests
                .iter()
                .find(|k| matching::alike_but_engine(&k.key, key))
        })
        .map(|k| k.test)
}

/// "engine fio:io_uring" when `r` ran the table's kind of test with
/// another engine than the table's heading names.
fn other_engine(r: &RunResult, key: &TestKey) -> Option<String> {
    let tests = matching::tests_of(r).ok()?;
    if tests.iter().any(|k| &k.key == key) {
        return None;
    }
    let mut alike = [Direction::Read, Direction::Write]
        .into_iter()
        .filter_map(|d| with_direction(key, d))
        .chain(std::iter::once(key.clone()));
    alike.find_map(|want| {
        tests
            .iter()
            .find(|k| matching::alike_but_engine(&k.key, &want))
            .map(|k| format!("engine {}", k.key.engine))
    })
}

/// The read and the write test of `r` like `key` (a mixed test stands in
/// the read column: it is the one figure the run has of that kind).
fn read_write<'a>(
    r: &'a RunResult,
    key: &TestKey,
) -> (Option<&'a TestResult>, Option<&'a TestResult>) {
    if matches!(key.direction, Direction::Mixed { .. }) {
        return (find(r, Some(key)), None);
    }
    (
        find(r, with_direction(key, Direction::Read).as_ref()),
        find(r, with_direction(key, Direction::Write).as_ref()),
    )
}

/// The table's heading: which kind of test its figures are, naming only
/// the directions some run has (a read-only pair is not "read/write").
fn table_heading(key: &TestKey, entries: &[Entry]) -> String {
    let has = |d: Direction| {
        entries
            .iter()
            .any(|e| find(&e.result, with_direction(key, d).as_ref()).is_some())
    };
    let shown = match key.direction {
        Direction::Mixed { .. } => matching::describe(key),
        _ => {
            let (read, write) = (has(Direction::Read), has(Direction::Write));
            let one = |d: Direction| {
                matching::describe(&TestKey {
                    direction: d,
                    ..key.clone()
                })
            };
            match (read, write) {
                (true, false) => one(Direction::Read),
                (false, true) => one(Direction::Write),
                _ => one(Direction::Read)
                    .replacen(" read ", " read/write ", 1)
                    .replacen(" randread ", " randread/randwrite ", 1),
            }
        }
    };
    format!(
        "test: {}, engine {}\n",
        table::cut(&shown, table::NAME_COLUMNS),
        table::cut(&key.engine.to_string(), table::NAME_COLUMNS)
    )
}

/// Remarks a reader must see beside the figures.
fn notes(r: &RunResult, read: Option<&TestResult>) -> String {
    let mut notes = Vec::new();
    if matches!(r.payload, crate::result::Payload::Imported { .. }) {
        notes.push("fio import".to_string());
    }
    if r.interrupted {
        notes.push("interrupted".into());
    }
    if r.error.is_some() {
        notes.push("ended by an I/O error".into());
    }
    let link = r
        .device_identity
        .as_ref()
        .and_then(|i| i.device.interface.as_ref());
    if let (Some(l), Some(t)) = (link, read) {
        let cap = l.practical_limit_mb_s;
        if let (Some(cap), Some(s)) = (cap, t.mb_per_s) {
            if s.median >= 0.9 * cap {
                notes.push(format!(
                    "at the {} ceiling (~{} MB/s)",
                    l.description,
                    format_mbps(cap)
                ));
            }
        }
    }
    let cached = r.tests.iter().flat_map(|t| &t.repetitions).any(|m| {
        m.device_io
            .as_ref()
            .is_some_and(|d| d.cache_served_fraction > 0.1)
    });
    if cached {
        notes.push("partly served by a cache".into());
    }
    if let Some(m) = &r.mpi {
        notes.push(format!("merged: {}", crate::analysis::ranks::shape_of(m)));
    }
    notes.join("; ")
}

/// The cells of one row.
fn row(e: &Entry, key: &TestKey) -> Vec<String> {
    let r = &e.result;
    let (read, write) = read_write(r, key);
    let label = r
        .device_identity
        .as_ref()
        .map_or_else(|| r.target.path.clone(), |i| i.label.clone());
    let date = r.started_at.get(..10).unwrap_or(&r.started_at).to_string();
    let mut notes = notes(r, read);
    if let Some(engine) = other_engine(r, key) {
        notes = if notes.is_empty() {
            engine
        } else {
            format!("{engine}; {notes}")
        };
    }
    if read.is_none() && write.is_none() {
        let none = "no test of this kind".to_string();
        notes = if notes.is_empty() {
            none
        } else {
            format!("{none}; {notes}")
        };
    }
    // Escaped and cut here, not only by the table: the identity list under
    // a narrow table prints the label and identity itself.
    let shown = |text: &str| table::cut(text, table::NAME_COLUMNS);
    vec![
        shown(&label),
        format!("{} {}", shown(&e.source), shown(&date)),
        read.map_or("-".into(), |t| figure_text(&repetitions(t))),
        write.map_or("-".into(), |t| figure_text(&repetitions(t))),
        shown(&identity_text(r.device_identity.as_ref())),
        notes,
    ]
}

const HEADER: [&str; 6] = [
    "Device",
    "Run",
    "Read MB/s",
    "Write MB/s",
    "Identity",
    "Notes",
];

/// Column of the identity in [`HEADER`].
const IDENTITY: usize = 4;

/// The runs' rows under `header`, every column left-aligned (names, dates
/// and figures with their ranges read best from the left).
fn table_of(header: &[&str], rows: &[Vec<String>]) -> Table {
    let mut t = Table::new(header);
    for c in 1..header.len() {
        t.align(c, Align::Left);
    }
    for r in rows {
        t.add_row(r.clone());
    }
    t
}

/// The table as text: with the identity in its column when that fits the
/// terminal width, else without it and each device's identity listed once
/// under the table (long card identities would wrap every row).
fn text_table(rows: &[Vec<String>]) -> String {
    let whole = format!("{}\n", table_of(&HEADER, rows));
    if whole.lines().all(|l| table::columns(l) <= table::WIDTH) {
        return whole;
    }
    let mut header = HEADER.to_vec();
    header.remove(IDENTITY);
    let without: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.remove(IDENTITY);
            r
        })
        .collect();
    let mut out = format!("{}\n", table_of(&header, &without));
    let mut listed: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        let (device, identity) = (r[0].as_str(), r[IDENTITY].as_str());
        if !identity.is_empty() && !listed.contains(&(device, identity)) {
            listed.push((device, identity));
        }
    }
    out.push_str("identity\n");
    for (device, identity) in listed {
        out.push_str(&format!("  {device}\n    {identity}\n"));
    }
    out
}

/// The whole comparison as text or Markdown: table, then verdicts and the
/// tests set apart. `Err` when nothing is alike (see [`compare`]).
pub fn render(entries: &[Entry], opts: &Options) -> Result<String, String> {
    let key = table_key(entries, opts.test.as_deref())?;
    let comparison = compare(entries, opts.threshold, &opts.history)?;
    let rows: Vec<Vec<String>> = entries.iter().map(|e| row(e, &key)).collect();
    let heading = table_heading(&key, entries);
    let mut out = match opts.markdown {
        true => format!("{}\n\n", super::markdown_escape::escape(heading.trim_end())),
        false => heading,
    };
    out.push_str(&if opts.markdown {
        table_of(&HEADER, &rows).markdown()
    } else {
        text_table(&rows)
    });
    if opts.markdown {
        // Else Markdown reads the next line as one more row of the table.
        out.push('\n');
    }
    out.push_str(&format!(
        "figures: median of the repetitions, with their range (min–max) where they spread by more than {:.0}%\n",
        RANGE_SPREAD * 100.0
    ));
    for caveat in &comparison.caveats {
        // A caveat may name hosts: cut once, whole.
        let caveat = table::cut(caveat, 3 * table::NAME_COLUMNS);
        let caveat = match opts.markdown {
            true => super::markdown_escape::escape(&caveat),
            false => caveat,
        };
        out.push_str(&format!("caveat: {caveat}\n"));
    }
    if !comparison.changes.is_empty() {
        out.push('\n');
        out.push_str(&verdicts::verdict_lines(&comparison, opts.markdown));
    }
    if !comparison.not_compared.is_empty() {
        out.push('\n');
        out.push_str(&verdicts::not_compared_lines(&comparison, opts.markdown));
    }
    // The last net: whatever a line above quoted from outside reaches the
    // terminal escaped (see `crate::units::escape`).
    Ok(crate::units::escape::text(&out).into_owned())
}

/// The comparison as JSON (the table's figures are in the runs).
pub fn render_json(entries: &[Entry], opts: &Options) -> Result<String, String> {
    let comparison = compare(entries, opts.threshold, &opts.history)?;
    serde_json::to_string_pretty(&comparison).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::regressions;
    use crate::stats::bootstrap::Change;
    use crate::testdata;

    #[test]
    fn only_a_slowdown_judged_beyond_the_gate_is_a_regression() {
        let entries = entries();
        let c = compare(&entries[..2], 0.05, &[]).unwrap();
        let changes: Vec<f64> = c
            .changes
            .iter()
            .filter_map(|ch| ch.percent_change.as_ref().map(|p| p.estimate))
            .collect();
        let worst = changes.iter().copied().fold(0.0, f64::min);
        let slower = c.changes.iter().any(|ch| {
            ch.verdict
                .as_ref()
                .is_ok_and(|v| v.change == Change::Slower)
        });
        // Gates just inside and just outside the worst judged slowdown.
        let inside = regressions(&c, (-worst - 0.001).max(0.0));
        let outside = regressions(&c, -worst + 0.001);
        assert_eq!(inside.is_empty(), !slower, "{changes:?}");
        assert!(outside.is_empty(), "{changes:?}");
        for r in inside {
            let line = regression_line(&c, r, 0.05);
            assert!(
                line.contains("is slower than") && line.contains('%'),
                "{line}"
            );
        }
    }

    fn entries() -> Vec<Entry> {
        let a = testdata::sd_identity("SD02G", 3, "SD", "0x2083a7c8", "2007-09");
        let b = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let c = testdata::sd_identity("00000", 0x1b, "SM", "0x2b060bfe", "2010-05");
        vec![
            Entry {
                source: "run 1".into(),
                result: testdata::run(
                    Some(a),
                    "2024-03-01T10:00:00Z",
                    &[20.1, 19.9, 20.2],
                    &[18.0, 17.8, 18.1],
                ),
            },
            Entry {
                source: "run 2".into(),
                result: testdata::run(
                    Some(b),
                    "2024-03-01T11:00:00Z",
                    &[20.0, 20.3, 19.7],
                    &[12.2, 17.1, 15.0],
                ),
            },
            Entry {
                source: "run 3".into(),
                result: testdata::run(
                    Some(c),
                    "2024-03-02T09:00:00Z",
                    &[11.2, 15.3, 13.9],
                    &[6.0, 6.1, 5.9],
                ),
            },
        ]
    }

    #[test]
    fn snapshot_side_by_side() {
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: false,
            history: Vec::new(),
        };
        insta::assert_snapshot!(render(&entries(), &opts).unwrap());
    }

    #[test]
    fn snapshot_markdown() {
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: true,
            history: Vec::new(),
        };
        insta::assert_snapshot!(render(&entries(), &opts).unwrap());
    }

    #[test]
    fn snapshot_same_device_verdicts() {
        let card = || testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let runs = vec![
            Entry {
                source: "run 4".into(),
                result: testdata::run(
                    Some(card()),
                    "2024-01-10T08:00:00Z",
                    &[20.0, 20.4, 19.8],
                    &[17.1, 16.8, 17.3],
                ),
            },
            Entry {
                source: "run 9".into(),
                result: testdata::run(
                    Some(card()),
                    "2025-01-12T08:00:00Z",
                    &[20.2, 19.6, 20.1],
                    &[13.6, 13.9, 13.4],
                ),
            },
        ];
        // Four earlier runs of the card that agree with each other: the
        // noise between runs is estimated, and small.
        let history: Vec<RunResult> = [17.1, 16.9, 17.2, 17.0]
            .iter()
            .enumerate()
            .map(|(i, w)| {
                testdata::run(
                    Some(card()),
                    &format!("2024-0{}-01T08:00:00Z", i + 2),
                    &[20.1, 19.9, 20.0],
                    &[w - 0.1, *w, w + 0.1],
                )
            })
            .collect();
        let mut opts = Options {
            test: None,
            threshold: 0.05,
            markdown: false,
            history,
        };
        let text = render(&runs, &opts).unwrap();
        assert!(text.contains("run 9, 1 MiB read QD1: no change"), "{text}");
        assert!(
            text.contains(
                "run 9, 1 MiB write QD1: slower by 20% (95% CI 17%–23%, 3 vs 3 repetitions; run-to-run noise ±1% from 4 earlier runs)"
            ),
            "{text}"
        );
        insta::assert_snapshot!(text);
        // Without the history, two runs cannot tell 20% from the noise
        // between runs.
        opts.history.clear();
        let text = render(&runs, &opts).unwrap();
        assert!(
            text.contains("run 9, 1 MiB write QD1: no clear change (-20%, 95% CI")
                && text
                    .contains("run-to-run noise ±15% assumed: under 3 earlier runs of this test"),
            "{text}"
        );
    }

    /// The case: back-to-back runs of one loop device, the later
    /// one on a busy host, 45% apart with tight repetitions. The bootstrap
    /// alone called it "slower by 45% (95% CI 34%–54%)" and `--fail-above
    /// 5` fired; with the later run's recorded company, it is no clear
    /// change, the differences are named, and no gate fires.
    #[test]
    fn a_busy_host_is_named_and_fires_no_gate() {
        let host = |load: f64, other: u64| crate::result::host::HostConditions {
            start: crate::result::host::HostSample {
                load_1m: Some(load),
                cached_bytes: Some(1 << 30),
                dirty_bytes: Some(0),
            },
            end: crate::result::host::HostSample {
                load_1m: Some(load),
                cached_bytes: Some(1 << 30),
                dirty_bytes: Some(0),
            },
            cpu_busy_share: Some(0.5),
            cpu_steal_share: Some(0.0),
            other_read_bytes: Some(0),
            other_write_bytes: Some(other),
            target_resident_share: None,
        };
        let with = |reps: &[f64], load: f64, other: u64| {
            let mut r = random_run(reps);
            for m in &mut r.tests[0].repetitions {
                m.device_io = Some(testdata::device_io());
                m.host = Some(host(load, other));
            }
            r
        };
        let before = [100.0, 104.0, 96.0];
        let after = [55.0, 57.0, 53.0];
        let old = crate::stats::bootstrap::judge(&before, &after, 0.05).unwrap();
        assert_eq!(old.change, Change::Slower, "the old verdict: {old:?}");
        let runs = [
            entry("run 1", with(&before, 0.2, 0)),
            entry("run 2", with(&after, 3.9, 41_000_000 / 3)),
        ];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains("run 2, 4 KiB randread QD32: no clear change (-45%, 95% CI"),
            "{text}"
        );
        assert!(
            text.contains("run-to-run noise of a factor 3.3 assumed: the later run shared the device or its CPUs); the runs differed in host load 0.2 vs 3.9, 39.1 MiB of other I/O on the device during the later run"),
            "{text}"
        );
        let c = compare(&runs, 0.05, &[]).unwrap();
        assert!(regressions(&c, 0.05).is_empty());
        let json: serde_json::Value =
            serde_json::from_str(&render_json(&runs, &opts()).unwrap()).unwrap();
        let ch = &json["changes"][0];
        assert_eq!(ch["host_after"]["disturbed"], true);
        assert_eq!(ch["host_differences"][0]["what"], "load");
        assert_eq!(
            ch["verdict"]["verdict"]["between_runs"]["basis"],
            "disturbed"
        );
        assert!(
            ch["verdict"]["verdict"]["within_runs"]["high"]
                .as_f64()
                .unwrap()
                < 0.6
        );
    }

    /// A pair of read-only runs is headed by its read test alone.
    #[test]
    fn the_heading_names_only_the_tests_compared() {
        let runs = [
            entry("run 1", random_run(&[0.6, 0.62])),
            entry("run 2", random_run(&[0.6, 0.61])),
        ];
        let text = render(&runs, &opts()).unwrap();
        let heading = text.lines().next().unwrap();
        assert_eq!(heading, "test: 4 KiB randread QD32, engine sync");
        // A profile has both directions: both are named.
        let text = render(&entries(), &opts()).unwrap();
        assert!(text.starts_with("test: 1 MiB read/write QD1,"), "{text}");
    }

    /// A `run` of 4 KiB QD32 random reads, with these repetitions.
    fn random_run(reps: &[f64]) -> RunResult {
        let mut r = testdata::as_run(testdata::run(None, "2024-02-01T00:00:00Z", &[], &[]));
        let mut t = testdata::test("4KiB", "randread", reps);
        t.workload.queue_depth = 32;
        r.tests = vec![t];
        r
    }

    fn entry(source: &str, result: RunResult) -> Entry {
        Entry {
            source: source.into(),
            result,
        }
    }

    fn opts() -> Options {
        Options {
            test: None,
            threshold: 0.05,
            markdown: false,
            history: Vec::new(),
        }
    }

    #[test]
    fn a_profile_and_an_unlike_run_are_refused_with_the_reason() {
        let profile = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
        let runs = [
            entry("run 1", profile),
            entry("run 3", random_run(&[0.6, 0.62])),
        ];
        let err = render(&runs, &opts()).unwrap_err();
        assert!(err.contains("nothing to compare"), "{err}");
        assert!(
            err.contains("run 3's 4 KiB randread QD32: run 1 has no such test"),
            "{err}"
        );
        assert!(
            err.contains("access sequential vs random") && err.contains("queue depth 1 vs 32"),
            "{err}"
        );
    }

    #[test]
    fn like_tests_get_verdicts_and_unlike_ones_are_listed_apart() {
        let mut profile = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
        let mut like = random_run(&[0.6, 0.62, 0.61]);
        profile.tests.push(like.tests[0].clone());
        like.tests[0].repetitions = like.tests[0]
            .repetitions
            .iter()
            .map(|m| testdata::measurement(m.mb_per_s / 2.0, 4096))
            .collect();
        let runs = [entry("run 1", profile), entry("run 3", like)];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains("run 3, 4 KiB randread QD32: slower by 50% (95% CI")
                && text.contains("3 vs 3 repetitions; run-to-run noise ±15% assumed"),
            "{text}"
        );
        assert!(
            text.contains("run 1's 1 MiB read QD1; 1 MiB write QD1: run 3 has no such test"),
            "{text}"
        );
        // The table shows the first test's kind, which run 3 lacks: dashes,
        // never its 4 KiB figures.
        let row = text.lines().find(|l| l.contains("run 3 ")).unwrap();
        assert!(
            row.contains("no test of this kind") && !row.contains("0.3"),
            "{row}"
        );
        let json = render_json(&runs, &opts()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let change = &v["changes"][0];
        assert_eq!(change["verdict"]["verdict"]["change"], "slower");
        assert_eq!(change["verdict"]["verdict"]["before_repetitions"], 3);
        assert!(change["percent_change"]["low"].as_f64().unwrap() > -1.0);
        assert_eq!(v["not_compared"][0]["run"], "run 1");
    }

    #[test]
    fn one_repetition_gets_no_verdict_and_says_why() {
        let runs = [
            entry("run 1", random_run(&[0.6, 0.62])),
            entry("run 2", random_run(&[0.3])),
        ];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains(
                "no verdict: 2 vs 1 repetition, and an interval needs at least 2 on each side"
            ),
            "{text}"
        );
    }

    #[test]
    fn runs_spread_over_hosts_differently_are_compared_with_a_caveat() {
        let big = testdata::mpi_result();
        let mut small = testdata::mpi_result();
        let m = small.mpi.as_mut().unwrap();
        m.ranks.truncate(2);
        m.size = 2;
        let mut single = testdata::run(None, "2024-03-02T10:00:00Z", &[400.0], &[190.0]);
        for t in &mut single.tests {
            t.workload.queue_depth = 8;
        }
        let runs = [
            entry("run 12", big.clone()),
            entry("run 15", small),
            entry("run 16", single),
        ];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains("caveat: the runs were spread over hosts differently (run 12: 4 ranks on 2 hosts, run 15: 2 ranks on 1 host, run 16: one host)"),
            "{text}"
        );
        assert!(text.contains("merged: 4 ranks on 2 hosts"), "{text}");
        assert!(text.contains("run 16, 1 MiB read QD8"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&render_json(&runs, &opts()).unwrap()).unwrap();
        assert_eq!(json["caveats"].as_array().unwrap().len(), 1);
        // Two runs spread alike: no caveat, and no key in the JSON.
        let alike = [entry("run 12", big.clone()), entry("run 13", big)];
        assert!(!render(&alike, &opts()).unwrap().contains("caveat"));
        let json: serde_json::Value =
            serde_json::from_str(&render_json(&alike, &opts()).unwrap()).unwrap();
        assert!(json.get("caveats").is_none());
    }

    #[test]
    fn a_run_without_tests_is_listed_apart() {
        let other = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0], &[9.0]);
        let other = testdata::other_command(other);
        let base = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
        let same = base.clone();
        let runs = [
            entry("run 1", base),
            entry("run 2", same),
            entry("run 7", other),
        ];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains(
                "run 7: a `copy` run, which measures something other than repeated tests"
            ),
            "{text}"
        );
    }
}
