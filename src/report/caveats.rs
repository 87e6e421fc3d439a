//! The words of a caveat: the one place its figures become a sentence, so
//! that text, HTML, Markdown, CSV and history say the same thing. A caveat
//! stored by an earlier release as a sentence is shown as it was stored.

use crate::probe::block::StackCache;
use crate::result::caveat::{Caveat, CaveatKind, CutBy, SimulatedCard, SkipReason, stored_kind};
use crate::units::format_size;

/// The capitalised word a reader sees before the sentence.
pub fn label(kind: CaveatKind) -> Option<&'static str> {
    crate::result::caveat::stored_label(kind)
}

/// The caveat as one line: its label (when its kind has one) and sentence.
pub fn line(c: &Caveat) -> String {
    if let Caveat::Stored(stored) = c {
        return stored.clone();
    }
    match label(c.kind()) {
        Some(label) => format!("{label}: {}", sentence(c)),
        None => sentence(c),
    }
}

/// The sentence without its label.
pub fn sentence(c: &Caveat) -> String {
    match c {
        Caveat::CacheServed {
            device,
            device_read_bytes,
            iocurve_read_bytes,
            served_pct,
        } => format!(
            "the device ({device}) delivered only {} of the {} iocurve read ({served_pct:.0}% came from a cache): the read figures are not the device's speed",
            format_size(*device_read_bytes),
            format_size(*iocurve_read_bytes),
        ),
        Caveat::EvictionFailed { os_error } => format!(
            "could not evict the page cache (posix_fadvise: {os_error}); buffered reads may come from memory"
        ),
        Caveat::PagesResident {
            resident_pages,
            total_pages,
        } => format!(
            "{resident_pages} of {total_pages} pages of the region stayed in the page cache after eviction; buffered read figures include memory speed"
        ),
        Caveat::EvictionUnproved { os_error } => {
            format!("could not prove the page cache was evicted (mincore: {os_error})")
        }
        Caveat::MemoryFileSystem => "this file system keeps its files in RAM, so the figures are memory speed, not a storage device's".into(),
        Caveat::StackCache { .. } => stack_cache(c),
        Caveat::Simulated(card) => simulated(card),
        Caveat::Preserved { .. } => preserved(c),
        Caveat::NameMoved { path } => format!(
            "{path} no longer names the file or device that was tested: it was renamed or replaced while the test ran; the test and the restore went to the object that was checked, through the descriptors held, and nothing was written to what the name names now"
        ),
        Caveat::JournalLeft { safety_words } => {
            crate::safety::preserve::journal_left_note(safety_words)
        }
        Caveat::AreaCut { span_bytes, by } => format!(
            "test area cut to {}: {}",
            format_size(*span_bytes),
            match by {
                CutBy::TimeLimit { limit_s } => format!(
                    "the preparation pass stopped after {limit_s} s on this slow device"
                ),
                CutBy::Interrupted => "the preparation pass was interrupted".into(),
            }
        ),
        _ => plain(c),
    }
}

/// The caveats with no figure to speak of, or only a name.
fn plain(c: &Caveat) -> String {
    match c {
        Caveat::AreaNotWritten => "test area not written first (reads only): an SSD may answer unwritten or trimmed blocks without reading the medium".into(),
        Caveat::ScratchShrunk {
            size_bytes,
            requested_bytes,
            free_bytes,
        } => format!(
            "scratch file is {} instead of {}: only {} free on the file system",
            format_size(*size_bytes),
            format_size(*requested_bytes),
            format_size(*free_bytes)
        ),
        Caveat::FilesThroughPageCache => "files go through the file system and the page cache; reads start from an evicted cache".into(),
        Caveat::NoBlockDevice => "no single block device beneath this directory: device request counts are not available".into(),
        Caveat::AlsoMeasured { path } => format!("also measured at the same time: {path}"),
        Caveat::WritesSkipped { path, busy } => writes_skipped(path, busy.as_deref()),
        Caveat::WritesSkippedReadOnly => "write tests skipped (--read-only)".into(),
        Caveat::VerifyFailed { os_error } => format!("verification read-back failed: {os_error}"),
        Caveat::SyncFailed { os_error } => format!("fdatasync after the writes failed: {os_error}"),
        Caveat::UringUnregistered { buffers, file } => match (buffers, file) {
            (false, true) => "io_uring could not register buffers (memlock limit?); using plain buffers",
            (true, false) => "io_uring could not register the file; using a plain descriptor",
            _ => "io_uring could not register buffers or file; using plain ones",
        }
        .into(),
        Caveat::FioNoRuntime => "fio reported no runtime".into(),
        Caveat::FioImported { version } => format!("imported from {version} JSON output"),
        Caveat::FioSpanUnknown { jobs } => format!(
            "span unknown for {}: the job gave no size and its file was not there to measure at import (recorded as 0)",
            jobs.join(", ")
        ),
        Caveat::Stored(stored) => stored_kind(stored).1.to_string(),
        _ => unreachable!("worded in `sentence`"),
    }
}

