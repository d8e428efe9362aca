//! A batch state file, read and folded: what every invocation submitted, what came back,
//! what still waits. Lines are appended (and flushed) as things happen; a torn last line,
//! what a kill in the middle of a write leaves, is cut off with a warning before anything
//! is appended, so only the last line can ever be malformed. Lines are written as every
//! line file of orch is ([`LineFile`]: one write each, under the file's lock), and the file
//! is read under the same lock (so `orch batch status` never sees half a line), bounded.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::lines::{Destination, From, Line, Reply, Why};
use super::BatchError;
use crate::read::{read_bounded_shared, Unread};
use crate::sink::LineFile;

/// The largest state read (1 GiB): a state keeps every answer of its suite, but a device
/// or a runaway file is refused, not slurped.
const MAX_STATE_BYTES: u64 = 1 << 30;

/// A batch as submitted, and how it ended once read.
#[derive(Clone, Debug)]
pub struct Submitted {
    /// Where it went.
    pub to: Destination,
    /// The provider's id of the batch.
    pub id: String,
    /// Its requests' ids.
    pub requests: Vec<String>,
    /// When it was submitted (seconds since the epoch).
    pub submitted_at: u64,
    /// Its final state once its results were read; `None`: pending.
    pub ended: Option<String>,
}

impl Submitted {
    /// `requests` about to go `to`: no batch id yet, not submitted, not ended.
    pub fn pending(to: Destination, requests: Vec<String>) -> Self {
        Submitted {
            to,
            id: String::new(),
            requests,
            submitted_at: 0,
            ended: None,
        }
    }

    /// The line that says these requests are about to be submitted, and where.
    pub fn intent_line(&self) -> Line {
        Line::Intent {
            to: self.to.clone(),
            requests: self.requests.clone(),
        }
    }

    /// The line of these requests accepted as the provider's batch `id` at `submitted_at`.
    pub fn into_batch_line(self, id: String, submitted_at: u64) -> Line {
        Line::Batch {
            to: self.to,
            id,
            requests: self.requests,
            submitted_at,
        }
    }
}

/// Everything a state file says, folded.
#[derive(Debug, Default)]
pub struct Folded {
    /// The head's id.
    pub id: String,
    /// The head's binding.
    pub binding: serde_json::Value,
    /// Answers by request id, and where each came from.
    pub answers: HashMap<String, (From, Reply)>,
    /// Tool results by call id.
    pub tools: HashMap<String, Result<String, crate::tools::ToolError>>,
    /// Requests a batch failed, and why (they go live).
    pub failed: HashMap<String, Why>,
    /// Every batch, in the order submitted.
    pub batches: Vec<Submitted>,
    /// The batch (its place in `batches`) each request was submitted in.
    in_batch: HashMap<String, usize>,
    /// Every intent to submit: provider, kind, base URL, key variable, model, requests.
    pub intents: Vec<Submitted>,
}

impl Folded {
    /// Takes one line into account.
    fn take(&mut self, line: Line) {
        match line {
            Line::Head { id, binding } => (self.id, self.binding) = (id, binding),
            Line::Intent { to, requests } => self.intents.push(Submitted::pending(to, requests)),
            Line::Batch {
                to,
                id,
                requests,
                submitted_at,
            } => {
                for r in &requests {
                    self.in_batch.insert(r.clone(), self.batches.len());
                }
                self.batches.push(Submitted {
                    id,
                    submitted_at,
                    ..Submitted::pending(to, requests)
                })
            }
            Line::Answer { request, from, reply } => {
                self.answers.insert(request, (from, reply));
            }
            Line::Tool { call, result } => {
                self.tools.insert(call, result);
            }
            Line::Failed { request, why } => {
                self.failed.insert(request, why);
            }
            Line::Ended { id, state } => {
                if let Some(b) = self.batches.iter_mut().find(|b| b.id == id) {
                    b.ended = Some(state);
                }
            }
        }
    }

