//! How often iocurve's analyses are right, measured over a seeded
//! population of simulated cards (`iocurve::engine::population`), not over
//! the few cards a unit test names.
//!
//! Shared by `tests/calibration.rs` (which asserts over a few hundred cards
//! on every `cargo test`) and `bench/calibrate.rs` (which prints the table
//! over thousands, for README.md). Each analysis is run the way a user runs
//! it and its answer is scored against the card's own parameters:
//!
//! * `curve`: the command on the `sim:` card, its JSON read back. An answer
//!   (advice) is right when the fitted fixed cost is within 10% of the
//!   card's command time, the bandwidth within 10% of the medium's speed for
//!   that direction, and the advised size is one of the sizes swept. No
//!   advice ("declined") is not wrong, but is counted.
//! * `sustain`: the workload and analysis of `iocurve sustain` on the card's
//!   virtual clock. Right when the drop lies within one request of the first
//!   write the simulator's cache law makes wait; a drop on a card whose law
//!   has none to show is wrong. The cards have FAT-area busy times (and
//!   move speeds) as the field does: the write starts in the FAT area, whose
//!   every write the `fat` law keeps busy before the cache sees any, so the
//!   first waiting write comes that many requests later.

#![allow(dead_code)]

pub mod class;
pub mod flash;
pub mod real;

use iocurve::analysis::sustain::rules::DROP_RATIO;
use iocurve::engine::population::{Mix, Population, spec_of};
use iocurve::engine::sim::{FAT_AREA, SimDevice, SimParams};
use iocurve::workload::sustain::drop_on_sim;
use std::fmt::Write as _;
use std::process::Command;

/// How to start iocurve: in the tests, their helper (which points the
/// binary's data directories away from the user's); in
/// `bench/calibrate.rs`, the release binary beside it.
pub type Launcher = dyn Fn() -> Command + Sync;

/// What one analysis said about one card, scored.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It answered, and the answer matches the card.
    Right,
    /// It answered, and the answer does not match the card: the why.
    Wrong(String),
    /// It did not answer though there was something to find.
    Declined(String),
    /// The card has something to find, beyond what the method can see (a
    /// step under its noise floor, a cache larger than it writes, a card
    /// behind a slower link, a collapse too shallow to tell): it said
    /// nothing, or only a stated low. Not "nothing to find" (issue 37): the
    /// truth is the card's, not what the method's windows could show.
    BeyondReach(String),
    /// The card's own law has nothing to find (no cache, a step of nil, a
    /// figure at its limit) and it said nothing.
    NothingToFind,
}

/// The scores of one analysis over a population.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub analysis: String,
    pub cases: usize,
    pub right: usize,
    pub wrong: usize,
    pub declined: usize,
    /// Cases with something on the card beyond the method's reach.
    pub beyond_reach: usize,
    pub nothing_to_find: usize,
    /// The first few wrong answers, each with the card that gave it.
    pub wrong_examples: Vec<String>,
    /// The first few declines, each with the card and the reason.
    pub declined_examples: Vec<String>,
}

impl Tally {
    pub fn new(analysis: &str) -> Tally {
        Tally {
            analysis: analysis.to_string(),
            ..Tally::default()
        }
    }

    pub fn add(&mut self, card: &str, outcome: Outcome) {
        self.cases += 1;
        match outcome {
            Outcome::Right => self.right += 1,
            Outcome::Wrong(why) => {
                self.wrong += 1;
                if self.wrong_examples.len() < 10 {
                    self.wrong_examples.push(format!("{card}: {why}"));
                }
            }
            Outcome::Declined(why) => {
                self.declined += 1;
                if self.declined_examples.len() < 10 {
                    self.declined_examples.push(format!("{card}: {why}"));
                }
            }
            Outcome::BeyondReach(why) => {
                self.beyond_reach += 1;
                if self.declined_examples.len() < 10 {
                    self.declined_examples
                        .push(format!("{card}: beyond reach: {why}"));
                }
            }
            Outcome::NothingToFind => self.nothing_to_find += 1,
        }
    }

