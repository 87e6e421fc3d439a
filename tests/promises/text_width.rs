//! Every command's text output fits the terminal it is printed to: at
//! `COLUMNS` 60, 80 and 120, no line wider than that, no word broken
//! across lines (every word of the output is a word of the same output at
//! 1000 columns, or a long name broken after one of its separators), no
//! line ending in a space, and no box-drawing characters, since what a
//! command prints to a pipe or a file is the same text a terminal shows.
//! The commands are enumerated from the clap definition, so a new one needs
//! a case here (or a reason it prints no table) before this test passes.

use crate::common;

use common::{iocurve, skipped, text};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A card small and fast enough for every command, on its virtual clock.
const CARD: &str = "sim:size=64M,au=1M,page=16k,write=20MB/s,read=40MB/s,cmd=100us";

/// How one leaf command is checked.
enum Case {
    /// Run with these arguments (`{card}`, `{dir}`, `{file}` replaced,
    /// and `--seed 7` where the command takes one).
    Run(&'static [&'static str]),
    /// Not checked, and why.
    Skip(&'static str),
}

/// The cases, in the order they run: the measuring commands first, so
/// that `list`, `history`, `compare`, `export` and `report` have runs.
fn cases() -> Vec<(&'static str, Case)> {
    use Case::*;
    vec![
        (
            "profile",
            Run(&[
                "{card}",
                "--time",
                "100ms",
                "--repeat",
                "2",
                "--destructive",
            ]),
        ),
        // Again, once: `compare` needs two like runs, and one repetition
        // prints no range.
        (
            "profile",
            Run(&[
                "{card}",
                "--time",
                "100ms",
                "--repeat",
                "1",
                "--destructive",
            ]),
        ),
        (
            "run",
            Run(&[
                "{card}",
                "--rw",
                "randrw",
                "--time",
                "100ms",
                "--repeat",
                "2",
                "--threads",
                "2",
                "--destructive",
            ]),
        ),
        (
            "curve",
            Run(&[
                "{card}",
                "--rw",
                "read,write",
                "--sizes",
                "4k,6k,16k,1M",
                "--time",
                "100ms",
                "--repeat",
                "2",
                "--destructive",
            ]),
        ),
        ("stream", Run(&["{card}", "--time", "1s", "--find-max"])),
        ("sustain", Run(&["{card}", "--bytes", "8M"])),
        ("surface", Run(&["{card}", "--samples", "8"])),
        ("endure", Run(&["{card}", "--cycles", "1", "--destructive"])),
        ("flash align", Run(&["{card}"])),
        ("flash open-au", Run(&["{card}", "--au", "1M"])),
        ("flash cache", Run(&["{card}"])),
        ("flash capacity", Run(&["{card}"])),
        ("flash class", Run(&["{card}", "--au", "1M"])),
        ("files load", Run(&["{dir}"])),
        ("files save", Run(&["{dir}"])),
        // Every call synchronous, with many sizes: the table the issue saw
        // wrap on a FUSE-backed disk (each time now names its own unit).
        (
            "files save",
            Run(&[
                "{dir}",
                "--sync",
                "each",
                "--size",
                "256k",
                "--sizes",
                "512,1k,2k,4k,8k,16k,32k,64k,128k,256k",
            ]),
        ),
        ("copy", Run(&["{file}", "{dir}/copy.img"])),
        ("probe", Run(&["{dir}"])),
        (
            "import",
            Run(&["tests/fixtures/fio-3.33-seqread-randwrite.json"]),
        ),
        ("list", Run(&[])),
        ("history", Run(&[])),
        ("compare", Run(&["1", "2"])),
        ("export", Run(&["4"])),
        ("report", Run(&["1", "-o", "{dir}/report.html"])),
        ("recover", Run(&[])),
        ("db check", Run(&[])),
        ("db repair", Run(&[])),
        ("completions", Skip("prints a shell script, not a table")),
        ("man", Skip("writes man pages, not a table")),
        ("delete", Skip("removes runs; prints one line per run")),
    ]
}

/// What is wrong with `out` as text for a terminal `width` wide: one
/// message per bad line.
fn problems(out: &str, width: usize) -> Vec<String> {
    let mut bad = Vec::new();
    for (i, line) in out.lines().enumerate() {
        let columns = line.chars().count();
        // A Markdown table row (export, --markdown) is for pasting: it
        // cannot wrap without breaking the table, so only its cells count
        // for trailing spaces and box drawing.
        let markdown_row = line.starts_with("| ") && line.ends_with(" |");
        if columns > width && !markdown_row {
            bad.push(format!("line {} is {columns} columns: {line}", i + 1));
        }
        if line.ends_with(' ') {
            bad.push(format!("line {} ends in a space: {line:?}", i + 1));
        }
        if line.chars().any(|c| ('\u{2500}'..='\u{257F}').contains(&c)) {
            bad.push(format!("line {} draws a box: {line}", i + 1));
        }
    }
    bad
}

