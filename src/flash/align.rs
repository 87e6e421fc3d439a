//! The AU and page size from read timing at candidate boundaries, in the
//! manner of flashbench (Arnd Bergmann, "Optimizing Linux with cheap flash
//! drives", LWN 2011, and flashbench's `--align` test): one block is read
//! just before a candidate alignment A, one straddling it and one just
//! after, several times each, keeping the minimum; diff(A) = t(on) −
//! (t(before) + t(after)) / 2 is high when A is a multiple of the AU (the
//! read touches two erase blocks), lower when it is only a multiple of the
//! page, and flat otherwise.
//!
//! Candidates, in two stages. First the SD specification's AU sizes
//! (Physical Layer Simplified Specification, AU_SIZE in the SD Status
//! register: 16 KiB to 4 MiB in powers of two, then 8, 12, 16, 24, 32 and
//! 64 MiB) generalised to every power of two and every 3·2^k from twice
//! the block up to the device's size ([`candidates`]), not flashbench's
//! powers of two below a seventh of it (which miss 12 and 24 MiB AUs and
//! AUs above size/7). Each candidate A is read at positions (6i+1)·A:
//! multiples of A that are multiples of no larger candidate (6i+1 has no
//! factor 2 or 3), so a boundary is seen only where A itself is one, and
//! every read stays inside the device. Since the minimum over the
//! positions is kept, A shows the AU's step only when the AU divides A.
//!
//! An erase block is a whole number of pages, and TLC blocks (issue 37:
//! 384, 576, 768, 1152, 1536, 1728 or 2304 pages of 16 KiB, so 6–36 MiB)
//! are 9·2^k or 27·2^k as often as 2^k or 3·2^k, and some controllers
//! group blocks by five: an AU of 9, 18, 27 or 20 MiB divides no candidate
//! of the first stage, which then shows the page's step alone.
//! So, unless the first stage found an AU that can be no page (a step
//! above [`MAX_PAGE`]: found, it is the AU, as the AU divides every
//! candidate of its group), a second stage times every 9·2^k, 27·2^k and
//! 5·2^k above the step it found ([`wider_candidates`]). With both stages
//! every size 2^a·3^b with b ≤ 3, and 5·2^a (every TLC block above, whatever page of 4–128 KiB
//! the card shows, and its multiples across planes) is a multiple of some
//! candidate and a non-multiple of others: both its step and the sizes it
//! could otherwise be are timed. The second stage starts just above the
//! step so that an AU of 9·2^k has 9·2^(k−1) timed below it (an AU is
//! named only when every smaller size it could be was tried,
//! `crate::analysis::flash::align`). It costs at most three candidates per
//! doubling above the step (48 on 8 GiB over a 128 KiB page) and is
//! skipped where the first stage settled the AU.
//!
//! An AU with another odd factor (15·2^k, 7·2^k, …) divides no candidate:
//! it is never named, and the page's step it leaves is a lone step. The
//! steps are found as sets, not as a run down the table (by
//! `crate::analysis::flash::align`, where the thresholds are named): the AU
//! is the smallest candidate of the high group (diffs at least half the
//! largest) when that group is exactly the candidates that are multiples of
//! it; the page likewise among the smaller candidates with diffs clearly
//! above the floor. A step's confidence is the ratio of its group's
//! smallest diff to the largest diff outside it. A lone step of at most
//! [`MAX_PAGE`] (256 KiB, the largest page the field may show) could be
//! the page of an AU of a size not tried, or an AU equal to its page: it
//! is named with low confidence only. Only reads are issued.

use super::FlashIo;
use crate::analysis::flash::align::{AlignResult, MAX_PAGE, Row, agreed, decide};
use crate::result::flash::Confidence;
use std::io;

/// How the timing is done.
#[derive(Debug, Clone, Copy)]
pub struct AlignPlan {
    /// Bytes per read; the smallest candidate is twice this.
    pub block: u64,
    /// Reads of each kind at each position.
    pub samples: u32,
    /// Positions per candidate.
    pub positions: u64,
}

impl Default for AlignPlan {
    fn default() -> Self {
        AlignPlan {
            block: 1024,
            samples: 4,
            positions: 6,
        }
    }
}

