//! The JSON contract: every command that offers `--json` or `--json-lines`
//! (found by walking the clap definition, so a new command fails here until
//! it is given a case or a reason) is run on a simulated card or a
//! temporary directory, with short settings, and what it prints is
//! validated against the schema shipped in schema/. Every JSON line
//! carries `type`, and a seed is a string that repeats the run.

use crate::common;

use common::{iocurve, text};
use serde_json::Value;
use std::path::Path;

const CARD: &str = "sim:size=256M,write=20MB/s,read=40MB/s,cmd=100us";

/// Which shipped schema a command's `--json` document follows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Doc {
    Result,
    Compare,
    Probe,
    List,
    History,
}

impl Doc {
    fn file(self) -> &'static str {
        match self {
            Doc::Result => "iocurve-result.schema.json",
            Doc::Compare => "iocurve-compare.schema.json",
            Doc::Probe => "iocurve-probe.schema.json",
            Doc::List => "iocurve-list.schema.json",
            Doc::History => "iocurve-history.schema.json",
        }
    }
}

/// Commands with `--json` whose document has no schema yet, and why.
const NO_SCHEMA: [(&str, &str); 0] = [];

/// The commands that offer `flag`.
pub(crate) fn offering(flag: &str) -> Vec<String> {
    crate::output_flags::leaves()
        .into_iter()
        .filter(|(_, cmd)| cmd.get_arguments().any(|a| a.get_long() == Some(flag)))
        .map(|(name, _)| name)
        .collect()
}

