//! Reading the throughputs of `flash open-au`: where writing into one AU
//! more makes the throughput collapse, and so how many AUs the controller
//! keeps open.
//!
//! The method is flashbench's open-AU test (Arnd Bergmann, flashbench
//! `--open-au`; LWN, "Optimizing Linux with cheap flash drives", 2011):
//! within the count each small write costs a page program, one AU more
//! forces a garbage collection on nearly every write. flashbench prints
//! the throughputs; here the count is the last N before a lasting
//! collapse, checked by going back to it after the sweep.

use crate::result::flash::Confidence;
use serde::Serialize;

/// The smallest collapse read as one: the throughput past the count at
/// most 1/1.25 of the slowest N within it, on both N that follow, and by
/// as much over the spread of the N within it (the noise). A garbage
/// collection per write costs at least a second page program, so a real
/// collapse is far larger; 1.25 stays above a busy host's wobble.
pub const VISIBLE: f64 = 1.25;

/// Throughput with N AUs in turn.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Point {
    pub aus: u32,
    pub mb_per_s: f64,
}

/// Why no count was given (kept in the result).
pub use crate::result::flash::NoCount;

/// What the throughputs say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenAuReading {
    /// `None`: no count (see `why_none`).
    pub open_aus: Option<u32>,
    pub confidence: Confidence,
    pub why_none: Option<NoCount>,
    /// Throughput within the count over throughput past it (1 when none).
    pub collapse: f64,
    /// Spread (largest over smallest) of the throughputs within the count,
    /// the check included.
    pub spread: f64,
}

/// The index of the first N past the count: its throughput and that of
/// every N after it (at least one more) are below the slowest before it by
/// [`VISIBLE`]. Every N past the controller's count thrashes, so a fall
/// that recovers at a larger N is noise (a loop device on a busy host
/// shows such dips).
pub fn collapse_at(points: &[Point]) -> Option<usize> {
    (1..points.len().saturating_sub(1)).find(|&i| {
        let floor = slowest(&points[..i]) / VISIBLE;
        points[i..].iter().all(|p| p.mb_per_s < floor)
    })
}

fn slowest(points: &[Point]) -> f64 {
    points
        .iter()
        .map(|p| p.mb_per_s)
        .fold(f64::INFINITY, f64::min)
}

fn fastest(points: &[Point]) -> f64 {
    points.iter().map(|p| p.mb_per_s).fold(0.0, f64::max)
}

/// The count is the last N before the collapse, when the check (that N
/// again, after the sweep) is back above the geometric mean of the
/// throughputs within and past the count: a fall that stays when the AUs
/// are fewer again is not the count's. The confidence is the collapse over
/// the spread within the count ([`Confidence::of_ratio`]); and low whatever
/// it is when capped: no higher than `cap`, which is low when the AU was
/// assumed (AUs of a wrong size are not the controller's) or a cache lies
/// beneath the device, and the AU's own confidence when timing found it (a buffered loop
/// device's page cache collapses too, at limits of its own: 9 AUs of 4 MiB
/// at 900 MB/s, then 150–250 MB/s, on a virtual machine's disk).
pub fn read(points: &[Point], check: Option<Point>, cap: Confidence) -> OpenAuReading {
    read_checked(points, check, None, cap)
}

/// [`read`] with the first N past the count measured again after the
/// check (`past_check`): it must still be collapsed. A collapse that a
/// cache filling made, and a pause let drain again, is fast there once
/// more (issue 37: a card with a 5 MiB cache in front of its AU work,
/// pausing 177 ms every 6 MiB, was "9 open AUs, high" for 7).
pub fn read_checked(
    points: &[Point],
    check: Option<Point>,
    past_check: Option<Point>,
    cap: Confidence,
) -> OpenAuReading {
    let mut r = OpenAuReading {
        open_aus: None,
        confidence: Confidence::Low,
        why_none: Some(NoCount::NoCollapse),
        collapse: 1.0,
        spread: 1.0,
    };
    let Some(i) = collapse_at(points) else {
        return r;
    };
    let mut within: Vec<Point> = points[..i].to_vec();
    within.extend(check);
    let past = fastest(&points[i..]);
    r.collapse = slowest(&points[..i]) / past.max(1e-9);
    r.spread = fastest(&within) / slowest(&within).max(1e-9);
    let between = (slowest(&points[..i]) * past).sqrt();
    let back = check.is_some_and(|c| c.mb_per_s >= between)
        && past_check.is_none_or(|p| p.mb_per_s < between);
    let margin = r.collapse / r.spread;
    if !back || margin < VISIBLE {
        r.why_none = Some(match back {
            false => NoCount::NotFromTheCount,
            true => NoCount::InTheNoise,
        });
        return r;
    }
    r.open_aus = Some(points[i - 1].aus);
    r.why_none = None;
    r.confidence = Confidence::of_ratio(margin).min(cap);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Throughputs with 1, 2, … AUs in turn.
    fn points(mb: &[f64]) -> Vec<Point> {
        (1..)
            .zip(mb)
            .map(|(aus, &mb_per_s)| Point { aus, mb_per_s })
            .collect()
    }

    #[test]
    fn a_fall_that_recovers_at_more_aus_is_noise() {
        // Figures from a loop device on a busy host: dips at 5, 6, 8, 9
        // and 12 AUs, but 7 and 10 are as fast as 1.
        let mb = [
            901., 892., 941., 897., 308., 206., 864., 187., 246., 846., 558., 124.,
        ];
        let points = points(&mb);
        let check = Some(Point {
            aus: 4,
            mb_per_s: 843.0,
        });
        let r = read(&points, check, Confidence::High);
        assert_eq!((r.open_aus, r.confidence), (None, Confidence::Low));
    }

    #[test]
    fn a_loop_devices_lasting_collapse_is_counted_at_low_confidence_only() {
        // A loop device over a file on a virtual machine's disk (CI, with
        // 4 MiB AUs): the host's write-back gives way past 9 AUs and comes
        // back at 9, as a controller's open AUs would; on a card it would
        // be a count of medium confidence.
        let mb = [
            1047.6, 1038.3, 982.2, 980.0, 982.0, 978.5, 853.2, 916.4, 830.6, 253.4, 145.6, 234.9,
        ];
        let points = points(&mb);
        let check = Some(Point {
            aus: 9,
            mb_per_s: 919.8,
        });
        let card = read(&points, check, Confidence::High);
        assert_eq!(
            (card.open_aus, card.confidence),
            (Some(9), Confidence::Medium)
        );
        let file = read(&points, check, Confidence::Low);
        assert_eq!((file.open_aus, file.confidence), (Some(9), Confidence::Low));
    }

    #[test]
    fn a_clear_collapse_is_no_surer_than_the_au_it_was_counted_in() {
        // Two AUs at 10 MB/s, then a thrash at 1 MB/s: high on its own.
        let points = points(&[10.0, 10.1, 1.0, 0.9, 1.1]);
        let check = Some(Point {
            aus: 2,
            mb_per_s: 10.0,
        });
        for cap in [Confidence::High, Confidence::Medium, Confidence::Low] {
            let r = read(&points, check, cap);
            assert_eq!((r.open_aus, r.confidence), (Some(2), cap), "{cap:?}");
        }
    }
}
