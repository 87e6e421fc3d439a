//! The journal: a crash-proof copy of the bytes a write test will overwrite.
//!
//! The method is write-ahead logging reduced to one transaction. Before the
//! first benchmark write, the original bytes are copied into a journal file
//! on another file system, with a header naming the medium, the regions and a
//! CRC-32C (Castagnoli) checksum per chunk; everything is fsynced, and only
//! then is one header field turned from `FILLING` to `ARMED` and fsynced
//! again. That single small write is the commit point:
//!
//! - no journal, or one still `FILLING`: the medium was never written by the
//!   benchmark, and the journal is simply discarded;
//! - `ARMED`: the medium may hold benchmark data; writing the chunks back
//!   restores it, but only where nothing wrote to the medium after the
//!   test: the heartbeat block ([`beat`]) says when the test last wrote;
//! - `WRITTEN`: the test is over and what it wrote is in the table of
//!   hashes after the data ([`hashes`]); a restore writes back only the
//!   blocks that still hold those bytes, any number of times;
//! - `DONE`: the restore was written, read back and verified; the file only
//!   waits to be deleted.
//!
//! Layout (little-endian):
//!
//! ```text
//! 0   8  magic "IOCJRNL1"
//! 8   8  state: "FILLING\0" | "ARMED\0\0\0" | "WRITTEN\0" | "DONE\0\0\0\0"
//! 16  8  length of the metadata
//! 24  8  offset of the data (a multiple of 4096)
//! 32  4  CRC-32C of the metadata
//! 36  4  CRC-32C of bytes 0..8, 16..36 and 40..64 (all but state and itself)
//! 40 24  reserved, zero
//! 64  …  metadata: JSON (format, identity, regions, chunk size, checksums)
//! data-4096  the heartbeat block (format 2 on)
//! data   the chunks, in region order
//! table  (WRITTEN) one 64-bit hash per 4 KiB block, then its trailer
//! ```
//!
//! Each chunk's checksum covers its target offset and its bytes, so a chunk
//! moved to the wrong place is caught as surely as a flipped bit. The states
//! are whole 8-byte words, so no single damaged byte turns one into another.
//! A reader checks the prefix, the metadata and, before anything is written
//! to the medium, every chunk: a damaged or truncated journal is refused
//! whole and never half applied.
//!
//! This file holds the layout (the prefix, the states, the metadata and how
//! regions are cut into chunks); `writer` makes a journal and `reader`
//! reads one back and checks it.

pub mod beat;
pub mod hashes;
mod reader;
mod writer;

pub use beat::{BEAT_ROOM, Beat};
pub use reader::{Journal, open_file};
pub use writer::{JournalWriter, set_state, sync_dir};

use crate::safety::identity::Identity;
use serde::{Deserialize, Serialize};
use std::io;

pub const MAGIC: &[u8; 8] = b"IOCJRNL1";
/// The metadata format written now: 2 adds the strong identity (birth
/// time, inode generation, loop backing), the heartbeat block before the
/// data and the `WRITTEN` state with its table of hashes. Format 1
/// journals are still read and recovered.
pub const FORMAT: u32 = 2;
/// Bytes before the metadata.
pub const PREFIX_LEN: u64 = 64;
const STATE_OFFSET: u64 = 8;
/// Journal files end in this.
pub const EXTENSION: &str = "iocj";
/// A journal being made, before it is locked and named (never looked at
/// by `recover`; a crash right there leaves one behind, empty of data).
pub const MAKING_EXTENSION: &str = "iocj-new";
/// Chunk size of the copy: one checksum per MiB.
pub const CHUNK: u64 = 1 << 20;
/// Data starts at a multiple of this.
const DATA_ALIGN: u64 = 4096;

/// Where a journal is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Being written; the medium has not been touched.
    Filling,
    /// Complete and fsynced; the medium may hold benchmark data.
    Armed,
    /// The test is over and what it wrote is in the table of hashes
    /// (fsynced): a restore writes back only blocks that still hold it.
    Written,
    /// Restored and verified; waiting to be deleted.
    Done,
}

const STATES: [State; 4] = [State::Filling, State::Armed, State::Written, State::Done];

impl State {
    fn word(self) -> [u8; 8] {
        match self {
            State::Filling => *b"FILLING\0",
            State::Armed => *b"ARMED\0\0\0",
            State::Written => *b"WRITTEN\0",
            State::Done => *b"DONE\0\0\0\0",
        }
    }

    fn from_word(word: &[u8]) -> Option<State> {
        STATES.into_iter().find(|s| s.word() == word)
    }

    pub fn name(self) -> &'static str {
        match self {
            State::Filling => "filling",
            State::Armed => "armed",
            State::Written => "written",
            State::Done => "done",
        }
    }
}

/// A byte range of the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    pub offset: u64,
    pub length: u64,
}

/// The journal's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub format: u32,
    pub iocurve_version: String,
    pub created_at: String,
    pub pid: u32,
    pub identity: Identity,
    pub chunk_size: u64,
    pub regions: Vec<Region>,
    /// One CRC-32C per chunk, in region order.
    pub checksums: Vec<u32>,
    /// Which journal of its test this is: 0 for the first, then one more
    /// for each later extension (regions a detector learned it must write
    /// while running). A test's journals are written back latest first.
    /// Absent, and so 0, in a test's only journal.
    #[serde(default, skip_serializing_if = "is_first")]
    pub part: u32,
}

