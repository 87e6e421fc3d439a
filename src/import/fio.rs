//! fio's JSON output (`fio --output-format=json`) as a [`RunResult`].
//!
//! Each fio job becomes one test measured once (fio has no repetitions of
//! its own; a repeated job name gets a `#2` suffix). Bandwidth, IOPS,
//! bytes, runtime, completion-latency percentiles and CPU share are taken
//! as fio reported them; nothing is recomputed. A mixed job keeps its read
//! and write figures apart. The device is not in fio's output: the caller
//! probes it when it is known. The document is foreign input: every figure
//! is range-checked as it is read (see `fields`), and a file it names is
//! only ever looked at by the caller, never opened.

mod fields;
#[cfg(test)]
mod fuzz;

use crate::result::{
    CpuUsage, DirectionResult, HostInfo, Measurement, Payload, RampInfo, RunResult, TestEngine,
    TestResult, TestRw, WorkloadInfo,
};
use crate::result::{TargetInfo, TargetKind};
use crate::stats::{LatencySummary, Spread};
use crate::vocab::options::IoMode;
use anyhow::{Context, Result, bail};
use fields::Source;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, UNIX_EPOCH};

/// At most this many jobs: fio itself runs no more (its `REAL_MAX_JOBS`).
const MAX_JOBS: usize = 4096;

/// The options iocurve reads: each must be a string, as fio writes them.
const OPTIONS_READ: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "iodepth",
    "numjobs",
    "ioengine",
    "offset",
    "size",
    "filesize",
    "nrfiles",
    "rwmixread",
    "direct",
    "filename",
    "directory",
];

/// The options of a job: the global ones overridden by its own.
fn options(doc: &Value, job: &Value) -> Map<String, Value> {
    let mut opts = doc["global options"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(own) = job["job options"].as_object() {
        opts.extend(own.clone());
    }
    opts
}

fn opt<'a>(opts: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    opts.get(key)?.as_str()
}

fn size_opt(opts: &Map<String, Value>, key: &str) -> Option<u64> {
    crate::units::parse_size(opt(opts, key)?).ok()
}

/// The percentiles iocurve keeps, as fio names them.
const PERCENTILES: [&str; 5] = [
    "50.000000",
    "90.000000",
    "99.000000",
    "99.900000",
    "99.990000",
];

/// Completion latency of direction `dir` from fio's `clat_ns`.
fn latency(src: &Source, dir: &str) -> Result<LatencySummary> {
    let whole = |key: &str| src.whole(&[dir, "clat_ns", key], &fields::NANOS);
    let real = |key: &str| src.real(&[dir, "clat_ns", key], &fields::NANOS_REAL);
    src.check_percentiles(&[dir, "clat_ns", "percentile"])?;
    let mut p = [0; 5];
    for (slot, key) in p.iter_mut().zip(PERCENTILES) {
        *slot = src
            .whole(&[dir, "clat_ns", "percentile", key], &fields::NANOS)?
            .unwrap_or(0);
    }
    let count = src
        .whole(&[dir, "clat_ns", "N"], &fields::COUNT)?
        .unwrap_or(0);
    let (min_ns, max_ns) = (whole("min")?.unwrap_or(0), whole("max")?.unwrap_or(0));
    if count > 0 && min_ns > max_ns {
        return Err(src.refuse(
            &format!("{dir}.clat_ns.min"),
            &format!("{min_ns}, above the max ({max_ns})"),
            "the shortest latency is never above the longest",
        ));
    }
    Ok(LatencySummary {
        count,
        min_ns,
        mean_ns: real("mean")?.unwrap_or(0.0),
        stddev_ns: real("stddev")?.unwrap_or(0.0),
        p50_ns: p[0],
        p90_ns: p[1],
        p99_ns: p[2],
        p99_9_ns: p[3],
        p99_99_ns: p[4],
        max_ns,
    })
}

