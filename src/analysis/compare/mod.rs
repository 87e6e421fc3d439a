//! What changed between runs, test by test: every later run is set against
//! the first, each pair of like tests (see [`matching`]) gets a verdict
//! from a bootstrap interval on the ratio of mean MB/s (after / before;
//! see [`crate::stats::bootstrap`]), so a percentage change is ratio − 1
//! and cannot pass −100%, and the verdict names the repetitions it rests
//! on. Tests without a like partner are set apart with the reason and the
//! nearest test the other run has. When no later run shares a single kind
//! of test with the first, there is nothing to compare, and the comparison
//! is refused with that reason rather than judged on unlike figures.
//!
//! The interval is not the repetitions' alone: they share one run's host
//! load, page cache and thermal state, and two runs differ by more than
//! that. Each verdict adds the run-to-run noise of
//! [`crate::stats::between_runs`] (a two-level variance: within-run plus
//! between-run), estimated from the earlier runs of the same test on the
//! same target when the caller passes them (`history`; disturbed ones left
//! out), else a floor. A run that shared its device or CPUs
//! ([`conditions`]) gets "cannot tell" ([`verdict`]). What differed between
//! the two runs' machines is named beside the verdict, and every run's
//! target is named, so two files on one disk are not taken for one series.
//!
//! Pure: entries (and the device's earlier runs) in, a [`Comparison`] out; `report::compare` prints it and
//! `commands::compare` turns [`regressions`] into an exit code.

pub mod conditions;
#[cfg(test)]
mod law;
pub mod matching;
pub mod series;
pub mod verdict;

use crate::result::compare::{
    ChangeVerdict, Comparison, Entry, NotCompared, RunOutcome, RunTarget, TestChange,
};
use crate::result::{Payload, RunResult, TestResult};
use crate::stats::between_runs;
use crate::stats::bootstrap::{self, Verdict};
use matching::Keyed;

/// MB/s of the complete repetitions of a test: what a verdict rests on
/// and what a compared figure shows.
pub fn repetitions(t: &TestResult) -> Vec<f64> {
    t.repetitions
        .iter()
        .filter(|m| !m.interrupted && m.ops > 0)
        .map(|m| m.mb_per_s)
        .collect()
}

/// The key shared by every entry, when there is one.
pub fn same_device(entries: &[Entry]) -> Option<&str> {
    let key = entries
        .first()?
        .result
        .device_identity
        .as_ref()?
        .key
        .as_str();
    entries
        .iter()
        .all(|e| {
            e.result
                .device_identity
                .as_ref()
                .is_some_and(|i| i.key == key)
        })
        .then_some(key)
}

/// What a run measured, as the reader knows it: the device's key and the
/// target's path. Two files on one disk share the one, not the other.
pub fn target_of(r: &RunResult) -> (Option<&str>, &str) {
    (
        r.device_identity.as_ref().map(|i| i.key.as_str()),
        r.target.path.as_str(),
    )
}

/// The repetitions of every run of `history` on one of `targets` with an
/// undisturbed test like `key`: the runs whose spread is the noise of the
/// test (a disturbed run's figure is its company's, and another file's
/// figures are another series).
fn history_of(
    key: &crate::result::compare::TestKey,
    targets: &[(Option<&str>, &str)],
    history: &[RunResult],
    started_before: Option<&str>,
) -> Vec<Vec<f64>> {
    history
        .iter()
        .filter(|r| targets.contains(&target_of(r)))
        .filter(|r| started_before.is_none_or(|t| earlier(&r.started_at, t)))
        .filter_map(|r| {
            let tests = matching::tests_of(r).ok()?;
            let like = tests.iter().find(|k| &k.key == key)?;
            let quiet = conditions::of_test(like.test).is_none_or(|c| !c.disturbed);
            quiet.then(|| repetitions(like.test))
        })
        .collect()
}

/// True when the RFC 3339 time `a` is strictly before `b`; false when
/// either does not parse (a run of unknown time is not taken as older).
fn earlier(a: &str, b: &str) -> bool {
    match (humantime::parse_rfc3339(a), humantime::parse_rfc3339(b)) {
        (Ok(a), Ok(b)) => a < b,
        _ => false,
    }
}

/// One pair of like tests: the runs' names, their tests, and what the
/// verdict rests on besides them.
struct Pair<'p, 'a> {
    run: &'p str,
    before: &'p Keyed<'a>,
    after: &'p Keyed<'a>,
    targets: [(Option<&'a str>, &'a str); 2],
    /// When the later run started: the device's runs before it may pool
    /// with the earlier run.
    after_started: &'a str,
}

