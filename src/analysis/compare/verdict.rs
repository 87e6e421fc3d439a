//! The one statement of change: from the repetitions of a pair of like
//! tests, the noise between runs and what each run's machine was doing,
//! the [`ChangeVerdict`] that `compare`, `report` and `history` all word.
//!
//! A run that shared its device or CPUs gets "cannot tell" and the reason,
//! not an interval widened until it means nothing: beside busy loops a
//! page-cache-warm loop device read 2.8 times faster, and a floor wide
//! enough for that (a factor 3.3) turned a 67% slowdown with repetitions
//! that did not overlap into "no clear change (−97% to +262%)", which no
//! `--fail-above` gate could ever fire on. "Cannot tell" has its own exit
//! code under a gate instead.

use crate::result::compare::{CannotTell, ChangeVerdict, Disturbance, RunConditions, Sides};
use crate::stats::between_runs::{BetweenRuns, Pooled};
use crate::stats::bootstrap::{self, Change, NoVerdict, Verdict};

/// Which sides were disturbed and by what, each cause once; `None` when
/// neither was.
fn disturbed(before: Option<&RunConditions>, after: Option<&RunConditions>) -> Option<CannotTell> {
    fn causes(c: Option<&RunConditions>) -> &[Disturbance] {
        c.map_or(&[], |c| &c.disturbances)
    }
    let (b, a) = (causes(before), causes(after));
    let sides = match (b.is_empty(), a.is_empty()) {
        (true, true) => return None,
        (false, true) => Sides::Before,
        (true, false) => Sides::After,
        (false, false) => Sides::Both,
    };
    let mut all: Vec<Disturbance> = Vec::new();
    for d in b.iter().chain(a) {
        if !all.contains(d) {
            all.push(*d);
        }
    }
    Some(CannotTell::Disturbed { sides, causes: all })
}

/// The verdict of a widened bootstrap interval in the typed words of a
/// statement: a change, no change, or no clear change.
pub fn of_verdict(v: &Verdict) -> ChangeVerdict {
    let percent = v.percent_change();
    match v.change {
        Change::Faster => ChangeVerdict::Faster { percent },
        Change::Slower => ChangeVerdict::Slower { percent },
        Change::NoChange => {
            let within = |r: f64| (r - 1.0).abs() <= v.threshold;
            match within(v.ratio.low) && within(v.ratio.high) {
                true => ChangeVerdict::NoChange { percent },
                false => ChangeVerdict::NoClearChange { percent },
            }
        }
    }
}

/// What the earlier side of a pair is judged with besides its own
/// repetitions.
#[derive(Debug, Clone, Copy)]
pub enum Noise {
    /// The pair alone, its interval widened by the noise between runs.
    Between(BetweenRuns),
    /// The earlier run pooled with the device's like runs before the
    /// later one (see [`crate::stats::between_runs::pooled`]).
    Pooled(Pooled),
}

impl From<BetweenRuns> for Noise {
    fn from(b: BetweenRuns) -> Noise {
        Noise::Between(b)
    }
}

/// The statement on `before` and `after` (MB/s of the complete
/// repetitions), with the noise between runs `noise` and each run's
/// conditions; the bootstrap verdict it rests on comes back beside it as
/// the evidence.
pub fn judge(
    before: &[f64],
    after: &[f64],
    threshold: f64,
    noise: Noise,
    host: (Option<&RunConditions>, Option<&RunConditions>),
) -> (ChangeVerdict, Result<Verdict, NoVerdict>) {
    let evidence = match noise {
        Noise::Between(b) => bootstrap::judge_runs(before, after, threshold, b),
        Noise::Pooled(p) => bootstrap::judge_pooled(before, after, threshold, p),
    };
    let change = match (&evidence, disturbed(host.0, host.1)) {
        (Err(NoVerdict::TooFewRepetitions { before, after }), _) => ChangeVerdict::CannotTell {
            why: CannotTell::TooFewRepetitions {
                before: *before,
                after: *after,
            },
            measured: None,
        },
        (Err(NoVerdict::NotPositive), _) => ChangeVerdict::CannotTell {
            why: CannotTell::NotPositive,
            measured: None,
        },
        (Ok(v), Some(why)) => ChangeVerdict::CannotTell {
            why,
            measured: v.within_runs.map(|w| crate::stats::bootstrap::Interval {
                estimate: w.estimate - 1.0,
                low: w.low - 1.0,
                high: w.high - 1.0,
                level: w.level,
            }),
        },
        (Ok(v), None) => of_verdict(v),
    };
    (change, evidence)
}

/// The estimate of a statement, after / before − 1, when it has one.
pub fn estimate(c: &ChangeVerdict) -> Option<f64> {
    match c {
        ChangeVerdict::Faster { percent }
        | ChangeVerdict::Slower { percent }
        | ChangeVerdict::NoChange { percent }
        | ChangeVerdict::NoClearChange { percent } => Some(percent.estimate),
        ChangeVerdict::CannotTell { measured, .. } => measured.map(|m| m.estimate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::between_runs;

    fn conditions(d: &[Disturbance]) -> RunConditions {
        RunConditions {
            load: None,
            cpu_busy_share: None,
            cpu_steal_share: None,
            cpu_pressure_share: None,
            other_io_bytes: None,
            own_io_bytes: None,
            dirty_bytes: None,
            target_resident_share: None,
            backing_resident_share: None,
            disturbed: !d.is_empty(),
            disturbances: d.to_vec(),
        }
    }

    /// The issue's `compare 5 7`: 67% apart, repetitions that do not
    /// overlap. Quiet: slower. The later run beside busy CPUs: cannot
    /// tell, naming the side and the cause, with what was measured.
    #[test]
    fn a_disturbed_run_cannot_tell_and_a_quiet_one_is_judged() {
        let before = [100.0, 103.0, 98.0];
        let after = [33.0, 34.0, 32.5];
        let quiet = conditions(&[]);
        let busy = conditions(&[Disturbance::CpuBusy]);
        let noise = Noise::from(between_runs::between(&[]));
        let (c, _) = judge(&before, &after, 0.05, noise, (Some(&quiet), Some(&quiet)));
        assert!(matches!(c, ChangeVerdict::Slower { .. }), "{c:?}");
        let (c, ev) = judge(&before, &after, 0.05, noise, (Some(&quiet), Some(&busy)));
        let ChangeVerdict::CannotTell { why, measured } = c else {
            panic!("{c:?}");
        };
        assert_eq!(
            why,
            CannotTell::Disturbed {
                sides: Sides::After,
                causes: vec![Disturbance::CpuBusy]
            }
        );
        assert!((measured.unwrap().estimate + 0.67).abs() < 0.01);
        assert!(ev.is_ok(), "the evidence is kept");
        let (c, _) = judge(&before, &[33.0], 0.05, noise, (None, None));
        assert!(matches!(
            c,
            ChangeVerdict::CannotTell {
                why: CannotTell::TooFewRepetitions {
                    before: 3,
                    after: 1
                },
                ..
            }
        ));
    }
}
