//! A flash finding's figures in words, and the raw table's cells as text:
//! what every format prints for a [`Figure`] or a [`Cell`].
//!
//! Why apart from the per-test files: those choose which figures a test
//! reports; this words each one, the same whether the result was just
//! measured or read back from the database.

use crate::result::flash::{AuFrom, AuSource, Cell, Column, Figure, Finding, PnuPoint, ProbeFate};
use crate::result::flash::{Exhaustion, FixOutcome};
use crate::units::{format_latency, format_mbps, format_size};

/// A finding's name, value and, when the figures say it, its note.
pub struct Words {
    pub name: String,
    pub value: String,
    pub note: Option<String>,
}

/// The words of `x`: from its figure, with its reason (or the note a
/// figure carries) as the note; a finding stored by an earlier release as
/// words is shown as stored.
pub fn of_finding(x: &Finding) -> Words {
    let w = words(&x.figure);
    Words {
        note: x.reason.as_ref().map(super::reason_text).or(w.note),
        ..w
    }
}

/// The words of one figure.
pub fn words(f: &Figure) -> Words {
    let (name, value) = match f {
        Figure::Requirement {
            class,
            need,
            measured,
            limit,
        } => (
            format!("{class} {}", super::outcome::need_name(*need)),
            super::need_text(*need, *measured, *limit),
        ),
        Figure::Au {
            bytes,
            kernel_bytes,
        } => {
            let note = kernel_bytes.map(|k| {
                let agrees = if *bytes == Some(k) {
                    "agrees"
                } else {
                    "differs"
                };
                format!("kernel preferred_erase_size {} {agrees}", format_size(k))
            });
            return Words {
                name: "AU (erase block)".into(),
                value: size_or_not_seen(*bytes),
                note,
            };
        }
        Figure::AuUsed { bytes, source } => {
            return Words {
                name: "AU used".into(),
                value: format_size(*bytes),
                note: Some(au_source(source, *bytes)),
            };
        }
        Figure::Words { name, value } => (name.clone(), value.clone()),
        other => {
            let (name, value) = plain(other);
            (name.to_string(), value)
        }
    };
    Words {
        name,
        value,
        note: None,
    }
}

/// Where the AU a test used came from.
fn au_source(s: &AuSource, bytes: u64) -> String {
    match s {
        AuSource::Chosen(AuFrom::Option) => "from --au".into(),
        AuSource::Chosen(AuFrom::Kernel) => "the kernel's preferred_erase_size".into(),
        AuSource::Chosen(AuFrom::Timing) => "detected by boundary timing".into(),
        AuSource::Chosen(AuFrom::Assumed) => format!(
            "no AU found by boundary timing: assumed {} (give --au)",
            format_size(bytes)
        ),
        AuSource::Words(w) => w.clone(),
    }
}

/// Name and value of the figures that carry no note of their own, worded
/// by the family they belong to.
fn plain(f: &Figure) -> (&'static str, String) {
    match f {
        Figure::Page { .. }
        | Figure::OpenAus { .. }
        | Figure::Burst { .. }
        | Figure::Cache { .. }
        | Figure::Absorbed { .. }
        | Figure::Sustained { .. }
        | Figure::WriteCache { .. } => geometry_figure(f),
        Figure::UsableCapacity { .. }
        | Figure::WrapAround
        | Figure::OkLost { .. }
        | Figure::LastGoodSector { .. }
        | Figure::Repair { .. }
        | Figure::Fixed { .. }
        | Figure::Beyond { .. }
        | Figure::CacheHid => capacity_figure(f),
        Figure::FlushShortened { .. }
        | Figure::FlushTooShort { .. }
        | Figure::NoCacheFilled { .. } => flush_figure(f),
        Figure::Pw { .. }
        | Figure::Pr { .. }
        | Figure::FatWriteTimes { .. }
        | Figure::Pnu { .. } => speed_class_figure(f),
        Figure::Requirement { .. }
        | Figure::Au { .. }
        | Figure::AuUsed { .. }
        | Figure::Words { .. } => {
            unreachable!("worded with their notes in `words`")
        }
    }
}

