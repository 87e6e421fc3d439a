//! CPU affinity (sched_getaffinity(2), sched_setaffinity(2)): the CPU-load
//! gauge pins one spinning thread per CPU it may use.

use std::io;

/// The CPUs this process may run on (sched_getaffinity(2)), in order.
pub fn allowed_cpus() -> Vec<usize> {
    use rustix::thread::{CpuSet, sched_getaffinity};
    match sched_getaffinity(None) {
        Ok(set) => (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// Pins the calling thread to one CPU (sched_setaffinity(2) on thread 0,
/// which the kernel reads as "the caller").
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    use rustix::thread::{CpuSet, sched_setaffinity};
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(io::Error::from)
}
