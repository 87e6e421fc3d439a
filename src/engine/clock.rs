//! The wall clock engines time with: CLOCK_MONOTONIC through the vDSO.
//!
//! It is read on the timed path (twice per I/O when one request is in
//! flight, twice per batch on a ring), so its cost was weighed against the
//! cheaper clocks (`bench/clock_cost.c`, figures in `bench/README.md`): the
//! coarse clock has 4 ms steps, a bare TSC read is not ordered with the
//! system call it times, and an ordered one saves about 5 ns of 24 per
//! read (0.5% of the fastest 4 KiB read) for an x86-only path with its own
//! calibration and fallback. Not worth it.

use std::time::Instant;

/// CLOCK_MONOTONIC in nanoseconds, as this host (or time namespace) keeps
/// it: the clock an MPI rank's start and end are stated on before rank 0
/// maps them onto its own.
pub fn monotonic_now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64
}

/// Nanoseconds since the clock was made; never goes backwards.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl MonotonicClock {
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }

    /// Made from a shared origin so that every job's times are comparable.
    pub fn with_origin(origin: Instant) -> Self {
        Self { origin }
    }
}

impl super::Clock for MonotonicClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }
}
