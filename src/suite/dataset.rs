//! Datasets: a suite's cases taken from files beside it, JSON lines or CSV with a
//! header, read one row at a time and never whole. Each row becomes the same positioned node
//! an inline case is, decoded by the suite's own case decoder, so a row takes every case key.

use std::collections::VecDeque;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::csv::{CsvError, CsvRows};
use super::lines::{Lines, LinesError};
use crate::config::{At, Decoder, Diagnostic, FromNode, KeySpec, Node, NodeKey, NodeValue, Pos};

/// The longest dataset row: one case.
pub const MAX_ROW_BYTES: usize = 1 << 20;

/// A suite's `dataset`: one file or a list of them, relative to the suite file.
#[derive(Clone, Debug, Default)]
pub struct Datasets(pub Vec<At<String>>);

impl FromNode for Datasets {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        let files = match &node.value {
            NodeValue::Str(_) => vec![At::<String>::from_node(d, node, key, what)?],
            NodeValue::Seq(_) => Vec::<At<String>>::from_node(d, node, key, what)?,
            _ => {
                d.type_error(node, &format!("`{}` in {what}", key.name), "a file or a list of files");
                return None;
            }
        };
        Some(Datasets(files))
    }
}

/// Decodes a row's node into a case, its problems told to the decoder.
pub type DecodeRow<T> = fn(&mut Decoder, &Node) -> Option<T>;

/// The rows of a suite's datasets, one case at a time, each with the file it is in. What
/// cannot be read or decoded goes to `diags`, located at FILE:LINE.
pub struct Rows<T> {
    decode: DecodeRow<T>,
    files: VecDeque<(At<String>, PathBuf)>,
    suite_shown: String,
    current: Option<(Rc<str>, Reader)>,
    /// Every problem met so far.
    pub diags: Vec<Diagnostic>,
    /// Every problem met so far, once each: a CSV header's bad column is met in every row,
    /// at the header's line, and said once.
    said: std::collections::HashSet<(String, u32, u32, String)>,
}

/// One open dataset file.
enum Reader {
    Json(Lines<BufReader<std::fs::File>>),
    Csv(CsvRows<BufReader<std::fs::File>>, Header),
}

/// A CSV dataset's header: its cells (the keys of every row) and where it is.
struct Header {
    names: Vec<String>,
    pos: Pos,
}

impl<T> Rows<T> {
    /// The rows of `datasets`, named relative to the suite at `suite` (shown as `suite_shown`),
    /// each decoded by `decode`.
    pub fn new(suite: &Path, suite_shown: &str, datasets: &Datasets, decode: DecodeRow<T>) -> Self {
        let dir = suite.parent().unwrap_or(Path::new(""));
        Rows {
            decode,
            files: (datasets.0.iter()).map(|f| (f.clone(), dir.join(&f.value))).collect(),
            suite_shown: suite_shown.to_string(),
            current: None,
            diags: Vec::new(),
            said: std::collections::HashSet::new(),
        }
    }

    /// Opens the next file; false when none is left.
    fn open_next(&mut self) -> bool {
        while let Some((named, path)) = self.files.pop_front() {
            let shown: Rc<str> = crate::read::display(&path).into();
            match open(&path, &shown) {
                Ok(reader) => {
                    self.current = Some((shown, reader));
                    return true;
                }
                Err(message) => (self.diags).push(Diagnostic::error(&self.suite_shown, named.pos, "dataset", message)),
            }
        }
        false
    }

    /// The next row as a located node, or `None` at the end of the current file.
    fn next_node(&mut self) -> Option<(Rc<str>, Node)> {
        let (shown, reader) = self.current.as_mut()?;
        let at = |line: usize| Pos {
            line: line as u32,
            column: 1,
        };
        // A problem with a row, and whether it ends its file (what follows cannot be placed).
        let fail = |line, message: String, ends| (Diagnostic::error(shown, at(line), "dataset", message), ends);
        let row = match reader {
            Reader::Json(lines) => match lines.next_line() {
                Ok(None) => None,
                Ok(Some((line, text))) => Some(match serde_json::from_str(text) {
                    Ok(json) => Ok(node_of(&json, at(line.number))),
                    Err(e) => Err(fail(line.number, not_json(&e), false)),
                }),
                Err(e) => Some(Err((lines_error(e, shown), true))),
            },
            Reader::Csv(rows, header) => match rows.next_record() {
                None => None,
                Some(Ok((line, cells))) => Some(csv_node(header, cells, at(line)).map_err(|m| fail(line, m, false))),
                Some(Err((line, e))) => Some(Err(fail(line, csv_words(e), true))),
            },
        };
        match row {
            Some(Ok(node)) => Some((shown.clone(), node)),
            Some(Err((diag, ends))) => {
                self.diags.push(diag);
                if ends {
                    self.current = None;
                }
                self.next_node()
            }
            None => {
                self.current = None;
                None
            }
        }
    }
}

impl<T> Rows<T> {
    /// Keeps of the problems from `from` on those not said before.
    fn say_once(&mut self, from: usize) {
        let said = &mut self.said;
        let mut at = 0;
        self.diags.retain(|d| {
            at += 1;
            at <= from || said.insert((d.file.clone(), d.line, d.column, d.message.clone()))
        });
    }
}

impl<T> Iterator for Rows<T> {
    type Item = (Rc<str>, T);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.current.is_none() && !self.open_next() {
                return None;
            }
            let Some((shown, node)) = self.next_node() else {
                continue;
            };
            let before = self.diags.len();
            let mut decoder = Decoder::new(&shown, &mut self.diags);
            let case = (self.decode)(&mut decoder, &node);
            self.say_once(before);
            if let Some(case) = case {
                return Some((shown, case));
            }
        }
    }
}

