//! CPU time of the process and of one thread (getrusage(2)): how much of a
//! run the host itself spent, so a CPU-bound result can be told apart.

/// User and system CPU seconds of the whole process so far (getrusage(2)).
pub fn cpu_seconds() -> (f64, f64) {
    rusage(libc::RUSAGE_SELF)
}

/// User and system CPU seconds of the calling thread so far.
pub fn thread_cpu_seconds() -> (f64, f64) {
    rusage(libc::RUSAGE_THREAD)
}

fn rusage(who: libc::c_int) -> (f64, f64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete rusage into the pointer we pass; the
    // pointer is valid for writes of that size.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    // SAFETY: rc == 0 means the kernel filled the struct.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}
