//! SD speed-class verdicts: the class limits of the SD Association and how
//! measured figures are held against them.
//!
//! The limits are those of the SD Association's Physical Layer Simplified
//! Specification, Part 1 ("Speed Class", "UHS Speed Class", "Video Speed
//! Class" and "Application Performance Class"); how the figures are
//! measured (Pw after the cache, Pr, T_FW, P(Nu), random IOPS) is the
//! `flash class` measuring layer's. Each requirement is PASS, FAIL or LINK with a
//! [`Confidence`] from the margin between the value and its limit relative
//! to the measurement's spread. No I/O here.

use super::{HIGH_RATIO, MEDIUM_RATIO};
use crate::result::flash::Confidence;
use crate::result::flash::Status;
use crate::result::flash::{Exhaustion, NeedKind, Reason};

/// Speed Class: Pw and Pr of at least the class number in MB/s, and the
/// FAT-update latency limits below (SD Physical Layer Specification,
/// "Speed Class" of Class 2, 4, 6 and 10).
pub const SD_SPEED_CLASSES: [(&str, f64); 4] =
    [("C2", 2.0), ("C4", 4.0), ("C6", 6.0), ("C10", 10.0)];

/// UHS Speed Class (U1, U3) and Video Speed Class (V6 to V90): Pw and Pr
/// of at least the class speed in MB/s, and [`UHS_FAT_MAX_MS`] (SD Physical
/// Layer Specification, "UHS Speed Class" and "Video Speed Class").
pub const UHS_VIDEO_SPEED_CLASSES: [(&str, f64); 7] = [
    ("U1", 10.0),
    ("V10", 10.0),
    ("V6", 6.0),
    ("U3", 30.0),
    ("V30", 30.0),
    ("V60", 60.0),
    ("V90", 90.0),
];

/// T_FW for Class 2 to 10: the worst mean of [`FAT_WINDOW`] consecutive
/// FAT writes is at most 100 ms (SD Physical Layer Specification, "Speed
/// Class": FAT update time).
pub const SD_FAT_MEAN_MS: f64 = 100.0;

/// T_FW for Class 2 to 10: no single FAT write over 750 ms (same section).
pub const SD_FAT_MAX_MS: f64 = 750.0;

/// T_FW for the UHS and Video classes: no single FAT write over 250 ms
/// (SD Physical Layer Specification, "UHS Speed Class").
pub const UHS_FAT_MAX_MS: f64 = 250.0;

/// Application Performance Class 1: 1,500 random 4 KiB reads and 500
/// writes per second (SD Physical Layer Specification, "Application
/// Performance Class").
pub const A1_READ_IOPS: f64 = 1500.0;
pub const A1_WRITE_IOPS: f64 = 500.0;

/// Application Performance Class 2: 4,000 reads and 2,000 writes per
/// second (same section).
pub const A2_READ_IOPS: f64 = 4000.0;
pub const A2_WRITE_IOPS: f64 = 2000.0;

/// Both application classes also ask a sustained sequential write of
/// 10 MB/s (Class 10's speed; same section).
pub const APP_SUSTAINED_MB_S: f64 = 10.0;

/// The largest write cache (SLC region) a card may carry, as a share of
/// its capacity: a dynamic SLC cache on MLC or TLC flash takes what is
/// free, a third to a half of the free space and more on some controllers,
/// and the free space of an empty card is all of it. Only a cache that is
/// seen to fill (a fall, then a steady speed) is ruled out.
pub const CACHE_SHARE_MAX: f64 = 1.0;

/// Bytes of writes after which no fall in speed rules out every cache
/// that could hide a speed below the limit, on a card of `card_bytes`
/// measured at `room` times the limit: such a cache takes writes at
/// `room` times its drain speed or more, so one of C bytes fills within
/// C·room/(room − 1) bytes, and C is at most [`CACHE_SHARE_MAX`] of the
/// card. Bursts barely above the drain speed fill slowly: a PASS close to
/// its limit needs many times the cache written (`u64::MAX` at or below
/// the limit).
pub fn largest_cache_fill(card_bytes: u64, room: f64) -> u64 {
    if room <= 1.0 {
        return u64::MAX;
    }
    let fill = card_bytes as f64 * CACHE_SHARE_MAX * room / (room - 1.0);
    fill.min(u64::MAX as f64) as u64
}

