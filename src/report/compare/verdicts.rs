//! The verdicts of a comparison in words: one line per pair of like tests,
//! the tests set apart, and the line `--fail-above` prints per regression.
//! The figures behind them come from [`crate::analysis::compare`].

use crate::report::markdown_escape::escape;
use crate::report::table::cut;
use crate::result::compare::{
    CannotTell, ChangeVerdict, Comparison, ConditionChange, Disturbance, Side, Sides, TestChange,
};
use crate::stats::between_runs::{BetweenRuns, MIN_HISTORY, NoiseBasis};
use crate::stats::bootstrap;
use crate::units::escape::NAME_COLUMNS;

/// A run's or a test's name as a verdict shows it: escaped and cut (a
/// name comes from a file name, a stored run, an imported job).
fn shown(name: &str) -> String {
    cut(name, NAME_COLUMNS)
}

/// One line per regression: which run, which test, by how much.
pub fn regression_line(c: &Comparison, ch: &TestChange, fail_above: f64) -> String {
    let p = ch.percent_change.as_ref();
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    format!(
        "{} is slower than {} by more than {}: {} {} ({} to {})",
        shown(&ch.run),
        shown(&c.baseline),
        pct(fail_above),
        shown(&ch.test),
        p.map_or("?".into(), |p| pct(p.estimate)),
        p.map_or("?".into(), |p| pct(p.low)),
        p.map_or("?".into(), |p| pct(p.high)),
    )
}

/// "targets: run 5 /mnt/a (vda, 256 GiB); run 7 /mnt/b (...)": what each
/// run measured, named once above the verdicts.
pub(super) fn target_lines(c: &Comparison, markdown: bool) -> String {
    let mut out = "targets:\n".to_string();
    for t in &c.targets {
        let device = t
            .device
            .as_deref()
            .map_or(String::new(), |d| format!(" on {}", shown(d)));
        out.push_str(&item(
            markdown,
            &format!("{}: {}{device}", shown(&t.run), shown(&t.target)),
        ));
    }
    out
}

/// One line per pair a `--fail-above` gate cannot vouch for.
pub fn undecided_line(c: &Comparison, ch: &TestChange) -> String {
    format!(
        "{} against {}: {}: {}",
        shown(&ch.run),
        shown(&c.baseline),
        shown(&ch.test),
        statement(ch)
    )
}

/// A list item: indented text, or a Markdown bullet.
fn item(markdown: bool, text: &str) -> String {
    match markdown {
        true => format!("- {}\n", escape(text)),
        false => format!("  {text}\n"),
    }
}

/// The heading of the verdicts (whose runs, at what confidence, what is
/// noise), then one item per pair of like tests.
pub(super) fn verdict_lines(c: &Comparison, markdown: bool) -> String {
    let one_target = c.targets.windows(2).all(|w| w[0].target == w[1].target);
    let whose = match (c.same_device, one_target) {
        (true, true) => "same device",
        (true, false) => "same device, different targets, so a difference between targets",
        (false, _) => "different devices, so a difference between devices, not a change of one",
    };
    let mut out = format!(
        "{whose}: each run against {}, test by test ({:.0}% bootstrap interval of the ratio of mean MB/s, after/before, widened by the noise between runs; changes within ±{:.0}% are noise)\n",
        match markdown {
            true => escape(&shown(&c.baseline)),
            false => shown(&c.baseline),
        },
        c.level * 100.0,
        c.threshold * 100.0
    );
    for ch in &c.changes {
        out.push_str(&item(
            markdown,
            &format!(
                "{}, {}: {}{}{}",
                shown(&ch.run),
                shown(&ch.test),
                statement(ch),
                ch.engines
                    .as_ref()
                    .map_or(String::new(), |e| format!("; caveat: {}", e.text())),
                host_text(ch)
            ),
        ));
    }
    out
}

/// "; the runs differed in host load 0.2 vs 3.9, 41 MiB of other I/O on
/// the device during the later run", or nothing when their machines were
/// alike (or unrecorded).
fn host_text(ch: &TestChange) -> String {
    if ch.host_differences.is_empty() {
        return String::new();
    }
    let words: Vec<String> = ch.host_differences.iter().map(condition_text).collect();
    format!("; the runs differed in {}", words.join(", "))
}

/// Where the run-to-run noise of a verdict came from: "run-to-run noise
/// ±15% assumed: under 3 earlier runs of this test".
fn noise_text(b: &BetweenRuns) -> String {
    let pct = format!("±{:.0}%", b.sd * 100.0);
    match b.basis {
        NoiseBasis::History { runs } => {
            format!("run-to-run noise {pct} from {runs} earlier runs")
        }
        NoiseBasis::AssumedQuiet => {
            format!("run-to-run noise {pct} assumed: under {MIN_HISTORY} earlier runs of this test")
        }
        NoiseBasis::Simulated => "simulated cards: no noise between runs".into(),
        NoiseBasis::Pooled { runs } => {
            format!(
                "against the mean of {runs} like runs before the later one, run-to-run noise {pct}"
            )
        }
    }
}

