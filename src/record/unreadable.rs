//! Why a cassette or a journal cannot be read back (`--replay`, `--cache`, `orch resume`):
//! the file, its bytes, or the line that is no entry.

use std::fmt;

use crate::read::Unread;

/// Which kind of record file, as messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// A cassette (`--replay`, `--cache`).
    Cassette,
    /// A journal (`orch resume`).
    Journal,
}

impl Recording {
    /// What one line of it is, as messages name it.
    fn entry(self) -> &'static str {
        match self {
            Recording::Cassette => "cassette entry",
            Recording::Journal => "journal line",
        }
    }
}

impl fmt::Display for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Recording::Cassette => "cassette",
            Recording::Journal => "journal",
        })
    }
}

/// Why a cassette or a journal cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    /// Something other than a regular file (a FIFO, a device, a directory).
    #[error("{what} {path} is not a regular file")]
    NotFile {
        /// Which kind of file.
        what: Recording,
        /// The path, as shown.
        path: String,
    },
    /// A file over the cap.
    #[error("{what} {path} is larger than {mib} MiB")]
    TooLarge {
        /// Which kind of file.
        what: Recording,
        /// The path, as shown.
        path: String,
        /// The cap, in MiB.
        mib: u64,
    },
    /// Nothing at the path.
    #[error("cannot read {what} {path}: no such file or directory")]
    Missing {
        /// Which kind of file.
        what: Recording,
        /// The path, as shown.
        path: String,
    },
    /// The file system refused.
    #[error("cannot read {what} {path}: {source}")]
    Io {
        /// Which kind of file.
        what: Recording,
        /// The path, as shown.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Bytes that are not UTF-8 text.
    #[error("{what} {path} is not UTF-8 text")]
    NotUtf8 {
        /// Which kind of file.
        what: Recording,
        /// The path, as shown.
        path: String,
    },
    /// A line that is no entry of its kind of file.
    #[error("{path}:{line}: not a {}: {why}", .what.entry())]
    BadLine {
        /// Which kind of file.
        what: Recording,
        /// The path, as shown.
        path: String,
        /// The line, from 1.
        line: usize,
        /// Why (the JSON parser's words, or the unknown kind).
        why: String,
    },
    /// A cassette with nothing in it, given to `--replay`.
    #[error("cassette {path} is empty: record one with `orch run --record {path} …`")]
    EmptyCassette {
        /// The path, as shown.
        path: String,
    },
    /// A file of lines without the `run` line every journal begins with.
    #[error("{path} is not a journal: it has no `run` line (write one with `orch run --journal {path} …`)")]
    NoRunLine {
        /// The path, as shown.
        path: String,
    },
}

impl Unreadable {
    /// Why the bounded read of `path` (a `what`, capped at `max` bytes) failed.
    pub(super) fn of(what: Recording, path: String, e: Unread, max: u64) -> Self {
        match e {
            Unread::NotFile(_) => Unreadable::NotFile { what, path },
            Unread::TooLarge(_) => Unreadable::TooLarge {
                what,
                path,
                mib: max >> 20,
            },
            Unread::Missing => Unreadable::Missing { what, path },
            Unread::Io(source) => Unreadable::Io { what, path, source },
        }
    }
}
