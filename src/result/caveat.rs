//! Caveats: what the reader must know about a figure before trusting it
//! (a cache answered, the file system lives in RAM, the card is simulated,
//! the test region was restored), as a closed set with the figures each
//! one was found with.
//!
//! The result holds no sentence: each caveat is a variant with its numbers
//! and the names it concerns (devices, paths), and `report::caveats` words
//! it, alike for every output. Its [`CaveatKind`] decides how a report
//! treats it (the HTML report marks the ones that make a figure not the
//! medium's speed).
//!
//! Runs stored by earlier releases kept each caveat as one string
//! (`"KIND: text"`, or the bare text for a plain note); such a string reads
//! back as [`Caveat::Stored`], shown as it was stored and written back the
//! same, its kind recovered from the label.

use crate::probe::block::StackCache;
use serde::{Deserialize, Serialize};

/// What sort of caveat it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaveatKind {
    /// A cache (page cache, a loop device's backing file, the device's own
    /// cache) answered: the figure is not the medium's speed.
    Cache,
    /// The file system keeps its files in RAM: the figure is memory speed.
    Memory,
    /// The target is a simulated card on a virtual clock.
    Simulated,
    /// The original data of the test region was saved and put back.
    Preserved,
    /// A choice made or a limit met.
    Note,
}

impl CaveatKind {
    /// Every kind that carries a label, in the order labels are tried.
    pub const LABELLED: [CaveatKind; 4] = [
        CaveatKind::Cache,
        CaveatKind::Memory,
        CaveatKind::Simulated,
        CaveatKind::Preserved,
    ];

    /// True when the figure it qualifies is not the storage medium's speed.
    pub fn undermines_figure(self) -> bool {
        matches!(self, CaveatKind::Cache | CaveatKind::Memory)
    }
}

/// Why the preparation pass wrote less than the test area.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum CutBy {
    /// The pass ran into its time limit on a slow device.
    TimeLimit {
        /// The limit, seconds.
        limit_s: u64,
    },
    /// The run was interrupted during the pass.
    Interrupted,
}

/// What a simulated card was made of, as far as a reader needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SimulatedCard {
    /// Capacity the card claims, bytes.
    pub claimed_bytes: u64,
    /// Bytes that really exist.
    pub real_bytes: u64,
    /// What happens beyond the real bytes (`wrap`, `zeros`, `stale`,
    /// `eio`); null on a genuine card.
    pub beyond: Option<String>,
    /// Allocation unit, bytes.
    pub au_bytes: u64,
    /// Program page, bytes.
    pub page_bytes: u64,
    /// AUs open for writing at once.
    pub open_au: u32,
    /// Write cache, bytes (0: none).
    pub cache_bytes: u64,
    /// Move speed, MB/s; null when not set.
    pub move_mb_per_s: Option<f64>,
}

