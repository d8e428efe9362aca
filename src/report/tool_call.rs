//! One tool call as the report keeps it, and the refusals orch gives
//! the model instead of running a call: their texts live here, once, so the engine that
//! words them and the suites that tell them from a server's errors cannot disagree.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A person's decision on a tool that needs approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Approval {
    /// Approved: the call ran.
    Approved,
    /// Denied: the model got `denied by a person: REASON` (or `denied by policy: REASON`).
    Denied,
    /// Waiting for a decision (`--approvals defer`).
    Pending,
}

/// One tool call a model asked for, run or refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The provider's id of the call (`call_…`, `toolu_…`).
    pub id: String,
    /// The `mcpServers` name; null for a tool no server of the agent lists.
    pub server: Option<String>,
    /// The tool's own name (the name the model used, for an unknown tool).
    pub tool: String,
    /// The arguments the model gave.
    pub arguments: Value,
    /// Whether it ran and succeeded.
    pub ok: bool,
    /// The text the model saw: the result (cut at `maxToolResultBytes`), or the error.
    pub result: String,
    /// The error given to the model; null when the call succeeded.
    pub error: Option<String>,
    /// Whether the result was cut at `maxToolResultBytes`.
    pub cut: bool,
    /// Milliseconds the call took (0 when orch refused it).
    pub latency_ms: u64,
    /// When it started, in milliseconds from the run's start.
    pub started_at: u64,
    /// When it ended, in milliseconds from the run's start.
    pub finished_at: u64,
    /// Null when the tool needs no approval; else the decision.
    pub approval: Option<Approval>,
    /// A resumed run found this call started and never finished in its journal,
    /// and ran it again: it may have run twice. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_doubt: bool,
    /// orch refused it (a limit, the repeated-call guard, an unknown or unallowed tool, bad
    /// arguments): the model got a [`Refusal`]. Known where it is decided, never read back
    /// from the error's text, which a server's own error could mimic.
    #[serde(skip)]
    pub refused: bool,
    /// Its `approve` condition's evaluation; absent when it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<crate::condition::Evaluation>,
}

impl ToolCall {
    /// Whether the call reached its server, `ok` or not: orch did not refuse it (a limit,
    /// the repeated-call guard, an unknown or unallowed tool, bad arguments, a denial).
    /// A suite's `toolsCalled` and `toolsNotCalled` count these.
    pub fn ran(&self) -> bool {
        !self.refused && self.approval != Some(Approval::Denied) && self.approval != Some(Approval::Pending)
    }

    /// Whether `name` names this call's tool: `tool`, or `server.tool`.
    pub fn is_named(&self, name: &str) -> bool {
        self.tool == name
            || self
                .server
                .as_deref()
                .is_some_and(|s| name.strip_prefix(s).and_then(|r| r.strip_prefix('.')) == Some(&self.tool))
    }
}

/// Why orch did not run a tool call; its text (`Display`) is the error result the model
/// gets, exactly as docs/tools.md and docs/approvals.md word it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The attempt's `maxToolCalls` was reached.
    #[error("tool call limit reached ({0})")]
    LimitReached(u32),
    /// The same tool with the same arguments already ran twice in the attempt.
    #[error("repeated call: already ran twice with these arguments")]
    Repeated,
    /// No server of the agent lists the tool.
    #[error("unknown tool: {0}")]
    Unknown(String),
    /// A server of the agent lists it, but the agent's `allow` excludes it.
    #[error("tool not allowed: {0}")]
    NotAllowed(String),
    /// The arguments are not a JSON object (MCP's `arguments` is one).
    #[error("arguments are not a JSON object")]
    BadArguments,
    /// A person or a policy (`--approvals deny`, a closed standard input) said no.
    #[error("{}", .0.tool_error())]
    Denied(super::Denial),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(server: Option<&str>, tool: &str, error: Option<String>) -> ToolCall {
        ToolCall {
            id: "call_1".into(),
            server: server.map(str::to_string),
            tool: tool.into(),
            arguments: serde_json::json!({}),
            ok: error.is_none(),
            result: error.clone().unwrap_or_default(),
            error,
            cut: false,
            latency_ms: 0,
            started_at: 0,
            finished_at: 0,
            approval: None,
            in_doubt: false,
            refused: false,
            conditions: Vec::new(),
        }
    }

    #[test]
    fn a_refusal_is_known_by_who_refused_not_by_its_words() {
        let mut refused = call(Some("files"), "t", Some(Refusal::NotAllowed("t".into()).to_string()));
        refused.refused = true;
        assert!(!refused.ran());
        assert_eq!(Refusal::LimitReached(4).to_string(), "tool call limit reached (4)");
        // A server's own error may read like orch's refusal: the call still reached it.
        for error in [
            None,
            Some("tool call timed out after 30 s".into()),
            Some("unknown tool: t".into()),
            Some("tool not allowed: t".into()),
        ] {
            assert!(call(Some("files"), "t", error).ran());
        }
        for decision in [Approval::Denied, Approval::Pending] {
            let mut gated = call(Some("files"), "t", None);
            gated.approval = Some(decision);
            assert!(!gated.ran());
        }
    }

    #[test]
    fn a_call_is_named_by_its_tool_or_server_dot_tool() {
        let c = call(Some("files"), "read_file", None);
        assert!(c.is_named("read_file") && c.is_named("files.read_file"));
        assert!(!c.is_named("docs.read_file") && !c.is_named("files.") && !c.is_named("filesread_file"));
        assert!(!c.is_named("files"));
        let unknown = call(None, "nope", None);
        assert!(unknown.is_named("nope") && !unknown.is_named(".nope"));
    }
}
