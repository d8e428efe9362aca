//! The streamed answer's text written to stdout on a thread of its own, so that a reader
//! who stops reading (`orch run --stream … | (sleep 30; cat)`) holds up only that thread:
//! the run, its deadline and its other departments go on, and the text waits in a queue.
//! What has queued up while a write was blocked goes out in one write. At the end of the
//! run [`StdoutWriter::finish`] waits until all of it is written, so whatever is printed
//! after comes after it, and says the first write that failed (a full disk fails the run as
//! it fails `--format text`).

use std::io::Write;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// A queue of text to stdout, written in order by a thread of its own.
///
/// The queue is unbounded on purpose: a bounded one, once full, would either block the
/// sender (the run's own thread, which is what this writer is for) or drop text that
/// stdout must show. Its size stays bounded all the same: it holds only text the streamed
/// answer prints, each piece once, so never more than the text its calls streamed (plus
/// their `[retrying: …]` lines), which the run reads whole anyway to assemble each reply.
pub struct StdoutWriter {
    queue: Mutex<Option<Sender<String>>>,
    thread: Mutex<Option<JoinHandle<Option<std::io::Error>>>>,
}

impl StdoutWriter {
    /// A writer to the process's stdout.
    pub fn stdout() -> Self {
        Self::to(|text| {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|()| out.flush())
        })
    }

    /// A writer whose gathered text goes to `write`; after its first error nothing more is
    /// written, and [`StdoutWriter::finish`] returns it.
    pub fn to(write: impl FnMut(&str) -> std::io::Result<()> + Send + 'static) -> Self {
        let (queue, pieces) = channel();
        let thread = std::thread::Builder::new()
            .name("orch-stdout".into())
            .spawn(move || write_all(&pieces, write))
            .ok();
        StdoutWriter {
            queue: Mutex::new(thread.as_ref().map(|_| queue)),
            thread: Mutex::new(thread),
        }
    }

    /// Queues `text`; never waits for stdout. Without a thread (none could be started),
    /// the text is written here.
    pub fn write(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        let queue = self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match queue.as_ref() {
            Some(queue) if queue.send(text.to_string()).is_ok() => {}
            _ => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            }
        }
    }

    /// Waits until everything queued is written (the queue closed, the thread joined);
    /// what is written after goes to stdout at once. The first write that failed, if one
    /// did (returned once).
    pub fn finish(&self) -> std::io::Result<()> {
        drop(lock(&self.queue).take());
        let thread = lock(&self.thread).take();
        thread.and_then(|t| t.join().ok()).flatten().map_or(Ok(()), Err)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for StdoutWriter {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Writes what comes from `pieces` until the queue is closed: each time, everything that
/// has queued up, in one write. After a write fails, the rest is taken and dropped; the
/// error is returned.
fn write_all(pieces: &Receiver<String>, mut write: impl FnMut(&str) -> std::io::Result<()>) -> Option<std::io::Error> {
    let mut failed = None;
    while let Ok(mut text) = pieces.recv() {
        while let Ok(more) = pieces.try_recv() {
            text.push_str(&more);
        }
        if failed.is_none() {
            failed = write(&text).err();
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{mpsc, Arc};

    #[test]
    fn a_blocked_write_holds_up_no_sender_and_what_queued_meanwhile_goes_in_one_write() {
        let written = Arc::new(Mutex::new(Vec::<String>::new()));
        let (release, released) = mpsc::channel::<()>();
        let (entered, first_entered) = mpsc::channel::<()>();
        let seen = written.clone();
        let writer = StdoutWriter::to(move |text| {
            if seen.lock().unwrap().is_empty() {
                // The first write blocks, as a pipe nobody reads does, until released.
                entered.send(()).unwrap();
                released.recv().unwrap();
            }
            seen.lock().unwrap().push(text.to_string());
            Ok(())
        });
        writer.write("one");
        first_entered.recv().unwrap();
        // The first write is blocked: these are queued without waiting for it.
        for piece in ["two", " three", " four"] {
            writer.write(piece);
        }
        release.send(()).unwrap();
        writer.finish().unwrap();
        assert_eq!(*written.lock().unwrap(), ["one", "two three four"]);
    }

    #[test]
    fn the_first_failed_write_is_said_at_the_end_and_nothing_is_written_after_it() {
        let tries = Arc::new(Mutex::new(0));
        let counted = tries.clone();
        let (entered, first_entered) = mpsc::channel::<()>();
        let writer = StdoutWriter::to(move |_| {
            *counted.lock().unwrap() += 1;
            let _ = entered.send(());
            Err(std::io::Error::other("disk full"))
        });
        writer.write("one");
        first_entered.recv().unwrap();
        writer.write("two");
        assert_eq!(writer.finish().unwrap_err().to_string(), "disk full");
        assert_eq!(*tries.lock().unwrap(), 1);
        assert!(writer.finish().is_ok(), "said once");
    }
}
