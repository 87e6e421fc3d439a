//! `flash align`, `capacity`, `open-au` and `cache` scored over the seeded population
//! (`iocurve::engine::population`), in-process through the library on each
//! card's virtual clock, by the confidence each verdict was given:
//!
//! * `align`: right when the AU named is the card's. Declining is
//!   "nothing to find" when the simulator's own cost law makes the AU
//!   boundary invisible (a link ceiling slower than the medium hides the
//!   extra command of a straddling read: the diff is below twice the
//!   detector's noise floor); otherwise it is a decline.
//! * `capacity`: over genuine cards and counterfeits of every kind
//!   ([`Population::draw_mixed`]), with the command's default flush (as
//!   much as the cache it measures needs, up to
//!   [`capacity::AUTO_FLUSH`]). Right when a genuine card is called genuine, or a fake is
//!   called fake with its real size inside the range reported; every other
//!   verdict is wrong (a fake called genuine included).
//! * `open-au`: over genuine cards, each run with its own AU (as with
//!   `--au`; a second table takes the AU boundary timing finds, or the
//!   assumed 4 MiB). Right when the count is the card's `open_au`. There
//!   is nothing to find when, by the simulator's cost law, a write that
//!   closes an AU (collecting all of it but the one write) takes less than
//!   1.31× (the detector's 1.25× and 5 %) the time of one into an open AU
//!   (small AUs on slow commands, a link slower than both), when a write
//!   cache takes every write (the law collects no AU behind it), or when
//!   the test cannot reach two AUs past the card's count (a large AU on a
//!   small card).
//! * `cache`: over genuine cards. Right when the size named is within a
//!   tenth of the card's cache or two of the test's writes (1 MiB). There
//!   is nothing to find when the card has no cache, when by the cost law a
//!   full cache slows a write by less than the detector's fall (to 60 %,
//!   with a 5 % margin: command time or a link cap the burst speed), or
//!   when the cache fills only after more than the test writes (its
//!   verdict then says "or a larger one").
//!
//! The scores are kept per confidence, since what a user may rely on is
//! that "high" is never wrong and "medium" rarely.