/// A short run of command `name` on a simulated card or in `dir`, its
/// results kept in `dir/r.db`, and the schema its `--json` follows.
pub(crate) fn case(name: &str, dir: &Path) -> (Vec<String>, Doc) {
    let d = dir.to_str().unwrap();
    let words: &[&str] = match name {
        "run" => &["run", CARD, "--bs", "64k", "--time", "100ms", "--ramp", "0"],
        "profile" => &[
            "profile", CARD, "--time", "100ms", "--repeat", "1", "--size", "16M",
        ],
        "curve" => &[
            "curve", CARD, "--rw", "read", "--sizes", "4k,64k", "--time", "100ms", "--repeat", "1",
        ],
        "stream" => &["stream", CARD, "--time", "500ms"],
        "sustain" => &["sustain", CARD, "--bytes", "8M", "--destructive"],
        "surface" => &["surface", CARD, "--samples", "4"],
        "endure" => &["endure", "sim:size=8M", "--cycles", "1", "--destructive"],
        "copy" => {
            let src = dir.join("image.bin");
            std::fs::write(&src, vec![0x5a; 1 << 20]).unwrap();
            let args = vec![
                "copy".to_string(),
                src.to_str().unwrap().into(),
                format!("{d}/copy.bin"),
                "--bs".into(),
                "256k".into(),
            ];
            return (with_db(args, d), Doc::Result);
        }
        "files load" => &["files", "load", d, "--sizes", "4k", "--count", "2"],
        "files save" => &["files", "save", d, "--size", "64k", "--sizes", "4096,512"],
        "flash align" => &["flash", "align", "sim:size=64M"],
        "flash open-au" => &["flash", "open-au", "sim:size=256M,au=4M"],
        "flash cache" => &["flash", "cache", "sim:size=256M,cache=16M"],
        "flash capacity" => &["flash", "capacity", "sim:size=64M", "--seed", "1"],
        "flash class" => &["flash", "class", "sim:size=256M", "--seed", "1"],
        "export" => &["export", "1"],
        "compare" => {
            return (with_db(strings(&["compare", "1", "2"]), d), Doc::Compare);
        }
        "probe" => return (strings(&["probe", d]), Doc::Probe),
        "list" => return (with_db(strings(&["list"]), d), Doc::List),
        "history" => return (with_db(strings(&["history"]), d), Doc::History),
        other => {
            panic!("{other} offers --json but has no case here: add one, or a reason to NO_SCHEMA")
        }
    };
    (with_db(strings(words), d), Doc::Result)
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn with_db(mut args: Vec<String>, dir: &str) -> Vec<String> {
    args.extend(["--db".into(), format!("{dir}/r.db")]);
    args
}

/// A shipped schema, checked by an external validator (the Python
/// `jsonschema` package, through `tests/support/validate_json.py`), one
/// document per line.
pub(crate) struct Validator {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

/// A Python 3 that has the `jsonschema` package, or why there is none.
fn python_with_jsonschema() -> Result<&'static str, String> {
    ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|py| {
            std::process::Command::new(py)
                .args(["-c", "import jsonschema"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .ok_or_else(|| {
            "no python3 with the jsonschema package (apt install python3-jsonschema)".into()
        })
}

/// The shipped schema `file`, loaded by the validator; why not, where no
/// validator is installed.
fn validator(file: &str) -> Result<Validator, String> {
    use std::process::Stdio;
    let python = python_with_jsonschema()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = std::process::Command::new(python)
        .arg(root.join("tests/support/validate_json.py"))
        .arg(root.join("schema").join(file))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{python}: {e}"))?;
    let input = child.stdin.take().unwrap();
    let output = std::io::BufReader::new(child.stdout.take().unwrap());
    Ok(Validator {
        child,
        input,
        output,
    })
}

impl Validator {
    /// Where and how `doc` breaks the schema (the first ten places).
    fn errors(&mut self, doc: &Value) -> Vec<String> {
        use std::io::{BufRead, Write};
        writeln!(self.input, "{doc}").expect("the validator reads");
        let mut line = String::new();
        self.output
            .read_line(&mut line)
            .expect("the validator answers");
        let found: Vec<Value> = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the validator said {line:?}: {e}"));
        found
            .iter()
            .map(|e| format!("  at {}: {}", e["at"], e["error"]))
            .collect()
    }

    fn is_valid(&mut self, doc: &Value) -> bool {
        self.errors(doc).is_empty()
    }
}

impl Drop for Validator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fails naming every place `doc` breaks the schema.
fn assert_valid(v: &mut Validator, doc: &Value, what: &str) {
    let errors = v.errors(doc);
    assert!(
        errors.is_empty(),
        "{what} breaks the schema:\n{}",
        errors.join("\n")
    );
}

/// The schema is a contract, not a formality: a seed written as a number,
/// a missing `tests` or an unknown `command` breaks it.
fn refuses_a_broken_copy(v: &mut Validator, doc: &Value, name: &str) {
    let mut broken = doc.clone();
    broken.as_object_mut().unwrap().remove("tests");
    assert!(!v.is_valid(&broken), "{name}: valid without tests");
    let mut broken = doc.clone();
    broken["command"] = "no such command".into();
    assert!(
        !v.is_valid(&broken),
        "{name}: valid with an unknown command"
    );
    if let Some(w) = doc["tests"].get(0).map(|t| &t["workload"]) {
        let mut broken = doc.clone();
        broken["tests"][0]["workload"]["seed"] = w["seed"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(1)
            .into();
        assert!(!v.is_valid(&broken), "{name}: valid with a numeric seed");
    }
}

/// Runs `args` plus `extra` in `dir`: exit code, stdout, stderr.
pub(crate) fn run_in(dir: &Path, args: &[String], extra: &[&str]) -> (i32, String, String) {
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

/// Every seed in a result document: strings of digits.
fn seeds(doc: &Value, out: &mut Vec<Value>) {
    match doc {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "seed" {
                    out.push(v.clone());
                }
                seeds(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| seeds(v, out)),
        _ => {}
    }
}

#[test]
fn every_json_document_follows_its_shipped_schema() {
    let validators: Result<Vec<(Doc, Validator)>, String> = [
        Doc::Result,
        Doc::Compare,
        Doc::Probe,
        Doc::List,
        Doc::History,
    ]
    .into_iter()
    .map(|d| validator(d.file()).map(|v| (d, v)))
    .collect();
    let mut validators = match validators {
        Ok(v) => v,
        Err(why) => return common::skipped(&why),
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Two stored runs first, for compare and export.
    for _ in 0..2 {
        let (args, _) = case("run", dir);
        let (code, _, err) = run_in(dir, &args, &["--seed", "1"]);
        assert_eq!(code, 0, "{err}");
    }
    let mut checked = Vec::new();
    for name in offering("json") {
        if let Some((_, why)) = NO_SCHEMA.iter().find(|(n, _)| *n == name) {
            eprintln!("{name} --json: not validated: {why}");
            continue;
        }
        if name.starts_with("files") && !common::is_root() {
            common::skipped("files load/save drop the page cache, which needs root");
            continue;
        }
        let (args, doc) = case(&name, dir);
        let (code, out, err) = run_in(dir, &args, &["--json"]);
        // 5: a flash test found the card wanting; its document is whole.
        assert!([0, 5].contains(&code), "{name} --json: exit {code}: {err}");
        let value: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name} --json: {e}: {out}"));
        let v = &mut validators.iter_mut().find(|(d, _)| *d == doc).unwrap().1;
        assert_valid(v, &value, &format!("{name} --json"));
        if doc == Doc::Result {
            assert_eq!(value["schema_version"], 5, "{name}");
            refuses_a_broken_copy(v, &value, &name);
            let mut found = Vec::new();
            seeds(&value, &mut found);
            for s in found {
                assert!(
                    s.as_str()
                        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())),
                    "{name}: a seed that is not a string of digits: {s}"
                );
            }
        }
        checked.push(name);
    }
    // 15 measuring commands, export, compare, probe, list, history (files
    // need root).
    let expected = if common::is_root() { 20 } else { 18 };
    assert_eq!(checked.len(), expected, "{checked:?}");
}

#[test]
fn every_json_line_has_a_type_and_follows_the_lines_schema() {
    let mut v = match validator("iocurve-json-lines.schema.json") {
        Ok(v) => v,
        Err(why) => return common::skipped(&why),
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let live = offering("json-lines");
    assert!(live.len() >= 5, "{live:?}");
    for name in live {
        let (args, _) = case(&name, dir);
        let (code, out, err) = run_in(dir, &args, &["--json-lines"]);
        assert_eq!(code, 0, "{name} --json-lines: {err}");
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
            .collect();
        let types: Vec<&str> = lines
            .iter()
            .map(|l| {
                l["type"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{name}: a line without type: {l}"))
            })
            .collect();
        assert_eq!(types.first(), Some(&"start"), "{name}: {types:?}");
        assert_eq!(types.last(), Some(&"result"), "{name}: {types:?}");
        assert!(
            types[1..types.len() - 1].iter().all(|t| *t == "interval"),
            "{name}: {types:?}"
        );
        for (i, line) in lines.iter().enumerate() {
            assert_valid(&mut v, line, &format!("{name} --json-lines line {}", i + 1));
        }
        // Without its tag, or with another, no line is valid.
        for line in &lines {
            let mut untagged = line.clone();
            untagged.as_object_mut().unwrap().remove("type");
            assert!(!v.is_valid(&untagged), "{name}: valid without type");
            let mut retagged = line.clone();
            retagged["type"] = "unknown".into();
            assert!(!v.is_valid(&retagged), "{name}: valid with type unknown");
        }
        // The tag comes first, as a reader scanning the line expects.
        for l in out.lines() {
            assert!(l.starts_with(r#"{"type":""#), "{name}: {l}");
        }
    }
}

/// A run's own JSON repeats it: the seed it records, passed back with
/// `--seed`, gives the same figures on the simulated card's clock.
#[test]
fn the_seed_a_run_records_repeats_it() {
    let args = |seed: Option<&str>| {
        let mut a = vec![
            "run",
            CARD,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--time",
            "200ms",
            "--ramp",
            "0",
            "--json",
            "--no-save",
        ];
        if let Some(s) = seed {
            a.extend(["--seed", s]);
        }
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let first: Value = serde_json::from_slice(&common::run_ok(args(None)).stdout).unwrap();
    let seed = first["tests"][0]["workload"]["seed"]
        .as_str()
        .expect("the seed is a string")
        .to_string();
    // A seed from the clock is far above 2^53, where a double rounds.
    assert!(seed.parse::<u64>().unwrap() > 1 << 53, "{seed}");
    let again: Value = serde_json::from_slice(&common::run_ok(args(Some(&seed))).stdout).unwrap();
    assert_eq!(again["tests"][0]["workload"]["seed"], seed.as_str());
    let ops = |d: &Value| d["tests"][0]["repetitions"][0]["ops"].clone();
    assert_eq!(ops(&again), ops(&first), "same seed, same run");
}
