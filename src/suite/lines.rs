//! Files of JSON lines read one line at a time, each line at most a cap: memory is bounded by
//! the longest line, never by the file (results files, `--resume`, `--merge`, `orch compare`,
//! `orch stats`, `orch report`). Every line is located (`file:line`) for messages.

use std::io::{BufRead, Read};
use std::path::Path;

use crate::read::{io_reason, Entry};

/// The longest results line read or written: one case run and its report. Files have no
/// limit (1,000 repeats of 300 cases write gigabytes): they are read a line at a time.
pub(super) const MAX_LINE_BYTES: usize = 64 << 20;

/// Why a file of lines cannot be read, or which line is not one (`file:line: …`).
#[derive(Debug, thiserror::Error)]
pub enum LinesError {
    /// The file could not be opened or read: the system's words.
    #[error("cannot read {shown}: {io}")]
    Unreadable {
        /// The file as messages name it.
        shown: String,
        /// Why.
        io: std::io::Error,
    },
    /// A pipe or a device could not be opened: the common reasons in plain words.
    #[error("cannot read {shown}: {}", io_reason(.io))]
    UnreadableStream {
        /// The input as messages name it.
        shown: String,
        /// Why.
        io: std::io::Error,
    },
    /// Something other than a regular file is at the path.
    #[error("{shown} is not a regular file")]
    NotRegular {
        /// The path as messages name it.
        shown: String,
    },
    /// A directory is at the path.
    #[error("{shown} is a directory, not a file")]
    Directory {
        /// The path as messages name it.
        shown: String,
    },
    /// A line over the cap.
    #[error("{shown}:{line}: the line is longer than {cap}")]
    TooLong {
        /// The file as messages name it.
        shown: String,
        /// Its number, from 1.
        line: usize,
        /// The cap in words (`64 MiB`).
        cap: String,
    },
    /// A line that is not UTF-8.
    #[error("{shown}:{line}: not UTF-8 text")]
    NotUtf8 {
        /// The file as messages name it.
        shown: String,
        /// Its number, from 1.
        line: usize,
    },
}

/// Where a line of a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    /// Its number, from 1.
    pub number: usize,
    /// The offset of its first byte.
    pub start: u64,
    /// It ends with a newline (only the last line of a file may not).
    pub ended: bool,
}

/// A file of JSON lines read one line at a time, each at most a cap: memory is bounded by
/// the longest line, never by the file. Blank lines are skipped.
pub struct Lines<R> {
    reader: R,
    shown: String,
    max: usize,
    next: At,
    buf: Vec<u8>,
}

impl Lines<std::io::BufReader<std::fs::File>> {
    /// The lines of the regular file at `path` (`None` when there is none), read under the
    /// file's shared lock: lines other processes append are never seen half written.
    pub fn open(path: &Path) -> Result<Option<Self>, LinesError> {
        let shown = path.display().to_string();
        let (file, metadata) = match open_shared(path) {
            Ok(opened) => opened,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(io) => return Err(LinesError::Unreadable { shown, io }),
        };
        if !metadata.is_file() {
            return Err(LinesError::NotRegular { shown });
        }
        // A large buffer: files of gigabytes are read in few calls.
        let reader = std::io::BufReader::with_capacity(256 << 10, file);
        Ok(Some(Lines::new(reader, shown, MAX_LINE_BYTES)))
    }
}

/// `path` opened for reading under its shared lock, and what it is: orch's writers take the
/// exclusive one to append a line or to cut the file, so a reader never meets half a line or
/// a file cut under it. A file system without locks is read as it is.
pub(super) fn open_shared(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let file = std::fs::File::open(path)?;
    let _ = file.lock_shared();
    let metadata = file.metadata()?;
    Ok((file, metadata))
}

impl Lines<Box<dyn BufRead>> {
    /// The lines of an input a command reads once, front to back (`orch stats`, `--merge`,
    /// and `orch compare`, through `InputLines`, where it cannot map): a regular file (under
    /// its shared lock, as [`Lines::open`]),
    /// standard input for `-`, or a pipe or FIFO (`orch compare <(cat shard-*.jsonl) c.jsonl`,
    /// as ripgrep and cargo read them); `None` when nothing is at the path. A directory or a
    /// socket is refused by name.
    pub fn input(path: &Path) -> Result<Option<Self>, LinesError> {
        let shown = crate::read::display(path);
        if crate::read::is_stdin(path) {
            let reader: Box<dyn BufRead> = Box::new(std::io::stdin().lock());
            return Ok(Some(Lines::new(reader, shown, MAX_LINE_BYTES)));
        }
        match Entry::of(path) {
            Entry::Missing => return Ok(None),
            Entry::File => return Ok(Lines::open(path)?.map(Lines::boxed)),
            Entry::Dir => return Err(LinesError::Directory { shown }),
            Entry::Other(_) => {}
        }
        // A pipe or a device: read as it comes (no lock, no size).
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(io) => return Err(LinesError::UnreadableStream { shown, io }),
        };
        let reader: Box<dyn BufRead> = Box::new(std::io::BufReader::new(file));
        Ok(Some(Lines::new(reader, shown, MAX_LINE_BYTES)))
    }
}

impl<R: BufRead + 'static> Lines<R> {
    /// The same lines behind a box, so every kind of input has one type.
    fn boxed(self) -> Lines<Box<dyn BufRead>> {
        Lines {
            reader: Box::new(self.reader),
            shown: self.shown,
            max: self.max,
            next: self.next,
            buf: self.buf,
        }
    }
}

