//! The parameters of a simulated card: what `sim:key=value,...` says, its
//! defaults, and the checks that keep the model from describing a card that
//! cannot exist (an AU larger than the card, a speed of zero). Kept apart
//! from the model so that `--help`, errors and notes speak of the options
//! without reaching into the card's timing or data.

use crate::units::{format_size, parse_duration, parse_rate, parse_size};

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
    /// Medium speed at the card's end, in thousandths of the speed at
    /// offset 0, falling linearly between [1000: the same everywhere].
    pub slow_end: u32,
    /// Cache left once the whole card holds data; the usable cache shrinks
    /// linearly from `cache` as the card fills [none: `cache` always].
    pub cache_min: Option<u64>,
    /// Speed the cache drains at, bytes/s [none: `write`].
    pub drain: Option<u64>,
    /// Pause (garbage collection, thermal throttling) paid every
    /// `pause_every` bytes written, ns [0: none].
    pub pause_ns: u64,
    /// Bytes written between pauses [64M].
    pub pause_every: u64,
    /// Jitter of the pause and FAT-spike periods, percent [0].
    pub jitter: u32,
    /// Seed of the jitters [0].
    pub seed: u64,
    /// Whether a cache drains the medium's work (pages, AU closes, moves,
    /// FAT busy time) rather than bypassing those laws [false].
    pub through: bool,
    /// Extra cost of a read across an AU boundary, in thousandths of `cmd`
    /// [1000].
    pub read_step: u32,
    /// Jitter of that extra cost per boundary, percent [0].
    pub read_jitter: u32,
    /// How long a counterfeit's cache holds a write, ns [none: until newer
    /// writes push it out].
    pub hide_for_ns: Option<u64>,
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
            slow_end: 1000,
            cache_min: None,
            drain: None,
            pause_ns: 0,
            pause_every: 64 << 20,
            jitter: 0,
            seed: 0,
            through: false,
            read_step: 1000,
            read_jitter: 0,
            hide_for_ns: None,
        }
    }
}