/// Times every candidate twice, independently, and decides. A geometry
/// is claimed only when both rounds find the same one: a boundary is a
/// property of the medium and shows every time, while a scheduling hiccup
/// that happens to look like a step (a loop device on a busy machine) does
/// not repeat.
pub fn detect(io: &mut dyn FlashIo, plan: AlignPlan) -> io::Result<AlignResult> {
    if plan.block == 0 || plan.samples == 0 || plan.positions == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "flash align needs a block, samples and positions above 0",
        ));
    }
    let first = decide(plan.block, time_all(io, &plan)?);
    let second = decide(plan.block, time_all(io, &plan)?);
    Ok(agreed(first, &second))
}

/// Times the first stage's candidates and, unless they settle the AU, the
/// second's above the step they show; the rows largest first.
fn time_all(io: &mut dyn FlashIo, plan: &AlignPlan) -> io::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut buf = io.buffer(plan.block as usize);
    for a in candidates(plan.block, io.size()) {
        rows.push(time_candidate(io, plan, a, buf.as_mut_slice())?);
    }
    let first = decide(plan.block, rows.clone());
    if settled(&first) {
        return Ok(rows);
    }
    let above = first.au.unwrap_or(0);
    for a in wider_candidates(plan.block, io.size(), above) {
        rows.push(time_candidate(io, plan, a, buf.as_mut_slice())?);
    }
    rows.sort_unstable_by_key(|r| std::cmp::Reverse(r.align));
    Ok(rows)
}

/// Whether the first stage found the AU for certain: a step larger than
/// any page ([`MAX_PAGE`]), with or without a page step below it. As the
/// AU divides every candidate of its group, no size the second stage
/// tries can then be it. A step of a page's size is not settled even over
/// a smaller one: it may be a program unit of several planes over the
/// flash page, with the erase block above, and the second stage looks.
fn settled(first: &AlignResult) -> bool {
    first.au_confidence > Confidence::Low && first.au.is_some_and(|au| au > MAX_PAGE)
}

/// The odd factors the second stage tries, times every power of two: 9,
/// for the TLC erase blocks of 576, 1152 and 2304 pages, 27 for those of
/// 1728, and 5 for blocks grouped by five (the first stage has 1 and 3).
/// Another factor here is one more candidate per doubling.
pub const WIDER_FACTORS: [u64; 3] = [9, 27, 5];

/// The second stage: every [`WIDER_FACTORS`]·2^k above `above`, at
/// least twice the block and a whole number of blocks (the reads around
/// it are then whole sectors), whose read fits in the device, largest
/// first. None of them is a first-stage candidate (9·2^k, 27·2^k and
/// 5·2^k are neither 2^j nor 3·2^j).
pub fn wider_candidates(block: u64, size: u64, above: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let Some(smallest) = block.checked_mul(2) else {
        return v;
    };
    let fits = |a: u64| a.checked_add(block).is_some_and(|end| end <= size);
    for factor in WIDER_FACTORS {
        let mut a = factor;
        while a <= size {
            if a > above && a >= smallest && a.is_multiple_of(block) && fits(a) {
                v.push(a);
            }
            let Some(next) = a.checked_mul(2) else { break };
            a = next;
        }
    }
    v.sort_unstable_by(|x, y| y.cmp(x));
    v.dedup();
    v
}

/// Every power of two and every 3·2^k from twice the block up to the
/// largest whose read fits in the device, largest first.
pub fn candidates(block: u64, size: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let Some(smallest) = block.checked_mul(2) else {
        return v;
    };
    let fits = |a: u64| a.checked_add(block).is_some_and(|end| end <= size);
    let Some(mut p) = smallest.checked_next_power_of_two() else {
        return v;
    };
    while fits(p) {
        v.push(p);
        if let Some(t) = p
            .checked_mul(3)
            .filter(|t| t / 2 >= smallest && fits(t / 2))
        {
            v.push(t / 2);
        }
        let Some(next) = p.checked_mul(2) else { break };
        p = next;
    }
    v.retain(|a| *a >= smallest);
    v.sort_unstable_by(|x, y| y.cmp(x));
    v.dedup();
    v
}