/// The card's geometry and its write cache: page, open AUs, speeds.
fn geometry_figure(f: &Figure) -> (&'static str, String) {
    match f {
        Figure::Page { bytes } => ("page", size_or_not_seen(*bytes)),
        Figure::OpenAus { count } => (
            "open AUs",
            count.map_or("not seen".into(), |n| n.to_string()),
        ),
        Figure::Burst { mb_per_s: mb_s } => ("burst", mb_s_text(*mb_s)),
        Figure::Cache { bytes } => ("cache", size_or_not_seen(*bytes)),
        Figure::Absorbed { bytes } => ("absorbed", format_size(*bytes)),
        Figure::Sustained { mb_per_s: mb_s } => ("sustained", mb_s_text(*mb_s)),
        Figure::WriteCache {
            exhaustion,
            burst_mb_per_s: burst_mb_s,
            fell_after_bytes: fell_after,
            written_bytes: written,
        } => (
            "write cache",
            write_cache_text(*exhaustion, *burst_mb_s, *fell_after, *written),
        ),
        _ => unreachable!("worded by another family of `plain`"),
    }
}

/// What the capacity probe found: the usable size, the lost blocks and
/// how to use the card.
fn capacity_figure(f: &Figure) -> (&'static str, String) {
    match f {
        Figure::UsableCapacity {
            bytes,
            at_most_bytes: at_most,
        } => ("usable capacity", super::holds_text(*bytes, *at_most)),
        Figure::WrapAround => (
            "wrap-around",
            format!("{ALIASED} blocks read: {ALIASED_MEANS}"),
        ),
        Figure::OkLost {
            ok_bytes: ok,
            lost_bytes: lost,
            write_mb_per_s: write_mb_s,
            read_mb_per_s: read_mb_s,
        } => (
            "OK / lost",
            ok_lost_text(*ok, *lost, *write_mb_s, *read_mb_s),
        ),
        Figure::LastGoodSector { sector } => (
            "last good sector",
            format!("{sector} (512-byte sectors; f3fix --last-sec={sector})"),
        ),
        Figure::Repair { start, sectors, .. } => (
            "to use it",
            format!(
                "one FAT32 partition, sectors {start}..{} ({}), ending at or before the last good sector",
                start + sectors - 1,
                format_size(sectors * 512)
            ),
        ),
        Figure::Fixed { outcome } => ("--fix", fixed_text(*outcome).into()),
        Figure::Beyond { errors } => ("beyond", beyond_text(*errors).into()),
        Figure::CacheHid => ("cache", "hid the fraud from an immediate read-back".into()),
        _ => unreachable!("worded by another family of `plain`"),
    }
}

/// How far the capacity probe's flush went against the write cache.
fn flush_figure(f: &Figure) -> (&'static str, String) {
    match f {
        Figure::FlushShortened {
            asked_bytes,
            bound_bytes,
        } => (
            "flush",
            format!(
                "{} asked, shortened to {}: that beats a write cache as large as the whole card, so no cache of this card needs more",
                format_size(*asked_bytes),
                format_size(*bound_bytes)
            ),
        ),
        Figure::FlushTooShort {
            filled_after_bytes,
            flushed_bytes,
            needed_bytes,
        } => (
            "cache",
            format!(
                "the write cache filled after {} of flush, which stopped at {}: below the {} the measured cache needs, it may still hold probes (give --flush {})",
                format_size(*filled_after_bytes),
                format_size(*flushed_bytes),
                format_size(*needed_bytes),
                flush_option(*needed_bytes)
            ),
        ),
        Figure::NoCacheFilled {
            flushed_bytes,
            at_bound: false,
        } => (
            "cache",
            format!(
                "no write cache filled within the {} flush: a larger one could hide a fake (give a larger --flush)",
                format_size(*flushed_bytes)
            ),
        ),
        Figure::NoCacheFilled {
            flushed_bytes,
            at_bound: true,
        } => (
            "cache",
            format!(
                "no write cache filled within the {} flush, which beats one as large as the whole card",
                format_size(*flushed_bytes)
            ),
        ),
        _ => unreachable!("worded by another family of `plain`"),
    }
}

