//! The words of `flash capacity`: genuine or fake, how much the card
//! really holds, and whether a write cache could have hidden a fake.

use super::assemble;
use crate::flash::{Finding, FlashReport, capacity};
use crate::units::format_size;

pub(super) fn report(r: &capacity::CapacityResult) -> FlashReport {
    let mut findings = vec![Finding::new(
        "usable capacity",
        format_size(r.usable.unwrap_or(r.claimed)),
        Some(r.confidence),
    )];
    if r.wraps {
        findings.push(Finding::new(
            "wrap-around",
            "blocks read back naming other addresses".into(),
            None,
        ));
    }
    findings.extend(flush_finding(r));
    if let Some(kind) = r.lost_kind.filter(|_| !r.wraps) {
        let how = match kind {
            capacity::Held::Error => "I/O errors beyond the real size",
            _ => {
                "data written beyond the real size reads back as something else (zeros or old data)"
            }
        };
        findings.push(Finding::new("beyond", how.into(), None));
    }
    if r.cache_hid {
        findings.push(Finding::new(
            "cache",
            "hid the fraud from an immediate read-back".into(),
            None,
        ));
    }
    let mut table = vec![vec!["offset".into(), "verdict".into()]];
    table.extend(
        r.bad
            .iter()
            .map(|b| vec![b.offset.to_string(), format!("{:?}", b.verdict)]),
    );
    assemble("capacity", verdict(r), findings, table, !r.genuine, r)
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
    let text = if let (true, Some(at)) = (r.flush_short, r.cache_filled_at) {
        format!(
            "the write cache filled after {} of flush, which stopped at {}: below the {} the measured cache needs, it may still hold probes (give --flush {})",
            format_size(at),
            format_size(r.flush_written),
            format_size(capacity::flush_needed(at)),
            format_size(capacity::flush_needed(at))
        )
    } else if r.genuine && !r.cache_beaten {
        format!(
            "no write cache filled within the {} flush: a larger one could hide a fake (give a larger --flush)",
            format_size(r.flush_written)
        )
    } else {
        return None;
    };
    Some(Finding::new("cache", text, None))
}
