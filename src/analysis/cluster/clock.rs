//! Each rank's clock against rank 0's, measured by ping-pong.
//!
//! Cristian's method (F. Cristian, "Probabilistic clock synchronization",
//! Distributed Computing 3, 1989): rank 0 notes its clock when it sends a
//! ping (`sent`) and when the reply comes back (`received`); the other rank
//! read its own clock (`remote`) somewhere in between. Whatever the two
//! one-way delays were, that read happened at a rank-0 time inside
//! `[sent, received]`, so `remote − (sent + received)/2` is the offset to
//! within half the round trip. Of many round trips the shortest gives the
//! tightest bound, so it is the one kept; no assumption that the delays are
//! symmetric is needed for the bound to hold.
//!
//! Clocks also drift (a crystal runs some parts per million fast or slow),
//! so the offset is measured again after the tests and interpolated
//! linearly between the two by rank-0 time. Offsets may be huge: each host's
//! CLOCK_MONOTONIC counts from its own boot (or from a time namespace's
//! offset), thousands of seconds apart; the arithmetic is done in `i128`
//! and saturates, so no difference of two such clocks overflows.

/// One round trip: rank 0 sent at `sent_ns` and received the reply at
/// `received_ns` (both on rank 0's CLOCK_MONOTONIC); the other rank read
/// its own clock at `remote_ns` in between.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingSample {
    pub sent_ns: u64,
    pub remote_ns: u64,
    pub received_ns: u64,
}

impl PingSample {
    /// The round trip, or `None` when the reply came "before" the ping (a
    /// sample that cannot be from one clock).
    fn round_trip_ns(&self) -> Option<u64> {
        self.received_ns.checked_sub(self.sent_ns)
    }
}

/// remote clock − rank 0's clock, and how far the truth can be from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffsetEstimate {
    pub offset_ns: i64,
    pub bound_ns: u64,
    /// Rank 0's time of the chosen sample's midpoint.
    pub at_ns: u64,
}

/// The sample with the shortest round trip: offset = remote −
/// (sent + received)/2, bound = round trip / 2 (rounded up, so that the
/// integer midpoint's half nanosecond stays inside it). `None` for no
/// sample (or only samples with received < sent). Of equal round trips
/// the first is kept.
pub fn estimate_offset(samples: &[PingSample]) -> Option<OffsetEstimate> {
    let (best, rtt) = samples
        .iter()
        .filter_map(|s| Some((s, s.round_trip_ns()?)))
        .min_by_key(|&(_, rtt)| rtt)?;
    // sent + rtt/2 rounded down: no overflow where sent + received would.
    let midpoint = best.sent_ns + rtt / 2;
    Some(OffsetEstimate {
        offset_ns: saturate(i128::from(best.remote_ns) - i128::from(midpoint)),
        bound_ns: rtt.div_ceil(2),
        at_ns: midpoint,
    })
}

/// The offsets measured before and after the tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockMap {
    pub before: OffsetEstimate,
    pub after: Option<OffsetEstimate>,
}

impl ClockMap {
    /// Rank 0 itself: offset 0, bound 0.
    pub fn identity() -> ClockMap {
        ClockMap {
            before: OffsetEstimate {
                offset_ns: 0,
                bound_ns: 0,
                at_ns: 0,
            },
            after: None,
        }
    }

    /// A time on the remote clock mapped onto rank 0's: remote − offset,
    /// the offset interpolated linearly between before and after by rank-0
    /// time (extrapolated outside, constant with no `after`). Saturates at
    /// the ends of `i64`.
    ///
    /// The offset depends on the rank-0 time `t` being sought, so the map
    /// solves `t = remote − (o_b + s·(t − at_b))` for `t`:
    /// `t = remote − o_b − s·d/(1 + s)` with `d = remote − o_b − at_b`. The
    /// large terms stay integers; only the drift's correction, small,
    /// passes through a float.
    pub fn to_common(&self, remote_ns: u64) -> i64 {
        let b = &self.before;
        let undrifted = i128::from(remote_ns) - i128::from(b.offset_ns);
        let slope = self.slope();
        if slope == 0.0 {
            return saturate(undrifted);
        }
        let d = undrifted - i128::from(b.at_ns);
        let correction = (slope * d as f64 / (1.0 + slope)).round();
        saturate(undrifted - correction as i128)
    }

    /// (after.offset − before.offset) / (after.at − before.at) in ns per
    /// second; 0 with no after.
    pub fn drift_ns_per_s(&self) -> f64 {
        self.slope() * 1e9
    }

    /// How far the drift may be off: the two offsets' bounds added, over
    /// the time between them, ns per second; 0 with no after.
    pub fn drift_uncertainty_ns_per_s(&self) -> f64 {
        let Some(a) = self.after else { return 0.0 };
        let span = a.at_ns.abs_diff(self.before.at_ns);
        if span == 0 {
            return 0.0;
        }
        (self.before.bound_ns + a.bound_ns) as f64 / span as f64 * 1e9
    }

