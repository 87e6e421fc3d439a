//! Real fio documents, mutated: whatever a foreign document holds, the
//! import ends without a panic, in time linear in its size, and either
//! stores figures in range or refuses it with one short line.

use super::parse;
use crate::result::{Measurement, RunResult};
use proptest::prelude::*;
use serde_json::Value;

/// Output of fio 3.33: two jobs with their own options; a mixed job run
/// twice (`numjobs=2`, so one name twice) beside a write job; global
/// options with group reporting.
const FIXTURES: [&str; 3] = [
    include_str!("../../../tests/fixtures/fio-3.33-seqread-randwrite.json"),
    include_str!("../../../tests/fixtures/fio-3.33-randrw-numjobs2.json"),
    include_str!("../../../tests/fixtures/fio-3.33-global-options.json"),
];

/// One step from a value to one of its children.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// What happens to the value at a path, as JSON text: replaced, deleted,
/// or kept and followed by a second entry of the same key (or a second
/// element) holding the replacement, the one a reader keeps.
#[derive(Debug, Clone)]
enum Edit {
    Replace(String),
    Delete,
    Duplicate(String),
}

/// Every path in the document that the import may read: the top-level
/// fields and everything in the jobs (not the disk figures, which it
/// ignores).
fn paths(doc: &Value) -> Vec<Vec<Step>> {
    fn walk(v: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        let children: Vec<(Step, &Value)> = match v {
            Value::Object(map) => map.iter().map(|(k, c)| (Step::Key(k.clone()), c)).collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, c)| (Step::Index(i), c))
                .collect(),
            _ => Vec::new(),
        };
        for (step, child) in children {
            if here.is_empty() && step == Step::Key("disk_util".into()) {
                continue;
            }
            here.push(step);
            out.push(here.clone());
            walk(child, here, out);
            here.pop();
        }
    }
    let mut out = Vec::new();
    walk(doc, &mut Vec::new(), &mut out);
    out
}

