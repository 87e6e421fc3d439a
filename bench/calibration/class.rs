//! `flash class` scored over the seeded population
//! (`iocurve::engine::population`), in-process on each card's virtual
//! clock (a timing-only card: the class test reads back nothing), one case
//! per requirement of every class (C2 to V90, A1, A2), by the confidence
//! each verdict was given.
//!
//! The ground truth comes from the simulator's documented cost laws, not
//! from a second run of the method:
//!
//! * Pw, after the write cache: a 512 KiB (or one-AU) recording unit costs
//!   the command and its page programs on a card without cache; with one,
//!   once the cache is full, the time to drain it at the medium's speed,
//!   or the command and the transfer at burst speed if that is longer;
//!   the link caps both. Whole free AUs pay no garbage collection.
//! * Pr: a random RU read costs the command, the transfer and a quarter
//!   command for crossing pages; the link caps it.
//! * T_FW: the `fat` law over the card's life, not the method's writes:
//!   every `fat_every`-th FAT-area write stalls, so the largest is a
//!   stall whenever the card has one, and the worst mean of 8 holds as
//!   many stalls as any 8 writes in a row can.
//! * 4 KiB random reads: as Pr. 4 KiB random writes: exact when the
//!   card's open AUs cover the 16 MiB region (no garbage collection) or a
//!   full cache takes them (its steady state: the drain, or the command
//!   and transfer at burst speed; what drained before is slack, not the
//!   card's rate); otherwise the law bounds them between no collection
//!   and a whole AU copied on every miss, and a limit inside those bounds
//!   is "nothing to find" (the law does not decide).
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
use iocurve::result::flash::Status;

const SMALL: u64 = 4096;

/// Every class the command checks when the card names none.
pub fn all_classes() -> Vec<String> {
    CLASSES
        .iter()
        .map(|c| c.to_string())
        .chain(["A2".to_string()])
        .collect()
}

/// What the card's laws say it does, per figure.
#[derive(Debug, Clone, Copy)]
pub struct Truth {
    /// MB/s through the link, and of the card alone.
    pub pw: f64,
    pub pw_card: f64,
    pub pr: f64,
    pub pr_card: f64,
    /// ms.
    pub fat_mean8: f64,
    pub fat_max: f64,
    pub read_iops: f64,
    pub read_iops_card: f64,
    /// Bounds of the random-write IOPS, through the link and of the card.
    pub write_iops: (f64, f64),
    pub write_iops_card: (f64, f64),
    /// MB/s.
    pub link: Option<f64>,
}

