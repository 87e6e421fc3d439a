//! A seeded population of realistic simulated cards, to measure how often an
//! analysis or a verdict is right rather than whether it is right on the one
//! card a test was written for.
//!
//! Why: a detector tuned on a handful of hand-picked cards is exact on them
//! and wrong elsewhere (12 MiB allocation units, fakes of an odd size, caches
//! larger than the test). Confidence means something only when it is
//! measured over cards drawn from what the field holds, so the generator
//! draws every parameter of [`SimParams`] from the ranges the SD
//! specification and real cards allow:
//!
//! * claimed capacities from 32 MiB to 2 TiB in the SD specification's
//!   capacity classes: a fifth SDSC (up to 2 GiB), two fifths SDHC (up to
//!   32 GiB), two fifths SDXC (up to 2 TiB), log-uniform within each, in
//!   whole AUs; SDUC (beyond 2 TiB) is left out, as no card of it is sold;
//! * allocation units as the specification ties them to the capacity
//!   ("Maximum AU size" of the SD Status register's AU_SIZE): SDSC cards
//!   any power of two from 16 KiB up to 512 KiB (up to 64 MiB), 1 MiB (up
//!   to 256 MiB), 2 MiB (up to 512 MiB) or 4 MiB, so old small cards carry
//!   16–256 KiB AUs; SDHC cards 512 KiB–4 MiB; SDXC cards 4, 8, 12, 16, 24,
//!   32 or 64 MiB (the 3·2^k sizes are as legal as the powers of two);
//! * program pages of 2–64 KiB; 1–8 AUs kept open;
//! * from a [`Mix::erase_blocks`] share of the SDHC and SDXC cards (none
//!   by default), cards whose AU is the erase block of their TLC flash
//!   rather than an AU_SIZE of the specification: the timing and the
//!   write cost of such a card see the erase block, and TLC blocks are
//!   not all powers of two nor 3·2^k ([`TLC_ERASE_BLOCK_PAGES`]: 6, 9,
//!   12, 18, 24 or 36 MiB), with program pages of 16–128 KiB;
//! * command costs 10 µs–5 ms and medium speeds 1–300 MB/s, log-uniform
//!   (the field spans two decades of both);
//! * half the cards with a write cache (SLC region) of 1 MiB up to a third
//!   of the capacity, log-uniform (large cards carry caches of several
//!   GiB: 6 GiB on 256 GiB is common), its burst speed 1.05–10× the
//!   medium's (some caches are barely faster than the flash behind them);
//! * a quarter behind a link ceiling: half of them one of the usual ones
//!   (an SPI bus, a USB 2 reader, a high-speed SD bus, UHS-I SDR104), half
//!   a ceiling of 0.2–1× the card's own read speed, so that links slower
//!   than the card are common, not an accident of the draw;
//! * from [`Population::draw_mixed`], a share of counterfeits
//!   ([`Population::draw_fake`]) of every kind the f3 documentation and its
//!   tracker describe (wrap-around, dropped writes reading zeros or stale
//!   data, I/O errors), at any real size in whole sectors: powers of two,
//!   just under the claim (31 of 32 GiB), anywhere in between, or tiny
//!   (2–64 MiB, the cheapest fakes); their cache is at most half the real
//!   size (made of the real flash) on two in three, and up to 2 GiB
//!   whatever the real size on the rest (a controller's own buffer, or
//!   one a tiny fake reports but cannot hold), so some are larger than
//!   their real size.
//!
//! * the FAT-area write latency (T_FW of the SD specification): a busy
//!   time of 0.5–20 ms on most cards, 20–150 ms on some, and on about a
//!   third periodic spikes of 100–800 ms every 2–32 FAT writes (a merge of
//!   the FAT area);
//! * on 40% of the cards a move speed (SDHC's Pm) of 0.3–3× the write
//!   speed.
//!
//! The FAT latency and move speed are drawn from a stream of their own, so
//! adding them leaves every other parameter of the cards drawn from a seed
//! as it is; they are drawn when [`Mix::fat_and_move`] asks for them, which
//! every calibration of a command that writes does (a card in the field
//! has both; a calibration whose truth law models neither says why the
//! command it scores is unaffected).
//!
//! When [`Mix::real_world`] asks (no calibration does yet, so their cards
//! stay as they were), the laws of real cards the simple model lacks (issue
//! 37), from a stream of their own again:
//!
//! * on 30% of the cards a speed that falls with the offset, to 0.5–1× at
//!   the card's end (`slow_end`);
//! * on 80% of the cached cards a cache that shrinks as the card fills, to
//!   0–1× of itself (a dynamic SLC cache made of free TLC blocks leaves a
//!   small static part, or none, on a full card: `cache_min`); on 70% a
//!   drain of 0.3–1.5× the write speed (`drain`); on 75% the medium's AU,
//!   move and FAT laws behind the cache rather than bypassed (`through`);
//! * on 30% pauses of 5–500 ms every 4–256 MiB written, log-uniform
//!   (garbage collection, thermal throttling: `pause`, `pause_every`); on
//!   half the cards their periods and those of the FAT spikes jittered by
//!   up to ±50% (`jitter`), each card with a seed of its own;
//! * on 30% an AU boundary step of reads other than a command: none on a
//!   quarter of them (sticks, whose reads show no erase-block step), 0–2
//!   commands on the rest, jittered per boundary by up to ±50% on half
//!   (`read_step`, `read_jitter`);
//! * on half the counterfeits with a cache, a cache that hides a write for
//!   0.5–60 s only, log-uniform (`hide_for`).
//!
//! Same seed, same cards: a failure is replayed from the seed it prints.