/// Why a test or curve was not measured.
pub fn skipped(why: &SkipReason) -> String {
    match why {
        SkipReason::ReadOnly => "write tests skipped (--read-only)".into(),
        SkipReason::WritesNotAllowed { path, busy } => writes_skipped(path, busy.as_deref()),
        SkipReason::OnRank { rank, host, reason } => {
            format!("rank {rank} ({host}): {}", skipped(reason))
        }
        SkipReason::Stored(words) => words.clone(),
    }
}

/// Why write tests were skipped, and what would allow them.
pub fn writes_skipped(path: &str, busy: Option<&str>) -> String {
    match busy {
        Some(why) => format!(
            "write tests skipped: {why}, so no write test may run on {path}; give a directory on its file system to test writes through a scratch file"
        ),
        None => format!(
            "write tests skipped: {path} is not a scratch file; pass --preserve to let them write and then restore every byte, or --destructive to let them overwrite it"
        ),
    }
}

fn stack_cache(c: &Caveat) -> String {
    let Caveat::StackCache {
        device,
        layer,
        cache,
        backing,
        file_system,
    } = c
    else {
        return String::new();
    };
    let through = match layer == device {
        true => String::new(),
        false => format!("{device} sits on {layer}, and "),
    };
    let file = backing.as_deref().unwrap_or("its backing file");
    match cache {
        StackCache::PageCache => format!(
            "{through}{layer} reads {file} through the page cache (loop direct I/O is off), so figures may be memory speed; attach it with `losetup --direct-io=on` to measure the medium"
        ),
        StackCache::Memory => format!(
            "{through}{layer} keeps its data in {file}, on {} in RAM, so the figures are memory speed, not a storage device's",
            file_system.as_deref().unwrap_or("a memory file system")
        ),
        StackCache::DmCache | StackCache::Bcache => format!(
            "{through}{layer} is {}: what its fast device answers never reaches the slow one beneath, so figures may be the cache's",
            cache.describe()
        ),
    }
}

fn simulated(card: &SimulatedCard) -> String {
    format!(
        "simulated card, times on its virtual clock: {} claimed, {} real{}, AU {}, page {}, {} open AUs, cache {}{}",
        format_size(card.claimed_bytes),
        format_size(card.real_bytes),
        card.beyond
            .as_deref()
            .map_or(String::new(), |b| format!(" ({b} beyond)")),
        format_size(card.au_bytes),
        format_size(card.page_bytes),
        card.open_au,
        format_size(card.cache_bytes),
        card.move_mb_per_s
            .map_or(String::new(), |m| format!(", move {m:.1} MB/s")),
    )
}

fn preserved(c: &Caveat) -> String {
    let Caveat::Preserved {
        bytes,
        save_s,
        restore_s,
        kept_bytes,
    } = c
    else {
        return String::new();
    };
    let kept = match kept_bytes {
        0 => String::new(),
        n => format!(
            "; {} written there since the test by another program were left as they are",
            format_size(*n)
        ),
    };
    format!(
        "the original {} of the test region were restored, read back and verified ({save_s:.1} s saving, {restore_s:.1} s restoring, not counted in any figure){kept}",
        format_size(*bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caveat_reads_with_its_label_and_figures() {
        let c = Caveat::PagesResident {
            resident_pages: 7,
            total_pages: 8,
        };
        assert_eq!(
            line(&c),
            "CACHE: 7 of 8 pages of the region stayed in the page cache after eviction; buffered read figures include memory speed"
        );
        let cut = Caveat::AreaCut {
            span_bytes: 64 << 20,
            by: CutBy::TimeLimit { limit_s: 30 },
        };
        assert_eq!(
            line(&cut),
            "test area cut to 64 MiB: the preparation pass stopped after 30 s on this slow device"
        );
    }

    #[test]
    fn a_stored_caveat_is_shown_as_stored() {
        let c = Caveat::Stored("MEMORY: in RAM".into());
        assert_eq!(line(&c), "MEMORY: in RAM");
        assert_eq!(sentence(&c), "in RAM");
        assert_eq!(c.kind(), CaveatKind::Memory);
    }
}
