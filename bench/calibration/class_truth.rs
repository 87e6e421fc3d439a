//! The truth laws of `flash class` (`super::class`), from the card's
//! parameters over its life in use, with the laws of real cards (issue
//! 37): each figure is a [`Law`], the card's own figure over its life and
//! the span a run of the method can see of it (a window of the test that
//! met no pause, or two; a place on a card whose speed falls with the
//! offset; a FAT stall that a write cache in front hides).
//!
//! * Pw, after the write cache, per recording unit: on a card without
//!   cache the command and its page programs at the speed where the test
//!   writes; with a plain cache, once full, the drain of the RU at the
//!   cache's drain speed, or the command and the transfer at burst speed
//!   if longer; with the medium's work through the cache (`through`), the
//!   page programs at the drain speed where the test writes (whole free
//!   AUs close with nothing to copy). Where the test writes is the part of
//!   its region its sequential writes covered, or its end when it is
//!   slower there (a card whose speed falls with the offset is used to its
//!   end, and the test times places out to it). A pause every
//!   `pause_every` bytes adds its share to the host's side (with a cache, the drain goes on
//!   during a pause). The link caps each write. The truth is the mean
//!   over the region the test's sequential writes cover; what a window
//!   sees runs from the fastest place without a pause to the slowest with
//!   as many pauses as a window can hold.
//! * Pr and the random reads: the command, the transfer at the read speed
//!   where the read lands (the mean over the card) and a quarter command
//!   for crossing pages; what a run sees, that mean within four standard
//!   errors of its reads.
//! * T_FW: the `fat` law over the card's life: a stall every `fat_every`
//!   FAT-area writes (jittered periods as short as the jitter makes them),
//!   and a pause landing on a FAT-area write sooner or later. With the
//!   medium's work through a cache, a FAT write costs what the medium
//!   owes when the cache is full: sooner or later a stall's work. A run
//!   sees from none of those (a cache in front, no pause) to all of them.
//! * Random 4 KiB writes in the 16 MiB region: bounded between no
//!   collection and a whole AU copied on every miss of the open AUs; with
//!   a plain cache, its steady state; through a cache, the page program at
//!   the drain speed with those same bounds on the collection behind.

use iocurve::engine::sim::SimParams;
use iocurve::flash::class::ClassPlan;

pub const SMALL: u64 = 4096;

/// Where the FAT-area writes of the method go (`FAT_SPOT` of the method).
const FAT_SPOT: u64 = 4 << 20;

/// Random reads of a run: 4 KiB ones and RUs.
const SMALL_READS: f64 = 500.0;
const RU_READS: f64 = 256.0;

/// A figure of the card: its own over life (`truth`, bounds where the law
/// leaves a range) and the span a run can see (`seen`), both in the
/// figure's unit; `seen` holds `truth`.
#[derive(Debug, Clone, Copy)]
pub struct Law {
    pub truth: (f64, f64),
    pub seen: (f64, f64),
}

impl Law {
    fn exact(v: f64) -> Law {
        Law {
            truth: (v, v),
            seen: (v, v),
        }
    }

    /// From times (ns) to a rate of `unit` per second: the bounds swap.
    fn rate_of(times: Law, unit: f64) -> Law {
        let r = |ns: f64| unit * 1e9 / ns.max(1.0);
        Law {
            truth: (r(times.truth.1), r(times.truth.0)),
            seen: (r(times.seen.1), r(times.seen.0)),
        }
    }
}

/// What the card's laws say it does, per figure.
#[derive(Debug, Clone, Copy)]
pub struct Truth {
    /// MB/s through the link, and of the card alone.
    pub pw: Law,
    pub pw_card: Law,
    pub pr: Law,
    pub pr_card: Law,
    /// ms.
    pub fat_mean8: Law,
    pub fat_max: Law,
    /// 4 KiB requests per second.
    pub read_iops: Law,
    pub read_iops_card: Law,
    pub write_iops: Law,
    pub write_iops_card: Law,
    /// MB/s.
    pub link: Option<f64>,
}

fn xfer(len: u64, rate: u64) -> f64 {
    len as f64 * 1e9 / rate.max(1) as f64
}

/// `rate` where the card is at `offset` (`slow_end`: linear to the end).
fn at(p: &SimParams, rate: u64, offset: u64) -> u64 {
    let share = offset.min(p.size) as f64 / p.size as f64;
    let factor = 1.0 - (1.0 - f64::from(p.slow_end.min(1000)) / 1000.0) * share;
    ((rate as f64 * factor) as u64).max(1)
}

fn drain(p: &SimParams) -> u64 {
    p.drain.unwrap_or(p.write)
}

