//! What the alone measurements of `iocurve copy` say about the copy: which
//! side held it back, and how fast a copy that reads a block then writes it,
//! never both at once, could go at most. Pure functions; no I/O.

use crate::result::Bottleneck;

/// The slower side, when both were measured alone: `source` when reading
/// the image was slower than writing the destination, else `destination`.
pub fn bottleneck(read_alone: Option<f64>, write_alone: Option<f64>) -> Option<Bottleneck> {
    let (r, w) = read_alone.zip(write_alone)?;
    Some(if r < w {
        Bottleneck::Source
    } else {
        Bottleneck::Destination
    })
}

/// The speed of a strictly serial copy at the speeds measured alone: each
/// byte takes its read time plus its write time, `1 / (1/r + 1/w)` MB/s.
pub fn serial_estimate(read_alone: Option<f64>, write_alone: Option<f64>) -> Option<f64> {
    read_alone
        .zip(write_alone)
        .filter(|(r, w)| *r > 0.0 && *w > 0.0)
        .map(|(r, w)| 1.0 / (1.0 / r + 1.0 / w))
}

/// The copy's block: `asked` rounded up to whole logical blocks of both
/// sides (`lb`), at least one.
pub fn block_size(asked: u64, lb: u64) -> u64 {
    asked.max(lb).div_ceil(lb) * lb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slower_side_is_the_bottleneck() {
        assert_eq!(bottleneck(Some(20.0), Some(90.0)), Some(Bottleneck::Source));
        assert_eq!(
            bottleneck(Some(90.0), Some(20.0)),
            Some(Bottleneck::Destination)
        );
        // A tie goes to the destination.
        assert_eq!(
            bottleneck(Some(50.0), Some(50.0)),
            Some(Bottleneck::Destination)
        );
        assert_eq!(bottleneck(None, Some(20.0)), None);
    }

    #[test]
    fn a_serial_copy_adds_read_and_write_times() {
        assert_eq!(serial_estimate(Some(100.0), Some(100.0)), Some(50.0));
        let e = serial_estimate(Some(60.0), Some(30.0)).unwrap();
        assert!((e - 20.0).abs() < 1e-12);
        assert_eq!(serial_estimate(Some(0.0), Some(30.0)), None);
        assert_eq!(serial_estimate(Some(60.0), None), None);
    }

    #[test]
    fn the_block_is_whole_logical_blocks() {
        assert_eq!(block_size(4 << 20, 512), 4 << 20);
        assert_eq!(block_size(1000, 512), 1024);
        assert_eq!(block_size(1, 4096), 4096);
    }
}
