//! The report's section of a sustained write: the speed against what was
//! written, in the binary unit that fits the run (a 160 MiB write is
//! charted in MiB, not as 0–0.2 GiB), the drop or its absence, and the
//! figures as a table: the levels the change-point model found, then the
//! speed per stretch (the `--mark` stretches when the run had them, else
//! its intervals merged to at most [`MAX_ROWS`]).

use super::{charts, esc};
use crate::report::text_sustain::{
    drop_range, drop_sentence, drop_spread, no_drop_sentence, slow_start,
};
use crate::result::apps::SustainReport;
use crate::units::{format_mbps, format_size};
use std::fmt::Write;

/// Rows of the speed table.
const MAX_ROWS: usize = 40;

/// The largest binary unit in which `bytes` is at least 1: its size in
/// bytes and its name.
fn size_unit(bytes: u64) -> (f64, &'static str) {
    const UNITS: [(u64, &str); 4] = [
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
        (1, "B"),
    ];
    let (per, name) = UNITS
        .into_iter()
        .find(|(per, _)| bytes >= *per)
        .unwrap_or((1, "B"));
    (per as f64, name)
}

pub fn section(out: &mut String, r: &SustainReport) {
    let _ = writeln!(out, "<h4>Sustained write</h4>");
    let (per, unit) = size_unit(r.bytes);
    let series: Vec<(f64, f64)> = r
        .intervals
        .iter()
        .map(|i| ((i.bytes_before + i.bytes) as f64 / per, i.mb_per_s))
        .collect();
    let axis = format!("{unit} written");
    let _ = writeln!(
        out,
        "<figure data-chart=\"sustain\">{}<figcaption>MB/s per interval against {unit} written.</figcaption></figure>",
        charts::line(&series, &axis, "MB/s (10^6 B/s)", "write speed")
    );
    outcome(out, r);
    levels(out, r);
    speeds(out, r, per, unit);
}

/// The drop, with its range and a slow start, or why there was none.
fn outcome(out: &mut String, r: &SustainReport) {
    let Some(d) = &r.drop else {
        let _ = writeln!(
            out,
            "<p>Drop: {}. {} MB/s over {} ({}).</p>",
            esc(&no_drop_sentence(&r.levels)),
            format_mbps(r.mb_per_s),
            esc(&format_size(r.bytes)),
            esc(r.ended_by.as_str())
        );
        return;
    };
    let range = match d.per_request() {
        true => format!(" {}.", drop_range(d)),
        false => String::new(),
    };
    let start = slow_start(d).map(|s| format!(" {s}.")).unwrap_or_default();
    // The same spread and confidence the text report gives.
    let spread = drop_spread(d).map(|s| format!(" {s}.")).unwrap_or_default();
    let _ = writeln!(
        out,
        "<p class=\"warn\">The speed dropped {}.{}{}{}</p>",
        esc(&drop_sentence(d)),
        esc(&range),
        esc(&start),
        esc(&spread)
    );
}

/// The levels of one speed, when the model found more than one.
fn levels(out: &mut String, r: &SustainReport) {
    if r.levels.len() < 2 {
        return;
    }
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table><thead><tr><th>from</th><th>length</th><th>at</th><th>MB/s</th></tr></thead><tbody>"
    );
    for l in &r.levels {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{:.2} s</td><td>{}</td></tr>",
            esc(&format_size(l.bytes_before)),
            esc(&format_size(l.bytes)),
            l.start_ns as f64 / 1e9,
            format_mbps(l.mb_per_s)
        );
    }
    let _ = writeln!(out, "</tbody></table></div>");
}

/// The speed per stretch: the marks, else the intervals merged to fit.
fn speeds(out: &mut String, r: &SustainReport, per: f64, unit: &str) {
    let rows: Vec<(u64, f64)> = match r.marks.len() {
        0 => merged_intervals(r),
        _ => r.marks.iter().map(|m| (m.bytes_end, m.mb_per_s)).collect(),
    };
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table><thead><tr><th>{unit} written</th><th>MB/s</th></tr></thead><tbody>"
    );
    for (bytes, mb_per_s) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{:.2}</td><td>{}</td></tr>",
            bytes as f64 / per,
            format_mbps(mb_per_s)
        );
    }
    let _ = writeln!(out, "</tbody></table></div>");
}

/// The intervals merged in runs of equal length to at most [`MAX_ROWS`]:
/// each row's bytes written at its end and its bytes over its time.
fn merged_intervals(r: &SustainReport) -> Vec<(u64, f64)> {
    let per_row = r.intervals.len().div_ceil(MAX_ROWS).max(1);
    r.intervals
        .chunks(per_row)
        .filter_map(|c| {
            let (first, last) = (c.first()?, c.last()?);
            let bytes: u64 = c.iter().map(|i| i.bytes).sum();
            let ns = last.end_ns.saturating_sub(first.start_ns).max(1);
            Some((
                last.bytes_before + last.bytes,
                bytes as f64 * 1e3 / ns as f64,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_unit_fits_the_run() {
        assert_eq!(size_unit(160 << 20).1, "MiB");
        assert_eq!(size_unit(3 << 30).1, "GiB");
        assert_eq!(size_unit(512 << 10).1, "KiB");
        assert_eq!(size_unit(0).1, "B");
    }

    #[test]
    fn a_drop_carries_the_same_spread_and_confidence_as_in_the_text_report() {
        let drop = crate::testdata::sustain_drop();
        let words = drop_spread(&drop).expect("a drop with spreads has words");
        let report = SustainReport {
            block_size: 1 << 20,
            bytes: 64 << 20,
            drop: Some(drop),
            ..Default::default()
        };
        let mut out = String::new();
        outcome(&mut out, &report);
        assert!(out.contains(&esc(&words)), "{out}\nmissing: {words}");
        assert!(out.contains("confidence medium"), "{out}");
    }
}
