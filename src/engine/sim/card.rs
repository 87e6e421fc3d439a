//! The card model on its virtual clock: what each command costs (command
//! time, transfers, whole-page programs, open AUs and their closing, the
//! write cache draining, the FAT area, a link ceiling, and the laws of
//! real cards in [`super::laws`]) and the device callers read and write,
//! which keeps its data in [`Contents`]. The clock advances only by these
//! costs, so the figures are exact and repeatable.

use super::cache::CacheState;
use super::contents::{Contents, hides};
use super::laws::{Coverage, FatSpikes, Pauses, at_position, au_read_step, xfer_ns};
use super::params::{FAT_AREA, FakeKind, SECTOR, SimParams};
use crate::engine::Clock;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// An AU the controller has open, with the bytes written since it opened.
#[derive(Debug, Clone, Copy)]
struct OpenAu {
    index: u64,
    written: u64,
    /// The 64ths of the AU written since it opened (the `move` law).
    session: u64,
}

/// What changes as the card works, behind one lock.
struct SimState {
    /// Most recently used last.
    open: Vec<OpenAu>,
    cache: CacheState,
    contents: Contents,
    /// AU index to the 64ths of it that hold data (cards with `move`).
    used: HashMap<u64, u64>,
    /// FAT-area writes so far (the `fat_every` spikes).
    fat: FatSpikes,
    pauses: Pauses,
    /// What the card holds (`cache_min`).
    coverage: Coverage,
}

impl SimState {
    fn new(p: &SimParams) -> SimState {
        SimState {
            open: Vec::new(),
            cache: CacheState::default(),
            contents: Contents::default(),
            used: HashMap::new(),
            fat: FatSpikes::new(p),
            pauses: Pauses::new(p),
            coverage: Coverage::new(p),
        }
    }
}

/// The simulated card: model, data and virtual clock.
pub struct SimDevice {
    params: SimParams,
    state: Mutex<SimState>,
    clock: AtomicU64,
    /// Whether written data is kept (off for timing-only runs).
    keeps_data: bool,
}

/// The virtual clock of a [`SimDevice`]; only its operations advance it.
#[derive(Debug, Clone, Copy)]
pub struct SimClock<'a> {
    now: &'a AtomicU64,
}

impl Clock for SimClock<'_> {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

impl SimDevice {
    pub fn new(params: SimParams) -> SimDevice {
        SimDevice {
            state: Mutex::new(SimState::new(&params)),
            params,
            clock: AtomicU64::new(0),
            keeps_data: true,
        }
    }

    /// A card that times writes exactly like [`SimDevice::new`] but keeps
    /// none of their data (every read returns zeros): for long writes whose
    /// timing alone is studied, such as filling a 4 GiB cache many times
    /// over in a test, which would otherwise hold every byte in memory.
    pub fn timing_only(params: SimParams) -> SimDevice {
        SimDevice {
            keeps_data: false,
            ..SimDevice::new(params)
        }
    }

    pub fn params(&self) -> &SimParams {
        &self.params
    }

