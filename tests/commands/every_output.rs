//! Every command that measures, in every output: the command's outcome and
//! its headline figures (sustain's drop and the speeds on each side,
//! surface's positions, stream's misses, files' times, copy's bottleneck,
//! endure's cycles, a flash card's verdict and real size, a run's tests)
//! appear in the text, `--json`, `--json-lines`, `--csv`, `--markdown`, the
//! HTML report, `export N --format json|csv|markdown`, `history`, `list`
//! and `compare`. The commands are walked from the clap definition (every
//! leaf with `--csv`), so a new command fails here until it has a case.
//!
//! Every command runs on a `sim:` card on its virtual clock, or on a file
//! in a scratch directory; every miss of every command and format is
//! gathered and shown at once.

use crate::common;

use common::{iocurve, leaf_commands, text};
use iocurve::units::{format_mbps, format_size_figure};
use serde_json::Value;
use std::path::Path;

/// What an outcome must show: the exact figures a program reads (integers,
/// outcome words) and the figures as a person reads them.
#[derive(Default)]
struct Expect {
    machine: Vec<String>,
    human: Vec<String>,
}

/// One measuring command: its arguments, the exit code its outcome has,
/// and what that outcome must show (from its own `--json`).
struct Case {
    command: &'static str,
    args: Vec<String>,
    exit: i32,
    expect: fn(&Value) -> Expect,
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The first field of `v` among `names` (a field G may rename keeps its
/// old name in runs stored before).
fn any<'a>(v: &'a Value, names: &[&str]) -> &'a Value {
    names
        .iter()
        .map(|n| &v[*n])
        .find(|x| !x.is_null())
        .unwrap_or_else(|| panic!("none of {names:?} in {v}"))
}

fn sustain(doc: &Value) -> Expect {
    let s = &doc["sustain"];
    let d = &s["drop"];
    let at = u(&d["bytes_before_drop"]);
    let before = f(any(d, &["mb_per_s_before", "before_mb_per_s"]));
    let after = f(any(d, &["mb_per_s_after", "after_mb_per_s"]));
    Expect {
        machine: vec![at.to_string(), "drop".into()],
        human: vec![
            format_size_figure(at),
            format_mbps(before),
            format_mbps(after),
        ],
    }
}

fn surface(doc: &Value) -> Expect {
    let s = &doc["surface"];
    let samples = s["samples"].as_array().expect("samples");
    let last = samples.last().expect("a position");
    let median = f(any(s, &["median_read_mb_s", "median_read_mb_per_s"]));
    Expect {
        machine: vec![u(&last["offset"]).to_string()],
        human: vec![format!("{} positions", samples.len()), format_mbps(median)],
    }
}

fn stream(doc: &Value) -> Expect {
    let o = &doc["stream"]["outcome"];
    let done = u(&o["requests_done"]).to_string();
    let misses = u(&o["misses"]).to_string();
    Expect {
        machine: vec![done.clone(), misses.clone()],
        human: vec![done, misses],
    }
}

fn files_load(doc: &Value) -> Expect {
    let p = &doc["files_load"]["points"][0];
    Expect {
        machine: vec![u(&p["size"]).to_string()],
        human: vec![format_size_figure(u(&p["size"]))],
    }
}

/// Real files' figures vary from run to run (each format is a run of its
/// own): the sizes, which the plan fixes.
fn files_save(doc: &Value) -> Expect {
    let p = &doc["files_save"]["points"][0];
    Expect {
        machine: vec![u(&p["write_size"]).to_string()],
        human: vec![format_size_figure(u(&p["write_size"]))],
    }
}

/// The bytes copied and the bottleneck (the speeds are a real file's).
///
/// Which side is the bottleneck is a real file's too: each format is a
/// copy of its own, and two near-equal sides may swap. So the word
/// `bottleneck` (with either side after it) is what must show.
fn copy(doc: &Value) -> Expect {
    let c = &doc["copy"];
    assert!(c["bottleneck"].is_string(), "a bottleneck: {c}");
    Expect {
        machine: vec![u(&c["bytes"]).to_string(), "bottleneck".into()],
        human: vec!["bottleneck".into(), format_size_figure(u(&c["bytes"]))],
    }
}

