//! The laws real cards add to the simple model (issue 37): speed that
//! depends on the offset, a usable cache that shrinks as the card fills,
//! pauses after so many bytes written (garbage collection, thermal
//! throttling) at jittered periods, jittered FAT-area spikes, and AU
//! boundary costs of reads that vary. Apart from the card so that each law
//! is one small piece with its own state, and so that a card without them
//! (every default) takes the very code path, and figures, it took before.

use super::params::SimParams;

/// Nanoseconds to move `len` bytes at `rate` bytes/s.
pub(super) fn xfer_ns(len: u64, rate: u64) -> u64 {
    (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64
}

/// The speed `rate` becomes at `offset`: from 1× at offset 0 falling
/// linearly to `slow_end` thousandths at the card's end (the outer tracks
/// of a disk, the slower or denser dies a card maps its high addresses
/// to). Exactly `rate` when the card has no such law.
pub(super) fn at_position(p: &SimParams, rate: u64, offset: u64) -> u64 {
    if p.slow_end == 1000 {
        return rate;
    }
    let size = u128::from(p.size);
    let lost = u128::from(1000 - p.slow_end.min(1000)) * u128::from(offset.min(p.size));
    let scaled = u128::from(rate) * (1000 * size - lost) / (1000 * size);
    (scaled as u64).max(1)
}

/// `period` moved by up to ±`pct` percent, from `rng`; exactly `period`
/// without jitter, and never below 1.
fn jittered(rng: &mut fastrand::Rng, period: u64, pct: u32) -> u64 {
    if pct == 0 {
        return period;
    }
    let draw = i128::from(rng.u32(0..=2000)) - 1000;
    let delta = i128::from(period) * i128::from(pct) * draw / 100_000;
    (i128::from(period) + delta).max(1) as u64
}

/// The stream of one jittered law, from the card's `seed` and a salt of
/// the law's own (so that adding one law leaves another's periods alone).
fn stream(p: &SimParams, salt: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(p.seed ^ salt)
}

/// The pauses of `pause=`: every `pause_every` bytes written (jittered),
/// the write that completes the period waits `pause` more.
pub(super) struct Pauses {
    written: u64,
    period: u64,
    rng: fastrand::Rng,
}

impl Pauses {
    pub(super) fn new(p: &SimParams) -> Pauses {
        let mut rng = stream(p, 0x9a05_e5ee_d000);
        let period = jittered(&mut rng, p.pause_every, p.jitter);
        Pauses {
            written: 0,
            period,
            rng,
        }
    }

    /// The pause time a write of `len` bytes pays (one pause per period it
    /// completes).
    pub(super) fn after_write(&mut self, p: &SimParams, len: u64) -> u64 {
        if p.pause_ns == 0 {
            return 0;
        }
        self.written += len;
        let mut paid = 0u64;
        while self.written >= self.period {
            self.written -= self.period;
            paid = paid.saturating_add(p.pause_ns);
            self.period = jittered(&mut self.rng, p.pause_every, p.jitter);
        }
        paid
    }
}

/// The spikes of `fat_max=`: every `fat_every`-th FAT-area write, or with
/// `jitter` at periods jittered around it.
pub(super) struct FatSpikes {
    writes: u64,
    next: u64,
    rng: fastrand::Rng,
}

impl FatSpikes {
    pub(super) fn new(p: &SimParams) -> FatSpikes {
        let mut rng = stream(p, 0xfa75_b1ce_0000);
        let next = jittered(&mut rng, u64::from(p.fat_every), p.jitter);
        FatSpikes {
            writes: 0,
            next,
            rng,
        }
    }

    /// Counts a FAT-area write; whether it is a spike.
    pub(super) fn count(&mut self, p: &SimParams) -> bool {
        self.writes += 1;
        if p.jitter == 0 {
            return self.writes.is_multiple_of(u64::from(p.fat_every));
        }
        if self.writes < self.next {
            return false;
        }
        self.next += jittered(&mut self.rng, u64::from(p.fat_every), p.jitter);
        true
    }
}

/// Parts of the card the coverage of `cache_min=` counts in.
const COVERAGE_PARTS: u64 = 4096;

/// Which parts of the card hold written data (in 4096ths of it, so a
/// 2 TiB card costs 512 bytes), for a cache that shrinks as it fills.
pub(super) struct Coverage {
    parts: u64,
    bits: Vec<u64>,
    marked: u64,
}

impl Coverage {
    pub(super) fn new(p: &SimParams) -> Coverage {
        let parts = COVERAGE_PARTS.min(p.size / super::params::SECTOR).max(1);
        Coverage {
            parts,
            bits: vec![0; parts.div_ceil(64) as usize],
            marked: 0,
        }
    }

    fn part(&self, p: &SimParams, at: u64) -> u64 {
        ((u128::from(at) * u128::from(self.parts) / u128::from(p.size)) as u64).min(self.parts - 1)
    }

    /// Counts `len` bytes at `offset` as written.
    pub(super) fn mark(&mut self, p: &SimParams, offset: u64, len: u64) {
        let (first, last) = (self.part(p, offset), self.part(p, offset + len - 1));
        for part in first..=last {
            let (word, bit) = ((part / 64) as usize, part % 64);
            if self.bits[word] & (1 << bit) == 0 {
                self.bits[word] |= 1 << bit;
                self.marked += 1;
            }
        }
    }

    /// The cache a card can use now: `cache` on an empty card, falling
    /// linearly to `cache_min` as the written share grows (a dynamic SLC
    /// cache is made of free TLC blocks; what stays is its static part).
    pub(super) fn usable_cache(&self, p: &SimParams) -> u64 {
        let Some(least) = p.cache_min else {
            return p.cache;
        };
        let room = u128::from(p.cache.saturating_sub(least));
        let free = u128::from(self.parts - self.marked);
        least + (room * free / u128::from(self.parts)) as u64
    }
}

/// The extra cost of a read across the AU boundary that ends AU `before`:
/// `read_step` thousandths of a command, jittered per boundary by
/// `read_jitter` (the same boundary always costs the same).
pub(super) fn au_read_step(p: &SimParams, before: u64) -> u64 {
    let base = u128::from(p.cmd_ns) * u128::from(p.read_step) / 1000;
    if p.read_jitter == 0 {
        return base as u64;
    }
    let salt = before.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let draw = i128::from(stream(p, salt).u32(0..=2000)) - 1000;
    let scale = 100_000 + i128::from(p.read_jitter) * draw;
    (base as i128 * scale / 100_000).max(0) as u64
}
