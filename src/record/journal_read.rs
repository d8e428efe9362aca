//! Resume's reading of a journal: the file read whole (bounded), line by line, a last line
//! cut short by a killed run ignored.

use std::path::Path;

use super::journal::Journal;
use crate::read::{read_bounded_shared, Unread};

/// The largest journal read (256 MiB), as for cassettes.
const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a journal. A line that is not a journal line is an error at its line number,
/// except the last one when the file does not end there: a line cut short by a killed run,
/// ignored (`cut_line` says which).
pub fn load_journal(path: &Path) -> Result<Journal, String> {
    let shown = path.display();
    let bytes = read_bounded_shared(path, MAX_JOURNAL_BYTES).map_err(|e| match e {
        Unread::NotFile(_) => format!("journal {shown} is not a regular file"),
        Unread::TooLarge(_) => format!("journal {shown} is larger than {} MiB", MAX_JOURNAL_BYTES >> 20),
        Unread::Missing => format!("cannot read journal {shown}: no such file or directory"),
        Unread::Io(e) => format!("cannot read journal {shown}: {e}"),
    })?;
    let text = journal_text(bytes).ok_or_else(|| format!("journal {shown} is not UTF-8 text"))?;
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
            return Err(format!("{shown}:{}: not a journal line: {e}", i + 1));
        }
    }
    if journal.run.is_none() {
        return Err(format!(
            "{shown} is not a journal: it has no `run` line (write one with `orch run --journal {shown} …`)"
        ));
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