/// Pages a transfer of `len` bytes at a `len`-aligned offset touches.
fn pages(p: &SimParams, len: u64) -> u64 {
    (len / p.page).max(1)
}

fn link_ns(p: &SimParams, len: u64) -> f64 {
    p.link.map_or(0.0, |l| xfer(len, l))
}

/// The page programs of `len` bytes at `offset` at `rate`.
fn programs(p: &SimParams, len: u64, rate: u64, offset: u64) -> f64 {
    pages(p, len) as f64 * xfer(p.page, at(p, rate, offset))
}

/// Pause time per byte written: its share over life, and the least and
/// most a window of `window` bytes sees of it.
fn pause_per_byte(p: &SimParams, window: u64) -> (f64, f64, f64) {
    if p.pause_ns == 0 {
        return (0.0, 0.0, 0.0);
    }
    let jitter = f64::from(p.jitter) / 100.0;
    let (short, long) = (
        p.pause_every as f64 * (1.0 - jitter),
        p.pause_every as f64 * (1.0 + jitter),
    );
    let pause = p.pause_ns as f64;
    let w = window.max(1) as f64;
    let least = (w / long).floor() * pause / w;
    let most = (w / short.max(1.0)).ceil() * pause / w;
    (pause / p.pause_every as f64, least, most)
}

/// A write of `len` bytes once the card is steady, ns: `medium` is the
/// card's own work per write (page programs, collection), `host` the
/// pause share. Without cache they add; with one, the front (command and
/// burst transfer) and the pause run while the medium drains.
fn steady_write(p: &SimParams, len: u64, medium: f64, host: f64, link: bool) -> f64 {
    let link = if link { link_ns(p, len) } else { 0.0 };
    if p.cache == 0 {
        return (p.cmd_ns as f64 + medium).max(link) + host;
    }
    let front = (p.cmd_ns as f64 + xfer(len, p.burst)).max(link);
    (front + host).max(medium)
}

/// Pw as a law over the region of the sequential writes, MB/s.
fn pw_law(p: &SimParams, plan: &ClassPlan, written: u64, link: bool) -> Law {
    let ru = plan.ru;
    let medium = |offset: u64| match (p.cache > 0, p.through) {
        (false, _) => programs(p, ru, p.write, offset),
        (true, false) => xfer(ru, drain(p)),
        (true, true) => programs(p, ru, drain(p), offset),
    };
    let window = plan.window() * plan.au;
    let (life, least, most) = pause_per_byte(p, window);
    let start = plan.pw_offset();
    let covered = written.min(plan.pw_room).max(plan.au);
    let end = start + covered - plan.au;
    let points = 64u64;
    let mean = (0..=points)
        .map(|i| {
            let offset = start + (end - start) * i / points;
            steady_write(p, ru, medium(offset), life * ru as f64, link)
        })
        .sum::<f64>()
        / (points + 1) as f64;
    let fast = steady_write(p, ru, medium(start), least * ru as f64, link);
    let slow = steady_write(p, ru, medium(end), most * ru as f64, link);
    // The card is used to its end: where it is slowest (the last AUs on a
    // card whose speed falls with the offset) is what a class must hold
    // at, a cache or none.
    let last = p.size.saturating_sub(2 * plan.au);
    let at_end = steady_write(p, ru, medium(last), least * ru as f64, link);
    let truth = mean.max(at_end);
    let times = Law {
        truth: (truth, truth),
        seen: (fast.min(truth), slow.max(truth)),
    };
    Law::rate_of(times, ru as f64 / 1e6)
}

/// A read of `len` bytes anywhere on the card: the mean over the card and
/// the span of a run of `reads`, as times (ns).
fn read_law(p: &SimParams, len: u64, reads: f64, link: bool) -> Law {
    let one = |offset: u64| {
        let crosses_page = len > p.page;
        let cost = p.cmd_ns as f64
            + xfer(len, at(p, p.read, offset))
            + if crosses_page {
                p.cmd_ns as f64 / 4.0
            } else {
                0.0
            };
        cost.max(if link { link_ns(p, len) } else { 0.0 })
    };
    let points = 256u64;
    let times: Vec<f64> = (0..points)
        .map(|i| one(p.size / points * i + p.size / points / 2))
        .collect();
    let mean = times.iter().sum::<f64>() / points as f64;
    let var = times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / points as f64;
    let se = 4.0 * var.sqrt() / reads.sqrt();
    Law {
        truth: (mean, mean),
        seen: (mean - se, mean + se),
    }
}

