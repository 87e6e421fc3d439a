//! Every command's text output fits a terminal: no line wider than 100
//! columns (80 for `profile`, read in a default terminal), no line ending
//! in a space, and no box-drawing characters, since what a command prints
//! to a pipe or a file is the same text a terminal shows. The commands are
//! enumerated from the clap definition, so a new one needs a case here (or
//! a reason it prints no table) before this test passes.

use crate::common;

use common::{iocurve, skipped, text};
use std::collections::BTreeMap;
use std::path::Path;

/// A card small and fast enough for every command, on its virtual clock.
const CARD: &str = "sim:size=64M,au=1M,page=16k,write=20MB/s,read=40MB/s,cmd=100us";

/// How one leaf command is checked.
enum Case {
    /// Run with these arguments (`{card}`, `{dir}`, `{file}` replaced);
    /// the output must fit `width` columns.
    Run {
        args: &'static [&'static str],
        width: usize,
    },
    /// Not checked, and why.
    Skip(&'static str),
}

const WIDE: usize = 100;
const NARROW: usize = 80;

/// The cases, in the order they run: the measuring commands first, so
/// that `list`, `history`, `compare`, `export` and `report` have runs.
fn cases() -> Vec<(&'static str, Case)> {
    use Case::*;
    let run = |args, width| Run { args, width };
    vec![
        (
            "profile",
            run(
                &[
                    "{card}",
                    "--time",
                    "100ms",
                    "--repeat",
                    "2",
                    "--destructive",
                ],
                NARROW,
            ),
        ),
        // Again, once: `compare` needs two like runs, and one repetition
        // prints no range.
        (
            "profile",
            run(
                &[
                    "{card}",
                    "--time",
                    "100ms",
                    "--repeat",
                    "1",
                    "--destructive",
                ],
                NARROW,
            ),
        ),
        (
            "run",
            run(
                &[
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
                ],
                WIDE,
            ),
        ),
        (
            "curve",
            run(
                &[
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
                ],
                WIDE,
            ),
        ),
        (
            "stream",
            run(&["{card}", "--time", "1s", "--find-max"], WIDE),
        ),
        ("sustain", run(&["{card}", "--bytes", "8M"], WIDE)),
        ("surface", run(&["{card}", "--samples", "8"], WIDE)),
        (
            "endure",
            run(&["{card}", "--cycles", "1", "--destructive"], WIDE),
        ),
        ("flash align", run(&["{card}"], WIDE)),
        ("flash open-au", run(&["{card}", "--au", "1M"], WIDE)),
        ("flash cache", run(&["{card}"], WIDE)),
        ("flash capacity", run(&["{card}"], WIDE)),
        ("flash class", run(&["{card}", "--au", "1M"], WIDE)),
        ("files load", run(&["{dir}"], WIDE)),
        ("files save", run(&["{dir}"], WIDE)),
        // Every call synchronous, with many sizes: the table the issue saw
        // wrap on a FUSE-backed disk (each time now names its own unit).
        (
            "files save",
            run(
                &[
                    "{dir}",
                    "--sync",
                    "each",
                    "--size",
                    "256k",
                    "--sizes",
                    "512,1k,2k,4k,8k,16k,32k,64k,128k,256k",
                ],
                WIDE,
            ),
        ),
        ("copy", run(&["{file}", "{dir}/copy.img"], WIDE)),
        ("probe", run(&["{dir}"], WIDE)),
        (
            "import",
            run(&["tests/fixtures/fio-3.33-seqread-randwrite.json"], WIDE),
        ),
        ("list", run(&[], WIDE)),
        ("history", run(&[], WIDE)),
        ("compare", run(&["1", "2"], WIDE)),
        ("export", run(&["4"], WIDE)),
        ("report", run(&["1", "-o", "{dir}/report.html"], WIDE)),
        ("recover", run(&[], WIDE)),
        ("db check", run(&[], WIDE)),
        ("db repair", run(&[], WIDE)),
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

#[test]
fn every_command_prints_lines_that_fit_a_terminal() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("image.bin");
    std::fs::write(&image, vec![0x5a; 4 << 20]).unwrap();
    let scratch = tempfile::tempdir().unwrap();
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
    let mut failures = Vec::new();
    for (command, case) in &cases {
        if !found.contains(*command) {
            continue;
        }
        let (args, width) = match case {
            Case::Skip(why) => {
                skipped(&format!("{command}: {why}"));
                continue;
            }
            Case::Run { args, width } => (args, *width),
        };
        let mut argv: Vec<String> = command.split(' ').map(String::from).collect();
        argv.extend(args.iter().map(|a| fill(a, scratch.path(), &image)));
        let out = iocurve()
            .env("XDG_DATA_HOME", data.path())
            .args(&argv)
            .output()
            .expect("the command runs");
        let stdout = text(&out.stdout);
        // A flash verdict that fails exits 5; anything else must succeed.
        let code = out.status.code();
        if !(code == Some(0) || (command.starts_with("flash") && code == Some(5))) {
            failures.push(format!(
                "{argv:?} exited {code:?}: {}{}",
                stdout,
                text(&out.stderr)
            ));
            continue;
        }
        assert!(!stdout.trim().is_empty(), "{argv:?} printed nothing");
        for p in problems(&stdout, width) {
            failures.push(format!("{command}: {p}"));
        }
    }
    let _ = dir;
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
}

/// A result of each kind, as `--json` printed it, on a host with a
/// 60-character name and a long kernel release: every text report of it
/// still fits, its first line whatever the host, the `host` line cut.
#[test]
fn a_long_host_name_widens_no_report() {
    use iocurve::report::{Export, Text};
    use iocurve::result::RunResult;
    let commands: [(&[&str], usize); 8] = [
        (
            &[
                "profile",
                CARD,
                "--time",
                "100ms",
                "--repeat",
                "1",
                "--destructive",
            ],
            NARROW,
        ),
        (&["run", CARD, "--time", "100ms", "--ramp", "0"], WIDE),
        (
            &[
                "curve", CARD, "--sizes", "4k,64k", "--time", "100ms", "--repeat", "1",
            ],
            WIDE,
        ),
        (&["stream", CARD, "--time", "500ms"], WIDE),
        (&["sustain", CARD, "--bytes", "8M"], WIDE),
        (&["surface", CARD, "--samples", "4"], WIDE),
        (
            &["endure", "sim:size=8M", "--cycles", "1", "--destructive"],
            WIDE,
        ),
        (&["flash", "capacity", CARD], WIDE),
    ];
    let mut failures = Vec::new();
    for (args, width) in commands {
        let out = iocurve()
            .args(args)
            .args(["--json", "--no-save"])
            .output()
            .expect("the command runs");
        let mut r: RunResult = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stderr)));
        r.host.hostname = format!("ci-runner-{}", "a".repeat(50));
        r.host.kernel = "6.11.4-301.fc41.x86_64+debug-with-a-long-suffix".into();
        let report = match args[0] {
            "flash" => iocurve::report::flash::render_text(&r, true),
            _ => Text.render(&r),
        };
        // The first line names no host, so no host can widen it.
        let first = report.lines().next().unwrap_or_default();
        if first.chars().count() > width || first.contains("ci-runner") {
            failures.push(format!("{args:?}: first line {first:?}"));
        }
        for p in problems(&report, width) {
            failures.push(format!("{args:?}: {p}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
