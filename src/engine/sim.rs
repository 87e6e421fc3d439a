//! A simulated flash card on a virtual clock: the ground truth the flash
//! detectors are tested against, deterministically and in milliseconds.
//!
//! Why: the detectors of `iocurve flash` read geometry out of timings, and
//! the only honest test of such a reading is a device whose geometry is
//! known. The model follows the published descriptions of cheap flash
//! controllers (Arnd Bergmann's flashbench notes, the SD Association's
//! simplified physical layer, the f3 documentation), not any real card:
//!
//! * every command costs a fixed `cmd` time plus the transfer at `read` or
//!   `write` speed;
//! * a read that straddles an allocation-unit (AU) boundary costs a second
//!   command time (two erase blocks are looked up); one that straddles a
//!   page boundary costs a quarter of one;
//! * a write programs whole pages, so a write smaller than a page costs a
//!   whole page;
//! * the controller keeps `open_au` AUs open, least recently used first out;
//!   writing to another one closes the oldest, which costs copying the part
//!   of it that was not written (garbage collection of a whole AU for a few
//!   small writes, nothing for an AU written from end to end);
//! * with `cache` bytes of write cache (an SLC region), writes land at
//!   `burst` speed while the cache drains at `write` speed in the
//!   background; a full cache makes a write wait for room;
//! * beyond `real` bytes (any multiple of 512) the card is a counterfeit of
//!   one of the kinds the f3 documentation and its issue tracker describe
//!   (`fake=`): addresses wrap around (`wrap`, `address mod real`, the
//!   default), writes are dropped and reads return zeros (`zeros`) or the
//!   old contents (`stale`, a fixed pattern per address), or transfers fail
//!   with an I/O error (`eio`); with a cache, the last `cache` bytes written
//!   read back from the cache by their logical address, which hides every
//!   kind from an immediate check (and, for `eio`, accepts the write);
//! * `link`, when given, caps every transfer like a slow reader would;
//! * with `move` (the move performance Pm of the SD specification's
//!   performance model, which SDHC cards have and SDXC cards do not), the
//!   controller knows which parts of each AU hold data ("used", tracked in
//!   64ths of an AU): closing an AU relocates, at `move` speed, the used
//!   parts that were not rewritten while it was open, and nothing else (a
//!   free part needs no copy). An AU in which Nu of Nt recording units are
//!   used, its Nt − Nu free ones written, therefore costs
//!   (Nt − Nu)·RU/Pw + Nu·RU/Pm: the specification's P(Nu) curve. Without
//!   `move` the close law above (copy what was not written) stays. Behind a
//!   write cache the model keeps no AU state, so neither law shows there;
//! * with `fat` (a busy time), writes starting in the first 16 MiB (the FAT
//!   area, which cheap controllers manage apart) cost the command, their
//!   page programs and that busy time, and leave the open AUs and the cache
//!   alone; with `fat_max` every `fat_every`-th of them is busy that long
//!   instead (the periodic spikes of a FAT-area merge), which is what the
//!   SD specification's T_FW limits (mean of 8, maximum) are about.
//!
//! Data is really kept (a sparse map of written 4 KiB chunks at their
//! physical address), so wrap-around is visible to reads. Unwritten chunks
//! read as zeros. The clock is the device's own: the engine advances it by
//! the cost of each operation, so a run of "ten seconds" takes the
//! milliseconds the host needs to simulate it, and allocations on the host
//! cannot disturb the figures.

use super::{Clock, Engine, IoError, OpKind, OpSource, pool_slice};
use crate::sys::buffer::AlignedBuf;
use crate::units::{format_size, parse_duration, parse_rate, parse_size};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Granularity of the data map.
const CHUNK: u64 = 4096;
/// Smallest transfer unit the simulated card accepts.
pub const SECTOR: u64 = 512;

/// What a simulated card is made of; every field has a default.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SimParams {
    /// Claimed capacity [4G].
    pub size: u64,
    /// Allocation unit (erase block) [4M].
    pub au: u64,
    /// Program page [16k].
    pub page: u64,
    /// AUs the controller keeps open for writing [2].
    pub open_au: u32,
    /// Medium read speed, bytes/s [20MB/s].
    pub read: u64,
    /// Medium write speed, bytes/s; also the cache's drain speed [10MB/s].
    pub write: u64,
    /// Write speed into the cache, bytes/s [4 × write].
    pub burst: u64,
    /// Fixed cost of each command, ns [200us].
    pub cmd_ns: u64,
    /// Write cache (SLC region) [0: none].
    pub cache: u64,
    /// Bytes that really exist; addresses wrap beyond [size: genuine].
    pub real: u64,
    /// Link ceiling, bytes/s, like a reader [none].
    pub link: Option<u64>,
    /// What happens beyond `real` [wrap].
    pub fake: FakeKind,
    /// Move speed Pm, bytes/s: relocating used data of an AU on close
    /// [none: the copy-what-was-not-written law].
    #[serde(rename = "move")]
    pub move_speed: Option<u64>,
    /// Busy time of a write in the FAT area, ns [none: the FAT area is
    /// like any other].
    pub fat_ns: Option<u64>,
    /// Busy time of every `fat_every`-th FAT-area write, ns [0: no spikes].
    pub fat_max_ns: u64,
    /// Period of the FAT-area spikes, in FAT-area writes [16].
    pub fat_every: u32,
}

