//! Self-describing blocks for `--verify`.
//!
//! With `--verify`, every block iocurve writes carries a header naming where it
//! was meant to land, followed by a payload that can be regenerated from that
//! header alone. Reading a block back and calling [`check`] then tells apart a
//! device that stored the data faithfully, one that flipped a few bits, one that
//! returned a block belonging to another address (fake-capacity cards whose
//! addresses wrap around), and one that returned something else entirely.
//!
//! # Block format
//!
//! A block is a multiple of 512 bytes long, at least 512. All integers are
//! little-endian.
//!
//! | bytes    | field            | contents                                        |
//! |----------|------------------|-------------------------------------------------|
//! | 0..8     | `magic`          | the ASCII bytes `IOCVRFY1` ([`MAGIC`])          |
//! | 8..16    | `offset`         | byte offset on the target the block was written to |
//! | 16..24   | `seed`           | the run's seed                                  |
//! | 24..32   | `seq`            | the writer's sequence number for this write     |
//! | 32..36   | `block_len`      | length of the whole block in bytes (`u32`)      |
//! | 36..40   | `header_version` | [`HEADER_VERSION`] (`u32`)                      |
//! | 40..56   | reserved         | zero                                            |
//! | 56..64   | `checksum`       | hash of the whole block, this field taken as 0  |
//! | 64..     | payload          | pseudo-random bytes derived from (seed, offset, seq) |
//!
//! The payload is produced 8 bytes at a time, splitmix64 style: the 64-bit
//! word at byte `8 * i` is a multiply–xorshift mix of `key + i * γ`, where γ
//! is the splitmix64 increment and `key` the splitmix64 finalizer of `seq`
//! xor a hash of (seed, offset, block length). Every word can be computed on
//! its own, the output is incompressible (general-purpose compressors gain
//! nothing on it), and because the mix and the way `seq` enters `key` are both
//! bijections, one intact payload word is enough to recover the `seq` a block
//! was written with.
//!
//! The checksum runs eight independent multiply–rotate lanes over the block's
//! 8-byte words and folds them together with a final avalanche. Every step is a
//! bijection of the running state and injective in the word it absorbs, so any
//! change confined to one 8-byte word (in particular any single flipped bit)
//! always changes the checksum; larger changes go unnoticed only by a 2^-64
//! accident. It is not a cryptographic hash and does not try to resist anyone
//! forging blocks on purpose.
//!
//! # Verdicts
//!
//! [`check`] returns one of four [`Verdict`]s:
//!
//! * [`Verdict::Ok`]: the magic, version, length and checksum are right and the
//!   header names the offset and seed it was read back with.
//! * [`Verdict::Aliased`]: an intact block of this run (checksum and seed
//!   right) that names a different offset, `found_offset`. The device returned
//!   data written to another address: typically a card whose capacity is fake
//!   and whose addresses wrap around.
//! * [`Verdict::Changed`]: not intact, but close to what should be there. The
//!   expected block is regenerated for (offset, seed, seq) and compared bit by
//!   bit; if between 1 and [`max_changed_bits`] bits differ (64, or 0.1 % of the
//!   block's bits when that is larger), the block is reported as changed by
//!   `flipped_bits` bits. The count covers header and checksum bits too.
//! * [`Verdict::Corrupted`]: anything else: zeros, stale or foreign data, a
//!   block of another run (different seed), or damage too widespread to count.
//!
//! `seq` is taken from the header. If that field is itself damaged, the
//! comparison against its value fails, so [`check`] also decodes candidate
//! `seq`s from a few payload words (first, middle, last) and keeps the closest
//! match among those that differ from the header's `seq` in at most 8 bits; a
//! block whose damage includes a few bits of `seq` is therefore still reported
//! as `Changed`. (The 8-bit gate matters: every payload decodes to *some* seq
//! that reproduces it exactly, a foreign block's too, so an ungated decode
//! would pass off other blocks as slightly changed ones.) When `seq` has more
//! than 8 flipped bits, or it and all of those payload words are damaged,
//! nothing is left to rebuild the block from and it is reported as
//! `Corrupted`. Likewise a block from another address that is also damaged is
//! reported as `Corrupted`, not `Aliased`: it is only compared against what
//! belongs at the address it was read from.
//!
//! [`check`] is not told which `seq` to expect, so an intact block written to
//! the same offset earlier in the same run (same seed) is `Ok`: on its own it
//! cannot catch a device that silently dropped a later overwrite.

use crate::result::verify::Verdict;

/// Length of the block header in bytes; the payload starts here.
pub const HEADER_LEN: usize = 64;

/// Blocks are a whole number of these many bytes long (and at least one).
pub const BLOCK_ALIGN: usize = 512;

