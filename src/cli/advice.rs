//! What each command offers the refusals made below the command line:
//! its way to measure reads only, in its own options, and whether it
//! takes `--buffered` (see [`crate::medium::write_rules::advice`]). Said
//! here, beside the options, so a refusal never advises an option the
//! command in use does not have.

use super::Command;
use crate::medium::write_rules::advice::Offered;

impl Command {
    /// What a refusal may advise for this command.
    pub fn offered(&self) -> Offered {
        let reads_only = match self {
            Command::Run(_) => Some("--rw read or randread"),
            Command::Curve(_) => Some("--rw read,randread"),
            Command::Stream(_) => Some("--rw read"),
            Command::Profile(_) => Some("--read-only"),
            Command::Surface(_) => Some("without --preserve and --destructive"),
            _ => None,
        };
        let buffered = matches!(
            self,
            Command::Profile(_)
                | Command::Run(_)
                | Command::Curve(_)
                | Command::Stream(_)
                | Command::Sustain(_)
                | Command::Surface(_)
                | Command::Copy(_)
                | Command::Endure(_)
        );
        Offered {
            reads_only,
            buffered,
        }
    }
}
