//! The line `iocurve endure` prints after each cycle, once it is saved: a
//! run of many hours shows its progress and its first bad blocks as they
//! come, not only in the final table.

use crate::result::device::EndureCycle;

/// `cycle N/TOTAL done: ...` for a finished (or cut short) cycle.
pub fn cycle_done(total: u32, c: &EndureCycle) -> String {
    format!(
        "cycle {}/{total} done: write {:.1} MB/s, read {} MB/s, {} bad block(s){}",
        c.cycle,
        c.write_mb_s,
        c.read_mb_s.map_or("-".into(), |r| format!("{r:.1}")),
        c.verify.bad(),
        if c.complete { "" } else { " (cut short)" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle() -> EndureCycle {
        EndureCycle {
            cycle: 2,
            write_mb_s: 12.345,
            read_mb_s: Some(40.0),
            write_latency: None,
            read_latency: None,
            verify: Default::default(),
            error: None,
            complete: true,
        }
    }

    #[test]
    fn a_cycle_line_gives_both_speeds_and_the_bad_blocks() {
        assert_eq!(
            cycle_done(5, &cycle()),
            "cycle 2/5 done: write 12.3 MB/s, read 40.0 MB/s, 0 bad block(s)"
        );
        let cut = EndureCycle {
            read_mb_s: None,
            complete: false,
            ..cycle()
        };
        assert_eq!(
            cycle_done(5, &cut),
            "cycle 2/5 done: write 12.3 MB/s, read - MB/s, 0 bad block(s) (cut short)"
        );
    }
}
