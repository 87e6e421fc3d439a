//! Text from outside made inert for Markdown, for every Markdown iocurve
//! writes (the export, a [`super::table::Table`] as Markdown, `compare`'s),
//! apart from [`super::markdown`] so that the table it builds on can use it.

use crate::units::escape as outside;

/// Text from data, made inert for Markdown and the HTML it becomes: HTML's
/// `&`, `<` and `>` as entities; `|` escaped so that it stays inside its
/// table cell; backslashes, backticks and brackets as entities, so that
/// they can neither undo an escape nor open a code span or a link; line
/// breaks as spaces, so that a cell or a heading stays on its line; any
/// other control or bidirectional character shown escaped (see
/// [`crate::units::escape`]), its backslash as an entity too.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("&#92;"),
            '`' => out.push_str("&#96;"),
            '[' => out.push_str("&#91;"),
            ']' => out.push_str("&#93;"),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' | '\n' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}' => out.push(' '),
            c if outside::is_unsafe(c) => {
                let mut shown = String::new();
                outside::push_escaped(&mut shown, c);
                out.push_str(&shown.replace('\\', "&#92;"));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_is_inert() {
        assert_eq!(escape("<script>"), "&lt;script&gt;");
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("a\\|b"), "a&#92;\\|b");
        assert_eq!(escape("R&D"), "R&amp;D");
        assert_eq!(escape("two\r\nlines\nthree"), "two lines three");
        assert_eq!(
            escape("[x](javascript:y) `z`"),
            "&#91;x&#93;(javascript:y) &#96;z&#96;"
        );
        assert_eq!(escape("SD SanDisk SD08G (8 GB)"), "SD SanDisk SD08G (8 GB)");
    }
}
