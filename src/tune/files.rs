//! Reading `orch tune`'s inputs a value at a time: results files and reports one a line, or
//! pretty reports (one, or several concatenated), told apart by the first line as
//! `orch stats` tells them (with its reader); memory is bounded by the longest value, never by the file.

use std::io::BufRead;
use std::path::Path;

use super::input::{run_of, Run};
use crate::report::Saved;
use crate::stats::StatsError;
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
    /// A results file or report that cannot be read, or a value that is not JSON (as
    /// `orch stats` says it).
    #[error(transparent)]
    Read(#[from] StatsError),
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

/// Reads every run of every file in order, handing each to `each`: the files are read as
/// `orch stats` reads them (JSON lines or pretty documents, each value placed at its line).
pub fn read_runs(paths: &[impl AsRef<Path>], mut each: impl FnMut(Run)) -> Result<(), TuneError> {
    crate::stats::read_values(paths, |value: Saved, shown, line| {
        match run_of(value) {
            Ok(Some(run)) => each(run),
            Ok(None) => {}
            Err(why) => return Err(crate::stats::not_a_run(shown, line, why).into()),
        }
        Ok(())
    })
}
