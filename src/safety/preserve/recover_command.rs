//! The command that puts a journal's originals back, named alike by every
//! message that leaves a journal behind; a file of its own because the
//! lowest steps (reading the medium, saving) name it as well as the
//! messages built over them.

use std::path::Path;

/// The command that finishes what a journal started.
pub fn recover_command(journal: &Path) -> String {
    format!("iocurve recover {}", journal.display())
}
