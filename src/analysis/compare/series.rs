//! The newest change of each target: what `report` and `history` say of a
//! device's runs, made by the very comparison `compare` makes, so the
//! three never disagree ("faster by 38%" in the report where `compare` of
//! the same runs said "no clear change" came from a second, cruder rule:
//! the newest median against the median of the earlier ones, no noise).
//!
//! Runs are grouped by target (the device's key and the target's path):
//! two files on one disk, or a partition and its whole disk, are separate
//! series and never compared as one. In each series with two runs or more
//! the newest run is compared with the latest earlier run that shares a
//! test with it, the other runs of the series (and the caller's `history`)
//! setting the noise between runs.

use super::{compare, target_of};
use crate::result::RunResult;
use crate::result::compare::{Entry, TestChange};

/// The noise threshold of the statements `report` and `history` make:
/// `compare`'s default.
pub const THRESHOLD: f64 = 0.05;

/// The newest change of one target.
#[derive(Debug, Clone)]
pub struct Newest {
    /// The target as given (a file, a device, a `sim:` card).
    pub target: String,
    /// Start of the earlier run, RFC 3339.
    pub before_started_at: String,
    /// Start of the newest run.
    pub after_started_at: String,
    /// The statements, one per pair of like tests.
    pub changes: Vec<TestChange>,
}

/// The runs grouped by target, each group in the given order (oldest
/// first), groups in the order their first run appears.
pub fn by_target<'a>(runs: &[&'a RunResult]) -> Vec<Vec<&'a RunResult>> {
    let mut groups: Vec<Vec<&RunResult>> = Vec::new();
    for r in runs {
        match groups.iter_mut().find(|g| target_of(g[0]) == target_of(r)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
}

/// The newest run of `series` against the latest earlier one it shares a
/// test with; `None` with fewer than two runs or no such pair. `history`
/// holds more runs of the device (any target; those compared are left
/// out by their start).
fn newest_of(series: &[&RunResult], history: &[RunResult]) -> Option<Newest> {
    let (after, earlier) = series.split_last()?;
    earlier.iter().rev().find_map(|before| {
        // Each run once (the caller's history may hold the series' runs),
        // the two compared left out, as `compare` leaves them out.
        let mut noise: Vec<RunResult> = Vec::new();
        for r in series.iter().copied().chain(history) {
            let compared = [&before.started_at, &after.started_at].contains(&&r.started_at);
            if !compared && !noise.iter().any(|n| n.started_at == r.started_at) {
                noise.push(r.clone());
            }
        }
        let entries = [entry("before", before), entry("after", after)];
        let c = compare(&entries, THRESHOLD, &noise).ok()?;
        Some(Newest {
            target: after.target.path.clone(),
            before_started_at: before.started_at.clone(),
            after_started_at: after.started_at.clone(),
            changes: c.changes,
        })
    })
}

fn entry(source: &str, r: &RunResult) -> Entry {
    Entry {
        source: source.into(),
        result: r.clone(),
    }
}

/// The newest change of every target among `runs` (oldest first).
pub fn newest(runs: &[&RunResult], history: &[RunResult]) -> Vec<Newest> {
    by_target(runs)
        .iter()
        .filter_map(|series| newest_of(series, history))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::compare::ChangeVerdict;
    use crate::testdata;

    fn run(path: &str, date: &str, write: &[f64]) -> RunResult {
        let id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let mut r = testdata::run(Some(id), date, &[20.0, 20.1, 19.9], write);
        r.target.path = path.into();
        r
    }

    /// Two files on one disk, one much slower: never one series. Each
    /// file's newest run is set against its own earlier run.
    #[test]
    fn two_files_on_one_disk_are_two_series() {
        let runs = [
            run("/mnt/a", "2026-01-01T00:00:00Z", &[60.0, 61.0, 59.0]),
            run("/mnt/b", "2026-01-02T00:00:00Z", &[20.0, 20.5, 19.5]),
            run("/mnt/a", "2026-01-03T00:00:00Z", &[60.5, 60.0, 59.5]),
            run("/mnt/b", "2026-01-04T00:00:00Z", &[20.1, 20.0, 19.8]),
        ];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let n = newest(&refs, &[]);
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].target, "/mnt/a");
        assert_eq!(n[0].before_started_at, "2026-01-01T00:00:00Z");
        for s in &n {
            for ch in &s.changes {
                assert!(
                    matches!(
                        ch.change,
                        ChangeVerdict::NoChange { .. } | ChangeVerdict::NoClearChange { .. }
                    ),
                    "{}: {:?}",
                    s.target,
                    ch.change
                );
            }
        }
    }

    /// The statement is the one `compare` makes of the same two runs with
    /// the same history.
    #[test]
    fn the_statement_is_compares() {
        let runs = [
            run("/dev/vda", "2026-01-01T00:00:00Z", &[60.0, 61.0, 59.0]),
            run("/dev/vda", "2026-01-02T00:00:00Z", &[70.0, 62.0, 66.0]),
            run("/dev/vda", "2026-01-03T00:00:00Z", &[58.0, 64.0, 61.0]),
            run("/dev/vda", "2026-01-04T00:00:00Z", &[83.0, 84.0, 82.0]),
        ];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let n = newest(&refs, &[]);
        let entries = [entry("run 3", &runs[2]), entry("run 4", &runs[3])];
        let c = compare(&entries, THRESHOLD, &runs[..2]).unwrap();
        let ours: Vec<&ChangeVerdict> = n[0].changes.iter().map(|c| &c.change).collect();
        let theirs: Vec<&ChangeVerdict> = c.changes.iter().map(|c| &c.change).collect();
        assert_eq!(ours, theirs);
    }
}
