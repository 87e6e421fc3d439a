//! What a simulated card holds: the medium's data by physical address, the
//! counterfeit kinds beyond the real size (wrap-around, dropped writes,
//! stale contents), and the write cache's copy of recent writes that hides
//! them from an immediate read-back. Apart from the timing model because
//! what a read returns never depends on what it cost.

use super::params::{FakeKind, SECTOR, SimParams};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Granularity of the data map.
pub(super) const CHUNK: u64 = 4096;

/// A held chunk's contents; `None`: zeros.
type HeldData = Option<Box<[u8]>>;

/// The write cache's view of recent writes, by logical chunk: the last
/// `cache` bytes written, exactly, and with `hide_for` only those written
/// less than that long ago (kept only on a counterfeit card with a cache,
/// where it hides the fraud from an immediate read-back).
#[derive(Default)]
struct HeldChunks {
    /// (logical chunk, generation, bytes that write put in it, virtual
    /// time of the write), oldest first.
    order: VecDeque<(u64, u64, u64, u64)>,
    /// Logical chunk to the generation of its newest write, the virtual
    /// time of that write, and its contents (`None`: zeros, so a long
    /// flush of zeros costs no memory).
    data: HashMap<u64, (u64, u64, HeldData)>,
    /// Sum of the bytes in `order`.
    bytes: u64,
    generation: u64,
}

/// The data of a card: what the medium keeps and what the cache holds.
/// Every method takes the card's parameters, which say where a logical
/// address lands and what the cache hides.
#[derive(Default)]
pub(super) struct Contents {
    /// Physical chunk index to its bytes.
    chunks: BTreeMap<u64, Box<[u8]>>,
    held: HeldChunks,
}

/// Whether the cache hides the fraud (a counterfeit card with a cache).
pub(super) fn hides(p: &SimParams) -> bool {
    p.cache > 0 && p.real < p.size
}

/// Where a logical sector's data lives, or `None` beyond the real size
/// of a card that keeps nothing there.
fn physical(p: &SimParams, logical: u64) -> Option<u64> {
    match (logical < p.real, p.fake) {
        (true, _) => Some(logical),
        (false, FakeKind::Wrap) => Some(logical % p.real),
        (false, _) => None,
    }
}

/// Whether a write the cache took at virtual time `since` is still in it
/// at `now`: always, unless `hide_for` has passed since (the cache drained
/// it to the medium, where a counterfeit loses what lies beyond its real
/// size).
fn still_held(p: &SimParams, since: u64, now: u64) -> bool {
    p.hide_for_ns
        .is_none_or(|hide| now.saturating_sub(since) < hide)
}

impl Contents {
    /// The cache's copy of a logical chunk, if it still holds one at `now`.
    fn held(&self, p: &SimParams, now: u64, chunk: u64) -> Option<&HeldData> {
        self.held
            .data
            .get(&chunk)
            .filter(|(_, since, _)| still_held(p, *since, now))
            .map(|(_, _, data)| data)
    }

    /// Whether the cache answers for every chunk of logical `from..to`.
    pub(super) fn holds_all(&self, p: &SimParams, now: u64, from: u64, to: u64) -> bool {
        (from / CHUNK..=(to - 1) / CHUNK).all(|c| self.held(p, now, c).is_some())
    }

    /// What the medium (not the cache) returns for one logical sector.
    fn backing(&self, p: &SimParams, logical: u64, piece: &mut [u8]) {
        match physical(p, logical) {
            Some(phys) => {
                let within = (phys % CHUNK) as usize;
                match self.chunks.get(&(phys / CHUNK)) {
                    Some(chunk) => piece.copy_from_slice(&chunk[within..within + piece.len()]),
                    None => piece.fill(0),
                }
            }
            None if p.fake == FakeKind::Stale => stale_sector(logical, piece),
            None => piece.fill(0),
        }
    }

