//! The answer of a flash test as figures: a fake card's claimed and real
//! bytes, the classes a card meets per family, the geometry, the cache,
//! and the reasons a confidence is not high; and the reading of runs
//! stored by earlier releases, whose answer is a sentence.
//!
//! Why apart from `super`: the outcome is what every format leads with,
//! and the legacy forms it must still read (a `verdict` string, findings
//! of words, needs keyed by their Rust names) are kept in one place.

use super::{Confidence, Figure, Finding, FlashTable, NeedKind, Status};
use crate::probe::bus::HostBus;
use crate::vocab::options::FlashTest;
use serde::{Deserialize, Deserializer, Serialize};

/// The answer of one flash test (`outcome` names the variant).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// `capacity`: every probe held its data.
    Genuine {
        /// The size the card claims, bytes.
        claimed_bytes: u64,
        /// Probe blocks written and read back.
        probes: u64,
        /// How sure the verdict is.
        confidence: Confidence,
    },
    /// `capacity`: the card holds less than it claims.
    Fake {
        /// The size the card claims, bytes.
        claimed_bytes: u64,
        /// What it really holds, bytes (found to an interval: the least).
        real_bytes: u64,
        /// Found to an interval: the most it may hold, bytes.
        at_most_bytes: Option<u64>,
        /// How the real size was found.
        found_by: FoundBy,
        /// Rounds of probes the search took.
        rounds: u32,
        /// How sure the verdict is.
        confidence: Confidence,
    },
    /// `align`: the erase block and page found by boundary timing.
    Geometry {
        /// The AU, bytes; null: no boundary seen.
        au_bytes: Option<u64>,
        /// How sure the AU is.
        au_confidence: Confidence,
        /// The page, bytes; null: no step seen.
        page_bytes: Option<u64>,
        /// How sure the page is.
        page_confidence: Confidence,
    },
    /// `open-au`: how many AUs the card keeps open.
    OpenAus {
        /// The count; null when none could be made (`no_count` says why).
        count: Option<u32>,
        /// How sure the count is.
        confidence: Confidence,
        /// Why no count was made; null when there is one.
        no_count: Option<NoCount>,
        /// Throughput within the count over throughput past it.
        collapse: f64,
        /// Largest over smallest throughput within the count.
        spread: f64,
        /// The most AUs written in turn.
        most_aus: u32,
    },
    /// `cache`: the write cache, net of what drained while it filled.
    Cache {
        /// The cache, bytes; null: no fall in speed seen.
        cache_bytes: Option<u64>,
        /// Bytes taken at the burst speed (the gross size).
        absorbed_bytes: Option<u64>,
        /// Write speed before the cache filled, MB/s.
        burst_mb_per_s: f64,
        /// Write speed once it was full, MB/s; null: no fall seen.
        sustained_mb_per_s: Option<f64>,
        /// How sure the size is.
        confidence: Confidence,
        /// The most the test wrote, bytes.
        most_bytes: u64,
    },
    /// `class`: the classes met, per family, and what binds.
    Classes {
        /// Where the classes checked came from.
        claim: ClaimSource,
        /// The classes claimed (by `--claim` or the card); empty when none.
        claimed: Vec<String>,
        /// Per family, the classes met and the highest.
        families: Vec<FamilyMet>,
        /// Claimed classes not met only because a link caps a requirement
        /// (LINK: what the card does beyond it was not seen); they cannot
        /// be told, which is not a failure.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        untold: Vec<String>,
        /// The requirement that binds: the first not met, else the one
        /// with the least room.
        binding: Option<ClassCheck>,
        /// The least sure requirement of the classes met.
        weakest: Option<ClassCheck>,
        /// The bus the card ran on, its ceiling and its command queueing,
        /// as the kernel told them; null in runs stored before it was kept.
        #[serde(default)]
        host: Option<Box<HostBus>>,
    },
    /// A run stored by an earlier release: its verdict as written then.
    Legacy {
        /// The verdict, as stored.
        verdict: String,
        /// Whether it was a failure.
        failed: bool,
        /// The numbers of the stored `details`, each under its stored key
        /// path (`plan.max_bytes`), so that no figure is lost.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        figures: Vec<StoredFigure>,
    },
}

impl Outcome {
    /// A fake card, or a claimed class not met.
    pub fn failed(&self) -> bool {
        match self {
            Outcome::Fake { .. } => true,
            Outcome::Legacy { failed, .. } => *failed,
            Outcome::Classes {
                claim,
                claimed,
                families,
                untold,
                ..
            } => {
                *claim != ClaimSource::None
                    && claimed
                        .iter()
                        .any(|c| !families.iter().any(|f| f.met.contains(c)) && !untold.contains(c))
            }
            _ => false,
        }
    }
}

/// How a fake card's real size was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FoundBy {
    /// Aliased blocks name it exactly.
    Aliased,
    /// The last sector that held its data ends there.
    LastSector,
    /// A search narrowed it to an interval.
    Interval,
}

/// Where the classes a `class` run checked came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClaimSource {
    /// `--claim`.
    Given,
    /// The card's SD Status register.
    Card,
    /// No claim: every class was checked.
    None,
}