/// The first 8 bytes of every block.
pub const MAGIC: [u8; 8] = *b"IOCVRFY1";

/// Format version written at bytes 36..40 of the header.
pub const HEADER_VERSION: u32 = 1;

const MAGIC_WORD: u64 = u64::from_le_bytes(MAGIC);
const WORDS_PER_CHUNK: usize = 8;
const CHUNK_LEN: usize = WORDS_PER_CHUNK * 8;
const CHECKSUM_WORD: usize = 7;

/// How many damaged bits in the header's `seq` field [`check`] can repair.
const SEQ_REPAIR_BITS: u32 = 8;

/// The splitmix64 increment (odd, so `i * GAMMA` never repeats within 2^64 words).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
const MIX1: u64 = 0xBF58_476D_1CE4_E5B9;
const MIX2: u64 = 0x94D0_49BB_1331_11EB;
const MIX1_INV: u64 = mul_inverse(MIX1);
const MIX2_INV: u64 = mul_inverse(MIX2);
const QUICK_MUL: u64 = 0xD6E8_FEB8_6659_FD93;
const QUICK_MUL_INV: u64 = mul_inverse(QUICK_MUL);

/// Domain separators for deriving a block's payload key.
const KEY_SEED: u64 = 0x6A09_E667_F3BC_C908;
const KEY_OFFSET: u64 = 0xBB67_AE85_84CA_A73B;

/// Checksum constants.
const HASH_MUL: u64 = 0xC2B2_AE3D_27D4_EB4F;
const HASH_FOLD: u64 = 0x9FB2_1C65_1E98_DF25;
const HASH_LANES: [u64; WORDS_PER_CHUNK] = [
    0x243F_6A88_85A3_08D3,
    0x1319_8A2E_0370_7344,
    0xA409_3822_299F_31D0,
    0x082E_FA98_EC4E_6C89,
    0x4528_21E6_38D0_1377,
    0xBE54_66CF_34E9_0C6C,
    0xC0AC_29B7_C97C_50DD,
    0x3F84_D5B5_B547_0917,
];

/// Multiplicative inverse of an odd number modulo 2^64 (Newton's iteration,
/// each round doubling the number of correct low bits: 3, 6, 12, 24, 48, 96).
const fn mul_inverse(a: u64) -> u64 {
    let mut x = a;
    let mut round = 0;
    while round < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        round += 1;
    }
    x
}

/// The splitmix64 finalizer: a bijection on `u64` with good avalanche.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MIX1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX2);
    z ^ (z >> 31)
}

/// A one-multiply bijection, half the work of [`mix`]: plenty to make the
/// payload's Weyl sequence look like noise, and it keeps stamping fast.
#[inline]
fn quick_mix(x: u64) -> u64 {
    let z = (x ^ (x >> 32)).wrapping_mul(QUICK_MUL);
    z ^ (z >> 29)
}

/// Inverse of [`quick_mix`].
fn quick_unmix(z: u64) -> u64 {
    unxorshift(unxorshift(z, 29).wrapping_mul(QUICK_MUL_INV), 32)
}

/// Undoes `x ^= x >> shift`.
fn unxorshift(y: u64, shift: u32) -> u64 {
    let mut x = y;
    let mut known = shift;
    while known < 64 {
        x = y ^ (x >> shift);
        known += shift;
    }
    x
}

/// Inverse of [`mix`].
fn unmix(mut z: u64) -> u64 {
    z = unxorshift(z, 31);
    z = unxorshift(z.wrapping_mul(MIX2_INV), 27);
    unxorshift(z.wrapping_mul(MIX1_INV), 30)
}

/// Per-(seed, offset, block length) part of the payload key.
fn stream_base(offset: u64, seed: u64, block_len: usize) -> u64 {
    // Fully mixed in every input: check's seq repair relies on bases of
    // different (offset, seed, block_len) differing in about half their bits.
    let h = mix(seed ^ KEY_SEED).wrapping_add(offset);
    mix(mix(h ^ KEY_OFFSET).wrapping_add(block_len as u64))
}

/// Payload key for one block. Invertible in `seq` for a fixed base.
#[inline]
fn payload_key(base: u64, seq: u64) -> u64 {
    mix(seq ^ base)
}

/// Payload word at word index `index` (counted from the start of the block).
#[inline]
fn payload_word(key: u64, index: u64) -> u64 {
    quick_mix(key.wrapping_add(index.wrapping_mul(GAMMA)))
}

/// The `seq` that would make `word` the payload word at `index`.
fn seq_from_payload_word(base: u64, index: u64, word: u64) -> u64 {
    let key = quick_unmix(word).wrapping_sub(index.wrapping_mul(GAMMA));
    unmix(key) ^ base
}

