//! The surface scan of `iocurve surface`: at each of evenly spaced positions
//! from the first byte to the last, a sequential read of one sample (its
//! speed), a few random 4 KiB reads in the band around it (the access time)
//! and, when writes are allowed, a sequential write of the same sample.
//! Where to sample and what the samples say is [`crate::analysis::surface`].

use crate::analysis::surface::{percent, positions};
use crate::error::usage;
use crate::interrupt;
use crate::live::progress;
use crate::medium::OpenTarget;
use crate::result::device::SurfaceSample;
use crate::vocab::Rw;
use crate::workload::MeasureSpec;
use crate::workload::spec::PLAIN_RANDOM_ALIGN;
use anyhow::Result;
use indicatif::ProgressBar;
use std::sync::atomic::Ordering;

/// Size of the random reads that time access.
pub const ACCESS_BYTES: u64 = PLAIN_RANDOM_ALIGN;

/// What the user asked of the scan.
#[derive(Debug, Clone, Copy)]
pub struct ScanAsk {
    /// Positions to sample.
    pub samples: u32,
    /// Bytes read (and written) at each position.
    pub sample_size: u64,
    /// Bytes per request of the sequential passes.
    pub bs: u64,
    /// Random reads per position that time access (0: none).
    pub access_reads: u32,
    pub seed: u64,
    /// Whether each sample is written too.
    pub writes: bool,
}

/// What one scan needs once the target is open.
#[derive(Debug, Clone)]
pub struct ScanPlan {
    pub positions: Vec<u64>,
    pub sample: u64,
    pub bs: u64,
    /// Stretch around each position where access reads land.
    pub band: u64,
    pub access_reads: u32,
    pub seed: u64,
    pub writes: bool,
}

impl ScanPlan {
    /// The plan for an open target; a directory is refused (a scan needs a
    /// whole device or file).
    pub fn for_target(
        ask: ScanAsk,
        target: &OpenTarget,
        asked: &std::path::Path,
    ) -> Result<ScanPlan> {
        let info = &target.info;
        if info.kind == crate::result::TargetKind::Directory {
            return Err(crate::error::usage(format!(
                "surface scans a whole device or file; {} is a directory: give a device such as /dev/sdb or a file",
                asked.display()
            )));
        }
        ScanPlan::new(
            ask,
            info.size_bytes,
            info.logical_block_size.into(),
            &info.path,
        )
    }

    /// The scan of `ask` on a target of `size` bytes and `lb`-byte logical
    /// blocks: sample and block size rounded down to whole blocks.
    pub fn new(ask: ScanAsk, size: u64, lb: u64, path: &str) -> Result<ScanPlan> {
        let lb = lb.max(512);
        let sample = ask.sample_size.min(size) / lb * lb;
        let bs = ask.bs.min(sample) / lb * lb;
        if sample == 0 || bs == 0 {
            return Err(usage(format!(
                "--sample-size and --bs must hold at least one {lb}-byte block of {path}"
            )));
        }
        Ok(ScanPlan {
            positions: positions(size, sample, ask.samples, lb.max(ACCESS_BYTES)),
            sample,
            bs,
            band: (size / u64::from(ask.samples)).clamp(sample, size),
            access_reads: ask.access_reads,
            seed: ask.seed,
            writes: ask.writes,
        })
    }

    /// The regions the scan writes, to journal before it starts.
    pub fn regions(&self) -> Vec<(u64, u64)> {
        self.positions.iter().map(|&o| (o, self.sample)).collect()
    }
}

/// Scans every position in order; stops at Ctrl-C, and at a failed write
/// (whose message is returned: the rest of the scan is unsafe to go on).
pub fn scan_all(target: &OpenTarget, plan: &ScanPlan) -> (Vec<SurfaceSample>, Option<String>) {
    let bar = progress::bar(
        "surface",
        progress::Goal::Bytes(plan.positions.len() as u64),
    );
    let mut samples = Vec::with_capacity(plan.positions.len());
    let mut error = None;
    for (i, &offset) in plan.positions.iter().enumerate() {
        let s = scan_one(target, plan, offset, &bar);
        bar.set_position(i as u64 + 1);
        let failed = s.error.clone();
        samples.push(s);
        if interrupt::stop_flag().load(Ordering::Relaxed) {
            break;
        }
        if let Some(e) = failed.filter(|_| plan.writes) {
            // A failed write leaves the rest of the scan unsafe to go on.
            error = Some(e);
            break;
        }
    }
    bar.finish_and_clear();
    (samples, error)
}

