//! A progress bar with ETA on stderr while measuring, only when stderr is a
//! terminal; scripts and pipes see nothing.
//!
//! The bar is drawn from a separate thread that samples the jobs' counters
//! ten times a second, so the measuring threads never format or lock.
//!
//! A bar leaves no line behind: however it ends (finished, dropped on an
//! error's way out, a step that never moved it), its line is cleared, so
//! a stale `curve [> ] 0% ETA 8s` never stays above the report or the
//! error.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What the bar's length counts.
#[derive(Debug, Clone, Copy)]
pub enum Goal {
    /// Bytes to move (warm-up included).
    Bytes(u64),
    /// Wall time planned.
    Time(Duration),
}

/// Set by `-q`: no bar is drawn even on a terminal.
static SILENCED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns progress off for the rest of the process (`-q`).
pub fn silence() {
    SILENCED.store(true, Ordering::Relaxed);
}

/// True when progress should be drawn.
pub fn wanted() -> bool {
    !SILENCED.load(Ordering::Relaxed) && std::io::stderr().is_terminal()
}

/// A bar for one step, or a hidden one when stderr is not a terminal.
pub fn bar(message: &str, goal: Goal) -> ProgressBar {
    let (len, template) = match goal {
        // The bar takes what the terminal has left, so a long live message
        // never wraps the line; the rate is in the message, in MB/s.
        Goal::Bytes(b) => (b, "{msg} [{wide_bar}] {bytes}/{total_bytes} ETA {eta}"),
        Goal::Time(d) => (
            d.as_millis() as u64,
            "{msg} [{wide_bar}] {percent:>3}% ETA {eta}",
        ),
    };
    let target = if wanted() {
        ProgressDrawTarget::stderr_with_hz(10)
    } else {
        ProgressDrawTarget::hidden()
    };
    // Dropped unfinished (an error, an early return), indicatif would
    // leave the bar drawn: cleared instead.
    let bar =
        ProgressBar::with_draw_target(Some(len), target).with_finish(ProgressFinish::AndClear);
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(message.to_string());
    bar
}

/// What a bar's message shows while a measurement runs: its label, and the
/// rate of the last half second from the jobs' byte counters.
#[derive(Debug, Clone, Copy)]
pub struct Live<'a> {
    pub label: &'a str,
    /// Bytes per request, to turn bytes into IOPS (0: no IOPS shown).
    pub block: u64,
}

/// The widest label a bar's message shows.
const LABEL_COLUMNS: usize = 60;

/// How often the live rate is recomputed: long enough to hold many
/// requests, short enough to follow a cache filling.
const RATE_WINDOW: Duration = Duration::from_millis(500);

/// `label · 123 MB/s · 4.07k IOPS` for `bytes` moved in `window`.
pub fn rate_message(live: Live<'_>, bytes: u64, window: Duration) -> String {
    // The label is a test's name, which a configuration or a fio job file
    // chose: shown escaped, and short enough to leave the bar its line.
    let label = crate::units::escape::name(live.label, LABEL_COLUMNS);
    if window.is_zero() {
        return label;
    }
    let per_second = bytes as f64 / window.as_secs_f64();
    let mb_s = crate::units::format_mbps(per_second / 1e6);
    match live.block {
        0 => format!("{label} · {mb_s} MB/s"),
        block => {
            let iops = crate::units::format_iops(per_second / block as f64);
            format!("{label} · {mb_s} MB/s · {iops} IOPS")
        }
    }
}

/// Runs `work` while a thread moves `bar` from `moved` (the bytes the jobs
/// have completed, read from their counters) or the clock (time), and
/// shows the current rate in its message. With
/// `position` false the bar belongs to a longer step (profile's overall
/// bar) and only its message follows this measurement. The bar is left
/// unfinished for the caller.
pub fn track<T>(
    bar: &ProgressBar,
    goal: Goal,
    moved: &(dyn Fn() -> u64 + Sync),
    (live, position): (Live<'_>, bool),
    work: impl FnOnce() -> T,
) -> T {
    if bar.is_hidden() {
        return work();
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let (mut window_start, mut window_bytes) = (Instant::now(), moved());
            while !done.load(Ordering::Relaxed) {
                let bytes = moved();
                if position {
                    bar.set_position(match goal {
                        Goal::Bytes(_) => bytes,
                        Goal::Time(_) => start.elapsed().as_millis() as u64,
                    });
                }
                // Nothing moved yet (the jobs are starting): the label alone.
                if bytes > 0 && window_start.elapsed() >= RATE_WINDOW {
                    let delta = bytes.saturating_sub(window_bytes);
                    bar.set_message(rate_message(live, delta, window_start.elapsed()));
                    (window_start, window_bytes) = (Instant::now(), bytes);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

/// Moves a time-goal bar with the wall clock until dropped.
pub struct ClockTicker {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ClockTicker {
    pub fn start(bar: &ProgressBar) -> ClockTicker {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let handle = (!bar.is_hidden()).then(|| {
            let (bar, done) = (bar.clone(), done.clone());
            let start = Instant::now();
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    bar.set_position(start.elapsed().as_millis() as u64);
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        });
        ClockTicker { done, handle }
    }
}

impl Drop for ClockTicker {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_message_names_the_rate_of_its_window() {
        let live = Live {
            label: "RND4K Q32T1 read",
            block: 4096,
        };
        // 40.96 MB in half a second: 81.9 MB/s, 20,000 requests a second.
        let text = rate_message(live, 10_000 * 4096, Duration::from_millis(500));
        assert_eq!(text, "RND4K Q32T1 read · 81.9 MB/s · 20.0k IOPS");
        let bytes_only = Live { block: 0, ..live };
        assert_eq!(
            rate_message(bytes_only, 1_000_000, Duration::from_secs(1)),
            "RND4K Q32T1 read · 1.00 MB/s"
        );
        assert_eq!(rate_message(live, 5, Duration::ZERO), "RND4K Q32T1 read");
    }
}
