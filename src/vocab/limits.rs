//! The accepted range of every numeric option, checked while the command
//! line is parsed, so that a value no command can use is refused before
//! anything is opened (exit 2, one line naming the option, the value and
//! the range, as the argument parser reports it).
//!
//! Each range comes from the code that consumes the option: the engines
//! describe a transfer with 32 bits and iocurve holds at most 1 GiB per
//! buffer; a region is kept below 2^62 bytes so that offset + span can
//! neither overflow nor pass the kernel's signed file offsets; the flash
//! tests slice 16 KiB writes and 4 KiB reads out of an AU; durations are
//! positive and short enough for nanosecond counters. The commands keep
//! their own checks of combinations (a size that must be a multiple of
//! --bs, a region that must fit the target).

use crate::units;
use std::time::Duration;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
/// The largest offset, span or byte budget: 4 EiB.
pub const MAX_REGION: u64 = 1 << 62;
/// The longest measuring time.
const WEEK: Duration = Duration::from_secs(7 * 24 * 3600);
const HOUR: Duration = Duration::from_secs(3600);

/// A byte count between `min` and `max`, a multiple of `step`.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub min: u64,
    pub max: u64,
    pub step: u64,
    /// What the option accepts, in words, with an example.
    pub accepts: &'static str,
}

impl Sizes {
    pub fn check(&self, text: &str) -> Result<u64, String> {
        let bytes = units::parse_size(text).map_err(|e| format!("{e}; {}", self.accepts))?;
        match bytes >= self.min && bytes <= self.max && bytes.is_multiple_of(self.step) {
            true => Ok(bytes),
            false => Err(self.accepts.to_string()),
        }
    }

    /// The check as a clap value parser.
    pub fn parser(self) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
        move |text| self.check(text)
    }
}

/// A duration between `min` and `max`, both included (a `min` of zero
/// allows zero; a positive one, such as 1 ns, refuses it).
#[derive(Debug, Clone, Copy)]
pub struct Durations {
    pub min: Duration,
    pub max: Duration,
    pub accepts: &'static str,
}

impl Durations {
    pub fn check(&self, text: &str) -> Result<Duration, String> {
        let d = units::parse_duration(text).map_err(|e| format!("{e}; {}", self.accepts))?;
        match d >= self.min && d <= self.max {
            true => Ok(d),
            false => Err(self.accepts.to_string()),
        }
    }

    pub fn parser(
        self,
    ) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync + 'static {
        move |text| self.check(text)
    }
}

/// A whole number (count) between `min` and `max`.
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    pub min: u32,
    pub max: u32,
    pub accepts: &'static str,
}

impl Counts {
    pub fn check(&self, text: &str) -> Result<u32, String> {
        let digits = text.trim();
        // `parse` alone would take a leading `+`; counts are plain digits.
        let n = match digits.bytes().all(|b| b.is_ascii_digit()) && !digits.is_empty() {
            true => digits.parse::<u32>().ok(),
            false => None,
        };
        match n {
            Some(n) if (self.min..=self.max).contains(&n) => Ok(n),
            _ => Err(self.accepts.to_string()),
        }
    }

    pub fn parser(self) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
        move |text| self.check(text)
    }
}

/// A finite decimal number between `min` and `max`; `open_min` and
/// `open_max` leave the ends out.
#[derive(Debug, Clone, Copy)]
pub struct Numbers {
    pub min: f64,
    pub max: f64,
    pub open_min: bool,
    pub open_max: bool,
    pub accepts: &'static str,
}

