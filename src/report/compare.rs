//! Runs side by side, in the style people post in forums: one row per run,
//! read and write MB/s, the device's identity, notes. A figure whose
//! repetitions spread by more than 10% is printed as a range (`12-17`), a
//! tight one as one number, so the table never claims more precision than
//! the device gave. Runs of one device get a verdict against the first.

use crate::probe::DeviceIdentity;
use crate::result::{RunResult, TestResult};
use crate::stats::Spread;
use crate::stats::bootstrap::{self, Verdict};

/// Above this relative spread ((max - min) / median) a figure is a range.
pub const RANGE_SPREAD: f64 = 0.10;

/// One run to compare, with the name it was asked for by.
#[derive(Debug, Clone)]
pub struct Entry {
    /// `run 12`, or a file name.
    pub source: String,
    pub result: RunResult,
}

/// How to lay the table out.
#[derive(Debug, Clone)]
pub struct Options {
    pub test: Option<String>,
    /// Noise threshold as a share (0.05).
    pub threshold: f64,
    pub markdown: bool,
}

/// MB/s with the precision a reader needs: whole numbers from 10 up.
pub fn format_mb(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The range rule: `12-17` when the repetitions spread by more than 10% of
/// their median, else the median alone; `-` without figures.
pub fn figure_text(reps: &[f64]) -> String {
    let Some(s) = Spread::of(reps) else {
        return "-".into();
    };
    if s.median > 0.0 && (s.max - s.min) / s.median > RANGE_SPREAD {
        format!("{}-{}", format_mb(s.min), format_mb(s.max))
    } else {
        format_mb(s.median)
    }
}

/// MB/s of the complete repetitions of a test.
pub fn repetitions(t: &TestResult) -> Vec<f64> {
    t.repetitions
        .iter()
        .filter(|m| !m.interrupted && m.ops > 0)
        .map(|m| m.mb_per_s)
        .collect()
}

/// The test compared: `name` when given, else the first test of the run.
fn test_name(r: &RunResult, name: Option<&str>) -> Option<String> {
    name.map(str::to_string)
        .or_else(|| r.tests.first().map(|t| t.name.clone()))
}

/// The read and the write test of that name.
pub fn read_write<'a>(
    r: &'a RunResult,
    name: Option<&str>,
) -> (Option<&'a TestResult>, Option<&'a TestResult>) {
    let Some(name) = test_name(r, name) else {
        return (None, None);
    };
    let find = |rws: &[&str]| {
        r.tests.iter().find(|t| {
            t.name == name && rws.contains(&t.workload.rw.as_str()) && t.skipped.is_none()
        })
    };
    (find(&["read", "randread"]), find(&["write", "randwrite"]))
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

/// Remarks a reader must see beside the figures.
fn notes(r: &RunResult, read: Option<&TestResult>) -> String {
    let mut notes = Vec::new();
    if r.command == "fio" {
        notes.push("fio import".to_string());
    }
    if r.interrupted {
        notes.push("interrupted".into());
    }
    if r.error.is_some() {
        notes.push("ended by an I/O error".into());
    }
    let link = r
        .device_identity
        .as_ref()
        .and_then(|i| i.device.interface.as_ref());
    if let (Some(l), Some(t)) = (link, read) {
        let cap = l.practical_limit_mb_s;
        if let (Some(cap), Some(s)) = (cap, t.mb_per_s) {
            if s.median >= 0.9 * cap {
                notes.push(format!(
                    "at the {} ceiling (~{} MB/s)",
                    l.description,
                    format_mb(cap)
                ));
            }
        }
    }
    let cached = r.tests.iter().flat_map(|t| &t.repetitions).any(|m| {
        m.device_io
            .as_ref()
            .is_some_and(|d| d.cache_served_fraction > 0.1)
    });
    if cached {
        notes.push("partly served by a cache".into());
    }
    notes.join("; ")
}

/// The cells of one row.
fn row(e: &Entry, test: Option<&str>) -> Vec<String> {
    let r = &e.result;
    let (read, write) = read_write(r, test);
    let label = r
        .device_identity
        .as_ref()
        .map_or_else(|| r.target.path.clone(), |i| i.label.clone());
    let date = r.started_at.get(..10).unwrap_or(&r.started_at).to_string();
    vec![
        label,
        format!("{} {}", e.source, date),
        read.map_or("-".into(), |t| figure_text(&repetitions(t))),
        write.map_or("-".into(), |t| figure_text(&repetitions(t))),
        identity_text(r.device_identity.as_ref()),
        notes(r, read),
    ]
}

const HEADER: [&str; 6] = [
    "Device",
    "Run",
    "Read MB/s",
    "Write MB/s",
    "Identity",
    "Notes",
];

/// Pads cells into aligned columns (the last column unpadded).
fn aligned(rows: &[Vec<String>]) -> String {
    let cols = rows[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c + 1 == cols {
                    v.clone()
                } else {
                    format!("{v:<w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// A Markdown table.
pub fn markdown_table(rows: &[Vec<String>]) -> String {
    let line = |r: &[String]| {
        format!(
            "| {} |\n",
            r.iter()
                .map(|c| c.replace('|', "\\|"))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    let mut out = line(&rows[0]);
    out.push_str(&format!("|{}\n", "---|".repeat(rows[0].len())));
    for r in &rows[1..] {
        out.push_str(&line(r));
    }
    out
}

/// The whole comparison: table, then verdicts when every run is of one
/// device.
pub fn render(entries: &[Entry], opts: &Options) -> String {
    let mut rows = vec![HEADER.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    rows.extend(entries.iter().map(|e| row(e, opts.test.as_deref())));
    let mut out = if opts.markdown {
        markdown_table(&rows)
    } else {
        aligned(&rows)
    };
    out.push_str(&format!(
        "figures: median of the repetitions; a range where they spread by more than {:.0}%\n",
        RANGE_SPREAD * 100.0
    ));
    if let Some(lines) = verdicts(entries, opts) {
        out.push('\n');
        out.push_str(&lines);
    }
    out
}

/// The key shared by every entry, when there is one.
fn same_device(entries: &[Entry]) -> Option<&str> {
    let key = entries
        .first()?
        .result
        .device_identity
        .as_ref()?
        .key
        .as_str();
    entries
        .iter()
        .all(|e| {
            e.result
                .device_identity
                .as_ref()
                .is_some_and(|i| i.key == key)
        })
        .then_some(key)
}

/// The verdict lines of later runs against the first, for one device.
fn verdicts(entries: &[Entry], opts: &Options) -> Option<String> {
    if entries.len() < 2 {
        return None;
    }
    same_device(entries)?;
    let base = &entries[0];
    let (b_read, b_write) = read_write(&base.result, opts.test.as_deref());
    let mut out = format!(
        "same device: each run against {} (95% bootstrap interval of the difference of mean MB/s; changes within ±{:.0}% are noise)\n",
        base.source,
        opts.threshold * 100.0
    );
    for e in &entries[1..] {
        let (read, write) = read_write(&e.result, opts.test.as_deref());
        for (dir, before, after) in [("read", b_read, read), ("write", b_write, write)] {
            let (Some(before), Some(after)) = (before, after) else {
                continue;
            };
            let v = bootstrap::judge(&repetitions(before), &repetitions(after), opts.threshold);
            out.push_str(&format!(
                "  {} {dir}: {}\n",
                e.source,
                verdict_text(v.as_ref())
            ));
        }
    }
    Some(out)
}

/// "slower by 20% (95% CI -23% to -17%)".
pub fn verdict_text(v: Option<&Verdict>) -> String {
    let Some(v) = v else {
        return "no verdict: needs at least 2 repetitions on each side".into();
    };
    let pct = |x: f64| format!("{:+.0}%", x * 100.0);
    let ci = format!("95% CI {} to {}", pct(v.relative.low), pct(v.relative.high));
    match v.change {
        bootstrap::Change::NoChange => {
            format!("no change ({} , {ci})", pct(v.relative.estimate)).replace(" ,", ",")
        }
        c => format!(
            "{} by {:.0}% ({ci})",
            c.word(),
            v.relative.estimate.abs() * 100.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn range_rule() {
        assert_eq!(figure_text(&[20.1, 19.8, 20.3]), "20");
        assert_eq!(figure_text(&[12.0, 17.0, 15.0]), "12-17");
        assert_eq!(figure_text(&[0.8, 1.4, 1.1]), "0.8-1.4");
        assert_eq!(figure_text(&[7.2]), "7.2");
        assert_eq!(figure_text(&[]), "-");
        // 10% exactly is still tight; just above is a range.
        assert_eq!(figure_text(&[100.0, 110.0]), "105");
        assert_eq!(figure_text(&[100.0, 111.0]), "100-111");
    }

    fn entries() -> Vec<Entry> {
        let a = testdata::sd_identity("SD02G", 3, "SD", "0x2083a7c8", "2007-09");
        let b = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let c = testdata::sd_identity("00000", 0x1b, "SM", "0x2b060bfe", "2010-05");
        vec![
            Entry {
                source: "run 1".into(),
                result: testdata::run(
                    Some(a),
                    "2024-03-01T10:00:00Z",
                    &[20.1, 19.9, 20.2],
                    &[18.0, 17.8, 18.1],
                ),
            },
            Entry {
                source: "run 2".into(),
                result: testdata::run(
                    Some(b),
                    "2024-03-01T11:00:00Z",
                    &[20.0, 20.3, 19.7],
                    &[12.2, 17.1, 15.0],
                ),
            },
            Entry {
                source: "run 3".into(),
                result: testdata::run(
                    Some(c),
                    "2024-03-02T09:00:00Z",
                    &[11.2, 15.3, 13.9],
                    &[6.0, 6.1, 5.9],
                ),
            },
        ]
    }

    #[test]
    fn snapshot_side_by_side() {
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: false,
        };
        insta::assert_snapshot!(render(&entries(), &opts));
    }

    #[test]
    fn snapshot_markdown() {
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: true,
        };
        insta::assert_snapshot!(render(&entries(), &opts));
    }

    #[test]
    fn snapshot_same_device_verdicts() {
        let card = || testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let runs = vec![
            Entry {
                source: "run 4".into(),
                result: testdata::run(
                    Some(card()),
                    "2024-01-10T08:00:00Z",
                    &[20.0, 20.4, 19.8],
                    &[17.1, 16.8, 17.3],
                ),
            },
            Entry {
                source: "run 9".into(),
                result: testdata::run(
                    Some(card()),
                    "2025-01-12T08:00:00Z",
                    &[20.2, 19.6, 20.1],
                    &[13.6, 13.9, 13.4],
                ),
            },
        ];
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: false,
        };
        let text = render(&runs, &opts);
        assert!(text.contains("run 9 read: no change"), "{text}");
        assert!(text.contains("run 9 write: slower by 20%"), "{text}");
        insta::assert_snapshot!(text);
    }
}