use super::sim::{FakeKind, SECTOR, SimParams};

/// The largest cache of a fake that is not made of its real flash.
const FAKE_OWN_CACHE: u64 = 2 << 30;

/// The SD specification's allocation-unit sizes (AU_SIZE of the SD Status
/// register), in KiB.
pub const SD_AU_SIZES_KIB: [u64; 15] = [
    16,
    32,
    64,
    128,
    256,
    512,
    1024,
    2 * 1024,
    4 * 1024,
    8 * 1024,
    12 * 1024,
    16 * 1024,
    24 * 1024,
    32 * 1024,
    64 * 1024,
];

/// The rarest FAT-area stall drawn, in writes: the field's, as `flash
/// class` holds it (a card stalling more rarely is beyond what it claims).
pub const FAT_PERIOD_MAX: u32 = 256;

/// Erase blocks of TLC flash, in pages of [`TLC_PAGE`] (issue 37): 384,
/// 576, 768, 1152, 1536 and 2304 pages, so 6, 9, 12, 18, 24 and 36 MiB,
/// the 9·2^k ones among them in no list of the SD specification. These
/// are not AU_SIZE values: they are the AU of a card whose controller
/// writes in whole erase blocks whatever AU_SIZE reports, which the
/// population draws apart from [`SD_AU_SIZES_KIB`] (only when
/// [`Mix::erase_blocks`] asks) so that the specification's list stays the
/// specification's.
pub const TLC_ERASE_BLOCK_PAGES: [u64; 6] = [384, 576, 768, 1152, 1536, 2304];

/// The flash page [`TLC_ERASE_BLOCK_PAGES`] counts in: 16 KiB.
pub const TLC_PAGE: u64 = 16 << 10;

/// The program pages of a card with a TLC erase block as its AU: 16 KiB
/// (one plane) to 128 KiB (several planes programmed at once).
const TLC_PROGRAM_PAGES: [u64; 4] = [16 << 10, 32 << 10, 64 << 10, 128 << 10];

/// Link ceilings a card is seen behind, bytes/s: an SPI bus at 25 MHz, a
/// USB 2 reader, a high-speed SD bus, a UHS-I SDR104 bus.
const LINKS: [u64; 4] = [3_000_000, 35_000_000, 23_000_000, 90_000_000];

/// The SD specification's capacity classes the population draws from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CapacityClass {
    /// Standard capacity: up to 2 GiB (FAT12/16 cards, the oldest).
    Sdsc,
    /// High capacity: over 2 GiB up to 32 GiB.
    Sdhc,
    /// Extended capacity: over 32 GiB up to 2 TiB.
    Sdxc,
}

