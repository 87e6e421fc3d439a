//! The findings of `flash capacity`: genuine or fake, how much the card
//! really holds, and whether a write cache could have hidden a fake.

use super::assemble;
use crate::analysis::flash::capacity::{BadProbe, CapacityResult, Held, flush_needed};
use crate::flash::{capacity, partition};
use crate::result::flash::FlashReport;
use crate::result::flash::{
    Cell, Column, Figure, Finding, FoundBy, Outcome, ProbeFate, TypedTable,
};
use crate::result::verify::Verdict;
use crate::vocab::options::FlashTest;

/// The report of a capacity probe of `target` (as the user named it, for
/// the repair commands), aligning a repair to `kernel_au` when known.
pub(super) fn report(r: &CapacityResult, target: &str, kernel_au: Option<u64>) -> FlashReport {
    let mut findings = vec![Finding::sure(
        Figure::UsableCapacity {
            bytes: r.usable.unwrap_or(r.claimed),
            at_most_bytes: r.upper_bound.filter(|u| Some(*u) != r.usable),
        },
        r.confidence,
    )];
    if let Some(asked) = r.flush_asked {
        findings.push(Finding::of(Figure::FlushShortened {
            asked_bytes: asked,
            bound_bytes: r.flush_bound,
        }));
    }
    if r.wraps {
        findings.push(Finding::of(Figure::WrapAround));
    }
    findings.extend(flush_finding(r));
    if let Some(kind) = r.lost_kind.filter(|_| !r.wraps) {
        let errors = kind == Held::Error;
        findings.push(Finding::of(Figure::Beyond { errors }));
    }
    if r.cache_hid {
        findings.push(Finding::of(Figure::CacheHid));
    }
    findings.extend(after_fake(r, target, kernel_au));
    let table = TypedTable {
        columns: vec![Column::Offset, Column::Verdict],
        rows: r
            .bad
            .iter()
            .map(|b| vec![Cell::Bytes(b.offset), Cell::Probe(probe_fate(r, b))])
            .collect(),
    };
    assemble(FlashTest::Capacity, outcome(r), findings, table)
}

/// Genuine, or fake with the claimed and real bytes.
fn outcome(r: &CapacityResult) -> Outcome {
    let Some(real) = r.usable else {
        return Outcome::Genuine {
            claimed_bytes: r.claimed,
            probes: r.probes as u64,
            confidence: r.confidence,
        };
    };
    let found_by = match (r.wraps, r.precision) {
        (true, _) => FoundBy::Aliased,
        (false, 0) => FoundBy::LastSector,
        _ => FoundBy::Interval,
    };
    Outcome::Fake {
        claimed_bytes: r.claimed,
        real_bytes: real,
        at_most_bytes: (found_by == FoundBy::Interval).then_some(real + r.precision),
        found_by,
        rounds: r.rounds,
        confidence: r.confidence,
    }
}

/// What to do with a fake card: H2testw's OK/lost line, the last good
/// sector, and the partition that ends there (none for a genuine card).
pub(super) fn after_fake(r: &CapacityResult, target: &str, kernel_au: Option<u64>) -> Vec<Finding> {
    let (Some(usable), Some(last)) = (r.usable, r.last_good_sector) else {
        return Vec::new();
    };
    let mut out = vec![
        Finding::of(Figure::OkLost {
            ok_bytes: usable,
            lost_bytes: r.claimed.saturating_sub(usable),
            write_mb_per_s: r.write_mb_s,
            read_mb_per_s: r.read_mb_s,
        }),
        Finding::of(Figure::LastGoodSector { sector: last }),
    ];
    if let Some(fix) = partition::repair(last, kernel_au) {
        out.push(Finding::of(Figure::Repair {
            target: target.to_string(),
            start: fix.start,
            sectors: fix.sectors,
        }));
    }
    out
}

/// What became of a bad probe in the `-v` table: aliased when it reads
/// back another address's data (its own header says so, or the card was
/// shown to wrap and the probe lies beyond the real size, where every
/// address reads its alias), changed for flipped bits, else lost (zeros,
/// stale or foreign data).
fn probe_fate(r: &CapacityResult, b: &BadProbe) -> ProbeFate {
    let beyond_a_wrap = r.wraps && r.usable.is_some_and(|u| b.offset >= u);
    match b.verdict {
        Verdict::Aliased { .. } => ProbeFate::Aliased,
        _ if beyond_a_wrap => ProbeFate::Aliased,
        Verdict::Changed { .. } => ProbeFate::Changed,
        _ => ProbeFate::Lost,
    }
}

/// Whether the flush beat the write cache: too short for the cache it
/// filled (with a `--flush` that runs as printed, under the one rule of
/// [`capacity::flush_advice`]), or no cache filled at all on a card found
/// genuine. A flush that already wrote the most any cache of the card can
/// need is advised nothing more.
fn flush_finding(r: &CapacityResult) -> Option<Finding> {
    let short = r.cache_filled_at.filter(|_| r.flush_short);
    let figure = if let Some(at) = short {
        let needed = flush_needed(at);
        let advice = capacity::flush_advice(needed, r.flush_written, r.claimed)?;
        Figure::FlushTooShort {
            filled_after_bytes: at,
            flushed_bytes: r.flush_written,
            needed_bytes: advice,
        }
    } else if r.genuine && !r.cache_beaten {
        Figure::NoCacheFilled {
            flushed_bytes: r.flush_written,
            at_bound: capacity::flush_advice(r.flush_written + 1, r.flush_written, r.claimed)
                .is_none(),
        }
    } else {
        return None;
    };
    Some(Finding::of(figure))
}
