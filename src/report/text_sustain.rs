//! The `sustain` part of the text report: totals, the drop, and a compact
//! bar per interval (at most [`MAX_ROWS`] rows, intervals merged to fit).

use crate::analysis::sustain::rules::DROP_RATIO;
use crate::analysis::sustain::{Shape, shape};
use crate::result::apps::SpeedDrop;
use crate::result::apps::SpeedLevel;
use crate::result::apps::SustainReport;
use crate::result::flash::Confidence;
use crate::stats::Spread;
use crate::units::{format_mbps, format_size_figure};
use std::fmt::Write;

/// Rows of the terminal chart.
const MAX_ROWS: usize = 30;
const BAR_WIDTH: f64 = 40.0;

pub fn sustain_block(out: &mut String, r: &SustainReport) {
    let _ = writeln!(
        out,
        "written     {} in {:.1} s, {} MB/s on average, writes of {}; ended by {}",
        format_size_figure(r.bytes),
        r.elapsed_ns as f64 / 1e9,
        format_mbps(r.mb_per_s),
        format_size_figure(u64::from(r.block_size)),
        r.ended_by
    );
    match &r.drop {
        Some(d) => {
            let _ = writeln!(out, "DROP        {}", drop_sentence(d));
            if d.per_request() {
                let _ = writeln!(out, "            {}", drop_range(d));
            }
            if let Some(spread) = drop_spread(d) {
                let _ = writeln!(out, "            {spread}");
            }
            if let Some(start) = slow_start(d) {
                let _ = writeln!(out, "            {start}");
            }
        }
        None => {
            let _ = writeln!(out, "drop        {}", no_drop_sentence(&r.levels));
        }
    }
    if r.requests_recorded > 0 && r.requests_recorded * u64::from(r.block_size) < r.bytes {
        let _ = writeln!(
            out,
            "note        the drop was searched in the first {} requests ({}) only",
            r.requests_recorded,
            format_size_figure(r.requests_recorded * u64::from(r.block_size))
        );
    }
    chart(out, r);
    for m in &r.marks {
        let _ = writeln!(
            out,
            "  up to {:>10}: {} MB/s",
            format_size_figure(m.bytes_end),
            format_mbps(m.mb_per_s)
        );
    }
}

fn chart(out: &mut String, r: &SustainReport) {
    let n = r.intervals.len();
    if n == 0 {
        return;
    }
    let per_row = n.div_ceil(MAX_ROWS);
    let peak = r.intervals.iter().map(|i| i.mb_per_s).fold(0.0, f64::max);
    for group in r.intervals.chunks(per_row) {
        let bytes: u64 = group.iter().map(|i| i.bytes).sum();
        let ns = group.last().map_or(0, |i| i.end_ns) - group[0].start_ns;
        let mbps = crate::units::mb_per_s(bytes, ns);
        let width = if peak > 0.0 {
            (mbps / peak * BAR_WIDTH).round() as usize
        } else {
            0
        };
        let _ = writeln!(
            out,
            "  {:>7.1} s {:>10} {:>8} MB/s {}",
            group[0].start_ns as f64 / 1e9,
            format_size_figure(group[0].bytes_before),
            format_mbps(mbps),
            "█".repeat(width)
        );
    }
}

/// Where the speed dropped and the speeds on each side, in one sentence
/// (the text and HTML reports share it).
pub fn drop_sentence(d: &SpeedDrop) -> String {
    let speeds = format!(
        "{} MB/s before, {} MB/s after ({:.0}% of before)",
        format_mbps(d.mb_per_s_before),
        format_mbps(d.mb_per_s_after),
        d.ratio * 100.0
    );
    if !d.per_request() {
        // Stored before the per-request search: located per interval.
        return format!(
            "after {} ({:.1} s, to the interval): {speeds}",
            format_size_figure(d.bytes_before_drop),
            d.seconds_before_drop
        );
    }
    format!(
        "at {} ± {} (request {} of {}, {:.2} s): {speeds}",
        format_size_figure(d.bytes_before_drop),
        format_size_figure(d.uncertainty_bytes()),
        d.at_request,
        d.requests,
        d.seconds_before_drop
    )
}

