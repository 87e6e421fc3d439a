//! The one-line answer of a flash run, from its typed outcome: a fake
//! card's claimed and real size, the classes a card meets per family and
//! what holds it back, the geometry, the cache, the open AUs; and the
//! words of a requirement and of a reason a confidence is not high.

use crate::result::flash::{
    AuFrom, ClaimSource, ClassCheck, Confidence, FlashReport, FoundBy, NeedKind, NoCount, Outcome,
    Reason, Status,
};
use crate::units::{format_latency, format_mbps, format_size};

/// The answer, in one line.
pub fn headline(f: &FlashReport) -> String {
    match &f.outcome {
        Outcome::Genuine { probes, .. } => {
            format!("genuine: all {probes} probe blocks held their data")
        }
        Outcome::Fake {
            claimed_bytes,
            real_bytes,
            at_most_bytes,
            found_by,
            ..
        } => fake(*claimed_bytes, *real_bytes, *at_most_bytes, *found_by),
        Outcome::Geometry {
            au_bytes,
            au_confidence,
            page_bytes,
            ..
        } => match (au_bytes, page_bytes) {
            (Some(a), Some(p)) => format!("AU {}, page {}", format_size(*a), format_size(*p)),
            // A lone step of a page's size (issue 37).
            (Some(a), None)
                if *au_confidence == Confidence::Low
                    && *a <= crate::analysis::flash::align::MAX_PAGE =>
            {
                format!(
                    "one step, at {}: the page, or an AU of one page; no larger AU among the sizes tried (an AU of another size is not ruled out)",
                    format_size(*a)
                )
            }
            (Some(a), None) => format!("AU {}, no page step seen", format_size(*a)),
            _ => "no boundary pattern: the geometry cannot be read from timing here".into(),
        },
        Outcome::OpenAus {
            count,
            no_count,
            collapse,
            spread,
            most_aus,
            ..
        } => open_aus(*count, *no_count, *collapse, *spread, *most_aus),
        Outcome::Cache {
            cache_bytes,
            absorbed_bytes,
            burst_mb_per_s,
            sustained_mb_per_s,
            most_bytes,
            ..
        } => match (cache_bytes, absorbed_bytes, sustained_mb_per_s) {
            // The net size assumes the cache drained at the sustained
            // speed while it filled; one that does not drain then holds
            // all that was absorbed. Both are named.
            (Some(c), Some(a), Some(s)) => format!(
                "write cache of {}–{} ({} if it drains while it fills): {} MB/s, then {} MB/s",
                format_size(*c),
                format_size(*a.max(c)),
                format_size(*c),
                format_mbps(*burst_mb_per_s),
                format_mbps(*s)
            ),
            _ => format!(
                "no fall in speed within {}: no cache seen (or a larger one)",
                format_size(*most_bytes)
            ),
        },
        Outcome::Classes { .. } => classes(&f.outcome),
        Outcome::Legacy { verdict, .. } => verdict.clone(),
    }
}

fn fake(claimed: u64, real: u64, at_most: Option<u64>, by: FoundBy) -> String {
    let (claimed, holds) = (format_size(claimed), format_size(real));
    match by {
        FoundBy::Aliased => {
            format!(
                "FAKE: claims {claimed}, really holds {holds} (exactly: aliased blocks name it)"
            )
        }
        FoundBy::LastSector => format!(
            "FAKE: claims {claimed}, really holds {holds} ({real} bytes: the last sector that held its data ends there)"
        ),
        FoundBy::Interval => format!(
            "FAKE: claims {claimed}, really holds {}",
            super::holds_text(real, at_most)
        ),
    }
}

fn open_aus(
    count: Option<u32>,
    why: Option<NoCount>,
    collapse: f64,
    spread: f64,
    most: u32,
) -> String {
    match (count, why) {
        (Some(n), _) => format!(
            "{n} open AU(s): writing to more in turn collapses throughput {collapse:.1}× (noise {spread:.2}×)"
        ),
        (None, Some(NoCount::NotFromTheCount)) => {
            "throughput fell but stayed low with fewer AUs again: not the open-AU limit (a write cache filling?)".into()
        }
        (None, Some(NoCount::InTheNoise)) => {
            format!("a collapse of {collapse:.2}× is within the noise ({spread:.2}×): no count")
        }
        (None, _) => format!(
            "no collapse up to {most} AUs: no open-AU limit seen (none, more than {}, or hidden by a write cache)",
            most.saturating_sub(2)
        ),
    }
}

/// A requirement's status as a person reads it: a class above those a
/// card meets is `NOT` (met) when no class was claimed, and `FAIL` only
/// when a claimed class is not met.
pub fn status_word(f: &FlashReport, s: Status) -> &'static str {
    let unclaimed = matches!(
        &f.outcome,
        Outcome::Classes {
            claim: ClaimSource::None,
            ..
        }
    );
    match s {
        Status::Fail if unclaimed => "NOT",
        other => other.name(),
    }
}

