//! `--cpu-load`: the load is there while it runs and gone afterwards.
//! In the `alone` test crate, so no other test's CPU time is counted.

use iocurve::sys::cpu_seconds;
use iocurve::workload::cpuload::CpuLoad;
use std::time::{Duration, Instant};

fn cpu_over(d: Duration) -> (f64, f64) {
    let (u0, s0) = cpu_seconds();
    let t = Instant::now();
    std::thread::sleep(d);
    let (u1, s1) = cpu_seconds();
    ((u1 - u0) + (s1 - s0), t.elapsed().as_secs_f64())
}

fn load_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.starts_with("cpu-load"))
        })
        .count()
}

#[test]
fn load_is_present_while_running_and_gone_afterwards() {
    let _alone = crate::one_at_a_time();
    let load = CpuLoad::start(60);
    let cpus = iocurve::sys::allowed_cpus().len() as f64;
    // A thread names itself once it runs; give them a moment.
    let t = Instant::now();
    while load_threads() < cpus as usize && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(load_threads(), cpus as usize, "one pinned thread per CPU");
    let (busy, wall) = cpu_over(Duration::from_millis(600));
    let info = load.stop();
    // 60% of every CPU asked; at least a sixth of that arrives even on a
    // machine shared with other work.
    assert!(busy > 0.1 * wall * cpus, "busy {busy} s of CPU in {wall} s");
    assert!(info.achieved_percent > 10.0, "{info:?}");
    assert_eq!(load_threads(), 0, "threads joined");
    let (idle, wall) = cpu_over(Duration::from_millis(400));
    assert!(
        idle < 0.05 * wall * cpus,
        "still {idle} s of CPU after stop"
    );
}