/// The speed class measurements: Pw, Pr, the FAT writes and P(Nu).
fn speed_class_figure(f: &Figure) -> (&'static str, String) {
    match f {
        Figure::Pw {
            mean_mb_per_s: mean_mb_s,
            min_mb_per_s: min_mb_s,
            aus,
            ru_bytes: ru,
            slowest_place_mb_per_s: slowest,
        } => (
            "Pw (whole free AUs)",
            format!(
                "{} MB/s mean, {} min over {aus} AUs of {} RUs{}",
                format_mbps(*mean_mb_s),
                format_mbps(*min_mb_s),
                format_size(*ru),
                match slowest {
                    Some(s) => format!(
                        "; {} MB/s at the slowest place over the card",
                        format_mbps(*s)
                    ),
                    None => String::new(),
                }
            ),
        ),
        Figure::Pr {
            mb_per_s: mb_s,
            pw_mean_mb_per_s: pw_mean_mb_s,
        } => (
            "Pr (256 random RUs)",
            format!(
                "{} MB/s{}",
                format_mbps(*mb_s),
                match mb_s >= pw_mean_mb_s {
                    true => ", at least Pw as the specification asks",
                    false => ", BELOW Pw: the specification asks Pr >= Pw",
                }
            ),
        ),
        Figure::FatWriteTimes {
            worst_mean8_ns,
            max_ns,
            median_ns,
            writes,
        } => (
            "T_FW (FAT writes)",
            format!(
                "worst mean of 8 {}, max {}, median {} over {writes} writes (stalls rarer than one in {} not ruled out)",
                format_latency(*worst_mean8_ns as f64),
                format_latency(*max_ns as f64),
                format_latency(*median_ns as f64),
                writes / u64::from(crate::analysis::flash::class::FAT_PERIODS_SEEN).max(1)
            ),
        ),
        Figure::Pnu {
            curve,
            pm_mb_per_s: pm_mb_s,
        } => ("P(Nu)", pnu_text(curve, *pm_mb_s)),
        _ => unreachable!("worded by another family of `plain`"),
    }
}

/// The one name of a block that reads back another address's data, in
/// the verdict, the findings, the `-v` table and README.
pub const ALIASED: &str = "aliased";
const ALIASED_MEANS: &str = "each reads back another address's data, so the card wraps around";

/// H2testw's summary line: what holds, what is lost, and the speeds.
fn ok_lost_text(ok: u64, lost: u64, write: Option<f64>, read: Option<f64>) -> String {
    let speed = |what: &str, v: Option<f64>| v.map(|v| format!("{what} {} MB/s", format_mbps(v)));
    let speeds: Vec<String> = [speed("writing", write), speed("reading", read)]
        .into_iter()
        .flatten()
        .collect();
    let tail = match speeds.is_empty() {
        true => String::new(),
        false => format!("; {}", speeds.join(", ")),
    };
    format!("{} OK, {} lost{tail}", format_size(ok), format_size(lost))
}

fn fixed_text(outcome: FixOutcome) -> &'static str {
    match outcome {
        FixOutcome::Written => {
            "partition table written to sector 0 and read back: format the partition (mkfs.vfat -F 32)"
        }
        FixOutcome::NotWritten => {
            "partition table shown, not written: add --destructive to write it (this replaces the card's partition table)"
        }
        FixOutcome::Genuine => "the card is genuine: nothing to fix, nothing written",
        FixOutcome::NoRoom => {
            "too little of the card holds data for a partition of 1 MiB: nothing written"
        }
    }
}

/// The command lines that make a fake card usable at its real size:
/// those of its [`Figure::Repair`], none once `--fix` wrote the table.
pub fn repair_commands(findings: &[Finding]) -> Vec<String> {
    let fixed = findings.iter().any(|x| {
        x.figure
            == Figure::Fixed {
                outcome: FixOutcome::Written,
            }
    });
    findings
        .iter()
        .filter(|_| !fixed)
        .flat_map(|x| match &x.figure {
            Figure::Repair {
                target,
                start,
                sectors,
            } => {
                let r = crate::flash::partition::Repair {
                    last_good_sector: start + sectors - 1,
                    start: *start,
                    sectors: *sectors,
                };
                crate::flash::partition::commands(&r, target).to_vec()
            }
            _ => Vec::new(),
        })
        .collect()
}

