//! The words of `flash class`: the figures behind the verdict (Pw after
//! the cache, Pr, T_FW, P(Nu)), one line per requirement checked, and the
//! verdict naming the classes met, how sure it is and what binds.

use super::assemble;
use crate::analysis::flash::class_verdict::{binding, met_classes, weakest};
use crate::flash::{Confidence, Finding, FlashReport, class};
use crate::units::{format_mbps, format_size};

pub(super) fn report(
    classes: &[String],
    f: &class::ClassFigures,
    link: Option<f64>,
) -> FlashReport {
    let checks = class::judge(classes, f, link);
    let mut findings = figures(f);
    findings.extend(checks.iter().map(check_finding));
    let failed = checks.iter().any(|c| c.status == class::Status::Fail);
    let verdict = verdict(classes, &checks);
    let details = serde_json::json!({ "figures": f, "checks": checks });
    assemble("class", verdict, findings, pw_table(f), failed, &details)
}

/// The figures behind every verdict: Pw after the cache, Pr, T_FW, P(Nu).
fn figures(f: &class::ClassFigures) -> Vec<Finding> {
    let pw = &f.pw;
    vec![
        Finding::new("write cache", cache_text(&f.pw), None),
        Finding::new(
            "Pw (whole free AUs)",
            format!(
                "{} MB/s mean, {} min over {} AUs of {} RUs",
                format_mbps(pw.mean_mb_s),
                format_mbps(pw.min_mb_s),
                pw.aus,
                format_size(f.ru)
            ),
            None,
        ),
        Finding::new(
            "Pr (256 random RUs)",
            format!(
                "{} MB/s{}",
                format_mbps(f.pr_mb_s),
                match f.pr_mb_s >= pw.mean_mb_s {
                    true => ", at least Pw as the specification asks",
                    false => ", BELOW Pw: the specification asks Pr >= Pw",
                }
            ),
            None,
        ),
        Finding::new(
            "T_FW (FAT writes)",
            format!(
                "worst mean of 8 {:.1} ms, max {:.1} ms, median {:.1} ms over {} writes",
                f.fat.worst_mean8_ms, f.fat.max_ms, f.fat.median_ms, f.fat.writes
            ),
            None,
        ),
        Finding::new("P(Nu)", pnu_text(f), None),
    ]
}

/// Whether the writes got past the cache before Pw was taken.
fn cache_text(pw: &class::PwFigures) -> String {
    match (pw.exhaustion, pw.fell_after) {
        (class::Exhaustion::Exhausted, Some(at)) => format!(
            "burst {} MB/s, fell after {}, steady after {}",
            format_mbps(pw.burst_mb_s),
            format_size(at),
            format_size(pw.written)
        ),
        (class::Exhaustion::NoFall, _) => format!(
            "no fall within {}: no cache seen (or a larger one)",
            format_size(pw.written)
        ),
        _ => format!(
            "speed after {}, cache not exhausted (burst {} MB/s)",
            format_size(pw.written),
            format_mbps(pw.burst_mb_s)
        ),
    }
}

fn pnu_text(f: &class::ClassFigures) -> String {
    if f.pnu.is_empty() {
        return "not measured (an AU of one RU, or no room for it on this device)".into();
    }
    let curve: Vec<String> = f
        .pnu
        .iter()
        .map(|p| {
            format!(
                "{:.0}% used {} MB/s",
                100.0 * p.used_share,
                format_mbps(p.mb_s)
            )
        })
        .collect();
    let moves = match f.pm_mb_s {
        Some(pm) => format!("move speed about {} MB/s", format_mbps(pm)),
        None => "no move cost (SDXC-like)".into(),
    };
    format!("{}; {moves}", curve.join(", "))
}

fn check_finding(c: &class::Check) -> Finding {
    let mut x = Finding::new(
        &format!("{} {}", c.class, c.need.what()),
        format!(
            "{:.1} ({} {})",
            c.measured,
            if c.need.limit().1 {
                "needs >="
            } else {
                "limit <="
            },
            c.limit
        ),
        Some(c.confidence),
    );
    x.status = Some(c.status);
    x.note = match c.status {
        class::Status::Link => Some("the link, not the card, sets this limit".into()),
        _ => c.note.clone(),
    };
    x
}

/// "meets: ...", the confidence of the least sure requirement met (and
/// why, below high), and the binding requirement
/// (see `crate::analysis::flash::class_verdict`).
fn verdict(classes: &[String], checks: &[class::Check]) -> String {
    let passed = met_classes(classes, checks);
    let met = match passed.is_empty() {
        true => "none".to_string(),
        false => passed
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    };
    let mut verdict = format!("meets: {met}");
    if let Some(w) = weakest(&passed, checks) {
        verdict += &format!(" ({} confidence", w.confidence.name());
        if w.confidence < Confidence::High {
            verdict += &format!(", set by {} {}", w.class, w.need.what());
            if let Some(why) = &w.note {
                verdict += &format!(": {why}");
            }
        }
        verdict += ")";
    }
    if let Some(c) = binding(checks) {
        verdict += &format!(
            "; binding: {} needs {} {} {}, measured {:.1}: {}",
            c.class,
            c.need.what(),
            if c.need.limit().1 { ">=" } else { "<=" },
            c.limit,
            c.measured,
            c.status.name()
        );
    }
    verdict
}

/// The per-AU speeds of the cache-exhausting writes (`--verbose`).
fn pw_table(f: &class::ClassFigures) -> Vec<Vec<String>> {
    let mut table = vec![vec!["written".into(), "AU MB/s".into()]];
    table.extend(
        f.pw.samples
            .iter()
            .map(|(at, mb)| vec![format_size(*at), format_mbps(*mb)]),
    );
    table
}
