//! Why a restore did not finish, apart from [`super::restore`] so that the
//! block writing beneath it ([`super::writeback`]) can say so too.

use crate::safety::journal::JournalError;
use std::io;

/// Why a restore did not finish; the journal is kept (unless it is damaged,
/// it is kept too: nothing is deleted that might still be needed).
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("{0}")]
    Journal(#[from] JournalError),
    #[error("{0}")]
    Medium(String, #[source] io::Error),
}