fn time_candidate(
    io: &mut dyn FlashIo,
    plan: &AlignPlan,
    a: u64,
    buf: &mut [u8],
) -> io::Result<Row> {
    let bs = plan.block;
    let mut best = [u64::MAX; 3];
    for i in 0..plan.positions {
        let inside = |at: &u64| at.checked_add(bs).is_some_and(|end| end <= io.size());
        let Some(at) = (6 * i + 1).checked_mul(a).filter(inside) else {
            break;
        };
        for _ in 0..plan.samples {
            for (k, offset) in [at - bs, at - bs / 2, at].into_iter().enumerate() {
                best[k] = best[k].min(io.read(offset, buf)?);
            }
        }
    }
    let diff = best[1] as i64 - (best[0] as i64 + best[2] as i64) / 2;
    Ok(Row {
        align: a,
        before_ns: best[0],
        on_ns: best[1],
        after_ns: best[2],
        diff_ns: diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDevice, SimParams};
    use crate::flash::SimIo;
    use crate::result::flash::Confidence;

    fn detect_on(spec: &str) -> AlignResult {
        let dev = SimDevice::new(SimParams::parse(spec).unwrap());
        detect(&mut SimIo(&dev), AlignPlan::default()).unwrap()
    }

    #[test]
    fn finds_the_exact_au_and_page_on_simulated_cards() {
        for au_mib in [1u64, 2, 4, 8, 16] {
            for page_kib in [4u64, 8, 16, 32] {
                let r = detect_on(&format!("size=2G,au={au_mib}M,page={page_kib}k"));
                assert_eq!(r.au, Some(au_mib << 20), "au {au_mib}M page {page_kib}k");
                assert_eq!(
                    r.page,
                    Some(page_kib << 10),
                    "au {au_mib}M page {page_kib}k"
                );
                assert_eq!(r.au_confidence, Confidence::High);
                assert_eq!(r.page_confidence, Confidence::High);
            }
        }
    }

    #[test]
    fn finds_the_sd_specifications_3_times_2k_aus_and_large_ones() {
        for (spec, au) in [
            ("size=8G,au=12M,page=16k", 12u64 << 20),
            ("size=8G,au=24M,page=32k", 24 << 20),
            ("size=4G,au=64M,page=16k", 64 << 20),
            // Above a seventh of the device, where flashbench stops.
            ("size=256M,au=64M,page=16k", 64 << 20),
            ("size=96M,au=24M,page=8k", 24 << 20),
            ("size=1G,au=6M,page=16k", 6 << 20),
        ] {
            let r = detect_on(spec);
            assert_eq!(
                (r.au, r.au_confidence),
                (Some(au), Confidence::High),
                "{spec}"
            );
            assert!(
                r.page.is_some_and(|p| au.is_multiple_of(p)),
                "{spec}: {:?}",
                r.page
            );
        }
    }

    #[test]
    fn a_lone_small_step_is_never_a_confident_au() {
        // Page and AU both 16 KiB: one step, which could be a page.
        let r = detect_on("size=1G,au=16k,page=16k");
        assert_eq!(r.page, None);
        assert!(
            r.au.is_none() || r.au_confidence == Confidence::Low,
            "{:?}",
            r.au
        );
    }

    #[test]
    fn candidates_are_powers_of_two_and_three_times_them_inside_the_device() {
        let c = candidates(1024, 8 << 30);
        for want in [2048u64, 3072, 12 << 20, 24 << 20, 4 << 30, 6 << 30] {
            assert!(c.contains(&want), "{want}");
        }
        assert!(c.iter().all(|a| a + 1024 <= 8 << 30));
        assert!(c.windows(2).all(|w| w[0] > w[1]));
        assert!(candidates(u64::MAX, u64::MAX).is_empty());
    }

    #[test]
    fn finds_9_times_2k_aus_that_the_first_stage_cannot_see() {
        // Issue 37: an 18 MiB AU over 128 KiB pages was "AU 128 KiB, high".
        let r = detect_on("size=8G,au=18M,page=128k,cmd=200us");
        assert_eq!((r.au, r.au_confidence), (Some(18 << 20), Confidence::High));
        assert_eq!(
            (r.page, r.page_confidence),
            (Some(128 << 10), Confidence::High)
        );
    }

    /// The TLC erase blocks and the SD specification's odd sizes, on pages
    /// of 16–128 KiB, with a page step that shows (200 µs commands), one
    /// under the noise floor (10 µs: a quarter of it is 2.5 µs) and behind
    /// a link so slow (1 MB/s, a millisecond a read) that it hides both:
    /// the AU named is the card's, or it is named at low confidence only.
    #[test]
    fn names_every_tlc_block_right_or_at_low_only() {
        let mut found = 0;
        for au_kib in [1536u64, 4096, 12 << 10, 18 << 10, 24 << 10, 36 << 10] {
            for page_kib in [16u64, 64, 128] {
                for extra in ["cmd=200us", "cmd=10us", "cmd=50us,link=1MB/s"] {
                    let spec = format!("size=8G,au={au_kib}k,page={page_kib}k,{extra}");
                    let r = detect_on(&spec);
                    let right = r.au == Some(au_kib << 10);
                    assert!(
                        right || r.au_confidence == Confidence::Low,
                        "{spec}: AU {:?} at {:?}",
                        r.au,
                        r.au_confidence
                    );
                    if extra == "cmd=200us" {
                        assert!(right && r.au_confidence == Confidence::High, "{spec}");
                        assert_eq!(r.page, Some(page_kib << 10), "{spec}");
                    }
                    found += usize::from(right && r.au_confidence > Confidence::Low);
                }
            }
        }
        // The page step hides under the floor with 10 µs commands, not the
        // AU's: every card is named but those behind the slow link.
        assert!(found >= 36, "{found}");
    }

    #[test]
    fn a_lone_page_sized_step_with_no_au_tried_above_is_at_most_low() {
        // An AU of 7·2^k or 15·2^k divides no candidate: the page's step
        // stands alone. (One of 27·2^k, a 72-layer TLC block of 864 pages,
        // 13.5 MiB, was such an AU until the second stage tried 27·2^k.)
        for spec in [
            "size=8G,au=7M,page=128k",
            "size=8G,au=14M,page=256k",
            "size=8G,au=15M,page=16k",
        ] {
            let r = detect_on(spec);
            assert_eq!(r.au_confidence, Confidence::Low, "{spec}: {:?}", r.au);
            assert_eq!(r.page, None, "{spec}");
        }
    }

    #[test]
    fn finds_27_and_5_times_2k_aus_at_any_page() {
        // A TLC block of 1728 pages (27 MiB) over 96 KiB program pages was
        // "a lone step at 96 KiB, low"; blocks grouped by five likewise.
        for (spec, au) in [
            ("size=32G,au=27M,page=96k,cmd=300us", 27u64 << 20),
            ("size=8G,au=20M,page=64k,cmd=200us", 20 << 20),
            ("size=8G,au=27M,page=16k,cmd=1ms", 27 << 20),
            ("size=8G,au=13824k,page=128k,cmd=200us", 13824 << 10),
        ] {
            let r = detect_on(spec);
            assert_eq!(r.au, Some(au), "{spec}");
            assert!(r.au_confidence >= Confidence::Medium, "{spec}");
        }
    }

    #[test]
    fn the_second_stage_runs_only_where_the_first_leaves_the_au_open() {
        let reads = |spec: &str| {
            let dev = SimDevice::new(SimParams::parse(spec).unwrap());
            let mut io = SimIo(&dev);
            time_all(&mut io, &AlignPlan::default()).unwrap().len()
        };
        let first = candidates(1024, 8 << 30).len();
        let wider = wider_candidates(1024, 8 << 30, 128 << 10).len();
        assert_eq!(reads("size=8G,au=4M,page=16k"), first);
        assert_eq!(reads("size=8G,au=18M,page=128k"), first + wider);
        assert!(wider <= 48, "{wider}");
    }

    #[test]
    fn wider_candidates_are_9_times_2k_above_the_step_inside_the_device() {
        let c = wider_candidates(1024, 8 << 30, 128 << 10);
        for want in [
            144u64 << 10,
            576 << 10,
            9 << 20,
            18 << 20,
            36 << 20,
            9 << 29,
        ] {
            assert!(c.contains(&want), "{want}");
        }
        assert!(c.iter().all(|a| *a > 128 << 10 && a + 1024 <= 8 << 30));
        assert!(c.iter().all(|a| !candidates(1024, 8 << 30).contains(a)));
        assert!(c.windows(2).all(|w| w[0] > w[1]));
        assert_eq!(wider_candidates(1024, 8 << 30, 0).last(), Some(&5120));
        assert!(wider_candidates(u64::MAX, u64::MAX, 0).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn wider_candidates_never_panic_fit_and_stay_few(block in proptest::prelude::any::<u64>(), size in proptest::prelude::any::<u64>(), above in proptest::prelude::any::<u64>()) {
            let c = wider_candidates(block, size, above);
            proptest::prop_assert!(c.len() <= 64 * WIDER_FACTORS.len());
            for a in c {
                proptest::prop_assert!(a > above && a / 2 >= block && a.is_multiple_of(block) && a.checked_add(block).is_some_and(|e| e <= size));
            }
        }

        #[test]
        fn candidates_never_panic_and_fit(block in proptest::prelude::any::<u64>(), size in proptest::prelude::any::<u64>()) {
            let c = candidates(block, size);
            proptest::prop_assert!(c.len() <= 128);
            for a in c {
                proptest::prop_assert!(a / 2 >= block && a.checked_add(block).is_some_and(|e| e <= size));
            }
        }
    }
}