/// Direction `dir` (`read`, `write`) of a job, when it moved bytes: then
/// its rates are stored, so fio must have given them and a run time.
fn direction(src: &Source, dir: &str) -> Result<Option<DirectionResult>> {
    let bytes = src.whole(&[dir, "io_bytes"], &fields::BYTES)?;
    let runtime = src.whole(&[dir, "runtime"], &fields::MILLIS)?;
    let ops = src.whole(&[dir, "total_ios"], &fields::COUNT)?;
    let Some(bytes) = bytes.filter(|b| *b > 0) else {
        return Ok(None);
    };
    if runtime.unwrap_or(0) == 0 {
        return Err(src.refuse(
            &format!("{dir}.runtime"),
            &runtime.map_or("missing".into(), |r| r.to_string()),
            "a job that moved bytes took time: fio's runtime is at least 1 ms",
        ));
    }
    Ok(Some(DirectionResult {
        bytes,
        ops: ops.unwrap_or(0),
        mb_per_s: src.need_real(&[dir, "bw_bytes"], &fields::BYTES_PER_S)? / 1e6,
        iops: src.need_real(&[dir, "iops"], &fields::IOPS)?,
        latency: latency(src, dir)?,
    }))
}

/// The sum of one figure (`figure`, fio's `field`) of both directions, an
/// absent direction counting 0; refused past 64 bits.
fn sum(
    src: &Source,
    field: &str,
    (read, write): (&Option<DirectionResult>, &Option<DirectionResult>),
    figure: fn(&DirectionResult) -> u64,
) -> Result<u64> {
    let of = |d: &Option<DirectionResult>| d.as_ref().map_or(0, figure);
    of(read).checked_add(of(write)).ok_or_else(|| {
        src.refuse(
            &format!("read.{field} + write.{field}"),
            "past 2^64",
            "a job's two directions together fit in 64 bits",
        )
    })
}

/// One measurement of a job.
fn measurement(src: &Source) -> Result<Measurement> {
    let read = direction(src, "read")?;
    let write = direction(src, "write")?;
    let dirs: Vec<&DirectionResult> = read.iter().chain(write.iter()).collect();
    let bytes = sum(src, "io_bytes", (&read, &write), |d| d.bytes)?;
    let ops = sum(src, "total_ios", (&read, &write), |d| d.ops)?;
    let mut runtime_ms = 0;
    for dir in ["read", "write"] {
        let ms = src.whole(&[dir, "runtime"], &fields::MILLIS)?;
        runtime_ms = runtime_ms.max(ms.unwrap_or(0));
    }
    let job_ms = src.whole(&["job_runtime"], &fields::MILLIS)?.unwrap_or(0);
    let cpu_s = |k: &str| -> Result<f64> {
        let percent = src.real(&[k], &fields::CPU_PERCENT)?.unwrap_or(0.0);
        Ok(percent / 100.0 * job_ms as f64 / 1e3)
    };
    let (user_s, system_s) = (cpu_s("usr_cpu")?, cpu_s("sys_cpu")?);
    let mb_per_s: f64 = dirs.iter().map(|d| d.mb_per_s).sum();
    Ok(Measurement {
        bytes,
        ops,
        // At most 10^12 ms: 10^18 ns fits.
        elapsed_ns: runtime_ms * 1_000_000,
        mb_per_s,
        mib_per_s: mb_per_s * 1e6 / 1048576.0,
        iops: dirs.iter().map(|d| d.iops).sum(),
        latency: (dirs.len() == 1).then(|| dirs[0].latency),
        cpu: CpuUsage::of(user_s, system_s, bytes),
        read,
        write,
        device_io: None,
        host: None,
        ramp: RampInfo::default(),
        sync_ns: 0,
        verify: None,
        warnings: if runtime_ms == 0 {
            vec![crate::result::Caveat::FioNoRuntime]
        } else {
            Vec::new()
        },
        interrupted: false,
        raw: None,
    })
}

