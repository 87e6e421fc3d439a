//! The AU and page size from read timing at candidate boundaries, in the
//! manner of flashbench (Arnd Bergmann): for each power-of-two alignment A,
//! from the smallest at least a seventh of the device down to twice the
//! block, one block is read just before A, one straddling A and one just
//! after, at positions A + i·top, several times each; the minimum of each
//! is kept. diff(A) = t(on) − (t(before) + t(after)) / 2 stays high for
//! every A that is a multiple of the AU (the read touches two erase blocks)
//! and drops below it; a smaller, second step marks the page.
//!
//! flashbench prints the table; here the steps are found: the AU is the
//! smallest A of the top group (diffs at least half the largest), the page
//! the smallest A of the middle group (diffs clearly above the floor). A
//! step's confidence is the ratio of the group's smallest diff to the
//! largest diff below it; with no step above the timing noise nothing is
//! claimed. Only reads are issued.

use super::{Confidence, FlashIo};
use serde::Serialize;
use std::io;

/// One candidate alignment and its timings (minimum over samples), ns.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Row {
    pub align: u64,
    pub before_ns: u64,
    pub on_ns: u64,
    pub after_ns: u64,
    pub diff_ns: i64,
}

/// What the boundary timing found.
#[derive(Debug, Clone, Serialize)]
pub struct AlignResult {
    pub block: u64,
    pub au: Option<u64>,
    pub au_confidence: Confidence,
    pub page: Option<u64>,
    pub page_confidence: Confidence,
    pub rows: Vec<Row>,
}

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
    let top = (io.size() / 7).next_power_of_two();
    let mut rows = Vec::new();
    let mut buf = io.buffer(plan.block as usize);
    let mut a = top;
    while a >= 2 * plan.block {
        rows.push(time_candidate(io, plan, top, a, buf.as_mut_slice())?);
        a /= 2;
    }
    Ok(rows)
}

/// The first round's findings where the second agrees, at the lower of the
/// two confidences; what they disagree on is not claimed.
fn agreed(mut first: AlignResult, second: &AlignResult) -> AlignResult {
    if first.au != second.au {
        first.au = None;
        first.au_confidence = Confidence::Low;
        first.page = None;
        first.page_confidence = Confidence::Low;
        return first;
    }
    first.au_confidence = first.au_confidence.min(second.au_confidence);
    if first.page != second.page {
        first.page = None;
        first.page_confidence = Confidence::Low;
    } else {
        first.page_confidence = first.page_confidence.min(second.page_confidence);
    }
    first
}

fn time_candidate(
    io: &mut dyn FlashIo,
    plan: &AlignPlan,
    top: u64,
    a: u64,
    buf: &mut [u8],
) -> io::Result<Row> {
    let bs = plan.block;
    let mut best = [u64::MAX; 3];
    for i in 0..plan.positions {
        let at = a + i * top;
        if at + bs > io.size() {
            break;
        }
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

/// The noise floor: 3 µs or 3 % of the plain read time, whichever is more.
fn floor_ns(rows: &[Row]) -> f64 {
    let base = rows.iter().map(|r| r.before_ns).min().unwrap_or(0) as f64;
    (0.03 * base).max(3000.0)
}

/// Finds the steps in the diffs (rows run from the largest alignment down).
pub fn decide(block: u64, rows: Vec<Row>) -> AlignResult {
    let mut result = AlignResult {
        block,
        au: None,
        au_confidence: Confidence::Low,
        page: None,
        page_confidence: Confidence::Low,
        rows,
    };
    let rows = &result.rows;
    let diffs: Vec<f64> = rows.iter().map(|r| r.diff_ns as f64).collect();
    let floor = floor_ns(rows);
    let max = diffs.iter().copied().fold(0.0, f64::max);
    if max < floor || diffs.len() < 2 {
        return result;
    }
    let top_len = diffs.iter().take_while(|d| **d >= max / 2.0).count();
    // The top group must start at the largest alignment and end above the
    // smallest: otherwise the largest diff is noise, not a boundary.
    if top_len == 0 || top_len == diffs.len() {
        return result;
    }
    let (au_conf, au) = step(&diffs, top_len, floor, rows);
    result.au = au;
    result.au_confidence = au_conf;
    if au.is_none() {
        return result;
    }
    let page_threshold = (max / 8.0).max(floor);
    let page_len = diffs[top_len..]
        .iter()
        .take_while(|d| **d >= page_threshold)
        .count();
    if page_len > 0 && top_len + page_len < diffs.len() {
        let (conf, page) = step(&diffs, top_len + page_len, floor, rows);
        result.page = page;
        result.page_confidence = conf;
    }
    result
}

/// The step after the first `len` rows: its alignment and confidence.
fn step(diffs: &[f64], len: usize, floor: f64, rows: &[Row]) -> (Confidence, Option<u64>) {
    let group_min = diffs[..len].iter().copied().fold(f64::MAX, f64::min);
    let below_max = diffs[len..].iter().copied().fold(floor, f64::max);
    let confidence = Confidence::of_ratio(group_min / below_max);
    let found = (confidence > Confidence::Low).then_some(rows[len - 1].align);
    (confidence, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDevice, SimParams};
    use crate::flash::SimIo;

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
    fn rounds_that_disagree_claim_nothing() {
        let found = |au: Option<u64>, page: Option<u64>| AlignResult {
            block: 1024,
            au,
            au_confidence: if au.is_some() {
                Confidence::High
            } else {
                Confidence::Low
            },
            page,
            page_confidence: if page.is_some() {
                Confidence::Medium
            } else {
                Confidence::Low
            },
            rows: Vec::new(),
        };
        let noise = agreed(found(Some(64 << 20), None), &found(None, None));
        assert_eq!((noise.au, noise.au_confidence), (None, Confidence::Low));
        let same = agreed(
            found(Some(4 << 20), Some(16 << 10)),
            &found(Some(4 << 20), Some(8 << 10)),
        );
        assert_eq!(
            (same.au, same.au_confidence),
            (Some(4 << 20), Confidence::High)
        );
        assert_eq!((same.page, same.page_confidence), (None, Confidence::Low));
    }

    #[test]
    fn flat_timings_claim_nothing() {
        let rows = (0..10)
            .map(|i| Row {
                align: 1 << (30 - i),
                before_ns: 40_000,
                on_ns: 40_000 + (i % 3) * 500,
                after_ns: 40_000,
                diff_ns: (i as i64 % 3) * 500,
            })
            .collect();
        let r = decide(1024, rows);
        assert_eq!(
            (r.au, r.page, r.au_confidence),
            (None, None, Confidence::Low)
        );
    }

    #[test]
    fn a_noise_peak_below_the_largest_alignment_claims_nothing() {
        let rows = [0i64, 9000, 0, 0]
            .iter()
            .enumerate()
            .map(|(i, d)| Row {
                align: 1 << (20 - i),
                before_ns: 40_000,
                on_ns: 40_000 + *d as u64,
                after_ns: 40_000,
                diff_ns: *d,
            })
            .collect();
        assert_eq!(decide(1024, rows).au, None);
    }
}
