//! What a `flash` command found: the one-line verdict, its findings with
//! their figures and confidence, the raw table as typed cells, and the
//! detector's own figures.
//!
//! Why typed: a finding records what was measured (sizes, speeds, counts,
//! times), so every format words it itself (`crate::report::flash`). The
//! words written when the result was made stay beside the figures for JSON
//! readers, and are all that results stored before schema 3 have.

use serde::{Deserialize, Serialize};

use crate::vocab::options::FlashTest;

/// What a `flash` command found, as the result records it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FlashReport {
    /// The flash test: `align`, `open-au`, `cache`, `capacity` or `class`.
    pub test: FlashTest,
    /// The one-line answer.
    pub verdict: String,
    /// One entry per line of the verdict.
    pub findings: Vec<Finding>,
    /// The raw table (`--verbose`).
    pub table: FlashTable,
    /// True when the verdict is a failure (fake card, failed class).
    pub failed: bool,
    /// The detector's own figures, for JSON readers.
    pub details: serde_json::Value,
}

/// One line of a flash verdict: what was found, and how sure.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    /// The finding's name and value in words, as written when the result
    /// was made.
    pub name: String,
    /// The value in words, as written when the result was made.
    pub value: String,
    /// How sure the finding is; null when the test does not judge it.
    pub confidence: Option<Confidence>,
    /// PASS, FAIL or LINK for class requirements.
    pub status: Option<Status>,
    /// A remark on the finding (why the confidence is not high); null when
    /// none.
    pub note: Option<String>,
    /// What was measured (absent in results stored before schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<Figure>,
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
        kernel: Option<u64>,
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
        mb_s: f64,
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
        mb_s: f64,
    },
    /// `capacity`: what the card really holds (the claimed size if genuine).
    UsableCapacity {
        /// What the card really holds, bytes (on a fake found to an
        /// interval, the least it holds).
        bytes: u64,
        /// On a fake found to an interval rather than exactly: the most it
        /// may hold, bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_most: Option<u64>,
    },
    /// `capacity`: aliased blocks were read (a block that reads back
    /// another address's data): the card wraps around.
    WrapAround,
    /// `capacity`, on a fake card: H2testw's line, what holds and what is
    /// lost, with the flush's write and the read-back's speed.
    OkLost {
        /// Bytes that hold data (H2testw's "OK").
        ok: u64,
        /// Bytes claimed beyond that, which lose what is written (H2testw's
        /// "lost").
        lost: u64,
        /// Speed of the flush's writes, MB/s; null when not measured.
        write_mb_s: Option<f64>,
        /// Speed of the read-back, MB/s; null when not measured.
        read_mb_s: Option<f64>,
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
    /// `capacity`: the write cache filled after `filled_after` bytes of
    /// flush, which stopped at `flushed`, short of the `needed`.
    FlushTooShort {
        /// Bytes of flush written when the write cache filled.
        filled_after: u64,
        /// Bytes the flush wrote.
        flushed: u64,
        /// Bytes the flush needs to get past a cache that fills after
        /// `filled_after`.
        needed: u64,
    },
    /// `capacity`: the `--flush` asked for was more than any write cache of
    /// the card could need (one as large as the card), so the flush was
    /// bounded by that.
    FlushShortened {
        /// Bytes of flush asked for.
        asked: u64,
        /// Bytes the flush was bounded to.
        bound: u64,
    },
    /// `capacity`: a genuine card whose flush filled no cache.
    NoCacheFilled {
        /// Bytes the flush wrote.
        flushed: u64,
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
        burst_mb_s: f64,
        /// Bytes written when the speed first fell; null when it did not fall.
        fell_after: Option<u64>,
        /// Bytes written whole AU by whole AU.
        written: u64,
    },
    /// `class`: Pw over whole free AUs of `ru`-byte RUs.
    Pw {
        /// Pw: mean write speed over the steady AUs, MB/s.
        mean_mb_s: f64,
        /// Slowest of those AUs, MB/s.
        min_mb_s: f64,
        /// AUs Pw is averaged over (the last steady ones).
        aus: u64,
        /// Size of one recording unit (RU), bytes.
        ru: u64,
    },
    /// `class`: Pr over 256 random RUs, beside the Pw it must reach.
    Pr {
        /// Pr: read speed over 256 random RUs, MB/s.
        mb_s: f64,
        /// The Pw it must reach, MB/s.
        pw_mean_mb_s: f64,
    },
    /// `class`: FAT write times.
    FatWrites {
        /// Worst mean of 8 consecutive FAT writes, ms.
        worst_mean8_ms: f64,
        /// Longest single FAT write, ms.
        max_ms: f64,
        /// Median FAT write, ms.
        median_ms: f64,
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
        pm_mb_s: Option<f64>,
    },
    /// `class`: one requirement of one class, checked.
    Requirement {
        /// The class, as its logo reads (`C10`, `U3`, `V30`, `A1`).
        class: String,
        /// What the class asks for, and its unit.
        need: Need,
        /// The measured value, in the unit of `need`.
        measured: f64,
        /// The class's limit, in the unit of `need`.
        limit: f64,
    },
    /// The AU the test worked in, and where it came from.
    AuUsed {
        /// The AU, bytes.
        bytes: u64,
        /// Where its size came from, in words.
        source: String,
    },
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
    pub mb_s: f64,
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
    MbS,
    /// MB/s of one AU (`class`).
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
    /// A name from another closed set, as it prints.
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

/// What a class asks for.
/// Random 4 KiB reads, IOPS (at least).
/// Random 4 KiB writes, IOPS (at least).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum Need {
    /// Pw, MB/s.
    SeqWrite(
        /// Least Pw, MB/s.
        f64,
    ),
    /// Pr, MB/s (Pr ≥ Pw ≥ the class speed).
    RuRead(
        /// Least Pr, MB/s.
        f64,
    ),
    /// T_FW, worst mean of 8 FAT writes, ms (at most).
    FatMean(
        /// Most T_FW mean of 8, ms.
        f64,
    ),
    /// T_FW, largest single FAT write, ms (at most).
    FatMax(
        /// Most T_FW single write, ms.
        f64,
    ),
    RandomReadIops(
        /// Least random 4 KiB reads per second (IOPS).
        f64,
    ),
    RandomWriteIops(
        /// Least random 4 KiB writes per second (IOPS).
        f64,
    ),
    /// Sustained sequential write, MB/s.
    Sustained(
        /// Least sustained write, MB/s.
        f64,
    ),
}

