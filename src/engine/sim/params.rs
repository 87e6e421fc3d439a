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
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("sim option {key}=0: must be above 0; {SIM_HELP}"));
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn fake_kinds_parse_and_default_to_wrap() {
        assert_eq!(SimParams::parse("real=1G").unwrap().fake, FakeKind::Wrap);
        for kind in FakeKind::ALL {
            let p = SimParams::parse(&format!("real=1G,fake={}", kind.name())).unwrap();
            assert_eq!(p.fake, kind);
        }
        assert!(SimParams::parse("fake=melt").unwrap_err().contains("wrap"));
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
        // Every rule a value breaks names that value's option.
        for (spec, start) in [
            ("size=1X", "sim option size=1X: "),
            ("size=0", "sim option size is 0 bytes"),
            ("page=1000", "sim option page is 1000 bytes"),
            ("real=100", "sim option real is 100 bytes"),
            (
                "au=24k,page=16k",
                "sim option au=24 KiB: must be a whole number of pages",
            ),
            ("size=1G,real=2G", "sim option real=2 GiB: must be at most"),
            ("open_au=0", "sim option open_au=0: must be above 0"),
            ("fat_every=0", "sim option fat_every=0: must be above 0"),
        ] {
            let e = SimParams::parse(spec).unwrap_err();
            assert!(e.starts_with(start), "{spec}: {e}");
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
