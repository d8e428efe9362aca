//! Text made safe for a terminal: a config value or a model's reply may hold control
//! characters (`ESC[2J`, `ESC]0;title BEL`, a newline that forges a diagnostic line). Every
//! human output goes through here; JSON is escaped by serde already.

use std::borrow::Cow;
use std::fmt::Write;

/// The colour sequences orch itself writes (`report::Style`); nothing else of `ESC` survives.
const OWN_STYLES: &[&str] = &[
    "\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m",
];

/// One line for a terminal: every control character, newlines included, written as a
/// Rust escape (`\n`, `\u{1b}`).
pub fn printable(text: &str) -> Cow<'_, str> {
    escape(text, |_| false, false)
}

/// Lines for a terminal: newlines and orch's own colour sequences kept, every other control
/// character escaped.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n', true)
}

/// Text orch did not write (an answer shown in full), for a terminal: newlines and tabs
/// kept, every other control character escaped, `ESC` always (even as orch's own colours).
pub fn printable_text(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t', false)
}

/// Invisible characters that reorder or hide text on a terminal (bidi embeddings, overrides
/// and isolates, directional marks): a reply could make a line read other than it is.
fn reorders(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character `kept` does not allow escaped, and orch's own
/// colour sequences passed through when `own_styles`.
fn escape(text: &str, kept: impl Fn(char) -> bool, own_styles: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && !kept(c)) || reorders(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if own_styles && c == '\x1b' {
            if let Some(own) = OWN_STYLES.iter().find(|s| rest.starts_with(**s)) {
                out.push_str(own);
                rest = &rest[own.len()..];
                continue;
            }
        }
        if unsafe_char(c) {
            let _ = write!(out, "{}", c.escape_default());
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_keeps_its_lines_and_tabs_and_no_escape_sequence() {
        assert_eq!(
            printable_text("\x1b[31mred\x1b[0m\n\tcode\r"),
            "\\u{1b}[31mred\\u{1b}[0m\n\tcode\\r"
        );
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(printable("plain"), "plain");
        assert_eq!(
            printable("zz\nagents/forged.yaml:1:1: error: FORGED"),
            "zz\\nagents/forged.yaml:1:1: error: FORGED"
        );
        assert_eq!(printable("\x1b[2Jboss\x07\u{9b}"), "\\u{1b}[2Jboss\\u{7}\\u{9b}");
        assert_eq!(
            printable_lines("\x1b[1mtitle\x1b[0m\nline \x1b]0;pwned\x07\r"),
            "\x1b[1mtitle\x1b[0m\nline \\u{1b}]0;pwned\\u{7}\\r"
        );
        // A right-to-left override would make `gpj.exe` read `exe.jpg`.
        assert_eq!(printable("a\u{202e}gpj.exe"), "a\\u{202e}gpj.exe");
        assert_eq!(printable("é ü 漢"), "é ü 漢");
    }
}