/// The region fio's job covered, in bytes: its `size` (a byte count, or a
/// percentage of the file), else `filesize` × `nrfiles`, else the whole
/// file less the `offset`, as fio itself decides. `file_size` is the size
/// of the job's file or device where the import runs (`None` when it is not
/// there); without it a percentage or an absent size is unknown (`None`).
fn span_of(opts: &Map<String, Value>, file_size: Option<u64>) -> Option<u64> {
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
fn job_path(opts: &Map<String, Value>) -> Option<&str> {
    opt(opts, "filename").or(opt(opts, "directory"))
}

/// The block size a job gave (fio's default, 4 KiB, when it gave none):
/// at least a byte, and one size for every direction.
fn block_size(src: &Source, opts: &Map<String, Value>) -> Result<u64> {
    let Some(text) = opt(opts, "bs") else {
        return Ok(4096);
    };
    match fields::fio_size(text) {
        Ok(0) => Err(src.refuse(
            "bs",
            &fields::clip(text),
            "a block size must be at least 1 byte",
        )),
        Ok(bytes) if bytes <= 1 << 32 => Ok(bytes),
        Ok(_) => Err(src.refuse("bs", &fields::clip(text), "a block size is at most 4 GiB")),
        Err(_) => Err(src.refuse(
            "bs",
            &fields::shown(&Value::String(text.into())),
            "iocurve reads one block size for the job, such as 4k or 1M",
        )),
    }
}

/// A whole-number option in `min..=max` (`iodepth`, `numjobs`,
/// `rwmixread`); `None` when the job did not give it.
fn small_option(
    src: &Source,
    opts: &Map<String, Value>,
    key: &str,
    (min, max): (u32, u32),
) -> Result<Option<u32>> {
    let Some(text) = opt(opts, key) else {
        return Ok(None);
    };
    match text.trim().parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(src.refuse(
            key,
            &fields::shown(&Value::String(text.into())),
            &format!("fio takes a whole number from {min} to {max} there"),
        )),
    }
}

fn test(
    src: &Source,
    opts: &Map<String, Value>,
    name: String,
    file_size: &dyn Fn(&str) -> Option<u64>,
) -> Result<TestResult> {
    // fio's pattern names in iocurve's words (`readwrite` is `rw`); a
    // pattern iocurve has none for (`trim`) keeps fio's name.
    let rw = TestRw::parse(opt(opts, "rw").or(opt(opts, "readwrite")).unwrap_or("read"));
    let m = measurement(src)?;
    let mix = small_option(src, opts, "rwmixread", (0, 100))?;
    let workload = WorkloadInfo {
        block_size: block_size(src, opts)?,
        queue_depth: small_option(src, opts, "iodepth", (1, 65536))?.unwrap_or(1),
        threads: small_option(src, opts, "numjobs", (1, MAX_JOBS as u32))?.unwrap_or(1),
        engine: TestEngine::Imported(format!("fio:{}", opt(opts, "ioengine").unwrap_or("psync"))),
        offset: size_opt(opts, "offset").unwrap_or(0),
        span: span_of(opts, job_path(opts).and_then(file_size)).unwrap_or(0),
        mix_read_percent: mix.map(|m| m as u8),
        seed: 0,
        rw,
    };
    Ok(TestResult {
        name,
        workload,
        mb_per_s: Spread::of(&[m.mb_per_s]),
        iops: Spread::of(&[m.iops]),
        repetitions: vec![m],
        skipped: None,
    })
}

/// The jobs of the document: at least one, at most fio's limit, each an
/// object.
fn jobs_of(doc: &Value) -> Result<&Vec<Value>> {
    let Some(jobs) = doc["jobs"].as_array().filter(|j| !j.is_empty()) else {
        bail!("no jobs in the document: is this fio --output-format=json output?");
    };
    if jobs.len() > MAX_JOBS {
        return Err(Source::document(doc).refuse(
            "jobs",
            &format!("{} jobs", jobs.len()),
            "fio runs at most 4096 jobs",
        ));
    }
    if let Some(other) = jobs.iter().find(|j| !j.is_object()) {
        let shown = fields::shown(other);
        return Err(Source::document(doc).refuse(
            "jobs",
            &format!("holding {shown}"),
            "fio writes each job as an object",
        ));
    }
    Ok(jobs)
}

