//! The words of `flash capacity`: genuine or fake, how much the card
//! really holds, and whether a write cache could have hidden a fake.

use super::{assemble, finding};
use crate::flash::{Finding, FlashReport, capacity, partition};
use crate::result::flash::{Cell, Column, Figure, TypedTable};
use crate::result::verify::Verdict;
use crate::units::format_size;
use crate::vocab::options::FlashTest;

/// The report of a capacity probe of `target` (as the user named it, for
/// the repair commands), aligning a repair to `kernel_au` when known.
pub(super) fn report(
    r: &capacity::CapacityResult,
    target: &str,
    kernel_au: Option<u64>,
) -> FlashReport {
    let mut findings = vec![finding(
        Figure::UsableCapacity {
            bytes: r.usable.unwrap_or(r.claimed),
            at_most: r.upper_bound.filter(|u| Some(*u) != r.usable),
        },
        Some(r.confidence),
    )];
    if let Some(asked) = r.flush_asked {
        findings.push(finding(
            Figure::FlushShortened {
                asked,
                bound: r.flush_bound,
            },
            None,
        ));
    }
    if r.wraps {
        findings.push(finding(Figure::WrapAround, None));
    }
    findings.extend(flush_finding(r));
    if let Some(kind) = r.lost_kind.filter(|_| !r.wraps) {
        let errors = kind == capacity::Held::Error;
        findings.push(finding(Figure::Beyond { errors }, None));
    }
    if r.cache_hid {
        findings.push(finding(Figure::CacheHid, None));
    }
    findings.extend(after_fake(r, target, kernel_au));
    let table = TypedTable {
        columns: vec![Column::Offset, Column::Verdict],
        rows: r
            .bad
            .iter()
            .map(|b| vec![Cell::Bytes(b.offset), Cell::Name(probe_word(r, b).into())])
            .collect(),
    };
    assemble(
        FlashTest::Capacity,
        verdict(r),
        findings,
        table,
        !r.genuine,
        r,
    )
}

/// What to do with a fake card: H2testw's OK/lost line, the last good
/// sector, and the partition that ends there (none for a genuine card).
pub(super) fn after_fake(
    r: &capacity::CapacityResult,
    target: &str,
    kernel_au: Option<u64>,
) -> Vec<Finding> {
    let (Some(usable), Some(last)) = (r.usable, r.last_good_sector) else {
        return Vec::new();
    };
    let mut out = vec![
        finding(
            Figure::OkLost {
                ok: usable,
                lost: r.claimed.saturating_sub(usable),
                write_mb_s: r.write_mb_s,
                read_mb_s: r.read_mb_s,
            },
            None,
        ),
        finding(Figure::LastGoodSector { sector: last }, None),
    ];
    if let Some(fix) = partition::repair(last, kernel_au) {
        out.push(finding(
            Figure::Repair {
                target: target.to_string(),
                start: fix.start,
                sectors: fix.sectors,
            },
            None,
        ));
    }
    out
}

/// A bad probe's word in the `-v` table: "aliased" when it reads back
/// another address's data (its own header says so, or the card was shown
/// to wrap and the probe lies beyond the real size, where every address
/// reads its alias), "changed" for flipped bits, else "lost" (zeros,
/// stale or foreign data).
fn probe_word(r: &capacity::CapacityResult, b: &capacity::BadProbe) -> &'static str {
    let beyond_a_wrap = r.wraps && r.usable.is_some_and(|u| b.offset >= u);
    match b.verdict {
        Verdict::Aliased { .. } => super::words::ALIASED,
        _ if beyond_a_wrap => super::words::ALIASED,
        Verdict::Changed { .. } => "changed",
        _ => "lost",
    }
}

fn verdict(r: &capacity::CapacityResult) -> String {
    match r.usable {
        None => format!("genuine: all {} probe blocks held their data", r.probes),
        Some(u) if r.wraps => format!(
            "FAKE: claims {}, really holds {} (exactly: aliased blocks name it)",
            format_size(r.claimed),
            format_size(u)
        ),
        Some(u) if r.precision == 0 => format!(
            "FAKE: claims {}, really holds {} ({u} bytes: the last sector that held its data ends there)",
            format_size(r.claimed),
            format_size(u)
        ),
        Some(u) => format!(
            "FAKE: claims {}, really holds {}",
            format_size(r.claimed),
            super::holds_text(u, Some(u + r.precision))
        ),
    }
}

/// Whether the flush beat the write cache: too short for the cache it
/// filled, or no cache filled at all on a card found genuine.
fn flush_finding(r: &capacity::CapacityResult) -> Option<Finding> {
    let figure = if let (true, Some(at)) = (r.flush_short, r.cache_filled_at) {
        Figure::FlushTooShort {
            filled_after: at,
            flushed: r.flush_written,
            needed: capacity::flush_needed(at),
        }
    } else if r.genuine && !r.cache_beaten {
        Figure::NoCacheFilled {
            flushed: r.flush_written,
        }
    } else {
        return None;
    };
    Some(finding(figure, None))
}
