//! Foreign text in Markdown (the summaries of `run`, `test`, `compare` and `stats`): requests,
//! outputs, errors, ids and expectation failures are shown in code spans, where nothing
//! renders as HTML, a link or an image; in table cells `|` is escaped and newlines become
//! spaces.

use super::printable;

/// Foreign text as one inline code span on one line (empty text: nothing). The fence is one
/// backtick longer than the longest run of backticks inside, and spaces pad the text, so a
/// backtick at either end stays text (CommonMark strips one space from each side).
pub fn markdown_code(text: &str) -> String {
    // Line breaks become spaces; other control characters are shown escaped, never raw.
    let flat = printable(&text.replace(['\r', '\n'], " ")).into_owned();
    if flat.is_empty() {
        return flat;
    }
    let fence = "`".repeat(longest_backtick_run(&flat) + 1);
    format!("{fence} {flat} {fence}")
}

/// Foreign text safe in one table cell: a code span whose `|` cannot split the row (GFM
/// never ends a cell at a pipe after a backslash, and shows `\|` as `|`, in code spans too).
pub fn markdown_cell(text: &str) -> String {
    markdown_code(text).replace('|', "\\|")
}

/// The length of the longest run of backticks in `text`.
pub fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_hold_any_text() {
        assert_eq!(markdown_cell("a | b\nc"), "` a \\| b c `");
        assert_eq!(markdown_cell(""), "");
    }

    #[test]
    fn foreign_text_is_a_code_span_longer_than_its_backticks() {
        assert_eq!(
            markdown_code("<img src=x onerror=alert(1)>"),
            "` <img src=x onerror=alert(1)> `"
        );
        assert_eq!(
            markdown_code("![x](https://e.example/t.png)"),
            "` ![x](https://e.example/t.png) `"
        );
        assert_eq!(markdown_code("a `b` ``c``"), "``` a `b` ``c`` ```");
        assert_eq!(markdown_code("`"), "`` ` ``");
        assert_eq!(markdown_code("\x1b[31m"), "` \\u{1b}[31m `");
    }
}