impl CapacityClass {
    /// The claimed capacities of the class, bytes (from 32 MiB for SDSC:
    /// smaller cards are no longer met).
    fn range(self) -> (u64, u64) {
        match self {
            CapacityClass::Sdsc => (32 << 20, 2 << 30),
            CapacityClass::Sdhc => (2 << 30, 32 << 30),
            CapacityClass::Sdxc => (32 << 30, 2 << 40),
        }
    }

    /// The specification's largest AU for a card of `size` bytes (the
    /// "Maximum AU size" table of AU_SIZE): 512 KiB up to 64 MiB, 1 MiB up
    /// to 256 MiB, 2 MiB up to 512 MiB, 4 MiB up to 32 GiB, 64 MiB above.
    fn max_au(self, size: u64) -> u64 {
        match (self, size) {
            (CapacityClass::Sdxc, _) => 64 << 20,
            (_, s) if s <= 64 << 20 => 512 << 10,
            (_, s) if s <= 256 << 20 => 1 << 20,
            (_, s) if s <= 512 << 20 => 2 << 20,
            _ => 4 << 20,
        }
    }

    /// The smallest AU drawn: any for SDSC, 512 KiB for SDHC (its cards
    /// report 512 KiB–4 MiB), 4 MiB for SDXC (UHS cards report at least
    /// that; the speed grades are measured in 4 MiB sub-units).
    fn min_au(self) -> u64 {
        match self {
            CapacityClass::Sdsc => 16 << 10,
            CapacityClass::Sdhc => 512 << 10,
            CapacityClass::Sdxc => 4 << 20,
        }
    }
}

/// What kinds of card to draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    /// Share of cards with a write cache, 0..=1.
    pub cached: f64,
    /// Share of cards behind a link ceiling, 0..=1.
    pub linked: f64,
    /// Share of counterfeits from [`Population::draw_mixed`], 0..=1
    /// ([`Population::draw`] draws genuine cards whatever this says).
    pub fakes: f64,
    /// Whether cards have a FAT-area latency and (some) a move speed.
    pub fat_and_move: bool,
    /// Share of the SDHC and SDXC cards whose AU is a TLC erase block
    /// ([`TLC_ERASE_BLOCK_PAGES`]) and not an SD AU_SIZE, 0..=1. Drawn
    /// from a stream of its own: at 0 every card of a seed is as before,
    /// and above it the cards not chosen are too.
    pub erase_blocks: f64,
    /// Whether cards carry the laws of real cards the simple model lacks
    /// (position-dependent speed, a shrinking cache with a drain of its
    /// own, pauses, AU and FAT laws through the cache, varying read steps,
    /// caches that hide a fake's writes for a while), from a stream of
    /// their own: without them every card of a seed is as before.
    pub real_world: bool,
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            cached: 0.5,
            linked: 0.25,
            fakes: 0.5,
            fat_and_move: false,
            erase_blocks: 0.0,
            real_world: false,
        }
    }
}

/// A seeded stream of simulated cards.
pub struct Population {
    rng: fastrand::Rng,
    /// The stream of the FAT latency and move speed.
    extra: fastrand::Rng,
    /// The stream of the TLC erase blocks ([`Mix::erase_blocks`]).
    blocks: fastrand::Rng,
    /// The stream of the laws of real cards ([`Mix::real_world`]).
    laws: fastrand::Rng,
    mix: Mix,
}

impl Population {
    pub fn new(seed: u64) -> Population {
        Population::with_mix(seed, Mix::default())
    }

    pub fn with_mix(seed: u64, mix: Mix) -> Population {
        Population {
            rng: fastrand::Rng::with_seed(seed),
            extra: fastrand::Rng::with_seed(seed ^ 0xfa7a_110c_a7e5),
            blocks: fastrand::Rng::with_seed(seed ^ 0x0e2a_5eb1_0c45),
            laws: fastrand::Rng::with_seed(seed ^ 0x7ea1_ca4d_1a35),
            mix,
        }
    }

    /// The next card: genuine (every claimed byte exists).
    pub fn draw(&mut self) -> SimParams {
        let card = self.draw_base();
        let card = match self.mix.fat_and_move {
            true => card.with_fat_and_move(&mut self.extra),
            false => card,
        };
        match self.mix.real_world {
            true => card.with_real_laws(&mut self.laws),
            false => card,
        }
    }

