//! `--json-lines`: the live form of a measurement, for a program that
//! follows it as it runs. One JSON object per line, each flushed at once:
//! an `interval` line per interval while the measurement goes on (see
//! [`crate::workload::live`]; sustain cuts its own), then the whole result
//! on the last line. Each line is a [`JsonLine`], `type` first.

use crate::result::live::{JsonLine, LiveInterval};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Set once the command has announced a JSON-lines output to stdout.
static INTERVALS: AtomicBool = AtomicBool::new(false);

/// Switches on per-interval lines for the rest of the process.
pub fn begin_intervals() {
    INTERVALS.store(true, Ordering::Relaxed);
}

/// True once [`begin_intervals`] was called.
pub fn intervals_on() -> bool {
    INTERVALS.load(Ordering::Relaxed)
}

/// The line of one interval: `{"type":"interval", ...its figures}`.
pub fn live_line(interval: &LiveInterval) -> String {
    JsonLine::Interval(interval).to_line()
}

/// Prints one line on stdout and flushes it; a closed stdout is ignored
/// (the measurement goes on; its result goes where it was asked).
pub fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let line = crate::units::escape::json(line);
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// The printer thread's loop: a line per interval received, until the
/// sender hangs up or stdout closes.
pub fn print_intervals(rx: Receiver<LiveInterval>) {
    let mut out = std::io::stdout();
    for s in rx {
        // A label in the line came from outside: written as JSON escapes.
        if writeln!(out, "{}", crate::units::escape::json(&live_line(&s)))
            .and_then(|_| out.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Starts the printer thread when `on`: the sender the write offers each
/// interval to (never waiting: at most `backlog` lines wait, later ones
/// are dropped), and the thread to join once the write is done.
pub fn start_printer(
    on: bool,
    backlog: usize,
) -> (Option<SyncSender<LiveInterval>>, Option<JoinHandle<()>>) {
    if !on {
        return (None, None);
    }
    let (tx, rx) = sync_channel(backlog);
    (
        Some(tx),
        Some(std::thread::spawn(move || print_intervals(rx))),
    )
}

/// Waits until the printer thread has printed every interval it was
/// offered (nothing to wait for when none was started).
pub fn wait_for(printer: Option<JoinHandle<()>>) {
    if let Some(p) = printer {
        // A printer that panicked has lost only its own lines; the result
        // is still printed after it.
        let _ = p.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::live::LiveTest;

    #[test]
    fn an_interval_line_is_one_flat_tagged_json_object() {
        let interval = LiveInterval {
            test: LiveTest::Sustain {
                block_size_bytes: 1 << 20,
            },
            index: 3,
            start_ns: 3_000_000_000,
            end_ns: 4_000_000_000,
            bytes: 1 << 20,
            ops: 16,
            mb_per_s: 1.048_576,
            iops: 16.0,
            p50_ns: Some(1_000_000),
            p99_ns: Some(20_000_000),
            max_ns: Some(20_000_000),
        };
        let line = live_line(&interval);
        assert!(!line.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["type"], "interval");
        // The test by its figures, not in words.
        assert_eq!(v["test"]["kind"], "sustain");
        assert_eq!(v["test"]["block_size_bytes"], 1 << 20);
        assert_eq!(v["index"], 3);
        assert_eq!(v["start_ns"], 3_000_000_000u64);
        assert_eq!(v["p99_ns"], 20_000_000u64);
        assert_eq!(v["iops"], 16.0);
        assert!(line.starts_with(r#"{"type":"interval","test":"#), "{line}");
    }
}
