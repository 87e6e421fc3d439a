//! One set of output flags, offered where it means something and nowhere
//! else. The commands are found by walking the clap definition, so a
//! command added later is held to the same rules: every command that
//! prints a result takes --json, --csv, --markdown, -o and -q (and each is
//! run here on a simulated card or a temporary directory to show that the
//! flag does what it says); every option with a value states its default;
//! a flash subcommand offers only its own options; --db and --no-save
//! appear only where runs are saved or read.

use crate::common;

#[path = "output_flags/special_files.rs"]
mod special_files;

use clap::CommandFactory;
use common::{iocurve, json, text};
use iocurve::cli::Cli;
use std::collections::BTreeSet;
use std::path::Path;

const CARD: &str = "sim:size=256M,write=20MB/s,read=40MB/s,cmd=100us";

/// Commands that print no result, and why.
const NOT_RESULTS: [(&str, &str); 11] = [
    ("list", "a listing of the database; it has --json"),
    ("history", "a listing of the database; it has --json"),
    (
        "probe",
        "a device's identity, not a measurement; it has --json",
    ),
    ("recover", "messages about journals put back"),
    ("report", "writes an HTML page to its own -o"),
    ("import", "saves fio's result and says under which id"),
    ("db check", "one line about the database's health"),
    ("db repair", "one line about the database's health"),
    ("completions", "a shell script"),
    ("man", "man pages"),
    ("delete", "one line naming the runs deleted"),
];

/// The measuring commands that take --json-lines.
const LIVE: [&str; 5] = ["run", "profile", "curve", "stream", "sustain"];

/// Commands that save a run (and so take --no-save).
const SAVING: [&str; 15] = [
    "profile",
    "run",
    "curve",
    "stream",
    "sustain",
    "surface",
    "copy",
    "endure",
    "files load",
    "files save",
    "flash align",
    "flash open-au",
    "flash cache",
    "flash capacity",
    "flash class",
];

/// Every runnable command of the definition, by its words (`flash
/// align`), with its clap definition.
pub(crate) fn leaves() -> Vec<(String, clap::Command)> {
    fn walk(cmd: &clap::Command, words: &[String], out: &mut Vec<(String, clap::Command)>) {
        if cmd.get_subcommands().next().is_none() && !words.is_empty() {
            out.push((words.join(" "), cmd.clone()));
        }
        for sub in cmd.get_subcommands() {
            let mut w = words.to_vec();
            w.push(sub.get_name().to_string());
            walk(sub, &w, out);
        }
    }
    let mut out = Vec::new();
    let mut root = Cli::command();
    root.build();
    walk(&root, &[], &mut out);
    out.retain(|(name, _)| !name.split(' ').any(|w| w == "help"));
    assert!(out.len() > 20, "{} commands", out.len());
    out
}

fn longs(cmd: &clap::Command) -> BTreeSet<String> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

fn shorts(cmd: &clap::Command) -> BTreeSet<char> {
    cmd.get_arguments().filter_map(|a| a.get_short()).collect()
}

fn prints_a_result(name: &str) -> bool {
    !NOT_RESULTS.iter().any(|(n, _)| *n == name)
}

#[test]
fn every_command_that_prints_a_result_takes_the_output_flags() {
    let mut checked = 0;
    for (name, cmd) in leaves() {
        let have = longs(&cmd);
        let short = shorts(&cmd);
        if prints_a_result(&name) {
            for flag in ["json", "csv", "markdown", "output", "quiet"] {
                assert!(have.contains(flag), "{name} has no --{flag}");
            }
            assert!(
                short.contains(&'o') && short.contains(&'q'),
                "{name}: no -o/-q"
            );
            checked += 1;
        } else {
            for flag in ["csv", "quiet"] {
                assert!(!have.contains(flag), "{name} offers --{flag}");
            }
        }
        let live = LIVE.contains(&name.as_str());
        assert_eq!(have.contains("json-lines"), live, "{name}: --json-lines");
    }
    // 8 measuring commands on a target, 2 files, 5 flash, compare, export.
    assert_eq!(checked, 17);
}