    fn draw_base(&mut self) -> SimParams {
        let kind = self.capacity_class();
        let size_wanted = self.capacity_in(kind);
        let au = self.au_for(kind, size_wanted);
        let page = self.page_for(au);
        let (au, page) = self.erase_block(kind).unwrap_or((au, page));
        let size = (size_wanted / au).max(16) * au;
        let write = self.log_uniform(1e6, 300e6);
        let read = (write * self.log_uniform(1.0, 4.0)).min(300e6);
        let cached = self.rng.f64() < self.mix.cached;
        let cache = if cached {
            let most = (size / 3) as f64 / (1 << 20) as f64;
            self.log_uniform(1.0, most.max(1.0)) as u64 * (1 << 20)
        } else {
            0
        };
        let burst = if cached {
            write * self.log_uniform(1.05, 10.0)
        } else {
            write * 4.0
        };
        let open_au = self.rng.u32(1..=8);
        let cmd_ns = self.log_uniform(10e3, 5e6) as u64;
        let link = (self.rng.f64() < self.mix.linked).then(|| self.link_for(read));
        SimParams {
            size,
            au,
            page,
            open_au,
            read: read as u64,
            write: write as u64,
            burst: burst as u64,
            cmd_ns,
            cache,
            real: size,
            link,
            fake: FakeKind::Wrap,
            ..SimParams::default()
        }
    }

    /// SDSC a fifth of the time, SDHC and SDXC two fifths each.
    fn capacity_class(&mut self) -> CapacityClass {
        match self.rng.u32(0..5) {
            0 => CapacityClass::Sdsc,
            1 | 2 => CapacityClass::Sdhc,
            _ => CapacityClass::Sdxc,
        }
    }

    /// A claimed capacity inside the class, log-uniform, bytes.
    fn capacity_in(&mut self, kind: CapacityClass) -> u64 {
        let (low, high) = kind.range();
        self.log_uniform(low as f64, high as f64) as u64
    }

    /// An AU the specification allows a card of `size` bytes of `kind`.
    fn au_for(&mut self, kind: CapacityClass, size: u64) -> u64 {
        let most = kind.max_au(size);
        let least = kind.min_au();
        let choices: Vec<u64> = SD_AU_SIZES_KIB
            .iter()
            .map(|kib| kib << 10)
            .filter(|au| (least..=most).contains(au))
            .collect();
        self.pick(&choices)
    }

    /// On [`Mix::erase_blocks`] of the SDHC and SDXC cards, a TLC erase
    /// block as the AU and a program page of 16–128 KiB, from their own
    /// stream.
    fn erase_block(&mut self, kind: CapacityClass) -> Option<(u64, u64)> {
        if kind == CapacityClass::Sdsc || self.mix.erase_blocks <= 0.0 {
            return None;
        }
        if self.blocks.f64() >= self.mix.erase_blocks {
            return None;
        }
        let pages = TLC_ERASE_BLOCK_PAGES[self.blocks.usize(..TLC_ERASE_BLOCK_PAGES.len())];
        let page = TLC_PROGRAM_PAGES[self.blocks.usize(..TLC_PROGRAM_PAGES.len())];
        Some((pages * TLC_PAGE, page))
    }

    /// One of the usual link ceilings, or one of 0.2–1× the card's read
    /// speed (bytes/s).
    fn link_for(&mut self, read: f64) -> u64 {
        match self.rng.bool() {
            true => self.pick(&LINKS),
            false => (read * self.log_uniform(0.2, 1.0)).max(100e3) as u64,
        }
    }

    /// A genuine card or, with the mix's share of fakes, a counterfeit.
    pub fn draw_mixed(&mut self) -> SimParams {
        match self.rng.f64() < self.mix.fakes {
            true => self.draw_fake(),
            false => self.draw(),
        }
    }