impl Numbers {
    pub fn check(&self, text: &str) -> Result<f64, String> {
        let t = text.trim();
        // Plain decimals only: no `nan`, `inf`, exponents or hex.
        let plain = !t.is_empty()
            && t.bytes().any(|b| b.is_ascii_digit())
            && t.bytes()
                .enumerate()
                .all(|(i, b)| b.is_ascii_digit() || b == b'.' || (i == 0 && b == b'-'));
        let x = match plain {
            true => t.parse::<f64>().ok().filter(|x| x.is_finite()),
            false => None,
        };
        let Some(x) = x else {
            return Err(self.accepts.to_string());
        };
        let low_ok = if self.open_min {
            x > self.min
        } else {
            x >= self.min
        };
        let high_ok = if self.open_max {
            x < self.max
        } else {
            x <= self.max
        };
        match low_ok && high_ok {
            true => Ok(x),
            false => Err(self.accepts.to_string()),
        }
    }

    pub fn parser(self) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
        move |text| self.check(text)
    }
}

// Sizes.

pub const AU: Sizes = Sizes {
    min: 16 * KIB,
    max: 64 * GIB,
    step: 16 * KIB,
    accepts: "an AU is a multiple of 16 KiB from 16 KiB to 64 GiB (e.g. 4M)",
};
pub const FLUSH: Sizes = Sizes {
    min: 0,
    max: 1 << 40,
    step: 1,
    accepts: "the flush is a byte count from 0 (none) to 1 TiB (e.g. 128M)",
};
pub const OFFSET: Sizes = Sizes {
    min: 0,
    max: MAX_REGION,
    step: 1,
    accepts: "an offset is a byte count from 0 to 4 EiB (e.g. 1G)",
};
pub const SPAN: Sizes = Sizes {
    min: 1,
    max: MAX_REGION,
    step: 1,
    accepts: "a region length is from 1 byte to 4 EiB (e.g. 64M or 1G)",
};
pub const BLOCK: Sizes = Sizes {
    min: 1,
    max: GIB,
    step: 1,
    accepts: "a transfer size is from 1 byte to 1 GiB (e.g. 4k or 1M)",
};
pub const ALIGN: Sizes = Sizes {
    min: 1,
    max: GIB,
    step: 1,
    accepts: "the offset granularity is from 1 byte to 1 GiB (e.g. 4k)",
};
pub const BYTES: Sizes = Sizes {
    min: 1,
    max: MAX_REGION,
    step: 1,
    accepts: "a byte count is from 1 byte to 4 EiB (e.g. 64M or 8G)",
};
pub const PROFILE_AREA: Sizes = Sizes {
    min: 2 * MIB,
    max: MAX_REGION,
    step: 1,
    accepts: "the test area is from 2 MiB to 4 EiB (e.g. 1G)",
};
pub const FILE_SIZE: Sizes = Sizes {
    min: 1,
    max: GIB,
    step: 1,
    accepts: "a file size is from 1 byte to 1 GiB, which iocurve holds in memory (e.g. 8k or 1M)",
};
pub const STDIO_CALL: Sizes = Sizes {
    min: 1,
    max: GIB,
    step: 1,
    accepts: "a fread call is from 1 byte to 1 GiB (e.g. 1 or 4k)",
};
pub const SUSTAIN_BLOCK: Sizes = Sizes {
    min: 1,
    max: 64 * MIB,
    step: 1,
    accepts: "a sustained write is from 1 byte to 64 MiB per call (e.g. 1M)",
};
pub const SAMPLE: Sizes = Sizes {
    min: 512,
    max: GIB,
    step: 1,
    accepts: "a sample is from 512 bytes to 1 GiB, rounded down to whole blocks (e.g. 2M)",
};
pub const SECTOR_BLOCK: Sizes = Sizes {
    min: 512,
    max: GIB,
    step: 512,
    accepts: "a transfer size here is a multiple of 512 bytes from 512 bytes to 1 GiB (e.g. 1M)",
};

// Durations.

pub const TIME: Durations = Durations {
    min: Duration::from_nanos(1),
    max: WEEK,
    accepts: "a duration above 0 and at most 7 days (e.g. 500ms, 5s or 2m)",
};
pub const RAMP: Durations = Durations {
    min: Duration::ZERO,
    max: HOUR,
    accepts: "a warm-up from 0 (none) to 1 hour (e.g. 1s)",
};
pub const DEADLINE: Durations = Durations {
    min: Duration::from_nanos(1),
    max: HOUR,
    accepts: "a deadline above 0 and at most 1 hour (e.g. 40ms)",
};
pub const INTERVAL: Durations = Durations {
    min: Duration::from_millis(10),
    max: HOUR,
    accepts: "an interval from 10ms to 1 hour (e.g. 1s)",
};

