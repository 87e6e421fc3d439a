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

fn test(doc: &Value, job: &Value, name: String) -> TestResult {
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
        span: size_opt(&opts, "size").unwrap_or(0),
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
    opt(&opts, "filename")
        .or(opt(&opts, "directory"))
        .map(str::to_string)
}

/// Parses fio's JSON document.
pub fn parse(text: &str) -> Result<RunResult> {
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
        tests.push(test(&doc, job, name));
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
            size_bytes: size_opt(&first_opts, "size").unwrap_or(0),
            device: None,
            filesystem: None,
            mode: if opt(&first_opts, "direct") == Some("1") {
                IoMode::Direct
            } else {
                IoMode::Buffered
            },
            logical_block_size: 512,
            writable: false,
            notes: vec![crate::result::Caveat::note(format!(
                "imported from {version} JSON output"
            ))],
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
}