fn xfer_ns(len: u64, rate: u64) -> u64 {
    (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64
}

fn mb(bytes: u64, ns: u64) -> f64 {
    bytes as f64 * 1e3 / ns.max(1) as f64
}

/// Pages a transfer of `len` bytes at a `len`-aligned offset touches.
fn pages(p: &SimParams, len: u64) -> u64 {
    (len / p.page).max(1)
}

fn link_ns(p: &SimParams, len: u64) -> u64 {
    p.link.map_or(0, |l| xfer_ns(len, l))
}

/// A write of `len` bytes: the command and its page programs.
fn program_ns(p: &SimParams, len: u64) -> u64 {
    p.cmd_ns + pages(p, len) * xfer_ns(p.page, p.write)
}

/// A write of `len` bytes once a cache is full (or never fills).
fn cached_ns(p: &SimParams, len: u64) -> u64 {
    (p.cmd_ns + xfer_ns(len, p.burst)).max(xfer_ns(len, p.write))
}

/// A read of `len` bytes at a `len`-aligned offset inside one AU.
fn read_ns(p: &SimParams, len: u64) -> u64 {
    let crosses_page = len > p.page;
    p.cmd_ns + xfer_ns(len, p.read) + if crosses_page { p.cmd_ns / 4 } else { 0 }
}

pub fn truth(p: &SimParams, plan: &ClassPlan) -> Truth {
    let ru = plan.ru;
    let card_ru = match p.cache > 0 {
        true => cached_ns(p, ru),
        false => program_ns(p, ru),
    };
    let (fat_mean8, fat_max) = fat_truth(p);
    let read = read_ns(p, SMALL).max(link_ns(p, SMALL));
    let without_link = SimParams {
        link: None,
        ..p.clone()
    };
    Truth {
        pw: mb(ru, card_ru.max(link_ns(p, ru))),
        pw_card: mb(ru, card_ru),
        pr: mb(ru, read_ns(p, ru).max(link_ns(p, ru))),
        pr_card: mb(ru, read_ns(p, ru)),
        fat_mean8,
        fat_max,
        read_iops: 1e9 / read as f64,
        read_iops_card: 1e9 / read_ns(p, SMALL) as f64,
        write_iops: write_iops_bounds(p, plan),
        write_iops_card: write_iops_bounds(&without_link, plan),
        link: p.link.map(|l| l as f64 / 1e6),
    }
}

/// The worst mean of 8 and the largest FAT-area write over the card's
/// life, ms (the `fat` law; population cards all have it): a stall every
/// `fat_every` writes puts ⌈8 / fat_every⌉ of them in the worst 8 in a row.
fn fat_truth(p: &SimParams) -> (f64, f64) {
    let write = |busy: u64| (program_ns(p, SMALL) + busy).max(link_ns(p, SMALL)) as f64 / 1e6;
    let plain = write(p.fat_ns.unwrap_or(0));
    if p.fat_max_ns == 0 || p.fat_every == 0 {
        return (plain, plain);
    }
    let stall = write(p.fat_max_ns);
    let stalls = 8u32.div_ceil(p.fat_every).min(8);
    let mean8 = (f64::from(8 - stalls) * plain + f64::from(stalls) * stall) / 8.0;
    (mean8, stall.max(plain))
}

/// Bounds of the random 4 KiB write IOPS in the method's region.
fn write_iops_bounds(p: &SimParams, plan: &ClassPlan) -> (f64, f64) {
    let link = link_ns(p, SMALL);
    if p.cache > 0 {
        let steady = 1e9 / cached_ns(p, SMALL).max(link) as f64;
        return (steady, steady);
    }
    let base = program_ns(p, SMALL).max(link);
    let aus = plan.random_region / p.au;
    if aus <= u64::from(p.open_au) {
        return (1e9 / base as f64, 1e9 / base as f64);
    }
    let miss = 1.0 - f64::from(p.open_au) / aus as f64;
    let copy = p.move_speed.map_or(p.write, |m| m.min(p.write));
    let worst = base as f64 + miss * xfer_ns(p.au, copy) as f64;
    (1e9 / worst, 1e9 / base as f64)
}

/// Scores one requirement's verdict against the truth.
pub fn outcome(c: &Check, t: &Truth) -> Outcome {
    match c.need {
        Need::SeqWrite(n) | Need::Sustained(n) => rate(c, n, t.pw, (t.pw_card, t.pw_card), t.link),
        Need::RuRead(n) => rate(c, n, t.pr, (t.pr_card, t.pr_card), t.link),
        Need::FatMean(l) => at_most(c, t.fat_mean8, l),
        Need::FatMax(l) => at_most(c, t.fat_max, l),
        Need::RandomReadIops(n) => {
            let card = t.read_iops_card;
            rate(c, n, t.read_iops, (card, card), link_iops(t))
        }
        Need::RandomWriteIops(n) => {
            let (lo, hi) = t.write_iops;
            match (lo >= n, hi < n) {
                (true, _) => rate(c, n, lo, t.write_iops_card, link_iops(t)),
                (_, true) => rate(c, n, hi, t.write_iops_card, link_iops(t)),
                _ => Outcome::NothingToFind,
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

fn judged(c: &Check, right: bool, truth: f64) -> Outcome {
    match right {
        true => Outcome::Right,
        false => Outcome::Wrong(format!(
            "{} {:?}: {} at {:.2}, the law gives {truth:.2} (limit {})",
            c.class,
            c.need.kind(),
            c.status.name(),
            c.measured,
            c.limit
        )),
    }
}

fn at_most(c: &Check, truth: f64, limit: f64) -> Outcome {
    if near(truth, limit) {
        return Outcome::NothingToFind;
    }
    let right = (c.status == Status::Pass) == (truth <= limit) && c.status != Status::Link;
    judged(c, right, truth)
}

/// `card`: the card's own figure without the link, as bounds (equal
/// where the law is exact).
fn rate(c: &Check, limit: f64, truth: f64, card: (f64, f64), link: Option<f64>) -> Outcome {
    if near(truth, limit) {
        return Outcome::NothingToFind;
    }
    let below = |k: f64, card: f64| link.is_some_and(|l| l < limit && card >= k * l);
    let right = match c.status {
        Status::Pass => truth >= limit,
        // The link hides the card: what it does beyond is out of reach.
        Status::Link if below(0.98, card.1) => {
            return Outcome::BeyondReach(format!(
                "LINK at {:.2}, the card beyond the link",
                c.measured
            ));
        }
        Status::Link => false,
        // FAIL is wrong only where the card is surely faster than the link.
        Status::Fail => truth < limit && !below(1.02, card.0),
    };
    judged(c, right, truth)
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
    let t = truth(p, &plan);
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