#[test]
fn database_options_appear_only_where_runs_are_saved_or_read() {
    for (name, cmd) in leaves() {
        let have = longs(&cmd);
        let saves = SAVING.contains(&name.as_str());
        assert_eq!(have.contains("no-save"), saves, "{name}: --no-save");
        let reads = [
            "list",
            "history",
            "compare",
            "export",
            "report",
            "import",
            "db check",
            "db repair",
            "delete",
        ]
        .contains(&name.as_str());
        assert_eq!(have.contains("db"), saves || reads, "{name}: --db");
    }
    // The binary agrees, in the help it prints.
    for words in [&["list"][..], &["history"], &["probe"], &["recover"]] {
        let help = text(&common::run_ok(words.iter().chain(&["--help"])).stdout);
        assert!(!help.contains("--no-save"), "{words:?}: {help}");
    }
    for words in [&["probe"][..], &["recover"], &["man"], &["completions"]] {
        let help = text(&common::run_ok(words.iter().chain(&["--help"])).stdout);
        assert!(!help.contains("--db"), "{words:?}: {help}");
    }
    // Given before the command name (where they used to be global), they
    // are still taken, unlisted, so scripts keep working.
    let root = text(&common::run_ok(["--help"]).stdout);
    assert!(
        !root.contains("--no-save") && !root.contains("--db"),
        "{root}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("early.db");
    let out = common::run_ok([
        "--db".as_ref(),
        db.as_os_str(),
        "run".as_ref(),
        CARD.as_ref(),
        "--time".as_ref(),
        "50ms".as_ref(),
        "--ramp".as_ref(),
        "0".as_ref(),
    ]);
    assert!(
        text(&out.stderr).contains("saved as run 1"),
        "{}",
        text(&out.stderr)
    );
    assert!(db.exists());
    let out = common::run_ok(["--no-save", "run", CARD, "--time", "50ms", "--ramp", "0"]);
    assert!(
        !text(&out.stderr).contains("saved as"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn every_option_with_a_value_states_its_default() {
    for (name, cmd) in leaves() {
        for arg in cmd.get_arguments() {
            if arg.is_hide_set() || !arg.get_action().takes_values() {
                continue;
            }
            let shown = !arg.get_default_values().is_empty() && !arg.is_hide_default_value_set();
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                shown || arg.is_required_set() || help.contains("default"),
                "{name} {}: no default stated: {help:?}",
                arg.get_id()
            );
            // Stated once: a help text that says its default hides clap's.
            assert!(
                !(shown && help.contains("[default:")),
                "{name} {}: the default is stated twice: {help:?}",
                arg.get_id()
            );
        }
    }
}

#[test]
fn probe_states_its_default_once_and_run_states_the_time_default() {
    let help = text(&common::run_ok(["probe", "--help"]).stdout);
    assert_eq!(help.matches("[default:").count(), 1, "{help}");
    let help = text(&common::run_ok(["run", "--help"]).stdout);
    let time = help
        .split("--time <DURATION>")
        .nth(1)
        .and_then(|rest| rest.split("\n      --").next())
        .unwrap();
    assert!(time.contains("[default:"), "{time}");
    let help = text(&common::run_ok(["files", "save", "--help"]).stdout);
    let seed = help.split("--seed <SEED>").nth(1).unwrap();
    assert!(seed.trim_start().starts_with("Seed for"), "{seed}");
}

/// Each flash subcommand's own options (beyond the output and database
/// ones every flash test shares).
const FLASH_OWN: [(&str, &[&str]); 5] = [
    ("align", &["destructive", "preserve", "journal-dir"]),
    (
        "open-au",
        &["destructive", "preserve", "journal-dir", "au", "seed"],
    ),
    ("cache", &["destructive", "preserve", "journal-dir", "seed"]),
    (
        "capacity",
        &[
            "destructive",
            "preserve",
            "journal-dir",
            "flush",
            "fix",
            "seed",
        ],
    ),
    (
        "class",
        &[
            "destructive",
            "preserve",
            "journal-dir",
            "au",
            "claim",
            "seed",
        ],
    ),
];

#[test]
fn each_flash_subcommand_offers_only_its_own_options() {
    let shared = [
        "verbose",
        "json",
        "csv",
        "markdown",
        "output",
        "quiet",
        "db",
        "no-save",
        "help",
        "version",
        "export-json",
        "export-csv",
        "export-markdown",
    ];
    let every_own: BTreeSet<&str> = FLASH_OWN
        .iter()
        .flat_map(|(_, o)| o.iter().copied())
        .collect();
    for (sub, own) in FLASH_OWN {
        let cmd = leaves()
            .into_iter()
            .find(|(n, _)| *n == format!("flash {sub}"))
            .unwrap()
            .1;
        let mut want: BTreeSet<String> = own.iter().map(|s| s.to_string()).collect();
        want.extend(shared.iter().map(|s| s.to_string()));
        assert_eq!(longs(&cmd), want, "flash {sub}");
        // And the help the binary prints offers no other test's option.
        let help = text(&common::run_ok(["flash", sub, "--help"]).stdout);
        for other in every_own.iter().filter(|o| !own.contains(o)) {
            assert!(
                !help.contains(&format!("--{other} ")) && !help.contains(&format!("--{other}\n")),
                "flash {sub} --help offers --{other}: {help}"
            );
        }
    }
}

/// A short command line of each result-printing command, on a simulated
/// card or in `dir`, its results kept in `dir/r.db`. `n` keeps names made
/// for it (copy's destination) apart between calls.
fn command_line(name: &str, dir: &Path, n: usize) -> Vec<String> {
    let d = dir.to_str().unwrap();
    let words: Vec<String> = match name {
        "run" => vec!["run", CARD, "--bs", "64k", "--time", "100ms", "--ramp", "0"]
            .into_iter()
            .map(String::from)
            .collect(),
        "profile" => [
            "profile", CARD, "--time", "100ms", "--repeat", "1", "--size", "16M",
        ]
        .map(String::from)
        .to_vec(),
        "curve" => [
            "curve", CARD, "--rw", "read", "--sizes", "4k,64k", "--time", "100ms", "--repeat", "1",
        ]
        .map(String::from)
        .to_vec(),
        "stream" => ["stream", CARD, "--time", "500ms"]
            .map(String::from)
            .to_vec(),
        "sustain" => ["sustain", CARD, "--bytes", "8M", "--destructive"]
            .map(String::from)
            .to_vec(),
        "surface" => ["surface", CARD, "--samples", "4"]
            .map(String::from)
            .to_vec(),
        "endure" => ["endure", "sim:size=8M", "--cycles", "1", "--destructive"]
            .map(String::from)
            .to_vec(),
        "copy" => {
            let src = dir.join("image.bin");
            if !src.exists() {
                std::fs::write(&src, vec![0x5a; 1 << 20]).unwrap();
            }
            vec![
                "copy".into(),
                src.to_str().unwrap().into(),
                format!("{d}/copy-{n}.bin"),
                "--bs".into(),
                "256k".into(),
            ]
        }
        "files load" => ["files", "load", d, "--sizes", "4k", "--count", "2"]
            .map(String::from)
            .to_vec(),
        "files save" => ["files", "save", d, "--size", "64k", "--sizes", "4096,512"]
            .map(String::from)
            .to_vec(),
        "flash align" => ["flash", "align", "sim:size=64M"]
            .map(String::from)
            .to_vec(),
        "flash open-au" => ["flash", "open-au", "sim:size=256M,au=4M"]
            .map(String::from)
            .to_vec(),
        "flash cache" => ["flash", "cache", "sim:size=256M,cache=16M"]
            .map(String::from)
            .to_vec(),
        "flash capacity" => ["flash", "capacity", "sim:size=64M"]
            .map(String::from)
            .to_vec(),
        "flash class" => ["flash", "class", "sim:size=256M"]
            .map(String::from)
            .to_vec(),
        "compare" => ["compare", "1", "2"].map(String::from).to_vec(),
        "export" => ["export", "1"].map(String::from).to_vec(),
        other => panic!("no command line for {other}: add one"),
    };
    let mut args = words;
    if !["compare", "export", "copy", "files load", "files save"].contains(&name)
        && !name.starts_with("flash")
    {
        args.extend(["--seed".into(), "1".into()]);
    }
    if ["flash capacity", "flash class"].contains(&name) {
        args.extend(["--seed".into(), "1".into()]);
    }
    args.extend(["--db".into(), format!("{d}/r.db")]);
    args
}

/// Runs `args` plus `extra` in `dir`; exit code and stdout.
fn run_in(dir: &Path, args: &[String], extra: &[&str]) -> (i32, String, String) {
    let out = iocurve()
        .current_dir(dir)
        .args(args)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Two stored runs, so compare and export have something to show.
fn two_runs(dir: &Path) {
    for _ in 0..2 {
        let args = command_line("run", dir, 0);
        let (code, _, err) = run_in(dir, &args, &[]);
        assert_eq!(code, 0, "{err}");
    }
}

/// Runs command `name` with each output flag and checks what it printed.
fn check_flags(name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if ["compare", "export"].contains(&name) {
        two_runs(dir);
    }
    if name.starts_with("files") && !common::is_root() {
        common::skipped("files load/save drop the page cache, which needs root");
        return;
    }
    let mut n = 0;
    let mut line = || {
        n += 1;
        command_line(name, dir, n)
    };
    // The table, and its exit code (5 when a flash class fails on the card).
    let (code, table, err) = run_in(dir, &line(), &[]);
    assert!([0, 5].contains(&code), "{name}: exit {code}: {err}");
    assert!(!table.trim().is_empty(), "{name}: no table");

    let (c, out, err) = run_in(dir, &line(), &["--json"]);
    assert_eq!(c, code, "{name} --json: {err}");
    let doc = json(out.as_bytes());
    assert!(doc.is_object(), "{name} --json: {out}");

    let (c, out, err) = run_in(dir, &line(), &["--csv"]);
    assert_eq!(c, code, "{name} --csv: {err}");
    let header = out.lines().next().unwrap_or("");
    // A table of tests, or a command's outcome as one figure a row.
    let tests = header.contains("mb_per_s_median");
    let outcome = header.contains(",figure,value");
    assert!(
        (tests || outcome) && header.split(',').count() > 5 && out.lines().count() > 1,
        "{name} --csv: {out}"
    );

    let (c, out, err) = run_in(dir, &line(), &["--markdown"]);
    assert_eq!(c, code, "{name} --markdown: {err}");
    assert!(
        out.lines().any(|l| l.starts_with("|") && l.contains("---")),
        "{name} --markdown: {out}"
    );

    let file = dir.join(format!("out-{}.json", name.replace(' ', "-")));
    let f = file.to_str().unwrap();
    let (c, out, err) = run_in(dir, &line(), &["--json", "-o", f]);
    assert_eq!(c, code, "{name} -o: {err}");
    assert_eq!(out, "", "{name} -o printed on stdout");
    let written = std::fs::read(&file).unwrap();
    assert!(json(&written).is_object(), "{name} -o: {}", text(&written));

    let (c, out, err) = run_in(dir, &line(), &["-q"]);
    assert_eq!(c, code, "{name} -q: {err}");
    assert_eq!(out, "", "{name} -q printed on stdout");
    assert!(!err.contains("saved as run"), "{name} -q: {err}");

    if LIVE.contains(&name) {
        let (c, out, err) = run_in(dir, &line(), &["--json-lines"]);
        assert_eq!(c, code, "{name} --json-lines: {err}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(!lines.is_empty(), "{name} --json-lines printed nothing");
        for l in &lines {
            assert!(
                json(l.as_bytes()).is_object(),
                "{name}: not one JSON object: {l}"
            );
        }
        let last = json(lines.last().unwrap().as_bytes());
        assert!(last["started_at"].is_string(), "{name}: last line {last}");
    }
}

#[test]
fn measuring_commands_print_each_format_on_a_simulated_card() {
    for name in [
        "run", "profile", "curve", "stream", "sustain", "surface", "endure",
    ] {
        check_flags(name);
    }
}

#[test]
fn flash_tests_print_each_format_on_a_simulated_card() {
    for sub in ["align", "open-au", "cache", "capacity", "class"] {
        check_flags(&format!("flash {sub}"));
    }
}

#[test]
fn file_commands_print_each_format_in_a_temporary_directory() {
    for name in ["copy", "files load", "files save"] {
        check_flags(name);
    }
}

#[test]
fn stored_runs_print_each_format() {
    for name in ["compare", "export"] {
        check_flags(name);
    }
}

#[test]
fn every_result_printing_command_is_run_by_a_test_here() {
    let run_here = [
        "run",
        "profile",
        "curve",
        "stream",
        "sustain",
        "surface",
        "endure",
        "copy",
        "files load",
        "files save",
        "flash align",
        "flash open-au",
        "flash cache",
        "flash capacity",
        "flash class",
        "compare",
        "export",
    ];
    for (name, _) in leaves() {
        if prints_a_result(&name) {
            assert!(
                run_here.contains(&name.as_str()),
                "{name} is not run by check_flags"
            );
        }
    }
}

#[test]
fn the_output_file_holds_what_stdout_would_have() {
    // A simulated card on its virtual clock measures the same each time:
    // the CSV rows (all but the start time) match.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let args = command_line("run", dir, 0);
    let (_, printed, _) = run_in(dir, &args, &["--csv"]);
    let file = dir.join("run.csv");
    let (code, out, err) = run_in(dir, &args, &["--csv", "-q", "-o", file.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let written = std::fs::read_to_string(&file).unwrap();
    let rows = |csv: &str| -> Vec<String> {
        csv.lines()
            .map(|l| l.split_once(',').map_or(l, |(_, rest)| rest).to_string())
            .collect()
    };
    assert_eq!(rows(&written), rows(&printed));
    assert_eq!(rows(&written).len(), 2, "{written}");
}

#[test]
fn json_lines_and_a_file_or_another_format_are_refused_together() {
    for extra in [&["--json"][..], &["--csv"], &["-o", "x.json"]] {
        let mut args = vec!["run", CARD, "--json-lines"];
        args.extend(extra);
        common::run_fail(args, 2);
    }
    common::run_fail(["run", CARD, "--json", "--markdown"], 2);
    common::run_fail(["export", "--format", "csv", "--json"], 2);
}

/// Runs the binary under `umask 000` (as a service unit or a careless
/// shell may start it), with its default data directory in `data`.
fn under_umask_000(data: &Path, args: &[&str]) {
    let out = common::iocurve_wrapped(|bin| {
        let mut sh = std::process::Command::new("sh");
        sh.arg("-c").arg("umask 000; exec \"$0\" \"$@\"").arg(bin);
        sh
    })
    .args(args)
    .env("XDG_DATA_HOME", data)
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}: {}",
        out.status.code(),
        text(&out.stderr)
    );
}

/// Every file and directory under `dir` with its permission bits.
fn modes_under(dir: &Path) -> Vec<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        out.push((path.clone(), meta.permissions().mode() & 0o7777));
        if meta.is_dir() {
            out.extend(modes_under(&path));
        }
    }
    out
}

#[test]
fn nothing_created_is_writable_by_group_or_others_even_under_umask_000() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let p = |rel: &str| t.join(rel).to_str().unwrap().to_string();
    // The shell really hands on umask 000: a file it makes is 0666.
    std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec touch \"$0\"")
        .arg(p("control"))
        .status()
        .unwrap();
    let control = modes_under(t);
    assert_eq!(control, [(t.join("control"), 0o666)]);
    std::fs::remove_file(t.join("control")).unwrap();
    std::fs::create_dir(t.join("target")).unwrap();
    let data = t.join("data");
    let db = p("db/nested/results.db");
    let runs: Vec<Vec<String>> = vec![
        vec![
            "run",
            "sim:size=64M",
            "--time",
            "50ms",
            "--ramp",
            "0",
            "--json",
            "-o",
        ]
        .into_iter()
        .map(String::from)
        .chain([
            p("run.json"),
            "--report".into(),
            p("run.html"),
            "--db".into(),
            db.clone(),
        ])
        .collect(),
        vec![
            "curve".into(),
            p("target"),
            "--sizes".into(),
            "4k,64k".into(),
            "--span".into(),
            "1M".into(),
            "--time".into(),
            "50ms".into(),
            "--repeat".into(),
            "1".into(),
            "--svg".into(),
            p("curve.svg"),
            "-q".into(),
        ],
        vec![
            "import".into(),
            "tests/fixtures/fio-3.33-seqread-randwrite.json".into(),
        ],
        vec!["report".into(), "-o".into(), p("report.html")],
        vec![
            "export".into(),
            "1".into(),
            "--csv".into(),
            "-o".into(),
            p("export.csv"),
            "--db".into(),
            db.clone(),
        ],
        vec!["man".into(), p("man")],
    ];
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        under_umask_000(&data, &args);
    }
    let made = modes_under(t);
    for expected in [
        "run.json",
        "run.html",
        "curve.svg",
        "report.html",
        "export.csv",
        "db/nested/results.db",
        "data/iocurve/results.db",
        "man/iocurve.1",
    ] {
        assert!(
            made.iter().any(|(f, _)| *f == t.join(expected)),
            "{expected} in {made:?}"
        );
    }
    // The test's own directory for the curve's target is not iocurve's.
    let open: Vec<_> = made
        .iter()
        .filter(|(f, mode)| mode & 0o022 != 0 && *f != t.join("target"))
        .collect();
    assert!(open.is_empty(), "writable by group or others: {open:?}");
}