/// One caveat, with the figures it was found with. Strings in it are names
/// from outside (devices, paths, file systems), OS error text, or the
/// words of the safety check (made in `medium`/`safety`, not here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "caveat", rename_all = "snake_case")]
pub enum Caveat {
    /// The block device served fewer bytes than iocurve read: a cache
    /// answered the rest.
    CacheServed {
        /// Kernel name of the device counted.
        device: String,
        /// Bytes the device delivered.
        device_read_bytes: u64,
        /// Bytes iocurve read.
        iocurve_read_bytes: u64,
        /// Share of iocurve's reads the device did not see, percent.
        served_pct: f64,
    },
    /// posix_fadvise could not drop the region from the page cache.
    EvictionFailed {
        /// The OS's error text.
        os_error: String,
    },
    /// Pages of the region stayed in the page cache after eviction.
    PagesResident {
        /// Pages still resident.
        resident_pages: u64,
        /// Pages of the region.
        total_pages: u64,
    },
    /// mincore could not show the eviction.
    EvictionUnproved {
        /// The OS's error text.
        os_error: String,
    },
    /// The file system keeps its files in RAM (tmpfs, ramfs).
    MemoryFileSystem,
    /// A layer of the target's stack caches what it serves.
    StackCache {
        /// The target's device.
        device: String,
        /// The layer with the cache (the device itself or one beneath).
        layer: String,
        /// What caches there.
        cache: StackCache,
        /// The layer's backing file or members, when known.
        #[serde(default)]
        backing: Option<String>,
        /// The file system holding a loop device's file in RAM.
        #[serde(default)]
        file_system: Option<String>,
    },
    /// The target is a simulated card.
    Simulated(SimulatedCard),
    /// The test region was saved, and put back and verified after the test.
    Preserved {
        /// Bytes of the test region.
        bytes: u64,
        /// Time saving them, seconds (not in any figure).
        save_s: f64,
        /// Time restoring them, seconds (not in any figure).
        restore_s: f64,
        /// Bytes another program wrote there since the test, left as they
        /// are.
        #[serde(default)]
        kept_bytes: u64,
    },
    /// The path no longer names what was tested (renamed or replaced while
    /// the test ran); nothing was written to what it names now.
    NameMoved {
        /// The path as given.
        path: String,
    },
    /// The journal stayed after a verified restore.
    JournalLeft {
        /// Which journal and why it stayed, in the safety check's words.
        safety_words: String,
    },
    /// The test area was cut short because the preparation pass stopped.
    AreaCut {
        /// The span measured, bytes.
        span_bytes: u64,
        /// Why the pass stopped.
        by: CutBy,
    },
    /// Reads only: the test area was not written first.
    AreaNotWritten,
    /// The scratch file is smaller than asked: the file system is short of
    /// space.
    ScratchShrunk {
        /// The scratch file's size, bytes.
        size_bytes: u64,
        /// The size asked, bytes.
        requested_bytes: u64,
        /// Free bytes on the file system.
        free_bytes: u64,
    },
    /// `files`: files go through the file system and the page cache.
    FilesThroughPageCache,
    /// No single block device beneath the directory: no request counts.
    NoBlockDevice,
    /// Another target was measured at the same time.
    AlsoMeasured {
        /// The other target's path.
        path: String,
    },
    /// Write tests were skipped: not allowed to write.
    WritesSkipped {
        /// The target's path.
        path: String,
        /// What uses the device, in the safety check's words; null when it
        /// is free (then `--preserve` or `--destructive` would allow them).
        #[serde(default)]
        busy: Option<String>,
    },
    /// Write tests were skipped: `--read-only`.
    WritesSkippedReadOnly,
    /// Reading the written data back failed.
    VerifyFailed {
        /// The OS's error text.
        os_error: String,
    },
    /// fdatasync after the writes failed.
    SyncFailed {
        /// The OS's error text.
        os_error: String,
    },
    /// io_uring could not register what it would have: plain ones used.
    UringUnregistered {
        /// The buffers were registered.
        buffers: bool,
        /// The file was registered.
        file: bool,
    },
    /// An imported fio job reported no runtime.
    FioNoRuntime,
    /// The run was imported from fio's JSON output.
    FioImported {
        /// fio's version string.
        version: String,
    },
    /// Imported fio jobs whose span is unknown (recorded as 0).
    FioSpanUnknown {
        /// The jobs' names.
        jobs: Vec<String>,
    },
    /// A caveat as a run of an earlier release stored it: `"KIND: text"`
    /// or a plain sentence, shown as stored.
    #[serde(untagged)]
    Stored(String),
}

/// Why a test or a curve was not measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "skipped", rename_all = "snake_case")]
pub enum SkipReason {
    /// `--read-only` was given.
    ReadOnly,
    /// Writes were not allowed on the target.
    WritesNotAllowed {
        /// The target's path.
        path: String,
        /// What uses the device, in the safety check's words; null when it
        /// is free (then `--preserve` or `--destructive` would allow them).
        #[serde(default)]
        busy: Option<String>,
    },
    /// One rank of a job of several skipped it.
    OnRank {
        /// The rank.
        rank: u32,
        /// Its host's name.
        host: String,
        /// Its reason.
        reason: Box<SkipReason>,
    },
    /// A reason as a run of an earlier release stored it, shown as stored.
    #[serde(untagged)]
    Stored(String),
}

