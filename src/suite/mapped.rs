//! A results file read through a memory map, a window at a time (`orch compare`):
//! its lines are handed out where the kernel keeps the file, never copied through `read`
//! (two files of a gigabyte each: two gigabytes not copied), and the pages resident in the
//! process are those of one window, never the file's. Lines are the same as [`Lines`]
//! reads them, with the same errors: blank lines skipped, the cap, UTF-8, `file:line`.

use std::fs::File;
use std::io::BufRead;
use std::path::Path;

use memmap2::{Mmap, MmapOptions};

use super::lines::{text_len, At, Lines, LinesError, MAX_LINE_BYTES};
use crate::read::Entry;

/// The bytes mapped at a time: what a file read keeps resident, whatever its size.
const WINDOW: usize = 8 << 20;

/// The lines of an input a command reads once, front to back: a regular file through a map,
/// anything else (or a file that cannot be mapped) as [`Lines::input`] reads it.
pub enum InputLines {
    /// A regular file, mapped.
    Mapped(MappedLines),
    /// Standard input, a pipe, or a file read with `read`.
    Read(Lines<Box<dyn BufRead>>),
}

impl InputLines {
    /// The lines at `path`, as [`Lines::input`] finds them (`None` when nothing is there).
    pub fn input(path: &Path) -> Result<Option<Self>, LinesError> {
        if !crate::read::is_stdin(path) && matches!(Entry::of(path), Entry::File) {
            if let Some(mapped) = MappedLines::open(path) {
                return Ok(Some(InputLines::Mapped(mapped)));
            }
        }
        Ok(Lines::input(path)?.map(InputLines::Read))
    }

    /// The next line that is not blank, and where it is (as [`Lines::next_line`]).
    pub fn next_line(&mut self) -> Result<Option<(At, &str)>, LinesError> {
        match self {
            InputLines::Mapped(lines) => lines.next_line(),
            InputLines::Read(lines) => lines.next_line(),
        }
    }
}

/// A regular file's lines, read through a map of a window of it.
pub struct MappedLines {
    file: File,
    /// The file's length when opened (under its shared lock).
    len: u64,
    shown: String,
    /// The longest line (the cap).
    max: usize,
    /// The bytes mapped at a time.
    window: usize,
    /// The window mapped, and where in the file it starts.
    map: Option<Mmap>,
    map_start: u64,
    next: At,
}

impl MappedLines {
    /// The regular file at `path` under its shared lock (as [`Lines::open`] holds it), its
    /// first window mapped; `None` when it cannot be (then [`Lines`] reads it, and says why).
    fn open(path: &Path) -> Option<Self> {
        Self::with(path, MAX_LINE_BYTES, WINDOW)
    }

    /// The same, each line at most `max` bytes, `window` bytes mapped at a time.
    fn with(path: &Path, max: usize, window: usize) -> Option<Self> {
        let (file, metadata) = super::lines::open_shared(path).ok()?;
        // A file that says it is empty may not be (procfs and some FUSE files): read as it comes.
        if !metadata.is_file() || metadata.len() == 0 {
            return None;
        }
        let mut lines = MappedLines {
            file,
            len: metadata.len(),
            shown: path.display().to_string(),
            max,
            window,
            map: None,
            map_start: 0,
            next: At {
                number: 1,
                start: 0,
                ended: true,
            },
        };
        lines.map_window(0, window).ok()?;
        Some(lines)
    }

    /// Maps `size` bytes of the file from `start` (fewer at its end), the last window unmapped
    /// first: its pages leave the process.
    fn map_window(&mut self, start: u64, size: usize) -> Result<(), LinesError> {
        self.map = None;
        let len = size.min((self.len - start) as usize);
        let window = map_file(&self.file, start, len).map_err(|io| LinesError::Unreadable {
            shown: self.shown.clone(),
            io,
        })?;
        let _ = window.advise(memmap2::Advice::Sequential);
        (self.map, self.map_start) = (Some(window), start);
        Ok(())
    }

