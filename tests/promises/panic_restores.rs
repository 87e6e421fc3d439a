//! A panic is a bug, never a loss: with `--preserve` armed, the stack
//! unwinds through the write guard, which puts the original bytes back;
//! the process says it was an internal error and exits 1 (not 101).

use crate::common;

use common::{LoopDevice, iocurve, skipped};

#[test]
fn a_panic_after_writing_restores_the_device_and_exits_1() {
    let dev = match LoopDevice::new(16 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let journals = tempfile::tempdir().unwrap();
    let before = dev.contents();
    for args in [
        &[
            "run",
            dev.path(),
            "--rw",
            "randwrite",
            "--size",
            "4M",
            "--ramp",
            "0",
        ][..],
        &[
            "profile",
            dev.path(),
            "--size",
            "8M",
            "--time",
            "100ms",
            "--repeat",
            "1",
        ][..],
        &[
            "surface",
            dev.path(),
            "--samples",
            "4",
            "--access-reads",
            "0",
        ][..],
    ] {
        let out = iocurve()
            .args(args)
            .args(["--no-save", "--preserve", "--journal-dir"])
            .arg(journals.path())
            .env("IOCURVE_TEST_PANIC_AFTER_MEASURE", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("internal error (a bug in iocurve)"), "{err}");
        assert!(err.contains("restored and verified"), "{args:?}: {err}");
        assert_eq!(dev.contents(), before, "{args:?}: every byte is back");
        let left = std::fs::read_dir(journals.path()).unwrap().count();
        assert_eq!(left, 0, "{args:?}: no journal left");
    }
}