/// Reads (and writes) one position; an I/O error marks the sample and the
/// scan goes on (a read error is a finding, not the end).
fn scan_one(target: &OpenTarget, plan: &ScanPlan, offset: u64, bar: &ProgressBar) -> SurfaceSample {
    let size = target.info.size_bytes;
    let mut s = SurfaceSample {
        offset,
        percent: percent(offset, size),
        read_mb_s: 0.0,
        access_ns: None,
        write_mb_s: None,
        error: None,
    };
    let region = (offset, plan.sample);
    let read = match MeasureSpec::plain(Rw::Read, plan.bs, region, plan.sample, plan.seed) {
        Ok(spec) => spec,
        Err(e) => {
            return SurfaceSample {
                error: Some(e.to_string()),
                ..s
            };
        }
    };
    match crate::workload::repeat::measure(target, &read, "surface read", Some(bar)) {
        Ok(m) => s.read_mb_s = m.mb_per_s,
        Err(f) => s.error = Some(crate::engine::io_failure_message(&f.error)),
    }
    let band = (offset, plan.band.min(size - offset));
    // A target smaller than one access read has no access time.
    if plan.access_reads > 0 && s.error.is_none() && band.1 >= ACCESS_BYTES {
        let bytes = u64::from(plan.access_reads) * ACCESS_BYTES;
        let seed = plan.seed ^ offset;
        match MeasureSpec::plain(Rw::RandRead, ACCESS_BYTES, band, bytes, seed) {
            Ok(spec) => {
                match crate::workload::repeat::measure(target, &spec, "surface access", Some(bar)) {
                    Ok(m) => s.access_ns = m.latency.map(|l| l.p50_ns),
                    Err(f) => s.error = Some(crate::engine::io_failure_message(&f.error)),
                }
            }
            Err(e) => s.error = Some(e.to_string()),
        }
    }
    if plan.writes && s.error.is_none() {
        match MeasureSpec::plain(Rw::Write, plan.bs, region, plan.sample, plan.seed) {
            Ok(write) => {
                match crate::workload::repeat::measure(target, &write, "surface write", Some(bar)) {
                    Ok(m) => s.write_mb_s = Some(m.mb_per_s),
                    Err(f) => s.error = Some(crate::engine::io_failure_message(&f.error)),
                }
            }
            Err(e) => s.error = Some(e.to_string()),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> ScanAsk {
        ScanAsk {
            samples: 100,
            sample_size: 1 << 20,
            bs: 1 << 20,
            access_reads: 16,
            seed: 1,
            writes: false,
        }
    }

    #[test]
    fn a_plan_rounds_to_whole_blocks_and_spreads_its_positions() {
        let plan = ScanPlan::new(ask(), 100 << 20, 512, "card").unwrap();
        assert_eq!(
            (plan.sample, plan.bs, plan.band),
            (1 << 20, 1 << 20, 1 << 20)
        );
        assert_eq!(plan.positions.len(), 100);
        assert_eq!(plan.regions()[99], (99 << 20, 1 << 20));
        let odd = ScanAsk {
            sample_size: (1 << 20) + 100,
            bs: 5000,
            samples: 10,
            ..ask()
        };
        let plan = ScanPlan::new(odd, 100 << 20, 4096, "card").unwrap();
        assert_eq!((plan.sample, plan.bs, plan.band), (1 << 20, 4096, 10 << 20));
    }

    #[test]
    fn a_sample_smaller_than_a_block_is_refused() {
        let tiny = ScanAsk {
            sample_size: 100,
            ..ask()
        };
        let e = ScanPlan::new(tiny, 100 << 20, 512, "card").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--sample-size and --bs must hold at least one 512-byte block of card"
        );
    }
}
