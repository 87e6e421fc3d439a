//! Unit tests of `verify`, kept beside it so the module reads as the
//! code it is.

use super::*;
use crate::result::verify::{FIRST_BAD_MAX, VerifyTally};
use proptest::prelude::*;

const SIZES: [usize; 5] = [512, 1024, 4096, 65536, 1 << 20];

fn stamped(len: usize, offset: u64, seed: u64, seq: u64) -> Vec<u8> {
    let mut block = vec![0u8; len];
    stamp(&mut block, offset, seed, seq);
    block
}

fn flip(block: &mut [u8], bit: usize) {
    block[bit / 8] ^= 1 << (bit % 8);
}

#[test]
fn mix_inverts() {
    for x in [0, 1, u64::MAX, GAMMA, 0x0123_4567_89AB_CDEF] {
        assert_eq!(unmix(mix(x)), x);
        assert_eq!(mix(unmix(x)), x);
    }
    assert_eq!(MIX1.wrapping_mul(MIX1_INV), 1);
    assert_eq!(MIX2.wrapping_mul(MIX2_INV), 1);
    assert_eq!(QUICK_MUL.wrapping_mul(QUICK_MUL_INV), 1);
    for x in [0, 1, u64::MAX, GAMMA, 0x0123_4567_89AB_CDEF] {
        assert_eq!(quick_unmix(quick_mix(x)), x);
    }
}

#[test]
fn round_trip_several_sizes() {
    for len in SIZES {
        for (offset, seed, seq) in [
            (0, 0, 0),
            (len as u64 * 7, 42, 3),
            (u64::MAX, u64::MAX, u64::MAX),
        ] {
            let block = stamped(len, offset, seed, seq);
            assert_eq!(check(&block, offset, seed), Verdict::Ok, "len {len}");
        }
    }
}

#[test]
fn header_layout() {
    let block = stamped(4096, 0x1122_3344_5566_7788, 99, 7);
    assert_eq!(&block[0..8], b"IOCVRFY1");
    assert_eq!(read_word(&block, 1), 0x1122_3344_5566_7788);
    assert_eq!(read_word(&block, 2), 99);
    assert_eq!(read_word(&block, 3), 7);
    assert_eq!(&block[32..36], &4096u32.to_le_bytes());
    assert_eq!(&block[36..40], &HEADER_VERSION.to_le_bytes());
    assert!(block[40..56].iter().all(|&b| b == 0));
    assert_eq!(read_word(&block, 7), block_checksum(&block));
}

#[test]
fn stamp_is_deterministic() {
    for len in SIZES {
        assert_eq!(stamped(len, 4096, 5, 6), stamped(len, 4096, 5, 6));
        let mut dirty = vec![0xA5u8; len];
        stamp(&mut dirty, 4096, 5, 6);
        assert_eq!(dirty, stamped(len, 4096, 5, 6));
    }
}

#[test]
fn inputs_change_payload() {
    let a = stamped(4096, 8192, 1, 1);
    for other in [
        stamped(4096, 12288, 1, 1),
        stamped(4096, 8192, 2, 1),
        stamped(4096, 8192, 1, 2),
    ] {
        let same = a[HEADER_LEN..]
            .chunks_exact(8)
            .zip(other[HEADER_LEN..].chunks_exact(8))
            .filter(|(x, y)| x == y)
            .count();
        assert_eq!(same, 0);
    }
}

#[test]
fn payload_bytes_look_random() {
    let block = stamped(1 << 20, 0, 0, 0);
    let mut counts = [0u32; 256];
    for &b in &block[HEADER_LEN..] {
        counts[usize::from(b)] += 1;
    }
    let expected = (block.len() - HEADER_LEN) as f64 / 256.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (f64::from(c) - expected).powi(2) / expected)
        .sum();
    // 255 degrees of freedom: mean 255, sd ~22.6.
    assert!(chi2 < 400.0, "chi2 {chi2}");
}

