//! Writing a journal back block by block (4 KiB): a block is written only
//! where it still holds what the test wrote (its hash in the journal's
//! table, see [`crate::safety::journal::hashes`]), skipped where it holds
//! the original already, and left as found where it holds neither: it was
//! written since the test, and that newer data is not the journal's to
//! destroy. A journal written back whole (format 1, nothing to tell by,
//! `--force`) writes every block. Then the medium is read back past the
//! page cache and every block written or skipped must equal the original.

use super::hooks::test_delay;
use super::medium::{read_medium, read_scratch, write_back};
use super::restore_error::RestoreError;
use crate::safety::journal::hashes::{BLOCK, block_hash};
use crate::safety::journal::{Chunk, Journal};
use crate::sys::buffer::AlignedBuf;
use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::path::Path;

/// What the write-back did, in bytes.
#[derive(Debug, Default, Clone)]
pub(super) struct Tally {
    pub written: u64,
    pub unchanged: u64,
    pub kept: u64,
    /// The medium offsets of the blocks left as found.
    pub kept_blocks: HashSet<u64>,
}

/// The table's entry for a block the medium would not give back: written
/// back like the test's bytes, as before there were tables (a real hash
/// of 0 only costs a block written with its originals).
const UNREADABLE: u64 = 0;

/// Reads the journalled regions through `reader` and hashes each block:
/// what the test wrote, taken before anything is written back. A chunk the
/// medium will not give back (a failing device) gets [`UNREADABLE`].
pub(super) fn hash_test_bytes(journal: &Journal, reader: &File) -> io::Result<Vec<u64>> {
    let chunk = journal.meta.as_ref().map_or(BLOCK, |m| m.chunk_size);
    let mut scratch = read_scratch(chunk);
    let mut buf = vec![0u8; chunk as usize];
    let mut table = Vec::new();
    for c in journal.chunks() {
        let data = &mut buf[..c.len as usize];
        let read = read_medium(reader, &mut scratch, c.target_offset, data);
        for (i, block) in data.chunks(BLOCK as usize).enumerate() {
            table.push(match read {
                Ok(()) => block_hash(c.target_offset + i as u64 * BLOCK, block),
                Err(_) => UNREADABLE,
            });
        }
    }
    Ok(table)
}

/// Writes `journal` back through `writer`: block by block against
/// `hashes`, or whole where there are none; then fsyncs.
pub(super) fn write_blocks(
    journal: &Journal,
    writer: &File,
    reader: &File,
    name: &Path,
    hashes: Option<&[u64]>,
) -> Result<Tally, RestoreError> {
    let chunks = journal.chunks();
    let size = chunks
        .iter()
        .map(|c| c.len)
        .max()
        .unwrap_or(BLOCK)
        .max(BLOCK) as usize;
    let mut orig = AlignedBuf::new(size.next_multiple_of(4096), 4096);
    let mut now = vec![0u8; size];
    let mut scratch = read_scratch(size as u64);
    let (mut tally, mut index) = (Tally::default(), 0);
    for c in &chunks {
        test_delay();
        journal.read_chunk(c, orig.as_mut_slice())?;
        let original = &orig.as_slice()[..c.len as usize];
        let current = &mut now[..c.len as usize];
        // A chunk the medium will not give back is written whole.
        let readable =
            hashes.is_some() && read_medium(reader, &mut scratch, c.target_offset, current).is_ok();
        let known = hashes.filter(|_| readable);
        let wanted = decide(c, original, current, known, &mut index, &mut tally);
        for (from, to) in runs(&wanted) {
            let (a, b) = (
                from * BLOCK as usize,
                (to * BLOCK as usize).min(original.len()),
            );
            write_back(writer, &original[a..b], c.target_offset + a as u64, reader)
                .map_err(|e| medium_error("write", c, name, e))?;
        }
    }
    writer.sync_all().map_err(|e| {
        let msg = format!(
            "flushing the restored data to {} failed: {e}",
            name.display()
        );
        RestoreError::Medium(msg, e)
    })?;
    Ok(tally)
}

/// Which blocks of chunk `c` to write, counting the others in `tally`.
fn decide(
    c: &Chunk,
    original: &[u8],
    current: &[u8],
    hashes: Option<&[u64]>,
    index: &mut usize,
    tally: &mut Tally,
) -> Vec<bool> {
    let mut wanted = Vec::new();
    for (i, block) in original.chunks(BLOCK as usize).enumerate() {
        let at = c.target_offset + i as u64 * BLOCK;
        let len = block.len() as u64;
        let now = &current[i * BLOCK as usize..i * BLOCK as usize + block.len()];
        let write = match hashes {
            None => true,
            Some(_) if now == block => {
                tally.unchanged += len;
                false
            }
            Some(h) if h.get(*index) == Some(&UNREADABLE) => true,
            Some(h) if h.get(*index) == Some(&block_hash(at, now)) => true,
            Some(_) => {
                tally.kept += len;
                tally.kept_blocks.insert(at);
                false
            }
        };
        tally.written += if write { len } else { 0 };
        wanted.push(write);
        *index += 1;
    }
    wanted
}

/// The runs of `true` in `wanted`, as block index ranges.
fn runs(wanted: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &w) in wanted.iter().chain([&false]).enumerate() {
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Reads the regions back past the page cache: every block not left as
/// found must hold the original.
pub(super) fn read_back(
    journal: &Journal,
    reader: &File,
    name: &Path,
    kept: &HashSet<u64>,
) -> Result<(), RestoreError> {
    let chunk = journal.meta.as_ref().map_or(BLOCK, |m| m.chunk_size);
    let mut scratch = read_scratch(chunk);
    let mut orig = vec![0u8; chunk as usize];
    let mut now = vec![0u8; chunk as usize];
    for c in journal.chunks() {
        journal.read_chunk(&c, &mut orig)?;
        let current = &mut now[..c.len as usize];
        read_medium(reader, &mut scratch, c.target_offset, current)
            .map_err(|e| medium_error("read-back", &c, name, e))?;
        let original = &orig[..c.len as usize];
        let bad = original
            .chunks(BLOCK as usize)
            .zip(current.chunks(BLOCK as usize))
            .enumerate()
            .any(|(i, (o, n))| o != n && !kept.contains(&(c.target_offset + i as u64 * BLOCK)));
        if bad {
            let e = io::Error::other("the bytes read back differ from the original");
            return Err(medium_error("read-back check", &c, name, e));
        }
    }
    Ok(())
}

pub(super) fn medium_error(op: &str, c: &Chunk, name: &Path, e: io::Error) -> RestoreError {
    RestoreError::Medium(
        format!(
            "restoring the original data failed: {op} of {} bytes at offset {} of {}: {e}",
            c.len,
            c.target_offset,
            name.display()
        ),
        e,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_the_stretches_to_write() {
        assert_eq!(runs(&[true, true, false, true]), [(0, 2), (3, 4)]);
        assert!(runs(&[false, false]).is_empty());
        assert_eq!(runs(&[true]), [(0, 1)]);
    }
}