/// The most the cache-exhausting writes cover; on a smaller card they go
/// over it twice. 16 GiB rule out a cache as large as a card of up to
/// 8 GiB for a PASS at twice its limit; otherwise a speed that did not
/// fall within them is a PASS at most low ([`largest_cache_fill`]). The
/// measuring layer plans its writes with it.
pub const PW_CAP: u64 = 16 << 30;

/// A PASS or FAIL this far from its limit (relative) is high-confidence,
/// whatever the spread: a tenth is beyond a rerun's difference on cards.
pub const HIGH_MARGIN: f64 = 0.10;

/// A PASS or FAIL this far from its limit is medium-confidence.
pub const MEDIUM_MARGIN: f64 = 0.03;

/// The rarest FAT-area stall (a merge of the card's FAT log block) a T_FW
/// PASS at high must rule out, in FAT writes: a card that logs its FAT
/// updates in a block of 1 MiB merges it once every 256 writes of 4 KiB,
/// and the cards of the survey that show merges show them at most that
/// rarely. Rarer stalls are "not ruled out" and the PASS is low.
pub const FIELD_FAT_PERIOD_MAX: u32 = 256;

/// Random 4 KiB writes are timed in windows of this many; the figure is
/// taken once two windows in a row agree (steady state, the cache's slack
/// used up), at most [`IOPS_WINDOWS_MAX`] windows.
pub const IOPS_WINDOW: u32 = 500;

/// The most windows of random writes before the figure is given as not
/// steady (16 MiB of writes, the method's region four times over).
pub const IOPS_WINDOWS_MAX: usize = 8;

/// Pr is a mean of many reads: its spread is the slowest read's distance
/// from the mean divided by this.
pub const PR_SPREAD_DIVISOR: f64 = 4.0;

/// A rate at this share of the link's ceiling or more ran at the link's
/// speed: the host, not the card, may have set it.
pub const AT_LINK: f64 = 0.9;

/// FAT-area writes within this factor of a bare write's time (a command
/// and 4 KiB at the burst speed, or a 4 KiB read) showed no medium work:
/// a command's and a transfer's jitter, not a page program.
pub const AS_CHEAP_AS_BARE: f64 = 1.25;

/// Two latencies within this share of each other were the same work: the
/// FAT-area writes and the random writes before them paying for one queue.
pub const SAME_WORK: f64 = 0.25;

/// How much faster than the steady AUs the first may run by chance alone
/// (a command's or a clock's jitter) before it shows a cache.
pub const START_NOISE: f64 = 0.03;

/// Random 4 KiB requests at this share of the link's bandwidth ceiling (its
/// MB/s over 4 KiB) or more may have run at the link's speed: each request
/// also carries its command and response across the link, which a stream
/// pays once, so the link's own ceiling for them lies below the bandwidth's.
pub const AT_LINK_IOPS: f64 = 0.5;

/// The transfer of one random request (A1/A2), bytes.
pub const SMALL_BYTES: f64 = 4096.0;