    /// A counterfeit: a card from [`Population::draw`] whose real size is
    /// smaller than its claim, of a kind drawn from all of them.
    pub fn draw_fake(&mut self) -> SimParams {
        let card = self.draw();
        let real = self.real_for(card.size);
        let cache = match self.rng.u32(0..3) {
            2 => card.cache.min(FAKE_OWN_CACHE),
            _ => card.cache.min(real / 2 / SECTOR * SECTOR),
        };
        let fake = SimParams {
            real,
            cache,
            cache_min: card.cache_min.map(|least| least.min(cache)),
            fake: self.pick(&FakeKind::ALL),
            ..card
        };
        match self.mix.real_world {
            true => fake.with_hiding_time(&mut self.laws),
            false => fake,
        }
    }

    /// A real size below `size`, in whole sectors, at least 2 MiB: a power
    /// of two (the controllers f3 first described), a share of the claim
    /// from a half to all but a sector (31 of 32 GiB), log-uniform
    /// anywhere (100 MiB, 3000 MiB), or tiny (2–64 MiB, log-uniform).
    fn real_for(&mut self, size: u64) -> u64 {
        let low = 2u64 << 20;
        let bytes = match self.rng.u32(0..4) {
            0 => {
                let top = (size - 1).ilog2();
                1u64 << self.rng.u32(21..=top.max(21))
            }
            1 => (size as f64 * self.rng.f64().mul_add(0.5, 0.5)) as u64,
            2 => self.log_uniform(low as f64, size as f64) as u64,
            _ => self.log_uniform(low as f64, (64u64 << 20).min(size) as f64) as u64,
        };
        (bytes / SECTOR * SECTOR).clamp(low, size - SECTOR)
    }

    /// A page of 2–64 KiB that divides the AU (a 16 KiB AU has no 32 KiB
    /// page).
    fn page_for(&mut self, au: u64) -> u64 {
        let largest = au.min(64 << 10);
        let choices: Vec<u64> = (1..=6)
            .map(|k| 1u64 << (10 + k))
            .filter(|&p| p <= largest && au.is_multiple_of(p))
            .collect();
        self.pick(&choices)
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.rng.usize(..from.len())]
    }

    fn log_uniform(&mut self, low: f64, high: f64) -> f64 {
        log_uniform(&mut self.rng, low, high)
    }
}

impl SimParams {
    /// The FAT-area latency and move speed, from their own stream.
    fn with_fat_and_move(mut self, rng: &mut fastrand::Rng) -> SimParams {
        let ms = |rng: &mut fastrand::Rng, low: f64, high: f64| {
            (log_uniform(rng, low, high) * 1e6) as u64
        };
        self.fat_ns = Some(match rng.f64() < 0.85 {
            true => ms(rng, 0.5, 20.0),
            false => ms(rng, 20.0, 150.0),
        });
        // Stalls (FAT log merges) as often as every other write and as
        // rarely as the field shows (`FIELD_FAT_PERIOD_MAX`), log-uniform.
        if rng.f64() < 0.3 {
            self.fat_max_ns = ms(rng, 100.0, 800.0);
            self.fat_every = log_uniform(rng, 2.0, FAT_PERIOD_MAX as f64).round() as u32;
        }
        if rng.f64() < 0.4 {
            let pm = self.write as f64 * log_uniform(rng, 0.3, 3.0);
            self.move_speed = Some((pm as u64).max(1));
        }
        self
    }
}

impl SimParams {
    /// The laws of real cards ([`Mix::real_world`]), from their own stream.
    fn with_real_laws(mut self, rng: &mut fastrand::Rng) -> SimParams {
        self.seed = rng.u64(..);
        if rng.f64() < 0.3 {
            self.slow_end = rng.u32(500..=1000);
        }
        if self.cache > 0 {
            self = self.with_cache_laws(rng);
        }
        if rng.f64() < 0.3 {
            self.pause_ns = (log_uniform(rng, 5.0, 500.0) * 1e6) as u64;
            let mib = log_uniform(rng, 4.0, 256.0);
            self.pause_every = ((mib * (1 << 20) as f64) as u64 / SECTOR * SECTOR).max(SECTOR);
        }
        if rng.bool() {
            self.jitter = rng.u32(1..=50);
        }
        if rng.f64() < 0.3 {
            self.read_step = match rng.u32(0..4) {
                0 => 0,
                _ => rng.u32(0..=2000),
            };
            if rng.bool() {
                self.read_jitter = rng.u32(1..=50);
            }
        }
        self
    }