    /// What a read of one logical sector returns: the cache's copy, else
    /// the medium's.
    fn sector_view(&self, p: &SimParams, now: u64, logical: u64, piece: &mut [u8]) {
        match self.held(p, now, logical / CHUNK) {
            Some(Some(chunk)) => {
                let within = (logical % CHUNK) as usize;
                piece.copy_from_slice(&chunk[within..within + piece.len()]);
            }
            Some(None) => piece.fill(0),
            None => self.backing(p, logical, piece),
        }
    }

    /// What a read of `buf.len()` bytes at logical `offset` returns.
    pub(super) fn copy_out(&self, p: &SimParams, now: u64, offset: u64, buf: &mut [u8]) {
        for (i, piece) in buf.chunks_mut(SECTOR as usize).enumerate() {
            self.sector_view(p, now, offset + i as u64 * SECTOR, piece);
        }
    }

    /// Stores a write (`None`: zeros) made at virtual time `now` chunk by
    /// chunk; on a card that hides, the cache keeps the logical chunk as a
    /// read would now see it.
    pub(super) fn copy_in(
        &mut self,
        p: &SimParams,
        now: u64,
        offset: u64,
        len: u64,
        data: Option<&[u8]>,
    ) {
        let end = offset + len;
        if data.is_none() && !hides(p) {
            self.store_zeros(p, offset, end);
            return;
        }
        let mut at = offset;
        while at < end {
            let chunk = at / CHUNK;
            let upto = ((chunk + 1) * CHUNK).min(end);
            let piece = data.map(|d| &d[(at - offset) as usize..(upto - offset) as usize]);
            let view = hides(p).then(|| self.chunk_after(p, now, chunk, at, piece));
            self.store(p, at, upto - at, piece);
            if let Some(view) = view {
                self.hold(p, now, chunk, view, upto - at);
            }
            at = upto;
        }
    }

    /// The logical chunk as a read would see it once `piece` (within it, at
    /// `at`; `None`: zeros) is written; `None` when that is all zeros.
    fn chunk_after(
        &self,
        p: &SimParams,
        now: u64,
        chunk: u64,
        at: u64,
        piece: Option<&[u8]>,
    ) -> Option<Box<[u8]>> {
        let whole = at.is_multiple_of(CHUNK) && piece.is_none_or(|p| p.len() as u64 == CHUNK);
        if whole && piece.is_none() {
            return None;
        }
        let mut view = vec![0u8; CHUNK as usize].into_boxed_slice();
        if !whole {
            let base = chunk * CHUNK;
            for (i, s) in view.chunks_mut(SECTOR as usize).enumerate() {
                self.sector_view(p, now, base + i as u64 * SECTOR, s);
            }
        }
        let within = (at % CHUNK) as usize;
        if let Some(piece) = piece {
            view[within..within + piece.len()].copy_from_slice(piece);
        }
        Some(view)
    }

    /// Writes sectors to the medium (dropped beyond the real size unless
    /// the card wraps).
    fn store(&mut self, p: &SimParams, at: u64, len: u64, piece: Option<&[u8]>) {
        for i in 0..len / SECTOR {
            let logical = at + i * SECTOR;
            let Some(phys) = physical(p, logical) else {
                continue;
            };
            let within = (phys % CHUNK) as usize;
            let sector = SECTOR as usize;
            match piece {
                Some(data) => {
                    let chunk = self
                        .chunks
                        .entry(phys / CHUNK)
                        .or_insert_with(|| vec![0; CHUNK as usize].into_boxed_slice());
                    let from = (i * SECTOR) as usize;
                    chunk[within..within + sector].copy_from_slice(&data[from..from + sector]);
                }
                None => {
                    let contiguous =
                        physical(p, at + CHUNK - SECTOR) == Some(phys + CHUNK - SECTOR);
                    if len == CHUNK && i == 0 && within == 0 && contiguous {
                        // A whole aligned chunk of zeros: forget it.
                        self.chunks.remove(&(phys / CHUNK));
                        return;
                    }
                    if let Some(chunk) = self.chunks.get_mut(&(phys / CHUNK)) {
                        chunk[within..within + sector].fill(0);
                    }
                }
            }
        }
    }

