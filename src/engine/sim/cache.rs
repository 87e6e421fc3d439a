//! The write cache (an SLC region) on the virtual clock: writes land at
//! `burst` speed while the cache drains behind them. Two laws: the plain
//! one (bytes drain at `drain` speed, the medium's laws do not show), and
//! with `through` a queue of the medium work each write left (its page
//! programs, the AU it closed, its move or FAT busy time), which the cache
//! drains in order, so those laws show through a cache as they do on real
//! cards whose SLC region sits in front of the same controller.

use super::laws::xfer_ns;
use super::params::SimParams;
use std::collections::VecDeque;

/// The most writes the `through` queue keeps apart.
const QUEUE_MOST: usize = 1 << 16;

/// A write's medium work not yet done: its bytes still in the cache and
/// the time the medium needs for the rest of it.
#[derive(Debug, Clone, Copy)]
struct Pending {
    bytes: u64,
    work_ns: u64,
}

/// What the cache holds, and since when the clock last looked at it.
#[derive(Default)]
pub(super) struct CacheState {
    /// Bytes not yet written to the medium.
    level: u64,
    /// The virtual time the drain was last applied up to.
    time: u64,
    /// The medium work behind the cache, oldest first (`through` only).
    queue: VecDeque<Pending>,
}

impl CacheState {
    /// The plain law: the cache drains at `drain` speed (`write` unless
    /// given) since it was last looked at; a write that does not fit in
    /// the `usable` cache waits until enough has drained.
    pub(super) fn plain_cost(&mut self, p: &SimParams, usable: u64, now: u64, len: u64) -> u64 {
        let rate = p.drain.unwrap_or(p.write);
        let elapsed = now.saturating_sub(self.time);
        let drained = (u128::from(elapsed) * u128::from(rate) / 1_000_000_000) as u64;
        self.level = self.level.saturating_sub(drained) + len;
        let over = self.level.saturating_sub(usable);
        self.time = now;
        p.cmd_ns + xfer_ns(len, p.burst) + xfer_ns(over, rate)
    }

    /// The `through` law: the write's `work_ns` of medium work joins the
    /// queue; the write waits until the medium has done enough of the
    /// queue that the bytes it still holds fit the `usable` cache, then
    /// costs the command and its transfer at `burst`.
    pub(super) fn through_cost(
        &mut self,
        p: &SimParams,
        usable: u64,
        now: u64,
        len: u64,
        work_ns: u64,
    ) -> u64 {
        self.work_until(now);
        self.queue_work(len, work_ns);
        self.level += len;
        let wait = self.time_to_hold(usable);
        p.cmd_ns + xfer_ns(len, p.burst) + wait
    }

    /// Queues a write's work; past [`QUEUE_MOST`] writes it joins the
    /// newest one, so a cache of gigabytes filled by sector writes keeps
    /// the host's memory small (the order of the work stays).
    fn queue_work(&mut self, bytes: u64, work_ns: u64) {
        let full = self.queue.len() >= QUEUE_MOST;
        match self.queue.back_mut() {
            Some(back) if full => {
                back.bytes += bytes;
                back.work_ns = back.work_ns.saturating_add(work_ns);
            }
            _ => self.queue.push_back(Pending { bytes, work_ns }),
        }
    }

    /// The medium works through the queue up to `now`; a write's bytes
    /// leave the cache in proportion to the work done on it.
    fn work_until(&mut self, now: u64) {
        let mut spare = now.saturating_sub(self.time);
        self.time = now;
        while spare > 0 {
            let Some(front) = self.queue.front_mut() else {
                return;
            };
            if front.work_ns <= spare {
                spare -= front.work_ns;
                self.level -= front.bytes;
                self.queue.pop_front();
                continue;
            }
            let done =
                (u128::from(front.bytes) * u128::from(spare) / u128::from(front.work_ns)) as u64;
            front.bytes -= done;
            front.work_ns -= spare;
            self.level -= done;
            spare = 0;
        }
        // Work of no time (none to do) leaves at once.
        while self.queue.front().is_some_and(|f| f.work_ns == 0) {
            let gone = self.queue.pop_front().map_or(0, |f| f.bytes);
            self.level -= gone;
        }
    }

    /// The time from now the medium needs until the cache holds at most
    /// `usable` bytes.
    fn time_to_hold(&self, usable: u64) -> u64 {
        let mut excess = self.level.saturating_sub(usable);
        let mut wait = 0u64;
        for pending in &self.queue {
            if excess == 0 {
                break;
            }
            if pending.bytes <= excess {
                excess -= pending.bytes;
                wait += pending.work_ns;
            } else {
                let part = u128::from(pending.work_ns) * u128::from(excess);
                wait += part.div_ceil(u128::from(pending.bytes)) as u64;
                excess = 0;
            }
        }
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_through_queue_stays_bounded_and_keeps_every_byte_and_nanosecond() {
        let p = SimParams::parse("cache=1G,cmd=0us,through=1").unwrap();
        let mut cache = CacheState::default();
        let writes = QUEUE_MOST as u64 + 5000;
        for _ in 0..writes {
            cache.through_cost(&p, p.cache, 0, 512, 10);
        }
        assert_eq!(cache.queue.len(), QUEUE_MOST);
        assert_eq!(cache.level, writes * 512);
        let work: u64 = cache.queue.iter().map(|q| q.work_ns).sum();
        assert_eq!(work, writes * 10);
        // All the work done, the cache is empty.
        cache.work_until(writes * 10);
        assert_eq!((cache.level, cache.queue.len()), (0, 0));
    }
}
