//! The report is organised by device, as the results database is: runs are
//! grouped by their device identity's key (the store files a run without
//! one under "unknown"), and each device gets its headline figures and
//! verdicts, worked out here from the runs and the stored history so the
//! sections only lay them out.

use crate::probe::DeviceIdentity;
use crate::result::stored::HistoryPoint;
use crate::result::{RunResult, TestResult};
use crate::units::format_mbps;

/// The key the store gives a run without a device identity.
pub const UNKNOWN_KEY: &str = "unknown";

/// One device and the report's runs of it, oldest first.
pub struct DeviceGroup<'a> {
    pub key: String,
    pub label: String,
    /// The newest run's identity, the one the card shows.
    pub identity: Option<&'a DeviceIdentity>,
    pub runs: Vec<&'a RunResult>,
}

/// The runs grouped by device, devices in the order their first run
/// appears, runs in their given order.
pub fn group_by_device(runs: &[RunResult]) -> Vec<DeviceGroup<'_>> {
    let mut groups: Vec<DeviceGroup<'_>> = Vec::new();
    for run in runs {
        let key = device_key(run);
        match groups.iter_mut().find(|g| g.key == key) {
            Some(g) => {
                g.runs.push(run);
                if run.device_identity.is_some() {
                    g.identity = run.device_identity.as_ref();
                }
            }
            None => groups.push(DeviceGroup {
                label: run
                    .device_identity
                    .as_ref()
                    .map_or_else(|| "unknown device".to_string(), |i| i.label.clone()),
                key,
                identity: run.device_identity.as_ref(),
                runs: vec![run],
            }),
        }
    }
    groups
}

/// The store's key for the run's device.
pub fn device_key(run: &RunResult) -> String {
    run.device_identity
        .as_ref()
        .map_or_else(|| UNKNOWN_KEY.to_string(), |i| i.key.clone())
}

/// A figure and the test it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub test: String,
    pub value: f64,
}

/// What the summary shows of a device: its newest figure of each kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Headlines {
    pub seq_read_mb_s: Option<Headline>,
    pub seq_write_mb_s: Option<Headline>,
    pub rnd4k_read_iops: Option<Headline>,
    pub rnd4k_write_iops: Option<Headline>,
}

/// Sequential figures come from transfers of at least this size.
const SEQUENTIAL_MIN: u64 = 128 * 1024;

/// The newest measured figure of each kind across the runs (newest last):
/// the first matching test of the newest profile that has one (for a
/// profile its deepest queue), else of the newest other run.
pub fn headlines(runs: &[&RunResult]) -> Headlines {
    let profiles = runs.iter().rev().filter(|r| r.is_profile());
    let others = runs.iter().rev().filter(|r| !r.is_profile());
    let preferred: Vec<&&RunResult> = profiles.chain(others).collect();
    let pick = |matches: &dyn Fn(&TestResult) -> bool, iops: bool| {
        preferred.iter().find_map(|run| {
            run.tests
                .iter()
                .filter(|t| t.skipped.is_none() && matches(t))
                .find_map(|t| {
                    let spread = if iops { t.iops } else { t.mb_per_s }?;
                    Some(Headline {
                        test: t.name.clone(),
                        value: spread.median,
                    })
                })
        })
    };
    let seq = |rw: crate::vocab::Rw| {
        move |t: &TestResult| t.workload.rw == rw && t.workload.block_size >= SEQUENTIAL_MIN
    };
    let rnd4k = |rw: &'static str| {
        move |t: &TestResult| t.workload.rw == rw && t.workload.block_size == 4096
    };
    Headlines {
        seq_read_mb_s: pick(&seq(crate::vocab::Rw::Read), false),
        seq_write_mb_s: pick(&seq(crate::vocab::Rw::Write), false),
        rnd4k_read_iops: pick(&rnd4k("randread"), true),
        rnd4k_write_iops: pick(&rnd4k("randwrite"), true),
    }
}

/// Two figures count as the same speed within this share of each other.
const STEADY: f64 = 0.05;

/// Short sentences about a device: how its figures moved across its stored
/// runs, runs that did not finish, advice its curves gave.
pub fn verdicts(group: &DeviceGroup<'_>, history: &[HistoryPoint]) -> Vec<String> {
    let mut out = Vec::new();
    let heads = headlines(&group.runs);
    for (what, head, rw) in [
        ("sequential read", &heads.seq_read_mb_s, "read"),
        ("sequential write", &heads.seq_write_mb_s, "write"),
    ] {
        if let Some(h) = head {
            out.extend(trend(what, &h.test, rw, history));
        }
    }
    let unfinished = |f: fn(&RunResult) -> bool| group.runs.iter().filter(|r| f(r)).count();
    let interrupted = unfinished(|r| r.interrupted);
    let failed = unfinished(|r| r.error.is_some());
    if interrupted > 0 {
        out.push(format!(
            "{interrupted} run(s) interrupted: their figures are partial"
        ));
    }
    if failed > 0 {
        out.push(format!("{failed} run(s) failed: their figures are partial"));
    }
    for run in group.runs.iter().rev() {
        if let Some(curve) = run.payload.curve() {
            out.extend(curve.series.iter().filter_map(|s| {
                crate::report::curve_words::advice_cell(s)
                    .map(|advice| format!("curve ({}): {advice}", s.pattern.name()))
            }));
            break;
        }
    }
    if let Some(drop) = group
        .runs
        .iter()
        .rev()
        .find_map(|r| r.payload.sustain().and_then(|s| s.drop.as_ref()))
    {
        out.push(format!(
            "sustained writes slowed down {}",
            crate::report::text_sustain::drop_sentence(drop)
        ));
    }
    out
}

