//! Reading `orch tune`'s inputs a value at a time: results files and reports one a line, or
//! pretty reports (one, or several concatenated), told apart by the first line as
//! `orch stats` tells them; memory is bounded by the longest value, never by the file.

use std::io::{BufRead, Read};
use std::path::Path;

use super::input::{run_of, Run, Seen};
use crate::suite::{Lines, LinesError};

/// Why `orch tune`'s inputs cannot be read, and where (`FILE:LINE: …`).
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A file that cannot be read, or a line that is not text.
    #[error(transparent)]
    Lines(#[from] LinesError),
    /// A file that is not there.
    #[error("cannot read {shown}: no such file or directory")]
    Missing {
        /// The path as messages name it.
        shown: String,
    },
    /// A value that is not what the file must hold.
    #[error("{shown}:{line}: {why}")]
    Malformed {
        /// The file as messages name it.
        shown: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong there.
        why: String,
    },
}

impl TuneError {
    /// A malformed value at `line` of `shown`.
    pub fn at(shown: &str, line: usize, why: impl std::fmt::Display) -> Self {
        TuneError::Malformed {
            shown: shown.to_string(),
            line,
            why: why.to_string(),
        }
    }
}

/// The lines of the input at `path`, or an error when nothing is there.
pub fn lines_of(path: &Path) -> Result<Lines<Box<dyn BufRead>>, TuneError> {
    Lines::input(path)?.ok_or_else(|| TuneError::Missing {
        shown: crate::read::display(path),
    })
}

/// Reads every run of every file in order, handing each to `each`.
pub fn read_runs(paths: &[impl AsRef<Path>], mut each: impl FnMut(Run)) -> Result<(), TuneError> {
    for path in paths {
        read_file(path.as_ref(), &mut each)?;
    }
    Ok(())
}

/// One file: JSON lines, or pretty documents when its first line opens a value it does not
/// close.
fn read_file(path: &Path, each: &mut impl FnMut(Run)) -> Result<(), TuneError> {
    let shown = crate::read::display(path);
    let mut lines = lines_of(path)?;
    let mut first = true;
    while let Some((at, line)) = lines.next_line()? {
        let value = match serde_json::from_str::<Seen>(line) {
            Ok(value) => value,
            Err(e) if std::mem::take(&mut first) && e.is_eof() => {
                let rest = std::io::Cursor::new(format!("{line}\n")).chain(lines.into_reader());
                return read_documents(rest, at.number - 1, &shown, each);
            }
            Err(e) => return Err(TuneError::at(&shown, at.number, not_a_run(&e))),
        };
        first = false;
        hand(value, &shown, at.number, each)?;
    }
    Ok(())
}

/// Pretty JSON values one after another, the first starting on line `skipped + 1`.
fn read_documents(reader: impl Read, skipped: usize, shown: &str, each: &mut impl FnMut(Run)) -> Result<(), TuneError> {
    let stream = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader)).into_iter::<Seen>();
    for value in stream {
        let value = value.map_err(|e| TuneError::at(shown, skipped + e.line().max(1), not_a_run(&e)))?;
        hand(value, shown, skipped + 1, each)?;
    }
    Ok(())
}

/// A value handed on as a run (a results line without a report is passed over).
fn hand(value: Seen, shown: &str, line: usize, each: &mut impl FnMut(Run)) -> Result<(), TuneError> {
    match run_of(value) {
        Ok(Some(run)) => each(run),
        Ok(None) => {}
        Err(why) => return Err(TuneError::at(shown, line, why)),
    }
    Ok(())
}

/// The parser's words without their place, after what the value should have been.
fn not_a_run(e: &serde_json::Error) -> String {
    let what = e.to_string();
    let what = what.split(" at line ").next().unwrap_or_default().to_string();
    format!("not a results line or run report: {what}")
}
