//! The second calibration population: real cards, each simulated from
//! what a public source measured on it (`bench/real_cards.tsv`, read by
//! [`cards`]), and scored against those published facts rather than
//! against the simulator's laws, so that a verdict is checked against
//! something measured on a card and not only against the model the
//! generated population draws from.
//!
//! Each card runs as the generated calibrations run theirs
//! ([`super::flash::align_outcome`], [`super::flash::open_au_outcome`],
//! `flash class`'s measure and judge), but:
//!
//! * `align` is a case only where the erase block was published, and
//!   `open-au` only where the open-AU count was; the spec's AU and count
//!   are the published ones ([`cards::disagreements`] keeps them so).
//! * A published fact the command did not see is declined, never "nothing
//!   to find": there was something to find. So is an open-AU count beyond
//!   the test's reach ("64+").
//! * `class`: one case per requirement whose figure a source published
//!   (Pw and the A-classes' sustained write against the linear write
//!   speed, Pr against the read speed, random IOPS against the random
//!   figures); FAT latencies were published for no card and are no case.
//!   The verdict is right when PASS or FAIL matches the published figure
//!   against the limit; a figure (or any end of a published range) within
//!   [`TOLERANCE`] of the limit decides nothing ("nothing to find"); LINK
//!   is declined (no card here has a link ceiling).
//! * No card publishes its write cache: `sustain` and `cache` have no
//!   case.

#[path = "real/cards.rs"]
pub mod cards;

use super::Outcome;
use super::class::all_classes;
use super::flash::{FlashCalibration, align_outcome, open_au_outcome};
use cards::{Facts, Figure, OpenAus, RealCard};
use iocurve::analysis::flash::class::{Need, judge, requirements};
use iocurve::engine::sim::SimDevice;
use iocurve::flash::class::{self, ClassPlan};
use iocurve::flash::{SimIo, open_au};
use iocurve::result::flash::{Confidence, Status};

/// How far from a class limit a published figure must lie to decide it:
/// the sources measured through other hosts, request sizes and tools than
/// the class test's.
pub const TOLERANCE: f64 = 0.10;

/// A command's outcome on a card with the published fact to find: not
/// seeing it is declining it.
fn with_a_fact(outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::NothingToFind => {
            Outcome::Declined("the published fact did not show to the command".into())
        }
        other => other,
    }
}

/// `flash align` on every card whose erase block was published.
pub fn calibrate_align(cards: &[RealCard]) -> FlashCalibration {
    let mut result = FlashCalibration::new("flash align: the published erase block");
    for c in cards.iter().filter(|c| c.facts.erase_block.is_some()) {
        let (outcome, confidence) = align_outcome(&c.params);
        result.add(&c.name, with_a_fact(outcome), confidence);
    }
    result
}

/// `flash open-au`, given the card's AU, on every card whose open-AU
/// count was published.
pub fn calibrate_open_au(cards: &[RealCard]) -> FlashCalibration {
    let mut result = FlashCalibration::new("flash open-au: the published count (AU given)");
    for c in cards {
        let (outcome, confidence) = match c.facts.open_aus {
            None => continue,
            Some(OpenAus::Exactly(_)) => open_au_outcome(&c.params),
            Some(OpenAus::AtLeast(n)) => beyond_reach(c, n),
        };
        result.add(&c.name, with_a_fact(outcome), confidence);
    }
    result
}

/// A card that kept at least `n` AUs open in its source's test, run with
/// its AU: a count of `n` or more is right, a smaller one wrong, none a
/// decline (the fact lies beyond the AUs the command tries).
fn beyond_reach(c: &RealCard, n: u32) -> (Outcome, Confidence) {
    let plan = open_au::OpenAuPlan::fitting(c.params.au, c.params.size);
    let device = SimDevice::timing_only(c.params.clone());
    let r = match open_au::detect(&mut SimIo(&device), plan) {
        Ok(r) => r,
        Err(e) => return (Outcome::Declined(format!("refused: {e}")), Confidence::Low),
    };
    let outcome = match r.open_aus {
        Some(k) if k >= n => Outcome::Right,
        Some(k) => Outcome::Wrong(format!("{k} open AUs, the source saw {n}+")),
        None => Outcome::Declined(format!(
            "no count up to {} AUs; the source saw {n}+",
            plan.max_n
        )),
    };
    (outcome, r.confidence)
}

