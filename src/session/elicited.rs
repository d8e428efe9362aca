//! A served run's questions and approvals asked of the MCP client's user: each
//! one `elicitation/create`, when the client declares elicitation; else as before (questions
//! leave the run `needs-input`; under `--approvals prompt` each item is denied).

use std::sync::Arc;

use futures::future::BoxFuture;

use super::approvals::subject;
use super::options::McpApprovals;
use crate::engine::{Answerer, Approver, NoAnswers, Verdict};
use crate::plan::Question;
use crate::record::NO_REASON;
use crate::report::{DecidedBy, Denial, GateItem};
use crate::serve::{Approval, Asker};

/// The reason of an item under `--approvals prompt` whose client cannot be asked.
const CANNOT_ASK: &str = "no answer (the MCP client does not support elicitation)";
/// The reason of an item whose elicitation was cancelled or failed.
const CANCELLED: &str = "no answer (the elicitation was cancelled)";
/// The reason of an item whose accepted elicitation said neither yes nor no.
const NO_VERDICT: &str = "no answer (the accepted form had no boolean `approve`)";
/// The reason of an item whose elicitation was declined.
const DECLINED: &str = "declined";

/// Who answers a served run's questions, and who decides its gated items: one client's user,
/// asked one thing at a time whichever asks.
pub(super) fn deciders(asker: Option<Asker>, approvals: McpApprovals) -> (Arc<dyn Answerer>, Arc<dyn Approver>) {
    let elicited = asker.map(|asker| {
        Arc::new(Elicited {
            asker,
            turn: tokio::sync::Mutex::new(()),
        })
    });
    let approver: Arc<dyn Approver> = match (approvals, &elicited) {
        (McpApprovals::Prompt, Some(elicited)) => elicited.clone(),
        (McpApprovals::Prompt, None) => Arc::new(Unasked),
        (flag, _) => Arc::new(super::setup::flag(flag.flag())),
    };
    let answerer: Arc<dyn Answerer> = match elicited {
        Some(elicited) => elicited,
        None => Arc::new(NoAnswers),
    };
    (answerer, approver)
}

/// The client's user, asked one thing at a time.
struct Elicited {
    asker: Asker,
    turn: tokio::sync::Mutex<()>,
}

impl Answerer for Elicited {
    fn answer<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let _turn = self.turn.lock().await;
            self.asker.answer(&question.text).await
        })
    }
}

impl Approver for Elicited {
    fn decide<'a>(&'a self, item: &'a GateItem) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            let _turn = self.turn.lock().await;
            let denial = match self.asker.approve(&subject(item)).await {
                Approval::Approved => return Verdict::Approved(DecidedBy::Prompt),
                Approval::Denied(reason) => Denial::by_person(reason.unwrap_or_else(|| NO_REASON.to_string())),
                Approval::Declined => Denial::by_person(DECLINED),
                Approval::Unanswered => Denial::by_policy(CANCELLED),
                Approval::NoVerdict => Denial::by_policy(NO_VERDICT),
            };
            Verdict::Denied {
                denial,
                by: DecidedBy::Prompt,
            }
        })
    }
}

/// `--approvals prompt` with a client that cannot be asked: every item denied.
struct Unasked;

impl Approver for Unasked {
    fn decide<'a>(&'a self, _: &'a GateItem) -> BoxFuture<'a, Verdict> {
        Box::pin(std::future::ready(Verdict::Denied {
            denial: Denial::by_policy(CANNOT_ASK),
            by: DecidedBy::Flag,
        }))
    }
}
