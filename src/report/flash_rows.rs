//! A flash run as rows of figures, for CSV and Markdown: the outcome's
//! headline figures first, then one row per finding, each with its test,
//! outcome, figure name, value, unit, limit, status and confidence.
//!
//! Why a module of its own: a flash run has no table of tests, so the
//! exports made for runs of tests gave only a header. Both formats take
//! their rows from here, so a fake card's real size or the classes a card
//! meets read the same in a spreadsheet and in a forum post.

use super::flash_verdicts::{self, words};
use super::table::Table;
use crate::result::RunResult;
use crate::result::flash::{Figure, FlashReport, Outcome};

/// The columns of every row, in order.
pub const COLUMNS: [&str; 8] = [
    "test",
    "outcome",
    "figure",
    "value",
    "unit",
    "limit",
    "status",
    "confidence",
];

/// One row: a figure with its unit, limit, status and confidence.
type Row = [String; 8];

/// The rows of a flash run (`None`: not a flash run).
pub fn rows(r: &RunResult) -> Option<Vec<Row>> {
    let f = r.payload.flash()?;
    let test = f.test.to_string();
    let outcome = outcome_name(&f.outcome);
    let row = |figure: &str, value: String, unit: &str| -> Row {
        let mut row: Row = Default::default();
        row[0] = test.clone();
        row[1] = outcome.to_string();
        row[2] = figure.to_string();
        row[3] = value;
        row[4] = unit.to_string();
        row
    };
    let mut out = vec![row("verdict", flash_verdicts::headline(f), "")];
    out.extend(
        headline_figures(f)
            .into_iter()
            .map(|(name, value, unit)| row(name, value, unit)),
    );
    if let Some(host) = flash_verdicts::host_of(f) {
        out.push(row("host", host, ""));
    }
    if let Outcome::Legacy { figures, .. } = &f.outcome {
        // Stored keys name their own units (`read_mb_s`, `max_bytes`).
        out.extend(figures.iter().map(|x| row(&x.key, x.value.to_string(), "")));
    }
    for x in &f.findings {
        let (name, value, unit, limit) = figure_cells(&x.figure);
        let mut r = row(&name, value, unit);
        r[5] = limit;
        r[6] = x.status.map_or(String::new(), |s| s.name().into());
        r[7] = x.confidence.map_or(String::new(), |c| c.name().into());
        out.push(r);
    }
    Some(out)
}

/// The outcome's name, as the JSON's `outcome` reads.
fn outcome_name(o: &Outcome) -> &'static str {
    match o {
        Outcome::Genuine { .. } => "genuine",
        Outcome::Fake { .. } => "fake",
        Outcome::Geometry { .. } => "geometry",
        Outcome::OpenAus { .. } => "open_aus",
        Outcome::Cache { .. } => "cache",
        Outcome::Classes { .. } if o.failed() => "claim_failed",
        Outcome::Classes { .. } => "classes",
        Outcome::Legacy { failed: true, .. } => "failed",
        Outcome::Legacy { .. } => "stored",
    }
}

/// The outcome's own figures: claimed and real bytes, the highest class
/// of each family, the AU and page, the count, the cache.
fn headline_figures(f: &FlashReport) -> Vec<(&'static str, String, &'static str)> {
    let bytes = |name, b: Option<u64>| b.map(|b| (name, b.to_string(), "bytes"));
    match &f.outcome {
        Outcome::Genuine { claimed_bytes, .. } => {
            bytes("claimed", Some(*claimed_bytes)).into_iter().collect()
        }
        Outcome::Fake {
            claimed_bytes,
            real_bytes,
            at_most_bytes,
            ..
        } => [
            bytes("claimed", Some(*claimed_bytes)),
            bytes("real", Some(*real_bytes)),
            bytes("real at most", *at_most_bytes),
        ]
        .into_iter()
        .flatten()
        .collect(),
        Outcome::Classes { families, host, .. } => families
            .iter()
            .map(|fam| {
                let name = fam.highest.clone().unwrap_or_else(|| "none".into());
                ("highest class met", name, "")
            })
            .chain(
                host.as_ref()
                    .and_then(|h| h.ceiling_mb_per_s)
                    .map(|c| ("host ceiling", c.to_string(), "MB/s")),
            )
            .collect(),
        Outcome::Geometry {
            au_bytes,
            page_bytes,
            ..
        } => [bytes("AU", *au_bytes), bytes("page", *page_bytes)]
            .into_iter()
            .flatten()
            .collect(),
        Outcome::OpenAus { count, .. } => count
            .map(|n| ("open AUs", n.to_string(), "AUs"))
            .into_iter()
            .collect(),
        Outcome::Cache { cache_bytes, .. } => bytes("cache", *cache_bytes).into_iter().collect(),
        Outcome::Legacy { .. } => Vec::new(),
    }
}

/// A figure's name, main value, unit and (a requirement's) limit; a
/// figure of many values gives its words.
fn figure_cells(f: &Figure) -> (String, String, &'static str, String) {
    let name = words::words(f).name;
    let (value, unit) = match f {
        Figure::Au { bytes, .. } | Figure::Page { bytes } | Figure::Cache { bytes } => {
            (opt(*bytes), "bytes")
        }
        Figure::Absorbed { bytes }
        | Figure::UsableCapacity { bytes, .. }
        | Figure::AuUsed { bytes, .. } => (bytes.to_string(), "bytes"),
        Figure::OpenAus { count } => (opt(*count), "AUs"),
        Figure::Burst { mb_per_s } | Figure::Sustained { mb_per_s } => {
            (mb_per_s.to_string(), "MB/s")
        }
        Figure::LastGoodSector { sector } => (sector.to_string(), "sector"),
        Figure::Pw { mean_mb_per_s, .. } => (mean_mb_per_s.to_string(), "MB/s"),
        Figure::Pr { mb_per_s, .. } => (mb_per_s.to_string(), "MB/s"),
        Figure::FatWriteTimes { worst_mean8_ns, .. } => (worst_mean8_ns.to_string(), "ns"),
        Figure::Requirement {
            need,
            measured,
            limit,
            ..
        } => {
            let unit = flash_verdicts::need_unit(*need);
            return (name, measured.to_string(), unit, limit.to_string());
        }
        other => (words::words(other).value, ""),
    };
    (name, value, unit, String::new())
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// The CSV of a flash run, each text cell through `field` (the CSV's own
/// escaping); `None` when the run is not one.
pub fn csv(r: &RunResult, field: fn(&str) -> String) -> Option<String> {
    let rows = rows(r)?;
    let mut out = format!("started_at,device,{}\n", COLUMNS.join(","));
    let lead = [field(&r.started_at), field(&r.target.path)].join(",");
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| field(c)).collect();
        out += &format!("{lead},{}\n", cells.join(","));
    }
    Some(out)
}

/// The Markdown table of a flash run, each cell through `escape`; `None`
/// when the run is not one.
pub fn markdown(r: &RunResult, escape: fn(&str) -> String) -> Option<String> {
    let rows = rows(r)?;
    let mut table = Table::new(&COLUMNS);
    for row in rows {
        table.add_row(row.iter().map(|c| escape(c)).collect());
    }
    Some(table.markdown())
}