    /// Zeros the medium under logical `at..end`, a run of addresses that map
    /// contiguously at a time: one range lookup each, not one per sector.
    fn store_zeros(&mut self, p: &SimParams, mut at: u64, end: u64) {
        let real = p.real;
        while at < end {
            let run_end = match at < real {
                true => end.min(real),
                false => end.min((at / real + 1).saturating_mul(real)),
            };
            if let Some(phys) = physical(p, at) {
                zero_range(&mut self.chunks, phys, phys + (run_end - at));
            }
            at = run_end;
        }
    }

    /// Keeps a logical chunk written at `now` in the cache until `cache`
    /// bytes of newer writes pushed it out (or, with `hide_for`, until it
    /// drained: what drained leaves room).
    fn hold(&mut self, p: &SimParams, now: u64, chunk: u64, view: HeldData, bytes: u64) {
        let held = &mut self.held;
        held.generation += 1;
        let generation = held.generation;
        held.data.insert(chunk, (generation, now, view));
        held.order.push_back((chunk, generation, bytes, now));
        held.bytes += bytes;
        let drained = |since: u64| !still_held(p, since, now);
        while let Some(&(old, g, b, since)) = held.order.front() {
            if held.bytes <= p.cache && !drained(since) {
                break;
            }
            held.order.pop_front();
            held.bytes -= b;
            if held
                .data
                .get(&old)
                .is_some_and(|(newest, _, _)| *newest == g)
            {
                held.data.remove(&old);
            }
        }
    }
}

/// Zeros physical bytes `from..to` of the stored chunks (forgetting the
/// chunks covered whole).
fn zero_range(chunks: &mut BTreeMap<u64, Box<[u8]>>, from: u64, to: u64) {
    let keys: Vec<u64> = chunks
        .range(from / CHUNK..to.div_ceil(CHUNK))
        .map(|(k, _)| *k)
        .collect();
    for k in keys {
        let (start, stop) = (k * CHUNK, (k + 1) * CHUNK);
        if from <= start && stop <= to {
            chunks.remove(&k);
        } else if let Some(chunk) = chunks.get_mut(&k) {
            let lo = (from.max(start) - start) as usize;
            let hi = (to.min(stop) - start) as usize;
            chunk[lo..hi].fill(0);
        }
    }
}

/// The old contents a `stale` counterfeit returns beyond its real size: a
/// fixed pattern per sector, like whatever the chip held before.
fn stale_sector(logical: u64, piece: &mut [u8]) {
    fastrand::Rng::with_seed(logical ^ 0x57a1_e000_0000_0000).fill(piece);
}

#[cfg(test)]
mod tests {
    use super::super::card::tests::card;
    use super::super::{FakeKind, SimDevice};

    #[test]
    fn data_is_kept_and_wraps_beyond_the_real_size() {
        let d = card("size=8G,real=1G");
        d.write(5 << 20, &[7u8; 4096]).unwrap();
        d.write((1 << 30) + (5 << 20), &[9u8; 1024]).unwrap();
        let mut buf = vec![0u8; 4096];
        d.read(5 << 20, &mut buf).unwrap();
        assert_eq!(&buf[..1024], &[9u8; 1024][..]);
        assert_eq!(&buf[1024..], &[7u8; 3072][..]);
        d.read(100 << 20, &mut buf).unwrap();
        assert!(buf.iter().all(|b| *b == 0));
    }

    #[test]
    fn a_cache_hides_the_wrap_around_of_recent_writes() {
        let d = card("size=2G,real=1G,cache=1M");
        d.write(0x10_0000, &[1u8; 4096]).unwrap();
        d.write((1 << 30) + 0x10_0000, &[2u8; 4096]).unwrap();
        let mut buf = vec![0u8; 4096];
        d.read(0x10_0000, &mut buf).unwrap();
        assert_eq!(buf[0], 1, "the cache still holds the low block");
        for i in 0..300u64 {
            d.write((64 << 20) + i * 4096, &[3u8; 4096]).unwrap();
        }
        d.read(0x10_0000, &mut buf).unwrap();
        assert_eq!(buf[0], 2, "out of the cache, the alias shows");
    }