/// The FAT area of the `fat` law (the same 16 MiB as `flash::FAT_AREA`).
pub const FAT_AREA: u64 = 16 << 20;

/// How a counterfeit card treats the addresses beyond its real size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FakeKind {
    /// Address mod real: a write lands on (and destroys) a real block.
    #[default]
    Wrap,
    /// Writes are dropped; reads return zeros.
    Zeros,
    /// Writes are dropped; reads return the old contents.
    Stale,
    /// Reads and writes fail with an I/O error.
    Eio,
}

impl FakeKind {
    pub const ALL: [FakeKind; 4] = [
        FakeKind::Wrap,
        FakeKind::Zeros,
        FakeKind::Stale,
        FakeKind::Eio,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FakeKind::Wrap => "wrap",
            FakeKind::Zeros => "zeros",
            FakeKind::Stale => "stale",
            FakeKind::Eio => "eio",
        }
    }

    fn parse(value: &str) -> Result<FakeKind, String> {
        FakeKind::ALL
            .into_iter()
            .find(|k| k.name() == value)
            .ok_or_else(|| {
                format!("sim option fake={value}: not wrap, zeros, stale or eio; {SIM_HELP}")
            })
    }
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            size: 4 << 30,
            au: 4 << 20,
            page: 16 << 10,
            open_au: 2,
            read: 20_000_000,
            write: 10_000_000,
            burst: 40_000_000,
            cmd_ns: 200_000,
            cache: 0,
            real: 4 << 30,
            link: None,
            fake: FakeKind::Wrap,
            move_speed: None,
            fat_ns: None,
            fat_max_ns: 0,
            fat_every: 16,
        }
    }
}

/// The documentation of `sim:` options, for `--help` and errors.
pub const SIM_HELP: &str = "sim:[size=4G][,au=4M][,page=16k][,open_au=2][,read=20MB/s][,write=10MB/s][,burst=4×write][,cmd=200us][,cache=0][,real=size][,fake=wrap|zeros|stale|eio][,link=none][,move=none][,fat=none][,fat_max=0][,fat_every=16]";

impl SimParams {
    /// Parses the text after `sim:`: comma-separated `key=value` options.
    pub fn parse(spec: &str) -> Result<SimParams, String> {
        let mut p = SimParams::default();
        let (mut real, mut burst) = (None, None);
        let mut given: Vec<&str> = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("sim option '{item}' is not key=value; {SIM_HELP}"))?;
            // Which of two values was meant is a guess: refuse, not pick.
            if given.contains(&key) {
                return Err(format!(
                    "sim option {key} is given twice: give each option once; {SIM_HELP}"
                ));
            }
            given.push(key);
            let named = |e: crate::units::ParseError| format!("sim option {key}={value}: {e}");
            let size = || parse_size(value).map_err(named);
            let rate = || parse_rate(value).map_err(named);
            match key {
                "size" => p.size = size()?,
                "au" => p.au = size()?,
                "page" => p.page = size()?,
                "open_au" => p.open_au = value.parse().map_err(|_| bad(key, value))?,
                "read" => p.read = rate()?,
                "write" => p.write = rate()?,
                "burst" => burst = Some(rate()?),
                "cmd" => p.cmd_ns = duration(key, value)?,
                "cache" => p.cache = size()?,
                "real" => real = Some(size()?),
                "link" => p.link = Some(rate()?),
                "fake" => p.fake = FakeKind::parse(value)?,
                "move" => p.move_speed = Some(rate()?),
                "fat" => p.fat_ns = Some(duration(key, value)?),
                "fat_max" => p.fat_max_ns = duration(key, value)?,
                "fat_every" => p.fat_every = value.parse().map_err(|_| bad(key, value))?,
                _ => return Err(format!("unknown sim option '{key}'; {SIM_HELP}")),
            }
        }
        p.real = real.unwrap_or(p.size);
        p.burst = burst.unwrap_or(p.write.saturating_mul(4));
        if p.fat_max_ns > 0 && p.fat_ns.is_none() {
            p.fat_ns = Some(0);
        }
        p.check()?;
        Ok(p)
    }

    fn check(&self) -> Result<(), String> {
        let units_ok = [self.au, self.page, self.size, self.real]
            .iter()
            .all(|v| *v >= SECTOR && v.is_multiple_of(SECTOR));
        if !units_ok || !self.au.is_multiple_of(self.page) || self.real > self.size {
            return Err(format!(
                "sim: size, real, au and page must be multiples of 512 bytes, au a multiple of page, real at most size; {SIM_HELP}"
            ));
        }
        // An AU is a piece of the card: one larger than the card cannot be.
        if self.au > self.size {
            return Err(format!(
                "sim option au={} is larger than the card (size={}): give an au at most the size; {SIM_HELP}",
                format_size(self.au),
                format_size(self.size)
            ));
        }
        let zero = self.open_au == 0 || self.read == 0 || self.write == 0 || self.burst == 0;
        if zero || self.move_speed == Some(0) || self.fat_every == 0 {
            return Err(format!(
                "sim: open_au, fat_every and the speeds must be above 0; {SIM_HELP}"
            ));
        }
        Ok(())
    }

    /// A one-line description for notes.
    pub fn describe(&self) -> String {
        format!(
            "simulated card, times on its virtual clock: {} claimed, {} real{}, AU {}, page {}, {} open AUs, cache {}{}",
            format_size(self.size),
            format_size(self.real),
            match self.real < self.size {
                true => format!(" ({} beyond)", self.fake.name()),
                false => String::new(),
            },
            format_size(self.au),
            format_size(self.page),
            self.open_au,
            format_size(self.cache),
            match self.move_speed {
                Some(m) => format!(", move {:.1} MB/s", m as f64 / 1e6),
                None => String::new(),
            }
        )
    }
}

