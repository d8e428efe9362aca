//! Batch suites (`orch test --batch STATE`): a suite's `openai` and `anthropic` calls sent
//! as batches, at the providers' batch price, over several invocations. Each invocation
//! makes waves: every case run advances as far as the answers at hand allow, a call with
//! no answer is parked and its case run dropped, and the parked requests are submitted as
//! batches. The state file keeps every batch, answer and live reply, so a case run made
//! again never pays twice.

mod api;
mod layer;
mod lines;
mod scope;
mod state;
mod status;
mod steps;
mod tools;
mod waves;
mod wire;

use serde::Serialize;

pub use layer::Batched;
pub use scope::scoped;
pub use state::State;
pub use status::{cancel, status};
pub use steps::{collect, reconcile, submit};
pub use tools::BatchTools;
pub use waves::Waves;

/// Why a state file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// It belongs to another suite, config or selection.
    #[error("the batch state {0} belongs to another suite, config or selection (use another file, or delete it)")]
    Bound(String),
    /// It is not empty and does not begin with a state's head line (nothing is written).
    #[error("{0} is not a batch state: its first line is not a batch state's head (it is left as it is)")]
    NotAState(String),
    /// Another orch holds its lock.
    #[error("{0} is in use by another orch (pid {1})")]
    InUse(String, String),
    /// Its suite files were edited since it was made.
    #[error("the batch state {0} was made for the suite files as they were: they were edited since (restore them, or use another state file)")]
    Edited(String),
    /// A line before its last is not a state line.
    #[error("the batch state {0} is not a batch state: line {1} is malformed")]
    Malformed(String, usize),
    /// It cannot be read or written.
    #[error("cannot use the batch state {0}: {1}")]
    Io(String, String),
}

/// The summary's `batch`: counted over the whole state, every invocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Tallied {
    /// Batches submitted.
    pub batches: u64,
    /// Requests: succeeded, errored, expired, cancelled and still pending.
    pub requests: u64,
    /// Answered by a batch.
    pub succeeded: u64,
    /// Failed by a batch with an error (or refused with it).
    pub errored: u64,
    /// Not answered within a batch's window.
    pub expired: u64,
    /// Cancelled before an answer.
    pub cancelled: u64,
    /// Sent live: after a batch failed them, and the calls of agents with tools.
    pub live: u64,
}

impl Waves {
    /// The summary's `batch` counts, and the requests and batches still pending.
    pub fn tallied(&self) -> (Tallied, usize, usize) {
        self.state.with(|f| {
            let mut t = Tallied {
                batches: f.batches.len() as u64,
                ..Tallied::default()
            };
            for (from, _) in f.answers.values() {
                match from {
                    lines::From::Batch => t.succeeded += 1,
                    lines::From::Live | lines::From::Tools => t.live += 1,
                }
            }
            for why in f.failed.values() {
                match why {
                    lines::Why::Errored => t.errored += 1,
                    lines::Why::Expired => t.expired += 1,
                    lines::Why::Cancelled => t.cancelled += 1,
                }
            }
            let pending = f.pending().len();
            t.requests = t.succeeded + t.errored + t.expired + t.cancelled + pending as u64;
            (t, pending, f.pending_batches().len())
        })
    }
}

/// 16 hex digits no other invocation is likely to make (a state's id, a form's boundary).
fn random_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..16].to_string()
}

/// The line of an invocation that leaves batches pending (to stderr).
pub fn pending_line(requests: usize, batches: usize, state: &std::path::Path) -> String {
    let requests = crate::text::count(requests, "request");
    let batches = match batches {
        1 => "1 batch".to_string(),
        n => format!("{n} batches"),
    };
    format!("batches pending: {requests} in {batches} ({})", state.display())
}

/// The line of an invocation that could not submit `deferred` requests for now (to stderr),
/// with the batches still pending, if any.
pub fn deferred_line(deferred: usize, requests: usize, batches: usize, state: &std::path::Path) -> String {
    let unsent = format!(
        "batches not submitted: {} left for the next invocation ({})",
        crate::text::count(deferred, "request"),
        state.display()
    );
    match requests {
        0 => unsent,
        _ => format!("{}; {unsent}", pending_line(requests, batches, state)),
    }
}