fn endure(doc: &Value) -> Expect {
    let e = &doc["endure"];
    let first = &e["cycles"][0];
    Expect {
        machine: vec![u(&e["span"]).to_string()],
        human: vec![format_mbps(f(any(
            first,
            &["write_mb_s", "write_mb_per_s"],
        )))],
    }
}

/// A fake card of 8 GiB claimed and 2 GiB real: the verdict and the real
/// size (helper A's flash rows carry them into the table formats).
fn flash_capacity(_: &Value) -> Expect {
    Expect {
        machine: strings(&["fake", &(2u64 << 30).to_string()]),
        human: strings(&["FAKE", "2 GiB"]),
    }
}

/// A card that meets C10 (and U1, V10, A1) without `--claim`.
fn flash_class(_: &Value) -> Expect {
    Expect {
        machine: strings(&["C10"]),
        human: strings(&["C10"]),
    }
}

/// The flash tests whose figures depend on the detector: the test's name.
fn flash_other(doc: &Value) -> Expect {
    let test = doc["flash"]["test"].as_str().expect("the flash test");
    Expect {
        machine: vec![test.to_string()],
        human: vec![test.to_string()],
    }
}

/// A run of tests: the first test's name and its median.
fn tests(doc: &Value) -> Expect {
    let t = doc["tests"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["skipped"].is_null()))
        .expect("a measured test");
    let name = t["name"].as_str().expect("a name").to_string();
    Expect {
        machine: vec![name.clone()],
        human: vec![name, format_mbps(f(&t["mb_per_s"]["median"]))],
    }
}

/// Figures of real files vary from run to run (each format is a run of
/// its own): the sizes and counts, which the plan fixes.
fn curve(doc: &Value) -> Expect {
    let s = &doc["curve"]["series"][0];
    let bandwidth = f(any(&s["model"], &["bandwidth_mb_s", "bandwidth_mb_per_s"]));
    Expect {
        machine: vec![u(&s["points"][0]["size"]).to_string()],
        human: vec![format_mbps(bandwidth)],
    }
}

const SUSTAIN_CARD: &str = "sim:size=256M,cache=16M,write=10MB/s,burst=40MB/s,cmd=50us";

fn args(list: &[&str]) -> Vec<String> {
    strings(list)
}

/// Every measuring command's case; `dir` is a scratch directory, `image`
/// an image file in it.
fn cases(dir: &Path, image: &Path) -> Vec<Case> {
    let copy_to = image.with_extension("copy");
    let copy_to = copy_to.to_str().expect("a UTF-8 path").to_string();
    let dir = dir.to_str().expect("a UTF-8 path").to_string();
    let image = image.to_str().expect("a UTF-8 path").to_string();
    let card = "sim:size=64M,read=20MB/s,write=10MB/s";
    let flash = |test: &'static str, card: &str, extra: &[&str], exit, expect| Case {
        command: test,
        args: [&["flash", &test[6..], card, "--destructive"], extra]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        exit,
        expect,
    };
    vec![
        Case {
            command: "sustain",
            args: args(&["sustain", SUSTAIN_CARD, "--bytes", "40M", "--bs", "256k"]),
            exit: 0,
            expect: sustain,
        },
        Case {
            command: "surface",
            args: args(&["surface", card, "--samples", "8"]),
            exit: 0,
            expect: surface,
        },
        Case {
            command: "stream",
            args: args(&["stream", card]),
            exit: 0,
            expect: stream,
        },
        Case {
            command: "endure",
            args: args(&["endure", "sim:size=8M", "--cycles", "2", "--destructive"]),
            exit: 0,
            expect: endure,
        },
        Case {
            command: "copy",
            args: vec!["copy".into(), image, copy_to, "--destructive".into()],
            exit: 0,
            expect: copy,
        },
        Case {
            command: "files load",
            args: vec!["files".into(), "load".into(), dir.clone()],
            exit: 0,
            expect: files_load,
        },
        Case {
            command: "files save",
            args: vec!["files".into(), "save".into(), dir],
            exit: 0,
            expect: files_save,
        },
        Case {
            command: "run",
            args: args(&["run", card, "--time", "200ms"]),
            exit: 0,
            expect: tests,
        },
        Case {
            command: "profile",
            args: args(&["profile", card, "--time", "100ms", "--repeat", "1"]),
            exit: 0,
            expect: tests,
        },
        Case {
            command: "curve",
            args: args(&["curve", card, "--destructive"]),
            exit: 0,
            expect: curve,
        },
        flash(
            "flash capacity",
            "sim:size=8G,real=2G",
            &[],
            5,
            flash_capacity,
        ),
        flash(
            "flash class",
            "sim:size=8G,write=12MB/s,cache=64M",
            &[],
            0,
            flash_class,
        ),
        flash("flash align", card, &[], 0, flash_other),
        flash("flash open-au", card, &[], 0, flash_other),
        flash("flash cache", card, &[], 0, flash_other),
    ]
}

