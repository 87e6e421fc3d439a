//! The AU and page size from read timing at candidate boundaries, in the
//! manner of flashbench (Arnd Bergmann, "Optimizing Linux with cheap flash
//! drives", LWN 2011, and flashbench's `--align` test): one block is read
//! just before a candidate alignment A, one straddling it and one just
//! after, several times each, keeping the minimum; diff(A) = t(on) −
//! (t(before) + t(after)) / 2 is high when A is a multiple of the AU (the
//! read touches two erase blocks), lower when it is only a multiple of the
//! page, and flat otherwise.
//!
//! Candidates: the SD specification's AU sizes (Physical Layer Simplified
//! Specification, AU_SIZE in the SD Status register: 16 KiB to 4 MiB in
//! powers of two, then 8, 12, 16, 24, 32 and 64 MiB) generalised to every
//! power of two and every 3·2^k from twice the block up to the device's
//! size, not flashbench's powers of two below a seventh of it (which miss
//! 12 and 24 MiB AUs and AUs above size/7). Each candidate A is read at
//! positions (6i+1)·A: multiples of A that are multiples of no larger
//! candidate (6i+1 has no factor 2 or 3), so a boundary is seen only where
//! A itself is one, and every read stays inside the device.
//!
//! The steps are then found as sets, not as a run down the table (by
//! `crate::analysis::flash::align`, where the thresholds are named): the AU
//! is the smallest candidate of the high group (diffs at least half the
//! largest) when that group is exactly the candidates that are multiples of
//! it; the page likewise among the smaller candidates with diffs clearly
//! above the floor. A step's confidence is the ratio of its group's
//! smallest diff to the largest diff outside it. A lone step of at most
//! 64 KiB (the largest page the field shows) could be the page of an AU
//! too large to see, or an AU equal to its page: it is named with low
//! confidence only. Only reads are issued.

use super::FlashIo;
use crate::analysis::flash::align::{AlignResult, Row, agreed, decide};
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

fn time_all(io: &mut dyn FlashIo, plan: &AlignPlan) -> io::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut buf = io.buffer(plan.block as usize);
    for a in candidates(plan.block, io.size()) {
        rows.push(time_candidate(io, plan, a, buf.as_mut_slice())?);
    }
    Ok(rows)
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

    proptest::proptest! {
        #[test]
        fn candidates_never_panic_and_fit(block in proptest::prelude::any::<u64>(), size in proptest::prelude::any::<u64>()) {
            for a in candidates(block, size) {
                proptest::prop_assert!(a / 2 >= block && a.checked_add(block).is_some_and(|e| e <= size));
            }
        }
    }
}