/// "C10 U1 V10 A1": the highest class met in each family, or "none".
pub fn class_met(o: &Outcome) -> String {
    let Outcome::Classes { families, .. } = o else {
        return String::new();
    };
    let met: Vec<&str> = families
        .iter()
        .filter_map(|f| f.highest.as_deref())
        .collect();
    match met.is_empty() {
        true => "none".into(),
        false => met.join(" "),
    }
}

/// "meets C10 U1 V10 A1; not U3: Pw 12.0 MB/s, needs 30", with the
/// claim's answer first when there was one, and the confidence when not
/// high.
fn classes(o: &Outcome) -> String {
    let Outcome::Classes {
        claim,
        claimed,
        binding,
        weakest,
        ..
    } = o
    else {
        return String::new();
    };
    let mut out = String::new();
    if *claim != ClaimSource::None {
        let by = match claim {
            ClaimSource::Given => "claim",
            _ => "the card claims",
        };
        let untold = matches!(o, Outcome::Classes { untold, .. } if !untold.is_empty());
        let verdict = match (o.failed(), untold) {
            (true, _) => "NOT met",
            (false, true) => "cannot be told (a requirement is capped by the link)",
            (false, false) => "met",
        };
        out += &format!("{by} {}: {verdict}; ", claimed.join(" "));
    }
    let met = class_met(o);
    if met == "none" && *claim != ClaimSource::None {
        // Only the claimed classes were checked: what holds it back
        // follows, not a "meets none" that reads as "no class at all".
        out += "meets none of them";
    } else {
        out += &format!("meets {met}");
    }
    if let Some(w) = weakest.as_ref().filter(|w| w.confidence < Confidence::High) {
        out += &format!(
            " ({} confidence, set by {} {}",
            w.confidence.name(),
            w.class,
            need_name(w.need)
        );
        if let Some(r) = &w.reason {
            out += &format!(": {}", reason_text(r));
        }
        out += ")";
    }
    if let Some(b) = binding {
        out += &binding_text(b);
    }
    out
}

/// "; not U3: Pw 12.0 MB/s, needs 30", "; U3 cannot be told: …", or
/// (all met) "; closest to its limit: …".
fn binding_text(b: &ClassCheck) -> String {
    let figure = need_text(b.need, b.measured, b.limit);
    match b.status {
        Status::Fail => format!("; not {}: {figure}", b.class),
        Status::Link => format!(
            "; {} cannot be told: {figure}{}",
            b.class,
            b.reason
                .as_ref()
                .map(|r| format!(" ({})", reason_text(r)))
                .unwrap_or_default()
        ),
        Status::Pass => format!("; closest to its limit: {} {figure}", b.class),
    }
}

/// What a requirement measures, as people name it.
pub fn need_name(n: NeedKind) -> &'static str {
    match n {
        NeedKind::SeqWrite => "Pw",
        NeedKind::RuRead => "Pr",
        NeedKind::FatMean => "T_FW mean of 8",
        NeedKind::FatMax => "T_FW max",
        NeedKind::RandomReadIops => "4 KiB random read",
        NeedKind::RandomWriteIops => "4 KiB random write",
        NeedKind::Sustained => "sustained write",
    }
}

/// The unit of a requirement's figures.
pub fn need_unit(n: NeedKind) -> &'static str {
    match n {
        NeedKind::FatMean | NeedKind::FatMax => "ms",
        NeedKind::RandomReadIops | NeedKind::RandomWriteIops => "IOPS",
        _ => "MB/s",
    }
}

/// "Pw 12.0 MB/s, needs 30" or "T_FW max 300.0 ms, limit 250".
pub fn need_text(n: NeedKind, measured: f64, limit: f64) -> String {
    let bound = if n.at_least() { "needs" } else { "limit" };
    // Three significant figures, so that 9.96 MB/s against a limit of 10
    // does not read "10.0, needs 10".
    let value = match n {
        NeedKind::RandomReadIops | NeedKind::RandomWriteIops => format!("{measured:.0}"),
        _ => format_mbps(measured),
    };
    format!("{} {value} {}, {bound} {limit}", need_name(n), need_unit(n))
}

/// The words of [`Reason::BehindCache`].
fn behind_cache_text(fell_after_bytes: Option<u64>, written_bytes: u64) -> String {
    match fell_after_bytes {
        Some(fell) => format!(
            "timed after the write cache filled (the speed fell after {}): a card whose medium work queues behind its cache shows these writes the older work it owes, not their own",
            format_size(fell)
        ),
        None => format!(
            "a write cache that {} of sequential writes did not fill may stand in front: a card whose medium work queues behind its cache hides it from these writes",
            format_size(written_bytes)
        ),
    }
}