    pub fn answered(&self) -> usize {
        self.right + self.wrong
    }

    /// Share of the cases with something to find within the method's
    /// reach that got an answer.
    pub fn answer_rate(&self) -> f64 {
        let should = self.cases - self.nothing_to_find - self.beyond_reach;
        if should == 0 {
            1.0
        } else {
            self.answered() as f64 / should as f64
        }
    }

    fn merge(&mut self, other: Tally) {
        self.cases += other.cases;
        self.right += other.right;
        self.wrong += other.wrong;
        self.declined += other.declined;
        self.beyond_reach += other.beyond_reach;
        self.nothing_to_find += other.nothing_to_find;
        for e in other.wrong_examples {
            if self.wrong_examples.len() < 10 {
                self.wrong_examples.push(e);
            }
        }
        for e in other.declined_examples {
            if self.declined_examples.len() < 10 {
                self.declined_examples.push(e);
            }
        }
    }
}

/// The calibration table, Markdown.
pub fn table(tallies: &[Tally]) -> String {
    let mut out = String::from(
        "| analysis | cases | answered | right | wrong | declined | beyond reach | nothing to find |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for t in tallies {
        let _ = writeln!(
            out,
            "| {} | {} | {} ({:.0}%) | {} | {} | {} | {} | {} |",
            t.analysis,
            t.cases,
            t.answered(),
            100.0 * t.answer_rate(),
            t.right,
            t.wrong,
            t.declined,
            t.beyond_reach,
            t.nothing_to_find
        );
    }
    out
}

// ---------------------------------------------------------------- sustain

