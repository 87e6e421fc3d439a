//! `sustain` scored over the population: the workload and analysis of
//! `iocurve sustain` on the card's virtual clock, against where the
//! simulator's documented write laws make the first write wait.
//!
//! The truth replays those laws request by request from the card's
//! parameters (never the method's windows), with the laws of real cards
//! (issue 37): the cache drains at its own speed (`drain`); with
//! `through` each write's medium work (its page programs at the drain
//! speed where it lands, the FAT area's busy time and stalls) queues
//! behind the cache, and a write waits until the bytes still owed fit the
//! cache; the usable cache shrinks towards `cache_min` as the writes cover
//! the card; a pause every `pause_every` bytes lets the cache drain; a
//! link caps each transfer. Without `through`, FAT-area writes (the
//! `fat` law) cost the command, their pages and the busy time and leave
//! the cache alone, so the drop comes that many requests later. Jittered
//! periods (pauses, FAT stalls) are replayed at their shortest and
//! longest: the drop lies between, and a drop anywhere in that span (give
//! or take a request) is right.

use super::{Outcome, Tally};
use iocurve::analysis::sustain::rules::DROP_RATIO;
use iocurve::engine::population::{Mix, Population, spec_of};
use iocurve::engine::sim::{FAT_AREA, SimDevice, SimParams};
use iocurve::workload::sustain::drop_on_sim;
use std::collections::VecDeque;

fn xfer_ns(len: u64, rate: u64) -> u64 {
    (u128::from(len) * 1_000_000_000 / u128::from(rate.max(1))) as u64
}

/// `rate` at `offset` on a card whose speed falls to `slow_end` at its end.
fn at(p: &SimParams, rate: u64, offset: u64) -> u64 {
    let size = u128::from(p.size);
    let lost = u128::from(1000 - p.slow_end.min(1000)) * u128::from(offset.min(p.size));
    ((u128::from(rate) * (1000 * size - lost) / (1000 * size)) as u64).max(1)
}

/// The periods a replay takes for the jittered laws, in bytes (pauses)
/// and FAT-area writes (stalls).
#[derive(Clone, Copy)]
struct Periods {
    pause: u64,
    stall: u64,
}

/// Where the law makes the first write wait: the span of that request
/// over the jitter's extremes, and the time of a fast and of a steadily
/// waiting write (ns).
#[derive(Debug, Clone, Copy)]
struct Law {
    first: u64,
    last: u64,
    fast: u64,
    slow: u64,
    /// The waiting writes vary more than twice their median (FAT stalls
    /// or pauses among them): where the drop lies is not sharp.
    irregular: bool,
}