/// What a class asks for, with its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
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

    /// What is measured, as the result names it.
    pub fn kind(self) -> NeedKind {
        match self {
            Need::SeqWrite(_) => NeedKind::SeqWrite,
            Need::RuRead(_) => NeedKind::RuRead,
            Need::FatMean(_) => NeedKind::FatMean,
            Need::FatMax(_) => NeedKind::FatMax,
            Need::RandomReadIops(_) => NeedKind::RandomReadIops,
            Need::RandomWriteIops(_) => NeedKind::RandomWriteIops,
            Need::Sustained(_) => NeedKind::Sustained,
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

/// The requirements of a class label (`C10`, `U3`, `V30`, `A1`, ...).
pub fn requirements(class: &str) -> Option<Vec<Need>> {
    let c = class
        .trim()
        .to_ascii_uppercase()
        .replace("CLASS", "C")
        .replace(' ', "");
    let speed = |mb| vec![Need::SeqWrite(mb), Need::RuRead(mb)];
    let speed_of = |table: &[(&str, f64)]| {
        let found = table.iter().find(|(name, _)| *name == c.as_str());
        found.map(|(_, mb)| *mb)
    };
    if let Some(mb) = speed_of(&SD_SPEED_CLASSES) {
        let mut v = speed(mb);
        v.extend([Need::FatMean(SD_FAT_MEAN_MS), Need::FatMax(SD_FAT_MAX_MS)]);
        return Some(v);
    }
    if let Some(mb) = speed_of(&UHS_VIDEO_SPEED_CLASSES) {
        let mut v = speed(mb);
        v.push(Need::FatMax(UHS_FAT_MAX_MS));
        return Some(v);
    }
    match c.as_str() {
        "A1" => Some(app(A1_READ_IOPS, A1_WRITE_IOPS)),
        "A2" => Some(app(A2_READ_IOPS, A2_WRITE_IOPS)),
        _ => None,
    }
}

fn app(read: f64, write: f64) -> Vec<Need> {
    vec![
        Need::RandomReadIops(read),
        Need::RandomWriteIops(write),
        Need::Sustained(APP_SUSTAINED_MB_S),
    ]
}

/// Every class the command knows, in order.
pub const CLASSES: [&str; 12] = [
    "C2", "C4", "C6", "C10", "U1", "U3", "V6", "V10", "V30", "V60", "V90", "A1",
];

mod cache_checks;
mod figures;
use cache_checks::{behind_cache, first_writes_met, no_medium_work, older_work};
pub use figures::{
    AuCap, ClassFigures, FatLatency, IopsFigures, IopsWindow, PnuPoint, PwFigures, fat_figures,
    fell_from, move_speed, steady, windows_agree,
};
pub use figures::{
    FALL, FAT_PERIODS_SEEN, FAT_WINDOW, IOPS_AGREE_SE, MOVE_VISIBLE, STEADY, STEADY_TREND_PARTS,
};

/// One requirement's verdict.
#[derive(Debug, Clone)]
pub struct Check {
    pub class: String,
    pub need: Need,
    pub measured: f64,
    pub limit: f64,
    pub status: Status,
    pub confidence: Confidence,
    /// Why the confidence is capped, when it is.
    pub reason: Option<Reason>,
}

/// The figure a need is checked against.
fn measured(need: Need, f: &ClassFigures) -> f64 {
    match need {
        Need::SeqWrite(_) | Need::Sustained(_) => f.pw.checked_mb_s(),
        Need::RuRead(_) => f.pr_mb_s,
        Need::FatMean(_) => f.fat.worst_mean8_ms,
        Need::FatMax(_) => f.fat.max_ms,
        Need::RandomReadIops(_) => f.random_reads.iops(),
        Need::RandomWriteIops(_) => f.random_writes.iops(),
    }
}

/// The relative spread of the figure a need is checked against.
fn spread(need: Need, f: &ClassFigures) -> f64 {
    match need {
        Need::SeqWrite(_) | Need::Sustained(_) => f.pw.spread(),
        Need::RuRead(_) => match f.pr_mb_s > 0.0 {
            true => ((f.pr_mb_s - f.pr_min_mb_s) / f.pr_mb_s).max(0.0) / PR_SPREAD_DIVISOR,
            false => 1.0,
        },
        // A rerun can land the stalls elsewhere: how far the figure moved
        // between the run's quarters.
        Need::FatMean(_) => f.fat.mean8_spread,
        Need::FatMax(_) => f.fat.max_spread,
        Need::RandomReadIops(_) => f.random_reads.spread(),
        Need::RandomWriteIops(_) => f.random_writes.spread(),
    }
}

/// The ceiling a link of `link_mb_s` puts on what `need` measures, in the
/// need's own unit, and the share of it at which a figure may be the
/// link's; `None` for a latency, which a link lengthens by a transfer only.
fn link_ceiling(need: Need, link_mb_s: f64) -> Option<(f64, f64)> {
    match need {
        Need::SeqWrite(_) | Need::RuRead(_) | Need::Sustained(_) => Some((link_mb_s, AT_LINK)),
        Need::RandomReadIops(_) | Need::RandomWriteIops(_) => {
            Some((link_mb_s * 1e6 / SMALL_BYTES, AT_LINK_IOPS))
        }
        Need::FatMean(_) | Need::FatMax(_) => None,
    }
}

/// The link's reason, when the link is below the limit and the figure ran
/// at it.
fn link_caps(need: Need, value: f64, limit: f64, link_mb_s: Option<f64>) -> Option<Reason> {
    let l = link_mb_s?;
    let (ceiling, share) = link_ceiling(need, l)?;
    if ceiling >= limit || value < share * ceiling {
        return None;
    }
    Some(match need.is_rate() {
        true => Reason::LinkCaps {
            link_mb_per_s: l,
            limit,
        },
        false => Reason::LinkCapsIops {
            link_mb_per_s: l,
            ceiling_iops: ceiling,
            limit,
        },
    })
}

/// What the measurement could not have seen, for a PASS: stalls rarer
/// than the FAT writes rule out, or random writes not yet steady.
fn unseen(need: Need, f: &ClassFigures, link_mb_s: Option<f64>) -> Option<Reason> {
    match need {
        Need::FatMean(_) | Need::FatMax(_) if f.fat.ruled_out_every() < FIELD_FAT_PERIOD_MAX => {
            Some(Reason::RareStallsNotRuledOut {
                writes: u64::from(f.fat.writes),
                ruled_out_every: u64::from(f.fat.ruled_out_every()),
            })
        }
        Need::RandomWriteIops(_) if !f.random_writes.steady => Some(Reason::NotSteady {
            windows: f.random_writes.windows.len() as u64,
        }),
        Need::FatMean(limit) if f.fat.clustered_mean8_ms > limit => {
            Some(Reason::StallsMayCluster {
                worst_mean8_ns: (f.fat.clustered_mean8_ms * 1e6).round() as u64,
            })
        }
        Need::FatMean(limit) | Need::FatMax(limit) => paused(need, limit, f)
            .or(behind_cache(f, link_mb_s))
            .or(no_medium_work(f)),
        Need::RandomWriteIops(_) => behind_cache(f, link_mb_s),
        _ => None,
    }
}

/// A pause seen in the sequential writes that, met by a FAT-area write
/// (by one of the worst 8 in a row), would cross the limit.
fn paused(need: Need, limit: f64, f: &ClassFigures) -> Option<Reason> {
    let (figure, share) = match need {
        Need::FatMean(_) => (f.fat.worst_mean8_ms, FAT_WINDOW as f64),
        _ => (f.fat.max_ms, 1.0),
    };
    (figure + f.pw.stall_ms / share > limit).then_some(Reason::PausesSeen {
        stall_ns: (f.pw.stall_ms * 1e6).round() as u64,
        limit,
    })
}

/// From the margin between a value and its limit, relative to the limit,
/// and the measurement's spread: at least [`HIGH_MARGIN`] and
/// [`HIGH_RATIO`] spreads clear is high, [`MEDIUM_MARGIN`] and
/// [`MEDIUM_RATIO`] spreads medium.
pub fn margin_confidence(measured: f64, limit: f64, spread: f64) -> Confidence {
    let margin = ((measured - limit) / limit.max(f64::MIN_POSITIVE)).abs();
    if margin >= (HIGH_RATIO * spread).max(HIGH_MARGIN) {
        Confidence::High
    } else if margin >= (MEDIUM_RATIO * spread).max(MEDIUM_MARGIN) {
        Confidence::Medium
    } else {
        Confidence::Low
    }
}

/// Checks the figures against each class's requirements; `link_mb_s` is
/// the link's practical ceiling when known.
pub fn judge(classes: &[String], f: &ClassFigures, link_mb_s: Option<f64>) -> Vec<Check> {
    let mut checks = Vec::new();
    for class in classes {
        for need in requirements(class).unwrap_or_default() {
            checks.push(check(class, need, f, link_mb_s));
        }
    }
    checks
}

fn check(class: &str, need: Need, f: &ClassFigures, link_mb_s: Option<f64>) -> Check {
    let value = measured(need, f);
    let (limit, at_least) = need.limit();
    let met = match at_least {
        true => value >= limit,
        false => value <= limit,
    };
    let link = link_caps(need, value, limit, link_mb_s);
    let (status, mut confidence) = match (met, &link) {
        (true, _) => (
            Status::Pass,
            margin_confidence(value, limit, spread(need, f)),
        ),
        // The card ran at the link's speed: what it does beyond the link
        // is not seen, so whether it meets the limit cannot be told.
        (false, Some(_)) => (Status::Link, Confidence::Low),
        (false, None) => (
            Status::Fail,
            margin_confidence(value, limit, spread(need, f)),
        ),
    };
    let mut reason = link;
    // A stall rarer than the run, or slack not yet used up, could turn a
    // PASS over; a FAIL rests on what was seen.
    if let Some(why) = unseen(need, f, link_mb_s).filter(|_| status == Status::Pass) {
        confidence = Confidence::Low;
        reason = Some(why);
    }
    // A figure measured in the recording units of an assumed AU is the
    // card's for that AU only: another AU (the card's) can turn it over.
    if let Some(au) = f.au_assumed.filter(|_| need.is_rate()) {
        if confidence > Confidence::Low {
            confidence = Confidence::Low;
            reason = Some(Reason::AssumedAu {
                ru_bytes: f.ru,
                au_bytes: au,
            });
        }
    }
    // The AU found by timing at medium, or the kernel's unconfirmed, may
    // not be the card's: the recording units measured in are as unsure.
    if let Some(au) = f
        .au_cap
        .filter(|a| need.is_rate() && a.confidence < confidence)
    {
        confidence = au.confidence;
        reason = Some(Reason::AuNotSure {
            ru_bytes: f.ru,
            au_bytes: au.au_bytes,
            from: au.from,
            au_confidence: au.confidence,
        });
    }
    // The first FAT-area writes met the limit before the random and P(Nu)
    // writes; the later ones may have paid for those writes' work.
    if let Some(why) = first_writes_met(need, limit, f).filter(|_| status == Status::Fail) {
        if confidence > Confidence::Low {
            confidence = Confidence::Low;
            reason = Some(why);
        }
    }
    // A cache no fall sized could not be filled again before the FAT-area
    // writes (see `crate::flash::class`): those may have paid the random
    // writes' work.
    if status == Status::Fail && matches!(need, Need::FatMean(_) | Need::FatMax(_)) {
        if let Some(why) = older_work(f, link_mb_s).filter(|_| confidence > Confidence::Low) {
            confidence = Confidence::Low;
            reason = Some(why);
        }
    }
    // A write cache only makes a card look faster: a FAIL stands, a PASS
    // or LINK measured before the cache was exhausted does not.
    if let Some((cap, why)) = cache_cap(need, status, value / limit, f, link_mb_s) {
        if cap < confidence {
            confidence = cap;
            reason = Some(why);
        }
    }
    Check {
        class: class.to_string(),
        need,
        measured: value,
        limit,
        status,
        confidence,
        reason,
    }
}

/// The most a PASS or LINK measured after the write cache can be sure
/// of, and why: high when the cache was exhausted, medium when no fall
/// within writes that would have filled the largest cache, else low.
fn cache_cap(
    need: Need,
    status: Status,
    room: f64,
    f: &ClassFigures,
    link_mb_s: Option<f64>,
) -> Option<(Confidence, Reason)> {
    if !need.after_cache() || status == Status::Fail {
        return None;
    }
    // Behind a link slower than the burst, a cache fills only at the
    // link's speed less the drain: no fall within the cap says little.
    let at_link = link_mb_s.is_some_and(|l| f.pw.mean_mb_s >= AT_LINK * l);
    // No fall within the writes rules out a cache only when they would
    // have filled the largest one this card's capacity allows that could
    // hide a speed below the limit.
    let covered = f.pw.written >= largest_cache_fill(f.card_bytes, room);
    let cap = match f.pw.exhaustion {
        Exhaustion::Exhausted => return None,
        Exhaustion::NoFall if covered && !at_link => Confidence::Medium,
        _ => Confidence::Low,
    };
    let (written_bytes, card_bytes) = (f.pw.written, f.card_bytes);
    let largest_cache_bytes = (f.card_bytes as f64 * CACHE_SHARE_MAX) as u64;
    let why = match f.pw.exhaustion {
        Exhaustion::NoFall if covered && !at_link => Reason::NoFallCovered {
            written_bytes,
            largest_cache_bytes,
            card_bytes,
        },
        Exhaustion::NoFall => Reason::NoFallOpen {
            written_bytes,
            largest_cache_bytes,
            card_bytes,
        },
        _ => Reason::NotExhausted { written_bytes },
    };
    Some((cap, why))
}

#[cfg(test)]
mod tests;