/// How one format is asked for and read back.
#[derive(Clone, Copy, Debug)]
enum Format {
    Text,
    Json,
    JsonLines,
    Csv,
    Markdown,
    Html,
    ExportJson,
    ExportCsv,
    ExportMarkdown,
    History,
    List,
    Compare,
}

impl Format {
    /// Whether a program reads it (exact figures) or a person (figures
    /// in words and units).
    fn machine(self) -> bool {
        matches!(
            self,
            Format::Json | Format::JsonLines | Format::Csv | Format::ExportJson | Format::ExportCsv
        )
    }
}

/// Whether the command (`flash capacity`) has the option `--long`.
fn offers(command: &str, long: &str) -> bool {
    use clap::CommandFactory;
    let mut cmd = iocurve::cli::Cli::command();
    for name in command.split(' ') {
        cmd = cmd.find_subcommand(name).expect("a subcommand").clone();
    }
    cmd.get_arguments().any(|a| a.get_long() == Some(long))
}

/// Runs `args` with `extra`; its stdout, or why it failed.
fn output(args: &[String], extra: &[&str], exit: i32) -> Result<(String, String), String> {
    let out = iocurve()
        .args(args)
        .args(extra)
        .output()
        .expect("the command runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    match out.status.code() == Some(exit) {
        true => Ok((stdout, stderr)),
        false => Err(format!(
            "exit {:?}, not {exit}: {}",
            out.status.code(),
            stderr.lines().last().unwrap_or("")
        )),
    }
}

/// The run number in `saved as run N`.
fn saved_run(stderr: &str) -> Option<String> {
    let at = stderr.find("saved as run ")? + "saved as run ".len();
    Some(stderr[at..].split_whitespace().next()?.to_string())
}