fn xfer_ns(len: u64, rate: u64) -> u64 {
    (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64
}

/// Replays the simulator's documented cache law request by request (writes
/// land at `burst` after the command time while the cache drains at
/// `write`; a write waits for the bytes over `cache`; a link caps each
/// transfer): the index of the first write that takes longer than the
/// writes before it, and the durations of a fast and of a steadily waiting
/// write, or `None` when none slows within `limit` requests. Behind a link
/// slower than the cache, the first writes that wait can still take the
/// link's time, so the first slow write may come a few after the first
/// that waits.
fn cache_law(p: &SimParams, request: u64, limit: u64) -> Option<(u64, u64, u64)> {
    let (mut level, mut now, mut last) = (0u64, 0u64, 0u64);
    let mut fast = None;
    for i in 0..limit {
        let drained = (u128::from(now - last) * u128::from(p.write) / 1_000_000_000) as u64;
        level = level.saturating_sub(drained) + request;
        let over = level.saturating_sub(p.cache);
        let cost = p.cmd_ns + xfer_ns(request, p.burst) + xfer_ns(over, p.write);
        let cost = p.link.map_or(cost, |l| cost.max(xfer_ns(request, l)));
        let first = *fast.get_or_insert(cost);
        if cost > first + 1_000 || (i == 0 && over > 0) {
            // In the steady state each write waits for its own bytes to
            // drain: request / write, or the link's time if longer.
            let slow = xfer_ns(request, p.write).max(p.link.map_or(0, |l| xfer_ns(request, l)));
            return Some((i, first, slow));
        }
        last = now;
        now += cost;
    }
    None
}

/// A request size for a card: 64 KiB–1 MiB, larger for larger caches so
/// that no run needs more than about 40,000 requests.
fn request_for(p: &SimParams, seed: u64) -> u64 {
    let mut size = (64u64 << 10) << (seed % 5);
    while p.cache / size > 40_000 {
        size *= 2;
    }
    size
}

/// The writes of `request` bytes from offset 0 that land in the FAT area
/// and so, under the simulator's `fat` law, cost the command, the pages
/// and the FAT busy time instead of going through the cache (none without
/// the law). The cache is untouched by them and has drained when the first
/// write past the area comes.
fn fat_requests(p: &SimParams, request: u64) -> u64 {
    match p.fat_ns {
        Some(_) => FAT_AREA.div_ceil(request),
        None => 0,
    }
}

/// Scores `sustain` on one card with a write cache.
pub fn sustain_outcome(p: &SimParams, seed: u64) -> Outcome {
    let request = request_for(p, seed);
    // Writes that land no faster than the cache drains (a slow link, a
    // long command time) never fill it: there is no drop to see.
    let (waits, fast, slow) = cache_law(p, request, 1 << 22).unwrap_or((1 << 22, 1, 1));
    let never = waits >= 1 << 22;
    // A FAT-area write is never faster than a waiting one (it programs its
    // pages at the medium's speed and then stays busy), so the slow start
    // it makes is no drop, and the drop comes after it.
    let truth = fat_requests(p, request) + waits;
    // The drop must be found when the fast writes take clearly less than
    // DROP_RATIO of the waiting ones, and must not be reported when they
    // take clearly more; within 2% of the rule either answer is fair.
    let ratio = fast as f64 / slow as f64;
    let must_find = !never && waits >= 1 && ratio < DROP_RATIO * 0.98;
    let may_find = !never && waits >= 1 && ratio < DROP_RATIO * 1.02;
    let requests = if never {
        4096
    } else {
        truth + (truth / 20).max(32)
    };
    let bytes = requests * request;
    let size = bytes.div_ceil(p.au) * p.au;
    let card = SimParams {
        size: size.max(p.size),
        real: size.max(p.size),
        ..p.clone()
    };
    let device = SimDevice::timing_only(card);
    let found = match drop_on_sim(&device, request as u32, bytes) {
        Ok(found) => found,
        Err(e) => return Outcome::Wrong(format!("the run failed: {e:?}")),
    };
    match found {
        None if must_find => Outcome::Declined(format!(
            "no drop, the law has write {truth} wait ({request} B requests)"
        )),
        // A cache whose fill slows the writes too little to tell from the
        // noise: there, out of the workload's reach. (One the writes never
        // fill, as they land no faster than it drains, has nothing to show.)
        None if p.cache > 0 && !never => Outcome::BeyondReach(format!(
            "no drop; a cache of {} bytes whose fill slows the writes {ratio:.2}×",
            p.cache
        )),
        None => Outcome::NothingToFind,
        Some(d) if !may_find => Outcome::Wrong(format!(
            "a drop at request {} where the law shows none ({fast} vs {slow} ns a request)",
            d.at_request
        )),
        Some(d) if d.at_request.abs_diff(truth) <= 1 => Outcome::Right,
        Some(d) => Outcome::Wrong(format!(
            "drop at request {}, the law says {truth} ({request} B requests)",
            d.at_request
        )),
    }
}

/// `sustain` over `cards` cards with a write cache, drawn from `seed`,
/// with FAT-area busy times and move speeds.
pub fn calibrate_sustain(seed: u64, cards: usize) -> Tally {
    let mix = Mix {
        cached: 1.0,
        fat_and_move: true,
        ..Mix::default()
    };
    let mut population = Population::with_mix(seed, mix);
    let mut tally = Tally::new("sustain: where the write cache fills");
    for i in 0..cards {
        let card = population.draw();
        let outcome = sustain_outcome(&card, seed ^ i as u64);
        tally.add(&spec_of(&card), outcome);
    }
    tally
}

// ------------------------------------------------------------------ curve

/// Runs iocurve with `args` and parses its JSON output.
fn json_of(iocurve: &Launcher, args: &[&str]) -> Result<serde_json::Value, String> {
    let mut cmd = iocurve();
    let out = cmd
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e}", cmd.get_program().to_string_lossy()))?;
    if !out.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("not JSON: {e}"))
}