impl SkipReason {
    /// The caveat a run that skipped its writes carries.
    pub fn caveat(&self) -> Caveat {
        match self {
            SkipReason::WritesNotAllowed { path, busy } => Caveat::WritesSkipped {
                path: path.clone(),
                busy: busy.clone(),
            },
            SkipReason::OnRank { reason, .. } => reason.caveat(),
            _ => Caveat::WritesSkippedReadOnly,
        }
    }
}

impl Caveat {
    /// How reports treat it.
    pub fn kind(&self) -> CaveatKind {
        match self {
            Caveat::CacheServed { .. } | Caveat::PagesResident { .. } => CaveatKind::Cache,
            Caveat::StackCache { cache, .. } => match cache {
                StackCache::Memory => CaveatKind::Memory,
                _ => CaveatKind::Cache,
            },
            Caveat::MemoryFileSystem => CaveatKind::Memory,
            Caveat::Simulated(_) => CaveatKind::Simulated,
            Caveat::Preserved { .. } => CaveatKind::Preserved,
            Caveat::Stored(s) => stored_kind(s).0,
            _ => CaveatKind::Note,
        }
    }
}

/// The label earlier releases put before a caveat's text.
pub fn stored_label(kind: CaveatKind) -> Option<&'static str> {
    match kind {
        CaveatKind::Cache => Some("CACHE"),
        CaveatKind::Memory => Some("MEMORY"),
        CaveatKind::Simulated => Some("SIMULATED"),
        CaveatKind::Preserved => Some("PRESERVED"),
        CaveatKind::Note => None,
    }
}

/// Reads a stored caveat's label: a known label before `": "` gives the
/// kind and the text after it; anything else is a plain note, kept whole.
pub fn stored_kind(stored: &str) -> (CaveatKind, &str) {
    for kind in CaveatKind::LABELLED {
        let label = stored_label(kind).unwrap_or_default();
        if let Some(text) = stored
            .strip_prefix(label)
            .and_then(|rest| rest.strip_prefix(": "))
        {
            return (kind, text);
        }
    }
    (CaveatKind::Note, stored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_caveat_stores_its_figures_and_reads_back() {
        let c = Caveat::PagesResident {
            resident_pages: 7,
            total_pages: 8,
        };
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"caveat": "pages_resident", "resident_pages": 7, "total_pages": 8})
        );
        assert_eq!(serde_json::from_value::<Caveat>(json).unwrap(), c);
        assert_eq!(c.kind(), CaveatKind::Cache);
        let unit = serde_json::to_value(Caveat::MemoryFileSystem).unwrap();
        assert_eq!(unit, serde_json::json!({"caveat": "memory_file_system"}));
        assert_eq!(
            serde_json::from_value::<Caveat>(unit).unwrap(),
            Caveat::MemoryFileSystem
        );
    }

    #[test]
    fn an_old_labelled_string_is_stored_with_its_kind() {
        let back: Caveat = serde_json::from_str("\"CACHE: the page cache answered\"").unwrap();
        assert_eq!(
            back,
            Caveat::Stored("CACHE: the page cache answered".into())
        );
        assert_eq!(back.kind(), CaveatKind::Cache);
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            "\"CACHE: the page cache answered\""
        );
    }

    #[test]
    fn a_word_in_capitals_without_the_separator_is_not_a_label() {
        for text in [
            "CACHE without colon",
            "CACHES: plural",
            "MEMORY:no space",
            "cache: lower",
        ] {
            assert_eq!(stored_kind(text), (CaveatKind::Note, text), "{text}");
        }
    }

    #[test]
    fn only_cache_and_memory_undermine_a_figure() {
        let undermining: Vec<_> = CaveatKind::LABELLED
            .into_iter()
            .chain([CaveatKind::Note])
            .filter(|k| k.undermines_figure())
            .collect();
        assert_eq!(undermining, [CaveatKind::Cache, CaveatKind::Memory]);
    }

    proptest! {
        /// Any stored string reads back to a caveat that stores the same string.
        #[test]
        fn every_stored_string_round_trips(stored in ".{0,80}") {
            let c: Caveat = serde_json::from_value(serde_json::Value::String(stored.clone())).unwrap();
            prop_assert_eq!(serde_json::to_value(&c).unwrap(), serde_json::Value::String(stored));
        }
    }
}
