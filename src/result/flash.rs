//! What a `flash` command found: its outcome (fake or genuine, the
//! classes met, the geometry, the cache) with its figures and confidence,
//! its findings as typed figures, and the raw table as typed cells.
//!
//! Why typed: the result records what was measured (sizes, speeds, counts,
//! times) and what was decided, never a sentence, so every format words
//! it itself (`crate::report::flash_verdicts`). Runs stored by earlier
//! releases kept sentences: they load as [`Outcome::Legacy`] and
//! [`Figure::Words`], shown as stored ([`outcome`] reads both forms).

pub mod outcome;

use serde::{Deserialize, Serialize};

use crate::vocab::options::FlashTest;
pub use outcome::{
    ClaimSource, ClassCheck, Family, FamilyMet, FoundBy, NoCount, Outcome, Reason, StoredFigure,
};

/// What a `flash` command found, as the result records it (read in any
/// stored form: `outcome`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FlashReport {
    /// The flash test: `align`, `open-au`, `cache`, `capacity` or `class`.
    pub test: FlashTest,
    /// The answer, with its figures (`outcome` names the variant).
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The figures behind the answer, one per line of the report.
    pub findings: Vec<Finding>,
    /// The raw table (`--verbose`).
    pub table: FlashTable,
}

impl FlashReport {
    /// True when the card failed: a fake, or a class claimed (by
    /// `--claim` or by the card) that it does not meet.
    pub fn failed(&self) -> bool {
        self.outcome.failed()
    }
}

/// One figure of a flash run: what was measured, how sure, and why not
/// surer (read in any stored form: `outcome`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// What was measured.
    pub figure: Figure,
    /// How sure the finding is; null when the test does not judge it.
    pub confidence: Option<Confidence>,
    /// PASS, FAIL or LINK for class requirements.
    pub status: Option<Status>,
    /// Why the confidence is not high; null when nothing lowers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
}

impl Finding {
    /// A finding of `figure` that judges nothing.
    pub fn of(figure: Figure) -> Finding {
        Finding {
            figure,
            confidence: None,
            status: None,
            reason: None,
        }
    }

    /// A finding of `figure` with its confidence.
    pub fn sure(figure: Figure, confidence: Confidence) -> Finding {
        Finding {
            confidence: Some(confidence),
            ..Finding::of(figure)
        }
    }
}

