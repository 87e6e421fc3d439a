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
//! * allocation units: the SD specification's AU sizes (16 KiB to 4 MiB for
//!   SDSC/SDHC, then 8, 12, 16, 24, 32 and 64 MiB for SDXC; the 3·2^k sizes
//!   are as legal as the powers of two);
//! * program pages of 2–64 KiB; 1–8 AUs kept open;
//! * command costs 10 µs–5 ms and medium speeds 1–300 MB/s, log-uniform
//!   (the field spans two decades of both);
//! * half the cards with a write cache (SLC region) of 1 MiB–4 GiB, its
//!   burst speed 1.5–10× the medium's;
//! * a quarter behind a link ceiling (a USB 2 reader, an SPI bus);
//! * claimed capacities of 1–512 GiB, whole AUs.
//!
//! Same seed, same cards: a failure is replayed from the seed it prints.

use super::sim::SimParams;

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

/// Link ceilings a card is seen behind, bytes/s: an SPI bus at 25 MHz, a
/// USB 2 reader, a high-speed SD bus, a UHS-I SDR104 bus.
const LINKS: [u64; 4] = [3_000_000, 35_000_000, 23_000_000, 90_000_000];

/// What kinds of card to draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    /// Share of cards with a write cache, 0..=1.
    pub cached: f64,
    /// Share of cards behind a link ceiling, 0..=1.
    pub linked: f64,
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            cached: 0.5,
            linked: 0.25,
        }
    }
}

/// A seeded stream of simulated cards.
pub struct Population {
    rng: fastrand::Rng,
    mix: Mix,
}

impl Population {
    pub fn new(seed: u64) -> Population {
        Population::with_mix(seed, Mix::default())
    }

    pub fn with_mix(seed: u64, mix: Mix) -> Population {
        Population {
            rng: fastrand::Rng::with_seed(seed),
            mix,
        }
    }

    /// The next card: genuine (every claimed byte exists).
    pub fn draw(&mut self) -> SimParams {
        let au = self.pick(&SD_AU_SIZES_KIB) << 10;
        let page = self.page_for(au);
        let write = self.log_uniform(1e6, 300e6);
        let read = (write * self.log_uniform(1.0, 4.0)).min(300e6);
        let cached = self.rng.f64() < self.mix.cached;
        let cache = if cached {
            self.log_uniform(1.0, 4096.0) as u64 * (1 << 20)
        } else {
            0
        };
        let burst = if cached {
            write * self.log_uniform(1.5, 10.0)
        } else {
            write * 4.0
        };
        let size = self.size_for(au);
        SimParams {
            size,
            au,
            page,
            open_au: self.rng.u32(1..=8),
            read: read as u64,
            write: write as u64,
            burst: burst as u64,
            cmd_ns: self.log_uniform(10e3, 5e6) as u64,
            cache,
            real: size,
            link: (self.rng.f64() < self.mix.linked).then(|| self.pick(&LINKS)),
        }
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

    /// 1–512 GiB claimed, a whole number of AUs.
    fn size_for(&mut self, au: u64) -> u64 {
        let bytes = self.log_uniform(1.0, 512.0) * (1u64 << 30) as f64;
        ((bytes as u64) / au).max(16) * au
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.rng.usize(..from.len())]
    }

    fn log_uniform(&mut self, low: f64, high: f64) -> f64 {
        (low.ln() + self.rng.f64() * (high.ln() - low.ln())).exp()
    }
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
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_drawn_card_is_a_valid_sim_target_that_round_trips() {
        let mut pop = Population::new(7);
        for _ in 0..2_000 {
            let card = pop.draw();
            let spec = spec_of(&card);
            let parsed = SimParams::parse(spec.trim_start_matches("sim:"))
                .unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(parsed, card, "{spec}");
        }
    }

    #[test]
    fn the_population_covers_the_ranges_it_promises() {
        let cards: Vec<SimParams> = {
            let mut pop = Population::new(11);
            (0..2_000).map(|_| pop.draw()).collect()
        };
        for kib in SD_AU_SIZES_KIB {
            assert!(
                cards.iter().any(|c| c.au == kib << 10),
                "no card with a {kib} KiB AU"
            );
        }
        let share = |f: &dyn Fn(&SimParams) -> bool| {
            cards.iter().filter(|c| f(c)).count() as f64 / cards.len() as f64
        };
        assert!((0.4..0.6).contains(&share(&|c| c.cache > 0)));
        assert!((0.15..0.35).contains(&share(&|c| c.link.is_some())));
        assert!(
            cards
                .iter()
                .all(|c| (10_000..=5_000_000).contains(&c.cmd_ns))
        );
        assert!(
            cards
                .iter()
                .all(|c| (1_000_000..=300_000_000).contains(&c.write) && c.read >= c.write)
        );
        assert!(cards.iter().any(|c| c.cache >= 2 << 30));
        assert!(cards.iter().all(|c| (2 << 10..=64 << 10).contains(&c.page)));
        assert!(cards.iter().all(|c| (1..=8).contains(&c.open_au)));
    }

    #[test]
    fn the_same_seed_draws_the_same_cards() {
        let (mut a, mut b) = (Population::new(3), Population::new(3));
        for _ in 0..100 {
            assert_eq!(a.draw(), b.draw());
        }
    }
}