/// `v` as JSON text with `edits` applied (at most one per path).
fn write(v: &Value, here: &mut Vec<Step>, edits: &[(Vec<Step>, Edit)], out: &mut String) {
    let edit = |here: &Vec<Step>| edits.iter().find(|(p, _)| p == here).map(|(_, e)| e);
    let mut entry = |step: Step, key: Option<&str>, child: &Value, out: &mut String| {
        here.push(step);
        let prefix = key.map_or(String::new(), |k| format!("{}:", Value::from(k)));
        let emit = |out: &mut String, text: &str| {
            if !out.ends_with(['{', '[']) {
                out.push(',');
            }
            out.push_str(&prefix);
            out.push_str(text);
        };
        match edit(here) {
            Some(Edit::Delete) => {}
            Some(Edit::Replace(raw)) => emit(out, raw),
            other => {
                let mut own = String::new();
                write(child, here, edits, &mut own);
                emit(out, &own);
                if let Some(Edit::Duplicate(raw)) = other {
                    emit(out, raw);
                }
            }
        }
        here.pop();
    };
    match v {
        Value::Object(map) => {
            out.push('{');
            for (k, child) in map {
                entry(Step::Key(k.clone()), Some(k), child, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, child) in items.iter().enumerate() {
                entry(Step::Index(i), None, child, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// JSON texts that break a field: numbers out of every range, numbers
/// fio writes as strings, other types, deep nesting, long strings, and
/// text that is not JSON at all.
fn hostile_value() -> impl Strategy<Value = String> {
    let fixed: Vec<String> = [
        "-1",
        "0",
        "1",
        "-0",
        "0.5",
        "1e300",
        "-1e300",
        "1e400",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "4611686018427387905",
        "1000000000001",
        "253402300800",
        "\"NaN\"",
        "\"Infinity\"",
        "\"-1\"",
        "\"0\"",
        "\"1e300\"",
        "\"4k,64k\"",
        "\"\"",
        "NaN",
        "null",
        "true",
        "[]",
        "{}",
        "[1,2]",
        "{\"a\":1}",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("\"{}\"", "x".repeat(100_000)),
        format!("{}{}", "[".repeat(100), "]".repeat(100)),
        format!("{}{}", "[".repeat(300), "]".repeat(300)),
        format!("{}1{}", "{\"a\":".repeat(120), "}".repeat(120)),
    ])
    .collect();
    prop_oneof![
        4 => proptest::sample::select(fixed),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_map(|x| serde_json::Number::from_f64(x).map_or("null".into(), |n| n.to_string())),
        1 => "\\PC{0,24}".prop_map(|s| Value::from(s).to_string()),
        1 => (0u64..1 << 40).prop_map(|n| format!("\"{n}\"")),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => hostile_value().prop_map(Edit::Replace),
        1 => Just(Edit::Delete),
        1 => hostile_value().prop_map(Edit::Duplicate),
    ]
}

/// Figures of one measurement are in range: rates finite, not negative,
/// and a measurement that moved bytes took time.
fn assert_measurement_in_range(m: &Measurement) {
    for x in [
        m.mb_per_s,
        m.mib_per_s,
        m.iops,
        m.cpu.user_s,
        m.cpu.system_s,
        m.cpu.cpu_s_per_gb,
    ] {
        assert!(x.is_finite() && x >= 0.0, "{x} in {m:?}");
    }
    assert!(m.bytes == 0 || m.elapsed_ns > 0, "{m:?}");
    for d in m.read.iter().chain(m.write.iter()) {
        assert!(d.bytes > 0 && d.mb_per_s.is_finite() && d.iops.is_finite());
        assert!(d.mb_per_s >= 0.0 && d.iops >= 0.0);
        let l = &d.latency;
        assert!(l.mean_ns.is_finite() && l.mean_ns >= 0.0 && l.stddev_ns.is_finite());
        assert!(l.count == 0 || l.min_ns <= l.max_ns, "{l:?}");
        let given: Vec<u64> = [l.p50_ns, l.p90_ns, l.p99_ns, l.p99_9_ns, l.p99_99_ns]
            .into_iter()
            .filter(|p| *p > 0)
            .collect();
        assert!(given.windows(2).all(|w| w[0] <= w[1]), "{l:?}");
    }
}

fn assert_in_range(r: &RunResult) {
    assert!(
        humantime::parse_rfc3339(&r.started_at).is_ok(),
        "{}",
        r.started_at
    );
    let mut names = std::collections::HashSet::new();
    for t in &r.tests {
        assert!(names.insert(t.name.as_str()), "{} twice", t.name);
        let w = &t.workload;
        assert!(
            w.block_size >= 1 && w.queue_depth >= 1 && w.threads >= 1,
            "{w:?}"
        );
        assert!(w.mix_read_percent.is_none_or(|p| p <= 100));
        t.repetitions.iter().for_each(assert_measurement_in_range);
    }
    serde_json::to_string(r).expect("a stored run serializes");
}

/// CPU time this thread has used: what a run of the parser costs, apart
/// from whatever else the machine does meanwhile.
fn thread_cpu() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The least CPU time of three parses of `text`.
fn cost(text: &str) -> std::time::Duration {
    (0..3)
        .map(|_| {
            let start = thread_cpu();
            let _ = parse(text);
            thread_cpu() - start
        })
        .min()
        .unwrap()
}

/// A document of `n` jobs, all with one name (the case where naming
/// repeats costs most), each with only the figures an import needs, so
/// that the cost per job, not the JSON parser's per byte, is measured.
fn document_of(n: usize) -> String {
    let job = serde_json::json!({
        "jobname": "seqread",
        "job options": {"rw": "read", "bs": "1M"},
        "read": {"io_bytes": 1048576, "runtime": 1, "total_ios": 1, "bw_bytes": 1e9, "iops": 1000.0},
    });
    let jobs: Vec<Value> = (0..n).map(|_| job.clone()).collect();
    serde_json::json!({"fio version": "fio-3.33", "timestamp": 1795339207, "jobs": jobs})
        .to_string()
}

/// Ten times the jobs costs about ten times as much, not a hundred: no
/// job is compared with every other. Thread CPU time, each the least of
/// three runs, with a margin of three over linear: a ratio, not a timing
/// target.
#[test]
fn the_cost_grows_linearly_with_the_jobs() {
    let (small, large) = (document_of(300), document_of(3000));
    assert_eq!(parse(&large).unwrap().tests.len(), 3000);
    let (a, b) = (cost(&small), cost(&large));
    assert!(
        b.as_secs_f64() < 30.0 * a.as_secs_f64().max(1e-4),
        "300 jobs: {a:?}, 3000 jobs: {b:?}"
    );
}

#[test]
fn more_jobs_than_fio_runs_are_refused() {
    let err = parse(&document_of(4097)).unwrap_err().to_string();
    assert_eq!(
        err,
        "fio JSON: \"jobs\" is 4097 jobs; fio runs at most 4096 jobs"
    );
}

#[test]
fn every_fixture_reads_in_range() {
    for text in FIXTURES {
        assert_in_range(&parse(text).unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Up to four edits anywhere in a real document: Ok with every figure
    /// in range, or one short line saying what is wrong.
    #[test]
    fn a_mutated_document_is_read_in_range_or_refused_in_one_line(
        fixture in 0..FIXTURES.len(),
        picks in proptest::collection::vec((any::<proptest::sample::Index>(), edit()), 1..=4),
    ) {
        let doc: Value = serde_json::from_str(FIXTURES[fixture]).unwrap();
        let all = paths(&doc);
        let mut edits: Vec<(Vec<super::fuzz::Step>, Edit)> = Vec::new();
        for (index, edit) in picks {
            let path = index.get(&all).clone();
            if !edits.iter().any(|(p, _)| *p == path) {
                edits.push((path, edit));
            }
        }
        let mut text = String::new();
        write(&doc, &mut Vec::new(), &edits, &mut text);
        match parse(&text) {
            Ok(run) => assert_in_range(&run),
            Err(e) => {
                let line = format!("{e:#}");
                prop_assert!(!line.is_empty() && line.len() < 400, "{line}");
                prop_assert!(!line.contains(['\n', '\r']), "{line:?}");
            }
        }
    }
}

#[test]
fn an_unedited_document_writes_back_as_it_was() {
    for text in FIXTURES {
        let doc: Value = serde_json::from_str(text).unwrap();
        let mut out = String::new();
        write(&doc, &mut Vec::new(), &[], &mut out);
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), doc);
    }
}

#[test]
fn the_user_reported_documents_are_refused_by_name() {
    let mut doc: Value = serde_json::from_str(FIXTURES[0]).unwrap();
    let refusal = |doc: &Value| parse(&doc.to_string()).unwrap_err().to_string();
    let original = doc.clone();
    doc["timestamp"] = 1e300.into();
    assert_eq!(
        refusal(&doc),
        "fio JSON: \"timestamp\" is 1e+300; fio writes the start time as whole seconds since 1970, before the year 10000"
    );
    doc = original.clone();
    doc["jobs"][0]["job options"]["bs"] = "0".into();
    assert_eq!(
        refusal(&doc),
        "fio JSON job 'seqread': \"bs\" is 0; a block size must be at least 1 byte"
    );
    doc = original.clone();
    doc["jobs"][0]["read"]["io_bytes"] = (-1).into();
    assert!(refusal(&doc).starts_with("fio JSON job 'seqread': \"read.io_bytes\" is -1; "));
    doc = original;
    doc["jobs"][0]["read"]["runtime"] = 0.into();
    assert_eq!(
        refusal(&doc),
        "fio JSON job 'seqread': \"read.runtime\" is 0; a job that moved bytes took time: fio's runtime is at least 1 ms"
    );
}

#[test]
fn fio_spellings_of_a_block_size_are_read() {
    for (text, bytes) in [
        ("4k", 4096),
        ("4kb", 4096),
        ("4KiB", 4096),
        ("1m", 1 << 20),
        ("4k,64k", 4096),
        (",64k", 65536),
        ("512", 512),
    ] {
        assert_eq!(super::fields::fio_size(text).ok(), Some(bytes), "{text}");
    }
    assert!(super::fields::fio_size("4q").is_err());
}