    /// The line that starts at `start` in the file: where it starts in the window, and its
    /// bytes with its newline (at most the cap and two bytes, as [`Lines`] reads them), the
    /// window mapped again from the line when the line runs past it.
    fn line_at(&mut self, start: u64) -> Result<(usize, usize), LinesError> {
        let cap = self.max + 2; // the line, `\r` and `\n`
        let map_end = |lines: &Self| lines.map_start + lines.map.as_ref().map_or(0, |w| w.len() as u64);
        if self.map.is_none() || start >= map_end(self) {
            self.map_window(start, self.window)?;
        }
        loop {
            let window = self.map.as_deref().unwrap_or_default();
            let from = (start - self.map_start) as usize;
            let searched = &window[from..window.len().min(from + cap)];
            if let Some(newline) = memchr::memchr(b'\n', searched) {
                return Ok((from, newline + 1));
            }
            if searched.len() == cap || map_end(self) == self.len {
                return Ok((from, searched.len()));
            }
            let size = (2 * (window.len() - from)).clamp(self.window, cap.max(self.window));
            self.map_window(start, size)?;
        }
    }

    /// The next line that is not blank, and where it is.
    fn next_line(&mut self) -> Result<Option<(At, &str)>, LinesError> {
        loop {
            if self.next.start >= self.len {
                return Ok(None);
            }
            let (from, read) = self.line_at(self.next.start)?;
            let line = &self.map.as_deref().unwrap_or_default()[from..from + read];
            let at = At {
                ended: line.ends_with(b"\n"),
                ..self.next
            };
            self.next = At {
                number: at.number + 1,
                start: at.start + read as u64,
                ended: true,
            };
            let Some(end) = text_len(line, at.number, &self.shown, self.max)? else {
                continue;
            };
            // Sliced again: a borrow returned from a loop must not be the one the next turn
            // maps anew (the borrow checker's "problem case 3").
            let line = &self.map.as_deref().unwrap_or_default()[from..from + end];
            let text = std::str::from_utf8(line).map_err(|_| LinesError::NotUtf8 {
                shown: self.shown.clone(),
                line: at.number,
            })?;
            return Ok(Some((at, text)));
        }
    }
}

/// Maps `len` bytes of `file` from `offset`, read only.
fn map_file(file: &File, offset: u64, len: usize) -> std::io::Result<Mmap> {
    // SAFETY: a map is unsafe because the file may change under it. It is held under its
    // shared lock, and orch's own writers take the exclusive one to append or to cut it
    // (`sink::LineFile`, `--resume`'s `append_after`). A process that ignores locks may
    // still write to it or cut it: bytes changed after their line was checked as UTF-8 break
    // Rust's rules for the `&str` made of them (in practice a wrong value, a parse error or
    // garbled text in a message), and a file cut shorter than the window ends the process
    // with SIGBUS, as it would ripgrep reading through a map. orch accepts that risk for
    // files others write without locks, as ripgrep does.
    unsafe { MmapOptions::new().offset(offset).len(len).map(file) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `next` hands out: each line and where, then the error's words if any.
    fn all(next: &mut dyn FnMut() -> Result<Option<(At, String)>, LinesError>) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            match next() {
                Ok(Some((at, line))) => out.push(format!("{at:?} {line:?}")),
                Ok(None) => return out,
                Err(e) => return [out, vec![e.to_string()]].concat(),
            }
        }
    }

    #[test]
    fn a_mapped_file_reads_as_lines_reads_it_whatever_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let texts: [&[u8]; 7] = [
            b"{\"a\":1}\n\n  \r\n{\"b\":\"\xc3\xa9\"}\r\n{\"c\":3}",
            b"0123456789abcdef\r\n0123456789abcdef\n{}\n",
            b"{}\n0123456789abcdefg\n{}\n",
            b"{}\n0123456789abcdef0123456789abcdef",
            b"{}\n{\"x\":\"\xff\"}\n",
            b"\n\n\n",
            b"",
        ];
        for text in texts {
            std::fs::write(&path, text).unwrap();
            let mut lines = Lines::new(std::io::Cursor::new(text.to_vec()), path.display().to_string(), 16);
            let expected = all(&mut || lines.next_line().map(|l| l.map(|(at, s)| (at, s.to_string()))));
            for window in 1..=40 {
                // A file that says it is empty is left to `Lines` (procfs files say so too).
                let Some(mut mapped) = MappedLines::with(&path, 16, window) else {
                    assert!(text.is_empty(), "only an empty file is not mapped");
                    continue;
                };
                let read = all(&mut || mapped.next_line().map(|l| l.map(|(at, s)| (at, s.to_string()))));
                assert_eq!(
                    read,
                    expected,
                    "{window} bytes a window: {}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }
}
