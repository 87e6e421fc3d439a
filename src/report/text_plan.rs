//! The `plan` line of a report's header: what a measuring command is about
//! to do, in one sentence, so that the header printed before measuring
//! (see [`crate::output::Output::announce`]) already says what is measured
//! and for how long.
//!
//! The sentence is a pure function of the payload's configuration as the
//! result records it (its JSON form), so a stored run reads the same plan
//! as a fresh one; a configuration of older options that lacks a field
//! gets no plan line rather than a wrong one.

use crate::result::TargetKind;
use crate::result::{Payload, RunResult};
use crate::units::{format_size, format_size_exact, format_size_figure, three_figures};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The plan of `r`'s command, or `None` for a command without one (an
/// imported run, the flash tests) or a configuration this release cannot
/// read.
pub fn plan(r: &RunResult) -> Option<String> {
    let json = r.payload.config_json();
    match &r.payload {
        Payload::Run { .. } => read::<RunPlan>(json).map(|p| p.describe()),
        Payload::Profile { .. } => read::<ProfilePlan>(json).map(|p| p.describe(r.target.kind)),
        Payload::Curve { .. } => {
            read::<CurvePlan>(json).map(|p| p.describe(u64::from(r.target.logical_block_size)))
        }
        Payload::Stream { .. } => read::<StreamPlan>(json).map(|p| p.describe()),
        Payload::Sustain { .. } => read::<SustainPlan>(json).map(|p| p.describe()),
        Payload::FilesLoad { .. } => read::<FilesLoadPlan>(json).map(|p| p.describe()),
        Payload::FilesSave { .. } => read::<FilesSavePlan>(json).map(|p| p.describe()),
        Payload::Surface { .. } => read::<SurfacePlan>(json).map(|p| p.describe()),
        Payload::Copy { .. } => read::<CopyPlan>(json).map(|p| p.describe()),
        Payload::Endure { .. } => read::<EndurePlan>(json).map(|p| p.describe()),
        Payload::Flash { .. } | Payload::Imported { .. } => None,
    }
}

fn read<T: DeserializeOwned>(json: serde_json::Value) -> Option<T> {
    serde_json::from_value(json).ok()
}

/// The recorded target options a plan mentions.
#[derive(Deserialize)]
struct TargetPlan {
    #[serde(default)]
    threads: Option<u32>,
    #[serde(default)]
    destructive: bool,
    #[serde(default)]
    preserve: bool,
}

impl TargetPlan {
    fn threads(&self) -> u32 {
        self.threads.unwrap_or(1)
    }

    /// The user gave up or journals the data, so writes may go ahead.
    fn writes_allowed(&self) -> bool {
        self.destructive || self.preserve
    }
}

/// A duration given in seconds, as a person says it: `10 s`, `1.5 s`,
/// `300 ms`, `12.5 ms`.
fn seconds(s: f64) -> String {
    match s >= 1.0 {
        true => format!("{} s", figure(s)),
        false => format!("{} ms", figure(s * 1e3)),
    }
}

