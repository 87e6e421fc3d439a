//! The two kinds of failure a user must tell apart, and their exit codes.
//!
//! A usage error (exit 2) is fixed by changing the command line or who runs
//! it (a permission denied is one: the person, not the device, must change
//! something); an I/O failure (exit 3) is something the device or the
//! system did. Everything
//! else is an internal error (exit 1). Errors travel as `anyhow::Error`; `main`
//! finds the kind by walking the chain for one of these two types.

use thiserror::Error;

/// The command line asks for something impossible; the message names the
/// option and the accepted form.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An operating-system or device failure: the message names what failed,
/// where, and what to do about it.
#[derive(Debug, Error)]
#[error("{message}")]
pub struct IoFailure {
    pub message: String,
    #[source]
    pub source: Option<std::io::Error>,
}

impl IoFailure {
    pub fn new(message: impl Into<String>, source: Option<std::io::Error>) -> Self {
        Self {
            message: message.into(),
            source,
        }
    }
}

/// Ctrl-C or SIGTERM stopped the command before it measured anything
/// (exit 130).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct Interrupted(pub String);

/// Shorthand for returning a usage error.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// Exit codes documented in the README.
pub const EXIT_INTERNAL: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_IO: i32 = 3;
pub const EXIT_VERIFY: i32 = 4;
/// `flash capacity` found a fake card, or `flash class` a failed requirement.
pub const EXIT_FLASH_FAIL: i32 = 5;
/// `--fail-above`: a run was slower than its baseline by more than allowed.
pub const EXIT_REGRESSION: i32 = 6;
/// `--fail-above`: no slowdown found, but a pair could not be judged (a
/// run shared its device or CPUs, or had too few repetitions): the gate
/// cannot vouch for it.
pub const EXIT_UNDECIDED: i32 = 7;
pub const EXIT_INTERRUPTED: i32 = 130;

/// Every exit code with what it means: the one table the man pages' EXIT
/// STATUS is made from (README's "Exit codes" says the same at length).
pub const EXIT_CODES: &[(i32, &str)] = &[
    (0, "success"),
    (EXIT_INTERNAL, "internal error (a bug in iocurve)"),
    (
        EXIT_USAGE,
        "usage error, a refusal to write, or permission denied (the message says what to pass or who may run it)",
    ),
    (EXIT_IO, "I/O failure, or a restore that failed"),
    (EXIT_VERIFY, "--verify found bad blocks"),
    (
        EXIT_FLASH_FAIL,
        "flash capacity found a fake card, or flash class a failed requirement",
    ),
    (
        EXIT_REGRESSION,
        "compare --fail-above: a run was slower than its baseline by more than allowed",
    ),
    (
        EXIT_UNDECIDED,
        "compare --fail-above: cannot tell (a run shared its device or CPUs, or too few repetitions)",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C, SIGTERM)"),
];

/// An error as one line: each cause in the chain once, outermost first. A
/// cause whose text the line already holds (an OS error a message quoted
/// already) is not repeated. A message may quote a path or a name from
/// outside, so the line's control characters are shown escaped (see
/// [`crate::units::escape::line`]): every error is printed through here.
pub fn render(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    crate::units::escape::line(&line).into_owned()
}

/// A usage error where only an `io::Error` can be returned (the flash
/// detectors): it still exits with 2.
pub fn usage_io(message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, UsageError(message.into()))
}

/// The exit code for an error: 2 for usage (permission denied included),
/// 3 for I/O, 1 otherwise.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    let usage_in_io = |e: &(dyn std::error::Error + 'static)| {
        e.downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .is_some_and(|inner| inner.is::<UsageError>())
    };
    if err
        .chain()
        .any(|e| e.is::<UsageError>() || usage_in_io(e) || denied(e))
    {
        EXIT_USAGE
    } else if err.chain().any(|e| e.is::<Interrupted>()) {
        EXIT_INTERRUPTED
    } else if err
        .chain()
        .any(|e| e.is::<IoFailure>() || e.is::<std::io::Error>())
    {
        EXIT_IO
    } else {
        EXIT_INTERNAL
    }
}

/// Whether `e` is the system refusing this user (EACCES, EPERM): fixed by
/// running as someone who may, not by the device.
fn denied(e: &(dyn std::error::Error + 'static)) -> bool {
    let io = e.downcast_ref::<std::io::Error>().or_else(|| {
        e.downcast_ref::<IoFailure>()
            .and_then(|f| f.source.as_ref())
    });
    io.is_some_and(|io| io.kind() == std::io::ErrorKind::PermissionDenied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_denied_is_a_usage_error_and_eio_an_io_failure() {
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        let err: anyhow::Error = IoFailure::new("permission denied opening x", Some(denied)).into();
        assert_eq!(exit_code(&err), EXIT_USAGE);
        let bare: anyhow::Error = std::io::Error::from_raw_os_error(libc::EPERM).into();
        assert_eq!(exit_code(&bare.context("opening y")), EXIT_USAGE);
        let eio: anyhow::Error = IoFailure::new(
            "reading failed",
            Some(std::io::Error::from_raw_os_error(libc::EIO)),
        )
        .into();
        assert_eq!(exit_code(&eio), EXIT_IO);
    }

    #[test]
    fn an_os_error_quoted_by_its_message_is_said_once() {
        let os = std::io::Error::from_raw_os_error(libc::EROFS);
        let err: anyhow::Error = IoFailure::new(format!("cannot open x: {os}"), Some(os)).into();
        let line = render(&err);
        assert_eq!(line.matches("os error 30").count(), 1, "{line}");
        let wrapped = err.context("saving the result");
        assert!(render(&wrapped).starts_with("saving the result: cannot open x"));
    }

    #[test]
    fn a_path_in_a_message_reaches_the_terminal_escaped() {
        let err = usage("no such file /tmp/x\u{1b}]0;owned\u{7}\r\u{202e}y: pass another");
        let line = render(&err);
        assert_eq!(
            line,
            "no such file /tmp/x\\e]0;owned\\u{7}\\r\\u{202e}y: pass another"
        );
    }

    #[test]
    fn a_cause_not_yet_said_is_kept() {
        let os = std::io::Error::from_raw_os_error(libc::EIO);
        let err: anyhow::Error = IoFailure::new("reading the journal failed", Some(os)).into();
        assert!(render(&err).ends_with("(os error 5)"), "{}", render(&err));
    }
}