/// A family of SD classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Speed Class C2..C10.
    Speed,
    /// UHS Speed Class U1, U3.
    Uhs,
    /// Video Speed Class V6..V90.
    Video,
    /// Application Performance Class A1, A2.
    App,
}

/// The classes of one family a card met.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FamilyMet {
    /// The family.
    pub family: Family,
    /// The classes of the family checked and met, slowest first.
    pub met: Vec<String>,
    /// The highest met; null when none.
    pub highest: Option<String>,
}

/// One requirement of one class, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassCheck {
    /// The class, as its logo reads.
    pub class: String,
    /// What the class asks for (its unit: MB/s, ms or IOPS).
    pub need: NeedKind,
    /// The measured value, in the unit of `need`.
    pub measured: f64,
    /// The class's limit, in the unit of `need`.
    pub limit: f64,
    /// PASS, FAIL, or LINK (the link caps it: cannot tell).
    pub status: Status,
    /// How sure the status is.
    pub confidence: Confidence,
    /// Why the confidence is not high; null when nothing lowers it.
    pub reason: Option<Reason>,
}

/// Why a finding is not sure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Reason {
    /// The link caps below the limit and the card ran at it.
    LinkCaps {
        /// The link's ceiling, MB/s.
        link_mb_per_s: f64,
        /// The requirement's limit, MB/s.
        limit: f64,
    },
    /// The link's bandwidth over 4 KiB is below an IOPS limit and the
    /// card's random requests ran at a share of it that may be the link's.
    LinkCapsIops {
        /// The link's ceiling, MB/s.
        link_mb_per_s: f64,
        /// That ceiling in 4 KiB requests per second.
        ceiling_iops: f64,
        /// The requirement's limit, IOPS.
        limit: f64,
    },
    /// FAT-area stalls rarer than every `ruled_out_every` writes are not
    /// ruled out by a run of `writes`.
    RareStallsNotRuledOut {
        /// FAT-area writes timed.
        writes: u64,
        /// The longest period of stalls the run rules out, in writes.
        ruled_out_every: u64,
    },
    /// The random writes' rate did not settle within the windows timed:
    /// what a cache's slack served may be in it.
    NotSteady {
        /// Windows of random writes timed.
        windows: u64,
    },
    /// The writes ran behind a write cache (one that filled, or one the
    /// sequential writes could not rule out): a card whose medium work
    /// (page programs, AU collection, FAT-area busy time) queues behind
    /// its cache shows them the older work it still owes, or none, not
    /// their own, until as much as the cache holds has been written.
    BehindCache {
        /// Bytes written when the speed fell (the cache filled); null
        /// when it did not fall.
        fell_after_bytes: Option<u64>,
        /// Bytes the sequential writes wrote.
        written_bytes: u64,
    },
    /// The FAT-area writes took no longer than a bare write (a command and
    /// 4 KiB at the burst speed, or a 4 KiB read): no medium work (a page
    /// programmed, a FAT-area busy time) showed in them, and a cache that
    /// queues it may hide it until it fills.
    NoMediumWorkSeen {
        /// The FAT-area writes' median, ns.
        write_ns: u64,
        /// The bare write, ns.
        bare_write_ns: u64,
    },
    /// The FAT-area writes took as long as the random writes before them,
    /// behind a cache not ruled out that no fall sized: behind a cache
    /// that queues the medium's work, both may have paid the random
    /// writes' work, not the FAT area's.
    OlderWorkPaid {
        /// The FAT-area writes' median, ns.
        write_ns: u64,
        /// The mean of the last window of random writes, ns.
        random_write_ns: u64,
    },
    /// The first FAT-area writes, timed right after the sequential ones,
    /// met the limit the later ones (after the random and P(Nu) writes)
    /// fail: behind a cache that queues the medium's work, the later ones
    /// may have paid for those writes' work.
    FirstFatWritesMet {
        /// FAT-area writes in the first timing.
        writes: u32,
        /// Their figure the requirement reads (worst mean of 8, or the
        /// largest), ns.
        first_ns: u64,
    },
    /// The FAT-area stalls came at irregular gaps: were they as close
    /// together throughout as the closest two seen, the worst mean of 8
    /// would turn the PASS over.
    StallsMayCluster {
        /// That worst mean of 8, ns.
        worst_mean8_ns: u64,
    },
    /// The card's sequential writes stalled (a pause of garbage
    /// collection or throttling) long enough that a FAT-area write
    /// meeting one would turn the PASS over.
    PausesSeen {
        /// The longest stall seen beyond a write's neighbours, ns.
        stall_ns: u64,
        /// The requirement's limit, ms.
        limit: f64,
    },
    /// Measured in the RUs of an assumed AU (none given or found).
    AssumedAu {
        /// The recording unit measured in, bytes.
        ru_bytes: u64,
        /// The AU assumed, bytes.
        au_bytes: u64,
    },
    /// Measured in the RUs of an AU that is itself not sure: found by
    /// boundary timing at medium, or stated by the kernel and not
    /// confirmed (or contradicted) by timing.
    AuNotSure {
        /// The recording unit measured in, bytes.
        ru_bytes: u64,
        /// The AU, bytes.
        au_bytes: u64,
        /// Where the AU came from.
        from: super::AuFrom,
        /// How sure the AU is: the most the figure may say.
        au_confidence: super::Confidence,
    },
    /// No fall in speed within the writes, enough to fill any cache that
    /// could hide a speed below the limit.
    NoFallCovered {
        /// Bytes written without a fall in speed.
        written_bytes: u64,
        /// The largest cache the card may carry (all of it), bytes.
        largest_cache_bytes: u64,
        /// The card's size, bytes.
        card_bytes: u64,
    },
    /// No fall in speed within the writes, too few to rule out a cache.
    NoFallOpen {
        /// Bytes written without a fall in speed.
        written_bytes: u64,
        /// The largest cache the card may carry (all of it), bytes.
        largest_cache_bytes: u64,
        /// The card's size, bytes.
        card_bytes: u64,
    },
    /// The speed was still falling when the writes stopped.
    NotExhausted {
        /// Bytes written when the writes stopped.
        written_bytes: u64,
    },
    /// A note stored by an earlier release, as written then.
    Stored {
        /// The note, as stored.
        note: String,
    },
}

