//! The report is organised by device, as the results database is: runs are
//! grouped by their device identity's key (the store files a run without
//! one under "unknown"), and each device gets its headline figures and
//! verdicts, worked out here from the runs and the stored history so the
//! sections only lay them out.

use crate::analysis::compare::series;
use crate::probe::DeviceIdentity;
use crate::result::compare::{Access, Direction};
use crate::result::{RunResult, TestResult};

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
    let flash = |read: bool| {
        preferred.iter().find_map(|r| {
            let speeds = flash_speeds(r)?;
            flash_headline(
                r,
                if read {
                    speeds.read_mb_s
                } else {
                    speeds.write_mb_s
                },
            )
        })
    };
    Headlines {
        seq_read_mb_s: pick(&seq(crate::vocab::Rw::Read), false).or_else(|| flash(true)),
        seq_write_mb_s: pick(&seq(crate::vocab::Rw::Write), false).or_else(|| flash(false)),
        rnd4k_read_iops: pick(&rnd4k("randread"), true),
        rnd4k_write_iops: pick(&rnd4k("randwrite"), true),
    }
}

/// Speeds a flash run measured, as the summary shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct FlashSpeeds {
    write_mb_s: Option<f64>,
    read_mb_s: Option<f64>,
}

/// The write and read speeds a flash run measured, from its typed
/// figures: a fake card's flush and read-back (capacity), Pw and Pr
/// (class); `None` for other runs. One small reading, so a retyped flash
/// result changes one place.
fn flash_speeds(run: &RunResult) -> Option<FlashSpeeds> {
    use crate::result::flash::Figure;
    let mut out = FlashSpeeds::default();
    for f in run.payload.flash()?.findings.iter().map(|f| &f.figure) {
        match *f {
            Figure::OkLost {
                write_mb_per_s,
                read_mb_per_s,
                ..
            } => {
                out.write_mb_s = out.write_mb_s.or(write_mb_per_s);
                out.read_mb_s = out.read_mb_s.or(read_mb_per_s);
            }
            Figure::Pw { mean_mb_per_s, .. } => {
                out.write_mb_s = out.write_mb_s.or(Some(mean_mb_per_s))
            }
            Figure::Pr { mb_per_s, .. } => out.read_mb_s = out.read_mb_s.or(Some(mb_per_s)),
            _ => {}
        }
    }
    (out != FlashSpeeds::default()).then_some(out)
}

/// The headline of a flash run's speed, named by its test.
fn flash_headline(run: &RunResult, value: Option<f64>) -> Option<Headline> {
    Some(Headline {
        test: format!("flash {}", run.payload.flash()?.test.name()),
        value: value?,
    })
}

/// Short sentences about a device: the newest change of each of its
/// targets (the statement `compare` makes of the same two runs, see
/// [`series`]), runs that did not finish, advice its curves gave.
/// `earlier` holds the device's stored runs that set the noise.
pub fn verdicts(group: &DeviceGroup<'_>, earlier: &[RunResult]) -> Vec<String> {
    let mut out = changes(group, earlier);
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

/// "/dev/vda, 1 MiB write QD8: no clear change (...)": the newest run of
/// each target against its previous one, sequential tests only (those the
/// summary's figures come from).
fn changes(group: &DeviceGroup<'_>, earlier: &[RunResult]) -> Vec<String> {
    let mut out = Vec::new();
    for n in series::newest(&group.runs, earlier) {
        for ch in &n.changes {
            let k = &ch.key;
            let shown = k.access == Access::Sequential
                && k.block_size >= SEQUENTIAL_MIN
                && matches!(k.direction, Direction::Read | Direction::Write);
            if shown {
                out.push(format!(
                    "{}, {}: {} in the newest run",
                    crate::report::table::cut(&n.target, crate::units::escape::NAME_COLUMNS),
                    ch.test,
                    crate::report::compare::statement(ch)
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    fn run_of(serial: Option<&str>, date: &str, read: f64) -> RunResult {
        let id = serial.map(|s| testdata::sd_identity("SD08G", 3, "SD", s, "2008-12"));
        testdata::run(id, date, &[read, read, read], &[10.0, 10.0, 10.0])
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

    /// The report's statement is `compare`'s, per target: a faster newest
    /// run with noisy earlier runs is no clear change, not "faster by 38%".
    #[test]
    fn the_newest_change_is_compares_and_per_target() {
        let mut runs = vec![
            run_of(Some("0xaaaa"), "2026-01-01", 20.0),
            run_of(Some("0xaaaa"), "2026-01-02", 26.0),
            run_of(Some("0xaaaa"), "2026-01-03", 19.0),
            run_of(Some("0xaaaa"), "2026-01-04", 27.6),
        ];
        for (r, reads) in
            runs.iter_mut()
                .zip([[16.0, 24.0], [21.0, 31.0], [15.0, 23.0], [22.0, 33.0]])
        {
            r.tests[0].repetitions = reads
                .iter()
                .map(|v| testdata::measurement(*v, 1 << 20))
                .collect();
        }
        let groups = group_by_device(&runs);
        let lines = verdicts(&groups[0], &[]);
        assert!(
            lines
                .iter()
                .any(|l| l.contains("1 MiB read QD1: no clear change")),
            "{lines:?}"
        );
        assert!(!lines.iter().any(|l| l.contains("faster by")), "{lines:?}");
    }
}