#[test]
fn an_svg_chart_keeps_a_hostile_target_name_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    // A file name cannot hold a `/`, so no closing tag.
    let target = tmp.path().join("<script src=x> & \"'|=x");
    std::fs::create_dir(&target).unwrap();
    let svg = tmp.path().join("chart.svg");
    let out = iocurve()
        .arg("curve")
        .arg(&target)
        .arg(tmp.path())
        .args([
            "--sizes",
            "4k",
            "--span",
            "1M",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "-q",
            "--no-save",
            "--svg",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let chart = std::fs::read_to_string(&svg)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    assert!(!chart.contains("<script"), "raw markup in the chart");
    let doc = roxmltree::Document::parse(&chart).expect("the chart is well-formed XML");
    let name = target.to_str().unwrap();
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    assert!(
        labels
            .iter()
            .any(|l| l.trim().starts_with(&format!("{name} · "))),
        "{labels:?}"
    );
}

/// The listing commands with a `--json` of their own print no result, so
/// they write no export (see [`NOT_RESULTS`]).
const JSON_WITHOUT_EXPORTS: [&str; 3] = ["list", "history", "probe"];

#[test]
fn every_command_with_json_also_writes_the_three_exports() {
    let mut checked = 0;
    for (name, cmd) in leaves() {
        let have = longs(&cmd);
        if !have.contains("json") || JSON_WITHOUT_EXPORTS.contains(&name.as_str()) {
            continue;
        }
        for flag in ["export-json", "export-csv", "export-markdown"] {
            assert!(have.contains(flag), "{name} has --json but no --{flag}");
        }
        checked += 1;
    }
    assert_eq!(checked, 17);
    for name in JSON_WITHOUT_EXPORTS {
        assert!(!prints_a_result(name), "{name} prints a result: export it");
    }
}

/// Runs `name` with the three exports beside its table, then once with
/// each of `--json`, `--csv` and `--markdown` and the three exports again:
/// what the flag prints and the file of its format, made from the same
/// result in the same run, are the same bytes.
fn exports_match_the_flags(name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if ["compare", "export"].contains(&name) {
        two_runs(dir);
    }
    let files = ["out.json", "out.csv", "out.md"].map(|f| dir.join(f));
    let paths = files.each_ref().map(|f| f.to_str().unwrap());
    let exports = [
        "--export-json",
        paths[0],
        "--export-csv",
        paths[1],
        "--export-markdown",
        paths[2],
    ];
    let (code, table, err) = run_in(dir, &command_line(name, dir, 1), &exports);
    assert!([0, 5].contains(&code), "{name}: exit {code}: {err}");
    assert!(
        !table.trim().is_empty(),
        "{name}: no table beside the exports"
    );
    assert!(!table.trim_start().starts_with('{'), "{name}: {table}");
    for f in &files {
        assert!(f.exists(), "{name}: {} not written", f.display());
    }
    for (i, (flag, file)) in ["--json", "--csv", "--markdown"]
        .iter()
        .zip(&files)
        .enumerate()
    {
        let mut extra = vec![*flag];
        extra.extend(exports);
        let (c, printed, err) = run_in(dir, &command_line(name, dir, 2 + i), &extra);
        assert_eq!(c, code, "{name} {flag}: {err}");
        let written = std::fs::read_to_string(file).unwrap();
        // Markdown printed to a terminal wraps its prose to the width (a
        // continuation line is the same paragraph or list item once
        // rendered); the file keeps whole lines. Equal but for the wraps.
        let (written, printed) = match *flag {
            "--markdown" => (words(&written), words(&printed)),
            _ => (written, printed),
        };
        assert_eq!(
            written,
            printed,
            "{name}: {} differs from {flag}",
            file.display()
        );
    }
}

#[test]
fn the_exports_hold_what_each_flag_prints() {
    for name in ["run", "curve", "flash capacity", "compare", "export"] {
        exports_match_the_flags(name);
    }
}

#[test]
fn an_export_path_that_cannot_be_written_is_refused_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let db = db.to_str().unwrap();
    let missing = tmp.path().join("no-such-dir/out.json");
    let dir = tmp.path().to_str().unwrap();
    for (flag, path) in [
        ("--export-json", missing.to_str().unwrap()),
        ("--export-csv", dir),
        ("--export-markdown", "-"),
        ("--export-json", "/dev/null/x.json"),
    ] {
        let out = common::run_fail(["run", CARD, "--time", "10s", "--db", db, flag, path], 2);
        let err = text(&out.stderr);
        assert!(err.contains(flag), "{flag} {path}: {err}");
        assert!(
            !db_exists(db),
            "{flag} {path}: a run was measured and saved"
        );
    }
    // Each at most once.
    let a = tmp.path().join("a.json");
    let b = tmp.path().join("b.json");
    common::run_fail(
        [
            "run",
            CARD,
            "--export-json",
            a.to_str().unwrap(),
            "--export-json",
            b.to_str().unwrap(),
        ],
        2,
    );
}

