//! What the test wrote, block by block: at the end of a test, before
//! anything is written back, every 4 KiB block of the journalled regions is
//! read from the medium and hashed, and the table is stored after the data
//! and fsynced before the state turns `WRITTEN`. A restore (the test's own,
//! or a `recover` long after) then writes back only blocks that still hold
//! the test's bytes: a block written since (by the user, after a crash)
//! keeps its newer data.
//!
//! The hash is 64 bits wide (a CRC-32C pair would not do: two CRCs of the
//! same bytes under different seeds differ by a constant, so the second
//! adds nothing), four multiply-rotate lanes over 8-byte words seeded with
//! the block's offset, so a block moved elsewhere does not match. It only
//! has to tell apart bytes that happen to be written, not resist an
//! adversary: whoever can write the medium can write it anyway.
//!
//! Layout from the table offset (the end of the data, rounded up to 4096):
//! one little-endian u64 per block in region order, then a 32-byte trailer:
//! magic `IOCJHASH`, block count (u64), CRC-32C of the table (u32), zeros.

use super::{JournalError, Meta, Region};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The unit of the table: what O_DIRECT writes and file systems allocate.
pub const BLOCK: u64 = 4096;
const MAGIC: &[u8; 8] = b"IOCJHASH";
const TRAILER: usize = 32;
const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;

/// The hash of one block's bytes at medium offset `offset`.
pub fn block_hash(offset: u64, data: &[u8]) -> u64 {
    let mut lanes = [
        offset ^ P1,
        offset.rotate_left(17) ^ P2,
        !offset,
        offset.wrapping_mul(P1) ^ data.len() as u64,
    ];
    let mut words = data.chunks_exact(32);
    for c in &mut words {
        for (i, lane) in lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(c[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            *lane = (*lane ^ w)
                .wrapping_mul(P2)
                .rotate_left(31)
                .wrapping_mul(P1);
        }
    }
    for (i, b) in words.remainder().iter().enumerate() {
        let lane = &mut lanes[i % 4];
        *lane = (*lane ^ u64::from(*b)).wrapping_mul(P1).rotate_left(23);
    }
    let mut h = lanes[0].rotate_left(1)
        ^ lanes[1].rotate_left(7)
        ^ lanes[2].rotate_left(12)
        ^ lanes[3].rotate_left(18);
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P1);
    h ^ (h >> 32)
}

/// The blocks of `regions`, each as (medium offset, length): 4 KiB steps
/// from each region's start, the last one shorter where a region ends
/// unaligned (a file's tail).
pub fn blocks(regions: &[Region]) -> impl Iterator<Item = (u64, u64)> + '_ {
    regions.iter().flat_map(|r| {
        (0..r.length.div_ceil(BLOCK)).map(move |i| {
            let at = i * BLOCK;
            (r.offset + at, BLOCK.min(r.length - at))
        })
    })
}

pub fn block_count(regions: &[Region]) -> usize {
    regions
        .iter()
        .map(|r| r.length.div_ceil(BLOCK) as usize)
        .sum()
}

/// Where the table starts in the journal.
pub fn table_offset(meta: &Meta, data_offset: u64) -> u64 {
    (data_offset + meta.total_bytes()).next_multiple_of(BLOCK)
}

/// Where the table and its trailer end.
pub fn table_end(meta: &Meta, data_offset: u64) -> u64 {
    table_offset(meta, data_offset) + 8 * block_count(&meta.regions) as u64 + TRAILER as u64
}

/// Writes the table and its trailer at `at` and fsyncs.
pub fn write_table(file: &File, at: u64, table: &[u64]) -> io::Result<()> {
    let mut bytes = Vec::with_capacity(table.len() * 8 + TRAILER);
    for h in table {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    let crc = crc32c::crc32c(&bytes);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(table.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes.resize(table.len() * 8 + TRAILER, 0);
    file.write_all_at(&bytes, at)?;
    file.sync_all()
}

/// Reads and checks the table of `count` blocks at `at`.
pub fn read_table(file: &File, at: u64, count: usize) -> Result<Vec<u64>, JournalError> {
    let mut bytes = vec![0u8; count * 8 + TRAILER];
    file.read_exact_at(&mut bytes, at)
        .map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => {
                JournalError::Truncated("its table of hashes is cut short".into())
            }
            _ => JournalError::Io(e),
        })?;
    let (table, trailer) = bytes.split_at(count * 8);
    let counted = u64::from_le_bytes(trailer[8..16].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(trailer[16..20].try_into().expect("4 bytes"));
    if &trailer[0..8] != MAGIC || counted != count as u64 || crc != crc32c::crc32c(table) {
        return Err(JournalError::Corrupt(
            "its table of hashes is damaged".into(),
        ));
    }
    Ok(table
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_bit_or_another_place_changes_the_hash() {
        let mut rng = fastrand::Rng::with_seed(7);
        let data: Vec<u8> = (0..4096).map(|_| rng.u8(..)).collect();
        let h = block_hash(8192, &data);
        assert_ne!(h, block_hash(4096, &data), "the offset is in the hash");
        for at in [0, 1, 31, 32, 4000, 4095] {
            let mut d = data.clone();
            d[at] ^= 0x01;
            assert_ne!(h, block_hash(8192, &d), "bit at {at}");
        }
        assert_ne!(
            block_hash(0, &[0; 10]),
            block_hash(0, &[0; 11]),
            "length too"
        );
    }

    #[test]
    fn blocks_step_by_4k_and_end_with_the_region() {
        let r = [Region {
            offset: 4096,
            length: 9000,
        }];
        let b: Vec<_> = blocks(&r).collect();
        assert_eq!(b, [(4096, 4096), (8192, 4096), (12288, 808)]);
        assert_eq!(block_count(&r), 3);
    }

    #[test]
    fn the_table_reads_back_and_damage_is_caught() {
        let (_dir, f) = crate::safety::scratch::empty_open("t");
        let table = vec![1, u64::MAX, 42];
        write_table(&f, 4096, &table).unwrap();
        assert_eq!(read_table(&f, 4096, 3).unwrap(), table);
        assert!(read_table(&f, 4096, 2).is_err(), "count is checked");
        f.write_all_at(&[9], 4096 + 9).unwrap();
        assert!(matches!(
            read_table(&f, 4096, 3),
            Err(JournalError::Corrupt(_))
        ));
    }
}