/// Runs work items on `threads` threads and merges their tallies.
pub fn in_parallel<T: Sync>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> Vec<Tally> + Sync,
) -> Vec<Tally> {
    let chunks: Vec<&[T]> = items
        .chunks(items.len().div_ceil(threads.max(1)).max(1))
        .collect();
    let partial: Vec<Vec<Tally>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let work = &work;
                s.spawn(move || {
                    let mut merged: Vec<Tally> = Vec::new();
                    for item in chunk.iter() {
                        for t in work(item) {
                            match merged.iter_mut().find(|m| m.analysis == t.analysis) {
                                Some(m) => m.merge(t),
                                None => merged.push(t),
                            }
                        }
                    }
                    merged
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut merged: Vec<Tally> = Vec::new();
    for t in partial.into_iter().flatten() {
        match merged.iter_mut().find(|m| m.analysis == t.analysis) {
            Some(m) => m.merge(t),
            None => merged.push(t),
        }
    }
    merged
}

// ------------------------------------------------------------- curve fits

/// The sizes every calibration sweep measures (powers of four from 4 KiB
/// to 16 MiB: pages and most AUs fall on them, and the sweep stays short).
pub const CURVE_SIZES: [u64; 7] = [
    4 << 10,
    16 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
];

/// The patterns a card is swept with: one read and one write, taking
/// turns between sequential and random from card to card.
fn curve_patterns(card_index: usize) -> &'static str {
    [
        "read,write",
        "randread,randwrite",
        "read,randwrite",
        "randread,write",
    ][card_index % 4]
}

/// Relative error allowed on t0 and B.
pub const CURVE_TOLERANCE: f64 = 0.10;

fn within(value: f64, truth: f64) -> bool {
    truth > 0.0 && ((value - truth) / truth).abs() <= CURVE_TOLERANCE
}

/// The speeds (MB/s) the medium runs at in a pattern: reads at `read`;
/// writes at `write`, or at `burst` while a cache absorbs them; all capped
/// by the link.
fn true_bandwidths(p: &SimParams, pattern: &str) -> Vec<f64> {
    let cap = |rate: u64| p.link.map_or(rate, |l| rate.min(l)) as f64 / 1e6;
    if pattern.contains("read") {
        vec![cap(p.read)]
    } else if p.cache > 0 {
        vec![cap(p.write), cap(p.burst)]
    } else {
        vec![cap(p.write)]
    }
}

/// The fixed costs (µs) a request can carry on the card: one command; a
/// read that crosses a page boundary costs a quarter more, one across an
/// AU boundary a whole command more (the simulator's documented read law).
fn true_fixed_costs(p: &SimParams, pattern: &str) -> Vec<f64> {
    let cmd = p.cmd_ns as f64 / 1e3;
    if pattern.contains("read") {
        vec![cmd, 1.25 * cmd, 2.0 * cmd]
    } else {
        vec![cmd]
    }
}

/// Whether the link is slower than the medium in `pattern`'s direction.
/// The simulator then takes max(command + transfer, transfer over the
/// link) per request: above the size where the link binds, the command
/// hides behind the transfer and the fixed cost is nil, below it the
/// command's. One line t0 + n/B through both regimes has a t0 anywhere
/// from nil to the command's, and each is the card's for some sizes.
fn link_binds(p: &SimParams, pattern: &str) -> bool {
    let medium = match pattern.contains("read") {
        true => p.read,
        false => p.write,
    };
    p.link.is_some_and(|l| l < medium)
}

/// Scores one series of a `curve --json` result against the card.
pub fn curve_series_outcome(p: &SimParams, series: &serde_json::Value) -> Outcome {
    let pattern = series["pattern"].as_str().unwrap_or("?");
    if !series["skipped"].is_null() {
        return Outcome::Wrong(format!("{pattern} skipped: {}", series["skipped"]));
    }
    let advice = &series["advice"];
    if advice.is_null() {
        // The typed reason (schema 5), as JSON: the tally only counts it.
        let why = match &series["fit_quality"] {
            serde_json::Value::Null => "no advice, no reason given".to_string(),
            quality => quality.to_string(),
        };
        return Outcome::Declined(format!("{pattern}: {why}"));
    }
    let size = advice["size"].as_u64().unwrap_or(0);
    if !CURVE_SIZES.contains(&size) {
        return Outcome::Wrong(format!(
            "{pattern}: advised {size} B, not a size of the sweep"
        ));
    }
    let model = &series["model"];
    // Schema 5 names: seconds and MB/s (README, "JSON naming").
    let t0 = model["t0_s"].as_f64().map_or(f64::NAN, |s| s * 1e6);
    let b = model["bandwidth_mb_per_s"].as_f64().unwrap_or(f64::NAN);
    let bandwidths = true_bandwidths(p, pattern);
    let costs = true_fixed_costs(p, pattern);
    let b_ok = bandwidths.iter().any(|&truth| within(b, truth));
    let t0_ok = costs.iter().any(|&truth| within(t0, truth))
        || (link_binds(p, pattern) && (0.0..=costs[0] * (1.0 + CURVE_TOLERANCE)).contains(&t0));
    if b_ok && t0_ok {
        Outcome::Right
    } else {
        Outcome::Wrong(format!(
            "{pattern}: t0 {t0:.1} µs (card {costs:.1?}), B {b:.2} MB/s (card {bandwidths:.2?}), advice {size} B"
        ))
    }
}

/// Runs `curve` on one card and scores each of its series.
pub fn curve_outcomes(
    iocurve: &Launcher,
    p: &SimParams,
    patterns: &str,
    seed: u64,
) -> Vec<Outcome> {
    let sizes: Vec<String> = CURVE_SIZES.iter().map(u64::to_string).collect();
    let spec = spec_of(p);
    // The offsets of random patterns come from the seed: given, the same
    // card gives the same curve on every run.
    let seed = seed.to_string();
    let args = [
        "curve",
        &spec,
        "--rw",
        patterns,
        "--sizes",
        &sizes.join(","),
        "--repeat",
        "2",
        "--time",
        "100ms",
        "--seed",
        &seed,
        "--destructive",
        "--no-save",
        "--json",
    ];
    match json_of(iocurve, &args) {
        Err(e) => vec![Outcome::Wrong(format!("curve failed: {e}"))],
        Ok(doc) => doc["curve"]["series"]
            .as_array()
            .map(|all| all.iter().map(|s| curve_series_outcome(p, s)).collect())
            .unwrap_or_else(|| vec![Outcome::Wrong("no curve series in the JSON".into())]),
    }
}

/// Names of the two curve tallies: cards whose every transfer follows
/// t0 + n/B at one speed, and cards where a write cache or a link ceiling
/// bends the curve (where declining is the expected answer more often).
pub const CURVE_PLAIN: &str = "curve on cards without cache or link: t0 and B within 10%";
pub const CURVE_BENT: &str = "curve on cards with a cache or a link: t0 and B within 10%";

/// `curve` over `cards` cards drawn from `seed`: one case per pattern,
/// tallied by kind of card.
pub fn calibrate_curve(iocurve: &Launcher, seed: u64, cards: usize) -> Vec<Tally> {
    let mut population = Population::new(seed);
    let mut plain = Tally::new(CURVE_PLAIN);
    let mut bent = Tally::new(CURVE_BENT);
    for i in 0..cards {
        let card = population.draw();
        let tally = if card.cache == 0 && card.link.is_none() {
            &mut plain
        } else {
            &mut bent
        };
        let run_seed = seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for outcome in curve_outcomes(iocurve, &card, curve_patterns(i), run_seed) {
            tally.add(&spec_of(&card), outcome);
        }
    }
    vec![plain, bent]
}

// -------------------------------------------------------------------- all

/// Every analysis over `cards` cards from `seed`, on `threads` threads.
pub fn calibrate_all(iocurve: &Launcher, seed: u64, cards: usize, threads: usize) -> Vec<Tally> {
    let seeds: Vec<u64> = (0..threads.max(1) as u64).collect();
    let per_thread = cards.div_ceil(seeds.len());
    let mut tallies = in_parallel(&seeds, seeds.len(), |&k| {
        let seed = seed.wrapping_add(k << 32);
        let mut all = calibrate_curve(iocurve, seed, per_thread);
        all.push(calibrate_sustain(seed, per_thread));
        all
    });
    tallies.sort_by(|a, b| a.analysis.cmp(&b.analysis));
    tallies
}
