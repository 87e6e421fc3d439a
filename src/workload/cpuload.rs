//! `--cpu-load PCT`: busy threads that take a chosen share of every CPU while
//! a test runs, so a user sees how the transfer speed depends on the CPU left
//! to it (the question of the 6502 LOAD report: does throughput scale with
//! the CPU available to the loader?).
//!
//! One thread per allowed CPU, pinned to it, runs a steady duty cycle: spin
//! for `PCT`% of a short period, sleep for the rest. A short period (10 ms)
//! keeps the load smooth at the time scale of one I/O burst instead of
//! alternating long busy and idle phases. The threads stop at the next period
//! boundary when the guard is stopped or dropped, and report the CPU time they
//! actually burned, so the result records the load that was delivered, not
//! only the load that was asked for.

use crate::result::apps::CpuLoadInfo;
use crate::sys;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Length of one busy-then-idle cycle.
pub const PERIOD: Duration = Duration::from_millis(10);

/// Running load threads; stopped and joined on [`CpuLoad::stop`] or drop.
pub struct CpuLoad {
    percent: u8,
    cpus: Vec<usize>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<(f64, bool)>>,
    started: Instant,
}

impl CpuLoad {
    /// Starts one pinned busy thread per allowed CPU. `percent` 0 starts none.
    pub fn start(percent: u8) -> CpuLoad {
        let percent = percent.min(100);
        let cpus = if percent == 0 {
            Vec::new()
        } else {
            sys::allowed_cpus()
        };
        let stop = Arc::new(AtomicBool::new(false));
        let threads = cpus
            .iter()
            .map(|&cpu| {
                let stop = Arc::clone(&stop);
                std::thread::Builder::new()
                    .name(format!("cpu-load-{cpu}"))
                    .spawn(move || busy_loop(cpu, percent, &stop))
                    .expect("a thread can be spawned")
            })
            .collect();
        CpuLoad {
            percent,
            cpus,
            stop,
            threads,
            started: Instant::now(),
        }
    }

    /// Stops the threads, waits for them and says what they delivered.
    pub fn stop(mut self) -> CpuLoadInfo {
        self.halt()
    }

    fn halt(&mut self) -> CpuLoadInfo {
        self.stop.store(true, Ordering::Relaxed);
        let wall_s = self.started.elapsed().as_secs_f64();
        let mut busy_cpu_s = 0.0;
        let mut unpinned = 0;
        for t in self.threads.drain(..) {
            let (cpu_s, pinned) = t.join().unwrap_or((0.0, false));
            busy_cpu_s += cpu_s;
            unpinned += usize::from(!pinned);
        }
        let capacity = wall_s * self.cpus.len() as f64;
        CpuLoadInfo {
            percent: self.percent,
            cpus: self.cpus.clone(),
            unpinned,
            period_us: PERIOD.as_micros() as u64,
            wall_s,
            busy_cpu_s,
            achieved_percent: if capacity > 0.0 {
                100.0 * busy_cpu_s / capacity
            } else {
                0.0
            },
        }
    }
}

impl Drop for CpuLoad {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.halt();
        }
    }
}

/// Starts a load when one is asked for.
pub fn start_if(percent: Option<u8>) -> Option<CpuLoad> {
    percent.filter(|&p| p > 0).map(CpuLoad::start)
}

/// One load thread: pin, then spin and sleep in turn until told to stop.
/// Returns the CPU seconds it used and whether pinning worked.
fn busy_loop(cpu: usize, percent: u8, stop: &AtomicBool) -> (f64, bool) {
    let pinned = sys::pin_current_thread(cpu).is_ok();
    let (u0, s0) = sys::thread_cpu_seconds();
    let busy = PERIOD.mul_f64(f64::from(percent) / 100.0);
    let mut cycle_start = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        spin_until(cycle_start + busy);
        let next = cycle_start + PERIOD;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        // Scheduled cycles keep the duty share steady even when a sleep
        // overruns; after a long preemption, start afresh rather than burst.
        cycle_start = if Instant::now() > next + PERIOD {
            Instant::now()
        } else {
            next
        };
    }
    let (u1, s1) = sys::thread_cpu_seconds();
    ((u1 - u0) + (s1 - s0), pinned)
}

fn spin_until(t: Instant) {
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_percent_starts_nothing() {
        let load = CpuLoad::start(0);
        let info = load.stop();
        assert!(info.cpus.is_empty());
        assert_eq!(info.busy_cpu_s, 0.0);
    }

    #[test]
    fn load_burns_cpu_and_stops() {
        let load = CpuLoad::start(50);
        std::thread::sleep(Duration::from_millis(400));
        let info = load.stop();
        assert!(!info.cpus.is_empty());
        // Generous: other work on the machine may take the CPUs from us.
        assert!(info.achieved_percent > 5.0, "{info:?}");
        assert!(info.achieved_percent < 95.0, "{info:?}");
    }
}