fn fill(arg: &str, dir: &Path, file: &Path) -> String {
    arg.replace("{card}", CARD)
        .replace("{dir}", dir.to_str().unwrap())
        .replace("{file}", file.to_str().unwrap())
}

/// The widths a terminal is asked for, and the width of the reference
/// output every word is looked up in.
const WIDTHS: [usize; 3] = [60, 80, 120];
const REFERENCE: usize = 1000;

/// What every case printed at one width, keyed by its place in the list;
/// the database's path is replaced by `{data}` (each walk has its own).
type Walk = BTreeMap<usize, String>;

/// Every case at `COLUMNS=width`, in a database and a scratch directory
/// of its own: the same runs get the same ids in every walk. The second
/// part holds what failed to run.
fn walk(width: usize, seeded: &BTreeSet<String>) -> (Walk, Vec<String>) {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (scratch, image) = (dir.path(), dir.path().join("image.bin"));
    std::fs::write(&image, vec![0x5a; 4 << 20]).unwrap();
    let (mut printed, mut failures) = (Walk::new(), Vec::new());
    for (i, (command, case)) in cases().iter().enumerate() {
        let Case::Run(args) = case else { continue };
        let mut argv: Vec<String> = command.split(' ').map(String::from).collect();
        argv.extend(args.iter().map(|a| fill(a, scratch, &image)));
        if seeded.contains(*command) {
            argv.extend(["--seed".into(), "7".into()]);
        }
        let out = iocurve()
            .env("XDG_DATA_HOME", data.path())
            .env("COLUMNS", width.to_string())
            .args(&argv)
            .output()
            .expect("the command runs");
        let stdout = text(&out.stdout)
            .replace(data.path().to_str().unwrap(), "{data}")
            .replace(scratch.to_str().unwrap(), "{dir}");
        // A flash verdict that fails exits 5; anything else must succeed.
        let code = out.status.code();
        if !(code == Some(0) || (command.starts_with("flash") && code == Some(5))) {
            failures.push(format!(
                "{argv:?} exited {code:?}: {stdout}{}",
                text(&out.stderr)
            ));
            continue;
        }
        if stdout.trim().is_empty() {
            failures.push(format!("{argv:?} printed nothing"));
        }
        printed.insert(i, stdout);
    }
    (printed, failures)
}

/// The words of `narrow` that are not words of `wide`: a word broken
/// across two lines. A word ending in a separator (`/`, `,`, `;`, `:`,
/// `=`) at the end of a line is joined with the next line's first word (a
/// long name broken where it may be); a word holding a digit is a figure,
/// a date or a time, which two runs may print differently, and is let be.
fn broken_words(narrow: &str, wide: &str) -> Vec<String> {
    // Case aside: a heading may be capitalised in a table's header and
    // said in a sentence when the table is narrowed.
    let lower = wide.to_lowercase();
    let known: BTreeSet<&str> = lower.split_whitespace().collect();
    let narrow = narrow.to_lowercase();
    let lines: Vec<Vec<&str>> = narrow
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let mut bad = Vec::new();
    let mut joined_into_next = false;
    for (i, words) in lines.iter().enumerate() {
        for (j, word) in words.iter().enumerate() {
            if j == 0 && std::mem::take(&mut joined_into_next) {
                continue;
            }
            let mut whole = word.to_string();
            let mut next = i + 1;
            let last = j + 1 == words.len();
            while last
                && !known.contains(whole.as_str())
                && whole.ends_with(['/', ',', ';', ':', '='])
                && let Some(first) = lines.get(next).and_then(|l| l.first())
            {
                whole.push_str(first);
                joined_into_next = true;
                next += 1;
            }
            // A rule (`-----`) is as long as its table, at any width; a
            // sign or a dash for "none" (`-,`) is no word.
            let rule = !whole.chars().any(char::is_alphabetic);
            // A unit goes with its figure, which a real disk's two runs
            // may give in different units (`512 KiB`, `1 MiB`).
            let unit = [
                "b", "kib", "mib", "gib", "tib", "kb", "mb", "gb", "ms", "µs", "ns", "s",
            ]
            .contains(&whole.trim_matches(|c: char| !c.is_alphanumeric()));
            // A break is a word cut at a line's end: its piece here and
            // the next line's first word (or the last line's last word and
            // this piece) make a word of the wide output. A whole word the
            // wide run did not print (a measurement of its own: one run's
            // figures are unstable, the other's are not) is no break.
            let after = last
                && lines
                    .get(i + 1)
                    .and_then(|l| l.first())
                    .is_some_and(|n| known.contains(format!("{whole}{n}").as_str()));
            let before = j == 0
                && i > 0
                && lines[i - 1]
                    .last()
                    .is_some_and(|p| known.contains(format!("{p}{whole}").as_str()));
            let piece = after || before;
            if !known.contains(whole.as_str())
                && piece
                && !rule
                && !unit
                && !whole.contains(|c: char| c.is_ascii_digit())
            {
                bad.push(format!("line {}: {whole:?}", i + 1));
            }
        }
    }
    bad
}