/// The random 4 KiB writes, as times (ns): bounds on the collection, and
/// what windows of 500 see of the pauses.
fn write_law(p: &SimParams, plan: &ClassPlan, link: bool) -> Law {
    let offset = plan.random_offset();
    let (life, least, most) = pause_per_byte(p, SMALL * 500);
    let aus = plan.random_region / p.au;
    let collection = match aus <= u64::from(p.open_au) {
        true => 0.0,
        false => {
            let miss = 1.0 - f64::from(p.open_au) / aus as f64;
            let copy = p.move_speed.map_or(p.write, |m| m.min(p.write));
            miss * xfer(p.au, at(p, copy, offset))
        }
    };
    let (low, high) = match (p.cache > 0, p.through) {
        (false, _) => {
            let pages = programs(p, SMALL, p.write, offset);
            (pages, pages + collection)
        }
        (true, false) => (xfer(SMALL, drain(p)), xfer(SMALL, drain(p))),
        (true, true) => {
            let pages = programs(p, SMALL, drain(p), offset);
            (pages, pages + collection)
        }
    };
    let w = |medium: f64, pause: f64| steady_write(p, SMALL, medium, pause * SMALL as f64, link);
    // Through a cache the sequential writes filled, the random writes
    // first pay the older work it owes: their share of a drain.
    let hidden = match p.cache > 0 && p.through {
        true => w(xfer(SMALL, drain(p)), least),
        false => w(low, least),
    };
    Law {
        truth: (w(low, life), w(high, life)),
        seen: (hidden.min(w(low, least)), w(high, most)),
    }
}

/// The worst mean of 8 and the largest FAT-area write over the card's
/// life, ms.
fn fat_laws(p: &SimParams) -> (Law, Law) {
    let through = p.cache > 0 && p.through;
    let rate = if through { drain(p) } else { p.write };
    let work = |busy: u64| programs(p, SMALL, rate, FAT_SPOT) + busy as f64;
    let write = |busy: u64| {
        let cost = match through {
            // What the medium owes is paid by a write behind a full cache.
            true => p.cmd_ns as f64 + xfer(SMALL, p.burst) + work(busy),
            false => p.cmd_ns as f64 + work(busy),
        };
        cost.max(link_ns(p, SMALL)) / 1e6
    };
    let plain = write(p.fat_ns.unwrap_or(0));
    let pause = p.pause_ns as f64 / 1e6;
    let (mean8, max) = match p.fat_max_ns > 0 && p.fat_every > 0 {
        false => (plain, plain),
        true => {
            let stall = write(p.fat_max_ns).max(plain);
            // The law shortens a period by at most its jitter's share,
            // truncated to whole writes (`jittered` of the simulator).
            let cut = p.fat_every * p.jitter / 100;
            let shortest = p.fat_every.saturating_sub(cut).max(1);
            let stalls = 8u32.div_ceil(shortest).min(8);
            let mean8 = (f64::from(8 - stalls) * plain + f64::from(stalls) * stall) / 8.0;
            (mean8, stall)
        }
    };
    let life = |v: f64, pause_share: f64| v + pause * pause_share;
    // A cache in front hides the medium's work from the FAT writes the
    // method makes (it pays older work); a run may meet no pause.
    let hidden = match through {
        true => (p.cmd_ns as f64 + xfer(SMALL, p.burst)).max(link_ns(p, SMALL)) / 1e6,
        false => plain,
    };
    let law = |v: f64, pause_share: f64| Law {
        truth: (life(v, pause_share), life(v, pause_share)),
        seen: (hidden.min(v), life(v, pause_share)),
    };
    let mean8 = if through || pause > 0.0 {
        law(mean8, 1.0 / 8.0)
    } else {
        Law::exact(mean8)
    };
    let max = if through || pause > 0.0 {
        law(max, 1.0)
    } else {
        Law::exact(max)
    };
    (mean8, max)
}

/// The truth of a card whose sequential writes covered `written` bytes of
/// their region (the place the test wrote, where the speed falls with the
/// offset).
pub fn truth(p: &SimParams, plan: &ClassPlan, written: u64) -> Truth {
    let (fat_mean8, fat_max) = fat_laws(p);
    let mb = |law: Law, len: u64| Law::rate_of(law, len as f64 / 1e6);
    let iops = |law: Law| Law::rate_of(law, 1.0);
    Truth {
        pw: pw_law(p, plan, written, true),
        pw_card: pw_law(p, plan, written, false),
        pr: mb(read_law(p, plan.ru, RU_READS, true), plan.ru),
        pr_card: mb(read_law(p, plan.ru, RU_READS, false), plan.ru),
        fat_mean8,
        fat_max,
        read_iops: iops(read_law(p, SMALL, SMALL_READS, true)),
        read_iops_card: iops(read_law(p, SMALL, SMALL_READS, false)),
        write_iops: iops(write_law(p, plan, true)),
        write_iops_card: iops(write_law(p, plan, false)),
        link: p.link.map(|l| l as f64 / 1e6),
    }
}
