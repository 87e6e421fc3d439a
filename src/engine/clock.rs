//! The wall clock engines time with: CLOCK_MONOTONIC through the vDSO.

use std::time::Instant;

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