    pub fn clock(&self) -> SimClock<'_> {
        SimClock { now: &self.clock }
    }

    /// Lets virtual time pass with no command (the cache drains).
    pub fn idle(&self, ns: u64) {
        self.clock.fetch_add(ns, Ordering::SeqCst);
    }

    /// Reads `buf.len()` bytes at `offset`; returns the virtual time taken.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> Result<u64, String> {
        self.check_range(offset, buf.len())?;
        let st = self.lock();
        self.refuse_unheld_beyond_real(&st, offset, buf.len() as u64)?;
        let cost = self.read_cost(offset, buf.len() as u64);
        let now = self.clock.load(Ordering::SeqCst);
        st.contents.copy_out(&self.params, now, offset, buf);
        Ok(self.advance(cost))
    }

    /// Writes `data` at `offset`; returns the virtual time taken.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<u64, String> {
        self.write_data(offset, data.len() as u64, Some(data))
    }

    /// Writes `len` zero bytes at `offset`, exactly like [`SimDevice::write`]
    /// of a zeroed buffer but without one (a flush of gigabytes then costs
    /// no memory).
    pub fn write_zeros(&self, offset: u64, len: u64) -> Result<u64, String> {
        self.write_data(offset, len, None)
    }

    fn write_data(&self, offset: u64, len: u64, data: Option<&[u8]>) -> Result<u64, String> {
        self.check_range(offset, usize::try_from(len).unwrap_or(usize::MAX))?;
        let beyond = offset.saturating_add(len) > self.params.real;
        if beyond && self.params.fake == FakeKind::Eio && !hides(&self.params) {
            return Err(self.eio(offset, len));
        }
        let mut st = self.lock();
        let now = self.clock.load(Ordering::SeqCst);
        let cost = self.write_cost(&mut st, now, offset, len);
        if self.keeps_data {
            st.contents.copy_in(&self.params, now, offset, len, data);
        }
        Ok(self.advance(cost))
    }

    fn eio(&self, offset: u64, len: u64) -> String {
        format!(
            "simulated card: I/O error: {len} bytes at {offset} reach beyond its real {} bytes",
            self.params.real
        )
    }

    /// An `eio` counterfeit fails a read beyond its real size unless the
    /// cache still answers for every chunk of it.
    fn refuse_unheld_beyond_real(
        &self,
        st: &SimState,
        offset: u64,
        len: u64,
    ) -> Result<(), String> {
        let p = &self.params;
        if p.fake != FakeKind::Eio || offset + len <= p.real {
            return Ok(());
        }
        let now = self.clock.load(Ordering::SeqCst);
        match st
            .contents
            .holds_all(p, now, offset.max(p.real), offset + len)
        {
            true => Ok(()),
            false => Err(self.eio(offset, len)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SimState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn advance(&self, cost: u64) -> u64 {
        self.clock.fetch_add(cost, Ordering::SeqCst);
        cost
    }

    fn check_range(&self, offset: u64, len: usize) -> Result<(), String> {
        let len = len as u64;
        if len == 0 || !offset.is_multiple_of(SECTOR) || !len.is_multiple_of(SECTOR) {
            return Err(format!(
                "simulated card: {len} bytes at {offset} are not whole 512-byte sectors"
            ));
        }
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.params.size)
        {
            return Err(format!(
                "simulated card: {len} bytes at {offset} reach beyond its {} bytes",
                self.params.size
            ));
        }
        Ok(())
    }

    fn with_link(&self, cost: u64, len: u64) -> u64 {
        self.params.link.map_or(cost, |l| cost.max(xfer_ns(len, l)))
    }

    /// A command, the transfer at the read speed where it starts, and a
    /// step for a boundary crossed: an AU's (`read_step` of a command, at
    /// least the page's), else a page's (a quarter of a command).
    fn read_cost(&self, offset: u64, len: u64) -> u64 {
        let p = &self.params;
        let crosses = |unit: u64| offset / unit != (offset + len - 1) / unit;
        let mut cost = p.cmd_ns + xfer_ns(len, at_position(p, p.read, offset));
        if crosses(p.au) {
            cost += au_read_step(p, offset / p.au).max(p.cmd_ns / 4);
        } else if crosses(p.page) {
            cost += p.cmd_ns / 4;
        }
        self.with_link(cost, len)
    }

    /// A write's cost: its medium work (FAT busy time, or pages and AU
    /// closes) directly, or the cache's law; the link's ceiling; and any
    /// pause the bytes written bring due.
    fn write_cost(&self, st: &mut SimState, now: u64, offset: u64, len: u64) -> u64 {
        let p = &self.params;
        if p.cache_min.is_some() {
            st.coverage.mark(p, offset, len);
        }
        let fat = self.fat_busy(st, offset);
        let cost = if p.cache > 0 && p.through {
            let rate = p.drain.unwrap_or(p.write);
            let work = self.program_ns(offset, len, rate)
                + match fat {
                    Some(busy) => busy,
                    None => self.touch_aus(st, offset, len),
                };
            let usable = st.coverage.usable_cache(p);
            st.cache.through_cost(p, usable, now, len, work)
        } else if let Some(busy) = fat {
            p.cmd_ns + self.program_ns(offset, len, p.write) + busy
        } else if p.cache > 0 {
            let usable = st.coverage.usable_cache(p);
            st.cache.plain_cost(p, usable, now, len)
        } else {
            p.cmd_ns + self.program_ns(offset, len, p.write) + self.touch_aus(st, offset, len)
        };
        self.with_link(cost, len) + st.pauses.after_write(p, len)
    }

    /// Programming the whole pages a write touches at `rate` (as fast as
    /// the medium is where the write starts).
    fn program_ns(&self, offset: u64, len: u64, rate: u64) -> u64 {
        let p = &self.params;
        let first = offset / p.page;
        let last = (offset + len - 1) / p.page;
        (last - first + 1) * xfer_ns(p.page, at_position(p, rate, offset))
    }

    /// The busy time of a write under the `fat` law, or `None` when the
    /// law does not apply (no `fat`, or a write beyond the FAT area).
    fn fat_busy(&self, st: &mut SimState, offset: u64) -> Option<u64> {
        let p = &self.params;
        let base = p.fat_ns.filter(|_| offset < FAT_AREA)?;
        let spike = st.fat.count(p) && p.fat_max_ns > 0;
        Some(if spike { p.fat_max_ns } else { base })
    }

    /// Opens the AUs a write touches; returns the garbage-collection (or,
    /// with `move`, relocation) time of the AUs that had to be closed.
    fn touch_aus(&self, st: &mut SimState, offset: u64, len: u64) -> u64 {
        let p = &self.params;
        let mut gc = 0;
        let mut at = offset;
        while at < offset + len {
            let index = at / p.au;
            let end = ((index + 1) * p.au).min(offset + len);
            let parts = sixty_fourths(at - index * p.au, end - at, p.au);
            gc += self.touch_au(st, index, end - at, parts);
            at = end;
        }
        gc
    }

    fn touch_au(&self, st: &mut SimState, index: u64, bytes: u64, parts: u64) -> u64 {
        let p = &self.params;
        let mut gc = 0;
        let mut entry = match st.open.iter().position(|a| a.index == index) {
            Some(i) => st.open.remove(i),
            None => {
                if st.open.len() >= p.open_au as usize {
                    let closed = st.open.remove(0);
                    gc = self.close_cost(st, &closed);
                }
                OpenAu {
                    index,
                    written: 0,
                    session: 0,
                }
            }
        };
        entry.written += bytes;
        if p.move_speed.is_some() {
            entry.session |= parts;
            *st.used.entry(index).or_default() |= parts;
        }
        st.open.push(entry);
        gc
    }

    /// Closing an AU: with `move`, relocating its used parts not rewritten
    /// while it was open; without, copying what was not written.
    fn close_cost(&self, st: &SimState, closed: &OpenAu) -> u64 {
        let p = &self.params;
        match p.move_speed {
            Some(pm) => {
                let used = st.used.get(&closed.index).copied().unwrap_or(0);
                let moved = u64::from((used & !closed.session).count_ones());
                let bytes = (u128::from(moved) * u128::from(p.au) / 64) as u64;
                xfer_ns(bytes, pm)
            }
            None => {
                let rate = at_position(p, p.write, closed.index * p.au);
                xfer_ns(p.au - closed.written.min(p.au), rate)
            }
        }
    }
}

/// The 64ths of an AU of `au` bytes that `len` bytes at `within` (inside
/// it) touch, as a bit mask.
fn sixty_fourths(within: u64, len: u64, au: u64) -> u64 {
    let part = |at: u64| (u128::from(at) * 64 / u128::from(au)).min(63) as u32;
    let (first, last) = (part(within), part(within + len - 1));
    let upto = if last == 63 {
        u64::MAX
    } else {
        (1u64 << (last + 1)) - 1
    };
    upto & !((1u64 << first) - 1)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A card as `sim:` describes it.
    pub(in crate::engine::sim) fn card(spec: &str) -> SimDevice {
        SimDevice::new(SimParams::parse(spec).unwrap())
    }

    #[test]
    fn fat_area_writes_cost_their_busy_time_and_every_kth_a_spike() {
        let d = card("au=4M,page=16k,write=10MB/s,cmd=100us,fat=5ms,fat_max=400ms,fat_every=4");
        let plain = 100_000 + xfer_ns(16 << 10, 10_000_000);
        let times: Vec<u64> = (0..8u64)
            .map(|i| d.write((4 << 20) + i * 4096, &[1u8; 4096]).unwrap())
            .collect();
        for (i, t) in times.iter().enumerate() {
            let busy = if (i + 1) % 4 == 0 {
                400_000_000
            } else {
                5_000_000
            };
            assert_eq!(*t, plain + busy, "FAT write {i}");
        }
        // Beyond the FAT area the law does not apply.
        let beyond = d.write(FAT_AREA, &[1u8; 4096]).unwrap();
        assert_eq!(beyond, plain);
    }

    #[test]
    fn fat_area_writes_leave_the_open_aus_alone() {
        let d = card("au=4M,page=16k,open_au=1,write=10MB/s,cmd=0us,fat=1ms");
        let page = xfer_ns(16 << 10, 10_000_000);
        assert_eq!(d.write(32 << 20, &[1u8; 4096]).unwrap(), page);
        d.write(0, &[1u8; 4096]).unwrap();
        // Still open: no copy of the AU at 32 MiB.
        assert_eq!(d.write((32 << 20) + 4096, &[1u8; 4096]).unwrap(), page);
    }

    /// Writes `n` RUs of 512 KiB from `at`; the time taken.
    fn write_rus(d: &SimDevice, at: u64, n: u64) -> u64 {
        let ru = vec![1u8; 512 << 10];
        (0..n)
            .map(|i| d.write(at + i * (512 << 10), &ru).unwrap())
            .sum()
    }

    #[test]
    fn with_a_move_speed_an_au_with_used_rus_costs_moving_them_the_p_nu_law() {
        // Nt = 8 RUs of 512 KiB; Nu = 2 used, then the 6 free ones written.
        let spec = "au=4M,page=16k,open_au=1,write=10MB/s,cmd=0us,move=4MB/s";
        let d = card(spec);
        let (a, b, c) = (32u64 << 20, 64u64 << 20, 96u64 << 20);
        write_rus(&d, a, 2);
        // A whole fresh AU: closing the partly written one moves nothing
        // (its used RUs were all written while it was open).
        assert_eq!(write_rus(&d, b, 8), 8 * xfer_ns(512 << 10, 10_000_000));
        let rest = write_rus(&d, a + (1 << 20), 6);
        // Writing the free RUs: at Pw; closing the AU then relocates the 2
        // used RUs at Pm, paid by the next write that opens an AU.
        let next = write_rus(&d, c, 1);
        let pw = xfer_ns(512 << 10, 10_000_000);
        assert_eq!(rest, 6 * pw);
        assert_eq!(next, pw + xfer_ns(1 << 20, 4_000_000));
        // P(Nu) = (Nt - Nu)·RU / ((Nt - Nu)·RU/Pw + Nu·RU/Pm).
        let p_nu = 3.0 * 1024.0 * 1024.0 / ((rest + next - pw) as f64 / 1e9);
        let law = 3.0 * 1024.0 * 1024.0 / (3.0 * 1024.0 * 1024.0 / 10e6 + 1024.0 * 1024.0 / 4e6);
        assert!((p_nu - law).abs() < law * 1e-6, "{p_nu} vs {law}");
    }

    #[test]
    fn without_a_move_speed_the_close_law_copies_what_was_not_written() {
        let d = card("au=4M,page=16k,open_au=1,write=10MB/s,cmd=0us");
        write_rus(&d, 32 << 20, 2);
        let pw = xfer_ns(512 << 10, 10_000_000);
        // Closing the AU copies its 6 unwritten RUs at the write speed.
        assert_eq!(write_rus(&d, 64 << 20, 1), pw + 6 * pw);
    }

    #[test]
    fn sixty_fourths_cover_exactly_the_parts_touched() {
        assert_eq!(sixty_fourths(0, 4 << 20, 4 << 20), u64::MAX);
        assert_eq!(sixty_fourths(0, 1 << 20, 4 << 20), (1 << 16) - 1);
        assert_eq!(sixty_fourths(3 << 20, 1 << 20, 4 << 20), u64::MAX << 48);
        // A 16 KiB AU has 256-byte 64ths: a sector covers two.
        assert_eq!(sixty_fourths(0, 512, 16 << 10), 0b11);
        assert_eq!(sixty_fourths((16 << 10) - 512, 512, 16 << 10), 0b11 << 62);
    }

    #[test]
    fn a_read_across_an_au_boundary_costs_a_command_more_than_one_inside() {
        let d = card("au=4M,page=16k,cmd=200us,read=20MB/s");
        let mut buf = vec![0u8; 4096];
        let inside = d.read(4 << 20, &mut buf).unwrap();
        let across = d.read((4 << 20) - 2048, &mut buf).unwrap();
        let page = d.read((16 << 10) - 2048, &mut buf).unwrap();
        assert_eq!(across - inside, 200_000);
        assert_eq!(page - inside, 50_000);
    }

    #[test]
    fn a_sub_page_write_costs_a_whole_page_and_a_new_au_beyond_the_open_ones_a_copy() {
        let d = card("au=4M,page=16k,open_au=2,write=10MB/s,cmd=0us");
        let small = d.write(0, &[1u8; 4096]).unwrap();
        assert_eq!(small, xfer_ns(16 << 10, 10_000_000));
        d.write(4 << 20, &[1u8; 4096]).unwrap();
        // A third AU closes the first, of which only 4 KiB was written.
        let third = d.write(8 << 20, &[1u8; 4096]).unwrap();
        assert_eq!(third - small, xfer_ns((4 << 20) - 4096, 10_000_000));
    }

    #[test]
    fn a_cache_absorbs_a_burst_then_writes_wait_for_the_drain() {
        let d = card("cache=8M,write=10MB/s,burst=40MB/s,cmd=0us");
        let chunk = vec![0u8; 1 << 20];
        let first = d.write(0, &chunk).unwrap();
        assert_eq!(first, xfer_ns(1 << 20, 40_000_000));
        let mut last = 0;
        for i in 1..40u64 {
            last = d.write(i << 20, &chunk).unwrap();
        }
        // Sustained: one MiB per MiB drained at 10 MB/s.
        let sustained = xfer_ns(1 << 20, 10_000_000);
        assert!(
            last.abs_diff(sustained) < sustained / 50,
            "{last} vs {sustained}"
        );
    }
}

#[cfg(test)]
#[path = "card_laws_tests.rs"]
mod laws_tests;