    fn stamp(n: u8) -> Vec<u8> {
        vec![n; 4096]
    }

    fn read4k(d: &SimDevice, at: u64) -> Result<Vec<u8>, String> {
        let mut buf = vec![0u8; 4096];
        d.read(at, &mut buf).map(|_| buf)
    }

    #[test]
    fn wrap_at_a_real_size_that_is_not_a_power_of_two() {
        let real = 3000u64 << 20;
        let d = card(&format!("size=8G,real={real}"));
        d.write(5 << 20, &stamp(1)).unwrap();
        d.write(real + (5 << 20), &stamp(2)).unwrap();
        assert_eq!(read4k(&d, 5 << 20).unwrap(), stamp(2));
        // Not at the next power of two.
        d.write(4 << 30, &stamp(3)).unwrap();
        assert_eq!(read4k(&d, (4 << 30) - real).unwrap(), stamp(3));
    }

    #[test]
    fn wrap_at_a_real_size_in_odd_sectors_splits_a_block() {
        let real = (1 << 30) + 512;
        let d = card(&format!("size=2G,real={real}"));
        d.write(real + (8 << 20), &stamp(4)).unwrap();
        let mut buf = vec![0u8; 4096];
        d.read(8 << 20, &mut buf).unwrap();
        assert_eq!(buf, stamp(4), "the sectors land at address - real");
    }

    #[test]
    fn zeros_drop_writes_beyond_the_real_size() {
        let d = card("size=8G,real=6G,fake=zeros");
        d.write(7 << 30, &stamp(5)).unwrap();
        assert_eq!(read4k(&d, 7 << 30).unwrap(), vec![0u8; 4096]);
        assert_eq!(
            read4k(&d, (7 << 30) - (6 << 30)).unwrap(),
            vec![0u8; 4096],
            "no wrap"
        );
        d.write((6 << 30) - 4096, &stamp(6)).unwrap();
        assert_eq!(
            read4k(&d, (6 << 30) - 4096).unwrap(),
            stamp(6),
            "below real: kept"
        );
    }

    #[test]
    fn stale_returns_the_same_old_contents_whatever_was_written() {
        let d = card("size=8G,real=6G,fake=stale");
        let before = read4k(&d, 7 << 30).unwrap();
        assert!(before.iter().any(|b| *b != 0), "old contents, not zeros");
        d.write(7 << 30, &stamp(7)).unwrap();
        assert_eq!(read4k(&d, 7 << 30).unwrap(), before);
    }

    #[test]
    fn eio_fails_transfers_beyond_the_real_size() {
        let d = card("size=8G,real=6G,fake=eio");
        assert!(
            d.write(7 << 30, &stamp(8))
                .unwrap_err()
                .contains("I/O error")
        );
        assert!(read4k(&d, 7 << 30).unwrap_err().contains("I/O error"));
        assert!(read4k(&d, (6 << 30) - 4096).is_ok());
        // A transfer that straddles the real size fails too.
        assert!(read4k(&d, (6 << 30) - 2048).is_err());
    }

    #[test]
    fn a_cache_hides_every_kind_until_pushed_out_and_holds_exactly_its_size() {
        for kind in FakeKind::ALL {
            let d = card(&format!("size=2G,real=1G,cache=1M,fake={}", kind.name()));
            let (low, high) = (4u64 << 20, (1u64 << 30) + (4 << 20));
            d.write(low, &stamp(1)).unwrap();
            d.write(high, &stamp(9)).unwrap();
            // Newer writes that fill the cache to the byte: both still held.
            d.write_zeros(64 << 20, (1 << 20) - 8192).unwrap();
            assert_eq!(read4k(&d, low).unwrap(), stamp(1), "{kind:?}: low held");
            assert_eq!(read4k(&d, high).unwrap(), stamp(9), "{kind:?}: high held");
            // One chunk more pushes the low block out: the medium shows.
            d.write_zeros(128 << 20, 4096).unwrap();
            let low_now = read4k(&d, low).unwrap();
            match kind {
                FakeKind::Wrap => assert_eq!(low_now, stamp(9), "the alias shows"),
                _ => assert_eq!(low_now, stamp(1), "{kind:?}: below real, kept"),
            }
            // And one more the high block.
            d.write_zeros(132 << 20, 4096).unwrap();
            let high_now = read4k(&d, high);
            match kind {
                FakeKind::Wrap => assert_eq!(high_now.unwrap(), stamp(9)),
                FakeKind::Zeros => assert_eq!(high_now.unwrap(), vec![0u8; 4096]),
                FakeKind::Stale => assert_ne!(high_now.unwrap(), stamp(9)),
                FakeKind::Eio => assert!(high_now.is_err()),
            }
        }
    }

