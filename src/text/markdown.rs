//! Foreign text in Markdown (the summaries of `run`, `test`, `compare` and `stats`): requests,
//! outputs, errors, ids and expectation failures are shown in code spans, where nothing
//! renders as HTML, a link or an image; and every table is written by [`MarkdownTable`],
//! which keeps each cell in its cell.

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

/// The length of the longest run of backticks in `text`.
pub fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// The one writer of Markdown tables (GitHub's tables): a header, its alignment row, and a
/// line per row, each cell made safe by [`markdown_cell_text`], so no text (foreign text in
/// a code span included) can end its cell early or start another.
#[derive(Clone, Debug)]
pub struct MarkdownTable {
    text: String,
    /// Rows added so far.
    rows: usize,
}

impl MarkdownTable {
    /// A table with these columns (an empty name: a column with no header).
    pub fn new(columns: &[(&str, Align)]) -> Self {
        let mut text = String::from("|");
        for (name, _) in columns {
            let name = markdown_cell_text(name);
            text.push_str(&if name.is_empty() {
                " |".to_string()
            } else {
                format!(" {name} |")
            });
        }
        text.push_str("\n|");
        for (_, align) in columns {
            text.push_str(match align {
                Align::Left => " --- |",
                Align::Right => " ---: |",
            });
        }
        text.push('\n');
        MarkdownTable { text, rows: 0 }
    }

    /// Adds a row: one text per column, in Markdown (foreign text already in code spans).
    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.rows += 1;
        self.text.push('|');
        for cell in cells {
            self.text.push(' ');
            self.text.push_str(&markdown_cell_text(cell.as_ref()));
            self.text.push_str(" |");
        }
        self.text.push('\n');
        self
    }

    /// The table's Markdown, ending with a line break.
    pub fn finish(self) -> String {
        self.text
    }

    /// `before` then the table's Markdown, or nothing at all when no row was added: the
    /// optional tables of a page (variants, rungs, graders) are absent rather than empty.
    pub fn finish_unless_empty(self, before: &str) -> String {
        match self.rows {
            0 => String::new(),
            _ => format!("{before}{}", self.text),
        }
    }
}

/// Markdown safe in one table cell: line breaks become spaces and every `|` is escaped
/// (`\|`: GitHub never ends a cell there, and shows a `|`, in code spans too). The
/// backslashes right before a `|` are doubled first: a renderer that reads `\\` as one
/// escaped backslash would otherwise end the cell at that pipe (`\|` in a code span), and
/// let what follows render (a server's `<img …>`). Other backslashes stay as they are.
pub fn markdown_cell_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut backslashes = 0;
    for c in text.chars() {
        if c == '\\' {
            backslashes += 1;
            continue;
        }
        let run = if c == '|' { 2 * backslashes } else { backslashes };
        out.extend(std::iter::repeat_n('\\', run));
        backslashes = 0;
        match c {
            '|' => out.push_str("\\|"),
            '\r' | '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out.extend(std::iter::repeat_n('\\', backslashes));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_hold_any_text() {
        assert_eq!(markdown_cell_text(&markdown_code("a | b\nc")), "` a \\| b c `");
        assert_eq!(markdown_cell_text(""), "");
        // A backslash before a pipe is doubled, then the pipe escaped: an odd run before
        // every pipe, so no reading of `\\` ends the cell there.
        assert_eq!(
            markdown_cell_text(&markdown_code("\\|<img src=x>")),
            "` \\\\\\|<img src=x> `"
        );
        assert_eq!(markdown_cell_text("C:\\dir \\\\| x\\"), "C:\\dir \\\\\\\\\\| x\\");
    }

    #[test]
    fn one_writer_for_every_table() {
        let mut table = MarkdownTable::new(&[("", Align::Left), ("case", Align::Left), ("runs", Align::Right)]);
        table.row(["✓", "` a|b `", "2"]).row(["", "", "0"]);
        assert_eq!(
            table.finish(),
            "| | case | runs |\n| --- | --- | ---: |\n| ✓ | ` a\\|b ` | 2 |\n|  |  | 0 |\n"
        );
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