/// What came before the fast stretch that ended in the drop, when the
/// write did not start with it.
pub fn slow_start(d: &SpeedDrop) -> Option<String> {
    (d.fast_from_bytes > 0).then(|| {
        format!(
            "After a slow start of {} MB/s over the first {} (the speed before counts from {} on)",
            format_mbps(d.mb_per_s_start),
            format_size_figure(d.fast_from_bytes),
            format_size_figure(d.fast_from_bytes)
        )
    })
}

/// What a write without a drop did: held, or the levels it went through
/// (the text and HTML reports share it).
pub fn no_drop_sentence(levels: &[SpeedLevel]) -> String {
    let what = match shape(levels) {
        Shape::Held => return "none found: the speed held over the whole write".to_string(),
        Shape::SlowStart => "none, after a slow start".to_string(),
        Shape::Rose => "none, the speed rose".to_string(),
        Shape::Changed => format!(
            "none below {:.0}% of an earlier speed, but the speed did not hold",
            DROP_RATIO * 100.0
        ),
    };
    format!("{what}: {}", level_list(levels))
}

/// Levels to list before the rest are summed up as "... N more".
const LISTED_LEVELS: usize = 6;

/// "1.97 MB/s over the first 16 MiB, then 5.00 MB/s to 512 MiB".
fn level_list(levels: &[SpeedLevel]) -> String {
    let mut parts = Vec::new();
    for (i, l) in levels.iter().take(LISTED_LEVELS).enumerate() {
        let end = format_size_figure(l.bytes_before + l.bytes);
        parts.push(match i {
            0 => format!("{} MB/s over the first {end}", format_mbps(l.mb_per_s)),
            _ => format!("then {} MB/s to {end}", format_mbps(l.mb_per_s)),
        });
    }
    if levels.len() > LISTED_LEVELS {
        parts.push(format!(
            "and {} more changes (see --json levels)",
            levels.len() - LISTED_LEVELS
        ));
    }
    parts.join(", ")
}

