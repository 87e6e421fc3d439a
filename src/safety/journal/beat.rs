//! The heartbeat of a running test, kept in the journal (format 2 on): when
//! it last wrote, and how far the target had been changed by then. A test
//! killed mid-run leaves no table of what it wrote (see [`super::hashes`]),
//! so `recover` compares the target with the last beat instead: a target
//! changed well after the test's last sign of life was written by someone
//! else since, and the journal's originals would destroy that.
//!
//! The beats live in the 4 KiB block just before the data, outside every
//! checksum of the journal proper, in two 512-byte slots written in turn
//! (so a torn write leaves the other one whole), each: magic `IOCJBEAT`,
//! the JSON length (u32) and its CRC-32C (u32), then the JSON. They are
//! written without fsync: they must survive a kill, which the page cache
//! does; after a power loss the boot differs and nothing is told by them.

use crate::safety::birth::Stamp;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The room the beats take before the data.
pub const BEAT_ROOM: u64 = 4096;
const SLOT: u64 = 512;
const MAGIC: &[u8; 8] = b"IOCJBEAT";

/// One beat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Beat {
    pub seq: u64,
    /// The wall clock when it beat.
    pub wall: Stamp,
    /// A regular file target's ctime then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctime: Option<Stamp>,
    /// A block device's sectors written since boot (`/sys/.../stat`) then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sectors: Option<u64>,
    /// The beat before, for the rate the test was writing at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev_wall: Option<Stamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev_sectors: Option<u64>,
    /// The fastest the test wrote between two beats so far, sectors/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rate: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id`: counters only compare within a boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
}

/// Writes `beat` into its slot of the beat block at `room` (no fsync).
pub fn write_beat(file: &File, room: u64, beat: &Beat) -> io::Result<()> {
    let json = serde_json::to_vec(beat).map_err(io::Error::other)?;
    if json.len() as u64 > SLOT - 16 {
        return Err(io::Error::other("a heartbeat outgrew its slot"));
    }
    let mut slot = Vec::with_capacity(SLOT as usize);
    slot.extend_from_slice(MAGIC);
    slot.extend_from_slice(&(json.len() as u32).to_le_bytes());
    slot.extend_from_slice(&crc32c::crc32c(&json).to_le_bytes());
    slot.extend_from_slice(&json);
    slot.resize(SLOT as usize, 0);
    file.write_all_at(&slot, room + (beat.seq % 2) * SLOT)
}

/// The latest whole beat at `room`, if any.
pub fn last_beat(file: &File, room: u64) -> Option<Beat> {
    (0..2)
        .filter_map(|i| read_slot(file, room + i * SLOT))
        .max_by_key(|b| b.seq)
}

fn read_slot(file: &File, at: u64) -> Option<Beat> {
    let mut slot = [0u8; SLOT as usize];
    file.read_exact_at(&mut slot, at).ok()?;
    let len = u32::from_le_bytes(slot[8..12].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(slot[12..16].try_into().ok()?);
    let json = slot.get(16..16 + len)?;
    if &slot[0..8] != MAGIC || crc32c::crc32c(json) != crc {
        return None;
    }
    serde_json::from_slice(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(seq: u64) -> Beat {
        Beat {
            seq,
            wall: Stamp {
                sec: 1_700_000_000 + seq as i64,
                nsec: 5,
            },
            ctime: Some(Stamp { sec: 1, nsec: 2 }),
            sectors: None,
            prev_wall: None,
            prev_sectors: None,
            peak_rate: None,
            boot_id: Some("0b7f3c3e-3c1a-4a6e-9d1e-8f3b2a1c0d9e".into()),
        }
    }

    #[test]
    fn the_latest_whole_beat_wins_and_a_torn_one_is_passed_over() {
        let (_dir, f) = crate::safety::scratch::empty_open("j");
        assert_eq!(last_beat(&f, 4096), None);
        for seq in 1..=3 {
            write_beat(&f, 4096, &beat(seq)).unwrap();
        }
        assert_eq!(last_beat(&f, 4096), Some(beat(3)));
        // Seq 3 sits in slot 1: tear it, and seq 2 in slot 0 is the last.
        f.write_all_at(&[0xFF], 4096 + SLOT + 20).unwrap();
        assert_eq!(last_beat(&f, 4096), Some(beat(2)));
    }
}
