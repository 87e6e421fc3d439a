//! One naming rule for every JSON key (README, "JSON naming"): snake_case,
//! names of a closed set as values and never as keys, and a figure's unit
//! in one suffix per unit (`_bytes`, `_ns`, `_s`, `_mb_per_s`, `_iops`,
//! `_pct`, `_ratio`, `_ppb`). Every command that offers `--json` or `--json-lines`
//! (found by walking the clap definition) is run on a simulated card or a
//! temporary directory and every key it prints is checked; so is every
//! property name of the shipped schemas, which name the keys a reader may
//! meet in documents not made here.

use crate::common;
use crate::json_schema::{case, offering, run_in};

use serde_json::Value;
use std::path::Path;

/// Words naming a unit the rule does not use (times in ms or µs, sizes in
/// KiB or MiB, percent spelled out, bits).
const FOREIGN_UNITS: [&str; 16] = [
    "ms", "us", "usec", "msec", "sec", "secs", "seconds", "kb", "kib", "mib", "gib", "percent",
    "mbit", "kbit", "gbit", "bps",
];

/// Why `key` breaks the rule, or `None` when it follows it.
fn breaks_rule(key: &str) -> Option<&'static str> {
    let snake = !key.is_empty()
        && key.starts_with(|c: char| c.is_ascii_lowercase())
        && key.split('_').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        });
    if !snake {
        return Some("not snake_case");
    }
    let words: Vec<&str> = key.split('_').collect();
    if words.iter().any(|w| FOREIGN_UNITS.contains(w)) {
        return Some("a unit outside the rule's suffixes");
    }
    // MB/s only as the whole suffix `mb_per_s`, at the end: not `mb_s`,
    // `mb` or `mb_per_s_before`; and no other rate (`bytes_per_s`).
    for (i, w) in words.iter().enumerate() {
        let at_end_as_mb_per_s = words.len() >= i + 3 && words[i..] == ["mb", "per", "s"];
        if *w == "mb" && !at_end_as_mb_per_s {
            return Some("MB/s not written as the suffix `_mb_per_s`");
        }
        let rate = *w == "per" && words.get(i + 1) == Some(&"s");
        if rate && (i == 0 || words[i - 1] != "mb") {
            return Some("a rate other than `_mb_per_s`");
        }
    }
    if matches!(words.last(), Some(&("gb" | "tb"))) {
        return Some("a size not in bytes");
    }
    None
}

/// Every key of `v` that breaks the rule, as `path: why`.
fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let here = format!("{path}.{k}");
                if let Some(why) = breaks_rule(k) {
                    out.push(format!("{here}: {why}"));
                }
                walk(x, &here, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                walk(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

/// Every property name a schema declares (under `properties`, at any
/// depth) that breaks the rule. Definition names (`$defs`) are type names,
/// not keys of a document.
fn walk_schema(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for k in props.keys() {
                    if let Some(why) = breaks_rule(k) {
                        out.push(format!("{path}.properties.{k}: {why}"));
                    }
                }
            }
            for (k, x) in map {
                walk_schema(x, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| walk_schema(x, path, out)),
        _ => {}
    }
}

/// One line per distinct offence: a key repeated in every test row (its
/// path names no position) or on every JSON line counts once.
fn distinct(mut found: Vec<String>) -> Vec<String> {
    found.sort();
    found.dedup();
    found
}

#[test]
fn the_rule_itself() {
    for good in [
        "mb_per_s",
        "read_mb_per_s",
        "p99_ns",
        "elapsed_ns",
        "wall_s",
        "t0_s",
        "size_bytes",
        "n90_bytes",
        "iops",
        "achieved_pct",
        "cpu_per_gb_s",
        "schema_version",
        "r_squared",
    ] {
        assert_eq!(breaks_rule(good), None, "{good}");
    }
    for bad in [
        "SeqWrite",
        "needMet",
        "t0_us",
        "busy_ms",
        "mb_s",
        "before_mb_s",
        "mb_per_s_before",
        "rate_bytes_per_s",
        "threshold_percent",
        "max_sectors_kb",
        "link_mbit_s",
        "size_gb",
        "drift_ns_per_s",
        "",
    ] {
        assert!(breaks_rule(bad).is_some(), "{bad}");
    }
}

/// Runs every `--json` and `--json-lines` command; the keys that break
/// the rule, each once, with the command that printed it.
fn offences_in_outputs(dir: &Path) -> Vec<String> {
    // Two stored runs first, for compare and export.
    for _ in 0..2 {
        let (args, _) = case("run", dir);
        let (code, _, err) = run_in(dir, &args, &["--seed", "1"]);
        assert_eq!(code, 0, "{err}");
    }
    let mut found = Vec::new();
    for (flag, names) in [
        ("json", offering("json")),
        ("json-lines", offering("json-lines")),
    ] {
        for name in names {
            if name.starts_with("files") && !common::is_root() {
                common::skipped("files load/save drop the page cache, which needs root");
                continue;
            }
            let (args, _) = case(&name, dir);
            let (code, out, err) = run_in(dir, &args, &[&format!("--{flag}")]);
            assert!(
                [0, 5].contains(&code),
                "{name} --{flag}: exit {code}: {err}"
            );
            let docs: Vec<&str> = match flag {
                "json" => vec![out.as_str()],
                _ => out.lines().collect(),
            };
            for text in docs {
                let doc: Value = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("{name} --{flag}: {e}: {text}"));
                let mut here = Vec::new();
                walk(&doc, "", &mut here);
                found.extend(here.into_iter().map(|o| format!("{name} --{flag}: {o}")));
            }
        }
    }
    distinct(found)
}

#[test]
fn every_key_every_command_prints_follows_the_naming_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let found = offences_in_outputs(tmp.path());
    assert!(
        found.is_empty(),
        "{} keys break the JSON naming rule (README, \"JSON naming\"):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn every_property_of_the_shipped_schemas_follows_the_naming_rule() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    let mut found = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        files += 1;
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        walk_schema(&schema, &name, &mut found);
    }
    assert!(files >= 6, "{files} schema files in schema/");
    let found = distinct(found);
    assert!(
        found.is_empty(),
        "{} schema properties break the JSON naming rule:\n{}",
        found.len(),
        found.join("\n")
    );
}