/// "host load 0.2 vs 3.9", "41 MiB of other I/O on the device during the
/// later run", "the backing file in the page cache 100% vs 0%".
pub fn condition_text(c: &ConditionChange) -> String {
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let size = crate::units::format_size_figure;
    match *c {
        ConditionChange::Load { before, after } => {
            format!("host load {before:.1} vs {after:.1}")
        }
        ConditionChange::CpuBusy { before, after } => {
            format!("CPUs busy {} vs {}", pct(before), pct(after))
        }
        ConditionChange::CpuSteal { before, after } => {
            format!("CPU steal {} vs {}", pct(before), pct(after))
        }
        ConditionChange::OtherIo { side, bytes } => format!(
            "{} of other I/O on the device during the {} run",
            size(bytes),
            match side {
                Side::Before => "earlier",
                Side::After => "later",
            }
        ),
        ConditionChange::Dirty { before, after } => {
            format!("dirty pages {} vs {}", size(before), size(after))
        }
        ConditionChange::Resident { before, after } => {
            format!("target in the page cache {} vs {}", pct(before), pct(after))
        }
        ConditionChange::BackingResident { before, after } => format!(
            "the backing file in the page cache {} in the earlier run, {} in the later",
            pct(before),
            pct(after)
        ),
    }
}

/// The tests and runs set apart, one item each with the reason.
pub(super) fn not_compared_lines(c: &Comparison, markdown: bool) -> String {
    let mut out = "not compared (no like test on the other side):\n".to_string();
    for n in &c.not_compared {
        // The whole item cut once: it names a run, maybe a test, and a
        // reason that may quote either.
        out.push_str(&item(markdown, &cut(&n.text(), 3 * NAME_COLUMNS)));
    }
    out
}

/// `n` repetitions, spelt for a reader.
fn repetitions_word(n: usize) -> &'static str {
    if n == 1 { "repetition" } else { "repetitions" }
}

/// "the later run shared its CPUs (busy nearly all along)".
fn disturbed_text(sides: Sides, causes: &[Disturbance]) -> String {
    let which = match sides {
        Sides::Before => "the earlier run",
        Sides::After => "the later run",
        Sides::Both => "both runs",
    };
    let words: Vec<&str> = causes
        .iter()
        .map(|d| match d {
            Disturbance::OtherIo => "shared the device with other I/O",
            Disturbance::CpuSteal => "lost CPU time to the hypervisor",
            Disturbance::CpuBusy => "ran on CPUs kept busy by others",
        })
        .collect();
    format!("{which} {}", words.join(" and "))
}

/// Why no statement can be made, in words.
fn cannot_tell_text(why: &CannotTell) -> String {
    match why {
        CannotTell::Disturbed { sides, causes } => disturbed_text(*sides, causes),
        CannotTell::TooFewRepetitions { before, after } => format!(
            "{before} vs {after} {}, and an interval needs at least {} on each side",
            repetitions_word(*after),
            bootstrap::MIN_REPETITIONS
        ),
        CannotTell::NotPositive => "a repetition moved no data".into(),
    }
}

/// The statement of one pair: "slower by 20% (95% CI 15%–25%, 5 vs 5
/// repetitions; run-to-run noise ±3% from 6 earlier runs)", "no clear
/// change (...)", or "cannot tell: the later run ran on CPUs kept busy by
/// others (measured −45%)".
pub fn statement(ch: &TestChange) -> String {
    let signed = |x: f64| format!("{:+.0}%", x * 100.0);
    let (percent, words) = match &ch.change {
        ChangeVerdict::CannotTell { why, measured } => {
            let m = measured.map_or(String::new(), |m| {
                format!(" (measured {})", signed(m.estimate))
            });
            return format!("cannot tell: {}{m}", cannot_tell_text(why));
        }
        ChangeVerdict::Faster { percent } => (percent, "faster"),
        ChangeVerdict::Slower { percent } => (percent, "slower"),
        ChangeVerdict::NoChange { percent } => (percent, "no change"),
        ChangeVerdict::NoClearChange { percent } => (percent, "no clear change"),
    };
    let level = percent.level * 100.0;
    let mut reps = match &ch.verdict {
        Ok(v) => format!(
            "{} vs {} {}",
            v.before_repetitions,
            v.after_repetitions,
            repetitions_word(v.after_repetitions)
        ),
        Err(_) => String::new(),
    };
    if let Some(b) = ch
        .verdict
        .as_ref()
        .ok()
        .and_then(|v| v.between_runs.as_ref())
    {
        reps.push_str(&format!("; {}", noise_text(b)));
    }
    match &ch.change {
        ChangeVerdict::Faster { .. } | ChangeVerdict::Slower { .. } => {
            let (a, b) = (percent.low.abs() * 100.0, percent.high.abs() * 100.0);
            format!(
                "{words} by {:.0}% ({level:.0}% CI {:.0}%–{:.0}%, {reps})",
                percent.estimate.abs() * 100.0,
                a.min(b),
                a.max(b)
            )
        }
        _ => format!(
            "{words} ({}, {level:.0}% CI {} to {}, {reps})",
            signed(percent.estimate),
            signed(percent.low),
            signed(percent.high)
        ),
    }
}
