//! Text safe in XML and HTML, in element text and in attribute values alike (JUnit files,
//! the HTML report): prompts and outputs hold any character, and XML 1.0 forbids most
//! control characters outright.

use std::fmt::Write;

/// `text` escaped for markup: the five special characters as entities, line breaks and
/// tabs as character references, other control characters as U+FFFD.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => {
                let _ = write!(out, "&#{};", c as u32);
            }
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_is_escaped() {
        assert_eq!(
            escape_markup("<script>\"a\" & 'b'\n\u{1b}"),
            "&lt;script&gt;&quot;a&quot; &amp; &apos;b&apos;&#10;\u{fffd}"
        );
    }
}
