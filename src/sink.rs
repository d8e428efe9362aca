//! Files a run writes line by line as it goes (`--events`, `--record`, `--cache`,
//! `--results`). A write error must not stop the run, nor vanish: the file remembers the
//! first one, and the command reports it after the report (exit 1 instead of 0).
//!
//! A line is written under a `std` mutex from whichever tokio worker finished the call: the
//! whole line and its newline in one buffer, handed to one `write(2)` on a file opened with
//! `O_APPEND`, under an advisory lock (`flock`) of the file. Other processes appending to the
//! same file (three `orch test --cache same.jsonl` at once) take the same lock, so no line is
//! ever cut by another's, whatever its size. A writer thread behind a channel would spare
//! the worker those microseconds at the price of a queue, and of a join before the first
//! write error can be reported; we keep the direct write until a profile says otherwise.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};

/// Where lines go: a file (locked for each line), or any writer (tests).
enum Out {
    /// A regular file, locked while a line is written.
    Locked(File),
    /// A device, a pipe or a writer of the tests: written as it is.
    Plain(Box<dyn Write + Send>),
}

/// Why a file could not be opened to write lines to: `cannot write events to out.jsonl: …`.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {label}: {io}")]
pub struct Unwritable {
    /// What the file is and where ("events to out.jsonl").
    pub label: String,
    /// Why the file system refused.
    pub io: std::io::Error,
}

impl Unwritable {
    /// `what` (`results`, `the journal`) at `path` could not be written.
    pub fn new(what: &str, path: &Path, io: std::io::Error) -> Self {
        Unwritable {
            label: label(what, path),
            io,
        }
    }
}

/// What a file is and where, as messages name it ("events to out.jsonl").
fn label(what: &str, path: &Path) -> String {
    format!("{what} to {}", path.display())
}

/// An append-only file of lines that remembers its first write error.
pub struct LineFile {
    /// What the file is, for the error ("events to out.jsonl").
    label: String,
    out: Mutex<Out>,
    error: OnceLock<String>,
}

impl LineFile {
    /// Creates (empties) the file at `path`; `what` names it in errors ("events", "the cassette").
    pub fn create(path: &Path, what: &str) -> Result<Self, Unwritable> {
        Self::open(path, what, true)
    }

    /// Opens the file at `path` to append to it (created when missing).
    pub fn append(path: &Path, what: &str) -> Result<Self, Unwritable> {
        Self::open(path, what, false)
    }

    /// Opens `path` in append mode (every write lands at the end, whoever else writes),
    /// emptied first when `empty`.
    fn open(path: &Path, what: &str, empty: bool) -> Result<Self, Unwritable> {
        let label = label(what, path);
        let opened = std::fs::OpenOptions::new().create(true).append(true).open(path);
        let file = opened.map_err(|io| Unwritable::new(what, path, io))?;
        let regular = file.metadata().is_ok_and(|m| m.is_file());
        if empty && regular {
            // Emptied under the exclusive lock, as a line is written: a reader holds the
            // shared one (`orch compare` maps the file). No locks on this file system: as it is.
            let _ = file.lock();
            file.set_len(0).map_err(|io| Unwritable::new(what, path, io))?;
            let _ = file.unlock();
        }
        let out = if regular {
            Out::Locked(file)
        } else {
            Out::Plain(Box::new(file))
        };
        Ok(LineFile {
            label,
            out: Mutex::new(out),
            error: OnceLock::new(),
        })
    }

    /// Lines written to `out`.
    #[cfg(test)]
    fn new(label: String, out: Box<dyn Write + Send>) -> Self {
        LineFile {
            label,
            out: Mutex::new(Out::Plain(out)),
            error: OnceLock::new(),
        }
    }

    /// Appends one line, whole, in one write (a reader of the file sees each line as it happens).
    pub fn line(&self, text: &str) {
        let mut whole = String::with_capacity(text.len() + 1);
        whole.push_str(text);
        whole.push('\n');
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let written = match &mut *out {
            Out::Locked(file) => write_locked(file, whole.as_bytes()),
            Out::Plain(out) => out.write_all(whole.as_bytes()).and_then(|()| out.flush()),
        };
        if let Err(e) = written {
            self.error.get_or_init(|| format!("cannot write {}: {e}", self.label));
        }
    }

    /// Empties the file (a regular file; anything else is left as it is).
    pub fn empty(&self) {
        let out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if let Out::Locked(file) = &*out {
            let _ = file.lock();
            if let Err(e) = file.set_len(0) {
                self.error.get_or_init(|| format!("cannot write {}: {e}", self.label));
            }
            let _ = file.unlock();
        }
    }

    /// The first write error, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.get().map(String::as_str)
    }
}

/// Writes `bytes` at the end of `file` under its advisory lock. A file system without locks
/// still gets the line, in one write: the lock only keeps other processes' lines apart.
fn write_locked(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    let locked = file.lock().is_ok();
    let written = file.write_all(bytes);
    let unlocked = if locked { file.unlock() } else { Ok(()) };
    written.and(unlocked)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Keeps each `write` call it gets.
    #[derive(Clone, Default)]
    struct Calls(std::sync::Arc<Mutex<Vec<Vec<u8>>>>);
    impl Write for Calls {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().push(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_line_of_any_size_is_one_write_with_its_newline() {
        let calls = Calls::default();
        let file = LineFile::new("events to calls".into(), Box::new(calls.clone()));
        let long = "x".repeat(20_000);
        file.line(&long);
        file.line("short");
        let seen = calls.0.lock().unwrap().clone();
        assert_eq!(seen, [format!("{long}\n").into_bytes(), b"short\n".to_vec()]);
    }

    #[test]
    fn lines_of_two_handles_on_one_file_stay_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.jsonl");
        let first = LineFile::create(&path, "events").unwrap();
        let second = LineFile::append(&path, "the cache").unwrap();
        first.line("one");
        second.line("two");
        first.line("three");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\nthree\n");
        // Created again: emptied.
        LineFile::create(&path, "events").unwrap().line("four");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "four\n");
    }

    #[test]
    fn the_first_write_error_is_kept() {
        let file = LineFile::new("events to full".into(), Box::new(Full));
        assert_eq!(file.error(), None);
        file.line("a");
        file.line("b");
        assert_eq!(file.error(), Some("cannot write events to full: no storage space"));
    }
}
