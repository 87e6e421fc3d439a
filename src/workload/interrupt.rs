//! Ctrl-C and SIGTERM: stop at once, keep what was measured, leave no
//! scratch file behind.
//!
//! The first signal sets a flag that every job checks before each I/O, so a
//! run stops within one I/O and prints its partial result. A second signal
//! means the user will not wait (an I/O may hang on a dying device): the
//! scratch files are removed right away and the process exits with 130.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

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
            if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
                remove_scratch_files();
                eprintln!("\ninterrupted twice: scratch files removed, exiting now");
                std::process::exit(crate::error::EXIT_INTERRUPTED);
            }
        });
    });
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
