//! Text from outside, made safe to show.
//!
//! A job name from an imported fio file, a target path, a device's model
//! or serial, a host name, a label: any of them may hold bytes a terminal
//! obeys (`ESC]0;…BEL` retitles the window, `ESC[2J` clears it, CR draws
//! over the line, U+202E turns the rest of the line around) and any may be
//! megabytes long. Every renderer of human text passes such a string
//! through one of these functions, so the decision of what is unsafe and
//! how it is shown is made once, here, on the lowest floor where every
//! renderer can reach it:
//!
//! - [`name`]: one value in a table or a line: every unsafe character
//!   escaped, and the whole cut with an ellipsis at a width.
//! - [`line`]: one value that is shown whole (an error message): escaped,
//!   never cut.
//! - [`text`]: a whole rendered output, the last net before a terminal:
//!   escaped, its line breaks and tabs kept.
//! - [`json`]: a whole JSON document on its way to a terminal: what JSON
//!   allows raw in a string but a terminal obeys (C1, DEL, the
//!   bidirectional controls) written as JSON's own `\uXXXX`, so the
//!   document still parses to the same values.
//! - [`file_name`]: one value made part of a file name: every character
//!   but letters, digits, `-` and `.` replaced.
//! - [`push_escaped`]: the shown form of one unsafe character, for the
//!   Markdown, HTML and CSV escapers, which add their own rules around it.
//!
//! JSON keeps the value whole: serde escapes the C0 controls itself, and
//! [`json`] the rest.
//!
//! An unsafe character is shown as `\e` (ESC), `\r`, `\n`, `\t`, `\0`, or
//! `\u{…}` with its hexadecimal code. A backslash already in the value is
//! left as it is: the escaped form is for reading, not for reversing.
//! Each function walks its input once, and [`name`] stops reading as soon
//! as the cut is reached, so a 50 MB name costs what a 200-column one does.

use std::borrow::Cow;

/// The widest an outside name is shown in a table cell or a line of text.
pub const NAME_COLUMNS: usize = 200;

/// What a cut name ends with.
pub const ELLIPSIS: char = '…';

