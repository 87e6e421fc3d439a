//! Ctrl-C and SIGTERM: stop at once, keep what was measured, leave no
//! scratch file behind.
//!
//! The first signal sets a flag that every job checks before each I/O, so a
//! run stops within one I/O and prints its partial result. A second signal
//! means the user will not wait (an I/O may hang on a dying device): the
//! scratch files are removed right away and the process exits with 130.
//!
//! A preserve-mode test registers its armed journal here. A second signal
//! then says how to finish the restore (`iocurve recover ...`) before it
//! exits; while the restore itself runs, a second signal only says that it
//! is running, and it takes a third to abandon it (with the same advice).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, TryLockError};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The armed journal of a preserve-mode test, and whether it is being
/// written back right now.
static JOURNAL: Mutex<Option<(PathBuf, bool)>> = Mutex::new(None);

/// The flag measurements poll; set by the first Ctrl-C or SIGTERM.
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// Installs the handler once; later calls do nothing.
pub fn install() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // The handler runs on its own thread (ctrlc), so it may lock and
        // touch the file system.
        let _ = ctrlc::set_handler(|| {
            STOP.store(true, Ordering::SeqCst);
            let earlier = SIGNALS.fetch_add(1, Ordering::SeqCst);
            if earlier >= 1 {
                on_repeated_signal(earlier + 1);
            }
        });
    });
}

fn on_repeated_signal(count: u32) {
    let journal = JOURNAL.lock().ok().and_then(|j| j.clone());
    match journal {
        Some((path, true)) if count == 2 => {
            eprintln!(
                "\nrestoring the original data, please wait; interrupt once more to abandon it (then run `iocurve recover {}`)",
                path.display()
            );
        }
        Some((path, _)) => {
            remove_scratch_files();
            eprintln!(
                "\ninterrupted again: the original data is NOT restored yet; it is kept in {0}. Run `iocurve recover {0}`",
                path.display()
            );
            std::process::exit(crate::error::EXIT_INTERRUPTED);
        }
        None => {
            remove_scratch_files();
            eprintln!("\ninterrupted twice: scratch files removed, exiting now");
            std::process::exit(crate::error::EXIT_INTERRUPTED);
        }
    }
}

/// Registers the armed journal of the running test (or `None` once it is
/// restored), so that a repeated signal can say how to recover.
pub fn set_journal(journal: Option<PathBuf>) {
    if let Ok(mut j) = JOURNAL.lock() {
        *j = journal.map(|p| (p, false));
    }
}

/// Called by the panic hook: a panic while a preserve-mode test has its
/// journal armed leaves the target partly overwritten, so the user is told
/// how to put the original data back.
pub fn on_panic() {
    // `try_lock`: the panic may have happened while this very lock was
    // held, and a hook must not wait for it. A lock held elsewhere means a
    // journal is being armed or released right now: `recover` without an
    // argument finds it in the journal directory.
    let command = match JOURNAL.try_lock() {
        Ok(j) => j
            .as_ref()
            .map(|(path, _)| format!("iocurve recover {}", path.display())),
        Err(TryLockError::Poisoned(p)) => p
            .into_inner()
            .as_ref()
            .map(|(path, _)| format!("iocurve recover {}", path.display())),
        Err(TryLockError::WouldBlock) => Some("iocurve recover".to_string()),
    };
    if let Some(command) = command {
        eprintln!(
            "the target was being written under --preserve: its original data is being put back now; if that does not finish, run `{command}`"
        );
    }
}

/// Marks the registered journal as being written back.
pub fn set_restoring(restoring: bool) {
    if let Ok(mut j) = JOURNAL.lock() {
        if let Some(entry) = j.as_mut() {
            entry.1 = restoring;
        }
    }
}

/// Remembers a scratch file so that a second Ctrl-C can remove it.
pub fn register_scratch(path: PathBuf) {
    if let Ok(mut list) = SCRATCH.lock() {
        list.push(path);
    }
}

/// Forgets a scratch file that its owner removed.
pub fn unregister_scratch(path: &std::path::Path) {
    if let Ok(mut list) = SCRATCH.lock() {
        list.retain(|p| p != path);
    }
}

fn remove_scratch_files() {
    if let Ok(list) = SCRATCH.lock() {
        for path in list.iter() {
            let _ = std::fs::remove_file(path);
        }
    }
}