#[test]
fn one_flipped_payload_bit_is_changed_by_one() {
    for len in SIZES {
        for bit in [HEADER_LEN * 8, len * 4, len * 8 - 1] {
            let mut block = stamped(len, 1 << 30, 17, 3);
            flip(&mut block, bit);
            assert_eq!(
                check(&block, 1 << 30, 17),
                Verdict::Changed { flipped_bits: 1 },
                "len {len} bit {bit}"
            );
        }
    }
}

#[test]
fn flipped_header_bits_are_changed_by_one() {
    // Every header bit, including magic, offset, seed, seq and checksum.
    for bit in 0..HEADER_LEN * 8 {
        let mut block = stamped(4096, 40960, 23, 11);
        flip(&mut block, bit);
        assert_eq!(
            check(&block, 40960, 23),
            Verdict::Changed { flipped_bits: 1 },
            "bit {bit}"
        );
    }
}

#[test]
fn damaged_seq_field_and_payload_still_changed() {
    let mut block = stamped(4096, 4096, 1, 1000);
    flip(&mut block, 24 * 8 + 5); // seq
    flip(&mut block, 2000 * 8 + 1); // payload
    flip(&mut block, HEADER_LEN * 8); // the first payload word, a seq source
    assert_eq!(check(&block, 4096, 1), Verdict::Changed { flipped_bits: 3 });
}

#[test]
fn seq_field_repair_is_limited() {
    let len = 4096;
    for bits in 1..=SEQ_REPAIR_BITS as usize {
        let mut block = stamped(len, 0, 3, 0x5555_0000);
        for k in 0..bits {
            flip(&mut block, 24 * 8 + 7 * k);
        }
        assert_eq!(
            check(&block, 0, 3),
            Verdict::Changed {
                flipped_bits: bits as u64
            }
        );
    }
    let mut block = stamped(len, 0, 3, 0x5555_0000);
    for k in 0..=SEQ_REPAIR_BITS as usize {
        flip(&mut block, 24 * 8 + 7 * k);
    }
    assert_eq!(check(&block, 0, 3), Verdict::Corrupted);
}

#[test]
fn damaged_block_from_elsewhere_is_corrupted() {
    let mut block = stamped(4096, 8192, 77, 5);
    flip(&mut block, 3000);
    assert_eq!(check(&block, 0, 77), Verdict::Corrupted);
}

#[test]
fn several_flipped_bits_are_counted() {
    for n in [2u64, 5, 17, 64] {
        let mut block = stamped(4096, 0, 9, 9);
        for k in 0..n as usize {
            flip(&mut block, HEADER_LEN * 8 + k * 401);
        }
        assert_eq!(check(&block, 0, 9), Verdict::Changed { flipped_bits: n });
    }
}

#[test]
fn too_many_flipped_bits_are_corrupted() {
    let mut block = stamped(4096, 0, 9, 9);
    for k in 0..65 {
        flip(&mut block, HEADER_LEN * 8 + k * 401);
    }
    assert_eq!(check(&block, 0, 9), Verdict::Corrupted);

    // Larger blocks tolerate 0.1 % of their bits.
    let len = 1 << 20;
    let limit = max_changed_bits(len);
    assert_eq!(limit, 8388);
    let mut block = stamped(len, 0, 9, 9);
    for k in 0..limit as usize {
        flip(&mut block, HEADER_LEN * 8 + k * 997);
    }
    assert_eq!(
        check(&block, 0, 9),
        Verdict::Changed {
            flipped_bits: limit
        }
    );
    flip(&mut block, len * 8 - 1);
    assert_eq!(check(&block, 0, 9), Verdict::Corrupted);
}

#[test]
fn block_from_elsewhere_is_aliased() {
    for len in SIZES {
        let a = 3 * len as u64;
        let b = a + (64 << 30);
        let block = stamped(len, a, 77, 5);
        assert_eq!(check(&block, b, 77), Verdict::Aliased { found_offset: a });
    }
}

#[test]
fn zeros_are_corrupted() {
    for len in SIZES {
        assert_eq!(check(&vec![0u8; len], 0, 0), Verdict::Corrupted);
        assert_eq!(check(&vec![0u8; len], 4096, 1), Verdict::Corrupted);
        assert_eq!(check(&vec![0xFFu8; len], 4096, 1), Verdict::Corrupted);
    }
}