fn duration(key: &str, value: &str) -> Result<u64, String> {
    parse_duration(value)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .map_err(|e| format!("sim option {key}={value}: {e}"))
}

fn bad(key: &str, value: &str) -> String {
    format!("sim option {key}={value}: not a whole number; {SIM_HELP}")
}

/// Nanoseconds to move `len` bytes at `rate` bytes/s.
fn xfer_ns(len: u64, rate: u64) -> u64 {
    (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64
}

/// An AU the controller has open, with the bytes written since it opened.
#[derive(Debug, Clone, Copy)]
struct OpenAu {
    index: u64,
    written: u64,
    /// The 64ths of the AU written since it opened (the `move` law).
    session: u64,
}

/// A held chunk's contents; `None`: zeros.
type HeldData = Option<Box<[u8]>>;

/// The write cache's view of recent writes, by logical chunk: the last
/// `cache` bytes written, exactly (kept only on a counterfeit card with a
/// cache, where it hides the fraud from an immediate read-back).
#[derive(Default)]
struct HeldChunks {
    /// (logical chunk, generation, bytes that write put in it), oldest first.
    order: VecDeque<(u64, u64, u64)>,
    /// Logical chunk to the generation of its newest write and its
    /// contents (`None`: zeros, so a long flush of zeros costs no memory).
    data: HashMap<u64, (u64, HeldData)>,
    /// Sum of the bytes in `order`.
    bytes: u64,
    generation: u64,
}

#[derive(Default)]
struct SimState {
    /// Most recently used last.
    open: Vec<OpenAu>,
    cache_level: u64,
    cache_time: u64,
    /// Physical chunk index to its bytes.
    chunks: BTreeMap<u64, Box<[u8]>>,
    held: HeldChunks,
    /// AU index to the 64ths of it that hold data (cards with `move`).
    used: HashMap<u64, u64>,
    /// FAT-area writes so far (the `fat_every` spikes).
    fat_writes: u64,
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
            params,
            state: Mutex::new(SimState::default()),
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
        self.copy_out(&st, offset, buf);
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
        if beyond && self.params.fake == FakeKind::Eio && !self.hides() {
            return Err(self.eio(offset, len));
        }
        let mut st = self.lock();
        let now = self.clock.load(Ordering::SeqCst);
        let cost = self.write_cost(&mut st, now, offset, len);
        if self.keeps_data {
            self.copy_in(&mut st, offset, len, data);
        }
        Ok(self.advance(cost))
    }

    /// Whether the cache hides the fraud (a counterfeit card with a cache).
    fn hides(&self) -> bool {
        self.params.cache > 0 && self.params.real < self.params.size
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
        let first = offset.max(p.real) / CHUNK;
        let last = (offset + len - 1) / CHUNK;
        match (first..=last).all(|c| st.held.data.contains_key(&c)) {
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

    fn read_cost(&self, offset: u64, len: u64) -> u64 {
        let p = &self.params;
        let crosses = |unit: u64| offset / unit != (offset + len - 1) / unit;
        let mut cost = p.cmd_ns + xfer_ns(len, p.read);
        if crosses(p.au) {
            cost += p.cmd_ns;
        } else if crosses(p.page) {
            cost += p.cmd_ns / 4;
        }
        self.with_link(cost, len)
    }

    fn write_cost(&self, st: &mut SimState, now: u64, offset: u64, len: u64) -> u64 {
        let p = &self.params;
        let cost = if let Some(busy) = self.fat_busy(st, offset) {
            p.cmd_ns + self.program_ns(offset, len) + busy
        } else if p.cache > 0 {
            self.cached_write_cost(st, now, len)
        } else {
            p.cmd_ns + self.program_ns(offset, len) + self.touch_aus(st, offset, len)
        };
        self.with_link(cost, len)
    }

    /// Programming the whole pages a write touches.
    fn program_ns(&self, offset: u64, len: u64) -> u64 {
        let p = &self.params;
        let first = offset / p.page;
        let last = (offset + len - 1) / p.page;
        (last - first + 1) * xfer_ns(p.page, p.write)
    }

    /// The busy time of a write under the `fat` law, or `None` when the
    /// law does not apply (no `fat`, or a write beyond the FAT area).
    fn fat_busy(&self, st: &mut SimState, offset: u64) -> Option<u64> {
        let p = &self.params;
        let base = p.fat_ns.filter(|_| offset < FAT_AREA)?;
        st.fat_writes += 1;
        let spike = p.fat_max_ns > 0 && st.fat_writes.is_multiple_of(u64::from(p.fat_every));
        Some(if spike { p.fat_max_ns } else { base })
    }

    /// The cache drains at the medium's speed since it was last looked at;
    /// a write that does not fit waits until enough has drained.
    fn cached_write_cost(&self, st: &mut SimState, now: u64, len: u64) -> u64 {
        let p = &self.params;
        let elapsed = now.saturating_sub(st.cache_time);
        let drained = (u128::from(elapsed) * u128::from(p.write) / 1_000_000_000) as u64;
        st.cache_level = st.cache_level.saturating_sub(drained) + len;
        let over = st.cache_level.saturating_sub(p.cache);
        let cost = p.cmd_ns + xfer_ns(len, p.burst) + xfer_ns(over, p.write);
        st.cache_time = now;
        cost
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
            None => xfer_ns(p.au - closed.written.min(p.au), p.write),
        }
    }

    /// Where a logical sector's data lives, or `None` beyond the real size
    /// of a card that keeps nothing there.
    fn physical(&self, logical: u64) -> Option<u64> {
        let p = &self.params;
        match (logical < p.real, p.fake) {
            (true, _) => Some(logical),
            (false, FakeKind::Wrap) => Some(logical % p.real),
            (false, _) => None,
        }
    }

    /// What the medium (not the cache) returns for one logical sector.
    fn backing(&self, st: &SimState, logical: u64, piece: &mut [u8]) {
        match self.physical(logical) {
            Some(phys) => {
                let within = (phys % CHUNK) as usize;
                match st.chunks.get(&(phys / CHUNK)) {
                    Some(chunk) => piece.copy_from_slice(&chunk[within..within + piece.len()]),
                    None => piece.fill(0),
                }
            }
            None if self.params.fake == FakeKind::Stale => stale_sector(logical, piece),
            None => piece.fill(0),
        }
    }

    /// What a read of one logical sector returns: the cache's copy, else
    /// the medium's.
    fn sector_view(&self, st: &SimState, logical: u64, piece: &mut [u8]) {
        match st.held.data.get(&(logical / CHUNK)) {
            Some((_, Some(chunk))) => {
                let within = (logical % CHUNK) as usize;
                piece.copy_from_slice(&chunk[within..within + piece.len()]);
            }
            Some((_, None)) => piece.fill(0),
            None => self.backing(st, logical, piece),
        }
    }

    fn copy_out(&self, st: &SimState, offset: u64, buf: &mut [u8]) {
        for (i, piece) in buf.chunks_mut(SECTOR as usize).enumerate() {
            self.sector_view(st, offset + i as u64 * SECTOR, piece);
        }
    }

    /// Stores a write (`None`: zeros) chunk by chunk; on a card that hides,
    /// the cache keeps the logical chunk as a read would now see it.
    fn copy_in(&self, st: &mut SimState, offset: u64, len: u64, data: Option<&[u8]>) {
        let end = offset + len;
        if data.is_none() && !self.hides() {
            self.store_zeros(st, offset, end);
            return;
        }
        let mut at = offset;
        while at < end {
            let chunk = at / CHUNK;
            let upto = ((chunk + 1) * CHUNK).min(end);
            let piece = data.map(|d| &d[(at - offset) as usize..(upto - offset) as usize]);
            let view = self.hides().then(|| self.chunk_after(st, chunk, at, piece));
            self.store(st, at, upto - at, piece);
            if let Some(view) = view {
                self.hold(st, chunk, view, upto - at);
            }
            at = upto;
        }
    }

    /// The logical chunk as a read would see it once `piece` (within it, at
    /// `at`; `None`: zeros) is written; `None` when that is all zeros.
    fn chunk_after(
        &self,
        st: &SimState,
        chunk: u64,
        at: u64,
        piece: Option<&[u8]>,
    ) -> Option<Box<[u8]>> {
        let whole = at.is_multiple_of(CHUNK) && piece.is_none_or(|p| p.len() as u64 == CHUNK);
        if whole && piece.is_none() {
            return None;
        }
        let mut view = vec![0u8; CHUNK as usize].into_boxed_slice();
        if !whole {
            let base = chunk * CHUNK;
            for (i, s) in view.chunks_mut(SECTOR as usize).enumerate() {
                self.sector_view(st, base + i as u64 * SECTOR, s);
            }
        }
        let within = (at % CHUNK) as usize;
        if let Some(p) = piece {
            view[within..within + p.len()].copy_from_slice(p);
        }
        Some(view)
    }

    /// Writes sectors to the medium (dropped beyond the real size unless
    /// the card wraps).
    fn store(&self, st: &mut SimState, at: u64, len: u64, piece: Option<&[u8]>) {
        for i in 0..len / SECTOR {
            let logical = at + i * SECTOR;
            let Some(phys) = self.physical(logical) else {
                continue;
            };
            let within = (phys % CHUNK) as usize;
            let sector = SECTOR as usize;
            match piece {
                Some(p) => {
                    let chunk = st
                        .chunks
                        .entry(phys / CHUNK)
                        .or_insert_with(|| vec![0; CHUNK as usize].into_boxed_slice());
                    let from = (i * SECTOR) as usize;
                    chunk[within..within + sector].copy_from_slice(&p[from..from + sector]);
                }
                None => {
                    let contiguous =
                        self.physical(at + CHUNK - SECTOR) == Some(phys + CHUNK - SECTOR);
                    if len == CHUNK && i == 0 && within == 0 && contiguous {
                        // A whole aligned chunk of zeros: forget it.
                        st.chunks.remove(&(phys / CHUNK));
                        return;
                    }
                    if let Some(chunk) = st.chunks.get_mut(&(phys / CHUNK)) {
                        chunk[within..within + sector].fill(0);
                    }
                }
            }
        }
    }

    /// Zeros the medium under logical `at..end`, a run of addresses that map
    /// contiguously at a time: one range lookup each, not one per sector.
    fn store_zeros(&self, st: &mut SimState, mut at: u64, end: u64) {
        let real = self.params.real;
        while at < end {
            let run_end = match at < real {
                true => end.min(real),
                false => end.min((at / real + 1).saturating_mul(real)),
            };
            if let Some(phys) = self.physical(at) {
                zero_range(&mut st.chunks, phys, phys + (run_end - at));
            }
            at = run_end;
        }
    }

    /// Keeps a logical chunk in the cache until `cache` bytes of newer
    /// writes pushed it out.
    fn hold(&self, st: &mut SimState, chunk: u64, view: Option<Box<[u8]>>, bytes: u64) {
        let held = &mut st.held;
        held.generation += 1;
        let generation = held.generation;
        held.data.insert(chunk, (generation, view));
        held.order.push_back((chunk, generation, bytes));
        held.bytes += bytes;
        while held.bytes > self.params.cache {
            let Some((old, g, b)) = held.order.pop_front() else {
                break;
            };
            held.bytes -= b;
            if held.data.get(&old).is_some_and(|(newest, _)| *newest == g) {
                held.data.remove(&old);
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

/// Zeros physical bytes `from..to` of the stored chunks (forgetting the
/// chunks covered whole).
fn zero_range(chunks: &mut BTreeMap<u64, Box<[u8]>>, from: u64, to: u64) {
    let keys: Vec<u64> = chunks
        .range(from / CHUNK..to.div_ceil(CHUNK))
        .map(|(k, _)| *k)
        .collect();
    for k in keys {
        let (start, stop) = (k * CHUNK, (k + 1) * CHUNK);
        if from <= start && stop <= to {
            chunks.remove(&k);
        } else if let Some(chunk) = chunks.get_mut(&k) {
            let lo = (from.max(start) - start) as usize;
            let hi = (to.min(stop) - start) as usize;
            chunk[lo..hi].fill(0);
        }
    }
}

/// The old contents a `stale` counterfeit returns beyond its real size: a
/// fixed pattern per sector, like whatever the chip held before.
fn stale_sector(logical: u64, piece: &mut [u8]) {
    fastrand::Rng::with_seed(logical ^ 0x57a1_e000_0000_0000).fill(piece);
}

/// An engine on a [`SimDevice`]: executes one operation at a time (a card
/// has one command in flight), whatever the queue depth asked.
pub struct SimEngine<'a> {
    device: &'a SimDevice,
    block_size: usize,
    pool: AlignedBuf,
    buf: AlignedBuf,
}

impl<'a> SimEngine<'a> {
    pub fn new(device: &'a SimDevice, block_size: usize, pool: AlignedBuf) -> SimEngine<'a> {
        SimEngine {
            device,
            block_size,
            buf: AlignedBuf::new(block_size, crate::sys::buffer::MIN_ALIGN),
            pool,
        }
    }

    fn execute<S: OpSource>(&mut self, source: &mut S, op: &super::Op) -> Result<(), String> {
        let len = op.len as usize;
        match op.kind {
            OpKind::Read => self
                .device
                .read(op.offset, &mut self.buf.as_mut_slice()[..len])
                .map(drop),
            OpKind::Write => {
                let data = if source.stamps_writes() {
                    source.fill_write(op, &mut self.buf.as_mut_slice()[..len]);
                    &self.buf.as_slice()[..len]
                } else {
                    &pool_slice(&self.pool, self.block_size, op.seq)[..len]
                };
                self.device.write(op.offset, data).map(drop)
            }
        }
    }
}

impl Engine for SimEngine<'_> {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError> {
        let clock = self.device.clock();
        while let Some(op) = source.next(clock.now_ns()) {
            let start = clock.now_ns();
            if let Err(message) = self.execute(source, &op) {
                return Err(IoError {
                    kind: op.kind,
                    offset: op.offset,
                    len: op.len,
                    error: std::io::Error::new(std::io::ErrorKind::InvalidInput, message),
                });
            }
            let end = clock.now_ns();
            source.completed(&op, start, end, &self.buf.as_slice()[..op.len as usize]);
        }
        Ok(())
    }

    fn now_ns(&self) -> u64 {
        self.device.clock().now_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(spec: &str) -> SimDevice {
        SimDevice::new(SimParams::parse(spec).unwrap())
    }

    #[test]
    fn options_parse_with_documented_defaults() {
        let p = SimParams::parse("").unwrap();
        assert_eq!(p, SimParams::default());
        let p = SimParams::parse("size=8G,au=8M,page=32k,open_au=5,read=30MB/s,write=12MB/s,cmd=100us,cache=64M,real=1G,link=40MB/s").unwrap();
        assert_eq!(
            (p.size, p.au, p.page, p.open_au),
            (8 << 30, 8 << 20, 32 << 10, 5)
        );
        assert_eq!(
            (p.read, p.write, p.burst, p.cmd_ns),
            (30_000_000, 12_000_000, 48_000_000, 100_000)
        );
        assert_eq!(
            (p.cache, p.real, p.link),
            (64 << 20, 1 << 30, Some(40_000_000))
        );
        assert!(SimParams::parse("au=4M,page=3k").is_err());
        assert!(SimParams::parse("real=8G,size=4G").is_err());
        assert!(
            SimParams::parse("colour=blue")
                .unwrap_err()
                .contains("unknown")
        );
    }

    #[test]
    fn move_and_fat_options_parse_and_are_off_by_default() {
        let p = SimParams::parse("move=3MB/s,fat=5ms,fat_max=300ms,fat_every=8").unwrap();
        assert_eq!(p.move_speed, Some(3_000_000));
        assert_eq!(
            (p.fat_ns, p.fat_max_ns, p.fat_every),
            (Some(5_000_000), 300_000_000, 8)
        );
        let d = SimParams::default();
        assert_eq!((d.move_speed, d.fat_ns, d.fat_max_ns), (None, None, 0));
        // Spikes alone: the FAT law with no base busy time.
        assert_eq!(SimParams::parse("fat_max=1s").unwrap().fat_ns, Some(0));
        assert!(SimParams::parse("fat_every=0").is_err());
        assert!(SimParams::parse("move=0B/s").is_err());
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
    fn data_is_kept_and_wraps_beyond_the_real_size() {
        let d = card("size=8G,real=1G");
        d.write(5 << 20, &[7u8; 4096]).unwrap();
        d.write((1 << 30) + (5 << 20), &[9u8; 1024]).unwrap();
        let mut buf = vec![0u8; 4096];
        d.read(5 << 20, &mut buf).unwrap();
        assert_eq!(&buf[..1024], &[9u8; 1024][..]);
        assert_eq!(&buf[1024..], &[7u8; 3072][..]);
        d.read(100 << 20, &mut buf).unwrap();
        assert!(buf.iter().all(|b| *b == 0));
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

    #[test]
    fn a_cache_hides_the_wrap_around_of_recent_writes() {
        let d = card("size=2G,real=1G,cache=1M");
        d.write(0x10_0000, &[1u8; 4096]).unwrap();
        d.write((1 << 30) + 0x10_0000, &[2u8; 4096]).unwrap();
        let mut buf = vec![0u8; 4096];
        d.read(0x10_0000, &mut buf).unwrap();
        assert_eq!(buf[0], 1, "the cache still holds the low block");
        for i in 0..300u64 {
            d.write((64 << 20) + i * 4096, &[3u8; 4096]).unwrap();
        }
        d.read(0x10_0000, &mut buf).unwrap();
        assert_eq!(buf[0], 2, "out of the cache, the alias shows");
    }

    fn stamp(n: u8) -> Vec<u8> {
        vec![n; 4096]
    }

    fn read4k(d: &SimDevice, at: u64) -> Result<Vec<u8>, String> {
        let mut buf = vec![0u8; 4096];
        d.read(at, &mut buf).map(|_| buf)
    }

    #[test]
    fn fake_kinds_parse_and_default_to_wrap() {
        assert_eq!(SimParams::parse("real=1G").unwrap().fake, FakeKind::Wrap);
        for kind in FakeKind::ALL {
            let p = SimParams::parse(&format!("real=1G,fake={}", kind.name())).unwrap();
            assert_eq!(p.fake, kind);
        }
        assert!(SimParams::parse("fake=melt").unwrap_err().contains("wrap"));
    }

    #[test]
    fn wrap_at_a_real_size_that_is_not_a_power_of_two() {
        let real = 3000u64 << 20;
        let d = card(&format!("size=8G,real={real}"));
        d.write(5 << 20, &stamp(1)).unwrap();
        d.write(real + (5 << 20), &stamp(2)).unwrap();
        assert_eq!(read4k(&d, 5 << 20).unwrap(), stamp(2));
        // Not at the next power of two.
        d.write(4 << 30, &stamp(3)).unwrap();
        assert_eq!(read4k(&d, (4 << 30) - real).unwrap(), stamp(3));
    }

    #[test]
    fn wrap_at_a_real_size_in_odd_sectors_splits_a_block() {
        let real = (1 << 30) + 512;
        let d = card(&format!("size=2G,real={real}"));
        d.write(real + (8 << 20), &stamp(4)).unwrap();
        let mut buf = vec![0u8; 4096];
        d.read(8 << 20, &mut buf).unwrap();
        assert_eq!(buf, stamp(4), "the sectors land at address - real");
    }

    #[test]
    fn zeros_drop_writes_beyond_the_real_size() {
        let d = card("size=8G,real=6G,fake=zeros");
        d.write(7 << 30, &stamp(5)).unwrap();
        assert_eq!(read4k(&d, 7 << 30).unwrap(), vec![0u8; 4096]);
        assert_eq!(
            read4k(&d, (7 << 30) - (6 << 30)).unwrap(),
            vec![0u8; 4096],
            "no wrap"
        );
        d.write((6 << 30) - 4096, &stamp(6)).unwrap();
        assert_eq!(
            read4k(&d, (6 << 30) - 4096).unwrap(),
            stamp(6),
            "below real: kept"
        );
    }

    #[test]
    fn stale_returns_the_same_old_contents_whatever_was_written() {
        let d = card("size=8G,real=6G,fake=stale");
        let before = read4k(&d, 7 << 30).unwrap();
        assert!(before.iter().any(|b| *b != 0), "old contents, not zeros");
        d.write(7 << 30, &stamp(7)).unwrap();
        assert_eq!(read4k(&d, 7 << 30).unwrap(), before);
    }

    #[test]
    fn eio_fails_transfers_beyond_the_real_size() {
        let d = card("size=8G,real=6G,fake=eio");
        assert!(
            d.write(7 << 30, &stamp(8))
                .unwrap_err()
                .contains("I/O error")
        );
        assert!(read4k(&d, 7 << 30).unwrap_err().contains("I/O error"));
        assert!(read4k(&d, (6 << 30) - 4096).is_ok());
        // A transfer that straddles the real size fails too.
        assert!(read4k(&d, (6 << 30) - 2048).is_err());
    }

    #[test]
    fn a_cache_hides_every_kind_until_pushed_out_and_holds_exactly_its_size() {
        for kind in FakeKind::ALL {
            let d = card(&format!("size=2G,real=1G,cache=1M,fake={}", kind.name()));
            let (low, high) = (4u64 << 20, (1u64 << 30) + (4 << 20));
            d.write(low, &stamp(1)).unwrap();
            d.write(high, &stamp(9)).unwrap();
            // Newer writes that fill the cache to the byte: both still held.
            d.write_zeros(64 << 20, (1 << 20) - 8192).unwrap();
            assert_eq!(read4k(&d, low).unwrap(), stamp(1), "{kind:?}: low held");
            assert_eq!(read4k(&d, high).unwrap(), stamp(9), "{kind:?}: high held");
            // One chunk more pushes the low block out: the medium shows.
            d.write_zeros(128 << 20, 4096).unwrap();
            let low_now = read4k(&d, low).unwrap();
            match kind {
                FakeKind::Wrap => assert_eq!(low_now, stamp(9), "the alias shows"),
                _ => assert_eq!(low_now, stamp(1), "{kind:?}: below real, kept"),
            }
            // And one more the high block.
            d.write_zeros(132 << 20, 4096).unwrap();
            let high_now = read4k(&d, high);
            match kind {
                FakeKind::Wrap => assert_eq!(high_now.unwrap(), stamp(9)),
                FakeKind::Zeros => assert_eq!(high_now.unwrap(), vec![0u8; 4096]),
                FakeKind::Stale => assert_ne!(high_now.unwrap(), stamp(9)),
                FakeKind::Eio => assert!(high_now.is_err()),
            }
        }
    }

    #[test]
    fn write_zeros_is_a_write_of_zeros() {
        let (a, b) = (
            card("size=2G,real=1G,cache=4M"),
            card("size=2G,real=1G,cache=4M"),
        );
        for d in [&a, &b] {
            d.write(8 << 20, &vec![1u8; 16 << 10]).unwrap();
        }
        let ta = a.write_zeros(8 << 20, 8192).unwrap();
        let tb = b.write(8 << 20, &[0u8; 8192]).unwrap();
        assert_eq!(ta, tb);
        let mut x = vec![0u8; 16 << 10];
        let mut y = vec![0u8; 16 << 10];
        a.read(8 << 20, &mut x).unwrap();
        b.read(8 << 20, &mut y).unwrap();
        assert_eq!(x, y);
        assert_eq!(&x[..8192], &[0u8; 8192][..]);
        assert_eq!(&x[8192..], &[1u8; 8192][..]);
    }

    #[test]
    fn a_genuine_card_keeps_every_byte_to_its_end() {
        let d = card("size=64M,real=64M");
        d.write((64 << 20) - 4096, &stamp(3)).unwrap();
        assert_eq!(read4k(&d, (64 << 20) - 4096).unwrap(), stamp(3));
        assert_eq!(read4k(&d, 0).unwrap(), vec![0u8; 4096]);
    }

    #[test]
    fn odd_options_are_refused_naming_the_key() {
        let e = SimParams::parse("size=1G,size=2G").unwrap_err();
        assert!(e.starts_with("sim option size is given twice"), "{e}");
        let e = SimParams::parse("size=4G,au=64G").unwrap_err();
        assert!(
            e.starts_with("sim option au=64 GiB is larger than the card (size=4 GiB)"),
            "{e}"
        );
        assert!(SimParams::parse("size=64M,au=64M,page=16k").is_ok());
        for (spec, key) in [
            ("size=4 G", "size=4 G"),
            ("read=5 MB/s", "read=5 MB/s"),
            ("cmd=200 us", "cmd=200 us"),
        ] {
            let e = SimParams::parse(spec).unwrap_err();
            assert!(e.starts_with(&format!("sim option {key}: ")), "{e}");
            assert!(e.contains("space inside"), "{e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_key_given_twice_is_refused_by_name(
            key in proptest::sample::select(vec!["size", "au", "page", "open_au", "read", "write", "burst", "cmd", "cache", "real", "link", "fake", "move", "fat", "fat_max", "fat_every"]),
            a in "[0-9a-z]{0,4}",
            b in "[0-9a-z]{0,4}",
        ) {
            let e = SimParams::parse(&format!("{key}={a},size=64M,{key}={b}"));
            let twice = format!("sim option {key} is given twice");
            // The first value may be refused on its own; else the repeat is.
            match e {
                Ok(_) => proptest::prop_assert!(false, "{key} twice was accepted"),
                Err(e) => proptest::prop_assert!(e.contains(&twice) || e.contains(&format!("{key}={a}")), "{e}"),
            }
        }

        #[test]
        fn an_au_beyond_the_card_is_refused(size_mib in 1u64..64, au_mib in 1u64..128) {
            let spec = format!("size={size_mib}M,au={au_mib}M,page=4k");
            match SimParams::parse(&spec) {
                Ok(p) => proptest::prop_assert!(p.au <= p.size),
                Err(e) => proptest::prop_assert!(au_mib <= size_mib || e.contains("au="), "{spec}: {e}"),
            }
        }

        #[test]
        fn the_option_parser_never_panics(spec in ".{0,80}") {
            let _ = SimParams::parse(&spec);
        }

        #[test]
        fn option_like_text_never_panics(
            key in proptest::sample::select(vec!["size", "au", "page", "real", "fake", "cache", "open_au", "link", "cmd", "x"]),
            value in "[0-9a-zA-Z/.]{0,12}",
        ) {
            let _ = SimParams::parse(&format!("{key}={value}"));
        }
    }
}
