//! Whether a write cache in front of the card could have changed what the
//! FAT-area and random writes of `flash class` cost: a cache that queues
//! the medium's work shows those writes older work, or none, not their
//! own (issue 37). Each check names what it saw as a [`Reason`].

use super::START_NOISE;
use super::{AS_CHEAP_AS_BARE, AT_LINK, ClassFigures, Need, PwFigures, SAME_WORK, SMALL_BYTES};
use crate::result::flash::Reason;

/// A cache filled before the FAT-area and random writes: what they cost
/// may be the older work the cache still owes.
/// Without a fall, only writes over the whole card rule a cache out, and
/// not when they ran at the link's speed (a cache then fills only at the
/// link's speed less its drain, and may never show).
pub(super) fn behind_cache(f: &ClassFigures, link_mb_s: Option<f64>) -> Option<Reason> {
    let at_link = link_mb_s.is_some_and(|l| f.pw.mean_mb_s >= AT_LINK * l);
    let ruled_out = f.pw.fell_after.is_none()
        && f.pw.written >= f.card_bytes
        && !at_link
        && !starts_faster(&f.pw);
    (!ruled_out).then_some(Reason::BehindCache {
        fell_after_bytes: f.pw.fell_after,
        written_bytes: f.pw.written,
    })
}

/// FAT-area writes as slow as the random writes before them, behind a
/// cache not ruled out that no fall sized: behind a cache that queues the
/// medium's work each write waits for the oldest, so both paid the same
/// work, the random writes' (issue 37: a card behind a 1 MB/s link,
/// FAT-area writes of 11 ms measured at 178 ms, random writes at 165 ms).
pub(super) fn older_work(f: &ClassFigures, link_mb_s: Option<f64>) -> Option<Reason> {
    behind_cache(f, link_mb_s).filter(|_| f.pw.fell_after.is_none())?;
    let window = f.random_writes.windows.last().filter(|w| w.ops > 0)?;
    let random_ns = window.ns / f64::from(window.ops);
    let write_ns = f.fat.median_ms * 1e6;
    let alike = (write_ns - random_ns).abs() <= SAME_WORK * random_ns;
    alike.then(|| Reason::OlderWorkPaid {
        write_ns: write_ns.round() as u64,
        random_write_ns: random_ns.round() as u64,
    })
}

/// The FAT-area writes cost no more than [`AS_CHEAP_AS_BARE`] times a
/// bare write: a command (a 4 KiB read's time less its transfer, the
/// transfer's share from the RU reads) and 4 KiB at the burst speed, or a
/// 4 KiB read when longer. A write that programmed a page or met the FAT
/// law's busy time costs more than one that moved 4 KiB into a cache. A
/// cache whose drain outran the sequential writes never filled and
/// showed no fall, yet hid the FAT law's stalls of up to 750 ms from all
/// 768 writes (issue 37).
pub(super) fn no_medium_work(f: &ClassFigures) -> Option<Reason> {
    let reads = f.random_reads.windows.first().filter(|w| w.ops > 0)?;
    let read_ns = reads.ns / f64::from(reads.ops);
    let bare_ns = bare_write_ns(f, read_ns).max(read_ns);
    let write_ns = f.fat.median_ms * 1e6;
    (write_ns <= AS_CHEAP_AS_BARE * bare_ns).then(|| Reason::NoMediumWorkSeen {
        write_ns: write_ns.round() as u64,
        bare_write_ns: bare_ns.round() as u64,
    })
}

/// A command and 4 KiB at the burst speed, ns, from a 4 KiB read's time
/// (`read_ns`) and the RU reads' speed: the RU's longer transfer gives
/// the read's share per byte, the rest of the 4 KiB read is the command.
fn bare_write_ns(f: &ClassFigures, read_ns: f64) -> f64 {
    let ru = f.ru as f64;
    if f.pr_mb_s <= 0.0 || f.pw.burst_mb_s <= 0.0 || ru <= SMALL_BYTES {
        return 0.0;
    }
    let ru_ns = ru / f.pr_mb_s * 1e3;
    let per_byte = ((ru_ns - read_ns) / (ru - SMALL_BYTES)).max(0.0);
    let command = (read_ns - SMALL_BYTES * per_byte).max(0.0);
    command + SMALL_BYTES / f.pw.burst_mb_s * 1e3
}

/// The first AU ran faster than the steady ones by more than they spread
/// among themselves and [`START_NOISE`]: a cache took it, though the
/// speed fell by less than [`FALL`](super::FALL) (issue 37: a card whose burst was 16%
/// above its drain started 7% faster, and its cache hid FAT stalls of
/// 300 ms).
fn starts_faster(pw: &PwFigures) -> bool {
    pw.burst_mb_s > pw.mean_mb_s * (1.0 + pw.spread().max(START_NOISE))
}

/// The first FAT-area writes, timed right after the sequential ones and
/// before the random and P(Nu) writes, met the limit `need` fails by:
/// behind a cache that queues the medium's work, the later ones may have
/// paid for those writes' work (issue 37: FAT-area writes of 11 ms
/// measured at 296 ms behind a cache that drained faster than the
/// sequential writes came, so that no fall sized it).
pub(super) fn first_writes_met(need: Need, limit: f64, f: &ClassFigures) -> Option<Reason> {
    let first = f.fat_first?;
    let seen = match need {
        Need::FatMean(_) => first.worst_mean8_ms,
        Need::FatMax(_) => first.max_ms,
        _ => return None,
    };
    (seen <= limit).then(|| Reason::FirstFatWritesMet {
        writes: first.writes,
        first_ns: (seen * 1e6).round() as u64,
    })
}