    #[test]
    fn with_hide_for_the_cache_hides_a_write_only_that_long() {
        for kind in FakeKind::ALL {
            let d = card(&format!(
                "size=2G,real=1G,cache=1M,hide_for=1s,fake={}",
                kind.name()
            ));
            let (low, high) = (4u64 << 20, (1u64 << 30) + (4 << 20));
            d.write(low, &stamp(1)).unwrap();
            d.write(high, &stamp(9)).unwrap();
            assert_eq!(read4k(&d, high).unwrap(), stamp(9), "{kind:?}: held");
            d.idle(999_000_000);
            assert_eq!(read4k(&d, high).unwrap(), stamp(9), "{kind:?}: still held");
            // A second after the write the cache has drained it: the
            // counterfeit shows though nothing pushed the write out.
            d.idle(1_000_000);
            let (low_now, high_now) = (read4k(&d, low), read4k(&d, high));
            match kind {
                FakeKind::Wrap => assert_eq!(low_now.unwrap(), stamp(9), "the alias shows"),
                _ => assert_eq!(low_now.unwrap(), stamp(1), "{kind:?}: below real, kept"),
            }
            match kind {
                FakeKind::Wrap => assert_eq!(high_now.unwrap(), stamp(9)),
                FakeKind::Zeros => assert_eq!(high_now.unwrap(), vec![0u8; 4096]),
                FakeKind::Stale => assert_ne!(high_now.unwrap(), stamp(9)),
                FakeKind::Eio => assert!(high_now.is_err()),
            }
        }
        // Without hide_for an idle card keeps hiding.
        let d = card("size=2G,real=1G,cache=1M,fake=zeros");
        d.write((1 << 30) + (4 << 20), &stamp(9)).unwrap();
        d.idle(3_600_000_000_000);
        assert_eq!(read4k(&d, (1 << 30) + (4 << 20)).unwrap(), stamp(9));
    }

    #[test]
    fn write_zeros_is_a_write_of_zeros() {
        let (a, b) = (
            card("size=2G,real=1G,cache=4M"),
            card("size=2G,real=1G,cache=4M"),
        );
        for d in [&a, &b] {
            d.write(8 << 20, &vec![1u8; 16 << 10]).unwrap();
        }
        let ta = a.write_zeros(8 << 20, 8192).unwrap();
        let tb = b.write(8 << 20, &[0u8; 8192]).unwrap();
        assert_eq!(ta, tb);
        let mut x = vec![0u8; 16 << 10];
        let mut y = vec![0u8; 16 << 10];
        a.read(8 << 20, &mut x).unwrap();
        b.read(8 << 20, &mut y).unwrap();
        assert_eq!(x, y);
        assert_eq!(&x[..8192], &[0u8; 8192][..]);
        assert_eq!(&x[8192..], &[1u8; 8192][..]);
    }

    #[test]
    fn a_genuine_card_keeps_every_byte_to_its_end() {
        let d = card("size=64M,real=64M");
        d.write((64 << 20) - 4096, &stamp(3)).unwrap();
        assert_eq!(read4k(&d, (64 << 20) - 4096).unwrap(), stamp(3));
        assert_eq!(read4k(&d, 0).unwrap(), vec![0u8; 4096]);
    }
}
