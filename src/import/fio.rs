//! fio's JSON output (`fio --output-format=json`) as a [`RunResult`].
//!
//! Each fio job becomes one test measured once (fio has no repetitions of
//! its own; a repeated job name gets a `#2` suffix). Bandwidth, IOPS,
//! bytes, runtime, completion-latency percentiles and CPU share are taken
//! as fio reported them; nothing is recomputed. A mixed job keeps its read
//! and write figures apart. The device is not in fio's output: the caller
//! probes it when it is known.

use crate::result::{
    CpuUsage, DirectionResult, HostInfo, Measurement, Payload, RampInfo, RunResult, TestEngine,
    TestResult, TestRw, WorkloadInfo,
};
use crate::result::{TargetInfo, TargetKind};
use crate::stats::{LatencySummary, Spread};
use crate::vocab::options::IoMode;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::time::{Duration, UNIX_EPOCH};

/// The options of a job: the global ones overridden by its own.
fn options(doc: &Value, job: &Value) -> serde_json::Map<String, Value> {
    let mut opts = doc["global options"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(own) = job["job options"].as_object() {
        opts.extend(own.clone());
    }
    opts
}

fn opt<'a>(opts: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a str> {
    opts.get(key)?.as_str()
}

fn size_opt(opts: &serde_json::Map<String, Value>, key: &str) -> Option<u64> {
    crate::units::parse_size(opt(opts, key)?).ok()
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or(0)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// Completion latency of one direction from fio's `clat_ns`.
fn latency(dir: &Value) -> LatencySummary {
    let c = &dir["clat_ns"];
    let p = |k: &str| u(&c["percentile"][k]);
    LatencySummary {
        count: u(&c["N"]),
        min_ns: u(&c["min"]),
        mean_ns: f(&c["mean"]),
        stddev_ns: f(&c["stddev"]),
        p50_ns: p("50.000000"),
        p90_ns: p("90.000000"),
        p99_ns: p("99.000000"),
        p99_9_ns: p("99.900000"),
        p99_99_ns: p("99.990000"),
        max_ns: u(&c["max"]),
    }
}

fn direction(dir: &Value) -> Option<DirectionResult> {
    let bytes = u(&dir["io_bytes"]);
    (bytes > 0).then(|| DirectionResult {
        bytes,
        ops: u(&dir["total_ios"]),
        mb_per_s: f(&dir["bw_bytes"]) / 1e6,
        iops: f(&dir["iops"]),
        latency: latency(dir),
    })
}

/// One measurement of a job.
fn measurement(job: &Value) -> Measurement {
    let read = direction(&job["read"]);
    let write = direction(&job["write"]);
    let dirs: Vec<&DirectionResult> = read.iter().chain(write.iter()).collect();
    let bytes: u64 = dirs.iter().map(|d| d.bytes).sum();
    let runtime_ms = ["read", "write"]
        .iter()
        .map(|k| u(&job[*k]["runtime"]))
        .max()
        .unwrap_or(0);
    let elapsed_s = runtime_ms as f64 / 1e3;
    let cpu_s = |k: &str| f(&job[k]) / 100.0 * u(&job["job_runtime"]) as f64 / 1e3;
    let (user_s, system_s) = (cpu_s("usr_cpu"), cpu_s("sys_cpu"));
    Measurement {
        bytes,
        ops: dirs.iter().map(|d| d.ops).sum(),
        elapsed_ns: runtime_ms * 1_000_000,
        mb_per_s: dirs.iter().map(|d| d.mb_per_s).sum(),
        mib_per_s: dirs.iter().map(|d| d.mb_per_s).sum::<f64>() * 1e6 / 1048576.0,
        iops: dirs.iter().map(|d| d.iops).sum(),
        latency: (dirs.len() == 1).then(|| dirs[0].latency),
        cpu: CpuUsage {
            user_s,
            system_s,
            cpu_s_per_gb: if bytes > 0 {
                (user_s + system_s) / (bytes as f64 / 1e9)
            } else {
                0.0
            },
        },
        read,
        write,
        device_io: None,
        host: None,
        ramp: RampInfo::default(),
        sync_ns: 0,
        verify: None,
        warnings: if elapsed_s == 0.0 {
            vec![crate::result::Caveat::note("fio reported no runtime")]
        } else {
            Vec::new()
        },
        interrupted: false,
        raw: None,
    }
}

/// The region fio's job covered, in bytes: its `size` (a byte count, or a
/// percentage of the file), else `filesize` × `nrfiles`, else the whole
/// file less the `offset`, as fio itself decides. `file_size` is the size
/// of the job's file or device where the import runs (`None` when it is not
/// there); without it a percentage or an absent size is unknown (`None`).
fn span_of(opts: &serde_json::Map<String, Value>, file_size: Option<u64>) -> Option<u64> {
    let offset = size_opt(opts, "offset").unwrap_or(0);
    if let Some(size) = opt(opts, "size") {
        return match size.trim().strip_suffix('%') {
            Some(percent) => {
                let percent: f64 = percent.trim().parse().ok()?;
                Some((file_size? as f64 * percent.clamp(0.0, 100.0) / 100.0) as u64)
            }
            None => crate::units::parse_size(size).ok(),
        };
    }
    if let Some(each) = size_opt(opts, "filesize") {
        let files: u64 = opt(opts, "nrfiles")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        return Some(each.saturating_mul(files.max(1)));
    }
    file_size.map(|f| f.saturating_sub(offset))
}

/// The file or device a job names (`filename`, else `directory`).
fn job_path(opts: &serde_json::Map<String, Value>) -> Option<&str> {
    opt(opts, "filename").or(opt(opts, "directory"))
}

fn test(
    doc: &Value,
    job: &Value,
    name: String,
    file_size: &dyn Fn(&str) -> Option<u64>,
) -> TestResult {
    let opts = options(doc, job);
    // fio's pattern names in iocurve's words (`readwrite` is `rw`); a
    // pattern iocurve has none for (`trim`) keeps fio's name.
    let rw = TestRw::parse(
        opt(&opts, "rw")
            .or(opt(&opts, "readwrite"))
            .unwrap_or("read"),
    );
    let m = measurement(job);
    let workload = WorkloadInfo {
        block_size: size_opt(&opts, "bs").unwrap_or(4096),
        queue_depth: opt(&opts, "iodepth")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1),
        threads: opt(&opts, "numjobs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1),
        engine: TestEngine::Imported(format!("fio:{}", opt(&opts, "ioengine").unwrap_or("psync"))),
        offset: size_opt(&opts, "offset").unwrap_or(0),
        span: span_of(&opts, job_path(&opts).and_then(file_size)).unwrap_or(0),
        mix_read_percent: opt(&opts, "rwmixread").and_then(|v| v.parse().ok()),
        seed: 0,
        rw,
    };
    TestResult {
        name,
        workload,
        mb_per_s: Spread::of(&[m.mb_per_s]),
        iops: Spread::of(&[m.iops]),
        repetitions: vec![m],
        skipped: None,
    }
}

/// The file or device the first job measured.
pub fn target_path(doc: &Value) -> Option<String> {
    let job = doc["jobs"].as_array()?.first()?;
    let opts = options(doc, job);
    job_path(&opts).map(str::to_string)
}

/// Parses fio's JSON document, where nothing beyond the document is known.
pub fn parse(text: &str) -> Result<RunResult> {
    parse_sized(text, &|_| None)
}

/// Parses fio's JSON document; `file_size` gives the size of a file or
/// device a job names, when the import runs where that exists (fio covers
/// the whole file unless told otherwise, and its JSON does not say how
/// large that was). A span it cannot know is 0, with a note saying so.
pub fn parse_sized(text: &str, file_size: &dyn Fn(&str) -> Option<u64>) -> Result<RunResult> {
    // fio may print warnings before the document.
    let start = text.find('{').context("no JSON document in the file")?;
    let doc: Value = serde_json::from_str(&text[start..]).context("not fio JSON output")?;
    let Some(jobs) = doc["jobs"].as_array().filter(|j| !j.is_empty()) else {
        bail!("no jobs in the document: is this fio --output-format=json output?");
    };
    let mut tests: Vec<TestResult> = Vec::new();
    for job in jobs {
        let base = job["jobname"].as_str().unwrap_or("job").to_string();
        let seen = tests
            .iter()
            .filter(|t| t.name == base || t.name.starts_with(&format!("{base} #")))
            .count();
        let name = if seen == 0 {
            base
        } else {
            format!("{base} #{}", seen + 1)
        };
        tests.push(test(&doc, job, name, file_size));
    }
    let first_opts = options(&doc, &jobs[0]);
    let path = target_path(&doc).unwrap_or_default();
    let version = doc["fio version"].as_str().unwrap_or("fio");
    let when = UNIX_EPOCH + Duration::from_secs(u(&doc["timestamp"]));
    Ok(RunResult {
        cpu_load: None,
        schema_version: crate::result::SCHEMA_VERSION,
        iocurve_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: humantime::format_rfc3339_seconds(when).to_string(),
        host: HostInfo {
            hostname: String::new(),
            kernel: String::new(),
        },
        payload: Payload::Imported {
            tool: "fio".into(),
            config: serde_json::json!({ "fio_version": version, "global options": doc["global options"], "jobs": jobs.iter().map(|j| j["job options"].clone()).collect::<Vec<_>>() }),
        },
        target: TargetInfo {
            kind: if path.starts_with("/dev/") {
                TargetKind::BlockDevice
            } else {
                TargetKind::File
            },
            scratch_file: None,
            size_bytes: job_path(&first_opts)
                .and_then(file_size)
                .or_else(|| span_of(&first_opts, None))
                .unwrap_or(0),
            device: None,
            filesystem: None,
            mode: if opt(&first_opts, "direct") == Some("1") {
                IoMode::Direct
            } else {
                IoMode::Buffered
            },
            logical_block_size: 512,
            writable: false,
            notes: import_notes(version, &tests),
            path,
        },
        tests,
        interrupted: false,
        error: jobs
            .iter()
            .find(|j| u(&j["error"]) != 0)
            .map(|j| format!("fio job {} ended with error {}", j["jobname"], j["error"])),
        device_identity: None,
        mpi: None,
    })
}

/// Where the run came from, and which jobs' span is unknown.
fn import_notes(version: &str, tests: &[TestResult]) -> Vec<crate::result::Caveat> {
    let mut notes = vec![crate::result::Caveat::note(format!(
        "imported from {version} JSON output"
    ))];
    let unknown: Vec<&str> = tests
        .iter()
        .filter(|t| t.workload.span == 0)
        .map(|t| t.name.as_str())
        .collect();
    if !unknown.is_empty() {
        notes.push(crate::result::Caveat::note(format!(
            "span unknown for {}: the job gave no size and its file was not there to measure at import (recorded as 0)",
            unknown.join(", ")
        )));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../tests/fixtures/fio-3.33-seqread-randwrite.json");

    #[test]
    fn real_fio_output() {
        let r = parse(FIXTURE).unwrap();
        assert_eq!(r.command(), "fio");
        assert_eq!(r.started_at, "2026-11-22T09:20:07Z");
        assert_eq!(r.target.path, "/tmp/fiot/data.bin");
        assert_eq!(r.target.mode, IoMode::Direct);
        assert_eq!(r.tests.len(), 2);
        let seq = &r.tests[0];
        assert_eq!(
            (
                seq.name.as_str(),
                seq.workload.rw.as_str(),
                seq.workload.block_size
            ),
            ("seqread", "read", 1 << 20)
        );
        let m = &seq.repetitions[0];
        assert_eq!((m.bytes, m.ops, m.elapsed_ns), (50_331_648, 48, 44_000_000));
        assert!((m.mb_per_s - 1143.90109).abs() < 1e-3);
        assert!(m.write.is_none());
        let rnd = &r.tests[1];
        assert_eq!(
            (rnd.workload.rw.as_str(), rnd.workload.block_size),
            ("randwrite", 4096)
        );
        let w = rnd.repetitions[0].write.as_ref().unwrap();
        assert!(w.latency.p99_ns >= w.latency.p50_ns && w.latency.p50_ns > 0);
        assert!(r.error.is_none());
    }

    #[test]
    fn not_fio() {
        assert!(parse("{\"a\": 1}").is_err());
        assert!(parse("hello").is_err());
    }

    fn opts(pairs: &[(&str, &str)]) -> serde_json::Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect()
    }

    #[test]
    fn the_span_is_what_fio_covered() {
        let mib = 1 << 20;
        assert_eq!(span_of(&opts(&[("size", "16M")]), None), Some(16 * mib));
        assert_eq!(
            span_of(&opts(&[("size", "25%")]), Some(64 * mib)),
            Some(16 * mib)
        );
        assert_eq!(span_of(&opts(&[("size", "25%")]), None), None);
        assert_eq!(
            span_of(&opts(&[("filesize", "4M"), ("nrfiles", "3")]), None),
            Some(12 * mib)
        );
        assert_eq!(span_of(&opts(&[]), Some(64 * mib)), Some(64 * mib));
        assert_eq!(
            span_of(&opts(&[("offset", "16M")]), Some(64 * mib)),
            Some(48 * mib)
        );
        assert_eq!(span_of(&opts(&[]), None), None);
    }

    #[test]
    fn a_job_without_size_or_file_says_its_span_is_unknown() {
        let r = parse(FIXTURE).unwrap();
        assert_eq!(r.tests[0].workload.span, 16 << 20, "the fixture's size=16M");
        let no_size = FIXTURE.replace("\"size\" : \"16M\",", "");
        let r = parse(&no_size).unwrap();
        assert_eq!(r.tests[0].workload.span, 0);
        assert!(
            r.target
                .notes
                .iter()
                .any(|n| n.text().contains("span unknown for seqread")),
            "{:?}",
            r.target.notes
        );
        let r = parse_sized(&no_size, &|p| {
            (p == "/tmp/fiot/data.bin").then_some(32 << 20)
        })
        .unwrap();
        assert_eq!(r.tests[0].workload.span, 32 << 20);
    }

    proptest::proptest! {
        /// Whatever a job's size options say, the span is read without a
        /// panic.
        #[test]
        fn any_size_options_read(size in "\\PC{0,12}", filesize in "\\PC{0,12}", nrfiles in "\\PC{0,6}", offset in "\\PC{0,12}", file in proptest::option::of(0u64..u64::MAX)) {
            let o = opts(&[("size", &size), ("filesize", &filesize), ("nrfiles", &nrfiles), ("offset", &offset)]);
            let _ = span_of(&o, file);
            let _ = span_of(&opts(&[("filesize", &filesize), ("nrfiles", &nrfiles)]), file);
        }
    }
}
