//! Whether two stretches of a write differ at their own length, not only
//! in their means (see [`super`], "Own length"): the fastest and slowest
//! mean of any run of `L` consecutive requests in each, `L` the shorter
//! stretch's length, from the running sums in O(length).
//!
//! Also the longest period a per-request cost could have on a device of
//! the field for a given request size, which caps how sure a drop is when
//! the write was too short around it to have shown that period.

use super::rules::{DROP_RATIO, MAX_AU, MAX_PAGE, SAME_LEVEL, THREE_TIMES_AUS};
use super::series::Series;
use std::ops::Range;

/// The smallest and largest mean duration of `len` consecutive requests
/// inside `r`; `None` when `r` holds fewer than `len` (or `len` is 0).
pub fn window_extremes(series: &Series, r: Range<usize>, len: usize) -> Option<(f64, f64)> {
    if len == 0 || r.len() < len {
        return None;
    }
    (r.start..=r.end - len)
        .map(|i| series.mean(i..i + len))
        .fold(None, |acc, m| match acc {
            None => Some((m, m)),
            Some((lo, hi)) => Some((f64::min(lo, m), f64::max(hi, m))),
        })
}

/// `r` without its request next to the boundary at `edge` (its first or
/// last), when it still holds `len` requests without it: the request
/// during which a cache filled is in between both speeds and belongs to
/// neither side's extremes.
fn trimmed(r: Range<usize>, edge: usize, len: usize) -> Range<usize> {
    if r.len() <= len {
        return r;
    }
    match edge == r.start {
        true => r.start + 1..r.end,
        false => r.start..r.end - 1,
    }
}

/// How far apart two neighbouring stretches are at their own length: the
/// ratio of the nearer ends of their window-mean ranges, above 1 when
/// every window of one is slower than every window of the other (1 or
/// below when they overlap).
pub fn separation(series: &Series, left: Range<usize>, right: Range<usize>) -> f64 {
    let len = left.len().min(right.len());
    let boundary = right.start;
    let l = window_extremes(series, trimmed(left, boundary, len), len);
    let r = window_extremes(series, trimmed(right, boundary, len), len);
    match (l, r) {
        (Some((l_lo, l_hi)), Some((r_lo, r_hi))) => {
            let ratio = |a: f64, b: f64| a / b.max(1e-9);
            ratio(r_lo, l_hi).max(ratio(l_lo, r_hi))
        }
        _ => 0.0,
    }
}

/// Whether two neighbours are separate levels: at their own length they
/// are further apart than [`SAME_LEVEL`].
pub fn separate_levels(series: &Series, left: Range<usize>, right: Range<usize>) -> bool {
    separation(series, left, right) > 1.0 + SAME_LEVEL
}

/// What the own-length test of a drop saw: whether the fast stretch
/// stood out, and how many shifts of the shorter side were compared (a
/// period up to that many requests would have shown a twin).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    pub stands_out: bool,
    pub shifts: usize,
}

/// Whether the fast stretch `a..b` is a drop against everything after
/// it at their own length: its slowest run of `L` requests is below
/// [`DROP_RATIO`] of the fastest run of `L` after it, and of the fastest
/// run of `L` before it (a slow start), `L` the shorter side's length.
pub fn drop_standing(series: &Series, a: usize, b: usize) -> Standing {
    let n = series.len();
    let len = (b - a).min(n - b);
    let fast = trimmed(a..b, b, len);
    let after = trimmed(b..n, b, len);
    let slowest_fast = window_extremes(series, fast.clone(), len).map(|e| e.1);
    let fastest_rest = [
        window_extremes(series, after.clone(), len),
        window_extremes(series, 0..a, len),
    ]
    .into_iter()
    .flatten()
    .map(|e| e.0)
    .reduce(f64::min);
    let stands_out = match (slowest_fast, fastest_rest) {
        (Some(f), Some(s)) => f < DROP_RATIO * s,
        _ => false,
    };
    let room = fast.len().max(after.len()).max(a);
    Standing {
        stands_out,
        shifts: (room + 1).saturating_sub(len),
    }
}

/// The longest period, in requests, that a cost tied to any of `units`
/// (page or AU sizes, bytes) could give writes of `request` bytes: a unit
/// of `u` bytes repeats its pattern every `u / gcd(request, u)` requests.
pub fn longest_period(request: u64, units: impl IntoIterator<Item = u64>) -> u64 {
    units
        .into_iter()
        .map(|u| u / gcd(request.max(1), u.max(1)))
        .fold(1, u64::max)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The powers of two from a sector (512 bytes) to `max`.
fn powers_of_two(max: u64) -> impl Iterator<Item = u64> {
    (9..64)
        .map(|shift| 1u64 << shift)
        .take_while(move |&u| u <= max)
}

/// The longest page-tied and AU-tied periods for `request`-byte writes:
/// pages are powers of two up to [`MAX_PAGE`]; AUs are powers of two up to
/// [`MAX_AU`] and the SD specification's 12 and 24 MB.
pub fn field_periods(request: u64) -> (u64, u64) {
    let aus = powers_of_two(MAX_AU).chain(THREE_TIMES_AUS);
    (
        longest_period(request, powers_of_two(MAX_PAGE)),
        longest_period(request, aus),
    )
}
