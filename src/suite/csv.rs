//! CSV rows read one record at a time (RFC 4180: `,` between cells, `"` around a cell that
//! holds one, `""` for a quote inside it, newlines allowed inside quotes), each record at most
//! a cap, each located at the physical line where it starts. Small enough not to need a crate.

use std::io::{BufRead, Read};

/// Why a record cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub enum CsvError {
    /// The record is longer than the cap.
    TooLong,
    /// The record is not UTF-8 text.
    NotUtf8,
    /// A quote opened and never closed before the end of the file.
    Unterminated,
    /// The file could not be read.
    Unreadable(String),
}

/// A record and the line it starts at, or what is wrong with the record at a line.
pub type Record = Result<(usize, Vec<String>), (usize, CsvError)>;

/// A CSV file read one record at a time.
pub struct CsvRows<R> {
    reader: R,
    max: usize,
    /// The physical line the next record starts at.
    next_line: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> CsvRows<R> {
    /// The records of `reader`, each at most `max` bytes.
    pub fn new(reader: R, max: usize) -> Self {
        CsvRows {
            reader,
            max,
            next_line: 1,
            buf: Vec::new(),
        }
    }

    /// The next record that is not a blank line, with the line it starts at; an error comes
    /// with the line of the record it is about.
    pub fn next_record(&mut self) -> Option<Record> {
        loop {
            let start = self.next_line;
            match self.read_record() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err((start, e))),
            }
            let text = trim_newline(&self.buf);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(text) = std::str::from_utf8(text) else {
                return Some(Err((start, CsvError::NotUtf8)));
            };
            return Some(Ok((start, cells(text))));
        }
    }

    /// Reads physical lines into the buffer until the quotes balance; false at the end.
    fn read_record(&mut self) -> Result<bool, CsvError> {
        self.buf.clear();
        let mut quoted = false;
        loop {
            let from = self.buf.len();
            let room = (self.max + 2).saturating_sub(from) as u64 + 1;
            let read = (&mut self.reader)
                .take(room)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| CsvError::Unreadable(e.to_string()))?;
            if trim_newline(&self.buf).len() > self.max {
                return Err(CsvError::TooLong);
            }
            if read == 0 {
                return match (from, quoted) {
                    (0, _) => Ok(false),
                    (_, true) => Err(CsvError::Unterminated),
                    _ => Ok(true),
                };
            }
            self.next_line += usize::from(self.buf.ends_with(b"\n"));
            quoted ^= self.buf[from..].iter().filter(|b| **b == b'"').count() % 2 == 1;
            if !quoted || !self.buf.ends_with(b"\n") {
                if quoted {
                    return Err(CsvError::Unterminated);
                }
                return Ok(true);
            }
        }
    }
}

/// The record without its line ending.
fn trim_newline(buf: &[u8]) -> &[u8] {
    let text = buf.strip_suffix(b"\n").unwrap_or(buf);
    text.strip_suffix(b"\r").unwrap_or(text)
}

/// The cells of one record, quotes undone.
fn cells(record: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = record.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if cell.is_empty() => quoted = true,
            (false, ',') => out.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    out.push(cell);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str, max: usize) -> Vec<Record> {
        let mut rows = CsvRows::new(std::io::Cursor::new(text.as_bytes().to_vec()), max);
        std::iter::from_fn(|| rows.next_record()).take(10).collect()
    }

    #[test]
    fn quoted_cells_may_hold_commas_quotes_and_newlines() {
        let got = records("id,prompt\r\na,\"x, \"\"y\"\"\nz\"\n\nb,\n", 100);
        assert_eq!(
            got,
            [
                Ok((1, vec!["id".into(), "prompt".into()])),
                Ok((2, vec!["a".into(), "x, \"y\"\nz".into()])),
                Ok((5, vec!["b".into(), String::new()])),
            ]
        );
    }

    #[test]
    fn a_record_over_the_cap_or_never_closed_is_an_error_at_its_line() {
        assert_eq!(records("a\nbbbbbbbbbbbb\n", 8)[1], Err((2, CsvError::TooLong)));
        assert_eq!(records("a\n\"b\nc\n", 100)[1], Err((2, CsvError::Unterminated)));
    }
}