/// The published figure a requirement is checked against, if any.
fn published(need: Need, f: &Facts) -> Option<Figure> {
    match need {
        Need::SeqWrite(_) | Need::Sustained(_) => f.write,
        Need::RuRead(_) => f.read,
        Need::RandomReadIops(_) => f.read_iops,
        Need::RandomWriteIops(_) => f.write_iops,
        Need::FatMean(_) | Need::FatMax(_) => None,
    }
}

/// Whether the published figure meets the limit (every requirement with
/// a published figure is an "at least" one), or `None` when some end of
/// it lies within [`TOLERANCE`] of the limit.
fn meets(figure: Figure, limit: f64) -> Option<bool> {
    if figure.lo >= limit * (1.0 + TOLERANCE) {
        Some(true)
    } else if figure.hi <= limit * (1.0 - TOLERANCE) {
        Some(false)
    } else {
        None
    }
}

/// Scores one verdict against the published figure.
fn class_outcome(status: Status, measured: f64, figure: Figure, limit: f64) -> Outcome {
    let Some(truth) = meets(figure, limit) else {
        return Outcome::NothingToFind;
    };
    match (status, truth) {
        (Status::Link, _) => Outcome::Declined(format!("LINK at {measured:.2}")),
        (Status::Pass, true) | (Status::Fail, false) => Outcome::Right,
        (status, _) => Outcome::Wrong(format!(
            "{status:?} at {measured:.2}, published {:.2}-{:.2} (limit {limit})",
            figure.lo, figure.hi
        )),
    }
}

/// `flash class` on one card: one outcome per requirement with a
/// published figure.
pub fn class_outcomes(c: &RealCard, seed: u64) -> Vec<(Outcome, Confidence)> {
    let classes = all_classes();
    let plan = ClassPlan::new(c.params.au, c.params.size);
    let device = SimDevice::timing_only(c.params.clone());
    let figures = match class::measure(&mut SimIo(&device), &plan, seed) {
        Ok(f) => f,
        Err(e) => return refused(c, &classes, &e.to_string()),
    };
    judge(&classes, &figures, None)
        .iter()
        .filter_map(|check| {
            let figure = published(check.need, &c.facts)?;
            let outcome = class_outcome(check.status, check.measured, figure, check.limit);
            Some((outcome, check.confidence))
        })
        .collect()
}

/// The cases of a card the command refused: declined where the published
/// figure decides, nothing to find where it does not.
fn refused(c: &RealCard, classes: &[String], why: &str) -> Vec<(Outcome, Confidence)> {
    let needs = classes
        .iter()
        .flat_map(|k| requirements(k).unwrap_or_default());
    needs
        .filter_map(|need| {
            let figure = published(need, &c.facts)?;
            let outcome = match meets(figure, need.limit().0) {
                Some(_) => Outcome::Declined(format!("the run failed: {why}")),
                None => Outcome::NothingToFind,
            };
            Some((outcome, Confidence::Low))
        })
        .collect()
}

/// `flash class` over every card.
pub fn calibrate_class(cards: &[RealCard]) -> FlashCalibration {
    let mut result = FlashCalibration::new("flash class: each requirement with a published figure");
    for (i, c) in cards.iter().enumerate() {
        for (outcome, confidence) in class_outcomes(c, 0x5eed ^ (i as u64) << 16) {
            result.add(&c.name, outcome, confidence);
        }
    }
    result
}

/// Every real-card calibration, in the order of the table; an error when
/// the data file does not read or a spec departs from its facts.
pub fn calibrate_real() -> Result<Vec<FlashCalibration>, String> {
    let cards = cards::cards()?;
    if let Some((c, d)) = cards
        .iter()
        .map(|c| (c, cards::disagreements(c)))
        .find(|(_, d)| !d.is_empty())
    {
        return Err(format!("{}: {d:?}", c.name));
    }
    let works: [fn(&[RealCard]) -> FlashCalibration; 3] =
        [calibrate_align, calibrate_open_au, calibrate_class];
    Ok(std::thread::scope(|s| {
        let handles: Vec<_> = works.iter().map(|work| s.spawn(|| work(&cards))).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    }))
}