/// The measured figures of one finding, one variant per kind of line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::result::variant_keys::describe_variant_keys)]
pub enum Figure {
    /// `align`: the erase block found by boundary timing (`None`: not
    /// seen), and the kernel's `preferred_erase_size` when it has one.
    Au {
        /// The erase block (AU) found, bytes; null: no boundary seen.
        bytes: Option<u64>,
        /// The kernel's `preferred_erase_size`, bytes; null when it has none.
        #[serde(alias = "kernel")]
        kernel_bytes: Option<u64>,
    },
    /// `align`: the page found by boundary timing.
    Page {
        /// The page found, bytes; null: no boundary seen.
        bytes: Option<u64>,
    },
    /// `open-au`: how many AUs the card keeps open.
    OpenAus {
        /// AUs the card keeps open at once; null when no count could be made.
        count: Option<u32>,
    },
    /// `cache`: the speed of the first writes.
    Burst {
        /// Write speed before the cache filled, MB/s (10^6 bytes per second).
        #[serde(alias = "mb_s")]
        mb_per_s: f64,
    },
    /// `cache`: the cache's size, net of what drained while it filled.
    Cache {
        /// The cache's size, bytes; null when no fall in speed was seen.
        bytes: Option<u64>,
    },
    /// `cache`: what the card took at the burst speed.
    Absorbed {
        /// Bytes written at the burst speed.
        bytes: u64,
    },
    /// `cache`: the speed once the cache was full.
    Sustained {
        /// Write speed once the cache was full, MB/s.
        #[serde(alias = "mb_s")]
        mb_per_s: f64,
    },
    /// `capacity`: what the card really holds (the claimed size if genuine).
    UsableCapacity {
        /// What the card really holds, bytes (on a fake found to an
        /// interval, the least it holds).
        bytes: u64,
        /// On a fake found to an interval rather than exactly: the most it
        /// may hold, bytes.
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "at_most")]
        at_most_bytes: Option<u64>,
    },
    /// `capacity`: aliased blocks were read (a block that reads back
    /// another address's data): the card wraps around.
    WrapAround,
    /// `capacity`, on a fake card: H2testw's line, what holds and what is
    /// lost, with the flush's write and the read-back's speed.
    OkLost {
        /// Bytes that hold data (H2testw's "OK").
        #[serde(alias = "ok")]
        ok_bytes: u64,
        /// Bytes claimed beyond that, which lose what is written (H2testw's
        /// "lost").
        #[serde(alias = "lost")]
        lost_bytes: u64,
        /// Speed of the flush's writes, MB/s; null when not measured.
        #[serde(alias = "write_mb_s")]
        write_mb_per_s: Option<f64>,
        /// Speed of the read-back, MB/s; null when not measured.
        #[serde(alias = "read_mb_s")]
        read_mb_per_s: Option<f64>,
    },
    /// `capacity`, on a fake card: the last 512-byte sector shown to hold
    /// data (f3fix's `--last-sec`).
    LastGoodSector {
        /// Number of the last 512-byte sector shown to hold data, from 0.
        sector: u64,
    },
    /// `capacity`, on a fake card: the partition that makes it usable at
    /// its real size (512-byte sectors), for `target` as given.
    Repair {
        /// The device, as given.
        target: String,
        /// The partition's first sector, in 512-byte sectors.
        start: u64,
        /// The partition's length, in 512-byte sectors.
        sectors: u64,
    },
    /// `capacity --fix`: what became of that partition table.
    Fixed {
        /// What became of the partition table.
        outcome: FixOutcome,
    },
    /// `capacity`: the write cache filled after `filled_after_bytes` of
    /// flush, which stopped at `flushed_bytes`, short of `needed_bytes`
    /// (whole MiB, never more than the card's own bound, so that
    /// `--flush` of it is not shortened).
    FlushTooShort {
        /// Bytes of flush written when the write cache filled.
        #[serde(alias = "filled_after")]
        filled_after_bytes: u64,
        /// Bytes the flush wrote.
        #[serde(alias = "flushed")]
        flushed_bytes: u64,
        /// Bytes the flush needs to get past a cache that fills after
        /// `filled_after_bytes`.
        #[serde(alias = "needed")]
        needed_bytes: u64,
    },
    /// `capacity`: the `--flush` asked for was more than any write cache of
    /// the card could need (one as large as the card), so the flush was
    /// bounded by that.
    FlushShortened {
        /// Bytes of flush asked for.
        #[serde(alias = "asked")]
        asked_bytes: u64,
        /// Bytes the flush was bounded to.
        #[serde(alias = "bound")]
        bound_bytes: u64,
    },
    /// `capacity`: a genuine card whose flush filled no cache.
    NoCacheFilled {
        /// Bytes the flush wrote.
        #[serde(alias = "flushed")]
        flushed_bytes: u64,
        /// True when the flush already wrote the most any cache of this
        /// card could need: a larger `--flush` would change nothing.
        #[serde(default)]
        at_bound: bool,
    },
    /// `capacity`: what data beyond the real size does; `errors` when it
    /// fails with I/O errors rather than reading back as something else.
    Beyond {
        /// True when data beyond the real size fails with I/O errors; false
        /// when it reads back as something else.
        errors: bool,
    },
    /// `capacity`: the write cache hid the fraud from an immediate read-back.
    CacheHid,
    /// `class`: whether the writes got past the cache before Pw was taken.
    WriteCache {
        /// Whether the write cache was shown exhausted before Pw was taken.
        exhaustion: Exhaustion,
        /// Write speed before the speed fell, MB/s.
        #[serde(alias = "burst_mb_s")]
        burst_mb_per_s: f64,
        /// Bytes written when the speed first fell; null when it did not fall.
        #[serde(alias = "fell_after")]
        fell_after_bytes: Option<u64>,
        /// Bytes written whole AU by whole AU.
        #[serde(alias = "written")]
        written_bytes: u64,
    },
    /// `class`: Pw over whole free AUs of `ru_bytes`-byte RUs.
    Pw {
        /// Pw: mean write speed over the steady AUs, MB/s.
        #[serde(alias = "mean_mb_s")]
        mean_mb_per_s: f64,
        /// Slowest of those AUs, MB/s.
        #[serde(alias = "min_mb_s")]
        min_mb_per_s: f64,
        /// AUs Pw is averaged over (the last steady ones).
        aus: u64,
        /// Size of one recording unit (RU), bytes.
        #[serde(alias = "ru")]
        ru_bytes: u64,
        /// Pw at the slowest of the places timed over the rest of the
        /// card, MB/s (the class is checked against the lower of it and
        /// the mean); absent when there was no room or in older runs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        slowest_place_mb_per_s: Option<f64>,
    },
    /// `class`: Pr over 256 random RUs, beside the Pw it must reach.
    Pr {
        /// Pr: read speed over 256 random RUs, MB/s.
        #[serde(alias = "mb_s")]
        mb_per_s: f64,
        /// The Pw it must reach, MB/s.
        #[serde(alias = "pw_mean_mb_s")]
        pw_mean_mb_per_s: f64,
    },
    /// `class`: FAT write times.
    FatWriteTimes {
        /// Worst mean of 8 consecutive FAT writes, ns.
        worst_mean8_ns: u64,
        /// Longest single FAT write, ns.
        max_ns: u64,
        /// Median FAT write, ns.
        median_ns: u64,
        /// FAT writes timed.
        writes: u64,
    },
    /// `class`: P(Nu), the speed by the share of the AU already used
    /// (empty: not measured), and the move speed it implies.
    Pnu {
        /// P(Nu): write speed by the share of the AU already used; empty when
        /// not measured.
        curve: Vec<PnuPoint>,
        /// The move speed the curve implies, MB/s; null when flat or not
        /// measured.
        #[serde(alias = "pm_mb_s")]
        pm_mb_per_s: Option<f64>,
    },
    /// `class`: one requirement of one class, checked.
    Requirement {
        /// The class, as its logo reads (`C10`, `U3`, `V30`, `A1`).
        class: String,
        /// What the class asks for (its unit: MB/s, ms or IOPS).
        #[serde(deserialize_with = "outcome::need_either")]
        #[schemars(with = "NeedKind")]
        need: NeedKind,
        /// The measured value, in the unit of `need`.
        measured: f64,
        /// The class's limit, in the unit of `need`.
        limit: f64,
    },
    /// The AU the test worked in, and where it came from.
    AuUsed {
        /// The AU, bytes.
        bytes: u64,
        /// Where its size came from.
        source: AuSource,
    },
    /// A finding stored by an earlier release as words only.
    Words {
        /// The finding's name, as stored.
        name: String,
        /// Its value, as stored.
        value: String,
    },
}

