//! The rules of the drop search in numbers: what counts as a drop, as one
//! level, as a stall, and how much the search may cut, beside the
//! method's description in [`super`].

/// A drop is reported when the later speed is below this share of the
/// earlier one.
pub const DROP_RATIO: f64 = 0.7;
/// Fewest requests on each side of a split.
pub const MIN_SEGMENT: usize = 2;
/// Splits whose residual sum of squares exceeds the best by at most this
/// many residual variances are kept as plausible: `2·ln 32`, Royall's 1/32
/// likelihood support set.
pub const SUPPORT_RSS: f64 = 6.931_471_805_599_453;
/// Penalty of one more change point, in noise variances per `ln n`
/// (Schwarz's criterion charges 2; durations with stalls need more).
pub const PENALTY_PER_LN_N: f64 = 3.0;
/// The least noise assumed, as a share of the median duration: a simulated
/// card's durations differ only by rounding.
pub const NOISE_FLOOR: f64 = 0.005;
/// Neighbouring stretches whose speeds differ by less than this share are
/// one level.
pub const SAME_LEVEL: f64 = 0.1;
/// Most stretches the segmentation makes (the largest gains come first, so
/// the cap only drops the smallest changes, such as single stalls).
pub const MAX_SEGMENTS: usize = 64;
/// A stretch slower than both neighbours and shorter than this share of
/// the requests is a stall (a garbage collection, a FAT update), folded
/// into a neighbour when the levels are described.
pub const STALL_SHARE: f64 = 0.01;
/// Most successive differences the noise estimate looks at (evenly spread).
pub const NOISE_SAMPLE: usize = 1 << 17;
/// The largest flash program unit a periodic per-request cost is assumed
/// to follow: a 16 KiB page programmed on 4 planes of 4 dies at once.
/// With the request size it bounds the period of a page-tied cost (see
/// [`super::own_length::longest_period`]), which a drop's confidence must
/// have had room to see.
pub const MAX_PAGE: u64 = 256 << 10;
/// The largest allocation unit the SD specification defines (SDXC, 64 MB),
/// the unit of an erase-tied cost; a drop is stated with high confidence
/// only when the write around it had room for that period too.
pub const MAX_AU: u64 = 64 << 20;
/// The AU sizes of the SD specification that are not powers of two
/// (12 MB and 24 MB, three times one).
pub const THREE_TIMES_AUS: [u64; 2] = [12 << 20, 24 << 20];
/// Fewest requests on each side of a drop stated with high confidence:
/// below it the spread of a side rests on too few samples to say how
/// steady that side was.
pub const CONFIDENT_REQUESTS: usize = 16;
/// Most samples the spread of a side's speed is made of: the side is cut
/// into this many stretches of (nearly) equal length, each a throughput.
pub const SPREAD_SAMPLES: usize = 16;