/// Why `open-au` gives no count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoCount {
    /// No collapse up to the most AUs written (none, or hidden behind a
    /// cache).
    NoCollapse,
    /// The throughput fell but stayed low with fewer AUs again: it did not
    /// depend on the AU count (a write cache filling, say).
    NotFromTheCount,
    /// The collapse was within the noise.
    InTheNoise,
}

/// A flash report in any stored form: the typed one, or that of an
/// earlier release (`verdict`, `failed`, `details`, findings of words).
#[derive(Deserialize)]
pub(super) struct StoredReport {
    test: FlashTest,
    #[serde(default)]
    findings: Vec<Finding>,
    table: FlashTable,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

impl<'de> Deserialize<'de> for super::FlashReport {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = StoredReport::deserialize(d)?;
        stored.try_into().map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Finding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(StoredFinding::deserialize(d)?.into())
    }
}

impl TryFrom<StoredReport> for super::FlashReport {
    type Error = String;

    fn try_from(s: StoredReport) -> Result<Self, String> {
        let rest = serde_json::Value::Object(s.rest);
        let outcome = match rest.get("outcome") {
            Some(_) => serde_json::from_value(rest).map_err(|e| e.to_string())?,
            None => Outcome::Legacy {
                verdict: rest["verdict"].as_str().unwrap_or_default().to_string(),
                failed: rest["failed"].as_bool().unwrap_or(false),
                figures: stored_figures(&rest["details"]),
            },
        };
        Ok(super::FlashReport {
            test: s.test,
            outcome,
            findings: s.findings,
            table: s.table,
        })
    }
}

/// A number an earlier release stored in a flash report's `details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StoredFigure {
    /// Its key path in the stored `details`, dots between keys.
    pub key: String,
    /// The number, in the unit its key names.
    pub value: f64,
}

/// Every number under `details`, depth first, with its key path.
fn stored_figures(details: &serde_json::Value) -> Vec<StoredFigure> {
    fn walk(v: &serde_json::Value, key: &str, out: &mut Vec<StoredFigure>) {
        match v {
            serde_json::Value::Number(n) => out.extend(n.as_f64().map(|value| StoredFigure {
                key: key.to_string(),
                value,
            })),
            serde_json::Value::Object(map) => map.iter().for_each(|(k, x)| {
                let path = if key.is_empty() {
                    k.clone()
                } else {
                    format!("{key}.{k}")
                };
                walk(x, &path, out)
            }),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, x)| walk(x, &format!("{key}[{i}]"), out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(details, "", &mut out);
    out
}

/// A finding in any stored form: typed, or the words of an earlier
/// release (with or without its figure).
#[derive(Deserialize)]
pub(super) struct StoredFinding {
    figure: Option<Figure>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    value: String,
    confidence: Option<Confidence>,
    status: Option<Status>,
    reason: Option<Reason>,
    note: Option<String>,
}

impl From<StoredFinding> for Finding {
    fn from(s: StoredFinding) -> Finding {
        let figure = s.figure.unwrap_or(Figure::Words {
            name: s.name,
            value: s.value,
        });
        Finding {
            figure,
            confidence: s.confidence,
            status: s.status,
            reason: s.reason.or(s.note.map(|note| Reason::Stored { note })),
        }
    }
}

/// A need as written now (`"seq_write"`) or by an earlier release, keyed
/// by its Rust name with the limit (`{"SeqWrite": 10.0}`).
pub(super) fn need_either<'de, D: Deserializer<'de>>(d: D) -> Result<NeedKind, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Name(NeedKind),
        Keyed(std::collections::HashMap<NeedKind, f64>),
    }
    match Either::deserialize(d)? {
        Either::Name(n) => Ok(n),
        Either::Keyed(m) => m
            .into_keys()
            .next()
            .ok_or_else(|| serde::de::Error::custom("an empty need")),
    }
}

#[cfg(test)]
mod tests;