    /// Whether request `id` waits in a batch still pending.
    pub fn is_pending(&self, id: &str) -> bool {
        let waiting = !self.answers.contains_key(id) && !self.failed.contains_key(id);
        waiting && self.in_batch.get(id).is_some_and(|b| self.batches[*b].ended.is_none())
    }

    /// The requests in batches still pending, each with its batch's id.
    pub fn pending(&self) -> BTreeMap<&str, &str> {
        (self.batches.iter().filter(|b| b.ended.is_none()))
            .flat_map(|b| b.requests.iter().map(move |r| (r.as_str(), b.id.as_str())))
            .filter(|(r, _)| !self.answers.contains_key(*r) && !self.failed.contains_key(*r))
            .collect()
    }

    /// Intents whose requests no recorded batch holds and none of which has an answer or
    /// a failure: a kill may have come between the provider accepting them and the state
    /// recording the batch.
    pub fn orphans(&self) -> Vec<&Submitted> {
        let held: std::collections::HashSet<&str> = self
            .batches
            .iter()
            .flat_map(|b| b.requests.iter().map(String::as_str))
            .collect();
        let untouched =
            |r: &String| !held.contains(r.as_str()) && !self.answers.contains_key(r) && !self.failed.contains_key(r);
        self.intents
            .iter()
            .filter(|i| i.requests.iter().all(untouched))
            .collect()
    }

    /// The batches still pending.
    pub fn pending_batches(&self) -> Vec<&Submitted> {
        self.batches.iter().filter(|b| b.ended.is_none()).collect()
    }
}

/// A state file open for appending, and what it says.
pub struct State {
    /// The lock of the state, held as long as the invocation uses it.
    _held: crate::record::Held,
    /// The file, appended to a line at a time.
    file: LineFile,
    /// Whether its first write error was told (once: the next lines likely fail alike).
    warned: AtomicBool,
    folded: Mutex<Folded>,
}

impl State {
    /// Opens `path` (created when missing, with `binding` on its head line); a state of
    /// another binding is refused.
    pub fn open(path: &Path, binding: serde_json::Value) -> Result<State, BatchError> {
        let held = hold(path)?;
        let (folded, fresh) = read(path, true)?;
        if !fresh && folded.binding != binding {
            return Err(refusal(path, &folded.binding, &binding));
        }
        let file = LineFile::append(path, "the batch state")
            .map_err(|e| BatchError::Io(path.display().to_string(), e.io.to_string()))?;
        let state = State {
            _held: held,
            file,
            warned: AtomicBool::new(false),
            folded: Mutex::new(folded),
        };
        if fresh {
            let id = super::random_id();
            state.append(&Line::Head { id, binding });
        }
        Ok(state)
    }

    /// Opens `path` to read only (`orch batch status`, `cancel`): it must exist.
    pub fn read_only(path: &Path) -> Result<Folded, BatchError> {
        if !path.exists() {
            return Err(BatchError::Io(path.display().to_string(), "no such file".into()));
        }
        Ok(read(path, false)?.0)
    }

    /// Opens `path` to read only while holding its lock (`orch batch cancel`): it must
    /// exist, and no other orch may use it meanwhile.
    pub fn read_held(path: &Path) -> Result<(Folded, crate::record::Held), BatchError> {
        if !path.exists() {
            return Err(BatchError::Io(path.display().to_string(), "no such file".into()));
        }
        let held = hold(path)?;
        Ok((read(path, false)?.0, held))
    }

    /// Appends `line` to the file in one write, and takes it into account. The first write
    /// that fails is told at once, as a warning: the run goes on with what it holds.
    pub fn append(&self, line: &Line) {
        let text = serde_json::to_string(line).expect("a state line always serializes");
        // One unbuffered write: the line is with the system the moment this returns, so a
        // kill of orch loses nothing after it.
        self.file.line(&text);
        if let Some(e) = self.file.error() {
            if !self.warned.swap(true, Ordering::SeqCst) {
                say!("warning: {e}");
            }
        }
        self.with(|f| f.take(line.clone()));
    }