/// What the earlier side is judged with: pooled with the device's like
/// runs before the later one when it agrees with them, else the pair
/// alone with the spread of all its like runs.
fn noise_of(p: &Pair<'_, '_>, history: &[RunResult]) -> verdict::Noise {
    let older = history_of(&p.before.key, &p.targets, history, Some(p.after_started));
    let all = history_of(&p.before.key, &p.targets, history, None);
    noise_from(&repetitions(p.before.test), &older, &all)
}

/// [`noise_of`] on repetitions alone: `before`'s, those of the like runs
/// older than the later run (`older`), and those of every like run but
/// the two compared (`all`). When `before` does not pool, the pair stands
/// alone with the spread of `all` and `before`.
fn noise_from(before: &[f64], older: &[Vec<f64>], all: &[Vec<f64>]) -> verdict::Noise {
    match between_runs::pooled(before, older) {
        Some(pool) => {
            verdict::Noise::Pooled(pool.spread_at_least(between_runs::spread_of_runs(all)))
        }
        // The earlier run is out of line with its history: it is evidence
        // of how far a run of this device strays, so the spread between
        // runs counts it. Without it, one slow run on a shared host, taken
        // as the baseline, makes every ordinary run after it "faster".
        None => between_runs::between(&with_run(all, before)).into(),
    }
}

/// `runs` and `run`, as one history.
fn with_run(runs: &[Vec<f64>], run: &[f64]) -> Vec<Vec<f64>> {
    let mut all = runs.to_vec();
    all.push(run.to_vec());
    all
}

/// The statement on one pair of like tests (see [`verdict`]), with the
/// run-to-run noise from `history` when it has enough runs.
fn change(p: &Pair<'_, '_>, threshold: f64, history: &[RunResult], simulated: bool) -> TestChange {
    let (b, a) = (repetitions(p.before.test), repetitions(p.after.test));
    let (host_before, host_after) = (
        conditions::of_test(p.before.test),
        conditions::of_test(p.after.test),
    );
    let noise = match simulated {
        true => between_runs::BetweenRuns::simulated().into(),
        false => noise_of(p, history),
    };
    let (statement, evidence) = verdict::judge(
        &b,
        &a,
        threshold,
        noise,
        (host_before.as_ref(), host_after.as_ref()),
    );
    let host_differences = match (&host_before, &host_after) {
        (Some(x), Some(y)) => conditions::differences(x, y),
        _ => Vec::new(),
    };
    TestChange {
        host_before,
        host_after,
        host_differences,
        run: p.run.to_string(),
        test: matching::describe(&p.before.key),
        key: p.before.key.clone(),
        percent_change: evidence.as_ref().ok().map(Verdict::percent_change),
        change: statement,
        verdict: evidence,
        before_mb_s: b,
        after_mb_s: a,
        engines: matching::engines_differ(&p.before.key, &p.after.key),
    }
}

/// "run 1 has no such test (nearest: 1 MiB read QD8, which differs in
/// size 1 MiB vs 4 KiB)".
fn unmatched_reason(t: &Keyed<'_>, base: &Entry, base_tests: &[Keyed<'_>]) -> String {
    let mut reason = format!("{} has no such test", base.source);
    if let Some((near, diff)) = matching::nearest(&t.key, base_tests) {
        reason.push_str(&format!(
            " (nearest: {}, which differs in {})",
            matching::describe(&near.key),
            diff.join(", ")
        ));
    }
    reason
}

