//! A result holds figures and typed outcomes, never sentences: this test
//! reads every file under `src/result/`, finds every field of a struct and
//! of an enum variant whose type holds a `String` (or an untyped JSON
//! `Value`), and fails on any that is not in [`ALLOWED`], each with why
//! words from outside may stand there (a host name, a path, a device model
//! from the kernel, a label the user gave, OS error text, the words of a
//! run stored by an earlier release). A new outcome gets an enum with its
//! figures, and its words in `src/report/`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `file: Type.field` (or `Type::Variant.field`, `.0` for a tuple) and why
/// a string may stand there.
const ALLOWED: &[(&str, &str)] = &[
    // Names from outside: hosts, kernels, paths, devices, versions.
    (
        "mod.rs: RunResult.iocurve_version",
        "the version of the build",
    ),
    ("mod.rs: RunResult.started_at", "a timestamp (RFC 3339)"),
    (
        "mod.rs: RunResult.error",
        "OS error text of the failure that ended the run",
    ),
    ("mod.rs: HostInfo.hostname", "the host's name"),
    ("mod.rs: HostInfo.kernel", "the kernel release (uname -r)"),
    (
        "mod.rs: TestResult.name",
        "the workload's name, a label (`SEQ1M Q8T1`)",
    ),
    ("mod.rs: DeviceIo.device", "kernel name of a block device"),
    ("mod.rs: CurveSeries.target", "the target's path as given"),
    (
        "mod.rs: CurveSeries.recommendation",
        "legacy: the advice as earlier releases worded it",
    ),
    ("target.rs: TargetInfo.path", "the target's path"),
    (
        "target.rs: TargetInfo.scratch_file",
        "the scratch file's path",
    ),
    (
        "caveat.rs: SimulatedCard.beyond",
        "the sim option's value (`wrap`, `zeros`), a label the user gave",
    ),
    (
        "caveat.rs: Caveat::CacheServed.device",
        "kernel name of a block device",
    ),
    (
        "caveat.rs: Caveat::EvictionFailed.os_error",
        "OS error text",
    ),
    (
        "caveat.rs: Caveat::EvictionUnproved.os_error",
        "OS error text",
    ),
    (
        "caveat.rs: Caveat::StackCache.device",
        "kernel name of a block device",
    ),
    (
        "caveat.rs: Caveat::StackCache.layer",
        "kernel name of a block device",
    ),
    (
        "caveat.rs: Caveat::StackCache.backing",
        "a loop device's backing file or a layer's members, from the kernel",
    ),
    (
        "caveat.rs: Caveat::StackCache.file_system",
        "a file system type from the mount table",
    ),
    ("caveat.rs: Caveat::NameMoved.path", "the target's path"),
    (
        "caveat.rs: Caveat::JournalLeft.safety_words",
        "the safety check's words naming the journal left (made in safety/)",
    ),
    (
        "caveat.rs: Caveat::AlsoMeasured.path",
        "another target's path",
    ),
    ("caveat.rs: Caveat::WritesSkipped.path", "the target's path"),
    (
        "caveat.rs: Caveat::WritesSkipped.busy",
        "the safety check's words on what uses the device (made in medium/)",
    ),
    ("caveat.rs: Caveat::VerifyFailed.os_error", "OS error text"),
    ("caveat.rs: Caveat::SyncFailed.os_error", "OS error text"),
    (
        "caveat.rs: Caveat::FioImported.version",
        "fio's version string",
    ),
    ("caveat.rs: Caveat::FioSpanUnknown.jobs", "fio job names"),
    (
        "caveat.rs: Caveat::Stored.0",
        "legacy: a caveat as earlier releases worded it",
    ),
    (
        "caveat.rs: SkipReason::WritesNotAllowed.path",
        "the target's path",
    ),
    (
        "caveat.rs: SkipReason::WritesNotAllowed.busy",
        "the safety check's words on what uses the device (made in medium/)",
    ),
    ("caveat.rs: SkipReason::OnRank.host", "the rank's host name"),
    (
        "caveat.rs: SkipReason::Stored.0",
        "legacy: a reason as earlier releases worded it",
    ),
    (
        "curve.rs: FitReason::Stored.0",
        "legacy: a reason as earlier releases worded it",
    ),
    (
        "curve.rs: DeviationCause::Stored.0",
        "legacy: a note as earlier releases worded it",
    ),
    (
        "curve.rs: Crossover.faster_below",
        "a target's path as given",
    ),
    (
        "curve.rs: Crossover.faster_above",
        "a target's path as given",
    ),
    (
        "curve.rs: CeilingVerdict.interface",
        "the link's name from the probe (`USB 2.0 High Speed`)",
    ),
    (
        "apps.rs: LoadMethod::Stored.0",
        "legacy: the method as earlier releases worded it",
    ),
    (
        "apps.rs: SaveSkip::Stored.0",
        "legacy: a reason as earlier releases worded it",
    ),
    ("apps.rs: EvictionProblem::Failed.path", "a file's path"),
    ("apps.rs: EvictionProblem::Failed.os_error", "OS error text"),
    (
        "apps.rs: EvictionProblem::Stored.0",
        "legacy: a problem as earlier releases worded it",
    ),
    (
        "apps.rs: SaveDeviceIo.device",
        "kernel name of a block device",
    ),
    (
        "device.rs: SurfaceSample.error",
        "OS error text at a position",
    ),
    ("device.rs: ParallelReport.targets", "the targets' paths"),
    (
        "device.rs: ParallelTest.name",
        "the workload's name, a label",
    ),
    ("device.rs: ParallelDevice.target", "the target's path"),
    ("device.rs: CopyReport.source", "the image's path"),
    (
        "device.rs: CopyReport.destination",
        "the destination's path",
    ),
    (
        "measured.rs: SaveRun.failure",
        "OS error text (not stored: a measurement's hand-over)",
    ),
    (
        "payload.rs: Payload::Imported.tool",
        "the importing tool's name (`fio`)",
    ),
    (
        "named.rs: TestRw::Imported.0",
        "an imported job's rw as the other tool named it",
    ),
    (
        "named.rs: TestEngine::Imported.0",
        "an imported job's engine as the other tool named it",
    ),
    ("live.rs: StartLine.command", "the command's name as typed"),
    (
        "live.rs: StartLine.plan",
        "the live start line's plan, the text header's words (live output, not a stored result)",
    ),
    ("device.rs: EndureCycle.error", "OS error text"),
    (
        "config.rs: Recorded::Stored.0",
        "legacy: a configuration as earlier releases stored it (JSON)",
    ),
    (
        "payload.rs: Payload::Imported.config",
        "the imported tool's own options, free-form JSON from outside",
    ),
    // Names, labels and legacy words of the flash, compare, stored and
    // cluster results.
    ("cluster.rs: LostRank.host", "the host's name"),
    (
        "cluster.rs: MergeNote::Legacy.0",
        "legacy: a merge note as earlier releases worded it",
    ),
    ("cluster.rs: RankRow.host", "the host's name"),
    ("cluster.rs: RankRow.target", "the rank's target path"),
    ("cluster.rs: MpiTest.name", "the workload's name, a label"),
    (
        "cluster.rs: NoPartner::Legacy.0",
        "legacy: the words of a run stored before the reasons were typed",
    ),
    ("cluster.rs: NoPartnerKind::OneHost.host", "the host's name"),
    ("cluster.rs: RankIdentity.host", "the host's name"),
    ("cluster.rs: RankIdentity.version", "the build's version"),
    ("cluster.rs: RankIdentity.build", "the build's identity"),
    ("cluster.rs: RankIdentity.kernel", "the kernel release"),
    (
        "cluster.rs: RankIdentity.file_system",
        "the file system's name from the kernel",
    ),
    ("cluster.rs: RankIdentity.target", "the rank's target path"),
    (
        "compare.rs: Entry.source",
        "the run's label (`run 12`) or a file name",
    ),
    (
        "compare.rs: TestKey.member",
        "a member's target path in a parallel run",
    ),
    (
        "compare.rs: NoTests::OtherCommand.command",
        "the command's name",
    ),
    ("compare.rs: TestChange.run", "the run's label or file name"),
    ("compare.rs: TestChange.test", "the test's label"),
    (
        "compare.rs: NotCompared.run",
        "the run's label or file name",
    ),
    ("compare.rs: NotCompared.test", "the tests' labels"),
    (
        "compare.rs: Comparison.baseline",
        "the base run's label or file name",
    ),
    ("compare.rs: RunTarget.run", "the run's label or file name"),
    ("compare.rs: RunTarget.target", "the target's path"),
    ("compare.rs: RunTarget.device", "the device's label"),
    ("compare.rs: RunOutcome.run", "the run's label or file name"),
    (
        "flash/outcome.rs: StoredFigure.key",
        "a key path of a document an earlier release stored",
    ),
    (
        "flash/outcome.rs: Outcome::Classes.claimed",
        "SD class labels as printed on a card (C10, U3, V30, A2)",
    ),
    (
        "flash/outcome.rs: Outcome::Classes.untold",
        "SD class labels as printed on a card, those a link kept from being told",
    ),
    (
        "flash/outcome.rs: FamilyMet.met",
        "SD class labels (C10, U3, V30, A2)",
    ),
    ("flash/outcome.rs: FamilyMet.highest", "an SD class label"),
    ("flash/outcome.rs: ClassCheck.class", "an SD class label"),
    ("flash.rs: Figure::Requirement.class", "an SD class label"),
    (
        "flash.rs: Figure::Repair.target",
        "the device's path as given",
    ),
    (
        "flash/outcome.rs: Outcome::Legacy.verdict",
        "legacy: the verdict as earlier releases worded it",
    ),
    (
        "flash/outcome.rs: Reason::Stored.note",
        "legacy: a note as earlier releases worded it",
    ),
    (
        "flash/outcome.rs: StoredReport.rest",
        "legacy: reading a flash report stored by an earlier release",
    ),
    (
        "flash/outcome.rs: StoredFinding.name",
        "legacy: a finding's words as stored",
    ),
    (
        "flash/outcome.rs: StoredFinding.value",
        "legacy: a finding's words as stored",
    ),
    (
        "flash/outcome.rs: StoredFinding.note",
        "legacy: a finding's words as stored",
    ),
    (
        "flash.rs: Figure::Words.name",
        "legacy: a finding stored without figures",
    ),
    (
        "flash.rs: Figure::Words.value",
        "legacy: a finding stored without figures",
    ),
    (
        "flash.rs: AuSource::Words.0",
        "legacy: the AU's source as stored",
    ),
    (
        "flash.rs: FlashTable::Words.0",
        "legacy: a raw table stored as words",
    ),
    ("stored.rs: DeviceRow.key", "the store's device key"),
    ("stored.rs: DeviceRow.label", "the device's label"),
    ("stored.rs: DeviceRow.first_seen", "a timestamp"),
    ("stored.rs: DeviceRow.last_seen", "a timestamp"),
    ("stored.rs: RunRow.device_label", "the device's label"),
    ("stored.rs: RunRow.target", "the target's path"),
    ("stored.rs: RunRow.command", "the command's name"),
    (
        "stored.rs: RunRow.source",
        "where the run came from (local, imported file)",
    ),
    ("stored.rs: RunRow.started_at", "a timestamp"),
    ("stored.rs: Figure.test", "the test's label"),
    ("stored.rs: HistoryPoint.device", "the device's label"),
    ("stored.rs: HistoryPoint.started_at", "a timestamp"),
    ("stored.rs: HistoryPoint.test", "the test's label"),
    (
        "stored.rs: Replaced.problem",
        "SQLite's own words (quick_check)",
    ),
    (
        "stored.rs: Replaced.unsalvageable",
        "SQLite's own words on why nothing could be read",
    ),
    (
        "stored.rs: UnreadableRun.why",
        "the JSON parser's own words on a run it could not read",
    ),
    (
        "stored.rs: ForeignObject.name",
        "a name in the database iocurve did not make",
    ),
    (
        "stored.rs: ForeignObject.table",
        "a table's name in the database",
    ),
    (
        "compare.rs: NotCompared.reason",
        "NOT YET TYPED: why a test was set apart, worded in analysis/compare (issue 36 open)",
    ),
    (
        "compare.rs: Comparison.caveats",
        "NOT YET TYPED: the spread caveat, worded in analysis/ranks (issue 36 open)",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/result") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// True when a type names a `String` or a JSON `Value`.
fn is_stringly(ty: &str) -> bool {
    let words: Vec<&str> = ty
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    words.contains(&"String") || words.contains(&"Value")
}

/// The code of a line: no comment, trimmed.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("").trim()
}

/// The item a line opens (`struct`/`enum` and its name), if any.
fn opens_item(t: &str) -> Option<(bool, String)> {
    let words: Vec<&str> = t.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "struct" || *w == "enum")?;
    let name: String = words
        .get(at + 1)?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    Some((words[at] == "enum", name))
}

