//! `flash align` and `flash capacity` scored over the seeded population
//! (`iocurve::engine::population`), in-process through the library on each
//! card's virtual clock, by the confidence each verdict was given:
//!
//! * `align`: right when the AU named is the card's. Declining is
//!   "nothing to find" when the simulator's own cost law makes the AU
//!   boundary invisible (a link ceiling slower than the medium hides the
//!   extra command of a straddling read: the diff is below twice the
//!   detector's noise floor); otherwise it is a decline.
//! * `capacity`: over genuine cards and counterfeits of every kind
//!   ([`Population::draw_mixed`]), with the command's default 128 MiB
//!   flush. Right when a genuine card is called genuine, or a fake is
//!   called fake with its real size inside the range reported; every other
//!   verdict is wrong (a fake called genuine included).
//!
//! The scores are kept per confidence, since what a user may rely on is
//! that "high" is never wrong and "medium" rarely.

use super::{Outcome, Tally};
use iocurve::engine::population::{Mix, Population, spec_of};
use iocurve::engine::sim::{SimDevice, SimParams};
use iocurve::flash::{Confidence, SimIo, align, capacity};
use std::fmt::Write as _;

/// The capacity command's default flush (`--flush`).
pub const DEFAULT_FLUSH: u64 = 128 << 20;

/// Right and wrong answers given at one confidence.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scores {
    pub right: usize,
    pub wrong: usize,
}

impl Scores {
    pub fn answered(&self) -> usize {
        self.right + self.wrong
    }

    /// Share right, 1 when nothing was answered.
    pub fn right_rate(&self) -> f64 {
        match self.answered() {
            0 => 1.0,
            n => self.right as f64 / n as f64,
        }
    }
}

/// One analysis: the shared [`Tally`] and its answers by confidence.
#[derive(Debug, Clone, Default)]
pub struct FlashCalibration {
    pub tally: Tally,
    pub high: Scores,
    pub medium: Scores,
    pub low: Scores,
}

impl FlashCalibration {
    pub fn new(analysis: &str) -> FlashCalibration {
        FlashCalibration {
            tally: Tally::new(analysis),
            ..FlashCalibration::default()
        }
    }

    pub fn add(&mut self, card: &str, outcome: Outcome, confidence: Confidence) {
        let scores = match confidence {
            Confidence::High => &mut self.high,
            Confidence::Medium => &mut self.medium,
            Confidence::Low => &mut self.low,
        };
        match &outcome {
            Outcome::Right => scores.right += 1,
            Outcome::Wrong(_) => scores.wrong += 1,
            _ => {}
        }
        let why = |w: &str| format!("[{}] {w}", confidence.name());
        let outcome = match outcome {
            Outcome::Wrong(w) => Outcome::Wrong(why(&w)),
            other => other,
        };
        self.tally.add(card, outcome);
    }

    fn merge(&mut self, other: FlashCalibration) {
        let t = &mut self.tally;
        t.cases += other.tally.cases;
        t.right += other.tally.right;
        t.wrong += other.tally.wrong;
        t.declined += other.tally.declined;
        t.nothing_to_find += other.tally.nothing_to_find;
        for e in other.tally.wrong_examples {
            if t.wrong_examples.len() < 10 {
                t.wrong_examples.push(e);
            }
        }
        for e in other.tally.declined_examples {
            if t.declined_examples.len() < 10 {
                t.declined_examples.push(e);
            }
        }
        for (mine, theirs) in [
            (&mut self.high, other.high),
            (&mut self.medium, other.medium),
            (&mut self.low, other.low),
        ] {
            mine.right += theirs.right;
            mine.wrong += theirs.wrong;
        }
    }
}

/// The calibration table by confidence, Markdown.
pub fn confidence_table(results: &[FlashCalibration]) -> String {
    let mut out = String::from(
        "| command | cards | answered | declined | nothing to find | high: right / wrong | medium: right / wrong | low: right / wrong |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in results {
        let t = &r.tally;
        let _ = writeln!(
            out,
            "| {} | {} | {} ({:.0}%) | {} | {} | {} / {} | {} / {} | {} / {} |",
            t.analysis,
            t.cases,
            t.answered(),
            100.0 * t.answer_rate(),
            t.declined,
            t.nothing_to_find,
            r.high.right,
            r.high.wrong,
            r.medium.right,
            r.medium.wrong,
            r.low.right,
            r.low.wrong
        );
    }
    out
}

// ------------------------------------------------------------------ align