impl<R: BufRead> Lines<R> {
    /// The lines of `reader` (shown as `shown` in errors), each at most `max` bytes.
    pub(super) fn new(reader: R, shown: String, max: usize) -> Self {
        Lines {
            reader,
            shown,
            max,
            next: At {
                number: 1,
                start: 0,
                ended: true,
            },
            buf: Vec::new(),
        }
    }

    /// The lines of `reader` (shown as `shown` in errors), each at most the cap of results
    /// lines: for a file the caller opened and locked itself (to append after reading it).
    pub fn of(reader: R, shown: String) -> Self {
        Lines::new(reader, shown, MAX_LINE_BYTES)
    }

    /// The reader, just past the last line handed out (a pretty document read on from there).
    pub fn into_reader(self) -> R {
        self.reader
    }

    /// The next line that is not blank, and where it is; a line over the cap or not UTF-8 is
    /// an error naming it.
    pub fn next_line(&mut self) -> Result<Option<(At, &str)>, LinesError> {
        let Some((at, end)) = self.advance()? else {
            return Ok(None);
        };
        let text = std::str::from_utf8(&self.buf[..end]).map_err(|_| LinesError::NotUtf8 {
            shown: self.shown.clone(),
            line: at.number,
        })?;
        Ok(Some((at, text)))
    }

    /// The next line that is not blank, and where it is, not yet decoded: a reader that
    /// forgives a torn last line (no newline: a writer killed mid-line, maybe inside a
    /// character) decides that from [`At::ended`] before decoding. A line over the cap is an
    /// error naming it.
    pub fn next_bytes(&mut self) -> Result<Option<(At, &[u8])>, LinesError> {
        Ok(self.advance()?.map(|(at, end)| (at, &self.buf[..end])))
    }

    /// Reads the next line that is not blank into the buffer: where it is, and the length
    /// of its text.
    fn advance(&mut self) -> Result<Option<(At, usize)>, LinesError> {
        loop {
            self.buf.clear();
            let cap = self.max as u64 + 2; // the line, `\r` and `\n`
            let read = (&mut self.reader)
                .take(cap)
                .read_until(b'\n', &mut self.buf)
                .map_err(|io| LinesError::Unreadable {
                    shown: self.shown.clone(),
                    io,
                })?;
            if read == 0 {
                return Ok(None);
            }
            let at = At {
                ended: self.buf.ends_with(b"\n"),
                ..self.next
            };
            self.next = At {
                number: at.number + 1,
                start: at.start + read as u64,
                ended: true,
            };
            let Some(end) = text_len(&self.buf, at.number, &self.shown, self.max)? else {
                continue;
            };
            return Ok(Some((at, end)));
        }
    }
}

/// The length of the text of `line`, line `number` (its newline and a `\r` before it cut),
/// `None` when it is blank; a line over the cap `max` is an error naming it.
pub(super) fn text_len(line: &[u8], number: usize, shown: &str, max: usize) -> Result<Option<usize>, LinesError> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.len() > max {
        let cap = match max {
            m if m >= 1 << 20 => format!("{} MiB", m >> 20),
            m => format!("{m} bytes"),
        };
        return Err(LinesError::TooLong {
            shown: shown.to_string(),
            line: number,
            cap,
        });
    }
    Ok((!text.iter().all(u8::is_ascii_whitespace)).then_some(text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8], max: usize) -> Result<Vec<(At, String)>, LinesError> {
        let mut lines = Lines::new(std::io::Cursor::new(text.to_vec()), "r.jsonl".into(), max);
        let mut out = Vec::new();
        while let Some((at, line)) = lines.next_line()? {
            out.push((at, line.to_string()));
        }
        Ok(out)
    }

    #[test]
    fn the_cap_is_on_lines_not_on_the_file() {
        // 1,000 lines of 10 bytes under a cap of 16: the file is 600 times the cap.
        let file = "0123456789\n".repeat(1000);
        let read = lines(file.as_bytes(), 16).unwrap();
        assert_eq!(read.len(), 1000);
        assert_eq!(
            read[999].0,
            At {
                number: 1000,
                start: 10_989,
                ended: true
            }
        );
        // Exactly the cap (a `\r\n` not counted) is a line; one byte more is not.
        let exact = lines(b"0123456789abcdef\r\n", 16).unwrap();
        assert_eq!(exact[0].1, "0123456789abcdef");
        assert_eq!(
            lines(b"{}\n\n0123456789abcdefg\n{}\n", 16).unwrap_err().to_string(),
            "r.jsonl:3: the line is longer than 16 bytes"
        );
    }

    #[test]
    fn lines_say_where_they_are_and_whether_they_ended() {
        let read = lines(b"a\n  \nbc\nde", 16).unwrap();
        let at: Vec<(At, &str)> = read.iter().map(|(at, l)| (*at, l.as_str())).collect();
        assert_eq!(
            at,
            [
                (
                    At {
                        number: 1,
                        start: 0,
                        ended: true
                    },
                    "a"
                ),
                (
                    At {
                        number: 3,
                        start: 5,
                        ended: true
                    },
                    "bc"
                ),
                (
                    At {
                        number: 4,
                        start: 8,
                        ended: false
                    },
                    "de"
                ),
            ]
        );
        assert_eq!(
            lines(b"a\n\xff\n", 16).unwrap_err().to_string(),
            "r.jsonl:2: not UTF-8 text"
        );
    }
}