/// Opens a dataset by its extension (`.jsonl`, `.csv`; a CSV's header read), or says why not.
fn open(path: &Path, shown: &str) -> Result<Reader, String> {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !matches!(extension, "jsonl" | "csv") {
        return Err(format!("dataset {shown} must be a `.jsonl` or `.csv` file"));
    }
    let lines = match Lines::open(path) {
        Ok(Some(lines)) => lines,
        Ok(None) => return Err(format!("cannot read dataset {shown}: no such file")),
        Err(e) => return Err(format!("dataset {e}")),
    };
    let mut reader = lines.into_reader();
    skip_bom(&mut reader).map_err(|e| format!("cannot read dataset {shown}: {e}"))?;
    if extension == "jsonl" {
        return Ok(Reader::Json(Lines::new(reader, shown.into(), MAX_ROW_BYTES)));
    }
    let mut rows = CsvRows::new(reader, MAX_ROW_BYTES);
    match rows.next_record() {
        Some(Ok((line, names))) => {
            let pos = Pos {
                line: line as u32,
                column: 1,
            };
            Ok(Reader::Csv(rows, Header { names, pos }))
        }
        Some(Err((line, e))) => Err(format!("{shown}:{line}: {}", csv_words(e))),
        None => Err(format!("dataset {shown} has no header row")),
    }
}

/// Skips a UTF-8 byte order mark at the start of `reader` (spreadsheets' "CSV UTF-8" begins
/// with one).
fn skip_bom(reader: &mut impl std::io::BufRead) -> std::io::Result<()> {
    if reader.fill_buf()?.starts_with(b"\xef\xbb\xbf") {
        reader.consume(3);
    }
    Ok(())
}

/// A line error of a JSON lines dataset, at its line.
fn lines_error(e: LinesError, shown: &str) -> Diagnostic {
    let (line, message) = match &e {
        LinesError::TooLong { line, .. } => (*line, "the row is longer than 1 MiB".to_string()),
        LinesError::NotUtf8 { line, .. } => (*line, "not UTF-8 text".to_string()),
        _ => (1, e.to_string()),
    };
    let pos = Pos {
        line: line as u32,
        column: 1,
    };
    Diagnostic::error(shown, pos, "dataset", message)
}

/// Why a row is not JSON, in serde's words, placed in the row (its line is the row's).
fn not_json(e: &serde_json::Error) -> String {
    let words = crate::text::json_error_words(e);
    format!("not JSON: {words} (column {})", e.column())
}

/// A CSV error in words.
fn csv_words(e: CsvError) -> String {
    match e {
        CsvError::TooLong => "the row is longer than 1 MiB".into(),
        CsvError::NotUtf8 => "not UTF-8 text".into(),
        CsvError::Unterminated => "a quoted cell is never closed".into(),
        CsvError::Unreadable(why) => format!("cannot read: {why}"),
    }
}

/// A CSV row as a case's node: `id` and `prompt` text, every other cell JSON when it parses
/// and text otherwise, an empty cell absent; `expect.KEY` columns go under `expect`. Its
/// values are placed at the row, its keys at the header (where a bad key is fixed).
fn csv_node(header: &Header, cells: Vec<String>, pos: Pos) -> Result<Node, String> {
    if cells.len() > header.names.len() {
        return Err(format!(
            "the row has {} cells, the header {}",
            cells.len(),
            header.names.len()
        ));
    }
    let mut entries: Vec<(NodeKey, Node)> = Vec::new();
    for (name, cell) in header.names.iter().zip(cells).filter(|(_, c)| !c.is_empty()) {
        let value = match name.as_str() {
            "id" | "prompt" => Node {
                value: NodeValue::Str(cell),
                pos,
            },
            _ => serde_json::from_str(&cell).map_or(
                Node {
                    value: NodeValue::Str(cell),
                    pos,
                },
                |json| node_of(&json, pos),
            ),
        };
        let (outer, inner) = name
            .split_once('.')
            .map_or((name.as_str(), None), |(o, i)| (o, Some(i)));
        let key = |name: &str| NodeKey {
            name: name.into(),
            pos: header.pos,
        };
        let Some(inner) = inner else {
            entries.push((key(outer), value));
            continue;
        };
        let at = match entries
            .iter()
            .position(|(k, n)| k.name == outer && matches!(n.value, NodeValue::Map(_)))
        {
            Some(at) => at,
            None => {
                entries.push((key(outer), node_of(&serde_json::json!({}), pos)));
                entries.len() - 1
            }
        };
        if let NodeValue::Map(inside) = &mut entries[at].1.value {
            inside.push((key(inner), value));
        }
    }
    Ok(Node {
        value: NodeValue::Map(entries),
        pos,
    })
}

/// A JSON value as a node, every part placed at `pos` (its row).
pub fn node_of(json: &serde_json::Value, pos: Pos) -> Node {
    use serde_json::Value as J;
    let value = match json {
        J::Null => NodeValue::Null,
        J::Bool(b) => NodeValue::Bool(*b),
        J::Number(n) => n
            .as_i64()
            .map_or(NodeValue::Float(n.as_f64().unwrap_or(f64::NAN)), NodeValue::Int),
        J::String(s) => NodeValue::Str(s.clone()),
        J::Array(items) => NodeValue::Seq(items.iter().map(|i| node_of(i, pos)).collect()),
        J::Object(map) => NodeValue::Map(
            map.iter()
                .map(|(k, v)| (NodeKey { name: k.clone(), pos }, node_of(v, pos)))
                .collect(),
        ),
    };
    Node { value, pos }
}
