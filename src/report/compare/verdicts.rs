//! The verdicts of a comparison in words: one line per pair of like tests,
//! the tests set apart, and the line `--fail-above` prints per regression.
//! The figures behind them come from [`crate::analysis::compare`].

use crate::report::markdown_escape::escape;
use crate::report::table::{NAME_COLUMNS, cut};
use crate::result::compare::{Comparison, TestChange};
use crate::stats::between_runs::{BetweenRuns, MIN_HISTORY, NoiseBasis};
use crate::stats::bootstrap::{self, NoVerdict, Verdict};

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
    let whose = match c.same_device {
        true => "same device",
        false => "different devices, so a difference between devices, not a change of one",
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
                verdict_text(&ch.verdict),
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
    let words: Vec<String> = ch.host_differences.iter().map(|d| d.text()).collect();
    format!("; the runs differed in {}", words.join(", "))
}

/// Where the run-to-run noise of a verdict came from: "run-to-run noise
/// ±15% assumed: under 3 earlier runs of this test".
fn noise_text(b: &BetweenRuns) -> String {
    // A log-scale spread reads as a percentage while small, as a factor
    // beyond (±120% would suggest negative speeds).
    let pct = |sd: f64| match sd < 0.4 {
        true => format!("±{:.0}%", sd * 100.0),
        false => format!("of a factor {:.1}", sd.exp()),
    };
    match b.basis {
        NoiseBasis::History { runs } => format!(
            "run-to-run noise {} from {runs} earlier runs",
            pct(b.sd_before)
        ),
        NoiseBasis::AssumedQuiet => format!(
            "run-to-run noise {} assumed: under {MIN_HISTORY} earlier runs of this test",
            pct(b.sd_before)
        ),
        NoiseBasis::Simulated => "simulated cards: no noise between runs".into(),
        NoiseBasis::Disturbed => {
            let which = match (b.sd_before > b.sd_after, b.sd_after > b.sd_before) {
                (true, _) => "the earlier run",
                (_, true) => "the later run",
                _ => "both runs",
            };
            format!(
                "run-to-run noise {} assumed: {which} shared the device or its CPUs",
                pct(b.sd_before.max(b.sd_after))
            )
        }
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

/// "no change" when the whole interval lies within the noise threshold;
/// "no clear change" when it reaches past the threshold on one side but
/// not wholly (the data neither show a change nor rule one out).
fn no_change_words(v: &Verdict) -> &'static str {
    let within = |r: f64| (r - 1.0).abs() <= v.threshold;
    match within(v.ratio.low) && within(v.ratio.high) {
        true => "no change",
        false => "no clear change",
    }
}

/// "slower by 20% (95% CI 15%–25%, 5 vs 5 repetitions)", or why there is
/// no verdict.
pub fn verdict_text(v: &Result<Verdict, NoVerdict>) -> String {
    let v = match v {
        Ok(v) => v,
        Err(NoVerdict::TooFewRepetitions { before, after }) => {
            return format!(
                "no verdict: {before} vs {after} {}, and an interval needs at least {} on each side",
                repetitions_word(*after),
                bootstrap::MIN_REPETITIONS
            );
        }
        Err(NoVerdict::NotPositive) => {
            return "no verdict: a repetition moved no data".into();
        }
    };
    let pc = v.percent_change();
    let level = pc.level * 100.0;
    let mut reps = format!(
        "{} vs {} {}",
        v.before_repetitions,
        v.after_repetitions,
        repetitions_word(v.after_repetitions)
    );
    if let Some(b) = &v.between_runs {
        reps.push_str(&format!("; {}", noise_text(b)));
    }
    let signed = |x: f64| format!("{:+.0}%", x * 100.0);
    match v.change {
        bootstrap::Change::NoChange => format!(
            "{} ({}, {level:.0}% CI {} to {}, {reps})",
            no_change_words(v),
            signed(pc.estimate),
            signed(pc.low),
            signed(pc.high)
        ),
        c => {
            let (a, b) = (pc.low.abs() * 100.0, pc.high.abs() * 100.0);
            format!(
                "{} by {:.0}% ({level:.0}% CI {:.0}%–{:.0}%, {reps})",
                c.word(),
                pc.estimate.abs() * 100.0,
                a.min(b),
                a.max(b)
            )
        }
    }
}
