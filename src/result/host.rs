//! What the machine was doing while a measurement ran, besides iocurve:
//! the things that change between two runs of one device and move its
//! figures without the device changing (another process's load, a
//! hypervisor stealing CPU, other I/O on the same device, a page cache
//! full of the target). Recorded at the start and end of every
//! measurement, so that `compare` can name what differed between two runs
//! rather than blame the device.

use crate::probe::host::{HostSnapshot, MemoryState};
use serde::{Deserialize, Serialize};

/// The machine at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostSample {
    /// One-minute load average (`/proc/loadavg`); null where unreadable.
    pub load_1m: Option<f64>,
    /// Bytes of file pages in the page cache (`Cached` of `/proc/meminfo`).
    pub cached_bytes: Option<u64>,
    /// Bytes of dirty pages waiting for write-back (`Dirty` of
    /// `/proc/meminfo`): a large backlog writes behind a measurement.
    pub dirty_bytes: Option<u64>,
    /// Tasks runnable at this moment, iocurve's reading thread included
    /// (`procs_running` of `/proc/stat`); absent where unreadable and in
    /// runs stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runnable_tasks: Option<u32>,
    /// CPUs online at this moment (the `cpuN` lines of `/proc/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online_cpus: Option<u32>,
}

impl HostSample {
    fn of(s: &HostSnapshot) -> HostSample {
        HostSample {
            load_1m: s.load_1m,
            cached_bytes: s.memory.map(|m: MemoryState| m.cached_bytes),
            dirty_bytes: s.memory.map(|m| m.dirty_bytes),
            runnable_tasks: s.runnable.map(|r| r.tasks),
            online_cpus: s.runnable.map(|r| r.cpus),
        }
    }

    /// More tasks runnable than CPUs: something waited for a CPU at this
    /// moment. `None` where not recorded.
    pub fn oversubscribed(&self) -> Option<bool> {
        Some(self.runnable_tasks? > self.online_cpus?)
    }
}

/// The machine around one measurement: at its start, at its end, and over
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostConditions {
    /// Just before the measurement's passes started.
    pub start: HostSample,
    /// Just after they ended.
    pub end: HostSample,
    /// Share of all CPUs' time that was busy over the measurement (not
    /// idle, not waiting for I/O), iocurve's own included (`/proc/stat`);
    /// null where unreadable.
    pub cpu_busy_share: Option<f64>,
    /// Share of all CPUs' time a hypervisor stole over the measurement
    /// (`steal` of `/proc/stat`); null where unreadable.
    pub cpu_steal_share: Option<f64>,
    /// Share of the measurement's time in which some task waited for a
    /// CPU (`/proc/pressure/cpu`): others' work kept the CPUs busy, or
    /// more threads ran than there are CPUs. Absent without PSI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_share: Option<f64>,
    /// Bytes the block device read over the measurement beyond what
    /// iocurve read (`/sys/block/<dev>/stat` deltas minus iocurve's own
    /// I/O): another process reading the same device. Null without the
    /// device's counters.
    pub other_read_bytes: Option<u64>,
    /// Bytes the block device wrote beyond what iocurve wrote: another
    /// process's writes, or write-back of dirty pages. Null without the
    /// device's counters.
    pub other_write_bytes: Option<u64>,
    /// Share of the measured region resident in the page cache when the
    /// passes started (mincore); recorded for buffered I/O only, where the
    /// cache can serve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_resident_share: Option<f64>,
    /// Share of the layer beneath the target (a loop device's backing
    /// file) resident in the page cache when the passes started (mincore):
    /// reads of the stacked device that miss its own cache may be served
    /// from this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_resident_share: Option<f64>,
}

impl HostConditions {
    /// The conditions between two snapshots, with the device's own
    /// counters (`device_io`) when it has them.
    pub fn between(
        start: &HostSnapshot,
        end: &HostSnapshot,
        device_io: Option<&super::DeviceIo>,
        target_resident_share: Option<f64>,
    ) -> HostConditions {
        let shares = match (start.cpu, end.cpu) {
            (Some(a), Some(b)) => b.shares_since(&a),
            _ => None,
        };
        HostConditions {
            start: HostSample::of(start),
            end: HostSample::of(end),
            cpu_busy_share: shares.map(|s| s.busy),
            cpu_steal_share: shares.map(|s| s.steal),
            cpu_pressure_share: crate::probe::host::cpu_pressure_share(start, end),
            other_read_bytes: device_io.map(|d| d.read_bytes.saturating_sub(d.iocurve_read_bytes)),
            other_write_bytes: device_io
                .map(|d| d.write_bytes.saturating_sub(d.iocurve_write_bytes)),
            target_resident_share,
            backing_resident_share: None,
        }
    }

    /// Other I/O on the device, both directions; null without counters.
    pub fn other_bytes(&self) -> Option<u64> {
        Some(self.other_read_bytes? + self.other_write_bytes?)
    }

    /// The mean of the load at start and end (either alone when the
    /// other is missing).
    pub fn load(&self) -> Option<f64> {
        match (self.start.load_1m, self.end.load_1m) {
            (Some(a), Some(b)) => Some((a + b) / 2.0),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::host::CpuTimes;

    #[test]
    fn other_io_is_what_the_device_did_beyond_iocurve() {
        let mut io = crate::testdata::device_io();
        io.read_bytes = 10 << 20;
        io.iocurve_read_bytes = 8 << 20;
        io.write_bytes = 41_000_000;
        io.iocurve_write_bytes = 0;
        let start = HostSnapshot {
            load_1m: Some(0.2),
            cpu: Some(CpuTimes {
                user: 10,
                idle: 90,
                ..Default::default()
            }),
            memory: Some(MemoryState {
                cached_bytes: 1 << 30,
                dirty_bytes: 4096,
            }),
            cpu_pressure: Some((1_000, 0)),
            runnable: Some(crate::probe::host::Runnable { tasks: 3, cpus: 2 }),
        };
        let end = HostSnapshot {
            load_1m: Some(0.4),
            cpu: Some(CpuTimes {
                user: 60,
                idle: 140,
                steal: 10,
                ..Default::default()
            }),
            memory: None,
            cpu_pressure: Some((251_000, 1_000_000)),
            runnable: None,
        };
        let c = HostConditions::between(&start, &end, Some(&io), Some(0.25));
        assert_eq!(c.other_read_bytes, Some(2 << 20));
        assert_eq!(c.other_write_bytes, Some(41_000_000));
        assert_eq!(c.other_bytes(), Some((2 << 20) + 41_000_000));
        assert_eq!(c.cpu_pressure_share, Some(0.25));
        assert_eq!(c.start.oversubscribed(), Some(true), "3 runnable on 2 CPUs");
        assert_eq!(c.end.oversubscribed(), None, "not recorded");
        assert!((c.load().unwrap() - 0.3).abs() < 1e-12);
        // 110 ticks: 50 user + 10 steal busy, 50 idle.
        assert!((c.cpu_busy_share.unwrap() - 60.0 / 110.0).abs() < 1e-12);
        assert!((c.cpu_steal_share.unwrap() - 10.0 / 110.0).abs() < 1e-12);
        assert_eq!(c.end.cached_bytes, None);
        // iocurve read more than the device did (a cache served it): no
        // negative other I/O.
        io.read_bytes = 0;
        let c = HostConditions::between(&start, &end, Some(&io), None);
        assert_eq!(c.other_read_bytes, Some(0));
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["start"]["load_1m"], 0.2);
        assert!(json.get("target_resident_share").is_none());
        let back: HostConditions = serde_json::from_value(json).unwrap();
        assert_eq!(back, c);
    }
}