#[test]
fn garbage_is_corrupted() {
    let mut state = 12345u64;
    for len in SIZES {
        let block: Vec<u8> = (0..len)
            .map(|_| {
                state = state.wrapping_add(GAMMA);
                mix(state) as u8
            })
            .collect();
        assert_eq!(check(&block, 0, 0), Verdict::Corrupted);
    }
}

#[test]
fn other_seed_is_not_ok() {
    let block = stamped(4096, 8192, 1, 1);
    assert_eq!(check(&block, 8192, 2), Verdict::Corrupted);
    assert_eq!(check(&block, 0, 2), Verdict::Corrupted);
}

#[test]
fn bad_lengths_are_corrupted() {
    let block = stamped(4096, 0, 0, 0);
    assert_eq!(check(&block[..4000], 0, 0), Verdict::Corrupted);
    assert_eq!(check(&block[..0], 0, 0), Verdict::Corrupted);
    // A valid prefix of a longer block carries the wrong length.
    assert_eq!(check(&block[..512], 0, 0), Verdict::Corrupted);
}

#[test]
#[should_panic(expected = "multiple of 512")]
fn stamp_rejects_bad_length() {
    stamp(&mut [0u8; 1000], 0, 0, 0);
}

#[test]
fn verdict_serializes_tagged() {
    let json = |v: Verdict| serde_json::to_string(&v).unwrap();
    assert_eq!(json(Verdict::Ok), r#"{"kind":"ok"}"#);
    assert_eq!(
        json(Verdict::Changed { flipped_bits: 2 }),
        r#"{"kind":"changed","flipped_bits":2}"#
    );
    assert_eq!(
        json(Verdict::Aliased { found_offset: 4096 }),
        r#"{"kind":"aliased","found_offset":4096}"#
    );
    assert_eq!(json(Verdict::Corrupted), r#"{"kind":"corrupted"}"#);
    // Results stored before schema 4 named an aliased block "overwritten".
    let old: Verdict = serde_json::from_str(r#"{"kind":"overwritten","found_offset":8}"#).unwrap();
    assert_eq!(old, Verdict::Aliased { found_offset: 8 });
    let old: VerifyTally = serde_json::from_str(
        r#"{"ok":1,"changed":0,"overwritten":3,"corrupted":0,"first_bad":[]}"#,
    )
    .unwrap();
    assert_eq!(old.aliased, 3);
    assert!(Verdict::Ok.is_ok());
    assert!(!Verdict::Corrupted.is_ok());
}

#[test]
fn tally_records_and_keeps_first_ten() {
    let mut t = VerifyTally::default();
    assert_eq!(t.first_bad.capacity(), 0);
    t.record(0, Verdict::Ok);
    assert_eq!(t.first_bad.capacity(), 0);
    for i in 0..25u64 {
        t.record(1000 - i, Verdict::Corrupted);
    }
    t.record(5, Verdict::Changed { flipped_bits: 1 });
    t.record(6, Verdict::Aliased { found_offset: 0 });
    assert_eq!((t.ok, t.changed, t.aliased, t.corrupted), (1, 1, 1, 25));
    assert_eq!(t.bad(), 27);
    assert_eq!(t.checked(), 28);
    assert_eq!(t.first_bad.len(), FIRST_BAD_MAX);
    assert_eq!(t.first_bad.capacity(), FIRST_BAD_MAX);
    let offsets: Vec<u64> = t.first_bad.iter().map(|b| b.offset).collect();
    assert_eq!(offsets, (991..=1000).rev().collect::<Vec<_>>());
}

#[test]
fn tally_merge_adds_and_keeps_lowest_ten() {
    let mut a = VerifyTally::default();
    let mut b = VerifyTally::default();
    for i in 0..8u64 {
        a.record(100 + 10 * i, Verdict::Corrupted);
        b.record(
            105 + 10 * i,
            Verdict::Changed {
                flipped_bits: i + 1,
            },
        );
    }
    a.record(1, Verdict::Ok);
    b.record(2, Verdict::Aliased { found_offset: 9 });
    b.record(3, Verdict::Ok);
    a.merge(&b);
    assert_eq!((a.ok, a.changed, a.aliased, a.corrupted), (2, 8, 1, 8));
    assert_eq!(a.checked(), 19);
    assert_eq!(a.first_bad.len(), FIRST_BAD_MAX);
    let offsets: Vec<u64> = a.first_bad.iter().map(|x| x.offset).collect();
    assert_eq!(offsets, [2, 100, 105, 110, 115, 120, 125, 130, 135, 140]);
    assert_eq!(a.first_bad[0].verdict, Verdict::Aliased { found_offset: 9 });

    let mut empty = VerifyTally::default();
    empty.merge(&VerifyTally::default());
    assert_eq!(empty, VerifyTally::default());
}

proptest! {
    #[test]
    fn round_trip_any_inputs(offset: u64, seed: u64, seq: u64, blocks in 1usize..=16) {
        let block = stamped(blocks * 512, offset, seed, seq);
        prop_assert_eq!(check(&block, offset, seed), Verdict::Ok);
    }

    #[test]
    fn one_flipped_bit_is_never_ok(
        offset: u64,
        seed: u64,
        seq: u64,
        blocks in 1usize..=8,
        bit: prop::sample::Index,
    ) {
        let len = blocks * 512;
        let mut block = stamped(len, offset, seed, seq);
        flip(&mut block, bit.index(len * 8));
        let verdict = check(&block, offset, seed);
        prop_assert!(!verdict.is_ok());
        prop_assert_eq!(verdict, Verdict::Changed { flipped_bits: 1 });
    }

    #[test]
    fn other_blocks_are_never_changed(
        written in (any::<u64>(), any::<u64>(), any::<u64>(), 1usize..=8),
        read in (any::<u64>(), any::<u64>(), 1usize..=8),
        same_seed: bool,
        same_len: bool,
    ) {
        let (w_offset, w_seed, w_seq, w_blocks) = written;
        let (r_offset, mut r_seed, mut r_blocks) = read;
        if same_seed {
            r_seed = w_seed;
        }
        if same_len {
            r_blocks = w_blocks;
        }
        let block = stamped(w_blocks * 512, w_offset, w_seed, w_seq);
        let mut buf = vec![0u8; r_blocks * 512];
        let n = buf.len().min(block.len());
        buf[..n].copy_from_slice(&block[..n]);
        let verdict = check(&buf, r_offset, r_seed);
        let expected = if r_seed != w_seed || r_blocks != w_blocks {
            Verdict::Corrupted
        } else if r_offset != w_offset {
            Verdict::Aliased { found_offset: w_offset }
        } else {
            Verdict::Ok
        };
        prop_assert_eq!(verdict, expected);
    }

    #[test]
    fn tally_merge_counts_add(
        left in prop::collection::vec((any::<u64>(), 0u8..4), 0..40),
        right in prop::collection::vec((any::<u64>(), 0u8..4), 0..40),
    ) {
        let verdict = |k: u8| match k {
            0 => Verdict::Ok,
            1 => Verdict::Changed { flipped_bits: 1 },
            2 => Verdict::Aliased { found_offset: 0 },
            _ => Verdict::Corrupted,
        };
        let mut a = VerifyTally::default();
        let mut b = VerifyTally::default();
        for &(offset, k) in &left {
            a.record(offset, verdict(k));
        }
        for &(offset, k) in &right {
            b.record(offset, verdict(k));
        }
        let (a0, b0) = (a.clone(), b.clone());
        a.merge(&b);
        prop_assert_eq!(a.checked(), (left.len() + right.len()) as u64);
        prop_assert_eq!(a.ok, a0.ok + b0.ok);
        prop_assert_eq!(a.bad(), a0.bad() + b0.bad());
        prop_assert!(a.first_bad.len() <= FIRST_BAD_MAX);
        prop_assert_eq!(a.first_bad.len(), (a0.first_bad.len() + b0.first_bad.len()).min(FIRST_BAD_MAX));
        prop_assert!(a.first_bad.windows(2).all(|w| w[0].offset <= w[1].offset));
    }
}
