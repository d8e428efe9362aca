//! Files a run writes line by line as it goes (`--events`, `--record`). A write error must
//! not stop the run, nor vanish: the file remembers the first one, and the command reports
//! it after the report (exit 1 instead of 0).
//!
//! A line is written under a `std` mutex from whichever tokio worker finished the call, and
//! flushed at once: one small `write(2)` that follows an LLM call of hundreds of milliseconds,
//! with the lock held for nothing else. A writer thread behind a channel would spare the
//! worker those microseconds at the price of a queue, and of a join before the first write
//! error can be reported; we keep the direct write until a profile says otherwise.

use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};

/// An append-only file of lines that remembers its first write error.
pub struct LineFile {
    /// What the file is, for the error ("events to out.jsonl").
    label: String,
    out: Mutex<Box<dyn Write + Send>>,
    error: OnceLock<String>,
}

impl LineFile {
    /// Creates (truncates) the file at `path`; `what` names it in errors ("events", "the cassette").
    pub fn create(path: &Path, what: &str) -> Result<Self, String> {
        let label = format!("{what} to {}", path.display());
        let file = std::fs::File::create(path).map_err(|e| format!("cannot write {label}: {e}"))?;
        Ok(Self::new(label, Box::new(std::io::BufWriter::new(file))))
    }

    /// Opens the file at `path` to append to it (created when missing).
    pub fn append(path: &Path, what: &str) -> Result<Self, String> {
        let label = format!("{what} to {}", path.display());
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot write {label}: {e}"))?;
        Ok(Self::new(label, Box::new(std::io::BufWriter::new(file))))
    }

    /// Lines written to `out`.
    pub fn new(label: String, out: Box<dyn Write + Send>) -> Self {
        LineFile {
            label,
            out: Mutex::new(out),
            error: OnceLock::new(),
        }
    }

    /// Appends one line and flushes it (a reader of the file sees each line as it happens).
    pub fn line(&self, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
            self.error.get_or_init(|| format!("cannot write {}: {e}", self.label));
        }
    }

    /// The first write error, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.get().map(String::as_str)
    }
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

    #[test]
    fn the_first_write_error_is_kept() {
        let file = LineFile::new("events to full".into(), Box::new(Full));
        assert_eq!(file.error(), None);
        file.line("a");
        file.line("b");
        assert_eq!(file.error(), Some("cannot write events to full: no storage space"));
    }
}