/// How one test's median moved over the stored runs: the newest against
/// the median of the earlier ones.
fn trend(what: &str, test: &str, rw: &str, history: &[HistoryPoint]) -> Option<String> {
    let mut points: Vec<&HistoryPoint> = history
        .iter()
        .filter(|p| p.test == test && p.rw == rw)
        .collect();
    points.sort_by_key(|p| p.run_id);
    points.dedup_by_key(|p| p.run_id);
    let (newest, earlier) = points.split_last()?;
    if earlier.is_empty() {
        return None;
    }
    let mut medians: Vec<f64> = earlier.iter().map(|p| p.median).collect();
    medians.sort_by(f64::total_cmp);
    let before = medians[medians.len() / 2];
    if before <= 0.0 {
        return None;
    }
    let change = newest.median / before - 1.0;
    let runs = points.len();
    Some(if change.abs() <= STEADY {
        format!(
            "{what} steady over {runs} runs: {} MB/s, within {:.0}% of earlier runs",
            format_mbps(newest.median),
            STEADY * 100.0
        )
    } else {
        format!(
            "{what} {} by {:.0}% in the newest run ({} MB/s against {} MB/s before)",
            if change < 0.0 { "slower" } else { "faster" },
            change.abs() * 100.0,
            format_mbps(newest.median),
            format_mbps(before)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    fn run_of(serial: Option<&str>, date: &str, read: f64) -> RunResult {
        let id = serial.map(|s| testdata::sd_identity("SD08G", 3, "SD", s, "2008-12"));
        testdata::run(id, date, &[read, read, read], &[10.0, 10.0, 10.0])
    }

    fn point(run_id: i64, median: f64) -> HistoryPoint {
        HistoryPoint {
            device: "k".into(),
            run_id,
            started_at: format!("2026-01-0{run_id}"),
            test: "SEQ 1MiB Q8".into(),
            rw: "read".into(),
            median,
            min: median,
            max: median,
        }
    }

    #[test]
    fn runs_are_grouped_by_device_key_in_order_of_appearance() {
        let runs = vec![
            run_of(Some("0xaaaa"), "2026-01-01", 20.0),
            run_of(Some("0xbbbb"), "2026-01-02", 30.0),
            run_of(None, "2026-01-03", 5.0),
            run_of(Some("0xaaaa"), "2026-01-04", 21.0),
        ];
        let groups = group_by_device(&runs);
        let shape: Vec<(String, usize)> = groups
            .iter()
            .map(|g| (g.key.clone(), g.runs.len()))
            .collect();
        assert_eq!(groups.len(), 3, "{shape:?}");
        assert_eq!(groups[0].runs.len(), 2);
        assert_eq!(groups[0].runs[1].started_at, "2026-01-04");
        assert_eq!(groups[0].key, device_key(&runs[0]));
        assert_ne!(groups[0].key, groups[1].key);
        assert_eq!(groups[2].key, UNKNOWN_KEY);
        assert_eq!(groups[2].label, "unknown device");
        assert!(groups[2].identity.is_none());
    }

    #[test]
    fn headlines_come_from_the_newest_run() {
        let runs = [
            run_of(Some("0xaaaa"), "2026-01-01", 20.0),
            run_of(Some("0xaaaa"), "2026-01-02", 22.0),
        ];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let h = headlines(&refs);
        let read = h.seq_read_mb_s.expect("a sequential read");
        assert_eq!(read.value, 22.0);
        assert!(read.test.starts_with("SEQ"), "{}", read.test);
        assert_eq!(h.seq_write_mb_s.map(|w| w.value), Some(10.0));
    }

    #[test]
    fn trends_name_steady_and_slower_runs() {
        let steady = [point(1, 20.0), point(2, 20.4), point(3, 20.2)];
        let line = trend("sequential read", "SEQ 1MiB Q8", "read", &steady).unwrap();
        assert!(line.contains("steady over 3 runs"), "{line}");
        let slower = [point(1, 20.0), point(2, 20.0), point(3, 15.0)];
        let line = trend("sequential read", "SEQ 1MiB Q8", "read", &slower).unwrap();
        assert!(line.contains("slower by 25%"), "{line}");
        assert_eq!(trend("x", "SEQ 1MiB Q8", "read", &[point(1, 2.0)]), None);
    }
}