struct Item {
    is_enum: bool,
    name: String,
    depth: i32,
    variant: Option<String>,
}

/// Every stringly field of the structs and enums of one file's source.
fn stringly_fields(file: &str, src: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut depth = 0i32;
    let mut item: Option<Item> = None;
    for line in src.lines() {
        let t = code(line);
        if t.starts_with("#[cfg(test)]") && item.is_none() {
            break;
        }
        if t.starts_with('#') || t.is_empty() {
            continue;
        }
        let opens = t.matches('{').count() as i32;
        let closes = t.matches('}').count() as i32;
        match &mut item {
            None => {
                if let Some((is_enum, name)) = opens_item(t) {
                    if let (Some(a), Some(b)) = (t.find('('), t.rfind(')'))
                        && !is_enum
                        && is_stringly(&t[a + 1..b])
                    {
                        found.push(format!("{file}: {name}.0"));
                    }
                    if opens > closes {
                        item = Some(Item {
                            is_enum,
                            name,
                            depth,
                            variant: None,
                        });
                    }
                }
            }
            Some(it) => {
                let rel = depth - it.depth;
                let owner = match &it.variant {
                    Some(v) if rel == 2 => format!("{}::{v}", it.name),
                    _ => it.name.clone(),
                };
                let field = (it.is_enum && rel == 2) || (!it.is_enum && rel == 1);
                if field {
                    if let Some((name, ty)) = t.split_once(':') {
                        let name = name
                            .trim()
                            .trim_start_matches("pub(crate)")
                            .trim_start_matches("pub")
                            .trim();
                        if is_stringly(ty) {
                            found.push(format!("{file}: {owner}.{name}"));
                        }
                    }
                } else if it.is_enum && rel == 1 {
                    let name: String = t
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if let (Some(a), Some(b)) = (t.find('('), t.rfind(')'))
                        && is_stringly(&t[a + 1..b])
                    {
                        found.push(format!("{file}: {}::{name}.0", it.name));
                    }
                    if let (Some(a), Some(b)) = (t.find('{'), t.rfind('}')) {
                        for (field, ty) in t[a + 1..b].split(',').filter_map(|f| f.split_once(':'))
                        {
                            if is_stringly(ty) {
                                found.push(format!("{file}: {}::{name}.{}", it.name, field.trim()));
                            }
                        }
                    }
                    if opens > closes {
                        it.variant = Some(name);
                    }
                }
            }
        }
        depth += opens - closes;
        if item.as_ref().is_some_and(|it| depth <= it.depth) {
            item = None;
        }
    }
    found
}

