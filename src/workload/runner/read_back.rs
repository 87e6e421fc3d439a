//! Reading back what a verified write left, to check every block against
//! the data it was given (and, for a read that checks an earlier write, to
//! find the seed that wrote it).

use super::*;

/// The seed of the first block in the region that carries a verify header,
/// for a read that was not given `--seed`.
fn find_seed(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
) -> std::io::Result<Option<u64>> {
    for block in 0..spec.span / spec.block_size {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let offset = spec.offset + block * spec.block_size;
        if target.read_at(buf.as_mut_slice(), offset)? == buf.len() {
            if let Some(seed) = verify::header_seed(buf.as_slice()) {
                return Ok(Some(seed));
            }
        }
    }
    Ok(None)
}

/// Reads back and checks blocks, one at a time, outside any timing:
/// after a write, every block this measurement stamped; after a read, every
/// block of the region. Each block is counted once. With no `--seed` given
/// to a read, the seed is taken from the first intact block header.
pub(super) fn read_back(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    written: &[AtomicU64],
    stop: &AtomicBool,
) -> std::io::Result<VerifyTally> {
    let bs = spec.block_size;
    let blocks = spec.span / bs;
    let mut tally = VerifyTally::default();
    let mut buf = AlignedBuf::new(bs as usize, target.align);
    let seed = match spec.rw.writes() || spec.seed_given {
        true => spec.seed,
        false => find_seed(target, spec, &mut buf, stop)?.unwrap_or(spec.seed),
    };
    for block in 0..blocks {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if spec.rw.writes()
            && written[(block / 64) as usize].load(Ordering::Relaxed) & (1 << (block % 64)) == 0
        {
            continue;
        }
        let offset = spec.offset + block * bs;
        let n = target.read_at(buf.as_mut_slice(), offset)?;
        if n != bs as usize {
            tally.record(offset, crate::result::verify::Verdict::Corrupted);
            continue;
        }
        tally.record(offset, verify::check(buf.as_slice(), offset, seed));
    }
    Ok(tally)
}
