//! Gates: the steps that wait for a person's yes, how they are asked, and the
//! ids they go by. The engine asks an [`Approver`] and goes on with its [`Verdict`]; who
//! answers (a flag, the terminal, a journal's decisions) is the command layer's business.

use futures::future::BoxFuture;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::Engine;
use crate::report::{Approval, DecidedBy, Denial, Event, GateItem, GateKind};

/// Who converses, for the records of its tool calls: the department and the attempt.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    /// The department the agent works in ("" for the master).
    pub department: &'a str,
    /// 1-based attempt (a head's: the try of its answer or synthesis).
    pub attempt: u32,
}

/// How one item was decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Take the step.
    Approved(DecidedBy),
    /// Do not: a tool call's model gets `denied by a person: REASON`; a department fails
    /// with `denied: REASON` (`denied by policy: REASON` for both when no person said it).
    Denied {
        /// Why, and whether a person or a policy said it.
        denial: Denial,
        /// Who said no.
        by: DecidedBy,
    },
    /// Nobody decides now (`--approvals defer`): the work that needs it stops there.
    Pending(DecidedBy),
}

/// Decides gated items. Several may ask at once (the calls of a reply, parallel
/// departments): an approver that asks a person takes them one at a time itself.
pub trait Approver: Send + Sync {
    /// The verdict on `item`.
    fn decide<'a>(&'a self, item: &'a GateItem) -> BoxFuture<'a, Verdict>;
}

/// The reason every item gets under `--approvals deny`.
pub const NOT_APPROVED: &str = "not approved (--approvals deny)";

/// `--approvals allow|deny|defer`: every item decided alike, by the flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// Every item approved.
    Allow,
    /// Every item denied, with [`NOT_APPROVED`].
    Deny,
    /// Every item left pending.
    Defer,
}

impl Flag {
    /// The verdict this flag gives every item.
    pub fn verdict(self) -> Verdict {
        match self {
            Flag::Allow => Verdict::Approved(DecidedBy::Flag),
            Flag::Deny => Verdict::Denied {
                denial: Denial::by_policy(NOT_APPROVED),
                by: DecidedBy::Flag,
            },
            Flag::Defer => Verdict::Pending(DecidedBy::Flag),
        }
    }
}

impl Approver for Flag {
    fn decide<'a>(&'a self, _: &'a GateItem) -> BoxFuture<'a, Verdict> {
        Box::pin(std::future::ready(self.verdict()))
    }
}

/// A short id over `key`: `prefix-` and 8 hex digits of SHA-256 of its JSON (keys sorted).
fn short_id(prefix: &str, key: &Value) -> String {
    let digest = Sha256::digest(key.to_string().as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}

/// Where a tool call stands in a run: who asked, in which attempt, in which round of the
/// tool loop, at which place in the reply.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    /// The department and the attempt.
    pub place: Place<'a>,
    /// The agent whose model asked.
    pub agent_id: &'a str,
    /// 0-based round of the attempt's tool loop.
    pub round: usize,
    /// 0-based place of the call in its reply.
    pub index: usize,
}

impl Step<'_> {
    /// The step id of a call of `tool` on `server` with `arguments` here: the same replies
    /// give the same ids, so a resumed run meets the decisions and results of its journal.
    pub fn id(&self, server: &str, tool: &str, arguments: &Value) -> String {
        let key = json!([
            self.place.department,
            self.agent_id,
            self.place.attempt,
            self.round,
            self.index,
            server,
            tool,
            arguments
        ]);
        short_id("tool", &key)
    }

    /// The gate item of that call.
    pub fn item(&self, server: &str, tool: &str, arguments: &Value) -> GateItem {
        GateItem {
            id: self.id(server, tool, arguments),
            kind: GateKind::Tool,
            department: self.place.department.to_string(),
            agent_id: self.agent_id.to_string(),
            server: Some(server.to_string()),
            tool: Some(tool.to_string()),
            arguments: arguments.clone(),
            output: Value::Null,
        }
    }
}

/// The gate item of `department`'s `output` (by its head `head`): its id is over the output
/// too, so a decision never passes to an output other than the one shown.
pub fn department_item(department: &str, head: &str, output: &Value) -> GateItem {
    GateItem {
        id: short_id("dept", &json!([department, head, output])),
        kind: GateKind::Department,
        department: department.to_string(),
        agent_id: head.to_string(),
        server: None,
        tool: None,
        arguments: Value::Null,
        output: output.clone(),
    }
}

impl Engine {
    /// Asks the approver about `item`; says so in an `approval` event, and keeps it for the
    /// report's `pending` when it is left waiting.
    pub(super) async fn gate(&self, item: GateItem) -> Verdict {
        let verdict = self.approver.decide(&item).await;
        let (decision, reason, by) = match &verdict {
            Verdict::Approved(by) => (Approval::Approved, None, *by),
            Verdict::Denied { denial, by } => (Approval::Denied, Some(denial.reason.clone()), *by),
            Verdict::Pending(by) => (Approval::Pending, None, *by),
        };
        self.emit(Event::Approval {
            id: item.id.clone(),
            decision,
            reason,
            by,
        });
        if decision == Approval::Pending {
            self.pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(item);
        }
        verdict
    }

    /// The items left pending so far.
    pub(super) fn pending(&self) -> Vec<GateItem> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_short_and_follow_what_the_step_is() {
        let step = |attempt, round, index| Step {
            place: Place {
                department: "d",
                attempt,
            },
            agent_id: "h",
            round,
            index,
        };
        let id = step(1, 0, 0).id("files", "write", &json!({"path": "a", "n": 1}));
        assert_eq!(id.len(), "tool-".len() + 8);
        assert!(id.starts_with("tool-") && id[5..].chars().all(|c| c.is_ascii_hexdigit()));
        let same: Value = serde_json::from_str(r#"{"n": 1, "path": "a"}"#).unwrap();
        assert_eq!(step(1, 0, 0).id("files", "write", &same), id, "keys in any order");
        let others = [
            step(2, 0, 0).id("files", "write", &same),
            step(1, 1, 0).id("files", "write", &same),
            step(1, 0, 1).id("files", "write", &same),
            step(1, 0, 0).id("files", "write", &json!({"path": "b", "n": 1})),
        ];
        assert!(others.iter().all(|o| *o != id), "{others:?}");
        let d = department_item("story", "story-head", &json!("The plan."));
        assert!(d.id.starts_with("dept-") && d.id.len() == 13);
        assert_ne!(department_item("story", "story-head", &json!("Another plan.")).id, d.id);
    }

    #[test]
    fn a_flag_decides_every_item_alike() {
        let item = department_item("d", "h", &json!("x"));
        let verdict = |f: Flag| futures::executor::block_on(f.decide(&item));
        assert_eq!(verdict(Flag::Allow), Verdict::Approved(DecidedBy::Flag));
        assert_eq!(
            verdict(Flag::Deny),
            Verdict::Denied {
                denial: Denial::by_policy("not approved (--approvals deny)"),
                by: DecidedBy::Flag
            }
        );
        assert_eq!(verdict(Flag::Defer), Verdict::Pending(DecidedBy::Flag));
    }
}