/// The documentation of `sim:` options, for `--help` and errors.
pub const SIM_HELP: &str = "sim:[size=4G][,au=4M][,page=16k][,open_au=2][,read=20MB/s][,write=10MB/s][,burst=4×write][,cmd=200us][,cache=0][,real=size][,fake=wrap|zeros|stale|eio][,link=none][,move=none][,fat=none][,fat_max=0][,fat_every=16][,slow_end=1][,cache_min=cache][,drain=write][,pause=0][,pause_every=64M][,jitter=0%][,seed=0][,through=0|1][,read_step=1][,read_jitter=0%][,hide_for=none]";

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
                "slow_end" => p.slow_end = thousandths(key, value, 1000)?,
                "cache_min" => p.cache_min = Some(size()?),
                "drain" => p.drain = Some(rate()?),
                "pause" => p.pause_ns = duration(key, value)?,
                "pause_every" => p.pause_every = size()?,
                "jitter" => p.jitter = percent(key, value)?,
                "seed" => p.seed = value.parse().map_err(|_| bad(key, value))?,
                "through" => p.through = switch(key, value)?,
                "read_step" => p.read_step = thousandths(key, value, READ_STEP_MAX)?,
                "read_jitter" => p.read_jitter = percent(key, value)?,
                "hide_for" => p.hide_for_ns = Some(duration(key, value)?),
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

    /// Every rule the options break names the option and its value, so a
    /// person sees which one to change (`sim option page=1000: …`).
    fn check(&self) -> Result<(), String> {
        let sizes = [
            ("size", self.size),
            ("real", self.real),
            ("au", self.au),
            ("page", self.page),
        ];
        for (key, value) in sizes {
            if value < SECTOR || !value.is_multiple_of(SECTOR) {
                return Err(format!(
                    "sim option {key} is {value} bytes: it must be a whole number of 512-byte sectors, at least 512; {SIM_HELP}"
                ));
            }
        }
        if !self.au.is_multiple_of(self.page) {
            return Err(format!(
                "sim option au={}: must be a whole number of pages (page={}); {SIM_HELP}",
                format_size(self.au),
                format_size(self.page)
            ));
        }
        if self.real > self.size {
            return Err(format!(
                "sim option real={}: must be at most the claimed size (size={}); {SIM_HELP}",
                format_size(self.real),
                format_size(self.size)
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
        let positive = [
            ("open_au", u64::from(self.open_au)),
            ("read", self.read),
            ("write", self.write),
            ("burst", self.burst),
            ("move", self.move_speed.unwrap_or(1)),
            ("fat_every", u64::from(self.fat_every)),
            ("slow_end", u64::from(self.slow_end)),
            ("drain", self.drain.unwrap_or(1)),
            ("pause_every", self.pause_every),
            ("hide_for", self.hide_for_ns.unwrap_or(1)),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("sim option {key}=0: must be above 0; {SIM_HELP}"));
        }
        self.check_laws()
    }

    /// The rules of the laws real cards add: a cache cannot shrink to more
    /// than it is, and a period jittered by 100% or more could be nil.
    fn check_laws(&self) -> Result<(), String> {
        if let Some(least) = self.cache_min.filter(|m| *m > self.cache) {
            return Err(format!(
                "sim option cache_min={}: must be at most the cache (cache={}); {SIM_HELP}",
                format_size(least),
                format_size(self.cache)
            ));
        }
        if self.jitter >= 100 {
            return Err(format!(
                "sim option jitter={}%: must be below 100%; {SIM_HELP}",
                self.jitter
            ));
        }
        if self.read_jitter > 100 {
            return Err(format!(
                "sim option read_jitter={}%: must be at most 100%; {SIM_HELP}",
                self.read_jitter
            ));
        }
        Ok(())
    }

    /// A one-line description for notes.
    pub fn describe(&self) -> String {
        format!(
            "simulated card, times on its virtual clock: {} claimed, {} real{}, AU {}, page {}, {} open AUs, cache {}{}{}",
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
            },
            self.describe_laws()
        )
    }

    /// The laws of real cards a card was given, for [`SimParams::describe`]
    /// (nothing for a card without them, so its line stays as it was).
    fn describe_laws(&self) -> String {
        let mut laws = Vec::new();
        if self.slow_end != 1000 {
            laws.push(format!("{}% speed at the end", self.slow_end / 10));
        }
        if let Some(least) = self.cache_min {
            laws.push(format!("cache shrinking to {}", format_size(least)));
        }
        if let Some(drain) = self.drain {
            laws.push(format!("drain {:.1} MB/s", drain as f64 / 1e6));
        }
        if self.pause_ns > 0 {
            laws.push(format!(
                "pauses of {:.1} ms every {}",
                self.pause_ns as f64 / 1e6,
                format_size(self.pause_every)
            ));
        }
        if self.through {
            laws.push("AU and FAT work through the cache".to_string());
        }
        if self.read_step != 1000 || self.read_jitter > 0 {
            laws.push(format!(
                "AU read step {:.2} cmd",
                f64::from(self.read_step) / 1000.0
            ));
        }
        if let Some(hide) = self.hide_for_ns {
            laws.push(format!("cache hides for {:.1} s", hide as f64 / 1e9));
        }
        laws.iter().map(|l| format!(", {l}")).collect()
    }
}

fn duration(key: &str, value: &str) -> Result<u64, String> {
    parse_duration(value)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .map_err(|e| format!("sim option {key}={value}: {e}"))
}

/// The largest `read_step`: a hundred command times.
const READ_STEP_MAX: u32 = 100_000;

/// A decimal fraction (`0.6`) as thousandths, from 0 up to `most`.
fn thousandths(key: &str, value: &str, most: u32) -> Result<u32, String> {
    let refused = || {
        format!(
            "sim option {key}={value}: not a decimal number from 0 to {}; {SIM_HELP}",
            f64::from(most) / 1000.0
        )
    };
    let number: f64 = value.parse().map_err(|_| refused())?;
    let scaled = (number * 1000.0).round();
    match number.is_finite() && (0.0..=f64::from(most)).contains(&scaled) {
        true => Ok(scaled as u32),
        false => Err(refused()),
    }
}

/// A whole percentage, `30` or `30%`.
fn percent(key: &str, value: &str) -> Result<u32, String> {
    value
        .strip_suffix('%')
        .unwrap_or(value)
        .parse()
        .map_err(|_| format!("sim option {key}={value}: not a whole percentage; {SIM_HELP}"))
}

/// `0` or `1`.
fn switch(key: &str, value: &str) -> Result<bool, String> {
    match value {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("sim option {key}={value}: not 0 or 1; {SIM_HELP}")),
    }
}

fn bad(key: &str, value: &str) -> String {
    format!("sim option {key}={value}: not a whole number; {SIM_HELP}")
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
