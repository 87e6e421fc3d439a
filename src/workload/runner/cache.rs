//! What reached the device and what the page cache still held: the block
//! device's own counters around a pass, and the eviction of a region with
//! its proof (mincore), so a cold read is known to be cold.

use super::*;

/// The device counters over the measurement, and the verdict on caching:
/// when the device served clearly fewer bytes than were read, a cache
/// answered and the figure is not the device's.
pub(super) fn device_io(
    device: Option<&BlockDevice>,
    before: Option<DiskStat>,
    after: Option<DiskStat>,
    ours_read: u64,
    ours_write: u64,
    warnings: &mut Vec<Caveat>,
) -> Option<DeviceIo> {
    let (device, before, after) = (device?, before?, after?);
    let d = after.since(&before);
    let read_bytes = d.read_sectors * 512;
    let write_bytes = d.write_sectors * 512;
    let served = if ours_read >= CACHE_CHECK_MIN_BYTES {
        (1.0 - read_bytes as f64 / ours_read as f64).max(0.0)
    } else {
        0.0
    };
    if served > 0.1 {
        warnings.push(Caveat::CacheServed {
            device: device.name.clone(),
            device_read_bytes: read_bytes,
            iocurve_read_bytes: ours_read,
            served_pct: served * 100.0,
        });
    }
    let avg = |bytes: u64, reqs: u64| (reqs > 0).then(|| bytes as f64 / reqs as f64);
    Some(DeviceIo {
        device: device.name.clone(),
        read_requests: d.read_ios,
        write_requests: d.write_ios,
        read_merges: d.read_merges,
        write_merges: d.write_merges,
        read_bytes,
        write_bytes,
        busy_ms: d.io_ticks_ms,
        avg_read_request_bytes: avg(read_bytes, d.read_ios),
        avg_write_request_bytes: avg(write_bytes, d.write_ios),
        iocurve_read_bytes: ours_read,
        iocurve_write_bytes: ours_write,
        cache_served_fraction: served,
    })
}

/// Drops the region from the page cache and checks with mincore(2) that
/// nothing of it stayed; a buffered read test would otherwise time memory.
pub(super) fn evict_and_prove(fd: BorrowedFd<'_>, spec: &MeasureSpec, warnings: &mut Vec<Caveat>) {
    evict_region(fd, spec.offset, spec.span, warnings);
}

/// [`evict_and_prove`] for any region: warnings say what could not be
/// evicted or proved.
pub fn evict_region(fd: BorrowedFd<'_>, offset: u64, span: u64, warnings: &mut Vec<Caveat>) {
    let _ = rustix::fs::fdatasync(fd);
    let len = NonZeroU64::new(span);
    if let Err(e) = rustix::fs::fadvise(fd, offset, len, rustix::fs::Advice::DontNeed) {
        warnings.push(Caveat::EvictionFailed {
            os_error: e.to_string(),
        });
        return;
    }
    match sys::resident_pages(fd, offset, span) {
        Ok((0, _)) => {}
        Ok((resident, total)) => warnings.push(Caveat::PagesResident {
            resident_pages: resident,
            total_pages: total,
        }),
        Err(e) => warnings.push(Caveat::EvictionUnproved {
            os_error: e.to_string(),
        }),
    }
}