impl Need {
    /// The limit, and whether the measured value must be at least (true)
    /// or at most (false) it.
    pub fn limit(self) -> (f64, bool) {
        match self {
            Need::SeqWrite(v)
            | Need::RuRead(v)
            | Need::RandomReadIops(v)
            | Need::RandomWriteIops(v)
            | Need::Sustained(v) => (v, true),
            Need::FatMean(v) | Need::FatMax(v) => (v, false),
        }
    }

    /// What is measured, with its unit.
    pub fn what(self) -> &'static str {
        match self {
            Need::SeqWrite(_) => "Pw MB/s",
            Need::RuRead(_) => "Pr MB/s",
            Need::FatMean(_) => "T_FW mean of 8, ms",
            Need::FatMax(_) => "T_FW max, ms",
            Need::RandomReadIops(_) => "4 KiB read IOPS",
            Need::RandomWriteIops(_) => "4 KiB write IOPS",
            Need::Sustained(_) => "sustained write MB/s",
        }
    }

    /// Whether the figure is a transfer rate, which a slow link can cap.
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Need::SeqWrite(_) | Need::RuRead(_) | Need::Sustained(_)
        )
    }

    /// Whether a write cache can inflate the figure.
    pub fn after_cache(self) -> bool {
        matches!(
            self,
            Need::SeqWrite(_) | Need::Sustained(_) | Need::RandomWriteIops(_)
        )
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