/// One later run set against the base's tests.
fn against_base(
    e: &Entry,
    base: &Entry,
    base_tests: &[Keyed<'_>],
    threshold: f64,
    history: &[RunResult],
    out: &mut Comparison,
) {
    let tests = match matching::tests_of(&e.result) {
        Ok(t) => t,
        Err(why) => {
            out.not_compared.push(NotCompared {
                run: e.source.clone(),
                test: None,
                reason: why.text(),
            });
            return;
        }
    };
    let pairing = matching::pair(base_tests, &tests);
    // Both on a virtual clock: no host reaches their figures.
    let simulated = [e, base]
        .iter()
        .all(|x| x.result.target.kind == crate::result::TargetKind::Simulated);
    for (b, a) in &pairing.pairs {
        let pair = Pair {
            run: &e.source,
            before: b,
            after: a,
            targets: [target_of(&base.result), target_of(&e.result)],
            after_started: &e.result.started_at,
        };
        out.changes
            .push(change(&pair, threshold, history, simulated));
    }
    for t in &pairing.other_only {
        out.not_compared.push(NotCompared {
            run: e.source.clone(),
            test: Some(matching::describe(&t.key)),
            reason: unmatched_reason(t, base, base_tests),
        });
    }
    if !pairing.base_only.is_empty() {
        let missing: Vec<String> = pairing
            .base_only
            .iter()
            .map(|k| matching::describe(&k.key))
            .collect();
        out.not_compared.push(NotCompared {
            run: base.source.clone(),
            test: Some(missing.join("; ")),
            reason: format!("{} has no such test", e.source),
        });
    }
}

/// Every later run against the first; `Err` with the reason when there
/// are two runs or more and not one pair of like tests among them.
/// `history` holds the device's earlier runs (none of `entries`), whose
/// spread sets the run-to-run noise; empty, a floor stands in for it.
pub fn compare(
    entries: &[Entry],
    threshold: f64,
    history: &[RunResult],
) -> Result<Comparison, String> {
    let base = entries.first().ok_or("no runs to compare")?;
    let mut out = Comparison {
        baseline: base.source.clone(),
        same_device: same_device(entries).is_some(),
        targets: entries.iter().map(run_target).collect(),
        threshold,
        level: bootstrap::LEVEL,
        changes: Vec::new(),
        not_compared: Vec::new(),
        caveats: caveats(entries),
        outcomes: entries.iter().filter_map(own_outcome).collect(),
    };
    let base_tests = match matching::tests_of(&base.result) {
        Ok(tests) => tests,
        // Runs of one kind with no repeated tests (sustain, flash, ...):
        // their outcomes side by side, and no verdict of change.
        Err(_) if out.outcomes.len() == entries.len() && same_command(entries) => {
            return Ok(out);
        }
        Err(why) => {
            return Err(format!(
                "{} has nothing to compare: {}",
                base.source,
                why.text()
            ));
        }
    };
    for e in &entries[1..] {
        against_base(e, base, &base_tests, threshold, history, &mut out);
    }
    if entries.len() > 1 && out.changes.is_empty() {
        let reasons: Vec<String> = out.not_compared.iter().map(NotCompared::text).collect();
        return Err(format!(
            "nothing to compare: no later run has a test like one of {}'s\n{}",
            base.source,
            reasons.join("\n")
        ));
    }
    Ok(out)
}

/// The run's own outcome, when its findings are more than repeated tests.
fn own_outcome(e: &Entry) -> Option<RunOutcome> {
    let plain = matches!(
        e.result.payload,
        Payload::Profile { .. } | Payload::Run { .. } | Payload::Imported { .. }
    );
    (!plain).then(|| RunOutcome {
        run: e.source.clone(),
        result: e.result.payload.clone(),
    })
}

/// Whether every run is of one command (two sustains, not a sustain and a
/// flash test).
fn same_command(entries: &[Entry]) -> bool {
    entries
        .windows(2)
        .all(|w| w[0].result.command() == w[1].result.command())
}

/// Which target a run measured, on which device, as `compare` names it.
fn run_target(e: &Entry) -> RunTarget {
    let r = &e.result;
    RunTarget {
        run: e.source.clone(),
        target: r.target.path.clone(),
        device: r.device_identity.as_ref().map(|i| i.label.clone()),
    }
}

/// What the verdicts rest on that the figures do not show: runs on many
/// hosts compared with runs spread otherwise (their merged figures are
/// compared, but 8 ranks on 4 hosts against 4 on 2 is a different job).
fn caveats(entries: &[Entry]) -> Vec<String> {
    let runs: Vec<(&str, &crate::result::RunResult)> = entries
        .iter()
        .map(|e| (e.source.as_str(), &e.result))
        .collect();
    super::ranks::spread_caveat(&runs).into_iter().collect()
}

/// The changes that break a `--fail-above` gate: judged slower (beyond the
/// noise threshold, at the verdict's confidence) with an estimated change
/// below −`fail_above` (a share: 0.05 for 5%).
pub fn regressions(c: &Comparison, fail_above: f64) -> Vec<&TestChange> {
    c.changes
        .iter()
        .filter(|ch| match &ch.change {
            ChangeVerdict::Slower { percent } => percent.estimate < -fail_above,
            _ => false,
        })
        .collect()
}

/// The pairs a `--fail-above` gate cannot vouch for: no statement could be
/// made (a disturbed run, too few repetitions).
pub fn undecided(c: &Comparison) -> Vec<&TestChange> {
    c.changes
        .iter()
        .filter(|ch| matches!(ch.change, ChangeVerdict::CannotTell { .. }))
        .collect()
}