/// Where the AU a test worked in came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum AuSource {
    /// Chosen by iocurve.
    Chosen(AuFrom),
    /// The words stored by an earlier release.
    Words(String),
}

/// How the AU was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuFrom {
    /// `--au`.
    Option,
    /// The kernel's `preferred_erase_size`.
    Kernel,
    /// Boundary timing (its confidence is the finding's).
    Timing,
    /// None given or found: the default was assumed.
    Assumed,
}

/// What a class requirement measures, with its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NeedKind {
    /// Pw, MB/s.
    #[serde(alias = "SeqWrite")]
    SeqWrite,
    /// Pr, MB/s.
    #[serde(alias = "RuRead")]
    RuRead,
    /// T_FW, worst mean of 8 FAT writes, ms (at most).
    #[serde(alias = "FatMean")]
    FatMean,
    /// T_FW, largest single FAT write, ms (at most).
    #[serde(alias = "FatMax")]
    FatMax,
    /// Random 4 KiB reads, IOPS.
    #[serde(alias = "RandomReadIops")]
    RandomReadIops,
    /// Random 4 KiB writes, IOPS.
    #[serde(alias = "RandomWriteIops")]
    RandomWriteIops,
    /// Sustained sequential write, MB/s.
    #[serde(alias = "Sustained")]
    Sustained,
}

