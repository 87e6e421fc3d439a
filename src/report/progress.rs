//! A progress bar with ETA on stderr while measuring, only when stderr is a
//! terminal; scripts and pipes see nothing.
//!
//! The bar is drawn from a separate thread that samples the jobs' counters
//! ten times a second, so the measuring threads never format or lock.

use crate::workload::job::PaddedCounter;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
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
        Goal::Bytes(b) => (
            b,
            "{msg:24} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}",
        ),
        Goal::Time(d) => (
            d.as_millis() as u64,
            "{msg:24} [{bar:30}] {percent:>3}% ETA {eta}",
        ),
    };
    let target = if wanted() {
        ProgressDrawTarget::stderr_with_hz(10)
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(message.to_string());
    bar
}

/// Runs `work` while a thread moves `bar` from the counters (bytes) or the
/// clock (time). The bar is left unfinished for the caller.
pub fn track<T>(
    bar: &ProgressBar,
    goal: Goal,
    counters: &[PaddedCounter],
    base: u64,
    work: impl FnOnce() -> T,
) -> T {
    if bar.is_hidden() {
        return work();
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let position = match goal {
                    Goal::Bytes(_) => counters
                        .iter()
                        .map(|c| c.0.load(Ordering::Relaxed))
                        .sum::<u64>(),
                    Goal::Time(_) => start.elapsed().as_millis() as u64,
                };
                bar.set_position(base + position);
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