// Counts.

pub const THREADS: Counts = Counts {
    min: 1,
    max: 256,
    accepts: "parallel jobs run from 1 to 256",
};
pub const QUEUE_DEPTH: Counts = Counts {
    min: 1,
    max: 1024,
    accepts: "I/Os in flight run from 1 to 1024",
};
pub const REPEAT_RUN: Counts = Counts {
    min: 1,
    max: 100,
    accepts: "repetitions run from 1 to 100",
};
pub const REPEAT: Counts = Counts {
    min: 1,
    max: 20,
    accepts: "repetitions run from 1 to 20",
};
pub const LAST: Counts = Counts {
    min: 1,
    max: 100,
    accepts: "from 1 to 100 runs",
};
pub const FILE_COUNT: Counts = Counts {
    min: 1,
    max: 100_000,
    accepts: "from 1 to 100000 files of each size",
};
pub const SAMPLES: Counts = Counts {
    min: 2,
    max: 100_000,
    accepts: "from 2 to 100000 positions",
};
pub const ACCESS_READS: Counts = Counts {
    min: 0,
    max: 10_000,
    accepts: "from 0 (none) to 10000 reads per position",
};
pub const CYCLES: Counts = Counts {
    min: 1,
    max: 1_000_000,
    accepts: "from 1 to 1000000 cycles",
};
pub const PERCENT: Counts = Counts {
    min: 0,
    max: 100,
    accepts: "a share in whole percent from 0 to 100 (e.g. 50)",
};

// Decimal numbers.

pub const COMPARE_THRESHOLD: Numbers = Numbers {
    min: 0.0,
    max: 100.0,
    open_min: false,
    open_max: true,
    accepts: "a share in percent from 0 up to (not including) 100 (e.g. 5)",
};
pub const SLOW_THRESHOLD: Numbers = Numbers {
    min: 1.0,
    max: 100.0,
    open_min: false,
    open_max: false,
    accepts: "a share of the median in percent from 1 to 100 (e.g. 50)",
};
pub const FPS: Numbers = Numbers {
    min: 0.0,
    max: 1e6,
    open_min: true,
    open_max: false,
    accepts: "frames per second above 0 and at most 1000000 (e.g. 60 or 29.97)",
};

/// `--rate`: bytes per second from 1 B/s to 1 TB/s.
pub fn rate(text: &str) -> Result<f64, String> {
    const ACCEPTS: &str = "a rate from 1 B/s to 1 TB/s (e.g. 5MB/s or 20MiB/s)";
    match units::parse_rate(text) {
        Ok(bytes) if bytes <= 1_000_000_000_000 => Ok(bytes as f64),
        Ok(_) => Err(ACCEPTS.into()),
        Err(e) => Err(format!("{e}; {ACCEPTS}")),
    }
}

/// `--fail-above`: a slowdown in percent, above 0 and below 100, with or
/// without its `%` (`5`, `5%`, `2.5%`).
pub fn fail_above(text: &str) -> Result<f64, String> {
    const SLOWDOWN: Numbers = Numbers {
        min: 0.0,
        max: 100.0,
        open_min: true,
        open_max: true,
        accepts: "a slowdown in percent above 0 and below 100 (e.g. 5%)",
    };
    SLOWDOWN.check(text.trim().trim_end_matches('%'))
}

