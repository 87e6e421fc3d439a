//! The words of `flash capacity`: genuine or fake, how much the card
//! really holds, and whether a write cache could have hidden a fake.

use super::{assemble, finding};
use crate::flash::{Finding, FlashReport, capacity};
use crate::result::flash::{Cell, Column, Figure, TypedTable};
use crate::units::format_size;
use crate::vocab::options::FlashTest;

pub(super) fn report(r: &capacity::CapacityResult) -> FlashReport {
    let mut findings = vec![finding(
        Figure::UsableCapacity {
            bytes: r.usable.unwrap_or(r.claimed),
        },
        Some(r.confidence),
    )];
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
    let table = TypedTable {
        columns: vec![Column::Offset, Column::Verdict],
        rows: r
            .bad
            .iter()
            .map(|b| {
                vec![
                    Cell::Bytes(b.offset),
                    Cell::Name(format!("{:?}", b.verdict)),
                ]
            })
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

fn verdict(r: &capacity::CapacityResult) -> String {
    match r.usable {
        None => format!("genuine: all {} probe blocks held their data", r.probes),
        Some(u) if r.precision == 0 => format!(
            "FAKE: claims {}, really holds {} (exactly: blocks read back at their alias)",
            format_size(r.claimed),
            format_size(u)
        ),
        Some(u) => format!(
            "FAKE: claims {}, really holds {} ({u} bytes, searched to within {})",
            format_size(r.claimed),
            format_size(u),
            format_size(r.precision)
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