    /// A shrinking cache, a drain of its own and the medium's laws through
    /// it, each on a share of the cached cards.
    fn with_cache_laws(mut self, rng: &mut fastrand::Rng) -> SimParams {
        if rng.f64() < 0.8 {
            let least = (self.cache as f64 * rng.f64()) as u64 / SECTOR * SECTOR;
            self.cache_min = Some(least.min(self.cache));
        }
        if rng.f64() < 0.7 {
            let drain = self.write as f64 * rng.f64().mul_add(1.2, 0.3);
            self.drain = Some((drain as u64).max(1));
        }
        self.through = rng.f64() < 0.75;
        self
    }

    /// On half the counterfeits with a cache, a cache that hides a write
    /// for 0.5–60 s only.
    fn with_hiding_time(mut self, rng: &mut fastrand::Rng) -> SimParams {
        if self.cache > 0 && rng.bool() {
            self.hide_for_ns = Some((log_uniform(rng, 0.5, 60.0) * 1e9) as u64);
        }
        self
    }
}

fn log_uniform(rng: &mut fastrand::Rng, low: f64, high: f64) -> f64 {
    (low.ln() + rng.f64() * (high.ln() - low.ln())).exp()
}

/// The `sim:` target that builds exactly `p` (every option written out, so
/// a failing card is replayed from the line a test prints).
pub fn spec_of(p: &SimParams) -> String {
    let mut spec = format!(
        "sim:size={},au={},page={},open_au={},read={}B/s,write={}B/s,burst={}B/s,cmd={}ns,cache={},real={}",
        p.size, p.au, p.page, p.open_au, p.read, p.write, p.burst, p.cmd_ns, p.cache, p.real
    );
    if let Some(link) = p.link {
        spec.push_str(&format!(",link={link}B/s"));
    }
    if p.real < p.size {
        spec.push_str(&format!(",fake={}", p.fake.name()));
    }
    if let Some(pm) = p.move_speed {
        spec.push_str(&format!(",move={pm}B/s"));
    }
    if let Some(fat) = p.fat_ns {
        spec.push_str(&format!(",fat={fat}ns"));
    }
    if p.fat_max_ns > 0 {
        spec.push_str(&format!(",fat_max={}ns", p.fat_max_ns));
    }
    if p.fat_every != SimParams::default().fat_every {
        spec.push_str(&format!(",fat_every={}", p.fat_every));
    }
    spec.push_str(&real_laws_spec(p));
    spec
}

/// The options of the laws of real cards that `p` has (none by default).
fn real_laws_spec(p: &SimParams) -> String {
    let d = SimParams::default();
    let fraction = |thousandths: u32| format!("{}.{:03}", thousandths / 1000, thousandths % 1000);
    let mut spec = String::new();
    let mut add = |option: String| spec.push_str(&format!(",{option}"));
    if p.slow_end != d.slow_end {
        add(format!("slow_end={}", fraction(p.slow_end)));
    }
    if let Some(least) = p.cache_min {
        add(format!("cache_min={least}"));
    }
    if let Some(drain) = p.drain {
        add(format!("drain={drain}B/s"));
    }
    if p.pause_ns != d.pause_ns {
        add(format!("pause={}ns", p.pause_ns));
    }
    if p.pause_every != d.pause_every {
        add(format!("pause_every={}", p.pause_every));
    }
    if p.jitter != d.jitter {
        add(format!("jitter={}", p.jitter));
    }
    if p.seed != d.seed {
        add(format!("seed={}", p.seed));
    }
    if p.through {
        add("through=1".to_string());
    }
    if p.read_step != d.read_step {
        add(format!("read_step={}", fraction(p.read_step)));
    }
    if p.read_jitter != d.read_jitter {
        add(format!("read_jitter={}", p.read_jitter));
    }
    if let Some(hide) = p.hide_for_ns {
        add(format!("hide_for={hide}ns"));
    }
    spec
}

#[cfg(test)]
#[path = "population_tests.rs"]
mod tests;