impl NeedKind {
    /// Whether the measured value must be at least (true) or at most
    /// (false) the limit.
    pub fn at_least(self) -> bool {
        !matches!(self, NeedKind::FatMean | NeedKind::FatMax)
    }
}

/// What became of a bad probe of `capacity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeFate {
    /// It read back another address's data.
    Aliased,
    /// Bits flipped.
    Changed,
    /// Zeros, stale or foreign data.
    Lost,
}

/// What `flash capacity --fix` did with the partition table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FixOutcome {
    /// Written to sector 0 and read back.
    Written,
    /// Shown only: `--destructive` was not given.
    NotWritten,
    /// The card is genuine: nothing to fix, nothing written.
    Genuine,
    /// Too little holds data for even one aligned partition.
    NoRoom,
}

/// One point of P(Nu).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PnuPoint {
    /// Nu / Nt.
    pub used_share: f64,
    /// Write speed at that share, MB/s.
    #[serde(alias = "mb_s")]
    pub mb_per_s: f64,
}

/// The raw table of a test: typed columns and cells, or the text of a
/// result stored before schema 3.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FlashTable {
    Typed(TypedTable),
    Words(Vec<Vec<String>>),
}

impl FlashTable {
    pub fn is_empty(&self) -> bool {
        match self {
            FlashTable::Typed(t) => t.columns.is_empty(),
            FlashTable::Words(rows) => rows.is_empty(),
        }
    }
}

/// Columns, then rows of cells in the same order.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TypedTable {
    /// What each column holds, in order.
    pub columns: Vec<Column>,
    /// The rows: one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Column {
    /// A candidate boundary (`align`).
    Boundary,
    /// Read time before, on and after a boundary, and on minus around it.
    BeforeUs,
    OnUs,
    AfterUs,
    DiffUs,
    /// Bytes written so far.
    Written,
    /// MB/s of that step.
    #[serde(rename = "mb_per_s", alias = "mb_s")]
    MbS,
    /// MB/s of one AU (`class`).
    #[serde(rename = "au_mb_per_s", alias = "au_mb_s")]
    AuMbS,
    /// How many AUs were written in turn (`open-au`).
    Aus,
    /// A probe's offset and what became of it (`capacity`).
    Offset,
    Verdict,
}

/// One typed cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cell {
    Bytes(
        /// A size, bytes.
        u64,
    ),
    Nanoseconds(
        /// A time, ns (negative for a difference).
        i64,
    ),
    #[serde(rename = "mb_per_s", alias = "mb_s")]
    MbS(
        /// A speed, MB/s (10^6 bytes per second).
        f64,
    ),
    Count(
        /// A count.
        u64,
    ),
    /// The first count measured again at the end (`open-au`).
    CountAgain(
        /// The count measured again.
        u64,
    ),
    /// What became of a bad probe (`capacity`).
    Probe(
        /// What became of it.
        ProbeFate,
    ),
    /// A word stored by an earlier release, as it prints.
    Name(
        /// The name, as it prints.
        String,
    ),
}

/// How sure a decision is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// A requirement's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Fail,
    /// The link caps the figure below the requirement and the card ran at
    /// the link's speed: whether the card itself meets it cannot be told.
    Link,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Link => "LINK",
        }
    }
}

/// How the cache-exhausting writes ended.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Exhaustion {
    /// The speed fell and then held steady: Pw is after the cache.
    Exhausted,
    /// No fall within the cap: no cache, or a larger one.
    NoFall,
    /// The speed fell but was not yet steady at the cap.
    StillFalling,
}