/// Header words 0..8 as [`stamp`] writes them, with the checksum word zero.
fn header_words(offset: u64, seed: u64, seq: u64, block_len: usize) -> [u64; WORDS_PER_CHUNK] {
    [
        MAGIC_WORD,
        offset,
        seed,
        seq,
        len_version_word(block_len),
        0,
        0,
        0,
    ]
}

/// Header word 4: `block_len` (u32) in bytes 32..36, version in 36..40.
fn len_version_word(block_len: usize) -> u64 {
    (block_len as u64 & 0xFFFF_FFFF) | (u64::from(HEADER_VERSION) << 32)
}

#[inline]
fn read_word(bytes: &[u8], index: usize) -> u64 {
    let at = index * 8;
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

#[inline]
fn read_chunk(chunk: &[u8]) -> [u64; WORDS_PER_CHUNK] {
    std::array::from_fn(|k| read_word(chunk, k))
}

/// Streaming form of the block checksum, fed one 64-byte chunk at a time.
struct Checksum {
    lanes: [u64; WORDS_PER_CHUNK],
}

impl Checksum {
    fn new(block_len: usize) -> Self {
        let len = block_len as u64;
        Checksum {
            lanes: HASH_LANES.map(|lane| lane ^ len),
        }
    }

    #[inline]
    fn absorb(&mut self, words: &[u64; WORDS_PER_CHUNK]) {
        for (lane, &word) in self.lanes.iter_mut().zip(words) {
            *lane = (*lane ^ word).wrapping_mul(HASH_MUL).rotate_left(31);
        }
    }

    fn finish(self) -> u64 {
        let mut h = HASH_FOLD;
        for lane in self.lanes {
            h = (h ^ lane).wrapping_mul(HASH_FOLD).rotate_left(27);
        }
        mix(h)
    }
}

/// Checksum of a block as stored, with its checksum field taken as zero.
fn block_checksum(block: &[u8]) -> u64 {
    debug_assert!(block.len().is_multiple_of(CHUNK_LEN) && block.len() >= CHUNK_LEN);
    let mut sum = Checksum::new(block.len());
    let mut chunks = block.chunks_exact(CHUNK_LEN);
    if let Some(header) = chunks.next() {
        let mut words = read_chunk(header);
        words[CHECKSUM_WORD] = 0;
        sum.absorb(&words);
    }
    for chunk in chunks {
        sum.absorb(&read_chunk(chunk));
    }
    sum.finish()
}

fn valid_len(len: usize) -> bool {
    len >= BLOCK_ALIGN && len.is_multiple_of(BLOCK_ALIGN) && u32::try_from(len).is_ok()
}

/// Fills the whole of `block` with a self-describing block for `offset`,
/// `seed` and `seq` (see the [module documentation](self) for the layout).
///
/// The result depends only on the arguments and the block's length.
///
/// # Panics
///
/// If `block.len()` is not a non-zero multiple of [`BLOCK_ALIGN`] or does not
/// fit in a `u32`.
/// The seed in a block's header, when the block starts with the magic: how a
/// read-back finds the seed of an earlier verify write it was not told.
pub fn header_seed(block: &[u8]) -> Option<u64> {
    if block.len() < HEADER_LEN || block[..8] != MAGIC {
        return None;
    }
    Some(u64::from_le_bytes(block[16..24].try_into().ok()?))
}

pub fn stamp(block: &mut [u8], offset: u64, seed: u64, seq: u64) {
    let len = block.len();
    assert!(
        valid_len(len),
        "verify block length {len} must be a non-zero multiple of {BLOCK_ALIGN} below 4 GiB"
    );
    let key = payload_key(stream_base(offset, seed, len), seq);
    let mut sum = Checksum::new(len);
    let mut chunks = block.chunks_exact_mut(CHUNK_LEN);

    let header = header_words(offset, seed, seq, len);
    sum.absorb(&header);
    let header_chunk = chunks.next().expect("block holds at least one chunk");
    write_chunk(header_chunk, &header);

    // The header is chunk 0: the payload starts at chunk 1.
    for (n, chunk) in (1u64..).zip(chunks) {
        let words = payload_chunk(key, n);
        sum.absorb(&words);
        write_chunk(chunk, &words);
    }

    let at = CHECKSUM_WORD * 8;
    block[at..at + 8].copy_from_slice(&sum.finish().to_le_bytes());
}

/// The payload words of chunk `n` of a block of payload key `key`.
#[inline]
fn payload_chunk(key: u64, n: u64) -> [u64; WORDS_PER_CHUNK] {
    let first = n * WORDS_PER_CHUNK as u64;
    std::array::from_fn(|k| payload_word(key, first + k as u64))
}

#[inline]
fn write_chunk(chunk: &mut [u8], words: &[u64; WORDS_PER_CHUNK]) {
    for (dst, word) in chunk.chunks_exact_mut(8).zip(words) {
        dst.copy_from_slice(&word.to_le_bytes());
    }
}

/// Largest number of differing bits still reported as [`Verdict::Changed`]
/// for a block of `block_len` bytes: 64, or 0.1 % of its bits if more.
#[must_use]
pub fn max_changed_bits(block_len: usize) -> u64 {
    ((block_len as u64).saturating_mul(8) / 1000).max(64)
}

/// Checks a block read back from `offset` against what [`stamp`] wrote there
/// with `seed`. See the [module documentation](self) for the verdicts.
///
/// A block whose length [`stamp`] would refuse is [`Verdict::Corrupted`].
#[must_use]
pub fn check(block: &[u8], offset: u64, seed: u64) -> Verdict {
    let len = block.len();
    if !valid_len(len) {
        return Verdict::Corrupted;
    }
    let header = read_chunk(&block[..CHUNK_LEN]);
    let intact = header[0] == MAGIC_WORD
        && header[4] == len_version_word(len)
        && block_checksum(block) == header[CHECKSUM_WORD];
    let (found_offset, found_seed, found_seq) = (header[1], header[2], header[3]);

    if intact && found_seed == seed {
        return if found_offset == offset {
            Verdict::Ok
        } else {
            Verdict::Aliased { found_offset }
        };
    }

    // Damaged (or foreign): rebuild what belongs here and count the bits that
    // differ. The header's seq is the first guess whether or not its offset
    // and seed fields still match; if that is too far off, the seq field may
    // be what got damaged, so try the seqs a few payload words decode to.
    // Any payload decodes to *some* seq that reproduces it exactly (a foreign
    // block's included), so a decoded seq only counts when it is within
    // SEQ_REPAIR_BITS of the header's: a repair of the field, not a guess.
    let limit = max_changed_bits(len);
    let base = stream_base(offset, seed, len);
    let mut best = distance(block, offset, seed, found_seq, limit);
    if best.is_none() {
        let words = (len / 8) as u64;
        let mut tried = [found_seq; 3];
        for (slot, index) in [WORDS_PER_CHUNK as u64, words / 2, words - 1]
            .into_iter()
            .enumerate()
        {
            let word = read_word(block, index as usize);
            let seq = seq_from_payload_word(base, index, word);
            if (seq ^ found_seq).count_ones() > SEQ_REPAIR_BITS || tried[..=slot].contains(&seq) {
                continue;
            }
            tried[slot] = seq;
            let bound = best.map_or(limit, |b: u64| b.saturating_sub(1));
            if let Some(d) = distance(block, offset, seed, seq, bound) {
                best = Some(d);
            }
        }
    }
    match best {
        // Unreachable in practice (an exact match has a valid checksum), but
        // a block identical to the expected one is by definition fine.
        Some(0) => Verdict::Ok,
        Some(flipped_bits) => Verdict::Changed { flipped_bits },
        None => Verdict::Corrupted,
    }
}

/// Number of bits in which `block` differs from `stamp(_, offset, seed, seq)`,
/// or `None` as soon as it exceeds `limit`.
fn distance(block: &[u8], offset: u64, seed: u64, seq: u64, limit: u64) -> Option<u64> {
    let len = block.len();
    let key = payload_key(stream_base(offset, seed, len), seq);
    let mut sum = Checksum::new(len);
    let mut chunks = block.chunks_exact(CHUNK_LEN);
    let mut flipped = 0u64;

    let header = header_words(offset, seed, seq, len);
    sum.absorb(&header);
    let stored = read_chunk(chunks.next()?);
    for (k, (want, got)) in header.iter().zip(&stored).enumerate() {
        if k != CHECKSUM_WORD {
            flipped += u64::from((want ^ got).count_ones());
        }
    }
    if flipped > limit {
        return None;
    }

    // The header is chunk 0: the payload starts at chunk 1.
    for (n, chunk) in (1u64..).zip(chunks) {
        let words = payload_chunk(key, n);
        sum.absorb(&words);
        let got = read_chunk(chunk);
        let chunk_flipped: u32 = words
            .iter()
            .zip(&got)
            .map(|(want, got)| (want ^ got).count_ones())
            .sum();
        flipped += u64::from(chunk_flipped);
        if flipped > limit {
            return None;
        }
    }

    flipped += u64::from((sum.finish() ^ stored[CHECKSUM_WORD]).count_ones());
    (flipped <= limit).then_some(flipped)
}

#[cfg(test)]
mod tests;
