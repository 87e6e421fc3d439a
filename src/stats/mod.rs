//! Condensing timings into figures; no I/O happens here.
//!
//! Latencies go into log-linear HDR histograms (Gil Tene's HdrHistogram:
//! buckets whose width grows with the value, so every recorded value is kept
//! to a fixed relative precision, and histograms of threads merge by adding
//! counts). Repetitions are summarised by their median and range, never by the
//! best run alone. Lines are fitted by weighted least squares ([`fit`]);
//! whether two sets of repetitions differ is judged in [`bootstrap`].

pub mod between_runs;
pub mod bootstrap;
pub mod fit;
mod histogram;
pub mod live_histogram;
mod quantile;
mod spread;
mod summary;

pub use histogram::{LatencyHistogram, LatencySummary};
pub use quantile::{finite_sorted, median, median_u64, quantile, quantile_of_sorted};
pub use spread::Spread;
pub use summary::NsSummary;
