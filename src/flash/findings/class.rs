//! The findings of `flash class`: the figures behind the verdict (Pw
//! after the cache, Pr, T_FW, P(Nu)), one finding per requirement checked,
//! and the outcome: the classes met per family and what binds.

use super::assemble;
use crate::analysis::flash::class::{Check, ClassFigures, judge};
use crate::analysis::flash::class_verdict::{binding, families, met_classes, recorded, weakest};
use crate::probe::bus::HostBus;
use crate::result::flash::{
    Cell, ClaimSource, Column, Figure, Finding, Outcome, PnuPoint, TypedTable,
};
use crate::result::flash::{FlashReport, Status};
use crate::vocab::options::FlashTest;

pub(super) fn report(
    classes: &[String],
    claim: ClaimSource,
    f: &ClassFigures,
    link: Option<f64>,
    host: &HostBus,
) -> FlashReport {
    let checks = judge(classes, f, link);
    let mut findings = figures(f);
    findings.extend(checks.iter().map(check_finding));
    let met = met_classes(classes, &checks);
    let outcome = Outcome::Classes {
        claim,
        claimed: match claim {
            ClaimSource::None => Vec::new(),
            _ => classes.to_vec(),
        },
        families: families(classes, &checks),
        untold: untold_classes(classes, &checks),
        binding: binding(&checks).map(recorded),
        weakest: weakest(&met, &checks).map(recorded),
        host: Some(Box::new(host.clone())),
    };
    assemble(FlashTest::Class, outcome, findings, pw_table(f))
}

/// The classes that failed no requirement but had one capped by the link
/// (LINK): whether the card meets them cannot be told.
fn untold_classes(classes: &[String], checks: &[Check]) -> Vec<String> {
    classes
        .iter()
        .filter(|cl| {
            let own = || checks.iter().filter(|c| &c.class == *cl);
            own().any(|c| c.status == Status::Link) && own().all(|c| c.status != Status::Fail)
        })
        .cloned()
        .collect()
}

/// Milliseconds as whole nanoseconds.
fn ns(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

/// The figures behind every verdict: Pw after the cache, Pr, T_FW, P(Nu).
fn figures(f: &ClassFigures) -> Vec<Finding> {
    let pw = &f.pw;
    let figures = [
        Figure::WriteCache {
            exhaustion: pw.exhaustion,
            burst_mb_per_s: pw.burst_mb_s,
            fell_after_bytes: pw.fell_after,
            written_bytes: pw.written,
        },
        Figure::Pw {
            mean_mb_per_s: pw.mean_mb_s,
            min_mb_per_s: pw.min_mb_s,
            aus: pw.aus,
            ru_bytes: f.ru,
            slowest_place_mb_per_s: pw.slowest_place_mb_s,
        },
        Figure::Pr {
            mb_per_s: f.pr_mb_s,
            pw_mean_mb_per_s: pw.mean_mb_s,
        },
        Figure::FatWriteTimes {
            worst_mean8_ns: ns(f.fat.worst_mean8_ms),
            max_ns: ns(f.fat.max_ms),
            median_ns: ns(f.fat.median_ms),
            writes: f.fat.writes as u64,
        },
        Figure::Pnu {
            curve: f
                .pnu
                .iter()
                .map(|p| PnuPoint {
                    used_share: p.used_share,
                    mb_per_s: p.mb_s,
                })
                .collect(),
            pm_mb_per_s: f.pm_mb_s,
        },
    ];
    figures.into_iter().map(Finding::of).collect()
}

fn check_finding(c: &Check) -> Finding {
    let figure = Figure::Requirement {
        class: c.class.clone(),
        need: c.need.kind(),
        measured: c.measured,
        limit: c.limit,
    };
    Finding {
        figure,
        confidence: Some(c.confidence),
        status: Some(c.status),
        reason: c.reason.clone(),
    }
}

/// The per-AU speeds of the cache-exhausting writes (`--verbose`).
fn pw_table(f: &ClassFigures) -> TypedTable {
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
