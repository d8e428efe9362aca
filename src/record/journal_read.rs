//! Resume's reading of a journal: the file read whole (bounded), line by line, a last line
//! cut short by a killed run ignored.

use std::path::Path;

use super::journal::Journal;
use super::unreadable::{Recording, Unreadable};
use crate::read::read_bounded_shared;

/// The largest journal read (256 MiB), as for cassettes.
const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a journal. A line that is not a journal line is an error at its line number,
/// except the last one when the file does not end there: a line cut short by a killed run,
/// ignored (`cut_line` says which).
pub fn load_journal(path: &Path) -> Result<Journal, Unreadable> {
    let shown = || path.display().to_string();
    let bytes = read_bounded_shared(path, MAX_JOURNAL_BYTES)
        .map_err(|e| Unreadable::of(Recording::Journal, shown(), e, MAX_JOURNAL_BYTES))?;
    let text = journal_text(bytes).ok_or_else(|| Unreadable::NotUtf8 {
        what: Recording::Journal,
        path: shown(),
    })?;
    let mut journal = Journal {
        ends_whole: text.is_empty() || text.ends_with('\n'),
        kept: text.len() as u64,
        ..Journal::default()
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if let Err(e) = journal.take(line.trim_end_matches(['\n', '\r'])) {
            if i + 1 == lines.len() && !line.ends_with('\n') {
                journal.cut_line = Some(i + 1);
                journal.kept -= line.len() as u64;
                journal.ends_whole = true;
                break;
            }
            return Err(Unreadable::BadLine {
                what: Recording::Journal,
                path: shown(),
                line: i + 1,
                why: e,
            });
        }
    }
    if journal.run.is_none() {
        return Err(Unreadable::NoRunLine { path: shown() });
    }
    Ok(journal)
}

/// A journal's bytes as text. A last line without its newline may have been cut inside a
/// character by a kill: its bytes are read lossily (it is then no JSON, and ignored as cut
/// short), while a bad byte in a whole line makes the file no journal (`None`).
fn journal_text(bytes: Vec<u8>) -> Option<String> {
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |at| at + 1);
    let (lines, last) = bytes.split_at(whole);
    let mut text = std::str::from_utf8(lines).ok()?.to_string();
    text.push_str(&String::from_utf8_lossy(last));
    Some(text)
}
