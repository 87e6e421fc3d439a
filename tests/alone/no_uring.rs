//! A kernel without io_uring (here: io_uring disabled by sysctl) gets a
//! clear message instead of a crash. In the `alone` test crate, because it
//! changes a system-wide setting for a moment.

use crate::common;

use common::{iocurve, is_root, skipped};

const KNOB: &str = "/proc/sys/kernel/io_uring_disabled";

struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(KNOB, &self.0);
    }
}

#[test]
fn disabled_io_uring_gets_a_clear_message() {
    let _alone = crate::one_at_a_time();
    if !is_root() {
        return skipped("not root: cannot switch io_uring off");
    }
    let Ok(old) = std::fs::read_to_string(KNOB) else {
        return skipped("this kernel has no io_uring_disabled sysctl");
    };
    let dir = tempfile::tempdir().unwrap();
    let out = {
        let _restore = Restore(old.trim().to_string());
        if std::fs::write(KNOB, "2").is_err() {
            return skipped("cannot write the io_uring_disabled sysctl (container?)");
        }
        iocurve()
            .args([
                "run",
                dir.path().to_str().unwrap(),
                "--span",
                "4M",
                "--qd",
                "8",
                "--size",
                "1M",
                "--ramp",
                "0",
            ])
            .output()
            .unwrap()
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("io_uring is disabled") && err.contains("--engine sync"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}