/// One replay of the laws at fixed `periods`: the first request that
/// waits, and the fast and steady costs; `None` within `limit` requests.
fn replay(
    p: &SimParams,
    request: u64,
    limit: u64,
    periods: Periods,
) -> Option<(u64, u64, u64, bool)> {
    let drain = p.drain.unwrap_or(p.write);
    let through = p.cache > 0 && p.through;
    let parts = 4096u64.min(p.size / 512).max(1);
    let mut marked = 0u64;
    let part =
        |at: u64| ((u128::from(at) * u128::from(parts) / u128::from(p.size)) as u64).min(parts - 1);
    let (mut level, mut now, mut last_drain) = (0u64, 0u64, 0u64);
    let mut queue: VecDeque<(u64, u64)> = VecDeque::new();
    let (mut fat_writes, mut since_pause) = (0u64, 0u64);
    let (mut fast, mut found) = (None, None);
    let mut costs: Vec<u64> = Vec::new();
    let mut open = OpenAus::default();
    for i in 0..limit {
        let offset = i * request;
        if p.cache_min.is_some() {
            marked = marked.max(part(offset + request - 1) + 1);
        }
        let usable = match p.cache_min {
            Some(least) => {
                least
                    + ((p.cache - least) as u128 * u128::from(parts - marked.min(parts))
                        / u128::from(parts)) as u64
            }
            None => p.cache,
        };
        let busy = match p.fat_ns.filter(|_| offset < FAT_AREA) {
            Some(base) => {
                fat_writes += 1;
                let stall = p.fat_max_ns > 0 && fat_writes.is_multiple_of(periods.stall.max(1));
                Some(if stall { p.fat_max_ns } else { base })
            }
            None => None,
        };
        let pages = (request / p.page).max(1);
        let cached = p.cache > 0 && (through || busy.is_none());
        let cost = if through {
            let medium = match busy {
                Some(busy) => busy,
                None => open.touch(p, offset, request),
            };
            let work = pages * xfer_ns(p.page, at(p, drain, offset)) + medium;
            // The medium works through the queue since the last write.
            let mut spare = now - last_drain;
            last_drain = now;
            while spare > 0 {
                let Some(front) = queue.front_mut() else {
                    break;
                };
                if front.1 <= spare {
                    spare -= front.1;
                    level -= front.0;
                    queue.pop_front();
                } else {
                    let done =
                        (u128::from(front.0) * u128::from(spare) / u128::from(front.1)) as u64;
                    front.0 -= done;
                    front.1 -= spare;
                    level -= done;
                    spare = 0;
                }
            }
            while queue.front().is_some_and(|f| f.1 == 0) {
                level -= queue.pop_front().map_or(0, |f| f.0);
            }
            queue.push_back((request, work));
            level += request;
            let mut excess = level.saturating_sub(usable);
            let mut wait = 0u64;
            for &(bytes, ns) in &queue {
                if excess == 0 {
                    break;
                }
                if bytes <= excess {
                    excess -= bytes;
                    wait += ns;
                } else {
                    wait +=
                        (u128::from(ns) * u128::from(excess)).div_ceil(u128::from(bytes)) as u64;
                    excess = 0;
                }
            }
            p.cmd_ns + xfer_ns(request, p.burst) + wait
        } else if let Some(busy) = busy {
            p.cmd_ns + pages * xfer_ns(p.page, at(p, p.write, offset)) + busy
        } else if p.cache > 0 {
            let drained = (u128::from(now - last_drain) * u128::from(drain) / 1_000_000_000) as u64;
            last_drain = now;
            level = level.saturating_sub(drained) + request;
            p.cmd_ns + xfer_ns(request, p.burst) + xfer_ns(level.saturating_sub(usable), drain)
        } else {
            p.cmd_ns + pages * xfer_ns(p.page, at(p, p.write, offset))
        };
        let cost = p.link.map_or(cost, |l| cost.max(xfer_ns(request, l)));
        if cached && found.is_none() {
            let first = *fast.get_or_insert(cost);
            // A first write that already waits is the fast one: the drop
            // is where the writes after it wait longer.
            if cost > first + 1_000 {
                found = Some(i);
            }
        }
        let mut paid = cost;
        if p.pause_ns > 0 {
            since_pause += request;
            while since_pause >= periods.pause {
                since_pause -= periods.pause;
                paid += p.pause_ns;
            }
        }
        if found.is_some() {
            costs.push(paid);
            if costs.len() >= 64 {
                break;
            }
        }
        now += paid;
    }
    let first = found?;
    let slow = costs.iter().sum::<u64>() / costs.len().max(1) as u64;
    let mut sorted = costs.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    let irregular = sorted.last().is_some_and(|&most| most > 2 * median);
    Some((first, fast.unwrap_or(1), slow, irregular))
}

/// The AUs a card keeps open, most recently used last, with the bytes
/// written since each opened (sequential writes: an AU closed whole costs
/// nothing; one the FAT area's writes, which bypass it, left partly
/// written costs copying the rest, or with `move` nothing, as nothing of
/// it held data before).
#[derive(Default)]
struct OpenAus(Vec<(u64, u64)>);

impl OpenAus {
    /// Opens the AUs `len` bytes at `offset` touch; the closing work, ns.
    fn touch(&mut self, p: &SimParams, offset: u64, len: u64) -> u64 {
        let mut work = 0;
        let mut at_ = offset;
        while at_ < offset + len {
            let index = at_ / p.au;
            let end = ((index + 1) * p.au).min(offset + len);
            let mut entry = match self.0.iter().position(|a| a.0 == index) {
                Some(i) => self.0.remove(i),
                None => {
                    if self.0.len() >= p.open_au as usize {
                        let (closed, written) = self.0.remove(0);
                        if p.move_speed.is_none() {
                            let rate = at(p, p.write, closed * p.au);
                            work += xfer_ns(p.au - written.min(p.au), rate);
                        }
                    }
                    (index, 0)
                }
            };
            entry.1 += end - at_;
            self.0.push(entry);
            at_ = end;
        }
        work
    }
}