/// Whether `c` must not reach a terminal as it is: the C0 controls, DEL,
/// the C1 controls (U+0085 among them), the line and paragraph separators,
/// and the bidirectional embeddings, overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069), which reorder what follows them.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Appends the shown form of `c`: `c` itself when it is safe, else its
/// escape.
pub fn push_escaped(out: &mut String, c: char) {
    match c {
        c if !is_unsafe(c) => out.push(c),
        '\u{1b}' => out.push_str("\\e"),
        '\r' => out.push_str("\\r"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c => {
            use std::fmt::Write;
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// The columns `c`'s shown form takes (one per character, as the tables
/// count them).
fn shown_columns(c: char) -> usize {
    match c {
        c if !is_unsafe(c) => 1,
        '\u{1b}' | '\r' | '\n' | '\t' | '\0' => 2,
        c => format!("{:x}", u32::from(c)).len() + 4,
    }
}

/// `s` with every unsafe character escaped, except those `keep` allows;
/// borrowed when there is nothing to escape.
fn escaped(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    rewritten(s, |c| !is_unsafe(c) || keep(c), push_escaped)
}

/// `s` with every character `keep` refuses written by `escape`; borrowed
/// when `keep` allows them all.
fn rewritten(
    s: &str,
    keep: impl Fn(char) -> bool,
    escape: impl Fn(&mut String, char),
) -> Cow<'_, str> {
    let Some(first) = s.find(|c: char| !keep(c)) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        match keep(c) {
            true => out.push(c),
            false => escape(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// One value shown whole on one line (an error message with a path in
/// it): every unsafe character escaped, line breaks included.
pub fn line(s: &str) -> Cow<'_, str> {
    escaped(s, |_| false)
}

/// A whole rendered text (a report, a listing) on its way to a terminal:
/// every unsafe character escaped except the line breaks and tabs the
/// renderer put there.
pub fn text(s: &str) -> Cow<'_, str> {
    escaped(s, |c| c == '\n' || c == '\t')
}

/// A JSON document (pretty or one object per line) on its way to a
/// terminal: every unsafe character but its line breaks and tabs written
/// as a JSON `\uXXXX` escape. A serialiser writes such characters only
/// inside strings (it escapes the C0 controls itself), where the escape
/// reads back as the same character: the values are unchanged.
pub fn json(s: &str) -> Cow<'_, str> {
    let keep = |c: char| !is_unsafe(c) || c == '\n' || c == '\t';
    rewritten(s, keep, |out, c| {
        use std::fmt::Write;
        // Every unsafe character is in the basic plane: one four-digit
        // escape each.
        let _ = write!(out, "\\u{:04x}", u32::from(c));
    })
}

/// One outside value in a table or a line: escaped as [`line`] does, and
/// when its shown form is wider than `max` columns, cut to `max` with an
/// ellipsis as the last column. Reads at most `max + 1` characters of `s`.
pub fn name(s: &str, max: usize) -> String {
    cut_escaped(s, max, |_| false)
}

/// One outside value in a CSV cell: as [`name`], but its line breaks and
/// tabs kept, since the cell's quotes hold them (RFC 4180) and a reader
/// gets them back.
pub fn cell(s: &str, max: usize) -> String {
    cut_escaped(s, max, |c| c == '\n' || c == '\t')
}

/// An outside name as part of a file name: every character but an ASCII
/// letter, a digit, `-` and `.` becomes `_`, so it holds no path
/// separator, space or control character.
pub fn file_name(s: &str) -> String {
    s.chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                true => c,
                false => '_',
            },
        )
        .collect()
}

/// `s` escaped except for what `keep` allows, cut at `max` columns with an
/// ellipsis; a kept character takes one column.
fn cut_escaped(s: &str, max: usize, keep: fn(char) -> bool) -> String {
    let mut out = String::new();
    // The length of `out` while it still leaves a column for the ellipsis.
    let mut fits_with_ellipsis = 0;
    let mut used = 0;
    for c in s.chars() {
        let w = if keep(c) { 1 } else { shown_columns(c) };
        if used + w > max {
            out.truncate(fits_with_ellipsis);
            if max > 0 {
                out.push(ELLIPSIS);
            }
            return out;
        }
        match keep(c) {
            true => out.push(c),
            false => push_escaped(&mut out, c),
        }
        used += w;
        if used < max {
            fits_with_ellipsis = out.len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str =
        "a\u{1b}]0;title\u{7}b\u{1b}[2Jc\rd\u{202e}e\u{85}f\u{7f}g\u{2066}h\u{9b}i";

    fn raw_controls(s: &str) -> Vec<char> {
        s.chars().filter(|&c| is_unsafe(c)).collect()
    }

    #[test]
    fn every_unsafe_character_is_shown_escaped() {
        let shown = line(HOSTILE);
        assert_eq!(
            shown,
            "a\\e]0;title\\u{7}b\\e[2Jc\\rd\\u{202e}e\\u{85}f\\u{7f}g\\u{2066}h\\u{9b}i"
        );
        assert!(raw_controls(&shown).is_empty());
        assert_eq!(line("two\nlines\t"), "two\\nlines\\t");
        assert!(matches!(line("plain µs – ×"), Cow::Borrowed(_)));
    }

    #[test]
    fn whole_text_keeps_its_line_breaks_and_tabs() {
        assert_eq!(text("a\tb\nc\r\u{1b}[2J\n"), "a\tb\nc\\r\\e[2J\n");
    }

    #[test]
    fn json_keeps_its_values_and_loses_its_unsafe_characters() {
        let value = serde_json::json!({ "name": HOSTILE, "list": [HOSTILE] });
        for doc in [
            serde_json::to_string(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap(),
        ] {
            let shown = json(&doc);
            assert!(raw_controls(&shown).iter().all(|c| *c == '\n'), "{shown}");
            let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
            assert_eq!(back, value);
        }
    }

    #[test]
    fn a_long_name_is_cut_with_an_ellipsis_within_its_width() {
        assert_eq!(name("short", 10), "short");
        assert_eq!(name("exactly10!", 10), "exactly10!");
        assert_eq!(name("eleven-long", 10), "eleven-lo…");
        assert_eq!(name("", 0), "");
        assert_eq!(name("x", 0), "");
        // An escape is never split by the cut.
        assert_eq!(name("abcdefgh\u{1b}x", 10), "abcdefgh…");
        assert_eq!(name("abcdefg\u{1b}", 9), "abcdefg\\e");
        assert_eq!(cell("a\nb\tc\rd", 10), "a\nb\tc\\rd");
        let huge = "\u{202e}".repeat(4 << 20);
        let shown = name(&huge, NAME_COLUMNS);
        assert!(shown.chars().count() <= NAME_COLUMNS, "{shown}");
        assert!(shown.ends_with(ELLIPSIS));
        assert!(raw_controls(&shown).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn no_name_is_wider_than_asked_or_holds_an_unsafe_character(
            s in "\\PC{0,40}|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}a ]{0,40}",
            max in 0usize..30
        ) {
            let shown = name(&s, max);
            proptest::prop_assert!(shown.chars().count() <= max);
            proptest::prop_assert!(raw_controls(&shown).is_empty());
            if line(&s).chars().count() <= max {
                proptest::prop_assert_eq!(shown, line(&s).into_owned());
            }
        }
    }
}