/// Every format of one case, with the stored run's formats from the run
/// the text format saved; each miss as one line.
fn walk(case: &Case, db: &str, scratch: &Path, misses: &mut Vec<String>) {
    let db_args = ["--db", db];
    let doc = match output(&case.args, &["--json", "--no-save"], case.exit) {
        Ok((out, _)) => serde_json::from_str::<Value>(&out).unwrap_or(Value::Null),
        Err(e) => return misses.push(format!("{}: --json: {e}", case.command)),
    };
    let expect = (case.expect)(&doc);
    let mut texts: Vec<(Format, Result<String, String>)> = Vec::new();
    let text_run = output(&case.args, &db_args, case.exit);
    let run = text_run.as_ref().ok().and_then(|(_, e)| saved_run(e));
    texts.push((Format::Text, text_run.map(|(o, _)| o)));
    texts.push((Format::Json, Ok(doc.to_string())));
    for (format, flag) in [
        (Format::JsonLines, "--json-lines"),
        (Format::Csv, "--csv"),
        (Format::Markdown, "--markdown"),
    ] {
        if !offers(case.command, &flag[2..]) {
            continue;
        }
        let out = output(&case.args, &[flag, "--no-save"], case.exit);
        texts.push((format, out.map(|(o, _)| o)));
    }
    stored_formats(run.as_deref(), db, scratch, &mut texts);
    for (format, got) in texts {
        let needles = match format.machine() {
            true => &expect.machine,
            false => &expect.human,
        };
        match got {
            Err(e) => misses.push(format!("{}: {format:?}: {e}", case.command)),
            Ok(t) => {
                // A person's formats may set a lower-case word in capitals
                // (`BOTTLENECK`); a needle with a capital (`FAKE`, `C10`,
                // `2 GiB`) and a program's formats keep their case.
                let shown = |n: &str| match format.machine() || n.chars().any(char::is_uppercase) {
                    true => t.contains(n),
                    false => t.to_lowercase().contains(n),
                };
                for n in needles.iter().filter(|n| !shown(n)) {
                    misses.push(format!("{}: {format:?} lacks {n:?}", case.command));
                }
            }
        }
    }
}

/// The formats of a stored run: its exports, `history`, `list`, and
/// `compare` of the run with itself.
fn stored_formats(
    run: Option<&str>,
    db: &str,
    scratch: &Path,
    texts: &mut Vec<(Format, Result<String, String>)>,
) {
    let Some(run) = run else {
        texts.push((Format::History, Err("no run saved".into())));
        return;
    };
    let stored = |args: &[&str]| output(&strings(args), &["--db", db], 0).map(|(o, _)| o);
    for (format, name) in [
        (Format::ExportJson, "json"),
        (Format::ExportCsv, "csv"),
        (Format::ExportMarkdown, "markdown"),
    ] {
        texts.push((format, stored(&["export", run, "--format", name])));
    }
    let html = scratch.join(format!("run-{run}.html"));
    let html_arg = html.to_str().expect("UTF-8");
    let page = stored(&["report", run, "-o", html_arg])
        .and_then(|_| std::fs::read_to_string(&html).map_err(|e| e.to_string()));
    texts.push((Format::Html, page));
    texts.push((Format::History, stored(&["history"])));
    texts.push((Format::List, stored(&["list"])));
    texts.push((Format::Compare, stored(&["compare", run, run])));
}

/// A scratch directory on a file system that holds files (not tmpfs,
/// where `files load` cannot evict), with a 4 MiB image in it.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a scratch directory");
    let image: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("image.img"), image).expect("the image");
    dir
}

#[test]
fn every_command_shows_its_outcome_in_every_format() {
    let measuring = leaf_commands(|c| c.get_arguments().any(|a| a.get_id() == "csv"))
        .into_iter()
        .filter(|c| !matches!(c.as_str(), "compare" | "export" | "import"))
        .collect::<std::collections::BTreeSet<_>>();
    let dir = scratch();
    let work = dir.path().join("files");
    std::fs::create_dir(&work).expect("the files directory");
    let all = cases(&work, &dir.path().join("image.img"));
    let covered: std::collections::BTreeSet<String> =
        all.iter().map(|c| c.command.to_string()).collect();
    let forgotten: Vec<_> = measuring.difference(&covered).collect();
    assert!(
        forgotten.is_empty(),
        "commands without a case: {forgotten:?}"
    );
    let only = std::env::var("IOCURVE_EVERY_OUTPUT").unwrap_or_default();
    let db = dir.path().join("results.db");
    let db = db.to_str().expect("UTF-8");
    let mut misses = Vec::new();
    for case in all
        .iter()
        .filter(|c| only.is_empty() || only.split(',').any(|o| o == c.command))
    {
        walk(case, db, dir.path(), &mut misses);
    }
    assert!(
        misses.is_empty(),
        "{} misses:\n{}",
        misses.len(),
        misses.join("\n")
    );
}
