//! The approver that writes to a journal: the decisions a journal holds answer
//! first, and every other decision, or an item left pending, is appended as it is made.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use super::journal::{DecidedIn, Decision, JournalLine};
use super::opened::Opened;
use crate::engine::{Approver, Verdict};
use crate::report::{Approval, DecidedBy, Denial, GateItem};
use crate::sink::LineFile;
use futures::future::BoxFuture;

/// The reason of a bare `n` at the prompt, and of a denial written without one.
pub const NO_REASON: &str = "no reason given";

impl Opened {
    /// `inner` behind this journal's decisions, writing its own to the journal.
    pub fn approver(&self, inner: Arc<dyn Approver>) -> Arc<dyn Approver> {
        Arc::new(Journaled {
            inner,
            decided: self.read.decisions.values().cloned().collect(),
            pending: Mutex::new(self.read.pending.iter().map(|item| item.id.clone()).collect()),
            out: self.file.clone(),
        })
    }
}

/// Decisions the journal holds answer first (`by: journal`); any other item goes to
/// `inner`, and its decision, or its being left pending, is appended to the journal.
struct Journaled {
    inner: Arc<dyn Approver>,
    decided: Vec<Decision>,
    /// Items already written as pending (each is written once).
    pending: Mutex<HashSet<String>>,
    out: Arc<LineFile>,
}

impl Approver for Journaled {
    fn decide<'a>(&'a self, item: &'a GateItem) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            // The last decision of an id wins, as when the journal was read.
            // (A journal holds no `pending` decision: reading it refuses one.)
            let decided = self.decided.iter().rev().find(|d| d.id == item.id);
            if let Some(d) = decided.filter(|d| d.decision != Approval::Pending) {
                return match d.decision {
                    Approval::Approved | Approval::Pending => Verdict::Approved(DecidedBy::Journal),
                    Approval::Denied => {
                        let reason = d.reason.clone().unwrap_or_else(|| NO_REASON.to_string());
                        Verdict::Denied {
                            // A journal from before `policy` was written: the flag's no is a policy's.
                            denial: match d.policy || d.by == DecidedIn::Flag {
                                true => Denial::by_policy(reason),
                                false => Denial::by_person(reason),
                            },
                            by: DecidedBy::Journal,
                        }
                    }
                };
            }
            let verdict = self.inner.decide(item).await;
            let line = match &verdict {
                Verdict::Pending(_) => {
                    let fresh = self
                        .pending
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(item.id.clone());
                    fresh.then_some(JournalLine::Pending { item: item.clone() })
                }
                Verdict::Approved(by) => Some(decision_line(&item.id, Approval::Approved, None, *by)),
                Verdict::Denied { denial, by } => Some(denied_line(&item.id, denial, *by)),
            };
            if let Some(line) = line {
                self.out.line(&line.text());
            }
            verdict
        })
    }
}

/// A decision's journal line.
fn decision_line(id: &str, decision: Approval, reason: Option<&str>, by: DecidedBy) -> JournalLine {
    JournalLine::Approval(Decision {
        id: id.to_string(),
        decision,
        reason: reason.map(str::to_string),
        by: by.into(),
        policy: false,
    })
}

/// A denial's journal line: a policy's is written so, and read back so by a resume.
fn denied_line(id: &str, denial: &Denial, by: DecidedBy) -> JournalLine {
    let mut line = decision_line(id, Approval::Denied, Some(&denial.reason), by);
    if let JournalLine::Approval(decision) = &mut line {
        decision.policy = denial.by_policy;
    }
    line
}

/// A decision of `orch approve` on item `id`, as its journal line.
pub fn approve_line(id: &str, decision: Approval, reason: Option<String>) -> JournalLine {
    JournalLine::Approval(Decision {
        id: id.to_string(),
        decision,
        reason,
        by: DecidedIn::Approve,
        policy: false,
    })
}
