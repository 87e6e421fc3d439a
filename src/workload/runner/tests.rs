//! Unit tests of `runner`, kept beside it so the module reads as the code
//! it is.

use super::pass::{job_budget, job_region};
use super::*;
use crate::result::CaveatKind;

fn device() -> BlockDevice {
    BlockDevice {
        name: "sdz".into(),
        major: 8,
        minor: 0,
        disk: "sdz".into(),
        partition: false,
        size_bytes: 1 << 30,
        logical_block_size: 512,
        physical_block_size: 512,
        read_only: false,
        rotational: Some(false),
        model: None,
        loop_backing_file: None,
    }
}

/// The device I/O of a read of 64 MiB of which the device saw
/// `device_bytes` in `ios` requests, with the caveats it raised.
fn read_of_64_mib(
    device_bytes: u64,
    ios: u64,
) -> (crate::result::DeviceIo, Vec<crate::result::Caveat>) {
    let after = DiskStat {
        read_sectors: device_bytes / 512,
        read_ios: ios,
        ..DiskStat::default()
    };
    let mut warnings = Vec::new();
    let io = device_io(
        Some(&device()),
        Some(DiskStat::default()),
        Some(after),
        64 << 20,
        0,
        &mut warnings,
    )
    .unwrap();
    (io, warnings)
}

#[test]
fn a_device_that_saw_fewer_bytes_than_were_read_means_a_cache_answered() {
    let (io, warnings) = read_of_64_mib(8 << 20, 64);
    assert!((io.cache_served_fraction - 0.875).abs() < 1e-9);
    assert_eq!(io.avg_read_request_bytes, Some(131072.0));
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].kind() == CaveatKind::Cache
            && matches!(&warnings[0], crate::result::Caveat::CacheServed { served_pct, .. } if served_pct.round() == 88.0),
        "{:?}",
        warnings[0]
    );
}

#[test]
fn a_device_that_saw_every_byte_raises_no_warning() {
    let (io, warnings) = read_of_64_mib(64 << 20, 512);
    assert_eq!(io.cache_served_fraction, 0.0);
    assert!(warnings.is_empty());
}

#[test]
fn budgets_and_regions_split_exactly() {
    let spec = MeasureSpec::new(super::super::SpecRequest {
        rw: crate::vocab::Rw::Read,
        mix_read_percent: 0,
        block_size: 4096,
        queue_depth: 1,
        threads: 3,
        engine: crate::vocab::options::EngineKind::Sync,
        sqpoll: false,
        offset: 8192,
        span: 100 * 4096,
        align: 4096,
        size: Some(10 * 4096),
        time: None,
        ramp: None,
        pattern: crate::vocab::Pattern::Zeros,
        seed: 1,
        seed_given: true,
        verify: false,
        io: crate::vocab::options::IoMode::Direct,
    })
    .unwrap();
    let total: u64 = (0..3).map(|i| job_budget(&spec, 10 * 4096, i)).sum();
    assert_eq!(total, 10 * 4096);
    let regions: Vec<_> = (0..3).map(|i| job_region(&spec, i)).collect();
    assert_eq!(regions[0], (8192, 33 * 4096));
    assert_eq!(regions[1].0, 8192 + 33 * 4096);
    assert!(regions[2].0 + regions[2].1 <= spec.offset + spec.span);
}