/// A figure of a setting, as it was asked for: to three significant
/// figures without trailing zeros (`25`, `1.5`, `12.5`, `2.56`).
fn figure(x: f64) -> String {
    let text = three_figures(x);
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

fn nanos(ns: u64) -> String {
    seconds(ns as f64 / 1e9)
}

/// ` after 1 s warm-up`, or `, no warm-up`.
fn warm_up(ramp_s: f64) -> String {
    match ramp_s > 0.0 {
        true => format!(" after {} warm-up", seconds(ramp_s)),
        false => ", no warm-up".into(),
    }
}

/// `3 repetitions` (nothing for one).
fn repetitions(n: u32) -> String {
    match n {
        0 | 1 => String::new(),
        n => format!(", {n} repetitions"),
    }
}

/// `on 2 targets, each alone, then all together` for a `--parallel` run.
fn parallel_note(parallel: bool, targets: usize) -> String {
    match parallel {
        true => format!("; on {targets} targets, each alone, then all together"),
        false => String::new(),
    }
}

/// A list of sizes, each written by `format`; a long one by its ends and
/// its count.
fn size_list(sizes: &[u64], format: fn(u64) -> String) -> String {
    match sizes {
        [] => "none".into(),
        [first, .., last] if sizes.len() > 6 => format!(
            "{} … {} ({} sizes)",
            format(*first),
            format(*last),
            sizes.len()
        ),
        _ => sizes
            .iter()
            .map(|&s| format(s))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[derive(Deserialize)]
struct RunPlan {
    target: TargetPlan,
    rw: String,
    #[serde(rename = "mix_read_pct")]
    mix_read_percent: u8,
    block_size: u64,
    #[serde(default)]
    size: Option<u64>,
    queue_depth: u32,
    #[serde(default)]
    time: Option<f64>,
    ramp: f64,
    repeat: u32,
    #[serde(default)]
    default_limits: bool,
    #[serde(default)]
    verify: bool,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    stdio_bs: Option<u64>,
    #[serde(default)]
    parallel: bool,
    #[serde(default)]
    targets: Vec<String>,
}

impl RunPlan {
    fn describe(&self) -> String {
        let mix = match self.rw.as_str() {
            "rw" | "randrw" => format!(" ({}% reads)", self.mix_read_percent),
            _ => String::new(),
        };
        format!(
            "{} {}{mix}{}{}, QD{} T{}, {}{}{}{}",
            format_size_exact(self.block_size),
            self.rw,
            self.method_note(),
            if self.verify { ", verified" } else { "" },
            self.queue_depth,
            self.target.threads(),
            self.limit(),
            warm_up(self.ramp),
            repetitions(self.repeat),
            parallel_note(self.parallel, self.targets.len()),
        )
    }

    /// How long the counted phase lasts: a time, a byte count, or both.
    fn limit(&self) -> String {
        if self.default_limits {
            let cap = self
                .time
                .map_or(String::new(), |t| format!(" (at most {})", seconds(t)));
            return format!("the region once{cap}");
        }
        match (self.size, self.time) {
            (Some(size), Some(t)) => {
                format!("{} or {} (whichever first)", format_size(size), seconds(t))
            }
            (Some(size), None) => format_size(size),
            (None, Some(t)) => seconds(t),
            (None, None) => "until stopped".into(),
        }
    }

    /// A read method other than the engines' own calls.
    fn method_note(&self) -> String {
        match self.method.as_deref() {
            Some("mmap") => " by mmap".into(),
            Some("stdio") => format!(
                " by fread in {} calls",
                format_size_exact(self.stdio_bs.unwrap_or(4096))
            ),
            _ => String::new(),
        }
    }
}

#[derive(Deserialize)]
struct ProfilePlan {
    target: TargetPlan,
    #[serde(default)]
    preset: Option<String>,
    rows: Vec<String>,
    time_per_test_s: f64,
    repeat: u32,
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    parallel: bool,
    #[serde(default)]
    targets: Vec<String>,
}

impl ProfilePlan {
    fn describe(&self, kind: TargetKind) -> String {
        let rows = self.rows.join(", ");
        let rows = match &self.preset {
            Some(preset) => format!("{preset} preset: {rows}"),
            None => format!("tests {rows}"),
        };
        let times = match self.repeat {
            0 | 1 => String::new(),
            n => format!(", {n}×"),
        };
        format!(
            "{rows}; {}; {} each{times}{}",
            self.directions(kind),
            seconds(self.time_per_test_s),
            parallel_note(self.parallel, self.targets.len()),
        )
    }

    /// Writes where they are safe: a scratch file iocurve makes, a
    /// simulated card (not in a `--parallel` profile), or a target whose
    /// data is journalled or given up.
    fn directions(&self, kind: TargetKind) -> &'static str {
        let scratch = match self.parallel {
            true => kind == TargetKind::Directory,
            false => matches!(kind, TargetKind::Directory | TargetKind::Simulated),
        };
        if self.read_only {
            "reads only (--read-only)"
        } else if scratch || self.target.writes_allowed() {
            "read then write"
        } else {
            "reads only (writes need --preserve or --destructive)"
        }
    }
}

#[derive(Deserialize)]
struct CurvePlan {
    target: TargetPlan,
    patterns: Vec<String>,
    #[serde(default)]
    sizes: Option<Vec<u64>>,
    queue_depth: u32,
    repeat: u32,
    time: f64,
    ramp: f64,
    #[serde(default)]
    targets: Vec<String>,
}

impl CurvePlan {
    fn describe(&self, logical_block: u64) -> String {
        let sizes = match &self.sizes {
            Some(sizes) => size_list(sizes, format_size_exact),
            None => size_list(
                &crate::vocab::config::default_sizes(logical_block),
                format_size_exact,
            ),
        };
        let targets = match self.targets.len() {
            0 | 1 => String::new(),
            _ => format!("; targets {}", self.targets.join(", ")),
        };
        format!(
            "{} × sizes {sizes}, QD{} T{}, {} per size{}{}{targets}",
            self.patterns.join(", "),
            self.queue_depth,
            self.target.threads(),
            seconds(self.time),
            warm_up(self.ramp),
            repetitions(self.repeat),
        )
    }
}

#[derive(Deserialize)]
struct StreamPlan {
    rw: String,
    chunk: u64,
    rate_mb_per_s: f64,
    #[serde(default)]
    fps: Option<f64>,
    #[serde(default)]
    deadline_ns: Option<u64>,
    time_ns: u64,
    #[serde(default)]
    find_max: bool,
}

impl StreamPlan {
    fn describe(&self) -> String {
        let deadline = match self.deadline_ns {
            Some(ns) => format!("deadline {} after each scheduled start", nanos(ns)),
            None => "deadline one request period after each scheduled start".into(),
        };
        let frames = self
            .fps
            .map_or(String::new(), |f| format!(" ({} frames/s)", figure(f)));
        let chunk = format_size_exact(self.chunk);
        let rate = figure(self.rate_mb_per_s);
        if self.find_max {
            return format!(
                "the highest {} rate with no missed deadline, from {rate} MB/s, in {chunk} requests{frames}, {} per trial; {deadline}",
                self.rw,
                nanos(self.time_ns)
            );
        }
        format!(
            "{} {rate} MB/s in {chunk} requests{frames} for {}; {deadline}",
            self.rw,
            nanos(self.time_ns)
        )
    }
}

#[derive(Deserialize)]
struct SustainPlan {
    bytes: u64,
    #[serde(default)]
    time_ns: Option<u64>,
    bs: u64,
    interval_ns: u64,
    mark: u64,
    /// The region the write may fill (`--bytes` is cut to it).
    #[serde(default)]
    span: Option<u64>,
}

impl SustainPlan {
    fn describe(&self) -> String {
        let bytes = format_size(self.span.map_or(self.bytes, |s| s.min(self.bytes)));
        let limit = match self.time_ns {
            Some(ns) => format!("{bytes} or {}", nanos(ns)),
            None => bytes,
        };
        format!(
            "sequential writes of {} until {limit}; speed per {} and per {} written",
            format_size_exact(self.bs),
            nanos(self.interval_ns),
            format_size(self.mark)
        )
    }
}

#[derive(Deserialize)]
struct FilesLoadPlan {
    sizes: Vec<u64>,
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    fps: Option<f64>,
    method: String,
    #[serde(default)]
    stdio_bs: Option<u64>,
}

impl FilesLoadPlan {
    fn describe(&self) -> String {
        let count = match self.count {
            Some(n) => format!("{n} files"),
            None => "16 MiB of files (4 to 200)".into(),
        };
        let method = match self.method.as_str() {
            "mmap" => "mapped (mmap)".to_string(),
            "stdio" => format!(
                "by fread in {} calls",
                format_size_exact(self.stdio_bs.unwrap_or(4096))
            ),
            _ => "by read(2)".to_string(),
        };
        let fps = self
            .fps
            .map_or(String::new(), |f| format!("; {} frames/s", figure(f)));
        format!(
            "{count} of each size {}, each read whole {method} from an evicted cache{fps}",
            size_list(&self.sizes, format_size_figure)
        )
    }
}

/// How `--sync` (of `files save` and `copy`) makes the data durable.
fn durability(sync: &str) -> &'static str {
    match sync {
        "none" => "no sync (page cache only)",
        "each" => "every write synchronous (O_DSYNC)",
        "direct" => "O_DIRECT, then fsync",
        _ => "fsync at the end",
    }
}

#[derive(Deserialize)]
struct FilesSavePlan {
    size: u64,
    sizes: Vec<u64>,
    sync: String,
}

impl FilesSavePlan {
    fn describe(&self) -> String {
        let sync = durability(&self.sync);
        format!(
            "one {} file per write-call size {}, {sync}; read back and compared",
            format_size(self.size),
            size_list(&self.sizes, format_size_exact)
        )
    }
}

#[derive(Deserialize)]
struct SurfacePlan {
    target: TargetPlan,
    samples: u32,
    sample_bytes: u64,
    block_size: u64,
    access_reads: u32,
    #[serde(rename = "threshold_pct")]
    threshold_percent: f64,
}

impl SurfacePlan {
    fn describe(&self) -> String {
        let what = match self.target.writes_allowed() {
            true => "read and written",
            false => "read",
        };
        format!(
            "{} positions over the whole target, {} {what} at each in {} requests, {} access-time reads; slow below {}% of the median",
            self.samples,
            format_size(self.sample_bytes),
            format_size_exact(self.block_size),
            self.access_reads,
            figure(self.threshold_percent)
        )
    }
}

#[derive(Deserialize)]
struct CopyPlan {
    source: String,
    block_size: u64,
    sync: String,
    #[serde(default)]
    verify: bool,
}

impl CopyPlan {
    fn describe(&self) -> String {
        let sync = durability(&self.sync);
        format!(
            "copy {} onto the target in {} blocks, {sync}{}; each side also measured alone",
            self.source,
            format_size_exact(self.block_size),
            if self.verify { ", then compared" } else { "" }
        )
    }
}

#[derive(Deserialize)]
struct EndurePlan {
    cycles: u32,
    block_size: u64,
    #[serde(default)]
    stop_on_error: bool,
}

impl EndurePlan {
    fn describe(&self) -> String {
        format!(
            "{} cycle{} of writing the whole span in {} blocks, reading it back verified and reading it again timed{}",
            self.cycles,
            if self.cycles == 1 { "" } else { "s" },
            format_size_exact(self.block_size),
            if self.stop_on_error {
                "; stops at the first bad block"
            } else {
                ""
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(seconds(10.0), "10 s");
        assert_eq!(seconds(1.5), "1.5 s");
        assert_eq!(seconds(0.25), "250 ms");
        assert_eq!(seconds(0.3), "300 ms");
        assert_eq!(seconds(0.025), "25 ms");
        assert_eq!(seconds(0.0125), "12.5 ms");
    }

    #[test]
    fn a_long_list_of_sizes_is_given_by_its_ends() {
        assert_eq!(
            size_list(&[4096, 1 << 20], format_size_exact),
            "4 KiB, 1 MiB"
        );
        assert_eq!(size_list(&[1536], format_size_figure), "1.50 KiB");
        let many: Vec<u64> = (9..=24).map(|p| 1 << p).collect();
        assert_eq!(
            size_list(&many, format_size_exact),
            "512 B … 16 MiB (16 sizes)"
        );
    }

    #[test]
    fn a_run_plan_names_size_pattern_queue_time_and_repetitions() {
        let plan: RunPlan = serde_json::from_value(serde_json::json!({
            "target": {"threads": 1},
            "rw": "read", "mix_read_pct": 50, "block_size": 1048576, "size": null,
            "queue_depth": 1, "time": 10.0, "ramp": 1.0, "repeat": 3,
            "default_limits": false, "method": "pread", "targets": ["x"], "parallel": false
        }))
        .unwrap();
        assert_eq!(
            plan.describe(),
            "1 MiB read, QD1 T1, 10 s after 1 s warm-up, 3 repetitions"
        );
    }

    #[test]
    fn a_profile_plan_says_when_it_only_reads() {
        let json = |read_only: bool| {
            serde_json::json!({
                "target": {"threads": 1, "destructive": false, "preserve": false},
                "preset": "default",
                "rows": ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"],
                "time_per_test_s": 5.0, "repeat": 3, "read_only": read_only
            })
        };
        let plan: ProfilePlan = serde_json::from_value(json(false)).unwrap();
        assert_eq!(
            plan.describe(TargetKind::Directory),
            "default preset: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; read then write; 5 s each, 3×"
        );
        assert!(
            plan.describe(TargetKind::File)
                .contains("; reads only (writes need")
        );
        let plan: ProfilePlan = serde_json::from_value(json(true)).unwrap();
        assert!(
            plan.describe(TargetKind::Directory)
                .contains("; reads only (--read-only);")
        );
    }

    #[test]
    fn a_configuration_missing_a_field_gets_no_plan() {
        assert!(read::<SustainPlan>(serde_json::json!({"bytes": 1})).is_none());
    }
}