#[test]
fn every_command_prints_lines_that_fit_a_terminal() {
    let cases = cases();
    let listed: BTreeMap<&str, &Case> = cases.iter().map(|(c, k)| (*c, k)).collect();
    let found = common::leaf_commands(|_| true);
    let missing: Vec<&String> = found
        .iter()
        .filter(|c| !listed.contains_key(c.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "commands without a width case: {missing:?}"
    );
    for (command, case) in &cases {
        if let Case::Skip(why) = case {
            skipped(&format!("{command}: {why}"));
        }
    }
    let seeded = common::leaf_commands(|c| c.get_arguments().any(|a| a.get_id() == "seed"));
    // One walk per width, side by side (each in its own database).
    let walks: Vec<(usize, (Walk, Vec<String>))> = std::thread::scope(|s| {
        let handles: Vec<_> = WIDTHS
            .iter()
            .chain([&REFERENCE])
            .map(|&w| {
                let seeded = &seeded;
                (w, s.spawn(move || walk(w, seeded)))
            })
            .collect();
        handles
            .into_iter()
            .map(|(w, h)| (w, h.join().unwrap()))
            .collect()
    });
    let mut failures: Vec<String> = Vec::new();
    let (_, (reference, ref_failures)) = walks.last().unwrap();
    failures.extend(ref_failures.iter().cloned());
    for (width, (printed, walk_failures)) in &walks[..WIDTHS.len()] {
        failures.extend(walk_failures.iter().map(|f| format!("at {width}: {f}")));
        for (i, stdout) in printed {
            let command = cases[*i].0;
            for p in problems(stdout, *width) {
                failures.push(format!("{command} at {width}: {p}"));
            }
            let wide = reference.get(i).map_or("", String::as_str);
            for w in broken_words(stdout, wide) {
                failures.push(format!("{command} at {width}: broken word at {w}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_checker_sees_what_it_must() {
    assert!(problems("fits\n", 10).is_empty());
    assert_eq!(problems(&"µ".repeat(11), 10).len(), 1);
    assert!(problems(&"µ".repeat(10), 10).is_empty());
    assert_eq!(problems("a \n", 10).len(), 1);
    assert_eq!(problems("──\n", 10).len(), 1);
    assert!(problems("| a long markdown row |\n", 10).is_empty());
    let wide = "model  a card of 256 MiB at sim:size=64M,au=1M";
    assert!(broken_words("model  a card\n  of 256 MiB", wide).is_empty());
    assert!(broken_words("at sim:size=64M,\n  au=1M", wide).is_empty());
    assert_eq!(broken_words("model  a ca\n  rd of", wide).len(), 2);
    // Words only this run printed (its own legend) are whole, not pieces.
    assert!(broken_words("~ unstable: raise --time", wide).is_empty());
}

/// A result of each kind, as `--json` printed it, on a host with a
/// 60-character name and a long kernel release: every text report of it,
/// rendered in this process at each width, still fits with its words
/// whole, its first line whatever the host, the `host` line cut.
#[test]
fn a_long_host_name_widens_no_report() {
    use iocurve::report::{Export, Text, width};
    use iocurve::result::RunResult;
    let commands: [&[&str]; 8] = [
        &[
            "profile",
            CARD,
            "--time",
            "100ms",
            "--repeat",
            "1",
            "--destructive",
        ],
        &["run", CARD, "--time", "100ms", "--ramp", "0"],
        &[
            "curve", CARD, "--sizes", "4k,64k", "--time", "100ms", "--repeat", "1",
        ],
        &["stream", CARD, "--time", "500ms"],
        &["sustain", CARD, "--bytes", "8M"],
        &["surface", CARD, "--samples", "4"],
        &["endure", "sim:size=8M", "--cycles", "1", "--destructive"],
        &["flash", "capacity", CARD],
    ];
    let mut failures = Vec::new();
    for args in commands {
        let out = iocurve()
            .args(args)
            .args(["--json", "--no-save"])
            .output()
            .expect("the command runs");
        let mut r: RunResult = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stderr)));
        r.host.hostname = format!("ci-runner-{}", "a".repeat(50));
        r.host.kernel = "6.11.4-301.fc41.x86_64+debug-with-a-long-suffix".into();
        let render = || match args[0] {
            "flash" => iocurve::report::flash::render_text(&r, true),
            _ => Text.render(&r),
        };
        let wide = width::with(REFERENCE, render);
        for columns in WIDTHS {
            let report = width::with(columns, render);
            // The first line names no host, so no host can widen it.
            let first = report.lines().next().unwrap_or_default();
            if first.chars().count() > columns || first.contains("ci-runner") {
                failures.push(format!("{args:?} at {columns}: first line {first:?}"));
            }
            for p in problems(&report, columns) {
                failures.push(format!("{args:?} at {columns}: {p}"));
            }
            for w in broken_words(&report, &wide) {
                failures.push(format!("{args:?} at {columns}: broken word at {w}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
