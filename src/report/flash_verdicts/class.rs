//! The words of `flash class`: the figures behind the verdict (Pw after
//! the cache, Pr, T_FW, P(Nu)), one line per requirement checked, and the
//! verdict naming the classes met, how sure it is and what binds.

use super::{assemble, checked, finding};
use crate::analysis::flash::class_verdict::{binding, met_classes, weakest};
use crate::flash::{Confidence, Finding, FlashReport, class};
use crate::result::flash::{Cell, Column, Figure, PnuPoint, TypedTable};
use crate::vocab::options::FlashTest;

pub(super) fn report(
    classes: &[String],
    f: &class::ClassFigures,
    link: Option<f64>,
) -> FlashReport {
    let checks = class::judge(classes, f, link);
    let mut findings = figures(f);
    findings.extend(checks.iter().map(check_finding));
    let failed = checks
        .iter()
        .any(|c| c.status == crate::result::flash::Status::Fail);
    let verdict = verdict(classes, &checks);
    let details = serde_json::json!({ "figures": f, "checks": checks });
    assemble(
        FlashTest::Class,
        verdict,
        findings,
        pw_table(f),
        failed,
        &details,
    )
}

/// The figures behind every verdict: Pw after the cache, Pr, T_FW, P(Nu).
fn figures(f: &class::ClassFigures) -> Vec<Finding> {
    let pw = &f.pw;
    let figures = [
        Figure::WriteCache {
            exhaustion: pw.exhaustion,
            burst_mb_s: pw.burst_mb_s,
            fell_after: pw.fell_after,
            written: pw.written,
        },
        Figure::Pw {
            mean_mb_s: pw.mean_mb_s,
            min_mb_s: pw.min_mb_s,
            aus: pw.aus,
            ru: f.ru,
        },
        Figure::Pr {
            mb_s: f.pr_mb_s,
            pw_mean_mb_s: pw.mean_mb_s,
        },
        Figure::FatWrites {
            worst_mean8_ms: f.fat.worst_mean8_ms,
            max_ms: f.fat.max_ms,
            median_ms: f.fat.median_ms,
            writes: f.fat.writes as u64,
        },
        Figure::Pnu {
            curve: f
                .pnu
                .iter()
                .map(|p| PnuPoint {
                    used_share: p.used_share,
                    mb_s: p.mb_s,
                })
                .collect(),
            pm_mb_s: f.pm_mb_s,
        },
    ];
    figures.into_iter().map(|x| finding(x, None)).collect()
}

fn check_finding(c: &class::Check) -> Finding {
    let figure = Figure::Requirement {
        class: c.class.clone(),
        need: c.need,
        measured: c.measured,
        limit: c.limit,
    };
    checked(figure, Some(c.confidence), Some(c.status), c.note.clone())
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
        // What the binding verdict rests on when it is not sure (an
        // assumed AU, a link hiding the card, a cache not ruled out).
        if let Some(why) = c.note.as_ref().filter(|_| c.confidence < Confidence::High) {
            verdict += &format!(" ({why})");
        }
    }
    verdict
}

/// The per-AU speeds of the cache-exhausting writes (`--verbose`).
fn pw_table(f: &class::ClassFigures) -> TypedTable {
    TypedTable {
        columns: vec![Column::Written, Column::AuMbS],
        rows: f
            .pw
            .samples
            .iter()
            .map(|(at, mb)| vec![Cell::Bytes(*at), Cell::MbS(*mb)])
            .collect(),
    }
}
