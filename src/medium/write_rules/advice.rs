//! What a refusal may advise: the options of the command in use.
//!
//! The refusals are made here in `medium`, below the command line, and
//! one refusal ("refusing to write to /dev/sdb: it is mounted ...") ends
//! the same for every command that writes. What follows it must not: `run`
//! measures reads only with `--rw read`, `curve` with `--rw read,randread`,
//! `profile` with `--read-only`, and `copy`, `endure`, `sustain` or `flash
//! capacity` cannot at all; `--buffered` exists only where a target is
//! measured through the engines. So the command line, once parsed, says
//! which of these it offers ([`offer`]), and every refusal asks
//! ([`reads_only`], [`buffered`]) before it names one. Nothing said (a library caller, a
//! unit test): no option is advised.

use std::sync::OnceLock;

/// What the command in use offers a refusal to advise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offered {
    /// How it measures without writing, in its own options
    /// (`--rw read or randread`); `None` when it cannot.
    pub reads_only: Option<&'static str>,
    /// Whether it takes `--buffered`.
    pub buffered: bool,
}

static OFFERED: OnceLock<Offered> = OnceLock::new();

/// Says, once per process, what the command in use offers.
pub fn offer(offered: Offered) {
    let _ = OFFERED.set(offered);
}

fn offered() -> Offered {
    OFFERED.get().copied().unwrap_or_default()
}

/// `, or measure reads only (--rw read or randread)` where the command can,
/// else nothing: the end of a refusal that lists the other ways out.
pub fn or_reads_only() -> String {
    offered().reads_only.map_or(String::new(), |how| {
        format!(", or measure reads only ({how})")
    })
}

/// `measure reads only (...)` where the command can, else `fallback`: a
/// refusal whose one way out is to read.
pub fn reads_only(fallback: &str) -> String {
    offered().reads_only.map_or(fallback.to_string(), |how| {
        format!("measure reads only ({how})")
    })
}

/// How the command measures reads only (`--read-only`), if it can.
pub fn reads_only_how() -> Option<&'static str> {
    offered().reads_only
}

/// Whether the command takes `--buffered`.
pub fn buffered() -> bool {
    offered().buffered
}