/// How steady each side of a drop was and how sure the drop is, when the
/// run stored them: "Speed stretch by stretch: before 390–410 MB/s, after
/// 4.50–5.50 MB/s; confidence high".
pub fn drop_spread(d: &SpeedDrop) -> Option<String> {
    let side = |name: &str, s: Option<Spread>| {
        s.map(|s| format!("{name} {}–{} MB/s", format_mbps(s.min), format_mbps(s.max)))
    };
    let speeds: Vec<String> = [
        side("before", d.before_spread),
        side("after", d.after_spread),
    ]
    .into_iter()
    .flatten()
    .collect();
    let parts: Vec<String> = [
        (!speeds.is_empty()).then(|| format!("Speed stretch by stretch: {}", speeds.join(", "))),
        d.confidence.map(confidence_words),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A drop's confidence and what capped it.
fn confidence_words(c: Confidence) -> String {
    match c {
        Confidence::High => "confidence high".to_string(),
        Confidence::Medium => "confidence medium: the write around the drop was too short to rule out a cost that repeats once per erase unit".to_string(),
        Confidence::Low => "confidence low: the write around the drop was too short to rule out a cost that repeats once per flash page".to_string(),
    }
}

/// The plausible range of a per-request drop and what it rests on.
pub fn drop_range(d: &SpeedDrop) -> String {
    format!(
        "The first slow request starts between {} and {} (1/32 likelihood support of the step fit, widened by one request)",
        format_size_figure(d.bytes_low),
        format_size_figure(d.bytes_high)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drop() -> SpeedDrop {
        crate::testdata::sustain_drop()
    }

    fn level(first: u64, requests: u64, mb_per_s: f64) -> SpeedLevel {
        let bytes = requests << 16;
        SpeedLevel {
            first_request: first,
            requests,
            bytes_before: first << 16,
            bytes,
            start_ns: 0,
            ns: (bytes as f64 * 1e3 / mb_per_s) as u64,
            mb_per_s,
        }
    }

    #[test]
    fn only_one_level_is_said_to_have_held() {
        assert_eq!(
            no_drop_sentence(&[level(0, 100, 5.0)]),
            "none found: the speed held over the whole write"
        );
        let slow_start = no_drop_sentence(&[level(0, 256, 1.97), level(256, 7936, 5.0)]);
        assert_eq!(
            slow_start,
            "none, after a slow start: 1.97 MB/s over the first 16 MiB, then 5.00 MB/s to 512 MiB"
        );
        let rose = no_drop_sentence(&[level(0, 4000, 2.0), level(4000, 4192, 5.0)]);
        assert!(
            rose.starts_with("none, the speed rose: 2.00 MB/s"),
            "{rose}"
        );
        let fell = no_drop_sentence(&[level(0, 4000, 5.0), level(4000, 4192, 4.0)]);
        assert!(
            fell.starts_with(
                "none below 70% of an earlier speed, but the speed did not hold: 5.00 MB/s"
            ),
            "{fell}"
        );
        let many: Vec<SpeedLevel> = (0..9)
            .map(|i| level(i * 10, 10, if i % 2 == 0 { 5.0 } else { 2.0 }))
            .collect();
        let text = no_drop_sentence(&many);
        assert!(
            text.ends_with("and 3 more changes (see --json levels)"),
            "{text}"
        );
    }

    #[test]
    fn a_drop_after_a_slow_start_names_the_start() {
        assert_eq!(slow_start(&drop()), None);
        let d = SpeedDrop {
            fast_from_bytes: 16 << 20,
            mb_per_s_start: 1.97,
            ..drop()
        };
        let text = slow_start(&d).expect("a slow start");
        assert!(
            text.starts_with("After a slow start of 1.97 MB/s over the first 16 MiB"),
            "{text}"
        );
    }

    #[test]
    fn a_per_request_drop_names_its_request_and_uncertainty() {
        let text = drop_sentence(&drop());
        assert!(
            text.starts_with("at 24 MiB ± 1 MiB (request 24 of 40"),
            "{text}"
        );
        assert!(
            text.contains("400 MB/s before") && text.contains("5.00 MB/s after"),
            "{text}"
        );
        let range = drop_range(&drop());
        assert!(range.contains("23 MiB and 25 MiB"), "{range}");
        let spread = drop_spread(&drop()).expect("stored spreads");
        assert!(
            spread.starts_with("Speed stretch by stretch: before 390–410 MB/s, after 4.50–5.50 MB/s; confidence medium"),
            "{spread}"
        );
        let stored_before = SpeedDrop {
            before_spread: None,
            after_spread: None,
            confidence: None,
            ..drop()
        };
        assert_eq!(drop_spread(&stored_before), None);
    }

    #[test]
    fn a_report_stored_before_the_per_request_search_still_loads() {
        let old = r#"{"block_size":1048576,"interval_ns":1000000000,"mark_bytes":1073741824,
            "bytes":41943040,"elapsed_ns":3000000000,"mb_per_s":14.0,"ended_by":"bytes",
            "intervals":[],"marks":[],
            "drop":{"at_interval":5,"bytes_before_drop":35651584,"seconds_before_drop":1.2,
                    "mb_per_s_before":40.0,"mb_per_s_after":5.0,"ratio":0.125}}"#;
        let r: SustainReport = serde_json::from_str(old).expect("loads");
        let d = r.drop.expect("the stored drop");
        assert!(!d.per_request());
        assert_eq!((d.at_interval, d.bytes_before_drop), (5, 34 << 20));
        assert_eq!(r.requests_recorded, 0);
        let mut out = String::new();
        sustain_block(&mut out, &r);
        assert!(
            out.contains("DROP        after 34 MiB (1.2 s, to the interval)"),
            "{out}"
        );
        assert!(!out.contains("searched in the first"), "{out}");
    }

    #[test]
    fn a_stored_interval_drop_still_reads_as_one() {
        let old = SpeedDrop {
            requests: 0,
            at_request: 0,
            bytes_low: 0,
            bytes_high: 0,
            ..drop()
        };
        let text = drop_sentence(&old);
        assert!(
            text.starts_with("after 24 MiB (0.1 s, to the interval)"),
            "{text}"
        );
    }
}
