//! The real cards of `bench/real_cards.tsv` read into typed facts and
//! simulated cards, and the check that each card's `sim:` spec says what
//! its published facts say (so that the data file cannot drift from its
//! sources while the calibration scores against those facts).

use iocurve::engine::sim::SimParams;
use iocurve::units::parse_size;

/// The data file, built into the calibration.
pub const CARDS_TSV: &str = include_str!("../../real_cards.tsv");

/// Columns per card line.
const COLUMNS: usize = 12;

/// A published figure: one number, or a range as published.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub lo: f64,
    pub hi: f64,
}

impl Figure {
    fn middle(self) -> f64 {
        (self.lo + self.hi) / 2.0
    }
}

/// A published count of open AUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAus {
    Exactly(u32),
    /// The test stopped at this many without a collapse ("64+").
    AtLeast(u32),
}

/// What one source published about one card (`None`: not published).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub size: Option<u64>,
    pub erase_block: Option<u64>,
    pub page: Option<u64>,
    pub open_aus: Option<OpenAus>,
    /// MB/s.
    pub write: Option<Figure>,
    pub read: Option<Figure>,
    /// 4 KiB random requests per second.
    pub read_iops: Option<Figure>,
    pub write_iops: Option<Figure>,
}

/// One card: its facts, where they come from, and the simulated card.
#[derive(Debug, Clone)]
pub struct RealCard {
    pub name: String,
    pub source: String,
    pub facts: Facts,
    /// The `sim:` spec as written in the file.
    pub spec: String,
    pub params: SimParams,
    /// The options no source published, and the rule that filled each.
    pub assumed: String,
}

/// Every card of the file, or the first line that does not read.
pub fn cards() -> Result<Vec<RealCard>, String> {
    parse(CARDS_TSV)
}

/// Reads the file's text: comment (`#`) and blank lines skipped, every
/// other line a card of [`COLUMNS`] tab-separated fields.
pub fn parse(text: &str) -> Result<Vec<RealCard>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| card(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

fn card(line: &str) -> Result<RealCard, String> {
    let f: Vec<&str> = line.split('\t').map(str::trim).collect();
    if f.len() != COLUMNS {
        return Err(format!("{} fields, not {COLUMNS}", f.len()));
    }
    let facts = Facts {
        size: optional(f[2], |v| parse_size(v).map_err(|e| e.to_string()))?,
        erase_block: optional(f[3], |v| parse_size(v).map_err(|e| e.to_string()))?,
        page: optional(f[4], |v| parse_size(v).map_err(|e| e.to_string()))?,
        open_aus: optional(f[5], open_aus)?,
        write: optional(f[6], figure)?,
        read: optional(f[7], figure)?,
        read_iops: optional(f[8], figure)?,
        write_iops: optional(f[9], figure)?,
    };
    let spec = f[10].to_string();
    let options = spec
        .strip_prefix("sim:")
        .ok_or_else(|| format!("spec '{spec}' does not start with sim:"))?;
    let params = SimParams::parse(options)?;
    Ok(RealCard {
        name: f[0].to_string(),
        source: f[1].to_string(),
        facts,
        spec,
        params,
        assumed: f[11].to_string(),
    })
}

/// `-` is "not published"; anything else must read.
fn optional<T>(value: &str, read: impl Fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
    match value {
        "-" => Ok(None),
        v => read(v).map(Some),
    }
}

fn number(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("'{v}' is not a positive number")),
    }
}

fn figure(v: &str) -> Result<Figure, String> {
    match v.split_once('-') {
        Some((lo, hi)) => {
            let (lo, hi) = (number(lo)?, number(hi)?);
            match lo <= hi {
                true => Ok(Figure { lo, hi }),
                false => Err(format!("range '{v}' runs backwards")),
            }
        }
        None => number(v).map(|x| Figure { lo: x, hi: x }),
    }
}

fn open_aus(v: &str) -> Result<OpenAus, String> {
    let count = |n: &str| {
        n.parse::<u32>()
            .map_err(|_| format!("'{v}' is not a count"))
    };
    match v.strip_suffix('+') {
        Some(n) => count(n).map(OpenAus::AtLeast),
        None => count(v).map(OpenAus::Exactly),
    }
}

/// Where the card's spec departs from its published facts: the AU, page
/// and size exactly; the open AUs exactly (or the least a "N+" allows);
/// the speeds within 1% of the published figure or range.
pub fn disagreements(c: &RealCard) -> Vec<String> {
    let p = &c.params;
    let mut out = Vec::new();
    let mut exact = |what: &str, fact: Option<u64>, spec: u64| {
        if fact.is_some_and(|f| f != spec) {
            out.push(format!("{what}: published {fact:?}, spec {spec}"));
        }
    };
    exact("size", c.facts.size, p.size);
    exact("erase block", c.facts.erase_block, p.au);
    exact("page", c.facts.page, p.page);
    let count = match c.facts.open_aus {
        Some(OpenAus::Exactly(n)) | Some(OpenAus::AtLeast(n)) => Some(u64::from(n)),
        None => None,
    };
    exact("open AUs", count, u64::from(p.open_au));
    let rates = [
        ("write", c.facts.write, p.write),
        ("read", c.facts.read, p.read),
    ];
    for (what, fact, spec) in rates {
        let spec = spec as f64 / 1e6;
        if let Some(f) = fact.filter(|f| (spec - f.middle()).abs() > 0.01 * f.middle()) {
            out.push(format!("{what}: published {f:?} MB/s, spec {spec} MB/s"));
        }
    }
    out
}