/// The law over the jitter's extremes.
fn cache_law(p: &SimParams, request: u64, limit: u64) -> Option<Law> {
    let j = u64::from(p.jitter);
    let span = |period: u64| [period * (100 - j) / 100, period * (100 + j) / 100];
    let pauses = span(p.pause_every);
    let stalls = span(u64::from(p.fat_every));
    let mut law: Option<Law> = None;
    for pause in pauses {
        for stall in stalls {
            let periods = Periods {
                pause: pause.max(1),
                stall: stall.max(1),
            };
            let (i, fast, slow, irregular) = replay(p, request, limit, periods)?;
            law = Some(match law {
                None => Law {
                    first: i,
                    last: i,
                    fast,
                    slow,
                    irregular,
                },
                Some(l) => Law {
                    first: l.first.min(i),
                    last: l.last.max(i),
                    fast: l.fast.min(fast),
                    slow: l.slow.max(slow),
                    irregular: l.irregular || irregular,
                },
            });
        }
    }
    law
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

/// The card the run writes: at least as large as its requests reach.
fn card_for(p: &SimParams, bytes: u64) -> SimParams {
    let size = bytes.div_ceil(p.au) * p.au;
    SimParams {
        size: size.max(p.size),
        real: size.max(p.size),
        ..p.clone()
    }
}

/// Scores `sustain` on one card with a write cache.
pub fn sustain_outcome(p: &SimParams, seed: u64) -> Outcome {
    let request = request_for(p, seed);
    let never_at = 1u64 << 22;
    // The card grows when the requests reach beyond it; the law is the
    // grown card's (its coverage counts in shares of it).
    let mut card = p.clone();
    let mut law = cache_law(&card, request, never_at);
    for _ in 0..2 {
        let requests = law.map_or(4096, |l| l.last + (l.last / 20).max(32) + 64);
        let grown = card_for(p, requests * request);
        if grown.size == card.size {
            break;
        }
        card = grown;
        law = cache_law(&card, request, never_at);
    }
    // Writes that land no faster than the cache drains never fill it.
    let never = law.is_none();
    let Law {
        first,
        last,
        fast,
        slow,
        irregular,
    } = law.unwrap_or(Law {
        first: never_at,
        last: never_at,
        fast: 1,
        slow: 1,
        irregular: false,
    });
    // The drop must be found when the fast writes take clearly less than
    // DROP_RATIO of the waiting ones, and must not be reported when they
    // take clearly more; within 2% of the rule either answer is fair.
    let ratio = fast as f64 / slow.max(1) as f64;
    let must_find = !never && first >= 1 && ratio < DROP_RATIO * 0.98;
    let may_find = !never && first >= 1 && ratio < DROP_RATIO * 1.02;
    let requests = if never {
        4096
    } else {
        last + (last / 20).max(32)
    };
    let bytes = requests * request;
    let device = SimDevice::timing_only(card_for(p, bytes));
    let found = match drop_on_sim(&device, request as u32, bytes) {
        Ok(found) => found,
        Err(e) => return Outcome::Wrong(format!("the run failed: {e:?}")),
    };
    match found {
        None if must_find => Outcome::Declined(format!(
            "no drop, the law has write {first}–{last} wait ({request} B requests)"
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
        Some(d) if d.at_request + 1 >= first && d.at_request <= last + 1 => Outcome::Right,
        // FAT stalls or pauses among the waiting writes, longer than the
        // drop itself: a drop placed among them is beyond the law's edge.
        Some(d) if irregular && d.at_request > last && d.at_request <= last + 64 => {
            Outcome::BeyondReach(format!(
                "drop at request {}, the law's first wait {first}–{last} among waits that vary more than twice over ({request} B requests)",
                d.at_request
            ))
        }
        Some(d) => Outcome::Wrong(format!(
            "drop at request {}, the law says {first}–{last} ({request} B requests)",
            d.at_request
        )),
    }
}

/// `sustain` over `cards` cards with a write cache, drawn from `seed`,
/// with FAT-area busy times, move speeds and the laws of real cards.
pub fn calibrate_sustain(seed: u64, cards: usize) -> Tally {
    let mix = Mix {
        cached: 1.0,
        fat_and_move: true,
        real_world: true,
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
