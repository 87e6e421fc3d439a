//! clap's errors made plainer: a rejected value as one line naming the
//! option, and an unknown option's error with the command's own usage
//! rather than the one clap rebuilt from the options typed so far.

use super::Cli;

/// An unknown option's error with the command's own usage line. clap
/// writes the usage with the options given so far, and after a typo with
/// the option it suggests: `iocurve run --tiem 2s` showed `Usage: iocurve
/// run --time <DURATION> [TARGET]`, as if `--time` were required. The
/// command is read from that line (the words before the first option or
/// argument), and its plain usage (`[OPTIONS]`) put in place. `None` for
/// every other error, and when the line is not there to read.
pub fn plain_usage(err: &clap::Error) -> Option<String> {
    use clap::error::ErrorKind;
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let text = err.render().to_string();
    let usage_line = text.lines().find(|l| l.starts_with("Usage: "))?;
    let path: Vec<&str> = usage_line["Usage: ".len()..]
        .split(' ')
        .take_while(|w| !w.starts_with(['-', '[', '<']))
        .collect();
    let mut cmd = <Cli as clap::CommandFactory>::command();
    cmd.build();
    let mut found = &cmd;
    for name in path.iter().skip(1) {
        found = found.find_subcommand(name)?;
    }
    let mut found = found.clone();
    let usage = found.render_usage().to_string();
    Some(text.replacen(usage_line, usage.trim_end(), 1))
}

/// A rejected value as one line: `--au 511: an AU is ...`. `None` for
/// errors that are not about one value (clap's own text is clearer there).
pub fn one_line_error(err: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    // "--au <SIZE>" names the option; a positional is shown as "[TARGET]".
    let arg = context(ContextKind::InvalidArg)?;
    let option = match arg.starts_with('-') {
        true => arg.split(' ').next().unwrap_or(arg),
        false => arg.trim_matches(|c| "[]<>.".contains(c)),
    };
    let value = context(ContextKind::InvalidValue)?;
    let shown = match value.is_empty() || value.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        true => format!("{value:?}"),
        false => value.to_string(),
    };
    let why = match err.kind() {
        ErrorKind::ValueValidation => std::error::Error::source(err)?.to_string(),
        ErrorKind::InvalidValue => match err.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(valid)) => format!("not one of {}", valid.join(", ")),
            _ => return None,
        },
        _ => return None,
    };
    Some(format!("{option} {shown}: {why}"))
}