/// A `--flush` value as the option reads it: whole MiB as `534M`, else
/// bytes.
pub fn flush_option(bytes: u64) -> String {
    match bytes.is_multiple_of(1 << 20) {
        true => format!("{}M", bytes >> 20),
        false => bytes.to_string(),
    }
}

fn size_or_not_seen(bytes: Option<u64>) -> String {
    bytes.map_or("not seen".to_string(), format_size)
}

fn mb_s_text(mb_s: f64) -> String {
    format!("{} MB/s", format_mbps(mb_s))
}

fn beyond_text(errors: bool) -> &'static str {
    match errors {
        true => "I/O errors beyond the real size",
        false => {
            "data written beyond the real size reads back as something else (zeros or old data)"
        }
    }
}

/// Whether the writes got past the cache before Pw was taken.
fn write_cache_text(
    exhaustion: Exhaustion,
    burst_mb_s: f64,
    fell_after: Option<u64>,
    written: u64,
) -> String {
    match (exhaustion, fell_after) {
        (Exhaustion::Exhausted, Some(at)) => format!(
            "burst {} MB/s, fell after {}, steady after {}",
            format_mbps(burst_mb_s),
            format_size(at),
            format_size(written)
        ),
        (Exhaustion::NoFall, _) => format!(
            "no fall within {}: no cache seen (or a larger one)",
            format_size(written)
        ),
        _ => format!(
            "speed after {}, cache not exhausted (burst {} MB/s)",
            format_size(written),
            format_mbps(burst_mb_s)
        ),
    }
}

fn pnu_text(curve: &[PnuPoint], pm_mb_s: Option<f64>) -> String {
    if curve.is_empty() {
        return "not measured (an AU of one RU, or no room for it on this device)".into();
    }
    let points: Vec<String> = curve
        .iter()
        .map(|p| {
            format!(
                "{:.0}% used {} MB/s",
                100.0 * p.used_share,
                format_mbps(p.mb_per_s)
            )
        })
        .collect();
    let moves = match pm_mb_s {
        Some(pm) => format!("move speed about {} MB/s", format_mbps(pm)),
        None => "no move cost (SDXC-like)".into(),
    };
    format!("{}; {moves}", points.join(", "))
}

/// What became of a bad probe, as the `-v` table and README name it.
pub fn probe_word(p: ProbeFate) -> &'static str {
    match p {
        ProbeFate::Aliased => ALIASED,
        ProbeFate::Changed => "changed",
        ProbeFate::Lost => "lost",
    }
}

/// A column's heading.
pub fn heading(c: Column) -> &'static str {
    match c {
        Column::Boundary => "align",
        Column::BeforeUs => "pre",
        Column::OnUs => "on",
        Column::AfterUs => "post",
        Column::DiffUs => "diff",
        Column::Written => "written",
        Column::MbS => "MB/s",
        Column::AuMbS => "AU MB/s",
        Column::Aus => "AUs",
        Column::Offset => "offset",
        Column::Verdict => "verdict",
    }
}

/// A cell as text: sizes in binary units, each time in its own unit.
pub fn cell(c: &Cell, column: Column) -> String {
    match c {
        // An offset is printed in bytes, to be found again exactly.
        Cell::Bytes(b) if column == Column::Offset => b.to_string(),
        Cell::Bytes(b) => format_size(*b),
        Cell::Nanoseconds(ns) => super::ns_us(*ns),
        Cell::MbS(v) => format_mbps(*v),
        Cell::Count(n) => n.to_string(),
        Cell::CountAgain(n) => format!("{n} again"),
        Cell::Probe(p) => probe_word(*p).into(),
        Cell::Name(name) => name.clone(),
    }
}

/// The raw table as rows of text, the headings first.
pub fn table_text(t: &crate::result::flash::FlashTable) -> Vec<Vec<String>> {
    use crate::result::flash::FlashTable;
    match t {
        FlashTable::Words(rows) => rows.clone(),
        FlashTable::Typed(t) => {
            let mut out = vec![t.columns.iter().map(|c| heading(*c).to_string()).collect()];
            out.extend(t.rows.iter().map(|row| {
                row.iter()
                    .zip(&t.columns)
                    .map(|(c, col)| cell(c, *col))
                    .collect()
            }));
            out
        }
    }
}
