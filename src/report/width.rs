//! How wide a line of text output may be: the one width every text
//! renderer keeps to.
//!
//! It comes from the person's terminal, not from a constant: `COLUMNS` when
//! set (the shell's own variable, and what a script or a test sets to ask
//! for a width), else the columns of the terminal stdout is on, else 80
//! (a pipe, a file, an unknown terminal: the width a default terminal has,
//! and what a mail or a forum post reads well at). The width is read once
//! per process: a report does not change its layout half-way.
//!
//! A width below [`MIN`] is taken as [`MIN`]: a table of figures cannot be
//! laid out narrower without breaking its figures, and such a `COLUMNS` is
//! more likely a mistake than a terminal.
//!
//! Renderers call [`current`]; a test that renders in-process at several
//! widths wraps the rendering in [`with`].

use std::cell::Cell;
use std::sync::OnceLock;

/// The width when nothing says otherwise.
pub const DEFAULT: usize = 80;
/// The narrowest width honoured.
pub const MIN: usize = 40;
/// The widest width honoured (a wider number is a mistake, and prose
/// wider than this reads badly whatever the screen).
pub const MAX: usize = 1000;

thread_local! {
    /// A width set by [`with`] for this thread only.
    static OVERRIDE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The widest line any text output of this process may print.
pub fn current() -> usize {
    if let Some(w) = OVERRIDE.with(Cell::get) {
        return w;
    }
    static FOUND: OnceLock<usize> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let columns = std::env::var("COLUMNS").ok();
        from(columns.as_deref(), terminal_columns())
    })
}

/// Renders with `width` columns on this thread (tests: one result at
/// 60, 80 and 120 columns without a process each).
pub fn with<T>(width: usize, render: impl FnOnce() -> T) -> T {
    let before = OVERRIDE.with(|o| o.replace(Some(width.clamp(MIN, MAX))));
    let out = render();
    OVERRIDE.with(|o| o.set(before));
    out
}

/// The width from `COLUMNS` (as set, or not) and the terminal's columns
/// (`None`: stdout is no terminal, or it says nothing).
pub fn from(columns: Option<&str>, terminal: Option<usize>) -> usize {
    let asked = columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    asked
        .or(terminal.filter(|&c| c > 0))
        .unwrap_or(DEFAULT)
        .clamp(MIN, MAX)
}

/// The columns of the terminal stdout is on, if it is one.
fn terminal_columns() -> Option<usize> {
    let out = std::io::stdout();
    if !rustix::termios::isatty(&out) {
        return None;
    }
    let size = rustix::termios::tcgetwinsize(&out).ok()?;
    Some(usize::from(size.ws_col))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_wins_then_the_terminal_then_80() {
        assert_eq!(from(Some("60"), Some(200)), 60);
        assert_eq!(from(None, Some(132)), 132);
        assert_eq!(from(None, None), DEFAULT);
        // A terminal that reports 0 columns (a serial console) says nothing.
        assert_eq!(from(None, Some(0)), DEFAULT);
        assert_eq!(from(Some("wide"), Some(90)), 90);
        assert_eq!(from(Some(" 120 "), None), 120);
        assert_eq!(from(Some("10"), None), MIN);
        assert_eq!(from(Some("99999"), None), MAX);
    }

    #[test]
    fn with_sets_this_thread_only_and_restores() {
        let outer = current();
        let inner = with(60, || {
            let here = current();
            let other = std::thread::spawn(current).join().unwrap();
            (here, other)
        });
        assert_eq!(inner.0, 60);
        assert_ne!(inner.1, 0);
        assert_eq!(current(), outer);
    }
}
