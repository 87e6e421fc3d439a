//! A device's own I/O counters (`/sys/class/block/<dev>/stat`): read before
//! and after a run, they show what actually reached the device.

use super::attrs::{SYSFS, check_name, invalid, with_path};
use super::{BlockDevice, SECTOR_BYTES};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::Path;

impl BlockDevice {
    /// The device's I/O counters now.
    pub fn read_stat(&self) -> io::Result<DiskStat> {
        read_stat_in(Path::new(SYSFS), &self.name)
    }
}

pub(super) fn read_stat_in(sys: &Path, name: &str) -> io::Result<DiskStat> {
    check_name(name)?;
    let path = sys.join("class/block").join(name).join("stat");
    let text = fs::read_to_string(&path).map_err(|e| with_path(e, &path))?;
    DiskStat::parse(&text).ok_or_else(|| {
        invalid(format!(
            "{}: not a block stat line: {:?}",
            path.display(),
            text.trim()
        ))
    })
}

/// The counters of `/sys/class/block/<dev>/stat` (Documentation/block/stat.rst).
///
/// Sector counts are in 512-byte units whatever the device's block size;
/// times are milliseconds. Discard and flush counters, which newer kernels
/// append, are not kept.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
}

impl DiskStat {
    /// Parses the whitespace-separated counters. Kernels give 11 (before
    /// 4.18), 15 (with discards) or 17 (with flushes) fields; any count of 11
    /// or more is accepted so that fields a later kernel appends do not break
    /// parsing. `None` when there are fewer than 11 or one is not a number.
    pub fn parse(text: &str) -> Option<DiskStat> {
        let values: Vec<u64> = text
            .split_whitespace()
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        let v: &[u64; 11] = values.get(..11)?.try_into().ok()?;
        Some(DiskStat {
            read_ios: v[0],
            read_merges: v[1],
            read_sectors: v[2],
            read_ticks_ms: v[3],
            write_ios: v[4],
            write_merges: v[5],
            write_sectors: v[6],
            write_ticks_ms: v[7],
            in_flight: v[8],
            io_ticks_ms: v[9],
            time_in_queue_ms: v[10],
        })
    }

    /// What happened between `earlier` and `self`: each counter's difference,
    /// floored at zero (a counter can go backwards when a device is removed
    /// and re-added under the same name). `in_flight` is a level, not a
    /// counter, so it is `self`'s.
    pub fn since(&self, earlier: &DiskStat) -> DiskStat {
        DiskStat {
            read_ios: self.read_ios.saturating_sub(earlier.read_ios),
            read_merges: self.read_merges.saturating_sub(earlier.read_merges),
            read_sectors: self.read_sectors.saturating_sub(earlier.read_sectors),
            read_ticks_ms: self.read_ticks_ms.saturating_sub(earlier.read_ticks_ms),
            write_ios: self.write_ios.saturating_sub(earlier.write_ios),
            write_merges: self.write_merges.saturating_sub(earlier.write_merges),
            write_sectors: self.write_sectors.saturating_sub(earlier.write_sectors),
            write_ticks_ms: self.write_ticks_ms.saturating_sub(earlier.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: self.io_ticks_ms.saturating_sub(earlier.io_ticks_ms),
            time_in_queue_ms: self
                .time_in_queue_ms
                .saturating_sub(earlier.time_in_queue_ms),
        }
    }

    /// Bytes read, from the 512-byte sector counter.
    pub fn read_bytes(&self) -> u64 {
        self.read_sectors.saturating_mul(SECTOR_BYTES)
    }

    /// Bytes written, from the 512-byte sector counter.
    pub fn write_bytes(&self) -> u64 {
        self.write_sectors.saturating_mul(SECTOR_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::sysfs::tests::STAT_17;

    const STAT_11: &str = "    4410      171   329502     2193     1527     2079    61568     3062        0     3436     5256\n";
    const STAT_15: &str = "4410 171 329502 2193 1527 2079 61568 3062 2 3436 5256 12 0 4096 7";

    #[test]
    fn diskstat_parses_11_15_and_17_fields() {
        let want = DiskStat {
            read_ios: 4410,
            read_merges: 171,
            read_sectors: 329502,
            read_ticks_ms: 2193,
            write_ios: 1527,
            write_merges: 2079,
            write_sectors: 61568,
            write_ticks_ms: 3062,
            in_flight: 0,
            io_ticks_ms: 3436,
            time_in_queue_ms: 5256,
        };
        assert_eq!(DiskStat::parse(STAT_11), Some(want));
        assert_eq!(
            DiskStat::parse(STAT_15),
            Some(DiskStat {
                in_flight: 2,
                ..want
            })
        );
        assert_eq!(DiskStat::parse(STAT_17), Some(want));
        assert_eq!(DiskStat::parse(STAT_17).unwrap().read_bytes(), 329502 * 512);
        assert_eq!(DiskStat::parse(STAT_17).unwrap().write_bytes(), 61568 * 512);
    }

    #[test]
    fn diskstat_rejects_garbage() {
        assert_eq!(DiskStat::parse(""), None);
        assert_eq!(DiskStat::parse("\n"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 x"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 -11"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 11 junk"), None);
        assert_eq!(
            DiskStat::parse("major minor name 1 2 3 4 5 6 7 8 9 10 11"),
            None
        );
        assert_eq!(
            DiskStat::parse("1 2 3 4 5 6 7 8 9 10 18446744073709551616"),
            None
        );
    }

    #[test]
    fn diskstat_since_saturates_and_keeps_in_flight() {
        let earlier = DiskStat::parse("10 1 80 5 20 2 160 7 4 30 40").unwrap();
        let later = DiskStat::parse("15 1 120 9 19 5 200 8 1 33 50").unwrap();
        let d = later.since(&earlier);
        assert_eq!(
            d,
            DiskStat {
                read_ios: 5,
                read_merges: 0,
                read_sectors: 40,
                read_ticks_ms: 4,
                write_ios: 0, // went backwards: floored
                write_merges: 3,
                write_sectors: 40,
                write_ticks_ms: 1,
                in_flight: 1,
                io_ticks_ms: 3,
                time_in_queue_ms: 10,
            }
        );
        assert_eq!(later.since(&later).in_flight, 1);
        assert_eq!(earlier.since(&later).read_ios, 0);
    }
}