    /// max(before.bound, after.bound): the bound of a mapped time between
    /// the two measurements.
    pub fn bound_ns(&self) -> u64 {
        let after = self.after.map_or(0, |a| a.bound_ns);
        self.before.bound_ns.max(after)
    }

    /// Nanoseconds of offset gained per nanosecond of rank-0 time.
    fn slope(&self) -> f64 {
        let Some(a) = self.after else { return 0.0 };
        let span = i128::from(a.at_ns) - i128::from(self.before.at_ns);
        if span == 0 {
            return 0.0;
        }
        let moved = i128::from(a.offset_ns) - i128::from(self.before.offset_ns);
        moved as f64 / span as f64
    }
}

/// An `i128` clamped into `i64`.
fn saturate(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A remote clock: `offset0` at rank-0 time `epoch`, gaining
    /// `ppm` parts per million of rank-0 time.
    #[derive(Debug, Clone, Copy)]
    struct Remote {
        offset0: i64,
        ppm: f64,
        epoch: u64,
    }

    impl Remote {
        /// The true offset at rank-0 time `t`.
        fn offset_at(&self, t: u64) -> f64 {
            self.offset0 as f64 + self.ppm * 1e-6 * (t as f64 - self.epoch as f64)
        }

        /// The remote clock's reading at rank-0 time `t`.
        fn read(&self, t: u64) -> u64 {
            (t as f64 + self.offset_at(t)).round() as u64
        }

        /// One ping sent at `t`, out in `there` ns, answered after `think`
        /// ns, back in `back` ns.
        fn ping(&self, t: u64, there: u64, think: u64, back: u64) -> PingSample {
            PingSample {
                sent_ns: t,
                remote_ns: self.read(t + there + think / 2),
                received_ns: t + there + think + back,
            }
        }
    }

    /// Rank-0 times far enough from zero that a remote clock thousands of
    /// seconds behind stays positive, as CLOCK_MONOTONIC does.
    const EPOCH: u64 = 10_000 * 1_000_000_000;

    #[test]
    fn the_shortest_round_trip_is_chosen() {
        let samples = [
            PingSample {
                sent_ns: 100,
                remote_ns: 5_160,
                received_ns: 200,
            },
            PingSample {
                sent_ns: 300,
                remote_ns: 5_320,
                received_ns: 340,
            },
            PingSample {
                sent_ns: 400,
                remote_ns: 5_470,
                received_ns: 500,
            },
        ];
        let e = estimate_offset(&samples).unwrap();
        assert_eq!(e.at_ns, 320);
        assert_eq!(e.offset_ns, 5_000);
        assert_eq!(e.bound_ns, 20);
    }

    #[test]
    fn no_sample_or_only_impossible_ones_give_no_estimate() {
        assert_eq!(estimate_offset(&[]), None);
        let backwards = PingSample {
            sent_ns: 10,
            remote_ns: 5,
            received_ns: 9,
        };
        assert_eq!(estimate_offset(&[backwards]), None);
        let good = PingSample {
            sent_ns: 10,
            remote_ns: 5,
            received_ns: 11,
        };
        // The impossible sample's "round trip" is never the shortest.
        assert_eq!(estimate_offset(&[backwards, good]).unwrap().at_ns, 10);
    }

    #[test]
    fn an_odd_round_trip_rounds_the_bound_up() {
        let e = estimate_offset(&[PingSample {
            sent_ns: 0,
            remote_ns: 1,
            received_ns: 3,
        }])
        .unwrap();
        // The read happened at rank-0 time 0..=3, midpoint 1 rounded down:
        // the offset is 0 and the truth lies in -2..=1, within 2 of it.
        assert_eq!((e.offset_ns, e.bound_ns, e.at_ns), (0, 2, 1));
    }

    #[test]
    fn extreme_clocks_saturate_instead_of_wrapping() {
        let e = estimate_offset(&[PingSample {
            sent_ns: 0,
            remote_ns: u64::MAX,
            received_ns: 0,
        }])
        .unwrap();
        assert_eq!(e.offset_ns, i64::MAX);
        let map = ClockMap {
            before: OffsetEstimate {
                offset_ns: i64::MIN,
                bound_ns: 0,
                at_ns: 0,
            },
            after: None,
        };
        assert_eq!(map.to_common(u64::MAX), i64::MAX);
    }

    #[test]
    fn identity_maps_every_time_to_itself() {
        let id = ClockMap::identity();
        for t in [0, 1, 12_345, i64::MAX as u64] {
            assert_eq!(id.to_common(t), t as i64);
        }
        assert_eq!(id.drift_ns_per_s(), 0.0);
        assert_eq!(id.bound_ns(), 0);
    }

    #[test]
    fn drift_is_the_offset_moved_per_second_and_the_bound_the_larger() {
        let map = ClockMap {
            before: OffsetEstimate {
                offset_ns: 1_000,
                bound_ns: 30,
                at_ns: 1_000_000_000,
            },
            after: Some(OffsetEstimate {
                offset_ns: 1_050,
                bound_ns: 80,
                at_ns: 11_000_000_000,
            }),
        };
        // 50 ns over 10 s.
        assert!((map.drift_ns_per_s() - 5.0).abs() < 1e-12);
        assert_eq!(map.bound_ns(), 80);
        // Halfway: offset 1 025 ns.
        let remote = 6_000_000_000u64 + 1_025;
        assert_eq!(map.to_common(remote), 6_000_000_000);
    }

    /// The true offset, pinged `n` times with random delays, as
    /// (estimate, true offset at the chosen sample's midpoint).
    fn ping_many(remote: Remote, start: u64, delays: &[(u64, u64, u64)]) -> OffsetEstimate {
        let mut t = start;
        let samples: Vec<PingSample> = delays
            .iter()
            .map(|&(there, think, back)| {
                let s = remote.ping(t, there, think, back);
                t = s.received_ns + 1_000;
                s
            })
            .collect();
        let e = estimate_offset(&samples).unwrap();
        let shortest = samples
            .iter()
            .map(|s| s.received_ns - s.sent_ns)
            .min()
            .unwrap();
        assert_eq!(e.bound_ns, shortest.div_ceil(2), "the min-RTT sample");
        e
    }

    fn delays() -> impl Strategy<Value = Vec<(u64, u64, u64)>> {
        // One-way delays from a microsecond to a few milliseconds, each way
        // drawn on its own (asymmetric), and the remote's time to answer.
        prop::collection::vec(
            (1_000u64..3_000_000, 0u64..50_000, 1_000u64..3_000_000),
            1..40,
        )
    }

    proptest! {
        #[test]
        fn the_estimate_is_within_its_bound_of_the_true_offset(
            offset0 in -5_000_000_000_000i64..5_000_000_000_000,
            ppm in -100.0f64..100.0,
            delays in delays(),
        ) {
            let remote = Remote { offset0, ppm, epoch: EPOCH };
            let e = ping_many(remote, EPOCH, &delays);
            let truth = remote.offset_at(e.at_ns);
            // The read sat within the bound of the midpoint in rank-0 time;
            // the clock drifted by ppm of that meanwhile (plus rounding).
            let slack = e.bound_ns as f64 * (1.0 + ppm.abs() * 1e-6) + 1.0;
            prop_assert!((e.offset_ns as f64 - truth).abs() <= slack,
                "estimate {} truth {} bound {}", e.offset_ns, truth, e.bound_ns);
        }

        #[test]
        fn a_mapped_time_lands_within_the_bound_of_the_true_time(
            offset0 in -5_000_000_000_000i64..5_000_000_000_000,
            ppm in -100.0f64..100.0,
            before in delays(),
            after in delays(),
            between_s in 1u64..3_600,
            at in 0.0f64..1.0,
        ) {
            let remote = Remote { offset0, ppm, epoch: EPOCH };
            let first = ping_many(remote, EPOCH, &before);
            let later = EPOCH + between_s * 1_000_000_000;
            let second = ping_many(remote, later, &after);
            let map = ClockMap { before: first, after: Some(second) };
            // A time between the two measurements, on the remote's clock.
            let t = first.at_ns + ((second.at_ns - first.at_ns) as f64 * at) as u64;
            let mapped = map.to_common(remote.read(t));
            // Each end is off by at most its bound (and its drift within
            // it); between them the line is off by at most the larger, and
            // solving for the time divides that by 1 − drift.
            let slack = map.bound_ns() as f64 * (1.0 + 3.0 * ppm.abs() * 1e-6) + 3.0;
            prop_assert!((mapped as f64 - t as f64).abs() <= slack,
                "mapped {} true {} bound {}", mapped, t, map.bound_ns());
            let drift = (second.offset_ns - first.offset_ns) as f64
                / (second.at_ns - first.at_ns) as f64 * 1e9;
            prop_assert!((map.drift_ns_per_s() - drift).abs() < 1e-6);
        }

        #[test]
        fn without_an_after_the_offset_is_constant(
            offset0 in -5_000_000_000_000i64..5_000_000_000_000,
            delays in delays(),
            later_s in 0u64..100_000,
        ) {
            let remote = Remote { offset0, ppm: 0.0, epoch: EPOCH };
            let e = ping_many(remote, EPOCH, &delays);
            let map = ClockMap { before: e, after: None };
            let t = EPOCH + later_s * 1_000_000_000;
            let mapped = map.to_common(remote.read(t));
            prop_assert!((mapped - t as i64).unsigned_abs() <= e.bound_ns);
            prop_assert_eq!(map.bound_ns(), e.bound_ns);
        }
    }
}
