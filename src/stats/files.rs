//! Reading the files `orch stats` is given, one run at a time, in memory bounded by the
//! longest line or report, never by the file.
//!
//! The kind of a file is told by its content: when its first line is a whole JSON value, the
//! file is JSON lines (results lines of `orch test --results`, or reports one a line, as
//! `jq -c` writes them); otherwise it is pretty JSON: one saved run report, or several
//! concatenated (`orch run --format json >> runs.json`).

use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use super::input::{kind, Kind, NotARun};
use serde::de::DeserializeOwned;

use crate::report::Saved;
use crate::suite::{Lines, LinesError};

/// Why the files `orch stats` is given cannot be read, and where (`file:line[:column]: …`).
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// A file that cannot be read, or a line that is not text.
    #[error(transparent)]
    Lines(#[from] LinesError),
    /// A file that is not there.
    #[error("cannot read {shown}: no such file or directory")]
    Missing {
        /// The path as messages name it.
        shown: String,
    },
    /// A value that is not JSON, or not of a run's shape.
    #[error("{shown}:{line}:{column}: not a results line or run report: {why}")]
    Malformed {
        /// The file as messages name it.
        shown: String,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// The parser's words, without their place.
        why: String,
    },
    /// A value that is JSON but not a run to count.
    #[error("{shown}:{line}: {why}")]
    NotARun {
        /// The file as messages name it.
        shown: String,
        /// The line the value ends on, from 1.
        line: usize,
        /// Why.
        why: NotARun,
    },
}

/// What makes two paths one file: its device and inode on unix (hard links included), its
/// canonical path elsewhere.
#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = std::path::PathBuf;

/// The identity of the file at `path`, when it can be read.
fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(path).ok()
    }
}

/// The files to read, each once: a file named again (the same path, or another path to the
/// same file, a link or a hard link) is skipped, with a warning that says so; standard input (`-`) is kept as named.
pub fn distinct<P: AsRef<Path>>(paths: &[P]) -> (Vec<&Path>, Vec<String>) {
    let mut seen: Vec<(FileId, &Path)> = Vec::new();
    let mut kept = Vec::new();
    let mut warnings = Vec::new();
    for path in paths.iter().map(AsRef::as_ref) {
        let same = file_id(path).filter(|_| !crate::read::is_stdin(path));
        match same.as_ref().and_then(|s| seen.iter().find(|(p, _)| p == s)) {
            Some((_, first)) => {
                let (shown, first) = (crate::read::display(path), crate::read::display(first));
                let what = if shown == first {
                    "named more than once".to_string()
                } else {
                    format!("{first} again")
                };
                warnings.push(format!(
                    "warning: {shown} is {what}: its runs are counted once (the repeat was skipped)"
                ));
            }
            None => {
                seen.extend(same.map(|s| (s, path)));
                kept.push(path);
            }
        }
    }
    (kept, warnings)
}

/// Reads every file in order, handing each value to `each`; the first malformed value stops
/// the reading with a message that says where it is (`file:line:column`).
pub fn read_all(paths: &[impl AsRef<Path>], mut each: impl FnMut(Kind)) -> Result<(), StatsError> {
    read_values(paths, |doc: Saved, shown, line| {
        each(kind(doc).map_err(|why| not_a_run(shown, line, why))?);
        Ok(())
    })
}

/// Reads every file in order as values of `T` (JSON lines, or pretty documents: see the
/// module's doc), handing each to `each` with its file as messages name it and the line it
/// ends on; the first malformed value, or the first error of `each`, stops the reading.
pub fn read_values<T, E>(
    paths: &[impl AsRef<Path>],
    mut each: impl FnMut(T, &str, usize) -> Result<(), E>,
) -> Result<(), E>
where
    T: DeserializeOwned,
    E: From<StatsError>,
{
    for path in paths {
        read_file(path.as_ref(), &mut each)?;
    }
    Ok(())
}

/// Reads one file: JSON lines, or a pretty document (see the module's doc).
fn read_file<T: DeserializeOwned, E: From<StatsError>>(
    path: &Path,
    each: &mut impl FnMut(T, &str, usize) -> Result<(), E>,
) -> Result<(), E> {
    let shown = crate::read::display(path);
    let Some(mut lines) = Lines::input(path).map_err(StatsError::from)? else {
        return Err(StatsError::Missing { shown }.into());
    };
    let mut first = true;
    while let Some((at, line)) = lines.next_line().map_err(StatsError::from)? {
        let value = match serde_json::from_str::<T>(line) {
            Ok(value) => value,
            // A first line that opens a value it does not close: a pretty document, read on
            // from that line (the input may be a pipe: it is read once, never opened again).
            Err(e) if std::mem::take(&mut first) && e.is_eof() => {
                let opening = format!("{line}\n");
                let rest = std::io::Cursor::new(opening).chain(lines.into_reader());
                return read_document(rest, at.number - 1, &shown, each);
            }
            Err(e) => return Err(located(&shown, at.number, &e).into()),
        };
        first = false;
        each(value, &shown, at.number)?;
    }
    Ok(())
}

/// Reads pretty JSON values (one report, or several one after another) from `reader`, whose
/// first byte is on line `skipped + 1` of the file.
fn read_document<T: DeserializeOwned, E: From<StatsError>>(
    reader: impl Read,
    skipped: usize,
    shown: &str,
    each: &mut impl FnMut(T, &str, usize) -> Result<(), E>,
) -> Result<(), E> {
    let newlines = Rc::new(Cell::new(skipped));
    let counted = LineCount {
        inner: BufReader::new(reader),
        newlines: newlines.clone(),
    };
    for value in serde_json::Deserializer::from_reader(counted).into_iter::<T>() {
        let value = value.map_err(|e| located(shown, skipped + e.line(), &e))?;
        // The parser reads a byte at a time and stops at the value's end: its last line.
        each(value, shown, newlines.get() + 1)?;
    }
    Ok(())
}

/// A reader that counts the newlines it hands out, so a value can be located by line
/// (`StreamDeserializer` tells byte offsets only, and keeps its reader).
struct LineCount<R> {
    inner: R,
    newlines: Rc<Cell<usize>>,
}

impl<R: BufRead> Read for LineCount<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let seen = buf[..n].iter().filter(|&&b| b == b'\n').count();
        self.newlines.set(self.newlines.get() + seen);
        Ok(n)
    }
}

/// A JSON syntax or type error at `line` (of the file), with its column.
fn located(shown: &str, line: usize, e: &serde_json::Error) -> StatsError {
    StatsError::Malformed {
        shown: shown.to_string(),
        line,
        column: e.column().max(1),
        why: crate::text::json_error_words(e),
    }
}

/// A value at `line` that is not a run to count.
pub fn not_a_run(shown: &str, line: usize, why: NotARun) -> StatsError {
    StatsError::NotARun {
        shown: shown.to_string(),
        line,
        why,
    }
}