fn is_first(part: &u32) -> bool {
    *part == 0
}

/// One chunk: where it belongs on the medium and where it is in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub index: usize,
    pub target_offset: u64,
    pub len: u64,
    pub journal_offset: u64,
}

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not an iocurve journal (wrong magic)")]
    NotAJournal,
    #[error("the journal is truncated: {0}")]
    Truncated(String),
    #[error("the journal is damaged: {0}")]
    Corrupt(String),
}

/// The checksum of a chunk: CRC-32C of its target offset, then its bytes.
pub fn chunk_checksum(target_offset: u64, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&target_offset.to_le_bytes()), data)
}

/// The chunks of `regions`, split at `chunk_size`, laid out from `data_offset`.
pub fn chunks(regions: &[Region], chunk_size: u64, data_offset: u64) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut journal_offset = data_offset;
    for r in regions {
        let mut done = 0;
        while done < r.length {
            let len = chunk_size.min(r.length - done);
            out.push(Chunk {
                index: out.len(),
                target_offset: r.offset + done,
                len,
                journal_offset,
            });
            journal_offset += len;
            done += len;
        }
    }
    out
}

impl Meta {
    pub fn total_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.length).sum()
    }

    pub fn chunk_count(&self) -> usize {
        chunks(&self.regions, self.chunk_size, 0).len()
    }

    /// Where the data starts: after the longest metadata these regions can
    /// have (every checksum at its widest), rounded up to 4096, and (format
    /// 2 on) the heartbeat block.
    pub fn data_offset(&self) -> u64 {
        let mut widest = self.clone();
        widest.checksums = vec![u32::MAX; self.chunk_count()];
        let len = serde_json::to_vec(&widest).map_or(0, |v| v.len() as u64);
        (PREFIX_LEN + len + 1).div_ceil(DATA_ALIGN) * DATA_ALIGN + self.beat_room()
    }

    fn beat_room(&self) -> u64 {
        if self.format >= 2 { BEAT_ROOM } else { 0 }
    }

    /// Where the heartbeat block is, in a journal that has one.
    pub fn beat_offset(&self, data_offset: u64) -> Option<u64> {
        (self.format >= 2).then(|| data_offset - BEAT_ROOM)
    }
}

fn prefix(state: State, meta_len: u64, data_offset: u64, meta_crc: u32) -> [u8; 64] {
    let mut p = [0u8; 64];
    p[0..8].copy_from_slice(MAGIC);
    p[8..16].copy_from_slice(&state.word());
    p[16..24].copy_from_slice(&meta_len.to_le_bytes());
    p[24..32].copy_from_slice(&data_offset.to_le_bytes());
    p[32..36].copy_from_slice(&meta_crc.to_le_bytes());
    let crc = prefix_crc(&p);
    p[36..40].copy_from_slice(&crc.to_le_bytes());
    p
}

/// The checksum of the prefix, state word and checksum field left out.
fn prefix_crc(p: &[u8]) -> u32 {
    let head = crc32c::crc32c_append(crc32c::crc32c(&p[0..8]), &p[16..36]);
    crc32c::crc32c_append(head, &p[40..64])
}

fn u64_at(p: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(p[at..at + 4].try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample_meta(regions: Vec<Region>, chunk_size: u64) -> Meta {
        let identity = Identity {
            path: "/dev/loop9".into(),
            kind: "block_device".into(),
            major: 7,
            minor: 9,
            inode: None,
            size: 64 << 20,
            model: None,
            serial: Some("S1".into()),
            loop_backing_file: Some("/tmp/x.img".into()),
            cid: None,
            ..Identity::default()
        };
        Meta {
            format: 1,
            iocurve_version: "0.1.0".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            pid: 1,
            identity,
            chunk_size,
            regions,
            checksums: Vec::new(),
            part: 0,
        }
    }

    #[test]
    fn chunks_split_regions_and_follow_each_other() {
        let regions = [
            Region {
                offset: 4096,
                length: 10_000,
            },
            Region {
                offset: 1 << 20,
                length: 4096,
            },
        ];
        let c = chunks(&regions, 4096, 8192);
        let summary: Vec<(u64, u64, u64)> = c
            .iter()
            .map(|c| (c.target_offset, c.len, c.journal_offset))
            .collect();
        assert_eq!(
            summary,
            [
                (4096, 4096, 8192),
                (8192, 4096, 12288),
                (12288, 1808, 16384),
                (1 << 20, 4096, 18192)
            ]
        );
    }

    #[test]
    fn states_differ_in_every_byte_that_matters() {
        for a in STATES {
            for b in STATES {
                let diff = a
                    .word()
                    .iter()
                    .zip(b.word())
                    .filter(|(x, y)| **x != *y)
                    .count();
                assert!(a == b || diff >= 2, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn data_offset_leaves_room_for_any_checksums() {
        let meta = sample_meta(
            vec![Region {
                offset: 0,
                length: 1 << 30,
            }],
            CHUNK,
        );
        let off = meta.data_offset();
        assert_eq!(off % 4096, 0);
        let mut full = meta.clone();
        full.checksums = vec![4_000_000_000; 1024];
        assert!(PREFIX_LEN + serde_json::to_vec(&full).unwrap().len() as u64 <= off);
    }
}
