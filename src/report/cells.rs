//! Cell texts that several tables share, so that one figure reads the same
//! in `compare`, the Markdown export and every other table that shows it:
//! the range rule for repeated figures, a device's identity in one line,
//! which repetition's latency a one-row-per-test table shows, and a rank's
//! figures in a table of ranks.

use crate::probe::DeviceIdentity;
use crate::result::TestResult;
use crate::result::cluster::RankRow;
use crate::stats::{LatencySummary, Spread};
use crate::units::{format_latency, format_mbps};

/// The latency of one direction of `t` (`write` or read) in the complete
/// repetition whose MB/s is the median, the one a table's median MB/s
/// stands for; percentiles of different repetitions cannot be merged, so
/// one repetition speaks for the test. `None` when no complete repetition
/// moved data that way.
pub fn median_latency(t: &TestResult, write: bool) -> Option<&LatencySummary> {
    let mut reps: Vec<(f64, &LatencySummary)> = t
        .repetitions
        .iter()
        .filter(|m| m.is_complete())
        .filter_map(|m| {
            if write {
                m.write.as_ref()
            } else {
                m.read.as_ref()
            }
        })
        .map(|d| (d.mb_per_s, &d.latency))
        .collect();
    reps.sort_by(|a, b| a.0.total_cmp(&b.0));
    reps.get(reps.len() / 2).map(|(_, l)| *l)
}

/// [`median_latency`] of the direction a test is named by: its reads, or
/// its writes when it only writes (a mixed test's reads: the JSON holds
/// both sides).
pub fn test_latency(t: &TestResult) -> Option<&LatencySummary> {
    median_latency(t, false).or_else(|| median_latency(t, true))
}

/// Above this relative spread ((max - min) / median) a figure is a range.
pub const RANGE_SPREAD: f64 = 0.10;

/// The range rule: the median, with `(min–max)` after it when the
/// repetitions spread by more than 10% of it; `-` without figures.
pub fn figure_text(reps: &[f64]) -> String {
    spread_text(reps, format_mbps)
}

/// [`figure_text`] with any formatter (MB/s, IOPS).
pub fn spread_text(reps: &[f64], format: impl Fn(f64) -> String) -> String {
    let Some(s) = Spread::of(reps) else {
        return "-".into();
    };
    if s.median > 0.0 && (s.max - s.min) / s.median > RANGE_SPREAD {
        format!("{} ({}–{})", format(s.median), format(s.min), format(s.max))
    } else {
        format(s.median)
    }
}

/// A rank's figures as a table of ranks shows them: MB/s, p50, p99, start
/// skew and end skew, each time with its unit (`-`: not measured).
pub fn rank_figures(r: &RankRow) -> [String; 5] {
    let time = |ns: Option<u64>| ns.map_or("-".into(), |ns| format_latency(ns as f64));
    [
        format_mbps(r.mb_per_s),
        time(r.p50_ns),
        time(r.p99_ns),
        time(Some(r.start_skew_ns)),
        time(Some(r.end_skew_ns)),
    ]
}

/// `Mfg ID: 0x03 (SanDisk) OEM ID: SD Name: SD08G Rev: 8.0 Date: 2008-12
/// SN: 0x6051fd1c` for a card; vendor ids, model and serial otherwise.
pub fn identity_text(id: Option<&DeviceIdentity>) -> String {
    let Some(id) = id else {
        return String::new();
    };
    let d = &id.device;
    let mut parts: Vec<String> = Vec::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}: {v}"));
        }
    };
    if let Some(m) = &d.mmc {
        let mfg = m.manfid.map(|id| match &m.manufacturer {
            Some(n) => format!("0x{id:02x} ({n})"),
            None => format!("0x{id:02x}"),
        });
        put("Mfg ID", mfg);
        put("OEM ID", m.oem.clone().or(m.oemid.clone()));
        put("Name", m.name.clone());
        put("Rev", m.revision.clone());
        put("Date", m.date.clone());
        put("SN", m.serial.clone());
    } else if let Some(n) = &d.nvme {
        put("Model", n.model.clone());
        put("FW", n.firmware.clone());
        put("SN", n.serial.clone());
    } else {
        if let Some(u) = &d.usb {
            put(
                "USB ID",
                u.vendor_id
                    .clone()
                    .zip(u.product_id.clone())
                    .map(|(v, p)| format!("{v}:{p}")),
            );
        }
        let b = d.block.as_ref();
        put("Model", b.and_then(|b| b.model.clone()));
        put("Rev", b.and_then(|b| b.revision.clone()));
        put(
            "SN",
            b.and_then(|b| b.serial.clone())
                .or_else(|| d.usb.as_ref().and_then(|u| u.serial.clone())),
        );
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_rule() {
        assert_eq!(figure_text(&[20.1, 19.8, 20.3]), "20.1");
        assert_eq!(figure_text(&[12.0, 17.0, 15.0]), "15.0 (12.0–17.0)");
        assert_eq!(figure_text(&[0.8, 1.4, 1.1]), "1.10 (0.800–1.40)");
        assert_eq!(figure_text(&[7.2]), "7.20");
        assert_eq!(figure_text(&[0.02, 0.021]), "0.0205");
        assert_eq!(figure_text(&[]), "-");
        // 10% exactly is still tight; just above is a range.
        assert_eq!(figure_text(&[100.0, 110.0]), "105");
        assert_eq!(figure_text(&[100.0, 111.0]), "106 (100–111)");
    }
}