/// Why a figure measured in an AU's recording units is not sure: the AU
/// was assumed, or is itself not sure.
fn au_reason_text(r: &Reason) -> String {
    match r {
        Reason::AssumedAu { ru_bytes, au_bytes } => format!(
            "measured in {} recording units of an assumed AU of {} (none given or found; give --au)",
            format_size(*ru_bytes),
            format_size(*au_bytes)
        ),
        Reason::AuNotSure {
            ru_bytes,
            au_bytes,
            from,
            au_confidence,
        } => format!(
            "measured in {} recording units of an AU of {} that is itself only {} sure ({})",
            format_size(*ru_bytes),
            format_size(*au_bytes),
            au_confidence.name(),
            match from {
                AuFrom::Kernel =>
                    "the kernel's size, which boundary timing did not confirm; give --au",
                _ => "found by boundary timing; give --au",
            }
        ),
        _ => String::new(),
    }
}

/// Why a FAT-area or random-write figure may not be the card's own: a
/// write cache that queues the medium's work may have shown those writes
/// older work, or none.
fn cache_reason_text(r: &Reason) -> String {
    match r {
        Reason::BehindCache {
            fell_after_bytes,
            written_bytes,
        } => behind_cache_text(*fell_after_bytes, *written_bytes),
        Reason::NoMediumWorkSeen {
            write_ns,
            bare_write_ns,
        } => format!(
            "the FAT-area writes took {}, about what a command and 4 KiB at the burst speed take ({}): no medium work showed in them, and a write cache that queues it may hide it",
            format_latency(*write_ns as f64),
            format_latency(*bare_write_ns as f64)
        ),
        Reason::OlderWorkPaid {
            write_ns,
            random_write_ns,
        } => format!(
            "the FAT-area writes took {}, as long as the random writes before them ({}): behind a write cache that queues the medium's work, both may have paid the random writes' work",
            format_latency(*write_ns as f64),
            format_latency(*random_write_ns as f64)
        ),
        Reason::FirstFatWritesMet { writes, first_ns } => format!(
            "the first {writes} FAT-area writes, timed right after the sequential ones, gave {}: the later ones, after the random writes, may have paid for their work behind a write cache that queues it",
            format_latency(*first_ns as f64)
        ),
        _ => String::new(),
    }
}

/// Why a finding is not sure, in words.
pub fn reason_text(r: &Reason) -> String {
    match r {
        Reason::LinkCaps {
            link_mb_per_s,
            limit,
        } => format!(
            "cannot tell: the link caps at {link_mb_per_s:.1} MB/s, below the {limit} required, and the card ran at it (its own speed beyond the link is not seen)"
        ),
        Reason::LinkCapsIops {
            link_mb_per_s,
            ceiling_iops,
            limit,
        } => format!(
            "cannot tell: the link carries {link_mb_per_s:.1} MB/s, at most {ceiling_iops:.0} random 4 KiB requests per second, below the {limit} IOPS required, and the card's requests ran near it (its own rate beyond the link is not seen)"
        ),
        Reason::RareStallsNotRuledOut {
            writes,
            ruled_out_every,
        } => format!(
            "{writes} FAT-area writes rule out stalls up to one every {ruled_out_every} writes; rarer ones are not ruled out"
        ),
        Reason::NotSteady { windows } => format!(
            "the random writes' rate did not settle within {windows} windows of {} writes: a cache's slack may be in it",
            crate::analysis::flash::class::IOPS_WINDOW
        ),
        Reason::BehindCache { .. }
        | Reason::NoMediumWorkSeen { .. }
        | Reason::OlderWorkPaid { .. }
        | Reason::FirstFatWritesMet { .. } => cache_reason_text(r),
        Reason::StallsMayCluster { worst_mean8_ns } => format!(
            "the FAT-area stalls came at irregular gaps: as close together as the closest two seen, 8 in a row would average {}",
            format_latency(*worst_mean8_ns as f64)
        ),
        Reason::PausesSeen { stall_ns, limit } => format!(
            "the sequential writes stalled for up to {:.1} ms at a time: a FAT-area write meeting such a pause would exceed {limit} ms",
            *stall_ns as f64 / 1e6
        ),
        Reason::AssumedAu { .. } | Reason::AuNotSure { .. } => au_reason_text(r),
        Reason::NoFallCovered {
            written_bytes,
            largest_cache_bytes,
            card_bytes,
        } => format!(
            "no fall in speed within {}: enough to fill any cache of up to {} (all of this {} card) that could hide a speed below the limit",
            format_size(*written_bytes),
            format_size(*largest_cache_bytes),
            format_size(*card_bytes)
        ),
        Reason::NoFallOpen {
            written_bytes,
            largest_cache_bytes,
            card_bytes,
        } => format!(
            "no fall in speed within {}: a cache of up to {} (all of this {} card, as a dynamic SLC cache may take) hiding a speed below the limit is not ruled out",
            format_size(*written_bytes),
            format_size(*largest_cache_bytes),
            format_size(*card_bytes)
        ),
        Reason::NotExhausted { written_bytes } => format!(
            "speed after {}, cache not exhausted",
            format_size(*written_bytes)
        ),
        Reason::Stored { note } => note.clone(),
    }
}