/// The diff the simulator's cost law gives a read of `block` bytes
/// straddling an AU boundary over one inside it, ns.
fn au_diff_ns(p: &SimParams, block: u64) -> u64 {
    let xfer = |len: u64, rate: u64| (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64;
    let link = |cost: u64| p.link.map_or(cost, |l| cost.max(xfer(block, l)));
    let inside = link(p.cmd_ns + xfer(block, p.read));
    let across = link(2 * p.cmd_ns + xfer(block, p.read));
    across - inside
}

/// Whether the AU boundary shows clearly above the detector's noise floor
/// (3 µs or 3 % of a plain read) on this card.
fn au_visible(p: &SimParams, block: u64) -> bool {
    let xfer = |len: u64, rate: u64| (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64;
    let plain = p.cmd_ns + xfer(block, p.read);
    let plain = p.link.map_or(plain, |l| plain.max(xfer(block, l)));
    let floor = (plain * 3 / 100).max(3000);
    au_diff_ns(p, block) >= 2 * floor
}

/// Scores `flash align` on one card.
pub fn align_outcome(p: &SimParams) -> (Outcome, Confidence) {
    let plan = align::AlignPlan::default();
    let device = SimDevice::timing_only(p.clone());
    let r = match align::detect(&mut SimIo(&device), plan) {
        Ok(r) => r,
        Err(e) => {
            return (
                Outcome::Wrong(format!("the run failed: {e}")),
                Confidence::Low,
            );
        }
    };
    let outcome = match r.au {
        Some(au) if au == p.au => Outcome::Right,
        Some(au) => Outcome::Wrong(format!("AU {au}, the card has {}", p.au)),
        None if au_visible(p, plan.block) => Outcome::Declined(format!(
            "no AU; the boundary costs {} ns more",
            au_diff_ns(p, plan.block)
        )),
        None => Outcome::NothingToFind,
    };
    (outcome, r.au_confidence)
}

/// `flash align` over `cards` genuine cards drawn from `seed`.
pub fn calibrate_align(seed: u64, cards: usize) -> FlashCalibration {
    let mut population = Population::new(seed);
    let mut result = FlashCalibration::new("flash align: the AU");
    for _ in 0..cards {
        let card = population.draw();
        let (outcome, confidence) = align_outcome(&card);
        result.add(&spec_of(&card), outcome, confidence);
    }
    result
}

// --------------------------------------------------------------- capacity

/// Scores `flash capacity` on one card, its probe salted with `salt`.
pub fn capacity_outcome(p: &SimParams, salt: u64) -> (Outcome, Confidence) {
    let device = SimDevice::new(p.clone());
    let plan = capacity::CapacityPlan::new(p.size, DEFAULT_FLUSH, salt, capacity::Search::Full);
    let r = match capacity::detect(&mut SimIo(&device), &plan) {
        Ok(r) => r,
        Err(e) => {
            return (
                Outcome::Wrong(format!("the run failed: {e}")),
                Confidence::Low,
            );
        }
    };
    let fake = p.real < p.size;
    let outcome = match (fake, r.usable) {
        (false, None) => Outcome::Right,
        (false, Some(u)) => Outcome::Wrong(format!("a genuine card called fake, {u} bytes")),
        (true, None) => Outcome::Wrong(format!(
            "a {} fake of {} real called genuine",
            p.fake.name(),
            p.real
        )),
        (true, Some(u)) if u <= p.real && p.real <= u + r.precision => Outcome::Right,
        (true, Some(u)) => Outcome::Wrong(format!(
            "{} fake: {u} +{} bytes, the card has {}",
            p.fake.name(),
            r.precision,
            p.real
        )),
    };
    (outcome, r.confidence)
}

/// `flash capacity` over `cards` cards from `seed`, half of them fakes.
pub fn calibrate_capacity(seed: u64, cards: usize) -> FlashCalibration {
    let mut population = Population::with_mix(seed, Mix::default());
    let mut result = FlashCalibration::new("flash capacity: genuine, or the real size");
    for i in 0..cards {
        let card = population.draw_mixed();
        let (outcome, confidence) = capacity_outcome(&card, seed ^ (i as u64) << 8);
        result.add(&spec_of(&card), outcome, confidence);
    }
    result
}

/// `work` over `cards` cards split across `threads` threads (each its own
/// seed), merged.
pub fn split(
    seed: u64,
    cards: usize,
    threads: usize,
    work: fn(u64, usize) -> FlashCalibration,
) -> FlashCalibration {
    let threads = threads.max(1);
    let per = cards.div_ceil(threads);
    let parts: Vec<FlashCalibration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let n = per.min(cards - (k * per).min(cards));
                s.spawn(move || work(seed.wrapping_add((k as u64) << 32), n))
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut merged = FlashCalibration::default();
    for part in parts {
        if merged.tally.analysis.is_empty() {
            merged.tally.analysis = part.tally.analysis.clone();
        }
        merged.merge(part);
    }
    merged
}