fn db_exists(path: &str) -> bool {
    Path::new(path).exists()
}

#[test]
fn an_interrupted_run_still_writes_its_exports() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out_json = dir.join("partial.json");
    let out_csv = dir.join("partial.csv");
    let child = common::iocurve_std()
        .args(["run", dir.to_str().unwrap(), "--span", "16M", "--buffered"])
        .args(["--time", "60s", "--ramp", "0", "--no-save"])
        .args(["--export-json", out_json.to_str().unwrap()])
        .args(["--export-csv", out_csv.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let doc = json(&std::fs::read(&out_json).expect("the JSON export was written"));
    assert_eq!(doc["interrupted"], true, "{doc}");
    let csv = std::fs::read_to_string(&out_csv).expect("the CSV export was written");
    assert!(
        csv.starts_with("started_at,") && csv.contains("p99_ns"),
        "{csv}"
    );
}

/// Two outputs naming one file would keep only the last one written: on
/// every command with the export flags, each pair of `-o` and the three
/// exports naming one file is refused with exit 2 and both flags named,
/// before anything opens (no file appears).
#[test]
fn two_outputs_never_name_one_file() {
    let flags = ["-o", "--export-json", "--export-csv", "--export-markdown"];
    let mut commands = 0;
    for (name, cmd) in leaves() {
        if !longs(&cmd).contains("export-json") {
            continue;
        }
        commands += 1;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        for (i, a) in flags.iter().enumerate() {
            for b in &flags[i + 1..] {
                let out = iocurve()
                    .args(command_line(&name, dir.path(), 0))
                    .arg(a)
                    .arg(&file)
                    .arg(b)
                    .arg(&file)
                    .output()
                    .unwrap();
                let err = text(&out.stderr);
                assert_eq!(out.status.code(), Some(2), "{name} {a} {b}: {err}");
                let said = format!("{a} and {b} both name");
                assert!(err.contains(&said), "{name}: {err}");
                assert!(!file.exists(), "{name} {a} {b} wrote {}", file.display());
                assert!(
                    !dir.path().join("r.db").exists(),
                    "{name}: a database opened"
                );
            }
        }
    }
    assert!(commands >= 15, "{commands} commands with exports");
}

/// `text` with every run of whitespace one space.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