use super::{Outcome, Tally};
use iocurve::analysis::flash::{cache::AFTER, cache::FALL, open_au::VISIBLE};
use iocurve::engine::population::{Mix, Population, spec_of};
use iocurve::engine::sim::{SimDevice, SimParams};
use iocurve::flash::{SimIo, align, cache, capacity, open_au};
use iocurve::result::flash::Confidence;
use std::fmt::Write as _;

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
        let (outcome, sure_and_wrong) = match outcome {
            Outcome::Wrong(w) => (Outcome::Wrong(why(&w)), confidence > Confidence::Low),
            other => (other, false),
        };
        let example = match (&outcome, sure_and_wrong) {
            (Outcome::Wrong(w), true) => Some(format!("{card}: {w}")),
            _ => None,
        };
        self.tally.add(card, outcome);
        // A wrong answer given with confidence is the one to read first:
        // it displaces a low one from the examples kept.
        let examples = &mut self.tally.wrong_examples;
        if let Some(e) = example.filter(|e| !examples.contains(e)) {
            examples.insert(0, e);
            examples.truncate(10);
        }
    }

    fn merge(&mut self, other: FlashCalibration) {
        let t = &mut self.tally;
        t.cases += other.tally.cases;
        t.right += other.tally.right;
        t.wrong += other.tally.wrong;
        t.declined += other.tally.declined;
        t.beyond_reach += other.tally.beyond_reach;
        t.nothing_to_find += other.tally.nothing_to_find;
        // Wrong answers given with confidence first, as in `add`.
        t.wrong_examples.extend(other.tally.wrong_examples);
        t.wrong_examples.sort_by_key(|e| e.contains(": [low] "));
        t.wrong_examples.truncate(10);
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
        "| command | cards | answered | declined | beyond reach | nothing to find | high: right / wrong | medium: right / wrong | low: right / wrong |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in results {
        let t = &r.tally;
        let _ = writeln!(
            out,
            "| {} | {} | {} ({:.0}%) | {} | {} | {} | {} / {} | {} / {} | {} / {} |",
            t.analysis,
            t.cases,
            t.answered(),
            100.0 * t.answer_rate(),
            t.declined,
            t.beyond_reach,
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

/// The genuine cards of the field: every card has a FAT-area busy time
/// and some a move speed (Pm), as in the field. Where the truth laws
/// below leave them out it is because the command never meets them: align
/// only reads; cache writes whole AUs beyond the FAT area in order, so no
/// AU holds used parts to move; open-au writes beyond the FAT area, and
/// its law accounts for the move speed ([`open_au_collapse`]).
fn field(seed: u64) -> Population {
    let mix = Mix {
        fat_and_move: true,
        real_world: true,
        ..Mix::default()
    };
    Population::with_mix(seed, mix)
}

/// The share of SDHC and SDXC cards whose AU is a TLC erase block, in the
/// population of the tests that find the AU by timing (issue 37): a
/// quarter, so that about a tenth of the cards have a 9·2^k AU.
const ERASE_BLOCKS: f64 = 0.25;

/// The field of [`field`] with [`ERASE_BLOCKS`] of its SDHC and SDXC cards
/// having a TLC erase block as their AU (6–36 MiB, 9·2^k ones among them;
/// [`iocurve::engine::population::TLC_ERASE_BLOCK_PAGES`]): the cards the
/// boundary timing must name, or decline, and never name wrongly.
fn field_with_erase_blocks(seed: u64) -> Population {
    let mix = Mix {
        fat_and_move: true,
        erase_blocks: ERASE_BLOCKS,
        real_world: true,
        ..Mix::default()
    };
    Population::with_mix(seed, mix)
}

// ------------------------------------------------------------------ align

/// The diff the simulator's cost law gives a read of `block` bytes
/// straddling an AU boundary over one inside it, ns.
fn au_diff_ns(p: &SimParams, block: u64) -> u64 {
    let xfer = |len: u64, rate: u64| (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64;
    let link = |cost: u64| p.link.map_or(cost, |l| cost.max(xfer(block, l)));
    let inside = link(p.cmd_ns + xfer(block, p.read));
    let across = link(p.cmd_ns + au_step_ns(p) + xfer(block, p.read));
    across - inside
}

/// The least extra cost the card's read law gives an AU boundary
/// (`read_step` thousandths of a command, less `read_jitter` at worst),
/// never under a page boundary's quarter command.
fn au_step_ns(p: &SimParams) -> u64 {
    let base = u128::from(p.cmd_ns) * u128::from(p.read_step) / 1000;
    let least = base * u128::from(100 - p.read_jitter.min(100)) / 100;
    (least as u64).max(p.cmd_ns / 4)
}

/// Whether the card's reads show its AU at all: an AU boundary that costs
/// no more than a page boundary (a stick whose reads show no erase-block
/// step) leaves nothing to find by reading.
fn au_shows_in_reads(p: &SimParams) -> bool {
    au_step_ns(p) > p.cmd_ns / 4
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
        None if au_shows_in_reads(p) => Outcome::BeyondReach(format!(
            "no AU; the boundary costs {} ns more, under the noise floor",
            au_diff_ns(p, plan.block)
        )),
        None => Outcome::NothingToFind,
    };
    (outcome, r.au_confidence)
}

/// `flash align` over `cards` genuine cards drawn from `seed`.
pub fn calibrate_align(seed: u64, cards: usize) -> FlashCalibration {
    let mut population = field_with_erase_blocks(seed);
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
    let plan = capacity::CapacityPlan::new(p.size, capacity::AUTO_FLUSH, salt);
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
    let mut population = Population::with_mix(
        seed,
        Mix {
            real_world: true,
            ..Mix::default()
        },
    );
    let mut result = FlashCalibration::new("flash capacity: genuine, or the real size");
    for i in 0..cards {
        let card = population.draw_mixed();
        let (outcome, confidence) = capacity_outcome(&card, seed ^ (i as u64) << 8);
        result.add(&spec_of(&card), outcome, confidence);
    }
    result
}

// ---------------------------------------------------------------- open-au

/// Nanoseconds to move `len` bytes at `rate` bytes/s, as the simulator
/// counts them.
fn xfer(len: u64, rate: u64) -> u64 {
    (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64
}

/// A cost under the card's link ceiling, if any, for a transfer of `len`.
fn linked(p: &SimParams, cost: u64, len: u64) -> u64 {
    p.link.map_or(cost, |l| cost.max(xfer(len, l)))
}

/// The open-AU test's collapse by the simulator's cost law: the mean time
/// of the counted writes with one AU more than the card keeps open over
/// that with as many as it keeps, the test's writes replayed in its order
/// ([`open_au_law`]). `None` when the law shows no collapse at all: a
/// write cache takes every write at burst speed and no AU is ever
/// collected behind it.
fn open_au_collapse(p: &SimParams, plan: &open_au::OpenAuPlan) -> Option<f64> {
    if p.cache > 0 {
        return None;
    }
    // Pauses and a speed that falls with the position are not in this
    // replay: their cards' counts are scored, their collapse not judged.
    if p.pause_ns > 0 || p.slow_end < 1000 {
        return None;
    }
    let times = open_au_law(p, plan, p.open_au + 1);
    let within = times[p.open_au as usize - 1];
    let past = times[p.open_au as usize];
    Some(past as f64 / within.max(1) as f64)
}

/// The mean write time (ns) of each N = 1..=`upto` of the open-AU test by
/// the simulator's documented law: each write costs the command and its
/// page programs; opening an AU beyond the card's `open_au` closes the
/// least recently used one, which copies what it did not get written
/// while open (the AU less its session's bytes) at the write speed, or,
/// with a move speed (Pm), relocates the 64ths of it written before its
/// session and not since. With Pm the collapse grows as the test fills
/// the AUs, so it is smaller than the copy law's at first.
fn open_au_law(p: &SimParams, plan: &open_au::OpenAuPlan, upto: u32) -> Vec<u64> {
    // (AU index, session bytes, session 64ths) in LRU order; used 64ths.
    let mut open: Vec<(usize, u64, u64)> = Vec::new();
    let mut used = vec![0u64; upto as usize];
    let mut cursor = vec![0u64; upto as usize];
    let part = |at: u64| (u128::from(at) * 64 / u128::from(p.au)).min(63) as u32;
    let mut means = Vec::new();
    for n in 1..=upto as usize {
        let (mut ns, mut writes) = (0u64, 0u64);
        for round in 0..=plan.rounds {
            for i in 0..n {
                let at = cursor[i];
                cursor[i] = (at + plan.chunk) % p.au;
                let (first, last) = (part(at), part(at + plan.chunk - 1));
                let parts = (first..=last).fold(0u64, |m, k| m | 1 << k);
                let pages = (at + plan.chunk - 1) / p.page - at / p.page + 1;
                let mut cost = p.cmd_ns + pages * xfer(p.page, p.write);
                match open.iter().position(|o| o.0 == i) {
                    Some(k) => {
                        let mut o = open.remove(k);
                        o.1 += plan.chunk;
                        o.2 |= parts;
                        open.push(o);
                    }
                    None => {
                        if open.len() >= p.open_au as usize {
                            let (j, bytes, session) = open.remove(0);
                            cost += match p.move_speed {
                                Some(pm) => {
                                    let moved = u64::from((used[j] & !session).count_ones());
                                    xfer((u128::from(moved) * u128::from(p.au) / 64) as u64, pm)
                                }
                                None => xfer(p.au - bytes.min(p.au), p.write),
                            };
                        }
                        open.push((i, plan.chunk, parts));
                    }
                }
                if p.move_speed.is_some() {
                    used[i] |= parts;
                }
                if round > 0 {
                    ns += linked(p, cost, plan.chunk);
                    writes += 1;
                }
            }
        }
        means.push(ns / writes.max(1));
    }
    means
}

/// Whether the count shows on this card: the collapse is at least
/// [`OPEN_AU_VISIBLE`] by the cost law and the test reaches two AUs past
/// the card's open ones.
fn open_au_visible(p: &SimParams, plan: &open_au::OpenAuPlan) -> bool {
    let reaches = plan.max_n > p.open_au + 1;
    reaches && open_au_collapse(p, plan).is_some_and(|r| r >= OPEN_AU_VISIBLE)
}

/// The smallest collapse there is to find: the detector's threshold
/// ([`VISIBLE`]) and a margin, so that a card at the threshold
/// itself is not counted against it.
const OPEN_AU_VISIBLE: f64 = VISIBLE * 1.05;

/// Scores `flash open-au` on one card run with the AU `au` (`assumed`:
/// a fallback, not the card's own).
fn open_au_scored(p: &SimParams, au: u64, assumed: bool) -> (Outcome, Confidence) {
    let device = SimDevice::timing_only(p.clone());
    let mut plan = open_au::OpenAuPlan::fitting(au, p.size);
    plan.au_assumed = assumed;
    let visible = open_au_visible(p, &open_au::OpenAuPlan::fitting(p.au, p.size));
    let r = match open_au::detect(&mut SimIo(&device), plan) {
        Ok(r) => r,
        Err(e) if !visible => {
            return (
                unseen_open_aus(p, &format!("refused: {e}")),
                Confidence::Low,
            );
        }
        Err(e) => return (Outcome::Declined(format!("refused: {e}")), Confidence::Low),
    };
    let outcome = match r.open_aus {
        Some(n) if n == p.open_au => Outcome::Right,
        Some(n) => Outcome::Wrong(format!("{n} open AUs, the card keeps {}", p.open_au)),
        None if visible => Outcome::Declined(format!(
            "no count; the law collapses {:.2}×",
            open_au_collapse(p, &open_au::OpenAuPlan::fitting(p.au, p.size)).unwrap_or(1.0)
        )),
        None => unseen_open_aus(p, "no count"),
    };
    (outcome, r.confidence)
}

/// Whether the card's open AUs cost something the replay of
/// [`open_au_law`] leaves out.
fn has_unreplayed_open_au_cost(p: &SimParams) -> bool {
    (p.cache > 0 && p.through) || (p.cache == 0 && (p.pause_ns > 0 || p.slow_end < 1000))
}

/// A card whose open AUs the test cannot show: nothing to find when its
/// law has no cost for a closed AU at all (a cache takes every write and
/// no AU is collected behind it), else they are there but beyond reach (a
/// collapse too shallow to tell, or more AUs than the test tries).
fn unseen_open_aus(p: &SimParams, what: &str) -> Outcome {
    let plan = open_au::OpenAuPlan::fitting(p.au, p.size);
    match open_au_collapse(p, &plan) {
        Some(r) if r > 1.0 => Outcome::BeyondReach(format!(
            "{what}; the law collapses {r:.2}× past {} open AUs (the test tries up to {})",
            p.open_au, plan.max_n
        )),
        // Behind a cache whose medium work includes the AU closes (`through`),
        // or with pauses or a speed by position, the count is the card's
        // but its collapse is not replayed here: unseen, not absent.
        _ if has_unreplayed_open_au_cost(p) => Outcome::BeyondReach(format!(
            "{what}; {} open AUs behind a cache, pauses or a speed by position",
            p.open_au
        )),
        _ => Outcome::NothingToFind,
    }
}

/// Scores `flash open-au` on one card given its own AU (`--au`).
pub fn open_au_outcome(p: &SimParams) -> (Outcome, Confidence) {
    open_au_scored(p, p.au, false)
}

/// `flash open-au` over `cards` genuine cards from `seed`, each given its
/// own AU.
pub fn calibrate_open_au(seed: u64, cards: usize) -> FlashCalibration {
    let mut population = field(seed);
    let mut result = FlashCalibration::new("flash open-au: the count (AU given)");
    for _ in 0..cards {
        let card = population.draw();
        let (outcome, confidence) = open_au_outcome(&card);
        result.add(&spec_of(&card), outcome, confidence);
    }
    result
}

/// `flash open-au` as the command runs it without `--au`: the AU from
/// boundary timing when it is at least medium, else the assumed 4 MiB.
pub fn calibrate_open_au_detected(seed: u64, cards: usize) -> FlashCalibration {
    let mut population = field_with_erase_blocks(seed);
    let mut result = FlashCalibration::new("flash open-au: the count (AU from align)");
    for _ in 0..cards {
        let card = population.draw();
        let device = SimDevice::timing_only(card.clone());
        let found = align::detect(&mut SimIo(&device), align::AlignPlan::default())
            .ok()
            .filter(|r| r.au_confidence >= Confidence::Medium)
            .and_then(|r| r.au);
        let (outcome, confidence) = match found {
            Some(au) => open_au_scored(&card, au, false),
            None => open_au_scored(&card, ASSUMED_AU, true),
        };
        result.add(&spec_of(&card), outcome, confidence);
    }
    result
}

/// The AU the command assumes when none is given or found.
const ASSUMED_AU: u64 = 4 << 20;

// ------------------------------------------------------------------ cache

/// The cache test's burst and sustained write times by the simulator's
/// cost law, ns per write: into the cache, and once it is full (it drains
/// at the medium's speed, so a write then waits for its own length).
fn cache_law(p: &SimParams, chunk: u64) -> (u64, u64) {
    let burst = p.cmd_ns + xfer(chunk, p.burst);
    let full = burst.max(xfer(chunk, p.write));
    (linked(p, burst, chunk), linked(p, full, chunk))
}

/// The bytes the test writes before the cache of `p` is full by the cost
/// law (each burst write adds its length less what drained meanwhile), or
/// `None` when the cache never fills.
fn cache_fill_bytes(p: &SimParams, chunk: u64) -> Option<u64> {
    let (burst, _) = cache_law(p, chunk);
    let drained = (u128::from(burst) * u128::from(p.write) / 1_000_000_000) as u64;
    let net = chunk.checked_sub(drained).filter(|n| *n > 0)?;
    Some(p.cache.div_ceil(net).saturating_mul(chunk))
}

/// Whether the cache shows on this card: by the law the speed falls to
/// under [`FALL`] of the burst's (with a margin of 5 %, so that a
/// card at the threshold itself is not counted against the detector) and
/// the cache fills within the bytes the test may write, with room left to
/// confirm the fall. A larger cache is beyond the test's reach: its
/// verdict says "no fall within N bytes (or a larger cache)".
fn cache_visible(p: &SimParams, plan: &cache::CachePlan) -> bool {
    let (burst, full) = cache_law(p, plan.chunk);
    let falls = p.cache > 0 && full as f64 * FALL >= 1.05 * burst as f64;
    let room = plan.max_bytes.saturating_sub(AFTER as u64 * plan.chunk);
    falls && cache_fill_bytes(p, plan.chunk).is_some_and(|b| b <= room)
}

/// How far a cache estimate may be off and still be right: a tenth of the
/// cache, or two writes of the test (the fall is seen to a write).
fn cache_tolerance(cache: u64, chunk: u64) -> u64 {
    (cache / 10).max(2 * chunk)
}

/// Whether a cache estimate is the card's: within [`cache_tolerance`] of
/// what its law offers while the test writes. A cache that shrinks as the
/// card fills (`cache_min`) offers less with every byte written: anything
/// from its size on a card filled as far as the test's writes and its
/// fill (the cache, at most, past the FAT area) up to its size on an
/// empty card is its own.
fn cache_within(p: &SimParams, estimate: u64, chunk: u64) -> bool {
    let tolerance = cache_tolerance(p.cache, chunk);
    let top = p.cache + tolerance;
    let filled = (iocurve::flash::FAT_AREA + 2 * p.cache).min(p.size);
    let least = match p.cache_min {
        Some(min) => {
            let room = (p.cache - min) as f64;
            min + (room * (1.0 - filled as f64 / p.size as f64)) as u64
        }
        None => p.cache,
    };
    estimate <= top && estimate + tolerance >= least
}

/// Scores `flash cache` on one card.
pub fn cache_outcome(p: &SimParams) -> (Outcome, Confidence) {
    let device = SimDevice::timing_only(p.clone());
    let plan = cache::CachePlan::new(p.size);
    let r = match cache::detect(&mut SimIo(&device), plan) {
        Ok(r) => r,
        Err(e) => {
            return (
                Outcome::Wrong(format!("the run failed: {e}")),
                Confidence::Low,
            );
        }
    };
    let visible = cache_visible(p, &plan);
    let outcome = match r.cache_bytes {
        Some(c) if p.cache > 0 && cache_within(p, c, plan.chunk) => Outcome::Right,
        Some(c) => Outcome::Wrong(format!("a cache of {c} bytes, the card has {}", p.cache)),
        None if visible => Outcome::Declined(format!(
            "no fall; the law fills {} bytes at {:?} ns then {:?} ns a write",
            p.cache,
            cache_law(p, plan.chunk).0,
            cache_law(p, plan.chunk).1
        )),
        // A cache larger than the test writes, or one barely faster than
        // the medium behind it: there, not seen; the verdict says so. (One
        // the writes never fill, as it drains as fast as they come, has
        // nothing to show.)
        None if cache_fill_bytes(p, plan.chunk).is_some() => Outcome::BeyondReach(format!(
            "no fall; a cache of {} bytes at {:?} ns then {:?} ns a write, {} bytes written",
            p.cache,
            cache_law(p, plan.chunk).0,
            cache_law(p, plan.chunk).1,
            plan.max_bytes
        )),
        None => Outcome::NothingToFind,
    };
    (outcome, r.confidence)
}

/// `flash cache` over `cards` genuine cards from `seed`.
pub fn calibrate_cache(seed: u64, cards: usize) -> FlashCalibration {
    let mut population = field(seed);
    let mut result = FlashCalibration::new("flash cache: the size");
    for _ in 0..cards {
        let card = population.draw();
        let (outcome, confidence) = cache_outcome(&card);
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

/// The bar every flash verdict is held to (issue 13): no "high" answer
/// wrong, at least 95% of the "medium" ones right, and an answer on at
/// least 90% of the cases with something to find. Prints the table and the
/// examples first, so a failure shows the cards to replay.
pub fn assert_calibrated(r: &FlashCalibration) {
    eprintln!("{}", confidence_table(std::slice::from_ref(r)));
    for e in &r.tally.wrong_examples {
        eprintln!("wrong: {e}");
    }
    for e in &r.tally.declined_examples {
        eprintln!("declined: {e}");
    }
    assert_eq!(
        r.high.wrong, 0,
        "high and wrong: {:#?}",
        r.tally.wrong_examples
    );
    assert!(
        r.medium.right_rate() >= 0.95,
        "medium right {:.1}%: {:#?}",
        100.0 * r.medium.right_rate(),
        r.tally.wrong_examples
    );
    assert!(
        r.tally.answer_rate() >= 0.9,
        "answered {:.1}%: {:#?}",
        100.0 * r.tally.answer_rate(),
        r.tally.declined_examples
    );
}
