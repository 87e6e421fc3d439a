//! Reading a throughput-against-size curve.
//!
//! The model is Hockney's (R. W. Hockney, "The communication challenge for
//! MPP", Parallel Computing 20, 1994): a request of n bytes takes
//! t(n) = t0 + n/B, a fixed cost t0 (command, system call, seek) plus the
//! transfer at the asymptotic bandwidth B. Throughput n/t(n) then reaches
//! half of B at n½ = t0·B and 90% of B at 9·n½.
//!
//! Flash breaks it below the unit it programs. A NAND page is written
//! whole, so a write smaller than the page costs a whole page (Arnd
//! Bergmann's flashbench notes, "Optimizing Linux with cheap flash drives",
//! LWN 2011); and a card that keeps only a few allocation units (erase
//! blocks, AUs in the SD Association's simplified physical layer
//! specification) open answers a random write elsewhere by copying a whole
//! AU, so random writes cost the same from the smallest size up to the AU.
//! Fitted through those flat points, the plain line makes up a huge t0 and a
//! B above every measured point. So the model here is
//!
//!   t(n) = t0 + max(n, U)/B,
//!
//! with U the smallest unit a request costs. It is found by splitting the
//! points, sorted by size, into a flat head and a rising tail, every split
//! tried: the line t0 + n/B is fitted to the tail alone (weighted by 1/t²,
//! so every point's relative error counts alike), U is where that line
//! meets the head's level (kept between the last flat and the first rising
//! size, and taken as a measured size when within [`UNIT_SNAP`] of one),
//! and the split with the least weighted squared error over all points
//! wins. Equivalently: detect the flat region and fit from U upward. The
//! line is fitted to the tail only because the flat points are only
//! roughly flat (a garbage collection copies more or less depending on
//! what was written before): they judge a split but do not bend t0 and B.
//! U may fall between measured sizes (an 8 KiB page in a sweep of 4 and
//! 32 KiB): the 4 KiB point then belongs to the head, not to the line.
//! A unit is taken only when the plain line misses some point by more
//! than [`UNIT_MIN_MISFIT`] and the split cuts the squared error by more
//! than its extra parameter would by chance (an F test, [`UNIT_MIN_F`]):
//! an extra parameter always fits noise a little better, and the claim
//! "every request below U costs the same" must be earned. Reads, and
//! writes on anything without such a unit, keep the plain line.
//!
//! A fit is then judged ([`FitQuality`]): at least [`MIN_POINTS_FROM_UNIT`]
//! sizes on the line; no point further than [`MAX_POINT_ERROR`] from the
//! model and a weighted R² of the line of at least [`MIN_R_SQUARED`]; B
//! not above the best measured point by more than [`MAX_B_ABOVE_BEST`]
//! (else the sweep never reached the plateau the model extrapolates to);
//! one fixed cost along the curve (the larger half of the sizes must not
//! show a clearly smaller t0, the mark of a transfer capped by a slow
//! link); t0 above zero; and t0 and B determined: a standard error within
//! [`MAX_T0_RELATIVE_SE`] and [`MAX_B_RELATIVE_SE`], and no single size
//! moving them by more than [`MAX_T0_SENSITIVITY`] and
//! [`MAX_B_SENSITIVITY`] when left out. These limits were set on some 300
//! simulated cards (`sim:`) of random page, AU, command time and speeds,
//! whose small writes pay extra garbage collections of a few percent: a
//! fixed cost that is a quarter of the time of the smallest request on
//! the line moves by a quarter for every 7% such extra, so t0 must be
//! pinned down tightly before it is believed. Advice is given only on a
//! good fit, and names a measured size: the smallest from which every
//! measured size reaches [`ADVICE_SHARE`] of the best measured MB/s.
//!
//! Points far from the model are knees worth explaining (page size, erase
//! block, largest transfer); sizes that are not a multiple of the logical
//! block are compared with the interpolation between their aligned
//! neighbours; two devices' curves are compared for crossovers; and figures
//! are checked against the ceiling of the link the device sits behind.
//!
//! An unaligned size is judged by ranges, not medians: its repetitions'
//! fastest-to-slowest time per request against the interpolation between
//! its neighbours taken end by end (slowest with slowest, fastest with
//! fastest). A penalty is reported only when the two intervals are
//! disjoint, the same rule as reading error bars that do not overlap;
//! overlapping intervals are "no penalty seen", whatever the medians say.
//!
//! The parts, one job each: `fit` finds t0, B and U; `quality` judges the
//! fit and lists the points off it; `advice` reads the curve as a whole
//! and names a size worth using; `alignment` judges unaligned sizes;
//! `crossover` compares two curves; `ceiling` checks the link.
//! The data they fill ([`ModelFit`], [`FitQuality`], [`Advice`]…) is
//! defined in [`crate::result::curve`], which the result records.

mod advice;
mod alignment;
mod ceiling;
mod crossover;
mod fit;
mod quality;
#[cfg(test)]
pub(crate) mod test_points;

pub use advice::{ADVICE_SHARE, CurveReading, advise, read_curve};
pub use alignment::{
    RangedPoint, TimeRange, aligned_neighbours, alignment_penalties, interpolate, judge_penalty,
};
pub use ceiling::{IMPOSSIBLE_MARGIN, PLATEAU_SHARE, ceiling_verdict};
pub use crossover::crossovers;
pub use fit::{SizePoint, UNIT_MIN_F, UNIT_MIN_MISFIT, UNIT_SNAP, fit_model, fit_unit_model};
pub use quality::{
    DEVIATION_THRESHOLD, MAX_B_ABOVE_BEST, MAX_B_RELATIVE_SE, MAX_B_SENSITIVITY, MAX_POINT_ERROR,
    MAX_T0_RELATIVE_SE, MAX_T0_SENSITIVITY, MIN_POINTS_FROM_UNIT, MIN_R_SQUARED, deviations, judge,
};
