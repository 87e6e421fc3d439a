//! `flash class` scored over the seeded population
//! (`iocurve::engine::population`), in-process on each card's virtual
//! clock (a timing-only card: the class test reads back nothing), one case
//! per requirement of every class (C2 to V90, A1, A2), by the confidence
//! each verdict was given.
//!
//! The ground truth comes from the simulator's documented cost laws over
//! the card's life in use, with the laws of real cards (`real_world`
//! cards: drain, `through`, position, pauses, jittered FAT stalls), not
//! from a second run of the method: see `super::class_truth`. Where the
//! limit lies inside what a run can see of a law (a window that met no
//! pause, a FAT stall a cache in front hid), a wrong answer said low is
//! "beyond reach", a confident one wrong. The random writes' law bounds
//! the collection between none and a whole AU copied on every miss of
//! the open AUs; a limit inside those bounds is "nothing to find" (the
//! law does not decide).
//!
//! Scoring (random 4 KiB requests as rates, the link's ceiling being its
//! bandwidth over 4 KiB): PASS is right when the truth meets the limit. LINK says
//! "cannot tell": the link is below the limit and the card ran at it, so
//! what the card does beyond the link is not seen; it is "nothing to find"
//! when the card itself runs at the link's speed or faster (within 2%),
//! and wrong when the card is clearly slower than the link (its own
//! figure was seen, and FAIL was the answer). FAIL is right when the truth
//! misses the limit and the card is not clearly faster than a link below
//! the limit (then LINK was the answer). A truth within 0.2% of its limit
//! is "nothing to find": rounding in the law decides it.

use super::Outcome;
use super::flash::FlashCalibration;
use iocurve::analysis::flash::class::{CLASSES, Check, Need, judge, requirements};
use iocurve::engine::population::{Mix, Population, spec_of};
use iocurve::engine::sim::{SimDevice, SimParams};
use iocurve::flash::SimIo;
use iocurve::flash::class::{self, ClassPlan};
use iocurve::result::flash::{Confidence, Status};

use super::class_truth::SMALL;
pub use super::class_truth::{Law, Truth, truth};

/// Every class the command checks when the card names none.
pub fn all_classes() -> Vec<String> {
    CLASSES
        .iter()
        .map(|c| c.to_string())
        .chain(["A2".to_string()])
        .collect()
}

/// Scores one requirement's verdict against the truth.
pub fn outcome(c: &Check, t: &Truth) -> Outcome {
    match c.need {
        Need::SeqWrite(n) | Need::Sustained(n) => rate(c, n, t.pw, t.pw_card, t.link),
        Need::RuRead(n) => rate(c, n, t.pr, t.pr_card, t.link),
        Need::FatMean(l) => at_most(c, t.fat_mean8, l),
        Need::FatMax(l) => at_most(c, t.fat_max, l),
        Need::RandomReadIops(n) => rate(c, n, t.read_iops, t.read_iops_card, link_iops(t)),
        Need::RandomWriteIops(n) => {
            let (lo, hi) = t.write_iops.truth;
            match lo >= n || hi < n {
                true => rate(c, n, t.write_iops, t.write_iops_card, link_iops(t)),
                // The law bounds the collection and the limit is inside.
                false => Outcome::NothingToFind,
            }
        }
    }
}

/// The link's bandwidth ceiling in random 4 KiB requests per second.
fn link_iops(t: &Truth) -> Option<f64> {
    t.link.map(|mb| mb * 1e6 / SMALL as f64)
}

fn near(truth: f64, limit: f64) -> bool {
    (truth - limit).abs() <= 0.002 * limit
}

/// A wrong answer where the run may not have seen what decides it (the
/// limit inside what a run sees of the law) is beyond reach when said
/// low; a confident one stays wrong.
fn judged(c: &Check, right: bool, truth: f64, law: Law) -> Outcome {
    let unseen = law.seen.0 < c.limit && c.limit < law.seen.1;
    let said = |low: &str, over: &str| {
        format!(
            "{} {:?}: {} at {:.2}{low}, the law gives {truth:.2}{over}, a run sees {:.2}–{:.2} (limit {})",
            c.class,
            c.need.kind(),
            c.status.name(),
            c.measured,
            law.seen.0,
            law.seen.1,
            c.limit
        )
    };
    match right {
        true => Outcome::Right,
        false if unseen && c.confidence == Confidence::Low => {
            Outcome::BeyondReach(said(" (low)", " over life"))
        }
        false => Outcome::Wrong(said("", "")),
    }
}

fn at_most(c: &Check, law: Law, limit: f64) -> Outcome {
    let truth = law.truth.1;
    if near(truth, limit) {
        return Outcome::NothingToFind;
    }
    let right = (c.status == Status::Pass) == (truth <= limit) && c.status != Status::Link;
    judged(c, right, truth, law)
}

/// `law`: through the link; `card`: the card's own figure without it.
fn rate(c: &Check, limit: f64, law: Law, card: Law, link: Option<f64>) -> Outcome {
    let (lo, hi) = law.truth;
    let truth = if lo >= limit { lo } else { hi };
    if near(truth, limit) {
        return Outcome::NothingToFind;
    }
    let below = |k: f64, card: f64| link.is_some_and(|l| l < limit && card >= k * l);
    let right = match c.status {
        Status::Pass => truth >= limit,
        // The link hides the card: what it does beyond is out of reach.
        Status::Link if below(0.98, card.truth.1) => {
            return Outcome::BeyondReach(format!(
                "LINK at {:.2}, the card beyond the link",
                c.measured
            ));
        }
        Status::Link => false,
        // FAIL is wrong only where the card is surely faster than the link
        // and would meet the limit without it.
        Status::Fail => truth < limit && (card.truth.1 < limit || !below(1.02, card.truth.0)),
    };
    judged(c, right, truth, law)
}

/// Scores `flash class` on one card: one outcome per requirement.
pub fn class_outcomes(
    p: &SimParams,
    seed: u64,
) -> Vec<(Outcome, iocurve::result::flash::Confidence)> {
    let classes = all_classes();
    let plan = ClassPlan::new(p.au, p.size);
    let device = SimDevice::timing_only(p.clone());
    let link = p.link.map(|l| l as f64 / 1e6);
    let figures = match class::measure(&mut SimIo(&device), &plan, seed) {
        Ok(f) => f,
        // A refusal (a card too small for the regions the method writes,
        // as 32 MiB cards with 256 KiB AUs are) declines every requirement.
        Err(e) => {
            let per_card = classes
                .iter()
                .map(|c| requirements(c).map_or(0, |r| r.len()))
                .sum();
            let why = Outcome::Declined(format!("the run failed: {e}"));
            return vec![(why, iocurve::result::flash::Confidence::Low); per_card];
        }
    };
    let t = truth(p, &plan, figures.pw.written);
    judge(&classes, &figures, link)
        .iter()
        .map(|c| (outcome(c, &t), c.confidence))
        .collect()
}

/// `flash class` over `cards` genuine cards drawn from `seed`, with FAT
/// latencies and move speeds.
pub fn calibrate_class(seed: u64, cards: usize) -> FlashCalibration {
    let mix = Mix {
        fat_and_move: true,
        real_world: true,
        ..Mix::default()
    };
    let mut population = Population::with_mix(seed, mix);
    let mut result = FlashCalibration::new("flash class: one case per requirement of each card");
    for i in 0..cards {
        let card = population.draw();
        let spec = spec_of(&card);
        for (outcome, confidence) in class_outcomes(&card, seed ^ (i as u64) << 16) {
            result.add(&spec, outcome, confidence);
        }
    }
    result
}
