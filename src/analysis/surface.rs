//! What a surface scan says: where to sample, which stretches are slow, and
//! how the start of the device compares with its end.
//!
//! A hard disk records more sectors per track on its outer edge, where LBA 0
//! lies, so its sequential speed falls towards the end, often to about half
//! (zoned bit recording); a flash device should be flat, and a dip means a
//! worn, remapped or differently managed stretch. Sampling evenly spaced
//! positions from the first byte to the last, as disk-surface scanners do,
//! answers both questions without reading the whole device. Pure functions;
//! no I/O.

use crate::result::device::{SlowRegion, SurfaceReport, SurfaceSample};

/// `count` sample offsets from 0 to the last whole sample, evenly spaced
/// and aligned down to `align` (duplicates on a tiny device removed).
pub fn positions(device: u64, sample: u64, count: u32, align: u64) -> Vec<u64> {
    let align = align.max(1);
    let last = device.saturating_sub(sample) / align * align;
    let n = u64::from(count.max(2));
    let mut out: Vec<u64> = (0..n)
        .map(|i| (u128::from(last) * u128::from(i) / u128::from(n - 1)) as u64 / align * align)
        .collect();
    out.dedup();
    out
}

/// The median of the samples' read speeds.
pub fn median_read(samples: &[SurfaceSample]) -> f64 {
    let speeds: Vec<f64> = samples
        .iter()
        .filter(|s| s.error.is_none())
        .map(|s| s.read_mb_s)
        .collect();
    crate::stats::Spread::of(&speeds).map_or(0.0, |s| s.median)
}

/// Runs of consecutive samples slower than `threshold_percent` of the
/// median; each ends where its last sample ends.
pub fn slow_regions(
    samples: &[SurfaceSample],
    sample_bytes: u64,
    device: u64,
    median: f64,
    threshold_percent: f64,
) -> Vec<SlowRegion> {
    let limit = median * threshold_percent / 100.0;
    let mut out: Vec<SlowRegion> = Vec::new();
    let mut open = false;
    for s in samples.iter().filter(|s| s.error.is_none()) {
        if s.read_mb_s >= limit {
            open = false;
            continue;
        }
        let end = (s.offset + sample_bytes).min(device);
        match out.last_mut().filter(|_| open) {
            Some(r) => {
                r.end = end;
                r.end_percent = percent(end, device);
                r.samples += 1;
                r.min_mb_s = r.min_mb_s.min(s.read_mb_s);
            }
            None => out.push(SlowRegion {
                start: s.offset,
                end,
                start_percent: s.percent,
                end_percent: percent(end, device),
                samples: 1,
                min_mb_s: s.read_mb_s,
            }),
        }
        open = true;
    }
    out
}

/// Mean read speed of the first tenth of the samples over the last tenth
/// (at least one sample each).
pub fn outer_inner_ratio(samples: &[SurfaceSample]) -> Option<f64> {
    let ok: Vec<f64> = samples
        .iter()
        .filter(|s| s.error.is_none())
        .map(|s| s.read_mb_s)
        .collect();
    if ok.len() < 2 {
        return None;
    }
    let k = (ok.len() / 10).max(1);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let inner = mean(&ok[ok.len() - k..]);
    (inner > 0.0).then(|| mean(&ok[..k]) / inner)
}

/// The scan's report: the samples with their median read speed, the slow
/// stretches below `threshold_percent` of it, and outer against inner.
pub fn report(
    samples: Vec<SurfaceSample>,
    device: u64,
    sample_bytes: u64,
    block_size: u64,
    threshold_percent: f64,
) -> SurfaceReport {
    let median = median_read(&samples);
    SurfaceReport {
        device_bytes: device,
        sample_bytes,
        block_size,
        median_read_mb_s: median,
        threshold_percent,
        slow_regions: slow_regions(&samples, sample_bytes, device, median, threshold_percent),
        outer_inner_ratio: outer_inner_ratio(&samples),
        samples,
    }
}

/// Positions whose read, access or write failed.
pub fn failed_positions(samples: &[SurfaceSample]) -> usize {
    samples.iter().filter(|s| s.error.is_some()).count()
}

/// `offset` as a share of `device`, in percent.
pub fn percent(offset: u64, device: u64) -> f64 {
    if device == 0 {
        0.0
    } else {
        offset as f64 * 100.0 / device as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(offset: u64, mb: f64) -> SurfaceSample {
        SurfaceSample {
            offset,
            percent: percent(offset, 100 << 20),
            read_mb_s: mb,
            access_ns: None,
            write_mb_s: None,
            error: None,
        }
    }

    #[test]
    fn positions_cover_the_device_evenly() {
        let p = positions(100 << 20, 1 << 20, 100, 4096);
        assert_eq!(p.len(), 100);
        assert_eq!(p[0], 0);
        assert_eq!(*p.last().unwrap(), 99 << 20);
        assert!(p.windows(2).all(|w| w[1] - w[0] == 1 << 20));
        let tiny = positions(8192, 4096, 100, 4096);
        assert_eq!(tiny, vec![0, 4096]);
    }

    #[test]
    fn slow_runs_merge_and_the_edges_compare() {
        let speeds = [
            100.0, 100.0, 30.0, 20.0, 100.0, 40.0, 100.0, 100.0, 100.0, 50.0,
        ];
        let s: Vec<_> = speeds
            .iter()
            .enumerate()
            .map(|(i, &v)| sample(i as u64 * (10 << 20), v))
            .collect();
        let regions = slow_regions(&s, 1 << 20, 100 << 20, median_read(&s), 50.0);
        assert_eq!(regions.len(), 2);
        assert_eq!((regions[0].start, regions[0].samples), (20 << 20, 2));
        assert_eq!(regions[0].end, (30 << 20) + (1 << 20));
        assert_eq!(regions[0].min_mb_s, 20.0);
        assert_eq!(regions[1].start, 50 << 20);
        assert_eq!(outer_inner_ratio(&s), Some(2.0));
    }

    #[test]
    fn the_report_gathers_median_slow_regions_and_failures() {
        let mut s: Vec<_> = [100.0, 100.0, 30.0, 100.0, 50.0]
            .iter()
            .enumerate()
            .map(|(i, &v)| sample(i as u64 * (20 << 20), v))
            .collect();
        s[1].error = Some("EIO".into());
        assert_eq!(failed_positions(&s), 1);
        let r = report(s, 100 << 20, 1 << 20, 1 << 16, 50.0);
        // The failed sample counts in neither the median nor the regions.
        assert_eq!(r.median_read_mb_s, 75.0);
        assert_eq!(r.slow_regions.len(), 1);
        assert_eq!(r.slow_regions[0].start, 40 << 20);
        assert_eq!(
            (r.device_bytes, r.sample_bytes, r.block_size),
            (100 << 20, 1 << 20, 1 << 16)
        );
        assert_eq!((r.threshold_percent, r.samples.len()), (50.0, 5));
        assert_eq!(r.outer_inner_ratio, Some(2.0));
    }
}