#[test]
fn a_result_holds_no_string_but_names_from_outside() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/result");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let allowed: BTreeSet<&str> = ALLOWED.iter().map(|(k, _)| *k).collect();
    let mut seen = BTreeSet::new();
    let mut unlisted = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let src = std::fs::read_to_string(path).unwrap();
        for field in stringly_fields(&rel, &src) {
            seen.insert(field.clone());
            if !allowed.contains(field.as_str()) {
                unlisted.push(field);
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "string fields in src/result/ that are not names from outside; give each outcome an enum with its figures and word it in src/report/ (or, for a name from outside, add it to ALLOWED with why):\n  {}",
        unlisted.join("\n  ")
    );
    let stale: Vec<&&str> = allowed.iter().filter(|k| !seen.contains(**k)).collect();
    assert!(
        stale.is_empty(),
        "ALLOWED lists fields that are no longer strings (or no longer exist): remove them:\n  {stale:?}"
    );
}

#[test]
fn the_reader_finds_fields_of_structs_and_variants() {
    let src = r#"
pub struct A {
    /// doc
    pub name: String,
    pub size: u64,
    pub list: Vec<(u64, String)>,
}
#[serde(tag = "x")]
pub enum B {
    One { why: Option<String>, n: u32 },
    Two {
        what: String,
        n: u64,
    },
    Three(String),
    Four,
}
impl A {
    fn f() -> A { A { name: String::new(), size: 0, list: vec![] } }
}
#[cfg(test)]
mod tests {
    struct C { s: String }
}
"#;
    assert_eq!(
        stringly_fields("x.rs", src),
        [
            "x.rs: A.name",
            "x.rs: A.list",
            "x.rs: B::One.why",
            "x.rs: B::Two.what",
            "x.rs: B::Three.0"
        ]
    );
}
