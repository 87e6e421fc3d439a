//! Write data pools kept filled between passes.
//!
//! Every pass builds its engines afresh, and each write job used to
//! allocate and fill its pool anew: 16 MiB or more of incompressible data
//! per job and pass, the same bytes each time (the pool is a function of
//! the pattern and the job's seed). A curve sweep of seven sizes with a
//! warm-up and two repetitions filled it 21 times; on a simulated card
//! that was most of the run's CPU time, and on a slow host it is seconds
//! of every sweep. A pool an engine hands back is kept here, and the next
//! job asking for the same bytes gets it without a fill.
//!
//! Only the setup touches this: a pool is taken before the jobs meet at
//! the starting barrier and given back after the clock has stopped, so
//! the timed path neither locks nor allocates because of it. What is kept
//! is bounded ([`SPARE_MAX`] pools, [`SPARE_BYTES`] bytes), so a run of
//! many jobs or sizes holds no more memory than a few passes did.

use crate::sys::buffer::AlignedBuf;
use crate::vocab::pattern::Pattern;
use std::sync::Mutex;

/// Pools kept at most: a few jobs' worth.
const SPARE_MAX: usize = 8;
/// Bytes kept at most across the spare pools.
const SPARE_BYTES: usize = 256 << 20;

/// What a pool holds: `len` bytes aligned to `align`, filled with
/// `pattern` from `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PoolKey {
    pub pattern: Pattern,
    pub seed: u64,
    pub len: usize,
    pub align: usize,
}

static SPARE: Mutex<Vec<(PoolKey, AlignedBuf)>> = Mutex::new(Vec::new());

/// A pool holding what `key` names: a kept one if there is one, else a new
/// one, filled.
pub(crate) fn take(key: PoolKey) -> AlignedBuf {
    if let Some(pool) = take_kept(key) {
        return pool;
    }
    let mut pool = AlignedBuf::new(key.len, key.align);
    key.pattern.fill(pool.as_mut_slice(), key.seed);
    pool
}

fn take_kept(key: PoolKey) -> Option<AlignedBuf> {
    // A poisoned lock only means another job panicked while holding it;
    // the list itself is still whole.
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    let at = spare.iter().position(|(k, _)| *k == key)?;
    Some(spare.swap_remove(at).1)
}

/// Keeps `pool`, which still holds what `key` names, for the next job that
/// asks for it; the oldest kept pools go first when over the bounds.
pub(crate) fn give_back(key: PoolKey, pool: AlignedBuf) {
    if pool.len() != key.len || key.len > SPARE_BYTES {
        return;
    }
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    spare.push((key, pool));
    while spare.len() > SPARE_MAX || kept_bytes(&spare) > SPARE_BYTES {
        spare.remove(0);
    }
}

fn kept_bytes(spare: &[(PoolKey, AlignedBuf)]) -> usize {
    spare.iter().map(|(_, pool)| pool.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u64, len: usize) -> PoolKey {
        PoolKey {
            pattern: Pattern::Random,
            seed,
            len,
            align: 4096,
        }
    }

    #[test]
    fn a_kept_pool_holds_the_bytes_a_fresh_fill_gives() {
        // Seeds of this test's own, so other tests' pools are never met.
        let k = key(0x5fa7_e001, 64 << 10);
        let first = take(k);
        let bytes = first.as_slice().to_vec();
        give_back(k, first);
        let again = take(k);
        assert_eq!(again.as_slice(), bytes.as_slice());
        let mut fresh = vec![0u8; k.len];
        Pattern::Random.fill(&mut fresh, k.seed);
        assert_eq!(again.as_slice(), fresh.as_slice());
    }

    #[test]
    fn a_pool_of_other_bytes_is_never_handed_out() {
        let k = key(0x5fa7_e002, 64 << 10);
        give_back(k, take(k));
        let other = key(0x5fa7_e003, 64 << 10);
        let got = take(other);
        let mut fresh = vec![0u8; other.len];
        Pattern::Random.fill(&mut fresh, other.seed);
        assert_eq!(got.as_slice(), fresh.as_slice());
        let longer = key(0x5fa7_e002, 128 << 10);
        assert_eq!(take(longer).len(), 128 << 10);
    }

    #[test]
    fn what_is_kept_stays_within_its_bounds() {
        for seed in 0..(SPARE_MAX as u64 + 4) {
            let k = key(0x5fa7_f000 + seed, 4096);
            give_back(k, take(k));
        }
        let spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        assert!(spare.len() <= SPARE_MAX);
        assert!(kept_bytes(&spare) <= SPARE_BYTES);
    }
}