/// Each job's name, made unique: a repeated name gets a `#2` suffix
/// (the next number free, should a job already be called that).
fn unique_names(jobs: &[Value]) -> Result<Vec<String>> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut used: HashSet<String> = HashSet::new();
    let mut names = Vec::with_capacity(jobs.len());
    for (index, job) in jobs.iter().enumerate() {
        let base = match job.get("jobname") {
            None => "job",
            Some(Value::String(name)) => name,
            Some(other) => {
                return Err(Source::job(job, index + 1, None).refuse(
                    "jobname",
                    &fields::shown(other),
                    "fio writes a job's name as a string",
                ));
            }
        };
        let count = seen.entry(base).or_insert(0);
        let mut name = base.to_string();
        while used.contains(&name) {
            *count += 1;
            name = format!("{base} #{}", *count + 1);
        }
        used.insert(name.clone());
        names.push(name);
    }
    Ok(names)
}

/// When the run started, from fio's `timestamp` (seconds since 1970).
fn started_at(doc: &Value) -> Result<String> {
    let src = Source::document(doc);
    let range = fields::SECONDS_SINCE_1970;
    let seconds = src.need(&["timestamp"], &range)?;
    let when = UNIX_EPOCH
        .checked_add(Duration::from_secs(seconds))
        .ok_or_else(|| src.refuse("timestamp", &seconds.to_string(), range.rule))?;
    Ok(humantime::format_rfc3339_seconds(when).to_string())
}

/// Parses fio's JSON document, where nothing beyond the document is known.
pub fn parse(text: &str) -> Result<RunResult> {
    parse_sized(text, &|_| None)
}

/// Parses fio's JSON document; `file_size` gives the size of a file or
/// device a job names, when the import runs where that exists (fio covers
/// the whole file unless told otherwise, and its JSON does not say how
/// large that was). A span it cannot know is 0, with a note saying so.
/// Every figure is range-checked first: one out of range refuses the whole
/// document, naming the job and the field.
pub fn parse_sized(text: &str, file_size: &dyn Fn(&str) -> Option<u64>) -> Result<RunResult> {
    // fio may print warnings before the document.
    let start = text.find('{').context("no JSON document in the file")?;
    let doc: Value = serde_json::from_str(&text[start..]).context("not fio JSON output")?;
    let jobs = jobs_of(&doc)?;
    let started_at = started_at(&doc)?;
    let mut tests: Vec<TestResult> = Vec::with_capacity(jobs.len());
    let mut error = None;
    for (index, (job, name)) in jobs.iter().zip(unique_names(jobs)?).enumerate() {
        let src = Source::job(job, index + 1, job["jobname"].as_str());
        let opts = options(&doc, job);
        src.check_options(&opts, OPTIONS_READ)?;
        let errno = src.whole(&["error"], &fields::ERRNO)?.unwrap_or(0);
        if errno != 0 && error.is_none() {
            error = Some(format!(
                "fio job {} ended with error {errno}",
                job["jobname"]
            ));
        }
        tests.push(test(&src, &opts, name, file_size)?);
    }
    let first_opts = options(&doc, &jobs[0]);
    let path = job_path(&first_opts).unwrap_or_default().to_string();
    let version = doc["fio version"].as_str().unwrap_or("fio");
    Ok(RunResult {
        cpu_load: None,
        schema_version: crate::result::SCHEMA_VERSION,
        iocurve_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
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
        error,
        device_identity: None,
        mpi: None,
        raw: None,
    })
}

/// Where the run came from, and which jobs' span is unknown.
fn import_notes(version: &str, tests: &[TestResult]) -> Vec<crate::result::Caveat> {
    let mut notes = vec![crate::result::Caveat::FioImported {
        version: version.to_string(),
    }];
    let unknown: Vec<String> = tests
        .iter()
        .filter(|t| t.workload.span == 0)
        .map(|t| t.name.clone())
        .collect();
    if !unknown.is_empty() {
        notes.push(crate::result::Caveat::FioSpanUnknown { jobs: unknown });
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
                .any(|n| matches!(n, crate::result::Caveat::FioSpanUnknown { jobs } if jobs.iter().any(|j| j == "seqread"))),
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
