//! The machine a result was measured on: the same card in another reader
//! or another kernel can give other figures. And the state of the machine
//! at a moment ([`HostSnapshot`]): what else it was doing (load average,
//! CPU time by kind, page cache), read from `/proc` at the start and the
//! end of each measurement, so that `compare` can name what changed
//! between two runs besides the device (see `proc(5)` for the files).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Host facts of the probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostFacts {
    /// The machine's host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model from `/proc/cpuinfo`; null when it names none.
    pub cpu_model: Option<String>,
    /// The iocurve version that measured.
    pub iocurve_version: String,
}

/// This machine.
pub fn this_host() -> HostFacts {
    let uname = rustix::system::uname();
    HostFacts {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
        cpu_model: std::fs::read_to_string(Path::new("/proc/cpuinfo"))
            .ok()
            .and_then(|t| cpu_model(&t)),
        iocurve_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The CPU model from `/proc/cpuinfo` text: `model name` on x86, `Model`
/// or `Hardware` on ARM boards, `cpu` on POWER.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "Hardware", "cpu"] {
        let found = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        });
        if let Some(v) = found.filter(|v| !v.is_empty()) {
            return Some(v);
        }
    }
    None
}

/// What the machine was doing at one moment, as `/proc` reports it.
/// Every part is optional: a container may hide a file, and a missing
/// figure is better than a failed measurement.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostSnapshot {
    /// One-minute load average (`/proc/loadavg`, first field).
    pub load_1m: Option<f64>,
    /// Cumulative CPU time of all CPUs by kind (`/proc/stat`, `cpu` line).
    pub cpu: Option<CpuTimes>,
    /// Page cache and dirty pages (`/proc/meminfo`).
    pub memory: Option<MemoryState>,
    /// CPU pressure: microseconds in which some task waited for a CPU
    /// (`/proc/pressure/cpu`, `some total`), and the monotonic clock then,
    /// in microseconds; null without PSI.
    pub cpu_pressure: Option<(u64, u64)>,
    /// Tasks runnable at this moment (`procs_running` of `/proc/stat`,
    /// the reader included) and the CPUs online (its `cpuN` lines).
    pub runnable: Option<Runnable>,
}

/// Runnable tasks against CPUs at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Runnable {
    pub tasks: u32,
    pub cpus: u32,
}

/// `procs_running` and the count of `cpuN` lines of `/proc/stat` text.
pub fn runnable(stat: &str) -> Option<Runnable> {
    let tasks = stat
        .lines()
        .find_map(|l| l.strip_prefix("procs_running "))?
        .trim()
        .parse()
        .ok()?;
    let cpus = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count() as u32;
    (cpus > 0).then_some(Runnable { tasks, cpus })
}

/// The aggregate `cpu` line of `/proc/stat`, in clock ticks (USER_HZ).
/// Guest time is already counted in user and nice, so it is not kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time a hypervisor ran something else while this guest wanted the CPU.
    pub steal: u64,
}

impl CpuTimes {
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Over the time from `earlier` to `self`: the share of all CPUs' time
    /// that was busy (neither idle nor waiting for I/O; steal included,
    /// since a stolen CPU was not free either) and the share stolen.
    /// `None` when no tick passed.
    pub fn shares_since(&self, earlier: &CpuTimes) -> Option<CpuShares> {
        let total = self
            .total()
            .checked_sub(earlier.total())
            .filter(|t| *t > 0)? as f64;
        let idle = (self.idle + self.iowait).saturating_sub(earlier.idle + earlier.iowait) as f64;
        let steal = self.steal.saturating_sub(earlier.steal) as f64;
        Some(CpuShares {
            busy: (1.0 - idle / total).clamp(0.0, 1.0),
            steal: (steal / total).clamp(0.0, 1.0),
        })
    }
}

/// Shares of all CPUs' time over an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuShares {
    /// Busy (not idle, not waiting for I/O), this process included.
    pub busy: f64,
    /// Stolen by the hypervisor.
    pub steal: f64,
}

/// Page cache and dirty pages, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryState {
    /// `Cached`: file pages in the page cache.
    pub cached_bytes: u64,
    /// `Dirty`: pages waiting to be written back.
    pub dirty_bytes: u64,
}

/// The machine's state now, from `/proc`.
pub fn snapshot() -> HostSnapshot {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let stat = read("/proc/stat");
    HostSnapshot {
        load_1m: read("/proc/loadavg").and_then(|t| load_1m(&t)),
        cpu: stat.as_deref().and_then(cpu_times),
        runnable: stat.as_deref().and_then(runnable),
        memory: read("/proc/meminfo").and_then(|t| memory_state(&t)),
        cpu_pressure: read("/proc/pressure/cpu")
            .and_then(|t| cpu_pressure_us(&t))
            .map(|waited| {
                let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
                let now_us = now.tv_sec as u64 * 1_000_000 + now.tv_nsec as u64 / 1_000;
                (waited, now_us)
            }),
    }
}