/// A name typed to find something (a device, a run): not blank.
pub fn name(text: &str) -> Result<String, String> {
    match text.trim().is_empty() {
        true => Err("an empty name: give a device id, key or name from `iocurve list`".into()),
        false => Ok(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn au_sizes_are_whole_pages_of_the_flash_tests() {
        assert_eq!(AU.check("4M"), Ok(4 << 20));
        assert_eq!(AU.check("16k"), Ok(16 << 10));
        assert_eq!(AU.check("12M"), Ok(12 << 20));
        for bad in ["0", "511", "512", "1k", "1.5k", "3k", "24k", "65G", ""] {
            let e = AU.check(bad).unwrap_err();
            assert!(e.contains("16 KiB to 64 GiB"), "{bad}: {e}");
        }
    }

    #[test]
    fn durations_are_positive_unless_zero_is_allowed() {
        assert!(TIME.check("0").is_err());
        assert_eq!(TIME.check("50ms"), Ok(Duration::from_millis(50)));
        assert!(TIME.check("8d").is_err());
        assert!(TIME.check("200h").is_err());
        assert_eq!(RAMP.check("0"), Ok(Duration::ZERO));
        assert!(INTERVAL.check("5ms").is_err());
        assert_eq!(INTERVAL.check("10ms"), Ok(Duration::from_millis(10)));
    }

    #[test]
    fn counts_are_plain_digits_in_range() {
        assert_eq!(QUEUE_DEPTH.check("32"), Ok(32));
        for bad in [
            "0",
            "1025",
            "-1",
            "+4",
            "1e3",
            "",
            " ",
            "0x10",
            "١٢",
            "4294967296",
        ] {
            assert!(QUEUE_DEPTH.check(bad).is_err(), "{bad}");
        }
        assert_eq!(ACCESS_READS.check("0"), Ok(0));
    }

    #[test]
    fn numbers_refuse_nan_infinity_and_exponents() {
        assert_eq!(SLOW_THRESHOLD.check("50"), Ok(50.0));
        assert_eq!(COMPARE_THRESHOLD.check("0"), Ok(0.0));
        assert!(COMPARE_THRESHOLD.check("100").is_err());
        assert_eq!(FPS.check("29.97"), Ok(29.97));
        for bad in [
            "nan", "NaN", "inf", "-inf", "1e2", "", "-1", "0", "0x10", "١٢", ".",
        ] {
            assert!(FPS.check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_names_and_classes() {
        assert_eq!(rate("5MB/s"), Ok(5e6));
        assert!(rate("2TB/s").is_err());
        assert!(rate("0MB/s").is_err());
        assert!(name("").is_err() && name("  ").is_err());
        assert_eq!(name("sdb"), Ok("sdb".into()));
    }

    proptest! {
        #[test]
        fn every_check_answers_without_panicking(s in "\\PC{0,16}") {
            for sizes in [AU, FLUSH, OFFSET, SPAN, BLOCK, ALIGN, BYTES, PROFILE_AREA, FILE_SIZE,
                STDIO_CALL, SUSTAIN_BLOCK, SAMPLE, SECTOR_BLOCK] {
                if let Ok(n) = sizes.check(&s) {
                    prop_assert!(n >= sizes.min && n <= sizes.max && n % sizes.step == 0);
                }
            }
            for d in [TIME, RAMP, DEADLINE, INTERVAL] {
                if let Ok(t) = d.check(&s) {
                    prop_assert!(t >= d.min && t <= d.max);
                }
            }
            for c in [THREADS, QUEUE_DEPTH, REPEAT_RUN, REPEAT, LAST, FILE_COUNT, SAMPLES,
                ACCESS_READS, CYCLES, PERCENT] {
                if let Ok(n) = c.check(&s) {
                    prop_assert!((c.min..=c.max).contains(&n));
                }
            }
            for x in [COMPARE_THRESHOLD, SLOW_THRESHOLD, FPS] {
                if let Ok(v) = x.check(&s) {
                    prop_assert!(v.is_finite() && v >= x.min && v <= x.max);
                }
            }
            let _ = (rate(&s), name(&s));
        }

        #[test]
        fn sizes_in_range_are_taken(n in 1u64..=(1 << 30)) {
            prop_assert_eq!(BLOCK.check(&n.to_string()), Ok(n));
        }
    }
}
