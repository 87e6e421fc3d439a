//! The words of `flash open-au`: how many AUs the card keeps open, or why
//! no count is given.

use super::assemble;
use crate::flash::{Finding, FlashReport, open_au};
use crate::units::format_mbps;

pub(super) fn report(r: &open_au::OpenAuResult) -> FlashReport {
    let value = r.open_aus.map_or("not seen".into(), |n| n.to_string());
    let findings = vec![Finding::new("open AUs", value, Some(r.confidence))];
    assemble("open-au", verdict(r), findings, table(r), false, r)
}

fn verdict(r: &open_au::OpenAuResult) -> String {
    match (r.open_aus, r.why_none) {
        (Some(n), _) => format!(
            "{n} open AU(s): writing to more in turn collapses throughput {:.1}× (noise {:.2}×)",
            r.collapse, r.spread
        ),
        (None, Some(open_au::NoCount::NotFromTheCount)) => {
            "throughput fell but stayed low with fewer AUs again: not the open-AU limit (a write cache filling?)".into()
        }
        (None, Some(open_au::NoCount::InTheNoise)) => format!(
            "a collapse of {:.2}× is within the noise ({:.2}×): no count",
            r.collapse, r.spread
        ),
        (None, _) => format!(
            "no collapse up to {} AUs: no open-AU limit seen (none, more than {}, or hidden by a write cache)",
            r.plan.max_n,
            r.plan.max_n.saturating_sub(2)
        ),
    }
}

/// Throughput by the number of AUs written in turn, and the check again.
fn table(r: &open_au::OpenAuResult) -> Vec<Vec<String>> {
    let mut table = vec![vec!["AUs".into(), "MB/s".into()]];
    table.extend(
        r.points
            .iter()
            .map(|p| vec![p.aus.to_string(), format_mbps(p.mb_per_s)]),
    );
    if let Some(c) = r.check {
        table.push(vec![format!("{} again", c.aus), format_mbps(c.mb_per_s)]);
    }
    table
}