/// The `some total` of `/proc/pressure/cpu` text: microseconds in which
/// at least one task waited for a CPU.
pub fn cpu_pressure_us(psi: &str) -> Option<u64> {
    let some = psi.lines().find(|l| l.starts_with("some "))?;
    some.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// The share of the time between two snapshots in which some task waited
/// for a CPU (0 to 1); `None` without PSI in both.
pub fn cpu_pressure_share(start: &HostSnapshot, end: &HostSnapshot) -> Option<f64> {
    let ((w0, t0), (w1, t1)) = (start.cpu_pressure?, end.cpu_pressure?);
    let wall = t1.checked_sub(t0).filter(|w| *w > 0)?;
    Some((w1.saturating_sub(w0) as f64 / wall as f64).min(1.0))
}

/// The one-minute load average of `/proc/loadavg` text.
pub fn load_1m(loadavg: &str) -> Option<f64> {
    let v: f64 = loadavg.split_whitespace().next()?.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// The aggregate `cpu` line of `/proc/stat` text. Kernels before 2.6.11
/// have no steal column; it reads as 0.
pub fn cpu_times(stat: &str) -> Option<CpuTimes> {
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    (v.len() >= 4).then(|| CpuTimes {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// `Cached` and `Dirty` of `/proc/meminfo` text (kB there, bytes here).
pub fn memory_state(meminfo: &str) -> Option<MemoryState> {
    let field = |name: &str| {
        meminfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            if k.trim() != name {
                return None;
            }
            let kb: u64 = v.split_whitespace().next()?.parse().ok()?;
            Some(kb.saturating_mul(1024))
        })
    };
    Some(MemoryState {
        cached_bytes: field("Cached")?,
        dirty_bytes: field("Dirty")?,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn runnable_tasks_and_cpus_from_proc_stat() {
        let stat =
            "cpu  1 2 3 4\ncpu0 1 1 1 1\ncpu1 1 1 1 1\nintr 5\nprocs_running 3\nprocs_blocked 0\n";
        assert_eq!(runnable(stat), Some(Runnable { tasks: 3, cpus: 2 }));
        assert_eq!(
            runnable("cpu  1 2 3 4\nprocs_running 1\n"),
            None,
            "no cpuN lines"
        );
        assert_eq!(runnable("cpu0 1 1 1 1\n"), None, "no procs_running");
        assert!(
            runnable(&std::fs::read_to_string("/proc/stat").unwrap()).is_some_and(|r| r.tasks >= 1)
        );
    }

    use super::*;

    #[test]
    fn proc_files_parse() {
        assert_eq!(load_1m("3.94 2.10 1.02 4/812 33161\n"), Some(3.94));
        assert_eq!(load_1m(""), None);
        assert_eq!(load_1m("x 1 2"), None);
        let stat = "cpu  4705 150 1120 16250 520 0 30 77 0 0\ncpu0 2000 75 560 8000 260 0 15 40 0 0\nintr 1\n";
        let t = cpu_times(stat).unwrap();
        assert_eq!((t.user, t.idle, t.iowait, t.steal), (4705, 16250, 520, 77));
        assert_eq!(cpu_times("cpu0 1 2 3 4\n"), None, "the aggregate line only");
        assert_eq!(cpu_times("cpu  1 2 x 4\n"), None);
        // A kernel without iowait..steal columns.
        assert_eq!(cpu_times("cpu  1 2 3 4\n").unwrap().steal, 0);
        let mem = "MemTotal:       16314220 kB\nCached:          5120000 kB\nDirty:              1024 kB\nSwapCached: 0 kB\n";
        let m = memory_state(mem).unwrap();
        assert_eq!(
            (m.cached_bytes, m.dirty_bytes),
            (5_120_000 * 1024, 1024 * 1024)
        );
        assert_eq!(memory_state("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn cpu_shares_over_an_interval() {
        let a = CpuTimes {
            user: 100,
            idle: 800,
            iowait: 100,
            ..Default::default()
        };
        // 1000 ticks later: 500 busy (400 user, 100 steal), 500 idle.
        let b = CpuTimes {
            user: 500,
            idle: 1300,
            iowait: 100,
            steal: 100,
            ..Default::default()
        };
        let s = b.shares_since(&a).unwrap();
        assert!(
            (s.busy - 0.5).abs() < 1e-12 && (s.steal - 0.1).abs() < 1e-12,
            "{s:?}"
        );
        assert_eq!(a.shares_since(&a), None, "no tick passed");
        assert_eq!(a.shares_since(&b), None, "counters went backwards");
    }

    #[test]
    fn this_machine_has_a_snapshot() {
        let s = snapshot();
        if std::path::Path::new("/proc/loadavg").exists() {
            assert!(
                s.load_1m.is_some() && s.cpu.is_some() && s.memory.is_some(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn cpu_models() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(x86).unwrap(), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        let pi =
            "processor\t: 0\nBogoMIPS\t: 108.00\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
        assert_eq!(cpu_model(pi).unwrap(), "Raspberry Pi 4 Model B Rev 1.4");
        assert_eq!(cpu_model("processor : 0\n"), None);
    }
}