    /// Why a line could not be written, if one could not: the lines lost may have the next
    /// invocation submit (and pay for) their requests again.
    pub fn error(&self) -> Option<&str> {
        self.file.error()
    }

    /// `f` of what the state says now.
    pub fn with<T>(&self, f: impl FnOnce(&mut Folded) -> T) -> T {
        f(&mut self.folded.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The state at `path` folded, and whether it is new (missing or empty). A file whose
/// first line is not a whole head line is refused untouched; a torn last line after it is
/// left out with a warning (and cut off the file when `cuts`); a malformed line before the
/// last refuses the file.
fn read(path: &Path, cuts: bool) -> Result<(Folded, bool), BatchError> {
    let shown = path.display().to_string();
    let text = match read_bounded_shared(path, MAX_STATE_BYTES) {
        Ok(bytes) => bytes,
        Err(Unread::Missing) => return Ok((Folded::default(), true)),
        Err(Unread::NotFile(what)) => return Err(BatchError::Io(shown, format!("it is {what}, not a file"))),
        Err(Unread::TooLarge(_)) => {
            return Err(BatchError::Io(
                shown,
                format!("larger than {} MiB", MAX_STATE_BYTES >> 20),
            ))
        }
        Err(Unread::Io(e)) => return Err(BatchError::Io(shown, crate::read::io_reason(&e))),
    };
    let mut folded = Folded::default();
    let mut good = 0;
    let mut rest = &text[..];
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let end = rest.iter().position(|b| *b == b'\n');
        let (raw, whole) = match end {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        let parsed = serde_json::from_slice::<Line>(raw).ok().filter(|_| end.is_some());
        // A state begins with its head: a file that does not is someone else's, never cut.
        if number == 1 && !matches!(parsed, Some(Line::Head { .. })) {
            return Err(BatchError::NotAState(shown));
        }
        match parsed {
            Some(line) => folded.take(line),
            None if whole == rest.len() => {
                say!("warning: the batch state {shown} ends with a torn line {number}; it is left out");
                if cuts {
                    cut(path, good)?;
                }
                break;
            }
            None => return Err(BatchError::Malformed(shown, number)),
        }
        good += whole;
        rest = &rest[whole..];
    }
    let fresh = folded.id.is_empty();
    Ok((folded, fresh))
}

/// Why a state bound to `kept` is refused to `asked`: the suite files edited since (all
/// else the same), or another suite, config or selection.
fn refusal(path: &Path, kept: &serde_json::Value, asked: &serde_json::Value) -> BatchError {
    let without_content = |v: &serde_json::Value| {
        let mut v = v.clone();
        if let Some(fields) = v.as_object_mut() {
            fields.remove("suiteDigests");
        }
        v
    };
    let shown = path.display().to_string();
    match without_content(kept) == without_content(asked) {
        true => BatchError::Edited(shown),
        false => BatchError::Bound(shown),
    }
}

/// Takes the lock of the state at `path` (the lock file beside it), or says that another
/// orch uses it: two invocations on one state would submit, and pay for, the same requests.
fn hold(path: &Path) -> Result<crate::record::Held, BatchError> {
    use crate::record::RecordError;
    crate::record::hold(path).map_err(|e| match e {
        RecordError::InUse { pid, .. } => BatchError::InUse(path.display().to_string(), pid),
        other => BatchError::Io(path.display().to_string(), other.to_string()),
    })
}

/// Cuts the file at `path` to its first `len` bytes.
fn cut(path: &Path, len: usize) -> Result<(), BatchError> {
    let file = std::fs::OpenOptions::new().write(true).open(path);
    file.and_then(|f| f.set_len(len as u64))
        .map_err(|e| BatchError::Io(path.display().to_string(), e.to_string()))
}
